//! Sample sets (rows are samples), dense or sparse, and blocks of inner products between them.
use crate::error::{KernelError, Result};
use ksvd_linalg::{check_finite, dense, CsrMatrix};
use ndarray::{s, Array2, ArrayView2};

/// A set of samples stored row-wise: `n` samples of dimension `dim`.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Samples {
    /// Dense rows.
    Dense(Array2<f64>),
    /// Sparse rows (CSR); stays sparse through every kernel computation.
    Sparse(CsrMatrix),
}

impl Samples {
    /// Dense samples; rejects NaN/infinite entries and empty input.
    pub fn dense(a: Array2<f64>) -> Result<Self> {
        check_finite("samples", a.view())?;
        let s = Samples::Dense(a);
        s.check_nonempty("samples")?;
        Ok(s)
    }
    /// Sparse samples (a validated [`CsrMatrix`] is always finite).
    pub fn sparse(a: CsrMatrix) -> Result<Self> {
        let s = Samples::Sparse(a);
        s.check_nonempty("samples")?;
        Ok(s)
    }
    /// Number of samples.
    pub fn len(&self) -> usize {
        match self {
            Samples::Dense(a) => a.nrows(),
            Samples::Sparse(a) => a.nrows(),
        }
    }
    /// Whether there are no samples.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Dimension of every sample.
    pub fn dim(&self) -> usize {
        match self {
            Samples::Dense(a) => a.ncols(),
            Samples::Sparse(a) => a.ncols(),
        }
    }
    pub(crate) fn check_nonempty(&self, what: &'static str) -> Result<()> {
        if self.len() == 0 || self.dim() == 0 {
            return Err(KernelError::Empty {
                what,
                rows: self.len(),
                dim: self.dim(),
            });
        }
        Ok(())
    }
    /// Squared Euclidean norm of every sample.
    pub fn sq_norms(&self) -> Vec<f64> {
        match self {
            Samples::Dense(a) => a.outer_iter().map(|r| r.dot(&r)).collect(),
            Samples::Sparse(a) => a.row_sq_norms(),
        }
    }
    /// The samples at `rows`, in that order.
    pub fn select(&self, rows: &[usize]) -> Result<Samples> {
        ksvd_linalg::check_indices("sample", rows, self.len())?;
        Ok(match self {
            Samples::Dense(a) => Samples::Dense(a.select(ndarray::Axis(0), rows)),
            Samples::Sparse(a) => Samples::Sparse(a.select_rows(rows)?),
        })
    }
    /// Dense copy of all samples (small inputs and tests).
    pub fn to_dense(&self) -> Array2<f64> {
        match self {
            Samples::Dense(a) => a.clone(),
            Samples::Sparse(a) => a.to_dense(),
        }
    }
    /// The samples at `idx` as dense rows: a view for a contiguous range of dense samples, a
    /// copy otherwise (sparse samples are densified). The indices must be valid.
    pub(crate) fn dense_rows(&self, idx: &[usize]) -> ndarray::CowArray<'_, f64, ndarray::Ix2> {
        match self {
            Samples::Dense(a) => match dense_view(a, idx) {
                Some(v) => v.into(),
                None => dense_rows(a, idx).into(),
            },
            Samples::Sparse(a) => {
                let mut out = Array2::zeros((idx.len(), a.ncols()));
                for (mut row, &i) in out.outer_iter_mut().zip(idx) {
                    let (cols, vals) = a.row(i);
                    cols.iter().zip(vals).for_each(|(&j, &v)| row[j] = v);
                }
                out.into()
            }
        }
    }
    /// Whether the storage is sparse.
    pub fn is_sparse(&self) -> bool {
        matches!(self, Samples::Sparse(_))
    }
}

/// Whether `idx` is exactly `0..len`.
fn is_full_range(idx: &[usize], len: usize) -> bool {
    idx.len() == len && idx.iter().enumerate().all(|(a, &i)| a == i)
}

/// Whether `idx` is a contiguous increasing range; returns its start.
fn contiguous_start(idx: &[usize]) -> Option<usize> {
    let first = *idx.first()?;
    idx.iter().enumerate().all(|(a, &i)| i == first + a).then_some(first)
}

fn dense_rows(a: &Array2<f64>, idx: &[usize]) -> Array2<f64> {
    a.select(ndarray::Axis(0), idx)
}

fn dense_view<'a>(a: &'a Array2<f64>, idx: &[usize]) -> Option<ArrayView2<'a, f64>> {
    if idx.is_empty() {
        return None;
    }
    contiguous_start(idx).map(|s0| a.slice(s![s0..s0 + idx.len(), ..]))
}

/// The block of inner products `P[a, b] = x_{rows[a]} . z_{cols[b]}`.
///
/// `zt` must be the transpose of `z` when `x` and `z` are both sparse (the caller caches it).
/// Computed on the calling thread (callers parallelise over blocks).
pub(crate) fn inner_block(
    x: &Samples,
    rows: &[usize],
    z: &Samples,
    zt: Option<&CsrMatrix>,
    cols: &[usize],
) -> Array2<f64> {
    let mut out = Array2::zeros((rows.len(), cols.len()));
    inner_block_into(out.view_mut(), x, rows, z, zt, cols);
    out
}

/// [`inner_block`] written into `out` (`|rows| × |cols|`, zeroed by the caller for sparse
/// inputs; overwritten for dense ones).
pub(crate) fn inner_block_into(
    mut out: ndarray::ArrayViewMut2<'_, f64>,
    x: &Samples,
    rows: &[usize],
    z: &Samples,
    zt: Option<&CsrMatrix>,
    cols: &[usize],
) {
    if rows.is_empty() || cols.is_empty() {
        return;
    }
    match (x, z) {
        (Samples::Dense(xa), Samples::Dense(za)) => {
            let xo;
            let xv = match dense_view(xa, rows) {
                Some(v) => v,
                None => {
                    xo = dense_rows(xa, rows);
                    xo.view()
                }
            };
            let zo;
            let zv = if is_full_range(cols, za.nrows()) {
                za.view()
            } else {
                match dense_view(za, cols) {
                    Some(v) => v,
                    None => {
                        zo = dense_rows(za, cols);
                        zo.view()
                    }
                }
            };
            // Shapes agree by construction.
            let _ = dense::gemm_into_seq(out.view_mut(), xv, zv.t());
            return;
        }
        (Samples::Sparse(xs), Samples::Sparse(zs)) => {
            let owned;
            let zt = match zt {
                Some(t) => t,
                None => {
                    owned = zs.transpose();
                    &owned
                }
            };
            let mut pos = vec![usize::MAX; zs.nrows()];
            let mut dup = false;
            for (b, &j) in cols.iter().enumerate() {
                dup |= pos[j] != usize::MAX;
                pos[j] = b;
            }
            for (a, &i) in rows.iter().enumerate() {
                let (idx, val) = xs.row(i);
                let mut orow = out.row_mut(a);
                for (&k, &xv) in idx.iter().zip(val) {
                    let (zidx, zval) = zt.row(k);
                    for (&j, &zv) in zidx.iter().zip(zval) {
                        let b = pos[j];
                        if b != usize::MAX {
                            orow[b] += xv * zv;
                        }
                    }
                }
            }
            if dup {
                // A column index repeated: copy the computed value to every occurrence.
                for (b, &j) in cols.iter().enumerate() {
                    let src = pos[j];
                    if src != b {
                        let col = out.column(src).to_owned();
                        out.column_mut(b).assign(&col);
                    }
                }
            }
        }
        (Samples::Dense(xa), Samples::Sparse(zs)) => {
            let xr = dense_rows(xa, rows);
            for (b, &j) in cols.iter().enumerate() {
                let (idx, val) = zs.row(j);
                let mut oc = out.column_mut(b);
                for (&k, &zv) in idx.iter().zip(val) {
                    oc.scaled_add(zv, &xr.column(k));
                }
            }
        }
        (Samples::Sparse(xs), Samples::Dense(za)) => {
            let zr = dense_rows(za, cols);
            for (a, &i) in rows.iter().enumerate() {
                let (idx, val) = xs.row(i);
                let mut orow = out.row_mut(a);
                for (&k, &xv) in idx.iter().zip(val) {
                    orow.scaled_add(xv, &zr.column(k));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn inner_blocks_agree_across_storage() {
        let x = array![[1.0, 0.0, 2.0], [0.0, 3.0, 0.0], [4.0, 0.0, 0.0]];
        let z = array![[0.0, 1.0, 1.0], [2.0, 0.0, 0.0]];
        let xs = Samples::Sparse(CsrMatrix::from_dense(x.view()).unwrap());
        let zs = Samples::Sparse(CsrMatrix::from_dense(z.view()).unwrap());
        let xd = Samples::Dense(x.clone());
        let zd = Samples::Dense(z.clone());
        let rows = [2, 0];
        let cols = [1, 0, 1];
        let want = Array2::from_shape_fn((2, 3), |(a, b)| x.row(rows[a]).dot(&z.row(cols[b])));
        for (xx, zz) in [(&xd, &zd), (&xs, &zs), (&xd, &zs), (&xs, &zd)] {
            assert_eq!(inner_block(xx, &rows, zz, None, &cols), want);
        }
    }
}
