//! Fitted models: the multi-output [`Lssvm`] and the binary, one-vs-rest multi-class and
//! multi-label classifiers built on it, plus the label decision rules.
use crate::error::{check_finite, check_nonempty, LssvmError, Result};
use crate::kernel::{block_into, gram, sq_norms, Kernel, KernelOperator};
use crate::params::{Solver, ValidLssvmParams};
use crate::solve::{solve_dual_cg, solve_dual_direct_owned, solve_primal, DualSolution};
use ksvd_linalg::dense::{gemm_into, matmul, row_argmax};
use ndarray::{s, Array1, Array2, ArrayView1, ArrayView2, Axis};

#[derive(Debug, Clone, PartialEq)]
enum Coefficients {
    /// `f(x) = x^T W + b`, `W` is `d x m`.
    Primal { weights: Array2<f64> },
    /// `f(x) = sum_i alpha_i k(x, x_i) + b`; `support` is the `N x d` training data.
    Dual {
        support: Array2<f64>,
        support_sq: Array1<f64>,
        alpha: Array2<f64>,
    },
}

/// A fitted multi-output LS-SVM: `m` decision functions `f_c(x) = sum_i alpha_ic k(x, x_i) + b_c`
/// (function-estimation form), one per target column, sharing the kernel and `gamma`.
///
/// With the linear kernel the model stores `W = X^T alpha` (`d x m`) whatever the solver, so
/// prediction does not need the training data.
#[derive(Debug, Clone, PartialEq)]
pub struct Lssvm {
    kernel: Kernel,
    gamma: f64,
    coef: Coefficients,
    bias: Array1<f64>,
    n_features: usize,
    solver: Solver,
    cg_iterations: Option<usize>,
}

/// Test rows per prediction block, in kernel entries (32 MiB of `f64`).
const PREDICT_BLOCK_ENTRIES: usize = 1 << 22;

impl Lssvm {
    /// Decision values `f_c(x_j)`, `n x m` (rows index the rows of `x`, columns the outputs).
    pub fn decision_function(&self, x: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        if x.ncols() != self.n_features {
            return Err(LssvmError::FeatureMismatch {
                expected: self.n_features,
                found: x.ncols(),
            });
        }
        check_finite("prediction features", x)?;
        let mut out = match &self.coef {
            Coefficients::Primal { weights } => matmul(x, weights.view())?,
            Coefficients::Dual {
                support,
                support_sq,
                alpha,
            } => {
                let n = x.nrows();
                let mut out = Array2::zeros((n, alpha.ncols()));
                let rows = (PREDICT_BLOCK_ENTRIES / support.nrows()).max(1);
                let x_sq = sq_norms(x);
                let mut start = 0;
                while start < n {
                    let end = (start + rows).min(n);
                    let mut kb = Array2::zeros((end - start, support.nrows()));
                    block_into(
                        &self.kernel,
                        x.slice(s![start..end, ..]),
                        x_sq.slice(s![start..end]),
                        support.view(),
                        support_sq.view(),
                        kb.view_mut(),
                    )?;
                    gemm_into(out.slice_mut(s![start..end, ..]), kb.view(), alpha.view(), 1.0, false)?;
                    start = end;
                }
                out
            }
        };
        out += &self.bias;
        Ok(out)
    }

    /// Number of features `d` seen at fit time.
    pub fn n_features(&self) -> usize {
        self.n_features
    }

    /// Number of outputs `m` (target columns).
    pub fn n_outputs(&self) -> usize {
        self.bias.len()
    }

    /// The biases `b_c`.
    pub fn bias(&self) -> ArrayView1<'_, f64> {
        self.bias.view()
    }

    /// Primal weights `W` (`d x m`), present for the linear kernel.
    pub fn weights(&self) -> Option<ArrayView2<'_, f64>> {
        match &self.coef {
            Coefficients::Primal { weights } => Some(weights.view()),
            Coefficients::Dual { .. } => None,
        }
    }

    /// Dual coefficients `alpha` (`N x m`, function-estimation form), present for non-linear
    /// kernels. Suykens' classifier coefficients are `y_i alpha_i` (see
    /// [`classifier_alpha`](crate::classifier_alpha)).
    pub fn dual_coefficients(&self) -> Option<ArrayView2<'_, f64>> {
        match &self.coef {
            Coefficients::Dual { alpha, .. } => Some(alpha.view()),
            Coefficients::Primal { .. } => None,
        }
    }

    /// The kernel.
    pub fn kernel(&self) -> Kernel {
        self.kernel
    }

    /// The regularisation `gamma`.
    pub fn gamma(&self) -> f64 {
        self.gamma
    }

    /// The solver that was used (never [`Solver::Auto`]).
    pub fn solver(&self) -> Solver {
        self.solver
    }

    /// Conjugate-gradient iterations, if CG was used.
    pub fn cg_iterations(&self) -> Option<usize> {
        self.cg_iterations
    }
}

/// A binary LS-SVM classifier, labels in `{-1, +1}`.
#[derive(Debug, Clone, PartialEq)]
pub struct BinaryLssvm {
    model: Lssvm,
}

impl BinaryLssvm {
    /// Decision values `f(x_j)`.
    pub fn decision_function(&self, x: ArrayView2<'_, f64>) -> Result<Array1<f64>> {
        Ok(self.model.decision_function(x)?.column(0).to_owned())
    }

    /// Labels `sign(f(x_j))` in `{-1, +1}`; a decision value of exactly 0 gives `+1`.
    pub fn predict(&self, x: ArrayView2<'_, f64>) -> Result<Array1<f64>> {
        Ok(self.decision_function(x)?.mapv(|f| if f >= 0.0 { 1.0 } else { -1.0 }))
    }

    /// The underlying one-output model.
    pub fn model(&self) -> &Lssvm {
        &self.model
    }
}

/// A one-vs-rest multi-class LS-SVM: one `+1 / -1` problem per class, all solved with one
/// factorisation; the predicted class is the arg-max of the decision values.
#[derive(Debug, Clone, PartialEq)]
pub struct MulticlassLssvm {
    model: Lssvm,
}

impl MulticlassLssvm {
    /// Decision values, `n x n_classes`.
    pub fn decision_function(&self, x: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        self.model.decision_function(x)
    }

    /// Predicted classes `argmax_c f_c(x_j)` (ties go to the smaller class index).
    pub fn predict(&self, x: ArrayView2<'_, f64>) -> Result<Vec<usize>> {
        argmax_labels(self.decision_function(x)?.view())
    }

    /// Number of classes.
    pub fn n_classes(&self) -> usize {
        self.model.n_outputs()
    }

    /// The underlying `n_classes`-output model.
    pub fn model(&self) -> &Lssvm {
        &self.model
    }
}

/// A one-vs-rest multi-label LS-SVM: one `+1 / -1` problem per label column.
#[derive(Debug, Clone, PartialEq)]
pub struct MultilabelLssvm {
    model: Lssvm,
}

impl MultilabelLssvm {
    /// Decision values, `n x n_labels`.
    pub fn decision_function(&self, x: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        self.model.decision_function(x)
    }

    /// The top-`k_j` labels of each sample by decision value, `k_j` usually the sample's true
    /// number of labels (the DeepWalk / HOPE evaluation protocol). See [`top_k_labels`].
    pub fn predict_top_k(&self, x: ArrayView2<'_, f64>, k: &[usize]) -> Result<Array2<bool>> {
        top_k_labels(self.decision_function(x)?.view(), k)
    }

    /// Every label whose decision value is `> 0` (the plain one-vs-rest rule; a sample may get
    /// no label at all). See [`threshold_labels`].
    pub fn predict_threshold(&self, x: ArrayView2<'_, f64>) -> Result<Array2<bool>> {
        threshold_labels(self.decision_function(x)?.view(), 0.0)
    }

    /// Number of labels.
    pub fn n_labels(&self) -> usize {
        self.model.n_outputs()
    }

    /// The underlying `n_labels`-output model.
    pub fn model(&self) -> &Lssvm {
        &self.model
    }
}

/// Row-wise arg-max of a score matrix; ties go to the smaller column index.
pub fn argmax_labels(scores: ArrayView2<'_, f64>) -> Result<Vec<usize>> {
    check_finite("scores", scores)?;
    if scores.ncols() == 0 {
        return Err(LssvmError::EmptyInput {
            what: "scores",
            rows: scores.nrows(),
            cols: 0,
        });
    }
    Ok(row_argmax(scores))
}

/// For each row `j`, marks the `k[j]` columns with the largest scores (ties go to the smaller
/// column index). With `k[j]` the sample's true number of labels this is the multi-label rule of
/// the node-embedding literature (DeepWalk, HOPE): it uses the label *count* of the test sample
/// and so measures ranking quality, not calibration.
pub fn top_k_labels(scores: ArrayView2<'_, f64>, k: &[usize]) -> Result<Array2<bool>> {
    check_finite("scores", scores)?;
    let (n, l) = scores.dim();
    if k.len() != n {
        return Err(LssvmError::LengthMismatch {
            what: "top-k counts",
            expected: n,
            found: k.len(),
        });
    }
    if let Some((index, &kj)) = k.iter().enumerate().find(|(_, &kj)| kj > l) {
        return Err(LssvmError::InvalidTopK {
            index,
            k: kj,
            n_labels: l,
        });
    }
    let mut out = Array2::from_elem((n, l), false);
    let mut order: Vec<usize> = Vec::with_capacity(l);
    for (j, row) in scores.axis_iter(Axis(0)).enumerate() {
        order.clear();
        order.extend(0..l);
        // Stable sort: equal scores keep increasing column order. Scores are finite.
        order.sort_by(|&a, &b| row[b].total_cmp(&row[a]));
        for &c in &order[..k[j]] {
            out[[j, c]] = true;
        }
    }
    Ok(out)
}

/// Marks every entry with score `> threshold`.
pub fn threshold_labels(scores: ArrayView2<'_, f64>, threshold: f64) -> Result<Array2<bool>> {
    check_finite("scores", scores)?;
    Ok(scores.mapv(|v| v > threshold))
}

impl ValidLssvmParams {
    /// Fits one LS-SVM per column of real-valued `targets` (`N x m`) on the rows of `x`
    /// (`N x d`), sharing one factorisation: the function-estimation dual
    /// `[[0, 1^T], [1, K + I/gamma]] [b; alpha] = [0; t]` (or its primal for the linear kernel).
    pub fn fit(&self, x: ArrayView2<'_, f64>, targets: ArrayView2<'_, f64>) -> Result<Lssvm> {
        check_nonempty("training features", x)?;
        check_finite("training features", x)?;
        let (n, d) = x.dim();
        if targets.nrows() != n {
            return Err(LssvmError::LengthMismatch {
                what: "targets",
                expected: n,
                found: targets.nrows(),
            });
        }
        check_nonempty("targets", targets)?;
        check_finite("targets", targets)?;
        let (gamma, kernel) = (self.gamma(), self.kernel());
        let solver = self.resolve_solver(n, d);
        let dual = match solver {
            Solver::Primal => {
                let p = solve_primal(x, targets, gamma)?;
                return Ok(Lssvm {
                    kernel,
                    gamma,
                    coef: Coefficients::Primal { weights: p.weights },
                    bias: p.bias,
                    n_features: d,
                    solver,
                    cg_iterations: None,
                });
            }
            Solver::ConjugateGradient(opts) if opts.matrix_free => {
                solve_dual_cg(&KernelOperator::new(kernel, x)?, targets, gamma, &opts)?
            }
            Solver::ConjugateGradient(opts) => solve_dual_cg(&gram(&kernel, x)?, targets, gamma, &opts)?,
            // `Direct`, and any future variant resolved by `resolve_solver`.
            _ => solve_dual_direct_owned(gram(&kernel, x)?, targets, gamma)?,
        };
        let DualSolution {
            alpha,
            bias,
            cg_iterations,
        } = dual;
        let coef = match kernel {
            Kernel::Linear => Coefficients::Primal {
                weights: matmul(x.t(), alpha.view())?,
            },
            _ => Coefficients::Dual {
                support: x.to_owned(),
                support_sq: sq_norms(x),
                alpha,
            },
        };
        Ok(Lssvm {
            kernel,
            gamma,
            coef,
            bias,
            n_features: d,
            solver,
            cg_iterations,
        })
    }

    /// Fits a binary classifier on labels `y` in `{-1, +1}` (both must occur).
    ///
    /// Solved in the function-estimation form on the `+-1` targets, which for such labels is
    /// the same model as Suykens' classifier form (see the crate docs).
    pub fn fit_binary(&self, x: ArrayView2<'_, f64>, y: ArrayView1<'_, f64>) -> Result<BinaryLssvm> {
        if y.len() != x.nrows() {
            return Err(LssvmError::LengthMismatch {
                what: "labels",
                expected: x.nrows(),
                found: y.len(),
            });
        }
        if let Some((index, &value)) = y.iter().enumerate().find(|(_, &v)| v != 1.0 && v != -1.0) {
            return Err(LssvmError::InvalidBinaryLabel { index, value });
        }
        check_nonempty("training features", x)?;
        let pos = y.iter().filter(|&&v| v > 0.0).count();
        if pos == 0 || pos == y.len() {
            return Err(LssvmError::MissingBinaryClass {
                missing: if pos == 0 { 1.0 } else { -1.0 },
            });
        }
        let targets = y.to_owned().insert_axis(Axis(1));
        Ok(BinaryLssvm {
            model: self.fit(x, targets.view())?,
        })
    }

    /// Fits a one-vs-rest multi-class classifier on labels `0..n_classes`, where
    /// `n_classes = max(labels) + 1 >= 2` and every class must have a training sample.
    pub fn fit_multiclass(&self, x: ArrayView2<'_, f64>, labels: &[usize]) -> Result<MulticlassLssvm> {
        if labels.len() != x.nrows() {
            return Err(LssvmError::LengthMismatch {
                what: "labels",
                expected: x.nrows(),
                found: labels.len(),
            });
        }
        let n_classes = labels.iter().max().map_or(0, |&m| m + 1);
        let mut counts = vec![0usize; n_classes];
        for &c in labels {
            counts[c] += 1;
        }
        let distinct = counts.iter().filter(|&&c| c > 0).count();
        if distinct < 2 {
            return Err(LssvmError::TooFewClasses { found: distinct });
        }
        if let Some(class) = counts.iter().position(|&c| c == 0) {
            return Err(LssvmError::EmptyClass { class, n_classes });
        }
        let targets = Array2::from_shape_fn((labels.len(), n_classes), |(i, c)| one_vs_rest(labels[i] == c));
        Ok(MulticlassLssvm {
            model: self.fit(x, targets.view())?,
        })
    }

    /// Fits a one-vs-rest multi-label classifier on an `N x n_labels` indicator matrix
    /// (`labels[[i, c]]` is true when sample `i` carries label `c`). Every label column needs at
    /// least one positive sample (a label carried by every sample is accepted: its problem is
    /// the constant `+1`).
    pub fn fit_multilabel(&self, x: ArrayView2<'_, f64>, labels: ArrayView2<'_, bool>) -> Result<MultilabelLssvm> {
        if labels.nrows() != x.nrows() {
            return Err(LssvmError::LengthMismatch {
                what: "label rows",
                expected: x.nrows(),
                found: labels.nrows(),
            });
        }
        let n_labels = labels.ncols();
        if n_labels == 0 {
            return Err(LssvmError::EmptyInput {
                what: "labels",
                rows: labels.nrows(),
                cols: 0,
            });
        }
        if let Some(class) = labels.axis_iter(Axis(1)).position(|col| !col.iter().any(|&b| b)) {
            return Err(LssvmError::EmptyClass {
                class,
                n_classes: n_labels,
            });
        }
        let targets = labels.mapv(one_vs_rest);
        Ok(MultilabelLssvm {
            model: self.fit(x, targets.view())?,
        })
    }
}

fn one_vs_rest(positive: bool) -> f64 {
    if positive {
        1.0
    } else {
        -1.0
    }
}

#[cfg(test)]
// A failed unwrap in a test is a test failure with a backtrace, which is what we want here.
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn top_k_and_threshold_and_argmax() {
        let s = array![[0.1, 0.9, 0.5], [-1.0, -0.2, -0.2], [0.3, 0.3, 0.3]];
        let top = top_k_labels(s.view(), &[2, 1, 0]).unwrap();
        assert_eq!(
            top,
            array![[false, true, true], [false, true, false], [false, false, false]]
        );
        let th = threshold_labels(s.view(), 0.0).unwrap();
        assert_eq!(
            th,
            array![[true, true, true], [false, false, false], [true, true, true]]
        );
        assert_eq!(argmax_labels(s.view()).unwrap(), vec![1, 1, 0]);
        assert!(matches!(
            top_k_labels(s.view(), &[4, 0, 0]),
            Err(LssvmError::InvalidTopK {
                index: 0,
                k: 4,
                n_labels: 3
            })
        ));
        assert!(matches!(
            top_k_labels(s.view(), &[1]),
            Err(LssvmError::LengthMismatch { .. })
        ));
        let nan = array![[f64::NAN]];
        assert!(matches!(argmax_labels(nan.view()), Err(LssvmError::NonFinite { .. })));
    }
}
