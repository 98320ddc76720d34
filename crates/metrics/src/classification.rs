//! Classification metrics: accuracy, micro- and macro-F1 for single-label multi-class and for
//! multi-label (indicator-matrix) predictions.
//!
//! Per class `c`, with true positives `tp_c`, false positives `fp_c`, false negatives `fn_c`:
//! `F1_c = 2 tp_c / (2 tp_c + fp_c + fn_c)` (the harmonic mean of precision and recall, written
//! so that it is defined whenever either is). Micro-F1 pools the counts over classes,
//! `2 TP / (2 TP + FP + FN)`; macro-F1 is the unweighted mean of the `F1_c`.
use crate::error::{check_len, check_nonempty, MetricsError, Result};
use ndarray::{Array2, ArrayView2, Zip};

/// The F1 of a class with `tp = fp = fn = 0` (no true and no predicted sample), which is `0/0`.
///
/// scikit-learn's `f1_score(..., zero_division="warn")` default scores such a class 0 (with a
/// warning). Which classes it averages over depends on the input: on *integer labels* its label
/// set is the union of the labels in `y_true` and `y_pred`, so a class absent from both is left
/// out ([`ZeroDivision::Exclude`]); on *indicator matrices* (multi-label) or with an explicit
/// `labels=range(n_classes)` every column counts and the absent one scores 0
/// ([`ZeroDivision::Zero`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ZeroDivision {
    /// Score 0 and include the class in the macro mean (scikit-learn's default value).
    #[default]
    Zero,
    /// Score 1 and include the class (scikit-learn's `zero_division=1`).
    One,
    /// Leave the class out of the macro mean (scikit-learn on integer labels).
    Exclude,
}

impl ZeroDivision {
    fn value(self) -> Option<f64> {
        match self {
            ZeroDivision::Zero => Some(0.0),
            ZeroDivision::One => Some(1.0),
            ZeroDivision::Exclude => None,
        }
    }
}

/// Micro- and macro-averaged F1 with the per-class scores.
#[derive(Debug, Clone, PartialEq)]
pub struct F1Scores {
    /// `2 TP / (2 TP + FP + FN)` over all classes pooled. If `TP + FP + FN = 0` it is the
    /// [`ZeroDivision`] value (0 for `Exclude`).
    pub micro_f1: f64,
    /// Mean of the per-class F1 over the classes the [`ZeroDivision`] rule includes (0 if none).
    pub macro_f1: f64,
    /// `F1_c` per class, `None` for a class with `tp = fp = fn = 0`.
    pub per_class: Vec<Option<f64>>,
}

#[derive(Debug, Clone, Copy, Default)]
struct Counts {
    tp: usize,
    fp: usize,
    fn_: usize,
}

fn scores(counts: &[Counts], zero_division: ZeroDivision) -> F1Scores {
    let f1 = |c: &Counts| {
        let den = 2 * c.tp + c.fp + c.fn_;
        (den > 0).then(|| 2.0 * c.tp as f64 / den as f64)
    };
    let per_class: Vec<Option<f64>> = counts.iter().map(f1).collect();
    let pooled = counts.iter().fold(Counts::default(), |a, c| Counts {
        tp: a.tp + c.tp,
        fp: a.fp + c.fp,
        fn_: a.fn_ + c.fn_,
    });
    let fallback = zero_division.value().unwrap_or(0.0);
    let micro_f1 = f1(&pooled).unwrap_or(fallback);
    let included: Vec<f64> = per_class.iter().filter_map(|f| f.or(zero_division.value())).collect();
    let macro_f1 = if included.is_empty() {
        0.0
    } else {
        included.iter().sum::<f64>() / included.len() as f64
    };
    F1Scores {
        micro_f1,
        macro_f1,
        per_class,
    }
}

fn check_labels(y_true: &[usize], y_pred: &[usize], n_classes: usize) -> Result<()> {
    check_nonempty("true labels", y_true.len())?;
    check_len("predicted labels", y_true.len(), y_pred.len())?;
    for (index, &label) in y_true.iter().chain(y_pred).enumerate() {
        if label >= n_classes {
            return Err(MetricsError::LabelOutOfRange {
                index: index % y_true.len(),
                label,
                n_classes,
            });
        }
    }
    Ok(())
}

/// Accuracy: the fraction of samples with `y_pred[i] == y_true[i]`, in `[0, 1]`.
///
/// Errors: empty inputs, or `y_pred` of a different length than `y_true`.
pub fn accuracy(y_true: &[usize], y_pred: &[usize]) -> Result<f64> {
    check_nonempty("true labels", y_true.len())?;
    check_len("predicted labels", y_true.len(), y_pred.len())?;
    let hits = y_true.iter().zip(y_pred).filter(|(a, b)| a == b).count();
    Ok(hits as f64 / y_true.len() as f64)
}

/// F1 scores of single-label multi-class predictions with labels in `0..n_classes`.
///
/// Every sample has exactly one true and one predicted label, so each error is one false
/// positive (for the predicted class) and one false negative (for the true class): `FP = FN`,
/// and micro-F1 equals micro-precision, micro-recall and [`accuracy`].
pub fn f1_multiclass(
    y_true: &[usize],
    y_pred: &[usize],
    n_classes: usize,
    zero_division: ZeroDivision,
) -> Result<F1Scores> {
    check_labels(y_true, y_pred, n_classes)?;
    let mut counts = vec![Counts::default(); n_classes];
    for (&t, &p) in y_true.iter().zip(y_pred) {
        if t == p {
            counts[t].tp += 1;
        } else {
            counts[p].fp += 1;
            counts[t].fn_ += 1;
        }
    }
    Ok(scores(&counts, zero_division))
}

/// F1 scores of multi-label predictions given as `n_samples x n_labels` indicator matrices.
/// Micro-F1 pools `tp, fp, fn` over all (sample, label) cells; macro-F1 averages per label
/// column.
pub fn f1_multilabel(
    y_true: ArrayView2<'_, bool>,
    y_pred: ArrayView2<'_, bool>,
    zero_division: ZeroDivision,
) -> Result<F1Scores> {
    if y_true.nrows() == 0 || y_true.ncols() == 0 {
        return Err(MetricsError::Empty {
            what: "true label indicators",
            rows: y_true.nrows(),
            cols: y_true.ncols(),
        });
    }
    check_len("predicted label rows", y_true.nrows(), y_pred.nrows())?;
    check_len("predicted label columns", y_true.ncols(), y_pred.ncols())?;
    let mut counts = vec![Counts::default(); y_true.ncols()];
    Zip::indexed(y_true)
        .and(y_pred)
        .for_each(|(_, c), &t, &p| match (t, p) {
            (true, true) => counts[c].tp += 1,
            (false, true) => counts[c].fp += 1,
            (true, false) => counts[c].fn_ += 1,
            (false, false) => {}
        });
    Ok(scores(&counts, zero_division))
}

/// The `n x n_labels` indicator matrix of label sets (`sets[i]` lists the labels of sample `i`;
/// duplicates are harmless).
pub fn label_indicator(sets: &[Vec<usize>], n_labels: usize) -> Result<Array2<bool>> {
    let mut out = Array2::from_elem((sets.len(), n_labels), false);
    for (index, set) in sets.iter().enumerate() {
        for &label in set {
            if label >= n_labels {
                return Err(MetricsError::LabelOutOfRange {
                    index,
                    label,
                    n_classes: n_labels,
                });
            }
            out[[index, label]] = true;
        }
    }
    Ok(out)
}

/// The number of labels of each sample (row sums of an indicator matrix): the `k` of the
/// top-k rule.
pub fn label_counts(indicator: ArrayView2<'_, bool>) -> Vec<usize> {
    indicator
        .rows()
        .into_iter()
        .map(|r| r.iter().filter(|&&b| b).count())
        .collect()
}
