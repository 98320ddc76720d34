//! The extra settings of Table 1 on the committed Cora: `arcs=reversed` and
//! `features=unstandardized`.
use ksvd_datasets::DataRoot;
use ksvd_graph_tasks::{run_table1, EvalConfig, GraphTransform, Method, ResultRow, RowStatus, SvdSolver, Table1Config};

fn config() -> Table1Config {
    Table1Config {
        datasets: vec!["cora".into()],
        methods: vec![Method::Svd],
        components: 16,
        graph_input: GraphTransform::Raw,
        solver: SvdSolver::Lanczos {
            tol: 1e-12,
            max_restarts: 200,
        },
        eval: EvalConfig {
            trials: 2,
            cv_folds: 2,
            extra_distances: vec![],
            ..EvalConfig::default()
        },
        overrides: Default::default(),
        ..Table1Config::default()
    }
}

fn value(rows: &[ResultRow], metric: &str, setting: &str) -> f64 {
    let row = rows
        .iter()
        .find(|r| r.metric == metric && r.setting == setting)
        .unwrap_or_else(|| panic!("no row {metric} / {setting:?}"));
    assert_eq!(row.status, RowStatus::Ok, "{row:?}");
    row.value.unwrap()
}

/// SVD of `Aᵀ` is the SVD of `A` with the sides swapped (`Aᵀ = V Σ Uᵀ`), so with the raw input
/// the node features of the reversed graph are a column permutation (up to signs) of the
/// original ones; the standardised linear LS-SVM is invariant to both, so the F1 scores agree
/// (up to decisions that flip on near-ties: at most a couple of the ~1085 test nodes).
/// `features=unstandardized` rows equal a separate run with standardisation off.
#[test]
fn reversed_and_unstandardized_settings() {
    let root = DataRoot::committed().unwrap();
    let mut c = config();
    c.also_reversed = vec!["cora".into()];
    c.eval.also_unstandardized = true;
    let rows = run_table1(&c, &root, |_| {}).unwrap();
    let settings: std::collections::BTreeSet<&str> = rows.iter().map(|r| r.setting.as_str()).collect();
    let want = [
        "",
        "features=unstandardized",
        "arcs=reversed",
        "arcs=reversed; features=unstandardized",
    ];
    assert_eq!(settings, want.into_iter().collect(), "{settings:?}");
    // Reconstruction is reported once per graph, not per classifier setting.
    assert!(!rows.iter().any(|r| r.metric == "l1" && r.setting.contains("features=")));

    let one_node = 1.0 / 1000.0;
    for metric in ["micro_f1", "macro_f1"] {
        let (a, b) = (value(&rows, metric, ""), value(&rows, metric, "arcs=reversed"));
        assert!((a - b).abs() <= 2.5 * one_node, "{metric}: {a} vs reversed {b}");
    }
    // The reversed graph's reconstruction targets Aᵀ: Cora's largest in-degree (166) becomes an
    // out-degree, so the two graphs' reconstruction errors differ.
    assert_ne!(value(&rows, "l1", ""), value(&rows, "l1", "arcs=reversed"));

    let mut raw = config();
    raw.eval.standardize_features = false;
    let raw_rows = run_table1(&raw, &root, |_| {}).unwrap();
    for metric in ["micro_f1", "macro_f1"] {
        assert_eq!(
            value(&rows, metric, "features=unstandardized"),
            value(&raw_rows, metric, ""),
            "{metric}"
        );
    }
}

/// A dataset to reverse that is not a dataset is a config error, not a silent no-op.
#[test]
fn unknown_reversed_dataset_is_rejected() {
    let root = DataRoot::committed().unwrap();
    let mut c = config();
    c.also_reversed = vec!["koala".into()];
    assert!(run_table1(&c, &root, |_| {}).is_err());
}
