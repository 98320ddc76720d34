//! The default solver: a dense SVD when that is cheapest and fits the memory budget, restarted
//! block Lanczos otherwise, and, for sparse-plus-low-rank matrices (graph kernels) on which a
//! short Krylov run stalls or meets a value repeated as often as its block is wide, shift-invert
//! subspace iteration with a certified count of the values above the shift
//! ([`crate::shift_invert_svd`]) at small ranks and spectrum slicing ([`crate::slice_svd`]) at
//! larger ones. Where a first Krylov attempt stalls on a matrix whose dense SVD costs too much,
//! the eigendecomposition of its Gram matrix ([`crate::gram_svd_operator`]) when it fits the
//! budget and certifies, narrower Krylov blocks otherwise. Either way the result meets the
//! tolerance (explicit residuals) or the call fails.
use crate::error::Result;
use crate::krylov::{orthogonality, Stall, ORTHOGONALITY_TOL};
use crate::lanczos::{check_tol, default_block, lanczos_svd_with_progress, lanczos_with_stall, LanczosParams};
use crate::shift_invert::{shift_invert_svd, ShiftInvertParams};
use crate::slicing::{slice_svd, SliceParams};
use crate::svd::{check_rank, dense_svd_numbers, dense_svd_operator, gram_svd_above, gram_svd_numbers, SvdResult};
use crate::SolverError;
use ksvd_linalg::dense;
use ksvd_linalg::{LinearOperator, LowRankUpdate, MemoryBudget, ProgressFn};
use ndarray::{Array2, Axis};

/// Parameters of [`auto_svd`].
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct AutoParams {
    /// Relative residual tolerance every returned triplet meets (see [`crate::Residuals`]).
    pub tol: f64,
    /// Seed of the Krylov start block.
    pub seed: u64,
    /// Memory the dense path may use (`G` plus its factors).
    pub budget: MemoryBudget,
}

impl Default for AutoParams {
    fn default() -> Self {
        AutoParams {
            tol: 1e-8,
            seed: 0,
            budget: MemoryBudget::auto(),
        }
    }
}

/// Which method [`auto_svd`] used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum AutoChoice {
    /// Dense SVD of the materialised matrix.
    Dense,
    /// Restarted block Lanczos.
    Lanczos,
    /// Shift-invert subspace iteration with an inertia count (sparse-plus-low-rank `G` whose
    /// Krylov runs stall or meet a value repeated as often as the block is wide).
    ShiftInvert,
    /// Spectrum slicing ([`crate::slice_svd`]): the same matrices at ranks above
    /// the shift-invert iteration's, where the rank cuts through a flat band.
    Slicing,
    /// The eigendecomposition of the Gram matrix of the materialised matrix
    /// ([`crate::gram_svd_operator`]), after a stalled Krylov attempt on a matrix whose dense SVD
    /// costs too much (see [`auto_svd`]).
    Gram,
}

/// Floating-point work of a dense thin SVD of an `n × m` matrix (Golub–Van Loan's R-SVD count,
/// rounded) and of block Lanczos (about ten passes of `r + b` vectors over `G`, plus basis work).
fn costs(n: usize, m: usize, rank: usize, block: usize) -> (f64, f64) {
    let (big, k) = (n.max(m) as f64, n.min(m) as f64);
    let dense = 4.0 * big * k * k + 22.0 * k * k * k;
    let w = (2 * rank + 3 * block) as f64;
    let krylov =
        10.0 * (rank + block) as f64 * 4.0 * n as f64 * m as f64 + 10.0 * (n + m) as f64 * w * w + 20.0 * w * w * w;
    (dense, krylov)
}

/// Which method [`auto_svd`] picks for an `n × m` operator at rank `rank`.
pub fn auto_choice(n: usize, m: usize, rank: usize, budget: &MemoryBudget) -> AutoChoice {
    let k = n.min(m);
    let block = default_block(rank);
    let basis_fills_space = 2 * rank + 3 * block >= k;
    let (dense, krylov) = costs(n, m, rank, block);
    // Below a few hundred columns the Krylov bookkeeping costs more than the whole dense SVD.
    let small = k <= 256;
    // The Krylov estimate assumes a decaying spectrum; flat ones (graph kernels) take many times
    // more passes, so within a factor DENSE_MARGIN the dense SVD, whose cost is known, wins.
    if dense_fits(n, m, budget) && (small || basis_fills_space || dense <= DENSE_MARGIN * krylov) {
        AutoChoice::Dense
    } else {
        AutoChoice::Lanczos
    }
}

/// How much more than the Krylov estimate a dense SVD may cost and still be chosen.
const DENSE_MARGIN: f64 = 4.0;

/// Floating-point work of the Gram route ([`gram_svd_operator`]) for an `n × m` matrix,
/// `k = min(n, m)`: the Gram product (`2 n m k`) and its eigendecomposition with vectors (about
/// `12 k³`; faer at order 10106 on two cores: 22 s and 127 s).
fn gram_cost(n: usize, m: usize) -> f64 {
    let (big, k) = (n.max(m) as f64, n.min(m) as f64);
    2.0 * big * k * k + 12.0 * k * k * k
}

/// How much more than the Krylov estimate the Gram route may cost after a stalled first
/// attempt. A stall shows that the estimate (about ten passes) is far too low for this spectrum:
/// the narrow-block fallback then takes tens of estimates (BlogCatalog's SNE kernel at rank 250,
/// order 10106: 620 s, about 28 estimates at the first attempt's pace, where the Gram route costs
/// 11 and took 149 s).
const STALLED_GRAM_MARGIN: f64 = 20.0;

/// After a stalled first Krylov attempt on a matrix that is not sparse-plus-low-rank (for those
/// the cost model's dense passes overstate Krylov's cost, and the Gram route would densify them)
/// and whose dense SVD was not taken: the Gram route when it fits the budget and costs at most
/// [`STALLED_GRAM_MARGIN`] Krylov estimates, kept if it certifies (every residual within `tol`,
/// orthonormal bases). `None` leaves the matrix to the narrow-block fallback, also when the Gram
/// route fails (the fallback certifies or reports).
fn gram_after_stall<O: LinearOperator + ?Sized>(
    op: &O,
    rank: usize,
    block: usize,
    params: &AutoParams,
) -> Option<SvdResult> {
    let (n, m) = (op.nrows(), op.ncols());
    let (_, krylov) = costs(n, m, rank, block);
    if !params.budget.fits_f64(gram_svd_numbers(n, m, rank)) || gram_cost(n, m) > STALLED_GRAM_MARGIN * krylov {
        return None;
    }
    // Any failure (beyond the machine's memory although within the caller's budget, a Gram
    // matrix that overflows, an eigendecomposition that does not converge) leaves the matrix to
    // the fallback, and so do Gram eigenvalues that put `σ_rank` too far below `σ₁` for the
    // route ([`gram_floor`]; given up before its Rayleigh–Ritz step).
    let r = gram_svd_above(op, rank, Some(params.tol)).ok()?;
    let certified = r.max_residual().is_some_and(|x| x <= params.tol) && orthogonality(&r) <= ORTHOGONALITY_TOL;
    certified.then_some(r)
}

/// Whether `G`, its copy inside the factorisation, and the thin factors fit the budget.
fn dense_fits(n: usize, m: usize, budget: &MemoryBudget) -> bool {
    budget.fits_f64(dense_svd_numbers(n, m))
}

/// A dense SVD, certified: every residual at most `tol`.
fn dense_certified<O: LinearOperator + ?Sized>(op: &O, rank: usize, tol: f64) -> Result<SvdResult> {
    let r = dense_svd_operator(op, rank)?;
    let residual = r.max_residual().unwrap_or(0.0);
    if residual > tol {
        return Err(SolverError::NotConverged {
            solver: "dense SVD",
            iterations: 0,
            residual,
            tol,
        });
    }
    Ok(r)
}

/// The top-`rank` SVD of `op` by the cheapest certified method (see [`auto_choice`]). Every
/// triplet of the result has residuals at most `tol · s_1`; otherwise the call fails with
/// [`SolverError::NotConverged`].
pub fn auto_svd<O: LinearOperator + ?Sized>(
    op: &O,
    rank: usize,
    params: &AutoParams,
    progress: &mut ProgressFn<'_>,
) -> Result<(SvdResult, AutoChoice)> {
    let (n, m) = (op.nrows(), op.ncols());
    check_rank(n, m, rank)?;
    check_tol(params.tol)?;
    match auto_choice(n, m, rank, &params.budget) {
        AutoChoice::Dense => Ok((dense_certified(op, rank, params.tol)?, AutoChoice::Dense)),
        // `auto_choice` picks Dense or Lanczos; the spectral transformations and the Gram route
        // start from Lanczos.
        AutoChoice::Lanczos | AutoChoice::ShiftInvert | AutoChoice::Slicing | AutoChoice::Gram => {
            let k = n.min(m);
            let first = default_block(rank).min(k.saturating_sub(rank).max(1));
            let lp = |block: usize, work: usize, max_restarts: usize| LanczosParams {
                tol: params.tol,
                work_dim: Some(work.min(k.saturating_sub(1)).max(rank + 1)),
                max_restarts,
                seed: params.seed,
                block_size: Some(block),
            };
            // Sparse-plus-low-rank matrices (graph kernels) can take the spectral
            // transformation, which resolves flat spectra and repeated values with a certified
            // count where Krylov stalls; the first Krylov attempt is then kept short.
            // Up to SHIFT_INVERT_MAX_RANK by shift-invert from above σ_1, beyond it by spectrum
            // slicing (shifts inside the spectrum), whose first Krylov attempt is the usual one.
            let structured = op.sparse_plus_low_rank().is_some();
            let small = rank <= SHIFT_INVERT_MAX_RANK;
            // A proven lower bound on the number of values above a shift, kept when
            // shift-invert could not return (or certify) them: the final result must reach it.
            let mut count: Option<(f64, usize)> = None;
            let mut spectral_transform = || {
                if !small {
                    let sp = SliceParams {
                        tol: params.tol,
                        seed: params.seed,
                        budget: params.budget,
                        ..SliceParams::default()
                    };
                    // Its count mismatches concern one slice, not the values above a shift.
                    return slice_svd(op, rank, &sp).ok().map(|(r, _)| (r, AutoChoice::Slicing));
                }
                let sp = ShiftInvertParams {
                    tol: params.tol,
                    seed: params.seed,
                    max_iters: SHIFT_INVERT_MAX_ITERS,
                    budget: params.budget,
                    ..ShiftInvertParams::default()
                };
                match shift_invert_svd(op, rank, &sp) {
                    Ok((r, _)) => Some((r, AutoChoice::ShiftInvert)),
                    Err(SolverError::CountMismatch { shift, counted, .. })
                    | Err(SolverError::CountUncertain {
                        shift, min: counted, ..
                    }) => {
                        count = Some((shift, counted));
                        None
                    }
                    Err(_) => None,
                }
            };
            let mut block = first;
            let first_work = 2 * rank + 3 * block;
            let (first_restarts, stall) = first_attempt(rank, block, first_work, structured);
            let attempt = lanczos_with_stall(op, rank, &lp(block, first_work, first_restarts), stall, progress);
            if structured && matches!(attempt, Err(SolverError::NotConverged { .. })) {
                if let Some(done) = spectral_transform() {
                    return Ok(done);
                }
            }
            let mut result = match attempt {
                Ok((r, _)) => r,
                // Wide blocks raise the Krylov degree slowly; on flat, clustered spectra
                // (graph SNE kernels) they can stall. Retry with narrower blocks and a
                // longer basis (higher degree per cycle). Not narrower than
                // FALLBACK_BLOCK: a block of b vectors finds at most b copies of a
                // repeated singular value (Pubmed's SNE kernel has values of
                // multiplicity 8 among its top 20), which the guard below checks.
                // A stalled first attempt on a matrix whose dense SVD fits and costs at most
                // ten Krylov estimates: take the dense SVD.
                Err(SolverError::NotConverged { .. })
                    if dense_fits(n, m, &params.budget) && {
                        let (dense, krylov) = costs(n, m, rank, first);
                        dense <= 10.0 * krylov
                    } =>
                {
                    return Ok((dense_certified(op, rank, params.tol)?, AutoChoice::Dense));
                }
                // Otherwise, on a stored matrix, the Gram route where it fits, costs at most
                // STALLED_GRAM_MARGIN Krylov estimates and certifies; else narrower blocks.
                Err(SolverError::NotConverged { .. }) => {
                    if !structured {
                        if let Some(r) = gram_after_stall(op, rank, first, params) {
                            return Ok((r, AutoChoice::Gram));
                        }
                    }
                    block = FALLBACK_BLOCK.min(first);
                    let work = fallback_work(rank, block);
                    lanczos_svd_with_progress(op, rank, &lp(block, work, 5000), progress)?.0
                }
                Err(e) => return Err(e),
            };
            // Multiplicity guard: a block of b vectors reaches at most b directions of one
            // singular subspace (its Krylov space does), so a cluster of b or more equal values
            // may hide further copies, whose place a smaller returned value then took. Lock
            // everything up to and including the cluster and search the rest of the spectrum
            // of the deflated operator `G − U S Vᵀ`: further copies reappear there as its
            // largest values. Repeat until a search finds no further copy. (A cluster that runs
            // to the last returned value cannot hide anything: further copies lie beyond the
            // rank.)
            for search in 1..=MAX_DEFLATIONS {
                let Some((start, len)) = widest_inner_cluster(&result.s.to_vec(), params.tol) else {
                    break;
                };
                if len < block {
                    break;
                }
                if structured && search == 1 {
                    if let Some(done) = spectral_transform() {
                        return Ok(done);
                    }
                }
                // Large multiplicities (graphs with many structurally identical nodes) can take
                // many deflated searches; when the dense SVD fits and costs at most ten Krylov
                // estimates, it settles every copy at once.
                let (dense, krylov) = costs(n, m, rank, first);
                if dense_fits(n, m, &params.budget) && dense <= 10.0 * krylov {
                    return Ok((dense_certified(op, rank, params.tol)?, AutoChoice::Dense));
                }
                let value = result.s[start];
                let locked = result.truncate(start + len);
                let deflated = LowRankUpdate::new(op, locked.u.clone(), locked.s.clone(), locked.v.clone())?;
                let rest = rank - locked.rank();
                // A new start block: the previous one's component in the cluster's singular
                // subspace is exactly what was locked, so reusing it would leave the deflated
                // search blind to the remaining copies.
                let search_params = LanczosParams {
                    seed: params
                        .seed
                        .wrapping_add(search as u64)
                        .wrapping_mul(0x9E37_79B9_7F4A_7C15),
                    ..lp(block, fallback_work(rest, block), 5000)
                };
                let found = lanczos_svd_with_progress(&deflated, rest, &search_params, progress)?.0;
                let gap = cluster_gap(params.tol, result.s[0]);
                let copies = found.s.iter().filter(|&&x| (x - value).abs() <= gap).count();
                result = merge(op, &locked, &found)?.certify(op)?;
                let residual = result.max_residual().unwrap_or(0.0);
                if residual > params.tol {
                    return Err(SolverError::NotConverged {
                        solver: "block Lanczos after deflation",
                        iterations: search,
                        residual,
                        tol: params.tol,
                    });
                }
                let orth = orthogonality(&result);
                if orth > ORTHOGONALITY_TOL {
                    return Err(SolverError::LostOrthogonality {
                        orthogonality: orth,
                        limit: ORTHOGONALITY_TOL,
                    });
                }
                if copies == 0 {
                    break;
                }
            }
            if let Some((shift, counted)) = count {
                // The Krylov result against the count (its proven lower end): a value above the shift that it
                // lacks was skipped (its residuals cannot show it).
                let slack = params.tol * result.s[0];
                let returned = result.s.iter().filter(|&&x| x > shift - slack).count();
                if returned < counted.min(rank) {
                    return Err(SolverError::CountMismatch {
                        shift,
                        counted,
                        returned,
                    });
                }
            }
            Ok((result, AutoChoice::Lanczos))
        }
    }
}

/// Restarts and stall rule of the default solver's first Krylov attempt (block `block`, basis
/// `work`). Sparse-plus-low-rank operators at ranks up to [`SHIFT_INVERT_MAX_RANK`] get a short
/// attempt (10 restarts) before shift-invert. Otherwise the attempt has [`FIRST_RESTARTS`]
/// restarts and stops earlier where the measured rate of convergence forecasts the tolerance
/// beyond them ([`Stall`]), so that shift-invert, slicing, the dense SVD or the narrow-block
/// fallback start sooner (Table 1's Pubmed SNE kernel at rank 250: 22 restarts instead of 60
/// before slicing, 89 s instead of 123 s). A longer allowance would not pay: BlogCatalog's SNE
/// kernel at rank 250 fell steadily for 60 restarts, then levelled off (docs/solvers.md).
fn first_attempt(rank: usize, block: usize, work: usize, structured: bool) -> (usize, Option<Stall>) {
    if structured && rank <= SHIFT_INVERT_MAX_RANK {
        return (10, None);
    }
    // Products per restart: the basis beyond the kept Ritz vectors, with `G` and `Gᵀ`.
    let per_restart = work.saturating_sub(rank).max(2 * block);
    let max_products = FIRST_RESTARTS.saturating_mul(per_restart);
    (FIRST_RESTARTS, Some(Stall { max_products }))
}

/// Restarts of the default solver's first Krylov attempt (but see [`first_attempt`]).
const FIRST_RESTARTS: usize = 60;

/// Largest rank for which the default solver tries the shift-invert iteration (its block has
/// `rank + 10` vectors, each iteration one solve with the factor per vector); above it, spectrum
/// slicing. Table 1's Pubmed KPCA cell (12 solves at rank 500) took 8 minutes by Krylov alone
/// (tolerance 1e-8), and had not finished after 10–18 minutes with shift-invert tried after the
/// first or after a 200-restart fallback Krylov attempt (tolerance 1e-6). Pubmed's KSVD at rank
/// 250, where Krylov stalls, takes 30-60 s by slicing.
const SHIFT_INVERT_MAX_RANK: usize = 64;

/// Iterations the default solver gives the shift-invert iteration: it converges in a few when
/// the wanted values lie just below the shift (the case it is for), and stops early otherwise.
const SHIFT_INVERT_MAX_ITERS: usize = 30;

/// Narrowest block the default solver's fallback uses.
const FALLBACK_BLOCK: usize = 12;

/// Basis size of the fallback runs: the usual `2 r + 3 b`, but at least 20 fallback blocks,
/// since flat spectra need a high Krylov degree per cycle (on Pubmed's SNE kernel at rank 20,
/// blocks of 8 took 47 restarts with a basis of 240 against 113 with 160).
fn fallback_work(rank: usize, block: usize) -> usize {
    (2 * rank + 3 * block).max(20 * FALLBACK_BLOCK)
}

/// Deflated searches of the multiplicity guard, at most.
const MAX_DEFLATIONS: usize = 8;

/// Two singular values closer than this are equal as far as the tolerance resolves them.
fn cluster_gap(tol: f64, s1: f64) -> f64 {
    10.0 * tol * s1
}

/// `(start, length)` of the longest group of consecutive singular values (sorted decreasingly)
/// that are equal to within [`cluster_gap`] and are followed by a smaller value of `s` (a group
/// that runs to the end of `s` is not counted); `None` when there is no such group.
pub(crate) fn widest_inner_cluster(s: &[f64], tol: f64) -> Option<(usize, usize)> {
    let &s1 = s.first()?;
    let gap = cluster_gap(tol, s1);
    let mut best: Option<(usize, usize)> = None;
    let mut start = 0;
    for i in 1..s.len() {
        if (s[i - 1] - s[i]).abs() > gap {
            let len = i - start;
            if best.is_none_or(|(_, l)| len > l) {
                best = Some((start, len));
            }
            start = i;
        }
    }
    best
}

/// The best rank-`k` triplets of `op` in the span of the triplets of `a` and `b` (`k` their
/// total): Rayleigh–Ritz on orthonormal bases of `[U_a U_b]` and `[V_a V_b]`, which restores
/// orthonormality to working accuracy (locked and deflated triplets are orthogonal only to
/// the tolerance). Residuals are computed by the caller.
fn merge<O: LinearOperator + ?Sized>(op: &O, a: &SvdResult, b: &SvdResult) -> Result<SvdResult> {
    let cat = |x: &Array2<f64>, y: &Array2<f64>| -> Result<Array2<f64>> {
        ndarray::concatenate(Axis(1), &[x.view(), y.view()]).map_err(|_| SolverError::InvalidParameter {
            name: "rank",
            value: (a.rank() + b.rank()) as f64,
            reason: "locked and new triplets have different lengths",
        })
    };
    let qu = dense::thin_q(cat(&a.u, &b.u)?.view())?;
    let qv = dense::thin_q(cat(&a.v, &b.v)?.view())?;
    let gqv = op.apply(qv.view())?;
    let small = dense::thin_svd(dense::matmul(qu.t(), gqv.view())?.view())?;
    let u = dense::matmul(qu.view(), small.u.view())?;
    let v = dense::matmul(qv.view(), small.v.view())?;
    Ok(SvdResult::new(u, small.s, v))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // Test helpers panic on failure by design.
    use super::*;
    use ksvd_linalg::random::{gaussian_matrix, rng_from_seed};

    #[test]
    fn the_gram_route_needs_its_budget_and_its_margin() {
        let g = gaussian_matrix(&mut rng_from_seed(4), 300, 300);
        let params = |bytes: u64| AutoParams {
            tol: 1e-8,
            budget: MemoryBudget::bytes(bytes).unwrap(),
            ..AutoParams::default()
        };
        // 5 Gram-sized matrices of order 300 are 3.6 MB: not within 1 MiB.
        assert!(gram_svd_numbers(300, 300, 20) * 8 > 1 << 20);
        assert!(gram_after_stall(&g, 20, 20, &params(1 << 20)).is_none());
        let r = gram_after_stall(&g, 20, 20, &params(1 << 30)).expect("within the budget and the margin");
        assert_eq!(r.rank(), 20);
        assert!(r.max_residual().unwrap() <= 1e-8);
        // At rank 1 the Krylov estimate (five vectors a pass) is below a twentieth of the Gram
        // route's cost at order 600.
        let big = gaussian_matrix(&mut rng_from_seed(5), 600, 600);
        assert!(gram_cost(600, 600) > STALLED_GRAM_MARGIN * costs(600, 600, 1, default_block(1)).1);
        assert!(gram_after_stall(&big, 1, default_block(1), &params(1 << 30)).is_none());
    }

    #[test]
    fn inner_clusters_are_runs_of_equal_values_followed_by_a_smaller_one() {
        assert_eq!(widest_inner_cluster(&[], 1e-8), None);
        assert_eq!(widest_inner_cluster(&[3.0], 1e-8), None);
        assert_eq!(
            widest_inner_cluster(&[3.0, 2.0, 2.0, 2.0, 1.0, 1.0], 1e-8),
            Some((1, 3))
        );
        // The run at the end does not count: its further copies lie beyond the rank.
        assert_eq!(
            widest_inner_cluster(&[3.0, 2.0, 1.0, 1.0, 1.0, 1.0], 1e-8),
            Some((0, 1))
        );
        assert_eq!(widest_inner_cluster(&[2.0, 2.0, 2.0], 1e-8), None);
        // Within 10·tol·s_1 = 3e-7 of each other: one cluster; 1e-6 apart: two.
        assert_eq!(
            widest_inner_cluster(&[3.0, 1.0 + 2e-7, 1.0 + 1e-7, 1.0, 0.5], 1e-8),
            Some((1, 3))
        );
        assert_eq!(widest_inner_cluster(&[3.0, 1.0 + 1e-6, 1.0, 0.5], 1e-8), Some((0, 1)));
    }
}
