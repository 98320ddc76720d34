//! `f32` storage of `G` (`KsvdParams::precision`): results against the `f64` fit within the
//! documented tolerance, residuals against the rounded matrix, half the memory, paths that stay
//! `f64`, validation and model files.
#![allow(clippy::unwrap_used)] // Tests panic on failure by design.
use ksvd::prelude::*;
use ksvd::{KernelMatrix, KsvdModel, KsvdValidParams, LinearOperator};
use ksvd_linalg::random::{gaussian_matrix, rng_from_seed};
use ndarray::{Array2, ArrayView2};

/// Samples with a decaying spectrum of `G` (a smooth kernel on 3-d Gaussian points).
fn samples(n: usize, m: usize, seed: u64) -> (Samples, Samples) {
    let mut rng = rng_from_seed(seed);
    (
        Samples::dense(gaussian_matrix(&mut rng, n, 3)).unwrap(),
        Samples::dense(gaussian_matrix(&mut rng, m, 3)).unwrap(),
    )
}

/// Sines of the largest principal angle between the column spans of `a` and `b` (orthonormal).
fn largest_angle_sin(a: ArrayView2<'_, f64>, b: ArrayView2<'_, f64>) -> f64 {
    let c = a.t().dot(&b);
    let off = &b - &a.dot(&c);
    (0..b.ncols())
        .map(|j| off.column(j).dot(&off.column(j)).sqrt())
        .fold(0.0, f64::max)
}

fn params(precision: Precision, solver: Solver, kernel: Kernel) -> KsvdValidParams {
    Ksvd::params()
        .kernel(kernel)
        .rank(6)
        .solver(solver)
        .precision(precision)
        .check()
        .unwrap()
}

#[test]
fn f32_fits_agree_with_f64_within_the_documented_tolerance() {
    let tol32 = Precision::F32.default_tol();
    for kernel in [Kernel::Sne { gamma: 1.5 }, Kernel::Rbf { gamma: 2.0 }] {
        for (name, solver32, solver64) in [
            ("auto", Solver::Auto { tol: tol32 }, Solver::Auto { tol: 1e-12 }),
            (
                "lanczos",
                Solver::Lanczos(LanczosParams {
                    tol: tol32,
                    ..Default::default()
                }),
                Solver::Exact,
            ),
        ] {
            let (x, z) = samples(700, 500, 7);
            let f64_fit = params(Precision::F64, solver64, kernel.clone())
                .fit_samples(x.clone(), z.clone())
                .unwrap();
            let p32 = params(Precision::F32, solver32, kernel.clone());
            let g = p32.kernel_matrix(x, z).unwrap();
            assert_eq!(g.stored_precision(), Some(Precision::F32), "{kernel} {name}");
            let f32_fit = p32.fit_kernel_matrix(g).unwrap();
            // Certified against the rounded matrix: every residual within the f32 tolerance.
            let res = f32_fit.residuals().unwrap();
            assert!(res.max() <= tol32, "{kernel} {name}: residual {:e}", res.max());
            // The rounded G differs from G by about eps_32 relative entry by entry, so singular
            // values move by about eps_32 · ‖G‖ (Weyl), far below the tolerance.
            let (s32, s64) = (f32_fit.singular_values(), f64_fit.singular_values());
            for i in 0..6 {
                let d = (s32[i] - s64[i]).abs() / s64[0];
                assert!(d <= tol32, "{kernel} {name}: s_{i} differs by {d:e}");
            }
            // Subspaces of the well separated leading pairs agree to about tol / gap.
            let sin = largest_angle_sin(
                f64_fit.u().slice(ndarray::s![.., ..3]),
                f32_fit.u().slice(ndarray::s![.., ..3]),
            );
            assert!(sin <= 1e-3, "{kernel} {name}: sin of the angle {sin:e}");
            // And the f32 result is not the f64 one: the products did run in f32.
            assert!((s32[0] - s64[0]).abs() > 0.0, "{kernel} {name}");
        }
    }
}

#[test]
fn residuals_are_those_of_the_rounded_matrix() {
    let (x, z) = samples(300, 200, 3);
    let p32 = params(Precision::F32, Solver::Auto { tol: 1e-5 }, Kernel::Rbf { gamma: 1.0 });
    let fit = p32.fit_samples(x, z).unwrap();
    // The stored entries, widened: G32 v − s u in f64 arithmetic.
    let g: Array2<f64> = fit.kernel_matrix().to_dense().unwrap();
    assert!(g.iter().all(|v| (*v as f32) as f64 == *v), "entries are f32 values");
    let (u, s, v) = (fit.u(), fit.singular_values(), fit.v());
    for i in 0..6 {
        let r = &g.dot(&v.column(i)) - &(&u.column(i) * s[i]);
        let rel = r.dot(&r).sqrt() / s[0];
        assert!(rel <= 1e-5, "triplet {i}: {rel:e}");
    }
}

#[test]
fn f32_storage_halves_the_memory_of_g() {
    let (x, z) = samples(600, 600, 5);
    // 600 · 600 entries: 2 880 000 bytes in f64, 1 440 000 in f32.
    let budget = MemoryBudget::bytes(2 << 20).unwrap();
    let kernel = Kernel::Rbf { gamma: 1.0 };
    let g64 = KernelMatrix::with_budget_in(x.clone(), z.clone(), kernel.clone(), budget, Precision::F64).unwrap();
    let g32 = KernelMatrix::with_budget_in(x.clone(), z.clone(), kernel.clone(), budget, Precision::F32).unwrap();
    assert_eq!(g64.stored_precision(), None, "f64 does not fit and stays matrix-free");
    assert_eq!(g32.stored_precision(), Some(Precision::F32), "f32 fits");
    // The same operator to f32 rounding.
    let v = gaussian_matrix(&mut rng_from_seed(1), 600, 4);
    let (a, b) = (g64.apply(v.view()).unwrap(), g32.apply(v.view()).unwrap());
    let scale = a.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    let err = (&a - &b).iter().fold(0.0f64, |m, x| m.max(x.abs()));
    assert!(err <= 1e-5 * scale && err > 0.0, "{err:e} of {scale:e}");
}

#[test]
fn graph_fits_stay_f64() {
    // Sparse samples with a rank-one-plus-sparse G: the precision does not apply.
    // 400 arcs of a fixed pseudo-random pattern (a linear congruential sequence).
    let mut state = 9u64;
    let mut next = || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 33) as usize % 120
    };
    let trip: Vec<(usize, usize, f64)> = (0..400).map(|_| (next(), next(), 1.0)).collect();
    let a = CsrMatrix::from_triplets(120, 120, trip).unwrap();
    let (x, z) = ksvd::graph_samples(&a, GraphInput::RowNormalizedSelfLoops).unwrap();
    let nystrom = Solver::Nystrom {
        landmarks: 60,
        cols: None,
        sampling: Sampling::Uniform,
        inner: InnerSolver::Exact,
    };
    for solver in [Solver::Auto { tol: 1e-5 }, nystrom] {
        let fit = |p: Precision| {
            Ksvd::params()
                .kernel(Kernel::Sne { gamma: 0.8 })
                .rank(4)
                .solver(solver.clone())
                .precision(p)
                .check()
                .unwrap()
                .fit_samples(x.clone(), z.clone())
                .unwrap()
        };
        let (f64_fit, f32_fit) = (fit(Precision::F64), fit(Precision::F32));
        assert_eq!(f32_fit.kernel_matrix().stored_precision(), None);
        assert_eq!(f32_fit.kernel_matrix().precision(), Precision::F64);
        assert_eq!(
            f32_fit.params_used().precision(),
            Precision::F64,
            "the model records what ran"
        );
        assert_eq!(f64_fit.singular_values(), f32_fit.singular_values(), "{solver:?}");
        assert_eq!(f64_fit.u(), f32_fit.u(), "{solver:?}");
    }
}

#[test]
fn kpca_in_f32_matches_f64_and_centres_the_rounded_matrix() {
    let mut rng = rng_from_seed(4);
    let x = gaussian_matrix(&mut rng, 400, 3);
    let fit = |p: Precision, tol: f64| {
        Kpca::params()
            .kernel(Kernel::Rbf { gamma: 1.5 })
            .rank(4)
            .solver(Solver::Auto { tol })
            .precision(p)
            .fit(&DatasetBase::from(x.clone()))
            .unwrap()
    };
    let (k64, k32) = (fit(Precision::F64, 1e-12), fit(Precision::F32, 1e-5));
    assert_eq!(k32.kernel_matrix().stored_precision(), Some(Precision::F32));
    let (e64, e32) = (k64.eigenvalues(), k32.eigenvalues());
    for i in 0..4 {
        assert!((e64[i] - e32[i]).abs() <= 1e-5 * e64[0], "eigenvalue {i}");
    }
    // Centred in place: every row of the stored K̃ sums to zero up to f32 rounding.
    let k = k32.kernel_matrix().to_dense().unwrap();
    let worst = k.rows().into_iter().map(|r| r.sum().abs()).fold(0.0, f64::max);
    assert!(worst <= 400.0 * 1e-7, "{worst:e}");
}

#[test]
fn f32_needs_a_tolerance_it_can_certify() {
    let err = Ksvd::params()
        .precision(Precision::F32)
        .check()
        .unwrap_err()
        .to_string();
    assert!(err.contains("tol") && err.contains("f32"), "{err}");
    let err = Kpca::params()
        .precision(Precision::F32)
        .solver(Solver::Lanczos(LanczosParams {
            tol: 1e-7,
            ..Default::default()
        }))
        .check()
        .unwrap_err()
        .to_string();
    assert!(err.contains("1e-6"), "{err}");
    // Solvers without a tolerance take any precision.
    assert!(Ksvd::params()
        .precision(Precision::F32)
        .solver(Solver::Exact)
        .check()
        .is_ok());
}

#[test]
fn models_record_the_precision_and_older_files_read_as_f64() {
    let (x, z) = samples(120, 90, 2);
    let fit = params(Precision::F32, Solver::Auto { tol: 1e-5 }, Kernel::Rbf { gamma: 1.0 })
        .fit_samples(x, z)
        .unwrap();
    let model = fit.to_model().unwrap();
    let back = KsvdModel::from_bytes(&model.to_bytes().unwrap()).unwrap();
    assert_eq!(back.params().precision(), Precision::F32);
    // A model file written before the field existed: its payload has no `precision`.
    let f64_model = params(Precision::F64, Solver::Exact, Kernel::Rbf { gamma: 1.0 })
        .fit_samples(samples(50, 40, 1).0, samples(50, 40, 1).1)
        .unwrap()
        .to_model()
        .unwrap();
    let text = String::from_utf8(f64_model.to_bytes().unwrap()).unwrap();
    assert!(text.contains("\"precision\":\"f64\""), "the field is written");
    let mut payload: serde_json::Value = ksvd_datasets::envelope::open(
        &f64_model.to_bytes().unwrap(),
        ksvd::MODEL_FORMAT,
        ksvd::MODEL_FORMAT_VERSION,
    )
    .unwrap();
    let mut old = payload.clone();
    old["params"].as_object_mut().unwrap().remove("precision").unwrap();
    let bytes =
        ksvd_datasets::envelope::seal(ksvd::MODEL_FORMAT, ksvd::MODEL_FORMAT_VERSION, "ksvd 0.0", &old).unwrap();
    let loaded = KsvdModel::from_bytes(&bytes).unwrap();
    assert_eq!(loaded.params().precision(), Precision::F64);
    assert_eq!(loaded.singular_values(), f64_model.singular_values());
    // An unknown precision is a typed error naming it.
    payload["params"]["precision"] = "f16".into();
    let bytes =
        ksvd_datasets::envelope::seal(ksvd::MODEL_FORMAT, ksvd::MODEL_FORMAT_VERSION, "ksvd 0.0", &payload).unwrap();
    let err = KsvdModel::from_bytes(&bytes).unwrap_err().to_string();
    assert!(err.contains("f16"), "{err}");
}

/// Largest entry of `|a - b|` against the largest of `|a|`.
fn rel_diff(a: ArrayView2<'_, f64>, b: ArrayView2<'_, f64>) -> f64 {
    let scale = a.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    (&a - &b).iter().fold(0.0f64, |m, v| m.max(v.abs())) / scale
}

#[test]
fn nystrom_fits_and_projections_run_in_f32() {
    // The same landmarks (same seed); the sampled block's entries and every cross block
    // G[:, J], G[I, :] and projection are evaluated in f32, the inner SVD in f64.
    let (x, z) = samples(900, 700, 11);
    let (new_x, new_z) = samples(40, 30, 12);
    for kernel in [Kernel::Sne { gamma: 1.5 }, Kernel::Rbf { gamma: 2.0 }] {
        let fit = |p: Precision| {
            Ksvd::params()
                .kernel(kernel)
                .rank(5)
                .solver(Solver::Nystrom {
                    landmarks: 150,
                    cols: None,
                    sampling: Sampling::Uniform,
                    inner: InnerSolver::Exact,
                })
                .precision(p)
                .seed(3)
                .check()
                .unwrap()
                .fit_samples(x.clone(), z.clone())
                .unwrap()
        };
        let (f64_fit, f32_fit) = (fit(Precision::F64), fit(Precision::F32));
        let g = f32_fit.kernel_matrix();
        assert_eq!(
            (g.precision(), g.stored_precision()),
            (Precision::F32, None),
            "{kernel}"
        );
        // Singular values come from the sampled block's f32 entries (about eps_32 relative).
        let (s32, s64) = (f32_fit.singular_values(), f64_fit.singular_values());
        for i in 0..5 {
            assert!((s32[i] - s64[i]).abs() <= 1e-6 * s64[0], "{kernel}: s_{i}");
        }
        // The extended vectors: products in f32, a few eps_32 times sqrt(m) relative.
        for (a, b) in [(f64_fit.u(), f32_fit.u()), (f64_fit.v(), f32_fit.v())] {
            let d = rel_diff(a.view(), b.view());
            assert!(d <= 1e-5 && d > 0.0, "{kernel}: vectors differ by {d:e}");
        }
        // Projections of new samples, in memory and from a model file.
        let (t64, t32) = (f64_fit.transform(&new_x).unwrap(), f32_fit.transform(&new_x).unwrap());
        let d = rel_diff(t64.view(), t32.view());
        assert!(d <= 1e-5 && d > 0.0, "{kernel}: transform differs by {d:e}");
        let (c64, c32) = (
            f64_fit.transform_cols(&new_z).unwrap(),
            f32_fit.transform_cols(&new_z).unwrap(),
        );
        let d = rel_diff(c64.view(), c32.view());
        assert!(d <= 1e-5 && d > 0.0, "{kernel}: transform_cols differs by {d:e}");
        let model = KsvdModel::from_bytes(&f32_fit.to_model().unwrap().to_bytes().unwrap()).unwrap();
        assert_eq!(
            model.transform(&new_x).unwrap(),
            t32,
            "{kernel}: the model file projects in f32"
        );
        assert_eq!(model.transform_cols(&new_z).unwrap(), c32, "{kernel}");
    }
}

#[test]
fn matrix_free_f32_fits_are_certified_against_their_products() {
    // A budget too small to store G in either precision: every product evaluates its blocks,
    // in f32 for the f32 fit.
    let (x, z) = samples(800, 600, 13);
    let tol32 = Precision::F32.default_tol();
    for kernel in [Kernel::Sne { gamma: 1.5 }, Kernel::Rbf { gamma: 2.0 }] {
        let fit = |p: Precision, tol: f64| {
            Ksvd::params()
                .kernel(kernel)
                .rank(6)
                .solver(Solver::Auto { tol })
                .precision(p)
                .memory_budget(MemoryBudget::bytes(1 << 20).unwrap())
                .check()
                .unwrap()
                .fit_samples(x.clone(), z.clone())
                .unwrap()
        };
        let (f64_fit, f32_fit) = (fit(Precision::F64, 1e-12), fit(Precision::F32, tol32));
        let g = f32_fit.kernel_matrix();
        assert_eq!(
            (g.precision(), g.stored_precision()),
            (Precision::F32, None),
            "{kernel}"
        );
        let res = f32_fit.residuals().unwrap();
        assert!(res.max() <= tol32, "{kernel}: residual {:e}", res.max());
        let (s32, s64) = (f32_fit.singular_values(), f64_fit.singular_values());
        for i in 0..6 {
            let d = (s32[i] - s64[i]).abs() / s64[0];
            assert!(d <= tol32, "{kernel}: s_{i} differs by {d:e}");
        }
        assert!((s32[0] - s64[0]).abs() > 0.0, "{kernel}: the products ran in f32");
        let sin = largest_angle_sin(
            f64_fit.u().slice(ndarray::s![.., ..3]),
            f32_fit.u().slice(ndarray::s![.., ..3]),
        );
        assert!(sin <= 1e-3, "{kernel}: sin of the angle {sin:e}");
    }
}
