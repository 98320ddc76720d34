//! One implementation of the passes: the in-process fit ([`fit_ksvd`], [`fit_kpca`],
//! [`Fitted::train`], [`Trained::score`]) on one file equals the fit merged from the same rows
//! split into files at random places, grouped into partitions and merged along random trees
//! (what `ksvd.dask` does), for KSVD with the columns or the rows mapped and for KPCA; in-memory
//! blocks equal files; the states merge associatively, round-trip through the envelope and
//! reject bad input by name.
//!
//! Tolerances (crate docs, "Determinism and partitioning"): the landmark rows and columns,
//! counts, labels, gathered `X[:, J]` and sorted scores are exact; a sum of `N` terms regrouped
//! differently changes by at most `N ε Σ|terms|`, so the sums (`P`, singular values) are compared
//! at `8 N ε` relative to their scale; what lies behind the landmark SVD (embeddings, scores) at
//! `√ε` relative; an AUROC moves only through pairs of scores that can swap, so two AUROCs are
//! compared at the fraction of positive–negative pairs closer than twice the scores' difference
//! ([`common::auroc_slack`]).
#![allow(clippy::unwrap_used, clippy::expect_used)]
mod common;

use std::path::Path;

use common::{auroc_slack, max_abs, max_abs_diff, planted_sparse, read_rows, sources, split_lines, train_and_test};
use ksvd_datasets::envelope;
use ksvd_linalg::random::rng_from_seed;
use ksvd_linalg::CsrMatrix;
use ksvd_streaming::{
    fit_kpca, fit_ksvd, sketch_landmarks, uniform_cols, CompatSide, Embedding, Fitted, FittedKpca, FittedKsvd,
    LandmarkPlan, LandmarksPartial, LibsvmSource, Method, PartRows, PartialModel, PartialState, ScanPartial,
    ScorePartial, StreamingError, StreamingParams, TrainPartial, Trained, TrainedKpca, TrainedKsvd,
    ValidStreamingParams, PARTIAL_FORMAT_VERSION,
};
use rand::seq::SliceRandom;
use rand::Rng;

const EPS: f64 = f64::EPSILON;
/// Feature columns of the tall files (`N > M`: columns mapped).
const M: usize = 60;

fn params() -> ValidStreamingParams {
    StreamingParams::new(6, 40).chunk_rows(97).seed(5).check().unwrap()
}

/// Merges `states` in a random order along a random binary tree.
fn random_tree<T>(mut states: Vec<T>, seed: u64, merge: impl Fn(&mut T, &T)) -> T {
    let mut rng = rng_from_seed(seed);
    states.shuffle(&mut rng);
    while states.len() > 1 {
        let i = rng.gen_range(0..states.len() - 1);
        let right = states.remove(i + 1);
        merge(&mut states[i], &right);
    }
    states.pop().unwrap()
}

/// A fit through the states: every pass maps each file to its state and merges them along the
/// random tree of `seed` (`seed + 1`, ... for the later passes).
struct Run<E> {
    plan: LandmarkPlan,
    landmarks: LandmarksPartial,
    train: TrainPartial,
    trained: Trained<E>,
    scores: ScorePartial,
}

fn run_states<E: PartialModel>(
    method: Method,
    train: &[LibsvmSource],
    test: &[LibsvmSource],
    seed: u64,
    solve: impl Fn(&LandmarkPlan, &LandmarksPartial) -> ksvd_streaming::Result<Fitted<E>>,
) -> Run<E> {
    let params = params();
    let scans = train
        .iter()
        .enumerate()
        .map(|(f, s)| ScanPartial::scan_file(&params, f, s).unwrap())
        .collect();
    let scan = random_tree(scans, seed, |a, b| a.merge(b).unwrap());
    let plan = LandmarkPlan::new(&scan, &params, method).unwrap();
    let parts = train
        .iter()
        .enumerate()
        .map(|(f, s)| LandmarksPartial::from_file(&plan, f, s).unwrap())
        .collect();
    let landmarks = random_tree(parts, seed + 1, |a, b| a.merge(b).unwrap());
    let fitted = solve(&plan, &landmarks).unwrap();
    let labels = fitted.label_rule(None).unwrap();
    let parts = train
        .iter()
        .enumerate()
        .map(|(f, s)| fitted.train_file(f, s, labels).unwrap())
        .collect();
    let train_state = random_tree(parts, seed + 2, |a, b| a.merge(b).unwrap());
    let trained = fitted.finish(&train_state, 1e-3, labels).unwrap();
    let scored = test
        .iter()
        .enumerate()
        .map(|(f, s)| trained.score_file(f, s, false).unwrap().0)
        .collect();
    let scores = random_tree(scored, seed + 3, |a, b| a.merge(b).unwrap());
    Run {
        plan,
        landmarks,
        train: train_state,
        trained,
        scores,
    }
}

/// The in-process fit on `train`, trained and scored on `test`.
fn in_process<E: PartialModel>(
    train: &[LibsvmSource],
    test: &[LibsvmSource],
    fit: impl Fn(&[LibsvmSource], &ValidStreamingParams) -> ksvd_streaming::Result<Fitted<E>>,
) -> (Trained<E>, ScorePartial) {
    let trained = fit(train, &params())
        .unwrap()
        .train(train, 1e-3, None, &mut |_| {})
        .unwrap();
    let scores = trained.score(test, &mut |_| {}).unwrap();
    (trained, scores)
}

/// The test rows' scores computed in memory (the whole test matrix embedded at once), checked
/// against the score pass: its AUROC equals `ksvd_metrics`' AUROC of these scores up to the
/// pairs the difference between the two routes could swap.
fn scores_in_memory<E: PartialModel>(trained: &Trained<E>, scores: &ScorePartial, test: &Path, m: usize) -> Vec<f64> {
    let (x, y) = read_rows(test, m);
    let s_mem = trained.classifier().decision(trained.model().embed(&x).unwrap().view());
    let positive: Vec<bool> = y.iter().map(|&l| l > 0.0).collect();
    let (state, emb) = trained
        .score_part(0, PartRows::File(&LibsvmSource::new(test).n_features(m)), true)
        .unwrap();
    assert_eq!(state.scores(), scores.scores(), "the sorted scores of one test file");
    let s_pass = trained.classifier().decision(emb.unwrap().view());
    let delta = max_abs(s_pass.iter().zip(&s_mem).map(|(a, b)| a - b));
    assert!(delta <= EPS.sqrt() * max_abs(s_mem.iter().copied()));
    let auc_mem = ksvd_metrics::auroc(s_mem.as_slice().unwrap(), &positive).unwrap();
    let auc = scores.auroc().unwrap();
    let slack = auroc_slack(s_mem.as_slice().unwrap(), &positive, delta);
    assert!(
        (auc - auc_mem).abs() <= slack,
        "AUROC {auc} of the pass vs {auc_mem} in memory (slack {slack:e})"
    );
    s_mem.to_vec()
}

/// `a` and `b` agree as the module docs say: landmarks exact, spectrum at `8 N ε`, test
/// embeddings at `√ε`, AUROCs within the pairs their scores' difference can swap.
fn assert_same_fit<E: PartialModel>(
    a: (&Trained<E>, &ScorePartial),
    b: (&Trained<E>, &ScorePartial),
    test: &Path,
    m: usize,
) {
    let (ma, mb) = (a.0.model(), b.0.model());
    let n = ma.scan_summary().rows;
    assert_eq!(ma.landmark_rows(), mb.landmark_rows(), "the same landmark rows");
    let (sa, sb) = (ma.spectrum(), mb.spectrum());
    assert_eq!(sa.len(), sb.len());
    assert!(max_abs(sa.iter().zip(sb).map(|(x, y)| x - y)) <= 8.0 * n as f64 * EPS * sb[0]);
    let (x, y) = read_rows(test, m);
    let (ea, eb) = (ma.embed(&x).unwrap(), mb.embed(&x).unwrap());
    assert!(max_abs_diff(&ea, &eb) <= EPS.sqrt() * max_abs(eb.iter().copied()));
    // Each pass's AUROC is that of its in-memory scores (checked there); the two in-memory
    // AUROCs differ only through pairs their scores' difference can swap.
    let (s_a, s_b) = (scores_in_memory(a.0, a.1, test, m), scores_in_memory(b.0, b.1, test, m));
    let positive: Vec<bool> = y.iter().map(|&l| l > 0.0).collect();
    let delta = max_abs(s_a.iter().zip(&s_b).map(|(p, q)| p - q));
    assert!(delta <= EPS.sqrt() * max_abs(s_b.iter().copied()));
    let (auc_a, auc_b) = (
        ksvd_metrics::auroc(&s_a, &positive).unwrap(),
        ksvd_metrics::auroc(&s_b, &positive).unwrap(),
    );
    let slack = auroc_slack(&s_b, &positive, delta);
    assert!(
        (auc_a - auc_b).abs() <= slack,
        "AUROC {auc_a} vs {auc_b} (slack {slack:e})"
    );
}

fn ksvd(plan: &LandmarkPlan, l: &LandmarksPartial) -> ksvd_streaming::Result<FittedKsvd> {
    plan.solve_ksvd(l)
}

fn kpca(plan: &LandmarkPlan, l: &LandmarksPartial) -> ksvd_streaming::Result<FittedKpca> {
    plan.solve_kpca(l)
}

/// The check: `ksvd-stream` (the in-process fit on the whole file) and a distributed fit
/// of the same rows cut into files differently (3, 7 and 9 files at random places, merged along
/// random trees) choose the same landmark rows and columns and give the same results to the
/// documented tolerances; so does the in-process fit on the cut files.
#[test]
fn in_process_fit_equals_fits_merged_from_files_split_differently() {
    let dir = tempfile::tempdir().unwrap();
    let (whole, test) = train_and_test(dir.path(), 2500, 700, M, 0.1, 1);
    let (train1, test1) = (
        sources(std::slice::from_ref(&whole), M),
        sources(std::slice::from_ref(&test), M),
    );
    let (one, one_scores) = in_process(&train1, &test1, |s, p| fit_ksvd(s, p, &mut |_| {}));
    assert_eq!(one.model().row_landmarks().len(), 40);
    assert_eq!(one.model().side(), CompatSide::Cols);
    // The landmarks follow from the seed and the shape alone (what `ksvd.dask.fit` draws).
    assert_eq!(one.model().row_landmarks(), sketch_landmarks(5, 2500, 40).as_slice());
    assert_eq!(one.model().col_landmarks(), uniform_cols(5, M, 40).as_slice());
    let auc = one_scores.auroc().unwrap();
    for (k, (parts, cut_seed)) in [(3usize, 11u64), (7, 12), (9, 13)].into_iter().enumerate() {
        let files = split_lines(&whole, dir.path(), &format!("cut{k}"), parts, cut_seed);
        let src = sources(&files, M);
        let run = run_states(Method::Ksvd, &src, &test1, 10 * cut_seed, ksvd);
        assert_eq!(
            run.plan.col_landmarks(),
            one.model().col_landmarks(),
            "the same landmark columns"
        );
        assert_eq!(run.landmarks.row_landmarks(), one.model().row_landmarks());
        assert_eq!((run.train.rows(), run.scores.rows()), (2500, 700));
        assert_same_fit((&run.trained, &run.scores), (&one, &one_scores), &test, M);
        // The in-process fit over the cut files: one partition of several parts.
        let (cut, cut_scores) = in_process(&src, &test1, |s, p| fit_ksvd(s, p, &mut |_| {}));
        assert_same_fit((&cut, &cut_scores), (&one, &one_scores), &test, M);
    }
    // The planted rule is found (rank 6 of a 60-dimensional linear rule: partly): 5 standard
    // deviations above a random scorer (AUROC sd sqrt((P+N+1)/(12PN)), about 0.022 here; a
    // random scorer exceeds it with probability 3e-7).
    let (_, y) = read_rows(&test, M);
    let p = y.iter().filter(|&&l| l > 0.0).count() as f64;
    let nn = y.len() as f64 - p;
    assert!(p >= 100.0 && nn >= 100.0);
    let sd = ((p + nn + 1.0) / (12.0 * p * nn)).sqrt();
    assert!(auc > 0.5 + 5.0 * sd, "AUROC {auc} vs a random scorer's 0.5 ± {sd}");
}

/// KPCA: the same landmark rows for every cut of the file; its solve sees only those rows, so
/// `γ` and the eigenvalues are bit for bit those of the in-process fit; embeddings and scores go
/// through the merged sums.
#[test]
fn kpca_is_the_same_for_every_cut_of_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let (whole, test) = train_and_test(dir.path(), 2000, 500, M, 0.1, 2);
    let test1 = sources(std::slice::from_ref(&test), M);
    let (one, one_scores) = in_process(&sources(std::slice::from_ref(&whole), M), &test1, |s, p| {
        fit_kpca(s, p, &mut |_| {})
    });
    for seed in [1u64, 2, 3] {
        let files = split_lines(&whole, dir.path(), &format!("kpca{seed}"), 6, seed);
        let run = run_states(Method::Kpca, &sources(&files, M), &test1, 10 * seed, kpca);
        assert!(!run.landmarks.has_columns(), "KPCA's pass 2 holds no columns");
        assert_eq!(run.trained.model().gamma(), one.model().gamma());
        assert_eq!(run.trained.model().eigenvalues(), one.model().eigenvalues());
        assert_same_fit((&run.trained, &run.scores), (&one, &one_scores), &test, M);
    }
}

/// Rows mapped (`M > N`): pass 2 gathers `X[:, J]` (merged exactly: the same bytes whatever the
/// tree) and the driver forms `P = C_x X[:, J]`; only `‖X[:, j]‖²` (pass 1) is a regrouped sum.
#[test]
fn rows_mapped_gathers_the_landmark_columns_for_every_cut() {
    let (n, m) = (300, 500);
    let dir = tempfile::tempdir().unwrap();
    let (whole, test) = train_and_test(dir.path(), n, 200, m, 0.03, 3);
    let test1 = sources(std::slice::from_ref(&test), m);
    let files = split_lines(&whole, dir.path(), "wide", 5, 2);
    let src = sources(&files, m);
    let (one, one_scores) = in_process(&sources(std::slice::from_ref(&whole), m), &test1, |s, p| {
        fit_ksvd(s, p, &mut |_| {})
    });
    assert_eq!(one.model().side(), CompatSide::Rows);
    let first = run_states(Method::Ksvd, &src, &test1, 0, ksvd);
    assert!(first.landmarks.p().is_none() && first.landmarks.gathered_nnz() > 0);
    for seed in [1u64, 2, 3] {
        let run = run_states(Method::Ksvd, &src, &test1, 10 * seed, ksvd);
        assert_eq!(run.landmarks.to_bytes().unwrap(), first.landmarks.to_bytes().unwrap());
        assert_same_fit((&run.trained, &run.scores), (&one, &one_scores), &test, m);
    }
}

/// In-memory blocks ([`PartRows::Memory`], e.g. the row chunks of a `dask.array`) are parts like
/// files: the training file cut into blocks anywhere gives the fit of the whole file.
#[test]
fn in_memory_blocks_equal_the_whole_file() {
    let dir = tempfile::tempdir().unwrap();
    let (whole, test) = train_and_test(dir.path(), 1500, 400, M, 0.1, 4);
    let test1 = sources(std::slice::from_ref(&test), M);
    let (one, one_scores) = in_process(&sources(std::slice::from_ref(&whole), M), &test1, |s, p| {
        fit_ksvd(s, p, &mut |_| {})
    });
    let (x, y) = read_rows(&whole, M);
    let (xt, yt) = read_rows(&test, M);
    let params = params();
    for cuts in [vec![0, 700, 1500], vec![0, 1, 333, 334, 1200, 1500]] {
        let blocks: Vec<(CsrMatrix, Vec<f64>)> = cuts
            .windows(2)
            .map(|w| {
                let rows: Vec<usize> = (w[0]..w[1]).collect();
                (x.select_rows(&rows).unwrap(), y[w[0]..w[1]].to_vec())
            })
            .collect();
        let scans = blocks
            .iter()
            .enumerate()
            .map(|(k, b)| ScanPartial::scan_part(&params, k, part(b)).unwrap())
            .collect();
        let scan = random_tree(scans, 9, |a, b| a.merge(b).unwrap());
        let plan = LandmarkPlan::new(&scan, &params, Method::Ksvd).unwrap();
        let parts = blocks
            .iter()
            .enumerate()
            .map(|(k, b)| LandmarksPartial::from_part(&plan, k, part(b)).unwrap())
            .collect();
        let landmarks = random_tree(parts, 10, |a, b| a.merge(b).unwrap());
        let fitted = plan.solve_ksvd(&landmarks).unwrap();
        let labels = fitted.label_rule(None).unwrap();
        let parts = blocks
            .iter()
            .enumerate()
            .map(|(k, b)| fitted.train_part(k, part(b), labels).unwrap())
            .collect();
        let train = random_tree(parts, 11, |a, b| a.merge(b).unwrap());
        let trained = fitted.finish(&train, 1e-3, labels).unwrap();
        let (scores, _) = trained
            .score_part(0, PartRows::Memory { x: &xt, labels: &yt }, false)
            .unwrap();
        assert_same_fit((&trained, &scores), (&one, &one_scores), &test, M);
    }
    // A block whose labels do not match its rows is a typed error.
    let x2 = x.select_rows(&[0, 1]).unwrap();
    let bad = PartRows::Memory { x: &x2, labels: &[1.0] };
    let err = ScanPartial::scan_part(&params, 0, bad).unwrap_err();
    assert!(err.to_string().contains("one label per row"), "{err}");
}

/// A block of rows as a part.
fn part(b: &(CsrMatrix, Vec<f64>)) -> PartRows<'_> {
    PartRows::Memory { x: &b.0, labels: &b.1 }
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

/// Pass 1 and the plan over `files` (merged in order).
fn plan_of(src: &[LibsvmSource], method: Method) -> LandmarkPlan {
    let params = params();
    let mut scan = ScanPartial::empty();
    for (f, s) in src.iter().enumerate() {
        scan.merge(&ScanPartial::scan_file(&params, f, s).unwrap()).unwrap();
    }
    LandmarkPlan::new(&scan, &params, method).unwrap()
}

/// The sketch merges associatively and keeps the `n` rows of the union it would keep in one
/// part; merging a part twice is an error, not a silent double count.
#[test]
fn merges_are_associative_and_the_sketch_exact() {
    let dir = tempfile::tempdir().unwrap();
    let (whole, _) = train_and_test(dir.path(), 1500, 10, M, 0.1, 5);
    let files = split_lines(&whole, dir.path(), "p", 3, 11);
    let src = sources(&files, M);
    let plan = plan_of(&src, Method::Ksvd);
    let s: Vec<LandmarksPartial> = src
        .iter()
        .enumerate()
        .map(|(f, p)| LandmarksPartial::from_file(&plan, f, p).unwrap())
        .collect();
    let (left, right) = both_groupings(&s, |a, b| a.merge(b).unwrap());
    assert_eq!(left.row_landmarks(), right.row_landmarks());
    assert_eq!(left.row_landmarks().len(), 40);
    let p_scale = max_abs(left.p().unwrap().iter().copied());
    assert!(max_abs_diff(left.p().unwrap(), right.p().unwrap()) <= 8.0 * 1500.0 * EPS * p_scale);
    // Every merged landmark row is one of its part's own landmark rows, and the whole file as
    // one part keeps the same rows.
    let own: std::collections::BTreeSet<usize> = s.iter().flat_map(|p| p.row_landmarks()).collect();
    assert!(left.row_landmarks().iter().all(|r| own.contains(r)));
    let one = plan_of(&sources(std::slice::from_ref(&whole), M), Method::Ksvd);
    let whole_part = LandmarksPartial::from_file(&one, 0, &LibsvmSource::new(&whole).n_features(M)).unwrap();
    assert_eq!(whole_part.row_landmarks(), left.row_landmarks());
    let mut twice = s[0].clone();
    assert!(matches!(twice.merge(&s[0]), Err(StreamingError::PartialState { .. })));
    // A part given another part's number has the wrong row count.
    let err = LandmarksPartial::from_file(&plan, 0, &src[1]).unwrap_err();
    assert!(matches!(err, StreamingError::SourceChanged { .. }), "{err}");
}

/// Explicit landmark rows are global row ids: the same rows whatever the cut of the file.
#[test]
fn explicit_rows_are_global_ids() {
    let dir = tempfile::tempdir().unwrap();
    let (whole, _) = train_and_test(dir.path(), 500, 10, M, 0.1, 6);
    let rows = vec![0, 3, 99, 100, 101, 250, 499];
    let params = StreamingParams::new(4, 7)
        .explicit_rows(rows.clone())
        .chunk_rows(50)
        .check()
        .unwrap();
    for parts in [1, 4] {
        let files = split_lines(&whole, dir.path(), &format!("e{parts}"), parts, 3);
        let src = sources(&files, M);
        let fitted = fit_kpca(&src, &params, &mut |_| {}).unwrap();
        assert_eq!(fitted.model().row_landmarks(), rows);
    }
    let bad = StreamingParams::new(4, 2).explicit_rows(vec![1, 500]).check().unwrap();
    let err = fit_ksvd(&sources(std::slice::from_ref(&whole), M), &bad, &mut |_| {}).unwrap_err();
    assert!(
        matches!(
            err,
            StreamingError::LandmarkOutOfRange {
                index: 500,
                len: 500,
                ..
            }
        ),
        "{err}"
    );
}

/// Every state round-trips through the workspace's envelope; another format, another version,
/// a changed byte and a truncated document are typed errors naming the problem.
#[test]
fn states_round_trip_through_the_envelope_and_bad_bytes_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let (whole, test) = train_and_test(dir.path(), 800, 100, M, 0.1, 7);
    let src = sources(std::slice::from_ref(&whole), M);
    let scan = ScanPartial::scan_file(&params(), 0, &src[0]).unwrap();
    let bytes = scan.to_bytes().unwrap();
    assert_eq!(ScanPartial::from_bytes(&bytes).unwrap(), scan);
    let header = envelope::peek(&bytes).unwrap();
    assert_eq!(
        (header.format.as_str(), header.format_version),
        ("ksvd-streaming-scan", PARTIAL_FORMAT_VERSION)
    );
    let plan = LandmarkPlan::new(&scan, &params(), Method::Ksvd).unwrap();
    let plan = LandmarkPlan::from_bytes(&plan.to_bytes().unwrap()).unwrap();
    let lm = LandmarksPartial::from_file(&plan, 0, &src[0]).unwrap();
    let back = LandmarksPartial::from_bytes(&lm.to_bytes().unwrap()).unwrap();
    assert_eq!(back.p().unwrap(), lm.p().unwrap());
    assert_eq!(back.row_landmarks(), lm.row_landmarks());
    let fitted = plan.solve_ksvd(&lm).unwrap();
    let again = FittedKsvd::from_bytes(&fitted.to_bytes().unwrap()).unwrap();
    assert_eq!(
        plan.solve_ksvd(&back).unwrap().model().singular_values(),
        fitted.model().singular_values()
    );
    assert_eq!(again.model().singular_values(), fitted.model().singular_values());
    let labels = fitted.label_rule(None).unwrap();
    let tr = TrainPartial::from_bytes(&fitted.train_file(0, &src[0], labels).unwrap().to_bytes().unwrap()).unwrap();
    let trained = TrainedKsvd::from_bytes(&fitted.finish(&tr, 1e-3, labels).unwrap().to_bytes().unwrap()).unwrap();
    let (sc, _) = trained
        .score_file(0, &LibsvmSource::new(&test).n_features(M), false)
        .unwrap();
    assert_eq!(ScorePartial::from_bytes(&sc.to_bytes().unwrap()).unwrap(), sc);

    let text = String::from_utf8(bytes.clone()).unwrap();
    let version = format!("\"format_version\":{PARTIAL_FORMAT_VERSION}");
    let cases = [
        (text.replace(&version, "\"format_version\":99"), "version 99"),
        (
            text.replace("\"ksvd-streaming-scan\"", "\"ksvd-streaming-train\""),
            "\"ksvd-streaming-train\"",
        ),
        (text.replacen("\"nnz\":", "\"nnz\":1", 1), "corrupt"),
        (text[..text.len() / 2].to_string(), "truncated"),
    ];
    for (bad, needle) in cases {
        let err = ScanPartial::from_bytes(bad.as_bytes()).unwrap_err();
        assert!(
            matches!(err, StreamingError::PartialState { kind: "scan", .. }),
            "{err}"
        );
        assert!(err.to_string().contains(needle), "{err} lacks {needle}");
    }
    // A landmarks state is not a scan state.
    assert!(ScanPartial::from_bytes(&lm.to_bytes().unwrap()).is_err());
}

/// The gathered columns merge associatively and exactly; a sealed state that breaks an
/// invariant (unsorted gathered rows) is rejected by name; columns of another plan neither merge
/// nor solve; KPCA and KSVD states and plans are not interchangeable.
#[test]
fn states_of_other_plans_and_broken_invariants_are_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let (wide, _) = train_and_test(dir.path(), 240, 10, 400, 0.03, 8);
    let files = split_lines(&wide, dir.path(), "w", 3, 13);
    let src = sources(&files, 400);
    let plan = plan_of(&src, Method::Ksvd);
    let c: Vec<LandmarksPartial> = src
        .iter()
        .enumerate()
        .map(|(f, s)| LandmarksPartial::from_file(&plan, f, s).unwrap())
        .collect();
    let (left, right) = both_groupings(&c, |a, b| a.merge(b).unwrap());
    assert_eq!(left.to_bytes().unwrap(), right.to_bytes().unwrap());
    // Rows out of order, sealed again (so the checksum matches): the invariant check names it.
    let header = envelope::peek(&left.to_bytes().unwrap()).unwrap();
    let mut v: serde_json::Value =
        envelope::open(&left.to_bytes().unwrap(), &header.format, header.format_version).unwrap();
    v["columns"]["gathered"]["rows"].as_array_mut().unwrap().reverse();
    let resealed = envelope::seal(&header.format, header.format_version, "test", &v).unwrap();
    let err = LandmarksPartial::from_bytes(&resealed).unwrap_err();
    assert!(err.to_string().contains("unsorted"), "{err}");
    // Summed columns (another plan: N > M) neither merge into gathered ones nor solve this plan.
    let (tall, _) = train_and_test(dir.path(), 500, 10, M, 0.1, 9);
    let tsrc = sources(std::slice::from_ref(&tall), M);
    let tplan = plan_of(&tsrc, Method::Ksvd);
    let summed = LandmarksPartial::from_file(&tplan, 0, &tsrc[0]).unwrap();
    assert!(matches!(
        left.clone().merge(&summed),
        Err(StreamingError::PartialState { .. })
    ));
    assert!(matches!(
        plan.solve_ksvd(&summed),
        Err(StreamingError::PartialState { .. })
    ));
    // A KPCA plan: no columns, its own state kinds.
    let kplan = plan_of(&tsrc, Method::Kpca);
    let klm = LandmarksPartial::from_file(&kplan, 0, &tsrc[0]).unwrap();
    assert!(matches!(
        kplan.solve_ksvd(&klm),
        Err(StreamingError::PartialState { .. })
    ));
    assert!(matches!(
        summed.clone().merge(&klm),
        Err(StreamingError::PartialState { .. })
    ));
    let fk = kplan.solve_kpca(&klm).unwrap();
    let bytes = fk.to_bytes().unwrap();
    assert_eq!(
        FittedKpca::from_bytes(&bytes).unwrap().model().eigenvalues(),
        fk.model().eigenvalues()
    );
    let err = FittedKsvd::from_bytes(&bytes).unwrap_err();
    assert!(err.to_string().contains("\"ksvd-streaming-fitted-kpca\""), "{err}");
    let labels = fk.label_rule(None).unwrap();
    let tr = fk.train_file(0, &tsrc[0], labels).unwrap();
    let trained = fk.finish(&tr, 1e-3, labels).unwrap();
    let t2 = TrainedKpca::from_bytes(&trained.to_bytes().unwrap()).unwrap();
    let (x, _) = read_rows(&tall, M);
    assert_eq!(t2.model().embed(&x).unwrap(), trained.model().embed(&x).unwrap());
    assert!(TrainedKsvd::from_bytes(&trained.to_bytes().unwrap()).is_err());
}

#[test]
fn a_malformed_line_names_the_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("bad.svm");
    std::fs::write(&p, "1 1:0.5 3:1\n-1 2:1\n1 4:x\n").unwrap();
    let err = ScanPartial::scan_file(&params(), 0, &LibsvmSource::new(&p)).unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("bad.svm") && msg.contains(":3:"), "{msg}");
}

/// The landmark sketch is a uniform sample: over 3000 seeds every one of 50 rows is a landmark
/// (10 of them) with frequency 1/5, within 5 standard deviations of the binomial count.
#[test]
fn the_sketch_samples_rows_uniformly() {
    let (n, k, trials) = (50usize, 10usize, 3000u64);
    let (x, y) = planted_sparse(n, 8, 0.5, 1, 1);
    let mut counts = vec![0u32; n];
    for seed in 0..trials {
        let params = StreamingParams::new(2, k).seed(seed).check().unwrap();
        let part = PartRows::Memory { x: &x, labels: &y };
        let scan = ScanPartial::scan_part(&params, 0, part).unwrap();
        let plan = LandmarkPlan::new(&scan, &params, Method::Kpca).unwrap();
        let rows = LandmarksPartial::from_part(&plan, 0, part).unwrap().row_landmarks();
        assert_eq!(rows.len(), k);
        for r in rows {
            counts[r] += 1;
        }
    }
    let p = k as f64 / n as f64;
    let (mean, sd) = (trials as f64 * p, (trials as f64 * p * (1.0 - p)).sqrt());
    for (i, &c) in counts.iter().enumerate() {
        assert!(
            (c as f64 - mean).abs() <= 5.0 * sd,
            "row {i} chosen {c} times; expected {mean} ± {}",
            5.0 * sd
        );
    }
}
