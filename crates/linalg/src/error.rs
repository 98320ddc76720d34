use thiserror::Error;

/// Errors of the dense, sparse and operator layers.
#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum LinalgError {
    /// A product with an operator could not be formed (see
    /// [`crate::LinearOperator::apply_into`]).
    #[error("the product with {operator} failed: {reason}")]
    OperatorFailed {
        /// Which operator.
        operator: &'static str,
        /// Why, with the values involved.
        reason: String,
    },
    /// Two operands have incompatible shapes.
    #[error("shape mismatch in {op}: left is {left:?}, right is {right:?}")]
    ShapeMismatch {
        /// The operation that was attempted.
        op: &'static str,
        /// Shape (rows, cols) of the left operand.
        left: (usize, usize),
        /// Shape (rows, cols) of the right operand.
        right: (usize, usize),
    },
    /// An input holds NaN or an infinity.
    #[error("{what} contains a non-finite value (NaN or infinity) at ({row}, {col})")]
    NonFinite {
        /// Which input.
        what: &'static str,
        /// Row of the first offending entry.
        row: usize,
        /// Column of the first offending entry.
        col: usize,
    },
    /// An input has no rows or no columns.
    #[error("{what} is empty ({rows} x {cols})")]
    Empty {
        /// Which input.
        what: &'static str,
        /// Number of rows.
        rows: usize,
        /// Number of columns.
        cols: usize,
    },
    /// A CSR matrix is structurally invalid.
    #[error("invalid CSR matrix: {0}")]
    InvalidCsr(String),
    /// An index lies outside the matrix.
    #[error("index {index} out of bounds for {what} of length {len}")]
    IndexOutOfBounds {
        /// Which dimension.
        what: &'static str,
        /// The offending index.
        index: usize,
        /// The dimension's length.
        len: usize,
    },
    /// A memory budget is zero, too small or absurdly large.
    #[error("invalid memory budget ({bytes} bytes): {reason}")]
    InvalidBudget {
        /// The requested number of bytes (0 when it could not be parsed).
        bytes: u64,
        /// What is required.
        reason: &'static str,
    },
    /// A Cholesky factorisation met a pivot that is not positive: the matrix is not
    /// (numerically) positive definite.
    #[error("the matrix is not positive definite (non-positive pivot at {index})")]
    NotPositiveDefinite {
        /// Position of the pivot in the factorisation's ordering.
        index: usize,
    },
    /// A dense factorisation failed (did not converge or the matrix is singular).
    #[error("{op} failed: {reason}")]
    Factorization {
        /// The factorisation.
        op: &'static str,
        /// Why.
        reason: String,
    },
}

/// Result alias for this crate.
pub type Result<T> = std::result::Result<T, LinalgError>;

/// Checks that every entry of a matrix view is finite.
pub fn check_finite(what: &'static str, a: ndarray::ArrayView2<'_, f64>) -> Result<()> {
    for ((row, col), v) in a.indexed_iter() {
        if !v.is_finite() {
            return Err(LinalgError::NonFinite { what, row, col });
        }
    }
    Ok(())
}

/// Checks that a matrix view has at least one row and one column.
pub fn check_nonempty(what: &'static str, a: ndarray::ArrayView2<'_, f64>) -> Result<()> {
    if a.nrows() == 0 || a.ncols() == 0 {
        return Err(LinalgError::Empty {
            what,
            rows: a.nrows(),
            cols: a.ncols(),
        });
    }
    Ok(())
}
