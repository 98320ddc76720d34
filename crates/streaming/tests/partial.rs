//! The mergeable partial states of the distributed passes: random partitions of the training
//! file into files, merged in random trees and orders, give the single-pass answer (exactly for
//! the sketch, counts and sorted scores; to rounding for the sums), and the distributed fit equals
//! the one-process `fit_ksvd` + `train_pass` + `score_pass` with the same landmark rows.
//!
//! Tolerances: a sum of `N` terms regrouped differently changes by at most `N ε Σ|terms|`, so the
//! sums (`P`, singular values, the ridge statistics) are compared at `8 N ε` relative to their
//! scale. Quantities behind the SVD of the landmark block (embeddings, scores) move by that
//! perturbation divided by the spectral gap; they are compared at `√ε` relative to their scale.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use std::path::{Path, PathBuf};

use ksvd_linalg::random::rng_from_seed;
use ksvd_streaming::{
    auroc, fit_ksvd, score_pass, train_pass, ColumnsPartial, Embedding, LabelRule, LandmarkPlan, LibsvmSource,
    PartRows, PartialState, ScanPartial, ScorePartial, StreamingError, StreamingParams, SyntheticPart, SyntheticSpec,
    TrainPartial, TrainedKsvd, ValidStreamingParams,
};
use rand::seq::SliceRandom;
use rand::Rng;

const EPS: f64 = f64::EPSILON;

fn spec() -> SyntheticSpec {
    SyntheticSpec {
        features: 60,
        nnz_per_row: 6,
        ..SyntheticSpec::default()
    }
}

fn params() -> ValidStreamingParams {
    StreamingParams::new(6, 40).chunk_rows(97).seed(5).check().unwrap()
}

/// Splits the lines of `path` into `parts` consecutive files of random sizes (some may be empty).
fn split_lines(path: &Path, dir: &Path, tag: &str, parts: usize, seed: u64) -> Vec<PathBuf> {
    let text = std::fs::read_to_string(path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mut rng = rng_from_seed(seed);
    let mut cuts: Vec<usize> = (0..parts - 1).map(|_| rng.gen_range(0..=lines.len())).collect();
    cuts.push(0);
    cuts.push(lines.len());
    cuts.sort_unstable();
    cuts.windows(2)
        .enumerate()
        .map(|(k, w)| {
            let p = dir.join(format!("{tag}-{k}.svm"));
            let mut body = lines[w[0]..w[1]].join("\n");
            body.push('\n');
            std::fs::write(&p, if w[0] == w[1] { String::new() } else { body }).unwrap();
            p
        })
        .collect()
}

/// Merges `states` in a random order along a random binary tree (`seed = 0`: left to right, the
/// single pass).
fn random_tree<T>(mut states: Vec<T>, seed: u64, merge: impl Fn(&mut T, &T)) -> T {
    let mut rng = rng_from_seed(seed);
    if seed == 0 {
        let mut acc = states.remove(0);
        for s in &states {
            merge(&mut acc, s);
        }
        return acc;
    }
    states.shuffle(&mut rng);
    while states.len() > 1 {
        let i = rng.gen_range(0..states.len() - 1);
        let right = states.remove(i + 1);
        merge(&mut states[i], &right);
    }
    states.pop().unwrap()
}

struct Run {
    scan: ScanPartial,
    plan: LandmarkPlan,
    columns: ColumnsPartial,
    train: TrainPartial,
    trained: TrainedKsvd,
    scores: ScorePartial,
}

fn source(p: &Path) -> LibsvmSource {
    LibsvmSource::new(p).n_features(spec().features)
}

fn run(train: &[PathBuf], test: &[PathBuf], seed: u64) -> Run {
    let params = params();
    let src: Vec<LibsvmSource> = train.iter().map(|p| source(p)).collect();
    let scans = src
        .iter()
        .enumerate()
        .map(|(f, s)| ScanPartial::scan_file(&params, f, s).unwrap())
        .collect();
    let scan = random_tree(scans, seed, |a, b| a.merge(b).unwrap());
    let plan = LandmarkPlan::new(&scan, &params).unwrap();
    let cols = src
        .iter()
        .enumerate()
        .map(|(f, s)| ColumnsPartial::from_file(&plan, f, s).unwrap())
        .collect();
    let columns = random_tree(cols, seed + 1, |a, b| a.merge(b).unwrap());
    let fitted = plan.solve(&columns).unwrap();
    let labels = fitted.label_rule(None).unwrap();
    let parts = src
        .iter()
        .enumerate()
        .map(|(f, s)| fitted.train_file(f, s, labels).unwrap())
        .collect();
    let train = random_tree(parts, seed + 2, |a, b| a.merge(b).unwrap());
    let trained = fitted.finish(&train, 1e-3, labels).unwrap();
    let scored = test
        .iter()
        .enumerate()
        .map(|(f, p)| trained.score_file(f, &source(p), false).unwrap().0)
        .collect();
    let scores = random_tree(scored, seed + 3, |a, b| a.merge(b).unwrap());
    Run {
        scan,
        plan,
        columns,
        train,
        trained,
        scores,
    }
}

fn max_abs(a: impl IntoIterator<Item = f64>) -> f64 {
    a.into_iter().fold(0.0, |m, x| m.max(x.abs()))
}

fn max_diff(a: &ndarray::Array2<f64>, b: &ndarray::Array2<f64>) -> f64 {
    assert_eq!(a.dim(), b.dim());
    max_abs(a.iter().zip(b).map(|(x, y)| x - y))
}

#[test]
fn random_partitions_and_orders_give_the_single_pass_answer() {
    // The rows' ids are (file, row in file): the files are fixed, the partitions are any
    // grouping of them and the merges any tree over the groups.
    let dir = tempfile::tempdir().unwrap();
    let (n, n_test) = (2500, 700);
    let whole = dir.path().join("train.svm");
    let test = dir.path().join("test.svm");
    ksvd_streaming::write_synthetic(&whole, &spec(), SyntheticPart::Train, n).unwrap();
    ksvd_streaming::write_synthetic(&test, &spec(), SyntheticPart::Test, n_test).unwrap();
    let train = split_lines(&whole, dir.path(), "train", 9, 1);
    let tests = split_lines(&test, dir.path(), "test", 4, 2);
    let single = run(&train, &tests, 0);
    assert_eq!(single.plan.row_landmarks().len(), 40);
    let scale_p = max_abs(single.columns.p().iter().copied());
    let tol_sum = 8.0 * n as f64 * EPS;
    let emb_single = single.trained.embed_file(&source(&test)).unwrap();
    let scale_e = max_abs(emb_single.iter().copied());
    for seed in [1u64, 2, 3, 4] {
        let got = run(&train, &tests, 10 * seed);
        // Exact: counts, labels, the sketch, hence the landmarks; the sorted scores' sizes.
        assert_eq!(got.scan.rows(), n);
        assert_eq!(got.scan.sketch_rows(), single.scan.sketch_rows());
        assert_eq!(got.plan.summary().nnz, single.plan.summary().nnz);
        assert_eq!(got.plan.summary().label_counts, single.plan.summary().label_counts);
        assert_eq!(got.plan.row_landmarks(), single.plan.row_landmarks());
        assert_eq!(got.plan.col_landmarks(), single.plan.col_landmarks());
        // Sums: to rounding.
        assert!(max_diff(got.columns.p(), single.columns.p()) <= tol_sum * scale_p);
        let (sa, sb) = (
            got.trained.model().singular_values(),
            single.trained.model().singular_values(),
        );
        assert_eq!(sa.len(), sb.len());
        assert!(max_abs(sa.iter().zip(sb).map(|(a, b)| a - b)) <= tol_sum * sb[0]);
        assert_eq!(got.train.rows(), n);
        assert_eq!(got.train.positives(), single.train.positives());
        // Behind the SVD: √ε.
        let emb = got.trained.embed_file(&source(&test)).unwrap();
        assert!(max_diff(&emb, &emb_single) <= EPS.sqrt() * scale_e);
        assert_eq!(got.scores.rows(), n_test);
        let (a, b) = (got.scores.auroc().unwrap(), single.scores.auroc().unwrap());
        assert!((a - b).abs() <= 1e-9, "AUROC {a} vs {b}");
    }
}

#[test]
fn distributed_fit_equals_the_one_process_fit_with_the_same_landmarks() {
    let dir = tempfile::tempdir().unwrap();
    let whole = dir.path().join("train.svm");
    let test = dir.path().join("test.svm");
    ksvd_streaming::write_synthetic(&whole, &spec(), SyntheticPart::Train, 2000).unwrap();
    ksvd_streaming::write_synthetic(&test, &spec(), SyntheticPart::Test, 500).unwrap();
    let train = split_lines(&whole, dir.path(), "train", 4, 7);
    let dist = run(&train, std::slice::from_ref(&test), 3);
    // The existing one-process path, told to use the sketch's landmark rows.
    let rows = dist.plan.row_landmarks().to_vec();
    let p = StreamingParams::new(6, 40)
        .chunk_rows(97)
        .seed(5)
        .explicit_rows(rows)
        .check()
        .unwrap();
    let mut model = fit_ksvd(&source(&whole), &p, &mut |_| {}).unwrap();
    assert_eq!(model.col_landmarks(), dist.plan.col_landmarks());
    let (sa, sb) = (dist.trained.model().singular_values(), model.singular_values().clone());
    assert!(max_abs(sa.iter().zip(&sb).map(|(a, b)| a - b)) <= 8.0 * 2000.0 * EPS * sb[0]);
    let labels = LabelRule::from_counts(&whole, &model.summary().label_counts, None).unwrap();
    let trained = train_pass(&source(&whole), &mut model, labels, 1e-3, 97, &mut |_| {}).unwrap();
    let (scores, pos) = score_pass(&source(&test), &model, &trained.classifier, labels, 97, &mut |_| {}).unwrap();
    let one = auroc(&scores, &pos).unwrap();
    assert!((dist.scores.auroc().unwrap() - one).abs() <= 1e-9);
    let e1 = model.embed(&read_rows(&test)).unwrap();
    let e2 = dist.trained.model().embed(&read_rows(&test)).unwrap();
    assert!(max_diff(&e1, &e2) <= EPS.sqrt() * max_abs(e1.iter().copied()));
}

/// The rows of a LIBSVM file as a CSR matrix (the dataset reader).
fn read_rows(path: &Path) -> ksvd_linalg::CsrMatrix {
    let opts = ksvd_datasets::LibsvmOptions::default().n_features(spec().features);
    ksvd_datasets::read_libsvm(path, &opts).unwrap().features
}

#[test]
fn merges_are_associative_and_the_sketch_exact() {
    let dir = tempfile::tempdir().unwrap();
    let whole = dir.path().join("train.svm");
    ksvd_streaming::write_synthetic(&whole, &spec(), SyntheticPart::Train, 1500).unwrap();
    let files = split_lines(&whole, dir.path(), "p", 3, 11);
    let params = params();
    let s: Vec<ScanPartial> = files
        .iter()
        .enumerate()
        .map(|(f, p)| ScanPartial::scan_file(&params, f, &source(p)).unwrap())
        .collect();
    let mut left = s[0].clone();
    left.merge(&s[1]).unwrap();
    left.merge(&s[2]).unwrap();
    let mut bc = s[1].clone();
    bc.merge(&s[2]).unwrap();
    let mut right = s[0].clone();
    right.merge(&bc).unwrap();
    assert_eq!(left.sketch_rows(), right.sketch_rows());
    assert_eq!(left.rows(), 1500);
    // The sketch is the bottom-40 of the union: every file's own sketch agrees with it below
    // the merged threshold.
    let merged: std::collections::BTreeSet<_> = left.sketch_rows().into_iter().collect();
    for part in &s {
        let own = part.sketch_rows();
        let kept = own.iter().filter(|r| merged.contains(r)).count();
        // The merged rows of this file are a prefix of its own key order.
        assert!(own[..kept].iter().all(|r| merged.contains(r)));
    }
    // Merging a file twice is an error, not a silent double count.
    let mut twice = s[0].clone();
    assert!(matches!(twice.merge(&s[0]), Err(StreamingError::PartialState { .. })));
}

#[test]
fn bytes_round_trip_and_bad_bytes_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let whole = dir.path().join("train.svm");
    ksvd_streaming::write_synthetic(&whole, &spec(), SyntheticPart::Train, 800).unwrap();
    let scan = ScanPartial::scan_file(&params(), 0, &source(&whole)).unwrap();
    let bytes = scan.to_bytes().unwrap();
    assert_eq!(ScanPartial::from_bytes(&bytes).unwrap(), scan);
    let plan = LandmarkPlan::new(&scan, &params()).unwrap();
    let cols = ColumnsPartial::from_file(&plan, 0, &source(&whole)).unwrap();
    let back = ColumnsPartial::from_bytes(&cols.to_bytes().unwrap()).unwrap();
    assert_eq!(back.p(), cols.p());
    let fitted = plan.solve(&cols).unwrap();
    let again = plan.solve(&back).unwrap();
    assert_eq!(again.model().singular_values(), fitted.model().singular_values());
    let text = String::from_utf8(bytes.clone()).unwrap();
    let cases = [
        (
            text.replace("\"format_version\":1", "\"format_version\":99"),
            "version 99",
        ),
        (text.replace("\"kind\":\"scan\"", "\"kind\":\"train\""), "\"train\""),
        (text[..text.len() / 2].to_string(), "corrupt"),
    ];
    for (bad, needle) in cases {
        let err = ScanPartial::from_bytes(bad.as_bytes()).unwrap_err();
        assert!(matches!(err, StreamingError::PartialState { .. }));
        assert!(err.to_string().contains(needle), "{err} lacks {needle}");
    }
    // A columns state is not a scan state.
    assert!(ScanPartial::from_bytes(&cols.to_bytes().unwrap()).is_err());
}

#[test]
fn a_malformed_line_names_the_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("bad.svm");
    std::fs::write(&p, "1 1:0.5 3:1\n-1 2:1\n1 4:x\n").unwrap();
    let err = ScanPartial::scan_file(&params(), 0, &source(&p)).unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("bad.svm") && msg.contains(":3:"), "{msg}");
}

/// A block of rows with its global first row id as a partition.
fn part(b: &(ksvd_linalg::CsrMatrix, Vec<f64>, usize)) -> PartRows<'_> {
    PartRows::Memory {
        x: &b.0,
        labels: &b.1,
        first_row: b.2,
    }
}

/// In-memory blocks ([`PartRows::Memory`], e.g. the row chunks of a `dask.array`) are keyed by
/// their global row ids: the training file cut into blocks anywhere gives the landmark rows of
/// the whole file as file 0, and the same fit to rounding (sums at `8 N ε`, the rest at `√ε`).
#[test]
fn in_memory_blocks_equal_the_whole_file() {
    let dir = tempfile::tempdir().unwrap();
    let whole = dir.path().join("train.svm");
    let test = dir.path().join("test.svm");
    ksvd_streaming::write_synthetic(&whole, &spec(), SyntheticPart::Train, 1500).unwrap();
    ksvd_streaming::write_synthetic(&test, &spec(), SyntheticPart::Test, 400).unwrap();
    let file = run(std::slice::from_ref(&whole), std::slice::from_ref(&test), 0);
    let opts = ksvd_datasets::LibsvmOptions::default().n_features(spec().features);
    let data = ksvd_datasets::read_libsvm(&whole, &opts).unwrap();
    let tdata = ksvd_datasets::read_libsvm(&test, &opts).unwrap();
    let params = params();
    for cuts in [vec![0, 700, 1500], vec![0, 1, 333, 334, 1200, 1500]] {
        let blocks: Vec<_> = cuts
            .windows(2)
            .map(|w| {
                let rows: Vec<usize> = (w[0]..w[1]).collect();
                (
                    data.features.select_rows(&rows).unwrap(),
                    data.labels[w[0]..w[1]].to_vec(),
                    w[0],
                )
            })
            .collect();
        let scans: Vec<_> = blocks
            .iter()
            .enumerate()
            .map(|(k, b)| ScanPartial::scan_part(&params, k, part(b)).unwrap())
            .collect();
        let scan = random_tree(scans, 9, |a, b| a.merge(b).unwrap());
        let plan = LandmarkPlan::new(&scan, &params).unwrap();
        assert_eq!(plan.row_landmarks(), file.plan.row_landmarks());
        let cols = blocks
            .iter()
            .enumerate()
            .map(|(k, b)| ColumnsPartial::from_part(&plan, k, part(b)).unwrap())
            .collect();
        let columns = random_tree(cols, 10, |a, b| a.merge(b).unwrap());
        let scale = max_abs(file.columns.p().iter().copied());
        assert!(max_diff(columns.p(), file.columns.p()) <= 8.0 * 1500.0 * EPS * scale);
        let fitted = plan.solve(&columns).unwrap();
        let labels = fitted.label_rule(None).unwrap();
        let parts = blocks
            .iter()
            .enumerate()
            .map(|(k, b)| fitted.train_part(k, part(b), labels).unwrap())
            .collect();
        let train = random_tree(parts, 11, |a, b| a.merge(b).unwrap());
        let trained = fitted.finish(&train, 1e-3, labels).unwrap();
        let tb = (tdata.features.clone(), tdata.labels.clone(), 0);
        let (scores, emb) = trained.score_part(0, part(&tb), true).unwrap();
        assert!((scores.auroc().unwrap() - file.scores.auroc().unwrap()).abs() <= 1e-9);
        let e_file = file.trained.model().embed(&tdata.features).unwrap();
        let emb = emb.unwrap();
        assert!(max_diff(&emb, &e_file) <= EPS.sqrt() * max_abs(e_file.iter().copied()));
    }
    // A block whose labels do not match its rows is a typed error.
    let x = data.features.select_rows(&[0, 1]).unwrap();
    let bad = PartRows::Memory {
        x: &x,
        labels: &[1.0],
        first_row: 0,
    };
    let err = ScanPartial::scan_part(&params, 0, bad).unwrap_err();
    assert!(err.to_string().contains("one label per row"), "{err}");
}
