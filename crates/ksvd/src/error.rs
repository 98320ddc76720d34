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
    /// A model document was refused before its payload was used: not a document (not JSON,
    /// truncated), another format, a format version this build does not read, or a payload
    /// that does not match its SHA-256 checksum (changed after it was written). The inner error
    /// names which.
    #[cfg(feature = "serde")]
    #[error("model file refused: {0}")]
    ModelFile(#[from] ksvd_datasets::envelope::EnvelopeError),
    /// A model document passed its checksum but its payload violates an invariant (named).
    #[error("corrupt model file: {reason}")]
    CorruptModel {
        /// What is wrong.
        reason: String,
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
