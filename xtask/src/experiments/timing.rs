//! `kind = "timing"`: the runtime table of section 5.4 and its appendix version.
//!
//! For every dataset and seed (one cached cell): the TSVD reference, then RSVD, the symmetric and
//! the asymmetric Nyström method each grown until the paper's `η ≤ ε` for every tolerance, timed end
//! to end (kernel construction included) as the median of `repeats` runs; see [`super::race`].
use std::collections::BTreeMap;

use anyhow::{Context as _, Result};
use ksvd_datasets::{DataRoot, DatasetName, GraphOptions, Labels};
use serde::{Deserialize, Serialize};

use super::race::{self, Problem, RaceConfig, Solver};
use super::{Context, Experiment};
use crate::rows::{Row, Status};

/// `[params]` of `kind = "timing"`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Kernel (stated: SNE, section 5.4). Only "sne" is accepted.
    pub kernel: String,
    /// Rank r (stated: 20).
    pub rank: usize,
    /// Tolerances eps (stated: 0.1 and 0.01).
    pub tolerances: Vec<f64>,
    /// k of gamma = k sqrt(M gamma_x) per dataset (stated: 1 for Cora and Citeseer, 0.5 for Pubmed).
    pub gamma_k: BTreeMap<String, f64>,
    /// Open: graph input transform (`raw`, `row-normalised`, `self-loops`, `row-normalised-self-loops`).
    pub graph_input: String,
    /// Open: Citeseer node set, "labelled" (3312, the table's N) or "all" (3327).
    pub citeseer_nodes: String,
    /// Stated: uniform random subsampling.
    pub landmarks: String,
    /// Open: m values tried, increasing.
    pub m_grid: Vec<usize>,
    /// Open: RSVD oversampling values tried, increasing.
    pub rsvd_oversampling_grid: Vec<usize>,
    /// Open: RSVD power iterations.
    pub rsvd_power_iterations: usize,
    /// Open: timing repetitions of the selected setting (median reported).
    pub repeats: usize,
    /// Relative residual tolerance of the TSVD reference ("machine precision" in the paper).
    pub tsvd_tol: f64,
    /// Measures reported beside the paper's eta.
    pub extra_accuracy_measures: Vec<String>,
}

/// The experiment.
pub struct Timing;

/// The adjacency of a graph dataset, restricted to its labelled nodes when asked.
pub fn adjacency(root: &DataRoot, id: &str, labelled_only: bool) -> Result<ksvd_linalg::CsrMatrix> {
    let name: DatasetName = id.parse().with_context(|| format!("dataset `{id}`"))?;
    let g = root.graph(name, &GraphOptions::default())?;
    if !labelled_only {
        return Ok(g.adjacency);
    }
    let keep: Vec<usize> = match &g.labels {
        Labels::Single { classes, .. } => (0..classes.len()).filter(|&i| classes[i].is_some()).collect(),
        _ => (0..g.adjacency.nrows()).collect(),
    };
    let mut new_id = vec![usize::MAX; g.adjacency.nrows()];
    for (k, &i) in keep.iter().enumerate() {
        new_id[i] = k;
    }
    let mut trip = Vec::new();
    for &i in &keep {
        let (idx, val) = g.adjacency.row(i);
        for (&j, &v) in idx.iter().zip(val) {
            if new_id[j] != usize::MAX {
                trip.push((new_id[i], new_id[j], v));
            }
        }
    }
    Ok(ksvd_linalg::CsrMatrix::from_triplets(keep.len(), keep.len(), trip)?)
}

impl Experiment for Timing {
    type Params = Params;
    const VERSION: u32 = 1;

    fn run(&self, cx: &Context<'_>, params: &Params) -> Result<Vec<Row>> {
        anyhow::ensure!(
            params.kernel == "sne",
            "timing: only the SNE kernel is implemented (got `{}`)",
            params.kernel
        );
        anyhow::ensure!(
            params.landmarks == "uniform",
            "timing: only uniform landmarks are implemented"
        );
        let input = race::graph_input(&params.graph_input)?;
        let root = DataRoot::committed()?;
        let cfg = RaceConfig {
            rank: params.rank,
            m_grid: params.m_grid.clone(),
            oversampling_grid: params.rsvd_oversampling_grid.clone(),
            power_iters: params.rsvd_power_iterations,
            repeats: params.repeats,
            tsvd_tol: params.tsvd_tol,
        };
        let seeds = cx.spec.file.seeds.clone();
        cx.progress
            .set_length((cx.spec.run_datasets.len() * seeds.len()) as u64);
        let threads = cx.threads as u32;
        let mut rows = Vec::new();
        for id in &cx.spec.run_datasets {
            let labelled = id == "citeseer" && params.citeseer_nodes == "labelled";
            let k = params.gamma_k.get(id).copied().unwrap_or(1.0);
            for &seed in &seeds {
                cx.progress.set_message(format!("timing {id} seed {seed}"));
                let key = ("timing", id, seed, params);
                let mut cell = cx.cell(&key, || {
                    let adj = adjacency(&root, id, labelled)?;
                    let n = adj.nrows();
                    let problem = Problem::sne(&adj, input, k, None)?;
                    let gamma = problem.kernel.gamma().unwrap_or(f64::NAN);
                    let reference = race::reference(&problem, &cfg, seed)?;
                    let mut out = Vec::new();
                    for &eps in &params.tolerances {
                        let setting = format!("eps={eps}");
                        let row = |m: &str, metric: &str, v: f64| {
                            Row::ok(id, m, metric, v).setting(setting.clone()).seed(seed).threads(threads)
                        };
                        out.push(row("data", "n", n as f64).note(format!("gamma = {gamma:.4}, input {}", params.graph_input)));
                        out.push(row("tsvd", "seconds", reference.seconds).note(format!("Lanczos, relative residual {:.0e}", cfg.tsvd_tol)));
                        out.push(row("tsvd", "eta", 0.0));
                        let mut t_rsvd = None;
                        let mut t_ours = None;
                        for solver in [Solver::Rsvd, Solver::SymNystrom, Solver::AsymNystrom] {
                            let m = solver.id();
                            match race::race(&problem, &reference, solver, eps, &cfg, seed)? {
                                Ok(o) => {
                                    let size_metric = if solver == Solver::Rsvd { "oversampling" } else { "m" };
                                    out.push(row(m, "seconds", o.seconds));
                                    out.push(row(m, "eta", o.eta));
                                    out.push(row(m, "eta_unweighted", o.eta_unweighted));
                                    out.push(row(m, "max_angle", o.max_angle));
                                    out.push(row(m, size_metric, o.size as f64));
                                    match solver {
                                        Solver::Rsvd => t_rsvd = Some(o.seconds),
                                        Solver::AsymNystrom => t_ours = Some(o.seconds),
                                        Solver::SymNystrom => {}
                                    }
                                }
                                Err(history) => {
                                    let best = history.iter().map(|h| h.1).fold(f64::INFINITY, f64::min);
                                    let last = history.last().map(|h| h.0).unwrap_or(0);
                                    let note = format!("eta <= {eps} not reached on the grid: best eta {best:.4} (largest size tried {last})");
                                    out.push(Row::status(id, m, "seconds", Status::Failed, Some(note)).setting(setting.clone()).seed(seed));
                                }
                            }
                        }
                        if let (Some(a), Some(b)) = (t_rsvd, t_ours) {
                            out.push(row("asym_nystrom", "speedup", a / b));
                        }
                    }
                    Ok(out)
                })?;
                rows.append(&mut cell);
            }
        }
        Ok(rows)
    }
}
