//! Node classification: a linear LS-SVM (regularisation `γ_reg`, one-vs-rest, `±1` targets) on
//! node features, many fits on subsets of the same labelled nodes (cross-validation folds and
//! trials) sharing their work.
//!
//! Primal form (`d` features): per-part sufficient statistics ([`ksvd_lssvm::PrimalStats`]:
//! `F_pᵀ F_p`, `F_pᵀ 1`, `F_pᵀ T_p`, `T_pᵀ 1`) are summed once, and a fit on a union of parts
//! subtracts the left-out ones and solves `(Σ − n μ μᵀ + I/γ_reg) W = Y − n μ t̄ᵀ`,
//! `b = t̄ − Wᵀ μ` (the centred normal equations of `ksvd_lssvm::solve_primal`, eliminated bias),
//! so `k`-fold cross-validation costs one pass over the training rows plus `k + 1`
//! factorisations of size `d`.
//! Dual form (fewer training nodes than features): `K = F Fᵀ` once per embedding, each fit is
//! `ksvd_lssvm::solve_dual_direct` on `K[train, train]`.
use crate::error::{ensure, GraphTaskError, Result};
use ksvd_datasets::Labels;
use ksvd_linalg::dense::matmul;
use ksvd_lssvm::{
    argmax_labels, f1_multiclass, f1_multilabel, k_fold, solve_dual_direct, stratified_k_fold,
    stratified_train_test_split, top_k_labels, train_test_split, PrimalStats, ZeroDivision,
};
use ndarray::{Array2, ArrayView2, Axis};
use serde::{Deserialize, Serialize};

/// Which LS-SVM formulation the subset fits use (same model, different cost).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LssvmForm {
    /// The cheaper of the two by a flop estimate.
    #[default]
    Auto,
    /// Primal normal equations with shared sufficient statistics (`O(n d² + d³)` per trial).
    Primal,
    /// Dual bordered system on `K = F Fᵀ` (`O(n³)` per fit).
    Dual,
}

/// The labelled part of a graph's labels: which nodes take part in classification and their
/// targets.
#[derive(Debug, Clone)]
pub enum Task {
    /// One class per node.
    Single {
        /// The labelled nodes.
        nodes: Vec<usize>,
        /// The class of each labelled node, in `0..n_classes`.
        classes: Vec<usize>,
        /// Number of classes.
        n_classes: usize,
    },
    /// Label sets (indicator `labelled × n_labels`).
    Multi {
        /// The labelled nodes.
        nodes: Vec<usize>,
        /// `labelled × n_labels` indicator of the label sets.
        indicator: Array2<bool>,
    },
}

impl Task {
    /// The labelled nodes (nodes without a label, e.g. CiteSeer's 15, are left out).
    pub fn from_labels(labels: &Labels) -> Result<Task> {
        let task = match labels {
            Labels::Single { classes, class_names } => {
                let nodes: Vec<usize> = labels.labelled_nodes();
                let classes: Vec<usize> = nodes.iter().filter_map(|&i| classes[i]).collect();
                let n_classes = class_names.len().max(classes.iter().max().map_or(0, |&m| m + 1));
                Task::Single {
                    nodes,
                    classes,
                    n_classes,
                }
            }
            Labels::Multi { sets, class_names } => {
                let nodes: Vec<usize> = labels.labelled_nodes();
                let n_labels = class_names.len().max(sets.iter().flatten().max().map_or(0, |&m| m + 1));
                let mut indicator = Array2::from_elem((nodes.len(), n_labels), false);
                for (p, &i) in nodes.iter().enumerate() {
                    for &c in &sets[i] {
                        indicator[[p, c]] = true;
                    }
                }
                Task::Multi { nodes, indicator }
            }
        };
        ensure(
            task.n_classes() >= 2,
            "labels",
            task.n_classes(),
            "at least two classes are needed",
        )?;
        Ok(task)
    }

    /// The labelled nodes, in increasing order; positions below index this list.
    pub(crate) fn nodes(&self) -> &[usize] {
        match self {
            Task::Single { nodes, .. } | Task::Multi { nodes, .. } => nodes,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.nodes().len()
    }

    pub(crate) fn n_classes(&self) -> usize {
        match self {
            Task::Single { n_classes, .. } => *n_classes,
            Task::Multi { indicator, .. } => indicator.ncols(),
        }
    }

    /// One-vs-rest targets `±1`, `labelled × n_classes`.
    pub(crate) fn targets(&self) -> Array2<f64> {
        match self {
            Task::Single { classes, n_classes, .. } => {
                Array2::from_shape_fn(
                    (classes.len(), *n_classes),
                    |(p, c)| if classes[p] == c { 1.0 } else { -1.0 },
                )
            }
            Task::Multi { indicator, .. } => indicator.mapv(|b| if b { 1.0 } else { -1.0 }),
        }
    }

    /// A train/test split of the positions `0..len()` with `ceil(test_fraction len)` test
    /// positions: stratified by class for single-label data, uniform for multi-label data.
    pub(crate) fn split(&self, test_fraction: f64, seed: u64) -> Result<(Vec<usize>, Vec<usize>)> {
        let s = match self {
            Task::Single { classes, .. } => stratified_train_test_split(classes, test_fraction, seed)?,
            Task::Multi { .. } => train_test_split(self.len(), test_fraction, seed)?,
        };
        Ok((s.train, s.test))
    }

    /// `k` validation folds partitioning the given positions (stratified for single-label data),
    /// as position lists.
    pub(crate) fn folds(&self, positions: &[usize], k: usize, seed: u64) -> Result<Vec<Vec<usize>>> {
        let splits = match self {
            Task::Single { classes, .. } => {
                let sub: Vec<usize> = positions.iter().map(|&p| classes[p]).collect();
                stratified_k_fold(&sub, k, seed)?
            }
            Task::Multi { .. } => k_fold(positions.len(), k, seed)?,
        };
        Ok(splits
            .into_iter()
            .map(|s| s.test.into_iter().map(|i| positions[i]).collect())
            .collect())
    }

    /// Micro- and macro-F1 of decision values (`|eval| × n_classes`) on the positions `eval`:
    /// arg-max for single-label data (macro over the classes present in truth or prediction, as
    /// scikit-learn on integer labels), top-`k` with `k` the true label count for multi-label data
    /// (macro over all labels, absent ones scoring 0, as scikit-learn on indicator matrices).
    pub(crate) fn f1(&self, eval: &[usize], decisions: ArrayView2<'_, f64>) -> Result<(f64, f64)> {
        let s = match self {
            Task::Single { classes, n_classes, .. } => {
                let truth: Vec<usize> = eval.iter().map(|&p| classes[p]).collect();
                let pred = argmax_labels(decisions)?;
                f1_multiclass(&truth, &pred, *n_classes, ZeroDivision::Exclude)?
            }
            Task::Multi { indicator, .. } => {
                let truth = indicator.select(Axis(0), eval);
                let k: Vec<usize> = truth.outer_iter().map(|r| r.iter().filter(|&&b| b).count()).collect();
                let pred = top_k_labels(decisions, &k)?;
                f1_multilabel(truth.view(), pred.view(), ZeroDivision::Zero)?
            }
        };
        Ok((s.micro_f1, s.macro_f1))
    }
}

/// One fit: train on the union of `parts[i]` for `i` in `train_parts`, evaluate on `eval`.
#[derive(Debug, Clone)]
pub(crate) struct FitRequest<'a> {
    pub(crate) train_parts: Vec<usize>,
    pub(crate) eval: &'a [usize],
}

/// Linear LS-SVMs on subsets of the rows of one feature matrix.
pub(crate) struct SubsetLssvm<'a> {
    f: ArrayView2<'a, f64>,
    t: ArrayView2<'a, f64>,
    reg: f64,
    form: LssvmForm,
    kernel: Option<Array2<f64>>,
}

impl<'a> SubsetLssvm<'a> {
    /// Features `f` (`n × d`) and targets `t` (`n × C`) of the labelled nodes; `reg` is the
    /// LS-SVM regularisation `γ` (the paper: 1). `typical_train` (the size of a typical training
    /// set) and `fits_per_kernel` (how many fits will share one `F Fᵀ`) decide the `Auto` form.
    pub(crate) fn new(
        f: ArrayView2<'a, f64>,
        t: ArrayView2<'a, f64>,
        reg: f64,
        form: LssvmForm,
        typical_train: usize,
        fits_per_kernel: usize,
    ) -> Result<Self> {
        ensure(
            reg.is_finite() && reg > 0.0,
            "lssvm_regularization",
            reg,
            "must be positive and finite",
        )?;
        let (n, d) = f.dim();
        let form = match form {
            LssvmForm::Auto => {
                let (nt, df) = (typical_train as f64, d as f64);
                let fits = fits_per_kernel.max(1) as f64;
                let primal = 2.0 * nt * df * df + fits * df.powi(3) / 3.0;
                let dual = fits * nt.powi(3) / 3.0 + 2.0 * (n as f64).powi(2) * df + 2.0 * fits * nt * nt;
                if dual < primal {
                    LssvmForm::Dual
                } else {
                    LssvmForm::Primal
                }
            }
            other => other,
        };
        let kernel = if form == LssvmForm::Dual {
            let k = matmul(f, f.t())?;
            Some((&k + &k.t()) * 0.5)
        } else {
            None
        };
        Ok(SubsetLssvm {
            f,
            t,
            reg,
            form,
            kernel,
        })
    }

    /// The form in use (`Primal` or `Dual`, never `Auto`).
    pub(crate) fn form(&self) -> LssvmForm {
        self.form
    }

    /// Decision values (`|eval| × C`) of every request.
    pub(crate) fn decisions(&self, parts: &[Vec<usize>], requests: &[FitRequest<'_>]) -> Result<Vec<Array2<f64>>> {
        match &self.kernel {
            Some(k) => requests.iter().map(|r| self.dual_fit(k, parts, r)).collect(),
            None => self.primal(parts, requests),
        }
    }

    fn dual_fit(&self, k: &Array2<f64>, parts: &[Vec<usize>], r: &FitRequest<'_>) -> Result<Array2<f64>> {
        let train: Vec<usize> = r.train_parts.iter().flat_map(|&p| parts[p].iter().copied()).collect();
        ensure(!train.is_empty(), "training set", 0, "is empty")?;
        let ktt = k.select(Axis(0), &train).select(Axis(1), &train);
        let sol = solve_dual_direct(ktt.view(), self.t.select(Axis(0), &train).view(), self.reg)?;
        let ket = k.select(Axis(0), r.eval).select(Axis(1), &train);
        Ok(matmul(ket.view(), sol.alpha.view())? + &sol.bias)
    }

    fn primal(&self, parts: &[Vec<usize>], requests: &[FitRequest<'_>]) -> Result<Vec<Array2<f64>>> {
        let stats: Vec<PrimalStats> = parts
            .iter()
            .map(|p| PrimalStats::of_rows(self.f.select(Axis(0), p).view(), self.t.select(Axis(0), p).view()))
            .collect::<std::result::Result<_, _>>()?;
        let mut total = PrimalStats::new(self.f.ncols(), self.t.ncols());
        for s in &stats {
            total.merge(s)?;
        }
        requests
            .iter()
            .map(|r| {
                // Sum of the requested parts: the total minus the left-out parts (cheaper for CV).
                let mut acc = total.clone();
                for (p, s) in stats.iter().enumerate() {
                    if !r.train_parts.contains(&p) {
                        acc.subtract(s)?;
                    }
                }
                ensure(acc.count() > 0, "training set", 0, "is empty")?;
                let sol = acc.solve(self.reg)?;
                let fe = self.f.select(Axis(0), r.eval);
                Ok(matmul(fe.view(), sol.weights.view())? + &sol.bias)
            })
            .collect()
    }
}

/// Train/test splits and cross-validation folds of every trial, as positions of labelled nodes.
#[derive(Debug, Clone)]
pub struct Protocol {
    /// Training positions of each trial.
    pub train: Vec<Vec<usize>>,
    /// Test positions of each trial.
    pub test: Vec<Vec<usize>>,
    /// Validation folds of each trial's training part (`None`: no cross-validation in this trial).
    pub folds: Vec<Option<Vec<Vec<usize>>>>,
}

/// Which trials run the bandwidth cross-validation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CvScope {
    /// Nested: every trial selects its bandwidth by k-fold CV on its own training part (its test
    /// part is never seen).
    #[default]
    PerTrial,
    /// Only trial 0 runs the CV; its choice is used by every trial (cheaper; later trials' test
    /// nodes may have been in trial 0's training part).
    FirstTrial,
}

/// The score maximised by the cross-validation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CvMetric {
    /// Mean macro-F1 over the validation folds.
    #[default]
    MacroF1,
    /// Mean micro-F1 over the validation folds.
    MicroF1,
}

impl Protocol {
    /// Trial `t` uses split seed `seed + t` and fold seed `seed + 1_000_003 + t`.
    pub fn new(
        task: &Task,
        trials: usize,
        train_fraction: f64,
        folds: usize,
        scope: CvScope,
        seed: u64,
    ) -> Result<Protocol> {
        ensure(trials >= 1, "trials", trials, "must be at least 1")?;
        ensure(
            train_fraction > 0.0 && train_fraction < 1.0,
            "train_fraction",
            train_fraction,
            "must lie in (0, 1)",
        )?;
        let mut p = Protocol {
            train: vec![],
            test: vec![],
            folds: vec![],
        };
        for t in 0..trials {
            let (train, test) = task.split(1.0 - train_fraction, seed.wrapping_add(t as u64))?;
            let run_cv = folds >= 2 && (scope == CvScope::PerTrial || t == 0);
            let f = if run_cv {
                if train.len() < folds {
                    return Err(GraphTaskError::TooFewSamples {
                        what: "training nodes for the CV folds",
                        found: train.len(),
                        needed: folds,
                    });
                }
                Some(task.folds(&train, folds, seed.wrapping_add(1_000_003).wrapping_add(t as u64))?)
            } else {
                None
            };
            p.train.push(train);
            p.test.push(test);
            p.folds.push(f);
        }
        Ok(p)
    }

    /// Number of trials.
    pub fn trials(&self) -> usize {
        self.train.len()
    }
}

/// Scores of one candidate embedding over all trials.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// Mean CV score of every trial that ran the CV.
    pub cv: Vec<Option<f64>>,
    /// Test (micro, macro) F1 of every trial.
    pub test: Vec<(f64, f64)>,
    /// The LS-SVM form used.
    pub form: LssvmForm,
}

/// How the classifier is set up.
#[derive(Debug, Clone, Copy)]
pub struct ClassifierOptions {
    /// LS-SVM regularisation `γ`.
    pub reg: f64,
    /// Primal or dual.
    pub form: LssvmForm,
    /// CV score.
    pub metric: CvMetric,
    /// Standardise every feature column to zero mean and unit (sample) variance first.
    pub standardize: bool,
}

/// Zero mean and unit sample variance for every column (constant columns are only centred), as
/// LS-SVMlab's default preprocessing (`prelssvm`) does for continuous inputs.
pub(crate) fn standardize_columns(f: &mut Array2<f64>) {
    let n = f.nrows();
    if n < 2 {
        return;
    }
    for mut c in f.axis_iter_mut(Axis(1)) {
        let mean = c.sum() / n as f64;
        c -= mean;
        let sd = (c.dot(&c) / (n - 1) as f64).sqrt();
        if sd > 0.0 {
            c /= sd;
        }
    }
}

/// Evaluates node features (`n_nodes × d`, all nodes) under the protocol: per trial, the CV folds
/// (if `with_cv`) and the test split.
pub fn evaluate_features(
    task: &Task,
    features: ArrayView2<'_, f64>,
    protocol: &Protocol,
    opts: &ClassifierOptions,
    with_cv: bool,
) -> Result<Outcome> {
    let ClassifierOptions {
        reg,
        form,
        metric,
        standardize,
    } = *opts;
    let mut f = features.select(Axis(0), task.nodes());
    if standardize {
        standardize_columns(&mut f);
    }
    let t = task.targets();
    let typical = protocol.train.first().map_or(0, |v| v.len());
    let fits = protocol
        .folds
        .iter()
        .map(|f| f.as_ref().map_or(1, |v| v.len() + 1))
        .sum::<usize>();
    let engine = SubsetLssvm::new(f.view(), t.view(), reg, form, typical, fits)?;
    let mut out = Outcome {
        cv: vec![],
        test: vec![],
        form: engine.form(),
    };
    for trial in 0..protocol.trials() {
        let folds = protocol.folds[trial].as_ref().filter(|_| with_cv);
        let parts: Vec<Vec<usize>> = match folds {
            Some(f) => f.clone(),
            None => vec![protocol.train[trial].clone()],
        };
        let k = parts.len();
        let mut requests: Vec<FitRequest<'_>> = Vec::with_capacity(k + 1);
        if folds.is_some() {
            for (v, part) in parts.iter().enumerate() {
                requests.push(FitRequest {
                    train_parts: (0..k).filter(|&p| p != v).collect(),
                    eval: part,
                });
            }
        }
        requests.push(FitRequest {
            train_parts: (0..k).collect(),
            eval: &protocol.test[trial],
        });
        let dec = engine.decisions(&parts, &requests)?;
        let cv = if folds.is_some() {
            let mut total = 0.0;
            for (v, part) in parts.iter().enumerate() {
                let (mi, ma) = task.f1(part, dec[v].view())?;
                total += match metric {
                    CvMetric::MacroF1 => ma,
                    CvMetric::MicroF1 => mi,
                };
            }
            Some(total / k as f64)
        } else {
            None
        };
        out.cv.push(cv);
        let last = dec.len() - 1;
        out.test.push(task.f1(&protocol.test[trial], dec[last].view())?);
    }
    Ok(out)
}

/// For every trial, the index of the candidate with the best CV score (ties: the smaller index).
/// Trials without a CV of their own take the choice of the first trial that has one.
pub fn select(outcomes: &[Outcome]) -> Vec<usize> {
    let trials = outcomes.first().map_or(0, |o| o.test.len());
    if outcomes.len() <= 1 {
        return vec![0; trials];
    }
    let best = |t: usize| -> Option<usize> {
        let mut best: Option<(usize, f64)> = None;
        for (i, o) in outcomes.iter().enumerate() {
            if let Some(s) = o.cv[t] {
                if best.is_none_or(|(_, b)| s > b) {
                    best = Some((i, s));
                }
            }
        }
        best.map(|(i, _)| i)
    };
    let fallback = (0..trials).find_map(best).unwrap_or(0);
    (0..trials).map(|t| best(t).unwrap_or(fallback)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ksvd_linalg::random::{gaussian_matrix, rng_from_seed};
    use ksvd_lssvm::{Kernel, LssvmParams, Solver};

    /// Largest |a - b| relative to the largest |a|.
    fn rel_diff(a: &Array2<f64>, b: &Array2<f64>) -> f64 {
        let scale = a.iter().fold(1e-300f64, |m, x| m.max(x.abs()));
        a.iter().zip(b.iter()).fold(0.0f64, |m, (x, y)| m.max((x - y).abs())) / scale
    }

    /// The shared-statistics fits equal independent `ksvd-lssvm` fits on the same rows, in both
    /// forms, for every request (CV-style left-out parts and the full fit).
    #[test]
    fn subset_fits_match_independent_lssvm_fits() {
        for (n, d) in [(60, 7), (40, 90)] {
            let mut rng = rng_from_seed(3);
            let f = gaussian_matrix(&mut rng, n, d);
            let t = gaussian_matrix(&mut rng, n, 3).mapv(|v| if v > 0.0 { 1.0 } else { -1.0 });
            let parts: Vec<Vec<usize>> = vec![
                (0..n).step_by(3).collect(),
                (1..n).step_by(3).collect(),
                (2..n).step_by(3).collect(),
            ];
            let eval: Vec<usize> = (0..n).collect();
            let requests = vec![
                FitRequest {
                    train_parts: vec![0, 1],
                    eval: &parts[2],
                },
                FitRequest {
                    train_parts: vec![1, 2],
                    eval: &parts[0],
                },
                FitRequest {
                    train_parts: vec![0, 1, 2],
                    eval: &eval,
                },
            ];
            for form in [LssvmForm::Primal, LssvmForm::Dual] {
                let engine = SubsetLssvm::new(f.view(), t.view(), 0.7, form, n, 3).unwrap();
                assert_eq!(engine.form(), form);
                let got = engine.decisions(&parts, &requests).unwrap();
                for (r, g) in requests.iter().zip(&got) {
                    let train: Vec<usize> = r.train_parts.iter().flat_map(|&p| parts[p].clone()).collect();
                    let model = LssvmParams::new()
                        .gamma(0.7)
                        .kernel(Kernel::Linear)
                        .solver(Solver::Direct)
                        .check()
                        .unwrap()
                        .fit(f.select(Axis(0), &train).view(), t.select(Axis(0), &train).view())
                        .unwrap();
                    let want = model.decision_function(f.select(Axis(0), r.eval).view()).unwrap();
                    // Both are backward-stable solves of the same system; the condition number of
                    // `Xc^T Xc + I/gamma` is modest for Gaussian data.
                    let tol = 1e4 * f64::EPSILON * (n * d) as f64;
                    assert!(
                        rel_diff(&want, g) < tol,
                        "n={n} d={d} {form:?}: {} >= {tol}",
                        rel_diff(&want, g)
                    );
                }
            }
        }
    }

    #[test]
    fn auto_form_prefers_dual_when_features_outnumber_samples() {
        let mut rng = rng_from_seed(1);
        let t = Array2::from_elem((50, 2), 1.0);
        let wide = gaussian_matrix(&mut rng, 50, 400);
        let narrow = gaussian_matrix(&mut rng, 50, 5);
        assert_eq!(
            SubsetLssvm::new(wide.view(), t.view(), 1.0, LssvmForm::Auto, 30, 10)
                .unwrap()
                .form(),
            LssvmForm::Dual
        );
        assert_eq!(
            SubsetLssvm::new(narrow.view(), t.view(), 1.0, LssvmForm::Auto, 30, 10)
                .unwrap()
                .form(),
            LssvmForm::Primal
        );
    }

    #[test]
    fn tasks_skip_unlabelled_nodes_and_split_disjointly() {
        let labels = Labels::Single {
            classes: vec![
                Some(0),
                None,
                Some(1),
                Some(0),
                Some(1),
                Some(0),
                None,
                Some(1),
                Some(0),
                Some(1),
            ],
            class_names: vec!["a".into(), "b".into()],
        };
        let task = Task::from_labels(&labels).unwrap();
        assert_eq!(task.nodes(), &[0, 2, 3, 4, 5, 7, 8, 9]);
        let p = Protocol::new(&task, 3, 0.5, 2, CvScope::FirstTrial, 9).unwrap();
        for t in 0..3 {
            let mut all: Vec<usize> = p.train[t].iter().chain(&p.test[t]).copied().collect();
            all.sort_unstable();
            assert_eq!(all, (0..8).collect::<Vec<_>>());
            assert_eq!(p.folds[t].is_some(), t == 0);
        }
        let folds = p.folds[0].as_ref().unwrap();
        let mut covered: Vec<usize> = folds.iter().flatten().copied().collect();
        covered.sort_unstable();
        assert_eq!(covered, p.train[0]);
        let multi = Labels::Multi {
            sets: vec![vec![0, 2], vec![], vec![1]],
            class_names: vec!["x".into(), "y".into(), "z".into()],
        };
        let task = Task::from_labels(&multi).unwrap();
        assert_eq!(task.nodes(), &[0, 2]);
        assert_eq!(task.targets(), ndarray::array![[1.0, -1.0, 1.0], [-1.0, 1.0, -1.0]]);
    }

    /// Standardised features give zero-mean unit-variance columns, and make the classifier
    /// invariant to positive column scalings and shifts of the features.
    #[test]
    fn standardization_makes_the_classifier_scale_invariant() {
        let mut rng = rng_from_seed(4);
        let n = 48;
        let labels = Labels::Single {
            classes: (0..n).map(|i| Some(i % 3)).collect(),
            class_names: vec!["a".into(), "b".into(), "c".into()],
        };
        let task = Task::from_labels(&labels).unwrap();
        let f = gaussian_matrix(&mut rng, n, 6)
            + &Array2::from_shape_fn((n, 6), |(i, j)| if j == i % 3 { 1.5 } else { 0.0 });
        let mut g = f.clone();
        for (j, mut c) in g.axis_iter_mut(Axis(1)).enumerate() {
            c.mapv_inplace(|v| 10f64.powi(j as i32 - 3) * v + j as f64);
        }
        let mut s = g.clone();
        standardize_columns(&mut s);
        for c in s.axis_iter(Axis(1)) {
            assert!(c.sum().abs() < 1e3 * f64::EPSILON * n as f64);
            assert!((c.dot(&c) / (n - 1) as f64 - 1.0).abs() < 1e3 * f64::EPSILON * n as f64);
        }
        let p = Protocol::new(&task, 3, 0.6, 3, CvScope::PerTrial, 1).unwrap();
        let opts = ClassifierOptions {
            reg: 1.0,
            form: LssvmForm::Primal,
            metric: CvMetric::MacroF1,
            standardize: true,
        };
        let a = evaluate_features(&task, f.view(), &p, &opts, true).unwrap();
        let b = evaluate_features(&task, g.view(), &p, &opts, true).unwrap();
        assert_eq!(a.test, b.test);
        for (x, y) in a.cv.iter().zip(&b.cv) {
            assert!((x.unwrap() - y.unwrap()).abs() < 1e-12);
        }
        let raw = ClassifierOptions {
            standardize: false,
            ..opts
        };
        let c = evaluate_features(&task, g.view(), &p, &raw, true).unwrap();
        assert_ne!(c.cv, b.cv, "without standardisation the column scales matter");
    }

    #[test]
    fn select_takes_best_cv_and_first_index_on_ties() {
        let o = |cv: Vec<Option<f64>>| Outcome {
            test: vec![(0.0, 0.0); cv.len()],
            cv,
            form: LssvmForm::Primal,
        };
        let outcomes = vec![o(vec![Some(0.5), Some(0.7), None]), o(vec![Some(0.6), Some(0.7), None])];
        // Trial 2 has no CV of its own: it takes trial 0's choice.
        assert_eq!(select(&outcomes), vec![1, 0, 1]);
    }
}
