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
//! to the classifier (the left singular vectors: one per sample).
//!
//! ## Shapes and memory of the streaming path
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
//! Passes over the training file ([`fit_ksvd`], then [`train_pass`]):
//! 1. sizes, labels, squared column norms, and `n` landmark rows by reservoir sampling
//!    ([`Reservoir`], seeded, uniform, one pass);
//! 2. `P`: columns mapped: for every row `i` that has a landmark feature `j ∈ J`,
//!    `P[:, j] += X[i, j] · C_z[i, :]` (`C_z[i, :]` generated from the seed); rows mapped:
//!    `X[:, J]` is collected and `P = C_x X[:, J]` computed row by row of `C_x`;
//!    then the landmark block, `γ` (a fixed value or the median heuristic on the landmark pairs),
//!    and its SVD;
//! 3. embeddings of every training row, chunk by chunk, into the classifier's accumulators and
//!    the column norms; one more pass embeds and scores the test rows.
//!
//! KPCA ([`fit_kpca`]) is the symmetric Nyström method on `K_il = k(x_i, x_l)` between samples
//! with the same kind of reservoir landmarks; it needs one pass before training.
//!
//! The classifier ([`RidgeAccumulator`]) is ridge regression on `±1` targets with standardised
//! features (the primal LS-SVM), from accumulated `(r + 1)²` sufficient statistics: exact, one
//! pass, no learning rate, independent of the chunking up to rounding. AUROC ([`auroc`]) counts ties as one half.
//!
//! **Determinism.** All randomness comes from the seed (reservoir, landmark columns, projection
//! rows, split). Chunks are processed in file order; inside a chunk rows are split into fixed
//! blocks of 256 evaluated in parallel (rayon) with sequential kernels, and reductions are
//! summed in block order, so results do not depend on the number of threads. The fitted model does
//! not depend on the chunk size either; embeddings and the classifier only through rounding.
//!
//! ## Example
//!
//! ```
//! use ksvd_streaming::{
//!     run_pipeline, write_synthetic, LibsvmSource, Method, PipelineParams, StreamingParams, SyntheticPart,
//!     SyntheticSpec,
//! };
//!
//! let dir = std::env::temp_dir().join(format!("ksvd-streaming-doc-{}", std::process::id()));
//! let spec = SyntheticSpec { features: 200, nnz_per_row: 8, ..SyntheticSpec::default() };
//! write_synthetic(&dir.join("train.svm"), &spec, SyntheticPart::Train, 3000)?;
//! write_synthetic(&dir.join("test.svm"), &spec, SyntheticPart::Test, 1000)?;
//!
//! let params = PipelineParams { model: StreamingParams::new(10, 100).chunk_rows(500), ridge: 1e-3, positive_label: None };
//! let train = LibsvmSource::new(dir.join("train.svm")).n_features(200);
//! let test = LibsvmSource::new(dir.join("test.svm"));
//! let out = run_pipeline(Method::Ksvd, &train, &test, &params, &mut |_| {})?;
//! assert_eq!((out.train_rows, out.test_rows, out.features), (3000, 1000, 200));
//! assert!(out.rank <= 10 && (0.0..=1.0).contains(&out.auroc));
//! # std::fs::remove_dir_all(&dir).ok();
//! # Ok::<(), ksvd_streaming::StreamingError>(())
//! ```
//!
//! Lower level: [`fit_ksvd`] / [`fit_kpca`] give models implementing [`Embedding`]
//! (`embed_raw`, `embed` chunk by chunk); [`train_pass`] and [`score_pass`] are the two
//! classifier passes.
//!
//! **Measurements.** [`measure_pipeline`] is one cell of the large-scale table (files + method +
//! params + seed → AUROC, wall and CPU seconds, peak memory); [`bench_once`] is one point of the
//! scaling benchmark (what the `ksvd-stream bench` child process runs), with the in-memory dense
//! and RSVD reference paths and their memory estimate ([`in_memory_estimate`]). [`paper_datasets`]
//! lists the paper's three large files under `data/external/` ([`UserDataset`]), for the
//! experiment runner and the Python bindings alike. The loops over datasets, seeds, sizes and
//! methods, their configs and tidy rows live in the experiment runner, not here:
//! `cargo xtask reproduce --only large-scale` and `--only scaling`
//! (`xtask/src/experiments/large_scale/`). [`write_synthetic`] writes seeded LIBSVM files of any
//! size with a planted signal. The binary `ksvd-stream` (`run`, `generate`, `bench`) runs the
//! pipeline from the command line.
//!
//! **Bandwidth.** The paper does not state `γ`. The default is the median heuristic on the
//! landmark pairs; with it, the a2 kernel `exp(2 x·z'_j/γ²)` is close to its linear regime (on
//! a9a, with all 123 columns as landmarks, KSVD's AUROC equals that of ridge on the raw
//! features), and smaller factors ([`Bandwidth::Median`]`(c)`, `c < 1`) make it nonlinear.
//!
//! ## Going past one machine
//!
//! Every pass is a *map over row partitions* followed by a *reduction of small accumulators*,
//! which is exactly what Spark (`mapPartitions` + `treeAggregate`), Dask (`map_partitions` +
//! `reduction`/tree reduce) or Ray (tasks + a tree of `ray.get`) execute:
//!
//! 1. **Scan + reservoir.** Each partition returns its counts, column norms and a reservoir of
//!    `n` rows *with keys*: give every row a key `u = hash(seed, global row id)` and keep the `n`
//!    smallest keys per partition; merging two partitions keeps the `n` smallest of their union
//!    (a bottom-`n` sketch). This is an exact uniform sample, independent of the partitioning —
//!    unlike Algorithm R, whose result depends on the order rows arrive in. Needs a global row id
//!    (file + offset, or a precomputed index).
//! 2. **Landmark columns.** Broadcast `J` and the projection *seed* (not the matrix): `C_z[i, :]`
//!    is a function of `(seed, i)`. Each partition builds its partial `P_part ∈ R^{M×m}`; the
//!    partials are summed by a tree reduction (`O(M m)` per message, `log(#partitions)` rounds).
//!    For `M m` too large for one message, reduce `P` in column blocks keyed by `j` (a
//!    `reduceByKey` on `(j, block)`), which also spreads the memory.
//! 3. **Landmark solve.** On the driver: the `n × m` block and its SVD (`O(n m r)`, seconds).
//!    Broadcast `P` (or its column blocks), `‖b_j‖²`, `γ` and `D_c V S⁻¹` (`m × r`).
//! 4. **Embed + train.** Each partition embeds its rows and returns the `(r + 1)²` ridge
//!    statistics and the `r` column norms; tree-reduce, solve on the driver. Embeddings can be
//!    written back next to the data (a map without reduction).
//! 5. **Score.** Map; AUROC by a distributed sort of `(score, label)` or, to avoid the shuffle,
//!    a shared histogram of scores per class (binned AUROC, error below the bin width).
//!
//! What changes: (a) the reservoir becomes the bottom-`n` key sketch above; (b) floating-point
//! sums are reproducible only if the reduction tree is fixed (pin the partitioning and use a
//! deterministic tree, or accumulate in compensated/fixed-point arithmetic); (c) the broadcast
//! of `P` (`8 M m` bytes) dominates communication, so for `M ≈ 10⁶` prefer storing `P` in
//! `f32` or sharding it by feature ranges and joining partitions' nonzeros against the shards;
//! (d) rows mapped (`M > N`) needs `X[:, J]` gathered (a concatenation of each partition's
//! sparse entries in the landmark columns) instead of collected.
//! Nothing else in the algebra changes: every quantity above is a sum over rows.
//!
//! These passes exist as mergeable, serialisable states over a list of LIBSVM files:
//! [`ScanPartial`] (the bottom-`n` sketch), [`LandmarkPlan`] and [`ColumnsPartial`] (`P`),
//! [`FittedKsvd`] and [`TrainPartial`] (the ridge statistics), [`TrainedKsvd`] and
//! [`ScorePartial`] (AUROC from sorted per-class scores), for KSVD with either side mapped and
//! for KPCA ([`LandmarkPlan::solve_kpca`], [`FittedKpca`], [`TrainedKpca`]); the Python
//! package's `ksvd.dask` runs them on Dask.

mod bench;
mod classifier;
mod embedding;
mod error;
mod inputs;
mod kpca;
mod ksvd;
mod memory;
mod params;
mod partial;
mod pipeline;
mod progress;
mod projection;
mod reservoir;
mod scan;
mod seeding;
mod source;
mod synthetic;

pub use bench::{
    bench_once, in_memory_estimate, in_memory_samples, measure_pipeline, BenchOutcome, BenchParams, CellMeasurement,
    ScalingMethod,
};
pub use classifier::{auroc, fit_ridge_in_memory, LabelRule, LinearClassifier, RidgeAccumulator};
pub use embedding::{ColumnNormalization, Embedding};
pub use error::{Result, StreamingError};
pub use inputs::{paper_datasets, UserDataset, LIBSVM_BINARY_PAGE};
pub use kpca::{fit_kpca, StreamingKpca};
pub use ksvd::{fit_ksvd, CompatSide, StreamingKsvd};
pub use memory::{cpu_seconds, current_rss_bytes, peak_rss_bytes, reset_peak_rss};
pub use params::{Bandwidth, ColLandmarks, RowLandmarks, StreamingParams, ValidStreamingParams};
pub use partial::{
    ColumnsPartial, Fitted, FittedKpca, FittedKsvd, LandmarkPlan, PartRows, PartialModel, PartialState, ScanPartial,
    ScorePartial, TrainPartial, Trained, TrainedKpca, TrainedKsvd, PARTIAL_FORMAT, PARTIAL_FORMAT_VERSION,
};
pub use pipeline::{
    normalize, run_pipeline, score_pass, train_pass, Method, PipelineOutcome, PipelineParams, TrainOutcome,
};
pub use progress::{Progress, ProgressFn};
pub use projection::{ProjectionScaling, SparseProjection};
pub use reservoir::Reservoir;
pub use scan::ScanSummary;
pub use source::{LibsvmSource, RowSelection};
pub use synthetic::{write_synthetic, SyntheticPart, SyntheticSpec, SyntheticSummary};
