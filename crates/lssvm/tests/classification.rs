//! End-to-end classification on separable toy data, and a typed error for every bad input.
// A failed unwrap in a test is a test failure with a backtrace, which is what we want here.
#![allow(clippy::unwrap_used)]
use ksvd_linalg::random::{gaussian_matrix, rng_from_seed};
use ksvd_lssvm::{
    f1_multilabel, label_counts, label_indicator, solve_dual_cg, CgOptions, Kernel, KernelOperator, LssvmError,
    LssvmParams, Solver, ZeroDivision,
};
use ndarray::{array, Array1, Array2};

/// `per` points around each centre, with N(0, spread^2) noise.
fn blobs(centres: &Array2<f64>, per: usize, spread: f64, seed: u64) -> (Array2<f64>, Vec<usize>) {
    let (c, d) = centres.dim();
    let noise = gaussian_matrix(&mut rng_from_seed(seed), c * per, d) * spread;
    let x = Array2::from_shape_fn((c * per, d), |(i, j)| centres[[i / per, j]] + noise[[i, j]]);
    (x, (0..c * per).map(|i| i / per).collect())
}

/// The error of a result that must fail.
fn e<T>(r: Result<T, LssvmError>) -> LssvmError {
    match r {
        Ok(_) => panic!("expected an error"),
        Err(err) => err,
    }
}

fn all_solvers() -> Vec<Solver> {
    vec![
        Solver::Auto,
        Solver::Direct,
        Solver::ConjugateGradient(CgOptions::default()),
        Solver::ConjugateGradient(CgOptions {
            matrix_free: false,
            ..CgOptions::default()
        }),
    ]
}

#[test]
fn separable_binary_is_classified_perfectly() {
    let centres = array![[-4.0, 0.0, 1.0], [4.0, 0.0, -1.0]];
    let (x, labels) = blobs(&centres, 20, 0.5, 1);
    let y = Array1::from_iter(labels.iter().map(|&l| if l == 1 { 1.0 } else { -1.0 }));
    for kernel in [Kernel::Linear, Kernel::Rbf { gamma: 2.0 }] {
        for solver in all_solvers() {
            let p = LssvmParams::new().kernel(kernel).solver(solver).check().unwrap();
            let m = p.fit_binary(x.view(), y.view()).unwrap();
            assert_eq!(m.predict(x.view()).unwrap(), y, "{kernel:?} {solver:?}");
        }
    }
    let lin = LssvmParams::new()
        .solver(Solver::Primal)
        .check()
        .unwrap()
        .fit_binary(x.view(), y.view())
        .unwrap();
    assert_eq!(lin.predict(x.view()).unwrap(), y);
    assert!(lin.model().weights().is_some() && lin.model().dual_coefficients().is_none());
}

#[test]
fn separable_multiclass_is_classified_perfectly() {
    let centres = array![[0.0, 0.0], [6.0, 0.0], [0.0, 6.0], [6.0, 6.0], [3.0, 12.0]];
    let (x, labels) = blobs(&centres, 15, 0.4, 2);
    let (x_test, labels_test) = blobs(&centres, 5, 0.4, 3);
    for solver in all_solvers() {
        let p = LssvmParams::new()
            .kernel(Kernel::Rbf { gamma: 3.0 })
            .gamma(10.0)
            .solver(solver)
            .check()
            .unwrap();
        let m = p.fit_multiclass(x.view(), &labels).unwrap();
        assert_eq!(m.n_classes(), 5);
        assert_eq!(m.predict(x_test.view()).unwrap(), labels_test, "{solver:?}");
        assert!(m.model().dual_coefficients().is_some());
    }
    // Linear one-vs-rest (a ridge regression per class) separates this layout too.
    let m = LssvmParams::new()
        .check()
        .unwrap()
        .fit_multiclass(x.view(), &labels)
        .unwrap();
    assert_eq!(m.model().solver(), Solver::Primal);
    assert_eq!(m.predict(x_test.view()).unwrap(), labels_test);
}

#[test]
fn separable_multilabel_top_k_and_threshold() {
    // Four clusters with fixed label sets: {0}, {0, 1}, {2}, {1, 2}.
    let centres = array![[0.0, 0.0], [8.0, 0.0], [0.0, 8.0], [8.0, 8.0]];
    let sets_of = [vec![0], vec![0, 1], vec![2], vec![1, 2]];
    let (x, cluster) = blobs(&centres, 12, 0.5, 4);
    let y = label_indicator(&cluster.iter().map(|&c| sets_of[c].clone()).collect::<Vec<_>>(), 3).unwrap();
    let (x_test, cluster_test) = blobs(&centres, 4, 0.5, 5);
    let y_test = label_indicator(&cluster_test.iter().map(|&c| sets_of[c].clone()).collect::<Vec<_>>(), 3).unwrap();
    let p = LssvmParams::new()
        .kernel(Kernel::Rbf { gamma: 3.0 })
        .gamma(100.0)
        .check()
        .unwrap();
    let m = p.fit_multilabel(x.view(), y.view()).unwrap();
    assert_eq!(m.n_labels(), 3);
    let top = m.predict_top_k(x_test.view(), &label_counts(y_test.view())).unwrap();
    let thr = m.predict_threshold(x_test.view()).unwrap();
    assert_eq!(top, y_test);
    assert_eq!(thr, y_test);
    let f1 = f1_multilabel(y_test.view(), top.view(), ZeroDivision::Zero).unwrap();
    assert_eq!((f1.micro_f1, f1.macro_f1), (1.0, 1.0));
}

#[test]
fn typed_errors_for_bad_inputs() {
    let x = gaussian_matrix(&mut rng_from_seed(6), 6, 2);
    let y = array![1.0, -1.0, 1.0, -1.0, 1.0, -1.0];
    let labels = [0, 1, 2, 0, 1, 2];
    let p = LssvmParams::new().check().unwrap();

    // Parameters.
    assert_eq!(
        e(LssvmParams::new().gamma(-1.0).check()),
        LssvmError::InvalidGamma { gamma: -1.0 }
    );
    assert_eq!(
        e(LssvmParams::new().gamma(0.0).check()),
        LssvmError::InvalidGamma { gamma: 0.0 }
    );
    assert!(matches!(
        e(LssvmParams::new().gamma(f64::NAN).check()),
        LssvmError::InvalidGamma { .. }
    ));
    assert!(matches!(
        e(LssvmParams::new().kernel(Kernel::Rbf { gamma: -2.0 }).check()),
        LssvmError::Kernel(ksvd_kernels::KernelError::InvalidParameter { name: "gamma", .. })
    ));
    assert!(matches!(
        e(LssvmParams::new()
            .kernel(Kernel::Rbf { gamma: 1.0 })
            .solver(Solver::Primal)
            .check()),
        LssvmError::PrimalNeedsLinearKernel { .. }
    ));

    // Inputs.
    let mut bad = x.clone();
    bad[[3, 1]] = f64::NAN;
    assert_eq!(
        e(p.fit_binary(bad.view(), y.view())),
        LssvmError::NonFinite {
            what: "training features",
            row: 3,
            col: 1
        }
    );
    let empty = Array2::<f64>::zeros((0, 2));
    assert!(matches!(
        e(p.fit_multiclass(empty.view(), &[])),
        LssvmError::EmptyInput { .. } | LssvmError::TooFewClasses { .. }
    ));
    assert!(matches!(
        e(p.fit(empty.view(), Array2::zeros((0, 1)).view())),
        LssvmError::EmptyInput { rows: 0, .. }
    ));
    assert_eq!(
        e(p.fit_multiclass(x.view(), &labels[..5])),
        LssvmError::LengthMismatch {
            what: "labels",
            expected: 6,
            found: 5
        }
    );
    assert_eq!(
        e(p.fit_binary(x.view(), array![1.0, -1.0].view())),
        LssvmError::LengthMismatch {
            what: "labels",
            expected: 6,
            found: 2
        }
    );
    assert_eq!(
        e(p.fit_binary(x.view(), array![1.0, -1.0, 0.0, 1.0, 1.0, 1.0].view())),
        LssvmError::InvalidBinaryLabel { index: 2, value: 0.0 }
    );
    assert_eq!(
        e(p.fit_binary(x.view(), Array1::ones(6).view())),
        LssvmError::MissingBinaryClass { missing: -1.0 }
    );
    // Class 1 has no sample among labels 0..=2.
    assert_eq!(
        e(p.fit_multiclass(x.view(), &[0, 2, 2, 0, 0, 2])),
        LssvmError::EmptyClass { class: 1, n_classes: 3 }
    );
    assert_eq!(
        e(p.fit_multiclass(x.view(), &[4; 6])),
        LssvmError::TooFewClasses { found: 1 }
    );
    let no_label_2 = array![[true, false, false], [false, true, false], [true, true, false]];
    assert_eq!(
        e(p.fit_multilabel(x.slice(ndarray::s![..3, ..]), no_label_2.view())),
        LssvmError::EmptyClass { class: 2, n_classes: 3 }
    );

    // Prediction.
    let m = p.fit_multiclass(x.view(), &labels).unwrap();
    assert_eq!(
        e(m.predict(Array2::zeros((2, 3)).view())),
        LssvmError::FeatureMismatch { expected: 2, found: 3 }
    );
    assert!(matches!(
        e(m.predict(array![[f64::INFINITY, 0.0]].view())),
        LssvmError::NonFinite { .. }
    ));
    assert_eq!(m.predict(Array2::zeros((0, 2)).view()).unwrap(), Vec::<usize>::new());

    // Conjugate gradient out of budget.
    let op = KernelOperator::new(Kernel::Rbf { gamma: 0.5 }, x.view()).unwrap();
    let opts = CgOptions {
        tol: 1e-14,
        max_iter: 1,
        matrix_free: true,
    };
    assert!(matches!(
        e(solve_dual_cg(&op, Array2::ones((6, 1)).view(), 1.0, &opts)),
        LssvmError::NotConverged { iterations: 1, .. }
    ));
    // An indefinite "kernel" makes CG break down instead of returning garbage.
    let indefinite = Array2::from_diag(&array![-10.0, 1.0, 1.0]);
    assert!(matches!(
        e(solve_dual_cg(
            &indefinite,
            Array2::ones((3, 1)).view(),
            1.0,
            &CgOptions::default()
        )),
        LssvmError::NotPositiveDefinite { .. }
    ));
}
