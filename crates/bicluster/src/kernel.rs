//! Dense kernel matrices of the biclustering embeddings: the asymmetric document × term kernel
//! `G` of KSVD (KPCA's centred RBF kernel is [`ksvd::Kpca`]'s, stored by `ksvd_kernels`).
//!
//! Why dense: the Table 2 matrices have at most a few thousand samples per side (ACM
//! 3025 × 1870, DBLP 4057 × 334, Wiki 2405 × 4973), so a kernel matrix has at most ~25 M entries
//! (~200 MB). Forming it once from the inner products costs one pass; an implicit kernel operator
//! re-evaluates every inner product in every product of the iterative solver (that made KPCA on
//! ACM take ~19 s per bandwidth). The top-`r` singular triplets of the dense matrix are then
//! computed by restarted Lanczos (never a full decomposition of the kernel matrix).
//! [`ksvd_linalg::FIXED_DENSE_ENTRIES`] bounds what is formed; larger inputs are a typed error.
//!
//! Inner products of the sparse data are accumulated over the nonzeros (`Σ_k nnz(column k)²`
//! multiply-adds for `X Xᵀ`), never by a dense product of the data.
use crate::embed::{Compatibility, KsvdKernel};
use crate::error::{BiclusterError, Result};
use ksvd_kernels::{compat, Compat, Samples};
use ksvd_linalg::{dense, CsrMatrix, FIXED_DENSE_ENTRIES};
use ndarray::{Array2, Axis};
use rayon::prelude::*;

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

fn err<E: std::fmt::Display>(e: E) -> BiclusterError {
    BiclusterError::Embedding(e.to_string())
}

/// The dense Gram matrix `A Aᵀ` of the rows of a sparse `A` (`n × n`), accumulated over the
/// nonzeros of `A` and parallel over rows. With sorted column indices (as [`CsrMatrix`] keeps
/// them) every entry `(i, j)` and `(j, i)` is the same sum in the same order, so the result is
/// exactly symmetric.
pub fn gram(a: &CsrMatrix) -> Result<Array2<f64>> {
    let n = a.nrows();
    check_dense("Gram matrix", n, n)?;
    let at = a.transpose();
    let mut out = Array2::<f64>::zeros((n, n));
    out.axis_iter_mut(Axis(0))
        .into_par_iter()
        .enumerate()
        .for_each(|(i, mut row)| {
            let (idx, val) = a.row(i);
            for (&k, &v) in idx.iter().zip(val) {
                let (jdx, wal) = at.row(k);
                for (&j, &w) in jdx.iter().zip(wal) {
                    row[j] += v * w;
                }
            }
        });
    Ok(out)
}

/// `(B)^{1/2}` of a symmetric positive semi-definite `B` from its eigendecomposition
/// `B = W Λ Wᵀ`: `W Λ^{1/2} Wᵀ`, with eigenvalues below zero (rounding) taken as zero.
pub(crate) fn psd_sqrt(b: &Array2<f64>) -> Result<Array2<f64>> {
    let (vals, vecs) = dense::symmetric_eigen(b.view())?;
    let mut scaled = vecs.clone();
    for (mut col, &l) in scaled.axis_iter_mut(Axis(1)).zip(vals.iter()) {
        col *= l.max(0.0).sqrt();
    }
    Ok(dense::matmul(scaled.view(), vecs.t())?)
}

/// Squared Euclidean distances `‖x_i − z_j‖² = nx_i + nz_j − 2 p_ij` (clamped at 0 against
/// rounding) turned into the kernel, in place.
///
/// * `Linear`: `p_ij` (unchanged);
/// * `Rbf`: `exp(−‖x_i − z_j‖² / γ²)`;
/// * `Sne`: the RBF value divided by its row sum over all columns,
///   `exp(−d_ij/γ²) / Σ_j' exp(−d_ij'/γ²)`, evaluated in the log domain (every row sums to 1).
pub(crate) fn apply_kernel(p: &mut Array2<f64>, nx: &[f64], nz: &[f64], kernel: KsvdKernel, gamma: f64) {
    if kernel == KsvdKernel::Linear {
        return;
    }
    let g2 = gamma * gamma;
    p.axis_iter_mut(Axis(0))
        .into_par_iter()
        .zip(nx.par_iter())
        .for_each(|(mut row, &a)| {
            row.iter_mut()
                .zip(nz)
                .for_each(|(v, &b)| *v = -(a + b - 2.0 * *v).max(0.0) / g2);
            if kernel == KsvdKernel::Sne {
                let mx = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                row.mapv_inplace(|v| (v - mx).exp());
                let s: f64 = row.sum();
                row.mapv_inplace(|v| v / s);
            } else {
                row.mapv_inplace(f64::exp);
            }
        });
}

/// Inner products `p_ij = x'_i · z'_j` (`n × m`) and squared norms of the compatible row samples
/// `x'_i` and column samples `z'_j` of the documents × terms matrix `x`.
pub(crate) struct CompatibleInner {
    pub(crate) p: Array2<f64>,
    pub(crate) nx: Vec<f64>,
    pub(crate) nz: Vec<f64>,
}

/// See [`Compatibility`] for what each alternative maps where.
pub(crate) fn compatible_inner(x: &CsrMatrix, compat: Compatibility) -> Result<CompatibleInner> {
    let (n, m) = x.shape();
    check_dense("document-term kernel matrix", n, m)?;
    let xt = x.transpose();
    match compat {
        Compatibility::Pca => {
            // x'_i · z'_j = (X (XᵀX)^{1/2})_ij = ((XXᵀ)^{1/2} X)_ij = (U Σ² Vᵀ)_ij; the norms are
            // those of the raw rows and columns (both maps are isometries on the data).
            let xd = x.to_dense();
            let p = if n >= m {
                let root = psd_sqrt(&gram(&xt)?)?;
                dense::matmul(xd.view(), root.view())?
            } else {
                let root = psd_sqrt(&gram(x)?)?;
                dense::matmul(root.view(), xd.view())?
            };
            Ok(CompatibleInner {
                p,
                nx: x.row_sq_norms(),
                nz: xt.row_sq_norms(),
            })
        }
        Compatibility::PseudoInverse | Compatibility::PcaLiteral | Compatibility::Random { .. } => {
            let c = match compat {
                Compatibility::PseudoInverse => Compat::PseudoInverse,
                Compatibility::Random { seed } => Compat::Random { seed },
                _ => Compat::Pca,
            };
            let cs = compat::compatible_samples(x.to_dense().view(), c).map_err(err)?;
            let (xs, zs): (Array2<f64>, Array2<f64>) = (cs.x.to_dense(), cs.z.to_dense());
            let p = dense::matmul(xs.view(), zs.t())?;
            Ok(CompatibleInner {
                p,
                nx: Samples::sq_norms(&cs.x),
                nz: Samples::sq_norms(&cs.z),
            })
        }
    }
}

/// The KSVD kernel matrix `G_ij = κ(x'_i, z'_j)` (`n × m`, rows = documents, columns = terms)
/// of the documents × terms matrix `x` with compatibility `compat` and bandwidth `gamma`
/// (ignored by the linear kernel). This is exactly the matrix whose singular vectors
/// [`crate::embed()`] returns for [`crate::EmbeddingMethod::Ksvd`].
pub fn ksvd_kernel(x: &CsrMatrix, kernel: KsvdKernel, gamma: f64, compat: Compatibility) -> Result<Array2<f64>> {
    let CompatibleInner { mut p, nx, nz } = compatible_inner(x, compat)?;
    apply_kernel(&mut p, &nx, &nz, kernel, gamma);
    Ok(p)
}
