//! # ksvd
//!
//! Kernel SVD with asymmetric kernels: the Coupled Covariances Eigenproblem (CCE) of Tao,
//! Tonin et al. (ICML 2024). Given row samples `{x_i}` and column samples `{z_j}` and an
//! asymmetric kernel `κ(x, z) = ⟨φ(x), ψ(z)⟩`, CCE seeks directions `W_φ`, `W_ψ` with
//!
//! `Σ_φ W_ψ = W_φ Λ`,  `Σ_ψ W_φ = W_ψ Λ`,
//!
//! and is solved by the top-`r` SVD of `G_ij = κ(x_i, z_j)` (Proposition 3.4): `B_φ = U`,
//! `B_ψ = V`. This crate is the high-level layer over `ksvd-kernels` (the implicit `G`),
//! `ksvd-solvers` (exact, Lanczos, randomized SVD) and `ksvd-nystrom` (the asymmetric Nyström
//! method); it follows linfa's conventions (validated params, [`linfa::traits::Fit`]).
//!
//! A fitted [`Ksvd`] converts to a [`KsvdModel`] ([`Ksvd::to_model`]): the portable model with
//! the out-of-sample extension of eq. 10 (`ũ(x') = k̃(x', Z) V S⁻¹`, `ṽ(z') = k̃(X, z')ᵀ U S⁻¹`;
//! through the landmarks only for Nyström models) and a versioned model file
//! ([`KsvdModel::to_bytes`] / [`KsvdModel::from_bytes`], `save` / `load`; feature `serde`, on by
//! default; format documented at [`MODEL_FORMAT_VERSION`]).
//!
//! KPCA is the symmetric case of the same model (`Z = X`, a symmetric PSD kernel, `U = V`):
//! [`Kpca`] computes the top-`r` eigenpairs `K̃ a_l = λ_l a_l` of the (doubly centred,
//! `K̃ = H K H`) kernel matrix with the same [`Solver`]s (`Solver::Nystrom` is the symmetric
//! Nyström method there), and [`Kpca::transform`] scores new samples `k̃(x', X) A` with the
//! training centring, as [`KsvdModel`] does for KSVD.
//!
//! [`Solver`] is the workspace's one solver choice (serde-enabled for configs): besides the
//! models, [`Solver::solve_operator`] runs it (every variant but `Nystrom`) on any
//! `ksvd_linalg::LinearOperator`, e.g. a task's own sparse or stored matrix, and
//! [`Solver::solve_twins`] on a square one with twin indices ([`Twins`]: graph nodes with the
//! same in- and out-neighbours), whose exactly repeated singular values it takes from the
//! symmetry before solving the smaller rest.
//!
//! ```
//! use ksvd::{Ksvd, Solver};
//! use ksvd_kernels::{Kernel, Samples};
//! use linfa::prelude::*;
//! use ndarray::Array2;
//!
//! // Two sample sets in R^2.
//! let x = Array2::from_shape_fn((40, 2), |(i, j)| ((i * 7 + j * 3) % 11) as f64 / 11.0);
//! let z = Array2::from_shape_fn((30, 2), |(i, j)| ((i * 5 + j) % 13) as f64 / 13.0);
//! let model = Ksvd::params()
//!     .kernel(Kernel::Sne { gamma: 0.5 })
//!     .rank(3)
//!     .solver(Solver::Exact)
//!     .check()?
//!     .fit_samples(Samples::dense(x.clone())?, Samples::dense(z)?)?;
//! assert_eq!(model.b_phi().dim(), (40, 3));
//! // Scores of the training rows are U diag(s).
//! let scores = model.transform_x(&Samples::dense(x)?)?;
//! assert!((scores[[0, 0]] - model.b_phi()[[0, 0]] * model.singular_values()[0]).abs() < 1e-12);
//!
//! // linfa style: fit on a data matrix; its columns are the column samples (a1 compatibility).
//! let a = Array2::from_shape_fn((25, 8), |(i, j)| ((i + 2 * j) % 5) as f64);
//! let fitted = Ksvd::params().rank(4).fit(&DatasetBase::from(a))?;
//! assert_eq!(fitted.b_psi().dim(), (8, 4));
//! # Ok::<(), ksvd::KsvdError>(())
//! ```

mod error;
mod fitted;
mod kpca;
mod landmarks;
mod model;

pub use error::{KsvdError, Result};
pub use fitted::{CompatMap, KsvdModel, MODEL_FORMAT, MODEL_FORMAT_VERSION};
pub use kpca::{Kpca, KpcaParams, KpcaValidParams};
pub use ksvd_linalg::MemoryBudget;
pub use ksvd_linalg::Twins;
pub use ksvd_nystrom::{InnerSolver, Sampling};
pub use ksvd_solvers::{
    AutoParams, BlockKrylovParams, LanczosParams, Progress, ProgressFn, Residuals, RsvdParams, SvdResult, TwinSplitInfo,
};
pub use model::{scores, Ksvd, KsvdParams, KsvdValidParams, Solver};
