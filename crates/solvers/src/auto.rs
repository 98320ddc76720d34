//! The default solver: a dense SVD when that is cheapest and fits the memory budget, restarted
//! block Lanczos otherwise. Either way the result meets the tolerance (explicit residuals) or
//! the call fails.
use crate::error::Result;
use crate::lanczos::{check_tol, default_block, lanczos_svd_with_progress, LanczosParams, LanczosProgress};
use crate::svd::{check_rank, dense_svd_operator, SvdResult};
use crate::SolverError;
use ksvd_linalg::{LinearOperator, MemoryBudget};

/// Parameters of [`auto_svd`].
#[derive(Debug, Clone, PartialEq)]
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
pub enum AutoChoice {
    /// Dense SVD of the materialised matrix.
    Dense,
    /// Restarted block Lanczos.
    Lanczos,
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
    // G, its copy inside the factorisation, and the thin factors.
    let need = 2usize
        .saturating_mul(n.saturating_mul(m))
        .saturating_add((n + m).saturating_mul(k));
    let fits = budget.fits_f64(need);
    let basis_fills_space = 2 * rank + 3 * block >= k;
    let (dense, krylov) = costs(n, m, rank, block);
    // Below a few hundred columns the Krylov bookkeeping costs more than the whole dense SVD.
    let small = k <= 256;
    if fits && (small || basis_fills_space || dense <= krylov) {
        AutoChoice::Dense
    } else {
        AutoChoice::Lanczos
    }
}

/// The top-`rank` SVD of `op` by the cheapest certified method (see [`auto_choice`]). Every
/// triplet of the result has residuals at most `tol · s_1`; otherwise the call fails with
/// [`SolverError::NotConverged`].
pub fn auto_svd<O: LinearOperator + ?Sized>(
    op: &O,
    rank: usize,
    params: &AutoParams,
    progress: &mut dyn FnMut(LanczosProgress),
) -> Result<(SvdResult, AutoChoice)> {
    let (n, m) = (op.nrows(), op.ncols());
    check_rank(n, m, rank)?;
    check_tol(params.tol)?;
    match auto_choice(n, m, rank, &params.budget) {
        AutoChoice::Dense => {
            let r = dense_svd_operator(op, rank)?;
            let residual = r.max_residual().unwrap_or(0.0);
            if residual > params.tol {
                return Err(SolverError::NotConverged {
                    restarts: 0,
                    residual,
                    tol: params.tol,
                });
            }
            Ok((r, AutoChoice::Dense))
        }
        AutoChoice::Lanczos => {
            let k = n.min(m);
            let first = default_block(rank).min(k.saturating_sub(rank).max(1));
            let lp = |block: usize, work: usize, max_restarts: usize| LanczosParams {
                tol: params.tol,
                work_dim: Some(work.min(k.saturating_sub(1)).max(rank + 1)),
                max_restarts,
                seed: params.seed,
                block_size: Some(block),
            };
            let mut block = first;
            let mut result = match lanczos_svd_with_progress(op, rank, &lp(block, 2 * rank + 3 * block, 60), progress) {
                Ok((r, _)) => r,
                // Wide blocks raise the Krylov degree slowly; on flat, clustered spectra
                // (graph SNE kernels) they can stall. Retry with narrower blocks and a
                // longer basis (higher degree per cycle). Not narrower than
                // FALLBACK_BLOCK: a block of b vectors finds at most b copies of a
                // repeated singular value (Pubmed's SNE kernel has values of
                // multiplicity 8 among its top 20), which the guard below checks.
                Err(SolverError::NotConverged { .. }) => {
                    block = FALLBACK_BLOCK.min(first);
                    let work = fallback_work(rank, block);
                    lanczos_svd_with_progress(op, rank, &lp(block, work, 5000), progress)?.0
                }
                Err(e) => return Err(e),
            };
            // Multiplicity guard: a cluster of as many equal singular values as vectors per
            // block may hide further copies (the Krylov space of a block of b vectors holds
            // at most b directions of one invariant subspace). Rerun with a wider block
            // until the largest cluster is narrower than the block.
            for _ in 0..3 {
                let cluster = largest_cluster(&result.s.to_vec(), params.tol);
                if cluster < block || block >= k.saturating_sub(rank) {
                    break;
                }
                block = (cluster + cluster.div_ceil(2)).min(k.saturating_sub(rank).max(1));
                let work = fallback_work(rank, block);
                result = lanczos_svd_with_progress(op, rank, &lp(block, work, 5000), progress)?.0;
            }
            Ok((result, AutoChoice::Lanczos))
        }
    }
}

/// Narrowest block the default solver's fallback uses.
const FALLBACK_BLOCK: usize = 12;

/// Basis size of the fallback runs: the usual `2 r + 3 b`, but at least 20 fallback blocks,
/// since flat spectra need a high Krylov degree per cycle (on Pubmed's SNE kernel at rank 20,
/// blocks of 8 took 47 restarts with a basis of 240 against 113 with 160).
fn fallback_work(rank: usize, block: usize) -> usize {
    (2 * rank + 3 * block).max(20 * FALLBACK_BLOCK)
}

/// Size of the largest group of consecutive singular values (sorted decreasingly) that agree
/// to within `10 · tol · s_1`, i.e. that are equal as far as the tolerance resolves them.
pub(crate) fn largest_cluster(s: &[f64], tol: f64) -> usize {
    let Some(&s1) = s.first() else { return 0 };
    let gap = 10.0 * tol * s1;
    let (mut best, mut run) = (1, 1);
    for w in s.windows(2) {
        run = if (w[0] - w[1]).abs() <= gap { run + 1 } else { 1 };
        best = best.max(run);
    }
    best
}

#[cfg(test)]
mod tests {
    use super::largest_cluster;

    #[test]
    fn clusters_are_runs_of_values_equal_to_the_tolerance() {
        assert_eq!(largest_cluster(&[], 1e-8), 0);
        assert_eq!(largest_cluster(&[3.0], 1e-8), 1);
        assert_eq!(largest_cluster(&[3.0, 2.0, 2.0, 2.0, 1.0, 1.0], 1e-8), 3);
        // Within 10·tol·s_1 = 3e-7 of each other: one cluster; 1e-6 apart: two.
        assert_eq!(largest_cluster(&[3.0, 1.0 + 2e-7, 1.0 + 1e-7, 1.0], 1e-8), 3);
        assert_eq!(largest_cluster(&[3.0, 1.0 + 1e-6, 1.0], 1e-8), 1);
    }
}
