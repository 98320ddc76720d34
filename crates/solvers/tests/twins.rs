//! The twin split: exactly repeated singular values of twin nodes taken from the symmetry, the
//! rest from the reduced operator; agreement with the dense SVD, residuals, orthonormality, the
//! flag for a rank that cuts a repeated value, and operators that lack the symmetry.
use ksvd_kernels::Centering;
use ksvd_linalg::random::{gaussian_matrix, rng_from_seed};
use ksvd_linalg::{CsrMatrix, Twins};
use ksvd_solvers::*;
use ndarray::Array2;

/// A directed graph of `hubs` citing papers: hub `h` cites `sizes[h]` papers that nothing else
/// cites (twins), plus a few random arcs among the hubs; `X = D⁻¹ (A + I)`.
fn graph(sizes: &[usize], seed: u64) -> CsrMatrix {
    let hubs = sizes.len();
    let n = hubs + sizes.iter().sum::<usize>();
    let mut arcs = vec![];
    let mut next = hubs;
    for (h, &k) in sizes.iter().enumerate() {
        for _ in 0..k {
            arcs.push((h, next));
            next += 1;
        }
    }
    let noise = gaussian_matrix(&mut rng_from_seed(seed), hubs, hubs);
    for a in 0..hubs {
        for b in 0..hubs {
            if a != b && noise[[a, b]] > 0.8 {
                arcs.push((a, b));
            }
        }
    }
    let mut deg = vec![1.0; n];
    for &(a, _) in &arcs {
        deg[a] += 1.0;
    }
    let mut t: Vec<(usize, usize, f64)> = arcs.iter().map(|&(a, b)| (a, b, 1.0 / deg[a])).collect();
    t.extend((0..n).map(|i| (i, i, 1.0 / deg[i])));
    CsrMatrix::from_triplets(n, n, t).unwrap()
}

/// A dense matrix built from `X` by a permutation-invariant rule (so twins of `X` are twins of
/// it): an RBF kernel of the rows of `X` against its columns, centred on both sides.
fn kernel(x: &CsrMatrix, gamma: f64) -> Array2<f64> {
    let d = x.to_dense();
    let n = d.nrows();
    let mut g = Array2::from_shape_fn((n, n), |(i, j)| {
        let diff = &d.row(i) - &d.column(j);
        (-diff.dot(&diff) / (gamma * gamma)).exp()
    });
    Centering::center_dense(&mut g).unwrap();
    g
}

fn orthonormality(a: &Array2<f64>) -> f64 {
    (a.t().dot(a) - Array2::<f64>::eye(a.ncols()))
        .iter()
        .fold(0.0, |m, x| m.max(x.abs()))
}

#[test]
fn split_matches_the_dense_svd_with_repeated_values() {
    let x = graph(&[6, 4, 4, 1, 3, 2], 3);
    let twins = Twins::of_square(&x).unwrap();
    // Classes: the papers of each hub with at least two (hubs 3 has one).
    assert_eq!(twins.classes().len(), 5);
    assert_eq!(twins.n_twin_triplets(), 5 + 3 + 3 + 2 + 1);
    let g = kernel(&x, 0.9);
    let n = g.nrows();
    let exact = dense_svd(g.view(), n).unwrap();
    let s1 = exact.s[0];
    let eps = f64::EPSILON * n as f64;
    for rank in [1, 5, 12, 20, n] {
        let (r, info) = twin_split_svd(&g, &twins, rank, 1e-10, |red, k| dense_svd_operator(red, k)).unwrap();
        assert_eq!(r.rank(), rank);
        assert_eq!(info.reduced_dim, n - 14);
        for i in 0..rank {
            assert!((r.s[i] - exact.s[i]).abs() <= 1e2 * eps * s1, "rank {rank}, value {i}");
        }
        assert!(r.max_residual().unwrap() <= 1e2 * eps, "rank {rank}");
        assert!(orthonormality(&r.u) <= 1e2 * eps && orthonormality(&r.v) <= 1e2 * eps);
        assert!(info.twin_residual <= 1e2 * eps);
    }
    // At full rank every twin triplet is used, and the values repeat as the classes say.
    let (full, info) = twin_split_svd(&g, &twins, n, 1e-10, |red, k| dense_svd_operator(red, k)).unwrap();
    assert_eq!(info.twin_triplets_used, 14);
    let copies = |v: f64| full.s.iter().filter(|&&s| (s - v).abs() <= 1e2 * eps * s1).count();
    for c in twins.classes() {
        let lambda = (g[[c[0], c[0]]] - g[[c[0], c[1]]]).abs();
        assert!(copies(lambda) >= c.len() - 1, "class {c:?}: {lambda}");
    }
}

#[test]
fn a_krylov_solver_on_the_reduced_operator_is_certified() {
    let x = graph(&[8, 8, 5, 3, 2, 6, 1, 1], 5);
    let twins = Twins::of_square(&x).unwrap();
    let g = kernel(&x, 1.1);
    let exact = dense_svd(g.view(), 12).unwrap();
    let p = LanczosParams {
        tol: 1e-10,
        ..LanczosParams::default()
    };
    let (r, info) = twin_split_svd(&g, &twins, 12, 1e-10, |red, k| lanczos_svd(red, k, &p)).unwrap();
    assert!(info.twin_triplets_used > 0);
    for i in 0..12 {
        assert!(
            (r.s[i] - exact.s[i]).abs() <= 1e-9 * exact.s[0],
            "{i}: {} vs {}",
            r.s[i],
            exact.s[i]
        );
    }
    assert!(r.max_residual().unwrap() <= 1e-9);
}

#[test]
fn a_rank_inside_a_repeated_value_is_flagged() {
    let x = graph(&[6, 4, 4, 1, 3, 2], 3);
    let twins = Twins::of_square(&x).unwrap();
    let g = kernel(&x, 0.9);
    let n = g.nrows();
    let exact = dense_svd(g.view(), n).unwrap();
    let tol = 1e-10;
    let mut tied_ranks = 0;
    for rank in 1..n {
        let (r, info) = twin_split_svd(&g, &twins, rank, tol, |red, k| dense_svd_operator(red, k)).unwrap();
        let tied = (exact.s[rank - 1] - exact.s[rank]).abs() <= tol * exact.s[0];
        assert_eq!(info.split_cluster, tied, "rank {rank}: {:?}", r.s);
        tied_ranks += usize::from(tied);
    }
    // The classes of 6, 4, 4, 3 and 2 twins repeat their values 5, 3, 3, 2 and 1 times.
    assert!(tied_ranks >= 14 - 5, "{tied_ranks}");
}

#[test]
fn an_operator_without_the_symmetry_is_refused() {
    let x = graph(&[4, 3], 1);
    let twins = Twins::of_square(&x).unwrap();
    let mut g = kernel(&x, 0.9);
    let c = twins.classes()[0].clone();
    g[[c[0], 0]] += 0.1;
    let out = twin_split_svd(&g, &twins, 3, 1e-10, |red, k| dense_svd_operator(red, k));
    assert!(matches!(out, Err(SolverError::NotInvariant { .. })), "{out:?}");
}

#[test]
fn bad_input_is_a_typed_error() {
    let x = graph(&[3, 2], 1);
    let twins = Twins::of_square(&x).unwrap();
    let g = kernel(&x, 0.9);
    let n = g.nrows();
    let solve = |red: &ksvd_linalg::TwinReduced<'_, Array2<f64>>, k: usize| dense_svd_operator(red, k);
    assert!(matches!(
        twin_split_svd(&g, &twins, 0, 1e-10, solve),
        Err(SolverError::InvalidRank { .. })
    ));
    assert!(matches!(
        twin_split_svd(&g, &twins, n + 1, 1e-10, solve),
        Err(SolverError::InvalidRank { .. })
    ));
    assert!(matches!(
        twin_split_svd(&g, &twins, 2, f64::NAN, solve),
        Err(SolverError::InvalidParameter { .. })
    ));
    let other = Twins::from_classes(n + 1, vec![vec![0, 1]]).unwrap();
    let g2 = Array2::<f64>::zeros((n, n));
    assert!(matches!(
        twin_split_svd(&g2, &other, 2, 1e-10, |red, k| dense_svd_operator(red, k)),
        Err(SolverError::ShapeMismatch { .. })
    ));
    // The solve's own error comes back unchanged.
    let failed = twin_split_svd(&g, &twins, 2, 1e-10, |_, _| Err::<SvdResult, _>(SolverError::NonFinite));
    assert!(matches!(failed, Err(SolverError::NonFinite)));
}
