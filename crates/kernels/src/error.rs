use ksvd_linalg::LinalgError;
use thiserror::Error;

/// Errors of kernel evaluation and kernel-matrix construction.
#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum KernelError {
    /// A kernel hyper-parameter is out of range.
    #[error("invalid kernel parameter {name} = {value}: {reason}")]
    InvalidParameter {
        /// Parameter name.
        name: &'static str,
        /// Offending value.
        value: f64,
        /// What is required.
        reason: &'static str,
    },
    /// The two sample sets live in spaces of different dimension.
    #[error("dimension mismatch: x has dimension {x_dim} but z has dimension {z_dim} (use a compatibility matrix, --compat)")]
    DimensionMismatch {
        /// Dimension of the x samples.
        x_dim: usize,
        /// Dimension of the z samples.
        z_dim: usize,
    },
    /// A sample set has no samples or no features.
    #[error("{what} is empty ({rows} samples x {dim} features)")]
    Empty {
        /// Which input.
        what: &'static str,
        /// Number of samples.
        rows: usize,
        /// Dimension.
        dim: usize,
    },
    /// The SNE normaliser of a row is zero or not finite (every distance underflowed).
    #[error("SNE normaliser of row {row} is not positive and finite; increase gamma")]
    DegenerateNormalizer {
        /// The row.
        row: usize,
    },
    /// Saved normalisers or centring means do not fit the samples and kernel.
    #[error("kernel statistics do not fit the samples: {reason}")]
    InvalidStats {
        /// What does not fit.
        reason: String,
    },
    /// A kernel that is not a function of `‖x − z‖²` alone was given squared distances.
    #[error("the {kernel} kernel is not a function of the squared distance: evaluate it from inner products")]
    NeedsInnerProducts {
        /// The kernel's name ([`crate::Kernel::name`]).
        kernel: &'static str,
    },
    /// A compatibility alternative that has no matrix `C` for the operation asked.
    #[error("compatibility {compat} has no {what}: {reason}")]
    NoCompatMatrix {
        /// The alternative.
        compat: crate::compat::Compat,
        /// What was asked for.
        what: &'static str,
        /// Why, and what to use instead.
        reason: &'static str,
    },
    /// A user's kernel function ([`crate::KernelFunction`]) failed, wrote NaN or an infinity,
    /// or produced a block of the wrong shape.
    #[error("user kernel `{kernel}`: {error}")]
    KernelFunction {
        /// The function's [`crate::KernelFunction::name`].
        kernel: String,
        /// What went wrong.
        #[source]
        error: crate::custom::KernelFnError,
    },
    /// An error of the linear-algebra layer (shapes, NaN, factorisations).
    #[error(transparent)]
    Linalg(#[from] LinalgError),
    /// A name that is not in a vocabulary (kernel, compatibility, graph input).
    #[error(transparent)]
    UnknownName(#[from] ksvd_linalg::UnknownName),
}

/// A kernel error met inside a product or block of [`crate::KernelMatrix`] (whose
/// [`ksvd_linalg::LinearOperator`] methods report [`LinalgError`]): a linear-algebra error stays
/// itself, any other becomes [`LinalgError::OperatorFailed`] whose reason is the kernel error's
/// message (naming, for a user's kernel function, the function and the problem).
impl From<KernelError> for LinalgError {
    fn from(e: KernelError) -> Self {
        match e {
            KernelError::Linalg(e) => e,
            e => LinalgError::OperatorFailed {
                operator: "kernel matrix",
                reason: e.to_string(),
            },
        }
    }
}

/// Result alias for this crate.
pub type Result<T> = std::result::Result<T, KernelError>;
