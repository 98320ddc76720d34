//! # ksvd-kernels
//!
//! Asymmetric kernels and implicit kernel matrices for kernel SVD (KSVD, Tao, Tonin et al.,
//! ICML 2024). Given row samples `X = {x_i}_{i=1..n}` and column samples `Z = {z_j}_{j=1..m}`,
//! the asymmetric kernel matrix is `G_ij = k(x_i, z_j)` (rows index X, columns index Z); the
//! Coupled Covariances Eigenproblem is solved by the SVD of `G` (see `ksvd-solvers`).
//!
//! This crate is the only place where a kernel is evaluated: every other crate asks it for
//! kernel values.
//!
//! * [`Kernel`]: linear, polynomial, RBF `exp(-‖x − z‖²/γ²)`, Laplacian and SNE (RBF
//!   normalised over the whole Z set, so every row of `G` sums to 1). The bandwidth is the
//!   paper's `γ` everywhere; a `γ²` (the paper's appendix, the median heuristic) is converted
//!   once, `γ = sqrt(γ²)`, where it is read.
//! * [`KernelFunction`]: the user's own kernel, evaluated on blocks of samples wherever a
//!   built-in one is ([`AnyKernel`] is either; every solver, Nyström, centring and the
//!   out-of-sample extensions work with both).
//! * [`KernelKind`]: kernels by name (`linear`, `poly`, `rbf`, `laplacian`, `sne`,
//!   `precomputed`), the vocabulary of every front end.
//! * [`Samples`]: dense or sparse (CSR) row samples; sparse inputs stay sparse.
//! * [`KernelMatrix`]: `G` as a [`LinearOperator`](ksvd_linalg::LinearOperator) and
//!   [`MatrixBlocks`](ksvd_linalg::MatrixBlocks), evaluated by blocks with GEMM identities
//!   (`‖x‖² + ‖z‖² − 2 x.z`), optionally centred on both sides (`H_n G H_m`), never
//!   materialised. Exact SNE normalisers.
//! * [`values`]: one dense block of kernel values, from dense samples
//!   ([`Kernel::dense_block`]), from inner products and squared norms that the caller formed
//!   ([`Kernel::values_from_inner_products`]), or from squared distances
//!   ([`Kernel::values_from_sq_distances`]).
//! * [`compat`]: the compatibility alternatives a0–a3 ([`Compat`], which owns their names:
//!   `"a1".parse::<Compat>()`) and their maps for a non-square data matrix whose rows and
//!   columns are the two sample sets: the matrices `C` of a0 (pseudo-inverse), a1 (PCA), a2
//!   (random), and the inner products of the shared-principal-axes a1 ([`compat::inner_products`]).
//! * [`graph`]: adjacency-matrix inputs (`x_i` = out-row, `z_j` = in-column) and their
//!   transforms, and the paper's bandwidth rule `γ = k sqrt(M γ_x)`.
//! * [`bandwidth`]: squared distances (shifted GEMM identity) and the median-heuristic
//!   bandwidth `γ² = median ‖x_i − z_j‖²`.
//!
//! ```
//! use ksvd_kernels::{graph::{graph_samples, GraphInput}, Kernel, KernelMatrix};
//! use ksvd_linalg::{CsrMatrix, LinearOperator};
//! use ndarray::Array2;
//!
//! // A directed 3-cycle 0 -> 1 -> 2 -> 0.
//! let a = CsrMatrix::from_triplets(3, 3, [(0, 1, 1.0), (1, 2, 1.0), (2, 0, 1.0)])?;
//! let (x, z) = graph_samples(&a, GraphInput::Raw)?;
//! let g = KernelMatrix::new(x, z, Kernel::Sne { gamma: 1.0 })?;
//! let sums = g.apply(Array2::ones((3, 1)).view())?;
//! assert!(sums.iter().all(|s| (s - 1.0).abs() < 1e-12));
//! # Ok::<(), ksvd_kernels::KernelError>(())
//! ```
//!
//! The same kernel on a small dense block, and the compatibility vocabulary:
//!
//! ```
//! use ksvd_kernels::{Compat, Kernel};
//! use ndarray::array;
//!
//! let x = array![[0.0, 1.0], [1.0, 0.0]];
//! let g = Kernel::Sne { gamma: 1.0 }.dense_block(x.view(), x.view())?;
//! assert!(g.rows().into_iter().all(|r| (r.sum() - 1.0).abs() < 1e-15));
//! let a1: Compat = "a1".parse()?;
//! assert_eq!((a1, a1.to_string()), (Compat::Pca, "a1".to_string()));
//! # Ok::<(), ksvd_kernels::KernelError>(())
//! ```
//!
//! Where to go next: [`KernelMatrix`] (representations and costs), [`values`] (the dense
//! arithmetic), [`compat`] (the maps and their names).

pub mod bandwidth;
pub mod compat;
mod custom;
mod error;
pub mod graph;
mod kernel;
mod kind;
mod matrix;
mod samples;
pub mod values;

pub use compat::{Compat, CompatSide, CompatibleInner, CompatibleSamples};
pub use custom::{AnyKernel, FnKernel, KernelFnError, KernelFunction};
pub use error::{KernelError, Result};
pub use kernel::Kernel;
pub use kind::KernelKind;
pub use matrix::{Centering, KernelMatrix, KernelStats};
pub use samples::Samples;
