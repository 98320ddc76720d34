//! Biclustering from embeddings: k-means on the document (left) and term (right) embeddings.
use crate::embed::{embed, EmbeddingMethod};
use crate::error::{check_matrix, BiclusterError, Result};
use crate::kmeans::{kmeans, kmeans_checked, KMeansParams};
use ndarray::{s, ArrayView2};

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
/// The documents' k-means runs from `seed`, the terms' from `seed + 1` (wrapping), so one `seed`
/// fixes the whole result.
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
    let docs = kmeans_checked("left (document) embedding", left, k_docs, seed, &params)?;
    let terms = kmeans_checked("right (term) embedding", right, k_terms, seed.wrapping_add(1), &params)?;
    Ok(Biclustering {
        doc_labels: docs.labels,
        term_labels: terms.labels,
    })
}

/// One interface for every biclustering method: ours ([`EmbedAndCluster`]: SVD, KPCA or KSVD
/// embeddings, then k-means) and the baselines of `ksvd-baselines` (BCOT, EBC) cluster a
/// document-term matrix the same way, so callers iterate over methods without special cases.
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

    /// [`bicluster_matrix`](Self::bicluster_matrix) and a note on the fit for the method's
    /// result rows (ours: the vectors used, bandwidths, leading values, k-means stability); the
    /// default has no note.
    fn bicluster_with_note(
        &self,
        x: &ksvd_linalg::CsrMatrix,
        k_docs: usize,
        k_terms: usize,
        seed: u64,
    ) -> std::result::Result<(Biclustering, Option<String>), Self::Error> {
        Ok((self.bicluster_matrix(x, k_docs, k_terms, seed)?, None))
    }
}

/// Ours: document and term vectors from [`crate::embed`] with `method` (one embedding of width
/// `max(doc_components, term_components)`, the documents clustered on its first
/// `doc_components` columns, the terms on its first `term_components`), then [`bicluster`]
/// (k-means on each side, documents from `seed`, terms from `seed + 1`).
#[derive(Debug, Clone, PartialEq)]
pub struct EmbedAndCluster {
    /// The embedding.
    pub method: EmbeddingMethod,
    /// Vectors of the documents.
    pub doc_components: usize,
    /// Vectors of the terms.
    pub term_components: usize,
    /// The k-means runs.
    pub kmeans: KMeansParams,
    /// Extra k-means seeds of the label-free stability figure in the note: the mean pairwise NMI
    /// between the partitions of that many further seeds (`seed + 1000 + 2 i`, terms `+ 1`) and
    /// the reported one (0: none).
    pub stability_seeds: usize,
}

/// Mean pairwise NMI between the k-means partitions of `x` from `seeds` and `first` (label-free).
fn stability(x: ArrayView2<'_, f64>, k: usize, seeds: &[u64], first: &[usize], params: &KMeansParams) -> Result<f64> {
    let mut parts = vec![first.to_vec()];
    for &s in seeds {
        parts.push(kmeans(x, k, s, params)?.labels);
    }
    let mut total = 0.0;
    let mut pairs = 0usize;
    for a in 0..parts.len() {
        for b in a + 1..parts.len() {
            total += crate::nmi(&parts[a], &parts[b])?;
            pairs += 1;
        }
    }
    Ok(if pairs == 0 { f64::NAN } else { total / pairs as f64 })
}

impl Biclusterer for EmbedAndCluster {
    type Error = BiclusterError;

    fn id(&self) -> &'static str {
        match self.method {
            EmbeddingMethod::Svd => "svd",
            EmbeddingMethod::Kpca { .. } => "kpca",
            EmbeddingMethod::Ksvd { .. } => "ksvd",
        }
    }

    fn bicluster_matrix(
        &self,
        x: &ksvd_linalg::CsrMatrix,
        k_docs: usize,
        k_terms: usize,
        seed: u64,
    ) -> Result<Biclustering> {
        Ok(self.fit(x, k_docs, k_terms, seed, false)?.0)
    }

    /// The note: the vectors used per side, the bandwidths, the four leading values of the
    /// document side and (with `stability_seeds`) the k-means stability of both sides.
    fn bicluster_with_note(
        &self,
        x: &ksvd_linalg::CsrMatrix,
        k_docs: usize,
        k_terms: usize,
        seed: u64,
    ) -> Result<(Biclustering, Option<String>)> {
        self.fit(x, k_docs, k_terms, seed, true)
    }
}

impl EmbedAndCluster {
    /// The biclustering and, with `note`, the note of [`Biclusterer::bicluster_with_note`] (its
    /// extra k-means runs for the stability figure only then).
    fn fit(
        &self,
        x: &ksvd_linalg::CsrMatrix,
        k_docs: usize,
        k_terms: usize,
        seed: u64,
        note: bool,
    ) -> Result<(Biclustering, Option<String>)> {
        let (cd, ct) = (self.doc_components, self.term_components);
        let e = embed(x, self.method, cd.max(ct), seed)?;
        let docs = e.docs.slice(s![.., ..cd.min(e.docs.ncols())]);
        let terms = e.terms.slice(s![.., ..ct.min(e.terms.ncols())]);
        let b = bicluster(docs, terms, k_docs, k_terms, seed, &self.kmeans)?;
        if !note {
            return Ok((b, None));
        }
        let mut note = format!("{} document and {} term vectors", docs.ncols(), terms.ncols());
        if !e.gammas.is_empty() {
            let g: Vec<String> = e.gammas.iter().map(|g| format!("{g:.3}")).collect();
            note.push_str(&format!("; gamma {}", g.join(" / ")));
        }
        let head: Vec<String> = e.doc_values.iter().take(4).map(|v| format!("{v:.3e}")).collect();
        note.push_str(&format!("; leading values {}", head.join(", ")));
        if self.stability_seeds > 0 {
            let seeds: Vec<u64> = (0..self.stability_seeds as u64)
                .map(|i| seed.wrapping_add(1000 + 2 * i))
                .collect();
            let sd = stability(docs, k_docs, &seeds, &b.doc_labels, &self.kmeans)?;
            let seeds_t: Vec<u64> = seeds.iter().map(|s| s.wrapping_add(1)).collect();
            let st = stability(terms, k_terms, &seeds_t, &b.term_labels, &self.kmeans)?;
            note.push_str(&format!(
                "; k-means stability over {} seeds (mean pairwise NMI, no labels): documents {sd:.2}, terms {st:.2}",
                self.stability_seeds + 1
            ));
        }
        Ok((b, Some(note)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ours through the trait on two planted blocks (documents 0-5 use terms 0-3, documents
    /// 6-11 terms 4-7): both partitions recovered, the note lists the vectors, the leading
    /// values and a perfect k-means stability, and `bicluster_matrix` is the same biclustering.
    #[test]
    fn embed_and_cluster_notes_its_fit() -> Result<()> {
        let t: Vec<(usize, usize, f64)> = (0..12)
            .flat_map(|d| (0..4).map(move |w| (d, (d / 6) * 4 + w, 1.0 + ((d + w) % 3) as f64)))
            .collect();
        let x = ksvd_linalg::CsrMatrix::from_triplets(12, 8, t)?;
        let ours = EmbedAndCluster {
            method: EmbeddingMethod::Svd,
            doc_components: 2,
            term_components: 2,
            kmeans: KMeansParams::new(),
            stability_seeds: 2,
        };
        let (b, note) = ours.bicluster_with_note(&x, 2, 2, 3)?;
        let docs: Vec<usize> = (0..12).map(|d| d / 6).collect();
        let terms: Vec<usize> = (0..8).map(|w| w / 4).collect();
        assert!((crate::nmi(&docs, &b.doc_labels)? - 1.0).abs() < 1e-12);
        assert!((crate::nmi(&terms, &b.term_labels)? - 1.0).abs() < 1e-12);
        let note = note.unwrap_or_default();
        assert!(
            note.starts_with("2 document and 2 term vectors; leading values "),
            "{note}"
        );
        assert!(
            note.ends_with("k-means stability over 3 seeds (mean pairwise NMI, no labels): documents 1.00, terms 1.00"),
            "{note}"
        );
        assert_eq!(ours.bicluster_matrix(&x, 2, 2, 3)?, b);
        Ok(())
    }
}
