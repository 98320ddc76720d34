//! The committed `data/` copies load into the counts measured in `shared/data/*/SOURCE.md` and
//! `shared/data/README.md` (the "measured" columns), and the edge directions are right.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use ksvd_datasets::{
    DataRoot, Dataset, DatasetError, DatasetName, GraphOptions, ImputeStrategy, Imputer, Labels, Part, SelfLoops, Task,
    DIABETES_ZERO_MEANS_MISSING,
};

fn root() -> DataRoot {
    DataRoot::committed().expect("the repository's data/ folder")
}

#[test]
fn every_committed_file_matches_its_checksum() {
    let r = root();
    let n = r.verify_all().unwrap();
    assert_eq!(n, r.manifest().unwrap().files.len());
    assert!(n >= 50, "{n} files");
    let total: u64 = r.manifest().unwrap().files.iter().map(|f| f.bytes).sum();
    assert!(total < 30_000_000, "data/ holds {total} bytes");
}

#[test]
fn cora() {
    let g = root().graph(DatasetName::Cora, &GraphOptions::default()).unwrap();
    let s = g.stats();
    assert_eq!(
        (s.nodes, s.arcs, s.self_loops, s.reciprocal_pairs, s.undirected_pairs),
        (2708, 5429, 0, 151, 5278)
    );
    assert_eq!((s.classes, s.labelled_nodes), (7, 2708));
    assert_eq!(g.duplicate_records, 0);
    // Byte order of the class names: Case_Based, Genetic_Algorithms, Neural_Networks,
    // Probabilistic_Methods, Reinforcement_Learning, Rule_Learning, Theory.
    assert_eq!(g.labels.class_counts(), vec![298, 418, 818, 426, 217, 180, 351]);
    // cora.cites line 1 is `35\t1033`: paper 1033 cites paper 35.
    let (cited, citing) = (g.node_index("35").unwrap(), g.node_index("1033").unwrap());
    assert_eq!(g.adjacency.get(citing, cited), Some(1.0));
    assert_eq!(g.adjacency.get(cited, citing), Some(0.0));
    let pg = g.to_petgraph();
    assert_eq!((pg.node_count(), pg.edge_count()), (2708, 5429));
}

#[test]
fn citeseer_keeps_the_15_unlabelled_cited_ids() {
    let g = root().graph(DatasetName::Citeseer, &GraphOptions::default()).unwrap();
    let s = g.stats();
    assert_eq!(
        (s.nodes, s.arcs, s.self_loops, s.reciprocal_pairs, s.undirected_pairs),
        (3327, 4732, 124, 56, 4552)
    );
    assert_eq!((s.classes, s.labelled_nodes), (6, 3312));
    // AI, Agents, DB, HCI, IR, ML (byte order).
    assert_eq!(g.labels.class_counts(), vec![249, 596, 701, 508, 668, 590]);
    let Labels::Single { classes, .. } = &g.labels else {
        panic!("single-label")
    };
    let mut dangling: Vec<&str> = (0..g.n_nodes())
        .filter(|&i| classes[i].is_none())
        .map(|i| g.node_ids[i].as_str())
        .collect();
    dangling.sort_unstable();
    assert_eq!(
        dangling,
        [
            "197556",
            "293457",
            "38137",
            "95786",
            "flach99database",
            "gabbard97taxonomy",
            "ghani01hypertext",
            "hahn98ontology",
            "khardon99relational",
            "kohrs99using",
            "nielsen00designing",
            "raisamo99evaluating",
            "tobies99pspace",
            "wang01process",
            "weng95shoslifn"
        ]
    );
    // Content rows come first, in file order: the dangling ids are the last 15 nodes.
    assert!(classes[..3312].iter().all(Option::is_some));
    let removed = root()
        .graph(
            DatasetName::Citeseer,
            &GraphOptions::default().self_loops(SelfLoops::Remove),
        )
        .unwrap();
    assert_eq!(removed.n_arcs(), 4732 - 124);
}

#[test]
fn pubmed_direction_and_derived_labels() {
    let g = root().graph(DatasetName::Pubmed, &GraphOptions::default()).unwrap();
    let s = g.stats();
    assert_eq!(
        (s.nodes, s.arcs, s.self_loops, s.reciprocal_pairs, s.undirected_pairs),
        (19717, 44338, 3, 11, 44324)
    );
    assert_eq!(g.labels.class_counts(), vec![4103, 7875, 7739]);
    assert_eq!(s.labelled_nodes, 19717);
    // First data line `33824\tpaper:19127292\t|\tpaper:17363749`: 19127292 cites 17363749.
    let (a, b) = (g.node_index("19127292").unwrap(), g.node_index("17363749").unwrap());
    assert_eq!(g.adjacency.get(a, b), Some(1.0));
    // Spot check quoted in SOURCE.md: PMID 12187484 has LINQS label 1 (class 0).
    let Labels::Single { classes, .. } = &g.labels else {
        panic!()
    };
    assert_eq!(classes[g.node_index("12187484").unwrap()], Some(0));
}

#[test]
fn twitch_pt_is_symmetric_and_self_loops_are_an_option() {
    let r = root();
    let g = r.graph(DatasetName::TwitchPt, &GraphOptions::default()).unwrap();
    let s = g.stats();
    assert!(!g.directed);
    assert_eq!(
        (s.nodes, s.arcs, s.self_loops, s.undirected_pairs),
        (1912, 2 * 31299, 0, 31299)
    );
    assert_eq!(g.labels.class_counts(), vec![1251, 661]);
    assert_eq!(g.adjacency, g.adjacency.transpose());
    let pyg = r
        .graph(
            DatasetName::TwitchPt,
            &GraphOptions::default().self_loops(SelfLoops::AddMissing),
        )
        .unwrap();
    assert_eq!(pyg.n_arcs(), 64510, "the paper's count");
}

#[test]
fn blogcatalog_is_multi_label() {
    let g = root()
        .graph(DatasetName::BlogCatalog, &GraphOptions::default())
        .unwrap();
    let s = g.stats();
    assert_eq!(
        (s.nodes, s.arcs, s.undirected_pairs, s.self_loops),
        (10312, 2 * 333983, 333983, 0)
    );
    assert_eq!((s.classes, s.labelled_nodes, s.memberships), (39, 10312, 14476));
    let Labels::Multi { sets, .. } = &g.labels else {
        panic!("multi-label")
    };
    assert_eq!(sets.iter().filter(|s| s.len() > 1).count(), 2852);
    assert_eq!(sets.iter().map(Vec::len).max(), Some(11));
    assert_eq!(g.duplicate_records, 0);
}

#[test]
fn biclustering_matrices() {
    let r = root();
    let acm = r.document_term(DatasetName::Acm).unwrap();
    let s = acm.stats();
    assert_eq!((s.documents, s.terms, s.nnz, s.clusters), (3025, 1870, 253_300, 3));
    assert_eq!((s.empty_documents, s.empty_terms), (0, 0));
    assert_eq!((acm.label_base, acm.stored_sparse), (0, false));
    assert_eq!(acm.cluster_sizes(), vec![1061, 965, 999]);
    assert!(acm.matrix.data().iter().all(|&v| v == 1.0));

    let dblp = r.document_term(DatasetName::Dblp).unwrap();
    let s = dblp.stats();
    assert_eq!((s.documents, s.terms, s.nnz, s.clusters), (4057, 334, 48_810, 4));
    assert_eq!((s.empty_documents, s.empty_terms), (39, 0));
    assert_eq!((dblp.label_base, dblp.stored_sparse), (1, false));
    assert_eq!(dblp.cluster_sizes(), vec![1197, 745, 1109, 1006]);

    let wiki = r.document_term(DatasetName::Wiki).unwrap();
    let s = wiki.stats();
    assert_eq!((s.documents, s.terms, s.nnz, s.clusters), (2405, 4973, 1_556_595, 17));
    assert_eq!((s.empty_documents, s.empty_terms), (88, 0));
    assert_eq!((wiki.label_base, wiki.stored_sparse), (1, true));
    assert_eq!(
        wiki.cluster_sizes(),
        vec![92, 406, 203, 103, 10, 361, 157, 53, 109, 11, 269, 179, 9, 30, 77, 228, 108]
    );
    let (lo, hi) = wiki
        .matrix
        .data()
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), &v| (a.min(v), b.max(v)));
    assert!(lo >= 0.00147 - 1e-5 && hi <= 1.0, "{lo} {hi}");
}

#[test]
fn bcot_pubmed_is_missing_with_a_helpful_error() {
    let e = root().document_term(DatasetName::BcotPubmed).unwrap_err();
    match &e {
        DatasetError::MissingFile { path, origin } => {
            assert!(path.ends_with("bcot_pubmed/pubmed.mat"), "{path:?}");
            assert!(origin.contains("BCOT") && origin.contains("pubmed.mat"), "{origin}");
        }
        other => panic!("{other:?}"),
    }
    assert!(e.to_string().starts_with("missing file"));
}

#[test]
fn uci_classification_tables() {
    let r = root();
    let mut d = r.tabular(DatasetName::Diabetes).unwrap();
    let s = d.stats();
    assert_eq!(
        (s.samples, s.features, s.missing_values, s.class_counts.clone()),
        (768, 8, 0, vec![500, 268])
    );
    assert_eq!(
        d.mark_zeros_missing(&DIABETES_ZERO_MEANS_MISSING).unwrap(),
        5 + 35 + 227 + 374 + 11
    );

    let i = r.tabular(DatasetName::Ionosphere).unwrap();
    let s = i.stats();
    assert_eq!(
        (s.samples, s.features, s.class_counts.clone()),
        (351, 34, vec![126, 225])
    );
    assert!(i.features.column(1).iter().all(|&v| v == 0.0), "feature 2 is constant");

    let l = r.tabular(DatasetName::Liver).unwrap();
    let s = l.stats();
    assert_eq!(
        (s.samples, s.features, s.missing_values, s.rows_with_missing),
        (583, 10, 4, 4)
    );
    assert_eq!(s.class_counts, vec![167, 416]);
    assert_eq!(l.feature_names[1], "sex");
    assert_eq!(
        l.features.column(1).iter().filter(|&&v| v == 1.0).count(),
        441,
        "Male = 1"
    );
    let missing_rows: Vec<usize> = (0..583)
        .filter(|&k| l.features.row(k).iter().any(|v| v.is_nan()))
        .map(|k| k + 1)
        .collect();
    assert_eq!(missing_rows, vec![210, 242, 254, 313]);
    let mut x = l.features.clone();
    let all: Vec<usize> = (0..583).collect();
    let imp = Imputer::fit(&l, &all, ImputeStrategy::Median).unwrap();
    assert_eq!(imp.transform(&mut x).unwrap(), 4);
    assert!(x.iter().all(|v| v.is_finite()));
}

fn mean(v: impl Iterator<Item = f64>) -> f64 {
    let (s, n) = v.fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
    s / n as f64
}

#[test]
fn uci_regression_tables() {
    let r = root();
    let c = r.tabular(DatasetName::Cholesterol).unwrap();
    let s = c.stats();
    assert_eq!((s.samples, s.features, s.missing_values, s.classes), (303, 13, 6, None));
    assert_eq!(c.task, Task::Regression);
    let ca = c.feature_names.iter().position(|n| n == "ca").unwrap();
    let thal = c.feature_names.iter().position(|n| n == "thal").unwrap();
    assert_eq!(c.features.column(ca).iter().filter(|v| v.is_nan()).count(), 4);
    assert_eq!(c.features.column(thal).iter().filter(|v| v.is_nan()).count(), 2);
    // SOURCE.md: chol min 126, max 564, mean 246.69.
    assert!((mean(c.target.iter().copied()) - 246.69).abs() < 0.005);
    assert_eq!(c.target.iter().copied().fold(f64::MAX, f64::min), 126.0);

    let y = r.tabular(DatasetName::Yacht).unwrap();
    assert_eq!(y.features.dim(), (308, 6));
    assert!((mean(y.target.iter().copied()) - 10.4954).abs() < 5e-5);

    let p = r.tabular(DatasetName::Protein).unwrap();
    assert_eq!(p.features.dim(), (45730, 9));
    assert_eq!(p.feature_names[0], "F1");
    assert!((mean(p.target.iter().copied()) - 7.7485).abs() < 5e-5);
    assert_eq!(p.target.iter().copied().fold(f64::MIN, f64::max), 20.999);
}

fn libsvm_counts(name: DatasetName, part: Part) -> (usize, usize, usize, usize, Vec<(f64, usize)>) {
    let d = root().libsvm(name, part).unwrap();
    let s = d.stats();
    (s.rows, s.features, s.nnz, s.max_used_feature, s.label_counts)
}

#[test]
fn libsvm_sets() {
    assert_eq!(
        libsvm_counts(DatasetName::A9a, Part::Train),
        (32561, 123, 451_592, 123, vec![(-1.0, 24720), (1.0, 7841)])
    );
    assert_eq!(
        libsvm_counts(DatasetName::A9a, Part::Test),
        (16281, 123, 225_731, 122, vec![(-1.0, 12435), (1.0, 3846)])
    );
    assert_eq!(
        libsvm_counts(DatasetName::W8a, Part::Train),
        (49749, 300, 579_586, 300, vec![(-1.0, 48270), (1.0, 1479)])
    );
    assert_eq!(
        libsvm_counts(DatasetName::Ijcnn1, Part::Train),
        (49990, 22, 649_870, 22, vec![(-1.0, 45137), (1.0, 4853)])
    );
    assert_eq!(
        libsvm_counts(DatasetName::Ijcnn1, Part::Test),
        (91701, 22, 1_192_113, 22, vec![(-1.0, 82989), (1.0, 8712)])
    );
    assert_eq!(
        libsvm_counts(DatasetName::ReutersLasvm, Part::Train),
        (7770, 8315, 339_837, 8315, vec![(-1.0, 7232), (1.0, 538)])
    );
    assert_eq!(
        libsvm_counts(DatasetName::ReutersLasvm, Part::Test).4,
        vec![(-1.0, 3120), (1.0, 179)]
    );
    let e = root().libsvm(DatasetName::W8a, Part::Test).unwrap_err();
    assert!(matches!(e, DatasetError::MissingFile { .. }), "{e}");
}

#[test]
fn criteo_sample_is_libffm() {
    let (rows, cols, _, _, labels) = libsvm_counts(DatasetName::CriteoSample, Part::Train);
    assert_eq!((rows, cols, labels), (200, 180_000, vec![(0.0, 152), (1.0, 48)]));
    let (rows, _, _, _, labels) = libsvm_counts(DatasetName::CriteoSample, Part::Test);
    assert_eq!((rows, labels), (200, vec![(0.0, 154), (1.0, 46)]));
    assert!(matches!(
        root().libsvm_chunks(DatasetName::CriteoSample, Part::Train, 10),
        Err(DatasetError::UnsupportedFormat { .. })
    ));
}

#[test]
fn streaming_reader_returns_the_same_rows_as_the_whole_file_reader() {
    let r = root();
    for (name, part, chunk) in [
        (DatasetName::A9a, Part::Test, 1000),
        (DatasetName::ReutersLasvm, Part::Test, 333),
    ] {
        let whole = r.libsvm(name, part).unwrap();
        let mut row = 0;
        let mut max_chunk = 0;
        for c in r.libsvm_chunks(name, part, chunk).unwrap() {
            let c = c.unwrap();
            assert_eq!(c.first_row, row);
            assert_eq!(c.features.ncols(), whole.features.ncols());
            max_chunk = max_chunk.max(c.features.nrows());
            for i in 0..c.features.nrows() {
                assert_eq!(c.features.row(i), whole.features.row(row + i));
                assert_eq!(c.labels[i], whole.labels[row + i]);
            }
            row += c.features.nrows();
        }
        assert_eq!(row, whole.features.nrows());
        assert_eq!(max_chunk, chunk);
    }
}

#[test]
fn load_dispatches_on_kind_and_rejects_wrong_kinds() {
    let r = root();
    for name in [
        DatasetName::Cora,
        DatasetName::Dblp,
        DatasetName::Yacht,
        DatasetName::A9a,
    ] {
        let d = r.load(name).unwrap();
        assert_eq!(d.kind(), name.kind());
        let _ = d.stats();
    }
    assert!(matches!(r.load(DatasetName::Cora).unwrap(), Dataset::Graph(_)));
    let e = r.libsvm(DatasetName::Cora, Part::Train).unwrap_err();
    assert!(matches!(e, DatasetError::WrongKind { .. }), "{e}");
}
