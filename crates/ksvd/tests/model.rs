//! The KSVD model: all solvers give the same CCE solution; projections; typed errors.
#![allow(clippy::unwrap_used)] // Tests panic on failure by design.
use ksvd::{InnerSolver, Ksvd, KsvdError, LanczosParams, RsvdParams, Sampling, Scaling, Solver};
use ksvd_kernels::{Compat, Kernel, Samples};
use ksvd_linalg::random::{gaussian_matrix, rng_from_seed};
use linfa::prelude::*;
use ndarray::Array2;

fn data() -> (Samples, Samples) {
    let mut rng = rng_from_seed(1);
    (
        Samples::dense(gaussian_matrix(&mut rng, 50, 3)).unwrap(),
        Samples::dense(gaussian_matrix(&mut rng, 35, 3)).unwrap(),
    )
}

/// |cos| between matching columns, minimum over columns.
fn min_abs_cos(a: &Array2<f64>, b: &Array2<f64>) -> f64 {
    (0..a.ncols())
        .map(|i| a.column(i).dot(&b.column(i)).abs())
        .fold(1.0, f64::min)
}

#[test]
fn solvers_agree_on_the_cce_solution() {
    let (x, z) = data();
    let r = 4;
    let kernel = Kernel::Sne { gamma: 1.2 };
    let fit = |solver: Solver| {
        Ksvd::params()
            .kernel(kernel)
            .rank(r)
            .solver(solver)
            .seed(3)
            .check()
            .unwrap()
            .fit_samples(x.clone(), z.clone())
            .unwrap()
    };
    let exact = fit(Solver::Exact);
    let lz = fit(Solver::Lanczos(LanczosParams {
        tol: 1e-13,
        ..Default::default()
    }));
    let rs = fit(Solver::Rsvd(RsvdParams {
        oversampling: 35,
        power_iters: 1,
        seed: 0,
    }));
    let ny = fit(Solver::Nystrom {
        landmarks: 50,
        cols: Some(35),
        sampling: Sampling::Uniform,
        inner: InnerSolver::Dense,
    });
    for other in [&lz, &rs, &ny] {
        for i in 0..r {
            assert!(
                (other.singular_values()[i] - exact.singular_values()[i]).abs() < 1e-10 * exact.singular_values()[0]
            );
        }
        assert!(1.0 - min_abs_cos(&exact.u().to_owned(), &other.u().to_owned()) < 1e-9);
        assert!(1.0 - min_abs_cos(&exact.v().to_owned(), &other.v().to_owned()) < 1e-9);
    }
    // CCE in the dual (Proposition 3.3): G^T G B_psi = G^T B_phi Λ and G G^T B_phi = G B_psi Λ.
    let g = ksvd_linalg::materialize(exact.kernel_matrix()).unwrap();
    let lam = exact.singular_values().to_owned();
    let lhs = g.t().dot(&g).dot(&exact.v());
    let rhs = g.t().dot(&exact.u()) * &lam;
    assert!((&lhs - &rhs).iter().all(|d| d.abs() < 1e-12));
    let lhs = g.dot(&g.t()).dot(&exact.u());
    let rhs = g.dot(&exact.v()) * &lam;
    assert!((&lhs - &rhs).iter().all(|d| d.abs() < 1e-12));
}

/// At the training samples the three scalings give `U S^{1-p}` and `V S^{1-p}`; `Full` is the
/// projection scores `k(x, Z) V` of Proposition 2.2, and the named methods are its shorthands.
#[test]
fn projections_of_training_points_are_scaled_singular_vectors() {
    let (x, z) = data();
    for center in [false, true] {
        let m = Ksvd::params()
            .kernel(Kernel::Rbf { gamma: 1.5 })
            .rank(3)
            .center(center)
            .solver(Solver::Exact)
            .check()
            .unwrap()
            .fit_samples(x.clone(), z.clone())
            .unwrap();
        let s = m.singular_values().to_owned();
        let eps = f64::EPSILON * (8.0 * 50.0f64).sqrt();
        for (scaling, w) in [
            (Scaling::Full, s.clone()),
            (Scaling::Sqrt, s.mapv(f64::sqrt)),
            (Scaling::Unit, s.mapv(|_| 1.0)),
        ] {
            let sx = m.project_rows(&x, scaling).unwrap();
            let sz = m.project_cols(&z, scaling).unwrap();
            // The error of row i is about eps s_1 w_i / s_i, largest at the last triplet.
            let tol = 1e2 * eps * s[0] * w[2] / s[2];
            assert!(
                (&sx - &(&m.u() * &w)).iter().all(|d| d.abs() < tol),
                "center={center} {scaling:?}"
            );
            assert!(
                (&sz - &(&m.v() * &w)).iter().all(|d| d.abs() < tol),
                "center={center} {scaling:?}"
            );
        }
        assert_eq!(m.transform(&x).unwrap(), m.project_rows(&x, Scaling::Sqrt).unwrap());
        assert_eq!(
            m.transform_cols(&z).unwrap(),
            m.project_cols(&z, Scaling::Sqrt).unwrap()
        );
        assert_eq!(m.extend_rows(&x).unwrap(), m.project_rows(&x, Scaling::Unit).unwrap());
        assert_eq!(m.extend_cols(&z).unwrap(), m.project_cols(&z, Scaling::Unit).unwrap());
        // Full is the product with V itself: k(x, Z) V.
        let g = ksvd_linalg::materialize(m.kernel_matrix()).unwrap();
        let full = m.project_rows(&x, Scaling::Full).unwrap();
        assert!((&full - &g.dot(&m.v())).iter().all(|d| d.abs() < 1e2 * eps * s[0]));
    }
}

#[test]
fn linfa_fit_on_data_matrix_with_each_compatibility() {
    let a = gaussian_matrix(&mut rng_from_seed(5), 30, 8);
    for c in [Compat::PseudoInverse, Compat::Pca, Compat::Random { seed: 0 }] {
        let m = Ksvd::params()
            .kernel(Kernel::Rbf { gamma: 3.0 })
            .rank(3)
            .compat(Some(c))
            .solver(Solver::Exact)
            .fit(&DatasetBase::from(a.clone()))
            .unwrap();
        assert_eq!((m.u().dim(), m.v().dim()), ((30, 3), (8, 3)));
        let t = m.project_data_rows(a.view(), Scaling::Full).unwrap();
        let s = m.singular_values().to_owned();
        assert!((&t - &(&m.u() * &s)).iter().all(|d| d.abs() < 1e-10), "{c:?}");
        // linfa's transformer maps the records the same way: U S^½.
        let t = Transformer::transform(&m, &a).unwrap();
        assert!(
            (&t - &(&m.u() * &s.mapv(f64::sqrt))).iter().all(|d| d.abs() < 1e-10),
            "{c:?}"
        );
    }
    // Without a compatibility (the default), Z = X: the rows of A on both sides, and with an
    // RBF kernel G is symmetric, so U = V up to the solver.
    let m = Ksvd::params()
        .kernel(Kernel::Rbf { gamma: 3.0 })
        .rank(3)
        .solver(Solver::Exact)
        .fit(&DatasetBase::from(a.clone()))
        .unwrap();
    assert_eq!((m.u().dim(), m.v().dim()), ((30, 3), (30, 3)));
    assert!((&m.u() - &m.v()).iter().all(|d| d.abs() < 1e-10));
}

/// The bandwidth rule: on by default (`γ = sqrt(M γ_x)` over X, reported by the fit), off once
/// a kernel with its own bandwidth is given, back on when asked after it.
#[test]
fn the_bandwidth_rule_chooses_gamma_unless_a_kernel_is_given() {
    let (x, z) = data();
    let rule = ksvd::bandwidth_rule(&x, 1.0);
    let fit = |p: ksvd::KsvdParams| {
        p.rank(2)
            .solver(Solver::Exact)
            .check()
            .unwrap()
            .fit_samples(x.clone(), z.clone())
            .unwrap()
    };
    let default = fit(Ksvd::params());
    assert_eq!(default.bandwidth(), Some(rule));
    assert_eq!(default.params_used().kernel(), &Kernel::Rbf { gamma: rule });
    let given = fit(Ksvd::params().kernel(Kernel::Sne { gamma: 0.7 }));
    assert_eq!(given.bandwidth(), Some(0.7));
    let again = fit(Ksvd::params()
        .kernel(Kernel::Sne { gamma: 0.7 })
        .bandwidth_rule(Some(2.0)));
    assert_eq!(again.bandwidth(), Some(2.0 * rule));
    // The same fit as the explicit γ, bit for bit.
    let explicit = fit(Ksvd::params().kernel(Kernel::Sne { gamma: 2.0 * rule }));
    assert_eq!(again.singular_values(), explicit.singular_values());
    // Kernels without a bandwidth ignore it; a bad factor and constant data are typed errors.
    assert_eq!(
        fit(Ksvd::params().kernel(Kernel::Linear).bandwidth_rule(Some(1.0))).bandwidth(),
        None
    );
    assert!(matches!(
        Ksvd::params().bandwidth_rule(Some(-1.0)).check(),
        Err(KsvdError::InvalidParameter {
            name: "bandwidth_rule",
            ..
        })
    ));
    let flat = Samples::dense(Array2::ones((6, 2))).unwrap();
    assert!(matches!(
        Ksvd::params().check().unwrap().fit_samples(flat.clone(), flat),
        Err(KsvdError::InvalidParameter {
            name: "bandwidth_rule",
            ..
        })
    ));
}

#[test]
fn bad_parameters_are_typed_errors() {
    let (x, z) = data();
    assert!(matches!(
        Ksvd::params().rank(0).check(),
        Err(KsvdError::InvalidParameter { name: "rank", .. })
    ));
    assert!(matches!(
        Ksvd::params().kernel(Kernel::Rbf { gamma: -1.0 }).check(),
        Err(KsvdError::Kernel(_))
    ));
    let p = Ksvd::params().rank(5).solver(Solver::Nystrom {
        landmarks: 3,
        cols: None,
        sampling: Sampling::Uniform,
        inner: InnerSolver::Dense,
    });
    assert!(matches!(
        p.check(),
        Err(KsvdError::InvalidParameter { name: "landmarks", .. })
    ));
    let p = Ksvd::params().rank(40).check().unwrap();
    assert!(matches!(
        p.fit_samples(x.clone(), z.clone()),
        Err(KsvdError::Solver(ksvd_solvers::SolverError::InvalidRank {
            rank: 40,
            ..
        }))
    ));
    let wrong = Samples::dense(Array2::ones((5, 2))).unwrap();
    assert!(matches!(
        Ksvd::params().rank(2).check().unwrap().fit_samples(x, wrong),
        Err(KsvdError::Kernel(_))
    ));
    let nan = Array2::from_elem((4, 4), f64::NAN);
    assert!(Ksvd::params().rank(2).fit(&DatasetBase::from(nan)).is_err());
}

/// `Solver::solve_operator` is the model's own dispatch: on the model's kernel matrix it gives
/// the model's triplets bit for bit; on a plain matrix every solver finds the dense SVD; the
/// Nyström solver, which needs kernel blocks, and invalid parameters are typed errors.
#[test]
fn solve_operator_is_the_models_solver_on_any_operator() {
    let (x, z) = data();
    let r = 3;
    let lanczos = Solver::Lanczos(LanczosParams {
        tol: 1e-12,
        ..Default::default()
    });
    let krylov = Solver::BlockKrylov(ksvd::BlockKrylovParams {
        tol: 1e-12,
        ..Default::default()
    });
    let rsvd = Solver::Rsvd(RsvdParams {
        oversampling: 40,
        power_iters: 2,
        seed: 0,
    });
    for solver in [Solver::Exact, Solver::Auto { tol: 1e-12 }, lanczos, krylov, rsvd] {
        let params = Ksvd::params()
            .kernel(Kernel::Sne { gamma: 1.2 })
            .rank(r)
            .solver(solver.clone())
            .center(true)
            .seed(5)
            .check()
            .unwrap();
        let model = params.fit_samples(x.clone(), z.clone()).unwrap();
        let direct = solver
            .solve_operator(model.kernel_matrix(), r, 5, params.memory_budget())
            .unwrap();
        assert_eq!(direct.s, model.svd().s, "{solver:?}");
        assert_eq!(direct.u, model.svd().u, "{solver:?}");
        assert_eq!(direct.v, model.svd().v, "{solver:?}");
        // On a plain matrix: the dense SVD's singular values.
        let mut rng = rng_from_seed(9);
        let g = gaussian_matrix(&mut rng, 30, 20);
        let budget = ksvd::MemoryBudget::bytes(1 << 20).unwrap();
        let want = Solver::Exact.solve_operator(&g, r, 0, budget).unwrap();
        let got = solver.solve_operator(&g, r, 0, budget).unwrap();
        let eps = f64::EPSILON * (8.0 * 30.0f64).sqrt();
        for i in 0..r {
            assert!(
                (got.s[i] - want.s[i]).abs() <= 1e4 * eps * want.s[0],
                "{solver:?} s[{i}]"
            );
        }
    }
    let g = Array2::<f64>::eye(4);
    let budget = ksvd::MemoryBudget::bytes(1 << 20).unwrap();
    let ny = Solver::Nystrom {
        landmarks: 4,
        cols: None,
        sampling: Sampling::Uniform,
        inner: InnerSolver::Dense,
    };
    assert!(matches!(
        ny.solve_operator(&g, 2, 0, budget),
        Err(KsvdError::InvalidParameter { name: "solver", .. })
    ));
    assert!(matches!(
        Solver::Exact.solve_operator(&g, 5, 0, budget),
        Err(KsvdError::Solver(ksvd_solvers::SolverError::InvalidRank { .. }))
    ));
    // The exact solver refuses beyond the budget rather than allocate.
    let big = Array2::<f64>::zeros((400, 400));
    assert!(matches!(
        Solver::Exact.solve_operator(&big, 2, 0, budget),
        Err(KsvdError::InvalidParameter { name: "solver", .. })
    ));
    for bad in [
        Solver::Auto { tol: 0.0 },
        Solver::Auto { tol: f64::NAN },
        Solver::Lanczos(LanczosParams {
            max_restarts: 0,
            ..Default::default()
        }),
    ] {
        assert!(bad.validate().is_err(), "{bad:?}");
    }
    assert!(Solver::Auto { tol: 1e-8 }.validate().is_ok());
}

/// Block Krylov's bases grow by a block of `r + p` vectors per step on each side: the memory
/// budget caps the depth (the same run as one asked for that depth, bit for bit), and a budget
/// below two blocks is a typed error.
#[test]
fn block_krylov_depth_is_capped_by_the_memory_budget() {
    let mut rng = rng_from_seed(4);
    let g = gaussian_matrix(&mut rng, 400, 300);
    let (r, p) = (5, 5);
    let krylov = |max_depth: usize| {
        Solver::BlockKrylov(ksvd::BlockKrylovParams {
            tol: 1e-14,
            oversampling: p,
            max_depth,
            seed: 0,
        })
    };
    // 4 blocks of 10 vectors of length 700: 28000 numbers; the budget is 1 MiB = 131072.
    let budget = ksvd::MemoryBudget::bytes(1 << 20).unwrap();
    let blocks = (131072 / (10 * 700)) as usize;
    let capped = krylov(100).solve_operator(&g, r, 3, budget).unwrap();
    let explicit = krylov(blocks - 1).solve_operator(&g, r, 3, budget).unwrap();
    assert_eq!(capped.s, explicit.s);
    assert_eq!(capped.u, explicit.u);
    // A depth the budget allows is left alone.
    let shallow = krylov(2).solve_operator(&g, r, 3, budget).unwrap();
    assert_ne!(shallow.s, capped.s);
    // Too small for two blocks: 1 MiB against blocks of 100 vectors (70 000 numbers each).
    let wide = Solver::BlockKrylov(ksvd::BlockKrylovParams {
        oversampling: 100 - r,
        ..Default::default()
    });
    assert!(matches!(
        wide.solve_operator(&g, r, 0, budget),
        Err(KsvdError::InvalidParameter { name: "solver", .. })
    ));
}
