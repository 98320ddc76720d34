//! The precision of a stored matrix (a kernel matrix `G`): [`Precision`] names it, [`Element`]
//! is the element type (`f64` or `f32`) that the one generic code path is written over, and
//! [`StoredMatrix`] holds a dense row-major matrix in either.
//!
//! Only the stored entries and the products with them run in the chosen precision; the vectors
//! multiplied, the results and every reduction (means, norms, Gram matrices of a Krylov basis)
//! stay `f64`. In `f32` a product `G X` converts `X` to `f32`, multiplies in `f32` (faer's GEMM,
//! twice the SIMD width, half the memory traffic) and returns `f64`; its relative error is a
//! few `f32` epsilons (about `1e-7`) times `√k` for inner dimension `k`, so residuals against an
//! `f32` matrix reach about `1e-6` of `s₁`, not `1e-15` ([`Precision::min_tol`]).
use ndarray::{Array1, Array2, ArrayView2, ArrayViewMut1, ArrayViewMut2, Axis, ShapeBuilder};
use rayon::prelude::*;

use crate::dense;
use crate::error::{LinalgError, Result};

/// The precision of stored matrix entries and of the products with them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Precision {
    /// Double precision (the default).
    #[default]
    F64,
    /// Single precision: half the memory of a stored `G`, about twice as fast products, and
    /// residuals down to about `1e-6 · s₁`.
    F32,
}

impl crate::Vocabulary for Precision {
    const WHAT: &'static str = "precision";
    const ALL: &'static [Precision] = &[Precision::F64, Precision::F32];
    fn names(self) -> &'static [&'static str] {
        match self {
            Precision::F64 => &["f64", "float64", "double"],
            Precision::F32 => &["f32", "float32", "single"],
        }
    }
}
crate::vocabulary_traits!(Precision);
#[cfg(feature = "serde")]
crate::vocabulary_serde!(Precision);

impl Precision {
    /// Bytes per entry.
    pub fn bytes(self) -> usize {
        match self {
            Precision::F64 => 8,
            Precision::F32 => 4,
        }
    }

    /// The default residual tolerance (relative to `s₁`) of a certified solve in this precision:
    /// `1e-8` in `f64`, `1e-5` in `f32`.
    pub fn default_tol(self) -> f64 {
        match self {
            Precision::F64 => 1e-8,
            Precision::F32 => 1e-5,
        }
    }

    /// `A B` of `f64` matrices computed in this precision: [`dense::matmul`] in `f64`; in `f32`
    /// both rounded, the product in `f32` ([`Element::gemm_f64`]) and widened. For products
    /// with kernel values evaluated in this precision (out-of-sample extensions).
    pub fn matmul(self, a: ArrayView2<'_, f64>, b: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        match self {
            Precision::F64 => dense::matmul(a, b),
            Precision::F32 => {
                let mut out = Array2::zeros((a.nrows(), b.ncols()));
                <f32 as Element>::gemm_f64(out.view_mut(), a.mapv(<f32 as Element>::from_f64).view(), b, false)?;
                Ok(out)
            }
        }
    }

    /// The smallest tolerance a certified solve may ask for: below it, rounding in the products
    /// with the stored matrix can keep residuals above the tolerance however long the solver
    /// runs (`0` in `f64`, where the solvers' own limits apply; `1e-6` in `f32`).
    pub fn min_tol(self) -> f64 {
        match self {
            Precision::F64 => 0.0,
            Precision::F32 => 1e-6,
        }
    }
}

/// An element type of stored matrices: `f64` or `f32`.
pub trait Element: Copy + Send + Sync + Default + PartialEq + std::fmt::Debug + 'static {
    /// The precision this type is.
    const PRECISION: Precision;
    /// Rounds an `f64` to this type.
    fn from_f64(v: f64) -> Self;
    /// Widens to `f64` (exact).
    fn to_f64(self) -> f64;
    /// `v[i] = exp(v[i])` in this type ([`crate::vecmath::exp_in_place`] or
    /// [`crate::vecmath::exp_in_place_f32`]).
    fn exp_in_place(v: &mut [Self]);
    /// `exp(self)`, scalar ([`crate::vecmath::exp`] or [`crate::vecmath::exp_f32`]).
    fn exp(self) -> Self;
    /// `out = A X` (or `out += A X` with `accumulate`) for `A` stored as this type and `f64`
    /// vectors `X` and result. `f64`: [`dense::gemm_into`]; `f32`: `X` rounded, the product in
    /// `f32` (the same GEMM), widened into `out`.
    fn gemm_f64(
        out: ArrayViewMut2<'_, f64>,
        a: ArrayView2<'_, Self>,
        x: ArrayView2<'_, f64>,
        accumulate: bool,
    ) -> Result<()>;
    /// `out = A X` as [`Element::gemm_f64`] with `accumulate = false`, on the calling thread
    /// (for products inside a parallel loop that occupies every core). `f64`:
    /// [`dense::gemm_into_seq`].
    fn gemm_f64_seq(out: ArrayViewMut2<'_, f64>, a: ArrayView2<'_, Self>, x: ArrayView2<'_, f64>) -> Result<()>;
    /// An `f64` array in this type: the array itself for `f64`, rounded ([`Element::from_f64`])
    /// for `f32`.
    fn from_f64_array(a: Array2<f64>) -> Array2<Self>;
}

impl Element for f64 {
    const PRECISION: Precision = Precision::F64;
    #[inline]
    fn from_f64(v: f64) -> Self {
        v
    }
    #[inline]
    fn to_f64(self) -> f64 {
        self
    }
    fn exp_in_place(v: &mut [f64]) {
        crate::vecmath::exp_in_place(v);
    }
    fn exp(self) -> f64 {
        crate::vecmath::exp(self)
    }
    fn gemm_f64(
        out: ArrayViewMut2<'_, f64>,
        a: ArrayView2<'_, f64>,
        x: ArrayView2<'_, f64>,
        accumulate: bool,
    ) -> Result<()> {
        dense::gemm_into(out, a, x, 1.0, accumulate)
    }
    fn gemm_f64_seq(out: ArrayViewMut2<'_, f64>, a: ArrayView2<'_, f64>, x: ArrayView2<'_, f64>) -> Result<()> {
        dense::gemm_into_seq(out, a, x)
    }
    fn from_f64_array(a: Array2<f64>) -> Array2<f64> {
        a
    }
}

impl Element for f32 {
    const PRECISION: Precision = Precision::F32;
    /// Rounds to nearest; magnitudes below `f32::MIN_POSITIVE` become `0` (subnormal `f32`
    /// entries would slow every product that reads them).
    #[inline]
    fn from_f64(v: f64) -> Self {
        if v.abs() < f64::from(f32::MIN_POSITIVE) {
            0.0
        } else {
            v as f32
        }
    }
    #[inline]
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
    fn exp_in_place(v: &mut [f32]) {
        crate::vecmath::exp_in_place_f32(v);
    }
    fn exp(self) -> f32 {
        crate::vecmath::exp_f32(self)
    }
    fn gemm_f64(
        out: ArrayViewMut2<'_, f64>,
        a: ArrayView2<'_, f32>,
        x: ArrayView2<'_, f64>,
        accumulate: bool,
    ) -> Result<()> {
        gemm_f32_widened(out, a, x, accumulate, false)
    }
    fn gemm_f64_seq(out: ArrayViewMut2<'_, f64>, a: ArrayView2<'_, f32>, x: ArrayView2<'_, f64>) -> Result<()> {
        gemm_f32_widened(out, a, x, false, true)
    }
    fn from_f64_array(a: Array2<f64>) -> Array2<f32> {
        a.mapv(f32::from_f64)
    }
}

/// `out = A X` (`+=` with `accumulate`) for an `f32` `A`: `X` rounded, the product in `f32`
/// (faer's GEMM; on the calling thread with `seq`), widened into `out`.
fn gemm_f32_widened(
    mut out: ArrayViewMut2<'_, f64>,
    a: ArrayView2<'_, f32>,
    x: ArrayView2<'_, f64>,
    accumulate: bool,
    seq: bool,
) -> Result<()> {
    // The product's own shapes are checked by the GEMM; `out` receives it.
    if out.dim() != (a.nrows(), x.ncols()) {
        return Err(LinalgError::ShapeMismatch {
            op: "matmul output",
            left: out.dim(),
            right: (a.nrows(), x.ncols()),
        });
    }
    // `X` and the product in the layouts of `x` and `out`, as the f64 product gets them: faer
    // then takes the same route (for a row-major `A` and `out`, the transposed problem, reading
    // `A` in place); column-major copies made it pack `A` on every product, a fifth of an f32
    // RSVD's time.
    let x32: Array2<f32> = x.mapv(|v| v as f32);
    let dim = (a.nrows(), x.ncols());
    let mut prod = if out.is_standard_layout() {
        Array2::<f32>::zeros(dim)
    } else {
        Array2::<f32>::zeros(dim.f())
    };
    if seq {
        dense::gemm_into_seq_t(prod.view_mut(), a, x32.view())?;
    } else {
        dense::gemm_into_t(prod.view_mut(), a, x32.view(), 1.0, false)?;
    }
    if accumulate {
        out.zip_mut_with(&prod, |o, &p| *o += f64::from(p));
    } else {
        out.zip_mut_with(&prod, |o, &p| *o = f64::from(p));
    }
    Ok(())
}

/// A dense row-major `n × m` matrix stored in `f64` or `f32` ([`Precision`]): what a stored
/// kernel matrix holds. Every method reads and writes `f64` values; only the storage and the
/// products ([`StoredMatrix::mul_into`]) use the stored type.
#[derive(Debug, Clone, PartialEq)]
pub enum StoredMatrix {
    /// Entries in `f64`.
    F64(Array2<f64>),
    /// Entries rounded to `f32`.
    F32(Array2<f32>),
}

/// Runs `$body` with `$g` bound to the stored array, whichever its type.
macro_rules! with_stored {
    ($m:expr, $g:ident => $body:expr) => {
        match $m {
            StoredMatrix::F64($g) => $body,
            StoredMatrix::F32($g) => $body,
        }
    };
}

impl StoredMatrix {
    /// An `n × m` matrix of zeros in `precision`, its pages advised huge (on Linux, from 4 MiB:
    /// see `memory::advise_huge_pages`) before anything touches them.
    pub fn zeros(n: usize, m: usize, precision: Precision) -> StoredMatrix {
        let mut stored = match precision {
            Precision::F64 => StoredMatrix::F64(Array2::zeros((n, m))),
            Precision::F32 => StoredMatrix::F32(Array2::zeros((n, m))),
        };
        with_stored!(&mut stored, g => if let Some(entries) = g.as_slice_mut() {
            crate::memory::advise_huge_pages(entries);
        });
        stored
    }

    /// The precision of the stored entries.
    pub fn precision(&self) -> Precision {
        match self {
            StoredMatrix::F64(_) => Precision::F64,
            StoredMatrix::F32(_) => Precision::F32,
        }
    }

    /// `(n, m)`.
    pub fn dim(&self) -> (usize, usize) {
        with_stored!(self, g => g.dim())
    }

    /// `out = G X`, or `out = Gᵀ X` with `transpose`: streamed along the rows of `G` where the
    /// CPU has AVX2 and FMA and `X` has at most 128 columns (`crate::streamed`: every entry summed
    /// in an order fixed by the shapes, whatever the thread count; `f32` in `f32` with `X`
    /// rounded once), faer's GEMM otherwise ([`Element::gemm_f64`]).
    pub fn mul_into(&self, mut out: ArrayViewMut2<'_, f64>, x: ArrayView2<'_, f64>, transpose: bool) -> Result<()> {
        let (n, m) = self.dim();
        let (rows, inner) = if transpose { (m, n) } else { (n, m) };
        if x.nrows() != inner || out.dim() != (rows, x.ncols()) {
            return Err(LinalgError::ShapeMismatch {
                op: if transpose { "Gᵀ X" } else { "G X" },
                left: (rows, inner),
                right: x.dim(),
            });
        }
        let streamed = if transpose {
            with_stored!(self, g => crate::streamed::at_x_into(out.view_mut(), g.view(), x))
        } else {
            with_stored!(self, g => crate::streamed::a_x_into(out.view_mut(), g.view(), x))
        };
        if streamed {
            return Ok(());
        }
        with_stored!(self, g => Element::gemm_f64(out, if transpose { g.t() } else { g.view() }, x, false))
    }

    /// `G[rows, cols]` (with `transpose`, `Gᵀ[rows, cols]`) in `f64`; the indices must be valid.
    pub fn gather(&self, rows: &[usize], cols: &[usize], transpose: bool) -> Array2<f64> {
        with_stored!(self, g => gather_t(if transpose { g.t() } else { g.view() }, rows, cols))
    }

    /// A copy in `precision` (entries rounded once to `f32`, or widened exactly to `f64`).
    pub fn to_precision(&self, precision: Precision) -> StoredMatrix {
        match (self, precision) {
            (StoredMatrix::F64(g), Precision::F32) => StoredMatrix::F32(g.mapv(<f32 as Element>::from_f64)),
            (StoredMatrix::F32(g), Precision::F64) => StoredMatrix::F64(g.mapv(f64::from)),
            (same, _) => same.clone(),
        }
    }

    /// The entries in `f64` (a copy).
    pub fn to_f64(&self) -> Array2<f64> {
        match self {
            StoredMatrix::F64(g) => g.clone(),
            StoredMatrix::F32(g) => g.mapv(f64::from),
        }
    }

    /// The mean of each row (`f64`: ndarray's `mean_axis`; `f32`: summed in `f64`).
    pub fn row_means(&self) -> Vec<f64> {
        match self {
            StoredMatrix::F64(g) => g
                .mean_axis(Axis(1))
                .map_or_else(|| vec![0.0; g.nrows()], |r| r.to_vec()),
            StoredMatrix::F32(g) => g
                .outer_iter()
                .map(|r| r.iter().map(|&v| f64::from(v)).sum::<f64>() / r.len().max(1) as f64)
                .collect(),
        }
    }

    /// The mean of each column (`f64`: ndarray's `mean_axis`; `f32`: summed in `f64`).
    pub fn col_means(&self) -> Vec<f64> {
        match self {
            StoredMatrix::F64(g) => g
                .mean_axis(Axis(0))
                .map_or_else(|| vec![0.0; g.ncols()], |c| c.to_vec()),
            StoredMatrix::F32(g) => {
                let mut acc = Array1::<f64>::zeros(g.ncols());
                for r in g.outer_iter() {
                    acc.zip_mut_with(&r, |a, &v| *a += f64::from(v));
                }
                let n = g.nrows().max(1) as f64;
                acc.iter().map(|a| a / n).collect()
            }
        }
    }

    /// Fills the matrix by blocks of `chunk` rows in parallel ([`StagedFill`]): per block,
    /// [`StagedFill::block`] writes `f64` values (into the stored block itself in `f64`, into a
    /// per-worker buffer in `f32`); then row by row, while the row is in cache,
    /// [`StagedFill::row_f64`] continues in `f64`, the row is rounded once to the stored type,
    /// and [`StagedFill::row_stored`] completes it in that type. Returns every row's output in
    /// row order.
    pub fn fill_rows_staged<S: StagedFill>(
        &mut self,
        chunk: usize,
        fill: &S,
    ) -> std::result::Result<Vec<S::Out>, S::Error> {
        let chunk = chunk.max(1);
        let blocks: std::result::Result<Vec<Vec<S::Out>>, S::Error> = match self {
            StoredMatrix::F64(g) => g
                .axis_chunks_iter_mut(Axis(0), chunk)
                .into_par_iter()
                .enumerate()
                .map(|(b, mut block)| {
                    let r0 = b * chunk;
                    fill.block(r0, block.view_mut())?;
                    let mut out = Vec::with_capacity(block.nrows());
                    for (k, mut row) in block.outer_iter_mut().enumerate() {
                        with_slice(row.view_mut(), |s| {
                            let prep = fill.row_f64(r0 + k, s);
                            out.push(fill.row_stored(r0 + k, s, prep));
                        });
                    }
                    Ok(out)
                })
                .collect(),
            // One f64 buffer per worker, reused across its blocks (a fresh one per block would be
            // mapped, faulted in and unmapped every time).
            StoredMatrix::F32(g) => g
                .axis_chunks_iter_mut(Axis(0), chunk)
                .into_par_iter()
                .enumerate()
                .map_init(
                    || Array2::<f64>::zeros((0, 0)),
                    |buf, (b, mut block)| {
                        let r0 = b * chunk;
                        if buf.dim() == block.dim() {
                            buf.fill(0.0);
                        } else {
                            *buf = Array2::zeros(block.dim());
                        }
                        fill.block(r0, buf.view_mut())?;
                        let mut out = Vec::with_capacity(block.nrows());
                        for (k, (mut row64, mut row)) in buf.outer_iter_mut().zip(block.outer_iter_mut()).enumerate() {
                            let prep = with_slice(row64.view_mut(), |s| fill.row_f64(r0 + k, s));
                            row.zip_mut_with(&row64, |o, &v| *o = f32::from_f64(v));
                            with_slice(row, |s| out.push(fill.row_stored(r0 + k, s, prep)));
                        }
                        Ok(out)
                    },
                )
                .collect(),
        };
        Ok(blocks?.into_iter().flatten().collect())
    }

    /// Applies `f(i, row)` to every row in place, rows in parallel, on `f64` values (an `f32`
    /// row is widened, updated and rounded back).
    pub fn update_rows<F>(&mut self, f: F)
    where
        F: Fn(usize, ArrayViewMut1<'_, f64>) + Sync + Send,
    {
        match self {
            StoredMatrix::F64(g) => g
                .outer_iter_mut()
                .into_par_iter()
                .enumerate()
                .for_each(|(i, row)| f(i, row)),
            StoredMatrix::F32(g) => g.outer_iter_mut().into_par_iter().enumerate().for_each(|(i, mut row)| {
                let mut buf: Array1<f64> = row.mapv(f64::from);
                f(i, buf.view_mut());
                row.zip_mut_with(&buf, |o, &v| *o = f32::from_f64(v));
            }),
        }
    }

    /// Bytes held by the entries.
    pub fn bytes(&self) -> usize {
        let (n, m) = self.dim();
        n * m * self.precision().bytes()
    }
}

/// A staged fill of a [`StoredMatrix`] ([`StoredMatrix::fill_rows_staged`]): what needs `f64`
/// (a kernel's inner products and exponents, say) runs in [`StagedFill::block`] and
/// [`StagedFill::row_f64`], what the stored type can do at its own width (the `exp` of those
/// exponents, a row normalisation) in [`StagedFill::row_stored`].
pub trait StagedFill: Sync {
    /// What a row's `f64` stage hands its stored-type stage.
    type Prep: Send;
    /// A row's result.
    type Out: Send;
    /// A block's error.
    type Error: Send;
    /// Writes the `f64` values of rows `r0..r0 + block.nrows()`.
    fn block(&self, r0: usize, block: ArrayViewMut2<'_, f64>) -> std::result::Result<(), Self::Error>;
    /// Continues row `i` in `f64`.
    fn row_f64(&self, i: usize, row: &mut [f64]) -> Self::Prep;
    /// Completes row `i`, stored as `T` (its `f64` values rounded once).
    fn row_stored<T: Element>(&self, i: usize, row: &mut [T], prep: Self::Prep) -> Self::Out;
}

/// Runs `f` on the row as a slice (a copy when it is not contiguous, written back): for
/// row loops written over slices so that they vectorise.
pub fn with_slice<T: Copy, R>(mut row: ArrayViewMut1<'_, T>, f: impl FnOnce(&mut [T]) -> R) -> R {
    if let Some(s) = row.as_slice_mut() {
        return f(s);
    }
    let mut v = row.to_vec();
    let out = f(&mut v);
    row.iter_mut().zip(v).for_each(|(o, x)| *o = x);
    out
}

/// `g[rows, cols]` widened to `f64`.
fn gather_t<T: Element>(g: ArrayView2<'_, T>, rows: &[usize], cols: &[usize]) -> Array2<f64> {
    let mut out = Array2::zeros((rows.len(), cols.len()));
    for (mut orow, &i) in out.outer_iter_mut().zip(rows) {
        let grow = g.row(i);
        orow.iter_mut().zip(cols).for_each(|(o, &j)| *o = grow[j].to_f64());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::{gaussian_matrix, rng_from_seed};

    /// Fills a stored matrix with a copy of `a` (in `block`); `row_stored` exponentiates the rows
    /// from the second field on in the stored type and returns their indices.
    struct CopyOf<'a>(&'a Array2<f64>, usize);
    const EXP_ROW: usize = 100;

    impl StagedFill for CopyOf<'_> {
        type Prep = ();
        type Out = Option<usize>;
        type Error = ();
        fn block(&self, r0: usize, mut block: ArrayViewMut2<'_, f64>) -> std::result::Result<(), ()> {
            let n = block.nrows();
            block.assign(&self.0.slice(ndarray::s![r0..r0 + n, ..]));
            Ok(())
        }
        fn row_f64(&self, _: usize, _: &mut [f64]) {}
        fn row_stored<T: Element>(&self, i: usize, row: &mut [T], _: ()) -> Option<usize> {
            (i >= self.1).then(|| {
                T::exp_in_place(row);
                i
            })
        }
    }

    #[test]
    fn staged_fills_round_once_and_finish_in_the_stored_type() {
        let mut rng = rng_from_seed(4);
        let a = gaussian_matrix(&mut rng, 150, 40);
        for p in [Precision::F64, Precision::F32] {
            let mut m = StoredMatrix::zeros(150, 40, p);
            let done: Vec<usize> = m
                .fill_rows_staged(16, &CopyOf(&a, EXP_ROW))
                .unwrap()
                .into_iter()
                .flatten()
                .collect();
            assert_eq!(done, (EXP_ROW..150).collect::<Vec<_>>(), "blocks in row order");
            let got = m.to_f64();
            for ((i, j), &v) in got.indexed_iter() {
                let x = a[[i, j]];
                let want = match (p, i >= EXP_ROW) {
                    (Precision::F64, false) => x,
                    (Precision::F64, true) => {
                        let mut e = [x];
                        crate::vecmath::exp_in_place(&mut e);
                        e[0]
                    }
                    (Precision::F32, false) => f64::from(x as f32),
                    // Rounded once, then exp in f32.
                    (Precision::F32, true) => {
                        let mut e = [x as f32];
                        crate::vecmath::exp_in_place_f32(&mut e);
                        f64::from(e[0])
                    }
                };
                assert_eq!(v, want, "{p:?} ({i}, {j})");
            }
        }
    }

    #[test]
    fn f32_products_agree_with_f64_to_single_precision() {
        let mut rng = rng_from_seed(1);
        let a = gaussian_matrix(&mut rng, 300, 200);
        let x = gaussian_matrix(&mut rng, 200, 7);
        let exact = a.dot(&x);
        let mut m32 = StoredMatrix::zeros(300, 200, Precision::F32);
        m32.fill_rows_staged(64, &CopyOf(&a, usize::MAX)).unwrap();
        assert_eq!(m32.precision(), Precision::F32);
        let mut out = Array2::zeros((300, 7));
        m32.mul_into(out.view_mut(), x.view(), false).unwrap();
        // Rounding of A and X (eps_32 each) and of a length-200 sum.
        let scale = exact.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let err = (&out - &exact).iter().fold(0.0f64, |m, v| m.max(v.abs()));
        assert!(
            err <= 200f64.sqrt() * 8.0 * f64::from(f32::EPSILON) * scale.max(1.0) * 4.0,
            "{err:e}"
        );
        assert!(err > 0.0, "an f32 product is not exact");
        // The transpose, a gather and the means read the same rounded entries.
        let y = gaussian_matrix(&mut rng, 300, 3);
        let mut outt = Array2::zeros((200, 3));
        m32.mul_into(outt.view_mut(), y.view(), true).unwrap();
        let rounded = m32.to_f64();
        let errt = (&outt - &rounded.t().dot(&y))
            .iter()
            .fold(0.0f64, |m, v| m.max(v.abs()));
        assert!(errt <= 1e-4, "{errt:e}");
        assert_eq!(m32.gather(&[5, 2], &[7], false)[[1, 0]], rounded[[2, 7]]);
        assert_eq!(m32.gather(&[7], &[5, 2], true)[[0, 1]], rounded[[2, 7]]);
        let rm = m32.row_means();
        assert!((rm[3] - rounded.row(3).mean().unwrap()).abs() < 1e-12);
        let cm = m32.col_means();
        assert!((cm[4] - rounded.column(4).mean().unwrap()).abs() < 1e-12);
        assert_eq!(m32.bytes(), 300 * 200 * 4);
    }

    #[test]
    fn f64_storage_is_exact_and_tiny_f32_values_flush() {
        let mut rng = rng_from_seed(2);
        let a = gaussian_matrix(&mut rng, 40, 30);
        let x = gaussian_matrix(&mut rng, 30, 4);
        let m64 = StoredMatrix::F64(a.clone());
        let mut out = Array2::zeros((40, 4));
        m64.mul_into(out.view_mut(), x.view(), false).unwrap();
        let err = (&out - &a.dot(&x)).iter().fold(0.0f64, |m, v| m.max(v.abs()));
        assert!(err < 1e-12, "{err:e}");
        assert_eq!(f32::from_f64(1e-300), 0.0);
        assert_eq!(f32::from_f64(-1e-39), 0.0);
        assert_eq!(f32::from_f64(0.5), 0.5);
        let mut m = StoredMatrix::F32(Array2::zeros((2, 2)));
        m.update_rows(|i, mut r| r.fill(i as f64 + 0.25));
        assert_eq!(m.to_f64(), ndarray::array![[0.25, 0.25], [1.25, 1.25]]);
    }

    #[test]
    fn precision_names_and_limits() {
        assert_eq!("float32".parse::<Precision>().unwrap(), Precision::F32);
        assert_eq!(Precision::F64.to_string(), "f64");
        assert!("half".parse::<Precision>().is_err());
        assert!(Precision::F32.default_tol() >= Precision::F32.min_tol());
        assert_eq!(Precision::F32.bytes() * 2, Precision::F64.bytes());
    }
}
