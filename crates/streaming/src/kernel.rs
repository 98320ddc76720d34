//! Kernel values of the streaming passes from inner products and squared norms.
//!
//! Every kernel evaluation of this crate goes through [`values_from_products`] with a
//! [`ksvd_kernels::Kernel`], and the squared distances of the median heuristic through
//! [`sq_distances_from_products`]; the inner products themselves (a sparse row times the dense
//! `P`, or sparse times sparse for KPCA) are computed by the callers.
//!
// TODO(kernels-merge): both functions below are a shim. ksvd-kernels (branch `kernels`) is
// adding "kernel values from precomputed inner products and squared norms"; when it is merged,
// call that entry point (and its squared-distance counterpart in `ksvd_kernels::bandwidth`)
// here and delete these bodies. They must keep the arithmetic `(‖x‖² + ‖z‖² − 2 x·z)⁺`, then
// `exp(−d/γ²)`, in that order, for the results to stay bit for bit.
use ksvd_kernels::{Kernel, KernelError};
use ndarray::{Array2, ArrayView2, ArrayViewMut2, Zip};

use crate::error::{Result, StreamingError};

/// Squared distances `‖x_a − z_b‖² = max(0, ‖x_a‖² + ‖z_b‖² − 2 x_a·z_b)` from the inner products
/// `products[a, b] = x_a·z_b` and the squared norms `row_sq[a] = ‖x_a‖²`, `col_sq[b] = ‖z_b‖²`.
pub(crate) fn sq_distances_from_products(
    products: ArrayView2<'_, f64>,
    row_sq: &[f64],
    col_sq: &[f64],
) -> Result<Array2<f64>> {
    check_shapes(products.dim(), row_sq, col_sq)?;
    let mut d = products.to_owned();
    Zip::from(d.rows_mut()).and(row_sq).for_each(|mut row, &nx| {
        for (v, &nz) in row.iter_mut().zip(col_sq) {
            *v = (nx + nz - 2.0 * *v).max(0.0);
        }
    });
    Ok(d)
}

/// Replaces the inner products `products[a, b] = x_a·z_b` by the kernel values `k(x_a, z_b)`,
/// given `row_sq[a] = ‖x_a‖²` and `col_sq[b] = ‖z_b‖²` (used by the distance-based kernels):
/// linear `x·z`, polynomial `(x·z + c)^d`, RBF `exp(−‖x − z‖²/γ²)`, Laplacian `exp(−‖x − z‖/γ)`,
/// with `‖x − z‖² = max(0, ‖x‖² + ‖z‖² − 2 x·z)`. SNE needs the whole column set and is an error.
pub(crate) fn values_from_products(
    kernel: &Kernel,
    mut products: ArrayViewMut2<'_, f64>,
    row_sq: &[f64],
    col_sq: &[f64],
) -> Result<()> {
    kernel.validate()?;
    check_shapes(products.dim(), row_sq, col_sq)?;
    let sq = |p: f64, nx: f64, nz: f64| (nx + nz - 2.0 * p).max(0.0);
    match *kernel {
        Kernel::Linear => {}
        Kernel::Polynomial { degree, offset } => products.mapv_inplace(|p| (p + offset).powi(degree as i32)),
        Kernel::Rbf { gamma } => {
            let g2 = gamma * gamma;
            Zip::from(products.rows_mut()).and(row_sq).for_each(|mut row, &nx| {
                for (v, &nz) in row.iter_mut().zip(col_sq) {
                    *v = (-sq(*v, nx, nz) / g2).exp();
                }
            });
        }
        Kernel::Laplacian { gamma } => {
            Zip::from(products.rows_mut()).and(row_sq).for_each(|mut row, &nx| {
                for (v, &nz) in row.iter_mut().zip(col_sq) {
                    *v = (-sq(*v, nx, nz).sqrt() / gamma).exp();
                }
            });
        }
        Kernel::Sne { .. } => {
            return Err(KernelError::InvalidParameter {
                name: "kernel",
                value: 0.0,
                reason: "the SNE kernel is normalised over the whole column set; it has no value per pair",
            }
            .into())
        }
    }
    Ok(())
}

fn check_shapes(dim: (usize, usize), row_sq: &[f64], col_sq: &[f64]) -> Result<()> {
    if dim != (row_sq.len(), col_sq.len()) {
        return Err(StreamingError::invalid(
            "inner products",
            format!("{} x {}", dim.0, dim.1),
            format!(
                "need one squared norm per row ({}) and per column ({})",
                row_sq.len(),
                col_sq.len()
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use ndarray::array;

    /// Every kernel agrees with `Kernel::eval_pair` (the owner's reference evaluation) to
    /// rounding of the inner-product identity.
    #[test]
    fn values_match_the_kernels_pair_evaluation() {
        let x = array![[1.0, -2.0, 0.5], [0.0, 3.0, 1.0]];
        let z = array![[2.0, 0.0, -1.0], [1.0, -2.0, 0.5], [0.3, 0.3, 0.3]];
        let p = x.dot(&z.t());
        let nx: Vec<f64> = x.rows().into_iter().map(|r| r.dot(&r)).collect();
        let nz: Vec<f64> = z.rows().into_iter().map(|r| r.dot(&r)).collect();
        let kernels = [
            Kernel::Linear,
            Kernel::Polynomial { degree: 3, offset: 1.5 },
            Kernel::Rbf { gamma: 2.0 },
            Kernel::Laplacian { gamma: 1.5 },
        ];
        for k in kernels {
            let mut v = p.clone();
            values_from_products(&k, v.view_mut(), &nx, &nz).unwrap();
            for a in 0..2 {
                for b in 0..3 {
                    let want = k
                        .eval_pair(x.row(a).as_slice().unwrap(), z.row(b).as_slice().unwrap())
                        .unwrap();
                    // The pair x_1 = z_1 has distance 0: exactly 0 by the identity, sqrt of
                    // rounding otherwise (Laplacian).
                    let tol = if matches!(k, Kernel::Laplacian { .. }) {
                        1e-7
                    } else {
                        64.0 * f64::EPSILON
                    };
                    assert!((v[[a, b]] - want).abs() <= tol * want.abs().max(1.0), "{k}: {a},{b}");
                }
            }
        }
        let d = sq_distances_from_products(p.view(), &nx, &nz).unwrap();
        assert_eq!(d[[0, 1]], 0.0, "x_0 = z_1");
        assert!((d[[1, 0]] - 17.0).abs() <= 64.0 * f64::EPSILON * 17.0);
        let mut v = p.clone();
        assert!(values_from_products(&Kernel::Sne { gamma: 1.0 }, v.view_mut(), &nx, &nz).is_err());
        assert!(values_from_products(&Kernel::Rbf { gamma: 1.0 }, v.view_mut(), &nx[..1], &nz).is_err());
    }
}
