//! The one error type of this crate.
use thiserror::Error;

/// Everything that can go wrong in `ksvd-baselines`. Library code returns these instead of
/// panicking on user input.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum BaselineError {
    /// A hyper-parameter is out of its valid range.
    #[error("invalid parameter {name} = {value}: expected {expected}")]
    InvalidParameter {
        /// Parameter name (as in the config structs).
        name: &'static str,
        /// The offending value, formatted.
        value: String,
        /// What a valid value looks like.
        expected: &'static str,
    },
    /// A graph method was given a non-square adjacency matrix.
    #[error("the adjacency matrix must be square, got {rows} x {cols}")]
    NotSquare {
        /// Rows of the matrix.
        rows: usize,
        /// Columns of the matrix.
        cols: usize,
    },
    /// An input has no rows, no columns, or no non-zero entry where one is needed.
    #[error("{what} is empty ({rows} x {cols}, {nnz} non-zeros)")]
    Empty {
        /// Which input.
        what: &'static str,
        /// Rows.
        rows: usize,
        /// Columns.
        cols: usize,
        /// Stored non-zeros.
        nnz: usize,
    },
    /// An input that must be non-negative (adjacency weights, document-term counts) has a
    /// negative entry.
    #[error("{what} has a negative entry {value} at ({row}, {col}); it must be non-negative")]
    Negative {
        /// Which input.
        what: &'static str,
        /// Row of the first offending entry.
        row: usize,
        /// Column of the first offending entry.
        col: usize,
        /// The entry.
        value: f64,
    },
    /// More clusters (or embedding dimensions) were requested than there are objects.
    #[error("{what}: {k} requested but only {n} available; use at most {n}")]
    TooMany {
        /// What was requested (e.g. "document clusters", "HOPE rank").
        what: &'static str,
        /// Requested number.
        k: usize,
        /// Available number.
        n: usize,
    },
    /// HOPE's default `beta = fraction / rho(A)` needs a positive spectral-radius estimate.
    #[error(
        "the power-iteration estimate of the spectral radius of A is {radius:e} (A is nilpotent, e.g. an acyclic \
         graph, or has no arcs); set an explicit Katz beta instead of a fraction of 1/rho(A)"
    )]
    ZeroSpectralRadius {
        /// The estimate.
        radius: f64,
    },
    /// The Katz series `sum_{l >= 1} (beta A)^l x` did not converge.
    #[error(
        "the Katz series with beta = {beta:e} did not converge in {terms} terms (relative size of the last term \
         {relative_term:.3e} > tolerance {tol:.1e}); beta * rho(A) must be < 1, use a smaller beta or more terms"
    )]
    KatzDiverged {
        /// The decay parameter.
        beta: f64,
        /// Terms summed.
        terms: usize,
        /// `||(beta A)^terms x|| / ||partial sum||` at the end.
        relative_term: f64,
        /// Requested tolerance.
        tol: f64,
    },
    /// A computation produced NaN or infinity (e.g. a diverging optimisation).
    #[error("{what} produced a non-finite value (NaN or infinity){hint}")]
    NonFinite {
        /// Which computation.
        what: &'static str,
        /// What to try.
        hint: &'static str,
    },
    /// A dataset name in a runner config is not a dataset of the expected kind.
    #[error("dataset {name:?}: {reason}")]
    Dataset {
        /// The name from the config.
        name: String,
        /// Why it cannot be used.
        reason: String,
    },
    /// An error of the sparse/dense linear-algebra layer.
    #[error(transparent)]
    Linalg(#[from] ksvd_linalg::LinalgError),
    /// An error of the SVD solvers (HOPE).
    #[error(transparent)]
    Solver(#[from] ksvd_solvers::SolverError),
    /// An error while loading a dataset (runner entry points).
    #[error(transparent)]
    Datasets(#[from] ksvd_datasets::DatasetError),
    /// An error of the biclustering metrics (runner entry points).
    #[error(transparent)]
    Bicluster(#[from] ksvd_bicluster::BiclusterError),
    /// An error of a graph task (DiGAE's link-prediction split and scores).
    #[error(transparent)]
    GraphTask(#[from] ksvd_graph_tasks::GraphTaskError),
}

/// Result alias for this crate.
pub type Result<T> = std::result::Result<T, BaselineError>;

/// `Err(InvalidParameter)` unless `ok`.
pub(crate) fn ensure(ok: bool, name: &'static str, value: impl ToString, expected: &'static str) -> Result<()> {
    if ok {
        Ok(())
    } else {
        Err(BaselineError::InvalidParameter {
            name,
            value: value.to_string(),
            expected,
        })
    }
}

/// [`ensure`] that `value` is a finite number `> 0`.
pub(crate) fn ensure_positive(name: &'static str, value: f64) -> Result<()> {
    ensure(value.is_finite() && value > 0.0, name, value, "a finite number > 0")
}

/// [`ensure`] that `value` is a finite number `>= 0`.
pub(crate) fn ensure_nonnegative(name: &'static str, value: f64) -> Result<()> {
    ensure(value.is_finite() && value >= 0.0, name, value, "a finite number >= 0")
}

/// Checks that a sparse matrix is non-empty and has only non-negative entries.
pub(crate) fn check_nonnegative(what: &'static str, a: &ksvd_linalg::CsrMatrix) -> Result<()> {
    if a.nrows() == 0 || a.ncols() == 0 {
        return Err(BaselineError::Empty {
            what,
            rows: a.nrows(),
            cols: a.ncols(),
            nnz: a.nnz(),
        });
    }
    for i in 0..a.nrows() {
        let (idx, val) = a.row(i);
        if let Some((&col, &value)) = idx.iter().zip(val).find(|(_, &v)| v < 0.0) {
            return Err(BaselineError::Negative {
                what,
                row: i,
                col,
                value,
            });
        }
    }
    Ok(())
}

/// Checks that an adjacency matrix is square, non-empty and non-negative.
pub(crate) fn check_adjacency(a: &ksvd_linalg::CsrMatrix) -> Result<()> {
    if a.nrows() != a.ncols() {
        return Err(BaselineError::NotSquare {
            rows: a.nrows(),
            cols: a.ncols(),
        });
    }
    check_nonnegative("adjacency matrix", a)
}
