//! The one error type of this crate.
use thiserror::Error;

/// Everything that can make a metric undefined or its input invalid. Variants carry the
/// offending values so the message says what to change.
#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum MetricsError {
    /// An input has no samples (or an indicator matrix no rows or no columns).
    #[error("{what} is empty ({rows} x {cols}); a metric needs at least one sample")]
    Empty {
        /// Which input.
        what: &'static str,
        /// Its number of rows (samples).
        rows: usize,
        /// Its number of columns (1 for a slice).
        cols: usize,
    },
    /// Two inputs that must have one entry per sample have different lengths.
    #[error("{what}: expected length {expected}, found {found}")]
    LengthMismatch {
        /// Which input, and which dimension.
        what: &'static str,
        /// The length of the reference input (the truth).
        expected: usize,
        /// The length found.
        found: usize,
    },
    /// A class label is not in `0..n_classes`.
    #[error("label {label} at index {index} is out of range for {n_classes} classes")]
    LabelOutOfRange {
        /// The sample index.
        index: usize,
        /// The offending label.
        label: usize,
        /// The number of classes.
        n_classes: usize,
    },
    /// A score or a value is NaN or infinite.
    #[error("{what} is not finite at index {index} (value {value})")]
    NonFinite {
        /// Which input.
        what: &'static str,
        /// The first offending index.
        index: usize,
        /// The offending value.
        value: f64,
    },
    /// AUROC needs at least one positive and one negative sample.
    #[error("AUROC is undefined with {positives} positive and {negatives} negative samples; both classes must occur")]
    SingleClass {
        /// Number of positive samples.
        positives: usize,
        /// Number of negative samples.
        negatives: usize,
    },
}

/// Result alias for this crate.
pub type Result<T> = std::result::Result<T, MetricsError>;

/// `Ok` if `found == expected`, else [`MetricsError::LengthMismatch`].
pub(crate) fn check_len(what: &'static str, expected: usize, found: usize) -> Result<()> {
    if expected != found {
        return Err(MetricsError::LengthMismatch { what, expected, found });
    }
    Ok(())
}

/// `Ok` if `len > 0`, else [`MetricsError::Empty`].
pub(crate) fn check_nonempty(what: &'static str, len: usize) -> Result<()> {
    if len == 0 {
        return Err(MetricsError::Empty { what, rows: 0, cols: 1 });
    }
    Ok(())
}

/// `Ok` if every value is finite, else [`MetricsError::NonFinite`] at the first offender.
pub(crate) fn check_finite(what: &'static str, values: &[f64]) -> Result<()> {
    match values.iter().position(|v| !v.is_finite()) {
        Some(index) => Err(MetricsError::NonFinite {
            what,
            index,
            value: values[index],
        }),
        None => Ok(()),
    }
}
