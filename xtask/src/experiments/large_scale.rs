//! `kind = "large-scale"` (the appendix's large LIBSVM table) and `kind = "scaling"` (wall time and peak
//! memory against N) over [`ksvd_streaming`], the out-of-core asymmetric Nyström path. The measurements
//! ([`bench`]: one cell of the table, one point of the benchmark, the in-memory reference paths),
//! process probes ([`memory`]), synthetic inputs ([`synthetic`]) and user datasets ([`inputs`]) live here,
//! not in the library.
//!
//! `large-scale`: one cached cell per dataset x seed; the stand-ins are streamed from the committed
//! `data/`, the paper's three datasets (listed in the spec) from `data/external/...` when a user supplies
//! them (else `missing-data` rows saying where to get them). `scaling`: every measurement runs in a child
//! process of this very binary (`cargo xtask scaling-child`, [`scaling_child`]), so peak memories are
//! independent.
use anyhow::{ensure, Context as _, Result};
use ksvd_datasets::DataRoot;
use runner::{run_large_scale, LargeScaleConfig};
use scaling::{run_scaling, Isolation, ScalingConfig};

use super::{Context, Experiment};
use crate::rows::Row;

pub(super) mod bench;
pub(super) mod inputs;
pub(super) mod memory;
pub(super) mod runner;
pub(super) mod scaling;
pub(super) mod synthetic;

pub use scaling::scaling_child;

/// Keeps the rows whose dataset, method and metric the spec declares.
fn declared(cx: &Context<'_>, rows: Vec<Row>) -> Vec<Row> {
    let f = &cx.spec.file;
    rows.into_iter()
        .filter(|r| {
            f.metrics.iter().any(|m| m.id == r.metric)
                && f.methods.iter().any(|m| m.id == r.method)
                && f.datasets.iter().any(|d| d.id == r.dataset)
        })
        .collect()
}

/// The large-scale table.
pub struct LargeScale;

impl Experiment for LargeScale {
    type Params = LargeScaleConfig;
    const VERSION: u32 = 2;

    fn run(&self, cx: &Context<'_>, p: &LargeScaleConfig) -> Result<Vec<Row>> {
        let root = DataRoot::committed()?;
        let seeds = cx.spec.file.seeds.clone();
        let methods: Vec<_> = p
            .methods
            .iter()
            .copied()
            .filter(|m| m_id(m).is_none_or(|id| cx.spec.run_methods.contains(&id)))
            .collect();
        cx.progress
            .set_length((cx.spec.run_datasets.len() * seeds.len()) as u64);
        let mut rows = Vec::new();
        for dataset in &cx.spec.run_datasets {
            let stand_in = p.stand_ins.iter().any(|s| s == dataset);
            let user: Vec<_> = p.datasets.iter().filter(|d| &d.name == dataset).cloned().collect();
            ensure!(
                stand_in || !user.is_empty(),
                "large-scale: dataset `{dataset}` is neither in `stand_ins` nor in `datasets` of [params]"
            );
            for &seed in &seeds {
                cx.progress.set_message(format!("{dataset} seed {seed}"));
                let mut config = p.clone();
                config.stand_ins = if stand_in { vec![dataset.clone()] } else { Vec::new() };
                config.datasets = user.clone();
                config.methods = methods.clone();
                config.seeds = vec![seed];
                let key = ("large-scale", dataset, seed, &config);
                rows.extend(cx.cell(&key, || {
                    let bar = cx.progress;
                    let mut progress = |pr: &ksvd_streaming::Progress| bar.set_message(pr.stage.clone());
                    let out = run_large_scale(&config, &root, &mut progress)
                        .with_context(|| format!("large-scale on {dataset}"))?;
                    Ok(declared(cx, out))
                })?);
            }
        }
        Ok(rows)
    }
}

/// The scaling benchmark.
pub struct Scaling;

impl Experiment for Scaling {
    type Params = ScalingConfig;
    const VERSION: u32 = 2;

    fn run(&self, cx: &Context<'_>, p: &ScalingConfig) -> Result<Vec<Row>> {
        let seeds = cx.spec.file.seeds.clone();
        let mut config = p.clone();
        config.methods.retain(|m| {
            cx.spec
                .run_methods
                .iter()
                .any(|x| Some(x.as_str()) == m_id(m).as_deref())
        });
        if config.isolation == Isolation::ChildProcess && config.binary.is_none() {
            // This process is `cargo xtask`: its `scaling-child` subcommand measures.
            config.binary =
                Some(std::env::current_exe().context("locating the xtask binary for the scaling children")?);
        }
        if config.threads.is_none() {
            config.threads = Some(cx.threads);
        }
        cx.progress.set_length((config.sizes.len() * seeds.len()) as u64);
        let mut rows = Vec::new();
        for &seed in &seeds {
            for &n in &p.sizes {
                cx.progress.set_message(format!("N = {n} seed {seed}"));
                let mut c = config.clone();
                c.sizes = vec![n];
                c.model.seed = seed;
                // The binary's location does not change results: keep it out of the key.
                let mut keyed = c.clone();
                keyed.binary = None;
                let key = ("scaling", n, seed, &keyed);
                rows.extend(cx.cell(&key, || {
                    let bar = cx.progress;
                    let mut progress = |pr: &ksvd_streaming::Progress| bar.set_message(pr.stage.clone());
                    let out = run_scaling(&c, &mut progress).with_context(|| format!("scaling at N = {n}"))?;
                    Ok(declared(cx, out))
                })?);
            }
        }
        Ok(rows)
    }
}

fn m_id<T: serde::Serialize>(m: &T) -> Option<String> {
    serde_json::to_value(m).ok()?.as_str().map(str::to_string)
}
