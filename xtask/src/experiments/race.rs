//! The paper's solver-timing protocol (section 5.4, appendix C.2), shared by `timing` and `spectrum`.
//!
//! For one SNE kernel matrix `G` of a citation graph (`x_i` = out-row, `z_j` = in-column of the
//! transformed adjacency), rank `r`:
//!
//! * the reference is the rank-`r` truncated SVD by restarted Lanczos to a relative residual of
//!   `tsvd_tol` (the paper's TSVD "run to machine precision"); its time is TSVD's time. Its timing
//!   repeats restart Lanczos from other random start vectors, and the largest `η` of those runs
//!   against the reference is reported as the measure's *floor*: when the top-`r` subspace is not
//!   determined by the matrix (`σ_r ≈ σ_{r+1}`), no solver can be expected to get below it;
//! * RSVD grows its oversampling over `rsvd_oversampling_grid`, the symmetric Nyström method (on
//!   `G Gᵀ` and `Gᵀ G`, Lanczos sub-problems, [`ksvd_nystrom::symmetric_nystrom_lanczos`]) and
//!   ours (asymmetric Nyström, RSVD at rank `r` for the sub-problem) grow `m` over `m_grid` (with
//!   `n = m`, uniform sampling; values at or above `N` become `N`, the exact case), each in order,
//!   once for all tolerances ([`scan`], by [`ksvd_nystrom::grow_until`]): the kernel is built once
//!   per scan, the scan stops at the first size meeting the smallest tolerance, at the end of the
//!   grid, or when its attempts have used `scan_budget` seconds. `η` is not monotone in `m` (nor in the oversampling), so the grid is
//!   scanned in order rather than bisected, as the paper's "increase until `η ≤ ε`" prescribes;
//! * for every tolerance, the first size meeting it is timed ([`time_setting`]) end to end (kernel
//!   construction, i.e. norms, `X Zᵀ` and the exact SNE normalisers, included), `repeats` times or
//!   until `repeat_budget` seconds have been spent (at least once); the median is reported. The
//!   output of every timed run is checked again, and the worst `η` of those runs is the one
//!   reported and validated against `ε` ([`Verdict`]).
//!
//! Beside the paper's `η` (weights `λ_i`) every row reports the unweighted `η`, the largest
//! principal angle between the subspaces, which the paper's measure hides on row-stochastic
//! matrices (REPRODUCTION-NOTES §2), and the relative low-rank error
//! `‖G − Ũ S̃ Ṽᵀ‖_F / ‖G − G_r‖_F`, which stays meaningful when `σ_r ≈ σ_{r+1}` (any basis of a
//! cluster of equal singular values is then as good as the reference's). Both norms are computed
//! matrix-free (`ksvd_solvers::Accuracy`, from [`ksvd_solvers::low_rank_error`] and
//! [`optimal_low_rank_error`]): `‖G‖_F²` from the kernel's row norms, `G_r` from the reference's
//! singular values.
//!
//! Set `KSVD_TRACE=1` to print every attempt and timing to stderr.
use std::time::Instant;

use anyhow::{anyhow, Result};
use ksvd_kernels::graph::{bandwidth_rule, graph_samples, GraphInput};
use ksvd_kernels::{Kernel, KernelMatrix, Samples};
use ksvd_linalg::{CsrMatrix, LinearOperator, MemoryBudget};
use ksvd_metrics::median;
use ksvd_nystrom::{
    asymmetric_nystrom, grow_until, symmetric_nystrom_lanczos, Attempt, Growth, GrowthStop, NystromError, NystromParams,
};
use ksvd_solvers::{
    auto_svd, lanczos_svd_with_progress, optimal_low_rank_error, randomized_svd, Accuracy, AutoChoice, AutoParams,
    LanczosParams, RsvdParams, SvdResult, Truth,
};

use serde::{Deserialize, Serialize};

use crate::rows::{Row, Status};

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
    /// Metric id of the size parameter the solver grows.
    pub fn size_metric(self) -> &'static str {
        match self {
            Solver::Rsvd => "oversampling",
            _ => "m",
        }
    }
}

/// The scan and timing settings of a race as a spec states them (`[params.race]` of the
/// `timing` and `spectrum` specs); [`RaceParams::config`] adds the rank and the symmetric
/// sub-problems' tolerance.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RaceParams {
    /// Open: m values tried, in order (values at or above N become N).
    pub m_grid: Vec<usize>,
    /// Open: RSVD oversampling values tried, in order.
    pub rsvd_oversampling_grid: Vec<usize>,
    /// Open: RSVD power iterations.
    pub rsvd_power_iterations: usize,
    /// Open: timing repetitions of the selected setting (median reported).
    pub repeats: usize,
    /// Timing repetitions stop once they have used this many seconds (at least one run; two for
    /// the TSVD, whose second run gives the measure's floor).
    pub repeat_budget_seconds: f64,
    /// A solver's scan over its grid stops once its attempts have used this many seconds (the row
    /// is then `unmet` with a note saying where it stopped).
    pub scan_budget_seconds: f64,
    /// Relative residual tolerance of the TSVD reference ("machine precision" in the paper).
    pub tsvd_tol: f64,
}

impl RaceParams {
    /// The race of rank `rank` with these settings, the symmetric Nyström method's Lanczos
    /// sub-problems solved to relative residual `sym_tol`.
    pub fn config(&self, rank: usize, sym_tol: f64) -> RaceConfig {
        RaceConfig {
            rank,
            m_grid: self.m_grid.clone(),
            oversampling_grid: self.rsvd_oversampling_grid.clone(),
            power_iters: self.rsvd_power_iterations,
            repeats: self.repeats,
            repeat_budget: self.repeat_budget_seconds,
            scan_budget: self.scan_budget_seconds,
            tsvd_tol: self.tsvd_tol,
            sym_tol,
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
    /// Timing repeats stop once they have used this many seconds (at least one run; the TSVD at
    /// least two, the second giving the floor).
    pub repeat_budget: f64,
    /// A scan stops once its attempts have used this many seconds.
    pub scan_budget: f64,
    /// Relative residual tolerance of the TSVD reference.
    pub tsvd_tol: f64,
    /// Relative residual tolerance of the symmetric Nyström method's Lanczos sub-problems.
    pub sym_tol: f64,
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

    /// The kernel matrix (what every timed run builds first).
    pub fn build(&self) -> Result<KernelMatrix> {
        Ok(KernelMatrix::new(self.x.clone(), self.z.clone(), self.kernel)?)
    }
}

/// The reference solution, its time, and the measure's floor.
pub struct Reference {
    /// Rank-r truncated SVD (Lanczos from the cell's seed).
    pub svd: SvdResult,
    /// `‖G‖_F²`.
    pub fro_sq: f64,
    /// `‖G − G_r‖_F` from `‖G‖_F²` and the reference's singular values.
    pub optimal_error: f64,
    /// Accuracy of the reference itself ([`Accuracy::of`] with `approx` = the reference: `η` 0,
    /// error ratio 1 up to rounding).
    pub own: Accuracy,
    /// Median end-to-end seconds (kernel construction included) over `runs` runs.
    pub seconds: f64,
    /// Timed runs.
    pub runs: usize,
    /// Largest number of products with `G` or `Gᵀ` of a run.
    pub products: usize,
    /// Worst accuracy of the TSVD runs from other start vectors against the reference (`None` with
    /// a single run).
    pub floor: Option<Accuracy>,
}

impl Reference {
    /// The same timed TSVD runs, measured against a certified SVD of the same matrix instead of
    /// the TSVD's own first run (one-vector Lanczos can skip copies of a repeated value and
    /// still meet its residual tolerance). Returns the new reference and the accuracy of the
    /// TSVD's first run against it.
    pub fn certified_by(mut self, g: &KernelMatrix, svd: SvdResult) -> Result<(Reference, Accuracy)> {
        let tsvd = std::mem::replace(&mut self.svd, svd);
        self.optimal_error = optimal_low_rank_error(self.fro_sq, self.svd.s.view());
        let tsvd_accuracy = self.accuracy(g, &tsvd)?;
        self.own = self.accuracy(g, &self.svd)?;
        Ok((self, tsvd_accuracy))
    }

    /// What approximations are measured against.
    pub fn truth(&self) -> Truth<'_> {
        Truth {
            svd: &self.svd,
            fro_sq: self.fro_sq,
            optimal_error: self.optimal_error,
        }
    }

    /// Accuracy of `approx`, an approximation of `g` (the problem's kernel matrix).
    pub fn accuracy(&self, g: &KernelMatrix, approx: &SvdResult) -> ksvd_solvers::Result<Accuracy> {
        Accuracy::of(g, &self.truth(), approx)
    }

    /// `σ_r / σ_1`.
    pub fn sigma_ratio(&self) -> f64 {
        let s = &self.svd.s;
        s[s.len() - 1] / s[0]
    }

    /// `(σ_2 − σ_r) / σ_2`: how tightly the trailing singular values cluster.
    pub fn tail_spread(&self) -> f64 {
        let s = &self.svd.s;
        if s.len() < 3 || s[1] <= 0.0 {
            return f64::NAN;
        }
        (s[1] - s[s.len() - 1]) / s[1]
    }

    /// The paper's η when the dominant pair is exact and pairs `2..r` are orthogonal to the
    /// reference's: `(2/r) Σ_{i≥2} σ_i`. Tolerances above it are met by the first pair alone.
    pub fn tail_eta(&self) -> f64 {
        let s = &self.svd.s;
        2.0 * s.iter().skip(1).sum::<f64>() / s.len() as f64
    }

    /// One sentence on the spectrum and the floor, for notes.
    pub fn describe(&self) -> String {
        let r = self.svd.s.len();
        let mut d = format!(
            "spectrum: sigma_1 = {:.4}, sigma_2..sigma_{r} within a relative {:.1e} of each other, eta with pair 1 exact and pairs 2..{r} orthogonal = {:.4}",
            self.svd.s[0],
            self.tail_spread(),
            self.tail_eta()
        );
        if let Some(f) = self.floor {
            d.push_str(&format!(
                "; TSVD from other start vectors vs the TSVD's first run: eta {:.4}, largest principal angle {:.2} rad",
                f.eta, f.max_angle
            ));
        }
        d
    }
}

fn trace(args: std::fmt::Arguments<'_>) {
    if std::env::var_os("KSVD_TRACE").is_some() {
        eprintln!("[race] {args}");
    }
}

/// Whether another timing repeat is due after `times` (run at least `min` times, at most
/// `repeats`, and stop once `budget` seconds have been used).
fn more_repeats(times: &[f64], min: usize, cfg: &RaceConfig) -> bool {
    times.len() < min || (times.len() < cfg.repeats.max(1) && times.iter().sum::<f64>() < cfg.repeat_budget)
}

/// Runs `run` (kernel construction and solve, timed end to end) until [`more_repeats`] says
/// stop, and hands each run's index, seconds, kernel and output to `after`, outside the timed
/// region. Returns the times.
fn timed_runs<T>(
    cfg: &RaceConfig,
    min: usize,
    mut run: impl FnMut(usize) -> Result<(KernelMatrix, T)>,
    mut after: impl FnMut(usize, f64, &KernelMatrix, T) -> Result<()>,
) -> Result<Vec<f64>> {
    let mut times = Vec::new();
    while more_repeats(&times, min, cfg) {
        let t = Instant::now();
        let (g, out) = run(times.len())?;
        let secs = t.elapsed().as_secs_f64();
        times.push(secs);
        after(times.len() - 1, secs, &g, out)?;
    }
    Ok(times)
}

fn lanczos_params(rank: usize, tol: f64, seed: u64) -> LanczosParams {
    LanczosParams {
        tol,
        max_restarts: 20_000,
        // One-vector thick-restart Lanczos (IRLBA-like, as ARPACK/PROPACK), Krylov dimension
        // max(3r, r + 40) (60 at r = 20): on the flat, clustered SNE spectra of these graphs
        // Krylov degree matters more than block width (wide blocks stall on Pubmed).
        work_dim: Some((3 * rank).max(rank + 40)),
        seed,
        block_size: Some(1),
    }
}

/// Computes the TSVD reference (Lanczos from `seed`), timed end to end; further timing runs
/// restart from other start vectors and give [`Reference::floor`].
pub fn reference(p: &Problem, cfg: &RaceConfig, seed: u64) -> Result<Reference> {
    // The first run's SVD, ‖G‖_F², optimal error and own accuracy (measured outside the timing).
    let mut first: Option<(SvdResult, f64, f64, Accuracy)> = None;
    let mut floor: Option<Accuracy> = None;
    let mut products = 0;
    let run_seed = |i: usize| seed.wrapping_add(0x5eed_0000_u64.wrapping_mul(i as u64));
    let times = timed_runs(
        cfg,
        2,
        |i| {
            let g = p.build()?;
            let out = lanczos_svd_with_progress(
                &g,
                cfg.rank,
                &lanczos_params(cfg.rank, cfg.tsvd_tol, run_seed(i)),
                &mut |_| {},
            )?;
            Ok((g, out))
        },
        |i, secs, g, (r, st)| {
            products = products.max(st.matvecs);
            trace(format_args!(
                "tsvd run {} (seed {}): {secs:.3}s, {} restarts, {} products",
                i + 1,
                run_seed(i),
                st.restarts,
                st.matvecs
            ));
            match &first {
                None => {
                    let truth = Truth::new(g.row_sq_norms()?.iter().sum(), &r);
                    let (fro_sq, opt) = (truth.fro_sq, truth.optimal_error);
                    let own = Accuracy::of(g, &truth, &r)?;
                    first = Some((r, fro_sq, opt, own));
                }
                Some((reference, fro_sq, opt, _)) => {
                    let truth = Truth {
                        svd: reference,
                        fro_sq: *fro_sq,
                        optimal_error: *opt,
                    };
                    let a = Accuracy::of(g, &truth, &r)?;
                    floor = Some(floor.map_or(a, |f| f.worst(a)));
                }
            }
            Ok(())
        },
    )?;
    let (svd, fro_sq, optimal_error, own) = first.ok_or_else(|| anyhow!("no reference computed"))?;
    Ok(Reference {
        svd,
        fro_sq,
        optimal_error,
        own,
        seconds: median(&times).unwrap_or(f64::NAN),
        runs: times.len(),
        products,
        floor,
    })
}

/// The default solver's certified rank-`r` SVD ([`auto_svd`] at the TSVD's tolerance, the
/// experiments' fixed memory budget), timed end to end like the reference.
pub struct Certified {
    /// The SVD (every triplet within the tolerance).
    pub svd: SvdResult,
    /// Which method the default solver used.
    pub choice: AutoChoice,
    /// Median end-to-end seconds (kernel construction included) over `runs` runs.
    pub seconds: f64,
    /// Timed runs.
    pub runs: usize,
}

/// Runs and times the default solver (see [`Certified`]).
pub fn certified(p: &Problem, cfg: &RaceConfig, seed: u64) -> Result<Certified> {
    let params = AutoParams {
        tol: cfg.tsvd_tol,
        seed,
        budget: MemoryBudget::fixed(),
    };
    let mut first = None;
    let times = timed_runs(
        cfg,
        1,
        |_| {
            let g = p.build()?;
            let out = auto_svd(&g, cfg.rank, &params, &mut |_| {})?;
            Ok((g, out))
        },
        |i, secs, _, (svd, choice)| {
            trace(format_args!("certified run {}: {secs:.3}s ({choice:?})", i + 1));
            first.get_or_insert((svd, choice));
            Ok(())
        },
    )?;
    let (svd, choice) = first.ok_or_else(|| anyhow!("no certified run"))?;
    Ok(Certified {
        svd,
        choice,
        seconds: median(&times).unwrap_or(f64::NAN),
        runs: times.len(),
    })
}

/// One run of `solver` at `size` on the built kernel ([`NystromError::RankDeficientSample`] when
/// the sample is numerically rank deficient: the solver cannot return `r` pairs).
fn attempt(
    g: &KernelMatrix,
    solver: Solver,
    size: usize,
    cfg: &RaceConfig,
    seed: u64,
) -> ksvd_nystrom::Result<SvdResult> {
    let n = g.nrows().min(g.ncols());
    let r = cfg.rank;
    Ok(match solver {
        Solver::Rsvd => randomized_svd(
            g,
            r,
            &RsvdParams {
                oversampling: size,
                power_iters: cfg.power_iters,
                seed,
            },
        )?,
        Solver::SymNystrom => {
            symmetric_nystrom_lanczos(g, r, size.min(n), seed, &lanczos_params(r, cfg.sym_tol, seed))?
        }
        Solver::AsymNystrom => {
            let params = NystromParams::new(r, size.min(n))
                .seed(seed)
                .inner(ksvd_nystrom::InnerSolver::Rsvd {
                    oversampling: 10,
                    power_iters: cfg.power_iters,
                });
            asymmetric_nystrom(g, &params)?.svd
        }
    })
}

/// The sizes a solver tries, increasing: oversamplings with `r + o ≤ min(N, M)`; landmark counts
/// `≥ r`, those at or above `min(N, M)` replaced by it (the exact case), without repeats.
pub fn grid(solver: Solver, cfg: &RaceConfig, n: usize) -> Vec<usize> {
    let mut g: Vec<usize> = match solver {
        Solver::Rsvd => cfg
            .oversampling_grid
            .iter()
            .copied()
            .filter(|&o| cfg.rank + o <= n)
            .collect(),
        _ => cfg
            .m_grid
            .iter()
            .map(|&m| m.min(n))
            .filter(|&m| m >= cfg.rank)
            .collect(),
    };
    g.sort_unstable();
    g.dedup();
    g
}

/// A solver's scan over its grid ([`ksvd_nystrom::grow_until`]).
#[derive(Debug, Clone)]
pub struct Scan {
    /// The solver.
    pub solver: Solver,
    /// Every size tried, where and why the scan stopped.
    pub growth: Growth<SvdResult>,
}

/// Scans `solver`'s grid in order on the kernel `g` (built once) until `η ≤ eps_min`, the end of
/// the grid, or the scan budget.
pub fn scan(
    g: &KernelMatrix,
    reference: &Reference,
    solver: Solver,
    eps_min: f64,
    cfg: &RaceConfig,
    seed: u64,
) -> Result<Scan> {
    let sizes = grid(solver, cfg, g.nrows().min(g.ncols()));
    let growth = grow_until(
        &sizes,
        eps_min,
        cfg.scan_budget,
        |size| attempt(g, solver, size, cfg, seed),
        |svd| Ok(reference.accuracy(g, svd)?),
    )?;
    for a in &growth.attempts {
        trace(format_args!(
            "{} size {}: {:.3}s {:?}",
            solver.id(),
            a.size,
            a.seconds,
            a.accuracy
        ));
    }
    Ok(Scan { solver, growth })
}

/// The timing of one setting.
#[derive(Debug, Clone, Copy)]
pub struct Timed {
    /// Median end-to-end seconds.
    pub seconds: f64,
    /// Timed runs.
    pub runs: usize,
    /// Worst accuracy over the timed runs' outputs (checked outside the timed region).
    pub accuracy: Accuracy,
}

/// Times `solver` at `size` end to end (kernel construction included), `repeats` times or until
/// the repeat budget; the accuracy of every run's output is checked afterwards.
pub fn time_setting(
    p: &Problem,
    reference: &Reference,
    solver: Solver,
    size: usize,
    cfg: &RaceConfig,
    seed: u64,
) -> Result<Timed> {
    let mut worst: Option<Accuracy> = None;
    let times = timed_runs(
        cfg,
        1,
        |_| {
            let g = p.build()?;
            let out = match attempt(&g, solver, size, cfg, seed) {
                Ok(svd) => Some(svd),
                Err(NystromError::RankDeficientSample { .. }) => None,
                Err(e) => return Err(e.into()),
            };
            Ok((g, out))
        },
        |_, _, g, out| {
            let a = match out {
                Some(s) => reference.accuracy(g, &s)?,
                None => Accuracy::nan(),
            };
            worst = Some(worst.map_or(a, |w| w.worst(a)));
            Ok(())
        },
    )?;
    let accuracy = worst.ok_or_else(|| anyhow!("no timing run"))?;
    trace(format_args!(
        "{} size {size} timed: median {:.4}s over {} runs, worst {accuracy:?}",
        solver.id(),
        median(&times).unwrap_or(f64::NAN),
        times.len()
    ));
    Ok(Timed {
        seconds: median(&times).unwrap_or(f64::NAN),
        runs: times.len(),
        accuracy,
    })
}

/// Outcome of a solver at one tolerance.
#[derive(Debug, Clone)]
pub enum Verdict {
    /// `η ≤ ε` held at `size` in the scan and in every timed run.
    Ok {
        /// The size selected.
        size: usize,
        /// Its timing (with the worst accuracy of the timed runs).
        timed: Timed,
        /// Caveat for the note (e.g. met through the dominant pair only), if any.
        caveat: Option<String>,
    },
    /// `η ≤ ε` not reached (status `unmet`); the note says how far it got and why.
    Unmet(String),
}

/// Times the first setting of `scan` meeting `eps` and validates it: the row is `ok` only if every
/// timed run also meets `η ≤ ε`.
pub fn verdict(
    p: &Problem,
    reference: &Reference,
    scan: &Scan,
    eps: f64,
    cfg: &RaceConfig,
    seed: u64,
    timings: &mut Vec<(usize, Timed)>,
) -> Result<Verdict> {
    let what = scan.solver.size_metric();
    let growth = &scan.growth;
    let Some(hit) = growth.first_reaching(eps) else {
        let best = match growth.best() {
            Some(b) => format!(
                "best eta {:.4} at {what} = {} (unweighted {:.3}, largest principal angle {:.2} rad)",
                b.accuracy.map_or(f64::NAN, |a| a.eta),
                b.size,
                b.accuracy.map_or(f64::NAN, |a| a.eta_unweighted),
                b.accuracy.map_or(f64::NAN, |a| a.max_angle)
            ),
            None => "every sample tried was rank deficient".to_string(),
        };
        let last = growth.attempts.last().map_or(0, |a: &Attempt| a.size);
        let stopped = match growth.stop {
            GrowthStop::Budget => format!(
                "scan stopped by its {:.0} s budget after {what} = {last} (grid up to {})",
                cfg.scan_budget, growth.largest
            ),
            _ => format!("grid exhausted up to {what} = {last}"),
        };
        let r = cfg.rank;
        let why = match reference.floor {
            Some(f) if f.eta > eps => format!(
                "eps is below the measure's floor: TSVD restarted from another start vector gets eta {:.4} (largest principal angle {:.2} rad), so the top-{r} subspace is not determined by the matrix (sigma_{r} ~ sigma_{}); sigma_2..sigma_{r} lie within a relative {:.1e}",
                f.eta,
                f.max_angle,
                r + 1,
                reference.tail_spread()
            ),
            _ if eps < reference.tail_eta() => format!(
                "eps needs pairs 2..{r} resolved, but sigma_2..sigma_{r} lie within a relative {:.1e} of each other (eta with pair 1 exact and pairs 2..{r} orthogonal: {:.4})",
                reference.tail_spread(),
                reference.tail_eta()
            ),
            _ => reference.describe(),
        };
        return Ok(Verdict::Unmet(format!(
            "eta <= {eps} not reached: {best}; {stopped}. Likely cause: {why}"
        )));
    };
    let timed = match timings.iter().find(|(s, _)| *s == hit.size) {
        Some((_, t)) => *t,
        None => {
            let t = time_setting(p, reference, scan.solver, hit.size, cfg, seed)?;
            timings.push((hit.size, t));
            t
        }
    };
    let a = timed.accuracy;
    if !meets(a.eta, eps) {
        return Ok(Verdict::Unmet(format!(
            "eta <= {eps} met in the scan at {what} = {} but not by every timed run (worst eta {:.4})",
            hit.size, a.eta
        )));
    }
    let caveat = (a.max_angle > 0.5).then(|| {
        let tail = reference.tail_eta();
        let how = if tail <= eps {
            format!("with pair 1 exact and pairs 2..{} orthogonal eta would be {tail:.4}, already <= eps", cfg.rank)
        } else {
            format!(
                "with pair 1 exact and pairs 2..{} orthogonal eta would be {tail:.4}; chance alignment inside the cluster of nearly equal sigma_2..sigma_{} brought it under eps",
                cfg.rank, cfg.rank
            )
        };
        format!(
            "eta <= {eps} met through the dominant pair only: pairs 2..{} are not resolved (unweighted eta {:.3}, largest principal angle {:.2} rad); {how}",
            cfg.rank, a.eta_unweighted, a.max_angle
        )
    });
    Ok(Verdict::Ok {
        size: hit.size,
        timed,
        caveat,
    })
}

/// `η ≤ ε`, false for NaN.
fn meets(eta: f64, eps: f64) -> bool {
    eta <= eps
}

/// The invariant, checked on the finished rows: every `ok` solver result has `η ≤ ε`.
/// For each `ok` row with metric `eta` of a solver (not the `tsvd` reference) whose value is not
/// `≤ eps_of(row)`, every row of the same dataset, method, setting and seed becomes `unmet` with
/// a note saying so (its value is dropped); the `speedup` row too when RSVD or ours is affected.
pub fn enforce_eta(rows: &mut [Row], eps_of: impl Fn(&Row) -> Option<f64>) {
    let bad: Vec<(String, String, String, Option<u64>, String)> = rows
        .iter()
        .filter(|r| r.status == Status::Ok && r.metric == "eta" && r.method != "tsvd")
        .filter_map(|r| {
            let eps = eps_of(r)?;
            let v = r.value.unwrap_or(f64::NAN);
            (!meets(v, eps)).then(|| {
                (
                    r.dataset.clone(),
                    r.method.clone(),
                    r.setting.clone(),
                    r.seed,
                    format!("validation: eta {v:.4} > eps {eps}: the result does not meet the tolerance"),
                )
            })
        })
        .collect();
    for (dataset, method, setting, seed, note) in bad {
        let speedup_hit = method == "rsvd" || method == "asym_nystrom";
        for r in rows.iter_mut() {
            let same = r.dataset == dataset && r.setting == setting && r.seed == seed;
            let hit = same && (r.method == method || (speedup_hit && r.metric == "speedup"));
            if hit && r.status == Status::Ok {
                r.status = Status::Unmet;
                r.value = None;
                r.note = Some(match r.note.take() {
                    Some(n) => format!("{note}; {n}"),
                    None => note.clone(),
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A solver row with eta above its tolerance is downgraded with its whole group (and the
    /// speed-up); rows meeting it, other seeds and the reference are untouched.
    #[test]
    fn enforce_eta_downgrades_rows_above_eps() {
        let mk =
            |m: &str, metric: &str, v: f64, seed: u64| Row::ok("cora", m, metric, v).setting("eps=0.01").seed(seed);
        let mut rows = vec![
            mk("asym_nystrom", "eta", 0.02, 0),
            mk("asym_nystrom", "seconds", 0.1, 0),
            mk("asym_nystrom", "speedup", 2.0, 0),
            mk("asym_nystrom", "eta", 0.005, 1),
            mk("rsvd", "eta", 0.009, 0),
            mk("rsvd", "seconds", 0.2, 0),
            mk("sym_nystrom", "eta", f64::NAN, 0),
            mk("tsvd", "eta", 0.5, 0),
        ];
        enforce_eta(&mut rows, |r| {
            r.setting.strip_prefix("eps=").and_then(|e| e.parse().ok())
        });
        let st: Vec<Status> = rows.iter().map(|r| r.status).collect();
        use Status::{Ok as Fine, Unmet};
        assert_eq!(st, vec![Unmet, Unmet, Unmet, Fine, Fine, Fine, Unmet, Fine]);
        assert!(rows[1].value.is_none() && rows[1].note.as_deref().unwrap().contains("validation"));
    }

    #[test]
    fn grid_clamps_to_the_exact_size_and_dedups() {
        let cfg = RaceConfig {
            rank: 20,
            m_grid: vec![10, 50, 100, 3000, 4000],
            oversampling_grid: vec![0, 10, 2688, 2689],
            power_iters: 2,
            repeats: 1,
            repeat_budget: 1.0,
            scan_budget: 1.0,
            tsvd_tol: 1e-10,
            sym_tol: 1e-10,
        };
        assert_eq!(grid(Solver::AsymNystrom, &cfg, 2708), vec![50, 100, 2708]);
        assert_eq!(grid(Solver::Rsvd, &cfg, 2708), vec![0, 10, 2688]);
    }

    #[test]
    fn repeats_respect_count_budget_and_minimum() {
        let cfg = RaceConfig {
            rank: 2,
            m_grid: vec![],
            oversampling_grid: vec![],
            power_iters: 0,
            repeats: 5,
            repeat_budget: 10.0,
            scan_budget: 0.0,
            tsvd_tol: 1e-10,
            sym_tol: 1e-10,
        };
        assert!(more_repeats(&[], 1, &cfg));
        assert!(more_repeats(&[1.0; 4], 1, &cfg));
        assert!(!more_repeats(&[1.0; 5], 1, &cfg));
        assert!(!more_repeats(&[11.0], 1, &cfg));
        assert!(more_repeats(&[11.0], 2, &cfg));
        assert!(!more_repeats(&[11.0, 11.0], 2, &cfg));
    }
}
