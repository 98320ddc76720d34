//! Very sparse random projections (Achlioptas 2003; Li, Hastie & Church 2006), generated row by
//! row from a seed so that a `D × d` matrix never has to be stored.
use ksvd_linalg::CsrMatrix;
use ndarray::{Array1, Array2, Axis};
use rand::Rng;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::{Result, StreamingError};
use crate::seeding::{domain, item_rng};

/// How the nonzero entries of a [`SparseProjection`] are scaled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProjectionScaling {
    /// Entries of variance `1/d`: `E‖Rᵀv‖² = ‖v‖²` (the Johnson–Lindenstrauss scaling).
    #[default]
    NormPreserving,
    /// Entries of variance 1, like Algorithm 1's `randn`: `E‖Rᵀv‖² = d ‖v‖²`.
    Unit,
}

/// A seeded very sparse random matrix `R ∈ R^{D×d}` that maps `v ∈ R^D` to `Rᵀv ∈ R^d`.
///
/// Every entry is independently `+σ√s` with probability `1/(2s)`, `−σ√s` with probability
/// `1/(2s)` and `0` otherwise, where `1/s` is the density (Li et al. recommend `s = √D`, the
/// default; `s = 1` is Achlioptas' dense ±1 matrix, `s = 3` his sparse one) and `σ = 1/√d`
/// ([`ProjectionScaling::NormPreserving`]) or `1` ([`ProjectionScaling::Unit`]). Then
/// `E[R_kl] = 0`, `E[R_kl²] = σ²`, so `E[(Rᵀu)·(Rᵀv)] = d σ² u·v`.
///
/// Row `k` is generated from its own stream `(seed, k)` by geometric skipping, in
/// `O(nnz)` time and independently of every other row: the matrix is the same whichever rows
/// are generated, in whichever order or on whichever thread.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SparseProjection {
    input_dim: usize,
    output_dim: usize,
    density: f64,
    value: f64,
    seed: u64,
}

impl SparseProjection {
    /// A projection `R^D → R^d` with the given density of nonzeros (`None`: `1/√D`, Li et
    /// al.'s "very sparse" choice, at most 1).
    pub fn new(
        input_dim: usize,
        output_dim: usize,
        density: Option<f64>,
        scaling: ProjectionScaling,
        seed: u64,
    ) -> Result<Self> {
        if input_dim == 0 || output_dim == 0 {
            return Err(StreamingError::invalid(
                "projection shape",
                format!("{input_dim} x {output_dim}"),
                "both dimensions must be at least 1",
            ));
        }
        let density = density.unwrap_or(1.0 / (input_dim as f64).sqrt()).min(1.0);
        if !(density.is_finite() && density > 0.0) {
            return Err(StreamingError::invalid(
                "projection_density",
                density,
                "must lie in (0, 1]",
            ));
        }
        let sigma = match scaling {
            ProjectionScaling::NormPreserving => 1.0 / (output_dim as f64).sqrt(),
            ProjectionScaling::Unit => 1.0,
        };
        Ok(SparseProjection {
            input_dim,
            output_dim,
            density,
            value: sigma / density.sqrt(),
            seed,
        })
    }

    /// `D`, the dimension of the vectors that are projected.
    pub fn input_dim(&self) -> usize {
        self.input_dim
    }

    /// `d`, the dimension of the projections.
    pub fn output_dim(&self) -> usize {
        self.output_dim
    }

    /// Probability that an entry is nonzero (`1/s`).
    pub fn density(&self) -> f64 {
        self.density
    }

    /// Magnitude `σ√s` of the nonzero entries.
    pub fn magnitude(&self) -> f64 {
        self.value
    }

    /// The seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Row `k` of `R` as sorted column indices and values, appended to the given buffers after
    /// clearing them.
    pub fn row_into(&self, k: usize, cols: &mut Vec<usize>, vals: &mut Vec<f64>) {
        cols.clear();
        vals.clear();
        let mut rng = item_rng(self.seed, domain::PROJECTION, k as u64);
        let d = self.output_dim;
        if self.density >= 1.0 {
            for l in 0..d {
                cols.push(l);
                vals.push(if rng.gen::<bool>() { self.value } else { -self.value });
            }
            return;
        }
        // Gaps between nonzeros are geometric: P(gap = g) = (1 - p)^g p.
        let log_q = (-self.density).ln_1p();
        let mut pos: usize = 0;
        loop {
            let u: f64 = 1.0 - rng.gen::<f64>(); // in (0, 1]
            let gap = (u.ln() / log_q).floor();
            // `gap` is finite and non-negative (u in (0, 1], log_q < 0); compare as ordered.
            if gap.partial_cmp(&((d - pos) as f64)) != Some(std::cmp::Ordering::Less) {
                break;
            }
            pos += gap as usize;
            cols.push(pos);
            vals.push(if rng.gen::<bool>() { self.value } else { -self.value });
            pos += 1;
            if pos >= d {
                break;
            }
        }
    }

    /// Row `k` of `R`.
    pub fn row(&self, k: usize) -> (Vec<usize>, Vec<f64>) {
        let (mut c, mut v) = (Vec::new(), Vec::new());
        self.row_into(k, &mut c, &mut v);
        (c, v)
    }

    /// `Rᵀv` for a sparse `v` given by its indices (`< D`) and values.
    pub fn project(&self, indices: &[usize], values: &[f64]) -> Array1<f64> {
        let mut out = Array1::zeros(self.output_dim);
        let (mut c, mut v) = (Vec::new(), Vec::new());
        for (&k, &x) in indices.iter().zip(values) {
            self.row_into(k, &mut c, &mut v);
            for (&l, &r) in c.iter().zip(&v) {
                out[l] += x * r;
            }
        }
        out
    }

    /// `X R` for the rows of `x` (`c × D`, CSR): row `t` is `Rᵀ x_t` (`c × d`, dense; rows
    /// computed in parallel, each exactly as [`SparseProjection::project`]).
    pub fn project_rows(&self, x: &CsrMatrix) -> Result<Array2<f64>> {
        if x.ncols() != self.input_dim {
            return Err(StreamingError::invalid(
                "rows",
                format!("{} x {}", x.nrows(), x.ncols()),
                format!("the projection maps {} features", self.input_dim),
            ));
        }
        let mut out = Array2::zeros((x.nrows(), self.output_dim));
        out.axis_iter_mut(Axis(0))
            .into_par_iter()
            .enumerate()
            .for_each(|(t, mut row)| {
                let (idx, val) = x.row(t);
                row.assign(&self.project(idx, val));
            });
        Ok(out)
    }

    /// `‖Rᵀv‖²` for a sparse `v`, using a caller-owned workspace (`scratch` must hold
    /// `output_dim` zeros and is left zeroed).
    pub(crate) fn project_sq_norm(&self, indices: &[usize], values: &[f64], ws: &mut ProjectionWorkspace) -> f64 {
        ws.ensure(self.output_dim);
        for (&k, &x) in indices.iter().zip(values) {
            self.row_into(k, &mut ws.cols, &mut ws.vals);
            for (&l, &r) in ws.cols.iter().zip(&ws.vals) {
                if !ws.mark[l] {
                    ws.mark[l] = true;
                    ws.touched.push(l);
                }
                ws.scratch[l] += x * r;
            }
        }
        let mut sum = 0.0;
        ws.touched.sort_unstable();
        for &l in &ws.touched {
            sum += ws.scratch[l] * ws.scratch[l];
            ws.scratch[l] = 0.0;
            ws.mark[l] = false;
        }
        ws.touched.clear();
        sum
    }

    /// The whole matrix `R` (`D × d`), for tests and small in-memory references.
    pub fn to_dense(&self) -> Array2<f64> {
        let mut r = Array2::zeros((self.input_dim, self.output_dim));
        let (mut c, mut v) = (Vec::new(), Vec::new());
        for k in 0..self.input_dim {
            self.row_into(k, &mut c, &mut v);
            for (&l, &x) in c.iter().zip(&v) {
                r[[k, l]] = x;
            }
        }
        r
    }
}

/// Reusable buffers of [`SparseProjection::project_sq_norm`].
#[derive(Debug, Default)]
pub(crate) struct ProjectionWorkspace {
    scratch: Vec<f64>,
    mark: Vec<bool>,
    touched: Vec<usize>,
    cols: Vec<usize>,
    vals: Vec<f64>,
}

impl ProjectionWorkspace {
    fn ensure(&mut self, d: usize) {
        if self.scratch.len() != d {
            self.scratch = vec![0.0; d];
            self.mark = vec![false; d];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_sorted_and_in_range() {
        let p = SparseProjection::new(1000, 37, Some(0.2), ProjectionScaling::Unit, 3).unwrap();
        for k in 0..200 {
            let (c, v) = p.row(k);
            assert!(c.windows(2).all(|w| w[0] < w[1]));
            assert!(c.iter().all(|&l| l < 37));
            assert!(v.iter().all(|&x| (x.abs() - p.magnitude()).abs() == 0.0));
        }
        let dense = SparseProjection::new(10, 5, Some(1.0), ProjectionScaling::NormPreserving, 3).unwrap();
        assert_eq!(dense.row(4).0, vec![0, 1, 2, 3, 4]);
    }

    /// A small sparse matrix with a few exact zeros per row.
    fn sample_rows(n: usize, d: usize) -> Array2<f64> {
        Array2::from_shape_fn((n, d), |(i, j)| {
            if (i * 7 + j * 3) % 5 == 0 {
                0.0
            } else {
                ((i * d + j) as f64 * 0.37).sin()
            }
        })
    }

    #[test]
    fn projected_rows_are_x_times_the_dense_matrix() {
        let p = SparseProjection::new(40, 9, None, ProjectionScaling::NormPreserving, 5).unwrap();
        let x = sample_rows(6, 40);
        let got = p.project_rows(&CsrMatrix::from_dense(x.view()).unwrap()).unwrap();
        let want = x.dot(&p.to_dense());
        let scale = want.iter().fold(0.0f64, |a, v| a.max(v.abs()));
        assert!(got
            .iter()
            .zip(want.iter())
            .all(|(a, b)| (a - b).abs() <= 64.0 * f64::EPSILON * scale));
        assert!(p
            .project_rows(&CsrMatrix::from_dense(sample_rows(2, 39).view()).unwrap())
            .is_err());
    }

    #[test]
    fn mapped_columns_of_the_parts_sum_to_the_mapped_landmark_columns() {
        // C_z: N = 30 rows to M = 8 features; J = {6, 1, 3}; parts of 13 and 17 rows.
        let (n, m) = (30, 8);
        let p = SparseProjection::new(n, m, None, ProjectionScaling::NormPreserving, 9).unwrap();
        let x = sample_rows(n, m);
        let cols = [6usize, 1, 3];
        let csr = |a: ndarray::ArrayView2<'_, f64>| CsrMatrix::from_dense(a).unwrap();
        let top = crate::ksvd::mapped_columns(&p, 0, &csr(x.slice(ndarray::s![..13, ..])), &cols).unwrap();
        let bottom = crate::ksvd::mapped_columns(&p, 13, &csr(x.slice(ndarray::s![13.., ..])), &cols).unwrap();
        let got = top + bottom;
        let want = p.to_dense().t().dot(&x.select(Axis(1), &cols));
        let scale = want.iter().fold(0.0f64, |a, v| a.max(v.abs()));
        assert!(got
            .iter()
            .zip(want.iter())
            .all(|(a, b)| (a - b).abs() <= 64.0 * f64::EPSILON * scale));
        // Rows beyond the projection, a column beyond the data: typed errors.
        assert!(crate::ksvd::mapped_columns(&p, 20, &csr(x.slice(ndarray::s![13.., ..])), &cols).is_err());
        assert!(crate::ksvd::mapped_columns(&p, 0, &csr(x.view()), &[8]).is_err());
    }

    #[test]
    fn workspace_norm_matches_projection() {
        let p = SparseProjection::new(500, 80, None, ProjectionScaling::NormPreserving, 11).unwrap();
        let idx = [3usize, 17, 40, 41, 499];
        let val = [1.0, -2.0, 0.5, 3.0, 1.5];
        let y = p.project(&idx, &val);
        let mut ws = ProjectionWorkspace::default();
        let a = p.project_sq_norm(&idx, &val, &mut ws);
        let b = y.dot(&y);
        assert!((a - b).abs() <= 8.0 * f64::EPSILON * b.max(1.0));
        // The workspace is left clean.
        let again = p.project_sq_norm(&idx, &val, &mut ws);
        assert_eq!(a, again);
    }
}
