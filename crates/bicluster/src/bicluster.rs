//! Biclustering from embeddings: k-means on the document (left) and term (right) embeddings.
use crate::error::{check_matrix, BiclusterError, Result};
use crate::kmeans::{kmeans_checked, KMeansParams};
use ndarray::ArrayView2;
use rand::RngCore;

/// Document and term clusters of a biclustering.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Biclustering {
    /// Cluster of every document (row of the left embedding), in `0..k_docs`.
    pub doc_labels: Vec<usize>,
    /// Cluster of every term (row of the right embedding), in `0..k_terms`.
    pub term_labels: Vec<usize>,
}

/// Clusters documents and terms from their embeddings, as in the paper's biclustering
/// experiment (Appendix: "k-means is adopted for performing the biclustering task with extracted
/// features"): k-means with `k_docs` clusters on the rows of `left` (documents, `n x r`) and with
/// `k_terms` clusters on the rows of `right` (terms, `m x r'`).
///
/// `left`/`right` are typically the left/right singular vectors of SVD or KSVD, possibly scaled
/// by the singular values, or two separate KPCA embeddings; the widths `r` and `r'` may differ.
/// The two k-means runs use seeds drawn from [`ksvd_linalg::random::rng_from_seed`]`(seed)` (first
/// draw: documents, second: terms), so one `seed` fixes the whole result.
///
/// Errors: empty or non-finite embeddings, `k_docs`/`k_terms` of zero or larger than the number
/// of rows, invalid `params`.
pub fn bicluster(
    left: ArrayView2<'_, f64>,
    right: ArrayView2<'_, f64>,
    k_docs: usize,
    k_terms: usize,
    seed: u64,
    params: &KMeansParams,
) -> Result<Biclustering> {
    let params = params.check()?;
    // Validate both inputs before spending time on the first k-means.
    let inputs = [
        ("left (document) embedding", left.view(), k_docs),
        ("right (term) embedding", right.view(), k_terms),
    ];
    for (what, x, k) in inputs {
        check_matrix(what, x)?;
        if k > x.nrows() {
            return Err(BiclusterError::TooManyClusters { what, k, n: x.nrows() });
        }
    }
    let mut rng = ksvd_linalg::random::rng_from_seed(seed);
    let (doc_seed, term_seed) = (rng.next_u64(), rng.next_u64());
    let docs = kmeans_checked("left (document) embedding", left, k_docs, doc_seed, &params)?;
    let terms = kmeans_checked("right (term) embedding", right, k_terms, term_seed, &params)?;
    Ok(Biclustering {
        doc_labels: docs.labels,
        term_labels: terms.labels,
    })
}

/// One interface for every biclustering method: ours ([`EmbedAndCluster`]: SVD, KPCA or KSVD
/// embeddings, then k-means) and the baselines of `ksvd-baselines` (BCOT, EBC) cluster a
/// document-term matrix the same way.
pub trait Biclusterer {
    /// The method's typed error.
    type Error: std::error::Error + Send + Sync + 'static;

    /// The method id used in experiment specs (`svd`, `kpca`, `ksvd`, `bcot`, `ebc`).
    fn id(&self) -> &'static str;

    /// Clusters the rows (documents) of `x` into `k_docs` clusters and its columns (terms) into
    /// `k_terms`, all randomness from `seed`.
    fn bicluster_matrix(
        &self,
        x: &ksvd_linalg::CsrMatrix,
        k_docs: usize,
        k_terms: usize,
        seed: u64,
    ) -> std::result::Result<Biclustering, Self::Error>;
}

/// Ours: `components` document and term vectors from [`crate::embed`] with `method`, then
/// [`bicluster`] (k-means on each side).
#[derive(Debug, Clone, PartialEq)]
pub struct EmbedAndCluster {
    /// The embedding.
    pub method: crate::embed::EmbeddingMethod,
    /// Vectors per side.
    pub components: usize,
    /// The k-means runs.
    pub kmeans: KMeansParams,
}

impl Biclusterer for EmbedAndCluster {
    type Error = BiclusterError;

    fn id(&self) -> &'static str {
        match self.method {
            crate::embed::EmbeddingMethod::Svd => "svd",
            crate::embed::EmbeddingMethod::Kpca { .. } => "kpca",
            crate::embed::EmbeddingMethod::Ksvd { .. } => "ksvd",
        }
    }

    fn bicluster_matrix(
        &self,
        x: &ksvd_linalg::CsrMatrix,
        k_docs: usize,
        k_terms: usize,
        seed: u64,
    ) -> Result<Biclustering> {
        let e = crate::embed::embed(x, self.method, self.components, seed)?;
        bicluster(e.docs.view(), e.terms.view(), k_docs, k_terms, seed, &self.kmeans)
    }
}
