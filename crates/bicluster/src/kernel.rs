//! The dense KSVD kernel matrix of the biclustering embeddings: the asymmetric document × term
//! kernel `G` of KSVD (KPCA's centred RBF kernel is [`ksvd::Kpca`]'s, stored by `ksvd_kernels`).
//!
//! Why dense: the Table 2 matrices have at most a few thousand samples per side (ACM
//! 3025 × 1870, DBLP 4057 × 334, Wiki 2405 × 4973), so a kernel matrix has at most ~25 M entries
//! (~200 MB). Forming it once from the inner products costs one pass; an implicit kernel operator
//! re-evaluates every inner product in every product of the iterative solver (that made KPCA on
//! ACM take ~19 s per bandwidth). The top-`r` singular triplets of the dense matrix are then
//! computed by restarted Lanczos (never a full decomposition of the kernel matrix).
//! [`ksvd_linalg::FIXED_DENSE_ENTRIES`] bounds what is formed; larger inputs are a typed error.
//!
//! The compatible inner products `x'_i · z'_j` and the kernel values both come from
//! `ksvd_kernels` ([`ksvd_kernels::compat::inner_products`],
//! [`ksvd_kernels::Kernel::values_from_inner_products`]).
use crate::error::{BiclusterError, Result};
use ksvd_kernels::{compat, Compat, CompatibleInner, Kernel};
use ksvd_linalg::{CsrMatrix, FIXED_DENSE_ENTRIES};
use ndarray::Array2;

pub(crate) fn check_dense(what: &'static str, rows: usize, cols: usize) -> Result<()> {
    match rows.checked_mul(cols) {
        Some(e) if e <= FIXED_DENSE_ENTRIES => Ok(()),
        _ => Err(BiclusterError::TooLarge {
            what,
            rows,
            cols,
            limit: FIXED_DENSE_ENTRIES,
        }),
    }
}

/// The KSVD kernel matrix `G_ij = κ(x'_i, z'_j)` (`n × m`, rows = documents, columns = terms)
/// of the documents × terms matrix `x` with compatibility `compat` (see [`Compat`]; Table 2 uses
/// [`Compat::SharedAxes`]) and `kernel` with its bandwidth. This is exactly the matrix whose
/// singular vectors [`crate::embed()`] returns for [`crate::EmbeddingMethod::Ksvd`] (which sets
/// the bandwidth by the paper's rule).
///
/// # Errors
/// A matrix of more than [`FIXED_DENSE_ENTRIES`] entries, an alternative without a map
/// ([`Compat::Learned`]), invalid kernel parameters, or a failed decomposition.
pub fn ksvd_kernel(x: &CsrMatrix, kernel: Kernel, compat: Compat) -> Result<Array2<f64>> {
    let (n, m) = x.shape();
    check_dense("document-term kernel matrix", n, m)?;
    let CompatibleInner { mut p, nx, nz } = compat::inner_products(x, compat)?;
    kernel.values_from_inner_products(p.view_mut(), &nx, &nz)?;
    Ok(p)
}
