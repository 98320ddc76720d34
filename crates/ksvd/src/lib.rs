//! # ksvd
//!
//! Kernel SVD with asymmetric kernels: the Coupled Covariances Eigenproblem (CCE) of Tao,
//! Tonin et al. (ICML 2024). Given row samples `X = {x_i}` (N) and column samples `Z = {z_j}`
//! (M) and an asymmetric kernel `κ(x, z) = ⟨φ(x), ψ(z)⟩`, CCE seeks directions `W_φ`, `W_ψ`
//! with
//!
//! `Σ_φ W_ψ = W_φ Λ`,  `Σ_ψ W_φ = W_ψ Λ`,
//!
//! and is solved by the top-`r` SVD of `G_ij = κ(x_i, z_j)` (Proposition 3.4): `G ≈ U S Vᵀ`,
//! `B_φ = U`, `B_ψ = V`, singular values in descending order. This crate is the high-level
//! layer over `ksvd-kernels` (the implicit `G`), `ksvd-solvers` (exact, Lanczos, randomized SVD)
//! and `ksvd-nystrom` (the asymmetric Nyström method); it follows linfa's conventions
//! (validated params, [`linfa::traits::Fit`], [`linfa::traits::Transformer`]). One dependency
//! suffices: the types a fit needs are re-exported here, and [`prelude`] brings them and
//! linfa's traits into scope.
//!
//! ## A fit and its projections
//!
//! ```
//! use ksvd::prelude::*;
//! use ndarray::Array2;
//!
//! // Row samples X (40 in R^2) and column samples Z (30 in R^2).
//! let x = Array2::from_shape_fn((40, 2), |(i, j)| ((i * 7 + j * 3) % 11) as f64 / 11.0);
//! let z = Array2::from_shape_fn((30, 2), |(i, j)| ((i * 5 + j) % 13) as f64 / 13.0);
//! let model = Ksvd::params()
//!     .kernel(Kernel::Sne { gamma: 0.5 })
//!     .rank(3)
//!     .check()?
//!     .fit_samples(Samples::dense(x.clone())?, Samples::dense(z)?)?;
//! assert_eq!(model.u().dim(), (40, 3));
//! // transform(x) = k(x, Z) V S^-1/2: U S^1/2 at the training rows.
//! let t = model.transform(&Samples::dense(x)?)?;
//! let s = model.singular_values();
//! assert!((t[[0, 0]] - model.u()[[0, 0]] * s[0].sqrt()).abs() < 1e-8 * s[0]);
//!
//! // linfa style, with the defaults (rank 2, RBF with the paper's bandwidth rule): one data
//! // matrix, Z = X.
//! let a = Array2::from_shape_fn((25, 8), |(i, j)| ((i + 2 * j) % 5) as f64);
//! let fitted = Ksvd::params().fit(&DatasetBase::from(a.clone()))?;
//! assert_eq!(fitted.v().dim(), (25, 2));
//! assert!(fitted.bandwidth().is_some_and(|g| g > 0.0)); // the γ the rule chose
//! let features = Transformer::transform(&fitted, &a)?;
//! assert_eq!(features.dim(), (25, 2));
//! # Ok::<(), ksvd::KsvdError>(())
//! ```
//!
//! ## The conventions
//!
//! The parameters, defaults and outputs are those of every front door (this crate, the `ksvd`
//! command, the Python package; `docs/conventions.md` is the table): [`KsvdParams`] (rank 2,
//! RBF with the bandwidth rule `γ = sqrt(M γ_x)`, the [`Solver::Auto`] solver at tolerance 1e-8,
//! no centring, no compatibility, seed 0) and [`KpcaParams`] (the same, centred).
//!
//! Every fitted model ([`Ksvd`], [`Kpca`], [`KsvdModel`]) projects new samples with one formula,
//! `k̃(x', Z) V S^-p` for rows and `k̃(X, z')ᵀ U S^-p` for columns, under a [`Scaling`]:
//! `transform` / `transform_cols` (`p = ½`: `U S^½` at the training samples, so that
//! `transform(x) transform_cols(z)ᵀ` approximates `k̃(x, z)`; for KPCA scikit-learn's
//! `KernelPCA.transform`), `extend_rows` / `extend_cols` (`p = 1`: the paper's out-of-sample
//! extension, eq. 10, `U` at the training samples) and `project_rows(x, Scaling::Full)` (`p = 0`:
//! Proposition 2.2's scores `k(x', Z) V`).
//!
//! ## Models
//!
//! KPCA is the symmetric case of the same model (`Z = X`, a symmetric PSD kernel, `U = V = A`):
//! [`Kpca`] computes the top-`r` eigenpairs `K̃ a_l = λ_l a_l` of the (doubly centred,
//! `K̃ = H K H`) kernel matrix with the same [`Solver`]s (`Solver::Nystrom` is the symmetric
//! Nyström method there). A fitted [`Ksvd`] or [`Kpca`] converts to a [`KsvdModel`]
//! ([`Ksvd::to_model`], [`Kpca::to_model`]; [`KsvdModel::estimator`] says which): the portable
//! model, saved and loaded as one checksummed, versioned JSON document
//! ([`KsvdModel::save`] / [`KsvdModel::load`], [`KsvdModel::to_bytes`] /
//! [`KsvdModel::from_bytes`]; feature `serde`, on by default; format at
//! [`MODEL_FORMAT_VERSION`]), summarised by [`KsvdModel::summary`].
//!
//! ## Your own kernel
//!
//! Asymmetric kernels are what the method is about, and yours need not be built in: implement
//! [`KernelFunction`] (`G[I, J]` from blocks of dense samples; errors as [`KernelFnError`]) and
//! pass it with [`KsvdParams::kernel_fn`] / [`KpcaParams::kernel_fn`]. Everything that uses a
//! built-in kernel uses it: every solver, the Nyström method, centring, the projections of new
//! rows and columns. A model saves everything but the function, recording its name
//! (`"kernel": {"Custom": {"name": …}}`); [`KsvdModel::load`] of such a file is
//! [`KsvdError::KernelFunctionNeeded`] naming it, and [`KsvdModel::load_with_kernel`] gives the
//! function back (same name, else [`KsvdError::KernelFunctionMismatch`]).
//!
//! ## Solvers on any operator
//!
//! [`Solver`] is the workspace's one solver choice (serde-enabled for configs): besides the
//! models, [`Solver::solve_operator`] runs it (every variant but `Nystrom`) on any
//! [`LinearOperator`], e.g. a task's own sparse or stored matrix, and [`Solver::solve_twins`] on
//! a square one with twin indices ([`Twins`]: graph nodes with the same in- and
//! out-neighbours), whose exactly repeated singular values it takes from the symmetry before
//! solving the smaller rest.

/// Builder setters of the params types (`KsvdParams`, `KpcaParams`): for each
/// `/// doc  field: Type;` a `pub fn field(mut self, value: Type) -> Self` storing `value` in
/// the field of the same name (`field: Type => Some;` stores `Some(value)`).
macro_rules! setters {
    ($($(#[$doc:meta])* $field:ident: $ty:ty $(=> $wrap:ident)?;)*) => {
        $(
            $(#[$doc])*
            pub fn $field(mut self, value: $ty) -> Self {
                self.0.$field = $($wrap)?(value);
                self
            }
        )*
    };
}

/// The kernel setters of the params types: for each `/// doc  name: Type;` a
/// `pub fn name(mut self, value: Type) -> Self` that sets the kernel (`ParamKernel::from`) and
/// turns the bandwidth rule off (a kernel given by the caller is used as given).
macro_rules! kernel_setters {
    ($($(#[$doc:meta])* $name:ident: $ty:ty;)*) => {
        $(
            $(#[$doc])*
            pub fn $name(mut self, value: $ty) -> Self {
                self.0.kernel = crate::user_kernel::ParamKernel::from(value);
                self.0.bandwidth_rule = None;
                self
            }
        )*
    };
}

mod error;
mod fitted;
mod kpca;
mod landmarks;
mod model;
mod operator_fit;
mod projection;
mod solver_kind;
mod summary;
mod user_kernel;

pub use error::{KsvdError, Result};
pub use fitted::{CompatMap, Estimator, KsvdModel, MODEL_FORMAT, MODEL_FORMAT_VERSION};
pub use kpca::{Kpca, KpcaParams, KpcaValidParams};
pub use ksvd_kernels::graph::{bandwidth_rule, bandwidth_rule_from_sums, graph_samples, GraphInput};
pub use ksvd_kernels::{
    AnyKernel, Centering, Compat, CompatSide, FnKernel, Kernel, KernelError, KernelFnError, KernelFunction, KernelKind,
    KernelMatrix, KernelStats, Samples,
};
pub use ksvd_linalg::{
    CsrMatrix, LinalgError, LinearOperator, MatrixBlocks, MemoryBudget, Precision, Twins, Vocabulary,
};
pub use ksvd_nystrom::{InnerSolver, LandmarkWeights, NystromError, Sampling};
pub use ksvd_solvers::{
    AutoParams, BlockKrylovParams, LanczosParams, Progress, ProgressFn, Residuals, RsvdParams, SvdResult, TwinSplitInfo,
};
pub use linfa::traits::{Fit, Transformer};
pub use linfa::{DatasetBase, ParamGuard};
pub use model::{Ksvd, KsvdParams, KsvdValidParams, Solver};
pub use operator_fit::OperatorFit;
pub use projection::Scaling;
pub use solver_kind::{SolverKind, SolverOptions};
pub use summary::{LandmarkCounts, ModelSummary, ResidualSummary};

/// Everything a fit needs in one import: the estimators and their model, the kernel and sample
/// types, the solver choices, and linfa's `Fit`, `Transformer`, `ParamGuard` and `DatasetBase`.
///
/// ```
/// use ksvd::prelude::*;
///
/// let x = ndarray::Array2::from_shape_fn((20, 3), |(i, j)| ((i * 3 + j) % 7) as f64);
/// let kpca = Kpca::params().rank(2).fit(&DatasetBase::from(x.clone()))?;
/// let t = Transformer::transform(&kpca, &x)?;
/// assert_eq!(t.dim(), (20, 2));
/// # Ok::<(), ksvd::KsvdError>(())
/// ```
pub mod prelude {
    pub use crate::{
        Compat, CsrMatrix, DatasetBase, Fit, FnKernel, GraphInput, InnerSolver, Kernel, KernelFnError, KernelFunction,
        KernelKind, Kpca, Ksvd, KsvdError, KsvdModel, LanczosParams, MemoryBudget, ParamGuard, Precision, RsvdParams,
        Samples, Sampling, Scaling, Solver, SolverKind, SolverOptions, Transformer, Vocabulary,
    };
}

/// The repository README's quickstarts: its Rust block runs as a doctest of this crate (the
/// shell and Python blocks are run by `scripts/readme_quickstarts.py` in CI).
#[doc = include_str!("../../../README.md")]
#[cfg(doctest)]
pub struct ReadmeQuickstart;
