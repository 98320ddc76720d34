//! `A X` and `Aᵀ X` for a row-major `A` and a thin block `X`: the two products of a stored
//! kernel matrix that every Krylov step and power iteration takes.
//!
//! Both stream `A` row by row. faer's GEMM takes `Aᵀ` as a column-major operand and reads it,
//! unpacked, eight entries from each row of `A` at a time; every row of a 10000-column matrix lies
//! on its own pages, so on a two-core AVX2 machine that product ran at 0.25–0.29 s for
//! `10⁴ × 10⁴` by 20 vectors, twice its `A X` (0.12–0.15 s) and about four times the memory's
//! time for one read of `A` (0.065 s).
//!
//! * `Aᵀ X` ([`at_x_into`]): each task owns a band of `A`'s columns (of the result's rows) and
//!   walks down the rows of `A` eight at a time: the eight row segments are sequential streams,
//!   each panel of eight (`f64`) or sixteen (`f32`) columns is one cache line per row, and the
//!   band's accumulators stay in cache (0.09–0.12 s on the case above).
//! * `A X` ([`a_x_into`]): each task owns a block of rows of `A` and takes dot products along
//!   them with the columns of `X` (copied once, transposed), three rows and four columns at a
//!   time, in vector lanes summed at the end.
//!
//! Every entry of a result is summed in an order fixed by the shapes alone (over the rows of `A`
//! in order for `Aᵀ X`; lane by lane along the row, then the lanes in order, for `A X`), so
//! results do not depend on the thread count. `f64` matrices are multiplied in `f64`; `f32` ones
//! in `f32` with `X` rounded once, as [`crate::Element::gemm_f64`] does. Without AVX2 and FMA
//! (checked at run time) the caller falls back to faer.
use ndarray::{Array2, ArrayView2, ArrayViewMut2, Axis};
use rayon::prelude::*;

/// Rows of `A` per step of the accumulation: eight sequential streams.
const ROWS_PER_STEP: usize = 8;
/// Upper bound on a band's width (columns of `A`); bands are narrowed so that every thread gets
/// the same number of them.
const MAX_BAND: usize = 2048;

/// An element type the streamed kernel multiplies in: `f64` or `f32`.
pub(crate) trait Streamed: crate::Element + std::ops::Add<Output = Self> {
    /// Columns of `A` per panel: one 64-byte cache line.
    const PANEL: usize;
    /// `acc[c][..PANEL] += Σ_{i < rows} a[i·lda ..][..PANEL] x[i·ldx + c]` for `c < nr`; only
    /// called where [`Streamed::supported`] holds.
    ///
    /// # Safety
    /// `a` holds `rows` panels at stride `lda`, `x` holds `rows` rows of at least `nr` entries at
    /// stride `ldx`, `acc` holds `nr · PANEL` entries; `nr` is 1 to 4.
    unsafe fn panel(rows: usize, a: *const Self, lda: usize, x: *const Self, ldx: usize, acc: *mut Self, nr: usize);
    /// Lanes of one register.
    const LANES: usize;
    /// `acc[(r·nc + c)·LANES ..][..LANES] += a[r·lda + j ..] ⊙ xt[c·ldx + j ..]` lane-wise over
    /// `j = 0, LANES, …, len − LANES`, for `r < nrows`, `c < nc`.
    ///
    /// # Safety
    /// `a` holds `nrows` rows of `len` entries at stride `lda`, `xt` holds `nc` rows of `len`
    /// entries at stride `ldx`, `acc` holds `nrows · nc · LANES` entries; `len` is a multiple
    /// of `LANES`, `nrows` is 1 to 3 and `nc` 1 to 4.
    unsafe fn dots(
        len: usize,
        a: *const Self,
        lda: usize,
        xt: *const Self,
        ldx: usize,
        acc: *mut Self,
        nrows: usize,
        nc: usize,
    );
    /// Whether [`Streamed::panel`] and [`Streamed::dots`] can run here.
    fn supported() -> bool;
    /// `s + a x`, scalar (the columns beyond the last whole panel).
    fn mul_add(s: Self, a: Self, x: Self) -> Self;
    /// Rounds an `f64` to nearest, as faer's `f32` products round `X`
    /// ([`crate::Element::from_f64`] also flushes `f32` subnormals, which `X` keeps).
    fn round(v: f64) -> Self;
}

fn avx2_fma() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// One panel kernel per lane type: `$lanes` per register, two registers per panel.
macro_rules! panel_kernel {
    ($name:ident, $t:ty, $vec:ty, $lanes:expr, $zero:ident, $load:ident, $store:ident, $bcast:ident, $fma:ident) => {
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2,fma")]
        unsafe fn $name<const NR: usize>(
            rows: usize,
            a: *const $t,
            lda: usize,
            x: *const $t,
            ldx: usize,
            acc: *mut $t,
        ) {
            use std::arch::x86_64::*;
            // SAFETY: the caller guarantees the extents (see `Streamed::panel`); the CPU has the
            // features this function is compiled for.
            unsafe {
                let mut lo: [$vec; NR] = [$zero(); NR];
                let mut hi: [$vec; NR] = [$zero(); NR];
                for c in 0..NR {
                    lo[c] = $load(acc.add(c * 2 * $lanes));
                    hi[c] = $load(acc.add(c * 2 * $lanes + $lanes));
                }
                for i in 0..rows {
                    let a0 = $load(a.add(i * lda));
                    let a1 = $load(a.add(i * lda + $lanes));
                    let xr = x.add(i * ldx);
                    for c in 0..NR {
                        let b = $bcast(&*xr.add(c));
                        lo[c] = $fma(a0, b, lo[c]);
                        hi[c] = $fma(a1, b, hi[c]);
                    }
                }
                for c in 0..NR {
                    $store(acc.add(c * 2 * $lanes), lo[c]);
                    $store(acc.add(c * 2 * $lanes + $lanes), hi[c]);
                }
            }
        }
    };
}

panel_kernel!(
    panel_f64,
    f64,
    __m256d,
    4,
    _mm256_setzero_pd,
    _mm256_loadu_pd,
    _mm256_storeu_pd,
    _mm256_broadcast_sd,
    _mm256_fmadd_pd
);
panel_kernel!(
    panel_f32,
    f32,
    __m256,
    8,
    _mm256_setzero_ps,
    _mm256_loadu_ps,
    _mm256_storeu_ps,
    _mm256_broadcast_ss,
    _mm256_fmadd_ps
);

/// One dot-product kernel per lane type: `R` rows of `A` against `NC` rows of `Xᵀ`.
macro_rules! dot_kernel {
    ($name:ident, $t:ty, $vec:ty, $lanes:expr, $zero:ident, $load:ident, $store:ident, $fma:ident) => {
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2,fma")]
        unsafe fn $name<const R: usize, const NC: usize>(
            len: usize,
            a: *const $t,
            lda: usize,
            xt: *const $t,
            ldx: usize,
            acc: *mut $t,
        ) {
            use std::arch::x86_64::*;
            // SAFETY: the caller guarantees the extents (see `Streamed::dots`); the CPU has the
            // features this function is compiled for.
            unsafe {
                let mut s: [[$vec; NC]; R] = [[$zero(); NC]; R];
                for r in 0..R {
                    for c in 0..NC {
                        s[r][c] = $load(acc.add((r * NC + c) * $lanes));
                    }
                }
                let mut j = 0;
                while j < len {
                    let mut av: [$vec; R] = [$zero(); R];
                    for r in 0..R {
                        av[r] = $load(a.add(r * lda + j));
                    }
                    for c in 0..NC {
                        let xv = $load(xt.add(c * ldx + j));
                        for r in 0..R {
                            s[r][c] = $fma(av[r], xv, s[r][c]);
                        }
                    }
                    j += $lanes;
                }
                for r in 0..R {
                    for c in 0..NC {
                        $store(acc.add((r * NC + c) * $lanes), s[r][c]);
                    }
                }
            }
        }
    };
}

dot_kernel!(
    dots_f64,
    f64,
    __m256d,
    4,
    _mm256_setzero_pd,
    _mm256_loadu_pd,
    _mm256_storeu_pd,
    _mm256_fmadd_pd
);
dot_kernel!(
    dots_f32,
    f32,
    __m256,
    8,
    _mm256_setzero_ps,
    _mm256_loadu_ps,
    _mm256_storeu_ps,
    _mm256_fmadd_ps
);

macro_rules! streamed_impl {
    ($t:ty, $panel:expr, $kernel:ident, $lanes:expr, $dots:ident) => {
        impl Streamed for $t {
            const PANEL: usize = $panel;
            const LANES: usize = $lanes;
            #[allow(unused_variables)]
            unsafe fn dots(
                len: usize,
                a: *const $t,
                lda: usize,
                xt: *const $t,
                ldx: usize,
                acc: *mut $t,
                nrows: usize,
                nc: usize,
            ) {
                #[cfg(target_arch = "x86_64")]
                // SAFETY: forwarded from the caller; `supported()` was checked before any call.
                unsafe {
                    match (nrows, nc) {
                        (1, 1) => $dots::<1, 1>(len, a, lda, xt, ldx, acc),
                        (1, 2) => $dots::<1, 2>(len, a, lda, xt, ldx, acc),
                        (1, 3) => $dots::<1, 3>(len, a, lda, xt, ldx, acc),
                        (1, _) => $dots::<1, 4>(len, a, lda, xt, ldx, acc),
                        (2, 1) => $dots::<2, 1>(len, a, lda, xt, ldx, acc),
                        (2, 2) => $dots::<2, 2>(len, a, lda, xt, ldx, acc),
                        (2, 3) => $dots::<2, 3>(len, a, lda, xt, ldx, acc),
                        (2, _) => $dots::<2, 4>(len, a, lda, xt, ldx, acc),
                        (_, 1) => $dots::<3, 1>(len, a, lda, xt, ldx, acc),
                        (_, 2) => $dots::<3, 2>(len, a, lda, xt, ldx, acc),
                        (_, 3) => $dots::<3, 3>(len, a, lda, xt, ldx, acc),
                        (_, _) => $dots::<3, 4>(len, a, lda, xt, ldx, acc),
                    }
                }
            }
            #[allow(unused_variables)]
            unsafe fn panel(rows: usize, a: *const $t, lda: usize, x: *const $t, ldx: usize, acc: *mut $t, nr: usize) {
                #[cfg(target_arch = "x86_64")]
                // SAFETY: forwarded from the caller; `supported()` was checked before any call.
                unsafe {
                    match nr {
                        1 => $kernel::<1>(rows, a, lda, x, ldx, acc),
                        2 => $kernel::<2>(rows, a, lda, x, ldx, acc),
                        3 => $kernel::<3>(rows, a, lda, x, ldx, acc),
                        _ => $kernel::<4>(rows, a, lda, x, ldx, acc),
                    }
                }
            }
            fn supported() -> bool {
                avx2_fma()
            }
            #[inline]
            fn mul_add(s: $t, a: $t, x: $t) -> $t {
                a.mul_add(x, s)
            }
            #[inline]
            #[allow(clippy::cast_possible_truncation)]
            fn round(v: f64) -> $t {
                v as $t
            }
        }
    };
}

streamed_impl!(f64, 8, panel_f64, 4, dots_f64);
streamed_impl!(f32, 16, panel_f32, 8, dots_f32);

/// The widest block `X` the kernels take. Their sums (`Aᵀ X`) or `Xᵀ`'s tiles (`A X`) outgrow the
/// caches with the block, while faer's GEMM turns compute-bound: on two cores at order 6000,
/// streamed against faer, `Aᵀ X` 0.10 against 0.24 s at 20 columns, 0.46 against 0.58 s at 128,
/// 3.4 against 1.8 s at 500 (`A X`: 0.40 against 0.40 s at 128, 2.0 against 1.9 s at 500).
pub(crate) const MAX_COLUMNS: usize = 128;

/// `A`'s row stride where the kernels apply: AVX2 and FMA, `A`'s rows contiguous, nothing empty,
/// at most [`MAX_COLUMNS`] columns in `X`.
fn row_stride<T: Streamed>(a: ArrayView2<'_, T>, b: usize) -> Option<usize> {
    let s = a.strides();
    if !T::supported() || s[1] != 1 || s[0] < 0 || a.is_empty() || b == 0 || b > MAX_COLUMNS {
        return None;
    }
    usize::try_from(s[0]).ok()
}

/// A row-major, contiguous copy of `x` in `T` (each entry rounded once).
fn rounded<T: Streamed>(x: ArrayView2<'_, f64>) -> Array2<T> {
    Array2::from_shape_fn(x.dim(), |(i, c)| T::round(x[[i, c]]))
}

/// Columns of `X` per kernel call: four broadcasts against two registers of `A`.
const NR: usize = 4;

/// `out = Aᵀ X` for `A` (`n × m`) with contiguous rows and `X` (`n × b`), `out` (`m × b`) in
/// any layout; `X` is read in `f64` and rounded once to `T`. Returns `false`, leaving `out`
/// untouched, where the kernel does not apply (no AVX2 and FMA, `A`'s rows not contiguous, or
/// `X` wider than [`MAX_COLUMNS`]): the caller then uses faer. Shapes are the caller's to check.
pub(crate) fn at_x_into<T: Streamed>(
    mut out: ArrayViewMut2<'_, f64>,
    a: ArrayView2<'_, T>,
    x: ArrayView2<'_, f64>,
) -> bool {
    let (n, m) = a.dim();
    let b = x.ncols();
    let Some(lda) = row_stride(a, b) else {
        return false;
    };
    let xs = rounded::<T>(x);
    let xs = xs.as_slice().unwrap_or(&[]);
    let threads = rayon::current_num_threads().max(1);
    // Bands: a multiple of the thread count, each at most MAX_BAND wide, whole panels.
    let bands = threads * m.div_ceil(threads * MAX_BAND).max(1);
    let band = m.div_ceil(bands).div_ceil(T::PANEL) * T::PANEL;
    let base = a.as_ptr() as usize;
    let x_ptr = xs.as_ptr() as usize;
    out.axis_chunks_iter_mut(Axis(0), band)
        .into_par_iter()
        .enumerate()
        .for_each_init(Vec::<T>::new, |acc, (t, mut o)| {
            let j0 = t * band;
            let w = o.nrows();
            let panels = w / T::PANEL;
            acc.clear();
            acc.resize(panels * T::PANEL * b, T::default());
            let a_ptr = base as *const T;
            let x_ptr = x_ptr as *const T;
            let mut i0 = 0;
            while i0 < n {
                let rows = ROWS_PER_STEP.min(n - i0);
                for p in 0..panels {
                    let mut c0 = 0;
                    while c0 < b {
                        let nr = NR.min(b - c0);
                        // SAFETY: rows i0..i0+rows of A exist and columns j0 + p·PANEL + PANEL ≤
                        // j0 + w ≤ m; X has n rows of b entries, c0 + nr ≤ b; the panel's
                        // accumulators `(p·b + c0)·PANEL ..` + nr·PANEL lie in `acc`.
                        unsafe {
                            T::panel(
                                rows,
                                a_ptr.add(i0 * lda + j0 + p * T::PANEL),
                                lda,
                                x_ptr.add(i0 * b + c0),
                                b,
                                acc.as_mut_ptr().add((p * b + c0) * T::PANEL),
                                nr,
                            );
                        }
                        c0 += nr;
                    }
                }
                i0 += rows;
            }
            for p in 0..panels {
                for c in 0..b {
                    for r in 0..T::PANEL {
                        o[[p * T::PANEL + r, c]] = acc[(p * b + c) * T::PANEL + r].to_f64();
                    }
                }
            }
            // Columns beyond the last whole panel, summed in the same order.
            for jj in panels * T::PANEL..w {
                let col = a.column(j0 + jj);
                for c in 0..b {
                    let mut s = T::default();
                    for i in 0..n {
                        s = T::mul_add(s, col[i], xs[i * b + c]);
                    }
                    o[[jj, c]] = s.to_f64();
                }
            }
        });
    true
}

/// Rows of `A` per task of [`a_x_into`].
const ROWS_PER_TASK: usize = 24;
/// Columns of `A` per tile of [`a_x_into`]: the rows' segments and `Xᵀ`'s stay in cache while
/// every column chunk of `X` passes over them.
const TILE: usize = 512;
/// Rows of `A` and columns of `X` per call of the dot kernel.
const DOT_ROWS: usize = 3;
const DOT_COLS: usize = 4;

/// `out = A X` for `A` (`n × m`) with contiguous rows and `X` (`m × b`), `out` (`n × b`) in any
/// layout; `X` is read in `f64` and rounded once to `T`. Returns `false`, leaving `out` untouched,
/// where the kernel does not apply (as [`at_x_into`]). Shapes are the caller's to check.
pub(crate) fn a_x_into<T: Streamed>(
    mut out: ArrayViewMut2<'_, f64>,
    a: ArrayView2<'_, T>,
    x: ArrayView2<'_, f64>,
) -> bool {
    let m = a.ncols();
    let b = x.ncols();
    let Some(lda) = row_stride(a, b) else {
        return false;
    };
    let xt = rounded::<T>(x.t());
    let xt = xt.as_slice().unwrap_or(&[]);
    let vec_len = m / T::LANES * T::LANES;
    let base = a.as_ptr() as usize;
    let xt_ptr = xt.as_ptr() as usize;
    out.axis_chunks_iter_mut(Axis(0), ROWS_PER_TASK)
        .into_par_iter()
        .enumerate()
        .for_each_init(Vec::<T>::new, |acc, (t, mut o)| {
            let i0 = t * ROWS_PER_TASK;
            let rows = o.nrows();
            acc.clear();
            acc.resize(rows * b * T::LANES, T::default());
            let a_ptr = base as *const T;
            let xt_ptr = xt_ptr as *const T;
            let mut j0 = 0;
            while j0 < vec_len {
                let len = TILE.min(vec_len - j0);
                let mut r0 = 0;
                while r0 < rows {
                    let nr = DOT_ROWS.min(rows - r0);
                    let mut c0 = 0;
                    while c0 < b {
                        let nc = DOT_COLS.min(b - c0);
                        // SAFETY: rows i0 + r0 .. + nr of A exist with columns j0 + len ≤ m;
                        // rows c0 .. c0 + nc of Xᵀ exist with m entries; the accumulators
                        // `(r0·b + c0·nr)·LANES ..` + nr·nc·LANES lie in `acc` (r0 + nr ≤ rows).
                        unsafe {
                            T::dots(
                                len,
                                a_ptr.add((i0 + r0) * lda + j0),
                                lda,
                                xt_ptr.add(c0 * m + j0),
                                m,
                                acc.as_mut_ptr().add((r0 * b + c0 * nr) * T::LANES),
                                nr,
                                nc,
                            );
                        }
                        c0 += nc;
                    }
                    r0 += nr;
                }
                j0 += len;
            }
            let mut r0 = 0;
            while r0 < rows {
                let nr = DOT_ROWS.min(rows - r0);
                let mut c0 = 0;
                while c0 < b {
                    let nc = DOT_COLS.min(b - c0);
                    for r in 0..nr {
                        let row = a.row(i0 + r0 + r);
                        for c in 0..nc {
                            let lanes = (r0 * b + c0 * nr + r * nc + c) * T::LANES;
                            // The lanes in order, then the columns beyond the last whole lane.
                            let mut s = acc[lanes];
                            for l in 1..T::LANES {
                                s = s + acc[lanes + l];
                            }
                            for j in vec_len..m {
                                s = T::mul_add(s, row[j], xt[(c0 + c) * m + j]);
                            }
                            o[[r0 + r, c0 + c]] = s.to_f64();
                        }
                    }
                    c0 += nc;
                }
                r0 += nr;
            }
        });
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::ShapeBuilder;

    type Kernel<T> = fn(ArrayViewMut2<'_, f64>, ArrayView2<'_, T>, ArrayView2<'_, f64>) -> bool;

    /// `Aᵀ X` summed in f64 in the kernel's order (rows of `A` in order).
    fn reference_atx(a: ArrayView2<'_, f64>, x: ArrayView2<'_, f64>) -> Array2<f64> {
        let (n, m) = a.dim();
        Array2::from_shape_fn((m, x.ncols()), |(j, c)| {
            (0..n).fold(0.0, |s, i| a[[i, j]].mul_add(x[[i, c]], s))
        })
    }

    /// `A X` summed in f64 in the kernel's order: lane by lane along each row, the lanes in
    /// order, then the tail.
    fn reference_ax(a: ArrayView2<'_, f64>, x: ArrayView2<'_, f64>) -> Array2<f64> {
        let (n, m) = a.dim();
        let lanes = <f64 as Streamed>::LANES;
        let vec_len = m / lanes * lanes;
        Array2::from_shape_fn((n, x.ncols()), |(i, c)| {
            let mut part = vec![0.0f64; lanes];
            for j in 0..vec_len {
                part[j % lanes] = a[[i, j]].mul_add(x[[j, c]], part[j % lanes]);
            }
            let mut s = part[0];
            for p in &part[1..] {
                s += p;
            }
            (vec_len..m).fold(s, |s, j| a[[i, j]].mul_add(x[[j, c]], s))
        })
    }

    /// A deterministic `rows × cols` matrix of small fractions.
    fn matrix(rows: usize, cols: usize, salt: usize) -> Array2<f64> {
        Array2::from_shape_fn((rows, cols), |(i, j)| {
            ((i * 31 + j * 17 + salt * 5) % 23) as f64 / 7.0 - 1.5
        })
    }

    /// The kernel against its ordered sum, equal bit for bit (both fuse every multiply-add),
    /// with 1 to 3 threads.
    fn assert_exact(
        kernel: Kernel<f64>,
        reference: fn(ArrayView2<'_, f64>, ArrayView2<'_, f64>) -> Array2<f64>,
        a: &Array2<f64>,
        x: &Array2<f64>,
    ) {
        let want = reference(a.view(), x.view());
        for threads in [1, 2, 3] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            let mut out = Array2::from_elem(want.dim(), f64::NAN);
            assert!(pool.install(|| kernel(out.view_mut(), a.view(), x.view())));
            assert_eq!(out, want, "A {:?} X {:?} threads {threads}", a.dim(), x.dim());
        }
    }

    /// The `f32` kernel on a row-strided `A` (a column slice of a wider matrix) into a
    /// column-major `out`, against the exact product of the rounded operands: within `k ε_f32`
    /// of the largest entry for `k` terms.
    fn assert_f32_close(
        kernel: Kernel<f32>,
        reference: fn(ArrayView2<'_, f64>, ArrayView2<'_, f64>) -> Array2<f64>,
        a: &Array2<f64>,
        x: &Array2<f64>,
        terms: usize,
    ) {
        let (n, m) = a.dim();
        let wide = Array2::from_shape_fn((n, 2 * m), |(i, j)| a[[i, j % m]] as f32);
        let a32 = wide.slice(ndarray::s![.., ..m]);
        let exact = reference(a32.mapv(f64::from).view(), x.mapv(|v| f64::from(v as f32)).view());
        let mut out = Array2::<f64>::zeros(exact.dim().f());
        assert!(kernel(out.view_mut(), a32, x.view()));
        let scale = exact.iter().fold(0.0f64, |s, v| s.max(v.abs()));
        let err = (&out - &exact).iter().fold(0.0f64, |s, v| s.max(v.abs()));
        assert!(
            err <= terms as f64 * f64::from(f32::EPSILON) * scale.max(1.0),
            "error {err}, scale {scale}"
        );
    }

    #[test]
    fn at_x_is_its_ordered_sum_for_every_shape_and_thread_count() {
        if !avx2_fma() {
            return;
        }
        // Widths with and without a partial panel, blocks with every remainder of NR, row counts
        // with and without a partial step.
        for &(n, m, b) in &[
            (1, 1, 1),
            (9, 8, 4),
            (17, 23, 5),
            (40, 4100, 7),
            (300, 129, 20),
            (13, 7, 3),
        ] {
            assert_exact(at_x_into::<f64>, reference_atx, &matrix(n, m, 0), &matrix(n, b, 1));
        }
        assert_f32_close(
            at_x_into::<f32>,
            reference_atx,
            &matrix(70, 45, 0),
            &matrix(70, 6, 1),
            70,
        );
    }

    #[test]
    fn a_x_is_its_ordered_sum_for_every_shape_and_thread_count() {
        if !avx2_fma() {
            return;
        }
        // Rows with every remainder of the task (24) and of the dot kernel (3); widths with and
        // without a tail and across tiles (512); blocks with every remainder of 4.
        for &(n, m, b) in &[
            (1, 1, 1),
            (2, 3, 2),
            (5, 8, 4),
            (25, 1031, 7),
            (50, 37, 20),
            (73, 4, 3),
            (24, 600, 5),
        ] {
            assert_exact(a_x_into::<f64>, reference_ax, &matrix(n, m, 0), &matrix(m, b, 1));
        }
        assert_f32_close(a_x_into::<f32>, reference_ax, &matrix(31, 77, 0), &matrix(77, 6, 1), 77);
    }

    #[test]
    fn non_contiguous_rows_and_wide_blocks_fall_back_untouched() {
        let a = matrix(8, 8, 0);
        let x = matrix(8, 2, 1);
        let mut out = Array2::<f64>::zeros((8, 2));
        assert!(!at_x_into(out.view_mut(), a.t(), x.view()));
        assert!(!a_x_into(out.view_mut(), a.t(), x.view()));
        assert!(out.iter().all(|&v| v == 0.0));
        let wide = matrix(8, MAX_COLUMNS + 1, 1);
        let mut out = Array2::<f64>::zeros((8, MAX_COLUMNS + 1));
        assert!(!at_x_into(out.view_mut(), a.view(), wide.view()));
        assert!(!a_x_into(out.view_mut(), a.view(), wide.view()));
        assert!(out.iter().all(|&v| v == 0.0));
        // At the limit the kernels still apply.
        let limit = matrix(8, MAX_COLUMNS, 1);
        let mut out = Array2::<f64>::zeros((8, MAX_COLUMNS));
        assert_eq!(at_x_into(out.view_mut(), a.view(), limit.view()), avx2_fma());
    }
}
