//! The block Krylov engine on matrices large enough that it does not fall back to a dense SVD:
//! repeated and clustered singular values, rank deficiency, certified residuals, the default
//! (`auto_svd`) choice, and bad parameters.
mod common;
use common::*;
use ksvd_linalg::MemoryBudget;
use ksvd_solvers::accuracy::max_principal_angle_sin;
use ksvd_solvers::*;
use ndarray::Array2;

/// A spectrum with a triple, a double and a tight cluster, then a decaying tail.
fn hard_spectrum() -> Vec<f64> {
    let mut s = vec![10.0, 10.0, 10.0, 7.0, 5.0, 5.0, 3.0 + 2e-9, 3.0 + 1e-9, 3.0, 2.0];
    s.extend((0..60).map(|i| 1.5 * 0.93f64.powi(i)));
    s
}

#[test]
fn block_lanczos_finds_repeated_and_clustered_values() {
    let spec = hard_spectrum();
    let g = with_spectrum(400, 300, &spec, 11);
    for (rank, block) in [(3, 4), (6, 4), (10, 8), (9, 3)] {
        let tol = 1e-10;
        let p = LanczosParams {
            tol,
            block_size: Some(block),
            ..Default::default()
        };
        let (r, stats) = lanczos_svd_with_progress(&g, rank, &p, &mut |_| {}).unwrap();
        assert!(
            !stats.dense,
            "rank {rank}: the engine, not the dense fallback, must run"
        );
        let res = r.residuals.as_ref().expect("certified").max();
        assert!(res <= tol, "rank {rank}: reported residual {res:e}");
        let ex = explicit_residual(&g, &r);
        assert!(ex <= 2.0 * tol, "rank {rank}: explicit residual {ex:e}");
        assert!(
            (ex - res).abs() <= 1e3 * f64::EPSILON,
            "reported {res:e} vs explicit {ex:e}"
        );
        for i in 0..rank {
            assert!(
                (r.s[i] - spec[i]).abs() <= 4.0 * tol * spec[0],
                "rank {rank}, b {block}: s_{i} = {} vs {}",
                r.s[i],
                spec[i]
            );
        }
        assert!(orthonormality_error(&r.u) <= eps_tol(400, 300));
        assert!(orthonormality_error(&r.v) <= eps_tol(400, 300));
    }
    // Where the cut falls between distinct values the subspaces are determined: compare them.
    let d = dense_svd(g.view(), 6).unwrap();
    let r = lanczos_svd(
        &g,
        6,
        &LanczosParams {
            tol: 1e-12,
            ..Default::default()
        },
    )
    .unwrap();
    assert!(max_principal_angle_sin(d.u.view(), r.u.view()).unwrap() < 1e-9);
    assert!(max_principal_angle_sin(d.v.view(), r.v.view()).unwrap() < 1e-9);
}

#[test]
fn one_vector_blocks_still_converge_on_simple_values() {
    let s: Vec<f64> = (0..150).map(|i| 0.97f64.powi(i)).collect();
    let g = with_spectrum(300, 250, &s, 2);
    let p = LanczosParams {
        tol: 1e-11,
        block_size: Some(1),
        work_dim: Some(12),
        max_restarts: 5000,
        ..Default::default()
    };
    let (r, stats) = lanczos_svd_with_progress(&g, 5, &p, &mut |_| {}).unwrap();
    assert!(stats.restarts > 0, "a basis of 12 forces restarts");
    for i in 0..5 {
        assert!((r.s[i] - s[i]).abs() <= 1e-10);
    }
    assert!(explicit_residual(&g, &r) <= 2e-11);
}

#[test]
fn rank_deficient_and_zero_matrices() {
    let g = with_spectrum(300, 200, &[4.0, 2.0, 1.0], 4);
    let r = lanczos_svd(
        &g,
        6,
        &LanczosParams {
            tol: 1e-10,
            ..Default::default()
        },
    )
    .unwrap();
    assert!((r.s[0] - 4.0).abs() < 1e-12 && (r.s[2] - 1.0).abs() < 1e-12);
    assert!(r.s.iter().skip(3).all(|&x| x.abs() < 1e-12), "{:?}", r.s);
    assert!(orthonormality_error(&r.u) <= eps_tol(300, 200));
    assert!(explicit_residual(&g, &r) <= 2e-10);

    let z = Array2::<f64>::zeros((300, 200));
    let r = lanczos_svd(&z, 4, &LanczosParams::default()).unwrap();
    assert!(r.s.iter().all(|&x| x == 0.0));
    assert!(orthonormality_error(&r.u) <= eps_tol(300, 200));
    assert_eq!(r.max_residual(), Some(0.0));
}

#[test]
fn block_krylov_stops_on_residuals_and_reports_when_it_cannot() {
    let s: Vec<f64> = (0..120).map(|i| 1.0 / (1.0 + i as f64).powf(0.5)).collect();
    let g = with_spectrum(500, 400, &s, 9);
    let (r, stats) = block_krylov_svd(
        &g,
        8,
        &BlockKrylovParams {
            tol: 1e-9,
            ..Default::default()
        },
    )
    .unwrap();
    assert!(stats.converged);
    assert!(r.max_residual().unwrap() <= 1e-9);
    assert!(explicit_residual(&g, &r) <= 2e-9);
    let d = dense_svd(g.view(), 8).unwrap();
    for i in 0..8 {
        assert!((r.s[i] - d.s[i]).abs() <= 1e-8 * d.s[0]);
    }
    // A depth of 1 cannot reach 1e-12 on this slowly decaying spectrum: the result says so.
    let (r, stats) = block_krylov_svd(
        &g,
        8,
        &BlockKrylovParams {
            tol: 1e-12,
            max_depth: 1,
            ..Default::default()
        },
    )
    .unwrap();
    assert!(!stats.converged);
    let res = r.max_residual().unwrap();
    assert!(res > 1e-12);
    assert!((res - explicit_residual(&g, &r)).abs() <= 1e-12);
}

#[test]
fn randomized_svd_reports_its_residuals() {
    let s: Vec<f64> = (0..100).map(|i| 0.97f64.powi(i)).collect();
    let g = with_spectrum(300, 200, &s, 5);
    let r = randomized_svd(&g, 5, &RsvdParams::default()).unwrap();
    let res = r.max_residual().unwrap();
    assert!((res - explicit_residual(&g, &r)).abs() <= 1e-12);
    assert!(
        res > 1e-6,
        "two power iterations on a flat spectrum are not accurate: {res:e}"
    );
}

#[test]
fn auto_picks_dense_for_small_and_krylov_for_large_and_meets_tol() {
    let s: Vec<f64> = (0..80).map(|i| 0.9f64.powi(i)).collect();
    let small = with_spectrum(60, 50, &s[..40], 1);
    let (r, choice) = auto_svd(&small, 5, &AutoParams::default(), &mut |_| {}).unwrap();
    assert_eq!(choice, AutoChoice::Dense);
    assert!(r.max_residual().unwrap() <= 1e-8);
    let g = with_spectrum(1500, 1200, &s, 3);
    let params = AutoParams {
        tol: 1e-9,
        ..Default::default()
    };
    let (r, choice) = auto_svd(&g, 4, &params, &mut |_| {}).unwrap();
    assert_eq!(choice, AutoChoice::Lanczos);
    assert!(explicit_residual(&g, &r) <= 2e-9);
    for i in 0..4 {
        assert!((r.s[i] - s[i]).abs() <= 1e-8);
    }
    // A budget too small for the dense factorisation forces the Krylov path.
    let tight = AutoParams {
        budget: MemoryBudget::bytes(1 << 20).unwrap(),
        ..Default::default()
    };
    assert_eq!(auto_choice(600, 500, 300, &tight.budget), AutoChoice::Lanczos);
    assert_eq!(
        auto_choice(600, 500, 300, &MemoryBudget::bytes(1 << 30).unwrap()),
        AutoChoice::Dense
    );
}

#[test]
fn bad_parameters_are_typed_errors() {
    let g = with_spectrum(100, 80, &[1.0, 0.5], 0);
    for tol in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        assert!(matches!(
            lanczos_svd(
                &g,
                1,
                &LanczosParams {
                    tol,
                    ..Default::default()
                }
            ),
            Err(SolverError::InvalidParameter { name: "tol", .. })
        ));
        assert!(matches!(
            block_krylov_svd(
                &g,
                1,
                &BlockKrylovParams {
                    tol,
                    ..Default::default()
                }
            ),
            Err(SolverError::InvalidParameter { name: "tol", .. })
        ));
        assert!(auto_svd(
            &g,
            1,
            &AutoParams {
                tol,
                ..Default::default()
            },
            &mut |_| {}
        )
        .is_err());
    }
    assert!(matches!(
        lanczos_svd(
            &g,
            1,
            &LanczosParams {
                block_size: Some(0),
                ..Default::default()
            }
        ),
        Err(SolverError::InvalidParameter { name: "block_size", .. })
    ));
    assert!(matches!(
        auto_svd(&g, 81, &AutoParams::default(), &mut |_| {}),
        Err(SolverError::InvalidRank { .. })
    ));
}

#[test]
fn auto_finds_every_copy_of_a_value_repeated_more_often_than_the_block_is_wide() {
    // 56 copies of 2 at rank 60: the start block (48 vectors) spans only 48 directions of that
    // singular subspace, so the missing copies must come from later directions (the random
    // vectors that replace converged, deflated ones, or the multiplicity guard's wider rerun);
    // certifying 48 copies followed by 1.5, 1.4, ... would pass every residual check and be wrong.
    let mut s = vec![2.0; 56];
    s.extend([1.5, 1.4, 1.3, 1.2, 1.1, 1.0]);
    // A full-rank tail: with an exactly low-rank G the Krylov space would deflate and the
    // random vectors that replace deflated directions would find the missing copies by luck.
    s.extend((0..938).map(|i| 0.9 * 0.998f64.powi(i)));
    let g = with_spectrum(1500, 1000, &s, 11);
    // A budget too small for the dense factorisation keeps the Krylov path (locking and
    // deflated searches); with room for it, the guard settles the cluster by a dense SVD.
    for (bytes, expected) in [(16u64 << 20, AutoChoice::Lanczos), (1 << 30, AutoChoice::Dense)] {
        let params = AutoParams {
            tol: 1e-9,
            budget: MemoryBudget::bytes(bytes).unwrap(),
            ..Default::default()
        };
        let (r, choice) = auto_svd(&g, 60, &params, &mut |_| {}).unwrap();
        assert_eq!(choice, expected);
        assert!(explicit_residual(&g, &r) <= 2e-9);
        for i in 0..60 {
            assert!((r.s[i] - s[i]).abs() <= 1e-8, "s[{i}] = {} instead of {}", r.s[i], s[i]);
        }
        let ot = eps_tol(1500, 1000);
        assert!(orthonormality_error(&r.u) <= ot && orthonormality_error(&r.v) <= ot);
    }
}

#[test]
fn the_certificate_includes_orthonormality() {
    // Repeated values are where a Krylov method could return one vector twice; the statistics
    // carry the measured loss of orthonormality, which must match an independent computation.
    let mut s = vec![3.0; 6];
    s.extend((0..400).map(|i| 2.0 * 0.99f64.powi(i)));
    let g = with_spectrum(900, 700, &s, 5);
    let p = LanczosParams {
        tol: 1e-10,
        block_size: Some(4),
        ..Default::default()
    };
    let (r, stats) = lanczos_svd_with_progress(&g, 8, &p, &mut |_| {}).unwrap();
    let independent = orthonormality_error(&r.u).max(orthonormality_error(&r.v));
    assert!((stats.orthogonality - independent).abs() <= 1e-15);
    assert!(stats.orthogonality <= eps_tol(900, 700), "{:e}", stats.orthogonality);
    for i in 0..6 {
        assert!((r.s[i] - 3.0).abs() <= 1e-9, "s[{i}] = {}", r.s[i]);
    }
}

#[test]
fn the_gram_route_is_a_certified_svd_of_tall_and_wide_matrices() {
    // Repeated and clustered values, then a tail down to 0.05 s_1: the Gram matrix's eigenvalue
    // errors (about eps s_1^2) move each value by about eps s_1^2 / s_i.
    let spec = hard_spectrum();
    for (n, m) in [(400, 300), (300, 400)] {
        let g = with_spectrum(n, m, &spec, 7);
        let rank = 20;
        let r = gram_svd_operator(&g, rank).unwrap();
        assert_eq!((r.u.dim(), r.s.len(), r.v.dim()), ((n, rank), rank, (m, rank)));
        let worst = spec[0] / spec[rank - 1];
        let tol = 64.0 * f64::EPSILON * worst * ((n.max(m)) as f64).sqrt();
        let ex = explicit_residual(&g, &r);
        assert!(ex <= tol, "{n} x {m}: explicit residual {ex:e} above {tol:e}");
        assert!(
            (r.max_residual().unwrap() - ex).abs() <= 1e3 * f64::EPSILON,
            "reported residuals are the explicit ones"
        );
        for i in 0..rank {
            assert!(
                (r.s[i] - spec[i]).abs() <= tol * spec[0],
                "{n} x {m}: s_{i} = {} vs {}",
                r.s[i],
                spec[i]
            );
        }
        let ot = eps_tol(n, m);
        assert!(orthonormality_error(&r.u) <= ot && orthonormality_error(&r.v) <= ot);
        // The cut falls between 2.0 and the tail's 1.5: the subspaces are the dense SVD's.
        let d = dense_svd(g.view(), 10).unwrap();
        let sub = r.truncate(10);
        assert!(max_principal_angle_sin(d.u.view(), sub.u.view()).unwrap() <= 1e3 * tol);
        assert!(max_principal_angle_sin(d.v.view(), sub.v.view()).unwrap() <= 1e3 * tol);
    }
    // Bad input: NaN entries and ranks beyond the matrix are typed errors.
    let mut bad = with_spectrum(50, 40, &spec[..30], 1);
    assert!(matches!(
        gram_svd_operator(&bad, 41),
        Err(SolverError::InvalidRank { .. })
    ));
    bad[[3, 4]] = f64::NAN;
    assert!(matches!(gram_svd_operator(&bad, 5), Err(SolverError::NonFinite)));
}

#[test]
fn the_gram_route_is_accurate_at_any_scale() {
    // A flat spectrum (s_1 / s_n = 2) of order 600 at scales 1e-4 and 1e4: the Gram matrix's
    // entries lie near 1e-8 and 1e8, where faer's eigensolver, which stops at absolute
    // tolerances, needs `symmetric_eigen_top_owned`'s scaling (unscaled, Table 1's Cora SNE
    // kernel at order 2595 got residuals of 2.8e-8 s_1 from the Gram route).
    let (n, rank) = (600, 250);
    for scale in [1e-4, 1.0, 1e4] {
        let spec: Vec<f64> = (0..n).map(|i| scale * (1.0 - 0.5 * i as f64 / n as f64)).collect();
        let g = with_spectrum(n, n, &spec, 3);
        let r = gram_svd_operator(&g, rank).unwrap();
        let ex = explicit_residual(&g, &r);
        assert!(ex <= 64.0 * eps_tol(n, n), "scale {scale:e}: explicit residual {ex:e}");
        for i in 0..rank {
            assert!(
                (r.s[i] - spec[i]).abs() <= eps_tol(n, n) * spec[0],
                "scale {scale:e}: s_{i} = {:e} vs {:e}",
                r.s[i],
                spec[i]
            );
        }
    }
}

#[test]
fn auto_takes_the_gram_route_where_krylov_stalls_and_the_dense_svd_costs_too_much() {
    // Ten distinct values, then a band of 200 values within 1e-7 (neighbours 5e-10 apart) that
    // the rank cuts through, then a tail below 0.5. A residual of 1e-8 asks block Lanczos to
    // resolve the band to a fraction of its width, a Krylov degree in the thousands: its first
    // attempt stalls, as on BlogCatalog's SNE kernel. At order 1000 and rank 20 the dense SVD
    // costs more than ten Krylov estimates, the Gram route less than twenty.
    let n = 1000;
    let mut s: Vec<f64> = (0..10).map(|i| 1.0 - 0.005 * i as f64).collect();
    s.extend((0..200).map(|i| 0.9 + 1e-7 * (1.0 - i as f64 / 199.0)));
    s.extend((0..n - 210).map(|i| 0.5 * 0.995f64.powi(i as i32)));
    let g = with_spectrum(n, n, &s, 3);
    let params = AutoParams {
        tol: 1e-8,
        ..Default::default()
    };
    let (r, choice) = auto_svd(&g, 20, &params, &mut |_| {}).unwrap();
    assert_eq!(choice, AutoChoice::Gram);
    let ex = explicit_residual(&g, &r);
    assert!(ex <= 1e-8, "explicit residual {ex:e}");
    for i in 0..20 {
        assert!((r.s[i] - s[i]).abs() <= 1e-8, "s_{i} = {} vs {}", r.s[i], s[i]);
    }
    let ot = eps_tol(n, n);
    assert!(orthonormality_error(&r.u) <= ot && orthonormality_error(&r.v) <= ot);
}
