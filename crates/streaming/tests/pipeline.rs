//! End-to-end: the pipeline finds a planted signal (an AUROC far above a random scorer's, equal
//! to `ksvd_metrics`' AUROC of the same model's scores computed in memory), the seeded split
//! partitions a file, and the `ksvd-stream run` binary prints what `run_pipeline` computes, also
//! from the training file cut into parts.
#![allow(clippy::unwrap_used, clippy::expect_used)]
mod common;

use common::{auroc_slack, max_abs, read_rows, sources, split_lines, train_and_test};
use ksvd_streaming::{
    fit_kpca, fit_ksvd, run_pipeline, Fitted, LibsvmSource, Method, PartialModel, PartialState, PipelineParams,
    RowSelection, ScorePartial, StreamingParams, TrainedModel, ValidStreamingParams,
};

const M: usize = 120;

fn model_params() -> StreamingParams {
    StreamingParams::new(20, 200).chunk_rows(1500).seed(3)
}

/// The standard deviation of the AUROC of a scorer independent of the labels (Mann–Whitney
/// under the null hypothesis, no ties): `sqrt((P + N + 1) / (12 P N))`.
fn null_sd(labels: &[f64]) -> f64 {
    let p = labels.iter().filter(|&&l| l > 0.0).count() as f64;
    let n = labels.len() as f64 - p;
    ((p + n + 1.0) / (12.0 * p * n)).sqrt()
}

fn check_method<E: PartialModel>(
    method: Method,
    fit: impl Fn(&[LibsvmSource], &ValidStreamingParams) -> ksvd_streaming::Result<Fitted<E>>,
) {
    let dir = tempfile::tempdir().unwrap();
    let (train, test) = train_and_test(dir.path(), 6000, 2000, M, 0.06, 21);
    let (tr, te) = (sources(&[train], M), sources(std::slice::from_ref(&test), M));
    let params = PipelineParams {
        model: model_params(),
        ridge: 1e-3,
        positive_label: None,
    };
    let out = run_pipeline(method, &tr, &te, &params, &mut |_| {}).unwrap();
    assert_eq!((out.train_rows, out.test_rows, out.features), (6000, 2000, M));
    assert_eq!(out.row_landmarks.len(), 200);
    // The same passes by hand: the same numbers to the bit.
    let valid = params.model.clone().check().unwrap();
    let trained = fit(&tr, &valid).unwrap().train(&tr, 1e-3, None, &mut |_| {}).unwrap();
    let scores = trained.score(&te, &mut |_| {}).unwrap();
    assert_eq!(scores.auroc().unwrap(), out.auroc);
    assert_eq!(trained.classifier(), &out.classifier);
    assert_eq!(trained.model().landmark_rows(), out.row_landmarks.as_slice());
    // The AUROC is ksvd_metrics' AUROC of the model's scores of the whole test matrix computed in
    // memory, up to the pairs the two routes' rounding could swap.
    let (x, y) = read_rows(&test, M);
    let s_mem = out
        .classifier
        .decision(trained.model().embed(&x).unwrap().view())
        .to_vec();
    let positive: Vec<bool> = y.iter().map(|&l| l > 0.0).collect();
    let auc_mem = ksvd_metrics::auroc(&s_mem, &positive).unwrap();
    let delta = f64::EPSILON.sqrt() * max_abs(s_mem.iter().copied());
    let slack = auroc_slack(&s_mem, &positive, delta);
    assert!(
        (out.auroc - auc_mem).abs() <= slack,
        "{method:?}: AUROC {} of the passes vs {auc_mem} in memory (slack {slack:e})",
        out.auroc
    );
    // The planted rule is found: 10 null standard deviations above a random scorer's 0.5.
    let sd = null_sd(&y);
    assert!(
        out.auroc > 0.5 + 10.0 * sd,
        "{method:?}: AUROC {} vs 0.5 ± {sd}",
        out.auroc
    );
}

#[test]
fn ksvd_learns_the_planted_signal() {
    check_method(Method::Ksvd, |s, p| fit_ksvd(s, p, &mut |_| {}));
}

#[test]
fn kpca_learns_the_planted_signal() {
    check_method(Method::Kpca, |s, p| fit_kpca(s, p, &mut |_| {}));
}

#[test]
fn split_selections_partition_the_file() {
    let tr = RowSelection::SplitTrain {
        test_fraction: 0.25,
        seed: 5,
    };
    let te = RowSelection::SplitTest {
        test_fraction: 0.25,
        seed: 5,
    };
    let held = (0..3000).filter(|&t| te.keeps(t)).count();
    assert!((0..3000).all(|t| tr.keeps(t) != te.keeps(t)));
    // Binomial(3000, 0.25): mean 750, sd 23.7.
    assert!((held as f64 - 750.0).abs() < 5.0 * 23.7, "{held}");
    assert!(RowSelection::SplitTest {
        test_fraction: 1.0,
        seed: 0
    }
    .validate()
    .is_err());
}

/// Runs `ksvd-stream run` and returns the AUROC and the landmark count it printed.
fn binary(args: &[&std::ffi::OsStr]) -> (f64, usize) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ksvd-stream"))
        .arg("run")
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let field = |name: &str| {
        text.split_whitespace()
            .find_map(|t| t.strip_prefix(&format!("{name}=")))
            .unwrap_or_else(|| panic!("no {name} in {text}"))
            .to_string()
    };
    (field("auroc").parse().unwrap(), field("landmark_rows").parse().unwrap())
}

/// The binary on the whole training file and on the file cut into three parts prints, to its
/// four decimals, the AUROC `run_pipeline` computes (the same landmarks; sums regrouped), and a
/// run without a test file holds out the seeded split.
#[test]
fn the_binary_prints_what_run_pipeline_computes() {
    let dir = tempfile::tempdir().unwrap();
    let (train, test) = train_and_test(dir.path(), 3000, 1000, M, 0.06, 22);
    let parts = split_lines(&train, dir.path(), "part", 3, 4);
    let m = M.to_string();
    let flags = [
        "--method",
        "ksvd",
        "--landmarks",
        "100",
        "--components",
        "10",
        "--chunk-rows",
        "700",
        "--seed",
        "2",
        "--threads",
        "1",
        "--features",
        &m,
    ];
    let common: Vec<&std::ffi::OsStr> = flags.iter().map(std::ffi::OsStr::new).collect();
    let params = PipelineParams {
        model: StreamingParams::new(10, 100).chunk_rows(700).seed(2),
        ridge: 1e-3,
        positive_label: None,
    };
    let want = run_pipeline(
        Method::Ksvd,
        &sources(std::slice::from_ref(&train), M),
        &sources(std::slice::from_ref(&test), M),
        &params,
        &mut |_| {},
    )
    .unwrap();
    let models = dir.path().join("models");
    std::fs::create_dir(&models).unwrap();
    let mut whole = common.clone();
    whole.extend([
        std::ffi::OsStr::new("--train"),
        train.as_os_str(),
        std::ffi::OsStr::new("--test"),
        test.as_os_str(),
        std::ffi::OsStr::new("--out"),
        models.as_os_str(),
    ]);
    let mut cut = common.clone();
    for p in &parts {
        cut.extend([std::ffi::OsStr::new("--train"), p.as_os_str()]);
    }
    cut.extend([std::ffi::OsStr::new("--test"), test.as_os_str()]);
    for args in [whole, cut] {
        let (auc, n) = binary(&args);
        assert_eq!(n, 100);
        assert!(
            (auc - want.auroc).abs() <= 5e-5 + 1e-9,
            "printed {auc}, computed {}",
            want.auroc
        );
    }
    // `--out` saved the trained model: it loads back as the model run_pipeline returns (the same
    // landmarks; the classifier to sqrt(eps), the binary runs in one thread) and saves unchanged.
    let saved = std::fs::read(models.join("model.ksvd-trained")).unwrap();
    let loaded = TrainedModel::from_bytes(&saved).unwrap();
    assert_eq!(loaded.to_bytes().unwrap(), saved);
    let TrainedModel::Ksvd(trained) = &loaded else {
        panic!("a KSVD run saved a {} model", loaded.method())
    };
    assert_eq!(trained.model().landmark_rows(), want.row_landmarks.as_slice());
    let (w, w_want) = (&trained.classifier().weights, &want.classifier.weights);
    let scale = max_abs(w_want.iter().copied());
    let diff = max_abs(w.iter().zip(w_want).map(|(a, b)| a - b));
    assert!(
        diff <= f64::EPSILON.sqrt() * scale,
        "weights differ by {diff:e} (scale {scale})"
    );
    // Truncated, or a document that is not a trained model: errors naming the problem.
    let err = TrainedModel::from_bytes(&saved[..saved.len() / 2])
        .unwrap_err()
        .to_string();
    assert!(err.contains("truncated"), "{err}");
    let not_a_model = ScorePartial::default().to_bytes().unwrap();
    let err = TrainedModel::from_bytes(&not_a_model).unwrap_err().to_string();
    assert!(
        err.contains("a `ksvd-streaming-score` document is not a trained model"),
        "{err}"
    );
    // Without a test file: the seeded split of the training file.
    let mut split = common.clone();
    split.extend([std::ffi::OsStr::new("--train"), train.as_os_str()]);
    let sel = |test| {
        let (test_fraction, seed) = (0.2, 2);
        LibsvmSource::new(&train).n_features(M).selection(if test {
            RowSelection::SplitTest { test_fraction, seed }
        } else {
            RowSelection::SplitTrain { test_fraction, seed }
        })
    };
    let held = run_pipeline(Method::Ksvd, &[sel(false)], &[sel(true)], &params, &mut |_| {}).unwrap();
    assert_eq!(held.train_rows + held.test_rows, 3000);
    let (auc, _) = binary(&split);
    assert!(
        (auc - held.auroc).abs() <= 5e-5 + 1e-9,
        "printed {auc}, computed {}",
        held.auroc
    );
}
