//! # ksvd-linalg
//!
//! The numerical floor of ksvd-rs: dense kernels on [faer](https://docs.rs/faer) behind
//! [`ndarray`] types, compressed sparse row matrices, and the [`LinearOperator`] abstraction
//! that every solver in the workspace is written against.
//!
//! * [`dense`]: GEMM, thin SVD, QR, symmetric eigen-decomposition, Cholesky/LU solves and the
//!   pseudo-inverse. With [`SparseCholesky`] (faer's sparse `LLᵀ`, whose success certifies
//!   positive definiteness) these are the only modules of the workspace that call faer; views
//!   between ndarray and faer are zero-copy.
//! * [`CsrMatrix`]: sparse storage with parallel sparse x dense and sparse x sparse products.
//! * [`LinearOperator`] / [`MatrixBlocks`]: `A X`, `A^T X` and `A[rows, cols]` for dense, sparse
//!   and implicit matrices alike; [`SparsePlusLowRank`] exposes the exact `S + L Rᵀ` form of
//!   operators that have it (sparse graph kernels), for spectral transformations.
//! * [`Twins`]: index pairs of a square matrix (graph nodes with the same in- and
//!   out-neighbours) whose swap leaves it unchanged; they split off exactly repeated singular
//!   values and reduce the matrix ([`TwinReduced`]).
//! * [`MemoryBudget`]: how much memory a computation may hold (kernel matrices are stored
//!   when they fit, evaluated matrix-free beyond); [`retain_freed_memory`], the allocator
//!   policy of long batch jobs.
//! * [`StoredMatrix`]: a dense matrix kept in `f64` or `f32` ([`Precision`]); its products with
//!   thin blocks (`G X`, `Gᵀ X`, at most 128 columns) stream along its rows with AVX2 and FMA, each entry summed in an
//!   order fixed by the shapes (the same result for every thread count), faer's GEMM elsewhere.
//! * [`vecmath`]: a vectorised `exp` (kernel evaluation is dominated by it).
//! * [`Progress`]: the one progress report of every long computation (solvers, streaming
//!   passes, experiment cells), handed to a caller's [`ProgressFn`].
//! * [`Vocabulary`]: the names users type for a choice (graph inputs, samplings, kernels,
//!   solvers), owned by the choice's enum and parsed one way by every front end.
//! * [`random`]: seeded generators (every random choice in ksvd-rs takes an explicit seed).
//!
//! ```
//! use ksvd_linalg::{dense, CsrMatrix, LinearOperator};
//! use ndarray::array;
//!
//! let a = array![[3.0, 0.0], [0.0, 4.0], [0.0, 0.0]];
//! let svd = dense::thin_svd(a.view())?;
//! assert!((svd.s[0] - 4.0).abs() < 1e-12 && (svd.s[1] - 3.0).abs() < 1e-12);
//!
//! let sparse = CsrMatrix::from_dense(a.view())?;
//! let y = sparse.apply(array![[1.0], [1.0]].view())?;
//! assert_eq!(y, array![[3.0], [4.0], [0.0]]);
//! # Ok::<(), ksvd_linalg::LinalgError>(())
//! ```
//!
//! Parallelism follows the current rayon pool (see [`dense::parallelism`]); results are
//! deterministic for a fixed thread count.

mod cholesky;
mod csr;
pub mod dense;
mod error;
mod memory;
mod operator;
mod precision;
mod progress;
pub mod random;
mod streamed;
mod twins;
pub mod vecmath;
mod vocabulary;

pub use cholesky::{CholeskyPattern, Inertia, SparseCholesky, SparseLdlt};
pub use csr::CsrMatrix;
pub use error::{check_finite, check_nonempty, LinalgError, Result};
pub use memory::{release_free_memory, retain_freed_memory, MemoryBudget, FIXED_DENSE_ENTRIES};
pub use operator::{
    check_indices, materialize, LinearOperator, LowRankUpdate, MatrixBlocks, SparsePlusLowRank, Transposed,
};
pub use precision::{with_slice, Element, Precision, StagedFill, StoredMatrix};
pub use progress::{Progress, ProgressFn};
pub use twins::{TwinReduced, Twins};
pub use vocabulary::{UnknownName, Vocabulary};
