//! # ksvd-bicluster
//!
//! The biclustering experiment of the paper (Section "Biclustering", Table 2): documents and
//! terms of a document-term matrix `X` (`n` documents x `m` terms) are clustered separately by
//! k-means on their embeddings — the left (documents) and right (terms) singular vectors of SVD
//! or KSVD, or two KPCA embeddings — and scored as in BCOT (Fettal, Labiod & Nadif 2022):
//! documents by NMI against the ground-truth labels, terms by PMI coherence.
//!
//! * [`embed`] / [`EmbeddingMethod`]: the document and term embeddings — SVD of `X`, KPCA (RBF) of
//!   the documents and, separately, of the terms, and KSVD: the singular vectors of
//!   `G_ij = κ(x'_i, z'_j)` between documents and terms made compatible by a
//!   [`ksvd_kernels::Compat`] (Table 2: `a1-shared`, both sides on the shared principal axes of
//!   `X`, so that `x'_i · z'_j = (X (XᵀX)^{1/2})_ij` and relabelling the terms only permutes the
//!   columns of `G`). Unit singular vectors, as the paper's "k-means on the left and right
//!   singular vectors".
//! * KPCA is [`ksvd::Kpca`] and KSVD [`ksvd::Ksvd`] (the model crate owns both, and their
//!   solvers); [`ksvd_kernel`] forms the dense KSVD matrix `G` they are given (at most
//!   [`ksvd_linalg::FIXED_DENSE_ENTRIES`] entries, like the stored KPCA kernel; top triplets by
//!   Lanczos). Its inner products and kernel values come from `ksvd-kernels`
//!   ([`ksvd_kernels::compat::inner_products`], [`ksvd_kernels::Kernel::values_from_inner_products`]):
//!   this crate evaluates no kernel itself.
//! * [`kmeans`] / [`KMeansParams`]: seeded k-means (k-means++ initialisation, `n_runs` restarts
//!   keeping the smallest inertia) on the rows of a dense matrix, wrapping
//!   [`linfa_clustering::KMeans`]; optional row L2-normalisation.
//! * [`bicluster`]: k-means with `k_docs` clusters on the left embedding and `k_terms` clusters on
//!   the right embedding, from one seed.
//! * [`Biclusterer`]: one interface for ours ([`EmbedAndCluster`]: [`embed`], then [`bicluster`],
//!   with a note on the fit) and the baselines of `ksvd-baselines` (BCOT, EBC).
//! * [`nmi`] (defined in `ksvd-metrics`, re-exported here): normalised mutual information with
//!   arithmetic-mean normalisation, scikit-learn's
//!   `normalized_mutual_info_score` (its default `average_method="arithmetic"`):
//!   `NMI(U, V) = I(U; V) / ((H(U) + H(V)) / 2)`, with
//!   `I(U; V) = sum_ij (n_ij / N) ln(N n_ij / (a_i b_j))` and `H(U) = -sum_i (a_i / N) ln(a_i / N)`,
//!   where `n_ij` is the contingency table, `a`, `b` its margins and `N` the number of points.
//!   Both labelings with one cluster give 1, otherwise `I = 0` gives 0 (scikit-learn's rules).
//! * [`coherence`]: BCOT's `average_pmi_per_cluster`. With `C = X^T X`, `r_i = sum_j C_ij`,
//!   `T = sum_i r_i` and `PMI_ij = ln(C_ij T / (r_i r_j))` (0 where not finite, e.g. `C_ij = 0`),
//!   `coherence = sum_c (|c| / m) (mean_{i,j in c} PMI_ij - mean_{i in c, j not in c} PMI_ij)`.
//!   Computed with blocked sparse products, never a dense `m x m` matrix.
//!
//! Every function validates its input and returns a [`BiclusterError`] rather than panicking;
//! every random choice comes from an explicit `seed`
//! (via [`ksvd_linalg::random::rng_from_seed`]).
//!
//! ```
//! use ksvd_bicluster::{bicluster, coherence, nmi, KMeansParams};
//! use ksvd_linalg::{dense, CsrMatrix};
//! use ndarray::{array, s};
//!
//! // Two planted biclusters: documents {0, 1} use terms {0, 1}; documents {2, 3} use term 2.
//! let x = array![[2.0, 1.0, 0.0], [1.0, 2.0, 0.0], [0.0, 0.0, 3.0], [0.0, 0.0, 1.0]];
//! let svd = dense::thin_svd(x.view())?;
//! let (u, v) = (svd.u.slice(s![.., ..2]), svd.v.slice(s![.., ..2]));
//! let b = bicluster(u, v, 2, 2, 42, &KMeansParams::new())?;
//!
//! // Exact recovery: NMI = 1 up to rounding.
//! assert!((nmi(&b.doc_labels, &[0, 0, 1, 1])? - 1.0).abs() < 1e-12);
//! assert!((nmi(&b.term_labels, &[0, 0, 1])? - 1.0).abs() < 1e-12);
//! let coh = coherence(&CsrMatrix::from_dense(x.view())?, &b.term_labels)?;
//! assert!(coh.score > coherence(&CsrMatrix::from_dense(x.view())?, &[0, 1, 0])?.score);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Where to go next: the experiment runner (`xtask`, kind `biclustering`, spec
//! `experiments/table2.toml`) runs every method through [`Biclusterer`], scores it by [`nmi`] and
//! [`coherence`] and writes one row per dataset x method x metric x seed; the kernels and solvers
//! live in `ksvd-kernels` and `ksvd-solvers`.

mod bicluster;
mod coherence;
mod embed;
mod error;
mod kernel;
mod kmeans;

pub use bicluster::{bicluster, Biclusterer, Biclustering, EmbedAndCluster};
pub use coherence::{coherence, ClusterCoherence, Coherence};
pub use embed::{embed, EmbeddingMethod, Embeddings};
pub use error::{BiclusterError, Result};
pub use kernel::ksvd_kernel;
pub use kmeans::{kmeans, KMeansFit, KMeansParams, KMeansValidParams};
/// The NMI of Table 2, defined in `ksvd-metrics`.
pub use ksvd_metrics::{entropy, mutual_info, nmi};
