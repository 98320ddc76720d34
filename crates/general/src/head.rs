//! The linear classification/regression head and its losses.
//!
//! Outputs `O = F W + 1 bᵀ` for features `F ∈ R^{B×r}`, `W ∈ R^{r×K}`, `b ∈ R^K` (a PyTorch
//! `nn.Linear(r, K)`, initialised like it: entries uniform in `[−1/√r, 1/√r]`).
//!
//! * Classification (`K` classes, `K ≥ 2` outputs): softmax cross-entropy averaged over the batch,
//!   `L = −(1/B) Σ_i log softmax(O_i)_{y_i}`, with `∂L/∂O = (softmax(O) − onehot(y)) / B`.
//! * Regression (`K = 1`): mean squared error `L = (1/B) Σ_i (O_i − y_i)²`, with
//!   `∂L/∂O = 2 (O − y) / B`.
//!
//! Then `∂L/∂W = Fᵀ ∂L/∂O`, `∂L/∂b = 1ᵀ ∂L/∂O` and `∂L/∂F = ∂L/∂O Wᵀ` (passed on to a learnable
//! embedding).
use ksvd_linalg::{dense, random::SeededRng};
use ndarray::{Array1, Array2, ArrayView1, ArrayView2, Axis};
use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::error::{GeneralError, Result};

/// How the head's parameters start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum HeadInit {
    /// PyTorch's `nn.Linear` default: every entry of `W` and `b` uniform in `[−1/√r, 1/√r]`
    /// (seeded).
    #[default]
    Pytorch,
    /// `W = 0`, `b = 0` (the usual start of a convex linear model: all classes equally likely,
    /// or the prediction 0).
    Zero,
}

/// The downstream loss.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Loss {
    /// Softmax cross-entropy over `classes` outputs; targets are class indices `0..classes`.
    CrossEntropy {
        /// Number of classes (at least 2).
        classes: usize,
    },
    /// Mean squared error on one output.
    Mse,
}

impl Loss {
    /// Number of outputs of the head.
    pub fn outputs(&self) -> usize {
        match *self {
            Loss::CrossEntropy { classes } => classes,
            Loss::Mse => 1,
        }
    }

    /// Mean loss of `outputs` (`B × K`) against `targets` (class indices as `f64`, or values)
    /// and its gradient with respect to `outputs`.
    pub fn value_and_grad(
        &self,
        outputs: ArrayView2<'_, f64>,
        targets: ArrayView1<'_, f64>,
    ) -> Result<(f64, Array2<f64>)> {
        let (b, k) = outputs.dim();
        if b != targets.len() || k != self.outputs() || b == 0 {
            return Err(GeneralError::ShapeMismatch {
                what: "head outputs and targets",
                expected: format!("({}, {}) with a non-empty batch", targets.len(), self.outputs()),
                got: format!("{:?}", outputs.dim()),
            });
        }
        let inv_b = 1.0 / b as f64;
        match *self {
            Loss::CrossEntropy { classes } => {
                let mut grad = Array2::zeros((b, k));
                let mut total = 0.0;
                for (i, (o, mut g)) in outputs.outer_iter().zip(grad.outer_iter_mut()).enumerate() {
                    let y = class_index(targets[i], classes)?;
                    let max = o.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                    let lse = max + o.iter().map(|v| (v - max).exp()).sum::<f64>().ln();
                    total += lse - o[y];
                    for (c, gv) in g.iter_mut().enumerate() {
                        *gv = ((o[c] - lse).exp() - if c == y { 1.0 } else { 0.0 }) * inv_b;
                    }
                }
                Ok((total * inv_b, grad))
            }
            Loss::Mse => {
                let r: Array1<f64> = &outputs.column(0) - &targets;
                let value = r.mapv(|v| v * v).sum() * inv_b;
                let grad = r.mapv(|v| 2.0 * v * inv_b).insert_axis(Axis(1));
                Ok((value, grad))
            }
        }
    }
}

impl Loss {
    /// The smallest mean loss a constant output reaches on `targets`: the entropy
    /// `−Σ_k p_k ln p_k` of the class frequencies (cross-entropy; reached by logits `ln p_k`), or
    /// the population variance of the targets (MSE; reached by their mean). A head whose training
    /// loss stays above it has not even learnt the class prior or the target mean.
    pub fn constant_optimum(&self, targets: ArrayView1<'_, f64>) -> Result<f64> {
        let n = targets.len();
        if n == 0 {
            return Err(GeneralError::ShapeMismatch {
                what: "targets",
                expected: "a non-empty vector".into(),
                got: "0 entries".into(),
            });
        }
        match *self {
            Loss::CrossEntropy { classes } => {
                let mut counts = vec![0usize; classes];
                for &t in targets {
                    counts[class_index(t, classes)?] += 1;
                }
                Ok(counts
                    .iter()
                    .filter(|&&c| c > 0)
                    .map(|&c| {
                        let p = c as f64 / n as f64;
                        -p * p.ln()
                    })
                    .sum())
            }
            Loss::Mse => {
                let mean = targets.sum() / n as f64;
                Ok(targets.iter().map(|t| (t - mean) * (t - mean)).sum::<f64>() / n as f64)
            }
        }
    }
}

fn class_index(t: f64, classes: usize) -> Result<usize> {
    if t >= 0.0 && t.fract() == 0.0 && (t as usize) < classes {
        Ok(t as usize)
    } else {
        Err(GeneralError::invalid(
            "class target",
            t,
            format!("a class index in 0..{classes}"),
        ))
    }
}

/// A linear head `O = F W + 1 bᵀ`.
#[derive(Debug, Clone, PartialEq)]
pub struct LinearHead {
    /// Weights, `r × K`.
    pub w: Array2<f64>,
    /// Bias, length `K`.
    pub b: Array1<f64>,
}

/// Gradients of a [`LinearHead`] and of its input.
#[derive(Debug, Clone)]
pub struct HeadGrad {
    /// `∂L/∂W`.
    pub w: Array2<f64>,
    /// `∂L/∂b`.
    pub b: Array1<f64>,
    /// `∂L/∂F` (`B × r`).
    pub features: Array2<f64>,
    /// The loss value.
    pub loss: f64,
}

impl LinearHead {
    /// A head initialised by `how` ([`HeadInit::Pytorch`] draws from `rng`, [`HeadInit::Zero`]
    /// does not touch it).
    pub fn new(inputs: usize, outputs: usize, how: HeadInit, rng: &mut SeededRng) -> Self {
        match how {
            HeadInit::Pytorch => Self::init(inputs, outputs, rng),
            HeadInit::Zero => LinearHead {
                w: Array2::zeros((inputs, outputs)),
                b: Array1::zeros(outputs),
            },
        }
    }

    /// PyTorch's `nn.Linear` initialisation: every entry uniform in `[−1/√r, 1/√r]`.
    pub fn init(inputs: usize, outputs: usize, rng: &mut SeededRng) -> Self {
        let a = 1.0 / (inputs.max(1) as f64).sqrt();
        let w = Array2::from_shape_simple_fn((inputs, outputs), || rng.gen_range(-a..=a));
        let b = Array1::from_shape_simple_fn(outputs, || rng.gen_range(-a..=a));
        LinearHead { w, b }
    }

    /// `O = F W + 1 bᵀ`.
    pub fn forward(&self, features: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        if features.ncols() != self.w.nrows() {
            return Err(GeneralError::ShapeMismatch {
                what: "head input",
                expected: format!("{} features", self.w.nrows()),
                got: format!("{} features", features.ncols()),
            });
        }
        let mut o = dense::matmul(features, self.w.view())?;
        o += &self.b;
        Ok(o)
    }

    /// Loss and gradients for a batch.
    pub fn loss_and_grad(
        &self,
        features: ArrayView2<'_, f64>,
        targets: ArrayView1<'_, f64>,
        loss: Loss,
    ) -> Result<HeadGrad> {
        let o = self.forward(features)?;
        let (value, go) = loss.value_and_grad(o.view(), targets)?;
        Ok(HeadGrad {
            w: dense::matmul(features.t(), go.view())?,
            b: go.sum_axis(Axis(0)),
            features: dense::matmul(go.view(), self.w.t())?,
            loss: value,
        })
    }

    /// One plain SGD step `θ ← θ − lr ∂L/∂θ`.
    pub fn sgd_step(&mut self, grad: &HeadGrad, lr: f64) {
        self.w.scaled_add(-lr, &grad.w);
        self.b.scaled_add(-lr, &grad.b);
    }

    /// Whether every parameter is finite.
    pub fn is_finite(&self) -> bool {
        self.w.iter().chain(self.b.iter()).all(|v| v.is_finite())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ksvd_linalg::random::{gaussian_matrix, rng_from_seed};
    use ndarray::array;

    fn check_fd(loss: Loss, targets: Array1<f64>) {
        let mut rng = rng_from_seed(3);
        let b = targets.len();
        let head = LinearHead::init(4, loss.outputs(), &mut rng);
        let f = gaussian_matrix(&mut rng, b, 4);
        let g = head.loss_and_grad(f.view(), targets.view(), loss).unwrap();
        let value = |h: &LinearHead, f: &Array2<f64>| {
            let o = h.forward(f.view()).unwrap();
            loss.value_and_grad(o.view(), targets.view()).unwrap().0
        };
        let h = 1e-6;
        let tol = 1e-7 * (1.0 + g.loss.abs());
        for idx in ndarray::indices(head.w.dim()) {
            let (mut p, mut m) = (head.clone(), head.clone());
            p.w[idx] += h;
            m.w[idx] -= h;
            assert!(((value(&p, &f) - value(&m, &f)) / (2.0 * h) - g.w[idx]).abs() < tol);
        }
        for k in 0..head.b.len() {
            let (mut p, mut m) = (head.clone(), head.clone());
            p.b[k] += h;
            m.b[k] -= h;
            assert!(((value(&p, &f) - value(&m, &f)) / (2.0 * h) - g.b[k]).abs() < tol);
        }
        for idx in ndarray::indices(f.dim()) {
            let (mut p, mut m) = (f.clone(), f.clone());
            p[idx] += h;
            m[idx] -= h;
            assert!(((value(&head, &p) - value(&head, &m)) / (2.0 * h) - g.features[idx]).abs() < tol);
        }
    }

    #[test]
    fn cross_entropy_gradient_matches_finite_differences() {
        check_fd(Loss::CrossEntropy { classes: 2 }, array![0.0, 1.0, 1.0, 0.0, 1.0]);
        check_fd(Loss::CrossEntropy { classes: 3 }, array![2.0, 0.0, 1.0, 2.0]);
    }

    #[test]
    fn mse_gradient_matches_finite_differences() {
        check_fd(Loss::Mse, array![1.5, -0.3, 2.0, 10.0]);
    }

    #[test]
    fn losses_by_hand() {
        // Equal logits: cross-entropy is ln 2 for two classes.
        let (v, _) = Loss::CrossEntropy { classes: 2 }
            .value_and_grad(array![[0.0, 0.0]].view(), array![1.0].view())
            .unwrap();
        assert!((v - 2f64.ln()).abs() < 4.0 * f64::EPSILON);
        let (v, g) = Loss::Mse
            .value_and_grad(array![[1.0], [3.0]].view(), array![0.0, 1.0].view())
            .unwrap();
        assert_eq!(v, 2.5);
        assert_eq!(g, array![[1.0], [2.0]]);
        assert!(Loss::CrossEntropy { classes: 2 }
            .value_and_grad(array![[0.0, 0.0]].view(), array![2.0].view())
            .is_err());
    }

    #[test]
    fn constant_optimum_by_hand_and_attained() {
        // Three of four in class 0: entropy −(¾ ln ¾ + ¼ ln ¼), reached by logits (ln ¾, ln ¼).
        let ce = Loss::CrossEntropy { classes: 2 };
        let y = array![0.0, 0.0, 1.0, 0.0];
        let h = -(0.75f64 * 0.75f64.ln() + 0.25 * 0.25f64.ln());
        assert!((ce.constant_optimum(y.view()).unwrap() - h).abs() < 4.0 * f64::EPSILON);
        let o = Array2::from_shape_fn((4, 2), |(_, k)| if k == 0 { 0.75f64.ln() } else { 0.25f64.ln() });
        let (v, g) = ce.value_and_grad(o.view(), y.view()).unwrap();
        assert!((v - h).abs() < 8.0 * f64::EPSILON);
        // ... where the gradient of the bias (column sums of ∂L/∂O) vanishes.
        assert!(g.sum_axis(Axis(0)).iter().all(|s| s.abs() < 8.0 * f64::EPSILON));
        // MSE: the population variance, reached by the mean.
        let y = array![1.0, 2.0, 3.0, 4.0];
        assert_eq!(Loss::Mse.constant_optimum(y.view()).unwrap(), 1.25);
        let (v, _) = Loss::Mse
            .value_and_grad(Array2::from_elem((4, 1), 2.5).view(), y.view())
            .unwrap();
        assert_eq!(v, 1.25);
        assert!(ce.constant_optimum(array![2.0].view()).is_err());
        assert!(Loss::Mse.constant_optimum(Array1::<f64>::zeros(0).view()).is_err());
    }

    #[test]
    fn zero_init_is_zero_and_leaves_the_rng_alone() {
        let mut rng = rng_from_seed(9);
        let h = LinearHead::new(4, 2, HeadInit::Zero, &mut rng);
        assert!(h.w.iter().chain(h.b.iter()).all(|&v| v == 0.0));
        assert_eq!(h.w.dim(), (4, 2));
        let after_zero = LinearHead::init(4, 2, &mut rng);
        assert_eq!(after_zero, LinearHead::init(4, 2, &mut rng_from_seed(9)));
        assert_eq!(
            LinearHead::new(4, 2, HeadInit::Pytorch, &mut rng_from_seed(9)),
            after_zero
        );
    }

    #[test]
    fn init_is_in_range_and_seeded() {
        let h1 = LinearHead::init(4, 2, &mut rng_from_seed(9));
        let h2 = LinearHead::init(4, 2, &mut rng_from_seed(9));
        assert_eq!(h1, h2);
        assert!(h1.w.iter().chain(h1.b.iter()).all(|v| v.abs() <= 0.5));
    }
}
