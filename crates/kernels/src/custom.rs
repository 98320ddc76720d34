//! Users' own kernel functions: [`KernelFunction`], evaluated by [`crate::KernelMatrix`] block by
//! block exactly where a built-in [`Kernel`] is ([`AnyKernel`] is either).
use crate::kernel::Kernel;
use ndarray::{ArrayView2, ArrayViewMut2};
use std::sync::Arc;
use thiserror::Error;

/// A kernel function `k(x, z)` of the user's, evaluated on blocks of samples.
///
/// [`crate::KernelMatrix`] asks for `G[I, J]` by calling [`KernelFunction::block`] with the dense
/// rows `X_I` (`|I| × d`) and `Z_J` (`|J| × d`) and an output block `|I| × |J|` (rows index X,
/// columns index Z, as everywhere). Conventions:
///
/// * **Few, large calls**: a block holds up to about an eighth of the memory budget
///   ([`ksvd_linalg::MemoryBudget`]) spread over the worker threads, at least `2^20` entries
///   (fewer only when `G` is smaller); a stored `G` is evaluated in one call per row chunk, a
///   matrix-free one re-evaluates blocks at every product.
/// * **Threads**: `block` is called from rayon worker threads, possibly concurrently (hence
///   `Send + Sync`); an implementation that serialises (a Python callable under the GIL) is
///   correct, only slower.
/// * **Dense samples**: sparse samples are densified block by block before the call.
/// * **Checked output**: every value written must be finite; a NaN or an infinity is reported
///   as [`KernelFnError::NonFinite`] with its position in `G`, and the whole operation fails
///   (nothing half-built is returned).
/// * **Models**: [`KernelFunction::name`] is what a saved model records; the function itself is
///   not saved, and a model that needs it asks for it at load time, by that name.
///
/// ```
/// use ksvd_kernels::{KernelFnError, KernelFunction, KernelMatrix, Samples};
/// use ksvd_linalg::MatrixBlocks;
/// use ndarray::{array, ArrayView2, ArrayViewMut2};
/// use std::sync::Arc;
///
/// /// `k(x, z) = exp(-‖x − z − s‖²)`: a shifted, asymmetric Gaussian.
/// #[derive(Debug)]
/// struct Shifted(f64);
///
/// impl KernelFunction for Shifted {
///     fn name(&self) -> &str {
///         "shifted"
///     }
///     fn block(&self, x: ArrayView2<'_, f64>, z: ArrayView2<'_, f64>, mut out: ArrayViewMut2<'_, f64>)
///         -> Result<(), KernelFnError> {
///         for (i, xi) in x.outer_iter().enumerate() {
///             for (j, zj) in z.outer_iter().enumerate() {
///                 let d2: f64 = xi.iter().zip(&zj).map(|(a, b)| (a - b - self.0).powi(2)).sum();
///                 out[[i, j]] = (-d2).exp();
///             }
///         }
///         Ok(())
///     }
/// }
///
/// let x = Samples::dense(array![[0.0], [1.0]])?;
/// let g = KernelMatrix::new(x.clone(), x, Arc::new(Shifted(1.0)))?;
/// let b = g.block(&[0, 1], &[0, 1])?;
/// assert_eq!(b[[1, 0]], 1.0); // x = 1, z = 0: 1 − 0 − 1 = 0
/// assert!(b[[0, 1]] < b[[1, 0]]); // not symmetric
/// # Ok::<(), ksvd_kernels::KernelError>(())
/// ```
pub trait KernelFunction: Send + Sync + std::fmt::Debug {
    /// The name a saved model records (the function itself is not stored): short, stable,
    /// and the same at load time.
    fn name(&self) -> &str;

    /// Writes `k(x_a, z_b)` into `out[[a, b]]` for every row `x_a` of `x` and `z_b` of `z`
    /// (`out` is `x.nrows() × z.nrows()`, zero-filled; `x.ncols() == z.ncols()`).
    ///
    /// # Errors
    /// Any [`KernelFnError`]: [`KernelFnError::Failed`] with the reason (an exception of a
    /// binding's callable), [`KernelFnError::WrongShape`] when the function's own result does
    /// not have the shape of `out` (a binding copying an array).
    fn block(
        &self,
        x: ArrayView2<'_, f64>,
        z: ArrayView2<'_, f64>,
        out: ArrayViewMut2<'_, f64>,
    ) -> std::result::Result<(), KernelFnError>;
}

/// A [`KernelFunction`] from a name and a closure filling the block (the closure has
/// [`KernelFunction::block`]'s arguments and contract).
///
/// ```
/// use ksvd_kernels::{FnKernel, KernelFnError, KernelMatrix, Samples};
/// use ksvd_linalg::LinearOperator;
/// use ndarray::array;
///
/// // k(x, z) = 1 + x · z.
/// let f = FnKernel::new("affine", |x, z, mut out| {
///     out.assign(&(x.dot(&z.t()) + 1.0));
///     Ok::<(), KernelFnError>(())
/// });
/// let x = Samples::dense(array![[1.0, 0.0], [0.0, 2.0]])?;
/// let g = KernelMatrix::new(x.clone(), x, f)?.to_dense()?;
/// assert_eq!(g, array![[2.0, 1.0], [1.0, 5.0]]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct FnKernel<F> {
    name: String,
    f: F,
}

impl<F> FnKernel<F>
where
    F: Fn(ArrayView2<'_, f64>, ArrayView2<'_, f64>, ArrayViewMut2<'_, f64>) -> std::result::Result<(), KernelFnError>
        + Send
        + Sync
        + 'static,
{
    /// The kernel function `f`, recorded in models as `name`.
    pub fn new(name: impl Into<String>, f: F) -> Arc<Self> {
        Arc::new(FnKernel { name: name.into(), f })
    }
}

impl<F> std::fmt::Debug for FnKernel<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FnKernel")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl<F> KernelFunction for FnKernel<F>
where
    F: Fn(ArrayView2<'_, f64>, ArrayView2<'_, f64>, ArrayViewMut2<'_, f64>) -> std::result::Result<(), KernelFnError>
        + Send
        + Sync,
{
    fn name(&self) -> &str {
        &self.name
    }
    fn block(
        &self,
        x: ArrayView2<'_, f64>,
        z: ArrayView2<'_, f64>,
        out: ArrayViewMut2<'_, f64>,
    ) -> std::result::Result<(), KernelFnError> {
        (self.f)(x, z, out)
    }
}

/// What went wrong in a user's [`KernelFunction`] (wrapped in
/// [`crate::KernelError::KernelFunction`] with the function's name).
#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum KernelFnError {
    /// The function reported a failure.
    #[error("it failed: {reason}")]
    Failed {
        /// The function's reason (e.g. a Python exception, type and message).
        reason: String,
    },
    /// The function produced a block of the wrong shape.
    #[error("it returned a {got:?} block where {expected:?} (rows of X x rows of Z) was asked")]
    WrongShape {
        /// `(|I|, |J|)`, the block asked for.
        expected: (usize, usize),
        /// The shape produced.
        got: (usize, usize),
    },
    /// The function wrote NaN or an infinity.
    #[error("it returned {value} for G[{row}, {col}] (kernel values must be finite)")]
    NonFinite {
        /// Row of `G` (index into X) of the first offending value.
        row: usize,
        /// Column of `G` (index into Z).
        col: usize,
        /// The value.
        value: f64,
    },
}

/// The kernel of a [`crate::KernelMatrix`]: a built-in [`Kernel`] or a user's
/// [`KernelFunction`]. Both produce blocks of `G` through the same evaluator (stored or
/// matrix-free, centred or not); what only a built-in kernel has (the sparse rank-one-plus-sparse
/// form, SNE normalisers, GEMM identities) is skipped for a user's.
///
/// `From<Kernel>` and `From<Arc<dyn KernelFunction>>` (and `Arc<F>` for a concrete `F`) let
/// either be passed where an `impl Into<AnyKernel>` is asked. Equality: built-in kernels by
/// value, user functions by identity (the same `Arc`).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum AnyKernel {
    /// A built-in kernel.
    Builtin(Kernel),
    /// A user's kernel function.
    Custom(Arc<dyn KernelFunction>),
}

impl AnyKernel {
    /// The built-in kernel, `None` for a user's function.
    pub fn builtin(&self) -> Option<&Kernel> {
        match self {
            AnyKernel::Builtin(k) => Some(k),
            AnyKernel::Custom(_) => None,
        }
    }
    /// The user's function, `None` for a built-in kernel.
    pub fn function(&self) -> Option<&Arc<dyn KernelFunction>> {
        match self {
            AnyKernel::Custom(f) => Some(f),
            AnyKernel::Builtin(_) => None,
        }
    }
    /// Checks a built-in kernel's hyper-parameters ([`Kernel::validate`]); a user's function has
    /// none.
    pub fn validate(&self) -> crate::Result<()> {
        match self {
            AnyKernel::Builtin(k) => k.validate(),
            AnyKernel::Custom(_) => Ok(()),
        }
    }
}

impl PartialEq for AnyKernel {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (AnyKernel::Builtin(a), AnyKernel::Builtin(b)) => a == b,
            (AnyKernel::Custom(a), AnyKernel::Custom(b)) => same_function(a, b),
            _ => false,
        }
    }
}

/// Whether two handles are the same function object (data pointers; vtables may differ
/// between codegen units).
pub(crate) fn same_function(a: &Arc<dyn KernelFunction>, b: &Arc<dyn KernelFunction>) -> bool {
    std::ptr::addr_eq(Arc::as_ptr(a), Arc::as_ptr(b))
}

impl From<Kernel> for AnyKernel {
    fn from(k: Kernel) -> Self {
        AnyKernel::Builtin(k)
    }
}

impl From<Arc<dyn KernelFunction>> for AnyKernel {
    fn from(f: Arc<dyn KernelFunction>) -> Self {
        AnyKernel::Custom(f)
    }
}

impl<F: KernelFunction + 'static> From<Arc<F>> for AnyKernel {
    fn from(f: Arc<F>) -> Self {
        AnyKernel::Custom(f)
    }
}

impl std::fmt::Display for AnyKernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AnyKernel::Builtin(k) => k.fmt(f),
            AnyKernel::Custom(func) => write!(f, "custom({})", func.name()),
        }
    }
}
