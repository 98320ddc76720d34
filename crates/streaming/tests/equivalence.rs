//! The streaming embeddings equal the in-memory Nyström embeddings of `ksvd_nystrom` (same
//! landmarks, same bandwidth, the same a2 projection materialised), on files small enough for
//! both; and they do not depend on the number of threads or (beyond rounding) the chunk size.
//! Embeddings are normalised by the training pass ([`Fitted::train`]).
#![allow(clippy::unwrap_used, clippy::expect_used)]
mod common;

use common::{max_abs_diff, temp_file};
use ksvd_kernels::{Kernel, KernelMatrix, Samples};
use ksvd_linalg::{dense, CsrMatrix, MatrixBlocks};
use ksvd_nystrom::{
    asymmetric_nystrom, symmetric_nystrom, uniform_indices, Gram, InnerSolver, NystromParams, Sampling,
};
use ksvd_solvers::dense_svd_operator;
use ksvd_streaming::{
    fit_kpca, fit_ksvd, Bandwidth, CompatSide, Embedding, LibsvmSource, PartialModel, ProjectionScaling,
    SparseProjection, StreamingParams, Trained,
};
use ndarray::{Array1, Array2};

/// The in-memory kernel matrix of the a2-compatible samples: `C` materialised densely and
/// multiplied by faer (a different route from the streaming accumulation).
fn in_memory_g(x: &CsrMatrix, seed: u64, scaling: ProjectionScaling, gamma: f64) -> (KernelMatrix, CompatSide) {
    let (n, m) = x.shape();
    let xd = x.to_dense();
    let (xs, zs, side) = if n > m {
        let c = SparseProjection::new(n, m, None, scaling, seed).unwrap().to_dense(); // N x M
        let zp = dense::matmul(xd.t(), c.view()).unwrap(); // M x M: row j = z'_j
        (
            Samples::sparse(x.clone()).unwrap(),
            Samples::dense(zp).unwrap(),
            CompatSide::Cols,
        )
    } else if m > n {
        let c = SparseProjection::new(m, n, None, scaling, seed).unwrap().to_dense(); // M x N
        let xp = dense::matmul(xd.view(), c.view()).unwrap(); // N x N: row i = x'_i
        (
            Samples::dense(xp).unwrap(),
            Samples::dense(xd.t().to_owned()).unwrap(),
            CompatSide::Rows,
        )
    } else {
        (
            Samples::sparse(x.clone()).unwrap(),
            Samples::dense(xd.t().to_owned()).unwrap(),
            CompatSide::Square,
        )
    };
    (KernelMatrix::new(xs, zs, Kernel::Rbf { gamma }).unwrap(), side)
}

/// Pass 3 (column normalisation and classifier) over the training file.
fn train<E: PartialModel>(fitted: ksvd_streaming::Fitted<E>, source: &[LibsvmSource]) -> Trained<E> {
    fitted.train(source, 1e-3, None, &mut |_| {}).unwrap()
}

/// `tol` for entries of unit-norm Nyström vectors computed from two roundings of the same
/// block: `c · eps · sqrt(N m) · (s_1 / gap + s_1 / s_r)` (first-order perturbation of the
/// singular vectors and of `S⁻¹`).
fn tolerance(block_s: &Array1<f64>, r: usize, n_rows: usize, m: usize) -> f64 {
    let s0 = block_s[0];
    let gap = (0..r)
        .map(|k| block_s[k] - block_s.get(k + 1).copied().unwrap_or(0.0))
        .fold(f64::INFINITY, f64::min);
    64.0 * f64::EPSILON * ((n_rows * m) as f64).sqrt() * (s0 / gap + s0 / block_s[r - 1])
}

fn check_asymmetric(
    n_rows: usize,
    n_feat: usize,
    n: usize,
    m: usize,
    r: usize,
    scaling: ProjectionScaling,
    want: CompatSide,
) {
    let seed = 17;
    let (_dir, path, x, _) = temp_file(n_rows, n_feat, 0.3, 5 + n_rows as u64);
    let rows = uniform_indices(n_rows, n, seed);
    let cols = uniform_indices(n_feat, m, seed.wrapping_add(0x9e37_79b9));
    let params = StreamingParams::new(r, n)
        .explicit_rows(rows.clone())
        .explicit_cols(cols.clone())
        .projection_scaling(scaling)
        .chunk_rows(7)
        .seed(seed)
        .check()
        .unwrap();
    let source = [LibsvmSource::new(&path).n_features(n_feat)];
    let trained = train(fit_ksvd(&source, &params, &mut |_| {}).unwrap(), &source);
    let model = trained.model();
    assert_eq!(model.side(), want);
    assert_eq!(model.rank(), r, "the block has full numerical rank here");
    assert_eq!(model.row_landmarks(), rows, "the explicit landmark rows");
    let ours = model.embed(&x).unwrap();

    let (g, side) = in_memory_g(&x, seed, scaling, model.gamma());
    assert_eq!(side, want);
    let p = NystromParams {
        rank: r,
        rows: n,
        cols: m,
        sampling: Sampling::Uniform,
        inner: InnerSolver::Dense,
        seed,
        shared_samples: false,
    };
    let ny = asymmetric_nystrom(&g, &p).unwrap();
    assert_eq!(ny.rows, rows, "same landmark rows");
    assert_eq!(ny.cols, cols, "same landmark columns");
    let scale = ((n_rows * n_feat) as f64 / (n * m) as f64).sqrt();
    let block = g.block(&rows, &cols).unwrap() * scale;
    let block_s = dense::singular_values(block.view()).unwrap();
    let tol = tolerance(&block_s, r, n_rows, m);
    let err = max_abs_diff(&ours, &ny.svd.u);
    assert!(
        err <= tol,
        "{want:?}: max |Ũ_stream − Ũ_nystrom| = {err:e} > tol {tol:e}"
    );
    for k in 0..r {
        let ds = (model.singular_values()[k] - ny.svd.s[k]).abs();
        assert!(
            ds <= 16.0 * f64::EPSILON * ((n * m) as f64).sqrt() * block_s[0],
            "singular value {k}: {ds:e}"
        );
    }
}

#[test]
fn columns_mapped_matches_in_memory_nystrom() {
    check_asymmetric(240, 30, 60, 20, 4, ProjectionScaling::NormPreserving, CompatSide::Cols);
    check_asymmetric(180, 25, 40, 25, 5, ProjectionScaling::Unit, CompatSide::Cols);
}

#[test]
fn rows_mapped_matches_in_memory_nystrom() {
    check_asymmetric(50, 120, 30, 40, 4, ProjectionScaling::NormPreserving, CompatSide::Rows);
}

#[test]
fn square_matches_in_memory_nystrom() {
    check_asymmetric(60, 60, 30, 30, 4, ProjectionScaling::NormPreserving, CompatSide::Square);
}

#[test]
fn all_landmarks_give_the_exact_svd() {
    // n = N and m = M: eq. 11 reproduces the exact truncated SVD of G (as in ksvd_nystrom).
    let (n_rows, n_feat, r) = (40, 12, 3);
    let (_dir, path, x, _) = temp_file(n_rows, n_feat, 0.4, 3);
    let params = StreamingParams::new(r, n_rows)
        .col_landmarks(n_feat)
        .bandwidth(Bandwidth::Fixed(4.0))
        .chunk_rows(9)
        .seed(2)
        .check()
        .unwrap();
    let source = [LibsvmSource::new(&path).n_features(n_feat)];
    let trained = train(fit_ksvd(&source, &params, &mut |_| {}).unwrap(), &source);
    let model = trained.model();
    assert_eq!(
        model.row_landmarks(),
        (0..n_rows).collect::<Vec<_>>(),
        "n = N: every row"
    );
    let ours = model.embed(&x).unwrap();
    let (g, _) = in_memory_g(&x, 2, ProjectionScaling::NormPreserving, 4.0);
    let exact = dense_svd_operator(&g, r).unwrap();
    let scale = 1.0; // n = N, m = M
    let s_all = dense::singular_values(ksvd_linalg::materialize(&g).unwrap().view()).unwrap() * scale;
    let tol = tolerance(&s_all, r, n_rows, n_feat);
    let err = max_abs_diff(&ours, &exact.u);
    assert!(err <= tol, "max |Ũ − U_exact| = {err:e} > {tol:e}");
    for k in 0..r {
        assert!(
            (model.singular_values()[k] - exact.s[k]).abs()
                <= 64.0 * f64::EPSILON * ((n_rows * n_feat) as f64).sqrt() * exact.s[0]
        );
    }
}

#[test]
fn kpca_matches_symmetric_nystrom() {
    let (n_rows, n_feat, n, r, seed) = (200, 40, 50, 5, 9);
    let (_dir, path, x, _) = temp_file(n_rows, n_feat, 0.2, 21);
    let rows = uniform_indices(n_rows, n, seed);
    let params = StreamingParams::new(r, n)
        .explicit_rows(rows.clone())
        .chunk_rows(13)
        .seed(seed)
        .check()
        .unwrap();
    let source = [LibsvmSource::new(&path).n_features(n_feat)];
    let trained = train(fit_kpca(&source, &params, &mut |_| {}).unwrap(), &source);
    let model = trained.model();
    let ours = model.embed(&x).unwrap();
    let g = KernelMatrix::new(
        Samples::sparse(x.clone()).unwrap(),
        Samples::sparse(x.clone()).unwrap(),
        Kernel::Rbf { gamma: model.gamma() },
    )
    .unwrap();
    let sym = symmetric_nystrom(&g, Gram::Itself, r, n, seed).unwrap();
    assert_eq!(sym.landmarks, rows);
    let knn = g.block(&rows, &rows).unwrap();
    let w = dense::singular_values(knn.view()).unwrap();
    let tol = tolerance(&w, r, n_rows, n);
    let err = max_abs_diff(&ours, &sym.vectors);
    assert!(err <= tol, "max |Ũ_stream − Ũ_sym| = {err:e} > {tol:e}");
    for k in 0..r {
        let want = sym.values[k] * n as f64 / n_rows as f64; // symmetric_nystrom scales by N/n
        assert!((model.eigenvalues()[k] - want).abs() <= 64.0 * f64::EPSILON * n as f64 * w[0]);
    }
}

fn embed_with_threads(threads: usize, chunk: usize) -> (Array1<f64>, Array2<f64>) {
    let (_dir, path, x, _) = temp_file(700, 35, 0.25, 77);
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
    pool.install(|| {
        let params = StreamingParams::new(6, 80)
            .col_landmarks(20)
            .chunk_rows(chunk)
            .seed(4)
            .check()
            .unwrap();
        let source = [LibsvmSource::new(&path)];
        let trained = train(fit_ksvd(&source, &params, &mut |_| {}).unwrap(), &source);
        let model = trained.model();
        (model.singular_values().clone(), model.embed(&x).unwrap())
    })
}

#[test]
fn deterministic_across_threads_and_chunkings() {
    let (s1, e1) = embed_with_threads(1, 50);
    let (s2, e2) = embed_with_threads(2, 50);
    assert_eq!(s1, s2, "singular values bitwise equal for 1 and 2 threads");
    assert_eq!(e1, e2, "embeddings bitwise equal for 1 and 2 threads");
    let (s3, e3) = embed_with_threads(2, 333);
    assert_eq!(s1, s3, "the fit does not depend on the chunk size");
    let tol = 1e3 * f64::EPSILON * e1.iter().fold(0.0f64, |a, &v| a.max(v.abs()));
    assert!(
        max_abs_diff(&e1, &e3) <= tol,
        "chunk size changes embeddings only by rounding"
    );
}
