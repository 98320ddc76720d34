//! One cell per task: the baseline methods as values ([`GraphBaseline`], [`BiclusterBaseline`]),
//! their hyper-parameters as config sections that deserialize from an experiment spec's
//! `[params]`, and one call per (method, dataset, seed). The loops over datasets x methods x
//! seeds, the rows and the caching live in `xtask`.
use crate::bcot::{BcotParams, Biclusters};
use crate::deepwalk::DeepWalkParams;
use crate::digae::DigaeParams;
use crate::ebc::EbcParams;
use crate::error::Result;
use crate::hope::HopeParams;
use crate::util::stream_seed;
use ksvd_datasets::{DocumentTermData, Graph};
use ndarray::{concatenate, Array2, Axis};
use serde::{Deserialize, Serialize};

/// A node-embedding baseline of the paper's Table 1. Serialized as its method id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GraphBaseline {
    /// DeepWalk (one embedding), method id `deepwalk`.
    Deepwalk,
    /// HOPE with the Katz proximity (source and target embeddings), method id `hope`.
    Hope,
    /// DiGAE (source and target embeddings), method id `digae`.
    Digae,
}

impl GraphBaseline {
    /// Every graph baseline.
    pub const ALL: [GraphBaseline; 3] = [Self::Deepwalk, Self::Hope, Self::Digae];

    /// The method id used in experiment specs (`deepwalk`, `hope`, `digae`).
    pub fn id(self) -> &'static str {
        match self {
            Self::Deepwalk => "deepwalk",
            Self::Hope => "hope",
            Self::Digae => "digae",
        }
    }
}

/// A biclustering baseline of the paper's Table 2. Serialized as its method id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BiclusterBaseline {
    /// BCOT (entropic optimal transport), method id `bcot`.
    Bcot,
    /// EBC's information-theoretic co-clustering, method id `ebc`.
    Ebc,
}

impl BiclusterBaseline {
    /// Every biclustering baseline.
    pub const ALL: [BiclusterBaseline; 2] = [Self::Bcot, Self::Ebc];

    /// The method id used in experiment specs (`bcot`, `ebc`).
    pub fn id(self) -> &'static str {
        match self {
            Self::Bcot => "bcot",
            Self::Ebc => "ebc",
        }
    }
}

/// Node embeddings of a graph baseline: one matrix (DeepWalk) or a source/target pair (HOPE,
/// DiGAE). Rows index nodes in the order of the adjacency matrix.
#[derive(Debug, Clone, PartialEq)]
pub enum Embeddings {
    /// One `n x d` embedding.
    Single(Array2<f64>),
    /// Source (out-role) and target (in-role) embeddings, each `n x d`.
    SourceTarget {
        /// `n x d` source embeddings.
        source: Array2<f64>,
        /// `n x d` target embeddings.
        target: Array2<f64>,
    },
}

impl Embeddings {
    /// Number of nodes.
    pub fn n_nodes(&self) -> usize {
        match self {
            Self::Single(e) => e.nrows(),
            Self::SourceTarget { source, .. } => source.nrows(),
        }
    }

    /// The features the paper's tasks use: the single embedding, or `[source, target]`
    /// concatenated column-wise (section 5.1: "two sets of embeddings are obtained and then
    /// concatenated").
    pub fn concatenated(&self) -> Array2<f64> {
        match self {
            Self::Single(e) => e.clone(),
            Self::SourceTarget { source, target } => {
                // Same number of rows by construction, so concatenation cannot fail.
                concatenate(Axis(1), &[source.view(), target.view()]).unwrap_or_else(|_| source.clone())
            }
        }
    }
}

/// Hyper-parameters of the three graph baselines (each section optional in a spec; missing
/// fields take the documented defaults).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GraphBaselineConfig {
    /// DeepWalk's parameters.
    pub deepwalk: DeepWalkParams,
    /// HOPE's parameters.
    pub hope: HopeParams,
    /// DiGAE's parameters.
    pub digae: DigaeParams,
}

/// Embeds the nodes of `graph` with a baseline (`graph.adjacency`, `A[src, dst]`), all
/// randomness from `seed`.
pub fn run_graph_baseline(
    method: GraphBaseline,
    graph: &Graph,
    config: &GraphBaselineConfig,
    seed: u64,
) -> Result<Embeddings> {
    let a = &graph.adjacency;
    Ok(match method {
        GraphBaseline::Deepwalk => Embeddings::Single(config.deepwalk.check()?.fit(a, seed)?.embedding),
        GraphBaseline::Hope => {
            let fit = config.hope.check()?.fit(a, seed)?;
            Embeddings::SourceTarget {
                source: fit.source,
                target: fit.target,
            }
        }
        GraphBaseline::Digae => {
            let fit = config.digae.check()?.fit(a, seed)?;
            Embeddings::SourceTarget {
                source: fit.source,
                target: fit.target,
            }
        }
    })
}

/// Hyper-parameters of the two biclustering baselines.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BiclusterBaselineConfig {
    /// BCOT's parameters.
    pub bcot: BcotParams,
    /// EBC's parameters.
    pub ebc: EbcParams,
}

/// Document clusters (`k_docs`) and term clusters (`k_terms`) of `data.matrix` (documents x
/// terms) by a baseline, all randomness from `seed`.
pub fn run_bicluster_baseline(
    method: BiclusterBaseline,
    data: &DocumentTermData,
    k_docs: usize,
    k_terms: usize,
    config: &BiclusterBaselineConfig,
    seed: u64,
) -> Result<Biclusters> {
    match method {
        BiclusterBaseline::Bcot => config.bcot.check()?.bicluster(&data.matrix, k_docs, k_terms, seed),
        BiclusterBaseline::Ebc => config.ebc.check()?.bicluster(&data.matrix, k_docs, k_terms, seed),
    }
}

/// The seed of trial `t` of a cell with seed `seed` (trial 0 uses `seed` itself).
pub fn trial_seed(seed: u64, trial: usize) -> u64 {
    if trial == 0 {
        seed
    } else {
        stream_seed(seed, 0x7472_6961_6c73, trial as u64, 0)
    }
}
