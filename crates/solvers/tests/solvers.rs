//! Solver properties over tall, wide, square, rank-deficient and zero matrices.
mod common;
use common::*;
use ksvd_linalg::random::{gaussian_matrix, rng_from_seed};
use ksvd_linalg::CsrMatrix;
use ksvd_solvers::accuracy::max_principal_angle_sin;
use ksvd_solvers::*;
use ndarray::Array2;
use proptest::prelude::*;

/// Checks `G V = U S`, `Gᵀ U = V S`, orthonormality, ordering; `rtol` is relative to `s_1`.
fn check_svd(g: &Array2<f64>, r: &SvdResult, rtol: f64, label: &str) {
    let (n, m) = g.dim();
    let k = r.rank();
    let scale =
        r.s.iter()
            .cloned()
            .fold(0.0, f64::max)
            .max(g.iter().fold(0.0f64, |a, v| a.max(v.abs())));
    let abs = rtol * scale.max(f64::MIN_POSITIVE) + f64::MIN_POSITIVE;
    let gv = g.dot(&r.v);
    let us = &r.u * &r.s;
    let e1 = (&gv - &us).iter().fold(0.0f64, |a, v| a.max(v.abs()));
    assert!(e1 <= abs, "{label}: ‖GV − US‖ = {e1:e} > {abs:e}");
    let gtu = g.t().dot(&r.u);
    let vs = &r.v * &r.s;
    let e2 = (&gtu - &vs).iter().fold(0.0f64, |a, v| a.max(v.abs()));
    assert!(e2 <= abs, "{label}: ‖GᵀU − VS‖ = {e2:e} > {abs:e}");
    let ot = eps_tol(n, m);
    let eu = (&r.u.t().dot(&r.u) - &Array2::<f64>::eye(k))
        .iter()
        .fold(0.0f64, |a, v| a.max(v.abs()));
    let ev = (&r.v.t().dot(&r.v) - &Array2::<f64>::eye(k))
        .iter()
        .fold(0.0f64, |a, v| a.max(v.abs()));
    assert!(eu <= ot && ev <= ot, "{label}: orthonormality {eu:e} {ev:e} > {ot:e}");
    assert!(r.s.iter().all(|&s| s >= 0.0), "{label}: negative singular value");
    assert!(
        r.s.windows(2).into_iter().all(|w| w[0] >= w[1]),
        "{label}: not descending"
    );
}

fn shapes() -> Vec<(&'static str, Array2<f64>)> {
    let mut rng = rng_from_seed(42);
    vec![
        ("tall", gaussian_matrix(&mut rng, 60, 25)),
        ("wide", gaussian_matrix(&mut rng, 25, 60)),
        ("square", gaussian_matrix(&mut rng, 40, 40)),
        ("rank-deficient", with_spectrum(50, 35, &[5.0, 3.0, 1.0], 7)),
        ("zero", Array2::zeros((30, 20))),
    ]
}

#[test]
fn dense_svd_satisfies_definition() {
    for (label, g) in shapes() {
        for k in [1, 5, g.nrows().min(g.ncols())] {
            let r = dense_svd(g.view(), k).unwrap();
            check_svd(&g, &r, eps_tol(g.nrows(), g.ncols()), label);
        }
    }
}

#[test]
fn lanczos_satisfies_definition_and_agrees_with_dense() {
    for (label, g) in shapes() {
        let (n, m) = g.dim();
        let tol = eps_tol(n, m);
        for k in [1, 6] {
            let params = LanczosParams {
                tol,
                max_restarts: 5000,
                ..Default::default()
            };
            let r = lanczos_svd(&g, k, &params).unwrap();
            check_svd(&g, &r, 4.0 * tol, label);
            let d = dense_svd(g.view(), k).unwrap();
            for i in 0..k {
                assert!(
                    (r.s[i] - d.s[i]).abs() <= 4.0 * tol * d.s[0].max(1.0),
                    "{label}: s_{i} {} vs {}",
                    r.s[i],
                    d.s[i]
                );
            }
        }
    }
}

#[test]
fn lanczos_on_sparse_operator() {
    let g = with_spectrum(80, 50, &[10.0, 8.0, 4.0, 2.0, 1.0, 0.5], 3);
    let sparse = CsrMatrix::from_dense(g.view()).unwrap();
    let r = lanczos_svd(
        &sparse,
        4,
        &LanczosParams {
            tol: 1e-13,
            ..Default::default()
        },
    )
    .unwrap();
    check_svd(&g, &r, 1e-12, "sparse");
    let d = dense_svd(g.view(), 4).unwrap();
    assert!(max_principal_angle_sin(d.u.view(), r.u.view()).unwrap() < 1e-10);
}

#[test]
fn rsvd_is_exact_when_the_sketch_covers_the_range() {
    for (label, g) in shapes() {
        let (n, m) = g.dim();
        let k = 3.min(n.min(m));
        // rank(G) <= 3 or oversampling to the full dimension: the range is captured exactly.
        let p = n.min(m);
        let r = randomized_svd(
            &g,
            k,
            &RsvdParams {
                oversampling: p,
                power_iters: 0,
                seed: 1,
            },
        )
        .unwrap();
        check_svd(&g, &r, 16.0 * eps_tol(n, m), label);
    }
    let low = with_spectrum(70, 45, &[4.0, 2.0, 1.0], 9);
    let r = randomized_svd(
        &low,
        3,
        &RsvdParams {
            oversampling: 2,
            power_iters: 0,
            seed: 2,
        },
    )
    .unwrap();
    check_svd(&low, &r, 16.0 * eps_tol(70, 45), "exact rank 3");
}

#[test]
fn rsvd_power_iterations_converge_on_decaying_spectrum() {
    let s: Vec<f64> = (0..30).map(|i| 0.5f64.powi(i)).collect();
    let g = with_spectrum(120, 90, &s, 11);
    let d = dense_svd(g.view(), 5).unwrap();
    let r = randomized_svd(
        &g,
        5,
        &RsvdParams {
            oversampling: 10,
            power_iters: 3,
            seed: 3,
        },
    )
    .unwrap();
    // Error bound ~ (s_{k+p+1}/s_k)^(2q+1) = 2^{-10*7}: at rounding level.
    for i in 0..5 {
        assert!((r.s[i] - d.s[i]).abs() <= 1e-12, "s_{i}");
    }
    assert!(eta_of(&d, &r, EtaWeights::Uniform).unwrap() < 1e-12);
}

#[test]
fn eta_special_cases() {
    let g = with_spectrum(20, 15, &[3.0, 2.0, 1.0], 5);
    let d = dense_svd(g.view(), 3).unwrap();
    for w in [EtaWeights::SingularValues, EtaWeights::Normalized, EtaWeights::Uniform] {
        assert!(eta_of(&d, &d, w).unwrap() < 1e-15);
        let flipped = SvdResult::new(-&d.u, d.s.clone(), -&d.v);
        assert!(eta_of(&d, &flipped, w).unwrap() < 1e-15, "sign invariance");
        // Unnormalised vectors are normalised by eta.
        let scaled = SvdResult::new(&d.u * 7.0, d.s.clone(), &d.v * 0.1);
        assert!(eta_of(&d, &scaled, w).unwrap() < 1e-14);
    }
    // Orthogonal approximations: every term is w_i.
    let zero_u = Array2::zeros((20, 3));
    let zero_v = Array2::zeros((15, 3));
    let sv = eta(&d, zero_u.view(), zero_v.view(), EtaWeights::SingularValues).unwrap();
    assert!((sv - 2.0 * 6.0 / 3.0).abs() < 1e-14);
    assert!((eta(&d, zero_u.view(), zero_v.view(), EtaWeights::Uniform).unwrap() - 2.0).abs() < 1e-15);
    assert!((eta(&d, zero_u.view(), zero_v.view(), EtaWeights::Normalized).unwrap() - 2.0).abs() < 1e-15);
    assert!(eta(&d, Array2::zeros((19, 3)).view(), zero_v.view(), EtaWeights::Uniform).is_err());
}

#[test]
fn bad_inputs_are_typed_errors() {
    let g = Array2::<f64>::ones((4, 3));
    assert!(matches!(
        dense_svd(g.view(), 0),
        Err(SolverError::InvalidRank { rank: 0, .. })
    ));
    assert!(matches!(
        dense_svd(g.view(), 4),
        Err(SolverError::InvalidRank {
            rank: 4,
            nrows: 4,
            ncols: 3
        })
    ));
    assert!(matches!(
        lanczos_svd(&g, 5, &LanczosParams::default()),
        Err(SolverError::InvalidRank { .. })
    ));
    assert!(matches!(
        randomized_svd(&g, 9, &RsvdParams::default()),
        Err(SolverError::InvalidRank { .. })
    ));
    let empty = Array2::<f64>::zeros((0, 3));
    assert!(matches!(dense_svd(empty.view(), 1), Err(SolverError::Empty { .. })));
    let mut nan = g.clone();
    nan[[1, 1]] = f64::NAN;
    assert!(dense_svd(nan.view(), 1).is_err());
    assert!(matches!(
        lanczos_svd(&nan, 1, &LanczosParams::default()),
        Err(SolverError::NonFinite)
    ));
    assert!(matches!(
        randomized_svd(&nan, 1, &RsvdParams::default()),
        Err(SolverError::NonFinite)
    ));
    assert!(matches!(
        lanczos_svd(
            &g,
            1,
            &LanczosParams {
                tol: -1.0,
                ..Default::default()
            }
        ),
        Err(SolverError::InvalidParameter { name: "tol", .. })
    ));
}

#[test]
fn lanczos_reports_non_convergence() {
    let g = gaussian_matrix(&mut rng_from_seed(5), 200, 150);
    let res = lanczos_svd(
        &g,
        10,
        &LanczosParams {
            tol: 1e-15,
            max_restarts: 1,
            work_dim: Some(40),
            seed: 0,
            block_size: Some(4),
        },
    );
    assert!(matches!(
        res,
        Err(SolverError::NotConverged {
            solver: "block Lanczos",
            iterations: 1,
            ..
        })
    ));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]
    #[test]
    fn lanczos_and_dense_agree_on_random_shapes(n in 1usize..40, m in 1usize..40, rank_frac in 0.0f64..1.0, seed in 0u64..10_000, deficient in 0usize..3) {
        let mut g = gaussian_matrix(&mut rng_from_seed(seed), n, m);
        if deficient > 0 && n.min(m) > deficient {
            // Force rank deficiency: repeat the first column.
            let c0 = g.column(0).to_owned();
            for j in 1..=deficient { g.column_mut(j).assign(&c0); }
        }
        let k = 1 + ((n.min(m) - 1) as f64 * rank_frac) as usize;
        let tol = eps_tol(n, m);
        let r = lanczos_svd(&g, k, &LanczosParams { tol, max_restarts: 10_000, seed, ..Default::default() }).unwrap();
        check_svd(&g, &r, 4.0 * tol, "proptest");
        let d = dense_svd(g.view(), k).unwrap();
        for i in 0..k {
            prop_assert!((r.s[i] - d.s[i]).abs() <= 4.0 * tol * d.s[0].max(1.0));
        }
    }
}
