//! Kernel matrices `G_ij = k(x_i, z_j)`: stored when they fit a memory budget, otherwise
//! evaluated block by block and fused with the product (matrix-free).
use crate::custom::{AnyKernel, KernelFnError};
use crate::error::{KernelError, Result};
use crate::kernel::Kernel;
use crate::samples::{inner_block, inner_block_into, Samples};
use ksvd_linalg::{
    check_indices, dense, with_slice, CsrMatrix, Element, LinearOperator, MatrixBlocks, MemoryBudget, Precision,
    SparsePlusLowRank, StagedFill, StoredMatrix,
};
use ndarray::{Array1, Array2, ArrayView2, ArrayViewMut2, Axis};
use rayon::prelude::*;

/// Target number of kernel entries evaluated at once by one thread (8 MiB of f64).
const BLOCK_ENTRIES: usize = 1 << 20;

/// Upper bound on the entries of one call of a user's kernel function (1 GiB of f64).
const MAX_CUSTOM_BLOCK_ENTRIES: usize = 1 << 27;

/// Entries per call of a user's kernel function: an eighth of `budget` shared by the worker
/// threads, between [`BLOCK_ENTRIES`] and [`MAX_CUSTOM_BLOCK_ENTRIES`] (few, large calls: a
/// binding may serialise them, e.g. under Python's GIL).
fn custom_block_entries(budget: MemoryBudget) -> usize {
    let per_thread = budget.as_bytes() / 8 / 8 / rayon::current_num_threads().max(1) as u64;
    usize::try_from(per_thread)
        .unwrap_or(usize::MAX)
        .clamp(BLOCK_ENTRIES, MAX_CUSTOM_BLOCK_ENTRIES)
}

/// How the matrix is evaluated.
#[derive(Debug, Clone)]
enum Repr {
    /// Dense blocks from GEMM-style identities (`‖x‖² + ‖z‖² − 2 x.z`), evaluated on demand.
    Blocked,
    /// The whole `G` (row-major `n × m`, in `f64` or `f32`), evaluated once: products are
    /// GEMMs. `centred`: the entries are those of `H_n G H_m`, centred once in place with the
    /// arithmetic of [`Centering::center_in_place`] when the matrix was centred, so products
    /// need no correction.
    Stored { g: StoredMatrix, centred: bool },
    /// `G = a eᵀ + C` with `C` sparse on the nonzeros of `X Zᵀ`: exact for sparse inputs and
    /// every kernel that is a function of `x.z`, `‖x‖²`, `‖z‖²` separable at `x.z = 0`.
    RankOnePlusSparse {
        a: Vec<f64>,
        e: Vec<f64>,
        c: CsrMatrix,
        ct: CsrMatrix,
    },
}

/// Both-sided centring data: `G̃ = H_n G H_m`, i.e. `G̃_ij = G_ij − r_i − c_j + g`.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Centering {
    /// `r_i`, the mean of row `i` of the un-centred `G`.
    pub row_means: Vec<f64>,
    /// `c_j`, the mean of column `j`.
    pub col_means: Vec<f64>,
    /// `g`, the mean of all entries.
    pub grand_mean: f64,
}

impl Centering {
    /// The centring means of a stored matrix `g` (`n × m`): row means `r`, column means `c` and
    /// the grand mean `g`, taken as the mean of the row means. Empty sides give empty means and
    /// a zero grand mean.
    pub fn of_dense(g: ArrayView2<'_, f64>) -> Centering {
        let rows = g.mean_axis(Axis(1)).unwrap_or_else(|| Array1::zeros(g.nrows()));
        let cols = g.mean_axis(Axis(0)).unwrap_or_else(|| Array1::zeros(g.ncols()));
        Centering::from_means(rows.to_vec(), cols.to_vec())
    }

    /// The centring of row and column means `r`, `c`: the grand mean is the mean of the row
    /// means (ndarray's summation; zero without rows).
    fn from_means(row_means: Vec<f64>, col_means: Vec<f64>) -> Centering {
        let grand_mean = ndarray::aview1(&row_means).mean().unwrap_or(0.0);
        Centering {
            row_means,
            col_means,
            grand_mean,
        }
    }

    /// Centres the stored matrix these means were taken from, in place:
    /// `g_ij ← g_ij + ((g − r_i) − c_j)`, i.e. `H_n G H_m` entry by entry (the dense
    /// counterpart of [`KernelMatrix::centered`]'s products, which apply `H` to the vectors).
    pub fn center_in_place(&self, g: ArrayViewMut2<'_, f64>) -> Result<()> {
        self.check_matrix(g.dim())?;
        center_entries(g, &self.row_means, &self.col_means, self.grand_mean);
        Ok(())
    }

    /// Centres the block `G[rows, cols]` of the matrix these means were taken from, in place,
    /// with the arithmetic of [`Centering::center_in_place`] (so every entry of a centred `G` is
    /// the same function of its un-centred value, stored or evaluated block by block); the
    /// indices must be valid.
    fn correct(&self, block: ArrayViewMut2<'_, f64>, rows: &[usize], cols: &[usize]) {
        let r: Vec<f64> = rows.iter().map(|&i| self.row_means[i]).collect();
        let c: Vec<f64> = cols.iter().map(|&j| self.col_means[j]).collect();
        center_entries(block, &r, &c, self.grand_mean);
    }

    /// Centres kernel values of new row samples against the training columns `cols`
    /// (`new × |cols|`), in place: `k_aj + ((g − r'_a) − c_j)`, where `r'_a` is new sample `a`'s
    /// own mean over all training columns (out-of-sample rows of `H_n G H_m`).
    pub fn center_new_rows(&self, block: ArrayViewMut2<'_, f64>, own_means: &[f64], cols: &[usize]) -> Result<()> {
        self.check_block(block.dim(), &[], cols)?;
        self.check_own(own_means.len(), block.nrows(), "row")?;
        let c: Vec<f64> = cols.iter().map(|&j| self.col_means[j]).collect();
        center_entries(block, own_means, &c, self.grand_mean);
        Ok(())
    }

    /// Centres kernel values of the training rows `rows` against new column samples
    /// (`|rows| × new`), in place: `k_ib + ((g − r_i) − c'_b)`, where `c'_b` is new sample `b`'s
    /// own mean over all training rows (out-of-sample columns of `H_n G H_m`).
    pub fn center_new_cols(&self, block: ArrayViewMut2<'_, f64>, rows: &[usize], own_means: &[f64]) -> Result<()> {
        self.check_block(block.dim(), rows, &[])?;
        self.check_own(own_means.len(), block.ncols(), "column")?;
        let r: Vec<f64> = rows.iter().map(|&i| self.row_means[i]).collect();
        center_entries(block, &r, own_means, self.grand_mean);
        Ok(())
    }

    /// Checks that a whole matrix of shape `dim` is the one these means were taken from.
    fn check_matrix(&self, dim: (usize, usize)) -> Result<()> {
        if dim != (self.row_means.len(), self.col_means.len()) {
            return Err(KernelError::InvalidStats {
                reason: format!(
                    "centring means of a {} x {} matrix applied to a {} x {} matrix",
                    self.row_means.len(),
                    self.col_means.len(),
                    dim.0,
                    dim.1
                ),
            });
        }
        Ok(())
    }

    /// Checks a block's shape against its index lists (an empty list is not checked) and the
    /// indices against the training sizes.
    fn check_block(&self, dim: (usize, usize), rows: &[usize], cols: &[usize]) -> Result<()> {
        let bad = |what: &str, len: usize, want: usize| KernelError::InvalidStats {
            reason: format!("a block with {len} {what}s centred with {want} {what} indices"),
        };
        if !rows.is_empty() && dim.0 != rows.len() {
            return Err(bad("row", dim.0, rows.len()));
        }
        if !cols.is_empty() && dim.1 != cols.len() {
            return Err(bad("column", dim.1, cols.len()));
        }
        check_indices("row", rows, self.row_means.len())?;
        check_indices("column", cols, self.col_means.len())?;
        Ok(())
    }

    fn check_own(&self, len: usize, want: usize, what: &str) -> Result<()> {
        if len != want {
            return Err(KernelError::InvalidStats {
                reason: format!("{len} own means for a block of {want} new {what}s"),
            });
        }
        Ok(())
    }

    /// `H_n G H_m` of a stored matrix, in place; returns the means (for out-of-sample rows and
    /// columns, which are centred with the training means).
    pub fn center_dense(g: &mut Array2<f64>) -> Result<Centering> {
        let c = Centering::of_dense(g.view());
        c.center_in_place(g.view_mut())?;
        Ok(c)
    }

    /// [`Centering::center_dense`] of a matrix stored in either precision: the means summed in
    /// `f64` (the grand mean as the mean of the row means), the entries updated in `f64` and
    /// rounded back.
    pub fn center_stored(g: &mut StoredMatrix) -> Result<Centering> {
        let c = Centering::from_means(g.row_means(), g.col_means());
        c.center_stored_in_place(g)?;
        Ok(c)
    }

    /// [`Centering::center_in_place`] on a matrix stored in either precision.
    pub fn center_stored_in_place(&self, g: &mut StoredMatrix) -> Result<()> {
        self.check_matrix(g.dim())?;
        g.update_rows(|i, row| {
            center_entries(
                row.insert_axis(Axis(0)),
                &self.row_means[i..=i],
                &self.col_means,
                self.grand_mean,
            );
        });
        Ok(())
    }
}

/// `b_ij ← b_ij + ((g − r_i) − c_j)`: the one arithmetic of both-sided centring.
fn center_entries(mut block: ArrayViewMut2<'_, f64>, r: &[f64], c: &[f64], grand_mean: f64) {
    for (mut row, &ri) in block.outer_iter_mut().zip(r) {
        let shift = grand_mean - ri;
        row.iter_mut().zip(c).for_each(|(v, &cj)| *v += shift - cj);
    }
}

/// Everything a matrix-free `G` holds beyond its samples and kernel: the SNE normalisers and
/// the centring means, each computed by a pass over `G`. Saved with a fitted model, it lets a
/// reloaded copy skip those passes and evaluate exactly the same entries (a pass in another
/// representation sums in another order and differs in the last bits).
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct KernelStats {
    /// `log S_i` of the SNE kernel, `None` for other kernels.
    pub log_normalizers: Option<Vec<f64>>,
    /// The centring means, `None` when `G` is not centred.
    pub centering: Option<Centering>,
}

/// The kernel matrix `G ∈ R^{n×m}`, `G_ij = k(x_i, z_j)`, as an operator.
///
/// Rows index X, columns index Z. Three representations, chosen at construction:
///
/// * **rank one plus sparse** (sparse inputs, see below): exact, `O(nnz)` memory;
/// * **stored**: when `n · m` values fit the [`MemoryBudget`] (default [`MemoryBudget::auto`]),
///   `G` is evaluated once (GEMM for the inner products, a vectorised `exp`, the SNE
///   normalisation fused into the same pass, all cores) and products are GEMMs;
/// * **blocked**: beyond the budget, products `G V` and `Gᵀ U` are computed block by block
///   with bounded memory (about `BLOCK_ENTRIES` entries per thread), never materialised.
///
/// [`MatrixBlocks::block`] gives any sub-block in every representation.
///
/// The kernel is an [`AnyKernel`]: a built-in [`Kernel`] or a user's
/// [`crate::KernelFunction`] (`KernelMatrix::new(x, z, Arc::new(my_fn))`), evaluated by the
/// same code in the stored and blocked representations (the function fills each block the
/// evaluator asks for, in blocks sized from the memory budget: see the trait). A user's function
/// never gets the rank-one-plus-sparse form or GEMM identities, and its errors (a failure, a
/// non-finite value, a wrong shape) are [`KernelError::KernelFunction`] when they occur while
/// building or blocking `G`, and [`ksvd_linalg::LinalgError::OperatorFailed`] naming the
/// function and the problem when they occur inside a product.
///
/// For sparse X and Z, and the linear, polynomial, RBF and SNE kernels, `G` is
/// stored exactly as a rank-one term plus a sparse correction on the nonzeros of `X Zᵀ`, so
/// nothing of size `n × m` is ever formed (for a graph adjacency `A` with `x_i` = row `i` and
/// `z_j` = column `j`, `X Zᵀ = A A`).
///
/// The SNE row normalisers `S_i = Σ_j exp(−‖x_i − z_j‖²/γ²)` are computed exactly at
/// construction (in the log domain): from the nonzeros of `X Zᵀ` for sparse inputs, by one
/// blocked pass otherwise.
///
/// ```
/// use ksvd_kernels::{Kernel, KernelMatrix, Samples};
/// use ksvd_linalg::LinearOperator;
/// use ndarray::{array, Array2};
///
/// let x = Samples::dense(array![[0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])?;
/// let z = Samples::dense(array![[0.0, 0.0], [2.0, 1.0]])?;
/// let g = KernelMatrix::new(x, z, Kernel::Sne { gamma: 1.0 })?;
/// let row_sums = g.apply(Array2::ones((2, 1)).view())?;
/// assert!(row_sums.iter().all(|s| (s - 1.0).abs() < 1e-12));
/// # Ok::<(), ksvd_kernels::KernelError>(())
/// ```
#[derive(Debug, Clone)]
pub struct KernelMatrix {
    x: Samples,
    z: Samples,
    kernel: AnyKernel,
    /// Kernel entries evaluated at once by one thread ([`BLOCK_ENTRIES`] for a built-in kernel,
    /// [`custom_block_entries`] for a user's function).
    block_entries: usize,
    nx: Vec<f64>,
    nz: Vec<f64>,
    xt: Option<CsrMatrix>,
    zt: Option<CsrMatrix>,
    log_norm: Option<Vec<f64>>,
    repr: Repr,
    centering: Option<Centering>,
    /// The precision entries are evaluated and multiplied in where they are dense: the stored
    /// entries, and the blocks a matrix-free product evaluates ([`KernelMatrix::precision`]).
    precision: Precision,
}

fn rows_per_block(entries: usize, ncols: usize) -> usize {
    (entries / ncols.max(1)).max(1)
}

/// Values below this magnitude are stored as exact zeros (they would be subnormal soon).
const FLUSH: f64 = 1e-200;

/// Positions of every index of `idx` within `0..len` (several when an index repeats).
struct PositionMap {
    first: Vec<usize>,
    extra: Vec<Vec<usize>>,
}

impl PositionMap {
    #[inline]
    fn get(&self, j: usize) -> impl Iterator<Item = &usize> {
        let f = &self.first[j];
        let more: &[usize] = if *f == usize::MAX || self.extra.is_empty() {
            &[]
        } else {
            &self.extra[j]
        };
        std::iter::once(f).filter(|p| **p != usize::MAX).chain(more.iter())
    }
}

fn position_map(idx: &[usize], len: usize) -> PositionMap {
    let mut first = vec![usize::MAX; len];
    let mut extra: Vec<Vec<usize>> = Vec::new();
    for (b, &j) in idx.iter().enumerate() {
        if first[j] == usize::MAX {
            first[j] = b;
        } else {
            if extra.is_empty() {
                extra = vec![Vec::new(); len];
            }
            extra[j].push(b);
        }
    }
    PositionMap { first, extra }
}

/// The exponent of an RBF, SNE or Laplacian kernel value from the inner product `v`:
/// `−d/γ^p − shift`, `d` the squared distance `‖x‖² + ‖z‖² − 2 v` clamped at 0 (`squared`) or
/// its root.
#[inline]
fn log_kernel(v: f64, nxi: f64, nzj: f64, shift: f64, inv_g: f64, squared: bool) -> f64 {
    let d = nxi + nzj - 2.0 * v;
    let d2 = if d > 0.0 { d } else { 0.0 };
    let t = if squared { -d2 * inv_g } else { -d2.sqrt() * inv_g };
    t - shift
}

#[inline]
fn flush(v: f64) -> f64 {
    if v.abs() < FLUSH {
        0.0
    } else {
        v
    }
}

/// Zeroes entries below `1e-150` times the largest magnitude.
fn flush_relative(v: &mut [f64]) {
    let max = v.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    let cut = max * 1e-100;
    v.iter_mut().filter(|x| x.abs() < cut).for_each(|x| *x = 0.0);
}

/// `exp` of every entry of a row in its own type (contiguous rows use the vectorised slice
/// routine), then [`flush`].
fn exp_flush_row<T: Element>(mut row: ndarray::ArrayViewMut1<'_, T>) {
    match row.as_slice_mut() {
        Some(s) => T::exp_in_place(s),
        None => row.mapv_inplace(T::exp),
    }
    row.mapv_inplace(|v| T::from_f64(flush(v.to_f64())));
}

/// The stored `G` of a [`KernelMatrix`], evaluated in stages ([`StagedFill`]): inner products
/// (a block at a time) and exponents in `f64`, then, row by row, `exp` and the SNE row
/// normalisation in the stored type (eight or sixteen `f32` lanes where the storage is `f32`).
/// The SNE row sums are accumulated in `f64` either way.
struct Evaluation<'a> {
    matrix: &'a KernelMatrix,
    all_cols: Vec<usize>,
}

/// What a row's `f64` stage leaves for its stored-type stage.
enum Stage {
    /// Final values.
    Done,
    /// Exponents, whose `exp` is still to be taken.
    Exponents,
    /// SNE: `t_j − t_max`, and `t_max`.
    Sne(f64),
}

impl StagedFill for Evaluation<'_> {
    type Prep = Stage;
    /// SNE: the row's `log S_i`.
    type Out = Option<f64>;
    type Error = KernelError;

    fn block(&self, r0: usize, p: ArrayViewMut2<'_, f64>) -> Result<()> {
        let g = self.matrix;
        let rows: Vec<usize> = (r0..r0 + p.nrows()).collect();
        match &g.kernel {
            AnyKernel::Custom(_) => g.custom_block_into(p, &rows, &self.all_cols),
            AnyKernel::Builtin(_) => {
                inner_block_into(p, &g.x, &rows, &g.z, g.zt.as_ref(), &self.all_cols);
                Ok(())
            }
        }
    }

    fn row_f64(&self, i: usize, row: &mut [f64]) -> Stage {
        let g = self.matrix;
        match g.kernel {
            AnyKernel::Custom(_) => Stage::Done,
            AnyKernel::Builtin(Kernel::Sne { gamma }) => {
                Stage::Sne(sne_exponents(row, g.nx[i], &g.nz, 1.0 / (gamma * gamma)))
            }
            AnyKernel::Builtin(_) => {
                let Some((inv_g, squared)) =
                    g.exponent_form(ndarray::ArrayViewMut1::from(&mut *row).insert_axis(Axis(0)))
                else {
                    return Stage::Done;
                };
                let (nxi, shift) = (g.nx[i], g.log_norm.as_deref().map_or(0.0, |l| l[i]));
                exponent_row(row, nxi, &g.nz, shift, inv_g, squared);
                Stage::Exponents
            }
        }
    }

    fn row_stored<T: Element>(&self, _: usize, row: &mut [T], stage: Stage) -> Option<f64> {
        match stage {
            Stage::Done => None,
            Stage::Exponents => {
                exp_flush_row(ndarray::ArrayViewMut1::from(row));
                None
            }
            Stage::Sne(top) => Some(top + sne_normalise(row).ln()),
        }
    }
}

/// One SNE row from its inner products: `row[j] ← exp(t_j − t_max)` with
/// `t_j = −max(‖x_i‖² + ‖z_j‖² − 2 row[j], 0)/γ²`; returns `(t_max, Σ_j row[j])`, so that
/// `log S_i = t_max + ln Σ`. Plain slice loops with four accumulators, so that the distance, the
/// maximum and the sum vectorise (this pass touches every entry of `G`). The two stages
/// ([`sne_exponents`], [`exp_sum`]) run separately in the evaluations; tests check them together.
#[cfg(test)]
fn sne_row(row: &mut [f64], nxi: f64, nz: &[f64], inv_g2: f64) -> (f64, f64) {
    let top = sne_exponents(row, nxi, nz, inv_g2);
    (top, exp_sum(row))
}

/// Runs `$body` (row loops over `f64` lanes) compiled for AVX2 where the CPU has it (checked
/// at run time; the crate is built for baseline x86-64, whose SSE2 has two lanes). Only the
/// vector width changes: the same operations in the same order (no fused multiply-adds), so
/// the results are bit for bit those of the baseline build.
macro_rules! with_avx2 {
    ($(#[$meta:meta])* fn $name:ident $(<$t:ident: $bound:path>)?($($arg:ident: $ty:ty),*) -> $ret:ty $body:block) => {
        $(#[$meta])*
        fn $name $(<$t: $bound>)?($($arg: $ty),*) -> $ret {
            #[inline(always)]
            fn body $(<$t: $bound>)?($($arg: $ty),*) -> $ret $body
            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx2")]
            unsafe fn avx2 $(<$t: $bound>)?($($arg: $ty),*) -> $ret {
                body $(::<$t>)?($($arg),*)
            }
            #[cfg(target_arch = "x86_64")]
            {
                if std::arch::is_x86_feature_detected!("avx2") {
                    // SAFETY: the CPU supports the feature the function is compiled for (checked above).
                    return unsafe { avx2 $(::<$t>)?($($arg),*) };
                }
            }
            body $(::<$t>)?($($arg),*)
        }
    };
}

with_avx2! {
/// [`log_kernel`] over row `i` of `G`: `row[j]` (an inner product) becomes the exponent of
/// `k(x_i, z_j)`, with `nz[j] = ‖z_j‖²`.
fn exponent_row(row: &mut [f64], nxi: f64, nz: &[f64], shift: f64, inv_g: f64, squared: bool) -> () {
    let n = row.len().min(nz.len());
    let (row, nz) = (&mut row[..n], &nz[..n]);
    // One loop per form, so that each vectorises without a branch.
    if squared {
        row.iter_mut().zip(nz).for_each(|(v, &nzj)| *v = log_kernel(*v, nxi, nzj, shift, inv_g, true));
    } else {
        row.iter_mut().zip(nz).for_each(|(v, &nzj)| *v = log_kernel(*v, nxi, nzj, shift, inv_g, false));
    }
}
}

with_avx2! {
/// [`log_kernel`] over column `j` of `G` (a row of a transposed block): `col[i]` becomes the
/// exponent of `k(x_i, z_j)`, with `nx[i] = ‖x_i‖²` and `shifts[i]` the row's `log S_i`.
fn exponent_col(col: &mut [f64], nx: &[f64], nzj: f64, shifts: &[f64], inv_g: f64, squared: bool) -> () {
    let n = col.len().min(nx.len()).min(shifts.len());
    let (col, nx, shifts) = (&mut col[..n], &nx[..n], &shifts[..n]);
    if squared {
        for ((v, &nxi), &sh) in col.iter_mut().zip(nx).zip(shifts) {
            *v = log_kernel(*v, nxi, nzj, sh, inv_g, true);
        }
    } else {
        for ((v, &nxi), &sh) in col.iter_mut().zip(nx).zip(shifts) {
            *v = log_kernel(*v, nxi, nzj, sh, inv_g, false);
        }
    }
}
}

with_avx2! {
/// The first stage of [`sne_row`]: `row[j] ← t_j − t_max`; returns `t_max`.
fn sne_exponents(row: &mut [f64], nxi: f64, nz: &[f64], inv_g2: f64) -> f64 {
    let top = sne_exponents_unshifted(row, nxi, nz, inv_g2);
    row.iter_mut().for_each(|v| *v -= top);
    top
}
}

/// [`sne_exponents`] before the shift: `row[j] ← t_j`; returns `t_max`.
#[inline(always)]
fn sne_exponents_unshifted(row: &mut [f64], nxi: f64, nz: &[f64], inv_g2: f64) -> f64 {
    let n = row.len().min(nz.len());
    let (row, nz) = (&mut row[..n], &nz[..n]);
    let mut mx = [f64::NEG_INFINITY; 4];
    let mut rc = row.chunks_exact_mut(4);
    let mut zc = nz.chunks_exact(4);
    for (r, z) in (&mut rc).zip(&mut zc) {
        for k in 0..4 {
            let d = nxi + z[k] - 2.0 * r[k];
            let t = -(if d > 0.0 { d } else { 0.0 }) * inv_g2;
            r[k] = t;
            mx[k] = if t > mx[k] { t } else { mx[k] };
        }
    }
    for (r, &z) in rc.into_remainder().iter_mut().zip(zc.remainder()) {
        let d = nxi + z - 2.0 * *r;
        *r = -(if d > 0.0 { d } else { 0.0 }) * inv_g2;
        mx[0] = if *r > mx[0] { *r } else { mx[0] };
    }
    mx.iter().fold(f64::NEG_INFINITY, |a, &b| if b > a { b } else { a })
}

with_avx2! {
/// The `f32` normaliser of an SNE row ([`sne_log_norm`]): `out[j] ← t_j − t_max` rounded once
/// (the shift and the rounding in one pass), their `exp` and the sum in `f64`; returns
/// `log S_i`.
fn sne_log_norm_f32(row: &mut [f64], nxi: f64, nz: &[f64], inv_g2: f64, out: &mut [f32]) -> f64 {
    let top = sne_exponents_unshifted(row, nxi, nz, inv_g2);
    let n = row.len().min(out.len());
    let out = &mut out[..n];
    out.iter_mut().zip(&row[..n]).for_each(|(o, &v)| *o = <f32 as Element>::from_f64(v - top));
    top + exp_sum(out).ln()
}
}

/// Largest sample dimension for which `f32` SNE normalisers are summed from the differences
/// ([`DirectSneF32`]): `2d` operations per entry, against an `f64` GEMM whose `n · m`
/// inner products are written and read again.
const DIRECT_MAX_DIM: usize = 32;

/// Columns per tile of [`sne_direct_exponents`]: the row's tile and `Zᵀ`'s stay in the first
/// cache level while the features pass over them, four at a time.
const DIRECT_TILE: usize = 1024;

/// The arithmetic of [`sne_direct_exponents`]: `f32`, or `f64` for the rows `f32` cannot resolve.
trait DirectFloat:
    Copy
    + PartialOrd
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Neg<Output = Self>
{
    const ZERO: Self;
    const NEG_INFINITY: Self;
}

impl DirectFloat for f32 {
    const ZERO: f32 = 0.0;
    const NEG_INFINITY: f32 = f32::NEG_INFINITY;
}

impl DirectFloat for f64 {
    const ZERO: f64 = 0.0;
    const NEG_INFINITY: f64 = f64::NEG_INFINITY;
}

with_avx2! {
/// The exponents of an SNE row from the samples: `out[j] ← t_j = −‖x_i − z_j‖²/γ²` summed
/// feature by feature from the differences (no cancellation, as `‖x_i‖² + ‖z_j‖² − 2⟨x_i, z_j⟩`
/// has); returns `t_max`. `zt` holds `Zᵀ` (`xi.len()` rows of `m = out.len()` entries). In `f32`
/// for every row of [`DirectSneF32`], in `f64` for the rows whose largest exponent is too far below
/// zero for `f32` (every entry's error grows with `|t_j|`, not with `|t_j − t_max|`).
fn sne_direct_exponents<T: DirectFloat>(xi: &[T], zt: &[T], inv_g2: T, out: &mut [T]) -> T {
    let m = out.len();
    let mut mx = [T::NEG_INFINITY; 8];
    let mut j0 = 0;
    while j0 < m {
        let len = DIRECT_TILE.min(m - j0);
        let tile = &mut out[j0..j0 + len];
        tile.fill(T::ZERO);
        let z = |k: usize| &zt[k * m + j0..k * m + j0 + len];
        let mut k = 0;
        // Four features per pass over the tile (the same sums, in the same order, as one).
        while k + 4 <= xi.len() {
            let (x0, x1, x2, x3) = (xi[k], xi[k + 1], xi[k + 2], xi[k + 3]);
            for ((((o, &a), &b), &c), &d) in tile.iter_mut().zip(z(k)).zip(z(k + 1)).zip(z(k + 2)).zip(z(k + 3)) {
                let (a, b, c, d) = (x0 - a, x1 - b, x2 - c, x3 - d);
                *o = (((*o + a * a) + b * b) + c * c) + d * d;
            }
            k += 4;
        }
        for (kk, &xk) in xi.iter().enumerate().skip(k) {
            tile.iter_mut().zip(z(kk)).for_each(|(o, &zv)| {
                let d = xk - zv;
                *o = *o + d * d;
            });
        }
        let mut chunks = tile.chunks_exact_mut(8);
        for c in &mut chunks {
            for l in 0..8 {
                let t = -c[l] * inv_g2;
                c[l] = t;
                mx[l] = if t > mx[l] { t } else { mx[l] };
            }
        }
        for v in chunks.into_remainder() {
            *v = -*v * inv_g2;
            mx[0] = if *v > mx[0] { *v } else { mx[0] };
        }
        j0 += len;
    }
    mx.iter().fold(T::NEG_INFINITY, |a, &b| if b > a { b } else { a })
}
}

with_avx2! {
/// `out[j] ← exp(out[j] − top)` in `f32`; returns the sum (in `f64`).
fn shifted_exp_sum_f32(out: &mut [f32], top: f32) -> f64 {
    out.iter_mut().for_each(|v| *v -= top);
    exp_sum(out)
}
}

with_avx2! {
/// The stored-type stage of an SNE row: `exp` ([`exp_sum`]), then every entry divided by the
/// row sum (flushed); returns the sum.
fn sne_normalise<T: Element>(row: &mut [T]) -> f64 {
    let sum = exp_sum(row);
    divide_by_sum(row, sum);
    sum
}
}

with_avx2! {
/// Every entry of an SNE row divided by the row's sum (flushed), in its stored type.
fn divide_by_sum<T: Element>(row: &mut [T], sum: f64) -> () {
    let inv = 1.0 / sum;
    row.iter_mut().for_each(|v| *v = T::from_f64(flush(v.to_f64() * inv)));
}
}

/// The second stage of [`sne_row`], in the stored type: `row[j] ← exp(row[j])`; returns their
/// sum, accumulated in `f64` with four accumulators.
#[inline(always)]
fn exp_sum<T: Element>(row: &mut [T]) -> f64 {
    T::exp_in_place(row);
    let mut acc = [0.0f64; 4];
    let mut chunks = row.chunks_exact(4);
    for c in &mut chunks {
        for k in 0..4 {
            acc[k] += c[k].to_f64();
        }
    }
    let tail: f64 = chunks.remainder().iter().map(|v| v.to_f64()).sum();
    (acc[0] + acc[1]) + (acc[2] + acc[3]) + tail
}

/// `log S_i` of one row from its inner products, as a matrix in `T` evaluates it: the
/// exponents in `f64` ([`sne_exponents`]), their `exp` in `T` (through `buf` for `f32`; for
/// `f64` exactly [`sne_row`]) and the sum in `f64`. The row is overwritten.
fn sne_log_norm<T: Element>(
    row: ndarray::ArrayViewMut1<'_, f64>,
    nxi: f64,
    nz: &[f64],
    inv_g2: f64,
    buf: &mut Vec<T>,
) -> f64 {
    #[allow(clippy::ptr_arg)] // `buf` is resized once seen as `Vec<f32>`
    fn on_slice<T: Element>(row: &mut [f64], nxi: f64, nz: &[f64], inv_g2: f64, buf: &mut Vec<T>) -> f64 {
        match (buf as &mut dyn std::any::Any).downcast_mut::<Vec<f32>>() {
            Some(out) => {
                out.resize(row.len(), 0.0);
                sne_log_norm_f32(row, nxi, nz, inv_g2, out)
            }
            None => {
                let top = sne_exponents(row, nxi, nz, inv_g2);
                top + exp_sum(row).ln()
            }
        }
    }
    with_slice(row, |s| on_slice(s, nxi, nz, inv_g2, buf))
}

/// Rows whose largest exponent `t_max` lies below `−DIRECT_TOP_LIMIT` are evaluated in `f64`
/// ([`sne_direct_exponents`] in `f64`): the `f32` exponents carry an error of a few `ε_f32 |t_j|`, so
/// the entries near the row's largest stay within about `10 ε_f32` of the `f64` route's.
const DIRECT_TOP_LIMIT: f32 = 1.0;

/// `f32` SNE rows between dense samples of small dimension, from the differences
/// ([`sne_direct_exponents`] in `f32`): the samples moved by the mean of `Z` (distances do not change)
/// and rounded once to `f32`, so that rounding is relative to their spread, not their offset.
struct DirectSneF32<'a> {
    x: ArrayView2<'a, f64>,
    centre: Array1<f64>,
    /// `Zᵀ`, moved, in `f64` and rounded to `f32`.
    zt64: Vec<f64>,
    zt: Vec<f32>,
    /// `1/γ²`.
    inv_g2: f64,
}

/// A worker's buffers: the row's sample (both types) and `f64` exponents.
#[derive(Default)]
struct DirectScratch {
    xi: Vec<f32>,
    xi64: Vec<f64>,
    t64: Vec<f64>,
}

impl<'a> DirectSneF32<'a> {
    /// `None` unless both sides are dense with at most [`DIRECT_MAX_DIM`] features.
    fn new(x: &'a Samples, z: &Samples, gamma: f64) -> Option<Self> {
        let (Samples::Dense(x), Samples::Dense(z)) = (x, z) else {
            return None;
        };
        if x.ncols() > DIRECT_MAX_DIM || x.ncols() != z.ncols() {
            return None;
        }
        let centre = z.mean_axis(Axis(0)).unwrap_or_else(|| Array1::zeros(z.ncols()));
        let zt64: Vec<f64> = z
            .t()
            .outer_iter()
            .zip(&centre)
            .flat_map(|(col, &c)| col.iter().map(move |&v| v - c).collect::<Vec<_>>())
            .collect();
        let zt = zt64.iter().map(|&v| <f32 as Element>::from_f64(v)).collect();
        Some(DirectSneF32 {
            x: x.view(),
            centre,
            zt64,
            zt,
            inv_g2: 1.0 / (gamma * gamma),
        })
    }

    /// Row `i` in `out`: `exp(t_j − t_max)` in `f32`; returns `t_max` and the sum.
    fn row(&self, i: usize, scratch: &mut DirectScratch, out: &mut [f32]) -> (f64, f64) {
        let DirectScratch { xi, xi64, t64 } = scratch;
        xi64.clear();
        xi64.extend(self.x.row(i).iter().zip(&self.centre).map(|(&v, &c)| v - c));
        xi.clear();
        xi.extend(xi64.iter().map(|&v| <f32 as Element>::from_f64(v)));
        let top = sne_direct_exponents(xi, &self.zt, <f32 as Element>::from_f64(self.inv_g2), out);
        if top >= -DIRECT_TOP_LIMIT {
            return (f64::from(top), shifted_exp_sum_f32(out, top));
        }
        t64.resize(out.len(), 0.0);
        let top = sne_direct_exponents(xi64, &self.zt64, self.inv_g2, t64);
        out.iter_mut()
            .zip(t64.iter())
            .for_each(|(o, &t)| *o = <f32 as Element>::from_f64(t - top));
        (top, shifted_exp_sum_f32(out, 0.0))
    }

    /// `log S_i` of every row.
    fn log_normalizers(&self) -> Result<Vec<f64>> {
        let m = self.zt.len() / self.centre.len().max(1);
        let ln: Vec<f64> = (0..self.x.nrows())
            .into_par_iter()
            .map_init(
                || (DirectScratch::default(), vec![0.0f32; m]),
                |(scratch, out), i| {
                    let (top, sum) = self.row(i, scratch, out);
                    top + sum.ln()
                },
            )
            .collect();
        finite_normalizers(ln)
    }

    /// Every row of the stored matrix `g` (`n × m`, `f32`), divided by its sum; returns `log S_i`
    /// of every row.
    fn fill(&self, g: &mut Array2<f32>) -> Result<Vec<f64>> {
        let ln: Vec<f64> = g
            .outer_iter_mut()
            .into_par_iter()
            .enumerate()
            .map_init(DirectScratch::default, |scratch, (i, row)| {
                with_slice(row, |r| {
                    let (top, sum) = self.row(i, scratch, r);
                    divide_by_sum(r, sum);
                    top + sum.ln()
                })
            })
            .collect();
        finite_normalizers(ln)
    }
}

/// The normalisers, or the first row whose sum vanished or overflowed.
fn finite_normalizers(ln: Vec<f64>) -> Result<Vec<f64>> {
    match ln.iter().position(|v| !v.is_finite()) {
        Some(row) => Err(KernelError::DegenerateNormalizer { row }),
        None => Ok(ln),
    }
}

/// `log Σ exp(v)` over a slice, stable.
fn log_sum_exp(v: impl Iterator<Item = f64> + Clone) -> f64 {
    let m = v.clone().fold(f64::NEG_INFINITY, f64::max);
    if m == f64::NEG_INFINITY {
        return m;
    }
    m + v.map(|t| (t - m).exp()).sum::<f64>().ln()
}

impl KernelMatrix {
    /// The kernel matrix of `kernel` between the rows of `x` (n samples) and of `z` (m samples),
    /// stored when it fits the default [`MemoryBudget::auto`].
    pub fn new(x: Samples, z: Samples, kernel: impl Into<AnyKernel>) -> Result<Self> {
        Self::build(x, z, kernel.into(), Some(MemoryBudget::auto()), true, Precision::F64)
    }

    /// As [`KernelMatrix::new`], storing `G` only if its `n · m` values fit `budget`.
    pub fn with_budget(x: Samples, z: Samples, kernel: impl Into<AnyKernel>, budget: MemoryBudget) -> Result<Self> {
        Self::build(x, z, kernel.into(), Some(budget), true, Precision::F64)
    }

    /// As [`KernelMatrix::with_budget`], storing `G`'s entries in `precision` (when its
    /// `n · m` entries of that size fit `budget`). Entries are evaluated in `f64` and rounded
    /// once when stored; the SNE normalisers and centring means stay `f64`. Products with a
    /// stored `f32` matrix run in `f32` ([`StoredMatrix::mul_into`]); a matrix-free `G` (beyond
    /// the budget) evaluates and multiplies its blocks in `precision` too
    /// ([`KernelMatrix::precision`]); the rank-one-plus-sparse form of sparse inputs is always
    /// `f64`.
    pub fn with_budget_in(
        x: Samples,
        z: Samples,
        kernel: impl Into<AnyKernel>,
        budget: MemoryBudget,
        precision: Precision,
    ) -> Result<Self> {
        Self::build(x, z, kernel.into(), Some(budget), true, precision)
    }

    /// As [`KernelMatrix::new`], never storing `G` (always matrix-free; sparse inputs still use
    /// the exact rank-one-plus-sparse form).
    pub fn matrix_free(x: Samples, z: Samples, kernel: impl Into<AnyKernel>) -> Result<Self> {
        Self::build(x, z, kernel.into(), None, true, Precision::F64)
    }

    /// As [`KernelMatrix::matrix_free`], evaluating and multiplying the blocks of its products
    /// in `precision` ([`KernelMatrix::precision`]; the rank-one-plus-sparse form of sparse
    /// inputs stays `f64`).
    pub fn matrix_free_in(x: Samples, z: Samples, kernel: impl Into<AnyKernel>, precision: Precision) -> Result<Self> {
        Self::build(x, z, kernel.into(), None, true, precision)
    }

    /// A matrix-free `G` with the normalisers and centring of `stats` (from
    /// [`KernelMatrix::stats`] of the same samples and kernel) instead of passes over `G`.
    ///
    /// # Errors
    /// [`KernelError::InvalidStats`] when `stats` does not fit: normalisers given for a kernel
    /// other than SNE or missing for SNE, lengths that differ from the sample counts, or
    /// non-finite values.
    pub fn matrix_free_with_stats(
        x: Samples,
        z: Samples,
        kernel: impl Into<AnyKernel>,
        stats: KernelStats,
    ) -> Result<Self> {
        let kernel = kernel.into();
        let (n, m) = (x.len(), z.len());
        let bad = |reason: String| Err(KernelError::InvalidStats { reason });
        let finite = |v: &[f64]| v.iter().all(|a| a.is_finite());
        let sne = matches!(kernel, AnyKernel::Builtin(Kernel::Sne { .. }));
        match (&stats.log_normalizers, sne) {
            (Some(l), true) => {
                if l.len() != n || !finite(l) {
                    return bad(format!("{n} finite SNE normalisers expected, {} given", l.len()));
                }
            }
            (None, true) => return bad("the SNE kernel needs its row normalisers".into()),
            (Some(_), false) => return bad(format!("normalisers given for the {kernel} kernel (only SNE has them)")),
            (None, false) => {}
        }
        if let Some(c) = &stats.centering {
            if c.row_means.len() != n || c.col_means.len() != m {
                return bad(format!(
                    "centring means for {}x{}, the samples give {n}x{m}",
                    c.row_means.len(),
                    c.col_means.len()
                ));
            }
            if !finite(&c.row_means) || !finite(&c.col_means) || !c.grand_mean.is_finite() {
                return bad("centring means must be finite".into());
            }
        }
        let mut g = Self::build(x, z, kernel, None, false, Precision::F64)?;
        if g.log_norm.is_none() {
            g.log_norm = stats.log_normalizers;
        }
        g.centering = stats.centering;
        Ok(g)
    }

    /// The same matrix in `precision` ([`KernelMatrix::precision`]): stored entries rounded to
    /// `f32` or widened to `f64` (no memory budget is consulted: widening doubles the stored
    /// entries' memory), matrix-free products evaluated in it from now on; the normalisers and
    /// centring are kept as they are, and the rank-one-plus-sparse form of sparse inputs stays
    /// `f64`.
    pub fn into_precision(mut self, precision: Precision) -> Self {
        if let Repr::Stored { g, .. } = &mut self.repr {
            if g.precision() != precision {
                *g = g.to_precision(precision);
            }
        }
        self.precision = precision;
        self
    }

    /// The SNE normalisers and centring means (see [`KernelStats`]).
    pub fn stats(&self) -> KernelStats {
        KernelStats {
            log_normalizers: self.log_norm.clone(),
            centering: self.centering.clone(),
        }
    }

    fn build(
        x: Samples,
        z: Samples,
        kernel: AnyKernel,
        budget: Option<MemoryBudget>,
        normalize: bool,
        precision: Precision,
    ) -> Result<Self> {
        let mut g = Self::blocked(x, z, kernel, budget, precision)?;
        if let Some(p) = g.sparse_inner_products() {
            g.repr = g.rank_one_plus_sparse(p)?;
        }
        let store = budget.is_some_and(|b| b.fits(g.x.len().saturating_mul(g.z.len()), precision));
        if matches!(g.repr, Repr::Blocked) && store {
            let (stored, log_norm) = g.evaluate_all(precision)?;
            g.repr = Repr::Stored {
                g: stored,
                centred: false,
            };
            g.log_norm = log_norm;
        } else if let (Repr::Blocked, AnyKernel::Builtin(Kernel::Sne { gamma }), true) = (&g.repr, &g.kernel, normalize)
        {
            g.log_norm = Some(match precision {
                Precision::F64 => g.blocked_log_normalizers::<f64>(*gamma)?,
                Precision::F32 => g.blocked_log_normalizers::<f32>(*gamma)?,
            });
        }
        Ok(g)
    }

    /// The checked matrix every construction starts from: matrix-free blocks, no normalisers
    /// yet (`budget` only sizes a user kernel's blocks).
    fn blocked(
        x: Samples,
        z: Samples,
        kernel: AnyKernel,
        budget: Option<MemoryBudget>,
        precision: Precision,
    ) -> Result<Self> {
        kernel.validate()?;
        x.check_nonempty("x samples")?;
        z.check_nonempty("z samples")?;
        if x.dim() != z.dim() {
            return Err(KernelError::DimensionMismatch {
                x_dim: x.dim(),
                z_dim: z.dim(),
            });
        }
        let (nx, nz) = if kernel.builtin().is_some_and(Kernel::needs_norms) {
            (x.sq_norms(), z.sq_norms())
        } else {
            (vec![], vec![])
        };
        let (xt, zt) = match (&x, &z) {
            (Samples::Sparse(xs), Samples::Sparse(zs)) => (Some(xs.transpose()), Some(zs.transpose())),
            _ => (None, None),
        };
        let block_entries = match kernel {
            AnyKernel::Builtin(_) => BLOCK_ENTRIES,
            AnyKernel::Custom(_) => custom_block_entries(budget.unwrap_or_else(MemoryBudget::auto)),
        };
        Ok(KernelMatrix {
            x,
            z,
            kernel,
            block_entries,
            nx,
            nz,
            xt,
            zt,
            log_norm: None,
            repr: Repr::Blocked,
            centering: None,
            precision,
        })
    }

    /// The same matrix centred on both sides (section 2.2 of the paper):
    /// `G̃ = (I − 11ᵀ/n) G (I − 11ᵀ/m)`.
    ///
    /// A stored `G` is centred once, in place, entry by entry ([`Centering::center_dense`]:
    /// the same arithmetic as centring any stored matrix), and its products stay plain GEMMs.
    /// Otherwise `G̃` is not formed: one product with `G` and one with `Gᵀ` give the row and
    /// column means, and every product and block applies the centring. Centring a centred
    /// matrix returns it unchanged.
    pub fn centered(mut self) -> Result<Self> {
        if let Repr::Stored { g, centred } = &mut self.repr {
            if !*centred {
                self.centering = Some(Centering::center_stored(g)?);
                *centred = true;
            }
            return Ok(self);
        }
        self.centering = None;
        let (n, m) = (self.nrows(), self.ncols());
        let r = self.apply(Array2::from_elem((m, 1), 1.0 / m as f64).view())?;
        let c = self.apply_transpose(Array2::from_elem((n, 1), 1.0 / n as f64).view())?;
        let row_means: Vec<f64> = r.column(0).to_vec();
        let grand_mean = row_means.iter().sum::<f64>() / n as f64;
        self.centering = Some(Centering {
            row_means,
            col_means: c.column(0).to_vec(),
            grand_mean,
        });
        Ok(self)
    }

    /// These rows as rows of a larger matrix centred on both sides: `G̃_ij = G_ij − r_i − c_j +
    /// g` with each row's own mean `r_i` (a row's mean runs over the columns, all of which this
    /// matrix holds) and the column means `col_means` and grand mean `grand_mean` of the whole
    /// matrix, taken elsewhere (a distributed fit sums them over its row partitions). A stored
    /// `G` is centred in place with the arithmetic of [`KernelMatrix::centered`]; otherwise every
    /// product and block applies the centring.
    ///
    /// # Errors
    /// [`KernelError::InvalidStats`] unless `col_means` has one finite entry per column and
    /// `grand_mean` is finite; an already centred matrix is refused the same way.
    pub fn centered_with(mut self, col_means: Vec<f64>, grand_mean: f64) -> Result<Self> {
        let m = self.ncols();
        let bad = |reason: String| Err(KernelError::InvalidStats { reason });
        if col_means.len() != m {
            return bad(format!("{} column means given for {m} columns", col_means.len()));
        }
        if !col_means.iter().all(|c| c.is_finite()) || !grand_mean.is_finite() {
            return bad("centring means must be finite".into());
        }
        if self.is_centered() {
            return bad("the matrix is centred already".into());
        }
        if let Repr::Stored { g, centred } = &mut self.repr {
            let c = Centering {
                row_means: g.row_means(),
                col_means,
                grand_mean,
            };
            c.center_stored_in_place(g)?;
            *centred = true;
            self.centering = Some(c);
            return Ok(self);
        }
        let r = self.apply(Array2::from_elem((m, 1), 1.0 / m as f64).view())?;
        self.centering = Some(Centering {
            row_means: r.column(0).to_vec(),
            col_means,
            grand_mean,
        });
        Ok(self)
    }

    /// A copy with everything but the stored entries (samples, SNE normalisers, centring):
    /// products become matrix-free. Out-of-sample extensions need no more, and a fitted model
    /// should not hold a second copy of `G`.
    pub fn to_matrix_free(&self) -> KernelMatrix {
        KernelMatrix {
            x: self.x.clone(),
            z: self.z.clone(),
            kernel: self.kernel.clone(),
            block_entries: self.block_entries,
            nx: self.nx.clone(),
            nz: self.nz.clone(),
            xt: self.xt.clone(),
            zt: self.zt.clone(),
            log_norm: self.log_norm.clone(),
            repr: match &self.repr {
                Repr::Stored { .. } => Repr::Blocked,
                r => r.clone(),
            },
            centering: self.centering.clone(),
            precision: self.precision,
        }
    }

    /// Rows of one block of `ncols` columns (about `block_entries` entries).
    fn chunk_rows(&self, ncols: usize) -> usize {
        rows_per_block(self.block_entries, ncols)
    }

    /// The centring still to apply to the entries this representation holds: `None` when `G` is
    /// not centred or its stored entries were centred in place.
    fn correction(&self) -> Option<&Centering> {
        match self.repr {
            Repr::Stored { centred: true, .. } => None,
            _ => self.centering.as_ref(),
        }
    }

    /// Whether the matrix is centred.
    pub fn is_centered(&self) -> bool {
        self.centering.is_some()
    }
    /// The kernel: built-in or a user's function.
    pub fn kernel(&self) -> &AnyKernel {
        &self.kernel
    }
    /// The row samples X.
    pub fn x(&self) -> &Samples {
        &self.x
    }
    /// The column samples Z.
    pub fn z(&self) -> &Samples {
        &self.z
    }
    /// `log S_i` of the SNE kernel (`None` for other kernels).
    pub fn log_normalizers(&self) -> Option<&[f64]> {
        self.log_norm.as_deref()
    }
    /// Whether `G` is held as rank one plus sparse (sparse inputs), rather than dense blocks.
    pub fn is_rank_one_plus_sparse(&self) -> bool {
        matches!(self.repr, Repr::RankOnePlusSparse { .. })
    }
    /// Whether the whole `G` is stored in memory (centred in place when the matrix is centred).
    pub fn is_stored(&self) -> bool {
        matches!(self.repr, Repr::Stored { .. })
    }
    /// The precision of `G`'s entries and of the products with them: of its stored entries, or
    /// of the blocks a matrix-free `G` evaluates (inner products and exponents in `f64`, `exp`
    /// and the product in this precision; the SNE normalisers' sums and every result in `f64`),
    /// and of the kernel values of new samples ([`KernelMatrix::cross_rows`]). Blocks
    /// ([`MatrixBlocks::block`]) are the entries in this precision, returned as `f64` values.
    /// The rank-one-plus-sparse form of sparse inputs is `f64` whatever this says.
    pub fn precision(&self) -> Precision {
        match &self.repr {
            Repr::RankOnePlusSparse { .. } => Precision::F64,
            _ => self.precision,
        }
    }

    /// The precision of the stored entries (`None` when `G` is not stored; see
    /// [`KernelMatrix::precision`] for the others).
    pub fn stored_precision(&self) -> Option<Precision> {
        match &self.repr {
            Repr::Stored { g, .. } => Some(g.precision()),
            _ => None,
        }
    }
    /// Whether products re-evaluate kernel blocks (neither stored nor rank one plus sparse).
    pub fn is_matrix_free(&self) -> bool {
        matches!(self.repr, Repr::Blocked)
    }

    /// Evaluates every entry (row chunks in parallel): GEMM inner products and exponents in
    /// `f64`, then the vectorised `exp` (and for SNE the exact row normalisation) in the stored
    /// precision ([`Evaluation`]); for SNE, `log S_i` is returned.
    fn evaluate_all(&self, precision: Precision) -> Result<(StoredMatrix, Option<Vec<f64>>)> {
        let (n, m) = (self.x.len(), self.z.len());
        let mut g = StoredMatrix::zeros(n, m, precision);
        if let (StoredMatrix::F32(a), AnyKernel::Builtin(Kernel::Sne { gamma })) = (&mut g, &self.kernel) {
            if let Some(direct) = DirectSneF32::new(&self.x, &self.z, *gamma) {
                let log_norm = direct.fill(a)?;
                return Ok((g, Some(log_norm)));
            }
        }
        let threads = rayon::current_num_threads();
        let chunk = match self.kernel {
            AnyKernel::Builtin(_) => self.chunk_rows(m).max(16).min(n.div_ceil(4 * threads).max(1)),
            AnyKernel::Custom(_) => self.chunk_rows(m).min(n.div_ceil(threads).max(1)),
        };
        let sne = matches!(self.kernel, AnyKernel::Builtin(Kernel::Sne { .. }));
        let rows = g.fill_rows_staged(
            chunk,
            &Evaluation {
                matrix: self,
                all_cols: (0..m).collect(),
            },
        )?;
        if sne {
            let log_norm: Vec<f64> = rows.into_iter().map(|l| l.unwrap_or(f64::NAN)).collect();
            if let Some(row) = log_norm.iter().position(|v| !v.is_finite()) {
                return Err(KernelError::DegenerateNormalizer { row });
            }
            return Ok((g, Some(log_norm)));
        }
        Ok((g, None))
    }

    /// `X Zᵀ` as a sparse matrix when both inputs are sparse, the kernel allows it, and the
    /// product is sparse enough to be worth it.
    fn sparse_inner_products(&self) -> Option<CsrMatrix> {
        if !matches!(
            self.kernel,
            AnyKernel::Builtin(Kernel::Linear | Kernel::Polynomial { .. } | Kernel::Rbf { .. } | Kernel::Sne { .. })
        ) {
            return None;
        }
        let (Samples::Sparse(xs), Some(zt)) = (&self.x, &self.zt) else {
            return None;
        };
        let flops: usize = xs.indices().iter().map(|&k| zt.row(k).0.len()).sum();
        let (n, m) = (xs.nrows(), zt.ncols());
        if (flops as f64) > 0.3 * n as f64 * m as f64 || flops > 400_000_000 {
            return None;
        }
        xs.matmul_sparse(zt).ok()
    }

    fn rank_one_plus_sparse(&mut self, p: CsrMatrix) -> Result<Repr> {
        let (n, m) = (p.nrows(), p.ncols());
        let AnyKernel::Builtin(kernel) = self.kernel else {
            return Ok(Repr::Blocked);
        };
        let (a, e, c) = match kernel {
            Kernel::Linear => (vec![0.0; n], vec![0.0; m], p),
            Kernel::Polynomial { degree, offset } => {
                let base = offset.powi(degree as i32);
                let c = p.map_values(|v| (v + offset).powi(degree as i32) - base);
                (vec![base; n], vec![1.0; m], c)
            }
            Kernel::Rbf { gamma } | Kernel::Sne { gamma } => {
                let g2 = gamma * gamma;
                let shift = self.nz.iter().cloned().fold(f64::INFINITY, f64::min);
                let log_e: Vec<f64> = self.nz.iter().map(|&v| -(v - shift) / g2).collect();
                let log_norm = if matches!(kernel, Kernel::Sne { .. }) {
                    let lse_e = log_sum_exp(log_e.iter().cloned());
                    let ln: Vec<f64> = (0..n)
                        .into_par_iter()
                        .map(|i| {
                            let base = -(self.nx[i] + shift) / g2 + lse_e;
                            let (idx, val) = p.row(i);
                            let t = |k: usize| Kernel::log_rbf(gamma, val[k], self.nx[i], self.nz[idx[k]]);
                            let b = |k: usize| -(self.nx[i] + self.nz[idx[k]]) / g2;
                            let mx = (0..idx.len()).map(t).fold(base, f64::max);
                            let s: f64 = (base - mx).exp()
                                + (0..idx.len())
                                    .map(|k| (t(k) - mx).exp() - (b(k) - mx).exp())
                                    .sum::<f64>();
                            mx + s.ln()
                        })
                        .collect();
                    if let Some(row) = ln.iter().position(|v| !v.is_finite()) {
                        return Err(KernelError::DegenerateNormalizer { row });
                    }
                    Some(ln)
                } else {
                    None
                };
                let off = |i: usize| log_norm.as_ref().map_or(0.0, |l| l[i]);
                let mut a: Vec<f64> = (0..n).map(|i| (-(self.nx[i] + shift) / g2 - off(i)).exp()).collect();
                let mut e: Vec<f64> = log_e.iter().map(|v| v.exp()).collect();
                // Flush factors below 1e-150 of their maximum to zero so that products never
                // become subnormal (subnormal arithmetic is ~100x slower); the entries dropped are
                // below 1e-150 of the largest rank-one entry.
                flush_relative(&mut a);
                flush_relative(&mut e);
                let mut c = p;
                let rows: Vec<Vec<f64>> = (0..n)
                    .into_par_iter()
                    .map(|i| {
                        let (idx, val) = c.row(i);
                        idx.iter()
                            .zip(val)
                            .map(|(&j, &v)| {
                                flush((Kernel::log_rbf(gamma, v, self.nx[i], self.nz[j]) - off(i)).exp() - a[i] * e[j])
                            })
                            .collect()
                    })
                    .collect();
                let data: Vec<f64> = rows.into_iter().flatten().collect();
                c = CsrMatrix::try_new(n, m, c.indptr().to_vec(), c.indices().to_vec(), data)?;
                self.log_norm = log_norm;
                (a, e, c)
            }
            // No rank-one-plus-sparse form (`sparse_inner_products` excludes it): stay blocked.
            Kernel::Laplacian { .. } => return Ok(Repr::Blocked),
        };
        let ct = c.transpose();
        Ok(Repr::RankOnePlusSparse { a, e, c, ct })
    }

    /// `log S_i` of every row by one blocked pass: the exponents in `f64`, their `exp` in `T`
    /// (as the entries of a matrix in `T` are evaluated), the sums in `f64`.
    fn blocked_log_normalizers<T: Element>(&self, gamma: f64) -> Result<Vec<f64>> {
        let (n, m) = (self.x.len(), self.z.len());
        if T::PRECISION == Precision::F32 {
            if let Some(direct) = DirectSneF32::new(&self.x, &self.z, gamma) {
                return direct.log_normalizers();
            }
        }
        let all_cols: Vec<usize> = (0..m).collect();
        let chunk = self.chunk_rows(m);
        let starts: Vec<usize> = (0..n).step_by(chunk).collect();
        let dense_pair = matches!((&self.x, &self.z), (Samples::Dense(_), Samples::Dense(_)));
        let parts: Vec<Vec<f64>> = starts
            .into_par_iter()
            // Per worker: the row buffer of `f32` exponents and the block, reused (a fresh block
            // per chunk would be zeroed and faulted in every time).
            .map_init(
                || (Vec::<T>::new(), Array2::<f64>::zeros((0, 0))),
                |(buf, block), s0| {
                    let rows: Vec<usize> = (s0..(s0 + chunk).min(n)).collect();
                    if block.nrows() < rows.len() {
                        *block = Array2::zeros((chunk.min(n), m));
                    } else if !dense_pair {
                        // Inner products with a sparse side accumulate into zeros.
                        block.fill(0.0);
                    }
                    let mut p = block.slice_mut(ndarray::s![..rows.len(), ..]);
                    inner_block_into(p.view_mut(), &self.x, &rows, &self.z, self.zt.as_ref(), &all_cols);
                    let inv_g2 = 1.0 / (gamma * gamma);
                    p.outer_iter_mut()
                        .zip(&rows)
                        .map(|(prow, &i)| sne_log_norm(prow, self.nx[i], &self.nz, inv_g2, buf))
                        .collect()
                },
            )
            .collect();
        let ln: Vec<f64> = parts.into_iter().flatten().collect();
        if let Some(row) = ln.iter().position(|v| !v.is_finite()) {
            return Err(KernelError::DegenerateNormalizer { row });
        }
        Ok(ln)
    }

    /// `G[rows, cols]` of a user's kernel function into `out` (`|rows| × |cols|`, zeroed): the
    /// samples densified, one call, the shape and every value checked (positions reported in
    /// `G`'s indices).
    fn custom_block_into(&self, out: ArrayViewMut2<'_, f64>, rows: &[usize], cols: &[usize]) -> Result<()> {
        let AnyKernel::Custom(f) = &self.kernel else {
            unreachable!("custom_block_into is called for user kernels only")
        };
        let fail = |error: KernelFnError| KernelError::KernelFunction {
            kernel: f.name().to_string(),
            error,
        };
        let expected = (rows.len(), cols.len());
        if out.dim() != expected {
            return Err(fail(KernelFnError::WrongShape {
                expected,
                got: out.dim(),
            }));
        }
        let xb = self.x.dense_rows(rows);
        let zb = self.z.dense_rows(cols);
        let mut out = out;
        f.block(xb.view(), zb.view(), out.view_mut()).map_err(fail)?;
        if let Some(((a, b), &value)) = out.indexed_iter().find(|(_, v)| !v.is_finite()) {
            return Err(fail(KernelFnError::NonFinite {
                row: rows[a],
                col: cols[b],
                value,
            }));
        }
        Ok(())
    }

    /// Block `G[rows, cols]` of the held entries, before any [`KernelMatrix::correction`],
    /// computed on this thread.
    fn raw_block(&self, rows: &[usize], cols: &[usize]) -> Result<Array2<f64>> {
        Ok(match &self.repr {
            Repr::RankOnePlusSparse { a, e, c, .. } => {
                let e_j: Vec<f64> = cols.iter().map(|&j| e[j]).collect();
                let mut out = Array2::zeros((rows.len(), cols.len()));
                let pos = position_map(cols, c.ncols());
                for (mut orow, &i) in out.outer_iter_mut().zip(rows) {
                    let ai = a[i];
                    orow.iter_mut().zip(&e_j).for_each(|(o, &ej)| *o = ai * ej);
                    let (idx, val) = c.row(i);
                    for (&j, &v) in idx.iter().zip(val) {
                        for &b in pos.get(j) {
                            orow[b] += v;
                        }
                    }
                }
                out
            }
            Repr::Stored { g, .. } => g.gather(rows, cols, false),
            Repr::Blocked => self.evaluate_widened(rows, cols, false)?,
        })
    }

    /// `G[rows, cols]` (with `transposed`, `G[rows, cols]ᵀ`) of the kernel, evaluated on this
    /// thread in `T`: a user's values, or the inner products and exponents in `f64`, then the
    /// `exp` of every row in `T` (for `f64` exactly the arithmetic of the stored evaluation's
    /// block stage). No centring.
    fn evaluate_in<T: Element>(&self, rows: &[usize], cols: &[usize], transposed: bool) -> Result<Array2<T>> {
        if matches!(self.kernel, AnyKernel::Custom(_)) {
            let mut p = Array2::zeros((rows.len(), cols.len()));
            self.custom_block_into(p.view_mut(), rows, cols)?;
            let p = if transposed { p.reversed_axes() } else { p };
            return Ok(T::from_f64_array(p));
        }
        let mut p = if transposed {
            inner_block(&self.z, cols, &self.x, self.xt.as_ref(), rows)
        } else {
            inner_block(&self.x, rows, &self.z, self.zt.as_ref(), cols)
        };
        let exponents = self.exponents(p.view_mut(), rows, cols, transposed);
        let mut q = T::from_f64_array(p);
        if exponents {
            for row in q.outer_iter_mut() {
                exp_flush_row(row);
            }
        }
        Ok(q)
    }

    /// [`KernelMatrix::evaluate_in`] in the matrix's precision, as `f64` values: an `f32`
    /// matrix-free `G` gives the same values as the stored `f32` one (up to the order of the
    /// SNE normalisers' sums).
    fn evaluate_widened(&self, rows: &[usize], cols: &[usize], transposed: bool) -> Result<Array2<f64>> {
        match self.precision {
            Precision::F64 => self.evaluate_in::<f64>(rows, cols, transposed),
            Precision::F32 => Ok(self.evaluate_in::<f32>(rows, cols, transposed)?.mapv(f64::from)),
        }
    }

    /// `out = G[rows, cols] x` (with `transposed`, `out = G[rows, cols]ᵀ x`) of a matrix-free
    /// `G` before any centring, on this thread: the block evaluated and multiplied in
    /// [`KernelMatrix::precision`].
    fn blocked_mul_seq(
        &self,
        rows: &[usize],
        cols: &[usize],
        x: ArrayView2<'_, f64>,
        out: ArrayViewMut2<'_, f64>,
        transposed: bool,
    ) -> ksvd_linalg::Result<()> {
        match self.precision {
            Precision::F64 => {
                <f64 as Element>::gemm_f64_seq(out, self.evaluate_in::<f64>(rows, cols, transposed)?.view(), x)
            }
            Precision::F32 => {
                <f32 as Element>::gemm_f64_seq(out, self.evaluate_in::<f32>(rows, cols, transposed)?.view(), x)
            }
        }
    }

    /// Centring correction of `G[rows, cols] W` (or of the transposed product when `transposed`).
    fn center_product(
        &self,
        out: &mut Array2<f64>,
        rows: &[usize],
        cols: &[usize],
        w: ArrayView2<'_, f64>,
        transposed: bool,
    ) {
        let Some(c) = self.correction() else { return };
        // G̃ = G − r 1ᵀ − 1 cᵀ + g 1 1ᵀ restricted to [rows, cols].
        let (own, other, own_means, other_means) = if transposed {
            (cols, rows, &c.col_means, &c.row_means)
        } else {
            (rows, cols, &c.row_means, &c.col_means)
        };
        let sum_w = w.sum_axis(Axis(0));
        let mut mean_w = Array1::<f64>::zeros(w.ncols());
        for (b, &j) in other.iter().enumerate() {
            mean_w.scaled_add(other_means[j], &w.row(b));
        }
        for (mut orow, &i) in out.outer_iter_mut().zip(own) {
            orow.scaled_add(c.grand_mean - own_means[i], &sum_w);
            orow -= &mean_w;
        }
    }

    /// Transposed block `G[rows, cols]ᵀ` (|cols| × |rows|) of the held entries, before any
    /// [`KernelMatrix::correction`], computed on this thread.
    fn raw_block_t(&self, rows: &[usize], cols: &[usize]) -> Result<Array2<f64>> {
        Ok(match &self.repr {
            Repr::RankOnePlusSparse { .. } => self.raw_block(rows, cols)?.reversed_axes(),
            Repr::Stored { g, .. } => g.gather(cols, rows, true),
            Repr::Blocked => self.evaluate_widened(rows, cols, true)?,
        })
    }

    /// The first stage of [`KernelMatrix::evaluate_in`]: inner products become the exponents of
    /// the RBF, SNE (with the stored normalisers) and Laplacian kernels, returning `true` (their
    /// `exp` is still to be taken, [`exp_flush_row`]); linear and polynomial kernel values are
    /// final (`false`), user kernels untouched.
    fn exponents(&self, mut p: ArrayViewMut2<'_, f64>, rows: &[usize], cols: &[usize], transposed: bool) -> bool {
        let Some((inv_g, squared)) = self.exponent_form(p.view_mut()) else {
            return false;
        };
        // Gathered once per block so that the per-entry loop is a plain, vectorisable zip:
        // `t = −d/γ^p − log S_i` with `d` the clamped squared distance (or its root).
        let ln = self.log_norm.as_deref();
        let nx: Vec<f64> = rows.iter().map(|&i| self.nx[i]).collect();
        let nz: Vec<f64> = cols.iter().map(|&j| self.nz[j]).collect();
        let shifts: Vec<f64> = rows.iter().map(|&i| ln.map_or(0.0, |l| l[i])).collect();
        for (a, prow) in p.outer_iter_mut().enumerate() {
            with_slice(prow, |row| {
                if transposed {
                    exponent_col(row, &nx, nz[a], &shifts, inv_g, squared);
                } else {
                    exponent_row(row, nx[a], &nz, shifts[a], inv_g, squared);
                }
            });
        }
        true
    }

    /// `(1/γ^p, p = 2)` of a kernel whose values are `exp` of an exponent (RBF, SNE, Laplacian);
    /// `None` for the others, after turning the inner products in `p` into their final values
    /// (polynomial; linear and user kernels unchanged).
    fn exponent_form(&self, mut p: ArrayViewMut2<'_, f64>) -> Option<(f64, bool)> {
        let AnyKernel::Builtin(kernel) = self.kernel else {
            return None;
        };
        match kernel {
            Kernel::Linear => None,
            Kernel::Polynomial { degree, offset } => {
                p.mapv_inplace(|v| flush((v + offset).powi(degree as i32)));
                None
            }
            Kernel::Rbf { gamma } | Kernel::Sne { gamma } => Some((1.0 / (gamma * gamma), true)),
            Kernel::Laplacian { gamma } => Some((1.0 / gamma, false)),
        }
    }

    fn raw_apply(&self, x: ArrayView2<'_, f64>, mut out: ArrayViewMut2<'_, f64>) -> ksvd_linalg::Result<()> {
        match &self.repr {
            Repr::RankOnePlusSparse { a, e, c, .. } => {
                let etx = Array1::from(e.clone()).dot(&x);
                c.apply_into(x, out.view_mut())?;
                for (mut row, &ai) in out.outer_iter_mut().zip(a) {
                    row.scaled_add(ai, &etx);
                }
            }
            Repr::Stored { g, .. } => g.mul_into(out, x, false)?,
            Repr::Blocked => {
                let m = self.ncols();
                let all_cols: Vec<usize> = (0..m).collect();
                let chunk = self.chunk_rows(m);
                out.axis_chunks_iter_mut(Axis(0), chunk)
                    .into_par_iter()
                    .enumerate()
                    .try_for_each(|(b, oc)| {
                        let rows: Vec<usize> = (b * chunk..b * chunk + oc.nrows()).collect();
                        self.blocked_mul_seq(&rows, &all_cols, x, oc, false)
                    })?;
            }
        }
        Ok(())
    }

    fn raw_apply_transpose(&self, x: ArrayView2<'_, f64>, mut out: ArrayViewMut2<'_, f64>) -> ksvd_linalg::Result<()> {
        match &self.repr {
            Repr::RankOnePlusSparse { a, e, ct, .. } => {
                let atx = Array1::from(a.clone()).dot(&x);
                ct.apply_into(x, out.view_mut())?;
                for (mut row, &ej) in out.outer_iter_mut().zip(e) {
                    row.scaled_add(ej, &atx);
                }
            }
            Repr::Stored { g, .. } => g.mul_into(out, x, true)?,
            Repr::Blocked => {
                let n = self.nrows();
                let all_rows: Vec<usize> = (0..n).collect();
                let chunk = self.chunk_rows(n);
                out.axis_chunks_iter_mut(Axis(0), chunk)
                    .into_par_iter()
                    .enumerate()
                    .try_for_each(|(b, oc)| {
                        let cols: Vec<usize> = (b * chunk..b * chunk + oc.nrows()).collect();
                        self.blocked_mul_seq(&all_rows, &cols, x, oc, true)
                    })?;
            }
        }
        Ok(())
    }

    /// Squared Euclidean norm of every row of `G` (of `G̃` when centred), without forming `G`:
    /// `O(nnz)` for the rank-one-plus-sparse form, one blocked pass otherwise.
    ///
    /// # Errors
    /// [`KernelError::KernelFunction`] when a user's kernel function fails on a block.
    pub fn row_sq_norms(&self) -> Result<Vec<f64>> {
        self.sq_norms(false)
    }
    /// Squared Euclidean norm of every column of `G` (of `G̃` when centred).
    ///
    /// # Errors
    /// As [`KernelMatrix::row_sq_norms`].
    pub fn col_sq_norms(&self) -> Result<Vec<f64>> {
        self.sq_norms(true)
    }

    fn sq_norms(&self, columns: bool) -> Result<Vec<f64>> {
        let (n, m) = (self.nrows(), self.ncols());
        if let (Repr::RankOnePlusSparse { a, e, c, ct }, None) = (&self.repr, &self.centering) {
            // ‖a_i e + c_i‖² = a_i² ‖e‖² + Σ_j (2 a_i e_j c_ij + c_ij²) over the nonzeros of row i.
            let (a, e, c) = if columns { (e, a, ct) } else { (a, e, c) };
            let ee: f64 = e.iter().map(|v| v * v).sum();
            return Ok((0..a.len())
                .map(|i| {
                    let (idx, val) = c.row(i);
                    a[i] * a[i] * ee
                        + idx
                            .iter()
                            .zip(val)
                            .map(|(&j, &v)| 2.0 * a[i] * e[j] * v + v * v)
                            .sum::<f64>()
                })
                .collect());
        }
        let (outer, inner) = if columns { (m, n) } else { (n, m) };
        let all: Vec<usize> = (0..inner).collect();
        let chunk = self.chunk_rows(inner);
        let starts: Vec<usize> = (0..outer).step_by(chunk).collect();
        let parts: Vec<Vec<f64>> = starts
            .into_par_iter()
            .map(|s0| {
                let idx: Vec<usize> = (s0..(s0 + chunk).min(outer)).collect();
                let blk = if columns {
                    self.block_seq(&all, &idx)?.reversed_axes()
                } else {
                    self.block_seq(&idx, &all)?
                };
                Ok(blk.outer_iter().map(|r| r.dot(&r)).collect::<Vec<_>>())
            })
            .collect::<Result<_>>()?;
        Ok(parts.into_iter().flatten().collect())
    }

    /// `G[rows, cols]` (centred if `G` is), on the calling thread.
    fn block_seq(&self, rows: &[usize], cols: &[usize]) -> Result<Array2<f64>> {
        let mut out = self.raw_block(rows, cols)?;
        if let Some(c) = self.correction() {
            c.correct(out.view_mut(), rows, cols);
        }
        Ok(out)
    }

    /// `G[rows, cols]` (centred if `G` is), row chunks in parallel; the indices must be valid.
    fn try_block(&self, rows: &[usize], cols: &[usize]) -> Result<Array2<f64>> {
        let chunk = self.chunk_rows(cols.len());
        let mut out = Array2::zeros((rows.len(), cols.len()));
        out.axis_chunks_iter_mut(Axis(0), chunk)
            .into_par_iter()
            .enumerate()
            .try_for_each(|(b, mut oc)| -> Result<()> {
                let r = &rows[b * chunk..b * chunk + oc.nrows()];
                oc.assign(&self.raw_block(r, cols)?);
                if let Some(c) = self.correction() {
                    c.correct(oc, r, cols);
                }
                Ok(())
            })?;
        Ok(out)
    }

    /// The kernel matrix of new samples in `precision` (stored when it fits the default budget).
    fn evaluated_in(x: Samples, z: Samples, kernel: AnyKernel, precision: Precision) -> Result<KernelMatrix> {
        Self::build(x, z, kernel, Some(MemoryBudget::auto()), true, precision)
    }

    /// Kernel values `k(x'_a, z_{cols[b]})` for new row samples `x'` (out-of-sample extension),
    /// centred like `G` when `G` is centred. For SNE the normaliser of each new row runs over the
    /// whole training Z set. Evaluated in [`KernelMatrix::precision`] (the values of an `f32`
    /// matrix are `f32` values, centred in `f64`).
    pub fn cross_rows(&self, new_x: &Samples, cols: &[usize]) -> Result<Array2<f64>> {
        new_x.check_nonempty("new x samples")?;
        if new_x.dim() != self.z.dim() {
            return Err(KernelError::DimensionMismatch {
                x_dim: new_x.dim(),
                z_dim: self.z.dim(),
            });
        }
        check_indices("column", cols, self.ncols())?;
        let g = Self::evaluated_in(new_x.clone(), self.z.clone(), self.kernel.clone(), self.precision())?;
        let mut out = g.try_block(&(0..new_x.len()).collect::<Vec<_>>(), cols)?;
        if let Some(c) = &self.centering {
            let m = self.ncols();
            let means = g.apply(Array2::from_elem((m, 1), 1.0 / m as f64).view())?;
            c.center_new_rows(out.view_mut(), &means.column(0).to_vec(), cols)?;
        }
        Ok(out)
    }

    /// Kernel values `k(x_{rows[a]}, z'_b)` for new column samples `z'`, centred like `G` when
    /// `G` is centred. For SNE the normalisers are those of the training rows (over Z), taken
    /// inside the exponent. Evaluated in [`KernelMatrix::precision`], as
    /// [`KernelMatrix::cross_rows`].
    pub fn cross_cols(&self, rows: &[usize], new_z: &Samples) -> Result<Array2<f64>> {
        new_z.check_nonempty("new z samples")?;
        if new_z.dim() != self.x.dim() {
            return Err(KernelError::DimensionMismatch {
                x_dim: self.x.dim(),
                z_dim: new_z.dim(),
            });
        }
        check_indices("row", rows, self.nrows())?;
        let g = match (&self.kernel, &self.log_norm) {
            // SNE: the training rows' normalisers inside the exponent, `exp(t_ij − log S_i)`,
            // block by block in the matrix's precision (an unshifted `exp(t_ij)` scaled afterwards
            // underflows, or is flushed, where `S_i` is small). Always the blocked form: the
            // rank-one-plus-sparse form of sparse samples would take normalisers over the new
            // columns.
            (AnyKernel::Builtin(Kernel::Sne { .. }), Some(ln)) => {
                let mut g = Self::blocked(
                    self.x.clone(),
                    new_z.clone(),
                    self.kernel.clone(),
                    None,
                    self.precision(),
                )?;
                g.log_norm = Some(ln.clone());
                g
            }
            (AnyKernel::Builtin(Kernel::Sne { .. }), None) => {
                return Err(KernelError::InvalidStats {
                    reason: "the SNE kernel needs its row normalisers".into(),
                })
            }
            (k, _) => Self::evaluated_in(self.x.clone(), new_z.clone(), k.clone(), self.precision())?,
        };
        let all: Vec<usize> = (0..new_z.len()).collect();
        let full = if self.centering.is_some() {
            g.try_block(&(0..g.nrows()).collect::<Vec<_>>(), &all)?
        } else {
            g.try_block(rows, &all)?
        };
        if let Some(c) = &self.centering {
            let col_means = full.mean_axis(Axis(0)).unwrap_or_else(|| Array1::zeros(all.len()));
            let mut out = full.select(Axis(0), rows);
            c.center_new_cols(out.view_mut(), rows, &col_means.to_vec())?;
            return Ok(out);
        }
        Ok(full)
    }
}

fn center_columns(x: ArrayView2<'_, f64>) -> Array2<f64> {
    let mean = x.mean_axis(Axis(0)).unwrap_or_else(|| Array1::zeros(x.ncols()));
    &x - &mean
}

impl LinearOperator for KernelMatrix {
    fn nrows(&self) -> usize {
        self.x.len()
    }
    fn ncols(&self) -> usize {
        self.z.len()
    }
    /// `G` (centred if `G` is) as a dense matrix: a copy of the stored matrix, or every block
    /// evaluated in parallel.
    fn to_dense(&self) -> ksvd_linalg::Result<Array2<f64>> {
        match &self.repr {
            Repr::Stored { g, .. } if self.correction().is_none() => Ok(g.to_f64()),
            _ => {
                let all_rows: Vec<usize> = (0..self.nrows()).collect();
                let all_cols: Vec<usize> = (0..self.ncols()).collect();
                self.block(&all_rows, &all_cols)
            }
        }
    }
    /// `G = a eᵀ + C` for sparse inputs; centred, `H G H = C + [a, g 1 − r, 1] [e, 1, −c]ᵀ`
    /// (`G̃_ij = G_ij − r_i − c_j + g` with the un-centred means).
    fn sparse_plus_low_rank(&self) -> Option<SparsePlusLowRank<'_>> {
        let Repr::RankOnePlusSparse { a, e, c, .. } = &self.repr else {
            return None;
        };
        let (n, m) = (a.len(), e.len());
        let col = |v: &[f64]| Array2::from_shape_fn((v.len(), 1), |(i, _)| v[i]);
        let (left, right) = match &self.centering {
            None => (col(a), col(e)),
            Some(ct) => {
                let mut left = Array2::ones((n, 3));
                let mut right = Array2::ones((m, 3));
                for i in 0..n {
                    left[[i, 0]] = a[i];
                    left[[i, 1]] = ct.grand_mean - ct.row_means[i];
                }
                for j in 0..m {
                    right[[j, 0]] = e[j];
                    right[[j, 2]] = -ct.col_means[j];
                }
                (left, right)
            }
        };
        Some(SparsePlusLowRank { sparse: c, left, right })
    }
    fn apply_into(&self, x: ArrayView2<'_, f64>, mut out: ArrayViewMut2<'_, f64>) -> ksvd_linalg::Result<()> {
        match self.correction() {
            None => self.raw_apply(x, out)?,
            Some(_) => {
                let xc = center_columns(x);
                self.raw_apply(xc.view(), out.view_mut())?;
                let y = center_columns(out.view());
                out.assign(&y);
            }
        }
        Ok(())
    }
    fn apply_transpose_into(&self, x: ArrayView2<'_, f64>, mut out: ArrayViewMut2<'_, f64>) -> ksvd_linalg::Result<()> {
        match self.correction() {
            None => self.raw_apply_transpose(x, out)?,
            Some(_) => {
                let xc = center_columns(x);
                self.raw_apply_transpose(xc.view(), out.view_mut())?;
                let y = center_columns(out.view());
                out.assign(&y);
            }
        }
        Ok(())
    }
}

impl MatrixBlocks for KernelMatrix {
    fn block(&self, rows: &[usize], cols: &[usize]) -> ksvd_linalg::Result<Array2<f64>> {
        check_indices("row", rows, self.nrows())?;
        check_indices("column", cols, self.ncols())?;
        Ok(self.try_block(rows, cols)?)
    }

    fn block_precision(&self) -> Precision {
        self.precision()
    }

    /// `G[rows, cols] W`: `O((|rows| + |cols|) k + nnz)` for the rank-one-plus-sparse form
    /// (`a_I (e_Jᵀ W) + C[I, J] W`), bounded-memory fused blocks otherwise.
    fn block_mul(&self, rows: &[usize], cols: &[usize], w: ArrayView2<'_, f64>) -> ksvd_linalg::Result<Array2<f64>> {
        check_indices("row", rows, self.nrows())?;
        check_indices("column", cols, self.ncols())?;
        if w.nrows() != cols.len() {
            return Err(ksvd_linalg::LinalgError::ShapeMismatch {
                op: "G[I, J] W",
                left: (rows.len(), cols.len()),
                right: w.dim(),
            });
        }
        let k = w.ncols();
        let mut out = Array2::zeros((rows.len(), k));
        match &self.repr {
            Repr::RankOnePlusSparse { a, e, c, .. } => {
                let mut ew = Array1::<f64>::zeros(k);
                for (b, &j) in cols.iter().enumerate() {
                    ew.scaled_add(e[j], &w.row(b));
                }
                let pos = position_map(cols, c.ncols());
                out.axis_iter_mut(Axis(0))
                    .into_par_iter()
                    .zip(rows.par_iter())
                    .for_each(|(mut orow, &i)| {
                        orow.scaled_add(a[i], &ew);
                        let (idx, val) = c.row(i);
                        for (&j, &v) in idx.iter().zip(val) {
                            for &b in pos.get(j) {
                                orow.scaled_add(v, &w.row(b));
                            }
                        }
                    });
            }
            Repr::Stored { .. } | Repr::Blocked => {
                let chunk = self.chunk_rows(cols.len());
                out.axis_chunks_iter_mut(Axis(0), chunk)
                    .into_par_iter()
                    .enumerate()
                    .try_for_each(|(b, oc)| {
                        let r = &rows[b * chunk..b * chunk + oc.nrows()];
                        if self.is_matrix_free() {
                            return self.blocked_mul_seq(r, cols, w, oc, false);
                        }
                        let g = self.raw_block(r, cols)?;
                        dense::gemm_into_seq(oc, g.view(), w)
                    })?;
            }
        }
        self.center_product(&mut out, rows, cols, w, false);
        Ok(out)
    }

    /// `G[rows, cols]ᵀ W`: `e_J (a_Iᵀ W) + C[I, J]ᵀ W` for the rank-one-plus-sparse form.
    fn block_t_mul(&self, rows: &[usize], cols: &[usize], w: ArrayView2<'_, f64>) -> ksvd_linalg::Result<Array2<f64>> {
        check_indices("row", rows, self.nrows())?;
        check_indices("column", cols, self.ncols())?;
        if w.nrows() != rows.len() {
            return Err(ksvd_linalg::LinalgError::ShapeMismatch {
                op: "G[I, J]ᵀ W",
                left: (rows.len(), cols.len()),
                right: w.dim(),
            });
        }
        let k = w.ncols();
        let mut out = Array2::zeros((cols.len(), k));
        match &self.repr {
            Repr::RankOnePlusSparse { a, e, ct, .. } => {
                let mut aw = Array1::<f64>::zeros(k);
                for (r, &i) in rows.iter().enumerate() {
                    aw.scaled_add(a[i], &w.row(r));
                }
                let pos = position_map(rows, ct.ncols());
                out.axis_iter_mut(Axis(0))
                    .into_par_iter()
                    .zip(cols.par_iter())
                    .for_each(|(mut orow, &j)| {
                        orow.scaled_add(e[j], &aw);
                        let (idx, val) = ct.row(j);
                        for (&i, &v) in idx.iter().zip(val) {
                            for &r in pos.get(i) {
                                orow.scaled_add(v, &w.row(r));
                            }
                        }
                    });
            }
            Repr::Stored { .. } | Repr::Blocked => {
                let chunk = self.chunk_rows(rows.len());
                out.axis_chunks_iter_mut(Axis(0), chunk)
                    .into_par_iter()
                    .enumerate()
                    .try_for_each(|(b, oc)| {
                        let cc = &cols[b * chunk..b * chunk + oc.nrows()];
                        if self.is_matrix_free() {
                            return self.blocked_mul_seq(rows, cc, w, oc, true);
                        }
                        let gt = self.raw_block_t(rows, cc)?;
                        dense::gemm_into_seq(oc, gt.view(), w)
                    })?;
            }
        }
        self.center_product(&mut out, rows, cols, w, true);
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `Centering::center_dense` is `H_n G H_m` (against the product with the centring
    /// projectors), its means are those of the matrix, and mismatched shapes are typed errors.
    #[test]
    fn dense_centering_is_the_product_with_the_centring_projectors() {
        let mut rng = ksvd_linalg::random::rng_from_seed(2);
        for (n, m) in [(7, 5), (5, 7), (1, 4), (6, 6)] {
            let mut g = ksvd_linalg::random::gaussian_matrix(&mut rng, n, m) + 3.0;
            let h = |k: usize| Array2::<f64>::eye(k) - Array2::from_elem((k, k), 1.0 / k as f64);
            let want = h(n).dot(&g).dot(&h(m));
            let original = g.clone();
            let c = Centering::center_dense(&mut g).unwrap_or_else(|e| panic!("{e}"));
            let tol = 1e2 * f64::EPSILON * (n * m) as f64;
            assert!((&g - &want).iter().all(|v| v.abs() < tol), "{n} x {m}");
            let grand = original.mean().unwrap_or(0.0);
            assert!((c.grand_mean - grand).abs() < tol);
            assert!((c.row_means[0] - original.row(0).mean().unwrap_or(0.0)).abs() < tol);
            assert!((c.col_means[m - 1] - original.column(m - 1).mean().unwrap_or(0.0)).abs() < tol);
            assert!(matches!(
                c.center_in_place(Array2::<f64>::zeros((n + 1, m)).view_mut()),
                Err(KernelError::InvalidStats { .. })
            ));
        }
    }

    /// Row partitions centred with the whole matrix's column and grand means are the rows of
    /// the centred whole matrix, stored and matrix-free, for RBF and SNE; bad means are refused.
    #[test]
    fn row_partitions_centred_with_global_means_are_rows_of_the_centred_matrix() -> Result<()> {
        let mut rng = ksvd_linalg::random::rng_from_seed(5);
        let x = ksvd_linalg::random::gaussian_matrix(&mut rng, 11, 3);
        let z = ksvd_linalg::random::gaussian_matrix(&mut rng, 7, 3);
        for kernel in [Kernel::Rbf { gamma: 1.3 }, Kernel::Sne { gamma: 0.9 }] {
            let samples = |a: &Array2<f64>| Samples::dense(a.clone()).unwrap_or_else(|e| panic!("{e}"));
            let whole = KernelMatrix::new(samples(&x), samples(&z), kernel).and_then(KernelMatrix::centered);
            let whole = whole.unwrap_or_else(|e| panic!("{e}"));
            let want = whole.to_dense().unwrap_or_else(|e| panic!("{e}"));
            let c = whole.stats().centering.unwrap_or_else(|| panic!("centred"));
            for stored in [true, false] {
                for (lo, hi) in [(0, 4), (4, 11)] {
                    let part = samples(&x.slice(ndarray::s![lo..hi, ..]).to_owned());
                    let g = if stored {
                        KernelMatrix::with_budget(part, samples(&z), kernel, MemoryBudget::bytes(1 << 20)?)
                    } else {
                        KernelMatrix::matrix_free(part, samples(&z), kernel)
                    };
                    assert_eq!(g.as_ref().map(KernelMatrix::is_stored).ok(), Some(stored));
                    let g = g
                        .and_then(|g| g.centered_with(c.col_means.clone(), c.grand_mean))
                        .unwrap_or_else(|e| panic!("{e}"));
                    let got = g.to_dense().unwrap_or_else(|e| panic!("{e}"));
                    let diff = (&got - &want.slice(ndarray::s![lo..hi, ..]))
                        .iter()
                        .fold(0.0f64, |a, v| a.max(v.abs()));
                    assert!(diff < 64.0 * f64::EPSILON, "{kernel:?} rows {lo}..{hi}: {diff}");
                    let again = g.centered_with(c.col_means.clone(), c.grand_mean);
                    assert!(matches!(again, Err(KernelError::InvalidStats { .. })));
                }
            }
            let part = samples(&x);
            let short = KernelMatrix::new(part, samples(&z), kernel).and_then(|g| g.centered_with(vec![0.0; 6], 0.0));
            assert!(matches!(short, Err(KernelError::InvalidStats { .. })));
        }
        Ok(())
    }

    /// A stored `f32` matrix is evaluated in `f32` after its exponents (`exp`, the SNE row sums
    /// in `f64` and the normalisation): every entry within a few `f32` epsilons of the `f64`
    /// one, relative to its row's largest (the exponent, rounded once to `f32`, carries an error
    /// of `|t| ε_32`), and the SNE normalisers within `1e-6`.
    #[test]
    fn f32_storage_is_evaluated_in_f32_to_single_precision() -> Result<()> {
        let mut rng = ksvd_linalg::random::rng_from_seed(12);
        let x = ksvd_linalg::random::gaussian_matrix(&mut rng, 130, 5);
        let z = ksvd_linalg::random::gaussian_matrix(&mut rng, 90, 5);
        let budget = MemoryBudget::bytes(1 << 24).map_err(KernelError::from)?;
        for kernel in [
            Kernel::Sne { gamma: 1.3 },
            Kernel::Rbf { gamma: 0.9 },
            Kernel::Laplacian { gamma: 2.0 },
            Kernel::Polynomial { degree: 2, offset: 1.0 },
        ] {
            let build = |p: Precision| {
                KernelMatrix::with_budget_in(
                    Samples::dense(x.clone())?,
                    Samples::dense(z.clone())?,
                    kernel.clone(),
                    budget,
                    p,
                )
            };
            let (g64, g32) = (build(Precision::F64)?, build(Precision::F32)?);
            assert_eq!(g32.stored_precision(), Some(Precision::F32));
            let (a, b) = (g64.to_dense()?, g32.to_dense()?);
            let eps32 = f64::from(f32::EPSILON);
            let mut not_rounded = 0;
            for (ra, rb) in a.outer_iter().zip(b.outer_iter()) {
                let top = ra.iter().fold(0.0f64, |m, v| m.max(v.abs()));
                for (&va, &vb) in ra.iter().zip(&rb) {
                    assert_eq!(vb, f64::from(vb as f32), "{kernel}: stored values are f32");
                    assert!((va - vb).abs() <= 64.0 * eps32 * top, "{kernel}: {vb} vs {va}");
                    not_rounded += usize::from(vb != f64::from(va as f32));
                }
            }
            // Exponentials are taken in f32 (some entries differ from the rounded f64 ones);
            // polynomial values have no f32 stage and are the f64 ones rounded once.
            if matches!(kernel, Kernel::Polynomial { .. }) {
                assert_eq!(not_rounded, 0, "{kernel}");
            } else {
                assert!(not_rounded > 0, "{kernel}: f64 values rounded, not an f32 evaluation");
            }
            match (g64.log_normalizers(), g32.log_normalizers()) {
                (Some(l64), Some(l32)) => {
                    for (p, q) in l64.iter().zip(l32) {
                        assert!((p - q).abs() <= 1e-6 * p.abs().max(1.0), "{kernel}: log S {q} vs {p}");
                    }
                }
                (None, None) => {}
                _ => panic!("{kernel}: normalisers in one precision only"),
            }
        }
        Ok(())
    }

    /// Matrix-free products in `f32` (`matrix_free_in`): `G X`, `Gᵀ X`, `G[I, J] W` and
    /// `G[I, J]ᵀ W` against the stored `f32` matrix's (the same rounded entries up to the
    /// order of `f32` sums) and within `f32` accuracy of the `f64` products, plain and centred;
    /// the SNE normalisers from the `f32` pass agree with the stored ones; the precision is
    /// reported, and `into_precision` converts a stored matrix.
    #[test]
    fn matrix_free_f32_products_agree_with_f64() -> Result<()> {
        let mut rng = ksvd_linalg::random::rng_from_seed(21);
        let x = ksvd_linalg::random::gaussian_matrix(&mut rng, 150, 4);
        let z = ksvd_linalg::random::gaussian_matrix(&mut rng, 110, 4);
        let w = ksvd_linalg::random::gaussian_matrix(&mut rng, 110, 3);
        let wt = ksvd_linalg::random::gaussian_matrix(&mut rng, 150, 3);
        let budget = MemoryBudget::bytes(1 << 24).map_err(KernelError::from)?;
        let (rows, cols) = (vec![3usize, 7, 8, 60, 149], vec![0usize, 5, 109, 40]);
        let eps32 = f64::from(f32::EPSILON);
        let kernels = [
            AnyKernel::from(Kernel::Sne { gamma: 1.3 }),
            Kernel::Rbf { gamma: 0.9 }.into(),
            Kernel::Laplacian { gamma: 2.0 }.into(),
            Kernel::Polynomial { degree: 2, offset: 1.0 }.into(),
        ];
        for kernel in kernels {
            for centred in [false, true] {
                let (sx, sz) = (Samples::dense(x.clone())?, Samples::dense(z.clone())?);
                let centre = |g: KernelMatrix| if centred { g.centered() } else { Ok(g) };
                let free64 = centre(KernelMatrix::matrix_free(sx.clone(), sz.clone(), kernel.clone())?)?;
                let free32 = centre(KernelMatrix::matrix_free_in(
                    sx.clone(),
                    sz.clone(),
                    kernel.clone(),
                    Precision::F32,
                )?)?;
                let stored32 = centre(KernelMatrix::with_budget_in(
                    sx,
                    sz,
                    kernel.clone(),
                    budget,
                    Precision::F32,
                )?)?;
                assert_eq!((free32.precision(), free32.stored_precision()), (Precision::F32, None));
                assert_eq!(free64.precision(), Precision::F64);
                let products = |g: &KernelMatrix| -> Result<Vec<Array2<f64>>> {
                    Ok(vec![
                        g.apply(w.view())?,
                        g.apply_transpose(wt.view())?,
                        g.block_mul(&rows, &cols, w.slice(ndarray::s![..4, ..]))?,
                        g.block_t_mul(&rows, &cols, wt.slice(ndarray::s![..5, ..]))?,
                    ])
                };
                let (p64, p32, s32) = (products(&free64)?, products(&free32)?, products(&stored32)?);
                for (k, ((a, b), c)) in p64.iter().zip(&p32).zip(&s32).enumerate() {
                    let scale = a.iter().fold(0.0f64, |m, v| m.max(v.abs()));
                    let err = |p: &Array2<f64>, q: &Array2<f64>| (p - q).iter().fold(0.0f64, |m, v| m.max(v.abs()));
                    let what = format!("{kernel} centred {centred} product {k}");
                    assert!(err(a, b) <= 1e3 * eps32 * scale, "{what}: {:e} of {scale:e}", err(a, b));
                    assert!(err(b, c) <= 1e2 * eps32 * scale, "{what}: against the stored f32");
                    assert!(err(a, b) > 0.0, "{what}: the products ran in f64");
                }
                if let (Some(l32), Some(ls)) = (free32.log_normalizers(), stored32.log_normalizers()) {
                    for (p, q) in l32.iter().zip(ls) {
                        assert!((p - q).abs() <= 1e-6 * p.abs().max(1.0), "{kernel}: log S {p} vs {q}");
                    }
                }
            }
            // A stored matrix converted: its entries rounded (or widened back exactly).
            let stored = |p| {
                KernelMatrix::with_budget_in(
                    Samples::dense(x.clone())?,
                    Samples::dense(z.clone())?,
                    kernel.clone(),
                    budget,
                    p,
                )
            };
            let down = stored(Precision::F64)?.into_precision(Precision::F32);
            assert_eq!(down.stored_precision(), Some(Precision::F32));
            let want = stored(Precision::F64)?
                .to_dense()?
                .mapv(|v| f64::from(<f32 as Element>::from_f64(v)));
            assert_eq!(down.to_dense()?, want, "{kernel}");
            let up = down.clone().into_precision(Precision::F64);
            assert_eq!((up.stored_precision(), up.to_dense()?), (Some(Precision::F64), want));
        }
        Ok(())
    }

    /// The SNE normalisers' pass reuses one block per worker across its chunks: with a sparse
    /// side the inner products accumulate, so the block is zeroed first. Dense X and sparse Z
    /// over several chunks on one worker against the same samples both dense, in each precision.
    #[test]
    fn sne_normalisers_of_mixed_samples_over_reused_blocks() -> Result<()> {
        let mut rng = ksvd_linalg::random::rng_from_seed(31);
        let x = ksvd_linalg::random::gaussian_matrix(&mut rng, 8000, 4);
        // Z with about half its entries zero, stored sparse.
        let z = ksvd_linalg::random::gaussian_matrix(&mut rng, 300, 4).mapv(|v| if v > 0.0 { v } else { 0.0 });
        let zs = CsrMatrix::from_dense(z.view()).map_err(KernelError::from)?;
        let one_worker = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .map_err(|e| KernelError::InvalidStats { reason: e.to_string() })?;
        for (p, tol) in [(Precision::F64, 1e-12), (Precision::F32, 1e-6)] {
            let kernel = Kernel::Sne { gamma: 1.1 };
            let (mixed, dense) = one_worker.install(|| -> Result<_> {
                Ok((
                    KernelMatrix::matrix_free_in(Samples::dense(x.clone())?, Samples::sparse(zs.clone())?, kernel, p)?,
                    KernelMatrix::matrix_free_in(Samples::dense(x.clone())?, Samples::dense(z.clone())?, kernel, p)?,
                ))
            })?;
            assert!(mixed.chunk_rows(300) * 2 < 8000, "several chunks per worker");
            let (a, b) = (
                mixed.log_normalizers().unwrap_or(&[]),
                dense.log_normalizers().unwrap_or(&[]),
            );
            assert_eq!(a.len(), 8000);
            for (i, (u, v)) in a.iter().zip(b).enumerate() {
                assert!(
                    (u - v).abs() <= tol * v.abs().max(1.0),
                    "{p}: row {i}: log S {u} vs {v}"
                );
            }
        }
        Ok(())
    }

    /// Kernel values of new samples from an `f32` matrix against the `f64` one: rows and
    /// columns, SNE with a bandwidth so small that the unshifted exponents fall far below `f32`'s
    /// range (the column values take the normalisers inside the exponent), and RBF.
    #[test]
    fn new_samples_of_an_f32_matrix_agree_with_f64() -> Result<()> {
        let mut rng = ksvd_linalg::random::rng_from_seed(41);
        // X away from Z: the SNE normalisers S_i are far below f32's range.
        let (x, z) = (
            ksvd_linalg::random::gaussian_matrix(&mut rng, 60, 3) + 3.0,
            ksvd_linalg::random::gaussian_matrix(&mut rng, 50, 3),
        );
        let (nx, nz) = (
            Samples::dense(ksvd_linalg::random::gaussian_matrix(&mut rng, 7, 3))?,
            Samples::dense(ksvd_linalg::random::gaussian_matrix(&mut rng, 9, 3))?,
        );
        for kernel in [Kernel::Sne { gamma: 0.3 }, Kernel::Rbf { gamma: 0.8 }] {
            let build =
                |p| KernelMatrix::matrix_free_in(Samples::dense(x.clone())?, Samples::dense(z.clone())?, kernel, p);
            let (g64, g32) = (build(Precision::F64)?, build(Precision::F32)?);

            let (rows, cols): (Vec<usize>, Vec<usize>) = ((0..60).collect(), (0..50).step_by(3).collect());
            for (a, b) in [
                (g64.cross_rows(&nx, &cols)?, g32.cross_rows(&nx, &cols)?),
                (g64.cross_cols(&rows, &nz)?, g32.cross_cols(&rows, &nz)?),
            ] {
                // Entry by entry: an f32 exponent carries a relative error of about eps_32 times
                // its magnitude, so the value's error grows with |ln value|; f32's exp flushes
                // values below e^-86 (4.5e-38) to zero.
                assert!(
                    a.iter().any(|v| *v > 1e-3),
                    "{kernel}: values of every size are compared"
                );
                let floor = 1e-37;
                for (&p, &q) in a.iter().zip(&b) {
                    let tol = if p == 0.0 {
                        floor
                    } else {
                        1e-6 * p.abs() * (1.0 + p.abs().ln().abs()) + floor
                    };
                    assert!((p - q).abs() <= tol, "{kernel}: {q:e} against {p:e}");
                }
            }
        }
        Ok(())
    }

    /// SNE values of new columns against the formula `exp(−‖x_i − z'‖²/γ² − log S_i)` where
    /// the normalisers `S_i` lie far below `f64`'s flush threshold (1e-200): X away from Z.
    #[test]
    fn sne_new_columns_keep_the_normaliser_inside_the_exponent() -> Result<()> {
        let mut rng = ksvd_linalg::random::rng_from_seed(43);
        let x = ksvd_linalg::random::gaussian_matrix(&mut rng, 40, 3) + 4.0;
        let z = ksvd_linalg::random::gaussian_matrix(&mut rng, 30, 3);
        // The new columns are Z itself: each row's nearest column gives a value of order one.
        let nz = z.clone();
        let gamma = 0.25;
        // Dense samples, and the same samples stored sparse on both sides (whose new columns
        // once took the RBF form scaled by 1/S_i afterwards).
        let sparse = |a: &Array2<f64>| -> Result<Samples> { Samples::sparse(CsrMatrix::from_dense(a.view())?) };
        for dense in [true, false] {
            let (sx, sz, snz) = if dense {
                (
                    Samples::dense(x.clone())?,
                    Samples::dense(z.clone())?,
                    Samples::dense(nz.clone())?,
                )
            } else {
                (sparse(&x)?, sparse(&z)?, sparse(&nz)?)
            };
            let g = KernelMatrix::new(sx, sz, Kernel::Sne { gamma })?;
            let ln = g.log_normalizers().unwrap_or(&[]).to_vec();
            assert!(ln.iter().any(|&l| l < -470.0), "some S_i below 1e-204: {ln:?}");
            let rows: Vec<usize> = (0..40).collect();
            let got = g.cross_cols(&rows, &snz)?;
            let mut near = 0;
            for (i, xi) in x.outer_iter().enumerate() {
                for (b, zb) in nz.outer_iter().enumerate() {
                    let d2: f64 = xi.iter().zip(zb).map(|(p, q)| (p - q) * (p - q)).sum();
                    let t = -d2 / (gamma * gamma) - ln[i];
                    let want = t.exp();
                    // Values below FLUSH are stored as zeros.
                    let tol = 1e-12 * want * (1.0 + t.abs()) + 2.0 * FLUSH;
                    assert!(
                        (got[[i, b]] - want).abs() <= tol,
                        "({i}, {b}): {:e} vs {want:e}",
                        got[[i, b]]
                    );
                    near += usize::from(want > 1e-3 && ln[i] < -470.0);
                }
            }
            assert!(near > 0, "values of order one where S_i is below the flush threshold");
        }
        Ok(())
    }

    /// `f32` SNE normalisers summed from the differences (rows far from every column in `f64`):
    /// within a few `f32` epsilons (times the exponents' range) of the `f64` log-sum-exp, also
    /// for samples far from the origin, where `‖x‖² + ‖z‖² − 2⟨x, z⟩` in `f32` would lose every
    /// digit; the matrix-free `f32` matrix takes them, and they agree with the `f64` pass.
    #[test]
    fn direct_f32_sne_normalisers_match_the_f64_log_sum_exp() -> Result<()> {
        let mut rng = ksvd_linalg::random::rng_from_seed(5);
        let gamma = 1.3;
        // Rows taken in f32 and in f64 (their largest exponent below -DIRECT_TOP_LIMIT).
        let mut routes = [0usize; 2];
        for (n, m, d, offset) in [
            (7usize, 1, 1usize, 0.0),
            (40, 2500, 5, 0.0),
            (33, 1031, 9, 1e3),
            (5, 9, 32, -1e4),
        ] {
            let x = ksvd_linalg::random::gaussian_matrix(&mut rng, n, d) + offset;
            let z = ksvd_linalg::random::gaussian_matrix(&mut rng, m, d) + offset;
            let (sx, sz) = (Samples::dense(x.clone())?, Samples::dense(z.clone())?);
            let got = DirectSneF32::new(&sx, &sz, gamma)
                .map(|d| d.log_normalizers())
                .transpose()?
                .unwrap_or_default();
            assert_eq!(got.len(), n);
            for (i, &l) in got.iter().enumerate() {
                let t: Vec<f64> = z
                    .outer_iter()
                    .map(|zj| -(&x.row(i) - &zj).mapv(|v| v * v).sum() / (gamma * gamma))
                    .collect();
                let range = t.iter().fold(0.0f64, |a, v| a.max(v.abs()));
                let top = t.iter().fold(f64::NEG_INFINITY, |a, &v| a.max(v));
                routes[usize::from(top < -f64::from(DIRECT_TOP_LIMIT))] += 1;
                let want = log_sum_exp(t.iter().copied());
                let tol = 8.0 * d as f64 * f64::from(f32::EPSILON) * (1.0 + range);
                assert!(
                    (l - want).abs() <= tol,
                    "{n} x {m}, d {d}, offset {offset}: {l} vs {want}"
                );
            }
            let free = |p| {
                KernelMatrix::matrix_free_in(
                    Samples::dense(x.clone())?,
                    Samples::dense(z.clone())?,
                    Kernel::Sne { gamma },
                    p,
                )
            };
            let (f32m, f64m) = (free(Precision::F32)?, free(Precision::F64)?);
            assert_eq!(f32m.log_normalizers(), Some(&got[..]));
            let ln64 = f64m.log_normalizers().unwrap_or(&[]);
            assert_eq!(ln64.len(), n);
            for (a, b) in got.iter().zip(ln64) {
                assert!((a - b).abs() <= 1e-5 * b.abs().max(1.0), "{a} vs {b}");
            }
        }
        assert!(routes[0] > 0 && routes[1] > 0, "rows of both routes: {routes:?}");
        Ok(())
    }

    /// The vectorised SNE row against the textbook formula, for lengths around the 4-lane
    /// chunking and for distances so large that unshifted exponentials would underflow.
    #[test]
    fn sne_row_matches_the_scalar_formula() {
        for len in [1usize, 3, 4, 5, 8, 13] {
            for scale in [1.0, 1e3] {
                let inner: Vec<f64> = (0..len).map(|j| scale * ((j * 7 % 5) as f64 - 2.0) / 3.0).collect();
                let nz: Vec<f64> = (0..len).map(|j| scale * (1.0 + (j % 3) as f64)).collect();
                let (nxi, inv_g2) = (scale * 2.0, 0.7);
                let t: Vec<f64> = inner
                    .iter()
                    .zip(&nz)
                    .map(|(&p, &z)| -(nxi + z - 2.0 * p).max(0.0) * inv_g2)
                    .collect();
                let top = t.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                let want: Vec<f64> = t.iter().map(|&v| (v - top).exp()).collect();
                let mut row = inner.clone();
                let (mx, sum) = sne_row(&mut row, nxi, &nz, inv_g2);
                assert_eq!(mx, top, "len {len}, scale {scale}");
                for (a, b) in row.iter().zip(&want) {
                    assert!(
                        (a - b).abs() <= 8.0 * f64::EPSILON * b.max(f64::MIN_POSITIVE),
                        "{a} vs {b}"
                    );
                }
                let s: f64 = want.iter().sum();
                assert!((sum - s).abs() <= 4.0 * len as f64 * f64::EPSILON * s);
                assert!(sum >= 1.0, "the largest term is exp(0) = 1");
            }
        }
    }
}
