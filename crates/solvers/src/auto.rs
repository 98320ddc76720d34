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
            let block = default_block(rank).min(k.saturating_sub(rank).max(1));
            let lp = LanczosParams {
                tol: params.tol,
                work_dim: Some((2 * rank + 3 * block).min(k.saturating_sub(1)).max(rank + 1)),
                max_restarts: 200,
                seed: params.seed,
                block_size: Some(block),
            };
            match lanczos_svd_with_progress(op, rank, &LanczosParams { max_restarts: 60, ..lp }, progress) {
                Ok((r, _)) => Ok((r, AutoChoice::Lanczos)),
                // Wide blocks raise the Krylov degree slowly; on flat, clustered spectra (graph
                // SNE kernels) they can stall. Degree matters more there: retry with blocks of
                // two vectors (still resolving pairs of repeated values) and a longer basis.
                Err(SolverError::NotConverged { .. }) => {
                    let lp = LanczosParams {
                        tol: params.tol,
                        work_dim: Some((3 * rank).max(rank + 40).min(k.saturating_sub(3)).max(rank + 2)),
                        max_restarts: 5000,
                        seed: params.seed,
                        block_size: Some(2),
                    };
                    let (r, _) = lanczos_svd_with_progress(op, rank, &lp, progress)?;
                    Ok((r, AutoChoice::Lanczos))
                }
                Err(e) => Err(e),
            }
        }
    }
}
