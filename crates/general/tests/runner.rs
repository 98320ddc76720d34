//! The runner entry points on the committed data: configs parse from the experiment specs, rows
//! are tidy and deterministic, failures become rows.
use ksvd_datasets::DataRoot;
use ksvd_general::{run_ablation, run_table3, summarize, AblationConfig, RowStatus, Table3Config, Table3Method};

fn params_of(spec: &str) -> toml::Value {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../experiments")
        .join(spec);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let doc: toml::Table = toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    doc["params"].clone()
}

#[test]
fn configs_deserialise_from_the_experiment_specs() {
    let t3: Table3Config = params_of("table3.toml").try_into().unwrap();
    assert_eq!(
        (t3.components, t3.iterations, t3.test_fraction, t3.standardize),
        (4, 2000, 0.2, true)
    );
    assert_eq!(t3.gamma2["sne"]["liver"], 1e4);
    assert_eq!(t3.learning_rate["cholesterol"], 1e-1);
    assert_eq!(t3.batch_size.get("protein"), Some(&500));
    // The spec writes out the recommended protocol: it is exactly the crate's full config.
    assert_eq!(t3, Table3Config::full());
    assert_eq!(t3.methods.len(), 10);
    let ab: AblationConfig = params_of("ablation.toml").try_into().unwrap();
    assert_eq!((ab.degree, ab.components), (2, 4));
    assert_eq!(ab, AblationConfig::full());
    // Unknown keys are rejected.
    let bad: Result<Table3Config, _> = toml::from_str::<toml::Value>("itertions = 5").unwrap().try_into();
    assert!(bad.is_err());
    // The literal reading differs only in the five open choices.
    let lit = Table3Config::literal();
    assert_eq!(
        (
            lit.standardize,
            lit.standardize_features,
            lit.standardize_target,
            lit.bandwidth,
            lit.head_init
        ),
        (
            false,
            false,
            false,
            ksvd_general::BandwidthRule::Paper,
            ksvd_general::HeadInit::Pytorch
        )
    );
    assert_eq!(t3.head_init, ksvd_general::HeadInit::Zero);
}

#[test]
fn method_ids_round_trip() {
    let all = Table3Method::all();
    assert_eq!(all.len(), 10);
    for m in &all {
        assert_eq!(Table3Method::parse(&m.id()).unwrap(), *m);
    }
    assert_eq!(all[0].label(), "KPCA (RBF)");
    assert_eq!(all[9].id(), "ksvd_sne_a3");
    assert_eq!(all[9].label(), "KSVD (SNE) a3");
    assert!(Table3Method::parse("ksvd_rbf_a4").is_err());
}

fn small_table3() -> Table3Config {
    Table3Config {
        datasets: vec!["yacht".into(), "liver".into()],
        methods: vec![
            "kpca_rbf".into(),
            "kpca_rbf_c".into(),
            "ksvd_rbf_a1".into(),
            "ksvd_sne_a3".into(),
        ],
        seeds: vec![0, 1],
        iterations: 30,
        standardize: true,
        bandwidth: ksvd_general::BandwidthRule::Median,
        ..Table3Config::quick()
    }
}

#[test]
fn table3_rows_are_tidy_and_deterministic() {
    let root = DataRoot::committed().unwrap();
    let cfg = small_table3();
    let mut calls = 0;
    let rows = run_table3(&cfg, &root, &mut |p| {
        assert!(p.done < p.total);
        calls += 1;
    })
    .unwrap();
    assert_eq!(calls, 2 * 2 * 4);
    // yacht: rmse; liver: acc + auroc; per seed and method.
    assert_eq!(rows.len(), 2 * 4 + 2 * 4 * 2);
    for r in &rows {
        assert_eq!(r.status, RowStatus::Ok, "{r:?}");
        let v = r.value.unwrap();
        assert!(v.is_finite() && v >= 0.0);
        if r.metric != "rmse" {
            assert!(v <= 1.0);
        }
        assert!(r.seed.is_some() && r.trials == 1);
    }
    let again = run_table3(&cfg, &root, &mut |_| {}).unwrap();
    let values = |rs: &[ksvd_general::ResultRow]| rs.iter().map(|r| r.value).collect::<Vec<_>>();
    assert_eq!(values(&rows), values(&again));
    let s = summarize(&rows);
    assert_eq!(s.len(), 4 + 4 * 2);
    assert!(s.iter().all(|r| r.seed.is_none() && r.trials == 2 && r.std.is_some()));
}

#[test]
fn ablation_rows() {
    let root = DataRoot::committed().unwrap();
    let cfg = AblationConfig {
        datasets: vec!["diabetes".into()],
        seeds: vec![3],
        iterations: 20,
        ..AblationConfig::quick()
    };
    let rows = run_ablation(&cfg, &root, &mut |_| {}).unwrap();
    let keys: Vec<(String, String)> = rows.iter().map(|r| (r.method.clone(), r.metric.clone())).collect();
    assert_eq!(
        keys,
        [
            ("nonlinear_svd", "acc"),
            ("nonlinear_svd", "auroc"),
            ("ksvd", "acc"),
            ("ksvd", "auroc")
        ]
        .map(|(a, b)| (a.to_string(), b.to_string()))
    );
    assert!(rows.iter().all(|r| r.status == RowStatus::Ok));
}

#[test]
fn missing_files_and_bad_configs() {
    let root = DataRoot::shared("/nonexistent/ksvd-general-data");
    let cfg = Table3Config {
        datasets: vec!["yacht".into()],
        methods: vec!["kpca_rbf".into()],
        seeds: vec![0],
        ..Table3Config::quick()
    };
    let rows = run_table3(&cfg, &root, &mut |_| {}).unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].status, RowStatus::MissingData);
    assert!(rows[0].value.is_none() && rows[0].note.is_some());
    let bad = Table3Config {
        datasets: vec!["iris".into()],
        ..Table3Config::quick()
    };
    assert!(run_table3(&bad, &root, &mut |_| {}).is_err());
    let bad = Table3Config {
        components: 0,
        ..Table3Config::quick()
    };
    assert!(run_table3(&bad, &root, &mut |_| {}).is_err());
}

/// Label encoding on the committed data: class 1 is the positive class of each binary dataset
/// (diabetes `tested_positive`, ionosphere `g`ood, liver "liver patient", selector 1), with the
/// UCI counts, and a split keeps every row's label.
#[test]
fn binary_labels_are_the_uci_positive_classes() {
    use ksvd_datasets::{DatasetName, Task};
    use ksvd_general::{prepare, Preprocessing};
    let root = DataRoot::committed().unwrap();
    for (name, positive, n_pos, n) in [
        ("diabetes", "tested_positive", 268, 768),
        ("ionosphere", "good", 225, 351),
        ("liver", "liver patient (selector 1)", 416, 583),
    ] {
        let data = root.tabular(name.parse::<DatasetName>().unwrap()).unwrap();
        let Task::Classification { class_names } = &data.task else {
            panic!("{name} is a classification set")
        };
        assert_eq!(class_names[1], positive, "{name}");
        assert_eq!(data.target.len(), n, "{name}");
        assert_eq!(data.target.iter().filter(|&&t| t == 1.0).count(), n_pos, "{name}");
        assert!(data.target.iter().all(|&t| t == 0.0 || t == 1.0));
        let p = prepare(&data, &Preprocessing::default(), 0).unwrap();
        for (rows, y) in [(&p.train_rows, &p.y_train), (&p.test_rows, &p.y_test)] {
            assert!(rows.iter().zip(y).all(|(&r, &t)| data.target[r] == t));
        }
    }
}
