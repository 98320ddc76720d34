//! Dense kernels on `faer`, behind `ndarray` types.
//!
//! This module is the only place in ksvd-rs that calls faer. Views are zero-copy: an
//! [`ArrayView2`] becomes a [`faer::MatRef`] with the same pointer and strides.
use crate::error::{LinalgError, Result};
use faer::linalg::solvers::Solve;
use faer::{Accum, Mat, MatMut, MatRef, Par, Side};
use ndarray::{Array1, Array2, ArrayView2, ArrayViewMut2, Axis, ShapeBuilder};
use rayon::prelude::*;

/// The faer parallelism matching the current rayon pool: sequential with one thread.
/// Both settings are deterministic for a fixed thread count.
pub fn parallelism() -> Par {
    let n = rayon::current_num_threads();
    if n <= 1 {
        Par::Seq
    } else {
        Par::rayon(n)
    }
}

/// A zero-copy faer view of an ndarray view.
pub fn as_faer<T>(a: ArrayView2<'_, T>) -> MatRef<'_, T> {
    let (r, c) = a.dim();
    let s = a.strides();
    // SAFETY: the pointer, shape and element strides come from a live ndarray view that
    // outlives the returned reference (same lifetime 'a).
    unsafe { MatRef::from_raw_parts(a.as_ptr(), r, c, s[0], s[1]) }
}

/// A zero-copy mutable faer view of a mutable ndarray view.
pub fn as_faer_mut<T>(mut a: ArrayViewMut2<'_, T>) -> MatMut<'_, T> {
    let (r, c) = a.dim();
    let s = a.strides().to_vec();
    // SAFETY: as in `as_faer`; the mutable borrow is moved into the returned view.
    unsafe { MatMut::from_raw_parts_mut(a.as_mut_ptr(), r, c, s[0], s[1]) }
}

/// Copies a faer matrix into a new (column-major) ndarray.
pub fn to_ndarray(m: MatRef<'_, f64>) -> Array2<f64> {
    let (r, c) = (m.nrows(), m.ncols());
    let mut out = Array2::zeros((r, c).f());
    for j in 0..c {
        for i in 0..r {
            out[[i, j]] = m[(i, j)];
        }
    }
    out
}

fn from_mat(m: Mat<f64>) -> Array2<f64> {
    to_ndarray(m.as_ref())
}

/// `A B` (pass `a.t()` or `b.t()` for transposed operands: views are zero-copy).
pub fn matmul(a: ArrayView2<'_, f64>, b: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
    let mut out = Array2::zeros((a.nrows(), b.ncols()));
    gemm_into(out.view_mut(), a, b, 1.0, false)?;
    Ok(out)
}

/// The column of the largest entry of every row of `a`, the first one on ties (as
/// `numpy.argmax`); a `NaN` entry is never the largest (0 for a row without columns).
pub fn row_argmax(a: ArrayView2<'_, f64>) -> Vec<usize> {
    a.axis_iter(ndarray::Axis(0))
        .map(|row| {
            let mut best = 0;
            for (c, &v) in row.iter().enumerate() {
                if v > row[best] {
                    best = c;
                }
            }
            best
        })
        .collect()
}

/// `out = alpha A B` (or `out += alpha A B` when `accumulate`).
pub fn gemm_into(
    out: ArrayViewMut2<'_, f64>,
    a: ArrayView2<'_, f64>,
    b: ArrayView2<'_, f64>,
    alpha: f64,
    accumulate: bool,
) -> Result<()> {
    gemm_into_t(out, a, b, alpha, accumulate)
}

/// [`gemm_into`] in any of faer's real types (`f64`, or `f32` for a matrix stored in single
/// precision, [`crate::StoredMatrix`]).
pub(crate) fn gemm_into_t<T: faer::traits::ComplexField + Copy + Default>(
    out: ArrayViewMut2<'_, T>,
    a: ArrayView2<'_, T>,
    b: ArrayView2<'_, T>,
    alpha: T,
    accumulate: bool,
) -> Result<()> {
    if a.ncols() != b.nrows() {
        return Err(LinalgError::ShapeMismatch {
            op: "matmul",
            left: a.dim(),
            right: b.dim(),
        });
    }
    if out.dim() != (a.nrows(), b.ncols()) {
        return Err(LinalgError::ShapeMismatch {
            op: "matmul output",
            left: out.dim(),
            right: (a.nrows(), b.ncols()),
        });
    }
    if out.is_empty() {
        return Ok(());
    }
    let mut out = out;
    if a.ncols() == 0 {
        if !accumulate {
            out.fill(T::default());
        }
        return Ok(());
    }
    let beta = if accumulate { Accum::Add } else { Accum::Replace };
    let par = parallelism();
    if par != Par::Seq && narrow_and_tall(out.nrows(), a.ncols(), out.ncols()) {
        // Row blocks of `out` and `A` side by side, each product on one thread.
        let blocks: Vec<_> = out
            .axis_chunks_iter_mut(Axis(0), NARROW_ROW_BLOCK)
            .zip(a.axis_chunks_iter(Axis(0), NARROW_ROW_BLOCK))
            .collect();
        blocks.into_par_iter().for_each(|(o, a)| {
            faer::linalg::matmul::matmul(as_faer_mut(o), beta, as_faer(a), as_faer(b), alpha, Par::Seq);
        });
        return Ok(());
    }
    faer::linalg::matmul::matmul(as_faer_mut(out), beta, as_faer(a), as_faer(b), alpha, par);
    Ok(())
}

/// Whether a product `out (rows × cols) = A (rows × inner) B` is split into row blocks of
/// [`NARROW_ROW_BLOCK`], one sequential faer product each, instead of faer's own parallel
/// split: a tall `A` times a block of a few dozen vectors, as in the orthogonalisation of a
/// Krylov block against its basis (`W −= U C`). faer's parallel kernel keeps two cores only
/// partly busy there (13025 rows, 48 columns, inner 48-1152: 13-22 GFLOP/s against 19-27 split
/// by rows, two AMD EPYC cores). Each entry of `out` is the same sum of the same products in
/// the same order either way, so the result is the same to the bit (tested); wide outputs
/// (faer already fills the cores: 32-40 GFLOP/s at 250-480 columns, 26-33 split) and long inner
/// dimensions (products with a stored `G`) keep faer's split. So do matrix-vector products
/// (one column), whose parallel split in faer sums differently from its sequential one.
fn narrow_and_tall(rows: usize, inner: usize, cols: usize) -> bool {
    (2..=64).contains(&cols) && inner <= 4096 && rows >= 4 * NARROW_ROW_BLOCK
}

/// Rows of each block of a narrow product (see [`narrow_and_tall`]).
const NARROW_ROW_BLOCK: usize = 1024;

/// `out = A B` computed on the calling thread only: for use inside parallel loops that
/// already occupy every core. Shapes must match (checked; a mismatch returns an error).
pub fn gemm_into_seq(out: ArrayViewMut2<'_, f64>, a: ArrayView2<'_, f64>, b: ArrayView2<'_, f64>) -> Result<()> {
    gemm_into_seq_t(out, a, b)
}

/// [`gemm_into_seq`] in any of faer's real types.
pub(crate) fn gemm_into_seq_t<T: faer::traits::ComplexField + Copy + Default>(
    out: ArrayViewMut2<'_, T>,
    a: ArrayView2<'_, T>,
    b: ArrayView2<'_, T>,
) -> Result<()> {
    if a.ncols() != b.nrows() || out.dim() != (a.nrows(), b.ncols()) {
        return Err(LinalgError::ShapeMismatch {
            op: "matmul",
            left: a.dim(),
            right: b.dim(),
        });
    }
    let mut out = out;
    if out.is_empty() {
        return Ok(());
    }
    if a.ncols() == 0 {
        out.fill(T::default());
        return Ok(());
    }
    faer::linalg::matmul::matmul(
        as_faer_mut(out),
        Accum::Replace,
        as_faer(a),
        as_faer(b),
        T::one_impl(),
        Par::Seq,
    );
    Ok(())
}

/// A thin singular value decomposition.
#[derive(Debug, Clone)]
pub struct DenseSvd {
    /// Left singular vectors, `n x k`, `k = min(n, m)`, orthonormal columns.
    pub u: Array2<f64>,
    /// Singular values, non-negative, in descending order.
    pub s: Array1<f64>,
    /// Right singular vectors, `m x k`, orthonormal columns.
    pub v: Array2<f64>,
}

/// The thin SVD `A = U diag(s) V^T` (faer's divide and conquer).
pub fn thin_svd(a: ArrayView2<'_, f64>) -> Result<DenseSvd> {
    let (n, m) = a.dim();
    if n == 0 || m == 0 {
        let k = n.min(m);
        return Ok(DenseSvd {
            u: Array2::zeros((n, k)),
            s: Array1::zeros(k),
            v: Array2::zeros((m, k)),
        });
    }
    crate::error::check_finite("matrix", a)?;
    let svd = as_faer(a).thin_svd().map_err(|e| LinalgError::Factorization {
        op: "SVD",
        reason: format!("{e:?}"),
    })?;
    let s = svd.S().column_vector();
    let s = Array1::from_iter((0..s.nrows()).map(|i| s[i].max(0.0)));
    Ok(DenseSvd {
        u: to_ndarray(svd.U()),
        s,
        v: to_ndarray(svd.V()),
    })
}

/// Singular values only, in descending order.
pub fn singular_values(a: ArrayView2<'_, f64>) -> Result<Array1<f64>> {
    if a.is_empty() {
        return Ok(Array1::zeros(a.nrows().min(a.ncols())));
    }
    crate::error::check_finite("matrix", a)?;
    let s = as_faer(a).singular_values().map_err(|e| LinalgError::Factorization {
        op: "SVD",
        reason: format!("{e:?}"),
    })?;
    Ok(Array1::from_iter(s.into_iter().map(|x| x.max(0.0))))
}

/// Thin QR needs at least as many rows as columns.
fn check_tall(a: ArrayView2<'_, f64>) -> Result<()> {
    if a.nrows() < a.ncols() {
        return Err(LinalgError::ShapeMismatch {
            op: "thin QR (needs rows >= cols)",
            left: a.dim(),
            right: a.dim(),
        });
    }
    Ok(())
}

/// An orthonormal basis of the column space of `a` (`n x k`, `n >= k`): the thin `Q` of a
/// Householder QR factorisation.
pub fn thin_q(a: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
    check_tall(a)?;
    if a.is_empty() {
        return Ok(Array2::zeros(a.dim()));
    }
    Ok(from_mat(as_faer(a).qr().compute_thin_Q()))
}

/// The thin Householder QR factorisation `A = Q R` of `a` (`n x k`, `n >= k`): `Q` is `n x k`
/// with orthonormal columns, `R` is `k x k` upper triangular.
pub fn thin_qr(a: ArrayView2<'_, f64>) -> Result<(Array2<f64>, Array2<f64>)> {
    check_tall(a)?;
    if a.is_empty() {
        return Ok((Array2::zeros(a.dim()), Array2::zeros((a.ncols(), a.ncols()))));
    }
    crate::error::check_finite("matrix", a)?;
    let qr = as_faer(a).qr();
    Ok((from_mat(qr.compute_thin_Q()), to_ndarray(qr.thin_R())))
}

/// The `R` factor (`k x k`, upper triangular) of the thin Householder QR of `a` (`n x k`,
/// `n >= k`), without forming `Q`: half the work of [`thin_qr`].
pub fn thin_r(a: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
    check_tall(a)?;
    if a.is_empty() {
        return Ok(Array2::zeros((a.ncols(), a.ncols())));
    }
    crate::error::check_finite("matrix", a)?;
    Ok(to_ndarray(as_faer(a).qr().thin_R()))
}

/// The first `k` pivot columns of a column-pivoted Householder QR of `a` (Businger–Golub: each
/// pivot is the column of largest norm after projecting out the previous ones), in pivot order.
/// The square block `a[:, pivots]` is then as well conditioned as greedy selection allows, and
/// `a[:, pivots]⁻¹ a` has bounded entries: the block form of partial pivoting.
pub fn pivot_columns(a: ArrayView2<'_, f64>, k: usize) -> Result<Vec<usize>> {
    let k = k.min(a.ncols());
    if a.is_empty() || k == 0 {
        return Ok(Vec::new());
    }
    crate::error::check_finite("matrix", a)?;
    let qr = as_faer(a).col_piv_qr();
    let (forward, _) = qr.P().arrays();
    Ok(forward.iter().take(k).copied().collect())
}

/// Solves `R X = B` for upper-triangular `R` (`k x k`; only the upper triangle is read) and
/// `B` (`k x c`). A zero on the diagonal of `R` yields an error.
pub fn solve_upper_triangular(r: ArrayView2<'_, f64>, b: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
    if r.nrows() != r.ncols() || r.nrows() != b.nrows() {
        return Err(LinalgError::ShapeMismatch {
            op: "triangular solve",
            left: r.dim(),
            right: b.dim(),
        });
    }
    if (0..r.nrows()).any(|i| r[[i, i]] == 0.0 || !r[[i, i]].is_finite()) {
        return Err(LinalgError::Factorization {
            op: "triangular solve",
            reason: "zero or non-finite diagonal entry (singular R)".into(),
        });
    }
    let mut x = b.to_owned();
    faer::linalg::triangular_solve::solve_upper_triangular_in_place(
        as_faer(r),
        as_faer_mut(x.view_mut()),
        parallelism(),
    );
    Ok(x)
}

/// Eigen-decomposition of a symmetric matrix: eigenvalues in **descending** order and the
/// matching orthonormal eigenvectors as columns. Only the lower triangle is read.
pub fn symmetric_eigen(a: ArrayView2<'_, f64>) -> Result<(Array1<f64>, Array2<f64>)> {
    symmetric_eigen_top(a, a.nrows())
}

/// The `k` largest eigenvalues of a symmetric matrix (descending) and their orthonormal
/// eigenvectors, from the full decomposition; only those `k` columns are copied out of faer's
/// factor (an `n × k` result instead of `n × n`). Only the lower triangle is read; `k` above the
/// order is the order.
pub fn symmetric_eigen_top(a: ArrayView2<'_, f64>, k: usize) -> Result<(Array1<f64>, Array2<f64>)> {
    if a.nrows() != a.ncols() {
        return Err(LinalgError::ShapeMismatch {
            op: "symmetric eigen (needs square)",
            left: a.dim(),
            right: a.dim(),
        });
    }
    let n = a.nrows();
    if n == 0 {
        return Ok((Array1::zeros(0), Array2::zeros((0, 0))));
    }
    crate::error::check_finite("matrix", a)?;
    let evd = as_faer(a)
        .self_adjoint_eigen(Side::Lower)
        .map_err(|e| LinalgError::Factorization {
            op: "symmetric eigendecomposition",
            reason: format!("{e:?}"),
        })?;
    let s = evd.S().column_vector();
    let u = evd.U();
    let k = k.min(n);
    let top = (n - k..n).rev();
    let vals = Array1::from_iter(top.clone().map(|i| s[i]));
    let mut vecs = Array2::zeros((n, k).f());
    for (jj, j) in top.enumerate() {
        for i in 0..n {
            vecs[[i, jj]] = u[(i, j)];
        }
    }
    Ok((vals, vecs))
}

/// [`symmetric_eigen_top`] of an owned matrix of any scale. faer's symmetric eigensolver stops
/// at absolute tolerances: on a matrix whose entries are far from one its eigenvectors lose
/// accuracy relative to `λ₁` (a Gram matrix with `λ₁ = 5.3e-8`: eigenvector residuals of
/// `1.3e-15`, that is `2.5e-8 λ₁`, against `1.6e-14 λ₁` once scaled). Here a matrix whose
/// largest entry lies outside `[1/16, 16]` is first scaled in place by a power of two (exact),
/// so that it lies in `[1, 2)`, and the eigenvalues scaled back; one inside is decomposed as
/// it is, with [`symmetric_eigen_top`]'s result to the bit.
pub fn symmetric_eigen_top_owned(mut a: Array2<f64>, k: usize) -> Result<(Array1<f64>, Array2<f64>)> {
    let largest = a.iter().fold(0.0f64, |m, &x| m.max(x.abs()));
    if largest.is_finite() && largest > 0.0 && !(1.0 / 16.0..=16.0).contains(&largest) {
        // largest · 2^-e lies in [1, 2); the exponent stays within f64's normal range.
        let e = largest.log2().floor().clamp(-1000.0, 1000.0) as i32;
        let (down, up) = (2f64.powi(-e), 2f64.powi(e));
        a.mapv_inplace(|x| x * down);
        let (mut values, vectors) = symmetric_eigen_top(a.view(), k)?;
        values.mapv_inplace(|x| x * up);
        return Ok((values, vectors));
    }
    symmetric_eigen_top(a.view(), k)
}

/// Solves `A X = B` for symmetric positive definite `A` by Cholesky.
pub fn cholesky_solve(a: ArrayView2<'_, f64>, b: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
    if a.nrows() != a.ncols() || a.nrows() != b.nrows() {
        return Err(LinalgError::ShapeMismatch {
            op: "Cholesky solve",
            left: a.dim(),
            right: b.dim(),
        });
    }
    crate::error::check_finite("matrix", a)?;
    crate::error::check_finite("right-hand side", b)?;
    let llt = as_faer(a).llt(Side::Lower).map_err(|e| LinalgError::Factorization {
        op: "Cholesky",
        reason: format!("{e:?} (matrix not positive definite)"),
    })?;
    let mut x = b.to_owned();
    llt.solve_in_place(as_faer_mut(x.view_mut()));
    Ok(x)
}

/// Solves `A X = B` for square `A` by LU with partial pivoting. A singular `A` yields an error.
pub fn lu_solve(a: ArrayView2<'_, f64>, b: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
    if a.nrows() != a.ncols() || a.nrows() != b.nrows() {
        return Err(LinalgError::ShapeMismatch {
            op: "LU solve",
            left: a.dim(),
            right: b.dim(),
        });
    }
    crate::error::check_finite("matrix", a)?;
    crate::error::check_finite("right-hand side", b)?;
    let lu = as_faer(a).partial_piv_lu();
    let mut x = b.to_owned();
    lu.solve_in_place(as_faer_mut(x.view_mut()));
    if x.iter().any(|v| !v.is_finite()) {
        return Err(LinalgError::Factorization {
            op: "LU",
            reason: "matrix is singular".into(),
        });
    }
    Ok(x)
}

/// Moore-Penrose pseudo-inverse; singular values below `rcond * s_max` are treated as zero.
pub fn pinv(a: ArrayView2<'_, f64>, rcond: f64) -> Result<Array2<f64>> {
    let DenseSvd { u, s, v } = thin_svd(a)?;
    let smax = s.iter().cloned().fold(0.0, f64::max);
    let mut vs = v;
    for (j, &sj) in s.iter().enumerate() {
        let inv = if sj > rcond * smax && sj > 0.0 { 1.0 / sj } else { 0.0 };
        vs.column_mut(j).mapv_inplace(|x| x * inv);
    }
    matmul(vs.view(), u.t())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::{gaussian_matrix, rng_from_seed};

    fn tol(n: usize) -> f64 {
        f64::EPSILON * (8.0 * n as f64).sqrt() * 100.0
    }

    /// The row-block split of narrow products gives faer's parallel product to the bit (each
    /// entry the same sum in the same order), in both precisions, with and without accumulation,
    /// for row counts that do and do not divide into whole blocks.
    #[test]
    fn narrow_products_split_by_rows_equal_faers_product_to_the_bit() {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        let mut rng = rng_from_seed(11);
        for (rows, inner, cols) in [
            (4096, 1, 2),
            (5000, 48, 48),
            (9001, 700, 20),
            (26050, 3, 2),
            (4100, 4096, 64),
        ] {
            assert!(narrow_and_tall(rows, inner, cols));
            let mut a = Array2::<f64>::zeros((rows, inner).f());
            a.assign(&gaussian_matrix(&mut rng, rows, inner));
            let b = gaussian_matrix(&mut rng, inner, cols);
            let start = gaussian_matrix(&mut rng, rows, cols);
            for (alpha, accumulate) in [(1.0, false), (-1.0, true)] {
                let beta = if accumulate { Accum::Add } else { Accum::Replace };
                let mut split = start.clone();
                pool.install(|| gemm_into(split.view_mut(), a.view(), b.view(), alpha, accumulate))
                    .unwrap();
                let mut whole = start.clone();
                faer::linalg::matmul::matmul(
                    as_faer_mut(whole.view_mut()),
                    beta,
                    as_faer(a.view()),
                    as_faer(b.view()),
                    alpha,
                    Par::rayon(2),
                );
                assert!(split.iter().zip(&whole).all(|(x, y)| x.to_bits() == y.to_bits()));
                // float32 (stored matrices in single precision).
                let (a32, b32) = (a.mapv(|x| x as f32), b.mapv(|x| x as f32));
                let mut split32 = start.mapv(|x| x as f32);
                let mut whole32 = split32.clone();
                pool.install(|| gemm_into_t(split32.view_mut(), a32.view(), b32.view(), alpha as f32, accumulate))
                    .unwrap();
                faer::linalg::matmul::matmul(
                    as_faer_mut(whole32.view_mut()),
                    beta,
                    as_faer(a32.view()),
                    as_faer(b32.view()),
                    alpha as f32,
                    Par::rayon(2),
                );
                assert!(split32.iter().zip(&whole32).all(|(x, y)| x.to_bits() == y.to_bits()));
            }
        }
        // Wide outputs, long inner dimensions and short tall matrices keep faer's split.
        assert!(!narrow_and_tall(13025, 600, 250));
        assert!(!narrow_and_tall(10000, 10000, 20));
        assert!(!narrow_and_tall(4095, 48, 48));
        assert!(!narrow_and_tall(26050, 3, 1));
    }

    #[test]
    fn svd_reconstructs_and_is_orthonormal() {
        let mut rng = rng_from_seed(1);
        for &(n, m) in &[(7, 4), (4, 7), (5, 5)] {
            let a = gaussian_matrix(&mut rng, n, m);
            let DenseSvd { u, s, v } = thin_svd(a.view()).unwrap();
            let us = &u * &s;
            let rec = matmul(us.view(), v.t()).unwrap();
            assert!((&rec - &a).iter().all(|e| e.abs() < tol(n.max(m)) * s[0]));
            let k = n.min(m);
            let utu = matmul(u.t(), u.view()).unwrap();
            assert!((&utu - &Array2::<f64>::eye(k)).iter().all(|e| e.abs() < tol(n)));
            assert!(s.windows(2).into_iter().all(|w| w[0] >= w[1]));
        }
    }

    #[test]
    fn thin_qr_reconstructs_with_orthonormal_q_and_triangular_r() {
        let mut rng = rng_from_seed(11);
        for &(n, k) in &[(9, 4), (5, 5), (40, 1)] {
            let a = gaussian_matrix(&mut rng, n, k);
            let (q, r) = thin_qr(a.view()).unwrap();
            assert_eq!((q.dim(), r.dim()), ((n, k), (k, k)));
            let scale = a.iter().fold(0.0f64, |m, x| m.max(x.abs()));
            let rec = matmul(q.view(), r.view()).unwrap();
            assert!((&rec - &a).iter().all(|e| e.abs() < tol(n) * scale * k as f64));
            let qtq = matmul(q.t(), q.view()).unwrap();
            assert!((&qtq - &Array2::<f64>::eye(k)).iter().all(|e| e.abs() < tol(n)));
            for i in 0..k {
                for j in 0..i {
                    assert_eq!(r[[i, j]], 0.0, "R is upper triangular");
                }
            }
        }
        assert!(thin_qr(gaussian_matrix(&mut rng, 2, 3).view()).is_err());
        // R alone, and the triangular solve that inverts it: A R⁻¹ = Q.
        let a = gaussian_matrix(&mut rng, 12, 5);
        let (q, r) = thin_qr(a.view()).unwrap();
        assert_eq!(thin_r(a.view()).unwrap(), r);
        let wrong = solve_upper_triangular(r.view(), a.view()).unwrap_err();
        assert!(matches!(wrong, LinalgError::ShapeMismatch { .. }));
        let eye = Array2::<f64>::eye(5);
        let rinv = solve_upper_triangular(r.view(), eye.view()).unwrap();
        let q2 = matmul(a.view(), rinv.view()).unwrap();
        assert!((&q2 - &q).iter().all(|e| e.abs() < tol(12) * 10.0));
        assert!(solve_upper_triangular(Array2::<f64>::zeros((2, 2)).view(), eye.slice(ndarray::s![..2, ..2])).is_err());
    }

    #[test]
    fn the_top_eigenpairs_are_the_leading_ones_of_the_full_decomposition() {
        let mut rng = rng_from_seed(13);
        let b = gaussian_matrix(&mut rng, 9, 6);
        let a = matmul(b.view(), b.t()).unwrap(); // rank 6, three zero eigenvalues
        let (vals, vecs) = symmetric_eigen(a.view()).unwrap();
        assert!(vals.windows(2).into_iter().all(|w| w[0] >= w[1]), "descending");
        let av = matmul(a.view(), vecs.view()).unwrap();
        assert!((&av - &(&vecs * &vals)).iter().all(|e| e.abs() < tol(9) * vals[0]));
        for k in [0, 1, 4, 9] {
            let (tv, tvec) = symmetric_eigen_top(a.view(), k).unwrap();
            assert_eq!(tv, vals.slice(ndarray::s![..k]));
            assert_eq!(tvec, vecs.slice(ndarray::s![.., ..k]));
        }
        assert_eq!(
            symmetric_eigen_top(a.view(), 20).unwrap().1.dim(),
            (9, 9),
            "k is clamped"
        );
        assert!(symmetric_eigen_top(b.view(), 2).is_err(), "not square");
    }

    /// A matrix of small entries is decomposed as the same matrix scaled by a power of two into
    /// `[1, 2)`: the eigenvectors of `2⁻³⁰ A` are `A`'s bit for bit and the eigenvalues `2⁻³⁰`
    /// times `A`'s; a matrix within `[1/16, 16]` is decomposed unscaled.
    #[test]
    fn badly_scaled_symmetric_matrices_are_decomposed_at_unit_scale() {
        let mut rng = rng_from_seed(14);
        let b = gaussian_matrix(&mut rng, 30, 30);
        let mut a = matmul(b.view(), b.t()).unwrap();
        // Largest entry in [1, 2), so scaling down and back up is exact.
        let largest = a.iter().fold(0.0f64, |m, &x| m.max(x.abs()));
        let e = largest.log2().floor() as i32;
        a.mapv_inplace(|x| x * 2f64.powi(-e));
        let (vals, vecs) = symmetric_eigen_top(a.view(), 7).unwrap();
        assert_eq!(
            symmetric_eigen_top_owned(a.clone(), 7).unwrap(),
            (vals.clone(), vecs.clone())
        );
        let tiny = 2f64.powi(-30);
        let (small_vals, small_vecs) = symmetric_eigen_top_owned(a.mapv(|x| x * tiny), 7).unwrap();
        assert_eq!(small_vecs, vecs);
        assert_eq!(small_vals, vals.mapv(|x| x * tiny));
        let (big_vals, big_vecs) = symmetric_eigen_top_owned(a.mapv(|x| x / tiny), 7).unwrap();
        assert_eq!(big_vecs, vecs);
        assert_eq!(big_vals, vals.mapv(|x| x / tiny));
        // Zero and non-finite matrices are left to the decomposition (zeros; an error).
        let (z, _) = symmetric_eigen_top_owned(Array2::zeros((4, 4)), 2).unwrap();
        assert_eq!(z, Array1::<f64>::zeros(2));
        let mut nan = a.clone();
        nan[[1, 2]] = f64::NAN;
        assert!(symmetric_eigen_top_owned(nan, 3).is_err());
    }

    #[test]
    fn pivot_columns_start_with_the_largest_and_skip_dependent_columns() {
        let mut rng = rng_from_seed(12);
        let mut a = gaussian_matrix(&mut rng, 4, 9);
        a.column_mut(6).mapv_inplace(|x| 10.0 * x);
        // Column 2 is parallel to column 6 (and shorter): after 6 is taken, 2 has nothing left.
        let c6 = a.column(6).to_owned();
        a.column_mut(2).assign(&(&c6 * 0.5));
        let p = pivot_columns(a.view(), 4).unwrap();
        assert_eq!(p.len(), 4);
        assert_eq!(p[0], 6);
        assert!(!p.contains(&2));
        let mut sorted = p.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), 4, "distinct");
        assert!(pivot_columns(a.view(), 20).unwrap().len() == 9);
    }

    #[test]
    fn transposed_views_are_zero_copy_and_correct() {
        let mut rng = rng_from_seed(2);
        let a = gaussian_matrix(&mut rng, 6, 3);
        let b = gaussian_matrix(&mut rng, 6, 2);
        let c = matmul(a.t(), b.view()).unwrap();
        let d = a.t().dot(&b);
        assert!((&c - &d).iter().all(|e| e.abs() < tol(6)));
    }

    #[test]
    fn solves_and_eigen() {
        let mut rng = rng_from_seed(3);
        let g = gaussian_matrix(&mut rng, 8, 5);
        let a = matmul(g.t(), g.view()).unwrap() + Array2::<f64>::eye(5);
        let b = gaussian_matrix(&mut rng, 5, 2);
        let x = cholesky_solve(a.view(), b.view()).unwrap();
        assert!((&a.dot(&x) - &b).iter().all(|e| e.abs() < 1e3 * f64::EPSILON * 10.0));
        let y = lu_solve(a.view(), b.view()).unwrap();
        assert!((&x - &y).iter().all(|e| e.abs() < 1e-12));
        let (w, q) = symmetric_eigen(a.view()).unwrap();
        assert!(w.windows(2).into_iter().all(|p| p[0] >= p[1]));
        let aq = a.dot(&q);
        let qw = &q * &w;
        assert!((&aq - &qw).iter().all(|e| e.abs() < 1e-12 * w[0]));
        let singular = Array2::<f64>::zeros((3, 3));
        assert!(lu_solve(singular.view(), Array2::<f64>::ones((3, 1)).view()).is_err());
        assert!(cholesky_solve(singular.view(), Array2::<f64>::ones((3, 1)).view()).is_err());
    }

    #[test]
    fn pinv_of_rank_deficient() {
        let a = ndarray::array![[1.0, 2.0], [2.0, 4.0], [0.0, 0.0]];
        let p = pinv(a.view(), 1e-12).unwrap();
        let apa = a.dot(&p).dot(&a);
        assert!((&apa - &a).iter().all(|e| e.abs() < 1e-12));
    }

    #[test]
    fn nan_is_rejected() {
        let a = ndarray::array![[1.0, f64::NAN]];
        assert!(matches!(
            thin_svd(a.view()),
            Err(LinalgError::NonFinite { row: 0, col: 1, .. })
        ));
    }
}

/// The LAPACK backend (`gesdd` through ndarray-linalg and the system OpenBLAS), used to
/// cross-check faer. Enabled by the `lapack` cargo feature (needs `libopenblas-dev`).
#[cfg(feature = "lapack")]
pub mod lapack {
    use super::DenseSvd;
    use crate::error::{LinalgError, Result};
    use ndarray::ArrayView2;
    use ndarray_linalg::{JobSvd, SVDDC};

    /// Thin SVD by LAPACK's divide and conquer (`dgesdd`).
    pub fn thin_svd(a: ArrayView2<'_, f64>) -> Result<DenseSvd> {
        crate::error::check_finite("matrix", a)?;
        let fail = |reason: String| LinalgError::Factorization {
            op: "LAPACK SVD",
            reason,
        };
        let (u, s, vt) = a.to_owned().svddc(JobSvd::Some).map_err(|e| fail(e.to_string()))?;
        let u = u.ok_or_else(|| fail("no U returned".into()))?;
        let vt = vt.ok_or_else(|| fail("no Vᵀ returned".into()))?;
        Ok(DenseSvd {
            u,
            s,
            v: vt.reversed_axes(),
        })
    }

    #[cfg(test)]
    mod tests {
        use crate::random::{gaussian_matrix, rng_from_seed};

        #[test]
        fn faer_and_lapack_agree() {
            let mut rng = rng_from_seed(9);
            for &(n, m) in &[(40, 25), (25, 40), (33, 33)] {
                let a = gaussian_matrix(&mut rng, n, m);
                let f = super::super::thin_svd(a.view()).unwrap();
                let l = super::thin_svd(a.view()).unwrap();
                let tol = 64.0 * f64::EPSILON * ((n.max(m)) as f64).sqrt() * f.s[0];
                for i in 0..n.min(m) {
                    assert!((f.s[i] - l.s[i]).abs() <= tol, "s_{i}");
                    // Vectors agree up to sign (singular values of a Gaussian matrix are simple).
                    let c = f.u.column(i).dot(&l.u.column(i)).abs();
                    assert!((1.0 - c) < 1e-9, "u_{i}: {c}");
                }
            }
        }
    }
}
