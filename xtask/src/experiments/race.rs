//! The paper's solver-timing protocol (section 5.4, appendix C.2), shared by `timing` and `spectrum`.
//!
//! For one SNE kernel matrix `G` of a citation graph (`x_i` = out-row, `z_j` = in-column of the
//! transformed adjacency), rank `r`:
//!
//! * the reference is the rank-`r` truncated SVD by restarted Lanczos to a relative residual of
//!   `tsvd_tol` (the paper's TSVD "run to machine precision"); its time is TSVD's time;
//! * RSVD grows its oversampling over `rsvd_oversampling_grid`, the symmetric Nyström method (on
//!   `G Gᵀ` and `Gᵀ G`) and ours (asymmetric Nyström, RSVD at rank `r` for the sub-problem) grow
//!   `m` over `m_grid` (with `n = m`, uniform sampling), each until the paper's `η ≤ ε`;
//! * the first setting meeting `ε` is then timed `repeats` times, end to end (kernel construction,
//!   i.e. norms, `X Zᵀ` and the exact SNE normalisers, included), and the median is reported.
//!
//! Beside the paper's `η` (weights `λ_i`) every row reports the unweighted `η` and the largest
//! principal angle between the subspaces, which the paper's measure hides on row-stochastic
//! matrices (REPRODUCTION-NOTES §2).
use std::time::Instant;

use anyhow::{anyhow, Result};
use ksvd_kernels::graph::{bandwidth_rule, graph_samples, GraphInput};
use ksvd_kernels::{Kernel, KernelMatrix, Samples};
use ksvd_linalg::CsrMatrix;
use ksvd_nystrom::{asymmetric_nystrom, symmetric_nystrom_svd, NystromError, NystromParams};
use ksvd_solvers::{
    eta_of, lanczos_svd, randomized_svd, subspace_error, EtaWeights, LanczosParams, RsvdParams, SvdResult,
};

/// The solvers raced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Solver {
    /// Randomized SVD, oversampling grown.
    Rsvd,
    /// Symmetric Nyström on G Gᵀ and Gᵀ G, m grown.
    SymNystrom,
    /// Asymmetric Nyström, m grown.
    AsymNystrom,
}

impl Solver {
    /// Method id in the specs.
    pub fn id(self) -> &'static str {
        match self {
            Solver::Rsvd => "rsvd",
            Solver::SymNystrom => "sym_nystrom",
            Solver::AsymNystrom => "asym_nystrom",
        }
    }
}

/// Protocol settings.
#[derive(Debug, Clone)]
pub struct RaceConfig {
    /// Rank r.
    pub rank: usize,
    /// Candidate landmark counts for the Nyström methods.
    pub m_grid: Vec<usize>,
    /// Candidate RSVD oversamplings.
    pub oversampling_grid: Vec<usize>,
    /// RSVD power iterations (also for the asymmetric Nyström sub-problem).
    pub power_iters: usize,
    /// Timing repeats of the selected setting (median reported).
    pub repeats: usize,
    /// Relative residual tolerance of the TSVD reference.
    pub tsvd_tol: f64,
}

/// One graph problem: samples and the SNE kernel.
pub struct Problem {
    /// Row samples.
    pub x: Samples,
    /// Column samples.
    pub z: Samples,
    /// The kernel.
    pub kernel: Kernel,
}

impl Problem {
    /// SNE problem of an adjacency matrix with the paper's bandwidth rule `γ = k sqrt(M γ_x)`
    /// (`gamma` overrides it).
    pub fn sne(adj: &CsrMatrix, input: GraphInput, gamma_k: f64, gamma: Option<f64>) -> Result<Problem> {
        let (x, z) = graph_samples(adj, input)?;
        let gamma = gamma.unwrap_or_else(|| bandwidth_rule(&x, gamma_k));
        Ok(Problem {
            x,
            z,
            kernel: Kernel::Sne { gamma },
        })
    }

    fn build(&self) -> Result<KernelMatrix> {
        Ok(KernelMatrix::new(self.x.clone(), self.z.clone(), self.kernel)?)
    }
}

/// The reference solution and its time.
pub struct Reference {
    /// Rank-r truncated SVD.
    pub svd: SvdResult,
    /// Median end-to-end seconds (kernel construction included).
    pub seconds: f64,
}

/// Where a solver stopped.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The size parameter reached (m, or the oversampling).
    pub size: usize,
    /// Paper's η.
    pub eta: f64,
    /// Unweighted η.
    pub eta_unweighted: f64,
    /// Largest principal angle (radians) between left or right subspaces.
    pub max_angle: f64,
    /// Median end-to-end seconds of the selected setting.
    pub seconds: f64,
    /// Every (size, η) tried.
    pub history: Vec<(usize, f64)>,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    }
}

/// Computes the TSVD reference (Lanczos), timed `repeats` times.
pub fn reference(p: &Problem, cfg: &RaceConfig, seed: u64) -> Result<Reference> {
    let params = LanczosParams {
        tol: cfg.tsvd_tol,
        max_restarts: 20_000,
        work_dim: Some((3 * cfg.rank).max(cfg.rank + 40)),
        seed,
    };
    let mut times = Vec::new();
    let mut svd = None;
    for _ in 0..cfg.repeats.max(1) {
        let t = Instant::now();
        let g = p.build()?;
        let r = lanczos_svd(&g, cfg.rank, &params)?;
        times.push(t.elapsed().as_secs_f64());
        svd = Some(r);
    }
    let svd = svd.ok_or_else(|| anyhow!("no reference computed"))?;
    Ok(Reference {
        svd,
        seconds: median(times),
    })
}

fn attempt(
    p: &Problem,
    g: &KernelMatrix,
    solver: Solver,
    size: usize,
    cfg: &RaceConfig,
    seed: u64,
) -> Result<Option<SvdResult>> {
    let _ = p;
    let n = ksvd_linalg::LinearOperator::nrows(g);
    let r = cfg.rank;
    let out = match solver {
        Solver::Rsvd => Some(randomized_svd(
            g,
            r,
            &RsvdParams {
                oversampling: size,
                power_iters: cfg.power_iters,
                seed,
            },
        )?),
        Solver::SymNystrom => match symmetric_nystrom_svd(g, r, size.min(n), size.min(n), seed) {
            Ok(s) => Some(s),
            Err(NystromError::RankDeficientSample { .. }) => None,
            Err(e) => return Err(e.into()),
        },
        Solver::AsymNystrom => {
            let params = NystromParams::new(r, size.min(n))
                .seed(seed)
                .inner(ksvd_nystrom::InnerSolver::Rsvd {
                    oversampling: 10,
                    power_iters: cfg.power_iters,
                });
            match asymmetric_nystrom(g, &params) {
                Ok(a) => Some(a.svd),
                Err(NystromError::RankDeficientSample { .. }) => None,
                Err(e) => return Err(e.into()),
            }
        }
    };
    Ok(out)
}

/// Grows the solver's size parameter until `η ≤ eps`, then times the selected setting.
/// Returns `Ok(None)` in `Err`-free form when the grid is exhausted: the caller reports it.
pub fn race(
    p: &Problem,
    reference: &Reference,
    solver: Solver,
    eps: f64,
    cfg: &RaceConfig,
    seed: u64,
) -> Result<Result<Outcome, Vec<(usize, f64)>>> {
    let g = p.build()?;
    let n = ksvd_linalg::LinearOperator::nrows(&g);
    let grid: Vec<usize> = match solver {
        Solver::Rsvd => cfg
            .oversampling_grid
            .iter()
            .copied()
            .filter(|&o| cfg.rank + o <= n)
            .collect(),
        _ => cfg
            .m_grid
            .iter()
            .copied()
            .filter(|&m| m >= cfg.rank && m <= n)
            .collect(),
    };
    let mut history = Vec::new();
    for size in grid {
        let Some(svd) = attempt(p, &g, solver, size, cfg, seed)? else {
            history.push((size, f64::INFINITY));
            continue;
        };
        let eta = eta_of(&reference.svd, &svd, EtaWeights::SingularValues)?;
        history.push((size, eta));
        if eta <= eps {
            let eta_unweighted = eta_of(&reference.svd, &svd, EtaWeights::Uniform)?;
            let max_angle = subspace_error(&reference.svd, svd.u.view(), svd.v.view())?
                .min(1.0)
                .asin();
            let mut times = Vec::new();
            for _ in 0..cfg.repeats.max(1) {
                let t = Instant::now();
                let g2 = p.build()?;
                let _ = attempt(p, &g2, solver, size, cfg, seed)?;
                times.push(t.elapsed().as_secs_f64());
            }
            return Ok(Ok(Outcome {
                size,
                eta,
                eta_unweighted,
                max_angle,
                seconds: median(times),
                history,
            }));
        }
    }
    Ok(Err(history))
}

/// `σ_r / σ_1` of the reference.
pub fn sigma_ratio(reference: &Reference) -> f64 {
    let s = &reference.svd.s;
    s[s.len() - 1] / s[0]
}

/// Parses the spec's graph-input names (British or American spelling).
pub fn graph_input(name: &str) -> Result<GraphInput> {
    name.replace("normalised", "normalized")
        .parse::<GraphInput>()
        .map_err(|e| anyhow!(e))
}
