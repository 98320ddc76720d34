//! The error type of this crate.
use std::path::PathBuf;

use thiserror::Error;

/// Everything that can go wrong in the streaming path. Variants carry the offending values and
/// say what to do.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum StreamingError {
    /// A parameter is out of range.
    #[error("invalid parameter {name} = {value}: {reason}")]
    InvalidParameter {
        /// Parameter name.
        name: &'static str,
        /// Offending value (as text, so that lists and paths fit too).
        value: String,
        /// What is required.
        reason: String,
    },
    /// A LIBSVM source holds no (selected) rows.
    #[error("{path} has no rows{selection}: nothing to fit or score")]
    EmptySource {
        /// The file.
        path: PathBuf,
        /// The row selection in force (empty, or e.g. " in the test split").
        selection: String,
    },
    /// The labels of the training part are not binary and no positive label was given.
    #[error(
        "{path}: AUROC needs two classes; the training labels are {labels:?}; set `positive_label` for one-vs-rest"
    )]
    LabelsNotBinary {
        /// The file.
        path: PathBuf,
        /// Distinct labels found (at most the first few).
        labels: Vec<f64>,
    },
    /// A scored part holds a single class, so AUROC is undefined.
    #[error("AUROC is undefined with {positives} positive and {negatives} negative rows")]
    SingleClass {
        /// Number of positive rows.
        positives: usize,
        /// Number of negative rows.
        negatives: usize,
    },
    /// An explicit landmark index lies outside the data.
    #[error("{what} landmark {index} is out of range: the data has {len}")]
    LandmarkOutOfRange {
        /// `"row"` or `"column"`.
        what: &'static str,
        /// The offending index.
        index: usize,
        /// The number of rows or columns.
        len: usize,
    },
    /// The landmark block has numerical rank zero (e.g. every landmark row is empty).
    #[error("the {rows} x {cols} landmark block has numerical rank 0 (largest singular value {largest:e}); check the data and the bandwidth")]
    RankZero {
        /// Landmark rows.
        rows: usize,
        /// Landmark columns.
        cols: usize,
        /// Largest singular value / eigenvalue found.
        largest: f64,
    },
    /// A later pass saw a different number of rows than the first one (the file changed, or a
    /// part was given another part's number).
    #[error("{path} changed between passes: the first pass saw {expected} rows, a later one at least {got}")]
    SourceChanged {
        /// The file.
        path: PathBuf,
        /// Rows seen by the first pass.
        expected: usize,
        /// Rows seen by the later pass.
        got: usize,
    },
    /// An embedding was requested before the column normalisation was computed.
    #[error(
        "the model has no column normalisation yet: train it first (`Fitted::train`, or pass 3 and `Fitted::finish`)"
    )]
    NotNormalized,
    /// A chunk has a different number of columns than the fitted model.
    #[error("a chunk has {got} feature columns but the model was fitted with {expected}")]
    FeatureMismatch {
        /// Columns of the fitted model.
        expected: usize,
        /// Columns of the chunk.
        got: usize,
    },
    /// A score or statistic became non-finite.
    #[error("non-finite {what}; the bandwidth may be too small for the data's scale")]
    NonFinite {
        /// What became non-finite.
        what: &'static str,
    },
    /// The reader thread stopped unexpectedly.
    #[error("the chunk reader thread of {path} stopped unexpectedly")]
    ReaderThread {
        /// The file.
        path: PathBuf,
    },
    /// A partial state of the passes is corrupt, of another kind or version, or does not fit the
    /// states it is merged with.
    #[error("partial state ({kind}): {reason}")]
    PartialState {
        /// The kind of state (`"scan"`, `"landmarks"`, ...).
        kind: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// An error of the dataset readers.
    #[error(transparent)]
    Dataset(#[from] ksvd_datasets::DatasetError),
    /// An error of the linear-algebra layer.
    #[error(transparent)]
    Linalg(#[from] ksvd_linalg::LinalgError),
    /// An error of the solvers.
    #[error(transparent)]
    Solver(#[from] ksvd_solvers::SolverError),
    /// An error of the kernels.
    #[error(transparent)]
    Kernel(#[from] ksvd_kernels::KernelError),
}

impl StreamingError {
    pub(crate) fn invalid(name: &'static str, value: impl std::fmt::Display, reason: impl Into<String>) -> Self {
        StreamingError::InvalidParameter {
            name,
            value: value.to_string(),
            reason: reason.into(),
        }
    }
}

/// Result alias for this crate.
pub type Result<T> = std::result::Result<T, StreamingError>;
