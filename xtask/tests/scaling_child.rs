//! The scaling benchmark's child process, `xtask scaling-child`: its streaming measurement prints
//! the AUROC `ksvd_streaming::run_pipeline` computes on the same files and parameters (to the
//! bit: one thread, seeded), and the in-memory paths find the planted signal.
#![allow(clippy::expect_used)]
use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

use ksvd_streaming::{run_pipeline, Bandwidth, LibsvmSource, Method, PipelineParams, StreamingParams};

const PARAMS: &str =
    "features = 40\n[model]\nlandmarks = 60\ncomponents = 8\nbandwidth = { median = 1.0 }\nridge = 0.001\n\
                      chunk_rows = 300\nseed = 1\nrsvd_oversampling = 10\nrsvd_power_iters = 2\n";

/// Rows with 3 ones among 40 features (deterministic); the label is +1 when feature `i % 8` is
/// among the first four, so the signal is in 8 features.
fn write(path: &Path, rows: std::ops::Range<usize>) {
    let mut text = String::new();
    for i in rows {
        let a = (i * 5 + 1) % 8;
        let (b, c) = (8 + (i * 7 + 3) % 16, 24 + (i * 11 + 2) % 16);
        let _ = writeln!(
            text,
            "{} {}:1 {}:1 {}:1",
            if a < 4 { "+1" } else { "-1" },
            a + 1,
            b + 1,
            c + 1
        );
    }
    std::fs::write(path, text).expect("writing a test file");
}

fn child(method: &str, train: &Path, test: &Path) -> toml::Table {
    let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args([
            "scaling-child",
            "--method",
            method,
            "--threads",
            "1",
            "--params",
            PARAMS,
            "--train",
        ])
        .arg(train)
        .arg("--test")
        .arg(test)
        .output()
        .expect("running xtask scaling-child");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    toml::from_str(&String::from_utf8_lossy(&out.stdout)).expect("a TOML outcome")
}

#[test]
fn the_child_prints_what_the_pipeline_computes() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let (train, test) = (dir.path().join("train.svm"), dir.path().join("test.svm"));
    write(&train, 0..2000);
    write(&test, 2000..2600);
    let params = PipelineParams {
        model: StreamingParams::new(8, 60)
            .bandwidth(Bandwidth::Median(1.0))
            .chunk_rows(300)
            .seed(1),
        ridge: 1e-3,
        positive_label: None,
    };
    let want = run_pipeline(
        Method::Ksvd,
        &[LibsvmSource::new(&train).n_features(40)],
        &[LibsvmSource::new(&test).n_features(40)],
        &params,
        &mut |_| {},
    )
    .expect("the pipeline");
    let got = child("streaming-nystrom", &train, &test);
    assert_eq!(got["auroc"].as_float(), Some(want.auroc));
    assert_eq!(got["rank"].as_integer(), Some(want.rank as i64));
    assert_eq!(got["train_rows"].as_integer(), Some(2000));
    // 300 of 600 test rows are positive: a random scorer's AUROC has sd sqrt(601 / (12 * 300^2))
    // = 0.024; the signal lies in 8 features, which every path keeps.
    let bound = 0.5 + 5.0 * (601.0f64 / (12.0 * 300.0 * 300.0)).sqrt();
    for method in ["streaming-nystrom", "dense", "rsvd"] {
        let auc = child(method, &train, &test)["auroc"].as_float().expect("auroc");
        assert!(auc > bound, "{method}: AUROC {auc} <= {bound}");
    }
    let bad = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(["scaling-child", "--method", "svd", "--params", PARAMS, "--train"])
        .arg(&train)
        .arg("--test")
        .arg(&test)
        .output()
        .expect("running xtask scaling-child");
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("unknown scaling method `svd`"));
}
