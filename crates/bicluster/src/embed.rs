//! Left (document) and right (term) embeddings of a documents × terms matrix `X` for
//! biclustering, by SVD, KPCA (applied to the rows and to the columns separately, since it is
//! symmetric) and KSVD (section 5.2 of the paper).
//!
//! * SVD: top-`r` left and right singular vectors of `X` (restarted Lanczos, matrix-free).
//! * KPCA: top-`r` eigenvectors of the centred RBF kernel of the documents (rows of `X`) and,
//!   separately, of the terms (columns of `X`).
//! * KSVD: `B_φ` and `B_ψ` of `G_ij = k(x_i, z_j)` with `x_i` the rows and `z_j` the columns of
//!   `X` made compatible (the paper uses a1, the PCA projection). Note what the compatibility
//!   does: with a0 (pseudo-inverse) and full rank, `X C_x = I` (or `Xᵀ C_z = I`), so
//!   `x'_i . z_j = X_ij` and the linear kernel gives `G = X`; with a1 the row samples stay in the
//!   term basis while the column samples are PCA scores (Algorithm 1), so the two coordinate
//!   systems only agree approximately.
//!
//! Kernel bandwidths follow the paper's rule `γ = k sqrt(M γ_x)` for the matrix whose rows are
//! the samples; `k` is the caller's. Kernel matrices are implicit and solved by a randomized SVD
//! with power iterations (block products), never by a dense eigendecomposition.
use crate::error::{BiclusterError, Result};
use ksvd_kernels::graph::bandwidth_rule;
use ksvd_kernels::{compat, Compat, Kernel, KernelMatrix, Samples};
use ksvd_linalg::CsrMatrix;
use ksvd_solvers::{lanczos_svd, randomized_svd, LanczosParams, RsvdParams};
use ndarray::Array2;

/// Which kernel KSVD uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KsvdKernel {
    /// Linear `x . z` (with a0 compatibility, `G = X` exactly).
    Linear,
    /// RBF `exp(-‖x − z‖²/γ²)`.
    Rbf,
    /// SNE (RBF normalised over the columns).
    Sne,
}

/// An embedding method.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum EmbeddingMethod {
    /// Singular vectors of `X`.
    Svd,
    /// KPCA with the RBF kernel, rows and columns separately; `gamma_k` scales the bandwidth rule.
    Kpca {
        /// Factor `k` of `γ = k sqrt(M γ_x)`.
        gamma_k: f64,
    },
    /// KSVD (the paper uses a1 compatibility for biclustering).
    Ksvd {
        /// Kernel.
        kernel: KsvdKernel,
        /// Factor `k` of the bandwidth rule.
        gamma_k: f64,
        /// Compatibility alternative.
        compat: Compat,
    },
}

/// Document and term embeddings.
#[derive(Debug, Clone)]
pub struct Embeddings {
    /// One row per document.
    pub docs: Array2<f64>,
    /// One row per term.
    pub terms: Array2<f64>,
}

fn err<E: std::fmt::Display>(e: E) -> BiclusterError {
    BiclusterError::Embedding(e.to_string())
}

fn rsvd(g: &KernelMatrix, rank: usize, seed: u64) -> Result<ksvd_solvers::SvdResult> {
    randomized_svd(
        g,
        rank,
        &RsvdParams {
            oversampling: 20,
            power_iters: 4,
            seed,
        },
    )
    .map_err(err)
}

/// Embeds the rows and columns of `x` (documents × terms) with `rank` components.
pub fn embed(x: &CsrMatrix, method: EmbeddingMethod, rank: usize, seed: u64) -> Result<Embeddings> {
    let (n, m) = x.shape();
    if n == 0 || m == 0 {
        return Err(BiclusterError::Empty {
            what: "document-term matrix",
            rows: n,
            cols: m,
        });
    }
    let rank = rank.min(n.min(m));
    match method {
        EmbeddingMethod::Svd => {
            let svd = lanczos_svd(
                x,
                rank,
                &LanczosParams {
                    tol: 1e-8,
                    seed,
                    ..Default::default()
                },
            )
            .map_err(err)?;
            Ok(Embeddings {
                docs: svd.u,
                terms: svd.v,
            })
        }
        EmbeddingMethod::Kpca { gamma_k } => {
            let side = |s: Samples, seed: u64| -> Result<Array2<f64>> {
                let gamma = bandwidth_rule(&s, gamma_k);
                let g = KernelMatrix::new(s.clone(), s, Kernel::Rbf { gamma })
                    .map_err(err)?
                    .centered()
                    .map_err(err)?;
                Ok(rsvd(&g, rank, seed)?.u)
            };
            let docs = side(Samples::sparse(x.clone()).map_err(err)?, seed)?;
            let terms = side(Samples::sparse(x.transpose()).map_err(err)?, seed.wrapping_add(1))?;
            Ok(Embeddings { docs, terms })
        }
        EmbeddingMethod::Ksvd {
            kernel,
            gamma_k,
            compat,
        } => {
            let dense = x.to_dense();
            let gamma = bandwidth_rule(&Samples::sparse(x.clone()).map_err(err)?, gamma_k);
            let cs = compat::compatible_samples(dense.view(), compat).map_err(err)?;
            let k = match kernel {
                KsvdKernel::Linear => Kernel::Linear,
                KsvdKernel::Rbf => Kernel::Rbf { gamma },
                KsvdKernel::Sne => Kernel::Sne { gamma },
            };
            let g = KernelMatrix::new(cs.x, cs.z, k).map_err(err)?;
            let svd = rsvd(&g, rank, seed)?;
            Ok(Embeddings {
                docs: svd.u,
                terms: svd.v,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{bicluster, nmi, KMeansParams};

    /// A noisy block-diagonal document-term matrix with 3 document groups tied to 3 term groups.
    fn planted() -> (CsrMatrix, Vec<usize>, Vec<usize>) {
        let (n, m) = (60, 45);
        let docs: Vec<usize> = (0..n).map(|i| i % 3).collect();
        let terms: Vec<usize> = (0..m).map(|j| j % 3).collect();
        let mut t = Vec::new();
        for i in 0..n {
            for j in 0..m {
                let on = docs[i] == terms[j];
                // Deterministic sparse noise off the blocks.
                if on && (i + j) % 4 != 0 || !on && (i * 7 + j * 13) % 17 == 0 {
                    t.push((i, j, 1.0));
                }
            }
        }
        (CsrMatrix::from_triplets(n, m, t).unwrap(), docs, terms)
    }

    #[test]
    fn svd_and_kpca_recover_planted_biclusters() {
        let (x, docs, terms) = planted();
        for method in [EmbeddingMethod::Svd, EmbeddingMethod::Kpca { gamma_k: 1.0 }] {
            let e = embed(&x, method, 3, 0).unwrap();
            assert_eq!((e.docs.nrows(), e.terms.nrows()), (60, 45));
            let b = bicluster(e.docs.view(), e.terms.view(), 3, 3, 1, &KMeansParams::new()).unwrap();
            let (nd, nt) = (nmi(&docs, &b.doc_labels).unwrap(), nmi(&terms, &b.term_labels).unwrap());
            assert!(nd > 0.9 && nt > 0.9, "{method:?}: NMI docs {nd}, terms {nt}");
        }
    }

    #[test]
    fn linear_ksvd_with_pseudo_inverse_compatibility_is_the_svd() {
        // a0 makes x'_i . z_j = X_ij, so G = X and KSVD's embeddings span the singular subspaces.
        let (x, _, _) = planted();
        let svd = embed(&x, EmbeddingMethod::Svd, 3, 0).unwrap();
        let k = EmbeddingMethod::Ksvd {
            kernel: KsvdKernel::Linear,
            gamma_k: 1.0,
            compat: Compat::PseudoInverse,
        };
        let ks = embed(&x, k, 3, 0).unwrap();
        for (a, b) in [(&svd.docs, &ks.docs), (&svd.terms, &ks.terms)] {
            let p = a.t().dot(b); // 3 x 3, orthogonal when the subspaces agree
            let err = (&p.t().dot(&p) - &Array2::<f64>::eye(3))
                .iter()
                .fold(0.0f64, |m, v| m.max(v.abs()));
            assert!(err < 1e-8, "subspaces differ: {err}");
        }
        let sne = EmbeddingMethod::Ksvd {
            kernel: KsvdKernel::Sne,
            gamma_k: 1.0,
            compat: Compat::Pca,
        };
        let e = embed(&x, sne, 3, 0).unwrap();
        assert_eq!((e.docs.dim(), e.terms.dim()), ((60, 3), (45, 3)));
    }

    #[test]
    fn empty_matrix_is_an_error() {
        let x = CsrMatrix::from_triplets(0, 3, Vec::new()).unwrap();
        assert!(embed(&x, EmbeddingMethod::Svd, 2, 0).is_err());
    }
}
