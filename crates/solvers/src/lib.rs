//! # ksvd-solvers
//!
//! Truncated singular value decompositions of a matrix `G ∈ R^{n×m}` known only through a
//! [`LinearOperator`](ksvd_linalg::LinearOperator) (dense, sparse or an implicit kernel matrix),
//! as needed by KSVD: the top-`r` left and right singular vectors of `G` solve the Coupled
//! Covariances Eigenproblem (Tao, Tonin et al., ICML 2024, Proposition 3.4).
//!
//! | solver | function | role |
//! |---|---|---|
//! | the default | [`auto_svd`] | dense when cheapest and within the memory budget, block Lanczos otherwise, shift-invert or spectrum slicing where Krylov stalls on a sparse-plus-low-rank `G`; always meets its tolerance |
//! | dense SVD (faer) | [`dense_svd`], [`dense_svd_operator`] | exact reference |
//! | Gram eigendecomposition | [`gram_svd_operator`] | about half the dense SVD's flops (a third of its time at order 10⁴), accurate where `σ_r` is not far below `σ_1`; taken by `auto_svd`, certified, when Krylov stalls on a stored (not sparse-plus-low-rank) `G` whose dense SVD costs too much |
//! | restarted block Lanczos bidiagonalisation | [`lanczos_svd`] | TSVD (ARPACK/PROPACK in the paper) |
//! | randomized block Krylov | [`block_krylov_svd`] | RSVD with a residual stopping rule (Musco & Musco 2015) |
//! | randomized SVD, fixed power iterations | [`randomized_svd`] | the paper's RSVD protocol (Halko et al.) |
//! | twin split | [`twin_split_svd`] | square `M` with twin indices (graph nodes with equal neighbourhoods): repeated values taken exactly, the rest from a smaller operator by any solver |
//! | shift-invert subspace iteration | [`shift_invert_svd`] | sparse-plus-low-rank `G` (graph kernels): flat spectra, repeated values, with a certified count (inertia, with its error bound) of the values above the shift |
//! | spectrum slicing | [`slice_svd`] | sparse-plus-low-rank `G` whose rank cuts through a dense band: shifts inside the spectrum (unpivoted `L D Lᵀ`, certified counts), shift-invert Lanczos per slice; chosen by `auto_svd` above rank 64 when Krylov stalls |
//!
//! Every solver returns one [`SvdResult`] (`U`, singular values descending, `V`) carrying
//! per-triplet [`Residuals`] `‖G v_i − s_i u_i‖/s_1`, `‖Gᵀ u_i − s_i v_i‖/s_1`, computed
//! explicitly: results are certified, not assumed. Fixed-iteration RSVD reports its residuals
//! rather than claiming accuracy. The Krylov solvers work on blocks of vectors (every product
//! with `G` is a GEMM) and resolve repeated or clustered singular values up to the block size.
//! The paper's accuracy measure `η`, subspace angles and the error ratio against the optimal
//! rank-`r` error are in [`accuracy`] ([`Accuracy::of`] gathers them).
//!
//! ```
//! use ksvd_solvers::{dense_svd, lanczos_svd, LanczosParams};
//! use ndarray::Array2;
//!
//! let g = Array2::from_shape_fn((30, 20), |(i, j)| 1.0 / (1.0 + i as f64 + 2.0 * j as f64));
//! let exact = dense_svd(g.view(), 3)?;
//! let lz = lanczos_svd(&g, 3, &LanczosParams::default())?;
//! for i in 0..3 {
//!     assert!((exact.s[i] - lz.s[i]).abs() <= 1e-9 * exact.s[0]);
//! }
//! # Ok::<(), ksvd_solvers::SolverError>(())
//! ```

pub mod accuracy;
mod auto;
mod error;
mod krylov;
mod lanczos;
mod rsvd;
mod shift_invert;
mod slicing;
mod svd;
mod twins;

pub use accuracy::{eta, eta_of, low_rank_error, optimal_low_rank_error, subspace_error, Accuracy, EtaWeights, Truth};
pub use auto::{auto_choice, auto_svd, AutoChoice, AutoParams};
pub use error::{Result, SolverError};
pub use ksvd_linalg::{Progress, ProgressFn};
pub use lanczos::{
    block_krylov_svd, lanczos_svd, lanczos_svd_with_progress, BlockKrylovParams, LanczosParams, LanczosStats,
};
pub use rsvd::{randomized_svd, RsvdParams};
pub use shift_invert::{shift_invert_svd, ShiftInvertInfo, ShiftInvertParams};
pub use slicing::{slice_svd, SliceInfo, SliceParams};
#[cfg(feature = "lapack")]
pub use svd::lapack_svd;
pub use svd::{
    check_rank, column_signs, dense_svd, dense_svd_numbers, dense_svd_operator, gram_svd_numbers, gram_svd_operator,
    Residuals, SvdResult,
};
pub use twins::{twin_split_svd, TwinSplitInfo};
