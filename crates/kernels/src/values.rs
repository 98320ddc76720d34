//! Dense kernel values `k(x_i, z_j)` from dense samples, from inner products and squared norms,
//! or from squared distances: the arithmetic for callers that hold a small dense block, or that
//! form the inner products themselves (e.g. from a Gram-matrix eigendecomposition).
//!
//! [`crate::KernelMatrix`] is the operator for large matrices (blocked, vectorised, matrix-free);
//! the functions here evaluate one dense block in the plain order of operations below, which
//! differs from [`crate::KernelMatrix`]'s fused kernels only in rounding (the tests check the two
//! against each other). For entries `p_ij = x_i · z_j`, `d_ij = ‖x_i − z_j‖²`:
//!
//! | kernel | value |
//! |---|---|
//! | `Linear` | `p_ij` |
//! | `Polynomial { degree, offset }` | `(p_ij + offset)^degree` |
//! | `Rbf { gamma }` | `exp(−d_ij / γ²)`, with `γ² = γ · γ` |
//! | `Laplacian { gamma }` | `exp(−sqrt(d_ij) / γ)` |
//! | `Sne { gamma }` | `exp(t_ij − t_i) / Σ_l exp(t_il − t_i)`, `t_ij = −d_ij / γ²`, `t_i = max_l t_il` |
//!
//! The SNE rows are normalised over all columns of the block (the block must hold the whole Z
//! set), shifted by the row maximum so that no row underflows: every row sums to 1.
use crate::error::{KernelError, Result};
use crate::kernel::Kernel;
use ksvd_linalg::dense;
use ksvd_linalg::Vocabulary;
use ndarray::{Array2, ArrayView2, ArrayViewMut1, ArrayViewMut2, Axis};
use rayon::prelude::*;

impl Kernel {
    /// The dense block `G_ij = k(x_i, z_j)` (`n × m`) of the rows of `x` (`n × d`) against the
    /// rows of `z` (`m × d`), with the arithmetic of the [module table](crate::values):
    /// inner products by one GEMM, squared distances by [`crate::bandwidth::sq_distances`]
    /// (the GEMM identity on inputs shifted by the mean of `z`, clamped at 0). For SNE, `z` is
    /// the whole column set.
    ///
    /// # Errors
    /// Invalid hyper-parameters, samples of different dimension, or non-finite samples.
    ///
    /// ```
    /// use ksvd_kernels::Kernel;
    /// use ndarray::array;
    ///
    /// let x = array![[0.0, 0.0], [1.0, 0.0]];
    /// let z = array![[0.0, 2.0]];
    /// let g = Kernel::Rbf { gamma: 2.0 }.dense_block(x.view(), z.view())?;
    /// assert!((g[[1, 0]] - (-5.0f64 / 4.0).exp()).abs() < 1e-15);
    /// # Ok::<(), ksvd_kernels::KernelError>(())
    /// ```
    pub fn dense_block(&self, x: ArrayView2<'_, f64>, z: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        self.validate()?;
        if x.ncols() != z.ncols() {
            return Err(KernelError::DimensionMismatch {
                x_dim: x.ncols(),
                z_dim: z.ncols(),
            });
        }
        ksvd_linalg::check_finite("x samples", x)?;
        ksvd_linalg::check_finite("z samples", z)?;
        match self {
            Kernel::Linear | Kernel::Polynomial { .. } => {
                let mut p = dense::matmul(x, z.t())?;
                self.inner_to_values(p.view_mut());
                Ok(p)
            }
            Kernel::Rbf { .. } | Kernel::Laplacian { .. } | Kernel::Sne { .. } => {
                let mut d = crate::bandwidth::sq_distances(x, z)?;
                self.values_from_sq_distances(d.view_mut())?;
                Ok(d)
            }
        }
    }

    /// Turns inner products `p_ij = x_i · z_j` into kernel values in place, given the squared
    /// norms `nx_i = ‖x_i‖²` and `nz_j = ‖z_j‖²` (needed by the distance kernels, for which
    /// `d_ij = max(nx_i + nz_j − 2 p_ij, 0)`; the linear and polynomial kernels ignore them and
    /// accept empty slices). For a caller that forms the inner products of its samples itself;
    /// see the [module table](crate::values) for the arithmetic. For SNE, `p` holds every column
    /// of Z. Rows are processed in parallel.
    ///
    /// # Errors
    /// Invalid hyper-parameters, or norms whose lengths do not match `p` (distance kernels).
    pub fn values_from_inner_products(&self, mut p: ArrayViewMut2<'_, f64>, nx: &[f64], nz: &[f64]) -> Result<()> {
        self.validate()?;
        if !self.needs_norms() {
            self.inner_to_values(p);
            return Ok(());
        }
        crate::bandwidth::check_norms(&p, nx, nz)?;
        // One pass per row: distances, then the kernel's values, while the row is in cache.
        p.axis_iter_mut(Axis(0))
            .into_par_iter()
            .zip(nx.par_iter())
            .for_each(|(mut row, &a)| {
                crate::bandwidth::sq_distance_row(row.view_mut(), a, nz);
                self.distance_row(row);
            });
        Ok(())
    }

    /// Turns squared distances `d_ij = ‖x_i − z_j‖² ≥ 0` into kernel values in place (RBF,
    /// Laplacian, SNE; see the [module table](crate::values)). For SNE, `d` holds every column
    /// of Z. Rows are processed in parallel.
    ///
    /// # Errors
    /// Invalid hyper-parameters; [`KernelError::NeedsInnerProducts`] for the linear and
    /// polynomial kernels, which are not functions of the distance.
    pub fn values_from_sq_distances(&self, mut d: ArrayViewMut2<'_, f64>) -> Result<()> {
        self.validate()?;
        if !self.needs_norms() {
            return Err(KernelError::NeedsInnerProducts {
                kernel: self.kind().name(),
            });
        }
        d.axis_iter_mut(Axis(0))
            .into_par_iter()
            .for_each(|row| self.distance_row(row));
        Ok(())
    }

    /// Linear and polynomial values from inner products, in place (other kernels: unchanged).
    fn inner_to_values(&self, mut p: ArrayViewMut2<'_, f64>) {
        if let Kernel::Polynomial { degree, offset } = *self {
            p.mapv_inplace(|v| (v + offset).powi(degree as i32));
        }
    }

    /// One row of squared distances to kernel values (distance kernels; others: unchanged).
    fn distance_row(&self, mut row: ArrayViewMut1<'_, f64>) {
        match *self {
            Kernel::Rbf { gamma } => {
                let g2 = gamma * gamma;
                row.mapv_inplace(|v| (-v / g2).exp());
            }
            Kernel::Laplacian { gamma } => row.mapv_inplace(|v| (-v.sqrt() / gamma).exp()),
            Kernel::Sne { gamma } => {
                let g2 = gamma * gamma;
                row.mapv_inplace(|v| -v / g2);
                let max = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                row.mapv_inplace(|v| (v - max).exp());
                let sum = row.sum();
                row.mapv_inplace(|v| v / sum);
            }
            Kernel::Linear | Kernel::Polynomial { .. } => {}
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::{KernelMatrix, Samples};
    use ksvd_linalg::random::{gaussian_matrix, rng_from_seed};
    use ksvd_linalg::MatrixBlocks;

    fn kernels() -> [Kernel; 6] {
        [
            Kernel::Linear,
            Kernel::Polynomial { degree: 2, offset: 1.0 },
            Kernel::Polynomial {
                degree: 3,
                offset: -0.5,
            },
            Kernel::Rbf { gamma: 1.3 },
            Kernel::Laplacian { gamma: 0.9 },
            Kernel::Sne { gamma: 1.1 },
        ]
    }

    fn max_abs(a: &Array2<f64>) -> f64 {
        a.iter().fold(0.0f64, |m, v| m.max(v.abs()))
    }

    /// From samples and from inner products, the values agree with `KernelMatrix` and with
    /// the pairwise definition (`Kernel::eval_pair`, SNE normalised by hand) to rounding, for
    /// tall, wide and square blocks.
    #[test]
    fn every_evaluation_agrees_with_the_kernel_matrix_and_the_definition() {
        let mut rng = rng_from_seed(3);
        for (n, m, d) in [(7, 4, 3), (3, 9, 5), (6, 6, 2)] {
            let x = gaussian_matrix(&mut rng, n, d);
            let z = gaussian_matrix(&mut rng, m, d) * 0.8;
            let p = x.dot(&z.t());
            let nx: Vec<f64> = x.outer_iter().map(|r| r.dot(&r)).collect();
            let nz: Vec<f64> = z.outer_iter().map(|r| r.dot(&r)).collect();
            for k in kernels() {
                let reference = KernelMatrix::new(
                    Samples::dense(x.clone()).unwrap(),
                    Samples::dense(z.clone()).unwrap(),
                    k,
                )
                .unwrap()
                .block(&(0..n).collect::<Vec<_>>(), &(0..m).collect::<Vec<_>>())
                .unwrap();
                let mut pairwise = Array2::from_shape_fn((n, m), |(i, j)| {
                    k.eval_pair(x.row(i).as_slice().unwrap(), z.row(j).as_slice().unwrap())
                        .unwrap()
                });
                if matches!(k, Kernel::Sne { .. }) {
                    for mut row in pairwise.outer_iter_mut() {
                        let s = row.sum();
                        row /= s;
                    }
                }
                let from_samples = k.dense_block(x.view(), z.view()).unwrap();
                let mut from_inner = p.clone();
                k.values_from_inner_products(from_inner.view_mut(), &nx, &nz).unwrap();
                // Relative to the largest value; the distances lose eps * (‖x‖² + ‖z‖²).
                let tol = 64.0 * f64::EPSILON * (d as f64) * max_abs(&reference).max(1.0);
                for (what, got) in [("samples", &from_samples), ("inner products", &from_inner)] {
                    let diff = max_abs(&(got - &reference));
                    assert!(diff <= tol, "{k} from {what}, {n}x{m}: {diff:e} > {tol:e}");
                    let diff = max_abs(&(got - &pairwise));
                    assert!(diff <= tol, "{k} from {what} vs pairs, {n}x{m}: {diff:e}");
                }
            }
        }
    }

    /// The SNE rows sum to one even when every unshifted exponential underflows, and the
    /// distance form is the inner-product form with `p = 0`, `nx = d`, `nz = 0`.
    #[test]
    fn sne_rows_sum_to_one_far_away_and_distances_match_inner_products() {
        let d = ndarray::array![[1e6, 1e6 + 1.0, 1e6 + 4.0], [9.0, 0.0, 1.0]];
        let k = Kernel::Sne { gamma: 1.0 };
        let mut g = d.clone();
        k.values_from_sq_distances(g.view_mut()).unwrap();
        for row in g.outer_iter() {
            assert!((row.sum() - 1.0).abs() <= 4.0 * f64::EPSILON, "{row}");
        }
        // Row 0: exp(-(0, 1, 4)) / Σ.
        let s = 1.0 + (-1.0f64).exp() + (-4.0f64).exp();
        assert!((g[[0, 1]] - (-1.0f64).exp() / s).abs() <= 4.0 * f64::EPSILON);
        for k in [k, Kernel::Rbf { gamma: 2.0 }, Kernel::Laplacian { gamma: 0.5 }] {
            let mut a = ndarray::array![[3.0, 0.25]];
            k.values_from_sq_distances(a.view_mut()).unwrap();
            let mut b = Array2::zeros((1, 2));
            k.values_from_inner_products(b.view_mut(), &[0.0], &[3.0, 0.25])
                .unwrap();
            assert_eq!(a, b, "{k}");
        }
    }

    #[test]
    fn bad_inputs_are_typed_errors() {
        let mut p = Array2::<f64>::zeros((2, 3));
        assert!(matches!(
            Kernel::Rbf { gamma: 1.0 }.values_from_inner_products(p.view_mut(), &[0.0; 2], &[0.0; 2]),
            Err(KernelError::Linalg(ksvd_linalg::LinalgError::ShapeMismatch { .. }))
        ));
        assert!(matches!(
            Kernel::Rbf { gamma: 0.0 }.values_from_inner_products(p.view_mut(), &[0.0; 2], &[0.0; 3]),
            Err(KernelError::InvalidParameter { name: "gamma", .. })
        ));
        assert!(matches!(
            Kernel::Polynomial { degree: 2, offset: 1.0 }.values_from_sq_distances(p.view_mut()),
            Err(KernelError::NeedsInnerProducts { kernel: "poly" })
        ));
        // Linear and polynomial values need no norms.
        Kernel::Linear
            .values_from_inner_products(p.view_mut(), &[], &[])
            .unwrap();
        let x = Array2::<f64>::zeros((2, 3));
        let z = Array2::<f64>::zeros((2, 4));
        assert!(matches!(
            Kernel::Sne { gamma: 1.0 }.dense_block(x.view(), z.view()),
            Err(KernelError::DimensionMismatch { x_dim: 3, z_dim: 4 })
        ));
        let nan = ndarray::array![[f64::NAN, 0.0, 0.0]];
        assert!(Kernel::Linear.dense_block(nan.view(), x.view()).is_err());
    }
}
