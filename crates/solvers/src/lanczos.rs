//! Truncated SVD by restarted block Lanczos bidiagonalisation (the TSVD of the paper), and
//! randomized block Krylov SVD with a residual stopping rule. Both run the engine of
//! [`crate::krylov`]: blocks of vectors (GEMM products with the operator), full
//! re-orthogonalisation, thick restarts, explicit residuals at the end.
use crate::error::{Result, SolverError};
pub use crate::krylov::LanczosStats;
use crate::krylov::{run, EngineConfig, Stall, ORTHOGONALITY_TOL};
use crate::svd::{check_rank, SvdResult};
use ksvd_linalg::{LinearOperator, ProgressFn};

/// Parameters of [`lanczos_svd`].
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
// Absent fields (in configs: usually `seed`, which callers replace) take the defaults.
#[cfg_attr(feature = "serde", serde(default))]
pub struct LanczosParams {
    /// Relative residual tolerance: stop when `‖G v_i − s_i u_i‖ ≤ tol · s_1` and
    /// `‖Gᵀ u_i − s_i v_i‖ ≤ tol · s_1` for every wanted `i` (checked explicitly at the end).
    pub tol: f64,
    /// Maximum dimension of the Krylov basis (default `2 r + 3 b`, rounded up to whole blocks).
    /// When it plus one block reaches `min(n, m)` a dense SVD is computed instead.
    pub work_dim: Option<usize>,
    /// Maximum number of thick restarts.
    pub max_restarts: usize,
    /// Seed of the starting block.
    pub seed: u64,
    /// Vectors per block `b` (default `r` clamped to `4..=48`): blocks of `b` resolve clusters
    /// of up to `b` nearly equal singular values, and larger blocks make each pass over `G`
    /// (a GEMM) do more work.
    pub block_size: Option<usize>,
}

impl Default for LanczosParams {
    fn default() -> Self {
        LanczosParams {
            tol: 1e-10,
            work_dim: None,
            max_restarts: 500,
            seed: 0,
            block_size: None,
        }
    }
}

/// The default block size for rank `r`.
pub(crate) fn default_block(rank: usize) -> usize {
    rank.clamp(4, 48)
}

pub(crate) fn check_tol(tol: f64) -> Result<()> {
    if !(tol.is_finite() && tol > 0.0) {
        return Err(SolverError::InvalidParameter {
            name: "tol",
            value: tol,
            reason: "must be positive and finite",
        });
    }
    Ok(())
}

/// The top-`rank` singular triplets of `op` by restarted block Lanczos bidiagonalisation.
/// Fails with [`SolverError::NotConverged`] if the tolerance is not met within the restarts.
pub fn lanczos_svd<O: LinearOperator + ?Sized>(op: &O, rank: usize, params: &LanczosParams) -> Result<SvdResult> {
    lanczos_svd_with_progress(op, rank, params, &mut |_| {}).map(|(r, _)| r)
}

/// [`lanczos_svd`] with a progress callback (called after every convergence check) and run
/// statistics.
pub fn lanczos_svd_with_progress<O: LinearOperator + ?Sized>(
    op: &O,
    rank: usize,
    params: &LanczosParams,
    progress: &mut ProgressFn<'_>,
) -> Result<(SvdResult, LanczosStats)> {
    lanczos_with_stall(op, rank, params, None, progress)
}

/// [`lanczos_svd_with_progress`] that stops early, with [`SolverError::NotConverged`], where
/// `stall` forecasts the tolerance out of reach.
pub(crate) fn lanczos_with_stall<O: LinearOperator + ?Sized>(
    op: &O,
    rank: usize,
    params: &LanczosParams,
    stall: Option<Stall>,
    progress: &mut ProgressFn<'_>,
) -> Result<(SvdResult, LanczosStats)> {
    check_rank(op.nrows(), op.ncols(), rank)?;
    check_tol(params.tol)?;
    if params.block_size == Some(0) {
        return Err(SolverError::InvalidParameter {
            name: "block_size",
            value: 0.0,
            reason: "must be at least 1",
        });
    }
    let block = params.block_size.unwrap_or_else(|| default_block(rank));
    let cfg = EngineConfig {
        rank,
        block,
        max_basis: params.work_dim.unwrap_or(2 * rank + 3 * block),
        max_restarts: params.max_restarts,
        tol: params.tol,
        seed: params.seed,
        stall,
    };
    let (res, stats) = run(op, &cfg, progress)?;
    if !stats.converged && stats.residual <= params.tol {
        return Err(SolverError::LostOrthogonality {
            orthogonality: stats.orthogonality,
            limit: ORTHOGONALITY_TOL,
        });
    }
    if !stats.converged {
        return Err(SolverError::NotConverged {
            solver: "block Lanczos",
            iterations: stats.restarts,
            residual: stats.residual,
            tol: params.tol,
        });
    }
    Ok((res, stats))
}

/// Parameters of [`block_krylov_svd`].
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
// Absent fields (in configs: usually `seed`, which callers replace) take the defaults.
#[cfg_attr(feature = "serde", serde(default))]
pub struct BlockKrylovParams {
    /// Relative residual tolerance of the stopping rule (as in [`LanczosParams::tol`]).
    pub tol: f64,
    /// Extra start vectors `p`: the block has `r + p` random vectors.
    pub oversampling: usize,
    /// Maximum Krylov depth `q`: at most `q + 1` blocks (`(q + 1)(r + p)` basis vectors).
    pub max_depth: usize,
    /// Seed of the random start block.
    pub seed: u64,
}

impl Default for BlockKrylovParams {
    fn default() -> Self {
        BlockKrylovParams {
            tol: 1e-8,
            oversampling: 10,
            max_depth: 24,
            seed: 0,
        }
    }
}

/// Randomized block Krylov SVD (Musco & Musco, NeurIPS 2015): the Krylov space of `G Gᵀ`
/// started from `r + p` Gaussian vectors, grown one block at a time until every wanted
/// triplet's residual is at most `tol · s_1` or the depth limit is reached. Never fails for
/// lack of convergence: the returned statistics say whether the tolerance was met and the
/// result carries its explicit residuals.
pub fn block_krylov_svd<O: LinearOperator + ?Sized>(
    op: &O,
    rank: usize,
    params: &BlockKrylovParams,
) -> Result<(SvdResult, LanczosStats)> {
    check_rank(op.nrows(), op.ncols(), rank)?;
    check_tol(params.tol)?;
    let block = rank + params.oversampling;
    let cfg = EngineConfig {
        rank,
        block,
        max_basis: block * (params.max_depth + 1),
        max_restarts: 0,
        tol: params.tol,
        seed: params.seed,
        stall: None,
    };
    run(op, &cfg, &mut |_| {})
}
