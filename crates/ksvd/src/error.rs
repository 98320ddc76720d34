use thiserror::Error;

/// Errors of the KSVD model.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum KsvdError {
    /// A hyper-parameter is out of range.
    #[error("invalid KSVD parameter {name}: {reason}")]
    InvalidParameter {
        /// Parameter name.
        name: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// Kernel construction failed.
    #[error(transparent)]
    Kernel(#[from] ksvd_kernels::KernelError),
    /// A solver failed.
    #[error(transparent)]
    Solver(#[from] ksvd_solvers::SolverError),
    /// The Nyström method failed.
    #[error(transparent)]
    Nystrom(#[from] ksvd_nystrom::NystromError),
    /// Linear algebra failed.
    #[error(transparent)]
    Linalg(#[from] ksvd_linalg::LinalgError),
    /// A model file is malformed: it does not parse, or violates an invariant (named).
    #[error("corrupt model file: {reason}")]
    CorruptModel {
        /// What is wrong.
        reason: String,
    },
    /// A model file has a format version this build cannot read.
    #[error("model file format version {found} is not supported (this build reads version {supported})")]
    ModelVersion {
        /// The version in the file.
        found: u64,
        /// The version this build reads and writes.
        supported: u64,
    },
    /// Reading or writing a model failed.
    #[error("model I/O: {reason}")]
    ModelIo {
        /// The underlying error.
        reason: String,
    },
    /// An error reported by linfa.
    #[error(transparent)]
    Linfa(#[from] linfa::Error),
}

/// Result alias for this crate.
pub type Result<T> = std::result::Result<T, KsvdError>;
