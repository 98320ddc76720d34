//! The error type of this crate.
use thiserror::Error;

/// Everything that can go wrong when embedding a graph, classifying its nodes, reconstructing
/// its adjacency or running an experiment. Variants carry the offending values.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum GraphTaskError {
    /// A configuration value is out of range.
    #[error("invalid configuration `{field}` = {value}: {reason}")]
    InvalidConfig {
        /// The configuration field.
        field: &'static str,
        /// The offending value, printed.
        value: String,
        /// What is required.
        reason: String,
    },
    /// An embedding does not have one row per node of the graph.
    #[error("{what} has {found} rows but the graph has {expected} nodes")]
    NodeCountMismatch {
        /// Which matrix.
        what: &'static str,
        /// Number of nodes of the graph.
        expected: usize,
        /// Number of rows found.
        found: usize,
    },
    /// The source and target embeddings of a two-sided embedding differ in width.
    #[error("source embedding has {source_dim} columns but target embedding has {target_dim}; they must match")]
    SideMismatch {
        /// Columns of the source embedding.
        source_dim: usize,
        /// Columns of the target embedding.
        target_dim: usize,
    },
    /// An embedding has no columns.
    #[error("{what} has no columns")]
    EmptyEmbedding {
        /// Which matrix.
        what: &'static str,
    },
    /// An embedding holds NaN or an infinity.
    #[error("{what} contains a non-finite value at ({row}, {col})")]
    NonFinite {
        /// Which matrix.
        what: &'static str,
        /// Row of the first offending entry.
        row: usize,
        /// Column of the first offending entry.
        col: usize,
    },
    /// Too few labelled nodes (or classes) for the requested split and folds.
    #[error("{what}: {found} available but at least {needed} needed")]
    TooFewSamples {
        /// What is short (labelled nodes, classes, ...).
        what: &'static str,
        /// How many are available.
        found: usize,
        /// How many are needed.
        needed: usize,
    },
    /// The adjacency matrix is not square.
    #[error("the adjacency matrix must be square, got {nrows} x {ncols}")]
    NotSquare {
        /// Rows.
        nrows: usize,
        /// Columns.
        ncols: usize,
    },
    /// An error of the LS-SVM crate (fitting, metrics, splits).
    #[error(transparent)]
    Lssvm(#[from] ksvd_lssvm::LssvmError),
    /// An error of the KSVD/KPCA model (`ksvd`: parameters, solvers, Nyström fits).
    #[error(transparent)]
    Model(#[from] ksvd::KsvdError),
    /// An error of the truncated-SVD solvers.
    #[error(transparent)]
    Solver(#[from] ksvd_solvers::SolverError),
    /// An error of the kernels.
    #[error(transparent)]
    Kernel(#[from] ksvd_kernels::KernelError),
    /// An error of the Nyström methods.
    #[error(transparent)]
    Nystrom(#[from] ksvd_nystrom::NystromError),
    /// An error of the linear-algebra layer.
    #[error(transparent)]
    Linalg(#[from] ksvd_linalg::LinalgError),
    /// An error while loading a dataset.
    #[error(transparent)]
    Dataset(#[from] ksvd_datasets::DatasetError),
    /// A metric's input was invalid (see `ksvd-metrics`).
    #[error(transparent)]
    Metrics(#[from] ksvd_metrics::MetricsError),
}

/// Result alias of this crate.
pub type Result<T> = std::result::Result<T, GraphTaskError>;

/// `Err(InvalidConfig)` unless `ok`.
pub fn ensure(ok: bool, field: &'static str, value: impl std::fmt::Display, reason: &str) -> Result<()> {
    if ok {
        Ok(())
    } else {
        Err(GraphTaskError::InvalidConfig {
            field,
            value: value.to_string(),
            reason: reason.to_string(),
        })
    }
}
