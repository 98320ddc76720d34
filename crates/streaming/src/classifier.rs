//! The downstream linear classifier, trained in one streaming pass, and AUROC.
//!
//! **Choice.** Ridge regression on `±1` targets with standardised features and an unpenalised
//! intercept (the primal LS-SVM), from accumulated sufficient statistics: the count, `Σ f`,
//! `Σ f fᵀ`, `Σ y`, `Σ f y` (an `(r + 1)²` state). It is exact, needs one pass and no learning
//! rate, and its result depends on the chunking only through floating-point rounding; logistic regression by SGD would need
//! several passes and step-size tuning, and AUROC only depends on the ranking of the scores.
//! Because the features are standardised, the classifier is invariant to any per-column
//! scaling of the embeddings (the Nyström column normalisation in particular).
use ksvd_linalg::dense;
use ksvd_lssvm::{LssvmError, PrimalStats};
use ndarray::{Array1, Array2, ArrayView2, Axis};

use crate::error::{Result, StreamingError};

/// Sufficient statistics of a ridge regression, accumulated chunk by chunk: the count, `Σ g`,
/// `Σ g gᵀ`, `Σ y`, `Σ g y` of the shifted features `g = f − shift`, held as
/// [`ksvd_lssvm::PrimalStats`] (their one owner, with one target column); this type adds the
/// standardised ridge solve and the classifier's error terms.
///
/// Features are shifted by the column means of the first chunk before accumulating, which keeps
/// `Σ f fᵀ − n μ μᵀ` accurate when the means are large compared with the spreads.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(into = "RidgeState", try_from = "RidgeState")]
pub struct RidgeAccumulator {
    stats: PrimalStats,
}

/// The serialised form of [`RidgeAccumulator`] (the partial-state format of `crate::partial`,
/// version 1): the statistics with the single target column as scalars.
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

    /// Solves `min_w,b (1/n) Σ (y_i − w·g_i − b)² + λ ‖w‖²` on standardised features
    /// `g = (f − μ)/σ` (columns with `σ = 0` get weight 0) and returns the decision function in
    /// the original feature space.
    pub fn solve(&self, lambda: f64) -> Result<LinearClassifier> {
        if !(lambda.is_finite() && lambda >= 0.0) {
            return Err(StreamingError::invalid(
                "ridge",
                lambda,
                "must be non-negative and finite",
            ));
        }
        let n = self.stats.count() as f64;
        let d = self.stats.dim();
        let Some(shift) = self.stats.shift().filter(|_| self.stats.count() > 0) else {
            return Err(StreamingError::invalid(
                "rows",
                0,
                "the classifier saw no training rows",
            ));
        };
        let mean = self.stats.sum() / n;
        let ybar = self.stats.target_sum()[0] / n;
        let sfy = self.stats.cross().column(0);
        let mut cov = self.stats.gram() / n;
        for a in 0..d {
            for b in 0..d {
                cov[[a, b]] -= mean[a] * mean[b];
            }
        }
        let sd = Array1::from_iter((0..d).map(|a| cov[[a, a]].max(0.0).sqrt()));
        let top = sd.iter().copied().fold(0.0, f64::max);
        let keep: Vec<usize> = (0..d)
            .filter(|&a| sd[a] > 1e3 * f64::EPSILON * top && sd[a] > 0.0)
            .collect();
        let mut weights = Array1::zeros(d);
        if !keep.is_empty() {
            let k = keep.len();
            let mut a = Array2::zeros((k, k));
            let mut c = Array2::zeros((k, 1));
            for (p, &i) in keep.iter().enumerate() {
                for (q, &j) in keep.iter().enumerate() {
                    a[[p, q]] = cov[[i, j]] / (sd[i] * sd[j]);
                }
                a[[p, p]] += lambda;
                c[[p, 0]] = (sfy[i] / n - mean[i] * ybar) / sd[i];
            }
            let w = match dense::cholesky_solve(a.view(), c.view()) {
                Ok(w) => w,
                Err(_) => dense::pinv(a.view(), 1e-12)?.dot(&c),
            };
            for (p, &i) in keep.iter().enumerate() {
                weights[i] = w[[p, 0]] / sd[i];
            }
        }
        let bias = ybar - weights.dot(&(&mean + shift));
        if !bias.is_finite() || weights.iter().any(|w| !w.is_finite()) {
            return Err(StreamingError::NonFinite {
                what: "classifier weights",
            });
        }
        Ok(LinearClassifier { weights, bias })
    }
}

/// The same ridge classifier computed in memory by an independent route (two-pass standardisation
/// and the pseudo-inverse of the augmented least-squares system `[G 1; √(nλ) I 0]`), the
/// reference of the streaming one.
pub fn fit_ridge_in_memory(features: ArrayView2<'_, f64>, y: &[f64], lambda: f64) -> Result<LinearClassifier> {
    let (n, d) = features.dim();
    if n == 0 || y.len() != n {
        return Err(StreamingError::invalid(
            "features",
            format!("{n} rows, {} targets", y.len()),
            "need matching, non-empty",
        ));
    }
    let mean = features.mean_axis(Axis(0)).unwrap_or_else(|| Array1::zeros(d));
    let centered = &features - &mean;
    let sd = centered.map_axis(Axis(0), |c| (c.dot(&c) / n as f64).sqrt());
    let top = sd.iter().copied().fold(0.0, f64::max);
    let keep: Vec<usize> = (0..d)
        .filter(|&a| sd[a] > 1e3 * f64::EPSILON * top && sd[a] > 0.0)
        .collect();
    let k = keep.len();
    let mut design = Array2::zeros((n + k, k + 1));
    let mut rhs = Array2::zeros((n + k, 1));
    for i in 0..n {
        for (p, &a) in keep.iter().enumerate() {
            design[[i, p]] = centered[[i, a]] / sd[a];
        }
        design[[i, k]] = 1.0;
        rhs[[i, 0]] = y[i];
    }
    for p in 0..k {
        design[[n + p, p]] = (n as f64 * lambda).sqrt();
    }
    let sol = dense::pinv(design.view(), 1e-13)?.dot(&rhs);
    let mut weights = Array1::zeros(d);
    for (p, &a) in keep.iter().enumerate() {
        weights[a] = sol[[p, 0]] / sd[a];
    }
    let bias = sol[[k, 0]] - weights.dot(&mean);
    Ok(LinearClassifier { weights, bias })
}

/// The area under the ROC curve of `scores` for the classes `positive`, ties counted one half:
/// [`ksvd_metrics::auroc`] (the one definition, scores first), with its errors in this crate's
/// terms (a single class is [`StreamingError::SingleClass`], a NaN score
/// [`StreamingError::NonFinite`]).
pub fn auroc(scores: &[f64], positive: &[bool]) -> Result<f64> {
    ksvd_metrics::auroc(scores, positive).map_err(|e| match e {
        ksvd_metrics::MetricsError::SingleClass { positives, negatives } => {
            StreamingError::SingleClass { positives, negatives }
        }
        ksvd_metrics::MetricsError::NonFinite { .. } => StreamingError::NonFinite { what: "score" },
        other => StreamingError::invalid("scores", scores.len(), other.to_string()),
    })
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

    #[test]
    fn auroc_examples() {
        assert_eq!(
            auroc(&[0.1, 0.4, 0.35, 0.8], &[false, false, true, true]).unwrap(),
            0.75
        );
        assert_eq!(auroc(&[1.0, 1.0, 1.0], &[true, false, false]).unwrap(), 0.5);
        assert_eq!(auroc(&[3.0, 2.0, 1.0], &[true, false, false]).unwrap(), 1.0);
        assert_eq!(auroc(&[3.0, 2.0, 1.0], &[false, false, true]).unwrap(), 0.0);
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
