//! The runner entry points: configs deserialize from spec-style TOML, and a quick config runs end
//! to end on the committed data with tidy rows (missing data becomes `missing-data` rows).
#![allow(clippy::unwrap_used)] // Test helpers panic on failure by design.
use ksvd_baselines::{
    run_bicluster_baselines, run_graph_baselines, BiclusterBaseline, BiclusterBaselinesConfig, CostScale, Embeddings,
    GraphBaseline, GraphBaselinesConfig, GraphView, HopeSolver, RowStatus,
};
use ksvd_datasets::DataRoot;

#[test]
fn configs_deserialize_from_toml_with_defaults_for_missing_fields() {
    let graph: GraphBaselinesConfig = toml::from_str(
        r#"
        datasets = ["cora", "pubmed"]
        methods = ["deepwalk", "hope"]
        seeds = [0, 1]
        self_loops = "add-missing"
        [params.deepwalk]
        dimension = 1000
        view = "directed"
        [params.hope]
        rank = 500
        solver = "lanczos"
        [params.digae]
        features = { gaussian = { dimension = 64 } }
        "#,
    )
    .unwrap();
    assert_eq!(graph.methods, vec![GraphBaseline::Deepwalk, GraphBaseline::Hope]);
    assert_eq!(graph.params.deepwalk.dimension, 1000);
    assert_eq!(graph.params.deepwalk.view, GraphView::Directed);
    assert_eq!(
        graph.params.deepwalk.walk_length, 80,
        "unset fields keep their defaults"
    );
    assert_eq!(graph.params.hope.solver, HopeSolver::Lanczos);
    assert_eq!(graph.trials, 1);

    let bic: BiclusterBaselinesConfig = toml::from_str(
        r#"
        datasets = ["dblp"]
        methods = ["ebc"]
        doc_clusters = { dblp = 4 }
        [params.bcot]
        reg = 0.01
        cost_scale = "rows"
        [params.ebc]
        restarts = 3
        "#,
    )
    .unwrap();
    assert_eq!(bic.methods, vec![BiclusterBaseline::Ebc]);
    assert_eq!(bic.params.bcot.cost_scale, CostScale::Rows);
    assert_eq!(bic.params.ebc.restarts, 3);
    assert_eq!(bic.params.ebc.tolerance, 1e-4);

    // Typos are errors, not silently ignored settings.
    assert!(toml::from_str::<BiclusterBaselinesConfig>("[params.ebc]\nrestart = 3").is_err());
}

#[test]
fn bicluster_runner_scores_dblp_and_reports_missing_data() {
    let root = DataRoot::committed().unwrap();
    let config = BiclusterBaselinesConfig {
        datasets: vec!["dblp".into(), "bcot_pubmed".into()],
        term_clusters: [("dblp".to_string(), 2), ("bcot_pubmed".to_string(), 3)].into(),
        ..Default::default()
    };
    let mut messages = Vec::new();
    let rows = run_bicluster_baselines(&config, &root, &mut |m: &str| messages.push(m.to_string())).unwrap();
    assert!(!messages.is_empty());
    // 2 datasets x 2 methods x 1 seed x 2 metrics.
    assert_eq!(rows.len(), 8);
    for row in &rows {
        match row.dataset.as_str() {
            "dblp" => {
                assert_eq!(row.status, RowStatus::Ok, "{row:?}");
                let v = row.value.unwrap();
                if row.metric == "nmi" {
                    assert!((0.0..=1.0).contains(&v));
                } else {
                    assert!(v.is_finite());
                }
                assert_eq!(row.trials, Some(1));
                assert!(row.seconds.unwrap() >= 0.0);
            }
            _ => assert_eq!(row.status, RowStatus::MissingData, "{row:?}"),
        }
    }
    // Without a term-cluster count the run is a configuration error that says what to set.
    let unset = BiclusterBaselinesConfig {
        datasets: vec!["dblp".into()],
        methods: vec![ksvd_baselines::BiclusterBaseline::Ebc],
        ..Default::default()
    };
    let err = run_bicluster_baselines(&unset, &root, &mut |_| {}).unwrap_err();
    assert!(err.to_string().contains("term_clusters"), "{err}");
    // Unknown or wrong-kind dataset names are configuration errors.
    let bad = BiclusterBaselinesConfig {
        datasets: vec!["cora".into()],
        ..Default::default()
    };
    assert!(run_bicluster_baselines(&bad, &root, &mut |_| {}).is_err());
}

#[test]
fn graph_runner_embeds_cora_and_reports_evaluator_metrics() {
    let root = DataRoot::committed().unwrap();
    let mut config = GraphBaselinesConfig {
        trials: 2,
        ..Default::default()
    };
    config.params.deepwalk.dimension = 8;
    config.params.deepwalk.walks_per_node = 1;
    config.params.deepwalk.walk_length = 10;
    config.params.hope.rank = 4;
    config.params.digae.epochs = 3;
    let rows = run_graph_baselines(&config, &root, &mut |_| {}, |graph, emb: &Embeddings, _seed| {
        let f = emb.concatenated();
        if f.nrows() != graph.n_nodes() {
            return Err("wrong number of rows".into());
        }
        Ok(vec![("dimension".to_string(), f.ncols() as f64)])
    })
    .unwrap();
    let dims: Vec<(String, f64)> = rows.iter().map(|r| (r.method.clone(), r.value.unwrap())).collect();
    assert_eq!(
        dims,
        vec![
            ("deepwalk".to_string(), 8.0),
            ("hope".to_string(), 8.0),
            ("digae".to_string(), 64.0)
        ]
    );
    assert!(rows
        .iter()
        .all(|r| r.status == RowStatus::Ok && r.trials == Some(2) && r.std == Some(0.0)));
}
