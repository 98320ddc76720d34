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
//!   `G Gᵀ` and `Gᵀ G`, Lanczos sub-problems, [`symmetric_nystrom_lanczos`]) and ours (asymmetric
//!   Nyström, RSVD at rank `r` for the sub-problem) grow `m` over `m_grid` (with `n = m`, uniform
//!   sampling; values at or above `N` become `N`, the exact case), each in order, once for all
//!   tolerances ([`scan`]): the kernel is built once per scan, the scan stops at the first size
//!   meeting the smallest tolerance, at the end of the grid, or when its attempts have used
//!   `scan_budget` seconds. `η` is not monotone in `m` (nor in the oversampling), so the grid is
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
//! matrix-free ([`low_rank_error`], [`optimal_low_rank_error`]): `‖G‖_F²` from the kernel's row
//! norms, `G_r` from the reference's singular values.
//!
//! Set `KSVD_TRACE=1` to print every attempt and timing to stderr.
use std::time::Instant;

use anyhow::{anyhow, Result};
use ksvd_kernels::graph::{bandwidth_rule, graph_samples, GraphInput};
use ksvd_kernels::{Kernel, KernelMatrix, Samples};
use ksvd_linalg::{CsrMatrix, LinearOperator, MatrixBlocks, MemoryBudget};
use ksvd_nystrom::{asymmetric_nystrom, uniform_indices, NystromError, NystromParams};
use ksvd_solvers::{
    auto_svd, eta_of, lanczos_svd_with_progress, low_rank_error, optimal_low_rank_error, randomized_svd,
    subspace_error, AutoChoice, AutoParams, EtaWeights, LanczosParams, RsvdParams, SvdResult,
};
use ndarray::{Array1, Array2, ArrayView2, ArrayViewMut2, Axis};

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

/// Accuracy of an approximation against the reference.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Accuracy {
    /// The paper's η (weights λ_i).
    pub eta: f64,
    /// η with unit weights.
    pub eta_unweighted: f64,
    /// Largest principal angle (radians) between the left or the right subspaces.
    pub max_angle: f64,
    /// Relative low-rank error `‖G − Ũ S̃ Ṽᵀ‖_F / ‖G − G_r‖_F` (1 is optimal).
    pub error_ratio: f64,
}

/// What an approximation of one kernel matrix is measured against: the reference SVD, `‖G‖_F²`
/// and the optimal rank-`r` error `‖G − G_r‖_F` it implies.
pub struct Truth<'a> {
    /// The reference (certified) rank-`r` SVD.
    pub svd: &'a SvdResult,
    /// `‖G‖_F²`.
    pub fro_sq: f64,
    /// `‖G − G_r‖_F = sqrt(‖G‖_F² − Σ_{i≤r} σ_i²)`.
    pub optimal_error: f64,
}

impl<'a> Truth<'a> {
    /// The truth of `g` given its reference SVD (`‖G‖_F²` in `O(nnz)` for the rank-one-plus-sparse
    /// SNE kernel).
    pub fn new(g: &KernelMatrix, svd: &'a SvdResult) -> Truth<'a> {
        let fro_sq: f64 = g.row_sq_norms().iter().sum();
        Truth {
            svd,
            fro_sq,
            optimal_error: optimal_low_rank_error(fro_sq, svd.s.view()),
        }
    }
}

impl Accuracy {
    /// Accuracy of `approx`, an approximation of `g`, against `truth`.
    pub fn of(g: &KernelMatrix, truth: &Truth<'_>, approx: &SvdResult) -> Result<Accuracy> {
        let reference = truth.svd;
        let err = low_rank_error(g, truth.fro_sq, approx.u.view(), approx.s.view(), approx.v.view())?;
        Ok(Accuracy {
            eta: eta_of(reference, approx, EtaWeights::SingularValues)?,
            eta_unweighted: eta_of(reference, approx, EtaWeights::Uniform)?,
            max_angle: subspace_error(reference, approx.u.view(), approx.v.view())?
                .min(1.0)
                .asin(),
            error_ratio: if truth.optimal_error > 0.0 {
                err / truth.optimal_error
            } else {
                f64::NAN
            },
        })
    }

    /// Every measure NaN (no output to measure).
    fn nan() -> Accuracy {
        Accuracy {
            eta: f64::NAN,
            eta_unweighted: f64::NAN,
            max_angle: f64::NAN,
            error_ratio: f64::NAN,
        }
    }

    /// The worse of two (componentwise maximum; NaN propagates).
    fn worst(self, o: Accuracy) -> Accuracy {
        let max = |a: f64, b: f64| if a.is_nan() || b.is_nan() { f64::NAN } else { a.max(b) };
        Accuracy {
            eta: max(self.eta, o.eta),
            eta_unweighted: max(self.eta_unweighted, o.eta_unweighted),
            max_angle: max(self.max_angle, o.max_angle),
            error_ratio: max(self.error_ratio, o.error_ratio),
        }
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
        let tsvd_accuracy = Accuracy::of(g, &self.truth(), &tsvd)?;
        self.own = Accuracy::of(g, &self.truth(), &self.svd)?;
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
    pub fn accuracy(&self, g: &KernelMatrix, approx: &SvdResult) -> Result<Accuracy> {
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

/// Median (mean of the two middle values for an even count; NaN when empty).
pub(crate) fn median(mut v: Vec<f64>) -> f64 {
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
                    let truth = Truth::new(g, &r);
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
        seconds: median(times.clone()),
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
        seconds: median(times.clone()),
        runs: times.len(),
    })
}

/// One run of `solver` at `size` on the built kernel; `None` when the sample is numerically rank
/// deficient (the solver cannot return `r` pairs).
fn attempt(g: &KernelMatrix, solver: Solver, size: usize, cfg: &RaceConfig, seed: u64) -> Result<Option<SvdResult>> {
    let n = g.nrows().min(g.ncols());
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
        Solver::SymNystrom => symmetric_nystrom_lanczos(g, r, size.min(n), seed, cfg.sym_tol)?,
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

/// One size tried by a scan.
#[derive(Debug, Clone, Copy)]
pub struct Attempt {
    /// Size parameter (m, or the oversampling).
    pub size: usize,
    /// Accuracy, `None` when the sample was rank deficient.
    pub accuracy: Option<Accuracy>,
    /// Seconds of the attempt (kernel prebuilt, not a timing).
    pub seconds: f64,
}

/// Why a scan stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// The smallest tolerance was met.
    Reached,
    /// Every size of the grid was tried.
    GridEnd,
    /// The attempts used the scan budget.
    Budget,
}

/// A solver's scan over its grid.
#[derive(Debug, Clone)]
pub struct Scan {
    /// The solver.
    pub solver: Solver,
    /// Every size tried, in order.
    pub attempts: Vec<Attempt>,
    /// Why it stopped.
    pub stop: Stop,
    /// The largest size of the grid.
    pub grid_max: usize,
}

impl Scan {
    /// The first attempt meeting `eps`.
    pub fn first_reaching(&self, eps: f64) -> Option<&Attempt> {
        self.attempts.iter().find(|a| a.accuracy.is_some_and(|x| x.eta <= eps))
    }

    /// The attempt with the smallest η.
    pub fn best(&self) -> Option<&Attempt> {
        self.attempts
            .iter()
            .filter(|a| a.accuracy.is_some_and(|x| x.eta.is_finite()))
            .min_by(|a, b| {
                let (x, y) = (
                    a.accuracy.map_or(f64::INFINITY, |x| x.eta),
                    b.accuracy.map_or(f64::INFINITY, |x| x.eta),
                );
                x.total_cmp(&y)
            })
    }
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
    let grid_max = sizes.last().copied().unwrap_or(0);
    let mut attempts = Vec::new();
    let mut used = 0.0;
    let mut stop = Stop::GridEnd;
    for size in sizes {
        if used >= cfg.scan_budget {
            stop = Stop::Budget;
            break;
        }
        let t = Instant::now();
        let out = attempt(g, solver, size, cfg, seed)?;
        let seconds = t.elapsed().as_secs_f64();
        used += seconds;
        let accuracy = out.as_ref().map(|s| reference.accuracy(g, s)).transpose()?;
        trace(format_args!("{} size {size}: {seconds:.3}s {accuracy:?}", solver.id()));
        attempts.push(Attempt {
            size,
            accuracy,
            seconds,
        });
        if accuracy.is_some_and(|a| a.eta <= eps_min) {
            stop = Stop::Reached;
            break;
        }
    }
    Ok(Scan {
        solver,
        attempts,
        stop,
        grid_max,
    })
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
            let out = attempt(&g, solver, size, cfg, seed)?;
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
        median(times.clone()),
        times.len()
    ));
    Ok(Timed {
        seconds: median(times.clone()),
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
    /// Not reached; the note says how far it got and why.
    Failed(String),
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
    let Some(hit) = scan.first_reaching(eps) else {
        let best = match scan.best() {
            Some(b) => format!(
                "best eta {:.4} at {what} = {} (unweighted {:.3}, largest principal angle {:.2} rad)",
                b.accuracy.map_or(f64::NAN, |a| a.eta),
                b.size,
                b.accuracy.map_or(f64::NAN, |a| a.eta_unweighted),
                b.accuracy.map_or(f64::NAN, |a| a.max_angle)
            ),
            None => "every sample tried was rank deficient".to_string(),
        };
        let last = scan.attempts.last().map_or(0, |a| a.size);
        let stopped = match scan.stop {
            Stop::Budget => format!(
                "scan stopped by its {:.0} s budget after {what} = {last} (grid up to {})",
                cfg.scan_budget, scan.grid_max
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
        return Ok(Verdict::Failed(format!(
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
        return Ok(Verdict::Failed(format!(
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
/// `≤ eps_of(row)`, every row of the same dataset, method, setting and seed becomes `failed` with
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
                r.status = Status::Failed;
                r.value = None;
                r.note = Some(match r.note.take() {
                    Some(n) => format!("{note}; {n}"),
                    None => note.clone(),
                });
            }
        }
    }
}

/// Parses the spec's graph-input names (British or American spelling).
pub fn graph_input(name: &str) -> Result<GraphInput> {
    name.replace("normalised", "normalized")
        .parse::<GraphInput>()
        .map_err(|e| anyhow!(e))
}

/// `G[I, :]` (`rows`) or `G[:, J]` of a kernel matrix as a matrix-free operator: products cost
/// `O(N + nnz)` through [`MatrixBlocks::block_mul`], nothing of size `m × N` is formed.
struct Slice<'a> {
    g: &'a KernelMatrix,
    idx: &'a [usize],
    all: Vec<usize>,
    rows: bool,
}

impl<'a> Slice<'a> {
    fn rows(g: &'a KernelMatrix, idx: &'a [usize]) -> Self {
        let all = (0..g.ncols()).collect();
        Slice {
            g,
            idx,
            all,
            rows: true,
        }
    }
    fn cols(g: &'a KernelMatrix, idx: &'a [usize]) -> Self {
        let all = (0..g.nrows()).collect();
        Slice {
            g,
            idx,
            all,
            rows: false,
        }
    }
    fn index_sets(&self) -> (&[usize], &[usize]) {
        if self.rows {
            (self.idx, &self.all)
        } else {
            (&self.all, self.idx)
        }
    }
}

/// Writes the block product `r` into `out` (its error is the product's).
fn write_block(r: ksvd_linalg::Result<Array2<f64>>, mut out: ArrayViewMut2<'_, f64>) -> ksvd_linalg::Result<()> {
    out.assign(&r?);
    Ok(())
}

impl LinearOperator for Slice<'_> {
    fn nrows(&self) -> usize {
        self.index_sets().0.len()
    }
    fn ncols(&self) -> usize {
        self.index_sets().1.len()
    }
    fn apply_into(&self, x: ArrayView2<'_, f64>, out: ArrayViewMut2<'_, f64>) -> ksvd_linalg::Result<()> {
        let (i, j) = self.index_sets();
        write_block(self.g.block_mul(i, j, x), out)
    }
    fn apply_transpose_into(&self, x: ArrayView2<'_, f64>, out: ArrayViewMut2<'_, f64>) -> ksvd_linalg::Result<()> {
        let (i, j) = self.index_sets();
        write_block(self.g.block_t_mul(i, j, x), out)
    }
}

/// Scales the columns of `a` to unit norm, largest-magnitude entry positive (the dense version's
/// sign convention).
fn unit_columns(mut a: Array2<f64>) -> Array2<f64> {
    for mut col in a.axis_iter_mut(Axis(1)) {
        let n = col.dot(&col).sqrt();
        let big = col.iter().fold(0.0f64, |b, &x| if x.abs() > b.abs() { x } else { b });
        if n > 0.0 {
            col /= if big < 0.0 { -n } else { n };
        }
    }
    a
}

/// The symmetric Nyström SVD baseline (Williams & Seeger on `K = G Gᵀ` for `U` and `K = Gᵀ G`
/// for `V`, as [`ksvd_nystrom::symmetric_nystrom_svd`]) with the paper's Lanczos sub-problem,
/// in a form that never builds `K`'s landmark columns.
///
/// With landmarks `I` and `B = G[I, :]`: `K[I, I] = B Bᵀ`, so its top eigenpairs are
/// `(σ_s², p_s)` from the SVD `B = P Σ Qᵀ`, and the Nyström extension
/// `ũ_s ∝ K[:, I] p_s / σ_s² = G Bᵀ p_s / σ_s² = G q_s / σ_s`. The top-`r` SVD of `B` is computed
/// by restarted Lanczos on the matrix-free `B` (relative residual `tol`), `U` by one product with
/// `G`; likewise `V` from `B' = G[:, J]`: `ṽ_s ∝ Gᵀ p'_s`. Singular values are
/// `sqrt(N/m) σ_s` of the left problem (eq. 15 of the appendix). In exact arithmetic this is the
/// dense method; it costs `O(r (N + nnz))` per Lanczos step instead of an `m × m` eigenproblem
/// and `N × m` Gram columns (infeasible at `m ~ 20000`). Landmarks are drawn exactly as in the
/// dense version. `Ok(None)` when the sample is numerically rank deficient
/// (`σ_r² ≤ ε m σ_1²`, the dense version's test).
pub fn symmetric_nystrom_lanczos(
    g: &KernelMatrix,
    rank: usize,
    landmarks: usize,
    seed: u64,
    tol: f64,
) -> Result<Option<SvdResult>> {
    let (n, m) = (g.nrows(), g.ncols());
    anyhow::ensure!(
        landmarks >= rank && landmarks <= n.min(m),
        "symmetric Nystrom: landmarks {landmarks} must lie in {rank}..={}",
        n.min(m)
    );
    let deficient = |s: &Array1<f64>| {
        let tiny = f64::EPSILON * landmarks as f64 * s[0] * s[0];
        s.iter().filter(|&&x| x * x > tiny && x > 0.0).count() < rank
    };
    // Left: K = G Gᵀ, landmarks I (the same indices as the dense version).
    let rows = uniform_indices(n, landmarks, seed);
    let (b, _) = lanczos_svd_with_progress(
        &Slice::rows(g, &rows),
        rank,
        &lanczos_params(rank, tol, seed),
        &mut |_| {},
    )?;
    if deficient(&b.s) {
        return Ok(None);
    }
    let u = unit_columns(g.apply((&b.v / &b.s).view())?);
    // Right: K = Gᵀ G, landmarks J.
    let right_seed = seed.wrapping_add(0x9e37_79b9);
    let cols = uniform_indices(m, landmarks, right_seed);
    let (b2, _) = lanczos_svd_with_progress(
        &Slice::cols(g, &cols),
        rank,
        &lanczos_params(rank, tol, right_seed),
        &mut |_| {},
    )?;
    if deficient(&b2.s) {
        return Ok(None);
    }
    let v = unit_columns(g.apply_transpose((&b2.u / &b2.s).view())?);
    let s = b.s.mapv(|x| x * (n as f64 / landmarks as f64).sqrt());
    Ok(Some(SvdResult::new(u, s, v)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ksvd_linalg::random;

    fn problem(n: usize, m: usize, seed: u64) -> KernelMatrix {
        let mut rng = random::rng_from_seed(seed);
        let x = random::gaussian_matrix(&mut rng, n, 5);
        let z = random::gaussian_matrix(&mut rng, m, 5);
        KernelMatrix::new(
            Samples::dense(x).unwrap(),
            Samples::dense(z).unwrap(),
            Kernel::Sne { gamma: 2.0 },
        )
        .unwrap()
    }

    /// The Lanczos form equals the dense symmetric Nyström method (same landmarks) up to the
    /// sub-problem tolerance, on a rectangular matrix, for several landmark counts.
    #[test]
    fn lanczos_symmetric_nystrom_matches_dense() {
        let g = problem(70, 60, 1);
        let r = 4;
        for m in [10, 25, 60] {
            let dense = ksvd_nystrom::symmetric_nystrom_svd(&g, r, m, m, 7).unwrap();
            let lz = symmetric_nystrom_lanczos(&g, r, m, 7, 1e-12).unwrap().unwrap();
            let rel = (&dense.s - &lz.s).mapv(f64::abs).sum() / dense.s.sum();
            assert!(rel < 1e-9, "m = {m}: singular values differ by {rel:e}");
            let err = subspace_error(&dense, lz.u.view(), lz.v.view()).unwrap();
            assert!(err < 1e-6, "m = {m}: subspaces differ (sin {err:e})");
            let eta = eta_of(&dense, &lz, EtaWeights::Uniform).unwrap();
            assert!(eta < 1e-8, "m = {m}: vectors differ (unweighted eta {eta:e})");
        }
    }

    /// With m = N = M the symmetric method is exact: it recovers the truncated SVD.
    #[test]
    fn lanczos_symmetric_nystrom_is_exact_at_full_size() {
        let g = problem(40, 40, 2);
        let r = 3;
        let exact = ksvd_solvers::dense_svd_operator(&g, r).unwrap();
        let lz = symmetric_nystrom_lanczos(&g, r, 40, 3, 1e-12).unwrap().unwrap();
        let rel = (&exact.s - &lz.s).mapv(f64::abs).sum() / exact.s.sum();
        assert!(rel < 1e-9, "{rel:e}");
        assert!(subspace_error(&exact, lz.u.view(), lz.v.view()).unwrap() < 1e-6);
    }

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
        use Status::{Failed, Ok as Fine};
        assert_eq!(st, vec![Failed, Failed, Failed, Fine, Fine, Fine, Failed, Fine]);
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
