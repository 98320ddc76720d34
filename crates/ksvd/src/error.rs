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
    /// Fitting or projecting needs a user's kernel function that was not given: a model file
    /// records a user kernel by name only (load it with [`crate::KsvdModel::load_with_kernel`]).
    #[error(
        "the model uses the user kernel `{name}`, which model files do not store: load it with its \
         function (KsvdModel::load_with_kernel)"
    )]
    KernelFunctionNeeded {
        /// The name the model records ([`ksvd_kernels::KernelFunction::name`]).
        name: String,
    },
    /// The kernel function given to a model is not the one it records (another name, or the
    /// model uses a built-in kernel).
    #[error("the model records {expected}, but the user kernel `{given}` was given")]
    KernelFunctionMismatch {
        /// What the model records.
        expected: String,
        /// The name of the function given.
        given: String,
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
