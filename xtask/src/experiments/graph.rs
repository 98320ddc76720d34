//! `kind = "graph-embedding"` (Table 1) and `kind = "nystrom-f1"` (the F1-vs-m figures): the runners in
//! [`runner`] over the building blocks of [`ksvd_graph_tasks`] (PCA, KPCA, SVD, KSVD embeddings, LS-SVM
//! node classification, graph reconstruction) and [`ksvd_baselines`] (DeepWalk, HOPE, DiGAE); ours and the
//! baselines go through one loop ([`ksvd_graph_tasks::GraphEmbedder`]) and one protocol.
//!
//! One cached cell per dataset x method (x seed): the spec's `datasets`/`methods` select what runs, its
//! `seeds` and `trials` override the protocol's seed and trial count, and everything else comes from the
//! spec's `[params]`, which deserialise into the crates' own configs (every key optional, defaults
//! documented there).
use anyhow::{Context as _, Result};
use ksvd_baselines::GraphBaselineConfig;
use ksvd_datasets::DataRoot;
use ksvd_graph_tasks::NystromMethod;
use runner::{run_methods, run_nystrom_f1, run_table1, NystromF1Config, Table1Config, Table1Method};
use serde::{Deserialize, Serialize};

pub(super) mod runner;

/// `cargo xtask table1-config FILE`: the Table 1 protocol with a [`Table1Config`] read from a TOML
/// file (diagnosis runs outside the specs, such as `xtask/configs/pubmed-1000.toml`; every key
/// optional, the defaults being the spec's full protocol), its rows printed as CSV on stdout and
/// progress on stderr.
pub fn run_config_file(path: &std::path::Path) -> Result<()> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let config: Table1Config =
        toml::from_str(&text).with_context(|| format!("{}: not a Table 1 config", path.display()))?;
    let root = DataRoot::committed()?;
    let rows = run_table1(&config, &root, |p| {
        eprintln!("[{}/{}] {} {} {}", p.done, p.total, p.dataset, p.method, p.message)
    })?;
    println!("dataset,method,metric,setting,value,std,trials,status");
    let num = |v: Option<f64>| v.map_or(String::new(), |x| format!("{x}"));
    for r in rows {
        println!(
            "{},{},{},\"{}\",{},{},{},{:?}",
            r.dataset,
            r.method,
            r.metric,
            r.setting,
            num(r.value),
            num(r.std),
            r.trials.map_or(String::new(), |t| t.to_string()),
            r.status
        );
    }
    Ok(())
}

use super::{Context, Experiment};
use crate::rows::{Row, Status};

/// `[params]` of `kind = "graph-embedding"`.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Table1Params {
    /// The embedding and evaluation protocol ([`Table1Config`]; its `datasets`, `methods` and `seed` are
    /// replaced by the spec's, `eval.trials` by the spec's `trials`).
    #[serde(default)]
    pub protocol: Table1Config,
    /// Hyper-parameters of DeepWalk, HOPE and DiGAE ([`GraphBaselineConfig`]).
    #[serde(default)]
    pub baselines: GraphBaselineConfig,
    /// Methods of the spec that have no implementation here (reported `not-implemented`, e.g. NERD).
    #[serde(default)]
    pub not_reimplemented: Vec<String>,
}

/// Table 1.
pub struct Table1;

/// Rows for a cell whose method failed as a whole (the metrics the spec declares, with the error).
fn failed_rows(cx: &Context<'_>, dataset: &str, method: &str, seed: u64, err: &anyhow::Error) -> Vec<Row> {
    ["micro_f1", "macro_f1", "l1", "l2"]
        .into_iter()
        .filter(|m| cx.spec.file.metrics.iter().any(|x| x.id == *m))
        .map(|metric| Row::status(dataset, method, metric, Status::Failed, Some(format!("{err:#}"))).seed(seed))
        .collect()
}

/// Keeps only rows with declared metrics (the crates also report diagnostics such as `wrong_entries`).
fn declared(cx: &Context<'_>, rows: Vec<Row>) -> Vec<Row> {
    rows.into_iter()
        .filter(|r| cx.spec.file.metrics.iter().any(|m| m.id == r.metric))
        .collect()
}

impl Experiment for Table1 {
    type Params = Table1Params;
    const VERSION: u32 = 1;

    fn run(&self, cx: &Context<'_>, p: &Table1Params) -> Result<Vec<Row>> {
        let root = DataRoot::committed()?;
        let seeds = cx.spec.file.seeds.clone();
        let trials = cx.spec.file.trials.max(1) as usize;
        cx.progress
            .set_length((cx.spec.run_datasets.len() * cx.spec.run_methods.len() * seeds.len()) as u64);
        let mut rows = Vec::new();
        for dataset in &cx.spec.run_datasets {
            for method in &cx.spec.run_methods {
                for &seed in &seeds {
                    cx.progress.set_message(format!("{dataset} {method} seed {seed}"));
                    let mut config = p.protocol.clone();
                    config.datasets = vec![dataset.clone()];
                    // Only this dataset's settings enter the cell (and its cache key): changing
                    // another dataset's override does not rerun this one.
                    config.also_reversed.retain(|d| d == dataset);
                    config.overrides.retain(|d, _| d == dataset);
                    config.seed = seed;
                    config.eval.trials = trials;
                    if let Some(m) = Table1Method::from_id(method) {
                        // What the cell's rows depend on: ours, the whole protocol; a baseline, its
                        // hyper-parameters and the evaluation.
                        let key = match m {
                            Table1Method::Ours(_) => serde_json::to_value(("table1", dataset, method, seed, &config)),
                            Table1Method::Baseline(_) => serde_json::to_value((
                                "table1-baseline",
                                dataset,
                                method,
                                seed,
                                &p.baselines,
                                &config.eval,
                                config.graph_self_loops,
                            )),
                        }?;
                        rows.extend(cx.cell(&key, || {
                            Ok(match run_methods(&config, &[m], &p.baselines, &root, |_| {}) {
                                Ok(r) => declared(cx, r),
                                Err(e) => failed_rows(cx, dataset, method, seed, &e.into()),
                            })
                        })?);
                    } else if p.not_reimplemented.iter().any(|m| m == method) {
                        cx.progress.inc(1);
                        let note =
                            "external method without a Rust implementation here; the paper's value is shown alone";
                        rows.extend(
                            failed_rows(cx, dataset, method, seed, &anyhow::anyhow!(note))
                                .into_iter()
                                .filter(|r| {
                                    cx.spec.file.paper.iter().any(|pv| {
                                        pv.dataset == r.dataset && pv.method == r.method && pv.metric == r.metric
                                    })
                                })
                                .map(|mut r| {
                                    r.status = Status::NotImplemented;
                                    r
                                }),
                        );
                    } else {
                        anyhow::bail!("table1: unknown method `{method}`");
                    }
                }
            }
        }
        Ok(rows)
    }
}

/// `[params]` of `kind = "nystrom-f1"`: a [`NystromF1Config`] (its `datasets`, `methods` and `seed` are
/// replaced by the spec's, `eval.trials` by the spec's `trials`).
pub type NystromF1Params = NystromF1Config;

/// The F1-vs-m figure.
pub struct NystromF1;

impl Experiment for NystromF1 {
    type Params = NystromF1Params;
    const VERSION: u32 = 2;

    fn run(&self, cx: &Context<'_>, p: &NystromF1Config) -> Result<Vec<Row>> {
        let root = DataRoot::committed()?;
        let seeds = cx.spec.file.seeds.clone();
        let trials = cx.spec.file.trials.max(1) as usize;
        // The spec's methods `ksvd`/`kpca` select the Nystrom variants; `*_exact` turn on the references.
        let methods: Vec<NystromMethod> = [NystromMethod::Ksvd, NystromMethod::Kpca]
            .into_iter()
            .filter(|m| cx.spec.run_methods.iter().any(|x| x == m.id()))
            .collect();
        let include_exact = cx.spec.run_methods.iter().any(|m| m.ends_with("_exact"));
        cx.progress
            .set_length((cx.spec.run_datasets.len() * methods.len() * seeds.len()) as u64);
        let mut rows = Vec::new();
        for dataset in &cx.spec.run_datasets {
            for &method in &methods {
                for &seed in &seeds {
                    cx.progress
                        .set_message(format!("{dataset} {} seed {seed}", method.id()));
                    let mut config = p.clone();
                    config.datasets = vec![dataset.clone()];
                    config.overrides.retain(|d, _| d == dataset);
                    config.m_grid.retain(|d, _| d == dataset);
                    config.methods = vec![method];
                    config.include_exact = include_exact;
                    config.seed = seed;
                    config.eval.trials = trials;
                    let key = ("nystrom-f1", dataset, method.id(), seed, &config);
                    rows.extend(cx.cell(&key, || {
                        let out = run_nystrom_f1(&config, &root, |_| {})
                            .with_context(|| format!("nystrom-f1 on {dataset} ({})", method.id()));
                        Ok(match out {
                            Ok(r) => r
                                .into_iter()
                                .filter(|r| cx.spec.run_methods.contains(&r.method))
                                .collect(),
                            Err(e) => ["micro_f1", "macro_f1"]
                                .into_iter()
                                .map(|metric| {
                                    Row::status(dataset, method.id(), metric, Status::Failed, Some(format!("{e:#}")))
                                        .seed(seed)
                                })
                                .collect(),
                        })
                    })?);
                }
            }
        }
        Ok(declared(cx, rows))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fsx::project_root;

    /// The diagnosis config the README quotes parses into the runner's config (run it with
    /// `cargo xtask table1-config xtask/configs/pubmed-1000.toml`).
    #[test]
    fn committed_table1_configs_parse() {
        let path = project_root().join("xtask/configs/pubmed-1000.toml");
        let text = std::fs::read_to_string(&path).unwrap();
        let config: Table1Config = toml::from_str(&text).unwrap();
        assert_eq!(config.datasets, vec!["pubmed".to_string()]);
        assert_eq!(config.components, 1000);
        assert!(run_config_file(std::path::Path::new("no/such/config.toml")).is_err());
    }
}
