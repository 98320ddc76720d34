//! The one error type of this crate.
use thiserror::Error;

/// Everything that can go wrong in `ksvd-bicluster`. Library code returns these instead of
/// panicking on user input.
#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum BiclusterError {
    /// An input has no points (rows), no features (columns) or no labels.
    #[error("{what} is empty ({rows} x {cols}); pass at least one row and one column")]
    Empty {
        /// Which input.
        what: &'static str,
        /// Number of rows (points, documents, labels).
        rows: usize,
        /// Number of columns (features, terms; 1 for a label vector).
        cols: usize,
    },
    /// Two inputs that must describe the same objects have different lengths.
    #[error("length mismatch: {what}: {left} vs {right}")]
    LengthMismatch {
        /// What was compared.
        what: &'static str,
        /// Length of the first input.
        left: usize,
        /// Length of the second input.
        right: usize,
    },
    /// More clusters were requested than there are points to cluster.
    #[error("{what}: {k} clusters requested but only {n} points; use k <= {n}")]
    TooManyClusters {
        /// Which clustering.
        what: &'static str,
        /// Requested number of clusters.
        k: usize,
        /// Number of points.
        n: usize,
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
    /// Computing the embeddings failed (kernel, solver or compatibility error).
    #[error("embedding failed: {0}")]
    Embedding(String),
    /// A hyper-parameter is out of its valid range.
    #[error("invalid parameter {name} = {value}: {expected}")]
    InvalidParameter {
        /// Parameter name.
        name: &'static str,
        /// The offending value, formatted.
        value: String,
        /// What a valid value looks like.
        expected: &'static str,
    },
    /// A score is undefined for this labelling (e.g. coherence with a single term cluster, where
    /// the inter-cluster mean is a mean over no pairs).
    #[error("{what} is undefined: {reason}")]
    Undefined {
        /// Which score.
        what: &'static str,
        /// Why.
        reason: String,
    },
    /// A dense matrix the computation needs would exceed the memory bound.
    #[error("{what} would be {rows} x {cols}, more than {limit} entries; use a smaller input")]
    TooLarge {
        /// Which matrix.
        what: &'static str,
        /// Its rows.
        rows: usize,
        /// Its columns.
        cols: usize,
        /// The bound on the number of entries.
        limit: usize,
    },
    /// linfa's k-means failed (e.g. no run produced a finite inertia).
    #[error("k-means failed: {0}")]
    KMeans(String),
    /// An error of the sparse/dense linear-algebra layer.
    #[error(transparent)]
    Linalg(#[from] ksvd_linalg::LinalgError),
    /// A kernel or compatibility computation failed (see `ksvd-kernels`).
    #[error(transparent)]
    Kernel(#[from] ksvd_kernels::KernelError),
    /// A metric's input was invalid (see `ksvd-metrics`).
    #[error(transparent)]
    Metrics(#[from] ksvd_metrics::MetricsError),
}

/// Result alias for this crate.
pub type Result<T> = std::result::Result<T, BiclusterError>;

/// Checks that a matrix has at least one row and one column and only finite entries.
pub(crate) fn check_matrix(what: &'static str, a: ndarray::ArrayView2<'_, f64>) -> Result<()> {
    if a.nrows() == 0 || a.ncols() == 0 {
        return Err(BiclusterError::Empty {
            what,
            rows: a.nrows(),
            cols: a.ncols(),
        });
    }
    if let Some(((row, col), _)) = a.indexed_iter().find(|(_, v)| !v.is_finite()) {
        return Err(BiclusterError::NonFinite { what, row, col });
    }
    Ok(())
}

/// A failure of the KSVD/KPCA model (crate `ksvd`) is an embedding failure, with its message
/// (the model's errors are neither `Clone` nor `PartialEq`, which this enum is).
impl From<ksvd::KsvdError> for BiclusterError {
    fn from(e: ksvd::KsvdError) -> Self {
        BiclusterError::Embedding(e.to_string())
    }
}
