//! The mergeable partial states of the distributed passes: random partitions of the training
//! file into files, merged in random trees and orders, give the single-pass answer (exactly for
//! the sketch, counts and sorted scores; to rounding for the sums), and the distributed fit equals
//! the one-process `fit_ksvd` + `train_pass` + `score_pass` with the same landmark rows; the
//! same for KPCA (`fit_kpca`) and for KSVD with the rows mapped (`M > N`, `X[:, J]` gathered).
//!
//! Tolerances: a sum of `N` terms regrouped differently changes by at most `N ε Σ|terms|`, so the
//! sums (`P`, singular values, the ridge statistics) are compared at `8 N ε` relative to their
//! scale. Quantities behind the SVD of the landmark block (embeddings, scores) move by that
//! perturbation divided by the spectral gap; they are compared at `√ε` relative to their scale.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use std::path::{Path, PathBuf};

use ksvd_linalg::random::rng_from_seed;
use ksvd_streaming::{
    auroc, fit_kpca, fit_ksvd, score_pass, train_pass, ColumnsPartial, CompatSide, Embedding, Fitted, FittedKpca,
    FittedKsvd, LabelRule, LandmarkPlan, LibsvmSource, PartRows, PartialModel, PartialState, ScanPartial, ScorePartial,
    StreamingError, StreamingParams, SyntheticPart, SyntheticSpec, TrainPartial, Trained, TrainedKpca, TrainedKsvd,
    ValidStreamingParams,
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

struct Run<E> {
    scan: ScanPartial,
    plan: LandmarkPlan,
    columns: Option<ColumnsPartial>,
    train: TrainPartial,
    trained: Trained<E>,
    scores: ScorePartial,
}

fn source(p: &Path) -> LibsvmSource {
    source_m(p, spec().features)
}

fn source_m(p: &Path, features: usize) -> LibsvmSource {
    LibsvmSource::new(p).n_features(features)
}

/// Pass 1 over `src` merged along the tree of `seed`, and the driver's plan.
fn plan_of(src: &[LibsvmSource], params: &ValidStreamingParams, seed: u64) -> (ScanPartial, LandmarkPlan) {
    let scans = src
        .iter()
        .enumerate()
        .map(|(f, s)| ScanPartial::scan_file(params, f, s).unwrap())
        .collect();
    let scan = random_tree(scans, seed, |a, b| a.merge(b).unwrap());
    let plan = LandmarkPlan::new(&scan, params).unwrap();
    (scan, plan)
}

/// Passes 3 and 4 of any fitted model, merged along the trees of `seed + 2`, `seed + 3`.
fn train_and_score<E: PartialModel>(
    fitted: &Fitted<E>,
    src: &[LibsvmSource],
    test: &[LibsvmSource],
    seed: u64,
) -> (TrainPartial, Trained<E>, ScorePartial) {
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
        .map(|(f, s)| trained.score_file(f, s, false).unwrap().0)
        .collect();
    let scores = random_tree(scored, seed + 3, |a, b| a.merge(b).unwrap());
    (train, trained, scores)
}

/// The distributed KSVD fit of files with `features` columns.
fn run_ksvd(train: &[PathBuf], test: &[PathBuf], seed: u64, features: usize) -> Run<ksvd_streaming::StreamingKsvd> {
    let params = params();
    let src: Vec<LibsvmSource> = train.iter().map(|p| source_m(p, features)).collect();
    let tsrc: Vec<LibsvmSource> = test.iter().map(|p| source_m(p, features)).collect();
    let (scan, plan) = plan_of(&src, &params, seed);
    let cols = src
        .iter()
        .enumerate()
        .map(|(f, s)| ColumnsPartial::from_file(&plan, f, s).unwrap())
        .collect();
    let columns = random_tree(cols, seed + 1, |a, b| a.merge(b).unwrap());
    let fitted: FittedKsvd = plan.solve(&columns).unwrap();
    let (train, trained, scores) = train_and_score(&fitted, &src, &tsrc, seed);
    Run {
        scan,
        plan,
        columns: Some(columns),
        train,
        trained,
        scores,
    }
}

fn run(train: &[PathBuf], test: &[PathBuf], seed: u64) -> Run<ksvd_streaming::StreamingKsvd> {
    run_ksvd(train, test, seed, spec().features)
}

/// The distributed KPCA fit: pass 1, the driver's symmetric Nyström solve, passes 3 and 4.
fn run_kpca(train: &[PathBuf], test: &[PathBuf], seed: u64) -> Run<ksvd_streaming::StreamingKpca> {
    let params = params();
    let src: Vec<LibsvmSource> = train.iter().map(|p| source(p)).collect();
    let tsrc: Vec<LibsvmSource> = test.iter().map(|p| source(p)).collect();
    let (scan, plan) = plan_of(&src, &params, seed);
    let fitted: FittedKpca = plan.solve_kpca().unwrap();
    let (train, trained, scores) = train_and_score(&fitted, &src, &tsrc, seed);
    Run {
        scan,
        plan,
        columns: None,
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
    let scale_p = max_abs(single.columns.as_ref().unwrap().p().unwrap().iter().copied());
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
        assert!(
            max_diff(
                got.columns.as_ref().unwrap().p().unwrap(),
                single.columns.as_ref().unwrap().p().unwrap()
            ) <= tol_sum * scale_p
        );
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
    let (model, one) = one_process(
        &whole,
        &test,
        spec().features,
        dist.plan.row_landmarks(),
        |s, p| fit_ksvd(s, p, &mut |_| {}),
        |m| m.summary().label_counts.clone(),
    );
    assert_eq!(model.col_landmarks(), dist.plan.col_landmarks());
    let (sa, sb) = (dist.trained.model().singular_values(), model.singular_values().clone());
    assert!(max_abs(sa.iter().zip(&sb).map(|(a, b)| a - b)) <= 8.0 * 2000.0 * EPS * sb[0]);
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

/// `(s0 + s1) + s2` and `s0 + (s1 + s2)`.
fn both_groupings<T: Clone>(s: &[T], merge: impl Fn(&mut T, &T)) -> (T, T) {
    let mut left = s[0].clone();
    merge(&mut left, &s[1]);
    merge(&mut left, &s[2]);
    let mut bc = s[1].clone();
    merge(&mut bc, &s[2]);
    let mut right = s[0].clone();
    merge(&mut right, &bc);
    (left, right)
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
    let (left, right) = both_groupings(&s, |a, b| a.merge(b).unwrap());
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
    assert_eq!(back.p().unwrap(), cols.p().unwrap());
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
        let (pc, pf) = (columns.p().unwrap(), file.columns.as_ref().unwrap().p().unwrap());
        assert!(max_diff(pc, pf) <= 8.0 * 1500.0 * EPS * max_abs(pf.iter().copied()));
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

/// The one-process reference: `fit` (`fit_ksvd` or `fit_kpca`) on the whole file `whole`
/// (`features` columns) told to use the landmark rows `rows`, then `train_pass` and
/// `score_pass` on `test`. Returns the normalised model and its AUROC.
fn one_process<E: Embedding>(
    whole: &Path,
    test: &Path,
    features: usize,
    rows: &[usize],
    fit: impl Fn(&LibsvmSource, &ValidStreamingParams) -> ksvd_streaming::Result<E>,
    label_counts: impl Fn(&E) -> Vec<(f64, usize)>,
) -> (E, f64) {
    let p = StreamingParams::new(6, 40)
        .chunk_rows(97)
        .seed(5)
        .explicit_rows(rows.to_vec())
        .check()
        .unwrap();
    let mut model = fit(&source_m(whole, features), &p).unwrap();
    let labels = LabelRule::from_counts(whole, &label_counts(&model), None).unwrap();
    let tr = train_pass(&source_m(whole, features), &mut model, labels, 1e-3, 97, &mut |_| {}).unwrap();
    let (scores, pos) = score_pass(
        &source_m(test, features),
        &model,
        &tr.classifier,
        labels,
        97,
        &mut |_| {},
    )
    .unwrap();
    (model, auroc(&scores, &pos).unwrap())
}

fn wide_spec(features: usize, nnz_per_row: usize) -> SyntheticSpec {
    SyntheticSpec {
        features,
        nnz_per_row,
        ..SyntheticSpec::default()
    }
}

/// KPCA through the partial states: the sketch's landmark rows (the same for every
/// partitioning), then `fit_kpca`'s own solve. With the same landmark rows the solve is the same
/// code on the same rows, so `γ` and the eigenvalues are bit for bit those of `fit_kpca`;
/// the training pass regroups sums (embeddings and scores at `√ε` relative, AUROC a ranking).
#[test]
fn kpca_equals_fit_kpca_with_the_same_landmarks_for_any_partitioning() {
    let dir = tempfile::tempdir().unwrap();
    let whole = dir.path().join("train.svm");
    let test = dir.path().join("test.svm");
    ksvd_streaming::write_synthetic(&whole, &spec(), SyntheticPart::Train, 2000).unwrap();
    ksvd_streaming::write_synthetic(&test, &spec(), SyntheticPart::Test, 500).unwrap();
    let tests = std::slice::from_ref(&test);
    // The files are the units of the sketch's keys; the partitions are groupings of them, and
    // the merges any tree (seed 0: left to right, one partition).
    let train = split_lines(&whole, dir.path(), "kpca", 6, 3);
    let one = run_kpca(&train, tests, 0);
    // The one-process path on the whole file, told to use the sketch's landmark rows.
    let (model, auc) = one_process(
        &whole,
        &test,
        spec().features,
        one.plan.row_landmarks(),
        |s, p| fit_kpca(s, p, &mut |_| {}),
        |m| m.summary().label_counts.clone(),
    );
    assert_eq!(model.row_landmarks(), one.plan.row_landmarks());
    assert_eq!(model.gamma(), one.trained.model().gamma());
    assert_eq!(model.eigenvalues(), one.trained.model().eigenvalues());
    assert!((one.scores.auroc().unwrap() - auc).abs() <= 1e-9);
    let x = read_rows(&test);
    let e_ref = model.embed(&x).unwrap();
    let tol = EPS.sqrt() * max_abs(e_ref.iter().copied());
    assert!(max_diff(&one.trained.model().embed(&x).unwrap(), &e_ref) <= tol);
    assert!(0.5 < auc && auc <= 1.0, "the planted signal is found: AUROC {auc}");
    for seed in [1u64, 2, 3] {
        let got = run_kpca(&train, tests, 10 * seed);
        assert_eq!(got.plan.row_landmarks(), one.plan.row_landmarks());
        assert_eq!(got.trained.model().eigenvalues(), one.trained.model().eigenvalues());
        assert_eq!((got.train.rows(), got.train.positives()), (2000, one.train.positives()));
        assert!(max_diff(&got.trained.model().embed(&x).unwrap(), &e_ref) <= tol);
        assert!((got.scores.auroc().unwrap() - auc).abs() <= 1e-9);
    }
}

/// Rows mapped (`M > N`): pass 2 gathers `X[:, J]` (merged exactly, whatever the tree) and the
/// driver forms `P = C_x X[:, J]` as `fit_ksvd` does; only `‖X[:, j]‖²` (pass 1) is a regrouped
/// sum, so the singular values agree with `fit_ksvd` at `8 N ε`, the rest at `√ε`.
#[test]
fn rows_mapped_gathers_the_landmark_columns_and_equals_fit_ksvd() {
    let wide = wide_spec(500, 12);
    let (n, m) = (300, wide.features);
    let dir = tempfile::tempdir().unwrap();
    let whole = dir.path().join("train.svm");
    let test = dir.path().join("test.svm");
    ksvd_streaming::write_synthetic(&whole, &wide, SyntheticPart::Train, n).unwrap();
    ksvd_streaming::write_synthetic(&test, &wide, SyntheticPart::Test, 200).unwrap();
    let tests = std::slice::from_ref(&test);
    let train = split_lines(&whole, dir.path(), "wide", 5, 2);
    let one = run_ksvd(&train, tests, 0, m);
    assert_eq!(one.trained.model().side(), CompatSide::Rows);
    let cols = one.columns.as_ref().unwrap();
    assert!(cols.p().is_none() && cols.gathered_nnz() > 0);
    let (model, auc) = one_process(
        &whole,
        &test,
        m,
        one.plan.row_landmarks(),
        |s, p| fit_ksvd(s, p, &mut |_| {}),
        |m| m.summary().label_counts.clone(),
    );
    assert_eq!(model.col_landmarks(), one.plan.col_landmarks());
    let (sa, sb) = (one.trained.model().singular_values(), model.singular_values().clone());
    let tol_sum = 8.0 * n as f64 * EPS * sb[0];
    assert!(max_abs(sa.iter().zip(&sb).map(|(a, b)| a - b)) <= tol_sum);
    assert!((one.scores.auroc().unwrap() - auc).abs() <= 1e-9);
    let opts = ksvd_datasets::LibsvmOptions::default().n_features(m);
    let x = ksvd_datasets::read_libsvm(&test, &opts).unwrap().features;
    let e_ref = model.embed(&x).unwrap();
    let tol = EPS.sqrt() * max_abs(e_ref.iter().copied());
    assert!(max_diff(&one.trained.model().embed(&x).unwrap(), &e_ref) <= tol);
    for seed in [1u64, 2, 3] {
        let got = run_ksvd(&train, tests, 10 * seed, m);
        let gc = got.columns.as_ref().unwrap();
        // Gathering is exact: the same bytes for every grouping and merge order.
        assert_eq!(gc.to_bytes().unwrap(), cols.to_bytes().unwrap());
        let s = got.trained.model().singular_values();
        assert!(max_abs(s.iter().zip(&sb).map(|(a, b)| a - b)) <= tol_sum);
        assert!(max_diff(&got.trained.model().embed(&x).unwrap(), &e_ref) <= tol);
        assert!((got.scores.auroc().unwrap() - auc).abs() <= 1e-9);
    }
}

/// The gathered columns merge associatively and exactly (equal bytes for both groupings); the
/// KPCA and rows-mapped states round-trip through bytes; states of the wrong kind, a corrupt
/// gathered state and columns of another plan are typed errors.
#[test]
fn gathered_and_kpca_states_merge_round_trip_and_reject_bad_input() {
    let wide = wide_spec(400, 10);
    let dir = tempfile::tempdir().unwrap();
    let whole = dir.path().join("wide.svm");
    ksvd_streaming::write_synthetic(&whole, &wide, SyntheticPart::Train, 240).unwrap();
    let files = split_lines(&whole, dir.path(), "w", 3, 13);
    let src: Vec<LibsvmSource> = files.iter().map(|p| source_m(p, 400)).collect();
    let params = params();
    let (_, plan) = plan_of(&src, &params, 0);
    let c: Vec<ColumnsPartial> = src
        .iter()
        .enumerate()
        .map(|(f, s)| ColumnsPartial::from_file(&plan, f, s).unwrap())
        .collect();
    let (left, right) = both_groupings(&c, |a, b| a.merge(b).unwrap());
    assert_eq!(left.to_bytes().unwrap(), right.to_bytes().unwrap());
    let back = ColumnsPartial::from_bytes(&left.to_bytes().unwrap()).unwrap();
    assert_eq!(back.to_bytes().unwrap(), left.to_bytes().unwrap());
    let fitted = plan.solve(&left).unwrap();
    let again = FittedKsvd::from_bytes(&fitted.to_bytes().unwrap()).unwrap();
    assert_eq!(again.model().singular_values(), fitted.model().singular_values());
    // A gathered state with its rows out of order is rejected by name.
    let mut v: serde_json::Value = serde_json::from_slice(&left.to_bytes().unwrap()).unwrap();
    v["state"]["columns"]["gathered"]["rows"]
        .as_array_mut()
        .unwrap()
        .reverse();
    let err = ColumnsPartial::from_bytes(&serde_json::to_vec(&v).unwrap()).unwrap_err();
    assert!(
        matches!(err, StreamingError::PartialState { .. }) && err.to_string().contains("unsorted"),
        "{err}"
    );
    // Summed columns (another plan: N > M) neither merge into gathered ones nor solve this plan.
    let tall = dir.path().join("tall.svm");
    ksvd_streaming::write_synthetic(&tall, &spec(), SyntheticPart::Train, 500).unwrap();
    let tsrc = [source(&tall)];
    let (_, tplan) = plan_of(&tsrc, &params, 0);
    let summed = ColumnsPartial::from_file(&tplan, 0, &tsrc[0]).unwrap();
    assert!(matches!(
        left.clone().merge(&summed),
        Err(StreamingError::PartialState { .. })
    ));
    let err = plan.solve(&summed).unwrap_err();
    assert!(matches!(err, StreamingError::PartialState { .. }), "{err}");

    // KPCA states: round trip, and their kinds differ from KSVD's.
    let fk = tplan.solve_kpca().unwrap();
    let bytes = fk.to_bytes().unwrap();
    let fk2 = FittedKpca::from_bytes(&bytes).unwrap();
    assert_eq!(fk2.model().eigenvalues(), fk.model().eigenvalues());
    let err = FittedKsvd::from_bytes(&bytes).unwrap_err();
    assert!(err.to_string().contains("\"fitted-kpca\""), "{err}");
    let labels = fk.label_rule(None).unwrap();
    let tr = fk.train_file(0, &tsrc[0], labels).unwrap();
    let trained = fk.finish(&tr, 1e-3, labels).unwrap();
    let t2 = TrainedKpca::from_bytes(&trained.to_bytes().unwrap()).unwrap();
    let x = read_rows(&tall);
    assert_eq!(t2.model().embed(&x).unwrap(), trained.model().embed(&x).unwrap());
    assert!(TrainedKsvd::from_bytes(&trained.to_bytes().unwrap()).is_err());
}
