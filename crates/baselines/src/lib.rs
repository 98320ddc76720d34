//! # ksvd-baselines
//!
//! Native Rust implementations of the graph- and biclustering-specific methods that the paper
//! (Tao, Tonin et al., ICML 2024) compares KSVD against, so that the baseline rows of Table 1
//! (`tab:node:classify:reconstruct`) and Table 2 (`tab:biclustering`) can be rerun without
//! Python or MATLAB.
//!
//! | method | module | output | reference code followed |
//! |---|---|---|---|
//! | DeepWalk (Perozzi et al. 2014) | [`DeepWalkParams`] | one `n x d` embedding | phanein/deepwalk + gensim SGNS |
//! | HOPE, Katz (Ou et al. 2016) | [`HopeParams`], [`KatzOperator`] | source/target `n x r` | ZW-ZHANG/HOPE |
//! | DiGAE (Kollias et al. 2022) | [`DigaeParams`] | source/target `n x d` | gidiko/DiGAE |
//! | BCOT (Fettal et al. 2022) | [`BcotParams`] | document/term labels | chakib401/BCOT (exact OT or Sinkhorn) |
//! | EBC / ITCC (Percha & Altman 2015; Dhillon et al. 2003) | [`EbcParams`] | document/term labels | blpercha/ebc |
//!
//! ## The mathematics in one place
//!
//! * **DeepWalk**: truncated random walks (along out-arcs, or both directions) as sentences for
//!   skip-gram with negative sampling, maximising `log σ(v_c·v'_w) + Σ_k log σ(−v_c·v'_{n_k})`.
//! * **HOPE**: the Katz matrix `S = (I − βA)^{-1} βA = Σ_{l≥1} (βA)^l` (`βρ(A) < 1`, default
//!   `β = 0.5/ρ(A)`) is applied matrix-free by [`KatzOperator`] (a [`ksvd_linalg::LinearOperator`])
//!   and factorised by a truncated SVD `S ≈ U Σ V^T`; `U_s = U√Σ`, `U_t = V√Σ`, so that
//!   `‖S − U_s U_t^T‖_F² = Σ_{i>r} σ_i²`.
//! * **DiGAE**: `S = P_← relu(P_→ X W₁ˢ) W₂ˢ`, `T = P_→ relu(P_← X W₁ᵗ) W₂ᵗ` (with biases), the
//!   degree-normalised propagations `P_→ = D_in^{-α} Ã^T D_out^{-β}`, `P_← = D_out^{-α} Ã D_in^{-β}`,
//!   decoder `σ(s_i·t_j)`, binary cross entropy with negative sampling, Adam; gradients derived by
//!   hand (checked against finite differences in the tests).
//! * **BCOT**: alternating transport plans `W = OT(1/m, 1/k, C^T Z)`, `Z = OT(1/n, 1/k, C W)` for
//!   the cost `C = −λX`, exact (`emd`, by successive shortest paths) or entropic (Sinkhorn);
//!   labels are row-wise argmaxes.
//! * **EBC / ITCC**: minimise `D(p ‖ q)` with `q(x, y) = p(x̂, ŷ) p(x|x̂) p(y|ŷ)` by alternating
//!   row and column reassignments, stopping when `D(p ‖ q)` changes by less than 1e-4.
//!
//! Every random choice comes from an explicit `u64` seed. DeepWalk, DiGAE, BCOT and EBC give
//! bit-identical results for a given seed whatever the number of rayon threads (DeepWalk's
//! parallel SGD is block-synchronous, see [`DeepWalkParams::batch_walks`]); HOPE is identical for
//! a given seed and thread count (its QR and SVD steps use faer's parallel kernels, whose
//! rounding depends on the split).
//!
//! ## Example
//!
//! ```
//! use ksvd_baselines::{DeepWalkParams, HopeParams, EbcParams};
//! use ksvd_linalg::CsrMatrix;
//!
//! // A directed 6-cycle with one chord.
//! let arcs = [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (5, 0), (0, 3)];
//! let a = CsrMatrix::from_triplets(6, 6, arcs.iter().map(|&(i, j)| (i, j, 1.0)))?;
//!
//! let hope = HopeParams { rank: 2, ..Default::default() }.check()?.fit(&a, 0)?;
//! assert_eq!((hope.source.dim(), hope.target.dim()), ((6, 2), (6, 2)));
//! assert!(hope.singular_values[0] >= hope.singular_values[1]);
//!
//! let dw = DeepWalkParams { dimension: 4, walk_length: 10, window: 2, ..Default::default() };
//! assert_eq!(dw.check()?.fit(&a, 0)?.embedding.dim(), (6, 4));
//!
//! // Two planted blocks of documents x terms.
//! let x = CsrMatrix::from_triplets(4, 4, [(0, 0, 3.0), (0, 1, 2.0), (1, 0, 2.0), (1, 1, 3.0),
//!     (2, 2, 3.0), (2, 3, 2.0), (3, 2, 2.0), (3, 3, 3.0)])?;
//! let fit = EbcParams::default().check()?.fit(&x, 2, 2, 7)?;
//! assert_eq!(fit.row_labels[0], fit.row_labels[1]);
//! assert_ne!(fit.row_labels[0], fit.row_labels[2]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## One cell per task
//!
//! [`run_graph_baseline`] (one embedding of a graph) and [`run_bicluster_baseline`] (one
//! biclustering of a documents x terms matrix) take a method value ([`GraphBaseline`],
//! [`BiclusterBaseline`]), a config section that deserializes from a spec's `[params]`
//! ([`GraphBaselineConfig`], [`BiclusterBaselineConfig`]) and a seed; [`trial_seed`] derives the
//! seeds of repeated trials. `method.with(&config)` ([`Configured`]) is the same method as a
//! [`GraphEmbedder`] or [`ksvd_bicluster::Biclusterer`]. The experiment loops (datasets x methods x
//! seeds, result rows, caching) live in `xtask` (`xtask/src/experiments/graph/runner.rs` for
//! Table 1, `xtask/src/experiments/biclustering.rs` for Table 2), which run ours and the
//! baselines through those traits in one loop.
//!
//! Where to go next: each method's `…Params` type documents its defaults and the reference
//! code's choices; the module sources hold the derivations.

mod bcot;
mod deepwalk;
mod digae;
mod ebc;
mod emd;
mod error;
mod hope;
mod method;
mod util;

pub use bcot::{Bcot, BcotFit, BcotParams, Biclusters, CostScale, OtAlgorithm};
pub use deepwalk::{random_walks, DeepWalk, DeepWalkFit, DeepWalkParams};
pub use digae::{Digae, DigaeFeatures, DigaeFit, DigaeParams, DigaeSelection};
pub use ebc::{Ebc, EbcFit, EbcParams};
pub use error::{BaselineError, Result};
pub use hope::{spectral_radius_estimate, Hope, HopeFit, HopeParams, HopeSolver, KatzOperator};
/// Node embeddings: the one type of `ksvd-graph-tasks`, which the baselines implement
/// [`ksvd_graph_tasks::GraphEmbedder`] for.
pub use ksvd_graph_tasks::{Embeddings, GraphEmbedder};
pub use method::{
    run_bicluster_baseline, run_graph_baseline, trial_seed, BiclusterBaseline, BiclusterBaselineConfig, Configured,
    GraphBaseline, GraphBaselineConfig,
};
pub use util::GraphView;
