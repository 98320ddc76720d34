//! `kind = "uci"` (Table 3) and `kind = "ablation"` (the appendix ablation): the runners in [`runner`]
//! over the building blocks of [`ksvd_general`] (KPCA and KSVD embeddings with compatibility a0-a3,
//! SGD-trained linear heads).
//!
//! One cached cell per dataset x seed: the spec's `datasets`, `methods` and `seeds` select what runs;
//! everything else is the spec's `[params]`, which deserialise into [`Table3Config`] /
//! [`AblationConfig`]: the values the paper states are required (the specs are their only
//! source), the open choices default as documented there.
use anyhow::Result;
use ksvd_datasets::DataRoot;
use runner::{run_ablation, run_table3, AblationConfig, Table3Config};

pub(super) mod runner;

use super::{Context, Experiment};
use crate::rows::{Row, Status};

fn failed(cx: &Context<'_>, dataset: &str, seed: u64, err: &dyn std::fmt::Display) -> Vec<Row> {
    let mut out = Vec::new();
    for m in &cx.spec.run_methods {
        for metric in &cx.spec.file.metrics {
            if cx
                .spec
                .file
                .paper
                .iter()
                .any(|p| p.dataset == dataset && &p.method == m && p.metric == metric.id)
            {
                out.push(Row::status(dataset, m, &metric.id, Status::Failed, Some(err.to_string())).seed(seed));
            }
        }
    }
    out
}

/// Keeps the rows whose metric the spec declares.
fn declared(cx: &Context<'_>, rows: Vec<Row>) -> Vec<Row> {
    rows.into_iter()
        .filter(|r| cx.spec.file.metrics.iter().any(|m| m.id == r.metric))
        .collect()
}

/// Table 3.
pub struct Table3;

impl Experiment for Table3 {
    type Params = Table3Config;
    const VERSION: u32 = 1;

    fn run(&self, cx: &Context<'_>, p: &Table3Config) -> Result<Vec<Row>> {
        let root = DataRoot::committed()?;
        let seeds = cx.spec.file.seeds.clone();
        cx.progress
            .set_length((cx.spec.run_datasets.len() * seeds.len()) as u64);
        let mut rows = Vec::new();
        for dataset in &cx.spec.run_datasets {
            for &seed in &seeds {
                cx.progress.set_message(format!("{dataset} seed {seed}"));
                let mut config = p.clone();
                config.datasets = vec![dataset.clone()];
                config.methods = cx.spec.run_methods.clone();
                config.seeds = vec![seed];
                let key = ("table3", dataset, seed, &config);
                rows.extend(cx.cell(&key, || {
                    let bar = cx.progress;
                    let mut progress = |pr: &runner::Progress<'_>| {
                        bar.set_message(format!(
                            "{} {} seed {} ({}/{})",
                            pr.dataset, pr.method, pr.seed, pr.done, pr.total
                        ));
                    };
                    Ok(match run_table3(&config, &root, &mut progress) {
                        Ok(r) => declared(cx, r),
                        Err(e) => failed(cx, dataset, seed, &e),
                    })
                })?);
            }
        }
        Ok(rows)
    }
}

/// The ablation table.
pub struct Ablation;

impl Experiment for Ablation {
    type Params = AblationConfig;
    const VERSION: u32 = 1;

    fn run(&self, cx: &Context<'_>, p: &AblationConfig) -> Result<Vec<Row>> {
        let root = DataRoot::committed()?;
        let seeds = cx.spec.file.seeds.clone();
        cx.progress
            .set_length((cx.spec.run_datasets.len() * seeds.len()) as u64);
        let mut rows = Vec::new();
        for dataset in &cx.spec.run_datasets {
            for &seed in &seeds {
                cx.progress.set_message(format!("{dataset} seed {seed}"));
                let mut config = p.clone();
                config.datasets = vec![dataset.clone()];
                config.seeds = vec![seed];
                let key = ("ablation", dataset, seed, &config);
                rows.extend(cx.cell(&key, || {
                    let bar = cx.progress;
                    let mut progress = |pr: &runner::Progress<'_>| {
                        bar.set_message(format!("{} {} seed {}", pr.dataset, pr.method, pr.seed));
                    };
                    Ok(match run_ablation(&config, &root, &mut progress) {
                        Ok(r) => declared(
                            cx,
                            r.into_iter()
                                .filter(|r| cx.spec.run_methods.contains(&r.method))
                                .collect(),
                        ),
                        Err(e) => failed(cx, dataset, seed, &e),
                    })
                })?);
            }
        }
        Ok(rows)
    }
}
