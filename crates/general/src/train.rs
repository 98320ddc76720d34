//! SGD training of the linear head, alone (fixed embeddings: KPCA, a0–a2, the ablation) or
//! jointly with a learnable compatibility matrix (a3, KPCA with learnable `C`), and the test
//! metrics of a trained head ([`evaluate`], through `ksvd-metrics`).
use ksvd_linalg::random::{rng_from_seed, SeededRng};
use ndarray::{Array1, Array2, ArrayView1, ArrayView2, Axis};
use rand::seq::SliceRandom;

use crate::data::TaskKind;
use crate::embed::LearnableEmbedding;
use crate::error::{GeneralError, Result};
use crate::head::{HeadInit, LinearHead, Loss};
use ksvd_metrics::{accuracy, auroc, rmse};

/// Plain SGD settings (no momentum, no weight decay: PyTorch's `optim.SGD(params, lr)`).
#[derive(Debug, Clone, PartialEq)]
pub struct SgdOptions {
    /// Learning rate, shared by the head and `C`.
    pub lr: f64,
    /// Number of SGD steps (one mini-batch, or the full training set, per step).
    pub iterations: usize,
    /// Mini-batch size; `None` (or a size ≥ `N`) means full-batch gradient descent. Mini-batches
    /// walk through a seeded permutation, reshuffled after every pass (the last batch of a pass
    /// may be smaller), like a shuffling `DataLoader`.
    pub batch_size: Option<usize>,
    /// Learnable embeddings re-compute their detached vectors (`V` by an SVD of `G`, KPCA's
    /// eigenvectors) every `refresh_every` steps, starting before step 0.
    pub refresh_every: usize,
    /// Standardise each feature with its training mean and standard deviation before the head
    /// (statistics detached and re-computed at every refresh). Not in the paper: off for it.
    pub standardize_features: bool,
    /// Regression only: train on `(y − ȳ)/s_y` (training mean and standard deviation) and map
    /// the outputs back, `ŷ = ȳ + s_y o`, so predictions and RMSE stay in the target's units.
    /// Not in the paper: off for it.
    pub standardize_target: bool,
    /// Initial head parameters.
    pub head_init: HeadInit,
    /// Seed of the head initialisation and the mini-batch order.
    pub seed: u64,
}

impl SgdOptions {
    /// Checks the values once.
    pub fn validate(&self) -> Result<()> {
        if !(self.lr.is_finite() && self.lr > 0.0) {
            return Err(GeneralError::invalid(
                "learning_rate",
                self.lr,
                "a positive finite step size",
            ));
        }
        if self.refresh_every == 0 {
            return Err(GeneralError::invalid("refresh_every", 0, "at least 1"));
        }
        if self.batch_size == Some(0) {
            return Err(GeneralError::invalid(
                "batch_size",
                0,
                "at least 1 (omit it for full batches)",
            ));
        }
        Ok(())
    }
}

/// A detached per-feature affine map `F ↦ (F − μ) ∘ s` (identity when disabled).
#[derive(Debug, Clone, PartialEq)]
pub struct FeatureScaler {
    /// Subtracted mean `μ`.
    pub mean: Array1<f64>,
    /// Multiplied scale `s` (`1/σ`, or 1 for a constant feature).
    pub scale: Array1<f64>,
}

impl FeatureScaler {
    /// The identity map on `r` features.
    pub fn identity(r: usize) -> Self {
        FeatureScaler {
            mean: Array1::zeros(r),
            scale: Array1::ones(r),
        }
    }
    /// Standardisation fitted on `features`. Columns that are constant **to rounding** are only
    /// centred: a column whose standard deviation is at most `64 √N ε · max_k rms_k` (the
    /// rounding error of a computed feature, relative to the largest root-mean-square column) is
    /// noise — e.g. `G V` columns behind singular values `1e−19 σ_1` of a numerically
    /// rank-deficient `G` — and dividing by its deviation would blow the noise up to unit
    /// variance (and, for learnable embeddings, the gradient reaching `C` by as much).
    pub fn fit(features: ArrayView2<'_, f64>) -> Self {
        let (n, r) = features.dim();
        let mean = features.mean_axis(Axis(0)).unwrap_or_else(|| Array1::zeros(r));
        let rms_max = features
            .axis_iter(Axis(1))
            .map(|c| (c.iter().map(|v| v * v).sum::<f64>() / n.max(1) as f64).sqrt())
            .fold(0.0f64, f64::max);
        let floor = 64.0 * (n.max(1) as f64).sqrt() * f64::EPSILON * rms_max;
        let scale = features
            .std_axis(Axis(0), 0.0)
            .mapv(|s| if s > floor && s.is_finite() { 1.0 / s } else { 1.0 });
        FeatureScaler { mean, scale }
    }
    /// `(F − μ) ∘ s`.
    pub fn apply(&self, features: ArrayView2<'_, f64>) -> Array2<f64> {
        (&features - &self.mean) * &self.scale
    }
    /// Chain rule through the map: `∂L/∂F = ∂L/∂F' ∘ s`.
    pub fn backward(&self, d: ArrayView2<'_, f64>) -> Array2<f64> {
        &d * &self.scale
    }
}

/// A detached affine map of regression targets, `y ↦ (y − μ)/s`, and back `o ↦ μ + s o`
/// (identity when disabled or for classification).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TargetScaler {
    /// `μ`.
    pub mean: f64,
    /// `s` (1 for a constant target).
    pub scale: f64,
}

impl TargetScaler {
    /// The identity.
    pub fn identity() -> Self {
        TargetScaler { mean: 0.0, scale: 1.0 }
    }
    /// Mean and population standard deviation of `y`.
    pub fn fit(y: ArrayView1<'_, f64>) -> Self {
        let mean = y.mean().unwrap_or(0.0);
        let sd = y.std(0.0);
        TargetScaler {
            mean,
            scale: if sd > 0.0 && sd.is_finite() { sd } else { 1.0 },
        }
    }
    /// `(y − μ)/s`.
    pub fn forward(&self, y: ArrayView1<'_, f64>) -> Array1<f64> {
        y.mapv(|v| (v - self.mean) / self.scale)
    }
    /// `μ + s o`.
    pub fn inverse(&self, o: ArrayView2<'_, f64>) -> Array2<f64> {
        o.mapv(|v| self.mean + self.scale * v)
    }
}

/// Training counts as diverged when the final training loss exceeds this multiple of the first
/// step's loss (or anything becomes non-finite): SGD made the fit worse, the step is too large.
pub const DIVERGENCE_FACTOR: f64 = 2.0;

/// What training produced.
#[derive(Debug, Clone)]
pub struct Trained {
    /// The head after the last step.
    pub head: LinearHead,
    /// The feature map applied before the head.
    pub scaler: FeatureScaler,
    /// The target map (regression with `standardize_target`; identity otherwise). Losses below
    /// are in the mapped units.
    pub target: TargetScaler,
    /// The best constant predictor's training loss ([`Loss::constant_optimum`], mapped units).
    pub constant_loss: f64,
    /// Mean loss of the first step's batch (before any update).
    pub first_loss: f64,
    /// Mean loss of the last step's batch (before its update).
    pub last_loss: f64,
    /// Mean loss over the whole training set after training (with the final parameters and, for
    /// learnable embeddings, freshly re-computed detached vectors).
    pub final_train_loss: f64,
    /// The step at which a loss or a parameter stopped being finite (training stops there), or
    /// the number of steps when the final training loss exceeds [`DIVERGENCE_FACTOR`] times the
    /// first one; `None` otherwise.
    pub diverged_at: Option<usize>,
    /// Steps taken.
    pub steps: usize,
}

impl Trained {
    /// Head outputs for `features` (already embedded, unscaled): logits for classification,
    /// predictions in the target's units for regression.
    pub fn outputs(&self, features: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        let o = self.head.forward(self.scaler.apply(features).view())?;
        Ok(self.target.inverse(o.view()))
    }
}

/// Where the features come from.
pub enum FeatureSource<'a> {
    /// Fixed training features (`N × r`).
    Fixed(ArrayView2<'a, f64>),
    /// A learnable embedding, updated together with the head.
    Learnable(&'a mut dyn LearnableEmbedding),
}

struct Batches {
    n: usize,
    size: usize,
    order: Vec<usize>,
    pos: usize,
    rng: SeededRng,
}

impl Batches {
    fn new(n: usize, size: Option<usize>, rng: SeededRng) -> Self {
        let size = size.unwrap_or(n).min(n);
        let mut b = Batches {
            n,
            size,
            order: (0..n).collect(),
            pos: n,
            rng,
        };
        if size == n {
            b.pos = 0;
        }
        b
    }
    fn next(&mut self) -> Vec<usize> {
        if self.size == self.n {
            return self.order.clone();
        }
        if self.pos >= self.n {
            self.order.shuffle(&mut self.rng);
            self.pos = 0;
        }
        let end = (self.pos + self.size).min(self.n);
        let out = self.order[self.pos..end].to_vec();
        self.pos = end;
        out
    }
}

/// Trains a fresh head (PyTorch initialisation, seeded) on `targets` with plain SGD, and the
/// embedding's `C` too when the source is learnable: every step draws a batch, computes the
/// features (through the kernel for learnable sources, with the detached vectors of the last
/// refresh), the loss and its gradient, and updates all parameters with the same `lr`.
pub fn train(
    source: FeatureSource<'_>,
    targets: ArrayView1<'_, f64>,
    loss: Loss,
    opts: &SgdOptions,
) -> Result<Trained> {
    opts.validate()?;
    let mut rng = rng_from_seed(opts.seed);
    let (n, r) = match &source {
        FeatureSource::Fixed(f) => f.dim(),
        FeatureSource::Learnable(e) => (e.n_train(), e.dim()),
    };
    if targets.len() != n {
        return Err(GeneralError::ShapeMismatch {
            what: "training targets",
            expected: n.to_string(),
            got: targets.len().to_string(),
        });
    }
    let target = if opts.standardize_target && loss == Loss::Mse {
        TargetScaler::fit(targets)
    } else {
        TargetScaler::identity()
    };
    let mapped_targets = target.forward(targets);
    let targets = mapped_targets.view();
    let constant_loss = loss.constant_optimum(targets)?;
    let mut head = LinearHead::new(r, loss.outputs(), opts.head_init, &mut rng);
    let mut batches = Batches::new(n, opts.batch_size, rng);
    let fit_scaler = |f: ArrayView2<'_, f64>| {
        if opts.standardize_features {
            FeatureScaler::fit(f)
        } else {
            FeatureScaler::identity(r)
        }
    };
    let (mut first_loss, mut last_loss, mut diverged_at, mut steps) = (f64::NAN, f64::NAN, None, 0);
    let final_train_loss;
    let scaler;
    match source {
        FeatureSource::Fixed(f) => {
            let sc = fit_scaler(f);
            let all = sc.apply(f);
            for it in 0..opts.iterations {
                let rows = batches.next();
                let fb = all.select(Axis(0), &rows);
                let yb = targets.select(Axis(0), &rows);
                let g = head.loss_and_grad(fb.view(), yb.view(), loss)?;
                if it == 0 {
                    first_loss = g.loss;
                }
                last_loss = g.loss;
                head.sgd_step(&g, opts.lr);
                steps = it + 1;
                if !g.loss.is_finite() || !head.is_finite() {
                    diverged_at = Some(it);
                    break;
                }
            }
            final_train_loss = mean_loss(&head, all.view(), targets, loss);
            scaler = sc;
        }
        FeatureSource::Learnable(emb) => {
            let mut sc = fit_scaler(emb.refresh()?.view());
            for it in 0..opts.iterations {
                if it > 0 && it % opts.refresh_every == 0 {
                    match emb.refresh() {
                        Ok(f) => sc = fit_scaler(f.view()),
                        Err(
                            GeneralError::NonFinite { .. }
                            | GeneralError::DegenerateKernel { .. }
                            | GeneralError::Linalg(_)
                            | GeneralError::Solver(_),
                        ) => {
                            diverged_at = Some(it);
                            break;
                        }
                        Err(e) => return Err(e),
                    }
                }
                let rows = batches.next();
                let cache = match emb.forward(&rows) {
                    Ok(c) => c,
                    Err(GeneralError::NonFinite { .. }) => {
                        diverged_at = Some(it);
                        break;
                    }
                    Err(e) => return Err(e),
                };
                let fb = sc.apply(cache.features.view());
                let yb = targets.select(Axis(0), &rows);
                let g = head.loss_and_grad(fb.view(), yb.view(), loss)?;
                if it == 0 {
                    first_loss = g.loss;
                }
                last_loss = g.loss;
                let d_raw = sc.backward(g.features.view());
                let grad_c = emb.sgd_step(&cache, d_raw.view(), opts.lr)?;
                head.sgd_step(&g, opts.lr);
                steps = it + 1;
                if !g.loss.is_finite()
                    || !grad_c.is_finite()
                    || !head.is_finite()
                    || !emb.c().iter().all(|v| v.is_finite())
                {
                    diverged_at = Some(it);
                    break;
                }
            }
            final_train_loss = if diverged_at.is_some() {
                f64::NAN
            } else {
                let f = emb.refresh()?;
                sc = fit_scaler(f.view());
                mean_loss(&head, sc.apply(f.view()).view(), targets, loss)
            };
            scaler = sc;
        }
    }
    let within = final_train_loss.is_finite() && final_train_loss <= DIVERGENCE_FACTOR * first_loss;
    if diverged_at.is_none() && !within {
        diverged_at = Some(steps);
    }
    Ok(Trained {
        head,
        scaler,
        target,
        constant_loss,
        first_loss,
        last_loss,
        final_train_loss,
        diverged_at,
        steps,
    })
}

fn mean_loss(head: &LinearHead, f: ArrayView2<'_, f64>, y: ArrayView1<'_, f64>, loss: Loss) -> f64 {
    head.forward(f)
        .and_then(|o| loss.value_and_grad(o.view(), y))
        .map(|(v, _)| v)
        .unwrap_or(f64::NAN)
}

/// The training loss of a task: cross-entropy over the classes, or mean squared error.
pub fn loss_of(task: TaskKind) -> Loss {
    match task {
        TaskKind::Classification { classes } => Loss::CrossEntropy { classes },
        TaskKind::Regression => Loss::Mse,
    }
}

/// Test metrics of a trained head: `acc` and `auroc` (binary, score = logit₁ − logit₀) for
/// classification, `rmse` for regression.
pub fn evaluate(
    trained: &Trained,
    test_features: ArrayView2<'_, f64>,
    y_test: ArrayView1<'_, f64>,
    task: TaskKind,
) -> Result<Vec<(&'static str, f64)>> {
    let o = trained.outputs(test_features)?;
    if let Some(((i, j), v)) = o.indexed_iter().find(|(_, v)| !v.is_finite()) {
        return Err(GeneralError::NonFinite {
            what: "test predictions",
            detail: format!("output ({i}, {j}) = {v}"),
        });
    }
    match task {
        TaskKind::Classification { classes } => {
            let pred: Vec<usize> = o
                .outer_iter()
                .map(|r| {
                    r.iter()
                        .enumerate()
                        .fold((0, f64::NEG_INFINITY), |b, (k, &v)| if v > b.1 { (k, v) } else { b })
                        .0
                })
                .collect();
            let truth: Vec<usize> = y_test.iter().map(|&y| y as usize).collect();
            let mut out = vec![("acc", accuracy(&truth, &pred)?)];
            if classes == 2 {
                let scores: Vec<f64> = o.outer_iter().map(|r| r[1] - r[0]).collect();
                let pos: Vec<bool> = truth.iter().map(|&t| t == 1).collect();
                out.push(("auroc", auroc(&scores, &pos)?));
            }
            Ok(out)
        }
        TaskKind::Regression => {
            let pred: Vec<f64> = o.column(0).to_vec();
            Ok(vec![("rmse", rmse(&y_test.to_vec(), &pred)?)])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn batches_cover_every_row_once_per_pass() {
        let mut b = Batches::new(10, Some(4), rng_from_seed(1));
        let mut seen: Vec<usize> = (0..3).flat_map(|_| b.next()).collect();
        assert_eq!(seen.len(), 10);
        seen.sort_unstable();
        assert_eq!(seen, (0..10).collect::<Vec<_>>());
        let mut full = Batches::new(5, None, rng_from_seed(1));
        assert_eq!(full.next(), vec![0, 1, 2, 3, 4]);
    }

    #[test]
    fn fixed_features_least_squares_converges() {
        // y = 2 f - 1 exactly: full-batch GD on the MSE converges to the exact fit.
        let f = array![[0.0], [1.0], [2.0], [3.0], [-1.0]];
        let y = f.column(0).mapv(|v| 2.0 * v - 1.0);
        let opts = sgd(0.05, 3000, HeadInit::Pytorch, 0);
        let t = train(FeatureSource::Fixed(f.view()), y.view(), Loss::Mse, &opts).unwrap();
        assert!((t.head.w[[0, 0]] - 2.0).abs() < 1e-8 && (t.head.b[0] + 1.0).abs() < 1e-8);
        assert!(t.final_train_loss < 1e-15);
        assert!(t.diverged_at.is_none());
    }

    #[test]
    fn divergence_is_reported_not_panicked() {
        let f = array![[10.0], [20.0], [30.0]];
        let y = array![1.0, 2.0, 3.0];
        let opts = sgd(1.0, 2000, HeadInit::Pytorch, 0);
        let t = train(FeatureSource::Fixed(f.view()), y.view(), Loss::Mse, &opts).unwrap();
        assert!(t.diverged_at.is_some());
    }

    fn sgd(lr: f64, iterations: usize, head_init: HeadInit, seed: u64) -> SgdOptions {
        SgdOptions {
            lr,
            iterations,
            batch_size: None,
            refresh_every: 1,
            standardize_features: false,
            standardize_target: false,
            head_init,
            seed,
        }
    }

    /// Where an accuracy below the majority rate comes from: with uninformative features only
    /// the bias moves. For `F = 0` the logit difference `d = b₁ − b₀` follows
    /// `d ← d − 2 lr (σ(d) − p)` exactly (`p` = share of class 1), so `|Δd| ≤ 2 lr` per step; a
    /// PyTorch-initialised `d₀ > 2 lr T` therefore still predicts class 1 — the minority — after
    /// `T` steps, and the test accuracy is the minority rate. Given enough steps `d → ln(p/(1−p))`
    /// and the head predicts the majority class with the entropy as training loss.
    #[test]
    fn uninformative_features_learn_the_prior_only_with_enough_steps() {
        let f = Array2::<f64>::zeros((10, 2));
        let y = Array1::from_iter((0..10).map(|i| if i < 3 { 1.0 } else { 0.0 }));
        let p = 0.3f64;
        let loss = Loss::CrossEntropy { classes: 2 };
        let task = crate::TaskKind::Classification { classes: 2 };
        let (lr, steps) = (1e-3, 100);
        // A seed whose PyTorch initialisation favours class 1 by more than 2 lr T.
        let seed = (0..1000u64)
            .find(|&s| {
                let h = LinearHead::init(2, 2, &mut rng_from_seed(s));
                h.b[1] - h.b[0] > 2.0 * lr * steps as f64 + 0.05
            })
            .unwrap();
        let h0 = LinearHead::init(2, 2, &mut rng_from_seed(seed));
        let t = train(
            FeatureSource::Fixed(f.view()),
            y.view(),
            loss,
            &sgd(lr, steps, HeadInit::Pytorch, seed),
        )
        .unwrap();
        let mut d = h0.b[1] - h0.b[0];
        for _ in 0..steps {
            d -= 2.0 * lr * (1.0 / (1.0 + (-d).exp()) - p);
        }
        assert!(
            (t.head.b[1] - t.head.b[0] - d).abs() < 1e-12,
            "{} vs {d}",
            t.head.b[1] - t.head.b[0]
        );
        assert!(d > 0.0);
        let m = crate::evaluate(&t, f.view(), y.view(), task).unwrap();
        assert_eq!(m[0], ("acc", 0.3)); // every prediction is the minority class
        assert_eq!(m[1], ("auroc", 0.5)); // constant scores: all ties
        assert!(t.final_train_loss > t.constant_loss);
        // Enough steps: the log-odds of the prior, the entropy, the majority class.
        let t = train(
            FeatureSource::Fixed(f.view()),
            y.view(),
            loss,
            &sgd(0.5, 2000, HeadInit::Pytorch, seed),
        )
        .unwrap();
        assert!((t.head.b[1] - t.head.b[0] - (p / (1.0 - p)).ln()).abs() < 1e-10);
        assert!((t.final_train_loss - t.constant_loss).abs() < 1e-12);
        assert_eq!(crate::evaluate(&t, f.view(), y.view(), task).unwrap()[0], ("acc", 0.7));
        // From a zero head the first step already points to the majority: d₁ = −2 lr (½ − p) < 0.
        let t = train(
            FeatureSource::Fixed(f.view()),
            y.view(),
            loss,
            &sgd(lr, 1, HeadInit::Zero, 0),
        )
        .unwrap();
        assert!((t.head.b[1] - t.head.b[0] + 2.0 * lr * (0.5 - p)).abs() < 1e-15);
        assert_eq!(crate::evaluate(&t, f.view(), y.view(), task).unwrap()[0], ("acc", 0.7));
    }

    /// Score orientation: the AUROC score is logit₁ − logit₀, so a head trained on separable
    /// data ranks class 1 first (AUROC 1) and predicts every test point right.
    #[test]
    fn separable_data_gives_perfect_accuracy_and_auroc() {
        let f = array![[-2.0], [-1.0], [1.0], [2.0]];
        let y = array![0.0, 0.0, 1.0, 1.0];
        let task = crate::TaskKind::Classification { classes: 2 };
        for init in [HeadInit::Zero, HeadInit::Pytorch] {
            let t = train(
                FeatureSource::Fixed(f.view()),
                y.view(),
                Loss::CrossEntropy { classes: 2 },
                &sgd(0.5, 500, init, 3),
            )
            .unwrap();
            let ft = array![[-3.0], [3.0], [0.5], [-0.5], [1.5]];
            let yt = array![0.0, 1.0, 1.0, 0.0, 1.0];
            assert_eq!(
                crate::evaluate(&t, ft.view(), yt.view(), task).unwrap(),
                vec![("acc", 1.0), ("auroc", 1.0)]
            );
            let flipped = yt.mapv(|v| 1.0 - v);
            assert_eq!(
                crate::evaluate(&t, ft.view(), flipped.view(), task).unwrap(),
                vec![("acc", 0.0), ("auroc", 0.0)]
            );
        }
    }

    #[test]
    fn standardised_targets_predict_in_the_targets_units() {
        // y = 3 f + 100 exactly: trained on (y − ȳ)/s_y, mapped back, the fit is exact in raw units.
        let f = array![[0.0], [1.0], [2.0], [3.0], [4.0], [5.0]];
        let y = f.column(0).mapv(|v| 3.0 * v + 100.0);
        let opts = SgdOptions {
            standardize_features: true,
            standardize_target: true,
            ..sgd(0.2, 2000, HeadInit::Zero, 0)
        };
        let t = train(FeatureSource::Fixed(f.view()), y.view(), Loss::Mse, &opts).unwrap();
        assert_eq!(t.target.mean, 107.5);
        assert!((t.target.scale - y.std(0.0)).abs() < 1e-13 * t.target.scale);
        assert!((t.constant_loss - 1.0).abs() < 1e-14); // the standardised target's variance
        let out = t.outputs(array![[10.0], [-1.0]].view()).unwrap();
        assert!(
            (out[[0, 0]] - 130.0).abs() < 1e-9 && (out[[1, 0]] - 97.0).abs() < 1e-9,
            "{out}"
        );
        let m = crate::evaluate(&t, f.view(), y.view(), crate::TaskKind::Regression).unwrap();
        assert!(m[0].1 < 1e-9);
        // Round trip of the map itself.
        let ts = TargetScaler::fit(y.view());
        let back = ts.inverse(ts.forward(y.view()).insert_axis(Axis(1)).view());
        assert!((&back.column(0) - &y).iter().all(|d| d.abs() < 1e-13 * 115.0));
    }

    #[test]
    fn scaler_leaves_rounding_noise_unscaled() {
        // Column 1 is rounding noise next to an O(1) column (a G V column behind a singular
        // value 1e-19 σ₁); column 2 is small but real (1e-6 relative) and gets standardised.
        let f = Array2::from_shape_fn((50, 3), |(i, j)| {
            let t = i as f64 / 49.0;
            match j {
                0 => 1.0 + t,
                1 => 1e-19 * (i % 3) as f64,
                _ => 1e-6 * (t * 7.0).sin(),
            }
        });
        let sc = FeatureScaler::fit(f.view());
        assert_eq!(sc.scale[1], 1.0);
        let out = sc.apply(f.view());
        for j in [0, 2] {
            assert!((out.column(j).std(0.0) - 1.0).abs() < 1e-9, "{j}");
        }
        assert!(out.column(1).iter().all(|v| v.abs() < 1e-18));
    }

    #[test]
    fn scaler_backward_is_the_chain_rule() {
        let f = array![[1.0, 5.0], [3.0, 5.0], [5.0, 5.0]];
        let sc = FeatureScaler::fit(f.view());
        let out = sc.apply(f.view());
        assert!((out.column(0).mapv(|v| v * v).mean().unwrap() - 1.0).abs() < 1e-14);
        assert_eq!(out.column(1).to_vec(), vec![0.0; 3]);
        let d = sc.backward(array![[1.0, 1.0]].view());
        assert_eq!(d, array![[sc.scale[0], 1.0]]);
    }
}
