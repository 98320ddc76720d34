//! One interface for every node-embedding method: ours ([`EmbeddingSpec`]) and the baselines
//! of `ksvd-baselines` (DeepWalk, HOPE, DiGAE) embed a graph the same way, so callers iterate
//! over methods without special cases.
use ksvd_linalg::CsrMatrix;

use crate::embed::{embed, EmbeddingSpec, Embeddings};
use crate::error::GraphTaskError;

/// A method that embeds the nodes of a directed graph.
pub trait GraphEmbedder {
    /// The method's typed error.
    type Error: std::error::Error + Send + Sync + 'static;

    /// The method id used in experiment specs (`ksvd_sne`, `deepwalk`, ...).
    fn id(&self) -> &'static str;

    /// Embeds the nodes of `adjacency` (`A[src, dst]`, square), all randomness from `seed`:
    /// one row per node, in the order of the adjacency matrix.
    fn embed_graph(&self, adjacency: &CsrMatrix, seed: u64) -> Result<Embeddings, Self::Error>;
}

impl GraphEmbedder for EmbeddingSpec {
    type Error = GraphTaskError;

    fn id(&self) -> &'static str {
        self.method.id()
    }

    /// [`embed`] with this spec and `seed` in place of [`EmbeddingSpec::seed`].
    fn embed_graph(&self, adjacency: &CsrMatrix, seed: u64) -> Result<Embeddings, GraphTaskError> {
        let spec = EmbeddingSpec { seed, ..self.clone() };
        Ok(embed(adjacency, &spec)?.embeddings)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::{GraphTransform, Method, Scaling};
    use ksvd::Solver;

    /// Through the trait, the SVD of two directed 4-cycles reproduces `A = U Σ Vᵀ` exactly, and
    /// the seed argument replaces the spec's.
    #[test]
    fn svd_through_the_trait_reconstructs_the_adjacency() -> Result<(), GraphTaskError> {
        let arcs: Vec<(usize, usize, f64)> = (0..8).map(|i| (i, (i / 4) * 4 + (i + 1) % 4, 1.0)).collect();
        let a = CsrMatrix::from_triplets(8, 8, arcs)?;
        let spec = EmbeddingSpec {
            method: Method::Svd,
            rank: 8,
            transform: GraphTransform::Raw,
            scaling: Scaling::Scores,
            center_kernels: false,
            gamma: None,
            solver: Solver::Exact,
            seed: 0,
        };
        assert_eq!(spec.id(), "svd");
        let Embeddings::SourceTarget { source, target } = spec.embed_graph(&a, 5)? else {
            panic!("SVD gives source and target embeddings");
        };
        // Scores: source = U Σ, target = V Σ, so source targetᵀ = U Σ² Vᵀ; with every singular
        // value 1 (a permutation matrix) that is A itself.
        let prod = source.dot(&target.t());
        let dense = a.to_dense();
        let err = (&prod - &dense).iter().fold(0.0f64, |m, v| m.max(v.abs()));
        assert!(err < 1e-12, "{err}");
        Ok(())
    }
}
