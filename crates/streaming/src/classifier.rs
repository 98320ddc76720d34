//! The downstream linear classifier, trained in one streaming pass, and AUROC.
//!
//! **Choice.** Ridge regression on `±1` targets with standardised features and an unpenalised
//! intercept (the primal LS-SVM), from accumulated sufficient statistics
//! ([`ksvd_lssvm::PrimalStats`]: the count, `Σ f`, `Σ f fᵀ`, `Σ y`, `Σ f y`, an `(r + 1)²`
//! state) solved by [`ksvd_lssvm::PrimalStats::solve_standardized`]. It is exact, needs one pass
//! and no learning rate, and its result depends on the chunking only through floating-point
//! rounding; logistic regression by SGD would need several passes and step-size tuning, and
//! AUROC only depends on the ranking of the scores. Because the features are standardised, the
//! classifier is invariant to any per-column scaling of the embeddings (the Nyström column
//! normalisation in particular).
use ksvd_lssvm::{LssvmError, PrimalStats};
use ndarray::{Array1, Array2, ArrayView2, Axis};

use crate::error::{Result, StreamingError};

/// Sufficient statistics of a ridge regression, accumulated chunk by chunk: the count, `Σ g`,
/// `Σ g gᵀ`, `Σ y`, `Σ g y` of the shifted features `g = f − shift`, held as
/// [`ksvd_lssvm::PrimalStats`] (their one owner, with one target column, which also solves the
/// standardised ridge problem); this type adds the classifier's form and error terms.
///
/// Features are shifted by the column means of the first chunk before accumulating, which keeps
/// `Σ f fᵀ − n μ μᵀ` accurate when the means are large compared with the spreads.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(into = "RidgeState", try_from = "RidgeState")]
pub struct RidgeAccumulator {
    stats: PrimalStats,
}

/// The serialised form of [`RidgeAccumulator`] (inside the partial states, see
/// [`crate::PartialState`]): the statistics with the single target column as scalars.
#[derive(serde::Serialize, serde::Deserialize)]
struct RidgeState {
    dim: usize,
    count: usize,
    shift: Option<Array1<f64>>,
    s1: Array1<f64>,
    s2: Array2<f64>,
    sy: f64,
    sfy: Array1<f64>,
}

impl From<RidgeAccumulator> for RidgeState {
    fn from(acc: RidgeAccumulator) -> Self {
        let st = acc.stats;
        RidgeState {
            dim: st.dim(),
            count: st.count(),
            shift: st.shift().cloned(),
            s1: st.sum().clone(),
            s2: st.gram().clone(),
            sy: st.target_sum()[0],
            sfy: st.cross().column(0).to_owned(),
        }
    }
}

impl TryFrom<RidgeState> for RidgeAccumulator {
    type Error = StreamingError;
    fn try_from(s: RidgeState) -> Result<Self> {
        if s.s1.len() != s.dim {
            return Err(StreamingError::invalid(
                "ridge statistics",
                s.s1.len(),
                format!("expected {} feature sums", s.dim),
            ));
        }
        let cross = s.sfy.insert_axis(Axis(1));
        let stats = PrimalStats::from_parts(s.count, s.shift, s.s1, s.s2, Array1::from_elem(1, s.sy), cross)
            .map_err(|e| StreamingError::invalid("ridge statistics", s.dim, e.to_string()))?;
        Ok(RidgeAccumulator { stats })
    }
}

/// `score(f) = w · f + b`, a linear decision function on the embeddings.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LinearClassifier {
    /// Weights `w` (one per embedding dimension).
    pub weights: Array1<f64>,
    /// Intercept `b`.
    pub bias: f64,
}

impl LinearClassifier {
    /// Scores of the rows of `features`.
    pub fn decision(&self, features: ArrayView2<'_, f64>) -> Array1<f64> {
        features.dot(&self.weights) + self.bias
    }

    /// The same decision function for features scaled column-wise by `factors`
    /// (`f' = f ⊙ factors`, all factors nonzero).
    pub fn for_scaled_features(&self, factors: &Array1<f64>) -> LinearClassifier {
        LinearClassifier {
            weights: &self.weights / factors,
            bias: self.bias,
        }
    }
}

impl RidgeAccumulator {
    /// An empty accumulator for `dim` features (shifted by the means of the first chunk).
    pub fn new(dim: usize) -> Self {
        RidgeAccumulator {
            stats: PrimalStats::shifted_by_first_rows(dim, 1),
        }
    }

    /// An empty accumulator whose features are shifted by a fixed `shift` (the same for every
    /// partition of a distributed pass, so that partial accumulators merge by plain addition).
    pub fn with_shift(shift: Array1<f64>) -> Self {
        RidgeAccumulator {
            stats: PrimalStats::with_shift(shift, 1),
        }
    }

    /// Adds the statistics of `other`, accumulated on other rows with the same shift: the result
    /// is that of one accumulator over both sets of rows (up to the order of the floating-point
    /// additions). Associative and commutative up to rounding.
    pub fn merge(&mut self, other: &RidgeAccumulator) -> Result<()> {
        self.stats.merge(&other.stats).map_err(|e| {
            StreamingError::invalid(
                "ridge statistics",
                format!("dimension {} (shift {:?})", other.stats.dim(), other.stats.shift()),
                format!(
                    "cannot merge with dimension {} (shift {:?}): {e}",
                    self.stats.dim(),
                    self.stats.shift()
                ),
            )
        })
    }

    /// Rows accumulated so far.
    pub fn count(&self) -> usize {
        self.stats.count()
    }

    /// Adds the rows of `features` with targets `y` (`±1` for classification).
    pub fn add(&mut self, features: ArrayView2<'_, f64>, y: &[f64]) -> Result<()> {
        let (n, d) = features.dim();
        if d != self.stats.dim() || y.len() != n {
            return Err(StreamingError::invalid(
                "features",
                format!("{n} x {d} with {} targets", y.len()),
                format!("expected {} columns and one target per row", self.stats.dim()),
            ));
        }
        let targets =
            ArrayView2::from_shape((n, 1), y).map_err(|e| StreamingError::invalid("targets", n, e.to_string()))?;
        self.stats.add(features, targets).map_err(|e| match e {
            LssvmError::NonFinite { .. } => StreamingError::NonFinite {
                what: "classifier input",
            },
            e => StreamingError::invalid("features", format!("{n} x {d}"), e.to_string()),
        })
    }

    /// Solves `min_w,b (1/n) Σ (y_i − w·z_i − b)² + λ ‖w‖²` on standardised features
    /// `z = (f − μ)/σ` (columns with `σ ≈ 0` get weight 0; `λ > 0`) by
    /// [`PrimalStats::solve_standardized`] with `γ = 1/(n λ)`, and returns the decision function
    /// in the original feature space.
    pub fn solve(&self, lambda: f64) -> Result<LinearClassifier> {
        if !(lambda.is_finite() && lambda > 0.0) {
            return Err(StreamingError::invalid("ridge", lambda, "must be positive and finite"));
        }
        if self.stats.count() == 0 {
            return Err(StreamingError::invalid(
                "rows",
                0,
                "the classifier saw no training rows",
            ));
        }
        let gamma = 1.0 / (self.stats.count() as f64 * lambda);
        let sol = self
            .stats
            .solve_standardized(gamma)
            .map_err(|e| StreamingError::invalid("ridge", lambda, e.to_string()))?;
        let weights = sol.weights.column(0).to_owned();
        let bias = sol.bias[0];
        if !bias.is_finite() || weights.iter().any(|w| !w.is_finite()) {
            return Err(StreamingError::NonFinite {
                what: "classifier weights",
            });
        }
        Ok(LinearClassifier { weights, bias })
    }
}

/// AUROC errors in this crate's terms: a single class is [`StreamingError::SingleClass`], a NaN
/// score [`StreamingError::NonFinite`] (the AUROC itself is [`ksvd_metrics::auroc`], its one
/// definition).
impl From<ksvd_metrics::MetricsError> for StreamingError {
    fn from(e: ksvd_metrics::MetricsError) -> Self {
        match e {
            ksvd_metrics::MetricsError::SingleClass { positives, negatives } => {
                StreamingError::SingleClass { positives, negatives }
            }
            ksvd_metrics::MetricsError::NonFinite { .. } => StreamingError::NonFinite { what: "score" },
            other => StreamingError::invalid("scores", "the score list", other.to_string()),
        }
    }
}

/// Which label is the positive class.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LabelRule {
    /// Rows with exactly this label are positive, all others negative.
    pub positive: f64,
}

impl LabelRule {
    /// From the training labels: `positive` if given, else the larger of exactly two labels.
    pub fn from_counts(path: &std::path::Path, counts: &[(f64, usize)], positive: Option<f64>) -> Result<Self> {
        if let Some(p) = positive {
            return Ok(LabelRule { positive: p });
        }
        match counts {
            [_, (hi, _)] => Ok(LabelRule { positive: *hi }),
            _ => Err(StreamingError::LabelsNotBinary {
                path: path.to_path_buf(),
                labels: counts.iter().take(10).map(|(l, _)| *l).collect(),
            }),
        }
    }

    /// `+1` for the positive class, `−1` otherwise.
    #[inline]
    pub fn target(&self, label: f64) -> f64 {
        if label == self.positive {
            1.0
        } else {
            -1.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn auroc(scores: &[f64], positive: &[bool]) -> Result<f64> {
        Ok(ksvd_metrics::auroc(scores, positive)?)
    }

    #[test]
    fn auroc_errors_in_this_crates_terms() {
        assert_eq!(auroc(&[3.0, 2.0, 1.0], &[true, false, false]).unwrap(), 1.0);
        assert!(matches!(
            auroc(&[1.0], &[true]),
            Err(StreamingError::SingleClass { .. })
        ));
        assert!(matches!(
            auroc(&[f64::NAN, 1.0], &[true, false]),
            Err(StreamingError::NonFinite { .. })
        ));
    }
}
