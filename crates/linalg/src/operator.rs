//! The linear-operator abstraction every solver is written against.
//!
//! A [`LinearOperator`] multiplies a block of vectors by a matrix `A` (`nrows x ncols`) or by
//! its transpose without exposing how `A` is stored: dense arrays, [`CsrMatrix`], and implicit
//! kernel matrices (evaluated block by block, never materialised) all implement it.
//! [`MatrixBlocks`] adds access to arbitrary sub-blocks `A[rows, cols]`, which the Nyström
//! methods need.
use crate::csr::CsrMatrix;
use crate::dense::gemm_into;
use crate::error::{LinalgError, Result};
use ndarray::{Array2, ArrayView2, ArrayViewMut2};

/// A matrix known through its action on blocks of vectors.
pub trait LinearOperator: Sync {
    /// Number of rows of `A`.
    fn nrows(&self) -> usize;
    /// Number of columns of `A`.
    fn ncols(&self) -> usize;
    /// `out = A x` with `x` of shape `ncols x k` and `out` of shape `nrows x k`.
    /// Implementations may assume the shapes were checked (use [`LinearOperator::apply`]).
    ///
    /// # Errors
    /// A product that cannot be formed (an inner series that does not converge, a block that
    /// cannot be evaluated) is a typed error, [`LinalgError::OperatorFailed`] or the cause's
    /// own; `out` is then unspecified. Operators never signal failure through NaN.
    fn apply_into(&self, x: ArrayView2<'_, f64>, out: ArrayViewMut2<'_, f64>) -> Result<()>;
    /// `out = A^T x` with `x` of shape `nrows x k` and `out` of shape `ncols x k` (errors as
    /// [`LinearOperator::apply_into`]).
    fn apply_transpose_into(&self, x: ArrayView2<'_, f64>, out: ArrayViewMut2<'_, f64>) -> Result<()>;

    /// `A x`, with shapes checked.
    fn apply(&self, x: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        if x.nrows() != self.ncols() {
            return Err(LinalgError::ShapeMismatch {
                op: "A x",
                left: (self.nrows(), self.ncols()),
                right: x.dim(),
            });
        }
        let mut out = Array2::zeros((self.nrows(), x.ncols()));
        self.apply_into(x, out.view_mut())?;
        Ok(out)
    }
    /// `A^T x`, with shapes checked.
    fn apply_transpose(&self, x: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        if x.nrows() != self.nrows() {
            return Err(LinalgError::ShapeMismatch {
                op: "A^T x",
                left: (self.nrows(), self.ncols()),
                right: x.dim(),
            });
        }
        let mut out = Array2::zeros((self.ncols(), x.ncols()));
        self.apply_transpose_into(x, out.view_mut())?;
        Ok(out)
    }

    /// The dense matrix `A` (`nrows × ncols`). The default multiplies column blocks of the
    /// identity (at most 256 columns at a time); stored and implicit matrices override it with
    /// a direct evaluation. `O(nrows · ncols)` memory: callers check their memory budget first.
    ///
    /// # Errors
    /// As [`LinearOperator::apply_into`].
    fn to_dense(&self) -> Result<Array2<f64>> {
        let (n, m) = (self.nrows(), self.ncols());
        let mut out = Array2::zeros((n, m));
        let step = 256;
        for c0 in (0..m).step_by(step) {
            let c1 = (c0 + step).min(m);
            let mut e = Array2::zeros((m, c1 - c0));
            for j in c0..c1 {
                e[[j, j - c0]] = 1.0;
            }
            self.apply_into(e.view(), out.slice_mut(ndarray::s![.., c0..c1]))?;
        }
        Ok(out)
    }

    /// The exact structure `A = S + L Rᵀ` (sparse plus low rank) when the operator has it, for
    /// solvers that factorise `S` (spectral transformations). `None` (the default): no such
    /// structure is known.
    fn sparse_plus_low_rank(&self) -> Option<SparsePlusLowRank<'_>> {
        None
    }
}

/// `A = S + L Rᵀ`: a sparse `n × m` matrix `S` plus a rank-`k` term (`L` is `n × k`, `R` is
/// `m × k`), exactly (see [`LinearOperator::sparse_plus_low_rank`]).
#[derive(Debug, Clone)]
pub struct SparsePlusLowRank<'a> {
    /// The sparse part `S`.
    pub sparse: &'a CsrMatrix,
    /// `L` (`n × k`).
    pub left: Array2<f64>,
    /// `R` (`m × k`).
    pub right: Array2<f64>,
}

/// Random access to dense sub-blocks of a matrix.
pub trait MatrixBlocks: LinearOperator {
    /// `A[rows, cols]` as a dense `|rows| x |cols|` matrix (indices in the given order).
    fn block(&self, rows: &[usize], cols: &[usize]) -> Result<Array2<f64>>;

    /// The precision [`MatrixBlocks::block`]'s entries are evaluated in (`f64` values either
    /// way): solvers of a block need not resolve it beyond its entries' rounding.
    fn block_precision(&self) -> crate::Precision {
        crate::Precision::F64
    }

    /// The rows `A[rows, :]`.
    fn row_block(&self, rows: &[usize]) -> Result<Array2<f64>> {
        let cols: Vec<usize> = (0..self.ncols()).collect();
        self.block(rows, &cols)
    }
    /// The columns `A[:, cols]`.
    fn col_block(&self, cols: &[usize]) -> Result<Array2<f64>> {
        let rows: Vec<usize> = (0..self.nrows()).collect();
        self.block(&rows, cols)
    }

    /// `A[rows, cols] W` (`W` is `|cols| × k`) without holding more than a bounded chunk of
    /// the block. The default evaluates row chunks of the block; implicit matrices override
    /// it with cheaper fused products.
    fn block_mul(&self, rows: &[usize], cols: &[usize], w: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        if w.nrows() != cols.len() {
            return Err(LinalgError::ShapeMismatch {
                op: "A[I, J] W",
                left: (rows.len(), cols.len()),
                right: w.dim(),
            });
        }
        let chunk = (CHUNK_ENTRIES / cols.len().max(1)).max(1);
        let mut out = Array2::zeros((rows.len(), w.ncols()));
        for (c, mut oc) in out.axis_chunks_iter_mut(ndarray::Axis(0), chunk).enumerate() {
            let blk = self.block(&rows[c * chunk..c * chunk + oc.nrows()], cols)?;
            gemm_into(oc.view_mut(), blk.view(), w, 1.0, false)?;
        }
        Ok(out)
    }

    /// `A[rows, cols]ᵀ W` (`W` is `|rows| × k`), in bounded memory (column chunks by default).
    fn block_t_mul(&self, rows: &[usize], cols: &[usize], w: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        if w.nrows() != rows.len() {
            return Err(LinalgError::ShapeMismatch {
                op: "A[I, J]ᵀ W",
                left: (rows.len(), cols.len()),
                right: w.dim(),
            });
        }
        let chunk = (CHUNK_ENTRIES / rows.len().max(1)).max(1);
        let mut out = Array2::zeros((cols.len(), w.ncols()));
        for (c, mut oc) in out.axis_chunks_iter_mut(ndarray::Axis(0), chunk).enumerate() {
            let blk = self.block(rows, &cols[c * chunk..c * chunk + oc.nrows()])?;
            gemm_into(oc.view_mut(), blk.t(), w, 1.0, false)?;
        }
        Ok(out)
    }
}

/// Entries of a block held at once by the default chunked products (8 MiB of f64).
const CHUNK_ENTRIES: usize = 1 << 20;

/// Checks that every index is below `len`.
pub fn check_indices(what: &'static str, idx: &[usize], len: usize) -> Result<()> {
    match idx.iter().find(|&&i| i >= len) {
        Some(&index) => Err(LinalgError::IndexOutOfBounds { what, index, len }),
        None => Ok(()),
    }
}

/// The dense matrix of an operator ([`LinearOperator::to_dense`]).
///
/// # Errors
/// As [`LinearOperator::apply_into`].
pub fn materialize<O: LinearOperator + ?Sized>(op: &O) -> Result<Array2<f64>> {
    op.to_dense()
}

impl<T: LinearOperator + ?Sized> LinearOperator for &T {
    fn nrows(&self) -> usize {
        (**self).nrows()
    }
    fn ncols(&self) -> usize {
        (**self).ncols()
    }
    fn apply_into(&self, x: ArrayView2<'_, f64>, out: ArrayViewMut2<'_, f64>) -> Result<()> {
        (**self).apply_into(x, out)
    }
    fn apply_transpose_into(&self, x: ArrayView2<'_, f64>, out: ArrayViewMut2<'_, f64>) -> Result<()> {
        (**self).apply_transpose_into(x, out)
    }
    fn to_dense(&self) -> Result<Array2<f64>> {
        (**self).to_dense()
    }
    fn sparse_plus_low_rank(&self) -> Option<SparsePlusLowRank<'_>> {
        (**self).sparse_plus_low_rank()
    }
}

impl<T: MatrixBlocks + ?Sized> MatrixBlocks for &T {
    fn block(&self, rows: &[usize], cols: &[usize]) -> Result<Array2<f64>> {
        (**self).block(rows, cols)
    }
    fn block_mul(&self, rows: &[usize], cols: &[usize], w: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        (**self).block_mul(rows, cols, w)
    }
    fn block_t_mul(&self, rows: &[usize], cols: &[usize], w: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        (**self).block_t_mul(rows, cols, w)
    }
}

macro_rules! dense_operator {
    ($t:ty) => {
        impl LinearOperator for $t {
            fn nrows(&self) -> usize {
                self.dim().0
            }
            fn ncols(&self) -> usize {
                self.dim().1
            }
            fn apply_into(&self, x: ArrayView2<'_, f64>, out: ArrayViewMut2<'_, f64>) -> Result<()> {
                gemm_into(out, self.view(), x, 1.0, false)
            }
            fn apply_transpose_into(&self, x: ArrayView2<'_, f64>, out: ArrayViewMut2<'_, f64>) -> Result<()> {
                gemm_into(out, self.t(), x, 1.0, false)
            }
            fn to_dense(&self) -> Result<Array2<f64>> {
                Ok(self.to_owned())
            }
        }
        impl MatrixBlocks for $t {
            fn block(&self, rows: &[usize], cols: &[usize]) -> Result<Array2<f64>> {
                check_indices("row", rows, self.dim().0)?;
                check_indices("column", cols, self.dim().1)?;
                Ok(Array2::from_shape_fn((rows.len(), cols.len()), |(a, b)| {
                    self[[rows[a], cols[b]]]
                }))
            }
        }
    };
}
dense_operator!(Array2<f64>);
dense_operator!(ArrayView2<'_, f64>);

impl LinearOperator for CsrMatrix {
    fn nrows(&self) -> usize {
        CsrMatrix::nrows(self)
    }
    fn ncols(&self) -> usize {
        CsrMatrix::ncols(self)
    }
    fn apply_into(&self, x: ArrayView2<'_, f64>, out: ArrayViewMut2<'_, f64>) -> Result<()> {
        self.mul_dense_into(x, out);
        Ok(())
    }
    fn apply_transpose_into(&self, x: ArrayView2<'_, f64>, out: ArrayViewMut2<'_, f64>) -> Result<()> {
        self.tmul_dense_into(x, out);
        Ok(())
    }
    fn to_dense(&self) -> Result<Array2<f64>> {
        Ok(CsrMatrix::to_dense(self))
    }
    /// A sparse matrix is itself `S + L Rᵀ` with `k = 0`.
    fn sparse_plus_low_rank(&self) -> Option<SparsePlusLowRank<'_>> {
        Some(SparsePlusLowRank {
            sparse: self,
            left: Array2::zeros((self.nrows(), 0)),
            right: Array2::zeros((self.ncols(), 0)),
        })
    }
}

impl MatrixBlocks for CsrMatrix {
    fn block(&self, rows: &[usize], cols: &[usize]) -> Result<Array2<f64>> {
        check_indices("row", rows, CsrMatrix::nrows(self))?;
        check_indices("column", cols, CsrMatrix::ncols(self))?;
        let mut pos = vec![usize::MAX; CsrMatrix::ncols(self)];
        for (b, &j) in cols.iter().enumerate() {
            pos[j] = b;
        }
        let mut out = Array2::zeros((rows.len(), cols.len()));
        for (a, &i) in rows.iter().enumerate() {
            let (idx, val) = self.row(i);
            for (&j, &v) in idx.iter().zip(val) {
                if pos[j] != usize::MAX {
                    out[[a, pos[j]]] = v;
                }
            }
        }
        // Repeated column indices: fill the remaining copies.
        if cols.iter().enumerate().any(|(b, &j)| pos[j] != b) {
            return Ok(Array2::from_shape_fn((rows.len(), cols.len()), |(a, b)| {
                self.get(rows[a], cols[b]).unwrap_or(0.0)
            }));
        }
        Ok(out)
    }
}

/// The transpose of an operator, as an operator (no data is moved).
#[derive(Debug, Clone, Copy)]
pub struct Transposed<O>(pub O);

impl<O: LinearOperator> LinearOperator for Transposed<O> {
    fn nrows(&self) -> usize {
        self.0.ncols()
    }
    fn ncols(&self) -> usize {
        self.0.nrows()
    }
    fn apply_into(&self, x: ArrayView2<'_, f64>, out: ArrayViewMut2<'_, f64>) -> Result<()> {
        self.0.apply_transpose_into(x, out)
    }
    fn apply_transpose_into(&self, x: ArrayView2<'_, f64>, out: ArrayViewMut2<'_, f64>) -> Result<()> {
        self.0.apply_into(x, out)
    }
    fn to_dense(&self) -> Result<Array2<f64>> {
        Ok(self.0.to_dense()?.reversed_axes())
    }
}

impl<O: MatrixBlocks> MatrixBlocks for Transposed<O> {
    fn block(&self, rows: &[usize], cols: &[usize]) -> Result<Array2<f64>> {
        Ok(self.0.block(cols, rows)?.reversed_axes())
    }
    fn block_mul(&self, rows: &[usize], cols: &[usize], w: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        self.0.block_t_mul(cols, rows, w)
    }
    fn block_t_mul(&self, rows: &[usize], cols: &[usize], w: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        self.0.block_mul(cols, rows, w)
    }
}

/// `A − U diag(s) Vᵀ`: an operator minus a low-rank term, as an operator (`U` is
/// `nrows × k`, `V` is `ncols × k`). With exact singular triplets of `A` in `U, s, V` this is the
/// deflated operator `(I − U Uᵀ) A (I − V Vᵀ)`, whose singular values are the remaining ones
/// of `A`; solvers use it to lock converged triplets and search the rest.
#[derive(Debug, Clone)]
pub struct LowRankUpdate<'a, O: ?Sized> {
    op: &'a O,
    u: Array2<f64>,
    s: ndarray::Array1<f64>,
    v: Array2<f64>,
}

impl<'a, O: LinearOperator + ?Sized> LowRankUpdate<'a, O> {
    /// `op − U diag(s) Vᵀ`; fails when the shapes do not match.
    pub fn new(op: &'a O, u: Array2<f64>, s: ndarray::Array1<f64>, v: Array2<f64>) -> Result<Self> {
        let k = s.len();
        if u.dim() != (op.nrows(), k) || v.dim() != (op.ncols(), k) {
            return Err(LinalgError::ShapeMismatch {
                op: "A - U diag(s) V^T",
                left: u.dim(),
                right: v.dim(),
            });
        }
        Ok(LowRankUpdate { op, u, s, v })
    }
}

impl<O: LinearOperator + ?Sized> LinearOperator for LowRankUpdate<'_, O> {
    fn nrows(&self) -> usize {
        self.op.nrows()
    }
    fn ncols(&self) -> usize {
        self.op.ncols()
    }
    fn apply_into(&self, x: ArrayView2<'_, f64>, mut out: ArrayViewMut2<'_, f64>) -> Result<()> {
        self.op.apply_into(x, out.view_mut())?;
        let mut c = self.v.t().dot(&x);
        for (mut row, &si) in c.outer_iter_mut().zip(self.s.iter()) {
            row *= si;
        }
        gemm_into(out, self.u.view(), c.view(), -1.0, true)
    }
    fn apply_transpose_into(&self, x: ArrayView2<'_, f64>, mut out: ArrayViewMut2<'_, f64>) -> Result<()> {
        self.op.apply_transpose_into(x, out.view_mut())?;
        let mut c = self.u.t().dot(&x);
        for (mut row, &si) in c.outer_iter_mut().zip(self.s.iter()) {
            row *= si;
        }
        gemm_into(out, self.v.view(), c.view(), -1.0, true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn low_rank_update_equals_the_explicit_difference() {
        let a = array![[1.0, 2.0, 0.5], [0.0, -1.0, 3.0], [4.0, 1.0, 1.0], [2.0, 0.0, -2.0]];
        let u = array![[1.0, 0.0], [0.5, 1.0], [0.0, 2.0], [1.0, 1.0]];
        let v = array![[0.0, 1.0], [1.0, 1.0], [2.0, 0.0]];
        let s = array![3.0, -0.5];
        let d = LowRankUpdate::new(&a, u.clone(), s.clone(), v.clone()).unwrap();
        let explicit = &a - &(&u * &s).dot(&v.t());
        let x = array![[1.0, 0.0], [2.0, -1.0], [0.5, 3.0]];
        let y = array![[1.0], [0.0], [-2.0], [0.5]];
        let e1 = (&d.apply(x.view()).unwrap() - &explicit.dot(&x))
            .iter()
            .fold(0.0f64, |m, v| m.max(v.abs()));
        let e2 = (&d.apply_transpose(y.view()).unwrap() - &explicit.t().dot(&y))
            .iter()
            .fold(0.0f64, |m, v| m.max(v.abs()));
        assert!(e1 <= 1e-13 && e2 <= 1e-13, "{e1:e} {e2:e}");
        assert!(LowRankUpdate::new(&a, v.clone(), s.clone(), u.clone()).is_err());
    }

    #[test]
    fn dense_sparse_and_transposed_agree() {
        let a = array![[1.0, 0.0, 2.0], [0.0, 3.0, 0.0]];
        let s = CsrMatrix::from_dense(a.view()).unwrap();
        let x = array![[1.0], [2.0], [3.0]];
        assert_eq!(a.apply(x.view()).unwrap(), s.apply(x.view()).unwrap());
        let t = Transposed(&s);
        assert_eq!(materialize(&t).unwrap(), a.t().to_owned());
        assert_eq!(s.block(&[1, 0], &[2, 1]).unwrap(), array![[0.0, 3.0], [2.0, 0.0]]);
        assert_eq!(s.block(&[0], &[2, 2]).unwrap(), array![[2.0, 2.0]]);
        assert!(matches!(
            a.apply(array![[1.0]].view()),
            Err(LinalgError::ShapeMismatch { .. })
        ));
        assert!(matches!(s.block(&[5], &[0]), Err(LinalgError::IndexOutOfBounds { .. })));
        let w = array![[1.0, 2.0], [3.0, -1.0]];
        let want = s.block(&[1, 0], &[2, 1]).unwrap().dot(&w);
        assert_eq!(s.block_mul(&[1, 0], &[2, 1], w.view()).unwrap(), want);
        let want_t = s.block(&[1, 0], &[2, 1]).unwrap().t().dot(&w);
        assert_eq!(s.block_t_mul(&[1, 0], &[2, 1], w.view()).unwrap(), want_t);
        assert_eq!(Transposed(&s).block_mul(&[2, 1], &[1, 0], w.view()).unwrap(), want_t);
    }
}
