//! Analytic reverse-mode derivatives of kernel blocks `G = [k(x_i, z_j)]` with respect to both
//! sample sets, for the learnable compatibility matrix (a3) and KPCA with a learnable `C`. The
//! kernel and its forward values are `ksvd_kernels`' ([`Kernel`],
//! [`Kernel::dense_block`]); [`DiffKernel`] adds the backward pass.
//!
//! # Derivation
//!
//! Let `X ∈ R^{B×d}` (rows `x_i`), `Z ∈ R^{m×d}` (rows `z_j`), `G ∈ R^{B×m}` and a scalar loss `L`
//! with upstream gradient `Ḡ = ∂L/∂G`. Write `D_ij = ‖x_i − z_j‖²`, so
//! `∂D_ij/∂x_i = 2 (x_i − z_j)` and `∂D_ij/∂z_j = 2 (z_j − x_i)`. For any kernel that depends on
//! the samples only through `D`, with `E = ∂L/∂D`:
//!
//! ```text
//! ∂L/∂x_i = 2 Σ_j E_ij (x_i − z_j)   ⇔   X̄ = 2 (diag(E 1) X − E Z)
//! ∂L/∂z_j = 2 Σ_i E_ij (z_j − x_i)   ⇔   Z̄ = 2 (diag(Eᵀ1) Z − Eᵀ X)
//! ```
//!
//! * **RBF** `G_ij = exp(−D_ij/γ²)`: `∂G_ij/∂D_ij = −G_ij/γ²`, so `E = −(Ḡ ∘ G)/γ²`.
//! * **SNE** `G_ij = exp(S_ij) / Σ_l exp(S_il)` with `S = −D/γ²` (a softmax of each row over the
//!   whole Z set): the softmax Jacobian gives `∂L/∂S_ij = G_ij (Ḡ_ij − Σ_l Ḡ_il G_il)`, and
//!   `E = −(∂L/∂S)/γ²`.
//! * **Polynomial** `G_ij = (x_i·z_j + c)^p` depends on `P = X Zᵀ` instead: with
//!   `P̄ = Ḡ ∘ p (P + c)^{p−1}`, `X̄ = P̄ Z` and `Z̄ = P̄ᵀ X`; the **linear** kernel `G = P` gives
//!   `X̄ = Ḡ Z` and `Z̄ = Ḡᵀ X`.
//!
//! The bandwidth is the kernel's `γ` (`γ² = γ · γ` above), as everywhere in `ksvd_kernels`.
//! Every formula is checked against central finite differences in the tests. The Laplacian
//! kernel (not differentiable where `x = z`) has no backward pass.
use ksvd_kernels::{Kernel, KernelError};
use ksvd_linalg::{dense, LinalgError};
use ndarray::{Array1, Array2, ArrayView2, Axis, Zip};

use crate::error::{GeneralError, Result};

/// A [`Kernel`] whose block `G = [k(x_i, z_j)]` is differentiated with respect to both sample
/// sets: linear, polynomial, RBF or SNE (checked by [`DiffKernel::new`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DiffKernel {
    kernel: Kernel,
}

impl DiffKernel {
    /// Wraps `kernel` after checking its hyper-parameters.
    ///
    /// # Errors
    /// Invalid hyper-parameters ([`Kernel::validate`]), or the Laplacian kernel, which has no
    /// backward pass here.
    pub fn new(kernel: Kernel) -> Result<Self> {
        kernel.validate()?;
        if let Kernel::Laplacian { .. } = kernel {
            return Err(GeneralError::invalid(
                "kernel",
                kernel,
                "a differentiable kernel: linear, polynomial, RBF or SNE",
            ));
        }
        Ok(DiffKernel { kernel })
    }

    /// The kernel.
    pub fn kernel(&self) -> Kernel {
        self.kernel
    }

    /// `G = [k(x_i, z_j)]` (`B × m`) for the rows of `x` (`B × d`) and of `z` (`m × d`):
    /// [`Kernel::dense_block`] (SNE rows normalised over `z`), checked to be finite (the
    /// gradients need it).
    ///
    /// # Errors
    /// [`GeneralError::NonFinite`] for non-finite inputs or values (training reads it as
    /// divergence), [`GeneralError::ShapeMismatch`] for samples of different dimension.
    pub fn block(&self, x: ArrayView2<'_, f64>, z: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        check_dims(x, z)?;
        let g = self.kernel.dense_block(x, z).map_err(|e| match e {
            KernelError::Linalg(LinalgError::NonFinite { what, row, col }) => GeneralError::NonFinite {
                what: "kernel input",
                detail: format!("{what}[{row}, {col}]"),
            },
            e => e.into(),
        })?;
        if let Some(((i, j), v)) = g.indexed_iter().find(|(_, v)| !v.is_finite()) {
            return Err(GeneralError::NonFinite {
                what: "kernel block",
                detail: format!("G[{i}, {j}] = {v}"),
            });
        }
        Ok(g)
    }

    /// Reverse-mode derivative: given the forward output `g = self.block(x, z)` and the upstream
    /// gradient `dg = ∂L/∂G` (both `B × m`), returns `(∂L/∂X, ∂L/∂Z)` (shapes of `x` and `z`).
    /// See the module documentation for the formulas.
    pub fn backward(
        &self,
        x: ArrayView2<'_, f64>,
        z: ArrayView2<'_, f64>,
        g: ArrayView2<'_, f64>,
        dg: ArrayView2<'_, f64>,
    ) -> Result<(Array2<f64>, Array2<f64>)> {
        self.backward_owned(x, z, g, dg.to_owned())
    }

    /// [`DiffKernel::backward`] consuming the upstream gradient: its buffer becomes `E = ∂L/∂D`
    /// (no second `B × m` array per step).
    pub fn backward_owned(
        &self,
        x: ArrayView2<'_, f64>,
        z: ArrayView2<'_, f64>,
        g: ArrayView2<'_, f64>,
        mut dg: Array2<f64>,
    ) -> Result<(Array2<f64>, Array2<f64>)> {
        check_dims(x, z)?;
        let shape = (x.nrows(), z.nrows());
        for (what, dim) in [("kernel block", g.dim()), ("kernel gradient", dg.dim())] {
            if dim != shape {
                return Err(GeneralError::ShapeMismatch {
                    what,
                    expected: format!("{shape:?}"),
                    got: format!("{dim:?}"),
                });
            }
        }
        match self.kernel {
            Kernel::Rbf { gamma } => {
                let gamma2 = gamma * gamma;
                Zip::from(&mut dg).and(g).for_each(|e, &g| *e = -*e * g / gamma2);
                distance_backward(x, z, dg.view())
            }
            Kernel::Sne { gamma } => {
                let gamma2 = gamma * gamma;
                for (mut e_row, g_row) in dg.outer_iter_mut().zip(g.outer_iter()) {
                    let inner: f64 = g_row.iter().zip(e_row.iter()).map(|(a, b)| a * b).sum();
                    Zip::from(&mut e_row)
                        .and(&g_row)
                        .for_each(|e, &g| *e = -g * (*e - inner) / gamma2);
                }
                distance_backward(x, z, dg.view())
            }
            Kernel::Linear => Ok((dense::matmul(dg.view(), z)?, dense::matmul(dg.t(), x)?)),
            Kernel::Polynomial { degree, offset } => {
                let mut pbar = dense::matmul(x, z.t())?;
                let p = degree as i32;
                Zip::from(&mut pbar)
                    .and(&dg)
                    .for_each(|v, &dg| *v = dg * f64::from(p) * (*v + offset).powi(p - 1));
                let dx = dense::matmul(pbar.view(), z)?;
                let dz = dense::matmul(pbar.t(), x)?;
                Ok((dx, dz))
            }
            Kernel::Laplacian { .. } => Err(GeneralError::invalid(
                "kernel",
                self.kernel,
                "a differentiable kernel: linear, polynomial, RBF or SNE",
            )),
        }
    }
}

fn check_dims(x: ArrayView2<'_, f64>, z: ArrayView2<'_, f64>) -> Result<()> {
    if x.ncols() != z.ncols() {
        return Err(GeneralError::ShapeMismatch {
            what: "kernel inputs (x and z dimensions)",
            expected: x.ncols().to_string(),
            got: z.ncols().to_string(),
        });
    }
    Ok(())
}

/// `(X̄, Z̄) = (2 (diag(E1) X − E Z), 2 (diag(Eᵀ1) Z − Eᵀ X))` for `E = ∂L/∂D`.
fn distance_backward(
    x: ArrayView2<'_, f64>,
    z: ArrayView2<'_, f64>,
    e: ArrayView2<'_, f64>,
) -> Result<(Array2<f64>, Array2<f64>)> {
    let row_sums: Array1<f64> = e.sum_axis(Axis(1));
    let col_sums: Array1<f64> = e.sum_axis(Axis(0));
    let mut dx = dense::matmul(e, z)?;
    Zip::from(dx.outer_iter_mut())
        .and(x.outer_iter())
        .and(&row_sums)
        .for_each(|mut d, xi, &s| {
            Zip::from(&mut d).and(&xi).for_each(|d, &xv| *d = 2.0 * (s * xv - *d));
        });
    let mut dz = dense::matmul(e.t(), x)?;
    Zip::from(dz.outer_iter_mut())
        .and(z.outer_iter())
        .and(&col_sums)
        .for_each(|mut d, zj, &s| {
            Zip::from(&mut d).and(&zj).for_each(|d, &zv| *d = 2.0 * (s * zv - *d));
        });
    Ok((dx, dz))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ksvd_kernels::{KernelMatrix, Samples};
    use ksvd_linalg::random::{gaussian_matrix, rng_from_seed};
    use ksvd_linalg::MatrixBlocks;

    fn kernels() -> Vec<DiffKernel> {
        [
            Kernel::Rbf { gamma: 3f64.sqrt() },
            Kernel::Sne { gamma: 2.5f64.sqrt() },
            Kernel::Polynomial { degree: 2, offset: 1.0 },
            Kernel::Polynomial { degree: 3, offset: 0.5 },
            Kernel::Linear,
        ]
        .into_iter()
        .map(|k| DiffKernel::new(k).unwrap())
        .collect()
    }

    /// A fixed smooth scalar loss of G: L = Σ W ∘ G + ½ Σ (G ∘ G) with W random; ∂L/∂G = W + G.
    fn loss(k: &DiffKernel, x: &Array2<f64>, z: &Array2<f64>, w: &Array2<f64>) -> f64 {
        let g = k.block(x.view(), z.view()).unwrap();
        (w * &g).sum() + 0.5 * g.mapv(|v| v * v).sum()
    }

    #[test]
    fn forward_matches_ksvd_kernels() {
        let mut rng = rng_from_seed(11);
        let x = gaussian_matrix(&mut rng, 7, 3);
        let z = gaussian_matrix(&mut rng, 5, 3);
        for k in kernels() {
            let ours = k.block(x.view(), z.view()).unwrap();
            let g = KernelMatrix::new(
                Samples::dense(x.clone()).unwrap(),
                Samples::dense(z.clone()).unwrap(),
                k.kernel(),
            )
            .unwrap();
            let theirs = g
                .block(&(0..7).collect::<Vec<_>>(), &(0..5).collect::<Vec<_>>())
                .unwrap();
            let scale = theirs.iter().fold(1.0f64, |m, v| m.max(v.abs()));
            let tol = 64.0 * f64::EPSILON * scale;
            assert!((&ours - &theirs).iter().all(|d| d.abs() <= tol), "{k:?}");
        }
    }

    #[test]
    fn sne_rows_sum_to_one_even_far_away() {
        // Distances ~1e6 / γ² = 1: the plain exponentials underflow, the log-domain ones do not.
        let x = ndarray::array![[1000.0, 0.0], [0.0, -1000.0]];
        let z = ndarray::array![[0.0, 0.0], [1.0, 0.0], [0.0, 2.0]];
        let g = DiffKernel::new(Kernel::Sne { gamma: 1.0 })
            .unwrap()
            .block(x.view(), z.view())
            .unwrap();
        for row in g.outer_iter() {
            assert!((row.sum() - 1.0).abs() < 4.0 * f64::EPSILON);
        }
    }

    /// Central differences with step h have error O(h²) (third derivatives are O(1) here) plus
    /// rounding O(eps · |L| / h); h = 1e-5 balances them near 1e-9 relative.
    #[test]
    fn gradients_match_finite_differences() {
        let mut rng = rng_from_seed(5);
        for k in kernels() {
            let x = gaussian_matrix(&mut rng, 4, 3);
            let z = gaussian_matrix(&mut rng, 6, 3) * 0.8;
            let w = gaussian_matrix(&mut rng, 4, 6);
            let g = k.block(x.view(), z.view()).unwrap();
            let dg = &w + &g;
            let (dx, dz) = k.backward(x.view(), z.view(), g.view(), dg.view()).unwrap();
            let h = 1e-5;
            let scale = 1.0 + loss(&k, &x, &z, &w).abs();
            for (which, base, grad) in [(0, &x, &dx), (1, &z, &dz)] {
                for idx in ndarray::indices(base.dim()) {
                    let (mut p, mut m) = (base.clone(), base.clone());
                    p[idx] += h;
                    m[idx] -= h;
                    let (lp, lm) = if which == 0 {
                        (loss(&k, &p, &z, &w), loss(&k, &m, &z, &w))
                    } else {
                        (loss(&k, &x, &p, &w), loss(&k, &x, &m, &w))
                    };
                    let fd = (lp - lm) / (2.0 * h);
                    assert!(
                        (fd - grad[idx]).abs() < 1e-6 * scale,
                        "{k:?} input {which} {idx:?}: fd {fd} vs {}",
                        grad[idx]
                    );
                }
            }
        }
    }

    #[test]
    fn invalid_inputs_are_errors() {
        let x = Array2::<f64>::zeros((2, 3));
        let z = Array2::<f64>::zeros((2, 4));
        let rbf = DiffKernel::new(Kernel::Rbf { gamma: 1.0 }).unwrap();
        assert!(rbf.block(x.view(), z.view()).is_err());
        assert!(DiffKernel::new(Kernel::Rbf { gamma: -1.0 }).is_err());
        assert!(DiffKernel::new(Kernel::Polynomial { degree: 0, offset: 1.0 }).is_err());
        assert!(matches!(
            DiffKernel::new(Kernel::Laplacian { gamma: 1.0 }),
            Err(GeneralError::InvalidParameter { name: "kernel", .. })
        ));
        // An overflowing polynomial block and a diverged input are the error that training reads
        // as divergence, not a non-finite gradient later.
        let big = Array2::from_elem((1, 3), 1e200);
        let poly = DiffKernel::new(Kernel::Polynomial { degree: 2, offset: 0.0 }).unwrap();
        assert!(matches!(
            poly.block(big.view(), big.view()),
            Err(GeneralError::NonFinite { .. })
        ));
        let nan = Array2::from_elem((1, 3), f64::NAN);
        assert!(matches!(
            rbf.block(nan.view(), big.view()),
            Err(GeneralError::NonFinite {
                what: "kernel input",
                ..
            })
        ));
    }
}
