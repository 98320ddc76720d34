//! Kernel matrices against a brute-force, entry-by-entry reference.
use ksvd_kernels::graph::{bandwidth_rule, graph_samples, transform_adjacency, GraphInput};
use ksvd_kernels::{compat, Centering, Compat, Kernel, KernelError, KernelKind, KernelMatrix, Samples};
use ksvd_linalg::random::{gaussian_matrix, rng_from_seed};
use ksvd_linalg::Vocabulary;
use ksvd_linalg::{materialize, CsrMatrix, LinearOperator, MatrixBlocks, Twins};
use ndarray::{Array2, ArrayView2};
use proptest::prelude::*;

/// `G_ij = k(x_i, z_j)` entry by entry; SNE rows divided by their sums.
fn reference(x: ArrayView2<f64>, z: ArrayView2<f64>, k: Kernel) -> Array2<f64> {
    let mut g = Array2::from_shape_fn((x.nrows(), z.nrows()), |(i, j)| {
        k.eval_pair(x.row(i).as_slice().unwrap(), z.row(j).as_slice().unwrap())
            .unwrap()
    });
    if let Kernel::Sne { .. } = k {
        for mut r in g.outer_iter_mut() {
            let s = r.sum();
            r /= s;
        }
    }
    g
}

fn max_abs_diff(a: &Array2<f64>, b: &Array2<f64>) -> f64 {
    assert_eq!(a.dim(), b.dim());
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max)
}

fn tol(a: &Array2<f64>) -> f64 {
    let scale = a.iter().fold(1.0f64, |m, v| m.max(v.abs()));
    let n = a.nrows().max(a.ncols()) as f64;
    64.0 * f64::EPSILON * n.sqrt() * scale
}

/// `G[I, J] W` and `G[I, J]ᵀ W` (with repeated indices) against the dense reference.
fn check_fused_products(g: &KernelMatrix, want: &Array2<f64>, label: &str) {
    let (n, m) = want.dim();
    let rows: Vec<usize> = vec![n - 1, 0, 2 % n, 0];
    let cols: Vec<usize> = vec![1 % m, m - 1, 1 % m];
    let sub = Array2::from_shape_fn((rows.len(), cols.len()), |(a, b)| want[[rows[a], cols[b]]]);
    let w = gaussian_matrix(&mut rng_from_seed(77), cols.len(), 2);
    let got = g.block_mul(&rows, &cols, w.view()).unwrap();
    let exp = sub.dot(&w);
    assert!(max_abs_diff(&got, &exp) <= 4.0 * tol(&exp), "{label}: block_mul");
    let w2 = gaussian_matrix(&mut rng_from_seed(78), rows.len(), 3);
    let got = g.block_t_mul(&rows, &cols, w2.view()).unwrap();
    let exp = sub.t().dot(&w2);
    assert!(max_abs_diff(&got, &exp) <= 4.0 * tol(&exp), "{label}: block_t_mul");
    assert!(g.block_mul(&rows, &cols, w2.view()).is_err());
}

/// One kernel of every built-in kind (the vocabulary's), polynomial of degree 2.
fn kernels() -> Vec<Kernel> {
    KernelKind::ALL.iter().filter_map(|k| k.kernel(1.3, 2, 1.0)).collect()
}

/// A sparse random 0/1-ish matrix with some empty rows.
fn sparse_random(n: usize, m: usize, density: f64, seed: u64) -> Array2<f64> {
    use rand::Rng;
    let mut rng = rng_from_seed(seed);
    Array2::from_shape_fn((n, m), |_| {
        if rng.gen::<f64>() < density {
            rng.gen_range(0.5..1.5)
        } else {
            0.0
        }
    })
}

#[test]
fn dense_and_sparse_paths_agree_with_reference() {
    // Dense-ish sparse inputs (blocked evaluation) and very sparse ones (rank one plus sparse).
    check_paths(sparse_random(23, 9, 0.3, 1), sparse_random(17, 9, 0.3, 2), false);
    check_paths(sparse_random(50, 60, 0.02, 5), sparse_random(40, 60, 0.02, 6), true);
}

fn check_paths(x: Array2<f64>, z: Array2<f64>, expect_structured: bool) {
    let (n, m) = (x.nrows(), z.nrows());
    let v = gaussian_matrix(&mut rng_from_seed(3), m, 3);
    let u = gaussian_matrix(&mut rng_from_seed(4), n, 2);
    for k in kernels() {
        let want = reference(x.view(), z.view(), k);
        for (sparse, store) in [(false, true), (false, false), (true, true), (true, false)] {
            let (xs, zs) = if sparse {
                (
                    Samples::sparse(CsrMatrix::from_dense(x.view()).unwrap()).unwrap(),
                    Samples::sparse(CsrMatrix::from_dense(z.view()).unwrap()).unwrap(),
                )
            } else {
                (Samples::dense(x.clone()).unwrap(), Samples::dense(z.clone()).unwrap())
            };
            // Stored when it fits the budget (these do), matrix-free blocks otherwise.
            let g = if store {
                KernelMatrix::new(xs, zs, k).unwrap()
            } else {
                KernelMatrix::matrix_free(xs, zs, k).unwrap()
            };
            let structured = sparse && expect_structured && !matches!(k, Kernel::Laplacian { .. });
            assert_eq!(g.is_rank_one_plus_sparse(), structured, "{k} sparse={sparse}");
            assert_eq!(g.is_stored(), store && !structured, "{k} sparse={sparse} store={store}");
            assert_eq!(
                g.is_matrix_free(),
                !store && !structured,
                "{k} sparse={sparse} store={store}"
            );
            let got = materialize(&g).unwrap();
            assert!(
                max_abs_diff(&got, &want) <= tol(&want),
                "{k} sparse={sparse}: {}",
                max_abs_diff(&got, &want)
            );
            let gv = g.apply(v.view()).unwrap();
            let want_gv = want.dot(&v);
            assert!(max_abs_diff(&gv, &want_gv) <= tol(&want_gv) * 4.0, "{k} apply");
            let gtu = g.apply_transpose(u.view()).unwrap();
            let want_gtu = want.t().dot(&u);
            assert!(
                max_abs_diff(&gtu, &want_gtu) <= tol(&want_gtu) * 4.0,
                "{k} apply_transpose"
            );
            let rn = g.row_sq_norms().unwrap();
            let cn = g.col_sq_norms().unwrap();
            for i in 0..n {
                let w = want.row(i).dot(&want.row(i));
                assert!((rn[i] - w).abs() <= 1e-12 * w.max(1.0), "{k} row norm {i}");
            }
            for j in 0..m {
                let w = want.column(j).dot(&want.column(j));
                assert!((cn[j] - w).abs() <= 1e-12 * w.max(1.0), "{k} col norm {j}");
            }
            let rows = [4, 0, n - 1];
            let cols = [m - 1, 3];
            let b = g.block(&rows, &cols).unwrap();
            let wb = Array2::from_shape_fn((3, 2), |(a, c)| want[[rows[a], cols[c]]]);
            assert!(max_abs_diff(&b, &wb) <= tol(&want), "{k} block");
            check_fused_products(&g, &want, &format!("{k} sparse={sparse}"));
        }
    }
}

#[test]
fn sparse_plus_low_rank_structure_is_the_matrix_itself_centred_or_not() {
    let a = sparse_random(50, 50, 0.04, 13);
    let adj = CsrMatrix::from_dense(a.view()).unwrap();
    let (x, z) = graph_samples(&adj, GraphInput::RowNormalizedSelfLoops).unwrap();
    for k in [Kernel::Sne { gamma: 0.6 }, Kernel::Rbf { gamma: 0.8 }] {
        let plain = KernelMatrix::new(x.clone(), z.clone(), k).unwrap();
        for (g, k_rank) in [(plain.clone(), 1), (plain.centered().unwrap(), 3)] {
            let want = g.to_dense().unwrap();
            let sp = g.sparse_plus_low_rank().expect("sparse inputs have the structure");
            assert_eq!(sp.left.ncols(), k_rank);
            let got = sp.sparse.to_dense() + sp.left.dot(&sp.right.t());
            assert!(
                max_abs_diff(&got, &want) <= tol(&want),
                "{k:?} centred={}",
                g.is_centered()
            );
        }
    }
    // Dense inputs have no such structure.
    let dense = KernelMatrix::new(
        Samples::dense(x.to_dense()).unwrap(),
        Samples::dense(z.to_dense()).unwrap(),
        Kernel::Sne { gamma: 0.6 },
    )
    .unwrap();
    assert!(dense.sparse_plus_low_rank().is_none());
}

#[test]
fn twin_reduced_kernels_keep_the_sparse_plus_low_rank_structure() {
    // Node 0 cites nodes 1..=5, which nothing else touches (twins); random arcs among the rest.
    let mut a = sparse_random(40, 40, 0.06, 17);
    for i in 0..40 {
        for j in 1..=5 {
            a[[i, j]] = 0.0;
            a[[j, i]] = 0.0;
        }
    }
    for j in 1..=5 {
        a[[0, j]] = 1.0;
    }
    let adj = CsrMatrix::from_dense(a.view()).unwrap();
    let x = transform_adjacency(&adj, GraphInput::RowNormalizedSelfLoops).unwrap();
    let twins = Twins::of_square(&x).unwrap();
    assert!(twins.classes().iter().any(|c| c == &vec![1, 2, 3, 4, 5]));
    let xs = Samples::sparse(x.clone()).unwrap();
    let zs = Samples::sparse(x.transpose()).unwrap();
    for k in [Kernel::Sne { gamma: 0.6 }, Kernel::Rbf { gamma: 0.8 }] {
        let plain = KernelMatrix::new(xs.clone(), zs.clone(), k).unwrap();
        for g in [plain.clone(), plain.centered().unwrap()] {
            let reduced = twins.reduced(&g).unwrap();
            let want = reduced.to_dense().unwrap();
            let sp = reduced
                .sparse_plus_low_rank()
                .expect("a reduced sparse-plus-low-rank kernel has the structure");
            assert_eq!(sp.sparse.nrows(), twins.reduced_dim());
            let got = sp.sparse.to_dense() + sp.left.dot(&sp.right.t());
            assert!(
                max_abs_diff(&got, &want) <= tol(&want),
                "{k:?} centred={}",
                g.is_centered()
            );
        }
    }
}

#[test]
fn sne_rows_sum_to_one_and_sparse_normalisers_are_exact() {
    let a = sparse_random(60, 60, 0.03, 7);
    let adj = CsrMatrix::from_dense(a.view()).unwrap();
    for input in [
        GraphInput::Raw,
        GraphInput::RowNormalized,
        GraphInput::RowNormalizedSelfLoops,
    ] {
        let (x, z) = graph_samples(&adj, input).unwrap();
        let dense_x = Samples::dense(x.to_dense()).unwrap();
        let dense_z = Samples::dense(z.to_dense()).unwrap();
        let k = Kernel::Sne { gamma: 0.7 };
        let gs = KernelMatrix::new(x, z, k).unwrap();
        let gd = KernelMatrix::new(dense_x, dense_z, k).unwrap();
        assert!(gs.is_rank_one_plus_sparse() && !gd.is_rank_one_plus_sparse());
        let ls = gs.log_normalizers().unwrap();
        let ld = gd.log_normalizers().unwrap();
        for (a, b) in ls.iter().zip(ld) {
            assert!((a - b).abs() <= 64.0 * f64::EPSILON * (1.0 + a.abs()), "{a} vs {b}");
        }
        let sums = gs.apply(Array2::ones((60, 1)).view()).unwrap();
        assert!(sums.iter().all(|s| (s - 1.0).abs() < 1e-13));
    }
}

#[test]
fn graph_inner_products_are_a_times_a() {
    let a = sparse_random(12, 12, 0.25, 9);
    let adj = CsrMatrix::from_dense(a.view()).unwrap();
    let (x, z) = graph_samples(&adj, GraphInput::Raw).unwrap();
    let g = KernelMatrix::new(x, z, Kernel::Linear).unwrap();
    let aa = a.dot(&a);
    assert!(max_abs_diff(&materialize(&g).unwrap(), &aa) < 1e-13);
    let t = transform_adjacency(&adj, GraphInput::RowNormalizedSelfLoops).unwrap();
    for (i, s) in t.row_sums().iter().enumerate() {
        assert!((s - 1.0).abs() < 1e-14, "row {i}");
        let off_diag: f64 = a
            .row(i)
            .iter()
            .enumerate()
            .filter(|(j, _)| *j != i)
            .map(|(_, v)| v)
            .sum();
        assert!((t.get(i, i).unwrap() - 1.0 / (1.0 + off_diag)).abs() < 1e-15);
    }
}

#[test]
fn centering_equals_h_g_h() {
    let x = gaussian_matrix(&mut rng_from_seed(11), 9, 4);
    let z = gaussian_matrix(&mut rng_from_seed(12), 7, 4);
    for (k, store) in [
        (Kernel::Rbf { gamma: 2.0 }, true),
        (Kernel::Sne { gamma: 1.5 }, true),
        (Kernel::Rbf { gamma: 2.0 }, false),
        (Kernel::Sne { gamma: 1.5 }, false),
    ] {
        let (xs, zs) = (Samples::dense(x.clone()).unwrap(), Samples::dense(z.clone()).unwrap());
        let g = if store {
            KernelMatrix::new(xs, zs, k).unwrap()
        } else {
            KernelMatrix::matrix_free(xs, zs, k).unwrap()
        };
        assert_eq!(g.is_stored(), store);
        let raw = materialize(&g).unwrap();
        let hn = Array2::<f64>::eye(9) - Array2::from_elem((9, 9), 1.0 / 9.0);
        let hm = Array2::<f64>::eye(7) - Array2::from_elem((7, 7), 1.0 / 7.0);
        let want = hn.dot(&raw).dot(&hm);
        let gc = g.centered().unwrap();
        assert!(max_abs_diff(&materialize(&gc).unwrap(), &want) < 1e-14);
        let cols: Vec<usize> = (0..7).collect();
        let rows: Vec<usize> = (0..9).collect();
        assert!(max_abs_diff(&gc.block(&rows, &cols).unwrap(), &want) < 1e-14);
        // Out-of-sample evaluation at the training points reproduces G̃.
        check_fused_products(&gc, &want, &format!("centred {k}"));
        let oos = gc.cross_rows(gc.x(), &cols).unwrap();
        assert!(max_abs_diff(&oos, &want) < 1e-13);
        let oos_c = gc.cross_cols(&rows, gc.z()).unwrap();
        assert!(max_abs_diff(&oos_c, &want) < 1e-13);
        // One arithmetic for a stored G: centred once in place, exactly `Centering::center_dense`.
        if store {
            let mut dense = raw.clone();
            let means = Centering::center_dense(&mut dense).unwrap();
            assert_eq!(materialize(&gc).unwrap(), dense, "{k}");
            assert_eq!(gc.stats().centering.as_ref(), Some(&means));
        }
        // Centring a centred matrix changes nothing, and the matrix-free copy (which applies the
        // centring in every product) is the same operator.
        let twice = gc.clone().centered().unwrap();
        assert_eq!(materialize(&twice).unwrap(), materialize(&gc).unwrap());
        assert_eq!(twice.stats(), gc.stats());
        let free = gc.to_matrix_free();
        assert!(free.is_matrix_free() && free.is_centered());
        check_fused_products(&free, &want, &format!("centred, matrix-free copy, {k}"));
    }
}

#[test]
fn bad_inputs_are_typed_errors() {
    let x = Array2::<f64>::ones((3, 2));
    assert!(matches!(
        Samples::dense(ndarray::array![[1.0, f64::NAN]]),
        Err(KernelError::Linalg(ksvd_linalg::LinalgError::NonFinite { .. }))
    ));
    assert!(matches!(
        Samples::dense(Array2::zeros((0, 3))),
        Err(KernelError::Empty { .. })
    ));
    let xs = Samples::dense(x.clone()).unwrap();
    let zs = Samples::dense(Array2::ones((2, 3))).unwrap();
    assert!(matches!(
        KernelMatrix::new(xs.clone(), zs, Kernel::Linear),
        Err(KernelError::DimensionMismatch { x_dim: 2, z_dim: 3 })
    ));
    for gamma in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        for k in [
            Kernel::Rbf { gamma },
            Kernel::Sne { gamma },
            Kernel::Laplacian { gamma },
        ] {
            assert!(matches!(
                KernelMatrix::new(xs.clone(), xs.clone(), k),
                Err(KernelError::InvalidParameter { name: "gamma", .. })
            ));
        }
    }
    assert!(matches!(
        KernelMatrix::new(xs.clone(), xs.clone(), Kernel::Polynomial { degree: 0, offset: 1.0 }),
        Err(KernelError::InvalidParameter { name: "degree", .. })
    ));
    // Far-apart points with a tiny bandwidth: every SNE numerator underflows.
    let far = Samples::dense(ndarray::array![[0.0], [1.0]]).unwrap();
    let farz = Samples::dense(ndarray::array![[1e6]]).unwrap();
    assert!(matches!(
        KernelMatrix::new(far, farz, Kernel::Sne { gamma: 1e-3 }),
        Ok(_) | Err(KernelError::DegenerateNormalizer { .. })
    ));
    let g = KernelMatrix::new(xs.clone(), xs, Kernel::Linear).unwrap();
    assert!(g.block(&[3], &[0]).is_err());
    assert!(g.apply(Array2::zeros((5, 1)).view()).is_err());
}

#[test]
fn compatibility_matrices_have_the_right_shapes_and_properties() {
    let wide = gaussian_matrix(&mut rng_from_seed(21), 4, 9); // N = 4 < M = 9
    let tall = gaussian_matrix(&mut rng_from_seed(22), 9, 4);
    for c in [Compat::PseudoInverse, Compat::Pca, Compat::Random { seed: 5 }] {
        let w = compat::compatible_samples(wide.view(), c).unwrap();
        assert_eq!((w.x.len(), w.x.dim(), w.z.len(), w.z.dim()), (4, 4, 9, 4));
        let t = compat::compatible_samples(tall.view(), c).unwrap();
        assert_eq!((t.x.len(), t.x.dim(), t.z.len(), t.z.dim()), (9, 4, 4, 4));
    }
    // a0: X C_x = X Xᵀ (X Xᵀ)^† = I for full row rank X.
    let w = compat::compatible_samples(wide.view(), Compat::PseudoInverse).unwrap();
    let xd = w.x.to_dense();
    assert!(max_abs_diff(&xd, &Array2::eye(4)) < 1e-12);
    // a1: C has orthonormal columns.
    let c = compat::compat_matrix(wide.view(), Compat::Pca).unwrap();
    assert!(max_abs_diff(&c.t().dot(&c), &Array2::eye(4)) < 1e-13);
    // a2 is reproducible from its seed.
    let c1 = compat::compat_matrix(wide.view(), Compat::Random { seed: 3 }).unwrap();
    let c2 = compat::compat_matrix(wide.view(), Compat::Random { seed: 3 }).unwrap();
    assert_eq!(c1, c2);
}

#[test]
fn bandwidth_rule_matches_definition() {
    let a = ndarray::array![[0.0, 1.0], [0.5, 0.0]];
    let s = Samples::sparse(CsrMatrix::from_dense(a.view()).unwrap()).unwrap();
    let mean = 1.5 / 4.0;
    let var = (1.0 + 0.25) / 4.0 - mean * mean;
    assert!((bandwidth_rule(&s, 0.5) - 0.5 * (2.0 * var as f64).sqrt()).abs() < 1e-15);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn sne_rows_sum_to_one_any_shape(n in 1usize..12, m in 1usize..12, d in 1usize..5, seed in 0u64..1000, gamma in 0.3f64..3.0) {
        let x = gaussian_matrix(&mut rng_from_seed(seed), n, d);
        let z = gaussian_matrix(&mut rng_from_seed(seed + 1), m, d);
        let g = KernelMatrix::new(Samples::dense(x).unwrap(), Samples::dense(z).unwrap(), Kernel::Sne { gamma }).unwrap();
        let sums = g.apply(Array2::ones((m, 1)).view()).unwrap();
        prop_assert!(sums.iter().all(|s| (s - 1.0).abs() < 16.0 * f64::EPSILON * m as f64));
    }
}

#[test]
fn stored_and_matrix_free_agree_on_a_larger_sne_kernel() {
    // Large enough for several row chunks in both evaluations; far-apart rows test the
    // normalisation shift (all raw RBF values of a row underflow without it).
    let mut x = gaussian_matrix(&mut rng_from_seed(21), 700, 5);
    let z = gaussian_matrix(&mut rng_from_seed(22), 650, 5);
    x.row_mut(3).fill(40.0);
    let k = Kernel::Sne { gamma: 0.7 };
    let stored = KernelMatrix::new(
        Samples::dense(x.clone()).unwrap(),
        Samples::dense(z.clone()).unwrap(),
        k,
    )
    .unwrap();
    let free = KernelMatrix::matrix_free(Samples::dense(x).unwrap(), Samples::dense(z).unwrap(), k).unwrap();
    assert!(stored.is_stored() && free.is_matrix_free());
    let a = stored.to_dense().unwrap();
    let b = free.to_dense().unwrap();
    // Exponents of size |log S_i| carry absolute rounding errors of about eps |log S_i|, so the
    // two evaluation orders agree to that, relative to the entries (at most 1).
    let ln = stored.log_normalizers().unwrap();
    for (i, (ra, rb)) in a.outer_iter().zip(b.outer_iter()).enumerate() {
        let d = ra.iter().zip(rb).map(|(p, q)| (p - q).abs()).fold(0.0, f64::max);
        let t = 64.0 * f64::EPSILON * (650f64).sqrt() * (1.0 + ln[i].abs());
        assert!(d <= t, "row {i}: {d:e} > {t:e}");
    }
    for r in a.outer_iter() {
        assert!((r.sum() - 1.0).abs() <= 64.0 * f64::EPSILON * (650f64).sqrt());
    }
    let (la, lb) = (stored.log_normalizers().unwrap(), free.log_normalizers().unwrap());
    assert!(la
        .iter()
        .zip(lb)
        .all(|(p, q)| (p - q).abs() <= 1e-12 * p.abs().max(1.0)));
    let w = gaussian_matrix(&mut rng_from_seed(23), 650, 4);
    let (pa, pb) = (stored.apply(w.view()).unwrap(), free.apply(w.view()).unwrap());
    assert!(max_abs_diff(&pa, &pb) <= 4.0 * tol(&pa));
}

#[test]
fn the_memory_budget_decides_storage() {
    let x = gaussian_matrix(&mut rng_from_seed(1), 600, 3);
    let z = gaussian_matrix(&mut rng_from_seed(2), 500, 3);
    let k = Kernel::Rbf { gamma: 1.0 };
    let small = ksvd_linalg::MemoryBudget::bytes(1 << 20).unwrap(); // 131072 values < 300000
    let big = ksvd_linalg::MemoryBudget::bytes(8 << 20).unwrap();
    let g = KernelMatrix::with_budget(
        Samples::dense(x.clone()).unwrap(),
        Samples::dense(z.clone()).unwrap(),
        k,
        small,
    )
    .unwrap();
    assert!(g.is_matrix_free());
    let h = KernelMatrix::with_budget(Samples::dense(x).unwrap(), Samples::dense(z).unwrap(), k, big).unwrap();
    assert!(h.is_stored());
    let (gd, hd) = (g.to_dense().unwrap(), h.to_dense().unwrap());
    assert!(max_abs_diff(&gd, &hd) <= tol(&hd));
}
