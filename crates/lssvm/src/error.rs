//! The error type of this crate.
use crate::kernel::Kernel;
use ksvd_linalg::LinalgError;
use ndarray::ArrayView2;
use thiserror::Error;

/// Everything that can go wrong when fitting, predicting, scoring or splitting.
///
/// Variants carry the offending values so the message says what to change.
#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum LssvmError {
    /// The regularisation parameter is not a finite positive number.
    #[error("regularisation gamma must be finite and > 0, got {gamma} (the paper uses gamma = 1)")]
    InvalidGamma {
        /// The rejected value.
        gamma: f64,
    },
    /// The kernel's hyper-parameters are invalid (e.g. a bandwidth that is not finite and > 0).
    #[error(transparent)]
    Kernel(#[from] ksvd_kernels::KernelError),
    /// The kernel is not symmetric positive semi-definite (SNE; polynomial with a negative
    /// offset), which the LS-SVM's solvers need.
    #[error("the LS-SVM needs a symmetric positive semi-definite kernel, got {kernel:?}")]
    NotPositiveSemidefinite {
        /// The rejected kernel.
        kernel: Kernel,
    },
    /// The conjugate-gradient tolerance is not in `(0, 1)`.
    #[error("conjugate-gradient tolerance must lie in (0, 1), got {tol}")]
    InvalidTolerance {
        /// The rejected value.
        tol: f64,
    },
    /// The conjugate-gradient iteration budget is zero.
    #[error("conjugate-gradient max_iter must be at least 1, got {max_iter}")]
    InvalidMaxIter {
        /// The rejected value.
        max_iter: usize,
    },
    /// [`Solver::Primal`](crate::Solver::Primal) was requested with a non-linear kernel.
    #[error("the primal solver needs Kernel::Linear, got {kernel:?}; use Solver::Direct or Solver::ConjugateGradient")]
    PrimalNeedsLinearKernel {
        /// The kernel that was configured.
        kernel: Kernel,
    },
    /// An input has no rows or no columns.
    #[error("{what} is empty ({rows} x {cols})")]
    EmptyInput {
        /// Which input.
        what: &'static str,
        /// Number of rows.
        rows: usize,
        /// Number of columns.
        cols: usize,
    },
    /// An input holds NaN or an infinity.
    #[error("{what} contains a non-finite value (NaN or infinity) at ({row}, {col})")]
    NonFinite {
        /// Which input.
        what: &'static str,
        /// Row of the first offending entry.
        row: usize,
        /// Column of the first offending entry (0 for vectors).
        col: usize,
    },
    /// Two inputs that must have the same length (number of samples) do not.
    #[error("{what}: expected length {expected}, found {found}")]
    LengthMismatch {
        /// Which input.
        what: &'static str,
        /// The length implied by the other input.
        expected: usize,
        /// The length given.
        found: usize,
    },
    /// Partial primal statistics with different feature shifts cannot be merged.
    #[error("primal statistics with different feature shifts cannot be merged: give every partition the same shift")]
    ShiftMismatch,
    /// Prediction inputs have a different number of features than the training data.
    #[error("the model was fitted on {expected} features but the input has {found}")]
    FeatureMismatch {
        /// Features seen at fit time.
        expected: usize,
        /// Features of the prediction input.
        found: usize,
    },
    /// A binary label is not `-1.0` or `+1.0`.
    #[error("binary label at index {index} is {value}; labels must be -1.0 or +1.0")]
    InvalidBinaryLabel {
        /// Sample index.
        index: usize,
        /// The label given.
        value: f64,
    },
    /// Binary labels contain only one of the two classes.
    #[error("binary labels contain no {missing} sample; both -1 and +1 must occur")]
    MissingBinaryClass {
        /// The class that does not occur (`-1.0` or `+1.0`).
        missing: f64,
    },
    /// Fewer than two classes in a classification problem.
    #[error("classification needs at least 2 classes, found {found}")]
    TooFewClasses {
        /// Number of distinct classes found.
        found: usize,
    },
    /// A class (or a multi-label column) has no positive training sample, so its one-vs-rest
    /// problem is degenerate.
    #[error("class {class} of {n_classes} has no training samples; relabel classes to 0..n_classes-1 without gaps or drop the label")]
    EmptyClass {
        /// The class (label column) without samples.
        class: usize,
        /// Number of classes (label columns).
        n_classes: usize,
    },
    /// A class label is not below the number of classes.
    #[error("label {label} at index {index} is out of range for {n_classes} classes")]
    LabelOutOfRange {
        /// Sample index.
        index: usize,
        /// The label given.
        label: usize,
        /// Number of classes.
        n_classes: usize,
    },
    /// Top-k prediction was asked for more labels than exist.
    #[error("top-k prediction: k = {k} for sample {index} exceeds the number of labels {n_labels}")]
    InvalidTopK {
        /// Sample index.
        index: usize,
        /// The requested k.
        k: usize,
        /// Number of labels.
        n_labels: usize,
    },
    /// A split fraction is not in the open interval `(0, 1)`.
    #[error("split fraction must lie in (0, 1), got {fraction}")]
    InvalidFraction {
        /// The rejected value.
        fraction: f64,
    },
    /// A split would leave the training or the test part empty.
    #[error("splitting {n} samples gives {n_train} training and {n_test} test samples; both must be >= 1")]
    DegenerateSplit {
        /// Number of samples.
        n: usize,
        /// Resulting training size.
        n_train: usize,
        /// Resulting test size.
        n_test: usize,
    },
    /// The number of folds is not in `2..=n`.
    #[error("k-fold cross-validation needs 2 <= k <= n, got k = {k} for n = {n}")]
    InvalidFolds {
        /// The requested number of folds.
        k: usize,
        /// Number of samples.
        n: usize,
    },
    /// Conjugate gradient exhausted its iteration budget.
    #[error("conjugate gradient did not converge in {iterations} iterations: relative residual {residual:.3e} > tol {tol:.1e}; raise max_iter or use Solver::Direct")]
    NotConverged {
        /// Iterations performed.
        iterations: usize,
        /// Worst relative residual `||b - H x|| / ||b||` over the right-hand sides.
        residual: f64,
        /// The requested tolerance.
        tol: f64,
    },
    /// Conjugate gradient met a direction of non-positive curvature.
    #[error("conjugate gradient broke down (p^T H p = {curvature:e} <= 0): the kernel matrix plus I/gamma is not positive definite; use Solver::Direct")]
    NotPositiveDefinite {
        /// The offending curvature `p^T H p`.
        curvature: f64,
    },
    /// A dense factorisation or product failed.
    #[error(transparent)]
    Linalg(#[from] LinalgError),
    /// A metric's input was invalid (see `ksvd-metrics`).
    #[error(transparent)]
    Metrics(#[from] ksvd_metrics::MetricsError),
}

/// Result alias for this crate.
pub type Result<T> = std::result::Result<T, LssvmError>;

/// `Ok` if every entry of `a` is finite.
pub(crate) fn check_finite(what: &'static str, a: ArrayView2<'_, f64>) -> Result<()> {
    match a.indexed_iter().find(|(_, v)| !v.is_finite()) {
        Some(((row, col), _)) => Err(LssvmError::NonFinite { what, row, col }),
        None => Ok(()),
    }
}

/// `Ok` if `a` has at least one row and one column.
pub(crate) fn check_nonempty(what: &'static str, a: ArrayView2<'_, f64>) -> Result<()> {
    if a.nrows() == 0 || a.ncols() == 0 {
        return Err(LssvmError::EmptyInput {
            what,
            rows: a.nrows(),
            cols: a.ncols(),
        });
    }
    Ok(())
}

/// `Ok` if `gamma` is finite and positive.
pub(crate) fn check_gamma(gamma: f64) -> Result<()> {
    if gamma.is_finite() && gamma > 0.0 {
        Ok(())
    } else {
        Err(LssvmError::InvalidGamma { gamma })
    }
}
