//! The solvers against the mathematics: the Schur-complement dual solve equals a dense LU solve
//! of the full bordered system, the classifier form is the same model, the primal equals the
//! dual with the linear kernel, and conjugate gradient equals the direct solve.
// A failed unwrap in a test is a test failure with a backtrace, which is what we want here.
#![allow(clippy::unwrap_used)]
use ksvd_linalg::dense::{lu_solve, symmetric_eigen};
use ksvd_linalg::random::{gaussian_matrix, rng_from_seed};
use ksvd_lssvm::{
    bordered_matrix, classifier_alpha, classifier_bordered_matrix, kernel_matrix, solve_dual_cg, solve_dual_direct,
    solve_primal, CgOptions, Kernel, KernelOperator, LssvmParams, Solver,
};
use ndarray::{s, Array1, Array2, Axis};
use proptest::prelude::*;

/// Condition number of `H = K + I/gamma` (symmetric positive definite).
fn cond_h(k: &Array2<f64>, gamma: f64) -> f64 {
    let (w, _) = symmetric_eigen(k.view()).unwrap();
    (w[0] + 1.0 / gamma) / (w[w.len() - 1] + 1.0 / gamma)
}

fn max_abs(a: &Array2<f64>) -> f64 {
    a.iter().fold(0.0_f64, |m, v| m.max(v.abs()))
}

/// Backward-stable solves give relative forward errors of order `cond * eps * n`.
fn tol(n: usize, cond: f64) -> f64 {
    64.0 * f64::EPSILON * (n as f64 + 1.0) * cond
}

fn random_targets(seed: u64, n: usize, m: usize) -> Array2<f64> {
    gaussian_matrix(&mut rng_from_seed(seed), n, m).mapv(|v| if v >= 0.0 { 1.0 } else { -1.0 })
}

fn kernels() -> [Kernel; 2] {
    [Kernel::Linear, Kernel::Rbf { gamma: 1.3 }]
}

fn check_dual_against_lu(n: usize, d: usize, gamma: f64, seed: u64) {
    let x = gaussian_matrix(&mut rng_from_seed(seed), n, d);
    let t = random_targets(seed + 1, n, 3);
    for kernel in kernels() {
        let k = kernel_matrix(&kernel, x.view(), x.view()).unwrap();
        let dual = solve_dual_direct(k.view(), t.view(), gamma).unwrap();
        let a = bordered_matrix(k.view(), gamma).unwrap();
        let mut rhs = Array2::zeros((n + 1, 3));
        rhs.slice_mut(s![1.., ..]).assign(&t);
        let full = lu_solve(a.view(), rhs.view()).unwrap();
        // The bordered matrix is indefinite; its conditioning is governed by H's and by the
        // Schur complement 1^T H^-1 1, both bounded through cond(H) (times n for the border).
        let scale = max_abs(&full).max(1.0);
        let eps = tol(n, cond_h(&k, gamma) * n as f64) * scale;
        let err_b = (&dual.bias - &full.row(0)).iter().fold(0.0_f64, |m, v| m.max(v.abs()));
        let err_a = max_abs(&(&dual.alpha - &full.slice(s![1.., ..])));
        assert!(
            err_b <= eps && err_a <= eps,
            "{kernel:?} n={n} d={d} gamma={gamma}: {err_b:e} {err_a:e} > {eps:e}"
        );
        // First block row: every alpha column sums to zero.
        for col in dual.alpha.axis_iter(Axis(1)) {
            assert!(col.sum().abs() <= eps * n as f64);
        }
        assert_eq!(dual.cg_iterations, None);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn dual_direct_equals_bordered_lu(n in 1usize..40, d in 1usize..8, log_gamma in -2.0f64..3.0, seed in 0u64..1000) {
        check_dual_against_lu(n, d, 10f64.powf(log_gamma), seed);
    }

    #[test]
    fn primal_equals_dual_for_linear_kernel(n in 2usize..40, d in 1usize..12, log_gamma in -2.0f64..2.0, seed in 0u64..1000) {
        // Tall (n > d), square and wide (d > n) problems.
        let gamma = 10f64.powf(log_gamma);
        let x = gaussian_matrix(&mut rng_from_seed(seed), n, d);
        let t = random_targets(seed + 7, n, 2);
        let k = kernel_matrix(&Kernel::Linear, x.view(), x.view()).unwrap();
        let dual = solve_dual_direct(k.view(), t.view(), gamma).unwrap();
        let primal = solve_primal(x.view(), t.view(), gamma).unwrap();
        // w = X^T alpha, and the biases coincide.
        let w_dual = x.t().dot(&dual.alpha);
        let eps = tol(n.max(d), cond_h(&k, gamma) * n as f64) * max_abs(&w_dual).max(1.0);
        prop_assert!(max_abs(&(&w_dual - &primal.weights)) <= eps);
        prop_assert!((&dual.bias - &primal.bias).iter().all(|e| e.abs() <= eps));
    }
}

#[test]
fn dual_direct_matches_lu_on_edge_sizes() {
    // n = 1 (alpha = 0, b = t), duplicated points (rank-deficient K), strong and weak regularisation.
    for &(n, d, gamma) in &[(1, 3, 1.0), (2, 1, 1e-3), (30, 2, 1e4), (5, 10, 1.0)] {
        check_dual_against_lu(n, d, gamma, 42);
    }
    let x = Array2::from_elem((4, 2), 1.5); // all samples identical
    let t = random_targets(3, 4, 1);
    let k = kernel_matrix(&Kernel::Rbf { gamma: 1.0 }, x.view(), x.view()).unwrap();
    let dual = solve_dual_direct(k.view(), t.view(), 1.0).unwrap();
    assert!(dual.alpha.iter().all(|v| v.is_finite()));
}

#[test]
fn classifier_form_is_the_same_model() {
    let n = 25;
    let x = gaussian_matrix(&mut rng_from_seed(5), n, 4);
    let y = random_targets(6, n, 1).column(0).to_owned();
    for kernel in kernels() {
        let k = kernel_matrix(&kernel, x.view(), x.view()).unwrap();
        let gamma = 2.0;
        let reg = solve_dual_direct(k.view(), y.view().insert_axis(Axis(1)), gamma).unwrap();
        // [[0, y^T], [y, Omega + I/gamma]] [b; alpha_c] = [0; 1].
        let a = classifier_bordered_matrix(k.view(), y.view(), gamma).unwrap();
        let mut rhs = Array2::ones((n + 1, 1));
        rhs[[0, 0]] = 0.0;
        let cls = lu_solve(a.view(), rhs.view()).unwrap();
        let alpha_c = classifier_alpha(reg.alpha.column(0), y.view()).unwrap();
        let eps = tol(n, cond_h(&k, gamma) * n as f64) * max_abs(&cls).max(1.0);
        assert!((reg.bias[0] - cls[[0, 0]]).abs() <= eps);
        assert!((&alpha_c - &cls.slice(s![1.., 0])).iter().all(|e| e.abs() <= eps));
    }
}

#[test]
fn primal_and_dual_fits_give_the_same_decision_values() {
    let (n, d) = (80, 6);
    let x = gaussian_matrix(&mut rng_from_seed(9), n, d);
    let x_test = gaussian_matrix(&mut rng_from_seed(10), 15, d);
    let labels: Vec<usize> = (0..n).map(|i| i % 3).collect();
    let fit = |solver| {
        let p = LssvmParams::new().solver(solver).check().unwrap();
        let m = p.fit_multiclass(x.view(), &labels).unwrap();
        assert_eq!(m.model().solver(), solver);
        m.decision_function(x_test.view()).unwrap()
    };
    let primal = fit(Solver::Primal);
    let dual = fit(Solver::Direct);
    let cg = fit(Solver::ConjugateGradient(CgOptions {
        tol: 1e-13,
        ..CgOptions::default()
    }));
    let k = kernel_matrix(&Kernel::Linear, x.view(), x.view()).unwrap();
    let eps = tol(n, cond_h(&k, 1.0) * n as f64) * max_abs(&primal).max(1.0);
    assert!(max_abs(&(&primal - &dual)) <= eps);
    assert!(max_abs(&(&primal - &cg)) <= eps.max(1e-10 * cond_h(&k, 1.0)));
}

#[test]
fn conjugate_gradient_agrees_with_direct() {
    let (n, d, gamma) = (120, 5, 10.0);
    let x = gaussian_matrix(&mut rng_from_seed(21), n, d);
    let t = random_targets(22, n, 4);
    let opts = CgOptions {
        tol: 1e-12,
        max_iter: 2000,
        matrix_free: true,
    };
    for kernel in kernels() {
        let k = kernel_matrix(&kernel, x.view(), x.view()).unwrap();
        let direct = solve_dual_direct(k.view(), t.view(), gamma).unwrap();
        let cond = cond_h(&k, gamma);
        // CG stops at relative residual <= tol, so the forward error is at most cond * tol
        // (relative), plus the direct solve's own error.
        let eps = (cond * opts.tol * (n as f64).sqrt() + tol(n, cond * n as f64)) * max_abs(&direct.alpha).max(1.0);
        let op = KernelOperator::new(kernel, x.view()).unwrap().with_block_rows(17);
        let free = solve_dual_cg(&op, t.view(), gamma, &opts).unwrap();
        let dense = solve_dual_cg(&k, t.view(), gamma, &opts).unwrap();
        for cg in [&free, &dense] {
            assert!(cg.cg_iterations.is_some_and(|it| it >= 1));
            assert!(max_abs(&(&cg.alpha - &direct.alpha)) <= eps, "{kernel:?}");
            assert!((&cg.bias - &direct.bias).iter().all(|e| e.abs() <= eps), "{kernel:?}");
        }
    }
}

#[test]
fn asymmetric_kernel_matrix_goes_through_lu() {
    // An asymmetric "kernel" (as in AsK-LS): the Schur elimination uses b = 1^T nu / 1^T eta,
    // valid without symmetry.
    let n = 12;
    let mut k = gaussian_matrix(&mut rng_from_seed(31), n, n);
    k.diag_mut().mapv_inplace(|v| v + 3.0 * n as f64);
    let t = random_targets(32, n, 2);
    let dual = solve_dual_direct(k.view(), t.view(), 1.0).unwrap();
    let a = bordered_matrix(k.view(), 1.0).unwrap();
    let mut rhs = Array2::zeros((n + 1, 2));
    rhs.slice_mut(s![1.., ..]).assign(&t);
    let full = lu_solve(a.view(), rhs.view()).unwrap();
    let err = (&dual.bias - &full.row(0))
        .iter()
        .chain((&dual.alpha - &full.slice(s![1.., ..])).iter())
        .fold(0.0_f64, |m, v| m.max(v.abs()));
    assert!(err <= 1e3 * f64::EPSILON * n as f64, "{err:e}");
    let _: Array1<f64> = dual.bias;
}
