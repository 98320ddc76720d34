//! Kernels on feature vectors, their Gram matrices, and the implicit (never materialised)
//! training kernel matrix as a [`LinearOperator`].
use crate::error::{check_finite, LssvmError, Result};
use ksvd_linalg::dense::gemm_into;
use ksvd_linalg::LinearOperator;
use ndarray::{s, Array1, Array2, ArrayView1, ArrayView2, ArrayViewMut2, Axis};
use std::borrow::Cow;

/// The kernel of an LS-SVM: [`ksvd_kernels::Kernel`], the workspace's one kernel type and
/// evaluator. The LS-SVM needs a symmetric positive semi-definite kernel, so `K + I / gamma` is
/// positive definite and Cholesky / conjugate gradient apply: linear, RBF, Laplacian, and
/// polynomial with a nonnegative offset. SNE (normalised over Z, not symmetric) is refused.
pub use ksvd_kernels::Kernel;

/// `Ok` if `kernel` is a valid symmetric positive semi-definite kernel (see [`Kernel`]).
pub fn check_kernel(kernel: &Kernel) -> Result<()> {
    kernel.validate()?;
    match *kernel {
        Kernel::Sne { .. } => Err(LssvmError::NotPositiveSemidefinite { kernel: *kernel }),
        Kernel::Polynomial { offset, .. } if offset < 0.0 => {
            Err(LssvmError::NotPositiveSemidefinite { kernel: *kernel })
        }
        _ => Ok(()),
    }
}

/// The kernel matrix `K[i, j] = k(x_i, z_j)`: rows index the rows of `x`, columns index the
/// rows of `z` (one GEMM, then [`Kernel::values_from_inner_products`]).
pub fn kernel_matrix(kernel: &Kernel, x: ArrayView2<'_, f64>, z: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
    check_kernel(kernel)?;
    if x.ncols() != z.ncols() {
        return Err(LssvmError::FeatureMismatch {
            expected: x.ncols(),
            found: z.ncols(),
        });
    }
    check_finite("kernel input x", x)?;
    check_finite("kernel input z", z)?;
    let mut out = Array2::zeros((x.nrows(), z.nrows()));
    block_into(kernel, x, sq_norms(x).view(), z, sq_norms(z).view(), out.view_mut())?;
    Ok(out)
}

/// The training Gram matrix `K[i, j] = k(x_i, x_j)`, exactly symmetric (the upper triangle is
/// copied from the lower one) with the exact diagonal 1 of the RBF and Laplacian kernels.
pub(crate) fn gram(kernel: &Kernel, x: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
    let n = x.nrows();
    let norms = sq_norms(x);
    let mut k = Array2::zeros((n, n));
    block_into(kernel, x, norms.view(), x, norms.view(), k.view_mut())?;
    for i in 0..n {
        for j in 0..i {
            k[[j, i]] = k[[i, j]];
        }
        if unit_diagonal(kernel) {
            k[[i, i]] = 1.0;
        }
    }
    Ok(k)
}

/// Whether `k(x, x) = 1` exactly (RBF, Laplacian).
fn unit_diagonal(kernel: &Kernel) -> bool {
    matches!(kernel, Kernel::Rbf { .. } | Kernel::Laplacian { .. })
}

/// `out = K(x, z)` (shapes and parameters were validated by the caller): `x zᵀ` by GEMM, then
/// the kernel's values from inner products and squared norms.
pub(crate) fn block_into(
    kernel: &Kernel,
    x: ArrayView2<'_, f64>,
    x_sq: ArrayView1<'_, f64>,
    z: ArrayView2<'_, f64>,
    z_sq: ArrayView1<'_, f64>,
    mut out: ArrayViewMut2<'_, f64>,
) -> Result<()> {
    gemm_into(out.view_mut(), x, z.t(), 1.0, false)?;
    // The norms are slices of whole arrays (contiguous): no copy per block.
    let xs = x_sq.to_slice().map_or_else(|| Cow::Owned(x_sq.to_vec()), Cow::Borrowed);
    let zs = z_sq.to_slice().map_or_else(|| Cow::Owned(z_sq.to_vec()), Cow::Borrowed);
    kernel.values_from_inner_products(out, &xs, &zs)?;
    Ok(())
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
        check_kernel(&kernel)?;
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
            _ => {
                let mut buf = Array2::zeros((self.block_rows.min(n), n));
                let mut start = 0;
                while start < n {
                    let end = (start + self.block_rows).min(n);
                    let mut kb = buf.slice_mut(s![..end - start, ..]);
                    block_into(
                        &self.kernel,
                        self.x.slice(s![start..end, ..]),
                        self.sq_norms.slice(s![start..end]),
                        self.x,
                        self.sq_norms.view(),
                        kb.view_mut(),
                    )
                    .map_err(|e| ksvd_linalg::LinalgError::OperatorFailed {
                        operator: "the LS-SVM kernel matrix",
                        reason: e.to_string(),
                    })?;
                    // Same exact diagonal as the materialised Gram matrix.
                    if unit_diagonal(&self.kernel) {
                        for i in start..end {
                            kb[[i - start, i]] = 1.0;
                        }
                    }
                    gemm_into(out.slice_mut(s![start..end, ..]), kb.view(), v, 1.0, false)?;
                    start = end;
                }
            }
        }
        Ok(())
    }
    fn apply_transpose_into(&self, v: ArrayView2<'_, f64>, out: ArrayViewMut2<'_, f64>) -> ksvd_linalg::Result<()> {
        // The LS-SVM's kernels are symmetric.
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
        for kernel in [
            Kernel::Linear,
            Kernel::Rbf { gamma: 1.7 },
            Kernel::Laplacian { gamma: 2.0 },
        ] {
            let k = kernel_matrix(&kernel, x.view(), z.view()).unwrap();
            for i in 0..9 {
                for j in 0..4 {
                    let e = kernel
                        .eval_pair(x.row(i).as_slice().unwrap(), z.row(j).as_slice().unwrap())
                        .unwrap();
                    assert!((k[[i, j]] - e).abs() <= 64.0 * f64::EPSILON * (1.0 + e.abs()));
                }
            }
            let g = gram(&kernel, x.view()).unwrap();
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
            kernel_matrix(&Kernel::Linear, x.view(), z.view()),
            Err(LssvmError::FeatureMismatch { expected: 3, found: 4 })
        ));
        for gamma in [0.0, f64::NAN] {
            assert!(matches!(
                check_kernel(&Kernel::Rbf { gamma }),
                Err(LssvmError::Kernel(_))
            ));
        }
        assert!(matches!(
            check_kernel(&Kernel::Sne { gamma: 1.0 }),
            Err(LssvmError::NotPositiveSemidefinite { .. })
        ));
        assert!(matches!(
            check_kernel(&Kernel::Polynomial {
                degree: 2,
                offset: -1.0
            }),
            Err(LssvmError::NotPositiveSemidefinite { .. })
        ));
    }
}
