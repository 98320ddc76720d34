//! Exact special cases and consistency of the Nyström methods.
use ksvd_kernels::graph::{graph_samples, GraphInput};
use ksvd_kernels::{Kernel, KernelMatrix, Samples};
use ksvd_linalg::random::{gaussian_matrix, rng_from_seed};
use ksvd_linalg::{CsrMatrix, LinearOperator};
use ksvd_nystrom::*;
use ksvd_solvers::{dense_svd, dense_svd_operator, eta_of, subspace_error, Accuracy, EtaWeights, LanczosParams, Truth};
use ndarray::Array2;

fn tol(n: usize) -> f64 {
    // Sign-invariant cosines of exact vs Nyström vectors; s_1/s_r conditioning enters via S⁻¹.
    1e4 * f64::EPSILON * (n as f64).sqrt()
}

fn rbf(n: usize, m: usize, d: usize, seed: u64) -> KernelMatrix {
    let mut rng = rng_from_seed(seed);
    let x = Samples::dense(gaussian_matrix(&mut rng, n, d)).unwrap();
    let z = Samples::dense(gaussian_matrix(&mut rng, m, d)).unwrap();
    KernelMatrix::new(x, z, Kernel::Rbf { gamma: 2.5 }).unwrap()
}

#[test]
fn all_rows_and_columns_give_the_exact_svd() {
    for (n, m) in [(60, 40), (40, 60), (50, 50)] {
        for kernel in [
            Kernel::Rbf { gamma: 2.5 },
            Kernel::Sne { gamma: 1.5 },
            Kernel::Polynomial { degree: 2, offset: 1.0 },
        ] {
            let mut rng = rng_from_seed(3);
            let x = Samples::dense(gaussian_matrix(&mut rng, n, 4)).unwrap();
            let z = Samples::dense(gaussian_matrix(&mut rng, m, 4)).unwrap();
            let g = KernelMatrix::new(x, z, kernel).unwrap();
            let r = 5;
            let exact = dense_svd_operator(&g, r).unwrap();
            let p = NystromParams {
                rows: n,
                cols: m,
                inner: InnerSolver::Dense,
                ..NystromParams::new(r, n)
            };
            let ny = asymmetric_nystrom(&g, &p).unwrap();
            for i in 0..r {
                assert!(
                    (ny.svd.s[i] - exact.s[i]).abs() <= tol(n.max(m)) * exact.s[0],
                    "{kernel} s_{i}"
                );
            }
            let e = eta_of(&exact, &ny.svd, EtaWeights::Uniform).unwrap();
            assert!(e <= tol(n.max(m)), "{kernel} {n}x{m}: eta {e:e}");
            // Same signs as the dense reference (both use the largest-entry-positive rule).
            assert!(
                (&ny.svd.u - &exact.u).iter().all(|d| d.abs() < 1e3 * tol(n)),
                "{kernel} signs"
            );
        }
    }
}

#[test]
fn exact_on_sparse_graph_kernel() {
    let mut rng = rng_from_seed(5);
    use rand::Rng;
    let trip: Vec<(usize, usize, f64)> = (0..300)
        .map(|_| (rng.gen_range(0..80), rng.gen_range(0..80), 1.0))
        .collect();
    let a = CsrMatrix::from_triplets(80, 80, trip).unwrap();
    let (x, z) = graph_samples(&a, GraphInput::RowNormalizedSelfLoops).unwrap();
    let g = KernelMatrix::new(x, z, Kernel::Sne { gamma: 0.8 }).unwrap();
    assert!(g.is_rank_one_plus_sparse());
    let exact = dense_svd_operator(&g, 6).unwrap();
    let p = NystromParams {
        inner: InnerSolver::Dense,
        ..NystromParams::new(6, 80)
    };
    let ny = asymmetric_nystrom(&g, &p).unwrap();
    assert!(eta_of(&exact, &ny.svd, EtaWeights::Uniform).unwrap() < tol(80));
}

#[test]
fn symmetric_g_with_shared_samples_reduces_to_symmetric_nystrom() {
    let mut rng = rng_from_seed(9);
    let x = gaussian_matrix(&mut rng, 120, 3);
    let g = KernelMatrix::new(
        Samples::dense(x.clone()).unwrap(),
        Samples::dense(x).unwrap(),
        Kernel::Rbf { gamma: 2.0 },
    )
    .unwrap();
    let r = 4;
    let p = NystromParams {
        inner: InnerSolver::Dense,
        shared_samples: true,
        ..NystromParams::new(r, 40).seed(11)
    };
    let asym = asymmetric_nystrom(&g, &p).unwrap();
    assert_eq!(asym.rows, asym.cols);
    let sym = symmetric_nystrom(&g, Gram::Itself, r, 40, 11).unwrap();
    assert_eq!(sym.landmarks, asym.rows);
    for i in 0..r {
        assert!(
            (asym.svd.s[i] - sym.values[i]).abs() <= 1e-10 * sym.values[0],
            "value {i}"
        );
        let c = asym.svd.u.column(i).dot(&sym.vectors.column(i)).abs();
        assert!((1.0 - c) < 1e-10, "left vector {i}: {c}");
        let c = asym.svd.v.column(i).dot(&sym.vectors.column(i)).abs();
        assert!((1.0 - c) < 1e-10, "right vector {i}: {c}");
    }
}

#[test]
fn symmetric_nystrom_with_all_landmarks_is_exact() {
    let g = rbf(50, 30, 3, 4);
    let exact = dense_svd_operator(&g, 3).unwrap();
    let s = symmetric_nystrom_svd(&g, 3, 50, 30, 1).unwrap();
    assert!(subspace_error(&exact, s.u.view(), s.v.view()).unwrap() < 1e-8);
    for i in 0..3 {
        assert!((s.s[i] - exact.s[i]).abs() <= 1e-10 * exact.s[0]);
    }
}

#[test]
fn out_of_sample_extension_reproduces_training_vectors() {
    let g = rbf(70, 50, 3, 6);
    let ny = asymmetric_nystrom(&g, &NystromParams::new(4, 30).seed(2)).unwrap();
    let u = ny.extend_rows(&g, g.x()).unwrap();
    let v = ny.extend_cols(&g, g.z()).unwrap();
    assert!((&u - &ny.svd.u).iter().all(|d| d.abs() < 1e-12));
    assert!((&v - &ny.svd.v).iter().all(|d| d.abs() < 1e-12));
    // And on SNE with centring.
    let mut rng = rng_from_seed(8);
    let x = Samples::dense(gaussian_matrix(&mut rng, 40, 3)).unwrap();
    let z = Samples::dense(gaussian_matrix(&mut rng, 35, 3)).unwrap();
    let g = KernelMatrix::new(x, z, Kernel::Sne { gamma: 1.0 })
        .unwrap()
        .centered()
        .unwrap();
    let ny = asymmetric_nystrom(&g, &NystromParams::new(3, 20).seed(5)).unwrap();
    let u = ny.extend_rows(&g, g.x()).unwrap();
    let v = ny.extend_cols(&g, g.z()).unwrap();
    assert!((&u - &ny.svd.u).iter().all(|d| d.abs() < 1e-11));
    assert!((&v - &ny.svd.v).iter().all(|d| d.abs() < 1e-11));
}

#[test]
fn accuracy_improves_with_landmarks_and_weighted_sampling_works() {
    let g = rbf(400, 300, 1, 10); // 1-D inputs: geometric spectral decay, well-separated values
    let exact = dense_svd_operator(&g, 5).unwrap();
    let coarse = asymmetric_nystrom(&g, &NystromParams::new(5, 20).seed(1)).unwrap();
    let fine = asymmetric_nystrom(&g, &NystromParams::new(5, 250).seed(1)).unwrap();
    let ec = subspace_error(&exact, coarse.svd.u.view(), coarse.svd.v.view()).unwrap();
    let ef = subspace_error(&exact, fine.svd.u.view(), fine.svd.v.view()).unwrap();
    assert!(ef < ec, "{ef} !< {ec}");
    let w = asymmetric_nystrom(&g, &NystromParams::new(5, 150).seed(1).sampling(Sampling::SquaredNorm)).unwrap();
    let ew = subspace_error(&exact, w.svd.u.view(), w.svd.v.view()).unwrap();
    assert!(ew < 0.1, "weighted sampling subspace error {ew}");
}

#[test]
fn bad_parameters_are_typed_errors() {
    let g = rbf(30, 20, 2, 1);
    assert!(matches!(
        asymmetric_nystrom(&g, &NystromParams::new(5, 3)),
        Err(NystromError::InvalidParameter { name: "rows", .. })
    ));
    let p = NystromParams {
        cols: 21,
        ..NystromParams::new(2, 10)
    };
    assert!(matches!(
        asymmetric_nystrom(&g, &p),
        Err(NystromError::InvalidParameter { name: "cols", .. })
    ));
    assert!(asymmetric_nystrom(&g, &NystromParams::new(0, 10)).is_err());
    let zero = Array2::<f64>::zeros((10, 10));
    assert!(matches!(
        asymmetric_nystrom(&zero, &NystromParams::new(2, 5)),
        Err(NystromError::RankDeficientSample { .. })
    ));
    assert!(symmetric_nystrom(&rbf(10, 12, 2, 1), Gram::Itself, 2, 5, 0).is_err());
    let bad = GrowthSchedule {
        start: 5,
        factor: 1.0,
        min_step: 1,
        max: 10,
    };
    assert!(bad.sizes().is_err());
}

/// A synthetic accuracy whose `η` is `eta` (the other measures NaN).
fn eta_only(eta: f64) -> Accuracy {
    Accuracy { eta, ..Accuracy::nan() }
}

#[test]
fn adaptive_driver_finds_first_size_meeting_tolerance() {
    let sched = GrowthSchedule {
        start: 10,
        factor: 1.5,
        min_step: 5,
        max: 60,
    };
    let sizes = sched.sizes().unwrap();
    assert_eq!(sizes, vec![10, 15, 23, 35, 53, 60]);
    let inverse =
        |eps: f64, budget: f64| grow_until(&sizes, eps, budget, |m| Ok(m), |&m| Ok(eta_only(1.0 / m as f64))).unwrap();
    let out = inverse(0.1, f64::INFINITY);
    assert_eq!(
        (out.stop, out.result, out.attempts.len()),
        (GrowthStop::Reached, Some(10), 1)
    );
    let out = inverse(0.03, f64::INFINITY);
    assert_eq!(
        (out.stop, out.result, out.attempts.len()),
        (GrowthStop::Reached, Some(35), 4)
    );
    // Not reached: an outcome that says how far the search got.
    let out = inverse(1e-3, f64::INFINITY);
    assert_eq!((out.stop, out.result, out.largest), (GrowthStop::GridEnd, None, 60));
    assert_eq!(out.best().map(|a| a.size), Some(60));
    assert_eq!(out.first_reaching(0.05).map(|a| a.size), Some(23));
    // A spent budget stops the search before the next size.
    let out = inverse(1e-3, 0.0);
    assert_eq!((out.stop, out.attempts.len()), (GrowthStop::Budget, 0));
    // A rank-deficient sample is recorded without an accuracy; the search goes on.
    let deficient = |m: usize| -> Result<usize> {
        if m < 20 {
            Err(NystromError::RankDeficientSample {
                rows: m,
                cols: m,
                numerical_rank: 3,
                rank: 4,
            })
        } else {
            Ok(m)
        }
    };
    let out = grow_until(&sizes, 0.04, f64::INFINITY, deficient, |&m| {
        Ok(eta_only(1.0 / m as f64))
    })
    .unwrap();
    let accuracies: Vec<bool> = out.attempts.iter().map(|a| a.accuracy.is_some()).collect();
    assert_eq!(accuracies, vec![false, false, true, true]);
    assert_eq!(out.result, Some(35));
    // Any other error ends the search.
    let failing = |_: usize| -> Result<usize> {
        Err(NystromError::InvalidParameter {
            name: "m",
            value: 0.0,
            reason: "test".into(),
        })
    };
    assert!(grow_until(&sizes, 0.1, f64::INFINITY, failing, |_| Ok(eta_only(0.0))).is_err());

    // End to end on a kernel: the found size meets eps, against the exact SVD.
    let g = rbf(200, 150, 1, 2);
    let exact = dense_svd(ksvd_linalg::materialize(&g).unwrap().view(), 4).unwrap();
    let fro_sq: f64 = g.row_sq_norms().unwrap().iter().sum();
    let truth = Truth::new(fro_sq, &exact);
    let sched = GrowthSchedule {
        start: 8,
        factor: 1.3,
        min_step: 4,
        max: 150,
    };
    let out = grow_until(
        &sched.sizes().unwrap(),
        0.01,
        f64::INFINITY,
        |m| asymmetric_nystrom(&g, &NystromParams::new(4, m.min(150)).seed(3)),
        |ny| Ok(Accuracy::of(&g, &truth, &ny.svd)?),
    )
    .unwrap();
    assert_eq!(out.stop, GrowthStop::Reached);
    let ny = out.result.unwrap();
    assert!(eta_of(&exact, &ny.svd, EtaWeights::SingularValues).unwrap() <= 0.01);
    // Every earlier size missed it.
    let (last, earlier) = out.attempts.split_last().unwrap();
    assert!(last.accuracy.unwrap().eta <= 0.01);
    assert!(earlier.iter().all(|a| a.accuracy.is_none_or(|x| x.eta > 0.01)));
}

/// An SNE kernel of Gaussian samples, `n × m`.
fn sne(n: usize, m: usize, seed: u64) -> KernelMatrix {
    let mut rng = rng_from_seed(seed);
    let x = Samples::dense(gaussian_matrix(&mut rng, n, 5)).unwrap();
    let z = Samples::dense(gaussian_matrix(&mut rng, m, 5)).unwrap();
    KernelMatrix::new(x, z, Kernel::Sne { gamma: 2.0 }).unwrap()
}

/// Lanczos sub-problems to a relative residual of `1e-12`.
fn tight_lanczos() -> LanczosParams {
    LanczosParams {
        tol: 1e-12,
        ..LanczosParams::default()
    }
}

/// The Lanczos form equals the dense symmetric Nyström method (same landmarks) up to the
/// sub-problem tolerance, on a rectangular matrix, for several landmark counts.
#[test]
fn lanczos_symmetric_nystrom_matches_dense() {
    let g = sne(70, 60, 1);
    let r = 4;
    for m in [10, 25, 60] {
        let dense = symmetric_nystrom_svd(&g, r, m, m, 7).unwrap();
        let lz = symmetric_nystrom_lanczos(&g, r, m, 7, &tight_lanczos()).unwrap();
        let rel = (&dense.s - &lz.s).mapv(f64::abs).sum() / dense.s.sum();
        assert!(rel < 1e-9, "m = {m}: singular values differ by {rel:e}");
        let err = subspace_error(&dense, lz.u.view(), lz.v.view()).unwrap();
        assert!(err < 1e-6, "m = {m}: subspaces differ (sin {err:e})");
        let eta = eta_of(&dense, &lz, EtaWeights::Uniform).unwrap();
        assert!(eta < 1e-8, "m = {m}: vectors differ (unweighted eta {eta:e})");
    }
}

/// With m = N = M the symmetric method is exact: it recovers the truncated SVD; a landmark
/// count outside `rank..=min(N, M)` is rejected, and a rank-one matrix is rank deficient.
#[test]
fn lanczos_symmetric_nystrom_is_exact_at_full_size() {
    let g = sne(40, 40, 2);
    let r = 3;
    let exact = dense_svd_operator(&g, r).unwrap();
    let lz = symmetric_nystrom_lanczos(&g, r, 40, 3, &tight_lanczos()).unwrap();
    let rel = (&exact.s - &lz.s).mapv(f64::abs).sum() / exact.s.sum();
    assert!(rel < 1e-9, "{rel:e}");
    assert!(subspace_error(&exact, lz.u.view(), lz.v.view()).unwrap() < 1e-6);
    for m in [2, 41] {
        assert!(matches!(
            symmetric_nystrom_lanczos(&g, r, m, 3, &tight_lanczos()),
            Err(NystromError::InvalidParameter { name: "landmarks", .. })
        ));
    }
    let ones = Array2::<f64>::ones((30, 20));
    assert!(matches!(
        symmetric_nystrom_lanczos(&ones, 2, 10, 0, &tight_lanczos()),
        Err(NystromError::RankDeficientSample { numerical_rank: 1, .. })
    ));
}

/// `U diag(s) Vᵀ` with orthonormal random factors.
fn with_spectrum(n: usize, m: usize, s: &[f64], seed: u64) -> Array2<f64> {
    let mut rng = rng_from_seed(seed);
    let u = ksvd_linalg::dense::thin_q(gaussian_matrix(&mut rng, n, s.len()).view()).unwrap();
    let v = ksvd_linalg::dense::thin_q(gaussian_matrix(&mut rng, m, s.len()).view()).unwrap();
    let us = &u * &ndarray::Array1::from(s.to_vec());
    us.dot(&v.t())
}

#[test]
fn exact_inner_solver_agrees_with_the_dense_svd() {
    // Landmark blocks of 400 x 300 at rank 6: large enough for the Krylov path of
    // `InnerSolver::Exact`. The second matrix repeats s_2 = s_3 and clusters s_4, s_5.
    let smooth = rbf(600, 500, 3, 21).to_dense().unwrap();
    let mut spectrum: Vec<f64> = vec![4.0, 2.0, 2.0, 1.0, 1.0 - 1e-9, 0.5];
    spectrum.extend((0..80).map(|i| 0.3 * 0.9f64.powi(i)));
    let clustered = with_spectrum(600, 500, &spectrum, 22);
    for (name, g) in [("rbf", smooth), ("clustered", clustered)] {
        let r = 6;
        assert_eq!(
            ksvd_solvers::auto_choice(400, 300, r, &ksvd_linalg::MemoryBudget::auto()),
            ksvd_solvers::AutoChoice::Lanczos
        );
        let p = |inner| NystromParams {
            rows: 400,
            cols: 300,
            inner,
            ..NystromParams::new(r, 400).seed(5)
        };
        let dense = asymmetric_nystrom(&g, &p(InnerSolver::Dense)).unwrap();
        let exact = asymmetric_nystrom(&g, &p(InnerSolver::Exact)).unwrap();
        assert_eq!((&dense.rows, &dense.cols), (&exact.rows, &exact.cols));
        let eps = 1e2 * f64::EPSILON * 400f64.sqrt();
        for i in 0..r {
            let d = (dense.svd.s[i] - exact.svd.s[i]).abs();
            assert!(d <= eps * dense.svd.s[0], "{name} s_{i}: {d:e}");
        }
        // Spans (a repeated value fixes its pair of vectors only up to a rotation, and the
        // extended vectors are unit but not orthogonal): each vector of the exact result lies
        // in the span of the dense one's.
        for (a, b) in [(&dense.svd.u, &exact.svd.u), (&dense.svd.v, &exact.svd.v)] {
            let q = ksvd_linalg::dense::thin_q(a.view()).unwrap();
            let off = b - &q.dot(&q.t().dot(b));
            for j in 0..r {
                let e = off.column(j).dot(&off.column(j)).sqrt();
                assert!(e < 1e-8, "{name} vector {j}: {e:e}");
            }
        }
    }
}

/// The exact inner solver resolves a block evaluated in `f32` to `ε_f32 · s₁` (its entries'
/// rounding), a block in `f64` to `1e-12 · s₁`: against the dense SVD of the same sampled block,
/// the sub-problem's singular values agree within those bounds (scaled by the rank) and its
/// residuals meet them.
#[test]
fn exact_inner_solver_resolves_the_block_to_its_precision() {
    use ksvd_kernels::{Kernel, KernelMatrix, Samples};
    use ksvd_linalg::{MatrixBlocks, Precision};
    use ksvd_nystrom::{asymmetric_nystrom, InnerSolver, NystromParams};
    let mut rng = ksvd_linalg::random::rng_from_seed(3);
    let x = ksvd_linalg::random::gaussian_matrix(&mut rng, 700, 5);
    let z = ksvd_linalg::random::gaussian_matrix(&mut rng, 650, 5);
    for (precision, tol) in [(Precision::F64, 1e-12), (Precision::F32, f64::from(f32::EPSILON))] {
        let g = KernelMatrix::matrix_free_in(
            Samples::dense(x.clone()).unwrap(),
            Samples::dense(z.clone()).unwrap(),
            Kernel::Sne { gamma: 1.5 },
            precision,
        )
        .unwrap();
        assert_eq!(g.block_precision(), precision);
        let fit = |inner| {
            let mut p = NystromParams::new(8, 400);
            p.inner = inner;
            asymmetric_nystrom(&g, &p).unwrap()
        };
        let (exact, dense) = (fit(InnerSolver::Exact), fit(InnerSolver::Dense));
        let s1 = dense.sub.s[0];
        for (a, b) in exact.sub.s.iter().zip(&dense.sub.s) {
            assert!((a - b).abs() <= 8.0 * tol * s1, "{precision}: {a} vs {b}");
        }
        let worst = exact.sub.max_residual().unwrap_or(0.0);
        assert!(worst <= tol, "{precision}: residual {worst:e} above {tol:e}");
    }
}
