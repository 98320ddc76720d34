//! # ksvd-graph-tasks
//!
//! The directed-graph experiments of Tao, Tonin et al. (ICML 2024, §5.1, Table 1, and the
//! Nyström F1 figure): unsupervised node embeddings from the adjacency matrix alone, evaluated by
//! node classification and graph reconstruction.
//!
//! ## The embeddings
//!
//! The adjacency `A` (`A[src, dst] = 1`) becomes a data matrix `X` by a [`GraphInput`]
//! (raw, `D_out⁻¹ A`, `A + I`, `D_out⁻¹ (A + I)`); its rows `x_i` (out-links) and columns `z_j`
//! (in-links) are the two sample sets. `A` is a [`ksvd_linalg::CsrMatrix`], or any `petgraph`
//! graph through [`adjacency_from_petgraph`] / [`weighted_adjacency_from_petgraph`] (`Graph`,
//! `StableGraph`, `GraphMap`, ...; `examples/reconstruction.rs` runs Cora's reconstruction with
//! petgraph end to end). With `r` components:
//!
//! | [`Method`] | matrix | features of node `i` |
//! |---|---|---|
//! | `pca` | `H X` (columns centred) | `U_i` |
//! | `kpca` | `H K H`, `K_ij = exp(-‖x_i − x_j‖²/γ²)` | `U_i` (top eigenvectors) |
//! | `svd` | `X` | `[U_i, V_i]` |
//! | `ksvd_rbf` | `H G H`, `G_ij = exp(-‖x_i − z_j‖²/γ²)` | `[U_i, V_i]` = `[B_φ, B_ψ]` |
//! | `ksvd_sne` | `H G H`, `G_ij = exp(-‖x_i − z_j‖²/γ²) / Σ_j' exp(-‖x_i − z_j'‖²/γ²)` | `[U_i, V_i]` |
//!
//! (`H = I − 11ᵀ/n`; [`Scaling::Scores`] multiplies the vectors by the singular values, or by
//! `Λ^{1/2}` for KPCA.) Every matrix is an operator — sparse, or an implicit kernel matrix held
//! exactly as rank one plus sparse — and the top-`r` triplets come from the workspace's solver
//! choice [`ksvd::Solver`]: `Solver::solve_operator` on PCA's and SVD's sparse operators and on
//! the kernel matrices of the [`ksvd::Ksvd`] parameters (KPCA as the KSVD of `K = k(X, X)`, the
//! symmetric case). With [`EmbeddingSpec::split_twins`], `Solver::solve_twins` first takes the
//! exactly repeated singular values of twin nodes (same in- and out-neighbours in `X`; every one
//! of the five matrices is built from `X` by a permutation-invariant rule, so it has the same
//! twins) from the symmetry and solves the smaller rest. The Nyström embeddings ([`nystrom_embed`]) are `ksvd::Ksvd` (asymmetric, its sampled
//! block solved by a [`ksvd::InnerSolver`]) and [`ksvd::Kpca`] (symmetric) models with
//! `Solver::Nystrom`. Kernel matrices whose `X Zᵀ` is dense (Twitch PT, BlogCatalog) are stored
//! once (at most [`ksvd_linalg::FIXED_DENSE_ENTRIES`] entries, the fixed [`embedding_budget`], so tables
//! do not depend on the machine's memory) rather than re-evaluated in every product (their solves
//! may hold the larger fixed [`solver_budget`], for a dense factorisation where Krylov stalls); centred,
//! they are centred entry by entry and solved by `Solver::solve_operator` (bit for bit the
//! matrices of the published tables, which the model's implicit centring reproduces only to
//! rounding). Bandwidths follow the paper's rule `γ = k sqrt(M γ_x)`
//! ([`bandwidth`]) with `k` cross-validated.
//!
//! ## The tasks
//!
//! * **Node classification**: a linear LS-SVM (regularisation 1, one-vs-rest, `±1` targets, as
//!   in `ksvd-lssvm`) on the features of the labelled nodes, over random train/test splits;
//!   micro- and macro-F1 (top-`k` prediction with the true label count for multi-label
//!   BlogCatalog). Unlabelled nodes (CiteSeer's 15) stay in the graph but not in the
//!   classification. Cross-validation folds and trials share one pass over the features
//!   (primal sufficient statistics, or the dual `F Fᵀ`, whichever is cheaper).
//! * **Graph reconstruction** ([`reconstruct_adjacency`], [`reconstruction_norms`]): node `v`'s
//!   `k_v = outdeg(v)` nearest nodes in feature space are its reconstructed out-arcs (blocked
//!   top-`k` search, never an `n × n` matrix); the paper's ℓ1 and ℓ2 are MATLAB's
//!   `norm(X − X̂, 1)` (largest column sum) and `norm(X − X̂)` (largest singular value).
//! * **Link prediction** ([`ArcSplit`], [`link_scores`], [`auc_ap`]): held-out arcs against as
//!   many sampled non-arcs, scored by `⟨s_i, t_j⟩`, AUC and average precision (the benchmark of
//!   the two-sided baselines' own papers; DiGAE chooses its settings by it, from the graph alone).
//!
//! ## Protocol choices (the paper leaves these open)
//!
//! | choice | default | why |
//! |---|---|---|
//! | input transform | `D_out⁻¹ (A + I)` | AsK-LS storage; the only transform matching `γ_x = 0.0002` on Cora (REPRODUCTION-NOTES §1) |
//! | features | 1000 per node; two-sided methods `500 + 500` (`TwoSided::Split`) | "the extracted 1000 components"; HOPE's convention gives every method the same width |
//! | scaling | unit singular vectors ([`Scaling::Vectors`]) | the paper: "top 1000 eigenvectors are taken as the extracted features"; scores make the fixed `γ = 1` depend on each kernel's magnitude |
//! | standardisation | on: zero mean, unit variance per feature (`EvalConfig::standardize_features`) | not stated; the paper's LS-SVM ran in MATLAB, and LS-SVMlab (by the paper's group) standardises inputs by default; it also makes vectors and scores equivalent. `eval.also_unstandardized` reports the raw features beside |
//! | edge direction | citing → cited (`ksvd-datasets`) | `Table1Config::also_reversed` reruns a graph with `Aᵀ` (for Cora and CiteSeer: their files' column order) |
//! | kernel centring | on (KPCA, KSVD) | the paper assumes centred feature maps (`H G H`); PCA is centred, SVD is not |
//! | split | 60 % train, stratified, trial `t` seed `seed + t` | AsK-LS's 60/40; 10 trials as the paper |
//! | bandwidth | `k ∈ {0.25, 0.5, 1, 2, 4, 8}` × rule, 10-fold CV (macro-F1) nested in every trial | "10-fold cross-validation ... in the same range"; the test part is never seen |
//! | reconstruction | Euclidean on the node features; inner product `⟨source_v, target_w⟩` as a second setting | "closest nodes in feature space"; HOPE's decoder |
//! | self in reconstruction | excluded | a node is trivially closest to itself |
//! | solver | `Solver::Auto { tol: 1e-8 }` after the twin split, every triplet certified (BlogCatalog and Pubmed: 500 features; Pubmed's KSVD: `Solver::BlockKrylov`, depth ≤ 16, certified only where its residuals reach 1e-8) | time budget on 2 cores (`experiments/table1.toml`) |
//!
//! ## Example
//!
//! ```
//! use ksvd::Solver;
//! use ksvd_graph_tasks::{embed, evaluate_reconstruction, Distance, EmbeddingSpec, GraphInput, Method, Scaling};
//! use ksvd_linalg::CsrMatrix;
//!
//! // Two directed 4-cycles: 0->1->2->3->0 and 4->5->6->7->4.
//! let arcs: Vec<(usize, usize, f64)> = (0..8).map(|i| (i, (i / 4) * 4 + (i + 1) % 4, 1.0)).collect();
//! let a = CsrMatrix::from_triplets(8, 8, arcs)?;
//! let spec = EmbeddingSpec {
//!     method: Method::Svd,
//!     rank: 8,
//!     transform: GraphInput::Raw,
//!     scaling: Scaling::Scores,
//!     center_kernels: false,
//!     gamma: None,
//!     solver: Solver::Exact,
//!     seed: 0,
//!     split_twins: true,
//! };
//! let emb = embed(&a, &spec)?.embeddings;
//! // U Σ Vᵀ = A exactly, so the inner-product reconstruction recovers every arc.
//! let norms = evaluate_reconstruction(&a, &emb, Distance::InnerProduct, true)?;
//! assert_eq!((norms.wrong_entries, norms.l1), (0, 0.0));
//! # Ok::<(), ksvd_graph_tasks::GraphTaskError>(())
//! ```
//!
//! ## Building blocks for the experiments
//!
//! The node-classification protocol is exported as typed pieces: [`Task`] (the labelled nodes),
//! [`Protocol`] (seeded splits and CV folds per trial), [`evaluate_features`] (LS-SVM test and CV
//! F1 of one feature matrix, the F1 itself from `ksvd-metrics`) and [`select`] (the CV choice per
//! trial); reconstruction is [`evaluate_reconstruction`]. The Table 1 and Nyström-F1 runners
//! (configs, loops over datasets x methods, result rows, caching) live in `xtask`
//! (`xtask/src/experiments/graph/runner.rs`): `cargo xtask reproduce --only table1` (or
//! `--only nystrom-f1`, `--quick` for the reduced grid). The Pubmed edge-direction diagnosis
//! quoted in the README is `cargo xtask table1-config xtask/configs/pubmed-1000.toml`.

mod classify;
mod embed;
mod embedder;
mod error;
mod link_prediction;
mod petgraph_input;
mod reconstruct;

pub use classify::{
    evaluate_features, select, ClassifierOptions, CvMetric, CvScope, LssvmForm, Outcome, Protocol, Task,
};
pub use embed::{
    bandwidth, embed, embedding_budget, nystrom_embed, solver_budget, EmbeddingOutput, EmbeddingSpec, Embeddings,
    Method, NystromMethod, Scaling,
};
pub use embedder::{Candidate, Candidates, GraphEmbedder, Selection};
pub use error::{ensure, GraphTaskError, Result};
/// The adjacency transform of [`EmbeddingSpec::transform`], re-exported from the kernels crate
/// that owns it (and its names).
pub use ksvd_kernels::graph::GraphInput;
pub use link_prediction::{auc_ap, link_scores, ArcSplit, Pairs};
pub use petgraph_input::{adjacency_from_petgraph, weighted_adjacency_from_petgraph};
pub use reconstruct::{
    evaluate_reconstruction, reconstruct_adjacency, reconstruction_norms, Distance, ReconstructionNorms,
};
