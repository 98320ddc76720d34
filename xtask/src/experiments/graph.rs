//! `kind = "graph-embedding"` (Table 1) and `kind = "nystrom-f1"` (the F1-vs-m figures): the cells in
//! [`runner`] over the building blocks of [`ksvd_graph_tasks`] (PCA, KPCA, SVD, KSVD embeddings, LS-SVM
//! node classification, graph reconstruction) and [`ksvd_baselines`] (DeepWalk, HOPE, DiGAE); ours and the
//! baselines go through one cell ([`ksvd_graph_tasks::GraphEmbedder`]) and one protocol.
//!
//! One cell per dataset x method x seed, run by the driver ([`Context::run_cells`]): the spec's
//! `datasets`/`methods`/`seeds` select the cells, its `trials` overrides the protocol's trial count, and
//! everything else comes from the spec's `[params]`, which deserialise into the runner's configs (every key
//! optional, defaults documented there).
use anyhow::{Context as _, Result};
use indicatif::{ProgressBar, ProgressDrawTarget};
use ksvd_baselines::GraphBaselineConfig;
use ksvd_datasets::DataRoot;
use ksvd_graph_tasks::NystromMethod;
use runner::{
    load, nystrom_f1_cell, table1_cell, EvalConfig, LoadSelfLoops, LoadedGraph, NystromF1Config, Table1Config,
    Table1Method,
};
use serde::{Deserialize, Serialize};

pub(super) mod runner;

use super::{Cell, Context, Experiment, PerDataset};
use crate::cache::{Cache, SharedEmbeddings};
use crate::fsx::project_root;
use crate::rows::{Row, Status};
use crate::spec::Spec;

/// `cargo xtask table1-config FILE`: the Table 1 experiment with the protocol read from a TOML file
/// (diagnosis runs outside the specs, such as `xtask/configs/pubmed-1000.toml`; the keys of a
/// [`Table1Config`], every one optional, the defaults being the spec's full protocol). Its `datasets`,
/// `methods` (ours) and `seed` give the cells, `eval.trials` the trials; the rest of `experiments/table1.toml`
/// (declared metrics, baselines) applies. Nothing is cached; rows are printed as CSV on stdout, progress on
/// stderr.
pub fn run_config_file(path: &std::path::Path) -> Result<()> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let config: Table1Config =
        toml::from_str(&text).with_context(|| format!("{}: not a Table 1 config", path.display()))?;
    let mut spec = Spec::load(&project_root().join("experiments/table1.toml"), false)?;
    spec.run_datasets = config.datasets.clone();
    spec.run_methods = config.methods.iter().map(|m| m.id().to_string()).collect();
    spec.file.seeds = vec![config.seed];
    spec.file.trials = config.eval.trials as u32;
    let params = Table1Params {
        protocol: config,
        ..toml::Value::Table(spec.file.params.clone()).try_into::<Table1Params>()?
    };
    let progress = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr())
        .with_style(crate::reproduce::bar_style())
        .with_prefix("table1-config");
    let cx = Context {
        spec: &spec,
        quick: false,
        threads: rayon::current_num_threads(),
        cache: &Cache::off(),
        shared: &SharedEmbeddings::off(),
        progress: &progress,
    };
    let rows = Table1.run(&cx, &params)?;
    progress.finish_and_clear();
    println!("dataset,method,metric,setting,value,std,trials,status");
    let num = |v: Option<f64>| v.map_or(String::new(), |x| format!("{x}"));
    for r in rows {
        println!(
            "{},{},{},\"{}\",{},{},{},{}",
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

impl Experiment for Table1 {
    type Params = Table1Params;
    const VERSION: u32 = 1;

    fn run(&self, cx: &Context<'_>, p: &Table1Params) -> Result<Vec<Row>> {
        let root = DataRoot::committed()?;
        // The protocol of this run, checked once.
        let mut protocol = p.protocol.clone();
        protocol.datasets = cx.spec.run_datasets.clone();
        protocol.eval.trials = cx.spec.file.trials.max(1) as usize;
        protocol.validate()?;
        for method in &cx.spec.run_methods {
            if Table1Method::from_id(method).is_none() && !p.not_reimplemented.contains(method) {
                anyhow::bail!("table1: unknown method `{method}`");
            }
        }
        // A cell's config: only its dataset's settings enter it (and its cache key), so that changing
        // another dataset's override does not rerun it.
        let config = |c: &Cell| {
            let mut config = protocol.clone();
            config.datasets = vec![c.dataset.clone()];
            config.also_reversed.retain(|d| *d == c.dataset);
            config.overrides.retain(|d, _| *d == c.dataset);
            config.seed = c.seed();
            config
        };
        // What a cell's rows depend on: ours, the whole protocol; a baseline, its hyper-parameters and the
        // evaluation.
        #[derive(Serialize)]
        #[serde(untagged)]
        enum Key<'a> {
            Ours(&'a str, String, String, u64, Table1Config),
            Baseline(
                &'a str,
                String,
                String,
                u64,
                &'a GraphBaselineConfig,
                EvalConfig,
                LoadSelfLoops,
            ),
        }
        let key = |c: &Cell| {
            let config = config(c);
            match Table1Method::from_id(c.method()) {
                Some(Table1Method::Baseline(_)) => Key::Baseline(
                    "table1-baseline",
                    c.dataset.clone(),
                    c.method().to_string(),
                    c.seed(),
                    &p.baselines,
                    config.eval,
                    config.graph_self_loops,
                ),
                _ => Key::Ours("table1", c.dataset.clone(), c.method().to_string(), c.seed(), config),
            }
        };
        let mut graphs: PerDataset<LoadedGraph> = PerDataset::new();
        cx.run_cells(&cx.grid().cells(), key, |c, progress| {
            let Some(method) = Table1Method::from_id(c.method()) else {
                // Not reimplemented: the paper's values are shown alone.
                let note = "external method without a Rust implementation here; the paper's value is shown alone";
                return Ok(cx
                    .cell_status_rows(c, Status::NotImplemented, note)
                    .into_iter()
                    .filter(|r| {
                        cx.spec
                            .file
                            .paper
                            .iter()
                            .any(|pv| pv.dataset == r.dataset && pv.method == r.method && pv.metric == r.metric)
                    })
                    .collect());
            };
            let graph = graphs.get(&c.dataset, || load(&root, &c.dataset, protocol.graph_self_loops))?;
            table1_cell(&config(c), method, &p.baselines, graph, c.seed(), cx.shared, progress)
        })
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
        // The spec's methods `ksvd`/`kpca` select the Nystrom variants (one cell each); `*_exact` turn on
        // the references (rows of the same cell).
        let methods: Vec<NystromMethod> = [NystromMethod::Ksvd, NystromMethod::Kpca]
            .into_iter()
            .filter(|m| cx.spec.run_methods.iter().any(|x| x == m.id()))
            .collect();
        let mut protocol = p.clone();
        protocol.datasets = cx.spec.run_datasets.clone();
        protocol.methods = methods.clone();
        protocol.include_exact = cx.spec.run_methods.iter().any(|m| m.ends_with("_exact"));
        protocol.eval.trials = cx.spec.file.trials.max(1) as usize;
        if !methods.is_empty() {
            protocol.validate()?;
        }
        let method = |c: &Cell| methods.iter().copied().find(|m| m.id() == c.method());
        let config = |c: &Cell| {
            let mut config = protocol.clone();
            config.datasets = vec![c.dataset.clone()];
            config.overrides.retain(|d, _| *d == c.dataset);
            config.m_grid.retain(|d, _| *d == c.dataset);
            config.methods = method(c).into_iter().collect();
            config.seed = c.seed();
            config
        };
        let cells = cx.grid().methods(methods.iter().map(|m| m.id())).cells();
        let mut graphs: PerDataset<LoadedGraph> = PerDataset::new();
        cx.run_cells(
            &cells,
            |c| {
                (
                    "nystrom-f1",
                    c.dataset.clone(),
                    c.method().to_string(),
                    c.seed(),
                    config(c),
                )
            },
            |c, progress| {
                let method = method(c).context("not a Nystrom method")?;
                let graph = graphs.get(&c.dataset, || load(&root, &c.dataset, protocol.graph_self_loops))?;
                nystrom_f1_cell(&config(c), method, graph, c.seed(), cx.shared, progress)
                    .with_context(|| format!("nystrom-f1 on {} ({})", c.dataset, method.id()))
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The diagnosis config the README quotes parses into the runner's config (run it with
    /// `cargo xtask table1-config xtask/configs/pubmed-1000.toml`).
    #[test]
    fn committed_table1_configs_parse() {
        let path = project_root().join("xtask/configs/pubmed-1000.toml");
        let text = std::fs::read_to_string(&path).unwrap();
        let config: Table1Config = toml::from_str(&text).unwrap();
        assert_eq!(config.datasets, vec!["pubmed".to_string()]);
        assert_eq!(config.components, 1000);
        config.validate().unwrap();
        assert!(run_config_file(std::path::Path::new("no/such/config.toml")).is_err());
    }
}
