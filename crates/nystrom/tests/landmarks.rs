//! Adaptive landmarks (cross approximation) and the Frobenius accuracy measures.
use ksvd_kernels::{Kernel, KernelMatrix, Samples};
use ksvd_linalg::dense;
use ksvd_linalg::random::{gaussian_matrix, rng_from_seed};
use ksvd_nystrom::{asymmetric_nystrom, sketched_leverage, NystromError, NystromParams, Sampling};
use ksvd_solvers::{dense_svd, dense_svd_operator, low_rank_error, optimal_low_rank_error};
use ndarray::{Array1, Array2};

const ADAPTIVE: [Sampling; 2] = [Sampling::AdaptiveCross, Sampling::GreedyCross];

fn fro_sq(g: &Array2<f64>) -> f64 {
    g.iter().map(|x| x * x).sum()
}

fn rbf_matrix(n: usize, m: usize, seed: u64) -> KernelMatrix {
    let mut rng = rng_from_seed(seed);
    let x = Samples::dense(gaussian_matrix(&mut rng, n, 3)).unwrap();
    let z = Samples::dense(gaussian_matrix(&mut rng, m, 3) * 1.3).unwrap();
    KernelMatrix::new(x, z, Kernel::Rbf { gamma: 1.5 }).unwrap()
}

/// Tolerance relative to `s_1`: `ε sqrt(8 max(n, m))`, widened for the pivoted elimination.
fn tol(n: usize, m: usize) -> f64 {
    1e3 * f64::EPSILON * (8.0 * n.max(m) as f64).sqrt()
}

/// With `min(N, M)` landmarks (every row of a wide, every column of a tall, every row and column
/// of a square matrix) the cross approximation is `G` itself, so its truncated SVD is exact.
/// (Uniform landmarks: `tests/nystrom.rs`. The importance-scaled schemes are not exact at full
/// selection: eq. 11 on the scaled block `D_r G D_c` returns the normalised `D_r⁻¹ P`, not `G`'s
/// singular vectors.)
#[test]
fn all_rows_and_columns_selected_is_exact() {
    for (n, m) in [(40, 30), (30, 40), (35, 35)] {
        all_selected_is_exact(n, m);
    }
}

fn all_selected_is_exact(n: usize, m: usize) {
    let r = 5;
    let g = rbf_matrix(n, m, 1);
    let exact = dense_svd_operator(&g, r).unwrap();
    for sampling in ADAPTIVE {
        let p = NystromParams::new(r, n.min(m)).sampling(sampling).seed(4);
        let ny = asymmetric_nystrom(&g, &p).unwrap();
        for i in 0..r {
            assert!(
                (ny.svd.s[i] - exact.s[i]).abs() <= tol(n, m) * exact.s[0],
                "{sampling:?}: s_{i} {} vs {}",
                ny.svd.s[i],
                exact.s[i]
            );
        }
        // Orthonormal vectors: the SVD of the cross approximation, not eq. 11's rescaling.
        let utu = dense::matmul(ny.svd.u.t(), ny.svd.u.view()).unwrap();
        let vtv = dense::matmul(ny.svd.v.t(), ny.svd.v.view()).unwrap();
        let eye = Array2::<f64>::eye(r);
        assert!((&utu - &eye).iter().all(|e| e.abs() < tol(n, m)));
        assert!((&vtv - &eye).iter().all(|e| e.abs() < tol(n, m)));
        // The residuals of the triplets against G itself are at rounding level.
        let res = ny.svd.compute_residuals(&g).unwrap();
        assert!(res.max() < tol(n, m), "{sampling:?}: residual {:e}", res.max());
    }
}

#[test]
fn extension_at_the_training_samples_gives_back_the_vectors() {
    let (n, m, r) = (50, 35, 4);
    let mut rng = rng_from_seed(8);
    let xs = gaussian_matrix(&mut rng, n, 2);
    let zs = gaussian_matrix(&mut rng, m, 2);
    let g = KernelMatrix::new(
        Samples::dense(xs.clone()).unwrap(),
        Samples::dense(zs.clone()).unwrap(),
        Kernel::Sne { gamma: 1.2 },
    )
    .unwrap();
    for sampling in ADAPTIVE {
        let ny = asymmetric_nystrom(&g, &NystromParams::new(r, 12).sampling(sampling).seed(2)).unwrap();
        let u = ny.extend_rows(&g, &Samples::dense(xs.clone()).unwrap()).unwrap();
        let v = ny.extend_cols(&g, &Samples::dense(zs.clone()).unwrap()).unwrap();
        let du = (&u - &ny.svd.u).iter().fold(0.0f64, |a, e| a.max(e.abs()));
        let dv = (&v - &ny.svd.v).iter().fold(0.0f64, |a, e| a.max(e.abs()));
        assert!(du < 1e-10 && dv < 1e-10, "{sampling:?}: {du:e} {dv:e}");
        assert_eq!(ny.row_extension_coefficients().dim(), (ny.cols.len(), r));
        assert_eq!(ny.col_extension_coefficients().dim(), (ny.rows.len(), r));
    }
}

/// Every scheme: the same seed gives the same landmarks (and bit-identical singular values);
/// the seeded ones draw other landmarks from another seed.
#[test]
fn same_seed_same_landmarks() {
    let g = rbf_matrix(80, 70, 3);
    let all = [
        Sampling::Uniform,
        Sampling::SquaredNorm,
        Sampling::Leverage,
        Sampling::AdaptiveCross,
        Sampling::GreedyCross,
    ];
    for sampling in all {
        let p = NystromParams::new(3, 20).sampling(sampling).seed(11);
        let a = asymmetric_nystrom(&g, &p).unwrap();
        let b = asymmetric_nystrom(&g, &p).unwrap();
        assert_eq!((&a.rows, &a.cols), (&b.rows, &b.cols), "{sampling:?}");
        assert_eq!(a.svd.s, b.svd.s, "{sampling:?}");
        for idx in [&a.rows, &a.cols] {
            let mut sorted = idx.clone();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(sorted.len(), idx.len(), "{sampling:?}: distinct landmarks");
        }
    }
    for sampling in [
        Sampling::Uniform,
        Sampling::SquaredNorm,
        Sampling::Leverage,
        Sampling::AdaptiveCross,
    ] {
        let a = asymmetric_nystrom(&g, &NystromParams::new(3, 20).sampling(sampling).seed(1)).unwrap();
        let b = asymmetric_nystrom(&g, &NystromParams::new(3, 20).sampling(sampling).seed(2)).unwrap();
        assert_ne!(
            (a.rows, a.cols),
            (b.rows, b.cols),
            "{sampling:?}: the seed drives the draws"
        );
    }
}

#[test]
fn rank_deficient_matrices_are_recovered_exactly() {
    let mut rng = rng_from_seed(21);
    let g = dense::matmul(
        gaussian_matrix(&mut rng, 60, 3).view(),
        gaussian_matrix(&mut rng, 3, 45).view(),
    )
    .unwrap();
    let exact = dense_svd(g.view(), 3).unwrap();
    for sampling in ADAPTIVE {
        let ny = asymmetric_nystrom(&g, &NystromParams::new(3, 10).sampling(sampling).seed(5)).unwrap();
        let err = low_rank_error(&g, fro_sq(&g), ny.svd.u.view(), ny.svd.s.view(), ny.svd.v.view()).unwrap();
        assert!(err <= 1e-6 * exact.s[0], "{sampling:?}: error {err:e}");
        match asymmetric_nystrom(&g, &NystromParams::new(4, 10).sampling(sampling).seed(5)) {
            Err(NystromError::RankDeficientSample {
                numerical_rank, rank, ..
            }) => {
                assert_eq!((numerical_rank, rank), (3, 4))
            }
            other => panic!("{sampling:?}: expected a rank-deficiency error, got {other:?}"),
        }
    }
    let zero = Array2::<f64>::zeros((20, 15));
    for sampling in ADAPTIVE {
        assert!(matches!(
            asymmetric_nystrom(&zero, &NystromParams::new(2, 5).sampling(sampling)),
            Err(NystromError::RankDeficientSample { .. })
        ));
    }
    assert!(asymmetric_nystrom(&g, &NystromParams::new(5, 4).sampling(Sampling::AdaptiveCross)).is_err());
}

#[test]
fn frobenius_measures_agree_with_dense_computation() {
    let mut rng = rng_from_seed(31);
    let g = gaussian_matrix(&mut rng, 25, 18);
    let r = 4;
    let exact = dense_svd(g.view(), 18).unwrap();
    let tail: f64 = exact.s.iter().skip(r).map(|x| x * x).sum::<f64>().sqrt();
    let opt = optimal_low_rank_error(fro_sq(&g), exact.s.slice(ndarray::s![..r]));
    assert!((opt - tail).abs() <= 1e-12 * exact.s[0] * 18.0);
    // Any U, s, V (not orthonormal): against the explicit difference.
    let u = gaussian_matrix(&mut rng, 25, r);
    let v = gaussian_matrix(&mut rng, 18, r);
    let s = Array1::from(vec![3.0, 2.0, 0.5, 0.1]);
    let explicit = {
        let d = &g - &dense::matmul((&u * &s).view(), v.t()).unwrap();
        fro_sq(&d).sqrt()
    };
    let measured = low_rank_error(&g, fro_sq(&g), u.view(), s.view(), v.view()).unwrap();
    assert!(
        (measured - explicit).abs() <= 1e-12 * explicit.max(1.0) * 25.0,
        "{measured} vs {explicit}"
    );
    // The truncated SVD attains the optimum.
    let best = low_rank_error(
        &g,
        fro_sq(&g),
        exact.u.view(),
        exact.s.slice(ndarray::s![..r]),
        exact.v.view(),
    )
    .unwrap();
    assert!((best - tail).abs() <= 1e-10 * exact.s[0]);
    assert!(low_rank_error(&g, f64::NAN, u.view(), s.view(), v.view()).is_err());
    assert!(low_rank_error(&g, 1.0, v.view(), s.view(), u.view()).is_err());
}

#[test]
fn sketched_leverage_scores_are_exact_for_low_rank_matrices() {
    // rank(G) = 3 ≤ sketch width: the sketch spans the column space, so the scores are the exact
    // leverage scores (‖Q_i‖² of an orthonormal basis of range(G)), summing to 3.
    let mut rng = rng_from_seed(51);
    let g = dense::matmul(
        gaussian_matrix(&mut rng, 40, 3).view(),
        gaussian_matrix(&mut rng, 3, 30).view(),
    )
    .unwrap();
    let exact = dense_svd(g.view(), 3).unwrap();
    let (rows, cols) = sketched_leverage(&g, 3, 9).unwrap();
    for (i, &l) in rows.iter().enumerate() {
        let e = exact.u.row(i).dot(&exact.u.row(i));
        assert!((l - e).abs() < 1e-10, "row {i}: {l} vs {e}");
    }
    for (j, &l) in cols.iter().enumerate() {
        let e = exact.v.row(j).dot(&exact.v.row(j));
        assert!((l - e).abs() < 1e-10, "col {j}: {l} vs {e}");
    }
    // Same seed, same draw.
    let p = NystromParams::new(3, 8).sampling(Sampling::Leverage).seed(2);
    let (a, b) = (asymmetric_nystrom(&g, &p).unwrap(), asymmetric_nystrom(&g, &p).unwrap());
    assert_eq!((a.rows, a.cols), (b.rows, b.cols));
}

/// A smooth low-rank matrix plus a few large isolated entries: uniform landmarks rarely hit the
/// spikes' rows and columns, adaptive ones are drawn to them by the residual norms.
#[test]
fn adaptive_landmarks_find_coherent_structure_that_uniform_misses() {
    let (n, m, r, landmarks) = (400, 300, 6, 30);
    let mut rng = rng_from_seed(41);
    let mut g = dense::matmul(
        gaussian_matrix(&mut rng, n, 2).view(),
        gaussian_matrix(&mut rng, 2, m).view(),
    )
    .unwrap();
    for (k, &(i, j)) in [(17usize, 250usize), (123, 5), (301, 177), (388, 64)]
        .iter()
        .enumerate()
    {
        g[[i, j]] += 40.0 + 5.0 * k as f64;
    }
    let exact = dense_svd(g.view(), r).unwrap();
    let opt = optimal_low_rank_error(fro_sq(&g), exact.s.view());
    let ratio = |sampling: Sampling, seed: u64| {
        match asymmetric_nystrom(&g, &NystromParams::new(r, landmarks).sampling(sampling).seed(seed)) {
            Ok(ny) => low_rank_error(&g, fro_sq(&g), ny.svd.u.view(), ny.svd.s.view(), ny.svd.v.view()).unwrap() / opt,
            // The sample saw fewer than r directions: it missed the structure entirely.
            Err(NystromError::RankDeficientSample { .. }) => f64::INFINITY,
            Err(e) => panic!("{e}"),
        }
    };
    for seed in 0..3 {
        let adaptive = ratio(Sampling::AdaptiveCross, seed);
        let uniform = ratio(Sampling::Uniform, seed);
        assert!(adaptive < 1.01, "seed {seed}: adaptive error ratio {adaptive}");
        assert!(
            uniform > 2.0,
            "seed {seed}: uniform error ratio {uniform} (the spikes are rarely sampled)"
        );
    }
}
