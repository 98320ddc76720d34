//! # ksvd-nystrom
//!
//! The asymmetric Nyström method of Tao, Tonin et al. (ICML 2024, section 4) for the top-`r`
//! SVD of a kernel matrix `G ∈ R^{N×M}`, `G_ij = κ(x_i, z_j)`: sample `n` rows and `m` columns,
//! solve the SVD of the `n × m` block, and extend to all rows and columns with eq. 11
//!
//! `ũ_s ∝ G_{N,m} v_s / λ_s`,  `ṽ_s ∝ G_{n,M}ᵀ u_s / λ_s`,  `λ̃_s = sqrt(NM/(nm)) λ_s`,
//!
//! or to new samples with the out-of-sample extension eq. 10. Only `G_{N,m}` and `G_{n,M}` are
//! ever evaluated, so memory is `O((N + M)(m + r))`, never `O(N M)`.
//!
//! * [`asymmetric_nystrom`] with [`NystromParams`] and a landmark [`Sampling`]: uniform (the
//!   paper's), squared norms, approximate leverage scores ([`sketched_leverage`]), or adaptive — [`Sampling::AdaptiveCross`] (randomly pivoted
//!   block cross approximation, rows drawn by sketched residual norms) and
//!   [`Sampling::GreedyCross`] (partial pivoting) — whose result is the exact truncated SVD of
//!   the cross approximation `G[:, J] G[I, J]⁺ G[I, :]`, built in `O((N + M) m²)` without
//!   forming `G`; [`AsymmetricNystrom::extend_rows`] / [`AsymmetricNystrom::extend_cols`] for
//!   new data (every scheme extends through landmark kernel values only).
//! * Accuracy as a whole: `ksvd_solvers::low_rank_error` (`‖G − Ũ S̃ Ṽᵀ‖_F`, matrix-free)
//!   against `ksvd_solvers::optimal_low_rank_error` (`‖G − G_r‖_F`).
//! * [`symmetric_nystrom`] (Williams & Seeger) and [`symmetric_nystrom_svd`], the baseline
//!   on `G Gᵀ` and `Gᵀ G`; [`symmetric_nystrom_lanczos`], the same baseline with the paper's
//!   Lanczos sub-problem on the matrix-free landmark block (no `N × m` Gram columns).
//! * [`grow_until`]: the timing protocol, growing a size (`m`, or an oversampling) over a grid
//!   until `η ≤ ε` against a reference, within a time budget; the [`Growth`] record says where
//!   it stopped and why.
//! * The building blocks of every fit, for fits that gather their landmark blocks elsewhere (the
//!   out-of-core passes of `ksvd-streaming`): the normalisers [`landmark_scales`] and the scaled
//!   block [`scale_block`] (`D_r G[I, J] D_c`), the rank rule [`numerical_rank`], and the
//!   extension coefficients [`row_coefficients`] (`D_c V S⁻¹`), [`col_coefficients`]
//!   (`D_r U S⁻¹`); symmetric, the landmark eigendecomposition [`landmark_eigen`] and
//!   [`eigen_coefficients`] (`Q_r Λ_r⁻¹`).
//!
//! With all rows and columns sampled the method returns the exact SVD; on a symmetric positive
//! semi-definite `G` with the same row and column samples it reduces to the symmetric method.
//!
//! ```
//! use ksvd_kernels::{Kernel, KernelMatrix, Samples};
//! use ksvd_linalg::random::{gaussian_matrix, rng_from_seed};
//! use ksvd_nystrom::{asymmetric_nystrom, NystromParams, Sampling};
//! use ksvd_solvers::{dense_svd_operator, eta_of, low_rank_error, optimal_low_rank_error, EtaWeights};
//!
//! let mut rng = rng_from_seed(7);
//! let x = Samples::dense(gaussian_matrix(&mut rng, 300, 1))?;
//! let z = Samples::dense(gaussian_matrix(&mut rng, 200, 1))?;
//! let g = KernelMatrix::new(x, z, Kernel::Rbf { gamma: 2.5 })?;
//! let exact = dense_svd_operator(&g, 4)?;
//! let approx = asymmetric_nystrom(&g, &NystromParams::new(4, 100).seed(1))?;
//! assert!(eta_of(&exact, &approx.svd, EtaWeights::Normalized)? < 0.01);
//!
//! // Adaptive landmarks: 20 pivots, error within 1% of the best rank-4 approximation.
//! let fro_sq: f64 = g.row_sq_norms()?.iter().sum();
//! let best = optimal_low_rank_error(fro_sq, exact.s.view());
//! let params = NystromParams::new(4, 20).sampling(Sampling::AdaptiveCross).seed(1);
//! let ad = asymmetric_nystrom(&g, &params)?.svd;
//! assert!(low_rank_error(&g, fro_sq, ad.u.view(), ad.s.view(), ad.v.view())? <= 1.01 * best);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod adaptive;
mod asymmetric;
mod cross;
mod error;
mod extension;
mod sampling;
mod symmetric;

pub use adaptive::{grow_until, Attempt, Growth, GrowthSchedule, GrowthStop};
pub use asymmetric::{asymmetric_nystrom, AsymmetricNystrom, InnerSolver, LandmarkWeights, NystromParams};
pub use error::{NystromError, Result};
pub use extension::{
    col_coefficients, eigen_coefficients, exact_coefficients, landmark_eigen, landmark_scales, numerical_rank,
    row_coefficients, scale_block,
};
pub use sampling::{sketched_leverage, uniform_indices, weighted_indices, Sampling};
pub use symmetric::{symmetric_nystrom, symmetric_nystrom_lanczos, symmetric_nystrom_svd, Gram, SymmetricNystrom};
