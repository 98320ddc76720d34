use ksvd_linalg::LinalgError;
use thiserror::Error;

/// Errors of the SVD solvers.
#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum SolverError {
    /// The requested rank is zero or exceeds `min(n, m)`.
    #[error("rank {rank} is invalid for a {nrows} x {ncols} matrix (must be 1..={max})", max = nrows.min(ncols))]
    InvalidRank {
        /// Requested rank.
        rank: usize,
        /// Rows of the matrix.
        nrows: usize,
        /// Columns of the matrix.
        ncols: usize,
    },
    /// The matrix has no rows or no columns.
    #[error("cannot decompose an empty {nrows} x {ncols} matrix")]
    Empty {
        /// Rows.
        nrows: usize,
        /// Columns.
        ncols: usize,
    },
    /// A solver parameter is out of range.
    #[error("invalid solver parameter {name} = {value}: {reason}")]
    InvalidParameter {
        /// Parameter name.
        name: &'static str,
        /// Offending value.
        value: f64,
        /// What is required.
        reason: &'static str,
    },
    /// The operator produced NaN or infinity.
    #[error("the operator produced a non-finite value (NaN or infinity)")]
    NonFinite,
    /// A solver stopped (its iteration limit, or a forecast that the limit cannot be met)
    /// before every wanted triplet met the tolerance.
    #[error("{solver} did not converge in {iterations} iterations: largest relative residual {residual:.3e} > tolerance {tol:.1e}")]
    NotConverged {
        /// The solver that stopped: `"block Lanczos"` (an iteration is a restart cycle),
        /// `"block Lanczos after deflation"` (one deflated search), `"shift-invert"` (one
        /// subspace iteration), `"shift search"` (one trial factorisation of the shifted matrix),
        /// `"dense SVD"` (no iterations).
        solver: &'static str,
        /// Iterations performed.
        iterations: usize,
        /// Largest relative residual of the wanted triplets.
        residual: f64,
        /// Requested tolerance.
        tol: f64,
    },
    /// The returned singular vectors are not orthonormal (every residual met the tolerance, but
    /// a vector may have been returned twice).
    #[error("the singular vectors lost orthonormality ({orthogonality:.3e} > {limit:.1e}) although every residual met the tolerance")]
    LostOrthogonality {
        /// `max(‖UᵀU − I‖_max, ‖VᵀV − I‖_max)`.
        orthogonality: f64,
        /// The largest loss accepted.
        limit: f64,
    },
    /// The values returned disagree with the count of singular values above a shift
    /// (inertia): a value above it was missed, although every residual met the tolerance.
    #[error("{returned} returned singular values lie above the shift {shift:.6e}, but the inertia count is at least {counted}")]
    CountMismatch {
        /// The shift.
        shift: f64,
        /// Singular values of the matrix above the shift, at least (from the factorisation,
        /// with its error bound).
        counted: usize,
        /// Returned values above it (within the tolerance).
        returned: usize,
    },
    /// The inertia count of the values above a shift is a range (an eigenvalue of the
    /// capacitance matrix lies within its rounding error of zero) and the values returned
    /// match its lower end only: the result may lack a value, so it is not certified.
    #[error("{returned} returned singular values lie above the shift {shift:.6e}; the inertia count, {min} to {max} within its error bound, cannot certify them")]
    CountUncertain {
        /// The shift.
        shift: f64,
        /// Singular values above the shift, at least.
        min: usize,
        /// Singular values above the shift, at most.
        max: usize,
        /// Returned values above it (within the tolerance).
        returned: usize,
    },
    /// Indices given as twins do not leave the operator unchanged when swapped (see
    /// `ksvd_linalg::Twins`): the operator is not built from the matrix they were found in
    /// by a permutation-invariant rule.
    #[error("swapping the twin indices {first} and {second} changes the operator (relative residual {residual:.3e} of its exact singular vector)")]
    NotInvariant {
        /// First index of the class checked.
        first: usize,
        /// Second index of the class checked.
        second: usize,
        /// `max(‖M w − λ w‖, ‖Mᵀ w − λ w‖) / s_1` for the class's test vector `w`.
        residual: f64,
    },
    /// Two results being compared have incompatible shapes.
    #[error("shape mismatch: {what}")]
    ShapeMismatch {
        /// Description.
        what: String,
    },
    /// An error of the linear-algebra layer.
    #[error(transparent)]
    Linalg(#[from] LinalgError),
}

/// Result alias for this crate.
pub type Result<T> = std::result::Result<T, SolverError>;
