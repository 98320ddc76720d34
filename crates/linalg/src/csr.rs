//! Compressed sparse row matrices: the storage of adjacency matrices, document-term matrices
//! and sparse samples. Entries within a row are kept sorted by column, without duplicates.
use crate::error::{LinalgError, Result};
use ndarray::{Array2, ArrayView2, Axis};
use rayon::prelude::*;

/// A sparse `nrows x ncols` matrix in compressed sparse row form.
///
/// Invariants (checked by every constructor): `indptr.len() == nrows + 1`, `indptr` is
/// non-decreasing from 0 to `nnz`, column indices are `< ncols` and strictly increasing within
/// each row, and every stored value is finite.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct CsrMatrix {
    nrows: usize,
    ncols: usize,
    indptr: Vec<usize>,
    indices: Vec<usize>,
    data: Vec<f64>,
}

impl CsrMatrix {
    /// Builds a matrix from raw CSR arrays, validating every invariant.
    pub fn try_new(
        nrows: usize,
        ncols: usize,
        indptr: Vec<usize>,
        indices: Vec<usize>,
        data: Vec<f64>,
    ) -> Result<Self> {
        if indptr.len() != nrows + 1 {
            return Err(LinalgError::InvalidCsr(format!(
                "indptr has length {} but nrows + 1 = {}",
                indptr.len(),
                nrows + 1
            )));
        }
        if indices.len() != data.len() {
            return Err(LinalgError::InvalidCsr(format!(
                "{} column indices but {} values",
                indices.len(),
                data.len()
            )));
        }
        if indptr[0] != 0 || indptr[nrows] != indices.len() {
            return Err(LinalgError::InvalidCsr(format!(
                "indptr must run from 0 to nnz = {}, got {}..{}",
                indices.len(),
                indptr[0],
                indptr[nrows]
            )));
        }
        for i in 0..nrows {
            let (a, b) = (indptr[i], indptr[i + 1]);
            if a > b {
                return Err(LinalgError::InvalidCsr(format!("indptr decreases at row {i}")));
            }
            let row = &indices[a..b];
            for (k, &j) in row.iter().enumerate() {
                if j >= ncols {
                    return Err(LinalgError::IndexOutOfBounds {
                        what: "column",
                        index: j,
                        len: ncols,
                    });
                }
                if k > 0 && row[k - 1] >= j {
                    return Err(LinalgError::InvalidCsr(format!(
                        "column indices of row {i} are not strictly increasing"
                    )));
                }
                if !data[a + k].is_finite() {
                    return Err(LinalgError::NonFinite {
                        what: "sparse matrix",
                        row: i,
                        col: j,
                    });
                }
            }
        }
        Ok(Self {
            nrows,
            ncols,
            indptr,
            indices,
            data,
        })
    }

    /// Builds a matrix from `(row, col, value)` triplets in any order; duplicates are summed.
    /// The result is checked like [`CsrMatrix::try_new`]'s input (a column out of range or a
    /// value, or sum of duplicates, that is not finite is an error).
    pub fn from_triplets<I>(nrows: usize, ncols: usize, triplets: I) -> Result<Self>
    where
        I: IntoIterator<Item = (usize, usize, f64)>,
    {
        let mut t: Vec<(usize, usize, f64)> = Vec::new();
        for (i, j, v) in triplets {
            if i >= nrows {
                return Err(LinalgError::IndexOutOfBounds {
                    what: "row",
                    index: i,
                    len: nrows,
                });
            }
            t.push((i, j, v));
        }
        t.sort_unstable_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
        let mut indptr = vec![0usize; nrows + 1];
        let mut indices = Vec::with_capacity(t.len());
        let mut data: Vec<f64> = Vec::with_capacity(t.len());
        let mut last: Option<(usize, usize)> = None;
        for (i, j, v) in t {
            if last == Some((i, j)) {
                if let Some(d) = data.last_mut() {
                    *d += v;
                }
                continue;
            }
            indptr[i + 1] += 1;
            indices.push(j);
            data.push(v);
            last = Some((i, j));
        }
        for i in 0..nrows {
            indptr[i + 1] += indptr[i];
        }
        Self::try_new(nrows, ncols, indptr, indices, data)
    }

    /// The sparse form of a dense matrix (exact zeros are dropped).
    pub fn from_dense(a: ArrayView2<'_, f64>) -> Result<Self> {
        crate::error::check_finite("dense matrix", a)?;
        let mut indptr = Vec::with_capacity(a.nrows() + 1);
        indptr.push(0);
        let (mut indices, mut data) = (Vec::new(), Vec::new());
        for row in a.outer_iter() {
            for (j, &v) in row.iter().enumerate() {
                if v != 0.0 {
                    indices.push(j);
                    data.push(v);
                }
            }
            indptr.push(indices.len());
        }
        Ok(Self {
            nrows: a.nrows(),
            ncols: a.ncols(),
            indptr,
            indices,
            data,
        })
    }

    /// The `n x n` identity.
    pub fn identity(n: usize) -> Self {
        Self {
            nrows: n,
            ncols: n,
            indptr: (0..=n).collect(),
            indices: (0..n).collect(),
            data: vec![1.0; n],
        }
    }

    /// Number of rows.
    pub fn nrows(&self) -> usize {
        self.nrows
    }
    /// Number of columns.
    pub fn ncols(&self) -> usize {
        self.ncols
    }
    /// `(nrows, ncols)`.
    pub fn shape(&self) -> (usize, usize) {
        (self.nrows, self.ncols)
    }
    /// Number of stored entries.
    pub fn nnz(&self) -> usize {
        self.data.len()
    }
    /// Row pointer array (length `nrows + 1`).
    pub fn indptr(&self) -> &[usize] {
        &self.indptr
    }
    /// Column indices of the stored entries.
    pub fn indices(&self) -> &[usize] {
        &self.indices
    }
    /// Values of the stored entries.
    pub fn data(&self) -> &[f64] {
        &self.data
    }
    /// The column indices and values of row `i`. Panics if `i >= nrows` (an internal index).
    pub fn row(&self, i: usize) -> (&[usize], &[f64]) {
        let (a, b) = (self.indptr[i], self.indptr[i + 1]);
        (&self.indices[a..b], &self.data[a..b])
    }
    /// Every stored entry `(i, j, value)`, row by row in increasing column order (explicitly
    /// stored zeros included: filter on the value for the pattern of non-zeros).
    pub fn entries(&self) -> impl Iterator<Item = (usize, usize, f64)> + '_ {
        (0..self.nrows).flat_map(move |i| {
            let (idx, val) = self.row(i);
            idx.iter().zip(val).map(move |(&j, &v)| (i, j, v))
        })
    }
    /// The entry `(i, j)` (zero when not stored), or `None` when out of bounds.
    pub fn get(&self, i: usize, j: usize) -> Option<f64> {
        if i >= self.nrows || j >= self.ncols {
            return None;
        }
        let (idx, val) = self.row(i);
        Some(idx.binary_search(&j).map(|k| val[k]).unwrap_or(0.0))
    }

    /// The transpose, in CSR form (equivalently, this matrix in CSC form).
    pub fn transpose(&self) -> Self {
        let mut counts = vec![0usize; self.ncols + 1];
        for &j in &self.indices {
            counts[j + 1] += 1;
        }
        for j in 0..self.ncols {
            counts[j + 1] += counts[j];
        }
        let indptr = counts.clone();
        let mut next = counts;
        let mut indices = vec![0usize; self.nnz()];
        let mut data = vec![0.0; self.nnz()];
        for i in 0..self.nrows {
            let (idx, val) = self.row(i);
            for (&j, &v) in idx.iter().zip(val) {
                let p = next[j];
                indices[p] = i;
                data[p] = v;
                next[j] += 1;
            }
        }
        Self {
            nrows: self.ncols,
            ncols: self.nrows,
            indptr,
            indices,
            data,
        }
    }

    /// The dense form. Only for small matrices and tests.
    pub fn to_dense(&self) -> Array2<f64> {
        let mut out = Array2::zeros((self.nrows, self.ncols));
        for i in 0..self.nrows {
            let (idx, val) = self.row(i);
            for (&j, &v) in idx.iter().zip(val) {
                out[[i, j]] = v;
            }
        }
        out
    }

    /// The rows `rows` (in that order) as a new matrix. Out-of-range indices are an error.
    pub fn select_rows(&self, rows: &[usize]) -> Result<Self> {
        let mut indptr = Vec::with_capacity(rows.len() + 1);
        indptr.push(0);
        let (mut indices, mut data) = (Vec::new(), Vec::new());
        for &i in rows {
            if i >= self.nrows {
                return Err(LinalgError::IndexOutOfBounds {
                    what: "row",
                    index: i,
                    len: self.nrows,
                });
            }
            let (idx, val) = self.row(i);
            indices.extend_from_slice(idx);
            data.extend_from_slice(val);
            indptr.push(indices.len());
        }
        Ok(Self {
            nrows: rows.len(),
            ncols: self.ncols,
            indptr,
            indices,
            data,
        })
    }

    /// Squared Euclidean norm of every row.
    pub fn row_sq_norms(&self) -> Vec<f64> {
        (0..self.nrows)
            .map(|i| self.row(i).1.iter().map(|v| v * v).sum())
            .collect()
    }
    /// Sum of every row.
    pub fn row_sums(&self) -> Vec<f64> {
        (0..self.nrows).map(|i| self.row(i).1.iter().sum()).collect()
    }
    /// Sum of every column.
    pub fn col_sums(&self) -> Vec<f64> {
        let mut s = vec![0.0; self.ncols];
        for (&j, &v) in self.indices.iter().zip(&self.data) {
            s[j] += v;
        }
        s
    }
    /// Multiplies row `i` by `scale[i]`.
    pub fn scale_rows(&mut self, scale: &[f64]) -> Result<()> {
        if scale.len() != self.nrows {
            return Err(LinalgError::ShapeMismatch {
                op: "scale_rows",
                left: self.shape(),
                right: (scale.len(), 1),
            });
        }
        for i in 0..self.nrows {
            let (a, b) = (self.indptr[i], self.indptr[i + 1]);
            for v in &mut self.data[a..b] {
                *v *= scale[i];
            }
        }
        Ok(())
    }
    /// A copy with every stored value replaced by `f(value)`; entries that become zero stay stored.
    pub fn map_values(&self, f: impl Fn(f64) -> f64) -> Self {
        let mut out = self.clone();
        out.data.iter_mut().for_each(|v| *v = f(*v));
        out
    }

    /// `A X` for a dense `X` (`ncols x k`), parallel over rows.
    pub fn mul_dense(&self, x: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        self.dense_product("A X", self.ncols, self.nrows, x, Self::mul_dense_into)
    }

    /// `out = A X`; shapes must already be checked.
    pub(crate) fn mul_dense_into(&self, x: ArrayView2<'_, f64>, mut out: ndarray::ArrayViewMut2<'_, f64>) {
        out.axis_iter_mut(Axis(0))
            .into_par_iter()
            .enumerate()
            .for_each(|(i, mut orow)| {
                orow.fill(0.0);
                let (idx, val) = self.row(i);
                for (&j, &v) in idx.iter().zip(val) {
                    crate::vecmath::add_scaled(orow.view_mut(), v, x.row(j));
                }
            });
    }

    /// `A^T X` for a dense `X` (`nrows x k`), by a deterministic parallel scatter.
    pub fn tmul_dense(&self, x: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        self.dense_product("A^T X", self.nrows, self.ncols, x, Self::tmul_dense_into)
    }

    /// The product `op` of this matrix with a dense `x` that must have `inner` rows, written by
    /// `into` into a new `out_rows x k` matrix.
    fn dense_product(
        &self,
        op: &'static str,
        inner: usize,
        out_rows: usize,
        x: ArrayView2<'_, f64>,
        into: fn(&Self, ArrayView2<'_, f64>, ndarray::ArrayViewMut2<'_, f64>),
    ) -> Result<Array2<f64>> {
        if x.nrows() != inner {
            return Err(LinalgError::ShapeMismatch {
                op,
                left: self.shape(),
                right: x.dim(),
            });
        }
        let mut out = Array2::zeros((out_rows, x.ncols()));
        into(self, x, out.view_mut());
        Ok(out)
    }

    pub(crate) fn tmul_dense_into(&self, x: ArrayView2<'_, f64>, mut out: ndarray::ArrayViewMut2<'_, f64>) {
        let k = x.ncols();
        let nchunks = rayon::current_num_threads().clamp(1, 16).min(self.nrows.max(1));
        let chunk = self.nrows.div_ceil(nchunks.max(1)).max(1);
        // Fixed chunking and an in-order reduction keep the result bitwise reproducible.
        let partials: Vec<Array2<f64>> = (0..self.nrows)
            .step_by(chunk)
            .collect::<Vec<_>>()
            .into_par_iter()
            .map(|start| {
                let mut acc = Array2::zeros((self.ncols, k));
                for i in start..(start + chunk).min(self.nrows) {
                    let (idx, val) = self.row(i);
                    let xi = x.row(i);
                    for (&j, &v) in idx.iter().zip(val) {
                        acc.row_mut(j).scaled_add(v, &xi);
                    }
                }
                acc
            })
            .collect();
        out.fill(0.0);
        for p in partials {
            out += &p;
        }
    }

    /// The sparse product `A B` (Gustavson's algorithm, parallel over rows of `A`).
    pub fn matmul_sparse(&self, b: &CsrMatrix) -> Result<CsrMatrix> {
        if self.ncols != b.nrows {
            return Err(LinalgError::ShapeMismatch {
                op: "A B (sparse)",
                left: self.shape(),
                right: b.shape(),
            });
        }
        let rows: Vec<(Vec<usize>, Vec<f64>)> = (0..self.nrows)
            .into_par_iter()
            .map_init(
                || (vec![0.0f64; b.ncols], vec![false; b.ncols]),
                |(acc, seen), i| {
                    let mut cols = Vec::new();
                    let (idx, val) = self.row(i);
                    for (&k, &a) in idx.iter().zip(val) {
                        let (bidx, bval) = b.row(k);
                        for (&j, &bv) in bidx.iter().zip(bval) {
                            if !seen[j] {
                                seen[j] = true;
                                cols.push(j);
                            }
                            acc[j] += a * bv;
                        }
                    }
                    cols.sort_unstable();
                    let vals = cols
                        .iter()
                        .map(|&j| {
                            let v = acc[j];
                            acc[j] = 0.0;
                            seen[j] = false;
                            v
                        })
                        .collect();
                    (cols, vals)
                },
            )
            .collect();
        let mut indptr = Vec::with_capacity(self.nrows + 1);
        indptr.push(0);
        let nnz: usize = rows.iter().map(|r| r.0.len()).sum();
        let (mut indices, mut data) = (Vec::with_capacity(nnz), Vec::with_capacity(nnz));
        for (c, v) in rows {
            indices.extend(c);
            data.extend(v);
            indptr.push(indices.len());
        }
        Ok(CsrMatrix {
            nrows: self.nrows,
            ncols: b.ncols,
            indptr,
            indices,
            data,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    /// `entries` lists every stored entry row by row, stored zeros included, and rebuilds the
    /// matrix.
    #[test]
    fn entries_list_the_stored_entries_in_order() {
        let a = CsrMatrix::from_triplets(3, 3, vec![(2, 0, 4.0), (0, 2, 1.0), (0, 1, 0.0), (2, 2, -1.0)]).unwrap();
        let e: Vec<_> = a.entries().collect();
        assert_eq!(e, vec![(0, 1, 0.0), (0, 2, 1.0), (2, 0, 4.0), (2, 2, -1.0)]);
        assert_eq!(CsrMatrix::from_triplets(3, 3, e).unwrap(), a);
        assert_eq!(CsrMatrix::identity(0).entries().count(), 0);
    }

    #[test]
    fn triplets_sum_duplicates_and_sort() {
        let a = CsrMatrix::from_triplets(2, 3, vec![(1, 2, 1.0), (0, 1, 2.0), (1, 2, 3.0), (1, 0, 1.0)]).unwrap();
        assert_eq!(a.to_dense(), array![[0.0, 2.0, 0.0], [1.0, 0.0, 4.0]]);
        assert_eq!(a.nnz(), 3);
    }

    #[test]
    fn invalid_inputs_are_typed_errors() {
        assert!(matches!(
            CsrMatrix::from_triplets(2, 2, vec![(2, 0, 1.0)]),
            Err(LinalgError::IndexOutOfBounds { what: "row", .. })
        ));
        assert!(matches!(
            CsrMatrix::from_triplets(2, 2, vec![(0, 0, f64::NAN)]),
            Err(LinalgError::NonFinite { .. })
        ));
        assert!(matches!(
            CsrMatrix::from_triplets(2, 2, vec![(0, 2, 1.0)]),
            Err(LinalgError::IndexOutOfBounds { what: "column", .. })
        ));
        // Two finite duplicates whose sum overflows.
        assert!(matches!(
            CsrMatrix::from_triplets(2, 2, vec![(1, 0, f64::MAX), (1, 0, f64::MAX)]),
            Err(LinalgError::NonFinite { row: 1, col: 0, .. })
        ));
        assert!(matches!(
            CsrMatrix::try_new(2, 2, vec![0, 1], vec![0], vec![1.0]),
            Err(LinalgError::InvalidCsr(_))
        ));
        assert!(matches!(
            CsrMatrix::try_new(1, 2, vec![0, 2], vec![1, 0], vec![1.0, 1.0]),
            Err(LinalgError::InvalidCsr(_))
        ));
    }

    #[test]
    fn products_match_dense() {
        let a = array![[1.0, 0.0, 2.0], [0.0, 0.0, 0.0], [3.0, 4.0, 0.0], [0.0, 5.0, 6.0]];
        let s = CsrMatrix::from_dense(a.view()).unwrap();
        let x = array![[1.0, -1.0], [0.5, 2.0], [-3.0, 0.25]];
        assert_eq!(s.mul_dense(x.view()).unwrap(), a.dot(&x));
        let y = array![[1.0], [2.0], [3.0], [4.0]];
        assert_eq!(s.tmul_dense(y.view()).unwrap(), a.t().dot(&y));
        assert_eq!(s.transpose().to_dense(), a.t().to_owned());
        let st = s.transpose();
        assert_eq!(s.matmul_sparse(&st).unwrap().to_dense(), a.dot(&a.t()));
        assert!(s.mul_dense(y.view()).is_err());
    }
}
