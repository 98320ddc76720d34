//! # ksvd-lssvm
//!
//! Least-squares support vector machines (LS-SVM, Suykens & Vandewalle 1999) for the
//! downstream node-classification task of the paper: an LS-SVM with regularisation
//! `gamma = 1`, one-vs-rest, on the 1000-dimensional embeddings, following He et al. (2022,
//! AsK-LS). Also here: seeded train/test splits and k-folds, and (re-exported from
//! `ksvd-metrics`, their one home) the F1 metrics the paper reports.
//!
//! ## The model
//!
//! For targets `t_i` and a kernel `k(x, z) = phi(x)^T phi(z)`, the LS-SVM solves
//!
//! ```text
//! min_{w, b, e}  1/2 w^T w + gamma/2 sum_i e_i^2   s.t.   t_i = w^T phi(x_i) + b + e_i,
//! ```
//!
//! whose optimality conditions, with `K[i, j] = k(x_i, x_j)`, are the bordered dual system
//!
//! ```text
//! [ 0   1^T         ] [ b     ]   [ 0 ]
//! [ 1   K + I/gamma ] [ alpha ] = [ t ],        f(x) = sum_i alpha_i k(x, x_i) + b.
//! ```
//!
//! With `H = K + I/gamma` (positive definite) the bias is eliminated by its Schur complement:
//! `H [eta, nu] = [1, t]`, `s = 1^T eta`, `b = 1^T nu / s`, `alpha = nu - eta b`.
//!
//! **Function-estimation vs. classifier form.** Suykens' classifier form uses
//! `[[0, y^T], [y, Omega + I/gamma]] [b; alpha_c] = [0; 1]` with `Omega[i, j] = y_i y_j K[i, j]`
//! and `f(x) = sum_i alpha_c_i y_i k(x, x_i) + b`. For labels `y_i` in `{-1, +1}` the two are
//! the same model: multiplying the second block row by `diag(y)` and substituting
//! `alpha_c = y .* alpha` turns one system into the other (`y_i^2 = 1`), with the same `b` and
//! the same decision function, so the choice is computational, not statistical. This crate
//! solves the **function-estimation form on `+-1` targets** because its matrix does not depend
//! on the labels: one factorisation of `H` serves every class, the `C + 1` right-hand
//! sides `[1, t_1, ..., t_C]` are solved together, and for the linear kernel it is ridge
//! regression with an unregularised bias. The classifier form is available for checking
//! ([`classifier_bordered_matrix`], [`classifier_alpha`]).
//!
//! ## Solvers ([`Solver`])
//!
//! * [`Solver::Primal`] (linear kernel): eliminating `b = mean(t) - mean(x)^T w` from the
//!   `(d+1) x (d+1)` primal system leaves `(X_c^T X_c + I/gamma) w = X_c^T t_c` on centred data,
//!   solved by Cholesky: `O(N d^2)`, the choice for node classification (`N` up to 20 000,
//!   `d = 1000`).
//! * [`Solver::Direct`]: dense Cholesky of `H` (LU if `K` is asymmetric or `H` not numerically
//!   positive definite), `O(N^2)` memory.
//! * [`Solver::ConjugateGradient`]: CG on `H`, optionally matrix-free through
//!   [`KernelOperator`] (the `N x N` kernel is never stored), for kernel LS-SVMs at large `N`.
//! * [`Solver::Auto`]: see [`ValidLssvmParams::resolve_solver`].
//!
//! ## Multi-class and multi-label
//!
//! One-vs-rest: class `c` gets targets `+1` (sample in `c`) / `-1` (otherwise).
//! [`MulticlassLssvm::predict`] takes the arg-max of the decision values.
//! [`MultilabelLssvm`] offers the two rules found in the literature: **top-k**
//! ([`MultilabelLssvm::predict_top_k`]): each test sample gets its `k` highest-scoring labels,
//! `k` = its true number of labels (the DeepWalk / HOPE protocol; it borrows the label count
//! from the ground truth), and **thresholding at 0** ([`MultilabelLssvm::predict_threshold`]):
//! every label with `f_c(x) > 0`.
//!
//! ## Example
//!
//! ```
//! use ksvd_lssvm::{f1_multiclass, Kernel, LssvmParams, ZeroDivision};
//! use ndarray::array;
//!
//! let x = array![[0.0, 0.0], [0.1, 0.2], [5.0, 5.0], [5.1, 4.9], [0.0, 5.0], [0.2, 5.1]];
//! let y = [0, 0, 1, 1, 2, 2];
//! let model = LssvmParams::new().gamma(10.0).kernel(Kernel::Rbf { gamma: 1.0 }).check()?.fit_multiclass(x.view(), &y)?;
//! let pred = model.predict(array![[0.05, 0.1], [4.9, 5.0], [0.1, 4.8]].view())?;
//! assert_eq!(pred, vec![0, 1, 2]);
//!
//! let f1 = f1_multiclass(&y, &model.predict(x.view())?, 3, ZeroDivision::Zero)?;
//! assert_eq!((f1.micro_f1, f1.macro_f1), (1.0, 1.0));
//! # Ok::<(), ksvd_lssvm::LssvmError>(())
//! ```
//!
//! ## Metrics and splits
//!
//! The metrics are defined in `ksvd-metrics` and re-exported here for convenience:
//! [`f1_multiclass`] and [`f1_multilabel`] return micro- and macro-F1 (micro-F1 equals
//! [`accuracy`] for single-label problems); the `0/0` convention for classes with no true and no
//! predicted sample is [`ZeroDivision`] (scikit-learn's default scores them 0).
//! [`train_test_split`], [`stratified_train_test_split`], [`k_fold`] and [`stratified_k_fold`]
//! return index vectors from an explicit `u64` seed.
//!
//! ## Where next
//!
//! The low-level layer ([`solve_dual_direct`], [`solve_dual_cg`], [`solve_primal`],
//! [`conjugate_gradient`]) works on plain matrices and on any
//! [`ksvd_linalg::LinearOperator`]; the high-level layer is [`LssvmParams`] ->
//! [`ValidLssvmParams`] -> `fit_*`. [`PrimalStats`] is the one-pass form of the primal solver:
//! the sufficient statistics `n, Σ f, Σ f fᵀ, Σ t, Σ f tᵀ`, mergeable across chunks and
//! partitions and subtractable across cross-validation folds (graph-tasks' cross-validation and
//! the streaming classifier use it); [`PrimalStats::solve_standardized`] solves it on
//! standardised features (ridge regression invariant to the scale of every feature column).

mod error;
mod kernel;
mod model;
mod params;
mod solve;
mod split;
mod stats;

pub use error::{LssvmError, Result};
pub use kernel::{check_kernel, kernel_matrix, Kernel, KernelOperator};
/// The F1 metrics of the node-classification experiments, defined in `ksvd-metrics`.
pub use ksvd_metrics::{accuracy, f1_multiclass, f1_multilabel, label_counts, label_indicator, F1Scores, ZeroDivision};
pub use model::{argmax_labels, threshold_labels, top_k_labels, BinaryLssvm, Lssvm, MulticlassLssvm, MultilabelLssvm};
pub use params::{LssvmParams, Solver, ValidLssvmParams, AUTO_DENSE_KERNEL_MAX_N, AUTO_DIRECT_MAX_N};
pub use solve::{
    bordered_matrix, classifier_alpha, classifier_bordered_matrix, conjugate_gradient, solve_dual_cg,
    solve_dual_direct, solve_primal, CgOptions, CgOutcome, DualSolution, PrimalSolution,
};
pub use split::{k_fold, stratified_k_fold, stratified_train_test_split, train_test_split, Split};
pub use stats::PrimalStats;
