//! Embeddings: the solvers agree on small graphs and the methods compute what they claim (the
//! node-classification pipeline on planted communities is tested with the runner in `xtask`).
use ksvd::{InnerSolver, LanczosParams, RsvdParams, Solver};

use ksvd_graph_tasks::{
    bandwidth, embed, nystrom_embed, EmbeddingSpec, Embeddings, GraphInput, Method, NystromMethod, Scaling,
};
use ksvd_linalg::dense::{matmul, thin_svd};
use ksvd_linalg::CsrMatrix;
use ndarray::{Array2, Axis};

include!("support/planted.rs");

fn spec(method: Method, rank: usize, solver: Solver, gamma: Option<f64>) -> EmbeddingSpec {
    EmbeddingSpec {
        method,
        rank,
        transform: GraphInput::RowNormalizedSelfLoops,
        scaling: Scaling::Vectors,
        center_kernels: true,
        gamma,
        solver,
        seed: 7,
        split_twins: false,
    }
}

/// `‖P_a − P_b‖_F` of the orthogonal projectors onto the column spans (orthonormal columns).
fn projector_distance(a: &Array2<f64>, b: &Array2<f64>) -> f64 {
    let pa = matmul(a.view(), a.t()).unwrap();
    let pb = matmul(b.view(), b.t()).unwrap();
    (&pa - &pb).mapv(|x| x * x).sum().sqrt()
}

fn sides(e: &Embeddings) -> Vec<Array2<f64>> {
    match e {
        Embeddings::Single(x) => vec![x.clone()],
        Embeddings::SourceTarget { source, target } => vec![source.clone(), target.clone()],
    }
}

/// Dense SVD, Lanczos and a randomized SVD whose sketch spans the whole space give the same
/// singular values and the same singular subspaces, for every method. The rank is placed at the
/// largest relative gap of the dense spectrum so that the subspace is well determined.
#[test]
fn solvers_agree_on_a_small_graph() {
    let g = planted(3, 14, 0.3, 0.05, 2);
    let n = g.n_nodes();
    let gamma = bandwidth(&g.adjacency, GraphInput::RowNormalizedSelfLoops, 1.0).unwrap();
    for method in Method::ALL {
        let gm = method.has_bandwidth().then_some(gamma);
        let full = embed(&g.adjacency, &spec(method, n, Solver::Exact, gm)).unwrap();
        let s = &full.singular_values;
        let r = (3..12)
            .max_by(|&a, &b| (s[a - 1] / s[a]).total_cmp(&(s[b - 1] / s[b])))
            .unwrap();
        let gap = (s[r - 1] - s[r]) / s[0];
        let dense = embed(&g.adjacency, &spec(method, r, Solver::Exact, gm)).unwrap();
        let lanczos = embed(
            &g.adjacency,
            &spec(
                method,
                r,
                Solver::Lanczos(LanczosParams {
                    tol: 1e-13,
                    max_restarts: 200,
                    ..LanczosParams::default()
                }),
                gm,
            ),
        )
        .unwrap();
        let rsvd = embed(
            &g.adjacency,
            &spec(
                method,
                r,
                Solver::Rsvd(RsvdParams {
                    oversampling: n,
                    power_iters: 1,
                    ..RsvdParams::default()
                }),
                gm,
            ),
        )
        .unwrap();
        let eps = f64::EPSILON * n as f64;
        for other in [&lanczos, &rsvd] {
            assert_eq!(other.rank, r);
            for i in 0..r {
                assert!(
                    (other.singular_values[i] - dense.singular_values[i]).abs() <= 1e3 * eps * s[0],
                    "{method:?} s[{i}]"
                );
            }
            for (a, b) in sides(&dense.embeddings).iter().zip(sides(&other.embeddings).iter()) {
                // Lanczos: residual 1e-13 relative to s_1 moves the subspace by ~1e-13 / gap.
                let d = projector_distance(a, b);
                assert!(
                    d <= 1e3 * eps / gap + 1e-11 / gap,
                    "{method:?} rank {r}: subspace distance {d}"
                );
            }
        }
    }
}

/// SVD embeddings are the singular vectors of the transformed adjacency, PCA's those of its
/// column-centred version, and score scaling multiplies by the singular values.
#[test]
fn methods_compute_the_stated_matrices() {
    let g = planted(2, 10, 0.4, 0.1, 4);
    let x = ksvd_kernels::graph::transform_adjacency(&g.adjacency, GraphInput::RowNormalizedSelfLoops)
        .unwrap()
        .to_dense();
    let xc = &x - &x.mean_axis(Axis(0)).unwrap();
    for (method, m) in [(Method::Svd, &x), (Method::Pca, &xc)] {
        let out = embed(&g.adjacency, &spec(method, 4, Solver::Exact, None)).unwrap();
        let want = thin_svd(m.view()).unwrap();
        for i in 0..4 {
            assert!((out.singular_values[i] - want.s[i]).abs() <= 1e2 * f64::EPSILON * 20.0 * want.s[0]);
        }
        let u = &sides(&out.embeddings)[0];
        let wu = want.u.slice(ndarray::s![.., ..4]).to_owned();
        assert!(projector_distance(u, &wu) < 1e-10);
        let mut sc = spec(method, 4, Solver::Exact, None);
        sc.scaling = Scaling::Scores;
        let scored = embed(&g.adjacency, &sc).unwrap();
        let su = &sides(&scored.embeddings)[0];
        for i in 0..4 {
            let ratio = su.column(i).dot(&su.column(i)).sqrt() / out.singular_values[i];
            assert!((ratio - 1.0).abs() < 1e-12);
        }
    }
    assert!(
        embed(&g.adjacency, &spec(Method::KsvdSne, 4, Solver::Exact, None)).is_err(),
        "kernel methods need a bandwidth"
    );
}

/// With all rows and columns sampled, the asymmetric Nyström embedding spans the exact subspace.
#[test]
fn full_nystrom_matches_the_exact_embedding() {
    let g = planted(2, 12, 0.4, 0.05, 8);
    let n = g.n_nodes();
    let gamma = bandwidth(&g.adjacency, GraphInput::RowNormalizedSelfLoops, 1.0).unwrap();
    let full = embed(&g.adjacency, &spec(Method::KsvdRbf, n, Solver::Exact, Some(gamma))).unwrap();
    let s = &full.singular_values;
    let r = (2..8)
        .max_by(|&a, &b| (s[a - 1] / s[a]).total_cmp(&(s[b - 1] / s[b])))
        .unwrap();
    let exact = embed(&g.adjacency, &spec(Method::KsvdRbf, r, Solver::Exact, Some(gamma))).unwrap();
    let ny = nystrom_embed(
        &g.adjacency,
        NystromMethod::Ksvd,
        &spec(Method::KsvdRbf, r, Solver::Exact, Some(gamma)),
        n,
        InnerSolver::Dense,
    )
    .unwrap();
    assert_eq!(ny.rank, r);
    // Every row and column sampled: the triplets are exact, and both residuals (the inner dense
    // SVD against the block, the Nyström triplets against G) are rounding.
    let tol = 1e3 * f64::EPSILON * n as f64;
    assert!(ny.inner_residual.unwrap() <= tol, "{:?}", ny.inner_residual);
    assert!(ny.max_residual.unwrap() <= tol, "{:?}", ny.max_residual);
    let gap = (s[r - 1] - s[r]) / s[0];
    for (a, b) in sides(&exact.embeddings).iter().zip(sides(&ny.embeddings).iter()) {
        assert!(projector_distance(a, b) < 1e4 * f64::EPSILON * n as f64 / gap);
    }
}

/// Splitting off the twins' exactly repeated values leaves every method's singular values as
/// they were (certified solves of the same matrix), on a planted graph with uncited papers
/// sharing their single citer.
#[test]
fn splitting_twins_keeps_every_methods_values() {
    let g = planted(3, 20, 0.2, 0.02, 11);
    // Nodes 60.. are uncited papers of nodes 0, 1 and 2 (4, 3 and 2 each): 3 twin classes.
    let mut t: Vec<(usize, usize, f64)> = vec![];
    for i in 0..60 {
        let (idx, _) = g.adjacency.row(i);
        t.extend(idx.iter().map(|&j| (i, j, 1.0)));
    }
    let mut next = 60;
    for (citer, k) in [(0, 4), (1, 3), (2, 2)] {
        for _ in 0..k {
            t.push((citer, next, 1.0));
            next += 1;
        }
    }
    let a = CsrMatrix::from_triplets(next, next, t).unwrap();
    let twins = ksvd_linalg::Twins::of_square(&a).unwrap();
    assert_eq!(twins.n_twin_triplets(), 3 + 2 + 1);
    let gamma = bandwidth(&a, GraphInput::RowNormalizedSelfLoops, 1.0).unwrap();
    for method in Method::ALL {
        let gamma = method.has_bandwidth().then_some(gamma);
        let base = spec(method, 20, Solver::Exact, gamma);
        let plain = embed(&a, &base).unwrap();
        let split = embed(
            &a,
            &EmbeddingSpec {
                split_twins: true,
                solver: Solver::Auto { tol: 1e-10 },
                ..base
            },
        )
        .unwrap();
        let s1 = plain.singular_values[0];
        for (p, q) in plain.singular_values.iter().zip(split.singular_values.iter()) {
            assert!((p - q).abs() <= 1e-9 * s1, "{method:?}: {p} vs {q}");
        }
        assert!(split.max_residual.is_some_and(|r| r <= 1e-10), "{method:?}");
    }
}
