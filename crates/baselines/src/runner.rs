//! Runner-friendly entry points: one call per (method, dataset, seed), config structs that
//! deserialize from an experiment spec's `[params]`, and tidy result rows.
use crate::bcot::{BcotParams, Biclusters};
use crate::deepwalk::DeepWalkParams;
use crate::digae::DigaeParams;
use crate::ebc::EbcParams;
use crate::error::{BaselineError, Result};
use crate::hope::HopeParams;
use crate::util::stream_seed;
use ksvd_datasets::{
    DataRoot, DatasetError, DatasetKind, DatasetName, DocumentTermData, Graph, GraphOptions, SelfLoops,
};
use ndarray::{concatenate, Array2, Axis};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Instant;

/// A node-embedding baseline of the paper's Table 1. Serialized as its method id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GraphBaseline {
    /// DeepWalk (one embedding), method id `deepwalk`.
    Deepwalk,
    /// HOPE with the Katz proximity (source and target embeddings), method id `hope`.
    Hope,
    /// DiGAE (source and target embeddings), method id `digae`.
    Digae,
}

impl GraphBaseline {
    /// Every graph baseline.
    pub const ALL: [GraphBaseline; 3] = [Self::Deepwalk, Self::Hope, Self::Digae];

    /// The method id used in experiment specs (`deepwalk`, `hope`, `digae`).
    pub fn id(self) -> &'static str {
        match self {
            Self::Deepwalk => "deepwalk",
            Self::Hope => "hope",
            Self::Digae => "digae",
        }
    }
}

/// A biclustering baseline of the paper's Table 2. Serialized as its method id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BiclusterBaseline {
    /// BCOT (entropic optimal transport), method id `bcot`.
    Bcot,
    /// EBC's information-theoretic co-clustering, method id `ebc`.
    Ebc,
}

impl BiclusterBaseline {
    /// Every biclustering baseline.
    pub const ALL: [BiclusterBaseline; 2] = [Self::Bcot, Self::Ebc];

    /// The method id used in experiment specs (`bcot`, `ebc`).
    pub fn id(self) -> &'static str {
        match self {
            Self::Bcot => "bcot",
            Self::Ebc => "ebc",
        }
    }
}

/// Node embeddings of a graph baseline: one matrix (DeepWalk) or a source/target pair (HOPE,
/// DiGAE). Rows index nodes in the order of the adjacency matrix.
#[derive(Debug, Clone, PartialEq)]
pub enum Embeddings {
    /// One `n x d` embedding.
    Single(Array2<f64>),
    /// Source (out-role) and target (in-role) embeddings, each `n x d`.
    SourceTarget {
        /// `n x d` source embeddings.
        source: Array2<f64>,
        /// `n x d` target embeddings.
        target: Array2<f64>,
    },
}

impl Embeddings {
    /// Number of nodes.
    pub fn n_nodes(&self) -> usize {
        match self {
            Self::Single(e) => e.nrows(),
            Self::SourceTarget { source, .. } => source.nrows(),
        }
    }

    /// The features the paper's tasks use: the single embedding, or `[source, target]`
    /// concatenated column-wise (section 5.1: "two sets of embeddings are obtained and then
    /// concatenated").
    pub fn concatenated(&self) -> Array2<f64> {
        match self {
            Self::Single(e) => e.clone(),
            Self::SourceTarget { source, target } => {
                // Same number of rows by construction, so concatenation cannot fail.
                concatenate(Axis(1), &[source.view(), target.view()]).unwrap_or_else(|_| source.clone())
            }
        }
    }
}

/// Hyper-parameters of the three graph baselines (each section optional in a spec; missing
/// fields take the documented defaults).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GraphBaselineConfig {
    /// DeepWalk's parameters.
    pub deepwalk: DeepWalkParams,
    /// HOPE's parameters.
    pub hope: HopeParams,
    /// DiGAE's parameters.
    pub digae: DigaeParams,
}

/// Embeds the nodes of `graph` with a baseline (`graph.adjacency`, `A[src, dst]`), all
/// randomness from `seed`.
pub fn run_graph_baseline(
    method: GraphBaseline,
    graph: &Graph,
    config: &GraphBaselineConfig,
    seed: u64,
) -> Result<Embeddings> {
    let a = &graph.adjacency;
    Ok(match method {
        GraphBaseline::Deepwalk => Embeddings::Single(config.deepwalk.check()?.fit(a, seed)?.embedding),
        GraphBaseline::Hope => {
            let fit = config.hope.check()?.fit(a, seed)?;
            Embeddings::SourceTarget {
                source: fit.source,
                target: fit.target,
            }
        }
        GraphBaseline::Digae => {
            let fit = config.digae.check()?.fit(a, seed)?;
            Embeddings::SourceTarget {
                source: fit.source,
                target: fit.target,
            }
        }
    })
}

/// Hyper-parameters of the two biclustering baselines.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BiclusterBaselineConfig {
    /// BCOT's parameters.
    pub bcot: BcotParams,
    /// EBC's parameters.
    pub ebc: EbcParams,
}

/// Document clusters (`k_docs`) and term clusters (`k_terms`) of `data.matrix` (documents x
/// terms) by a baseline, all randomness from `seed`.
pub fn run_bicluster_baseline(
    method: BiclusterBaseline,
    data: &DocumentTermData,
    k_docs: usize,
    k_terms: usize,
    config: &BiclusterBaselineConfig,
    seed: u64,
) -> Result<Biclusters> {
    match method {
        BiclusterBaseline::Bcot => config.bcot.check()?.bicluster(&data.matrix, k_docs, k_terms, seed),
        BiclusterBaseline::Ebc => config.ebc.check()?.bicluster(&data.matrix, k_docs, k_terms, seed),
    }
}

/// Whether a [`ResultRow`] carries a value, and if not why not (the runner's status ids).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RowStatus {
    /// `value` holds the result.
    Ok,
    /// The dataset's files are not available (the note says which).
    MissingData,
    /// The computation failed (the note holds the error).
    Failed,
}

/// One tidy result: dataset x method x metric x seed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResultRow {
    /// Dataset id (as in the config).
    pub dataset: String,
    /// Method id ([`GraphBaseline::id`], [`BiclusterBaseline::id`]).
    pub method: String,
    /// Metric id (`nmi`, `coherence`, or whatever the graph evaluator returns).
    pub metric: String,
    /// Mean over the trials of the cell (absent unless `status` is `Ok`).
    pub value: Option<f64>,
    /// Population standard deviation over the trials (absent for one trial).
    pub std: Option<f64>,
    /// Seed of the cell.
    pub seed: Option<u64>,
    /// Trials in the cell.
    pub trials: Option<u32>,
    /// Mean wall time of one trial of the method itself (embedding or biclustering, without
    /// loading or evaluation), seconds.
    pub seconds: Option<f64>,
    /// Rayon threads available to the run.
    pub threads: Option<u32>,
    /// Status of the row.
    pub status: RowStatus,
    /// Provenance or the reason for a missing value.
    pub note: Option<String>,
}

impl ResultRow {
    fn new(dataset: &str, method: &str, metric: &str, seed: u64, status: RowStatus, note: Option<String>) -> Self {
        Self {
            dataset: dataset.to_string(),
            method: method.to_string(),
            metric: metric.to_string(),
            value: None,
            std: None,
            seed: Some(seed),
            trials: None,
            seconds: None,
            threads: Some(rayon::current_num_threads() as u32),
            status,
            note,
        }
    }
}

fn mean_std(values: &[f64]) -> (f64, Option<f64>) {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let std = (values.len() > 1).then(|| (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n).sqrt());
    (mean, std)
}

/// The seed of trial `t` of a cell with seed `seed` (trial 0 uses `seed` itself).
pub fn trial_seed(seed: u64, trial: usize) -> u64 {
    if trial == 0 {
        seed
    } else {
        stream_seed(seed, 0x7472_6961_6c73, trial as u64, 0)
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
) -> Result<Vec<ResultRow>>
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
                    RowStatus::MissingData
                } else {
                    RowStatus::Failed
                };
                for method in &config.methods {
                    for &seed in &config.seeds {
                        rows.push(ResultRow::new(
                            id,
                            method.id(),
                            "embedding",
                            seed,
                            status,
                            Some(e.to_string()),
                        ));
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
                    rows.push(ResultRow::new(
                        id,
                        method.id(),
                        "embedding",
                        seed,
                        RowStatus::Failed,
                        Some(note),
                    ));
                    continue;
                }
                let (secs, _) = mean_std(&seconds);
                for (metric, values) in per_metric {
                    let (mean, std) = mean_std(&values);
                    let mut row = ResultRow::new(id, method.id(), &metric, seed, RowStatus::Ok, None);
                    row.value = Some(mean);
                    row.std = std;
                    row.trials = Some(values.len() as u32);
                    row.seconds = Some(secs);
                    rows.push(row);
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
) -> Result<Vec<ResultRow>> {
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
                    RowStatus::MissingData
                } else {
                    RowStatus::Failed
                };
                for method in &config.methods {
                    for &seed in &config.seeds {
                        for metric in metrics {
                            rows.push(ResultRow::new(
                                id,
                                method.id(),
                                metric,
                                seed,
                                status,
                                Some(e.to_string()),
                            ));
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
                            let mut r = ResultRow::new(id, method.id(), metric, seed, RowStatus::Failed, None);
                            r.note = Some(format!("{note} ({clusters})"));
                            r
                        }
                        Ok(vals) => {
                            let (mean, std) = mean_std(vals);
                            let mut r =
                                ResultRow::new(id, method.id(), metric, seed, RowStatus::Ok, Some(clusters.clone()));
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
