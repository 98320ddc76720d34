//! One cell per task: the baseline methods as values ([`GraphBaseline`], [`BiclusterBaseline`]),
//! their hyper-parameters as config sections that deserialize from an experiment spec's
//! `[params]`, and one call per (method, dataset, seed). The loops over datasets x methods x
//! seeds, the rows and the caching live in `xtask`.
use crate::bcot::{BcotParams, Biclusters};
use crate::deepwalk::DeepWalkParams;
use crate::digae::{DigaeFit, DigaeParams};
use crate::ebc::EbcParams;
use crate::error::{BaselineError, Result};
use crate::hope::{HopeFit, HopeParams};
use crate::util::stream_seed;
use ksvd_bicluster::Biclusterer;
use ksvd_datasets::{DocumentTermData, Graph};
use ksvd_graph_tasks::{Embeddings, GraphEmbedder};
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

impl GraphBaseline {
    /// This baseline with the hyper-parameters of `config`, as a [`GraphEmbedder`].
    pub fn with(self, config: &GraphBaselineConfig) -> Configured<'_, GraphBaseline, GraphBaselineConfig> {
        Configured { method: self, config }
    }
}

/// A baseline and its hyper-parameters ([`GraphBaseline::with`], [`BiclusterBaseline::with`]):
/// the [`GraphEmbedder`] or [`Biclusterer`] of a spec's method id (the parameters are checked on
/// every call).
#[derive(Debug, Clone, Copy)]
pub struct Configured<'a, M, C> {
    /// The method.
    pub method: M,
    /// The hyper-parameters of every baseline of its kind (only `method`'s are used).
    pub config: &'a C,
}

impl GraphEmbedder for Configured<'_, GraphBaseline, GraphBaselineConfig> {
    type Error = BaselineError;
    fn id(&self) -> &'static str {
        self.method.id()
    }
    fn embed_graph(&self, adjacency: &ksvd_linalg::CsrMatrix, seed: u64) -> Result<Embeddings> {
        let c = self.config;
        Ok(match self.method {
            GraphBaseline::Deepwalk => Embeddings::Single(c.deepwalk.check()?.fit(adjacency, seed)?.embedding),
            GraphBaseline::Hope => {
                let HopeFit { source, target, .. } = c.hope.check()?.fit(adjacency, seed)?;
                Embeddings::SourceTarget { source, target }
            }
            GraphBaseline::Digae => {
                let DigaeFit { source, target, .. } = c.digae.check()?.fit(adjacency, seed)?;
                Embeddings::SourceTarget { source, target }
            }
        })
    }
}

/// Embeds the nodes of `graph` with a baseline (`graph.adjacency`, `A[src, dst]`), all
/// randomness from `seed`.
pub fn run_graph_baseline(
    method: GraphBaseline,
    graph: &Graph,
    config: &GraphBaselineConfig,
    seed: u64,
) -> Result<Embeddings> {
    method.with(config).embed_graph(&graph.adjacency, seed)
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

impl BiclusterBaseline {
    /// This baseline with the hyper-parameters of `config`, as a [`Biclusterer`].
    pub fn with(self, config: &BiclusterBaselineConfig) -> Configured<'_, BiclusterBaseline, BiclusterBaselineConfig> {
        Configured { method: self, config }
    }
}

impl Biclusterer for Configured<'_, BiclusterBaseline, BiclusterBaselineConfig> {
    type Error = BaselineError;
    fn id(&self) -> &'static str {
        self.method.id()
    }
    fn bicluster_matrix(
        &self,
        x: &ksvd_linalg::CsrMatrix,
        k_docs: usize,
        k_terms: usize,
        seed: u64,
    ) -> Result<Biclusters> {
        let c = self.config;
        match self.method {
            BiclusterBaseline::Bcot => c.bcot.check()?.bicluster(x, k_docs, k_terms, seed),
            BiclusterBaseline::Ebc => c.ebc.check()?.bicluster(x, k_docs, k_terms, seed),
        }
    }
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
    method
        .with(config)
        .bicluster_matrix(&data.matrix, k_docs, k_terms, seed)
}

/// The seed of trial `t` of a cell with seed `seed` (trial 0 uses `seed` itself).
pub fn trial_seed(seed: u64, trial: usize) -> u64 {
    if trial == 0 {
        seed
    } else {
        stream_seed(seed, 0x7472_6961_6c73, trial as u64, 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hope::HopeParams;
    use ksvd_linalg::CsrMatrix;

    /// The trait gives what the method's own `fit` gives (HOPE: its source and target
    /// embeddings), for the same seed.
    #[test]
    fn baselines_embed_through_the_trait_as_their_fit_does() -> Result<()> {
        let arcs: Vec<(usize, usize, f64)> = (0..12).map(|i| (i, (i * 5 + 1) % 12, 1.0)).collect();
        let a = CsrMatrix::from_triplets(12, 12, arcs)?;
        let config = GraphBaselineConfig {
            hope: HopeParams {
                rank: 3,
                ..HopeParams::default()
            },
            ..GraphBaselineConfig::default()
        };
        let fit = config.hope.check()?.fit(&a, 4)?;
        let hope = GraphBaseline::Hope.with(&config);
        assert_eq!(GraphEmbedder::id(&hope), "hope");
        match hope.embed_graph(&a, 4)? {
            Embeddings::SourceTarget { source, target } => {
                assert_eq!(source, fit.source);
                assert_eq!(target, fit.target);
            }
            Embeddings::Single(_) => panic!("HOPE gives source and target embeddings"),
        }
        Ok(())
    }

    /// Ours and the baselines through one trait: on two planted blocks (documents 0-5 use
    /// terms 0-3, documents 6-11 terms 4-7) SVD + k-means and BCOT recover both partitions
    /// (NMI 1), and BCOT's trait call equals its own `bicluster`.
    #[test]
    fn biclusterers_recover_planted_blocks_through_the_trait() -> std::result::Result<(), Box<dyn std::error::Error>> {
        let t: Vec<(usize, usize, f64)> = (0..12)
            .flat_map(|d| (0..4).map(move |w| (d, (d / 6) * 4 + w, 1.0 + ((d + w) % 3) as f64)))
            .collect();
        let x = ksvd_linalg::CsrMatrix::from_triplets(12, 8, t)?;
        let docs: Vec<usize> = (0..12).map(|d| d / 6).collect();
        let terms: Vec<usize> = (0..8).map(|w| w / 4).collect();
        let ours = ksvd_bicluster::EmbedAndCluster {
            method: ksvd_bicluster::EmbeddingMethod::Svd,
            doc_components: 2,
            term_components: 2,
            kmeans: ksvd_bicluster::KMeansParams::new(),
            stability_seeds: 0,
        };
        let config = BiclusterBaselineConfig::default();
        let bcot = BiclusterBaseline::Bcot.with(&config);
        let methods: [&dyn Biclusterer<Error = BaselineError>; 1] = [&bcot];
        let got = ours.bicluster_matrix(&x, 2, 2, 1)?;
        assert_eq!(ours.id(), "svd");
        assert!((ksvd_bicluster::nmi(&docs, &got.doc_labels)? - 1.0).abs() < 1e-12);
        assert!((ksvd_bicluster::nmi(&terms, &got.term_labels)? - 1.0).abs() < 1e-12);
        for m in methods {
            let got = m.bicluster_matrix(&x, 2, 2, 1)?;
            assert_eq!(got, config.bcot.check()?.bicluster(&x, 2, 2, 1)?);
            assert!(
                (ksvd_bicluster::nmi(&docs, &got.doc_labels)? - 1.0).abs() < 1e-12,
                "{}",
                m.id()
            );
            assert!(
                (ksvd_bicluster::nmi(&terms, &got.term_labels)? - 1.0).abs() < 1e-12,
                "{}",
                m.id()
            );
        }
        Ok(())
    }
}
