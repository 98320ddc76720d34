//! End-to-end: the pipeline on synthetic files, the runner's rows (stand-in, user file, missing
//! file), and the scaling benchmark in process and through the `ksvd-stream` child.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use ksvd_datasets::DataRoot;
use ksvd_streaming::{
    run_large_scale, run_pipeline, run_scaling, write_synthetic, Isolation, LargeScaleConfig, LibsvmSource, Method,
    PipelineParams, RowSelection, ScalingConfig, ScalingMethod, Status, StreamingParams, SyntheticPart, SyntheticSpec,
    UserDataset,
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
fn runner_reports_missing_files_and_runs_user_files() {
    let dir = tempfile::tempdir().unwrap();
    let root = DataRoot::shared(dir.path());
    write_synthetic(&dir.path().join("mine.svm"), &spec(), SyntheticPart::Train, 4000).unwrap();
    let cfg = LargeScaleConfig {
        stand_ins: vec![],
        datasets: vec![
            UserDataset {
                name: "criteo_kaggle".into(),
                train_path: "external/criteo/absent.svm".into(),
                test_path: None,
                n_features: Some(1_000_000),
                positive_label: None,
                origin: "the LIBSVM binary datasets page".into(),
            },
            UserDataset {
                name: "mine".into(),
                train_path: "mine.svm".into(),
                test_path: None,
                n_features: Some(300),
                positive_label: Some(1.0),
                origin: String::new(),
            },
        ],
        landmarks: 100,
        components: 10,
        ..LargeScaleConfig::default()
    };
    let mut cells = Vec::new();
    let rows = run_large_scale(&cfg, &root, &mut |p| cells.push(p.done)).unwrap();
    let missing: Vec<_> = rows.iter().filter(|r| r.dataset == "criteo_kaggle").collect();
    assert_eq!(missing.len(), 3, "data + kpca + ksvd");
    for r in &missing {
        assert_eq!(r.status, Status::MissingData);
        let note = r.note.as_deref().unwrap();
        assert!(note.contains("absent.svm") && note.contains("LIBSVM"), "{note}");
    }
    let ok: Vec<_> = rows.iter().filter(|r| r.dataset == "mine").collect();
    assert!(ok.iter().all(|r| r.status == Status::Ok), "{ok:#?}");
    for m in ["kpca", "ksvd"] {
        let auc = ok.iter().find(|r| r.method == m && r.metric == "auroc").unwrap();
        assert!(auc.value.unwrap() > 0.5);
        assert!(ok.iter().any(|r| r.method == m && r.metric == "peak_rss_mib"));
    }
    let n = ok.iter().find(|r| r.metric == "n_samples").unwrap().value.unwrap();
    assert!(n > 2800.0 && n < 3600.0, "about 80% of 4000 rows train: {n}");
    assert_eq!(cells.iter().copied().max(), Some(4));
}

#[test]
fn runner_on_the_a9a_stand_in() {
    let root = DataRoot::committed().unwrap();
    let cfg = LargeScaleConfig {
        max_train_rows: Some(8000),
        max_test_rows: Some(4000),
        ..LargeScaleConfig::quick()
    };
    let rows = run_large_scale(&cfg, &root, &mut |_| {}).unwrap();
    for r in &rows {
        assert_eq!(r.status, Status::Ok, "{r:?}");
    }
    let value = |m: &str, metric: &str| {
        rows.iter()
            .find(|r| r.method == m && r.metric == metric)
            .unwrap()
            .value
            .unwrap()
    };
    assert_eq!(value("data", "n_samples"), 8000.0);
    assert_eq!(value("data", "n_features"), 123.0);
    for m in ["kpca", "ksvd"] {
        let a = value(m, "auroc");
        eprintln!("a9a (8000 rows) {m}: AUROC {a:.4}");
        assert!(a > 0.6 && a <= 1.0, "{m}: {a}");
    }
}

fn tiny_scaling() -> ScalingConfig {
    ScalingConfig {
        sizes: vec![1500, 3000],
        test_rows: 1000,
        synthetic: SyntheticSpec {
            features: 150,
            nnz_per_row: 6,
            ..SyntheticSpec::default()
        },
        landmarks: 60,
        components: 8,
        chunk_rows: 700,
        isolation: Isolation::InProcess,
        ..ScalingConfig::default()
    }
}

#[test]
fn scaling_in_process_and_budget_skips() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = ScalingConfig {
        scratch_dir: Some(dir.path().to_path_buf()),
        ..tiny_scaling()
    };
    let rows = run_scaling(&cfg, &mut |_| {}).unwrap();
    for method in [
        ScalingMethod::StreamingNystrom,
        ScalingMethod::Dense,
        ScalingMethod::Rsvd,
    ] {
        for n in [1500, 3000] {
            let r: Vec<_> = rows
                .iter()
                .filter(|r| r.method == method.as_str() && r.setting == format!("n={n}"))
                .collect();
            assert!(r.iter().all(|r| r.status == Status::Ok), "{r:#?}");
            let secs = r.iter().find(|r| r.metric == "seconds").unwrap();
            assert!(secs.value.unwrap() > 0.0);
            let auc = r.iter().find(|r| r.metric == "auroc").unwrap().value.unwrap();
            assert!((0.0..=1.0).contains(&auc));
        }
    }
    assert!(rows.iter().any(|r| r.method == "generator"));
    // A tiny budget skips the in-memory paths with a reason; the files are reused.
    let small = ScalingConfig {
        in_memory_budget_mib: 1e-3,
        methods: vec![ScalingMethod::Dense],
        sizes: vec![1500],
        ..cfg
    };
    let rows = run_scaling(&small, &mut |_| {}).unwrap();
    assert!(rows.iter().all(|r| r.method != "generator"), "files are reused");
    assert!(rows
        .iter()
        .all(|r| r.status == Status::NotRun && r.note.as_deref().unwrap().contains("budget")));
}

#[test]
fn scaling_through_the_child_binary() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = ScalingConfig {
        scratch_dir: Some(dir.path().to_path_buf()),
        sizes: vec![2000],
        methods: vec![ScalingMethod::StreamingNystrom, ScalingMethod::Rsvd],
        isolation: Isolation::ChildProcess,
        binary: Some(env!("CARGO_BIN_EXE_ksvd-stream").into()),
        threads: Some(1),
        keep_files: false,
        ..tiny_scaling()
    };
    let rows = run_scaling(&cfg, &mut |_| {}).unwrap();
    let peaks: Vec<f64> = rows
        .iter()
        .filter(|r| r.metric == "peak_rss_mib")
        .map(|r| r.value.unwrap())
        .collect();
    assert_eq!(peaks.len(), 2, "{rows:#?}");
    assert!(peaks.iter().all(|&p| p > 1.0 && p < 2048.0));
    assert!(rows
        .iter()
        .filter(|r| r.metric == "seconds" && r.method != "generator")
        .all(|r| r.threads == Some(1)));
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "keep_files = false removes the files"
    );
}

#[test]
fn configs_deserialize_from_partial_toml() {
    let cfg: LargeScaleConfig = toml::from_str(
        "landmarks = 200\nbandwidth = { median = 1.5 }\nmethods = [\"ksvd\"]\nseeds = [0, 1]\n\
         [[datasets]]\nname = \"avazu\"\ntrain_path = \"external/avazu/avazu-app.bz2\"\nn_features = 1000000\n",
    )
    .unwrap();
    assert_eq!(cfg.landmarks, 200);
    assert_eq!(cfg.bandwidth, ksvd_streaming::Bandwidth::Median(1.5));
    assert_eq!(cfg.methods, vec![Method::Ksvd]);
    assert_eq!(cfg.datasets.len(), 1);
    assert_eq!(
        cfg.stand_ins,
        LargeScaleConfig::default().stand_ins,
        "unset fields keep their defaults"
    );
    assert!(
        toml::from_str::<LargeScaleConfig>("landmark = 3").is_err(),
        "unknown fields are rejected"
    );
    let sc: ScalingConfig = toml::from_str(
        "sizes = [10000]\nmethods = [\"streaming-nystrom\"]\nisolation = \"in-process\"\n[synthetic]\nfeatures = 500\n",
    )
    .unwrap();
    assert_eq!(sc.synthetic.features, 500);
    assert_eq!(sc.synthetic.nnz_per_row, SyntheticSpec::default().nnz_per_row);
    assert_eq!(sc.isolation, Isolation::InProcess);
}
