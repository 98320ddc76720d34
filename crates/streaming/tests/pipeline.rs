//! End-to-end: the pipeline on synthetic files, the large-scale cell ([`measure_pipeline`]), and
//! one measurement of the scaling benchmark in process and through the `ksvd-stream` child. (The
//! loops over datasets and sizes, with their rows, are tested in `xtask`.)
#![allow(clippy::unwrap_used, clippy::expect_used)]
use ksvd_streaming::{
    bench_once, in_memory_estimate, measure_pipeline, run_pipeline, write_synthetic, Bandwidth, BenchOutcome,
    BenchParams, LibsvmSource, Method, PipelineParams, RowSelection, ScalingMethod, StreamingParams, SyntheticPart,
    SyntheticSpec,
};

fn spec() -> SyntheticSpec {
    SyntheticSpec {
        features: 300,
        nnz_per_row: 10,
        ..SyntheticSpec::default()
    }
}

#[test]
fn synthetic_files_are_reproducible_prefixes() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b, c) = (
        dir.path().join("a.svm"),
        dir.path().join("b.svm"),
        dir.path().join("c.svm"),
    );
    let sa = write_synthetic(&a, &spec(), SyntheticPart::Train, 5000).unwrap();
    write_synthetic(&b, &spec(), SyntheticPart::Train, 20_000).unwrap();
    write_synthetic(&c, &spec(), SyntheticPart::Test, 5000).unwrap();
    let (ta, tb, tc) = (
        std::fs::read_to_string(&a).unwrap(),
        std::fs::read_to_string(&b).unwrap(),
        std::fs::read_to_string(&c).unwrap(),
    );
    assert!(tb.starts_with(&ta), "a file of N rows is the prefix of a longer one");
    assert_ne!(ta, tc, "train and test rows differ");
    assert_eq!(ta.lines().count(), 5000);
    assert_eq!(sa.bytes as usize, ta.len());
    let pos = ta.lines().filter(|l| l.starts_with("+1")).count();
    assert_eq!(pos, sa.positives);
    assert!(pos > 500 && pos < 4500, "both classes present: {pos} positives");
}

#[test]
fn pipeline_learns_the_planted_signal() {
    let dir = tempfile::tempdir().unwrap();
    let (tr, te) = (dir.path().join("train.svm"), dir.path().join("test.svm"));
    write_synthetic(&tr, &spec(), SyntheticPart::Train, 20_000).unwrap();
    write_synthetic(&te, &spec(), SyntheticPart::Test, 5_000).unwrap();
    let params = PipelineParams {
        model: StreamingParams::new(30, 300).chunk_rows(3000).seed(3),
        ridge: 1e-3,
        positive_label: None,
    };
    let train = LibsvmSource::new(&tr).n_features(300);
    let test = LibsvmSource::new(&te);
    for method in [Method::Ksvd, Method::Kpca] {
        let o = run_pipeline(method, &train, &test, &params, &mut |_| {}).unwrap();
        eprintln!(
            "{method:?}: AUROC {:.4}, rank {}, gamma {:.3}",
            o.auroc, o.rank, o.gamma
        );
        assert_eq!((o.train_rows, o.test_rows, o.features), (20_000, 5_000, 300));
        // With 5000 test rows the AUROC of a random scorer has sd ~0.008: 0.6 is far outside.
        assert!(o.auroc > 0.6, "{method:?} AUROC {}", o.auroc);
    }
}

#[test]
fn split_selections_partition_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("d.svm");
    write_synthetic(&p, &spec(), SyntheticPart::Train, 3000).unwrap();
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
}

#[test]
fn the_cell_measures_the_pipelines_outcome() {
    let dir = tempfile::tempdir().unwrap();
    let (tr, te) = (dir.path().join("train.svm"), dir.path().join("test.svm"));
    write_synthetic(&tr, &spec(), SyntheticPart::Train, 3000).unwrap();
    write_synthetic(&te, &spec(), SyntheticPart::Test, 1000).unwrap();
    let params = PipelineParams {
        model: StreamingParams::new(10, 100).chunk_rows(700).seed(4),
        ridge: 1e-3,
        positive_label: None,
    };
    let train = LibsvmSource::new(&tr).n_features(300);
    let test = LibsvmSource::new(&te);
    for method in [Method::Ksvd, Method::Kpca] {
        let direct = run_pipeline(method, &train, &test, &params, &mut |_| {}).unwrap();
        let cell = measure_pipeline(method, &train, &test, &params, &mut |_| {});
        let o = cell.outcome.unwrap();
        // Seeded: the same AUROC, rank and bandwidth to the bit.
        assert_eq!(
            (o.auroc, o.rank, o.gamma, o.train_rows),
            (direct.auroc, direct.rank, direct.gamma, direct.train_rows)
        );
    }
    // A missing file is a measured outcome (an error in the cell), not a panic.
    let absent = LibsvmSource::new(dir.path().join("absent.svm"));
    assert!(measure_pipeline(Method::Ksvd, &absent, &test, &params, &mut |_| {})
        .outcome
        .is_err());
}

fn bench_params() -> BenchParams {
    BenchParams {
        features: 150,
        landmarks: 60,
        components: 8,
        bandwidth: Bandwidth::Median(1.0),
        ridge: 1e-3,
        chunk_rows: 700,
        seed: 1,
        rsvd_oversampling: 10,
        rsvd_power_iters: 2,
    }
}

#[test]
fn the_bench_child_prints_what_bench_once_computes() {
    let dir = tempfile::tempdir().unwrap();
    let small = SyntheticSpec {
        features: 150,
        nnz_per_row: 6,
        ..SyntheticSpec::default()
    };
    let (tr, te) = (dir.path().join("train.svm"), dir.path().join("test.svm"));
    write_synthetic(&tr, &small, SyntheticPart::Train, 2000).unwrap();
    write_synthetic(&te, &small, SyntheticPart::Test, 1000).unwrap();
    let params = bench_params();
    let one_thread = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    for method in [
        ScalingMethod::StreamingNystrom,
        ScalingMethod::Dense,
        ScalingMethod::Rsvd,
    ] {
        let here = one_thread.install(|| bench_once(method, &tr, &te, &params)).unwrap();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_ksvd-stream"))
            .args(["bench", "--method", method.as_str(), "--threads", "1", "--params"])
            .arg(toml::to_string(&params).unwrap())
            .arg("--train")
            .arg(&tr)
            .arg("--test")
            .arg(&te)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let child: BenchOutcome = toml::from_str(&String::from_utf8_lossy(&out.stdout)).unwrap();
        // Same seed, same single thread: the same numbers to the bit.
        assert_eq!(
            (child.auroc, child.rank, child.train_rows),
            (here.auroc, here.rank, here.train_rows),
            "{method:?}"
        );
        assert_eq!(here.train_rows, 2000);
        assert!((0.0..=1.0).contains(&here.auroc));
        assert!(child.peak_rss_bytes.is_none_or(|b| b > 0));
    }
}

#[test]
fn in_memory_estimates_grow_with_n_and_skip_the_streaming_path() {
    let est = |m, n| in_memory_estimate(m, n, 2000, 16, 10_000, 50, 10);
    assert_eq!(est(ScalingMethod::StreamingNystrom, 1_000_000), None);
    for m in [ScalingMethod::Dense, ScalingMethod::Rsvd] {
        let (a, b) = (est(m, 10_000).unwrap(), est(m, 100_000).unwrap());
        assert!(a > 0.0 && b > a, "{m:?}: {a} {b}");
    }
    // Dense stores G and its working copy: at least 2 N M doubles.
    let n = 100_000.0;
    assert!(est(ScalingMethod::Dense, 100_000).unwrap() >= 2.0 * n * 2000.0 * 8.0);
}
