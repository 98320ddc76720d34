//! Typed `[params]` of the experiment kinds that are registered but not implemented yet.
//!
//! They are parsed (unknown keys rejected) for every spec at load time, so the specs are checked now and the
//! implementer starts from a typed struct. Every field says whether the paper states the value (with its
//! section) or leaves it open (the value in the spec is then our choice).
use std::collections::BTreeMap;

use serde::Deserialize;

/// How the adjacency matrix of a directed graph becomes the data matrix X (rows x_i, columns z_j).
/// The paper does not say; see shared/REPRODUCTION-NOTES.md section 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GraphInput {
    /// A[citing, cited] = 1.
    Raw,
    /// D_out^-1 A (rows with out-degree 0 stay zero).
    RowNormalised,
    /// D_out^-1 (A + I), as stored by the AsK-LS code the paper follows.
    RowNormalisedSelfLoops,
}

/// Kernel functions named in the paper.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum KernelName {
    /// exp(-||x - z||^2 / gamma^2).
    Rbf,
    /// RBF normalised over z' in Z (asymmetric).
    Sne,
    /// x^T z.
    Linear,
    /// (x^T z + 1)^degree.
    Polynomial,
}

/// Compatibility matrix C of Remark 3.2 / Algorithm 2.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Compatibility {
    /// a0: C = ((X X^T)^+ X)^T.
    A0,
    /// a1: argmin_C ||X - X C C^T||_F.
    A1,
    /// a2: randn(M, N).
    A2,
    /// a3: learned by SGD on the downstream loss.
    A3,
}

/// `kind = "timing"`: runtime of TSVD, RSVD, symmetric and asymmetric Nystrom to reach eta <= eps.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TimingParams {
    /// Kernel (stated: SNE, section 5.4).
    pub kernel: KernelName,
    /// Rank r of the truncated SVD (stated: r = 20).
    pub rank: usize,
    /// Tolerances eps (stated: 0.1 in tab:speedup:low:high, 0.1 and 0.01 in tab:speedup:low:high:appendix).
    pub tolerances: Vec<f64>,
    /// k of gamma = k sqrt(M gamma_x) per dataset (stated: 1 for Cora and Citeseer, 0.5 for Pubmed).
    pub gamma_k: BTreeMap<String, f64>,
    /// Open: graph input transform.
    pub graph_input: GraphInput,
    /// Open: which node set for Citeseer ("labelled": 3312 nodes as in the timing table; "all": 3327).
    pub citeseer_nodes: String,
    /// Stated: random (uniform) subsampling for all Nystrom methods.
    pub landmarks: String,
    /// Open: the m values tried, in increasing order, until eta <= eps.
    pub m_grid: Vec<usize>,
    /// Open: the RSVD oversampling values tried, in increasing order, until eta <= eps.
    pub rsvd_oversampling_grid: Vec<usize>,
    /// Open: RSVD power iterations (not stated; scikit-learn's 'auto' would use 7).
    pub rsvd_power_iterations: usize,
    /// Open: timing repetitions per cell (the median is reported).
    pub repeats: usize,
    /// Measures reported beside the paper's eta (REPRODUCTION-NOTES section 2).
    pub extra_accuracy_measures: Vec<String>,
}

/// `kind = "spectrum"`: required m and speedup vs RSVD as gamma varies (Cora).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpectrumParams {
    /// Kernel (stated: SNE).
    pub kernel: KernelName,
    /// Rank r (stated: 20).
    pub rank: usize,
    /// Tolerance (stated: eps = 1e-2 for this figure, appendix B.2).
    pub tolerance: f64,
    /// Open: the gamma values on the x axis (the figure's values are not in the .tex).
    pub gamma_grid: Vec<f64>,
    /// Open: graph input transform.
    pub graph_input: GraphInput,
    /// Stated: uniform random landmarks.
    pub landmarks: String,
    /// Open: the m values tried.
    pub m_grid: Vec<usize>,
    /// Open: the RSVD oversampling values tried.
    pub rsvd_oversampling_grid: Vec<usize>,
    /// Open: RSVD power iterations.
    pub rsvd_power_iterations: usize,
    /// Open: timing repetitions per cell.
    pub repeats: usize,
}

/// `kind = "graph-embedding"`: node classification (LSSVM) and graph reconstruction on directed graphs.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GraphEmbeddingParams {
    /// Stated: 1000 extracted components.
    pub components: usize,
    /// Stated: two sets of embeddings (left/right) are concatenated for SVD, KSVD, HOPE, DiGAE.
    pub concatenate_two_sided: bool,
    /// Stated: LSSVM classifier, regularisation 1, one-vs-rest.
    pub lssvm_regularization: f64,
    /// Open: train fraction of the node-classification split (AsK-LS uses 0.6).
    pub train_fraction: f64,
    /// Stated: 10-fold cross-validation of the kernel parameter, same grid for all kernels.
    pub cv_folds: usize,
    /// Open: the grid of gamma values searched by cross-validation.
    pub gamma_grid: Vec<f64>,
    /// Open: graph input transform.
    pub graph_input: GraphInput,
    /// Open: the distance used to find the k_v nearest nodes in the reconstruction task.
    pub reconstruction_distance: String,
    /// Methods that need external code (DeepWalk, HOPE, DiGAE, NERD): reported as not implemented.
    pub external_methods: Vec<String>,
    /// Open: how multi-label BlogCatalog is turned into single labels.
    pub blogcatalog_labels: String,
}

/// `kind = "nystrom-f1"`: F1 of KSVD (asymmetric Nystrom) and KPCA (symmetric Nystrom) against m.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NystromF1Params {
    /// Stated: RBF for both methods.
    pub kernel: KernelName,
    /// Stated: gamma tuned by 10-fold cross-validation.
    pub cv_folds: usize,
    /// Open: the gamma grid.
    pub gamma_grid: Vec<f64>,
    /// Open: the m values per dataset (x ranges of the figure: Cora 900-2900, Citeseer 900-3450,
    /// Pubmed 600-20500).
    pub m_grid: BTreeMap<String, Vec<usize>>,
    /// Open: number of components fed to the classifier (the main table uses 1000).
    pub components: usize,
    /// Stated: LSSVM, regularisation 1, one-vs-rest.
    pub lssvm_regularization: f64,
    /// Open: train fraction.
    pub train_fraction: f64,
    /// Open: graph input transform.
    pub graph_input: GraphInput,
    /// Stated: uniform random landmarks.
    pub landmarks: String,
}

/// `kind = "biclustering"`: k-means on SVD / KPCA / KSVD embeddings, NMI of documents, coherence of terms.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BiclusteringParams {
    /// Stated: compatibility alternative a1.
    pub compatibility: Compatibility,
    /// Stated: "kernel setup the same as above" (KSVD: SNE, KPCA: RBF).
    pub ksvd_kernel: KernelName,
    /// Stated: KPCA with RBF, applied twice (rows, then columns).
    pub kpca_kernel: KernelName,
    /// Open: number of singular vectors fed to k-means.
    pub components: usize,
    /// Stated (tab:biclustering:data): document clusters per dataset.
    pub doc_clusters: BTreeMap<String, usize>,
    /// Stated (tab:biclustering:data): term clusters per dataset.
    pub term_clusters: BTreeMap<String, usize>,
    /// Open: k-means restarts (scikit-learn's default is 10).
    pub kmeans_restarts: usize,
    /// Open: the coherence index (the paper cites PMI-based coherence).
    pub coherence: String,
    /// Open: the gamma grid.
    pub gamma_grid: Vec<f64>,
    /// Stated: BCOT values copied from the BCOT paper, EBC run with threshold 1e-4 (external code).
    pub external_methods: Vec<String>,
}

/// `kind = "uci"`: downstream classification/regression on UCI data with compatibility a0..a3.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UciParams {
    /// Stated: 20% of the data is the test set.
    pub test_fraction: f64,
    /// Stated: the first 4 right singular vectors (G V[:, :4]) feed the linear head.
    pub components: usize,
    /// Stated: gamma^2 per kernel and dataset (appendix C.3).
    pub gamma2: BTreeMap<String, BTreeMap<String, f64>>,
    /// Stated: SGD learning rate per dataset.
    pub learning_rate: BTreeMap<String, f64>,
    /// Stated: 2000 iterations.
    pub iterations: usize,
    /// Stated: batch size 500 for Physicochemical-protein (full batch otherwise).
    pub batch_size: BTreeMap<String, usize>,
    /// Open: feature standardisation before the kernels.
    pub standardize: bool,
}

/// `kind = "ablation"`: SVD of degree-2 polynomial features vs KSVD with the degree-2 polynomial kernel.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AblationParams {
    /// Stated: polynomial degree 2, kernel (x^T z + 1)^2.
    pub degree: u32,
    /// Open: embedding dimension (the UCI table uses 4).
    pub components: usize,
    /// Stated: test split as in the UCI experiment (20%).
    pub test_fraction: f64,
    /// Open: compatibility alternative (not stated for the ablation).
    pub compatibility: Compatibility,
}

/// `kind = "large-scale"`: AUROC of KPCA / KSVD with RBF and m = 1000 landmarks on LIBSVM data.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LargeScaleParams {
    /// Stated: RBF.
    pub kernel: KernelName,
    /// Stated: m = 1000 subsamples.
    pub landmarks: usize,
    /// Stated: compatibility alternative a2.
    pub compatibility: Compatibility,
    /// Open: gamma.
    pub gamma: f64,
    /// Open: embedding dimension.
    pub components: usize,
    /// Open: rows read per chunk when streaming.
    pub chunk_rows: usize,
}
