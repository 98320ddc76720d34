//! The loops of the Table 1 and Table 2 baselines (moved here from `ksvd-baselines`, which keeps
//! the methods and one call per cell): configs that deserialize from a spec's `[params]`, one
//! cell per dataset x method x seed with `trials` runs, and tidy result rows.
use ksvd_baselines::{
    run_bicluster_baseline, run_graph_baseline, trial_seed, BaselineError, BiclusterBaseline, BiclusterBaselineConfig,
    Embeddings, GraphBaseline, GraphBaselineConfig, Result,
};
use ksvd_datasets::{DataRoot, DatasetError, DatasetKind, DatasetName, Graph, GraphOptions, SelfLoops};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Instant;

use crate::rows::{Row, Status};

/// A row of the tidy table with this runner's fields set: seed of the cell and the threads
/// available.
fn row(dataset: &str, method: &str, metric: &str, seed: u64, status: Status, note: Option<String>) -> Row {
    let mut row = Row::status(dataset, method, metric, status, note);
    row.seed = Some(seed);
    row.threads = Some(rayon::current_num_threads() as u32);
    row
}

/// Mean and sample standard deviation ([`ksvd_metrics::mean_std`], `n − 1`; `None` for one value).
fn mean_std(values: &[f64]) -> (f64, Option<f64>) {
    match ksvd_metrics::mean_std(values) {
        Some((mean, std)) => (mean, (values.len() > 1).then_some(std)),
        None => (f64::NAN, None),
    }
}

fn dataset_name(name: &str, kind: DatasetKind) -> Result<DatasetName> {
    let parsed: DatasetName = name.parse().map_err(|e: DatasetError| BaselineError::Dataset {
        name: name.to_string(),
        reason: e.to_string(),
    })?;
    if parsed.kind() != kind {
        return Err(BaselineError::Dataset {
            name: name.to_string(),
            reason: format!(
                "is a {} dataset, not a {} dataset",
                parsed.kind().as_str(),
                kind.as_str()
            ),
        });
    }
    Ok(parsed)
}

/// Self-loop policy when loading a graph (mirrors [`ksvd_datasets::SelfLoops`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SelfLoopPolicy {
    /// Keep the self-loops of the files (default).
    #[default]
    AsInFile,
    /// Add a self-loop to every node that lacks one.
    AddMissing,
    /// Drop all self-loops.
    Remove,
}

impl From<SelfLoopPolicy> for SelfLoops {
    fn from(p: SelfLoopPolicy) -> Self {
        match p {
            SelfLoopPolicy::AsInFile => SelfLoops::AsInFile,
            SelfLoopPolicy::AddMissing => SelfLoops::AddMissing,
            SelfLoopPolicy::Remove => SelfLoops::Remove,
        }
    }
}

/// What to run for the Table 1 baselines. A "quick" run is just a smaller config (fewer
/// datasets, seeds, trials, smaller dimensions/epochs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GraphBaselinesConfig {
    /// Graph dataset ids (`cora`, `citeseer`, `pubmed`, `twitch_pt`, `blogcatalog`).
    pub datasets: Vec<String>,
    /// Methods to run (default all three).
    pub methods: Vec<GraphBaseline>,
    /// One cell per seed (default `[0]`).
    pub seeds: Vec<u64>,
    /// Embeddings per cell, trial `t` seeded by [`trial_seed`]`(seed, t)`; metrics are averaged
    /// (default 1).
    pub trials: usize,
    /// Self-loop policy when loading the graphs (default: as in the files).
    pub self_loops: SelfLoopPolicy,
    /// Hyper-parameters of the methods.
    pub params: GraphBaselineConfig,
}

impl Default for GraphBaselinesConfig {
    fn default() -> Self {
        Self {
            datasets: vec!["cora".into()],
            methods: GraphBaseline::ALL.to_vec(),
            seeds: vec![0],
            trials: 1,
            self_loops: SelfLoopPolicy::AsInFile,
            params: GraphBaselineConfig::default(),
        }
    }
}

/// Runs the Table 1 baselines: for every dataset x method x seed, `trials` embeddings, each
/// scored by `evaluate(graph, embeddings, trial_seed)` (the graph-tasks metrics: F1, l1/l2), one
/// row per returned metric with the mean, std and the mean embedding time. Missing dataset files
/// give `missing-data` rows and method or evaluator failures `failed` rows, both with the metric
/// id `embedding` (the metrics are unknown without an evaluation) and the reason in `note`; an
/// invalid config (an unknown dataset, invalid parameters) is an error.
pub fn run_graph_baselines<F>(
    config: &GraphBaselinesConfig,
    root: &DataRoot,
    progress: &mut dyn FnMut(&str),
    mut evaluate: F,
) -> Result<Vec<Row>>
where
    F: FnMut(&Graph, &Embeddings, u64) -> std::result::Result<Vec<(String, f64)>, String>,
{
    let p = &config.params;
    p.deepwalk.check()?;
    p.hope.check()?;
    p.digae.check()?;
    if config.trials == 0 {
        return Err(BaselineError::InvalidParameter {
            name: "trials",
            value: "0".into(),
            expected: "at least 1",
        });
    }
    let names = config
        .datasets
        .iter()
        .map(|d| dataset_name(d, DatasetKind::Graph))
        .collect::<Result<Vec<_>>>()?;
    let mut rows = Vec::new();
    for (id, name) in config.datasets.iter().zip(names) {
        progress(&format!("loading {id}"));
        let graph = match root.graph(name, &GraphOptions::default().self_loops(config.self_loops.into())) {
            Ok(g) => g,
            Err(e) => {
                let status = if matches!(e, DatasetError::MissingFile { .. }) {
                    Status::MissingData
                } else {
                    Status::Failed
                };
                for method in &config.methods {
                    for &seed in &config.seeds {
                        rows.push(row(id, method.id(), "embedding", seed, status, Some(e.to_string())));
                    }
                }
                continue;
            }
        };
        for &method in &config.methods {
            for &seed in &config.seeds {
                let mut per_metric: BTreeMap<String, Vec<f64>> = BTreeMap::new();
                let mut seconds = Vec::new();
                let mut failure = None;
                for t in 0..config.trials {
                    let s = trial_seed(seed, t);
                    progress(&format!(
                        "{} on {id}, seed {seed}, trial {}/{}",
                        method.id(),
                        t + 1,
                        config.trials
                    ));
                    let start = Instant::now();
                    let emb = match run_graph_baseline(method, &graph, p, s) {
                        Ok(e) => e,
                        Err(e) => {
                            failure = Some(e.to_string());
                            break;
                        }
                    };
                    seconds.push(start.elapsed().as_secs_f64());
                    match evaluate(&graph, &emb, s) {
                        Ok(metrics) => {
                            for (m, v) in metrics {
                                per_metric.entry(m).or_default().push(v);
                            }
                        }
                        Err(e) => {
                            failure = Some(format!("evaluation failed: {e}"));
                            break;
                        }
                    }
                }
                if let Some(note) = failure {
                    rows.push(row(id, method.id(), "embedding", seed, Status::Failed, Some(note)));
                    continue;
                }
                let (secs, _) = mean_std(&seconds);
                for (metric, values) in per_metric {
                    let (mean, std) = mean_std(&values);
                    let mut r = row(id, method.id(), &metric, seed, Status::Ok, None);
                    r.value = Some(mean);
                    r.std = std;
                    r.trials = Some(values.len() as u32);
                    r.seconds = Some(secs);
                    rows.push(r);
                }
            }
        }
    }
    Ok(rows)
}

/// What to run for the Table 2 baselines.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BiclusterBaselinesConfig {
    /// Document-term dataset ids (`acm`, `dblp`, `bcot_pubmed`, `wiki`).
    pub datasets: Vec<String>,
    /// Methods to run (default both).
    pub methods: Vec<BiclusterBaseline>,
    /// One cell per seed (default `[0]`).
    pub seeds: Vec<u64>,
    /// Runs per cell, trial `t` seeded by [`trial_seed`]`(seed, t)`; NMI and coherence are
    /// averaged (default 1).
    pub trials: usize,
    /// Document clusters per dataset id; missing ids use the dataset's number of label classes.
    pub doc_clusters: BTreeMap<String, usize>,
    /// Term clusters per dataset id (a protocol value: the paper's counts are in `experiments/table2.toml`); a
    /// dataset without an entry is a configuration error.
    pub term_clusters: BTreeMap<String, usize>,
    /// Hyper-parameters of the methods.
    pub params: BiclusterBaselineConfig,
}

impl Default for BiclusterBaselinesConfig {
    fn default() -> Self {
        Self {
            datasets: vec!["acm".into(), "dblp".into(), "bcot_pubmed".into(), "wiki".into()],
            methods: BiclusterBaseline::ALL.to_vec(),
            seeds: vec![0],
            trials: 1,
            doc_clusters: BTreeMap::new(),
            term_clusters: BTreeMap::new(),
            params: BiclusterBaselineConfig::default(),
        }
    }
}

/// Runs the Table 2 baselines: for every dataset x method x seed, documents are scored by NMI
/// against the labels ([`ksvd_bicluster::nmi`]) and terms by BCOT's PMI coherence
/// ([`ksvd_bicluster::coherence`] on the documents x terms matrix). Rows `nmi` and `coherence`
/// carry the mean (and std) over `trials` and the mean biclustering time. Missing dataset files
/// give `missing-data` rows, failures `failed` rows; an invalid config is an error.
pub fn run_bicluster_baselines(
    config: &BiclusterBaselinesConfig,
    root: &DataRoot,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<Row>> {
    let p = &config.params;
    p.bcot.check()?;
    p.ebc.check()?;
    if config.trials == 0 {
        return Err(BaselineError::InvalidParameter {
            name: "trials",
            value: "0".into(),
            expected: "at least 1",
        });
    }
    let names = config
        .datasets
        .iter()
        .map(|d| dataset_name(d, DatasetKind::DocumentTerm))
        .collect::<Result<Vec<_>>>()?;
    let mut rows = Vec::new();
    let metrics = ["nmi", "coherence"];
    for (id, name) in config.datasets.iter().zip(names) {
        progress(&format!("loading {id}"));
        let data = match root.document_term(name) {
            Ok(d) => d,
            Err(e) => {
                let status = if matches!(e, DatasetError::MissingFile { .. }) {
                    Status::MissingData
                } else {
                    Status::Failed
                };
                for method in &config.methods {
                    for &seed in &config.seeds {
                        for metric in metrics {
                            rows.push(row(id, method.id(), metric, seed, status, Some(e.to_string())));
                        }
                    }
                }
                continue;
            }
        };
        let k_docs = config.doc_clusters.get(id).copied().unwrap_or(data.n_clusters);
        let k_terms = match config.term_clusters.get(id).copied() {
            Some(k) => k,
            None => {
                return Err(BaselineError::Dataset {
                    name: id.clone(),
                    reason: "no term-cluster count known; set term_clusters for it".into(),
                })
            }
        };
        for &method in &config.methods {
            for &seed in &config.seeds {
                // Per metric: the values of the trials, or the first error.
                let mut values: [std::result::Result<Vec<f64>, String>; 2] = [Ok(Vec::new()), Ok(Vec::new())];
                let mut seconds = Vec::new();
                for t in 0..config.trials {
                    let s = trial_seed(seed, t);
                    progress(&format!(
                        "{} on {id}, seed {seed}, trial {}/{}",
                        method.id(),
                        t + 1,
                        config.trials
                    ));
                    let start = Instant::now();
                    let b = match run_bicluster_baseline(method, &data, k_docs, k_terms, p, s) {
                        Ok(b) => b,
                        Err(e) => {
                            values = [Err(e.to_string()), Err(e.to_string())];
                            break;
                        }
                    };
                    seconds.push(start.elapsed().as_secs_f64());
                    let scores = [
                        ksvd_bicluster::nmi(&data.labels, &b.doc_labels).map_err(|e| e.to_string()),
                        ksvd_bicluster::coherence(&data.matrix, &b.term_labels)
                            .map(|c| c.score)
                            .map_err(|e| e.to_string()),
                    ];
                    for (slot, score) in values.iter_mut().zip(scores) {
                        if let Ok(list) = slot {
                            match score {
                                Ok(v) => list.push(v),
                                Err(e) => *slot = Err(e),
                            }
                        }
                    }
                }
                let secs = (!seconds.is_empty()).then(|| mean_std(&seconds).0);
                let clusters = format!("k_docs = {k_docs}, k_terms = {k_terms}");
                for (metric, vals) in metrics.iter().zip(&values) {
                    let row = match vals {
                        Err(note) => {
                            let mut r = row(id, method.id(), metric, seed, Status::Failed, None);
                            r.note = Some(format!("{note} ({clusters})"));
                            r
                        }
                        Ok(vals) => {
                            let (mean, std) = mean_std(vals);
                            let mut r = row(id, method.id(), metric, seed, Status::Ok, Some(clusters.clone()));
                            r.value = Some(mean);
                            r.std = std;
                            r.trials = Some(vals.len() as u32);
                            r.seconds = secs;
                            r
                        }
                    };
                    rows.push(row);
                }
            }
        }
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    //! The loops end to end on the committed data: configs deserialize from spec-style TOML, rows are
    //! tidy, missing data becomes `missing-data` rows.
    #![allow(clippy::unwrap_used)] // Test helpers panic on failure by design.
    use super::*;
    use ksvd_baselines::{CostScale, GraphView, HopeSolver};

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
                    assert_eq!(row.status, Status::Ok, "{row:?}");
                    let v = row.value.unwrap();
                    if row.metric == "nmi" {
                        assert!((0.0..=1.0).contains(&v));
                    } else {
                        assert!(v.is_finite());
                    }
                    assert_eq!(row.trials, Some(1));
                    assert!(row.seconds.unwrap() >= 0.0);
                }
                _ => assert_eq!(row.status, Status::MissingData, "{row:?}"),
            }
        }
        // Without a term-cluster count the run is a configuration error that says what to set.
        let unset = BiclusterBaselinesConfig {
            datasets: vec!["dblp".into()],
            methods: vec![BiclusterBaseline::Ebc],
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
            let f = emb.features().into_owned();
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
            .all(|r| r.status == Status::Ok && r.trials == Some(2) && r.std == Some(0.0)));
    }
}
