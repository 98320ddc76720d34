use thiserror::Error;

/// Errors of the Nyström methods.
#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum NystromError {
    /// A size parameter is out of range.
    #[error("invalid Nyström parameter {name} = {value}: {reason}")]
    InvalidParameter {
        /// Parameter name.
        name: &'static str,
        /// Offending value.
        value: f64,
        /// What is required.
        reason: String,
    },
    /// The sampled sub-matrix has fewer nonzero singular values than the requested rank.
    #[error("the sampled {rows} x {cols} sub-matrix has numerical rank {numerical_rank} < requested rank {rank}; sample more rows/columns or lower the rank")]
    RankDeficientSample {
        /// Sampled rows.
        rows: usize,
        /// Sampled columns.
        cols: usize,
        /// Numerical rank found.
        numerical_rank: usize,
        /// Requested rank.
        rank: usize,
    },
    /// An error of the solvers.
    #[error(transparent)]
    Solver(#[from] ksvd_solvers::SolverError),
    /// An error of the kernels.
    #[error(transparent)]
    Kernel(#[from] ksvd_kernels::KernelError),
    /// An error of the linear-algebra layer.
    #[error(transparent)]
    Linalg(#[from] ksvd_linalg::LinalgError),
}

/// Result alias for this crate.
pub type Result<T> = std::result::Result<T, NystromError>;

/// Requires a [`crate::numerical_rank`] of at least `rank` (values above the rounding level
/// `ε · size · |values[0]|`), else [`NystromError::RankDeficientSample`] for a `rows × cols` sample.
pub(crate) fn require_rank(values: &[f64], size: usize, rows: usize, cols: usize, rank: usize) -> Result<()> {
    let numerical_rank = crate::extension::numerical_rank(values, size);
    if numerical_rank < rank {
        return Err(NystromError::RankDeficientSample {
            rows,
            cols,
            numerical_rank,
            rank,
        });
    }
    Ok(())
}
