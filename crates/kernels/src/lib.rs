//! # ksvd-kernels
//!
//! Asymmetric kernels and implicit kernel matrices for kernel SVD (KSVD, Tao, Tonin et al.,
//! ICML 2024). Given row samples `X = {x_i}_{i=1..n}` and column samples `Z = {z_j}_{j=1..m}`,
//! the asymmetric kernel matrix is `G_ij = k(x_i, z_j)` (rows index X, columns index Z); the
//! Coupled Covariances Eigenproblem is solved by the SVD of `G` (see `ksvd-solvers`).
//!
//! * [`Kernel`]: linear, polynomial, RBF `exp(-‖x − z‖²/γ²)`, Laplacian and SNE (RBF
//!   normalised over the whole Z set, so every row of `G` sums to 1).
//! * [`KernelKind`]: kernels by name (`linear`, `poly`, `rbf`, `laplacian`, `sne`,
//!   `precomputed`), the vocabulary of every front end.
//! * [`Samples`]: dense or sparse (CSR) row samples; sparse inputs stay sparse.
//! * [`KernelMatrix`]: `G` as a [`LinearOperator`](ksvd_linalg::LinearOperator) and
//!   [`MatrixBlocks`](ksvd_linalg::MatrixBlocks), evaluated by blocks with GEMM identities
//!   (`‖x‖² + ‖z‖² − 2 x.z`), optionally centred on both sides (`H_n G H_m`), never
//!   materialised. Exact SNE normalisers.
//! * [`compat`]: compatibility matrices a0 (pseudo-inverse), a1 (PCA), a2 (random) for a
//!   non-square data matrix whose rows and columns are the two sample sets.
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

pub mod bandwidth;
pub mod compat;
mod error;
pub mod graph;
mod kernel;
mod kind;
mod matrix;
mod samples;

pub use compat::{Compat, CompatSide, CompatibleSamples};
pub use error::{KernelError, Result};
pub use kernel::Kernel;
pub use kind::KernelKind;
pub use matrix::{Centering, KernelMatrix, KernelStats};
pub use samples::Samples;
