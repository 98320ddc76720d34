//! Left (document) and right (term) embeddings of a documents × terms matrix `X` (`n × m`) for
//! biclustering, by SVD, KPCA (applied to the rows and to the columns separately, since it is
//! symmetric) and KSVD (section 5.2 of the paper).
//!
//! * SVD: top-`r` left and right singular vectors of `X` (restarted Lanczos on the sparse `X`).
//! * KPCA: top-`r` eigenvectors of the centred RBF kernel of the documents (rows of `X`) and,
//!   separately, of the terms (columns of `X`).
//! * KSVD: top-`r` left (`B_φ`, documents) and right (`B_ψ`, terms) singular vectors of
//!   `G_ij = κ(x'_i, z'_j)`, where `x'_i` and `z'_j` are the rows and columns of `X` made
//!   dimension-compatible ([`Compatibility`]; the paper uses a1).
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
use ksvd_kernels::{Kernel, Samples};
use ksvd_linalg::CsrMatrix;
use ksvd_solvers::{lanczos_svd, LanczosParams, SvdResult};
use linfa::ParamGuard;
use ndarray::{Array1, Array2};

/// Which kernel KSVD uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KsvdKernel {
    /// Linear `x . z`.
    Linear,
    /// RBF `exp(-‖x − z‖²/γ²)`.
    Rbf,
    /// SNE: the RBF value normalised over the column samples,
    /// `exp(-‖x − z‖²/γ²) / Σ_{z'} exp(-‖x − z'‖²/γ²)` (every row of `G` sums to 1).
    Sne,
}

/// How the documents (rows `x_i ∈ R^m` of `X`) and the terms (columns `z_j ∈ R^n`) are put in
/// one space (Remark 3.2 and Algorithm 1 of the paper). Write `X = U Σ Vᵀ` (thin SVD).
///
/// * [`Compatibility::Pca`] (a1, the default and the paper's choice for biclustering): both
///   sides are projected on their principal axes (uncentred PCA, as in Algorithm 1):
///   `x'_i = Vᵀ x_i = Σ u_i` and `z'_j = Uᵀ z_j = Σ v_j`, the `k`-th coordinate of both being
///   the `k`-th singular direction (`X v_k = σ_k u_k` pairs the axes). Equivalently, the terms
///   are mapped into term space by the orthogonal (polar) factor of `X`,
///   `z'_j = V Uᵀ z_j = (XᵀX)^{1/2} e_j`. Both maps are isometries on the data, so
///   `‖x'_i‖ = ‖x_i‖`, `‖z'_j‖ = ‖z_j‖` and `x'_i · z'_j = (X (XᵀX)^{1/2})_ij = (U Σ² Vᵀ)_ij`;
///   this is how `G` is computed (one eigendecomposition of the smaller Gram matrix, no SVD of
///   `X`). The linear kernel then gives `G = U Σ² Vᵀ`: the singular vectors of `X` (the KSVD ↔
///   SVD special case), and `G` is equivariant under relabelling the documents or the terms.
/// * [`Compatibility::PcaLiteral`]: Algorithm 1 taken literally — only the longer side is
///   projected (`n > m`: `z'_j = Uᵀ z_j = Σ v_j`) and compared with the other side in its
///   original basis (`x_i` in term coordinates). The two coordinate systems differ, so the kernel
///   depends on the arbitrary order of the vocabulary (permuting the terms changes `G` beyond
///   permuting its columns). Kept to reproduce the earlier behaviour; not a sound default.
/// * [`Compatibility::PseudoInverse`] (a0): `n > m`: `z'_j = X^† z_j` (`= e_j` when `X` has full
///   column rank), so `x'_i · z'_j = X_ij`; mirrored when `m > n`.
/// * [`Compatibility::Random`] (a2): a seeded Gaussian map of the longer side
///   ([`ksvd_kernels::compat`]); like `PcaLiteral`, it mixes bases.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compatibility {
    /// a0: pseudo-inverse.
    PseudoInverse,
    /// a1: both sides on the shared principal axes (see the type's documentation).
    Pca,
    /// a1 as Algorithm 1 literally does it (longer side projected, other side unchanged).
    PcaLiteral,
    /// a2: seeded Gaussian projection of the longer side.
    Random {
        /// Seed of the Gaussian entries.
        seed: u64,
    },
}

impl std::str::FromStr for Compatibility {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "a0" | "pinv" => Ok(Compatibility::PseudoInverse),
            "a1" | "pca" => Ok(Compatibility::Pca),
            "a1-literal" | "pca-literal" => Ok(Compatibility::PcaLiteral),
            "a2" | "random" => Ok(Compatibility::Random { seed: 0 }),
            other => Err(format!(
                "unknown compatibility `{other}` (expected a0, a1, a1-literal or a2)"
            )),
        }
    }
}

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
    /// KSVD (the paper uses SNE and a1 compatibility for biclustering).
    Ksvd {
        /// Kernel.
        kernel: KsvdKernel,
        /// Factor `k` of the bandwidth rule (positive; unused by the linear kernel).
        gamma_k: f64,
        /// Compatibility alternative.
        compat: Compatibility,
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
            let (gamma, gammas) = match kernel {
                KsvdKernel::Linear => (1.0, Vec::new()),
                _ => {
                    let g = bandwidth(x, gamma_k)?;
                    (g, vec![g])
                }
            };
            let g = ksvd_kernel(x, kernel, gamma, compat)?;
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
    use crate::kernel::gram;
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

    #[test]
    fn gram_is_x_xt() {
        let x = random_sparse(13, 7, 3);
        let d = x.to_dense();
        let want = d.dot(&d.t());
        let got = gram(&x).unwrap();
        let tol = 8.0 * f64::EPSILON * 7.0 * max_abs(&want);
        assert!(max_abs(&(&got - &want)) <= tol);
        assert_eq!(got, got.t(), "exactly symmetric");
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

    /// `G` from the shared-principal-axes a1 equals the kernel of the explicit coordinates
    /// `x' = U Σ` and `z' = V Σ` computed by the kernels crate, for tall, wide and square `X`.
    #[test]
    fn a1_kernel_is_the_kernel_of_the_explicit_principal_coordinates() {
        for (n, m) in [(14, 9), (8, 15), (10, 10)] {
            let x = random_sparse(n, m, (n * m) as u64);
            let svd = dense::thin_svd(x.to_dense().view()).unwrap();
            let xs = &svd.u * &svd.s.view().insert_axis(Axis(0));
            let zs = &svd.v * &svd.s.view().insert_axis(Axis(0));
            for (kernel, kk) in [
                (KsvdKernel::Linear, Kernel::Linear),
                (KsvdKernel::Rbf, Kernel::Rbf { gamma: 2.5 }),
                (KsvdKernel::Sne, Kernel::Sne { gamma: 2.5 }),
            ] {
                let g = ksvd_kernel(&x, kernel, 2.5, Compatibility::Pca).unwrap();
                assert_eq!(g.dim(), (n, m));
                let want = KernelMatrix::new(
                    Samples::dense(xs.clone()).unwrap(),
                    Samples::dense(zs.clone()).unwrap(),
                    kk,
                )
                .unwrap();
                let want = want
                    .block(&(0..n).collect::<Vec<_>>(), &(0..m).collect::<Vec<_>>())
                    .unwrap();
                let scale = max_abs(&want);
                let tol = 1e4 * f64::EPSILON * (n.max(m) as f64) * scale.max(1.0);
                let diff = max_abs(&(&g - &want));
                assert!(diff <= tol, "{n}x{m} {kernel:?}: {diff} > {tol}");
            }
        }
    }

    /// Relabelling the terms permutes the columns of the a1 kernel (and nothing else); the
    /// literal Algorithm 1 kernel is not equivariant.
    #[test]
    fn a1_kernel_is_equivariant_under_term_permutations() {
        let (n, m) = (16, 9);
        let x = random_sparse(n, m, 11);
        let perm: Vec<usize> = (0..m).map(|j| (j * 4 + 3) % m).collect(); // 4 is coprime to 9
        let d = x.to_dense();
        let xp = CsrMatrix::from_dense(d.select(Axis(1), &perm).view()).unwrap();
        let g = ksvd_kernel(&x, KsvdKernel::Sne, 3.0, Compatibility::Pca).unwrap();
        let gp = ksvd_kernel(&xp, KsvdKernel::Sne, 3.0, Compatibility::Pca).unwrap();
        let diff = max_abs(&(&gp - &g.select(Axis(1), &perm)));
        assert!(diff <= 1e4 * f64::EPSILON * max_abs(&g), "a1: {diff}");
        let l = ksvd_kernel(&x, KsvdKernel::Sne, 3.0, Compatibility::PcaLiteral).unwrap();
        let lp = ksvd_kernel(&xp, KsvdKernel::Sne, 3.0, Compatibility::PcaLiteral).unwrap();
        let diff = max_abs(&(&lp - &l.select(Axis(1), &perm)));
        assert!(
            diff > 1e-3 * max_abs(&l),
            "the literal a1 was expected to mix bases: {diff}"
        );
    }

    /// With the linear kernel, a1 gives `G = U Σ² Vᵀ`: KSVD's embeddings span the singular
    /// subspaces of `X` and its singular values are the squares of those of `X`.
    #[test]
    fn linear_ksvd_with_a1_is_the_svd() {
        let (x, _, _) = planted();
        let svd = embed(&x, EmbeddingMethod::Svd, 3, 0).unwrap();
        let lin = EmbeddingMethod::Ksvd {
            kernel: KsvdKernel::Linear,
            gamma_k: 1.0,
            compat: Compatibility::Pca,
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
            kernel: KsvdKernel::Linear,
            gamma_k: 1.0,
            compat: Compatibility::PseudoInverse,
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
                kernel: KsvdKernel::Sne,
                gamma_k,
                compat: Compatibility::Pca,
            };
            let e = embed(&x, method, 5, 3).unwrap();
            assert_eq!((e.docs.dim(), e.terms.dim()), ((n, 5), (m, 5)));
            let g = ksvd_kernel(&x, KsvdKernel::Sne, e.gammas[0], Compatibility::Pca).unwrap();
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
    fn psd_sqrt_squares_back() {
        let x = random_sparse(9, 20, 2);
        let b = gram(&x).unwrap();
        let r = crate::kernel::psd_sqrt(&b).unwrap();
        let diff = max_abs(&(&r.dot(&r) - &b));
        assert!(diff <= 1e3 * f64::EPSILON * 9.0 * max_abs(&b), "{diff}");
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
        assert_eq!("a1".parse::<Compatibility>(), Ok(Compatibility::Pca));
        assert!("a9".parse::<Compatibility>().is_err());
    }
}
