//! The one error type of this crate.
use thiserror::Error;

/// Everything that can go wrong in `ksvd-general`. Library code returns these instead of panicking
/// on user input.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum GeneralError {
    /// A hyper-parameter or configuration value is out of its valid range.
    #[error("invalid parameter `{name}` = {value}: {expected}")]
    InvalidParameter {
        /// Parameter name.
        name: &'static str,
        /// The offending value, formatted.
        value: String,
        /// What a valid value looks like.
        expected: String,
    },
    /// Two inputs that must describe the same samples or dimensions disagree.
    #[error("shape mismatch in {what}: expected {expected}, got {got}")]
    ShapeMismatch {
        /// What was compared.
        what: &'static str,
        /// The expected shape or length.
        expected: String,
        /// The shape or length found.
        got: String,
    },
    /// The compatibility matrix `C` maps the columns (`Z := Xᵀ C`), which needs more training
    /// samples than features.
    #[error("the data matrix has {rows} training rows and {cols} features; Z := XᵀC needs rows > features")]
    NotTall {
        /// Training rows `N`.
        rows: usize,
        /// Features `M`.
        cols: usize,
    },
    /// An input or an intermediate result holds NaN or an infinity.
    #[error("{what} is not finite ({detail})")]
    NonFinite {
        /// Which quantity.
        what: &'static str,
        /// Where, or the value.
        detail: String,
    },
    /// The kernel matrix carries no information, e.g. every entry of an RBF block underflowed to
    /// 0 because `γ²` is tiny against the squared distances.
    #[error("degenerate kernel matrix ({detail})")]
    DegenerateKernel {
        /// What is degenerate, with the bandwidth.
        detail: String,
    },
    /// A dataset is unknown to this experiment or has the wrong kind.
    #[error("dataset `{name}`: {reason}")]
    Dataset {
        /// The dataset id.
        name: String,
        /// What is wrong.
        reason: String,
    },
    /// Loading a dataset failed.
    #[error(transparent)]
    Load(#[from] ksvd_datasets::DatasetError),
    /// A kernel or compatibility-matrix computation failed.
    #[error(transparent)]
    Kernel(#[from] ksvd_kernels::KernelError),
    /// An SVD solver failed.
    #[error(transparent)]
    Solver(#[from] ksvd_solvers::SolverError),
    /// A dense linear-algebra routine failed.
    #[error(transparent)]
    Linalg(#[from] ksvd_linalg::LinalgError),
    /// A metric's input was invalid (see `ksvd-metrics`).
    #[error(transparent)]
    Metrics(#[from] ksvd_metrics::MetricsError),
    /// The KSVD/KPCA model (crate `ksvd`) failed.
    #[error(transparent)]
    Model(#[from] ksvd::KsvdError),
}

impl GeneralError {
    /// [`GeneralError::InvalidParameter`] from a name, the offending value and what is expected.
    pub fn invalid(name: &'static str, value: impl std::fmt::Display, expected: impl Into<String>) -> Self {
        GeneralError::InvalidParameter {
            name,
            value: value.to_string(),
            expected: expected.into(),
        }
    }
}

/// Result alias for this crate.
pub type Result<T> = std::result::Result<T, GeneralError>;
