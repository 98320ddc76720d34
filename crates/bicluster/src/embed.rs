//! Left (document) and right (term) embeddings of a documents × terms matrix `X` (`n × m`) for
//! biclustering, by SVD, KPCA (applied to the rows and to the columns separately, since it is
//! symmetric) and KSVD (section 5.2 of the paper).
//!
//! * SVD: top-`r` left and right singular vectors of `X` (restarted Lanczos on the sparse `X`).
//! * KPCA: top-`r` eigenvectors of the centred RBF kernel of the documents (rows of `X`) and,
//!   separately, of the terms (columns of `X`).
//! * KSVD: top-`r` left (`B_φ`, documents) and right (`B_ψ`, terms) singular vectors of
//!   `G_ij = κ(x'_i, z'_j)`, where `x'_i` and `z'_j` are the rows and columns of `X` made
//!   dimension-compatible ([`Compat`]; the paper uses a1, Table 2 its shared-axes form
//!   [`Compat::SharedAxes`], `a1-shared`, which puts both sides on the principal axes of `X`).
//!
//! The embeddings are the unit-norm singular/eigen vectors themselves (the paper: "k-means on
//! the left and right singular vectors"; for KPCA its graph experiments take "the top
//! eigenvectors as the extracted features"), not scaled by the singular values: on these data
//! the leading scaled component of an RBF kernel is the document length (correlation −0.97 on
//! ACM), which would dominate k-means. The values are returned alongside for diagnostics.
//!
//! Kernel bandwidths follow the paper's rule `γ = k sqrt(M γ_x)` ([`bandwidth_rule`]) for the
//! matrix whose rows are the samples: `X` for the documents and for KSVD, `Xᵀ` for the terms.
//! `k` is the caller's. KPCA is [`ksvd::Kpca`] (centred RBF kernel of dense samples, stored once
//! when it fits the memory budget) and KSVD is [`ksvd::Ksvd`]'s fit of the dense `G` of
//! [`crate::ksvd_kernel`]; only their top-`r` triplets are computed, by restarted Lanczos
//! (`1e-8 σ_1`), as is the SVD of `X`.
use crate::error::{BiclusterError, Result};
use crate::kernel::{check_dense, ksvd_kernel};
use ksvd::{Kpca, Ksvd, MemoryBudget, Solver};
use ksvd_kernels::graph::bandwidth_rule;
use ksvd_kernels::{Compat, Kernel, Samples};
use ksvd_linalg::CsrMatrix;
use ksvd_solvers::{lanczos_svd, LanczosParams, SvdResult};
use linfa::ParamGuard;
use ndarray::{Array1, Array2};

/// An embedding method.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum EmbeddingMethod {
    /// Singular vectors of `X`.
    Svd,
    /// KPCA with the RBF kernel, rows and columns separately; `gamma_k` scales the bandwidth rule.
    Kpca {
        /// Factor `k` of `γ = k sqrt(M γ_x)` (positive).
        gamma_k: f64,
    },
    /// KSVD (the paper uses SNE and a1 compatibility for biclustering; Table 2 runs a1 as
    /// [`Compat::SharedAxes`]). `G` is [`crate::ksvd_kernel`] with the bandwidth of the rule.
    Ksvd {
        /// The kernel. A kernel with a bandwidth (RBF, Laplacian, SNE) gets
        /// `γ = gamma_k sqrt(M γ_x)` of `X` ([`Kernel::with_gamma`]): the `γ` given here is
        /// replaced (write e.g. `Kernel::Sne { gamma: 1.0 }`).
        kernel: Kernel,
        /// Factor `k` of the bandwidth rule (positive; unused by kernels without a bandwidth).
        gamma_k: f64,
        /// Compatibility alternative (any but [`Compat::Learned`]).
        compat: Compat,
    },
}

/// Document and term embeddings.
#[derive(Debug, Clone)]
pub struct Embeddings {
    /// One row per document (`n × r`), orthonormal columns.
    pub docs: Array2<f64>,
    /// One row per term (`m × r'`), orthonormal columns.
    pub terms: Array2<f64>,
    /// Singular values (SVD, KSVD) or eigenvalues (KPCA of the documents) of the columns of
    /// `docs`, descending.
    pub doc_values: Array1<f64>,
    /// The same for `terms` (equal to `doc_values` for SVD and KSVD).
    pub term_values: Array1<f64>,
    /// Bandwidths `γ` used: `[documents, terms]` for KPCA, `[G]` for KSVD with RBF/SNE, none
    /// otherwise.
    pub gammas: Vec<f64>,
}

fn err<E: std::fmt::Display>(e: E) -> BiclusterError {
    BiclusterError::Embedding(e.to_string())
}

/// The parameters of the restarted Lanczos solver behind every embedding (residuals at most
/// `1e-8 σ_1`; the seed is the embedding's): Table 2's choice, kept so that its numbers stay
/// those of the committed results.
fn lanczos() -> LanczosParams {
    LanczosParams {
        tol: 1e-8,
        ..Default::default()
    }
}

/// The solver of the KPCA and KSVD embeddings: [`lanczos`].
fn solver() -> Solver {
    Solver::Lanczos(lanczos())
}

/// The top-`rank` singular triplets of the sparse `X` by restarted Lanczos ([`lanczos`]).
fn top(x: &CsrMatrix, rank: usize, seed: u64) -> Result<SvdResult> {
    lanczos_svd(x, rank, &LanczosParams { seed, ..lanczos() }).map_err(err)
}

/// `γ = k sqrt(M γ_x)` for the rows of `samples`, checked to be positive and finite.
fn bandwidth(samples: &CsrMatrix, gamma_k: f64) -> Result<f64> {
    if !(gamma_k.is_finite() && gamma_k > 0.0) {
        return Err(BiclusterError::InvalidParameter {
            name: "gamma_k",
            value: gamma_k.to_string(),
            expected: "a positive finite factor",
        });
    }
    let gamma = bandwidth_rule(&Samples::sparse(samples.clone()).map_err(err)?, gamma_k);
    if !(gamma.is_finite() && gamma > 0.0) {
        return Err(BiclusterError::Undefined {
            what: "bandwidth rule",
            reason: format!("gamma = {gamma}: the entries of the data have no variance"),
        });
    }
    Ok(gamma)
}

/// Embeds the rows and columns of `x` (documents × terms) with `rank` components (at most the
/// number of documents, terms, or `min(n, m)` for the two-sided methods).
///
/// Errors: empty `x`, a non-positive `gamma_k`, data without variance (no bandwidth), a kernel
/// matrix larger than [`ksvd_linalg::FIXED_DENSE_ENTRIES`], or a solver failure.
pub fn embed(x: &CsrMatrix, method: EmbeddingMethod, rank: usize, seed: u64) -> Result<Embeddings> {
    let (n, m) = x.shape();
    if n == 0 || m == 0 {
        return Err(BiclusterError::Empty {
            what: "document-term matrix",
            rows: n,
            cols: m,
        });
    }
    if rank == 0 {
        return Err(BiclusterError::InvalidParameter {
            name: "rank",
            value: "0".into(),
            expected: "at least 1",
        });
    }
    match method {
        EmbeddingMethod::Svd => {
            let svd = top(x, rank.min(n.min(m)), seed)?;
            Ok(Embeddings {
                docs: svd.u,
                terms: svd.v,
                doc_values: svd.s.clone(),
                term_values: svd.s,
                gammas: Vec::new(),
            })
        }
        EmbeddingMethod::Kpca { gamma_k } => {
            // One side: the eigenvectors of the centred RBF kernel (PSD, so its singular
            // vectors are its eigenvectors and the singular values its eigenvalues).
            let side = |s: &CsrMatrix, seed: u64| -> Result<(Kpca, f64)> {
                let gamma = bandwidth(s, gamma_k)?;
                check_dense("KPCA kernel matrix", s.nrows(), s.nrows())?;
                let kpca = Kpca::params()
                    .kernel(Kernel::Rbf { gamma })
                    .rank(rank.min(s.nrows()))
                    .solver(solver())
                    .center(true)
                    .seed(seed)
                    // Store K whenever `check_dense` admits it: products are then GEMMs.
                    .memory_budget(MemoryBudget::fixed())
                    .check()?
                    .fit_samples(Samples::dense(s.to_dense()).map_err(err)?)?;
                Ok((kpca, gamma))
            };
            let (d, gd) = side(x, seed)?;
            let (t, gt) = side(&x.transpose(), seed.wrapping_add(1))?;
            Ok(Embeddings {
                docs: d.eigenvectors().to_owned(),
                terms: t.eigenvectors().to_owned(),
                doc_values: d.eigenvalues().to_owned(),
                term_values: t.eigenvalues().to_owned(),
                gammas: vec![gd, gt],
            })
        }
        EmbeddingMethod::Ksvd {
            kernel,
            gamma_k,
            compat,
        } => {
            let (kernel, gammas) = match kernel.gamma() {
                None => (kernel, Vec::new()),
                Some(_) => {
                    let g = bandwidth(x, gamma_k)?;
                    (kernel.with_gamma(g), vec![g])
                }
            };
            let g = ksvd_kernel(x, kernel, compat)?;
            let model = Ksvd::params()
                .rank(rank.min(n.min(m)))
                .solver(solver())
                .seed(seed)
                .check()?
                .fit_precomputed(g.view())?;
            Ok(Embeddings {
                docs: model.u().to_owned(),
                terms: model.v().to_owned(),
                doc_values: model.singular_values().to_owned(),
                term_values: model.singular_values().to_owned(),
                gammas,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{bicluster, nmi, KMeansParams};
    use ksvd_kernels::{Kernel, KernelMatrix};
    use ksvd_linalg::{dense, random, MatrixBlocks};
    use ndarray::Axis;
    use rand::Rng;

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

    /// A random sparse non-negative `n × m` matrix (about a third of the entries nonzero).
    fn random_sparse(n: usize, m: usize, seed: u64) -> CsrMatrix {
        let mut rng = random::rng_from_seed(seed);
        let mut t = Vec::new();
        for i in 0..n {
            for j in 0..m {
                if rng.gen::<f64>() < 0.35 {
                    t.push((i, j, rng.gen::<f64>() * 2.0 + 0.1));
                }
            }
        }
        CsrMatrix::from_triplets(n, m, t).unwrap()
    }

    fn max_abs(a: &Array2<f64>) -> f64 {
        a.iter().fold(0.0f64, |m, v| m.max(v.abs()))
    }

    /// Largest sine of the principal angles between the column spans of `a` and `b`
    /// (orthonormal columns): `‖(I − A Aᵀ) B‖_2`, bounded here by the max column norm times
    /// sqrt(cols).
    fn subspace_gap(a: &Array2<f64>, b: &Array2<f64>) -> f64 {
        let p = a.t().dot(b);
        let resid = b - &a.dot(&p);
        resid
            .axis_iter(Axis(1))
            .map(|c| c.dot(&c).sqrt())
            .fold(0.0f64, f64::max)
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

    /// The KPCA document embedding is an eigenbasis of the centred RBF kernel `K̃ = H K H`:
    /// `K̃ u = λ u` against a dense `K̃` formed here from the dense data, `λ ≥ 0`.
    #[test]
    fn kpca_embeddings_are_eigenvectors_of_the_centred_rbf_kernel() {
        let x = random_sparse(30, 12, 5);
        let gamma = 1.7;
        let d = x.to_dense();
        let n = d.nrows();
        let mut k = Array2::from_shape_fn((n, n), |(i, j)| {
            let e = &d.row(i) - &d.row(j);
            (-e.dot(&e) / (gamma * gamma)).exp()
        });
        let r = k.mean_axis(Axis(1)).unwrap();
        let g = r.mean().unwrap();
        for ((i, j), v) in k.indexed_iter_mut() {
            *v += g - r[i] - r[j];
        }
        let gamma_k = gamma / bandwidth(&x, 1.0).unwrap();
        let e = embed(&x, EmbeddingMethod::Kpca { gamma_k }, 4, 0).unwrap();
        assert!((e.gammas[0] - gamma).abs() <= 4.0 * f64::EPSILON * gamma);
        let ku = k.dot(&e.docs);
        let lu = &e.docs * &e.doc_values.view().insert_axis(Axis(0));
        let tol = 1e-7 * e.doc_values[0];
        assert!(max_abs(&(&ku - &lu)) <= tol, "{}", max_abs(&(&ku - &lu)));
        assert!(e.doc_values.iter().all(|&l| l >= 0.0), "centred RBF kernel is PSD");
    }

    /// `G` of every kernel, from the shared-axes inner products, equals `ksvd_kernels`'
    /// `KernelMatrix` of the explicit coordinates `x' = U Σ`, `z' = V Σ`, for tall, wide and
    /// square `X`.
    #[test]
    fn shared_axes_kernel_is_the_kernel_of_the_explicit_principal_coordinates() {
        for (n, m) in [(14, 9), (8, 15), (10, 10)] {
            let x = random_sparse(n, m, (n * m) as u64);
            let svd = dense::thin_svd(x.to_dense().view()).unwrap();
            let xs = &svd.u * &svd.s.view().insert_axis(Axis(0));
            let zs = &svd.v * &svd.s.view().insert_axis(Axis(0));
            for kernel in [
                Kernel::Linear,
                Kernel::Polynomial { degree: 2, offset: 1.0 },
                Kernel::Rbf { gamma: 2.5 },
                Kernel::Laplacian { gamma: 2.5 },
                Kernel::Sne { gamma: 2.5 },
            ] {
                let g = ksvd_kernel(&x, kernel, Compat::SharedAxes).unwrap();
                assert_eq!(g.dim(), (n, m));
                let want = KernelMatrix::new(
                    Samples::dense(xs.clone()).unwrap(),
                    Samples::dense(zs.clone()).unwrap(),
                    kernel,
                )
                .unwrap();
                let want = want
                    .block(&(0..n).collect::<Vec<_>>(), &(0..m).collect::<Vec<_>>())
                    .unwrap();
                let scale = max_abs(&want);
                let tol = 1e4 * f64::EPSILON * (n.max(m) as f64) * scale.max(1.0);
                let diff = max_abs(&(&g - &want));
                assert!(diff <= tol, "{n}x{m} {kernel}: {diff} > {tol}");
            }
        }
    }

    /// With the linear kernel, a1 gives `G = U Σ² Vᵀ`: KSVD's embeddings span the singular
    /// subspaces of `X` and its singular values are the squares of those of `X`.
    #[test]
    fn linear_ksvd_with_a1_is_the_svd() {
        let (x, _, _) = planted();
        let svd = embed(&x, EmbeddingMethod::Svd, 3, 0).unwrap();
        let lin = EmbeddingMethod::Ksvd {
            kernel: Kernel::Linear,
            gamma_k: 1.0,
            compat: Compat::SharedAxes,
        };
        let ks = embed(&x, lin, 3, 0).unwrap();
        for (a, b) in [(&svd.docs, &ks.docs), (&svd.terms, &ks.terms)] {
            let gap = subspace_gap(a, b);
            assert!(gap < 1e-7, "subspaces differ: {gap}");
        }
        for (s, s2) in svd.doc_values.iter().zip(&ks.doc_values) {
            assert!((s * s - s2).abs() <= 1e-9 * s2, "{s}^2 vs {s2}");
        }
    }

    #[test]
    fn linear_ksvd_with_pseudo_inverse_compatibility_is_the_svd() {
        // a0 makes x'_i . z'_j = X_ij, so G = X and KSVD's embeddings span the singular subspaces.
        let (x, _, _) = planted();
        let svd = embed(&x, EmbeddingMethod::Svd, 3, 0).unwrap();
        let k = EmbeddingMethod::Ksvd {
            kernel: Kernel::Linear,
            gamma_k: 1.0,
            compat: Compat::PseudoInverse,
        };
        let ks = embed(&x, k, 3, 0).unwrap();
        for (a, b) in [(&svd.docs, &ks.docs), (&svd.terms, &ks.terms)] {
            assert!(subspace_gap(a, b) < 1e-7);
        }
    }

    /// The KSVD embedding is a singular triplet set of the `G` actually built:
    /// `G v_k = s_k u_k`, `Gᵀ u_k = s_k v_k`, orthonormal `U`, `V`, `s` descending; and the SNE
    /// kernel's rows sum to one.
    #[test]
    fn ksvd_embedding_satisfies_the_singular_equations_of_its_kernel() {
        for (n, m) in [(40, 25), (25, 40)] {
            let x = random_sparse(n, m, 7 + n as u64);
            let gamma_k = 0.8;
            let method = EmbeddingMethod::Ksvd {
                kernel: Kernel::Sne { gamma: 1.0 },
                gamma_k,
                compat: Compat::SharedAxes,
            };
            let e = embed(&x, method, 5, 3).unwrap();
            assert_eq!((e.docs.dim(), e.terms.dim()), ((n, 5), (m, 5)));
            let g = ksvd_kernel(&x, Kernel::Sne { gamma: e.gammas[0] }, Compat::SharedAxes).unwrap();
            for r in g.outer_iter() {
                assert!((r.sum() - 1.0).abs() <= 4.0 * m as f64 * f64::EPSILON);
            }
            let s1 = e.doc_values[0];
            let tol = 1e-7 * s1;
            let r1 = &g.dot(&e.terms) - &(&e.docs * &e.doc_values.view().insert_axis(Axis(0)));
            let r2 = &g.t().dot(&e.docs) - &(&e.terms * &e.doc_values.view().insert_axis(Axis(0)));
            assert!(
                max_abs(&r1) <= tol && max_abs(&r2) <= tol,
                "{} {}",
                max_abs(&r1),
                max_abs(&r2)
            );
            let eye = Array2::<f64>::eye(5);
            for q in [&e.docs, &e.terms] {
                assert!(max_abs(&(&q.t().dot(q) - &eye)) <= 1e-10);
            }
            assert!(e
                .doc_values
                .iter()
                .zip(e.doc_values.iter().skip(1))
                .all(|(a, b)| a >= b));
            // Top singular values agree with a dense SVD of G.
            let exact = dense::thin_svd(g.view()).unwrap();
            for k in 0..5 {
                assert!((exact.s[k] - e.doc_values[k]).abs() <= 1e-8 * s1);
            }
        }
    }

    #[test]
    fn bad_inputs_are_typed_errors() {
        let x = CsrMatrix::from_triplets(0, 3, Vec::new()).unwrap();
        assert!(matches!(
            embed(&x, EmbeddingMethod::Svd, 2, 0),
            Err(BiclusterError::Empty { .. })
        ));
        let (x, _, _) = planted();
        assert!(matches!(
            embed(&x, EmbeddingMethod::Kpca { gamma_k: 0.0 }, 2, 0),
            Err(BiclusterError::InvalidParameter { name: "gamma_k", .. })
        ));
        assert!(matches!(
            embed(&x, EmbeddingMethod::Svd, 0, 0),
            Err(BiclusterError::InvalidParameter { name: "rank", .. })
        ));
        // Constant data: the bandwidth rule has no variance to work with.
        let c = CsrMatrix::from_dense(Array2::<f64>::ones((4, 3)).view()).unwrap();
        assert!(matches!(
            embed(&c, EmbeddingMethod::Kpca { gamma_k: 1.0 }, 2, 0),
            Err(BiclusterError::Undefined { .. })
        ));
        // a3 has no map: a typed error from ksvd-kernels.
        let a3 = EmbeddingMethod::Ksvd {
            kernel: Kernel::Sne { gamma: 1.0 },
            gamma_k: 1.0,
            compat: Compat::Learned,
        };
        assert!(matches!(
            embed(&x, a3, 2, 0),
            Err(BiclusterError::Kernel(ksvd_kernels::KernelError::NoCompatMatrix { .. }))
        ));
    }
}
