//! Kernels on feature vectors, their Gram matrices, and the implicit (never materialised)
//! training kernel matrix as a [`LinearOperator`].
use crate::error::{check_finite, LssvmError, Result};
use ksvd_linalg::dense::gemm_into;
use ksvd_linalg::LinearOperator;
use ndarray::{s, Array1, Array2, ArrayView1, ArrayView2, ArrayViewMut2, Axis, Zip};

/// A kernel `k(x, z)` on feature vectors (rows of the data matrices).
///
/// Both kernels are symmetric, `k(x, z) = k(z, x)`, and positive semi-definite, so
/// `K + I / gamma` is positive definite and Cholesky / conjugate gradient apply.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum Kernel {
    /// `k(x, z) = x^T z`. The only kernel the primal solver accepts.
    Linear,
    /// `k(x, z) = exp(-||x - z||^2 / sigma^2)` (the paper's RBF with its bandwidth `gamma`
    /// renamed `sigma` here, to keep `gamma` for the LS-SVM regularisation).
    Rbf {
        /// Bandwidth, finite and `> 0`.
        sigma: f64,
    },
}

impl Kernel {
    /// The RBF kernel `exp(-||x - z||^2 / sigma^2)`.
    pub fn rbf(sigma: f64) -> Self {
        Kernel::Rbf { sigma }
    }

    /// `Ok` if the kernel's parameters are valid (RBF: `sigma` finite and `> 0`).
    pub fn check(&self) -> Result<()> {
        match *self {
            Kernel::Linear => Ok(()),
            Kernel::Rbf { sigma } if sigma.is_finite() && sigma > 0.0 => Ok(()),
            Kernel::Rbf { sigma } => Err(LssvmError::InvalidBandwidth { sigma }),
        }
    }

    /// `k(x, z)` for two vectors of equal length (a reference implementation, one pair at a time).
    pub fn eval(&self, x: ArrayView1<'_, f64>, z: ArrayView1<'_, f64>) -> Result<f64> {
        self.check()?;
        if x.len() != z.len() {
            return Err(LssvmError::LengthMismatch {
                what: "kernel arguments",
                expected: x.len(),
                found: z.len(),
            });
        }
        Ok(match *self {
            Kernel::Linear => x.dot(&z),
            Kernel::Rbf { sigma } => {
                let d2: f64 = x.iter().zip(z.iter()).map(|(a, b)| (a - b) * (a - b)).sum();
                (-d2 / (sigma * sigma)).exp()
            }
        })
    }

    /// The kernel matrix `K[i, j] = k(x_i, z_j)`: rows index the rows of `x`, columns index the
    /// rows of `z`. RBF distances use `||x||^2 + ||z||^2 - 2 x^T z` (one GEMM), clamped at 0.
    pub fn matrix(&self, x: ArrayView2<'_, f64>, z: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        self.check()?;
        if x.ncols() != z.ncols() {
            return Err(LssvmError::FeatureMismatch {
                expected: x.ncols(),
                found: z.ncols(),
            });
        }
        check_finite("kernel input x", x)?;
        check_finite("kernel input z", z)?;
        let mut out = Array2::zeros((x.nrows(), z.nrows()));
        self.block_into(x, sq_norms(x).view(), z, sq_norms(z).view(), out.view_mut());
        Ok(out)
    }

    /// The training Gram matrix `K[i, j] = k(x_i, x_j)`, exactly symmetric (the upper triangle is
    /// copied from the lower one) with the exact RBF diagonal 1.
    pub(crate) fn gram(&self, x: ArrayView2<'_, f64>) -> Array2<f64> {
        let n = x.nrows();
        let norms = sq_norms(x);
        let mut k = Array2::zeros((n, n));
        self.block_into(x, norms.view(), x, norms.view(), k.view_mut());
        for i in 0..n {
            for j in 0..i {
                k[[j, i]] = k[[i, j]];
            }
            if let Kernel::Rbf { .. } = self {
                k[[i, i]] = 1.0;
            }
        }
        k
    }

    /// `out = K(x, z)` without checks (shapes and parameters were validated by the caller).
    pub(crate) fn block_into(
        &self,
        x: ArrayView2<'_, f64>,
        x_sq: ArrayView1<'_, f64>,
        z: ArrayView2<'_, f64>,
        z_sq: ArrayView1<'_, f64>,
        mut out: ArrayViewMut2<'_, f64>,
    ) {
        match *self {
            Kernel::Linear => {
                // Shapes match by construction; gemm_into cannot fail here.
                let _ = gemm_into(out, x, z.t(), 1.0, false);
            }
            Kernel::Rbf { sigma } => {
                let _ = gemm_into(out.view_mut(), x, z.t(), -2.0, false);
                let inv_s2 = 1.0 / (sigma * sigma);
                Zip::from(out.axis_iter_mut(Axis(0)))
                    .and(x_sq)
                    .par_for_each(|mut row, &a| {
                        Zip::from(&mut row)
                            .and(z_sq)
                            .for_each(|v, &b| *v = (-(a + b + *v).max(0.0) * inv_s2).exp());
                    });
            }
        }
    }
}

/// Squared Euclidean norms of the rows.
pub(crate) fn sq_norms(x: ArrayView2<'_, f64>) -> Array1<f64> {
    x.map_axis(Axis(1), |r| r.dot(&r))
}

/// The training kernel matrix `K[i, j] = k(x_i, x_j)` (`N x N`) as an implicit operator: it is
/// never stored. `K V` is computed in row blocks of `block_rows x N` kernel entries, so memory is
/// `O(block_rows * N)`; the linear kernel uses `X (X^T V)` at `O(N d)` per column.
#[derive(Debug, Clone)]
pub struct KernelOperator<'a> {
    kernel: Kernel,
    x: ArrayView2<'a, f64>,
    sq_norms: Array1<f64>,
    block_rows: usize,
}

/// Default memory per kernel block, in entries (32 MiB of `f64`).
const BLOCK_ENTRIES: usize = 1 << 22;

impl<'a> KernelOperator<'a> {
    /// The implicit kernel matrix of the rows of `x` (`N x d`, finite).
    pub fn new(kernel: Kernel, x: ArrayView2<'a, f64>) -> Result<Self> {
        kernel.check()?;
        check_finite("training features", x)?;
        let block_rows = (BLOCK_ENTRIES / x.nrows().max(1)).max(1);
        Ok(Self {
            kernel,
            x,
            sq_norms: sq_norms(x),
            block_rows,
        })
    }

    /// Sets the number of kernel rows evaluated at once (at least 1).
    pub fn with_block_rows(mut self, block_rows: usize) -> Self {
        self.block_rows = block_rows.max(1);
        self
    }
}

impl LinearOperator for KernelOperator<'_> {
    fn nrows(&self) -> usize {
        self.x.nrows()
    }
    fn ncols(&self) -> usize {
        self.x.nrows()
    }
    fn apply_into(&self, v: ArrayView2<'_, f64>, mut out: ArrayViewMut2<'_, f64>) -> ksvd_linalg::Result<()> {
        let n = self.x.nrows();
        match self.kernel {
            Kernel::Linear => {
                let mut t = Array2::zeros((self.x.ncols(), v.ncols()));
                gemm_into(t.view_mut(), self.x.t(), v, 1.0, false)?;
                gemm_into(out, self.x, t.view(), 1.0, false)?;
            }
            Kernel::Rbf { .. } => {
                let mut buf = Array2::zeros((self.block_rows.min(n), n));
                let mut start = 0;
                while start < n {
                    let end = (start + self.block_rows).min(n);
                    let mut kb = buf.slice_mut(s![..end - start, ..]);
                    self.kernel.block_into(
                        self.x.slice(s![start..end, ..]),
                        self.sq_norms.slice(s![start..end]),
                        self.x,
                        self.sq_norms.view(),
                        kb.view_mut(),
                    );
                    // Same exact diagonal as the materialised Gram matrix.
                    for i in start..end {
                        kb[[i - start, i]] = 1.0;
                    }
                    gemm_into(out.slice_mut(s![start..end, ..]), kb.view(), v, 1.0, false)?;
                    start = end;
                }
            }
        }
        Ok(())
    }
    fn apply_transpose_into(&self, v: ArrayView2<'_, f64>, out: ArrayViewMut2<'_, f64>) -> ksvd_linalg::Result<()> {
        // Both kernels are symmetric.
        self.apply_into(v, out)
    }
}

#[cfg(test)]
// A failed unwrap in a test is a test failure with a backtrace, which is what we want here.
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use ksvd_linalg::random::{gaussian_matrix, rng_from_seed};
    use ksvd_linalg::{materialize, LinearOperator};

    #[test]
    fn matrix_matches_pointwise_eval_and_operator_matches_gram() {
        let mut rng = rng_from_seed(11);
        let x = gaussian_matrix(&mut rng, 9, 3);
        let z = gaussian_matrix(&mut rng, 4, 3);
        for kernel in [Kernel::Linear, Kernel::rbf(1.7)] {
            let k = kernel.matrix(x.view(), z.view()).unwrap();
            for i in 0..9 {
                for j in 0..4 {
                    let e = kernel.eval(x.row(i), z.row(j)).unwrap();
                    assert!((k[[i, j]] - e).abs() <= 64.0 * f64::EPSILON * (1.0 + e.abs()));
                }
            }
            let g = kernel.gram(x.view());
            let op = KernelOperator::new(kernel, x.view()).unwrap().with_block_rows(4);
            let m = materialize(&op).unwrap();
            let scale = g.iter().fold(1.0_f64, |a, v| a.max(v.abs()));
            assert!((&m - &g).iter().all(|e| e.abs() <= 64.0 * f64::EPSILON * 9.0 * scale));
            let v = gaussian_matrix(&mut rng, 9, 2);
            assert_eq!(op.apply(v.view()).unwrap(), op.apply_transpose(v.view()).unwrap());
        }
    }

    #[test]
    fn bad_kernel_inputs() {
        let x = Array2::<f64>::zeros((2, 3));
        let z = Array2::<f64>::zeros((2, 4));
        assert!(matches!(
            Kernel::Linear.matrix(x.view(), z.view()),
            Err(LssvmError::FeatureMismatch { expected: 3, found: 4 })
        ));
        assert!(matches!(
            Kernel::rbf(0.0).check(),
            Err(LssvmError::InvalidBandwidth { .. })
        ));
        assert!(matches!(
            Kernel::rbf(f64::NAN).check(),
            Err(LssvmError::InvalidBandwidth { .. })
        ));
    }
}
