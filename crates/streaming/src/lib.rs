//! # ksvd-streaming
//!
//! Out-of-core KSVD with the asymmetric Nyström method for LIBSVM data with millions of rows
//! (Tao, Tonin et al., ICML 2024, §4 and the appendix table `tab:large:scale`: RBF kernel,
//! `m = 1000` subsamples, compatibility a2, AUROC of KPCA vs KSVD on AmazonCat-13K, Avazu,
//! Criteo). The data is read in chunks from disk (plain or `.bz2`) and is never held in memory.
//!
//! ## The problem, with the paper's symbols
//!
//! A LIBSVM file is a data matrix `X ∈ R^{N×M}` (`N` rows, `M` features). KSVD takes the rows
//! `x_i ∈ R^M` as the row samples and the columns `z_j = X[:, j] ∈ R^N` as the column samples,
//! and the kernel matrix `G_ij = k(x_i, z_j)`, `k(x, z) = exp(-‖x − z‖²/γ²)`, `G ∈ R^{N×M}`.
//! `x_i` and `z_j` live in different spaces, so Algorithm 1 maps one side with a compatibility
//! matrix `C`. For the large-scale sets `N > M` (45.8M × 1M for Criteo), and Algorithm 1 then
//! builds `C_z ∈ R^{N×M}` and maps the columns: `z'_j = C_zᵀ z_j ∈ R^M`, i.e. `Z' = Xᵀ C_z`
//! (`M × M`), and `G_ij = k(x_i, z'_j)`. Alternative a2 makes `C_z` random (`randn(N, M)` in
//! Algorithm 1); with `N` in the millions we use a **very sparse random projection** (Li, Hastie
//! & Church 2006): entries `±σ√s` with probability `1/(2s)` each, `s = √N`, `σ = 1/√M`
//! (so `E‖C_zᵀz‖² = ‖z‖²`; [`ProjectionScaling::Unit`] gives Algorithm 1's unit variance),
//! row `i` of `C_z` generated on demand from the seed and `i`. When `M > N` the mirror image
//! applies (`C_x ∈ R^{M×N}`, `x'_i = C_xᵀ x_i ∈ R^N`, row `k` of `C_x` from the seed and `k`);
//! `N = M` needs no map ([`CompatSide`]).
//!
//! The asymmetric Nyström method samples `n` of the `N` rows (`I`) and `m` of the `M` (mapped)
//! columns (`J`), takes the rank-`r` SVD `D_r G[I, J] D_c = U S Vᵀ` of the `n × m` block
//! (`D_r = √(N/n)`, `D_c = √(M/m)`) and extends to every row by eq. 11,
//! `ũ_s(x) ∝ Σ_{j∈J} k(x, z'_j) (D_c V)_{js} / λ_s`, normalised to unit norm over the training
//! rows (the convention of `ksvd_nystrom`). These `r` numbers per row are the KSVD features fed
//! to the classifier (the left singular vectors: one per sample). Kernel values are evaluated
//! through `ksvd_kernels::Kernel` from inner products and squared norms, and the bandwidth by
//! [`Bandwidth::gamma`] (`ksvd_kernels::bandwidth`'s median).
//!
//! ## Shapes and memory
//!
//! | object | shape | memory |
//! |---|---|---|
//! | chunk of rows | `c × M`, sparse | `O(c · nnz/row)` |
//! | landmark rows `x_I` | `n × M`, sparse | `O(n · nnz/row)` |
//! | landmark columns as `P = C_zᵀ X[:, J]` | `M × m`, dense | `8 M m` bytes (0.8 GB at `M = 10⁵`, `m = 1000`) |
//! | landmark block, its SVD | `n × m`, `n × r`, `m × r` | `O(n m)` |
//! | kernel rows of a chunk, embeddings | `c × m`, `c × r` | `O(c (m + r))` |
//! | classifier state | `(r + 1)²` | tiny |
//!
//! Every inner product is `x_iᵀ P[:, j]` (columns mapped: `P[:, j] = z'_j`; rows mapped:
//! `P = C_x X[:, J]` so that `x'_i · z_j = x_iᵀ C_x X[:, J]`), so one sparse × dense product per
//! chunk gives the kernel rows. Memory is `O(M m + n (m + nnz/row) + c (m + r))`, never `O(N)`,
//! except the test scores kept for AUROC (9 bytes per test row) and, when rows are mapped
//! (`M > N`), the sparse `X[:, J]` and one `N`-vector per thread.
//!
//! ## One implementation of the passes
//!
//! The training data is a list of *parts* (LIBSVM files, or in-memory blocks of rows:
//! [`PartRows`]); the global row id of row `t` of part `f` is `t` plus the rows of the parts
//! before it. Every pass maps each part to a small state and merges the states of disjoint sets
//! of parts; the driver does the small solves in between:
//!
//! | pass | per part | merge | driver |
//! |---|---|---|---|
//! | 1 | [`ScanPartial`]: rows, labels, `‖X[:, j]‖²` | add | [`LandmarkPlan::new`]: offsets, `N`, `M`, `J`, the projection |
//! | 2 | [`LandmarksPartial`]: bottom-`n` key sketch of landmark rows; KSVD: `P_f = Σ_{i ∈ f} C_z[i, :]ᵀ X[i, J]` (rows mapped: the rows of `X[:, J]`) | keep the `n` smallest keys; add (rows mapped: concatenate) | [`LandmarkPlan::solve_ksvd`], [`LandmarkPlan::solve_kpca`] → [`Fitted`] |
//! | 3 | [`TrainPartial`]: column norms + `(r + 1)²` ridge statistics | add | [`Fitted::finish`] → [`Trained`] |
//! | 4 | [`ScorePartial`]: test scores sorted per class | merge sorted lists | [`ScorePartial::auroc`] |
//!
//! **In one process** ([`fit_ksvd`], [`fit_kpca`], [`Fitted::train`], [`Trained::score`],
//! [`run_pipeline`], the `ksvd-stream` binary) the training files are the parts of one
//! partition, merged in file order. A distributed engine runs the same states: Spark
//! (`mapPartitions` + `treeAggregate`), Dask (`map_partitions` + a tree reduction; the Python
//! package's `ksvd.dask` does it), Ray. Every state serialises to one document of the
//! workspace's envelope ([`PartialState::to_bytes`]: `ksvd_datasets::envelope`, formats
//! `"ksvd-streaming-<kind>"`, version [`PARTIAL_FORMAT_VERSION`]).
//!
//! **Landmark rows.** The row with global id `g` gets the key `hash(seed, g)`; the landmark rows
//! are the `n` smallest keys ([`RowLandmarks::Sketch`]): an exact uniform sample without
//! replacement that depends only on the seed and the concatenated rows, so the same rows are
//! chosen in one process and on a cluster, for any split of the data into files, blocks or
//! partitions. The landmark columns are a seeded uniform draw of `J` ([`ColLandmarks`]).
//!
//! **Determinism and partitioning.** All randomness comes from the seed (landmark keys, landmark
//! columns, projection rows, split). Inside a part, chunks are processed in file order and rows
//! are embedded in fixed blocks of 256 in parallel (rayon) with sequential kernels, reductions
//! summed in block order, so results do not depend on the number of threads. What does depend
//! on the partitioning and on the chunk size is the grouping of floating-point sums: the landmark
//! rows and columns, counts, labels, the gathered `X[:, J]`, the column-norm signs and the sorted
//! score lists are exact; `P`, `‖X[:, j]‖²`, the ridge statistics and the column norms are sums
//! of `N` terms that a different grouping changes by at most `N ε Σ|terms|` (`ε = 2⁻⁵²`); what
//! lies behind the landmark SVD (singular values, embeddings, scores) moves by that perturbation
//! over the spectral gap. The tests bound the sums by `8 N ε` relative and the rest by `√ε`
//! relative. With a fixed partitioning and merge tree the results are bit for bit reproducible.
//!
//! **The classifier** ([`RidgeAccumulator`]) is ridge regression on `±1` targets with
//! standardised features (the primal LS-SVM of `ksvd_lssvm::PrimalStats`, its one owner), from
//! accumulated `(r + 1)²` sufficient statistics: exact, one pass, no learning rate. AUROC
//! is [`ksvd_metrics::auroc`] (ties count one half).
//!
//! **Bandwidth.** The paper does not state `γ`. The default is the median heuristic on the
//! landmark pairs ([`Bandwidth::Median`]); with it, the a2 kernel `exp(2 x·z'_j/γ²)` is close to
//! its linear regime (on a9a, with all 123 columns as landmarks, KSVD's AUROC equals that of
//! ridge on the raw features), and smaller factors (`c < 1`) make it nonlinear.
//!
//! ## Example
//!
//! ```
//! use std::fmt::Write as _;
//! use ksvd_streaming::{run_pipeline, LibsvmSource, Method, PipelineParams, StreamingParams};
//!
//! // 3000 training and 1000 test rows over 24 features, two ones per row (one of the first 4,
//! // one of the last 20); the label is +1 when the first one is 0 or 1.
//! let dir = std::env::temp_dir().join(format!("ksvd-streaming-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir)?;
//! let write = |name: &str, rows: std::ops::Range<usize>| -> std::io::Result<LibsvmSource> {
//!     let mut text = String::new();
//!     for i in rows {
//!         let (a, b) = ((i * 7 + 3) % 4, 4 + (i * 13 + 5) % 20);
//!         let _ = writeln!(text, "{} {}:1 {}:1", if a < 2 { "+1" } else { "-1" }, a + 1, b + 1);
//!     }
//!     std::fs::write(dir.join(name), text)?;
//!     Ok(LibsvmSource::new(dir.join(name)).n_features(24))
//! };
//! let (train, test) = (write("train.svm", 0..3000)?, write("test.svm", 3000..4000)?);
//!
//! let params = PipelineParams { model: StreamingParams::new(10, 100).chunk_rows(500), ridge: 1e-3, positive_label: None };
//! let out = run_pipeline(Method::Ksvd, &[train], &[test], &params, &mut |_| {})?;
//! assert_eq!((out.train_rows, out.test_rows, out.features, out.row_landmarks.len()), (3000, 1000, 24, 100));
//! assert!(out.rank <= 10);
//! assert!(out.auroc > 0.9, "the first feature decides the label: AUROC {}", out.auroc);
//! # std::fs::remove_dir_all(&dir).ok();
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Where next: [`fit_ksvd`] / [`fit_kpca`] give [`Fitted`] models whose [`Fitted::model`]
//! implements [`Embedding`] (`embed_raw`, and `embed` once trained); the passes one by one are in
//! the table above. The loops over datasets, seeds, sizes and methods of the paper's large-scale
//! table and of the scaling benchmark, their measurements, synthetic files and rows live in the
//! experiment runner (`xtask/src/experiments/large_scale/`, `cargo xtask reproduce --only
//! large-scale` and `--only scaling`). The binary `ksvd-stream run` runs the pipeline from the
//! command line.

mod classifier;
mod document;
mod embedding;
mod error;
mod kpca;
mod ksvd;
mod landmarks;
mod params;
mod pipeline;
mod progress;
mod projection;
mod scan;
mod score;
mod seeding;
mod solve;
mod source;
mod state;
mod train;

pub use classifier::{LabelRule, LinearClassifier, RidgeAccumulator};
pub use document::{DocumentError, ModelDocument, FORMAT_PREFIX};
pub use embedding::{ColumnNormalization, Embedding};
pub use error::{Result, StreamingError};
pub use kpca::StreamingKpca;
pub use ksvd::{mapped_columns, uniform_cols, CompatSide, StreamingKsvd};
pub use landmarks::{sketch_landmarks, LandmarksPartial};
pub use params::{Bandwidth, ColLandmarks, Method, RowLandmarks, StreamingParams, ValidStreamingParams};
pub use pipeline::{fit_kpca, fit_ksvd, run_pipeline, PipelineOutcome, PipelineParams};
pub use progress::{Progress, ProgressFn};
pub use projection::{ProjectionScaling, SparseProjection};
pub use scan::{ScanPartial, ScanSummary};
pub use score::{ScorePartial, Trained, TrainedKpca, TrainedKsvd, TrainedModel, TrainedSummary};
pub use seeding::item_rng;
pub use solve::LandmarkPlan;
pub use source::{LibsvmSource, RowSelection};
pub use state::{PartRows, PartialState, PARTIAL_FORMAT_VERSION};
pub use train::{Fitted, FittedKpca, FittedKsvd, PartialModel, TrainPartial};
