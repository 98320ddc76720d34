//! One interface for every node-embedding method: ours ([`EmbeddingSpec`]) and the baselines
//! of `ksvd-baselines` (DeepWalk, HOPE, DiGAE) embed a graph the same way, so callers iterate
//! over methods without special cases. A method with a hyper-parameter grid (ours: multiples of
//! the bandwidth rule) offers one embedding per grid point through
//! [`GraphEmbedder::embed_candidates`], and the evaluation picks one per trial by
//! cross-validation; a method may describe its fit and that choice in the note of its result
//! rows ([`GraphEmbedder::note`]). Both default to one candidate and no note.
use std::time::Instant;

use ksvd_linalg::CsrMatrix;

use crate::classify::LssvmForm;
use crate::embed::{embed, EmbeddingSpec, Embeddings};
use crate::error::GraphTaskError;

/// One candidate embedding of a method on a graph, with what its fit reports.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// The node embeddings.
    pub embeddings: Embeddings,
    /// Wall-clock seconds of the fit.
    pub seconds: f64,
    /// Components per side actually computed (ours: the requested rank, possibly capped);
    /// `None` when the method does not report it.
    pub rank: Option<usize>,
    /// Largest relative residual of the solver's singular triplets (see
    /// [`crate::EmbeddingOutput::max_residual`]); `None` when the solver does not report one.
    pub max_residual: Option<f64>,
}

/// The candidate embeddings of one method on one graph, among which an evaluation picks one per
/// trial.
#[derive(Debug, Clone)]
pub struct Candidates {
    /// The candidates, in the order of the method's grid (at least one).
    pub list: Vec<Candidate>,
    /// The bandwidth rule's `γ` on this graph ([`crate::bandwidth`] with `k = 1`) when the
    /// candidates are its multiples; `None` for a method without a bandwidth.
    pub bandwidth_rule: Option<f64>,
}

impl Candidates {
    /// One candidate without a bandwidth.
    pub fn single(candidate: Candidate) -> Candidates {
        Candidates {
            list: vec![candidate],
            bandwidth_rule: None,
        }
    }
}

/// What an evaluation made of a method's [`Candidates`] (the input of [`GraphEmbedder::note`]).
#[derive(Debug, Clone, Copy)]
pub struct Selection<'a> {
    /// Index of the candidate chosen in each trial (by cross-validation on its training part).
    pub chosen: &'a [usize],
    /// Index of the candidate the reconstruction used (the one chosen most often).
    pub reconstruction: usize,
    /// The LS-SVM form the classifier used.
    pub form: LssvmForm,
    /// Seconds of the classification (every candidate, every trial).
    pub classify_seconds: f64,
    /// Seconds of the reconstruction.
    pub reconstruct_seconds: f64,
}

/// A method that embeds the nodes of a directed graph.
pub trait GraphEmbedder {
    /// The method's typed error.
    type Error: std::error::Error + Send + Sync + 'static;

    /// The method id used in experiment specs (`ksvd_sne`, `deepwalk`, ...).
    fn id(&self) -> &'static str;

    /// Embeds the nodes of `adjacency` (`A[src, dst]`, square), all randomness from `seed`:
    /// one row per node, in the order of the adjacency matrix.
    fn embed_graph(&self, adjacency: &CsrMatrix, seed: u64) -> Result<Embeddings, Self::Error>;

    /// The candidate embeddings of `adjacency` among which an evaluation picks one per trial
    /// (a hyper-parameter grid, fitted once per graph), all randomness from `seed`. The default
    /// is the one embedding of [`embed_graph`](Self::embed_graph), timed.
    fn embed_candidates(&self, adjacency: &CsrMatrix, seed: u64) -> Result<Candidates, Self::Error> {
        let start = Instant::now();
        let embeddings = self.embed_graph(adjacency, seed)?;
        Ok(Candidates::single(Candidate {
            embeddings,
            seconds: start.elapsed().as_secs_f64(),
            rank: None,
            max_residual: None,
        }))
    }

    /// The note of the method's result rows, given its candidates and what the evaluation chose
    /// among them (settings, bandwidths, solver certificates, times); the default has none.
    fn note(&self, candidates: &Candidates, selection: &Selection<'_>) -> Option<String> {
        let _ = (candidates, selection);
        None
    }
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

    /// One candidate, [`embed`]'s rank and residual included.
    fn embed_candidates(&self, adjacency: &CsrMatrix, seed: u64) -> Result<Candidates, GraphTaskError> {
        let start = Instant::now();
        let out = embed(adjacency, &EmbeddingSpec { seed, ..self.clone() })?;
        Ok(Candidates::single(Candidate {
            embeddings: out.embeddings,
            seconds: start.elapsed().as_secs_f64(),
            rank: Some(out.rank),
            max_residual: out.max_residual,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::{Method, Scaling};
    use ksvd::Solver;
    use ksvd_kernels::graph::GraphInput;

    /// Through the trait, the SVD of two directed 4-cycles reproduces `A = U Σ Vᵀ` exactly, and
    /// the seed argument replaces the spec's.
    #[test]
    fn svd_through_the_trait_reconstructs_the_adjacency() -> Result<(), GraphTaskError> {
        let arcs: Vec<(usize, usize, f64)> = (0..8).map(|i| (i, (i / 4) * 4 + (i + 1) % 4, 1.0)).collect();
        let a = CsrMatrix::from_triplets(8, 8, arcs)?;
        let spec = EmbeddingSpec {
            method: Method::Svd,
            rank: 8,
            transform: GraphInput::Raw,
            scaling: Scaling::Scores,
            center_kernels: false,
            gamma: None,
            solver: Solver::Exact,
            seed: 0,
            split_twins: true,
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
        // One candidate, with the solve's rank and no bandwidth.
        let c = spec.embed_candidates(&a, 5)?;
        assert_eq!((c.list.len(), c.list[0].rank, c.bandwidth_rule), (1, Some(8), None));
        assert_eq!(c.list[0].embeddings, spec.embed_graph(&a, 5)?);
        assert!(spec
            .note(
                &c,
                &Selection {
                    chosen: &[0],
                    reconstruction: 0,
                    form: LssvmForm::Auto,
                    classify_seconds: 0.0,
                    reconstruct_seconds: 0.0,
                }
            )
            .is_none());
        Ok(())
    }
}
