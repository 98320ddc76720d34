//! `kind = "spectrum"`: the varying-spectrum figure of section 5.4 (Cora): for a range of SNE
//! bandwidths γ, the subsamples `m` the asymmetric Nyström method needs to reach `η ≤ ε`, and its
//! speedup over RSVD (timed as in [`super::timing`]).
use anyhow::Result;
use ksvd_datasets::DataRoot;
use serde::{Deserialize, Serialize};

use super::race::{self, Problem, RaceConfig, Solver};
use super::timing::adjacency;
use super::{Context, Experiment};
use crate::rows::{Row, Status};

/// `[params]` of `kind = "spectrum"`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Kernel (stated: SNE). Only "sne" is accepted.
    pub kernel: String,
    /// Rank r (stated: 20).
    pub rank: usize,
    /// Tolerance (stated: 1e-2).
    pub tolerance: f64,
    /// Open: the γ values of the x axis.
    pub gamma_grid: Vec<f64>,
    /// Open: graph input transform.
    pub graph_input: String,
    /// Stated: uniform landmarks.
    pub landmarks: String,
    /// Open: m values tried.
    pub m_grid: Vec<usize>,
    /// Open: RSVD oversampling values tried.
    pub rsvd_oversampling_grid: Vec<usize>,
    /// Open: RSVD power iterations.
    pub rsvd_power_iterations: usize,
    /// Open: timing repetitions.
    pub repeats: usize,
    /// Relative residual tolerance of the TSVD reference.
    pub tsvd_tol: f64,
}

/// The experiment.
pub struct Spectrum;

impl Experiment for Spectrum {
    type Params = Params;
    const VERSION: u32 = 1;

    fn run(&self, cx: &Context<'_>, params: &Params) -> Result<Vec<Row>> {
        anyhow::ensure!(params.kernel == "sne", "spectrum: only the SNE kernel is implemented");
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
            .set_length((cx.spec.run_datasets.len() * seeds.len() * params.gamma_grid.len()) as u64);
        let threads = cx.threads as u32;
        let mut rows = Vec::new();
        for id in &cx.spec.run_datasets {
            let adj = adjacency(&root, id, false)?;
            for &gamma in &params.gamma_grid {
                for &seed in &seeds {
                    cx.progress
                        .set_message(format!("spectrum {id} gamma {gamma} seed {seed}"));
                    let key = ("spectrum", id, gamma.to_bits(), seed, params);
                    let mut cell = cx.cell(&key, || {
                        let problem = Problem::sne(&adj, input, 1.0, Some(gamma))?;
                        let reference = race::reference(&problem, &cfg, seed)?;
                        let setting = format!("gamma={gamma}");
                        let row = |m: &str, metric: &str, v: f64| {
                            Row::ok(id, m, metric, v)
                                .setting(setting.clone())
                                .seed(seed)
                                .threads(threads)
                        };
                        let mut out = vec![row("asym_nystrom", "sigma_ratio", race::sigma_ratio(&reference))];
                        let mut times = [None, None];
                        for (k, solver) in [Solver::Rsvd, Solver::AsymNystrom].into_iter().enumerate() {
                            match race::race(&problem, &reference, solver, params.tolerance, &cfg, seed)? {
                                Ok(o) => {
                                    let size_metric = if solver == Solver::Rsvd { "oversampling" } else { "m" };
                                    out.push(row(solver.id(), size_metric, o.size as f64));
                                    out.push(row(solver.id(), "seconds", o.seconds));
                                    times[k] = Some(o.seconds);
                                }
                                Err(history) => {
                                    let best = history.iter().map(|h| h.1).fold(f64::INFINITY, f64::min);
                                    out.push(
                                        Row::status(
                                            id,
                                            solver.id(),
                                            "seconds",
                                            Status::Failed,
                                            Some(format!("eta <= {} not reached: best {best:.4}", params.tolerance)),
                                        )
                                        .setting(setting.clone())
                                        .seed(seed),
                                    );
                                }
                            }
                        }
                        if let [Some(a), Some(b)] = times {
                            out.push(row("asym_nystrom", "speedup", a / b));
                        }
                        Ok(out)
                    })?;
                    rows.append(&mut cell);
                }
            }
        }
        Ok(rows)
    }
}
