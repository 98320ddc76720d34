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
//!   walks down the rows of `A` a few at a time (eight with AVX2): the row segments are
//!   sequential streams, each panel of two registers' width is one or two cache lines per row,
//!   and the band's accumulators stay in cache (0.09–0.12 s on the case above).
//! * `A X` ([`a_x_into`]): each task owns a block of rows of `A` and takes dot products along
//!   them with the columns of `X` (copied once, transposed), a few rows and columns at a time,
//!   in the lanes of 256-bit registers summed at the end.
//!
//! Every entry of a result is summed in an order fixed by the shapes alone (over the rows of `A`
//! in order for `Aᵀ X`; lane by lane along the row, then the lanes in order, for `A X`), so
//! results depend neither on the thread count nor on the instruction set (AVX2 or AVX-512;
//! faer's fallback sums in another order). With AVX-512 the
//! kernels use 512-bit registers in that same order: `Aᵀ X`'s panels are twice as wide, and
//! `A X` keeps the partial sums of 256-bit lanes, two columns of `X` to a register (`Xᵀ` copied
//! with the two columns' chunks interleaved). `f64` matrices are multiplied in `f64`; `f32` ones
//! in `f32` with `X` rounded once, as [`crate::Element::gemm_f64`] does. Without AVX2 and FMA
//! (checked at run time) the caller falls back to faer.
use ndarray::{Array2, ArrayView2, ArrayViewMut2, Axis};
use rayon::prelude::*;

/// Upper bound on a band's width (columns of `A`); bands are narrowed so that every thread gets
/// the same number of them.
const MAX_BAND: usize = 2048;

/// The vector instructions the kernels run with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Isa {
    /// 256-bit registers: AVX2 and FMA.
    Avx2,
    /// 512-bit registers: AVX-512F (and FMA).
    Avx512,
}

impl Isa {
    /// The widest the CPU runs (checked at run time), or `None` without AVX2 and FMA.
    pub(crate) fn detect() -> Option<Isa> {
        static DETECTED: std::sync::OnceLock<Option<Isa>> = std::sync::OnceLock::new();
        *DETECTED.get_or_init(|| Isa::available().last().copied())
    }

    /// Every instruction set of the kernels the CPU runs, narrowest first.
    pub(crate) fn available() -> Vec<Isa> {
        let mut isas = Vec::new();
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
                isas.push(Isa::Avx2);
                if std::arch::is_x86_feature_detected!("avx512f") {
                    isas.push(Isa::Avx512);
                }
            }
        }
        isas
    }

    /// 256-bit registers per register of this instruction set.
    fn halves(self) -> usize {
        match self {
            Isa::Avx2 => 1,
            Isa::Avx512 => 2,
        }
    }

    /// Rows of `A` per step of [`at_x_into`]'s accumulation, each a sequential stream: 8 with
    /// AVX2; 32 with AVX-512, where the accumulators, read and written once a step, would
    /// otherwise cost more than the wider registers save (`10⁴ × 10⁴` by 20 on two AMD EPYC
    /// cores with AVX-512: 0.060, 0.053, 0.047 and 0.048 s at 8, 16, 32 and 64 rows).
    fn rows_per_step(self) -> usize {
        match self {
            Isa::Avx2 => 8,
            Isa::Avx512 => 32,
        }
    }

    /// Rows of `A` and columns of `X` per call of the dot kernel of [`a_x_into`].
    fn dot_block(self) -> (usize, usize) {
        match self {
            Isa::Avx2 => (3, 4),
            Isa::Avx512 => (4, 8),
        }
    }
}

/// An element type the streamed kernels multiply in: `f64` or `f32`.
pub(crate) trait Streamed: crate::Element + std::ops::Add<Output = Self> {
    /// Lanes of one 256-bit register: the partial sums of [`a_x_into`], whatever the instruction
    /// set.
    const LANES: usize;
    /// `acc[c][..w] += Σ_{i < rows} a[i·lda ..][..w] x[i·ldx + c]` for `c < nr`, with `w` =
    /// [`panel_width`]`(isa)`.
    ///
    /// # Safety
    /// `isa` runs here; `a` holds `rows` panels at stride `lda`, `x` holds `rows` rows of at
    /// least `nr` entries at stride `ldx`, `acc` holds `nr · w` entries; `nr` is 1 to 4.
    unsafe fn panel(
        isa: Isa,
        rows: usize,
        a: *const Self,
        lda: usize,
        x: *const Self,
        ldx: usize,
        acc: *mut Self,
        nr: usize,
    );
    /// `acc[(r·nc + c)·LANES ..][..LANES] += a[r·lda + j ..] ⊙ xt_c[j ..]` lane-wise over
    /// `j = 0, LANES, …, len − LANES`, for `r < nrows`, `c < nc`. With [`Isa::Avx2`], `xt_c` is
    /// `xt[c·ldx ..]`; with [`Isa::Avx512`], columns `2p` and `2p + 1` are interleaved chunk by
    /// chunk at `xt[p·ldx ..]` (`xt[p·ldx + 2j ..]` holds column `2p`'s `LANES` entries from `j`,
    /// then column `2p + 1`'s; an odd `nc`'s last pair is read whole, its second half unused).
    ///
    /// # Safety
    /// `isa` runs here; `a` holds `nrows` rows of `len` entries at stride `lda`; `xt` holds `nc`
    /// rows of `len` entries at stride `ldx` (AVX2), or `nc.div_ceil(2)` pairs of `2·len`
    /// entries at stride `ldx`, starting at a pair (AVX-512); `acc` holds `nrows · nc · LANES`
    /// entries; `len` is a multiple of `LANES`, `(nrows, nc)` at most [`Isa::dot_block`] and at
    /// least `(1, 1)`.
    #[allow(clippy::too_many_arguments)]
    unsafe fn dots(
        isa: Isa,
        len: usize,
        a: *const Self,
        lda: usize,
        xt: *const Self,
        ldx: usize,
        acc: *mut Self,
        nrows: usize,
        nc: usize,
    );
    /// `s + a x`, scalar (the columns beyond the last whole panel).
    fn mul_add(s: Self, a: Self, x: Self) -> Self;
    /// Rounds an `f64` to nearest, as faer's `f32` products round `X`
    /// ([`crate::Element::from_f64`] also flushes `f32` subnormals, which `X` keeps).
    fn round(v: f64) -> Self;
}

/// Columns of `A` per panel of [`at_x_into`]: two registers.
fn panel_width<T: Streamed>(isa: Isa) -> usize {
    2 * T::LANES * isa.halves()
}

/// One panel kernel per register type: `$lanes` per register, two registers per panel.
macro_rules! panel_kernel {
    ($name:ident, $features:literal, $t:ty, $vec:ty, $lanes:expr, $zero:ident, $load:ident, $store:ident, $bcast:ident, $fma:ident) => {
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = $features)]
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
                        let b = $bcast(*xr.add(c));
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
    "avx2,fma",
    f64,
    __m256d,
    4,
    _mm256_setzero_pd,
    _mm256_loadu_pd,
    _mm256_storeu_pd,
    _mm256_set1_pd,
    _mm256_fmadd_pd
);
panel_kernel!(
    panel_f32,
    "avx2,fma",
    f32,
    __m256,
    8,
    _mm256_setzero_ps,
    _mm256_loadu_ps,
    _mm256_storeu_ps,
    _mm256_set1_ps,
    _mm256_fmadd_ps
);
panel_kernel!(
    panel_f64_512,
    "avx512f,avx2,fma",
    f64,
    __m512d,
    8,
    _mm512_setzero_pd,
    _mm512_loadu_pd,
    _mm512_storeu_pd,
    _mm512_set1_pd,
    _mm512_fmadd_pd
);
panel_kernel!(
    panel_f32_512,
    "avx512f,avx2,fma",
    f32,
    __m512,
    16,
    _mm512_setzero_ps,
    _mm512_loadu_ps,
    _mm512_storeu_ps,
    _mm512_set1_ps,
    _mm512_fmadd_ps
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

/// One 512-bit dot-product kernel per lane type: `R` rows of `A` against `NP` pairs of columns
/// of `X`, each register holding the 256-bit partial sums of two columns (the lanes of the
/// 256-bit kernel, in the same order). Registers move through their `f64` bits
/// (`$from`/`$to` reinterpret them, as one 256-bit chunk of `A` is broadcast to both halves).
macro_rules! dot_kernel_512 {
    ($name:ident, $t:ty, $vec:ty, $lanes:expr, $fma:ident, $from:ident, $to:ident) => {
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx512f,avx2,fma")]
        unsafe fn $name<const R: usize, const NP: usize>(
            len: usize,
            nc: usize,
            a: *const $t,
            lda: usize,
            xp: *const $t,
            ldp: usize,
            acc: *mut $t,
        ) {
            use std::arch::x86_64::*;
            // SAFETY: the caller guarantees the extents (see `Streamed::dots`; `nc` is `2·NP − 1`
            // or `2·NP`, and an odd `nc`'s last pair is read whole); the CPU has the features
            // this function is compiled for. Every pointer cast reads or writes 256 bits (`A`'s
            // chunks, the accumulators) or 512 bits (a pair of `Xᵀ`) of `$t` entries through
            // their bits.
            unsafe {
                let half = |r: usize, c: usize| acc.add((r * nc + c) * $lanes) as *mut f64;
                let mut s: [[$vec; NP]; R] = [[$from(_mm512_setzero_pd()); NP]; R];
                for r in 0..R {
                    for p in 0..NP {
                        let lo = _mm256_loadu_pd(half(r, 2 * p));
                        let hi = if 2 * p + 1 < nc {
                            _mm256_loadu_pd(half(r, 2 * p + 1))
                        } else {
                            _mm256_setzero_pd()
                        };
                        s[r][p] = $from(_mm512_insertf64x4::<1>(_mm512_castpd256_pd512(lo), hi));
                    }
                }
                let mut j = 0;
                while j < len {
                    let mut av: [$vec; R] = [$from(_mm512_setzero_pd()); R];
                    for r in 0..R {
                        av[r] = $from(_mm512_broadcast_f64x4(_mm256_loadu_pd(
                            a.add(r * lda + j) as *const f64
                        )));
                    }
                    for p in 0..NP {
                        let xv = $from(_mm512_loadu_pd(xp.add(p * ldp + 2 * j) as *const f64));
                        for r in 0..R {
                            s[r][p] = $fma(av[r], xv, s[r][p]);
                        }
                    }
                    j += $lanes;
                }
                for r in 0..R {
                    for p in 0..NP {
                        let v = $to(s[r][p]);
                        _mm256_storeu_pd(half(r, 2 * p), _mm512_castpd512_pd256(v));
                        if 2 * p + 1 < nc {
                            _mm256_storeu_pd(half(r, 2 * p + 1), _mm512_extractf64x4_pd::<1>(v));
                        }
                    }
                }
            }
        }
    };
}

#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx512f")]
fn same_pd(v: std::arch::x86_64::__m512d) -> std::arch::x86_64::__m512d {
    v
}

dot_kernel_512!(dots_f64_512, f64, __m512d, 4, _mm512_fmadd_pd, same_pd, same_pd);
dot_kernel_512!(
    dots_f32_512,
    f32,
    __m512,
    8,
    _mm512_fmadd_ps,
    _mm512_castpd_ps,
    _mm512_castps_pd
);

macro_rules! streamed_impl {
    ($t:ty, $lanes:expr, $panel:ident, $panel_512:ident, $dots:ident, $dots_512:ident) => {
        impl Streamed for $t {
            const LANES: usize = $lanes;
            #[allow(unused_variables)]
            unsafe fn dots(
                isa: Isa,
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
                // SAFETY: forwarded from the caller, who checked that `isa` runs here.
                unsafe {
                    match isa {
                        Isa::Avx2 => match (nrows, nc) {
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
                        },
                        Isa::Avx512 => match (nrows, nc.div_ceil(2)) {
                            (1, 1) => $dots_512::<1, 1>(len, nc, a, lda, xt, ldx, acc),
                            (1, 2) => $dots_512::<1, 2>(len, nc, a, lda, xt, ldx, acc),
                            (1, 3) => $dots_512::<1, 3>(len, nc, a, lda, xt, ldx, acc),
                            (1, _) => $dots_512::<1, 4>(len, nc, a, lda, xt, ldx, acc),
                            (2, 1) => $dots_512::<2, 1>(len, nc, a, lda, xt, ldx, acc),
                            (2, 2) => $dots_512::<2, 2>(len, nc, a, lda, xt, ldx, acc),
                            (2, 3) => $dots_512::<2, 3>(len, nc, a, lda, xt, ldx, acc),
                            (2, _) => $dots_512::<2, 4>(len, nc, a, lda, xt, ldx, acc),
                            (3, 1) => $dots_512::<3, 1>(len, nc, a, lda, xt, ldx, acc),
                            (3, 2) => $dots_512::<3, 2>(len, nc, a, lda, xt, ldx, acc),
                            (3, 3) => $dots_512::<3, 3>(len, nc, a, lda, xt, ldx, acc),
                            (3, _) => $dots_512::<3, 4>(len, nc, a, lda, xt, ldx, acc),
                            (_, 1) => $dots_512::<4, 1>(len, nc, a, lda, xt, ldx, acc),
                            (_, 2) => $dots_512::<4, 2>(len, nc, a, lda, xt, ldx, acc),
                            (_, 3) => $dots_512::<4, 3>(len, nc, a, lda, xt, ldx, acc),
                            (_, _) => $dots_512::<4, 4>(len, nc, a, lda, xt, ldx, acc),
                        },
                    }
                }
            }
            #[allow(unused_variables)]
            unsafe fn panel(
                isa: Isa,
                rows: usize,
                a: *const $t,
                lda: usize,
                x: *const $t,
                ldx: usize,
                acc: *mut $t,
                nr: usize,
            ) {
                #[cfg(target_arch = "x86_64")]
                // SAFETY: forwarded from the caller, who checked that `isa` runs here.
                unsafe {
                    match (isa, nr) {
                        (Isa::Avx2, 1) => $panel::<1>(rows, a, lda, x, ldx, acc),
                        (Isa::Avx2, 2) => $panel::<2>(rows, a, lda, x, ldx, acc),
                        (Isa::Avx2, 3) => $panel::<3>(rows, a, lda, x, ldx, acc),
                        (Isa::Avx2, _) => $panel::<4>(rows, a, lda, x, ldx, acc),
                        (Isa::Avx512, 1) => $panel_512::<1>(rows, a, lda, x, ldx, acc),
                        (Isa::Avx512, 2) => $panel_512::<2>(rows, a, lda, x, ldx, acc),
                        (Isa::Avx512, 3) => $panel_512::<3>(rows, a, lda, x, ldx, acc),
                        (Isa::Avx512, _) => $panel_512::<4>(rows, a, lda, x, ldx, acc),
                    }
                }
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

streamed_impl!(f64, 4, panel_f64, panel_f64_512, dots_f64, dots_f64_512);
streamed_impl!(f32, 8, panel_f32, panel_f32_512, dots_f32, dots_f32_512);

/// The widest block `X` the kernels take. Their sums (`Aᵀ X`) or `Xᵀ`'s tiles (`A X`) outgrow the
/// caches with the block, while faer's GEMM turns compute-bound: on two cores at order 6000,
/// streamed against faer, `Aᵀ X` 0.10 against 0.24 s at 20 columns, 0.46 against 0.58 s at 128,
/// 3.4 against 1.8 s at 500 (`A X`: 0.40 against 0.40 s at 128, 2.0 against 1.9 s at 500).
pub(crate) const MAX_COLUMNS: usize = 128;

/// `A`'s row stride where the kernels apply: `A`'s rows contiguous, nothing empty, at most
/// [`MAX_COLUMNS`] columns in `X`.
fn row_stride<T: Streamed>(a: ArrayView2<'_, T>, b: usize) -> Option<usize> {
    let s = a.strides();
    if s[1] != 1 || s[0] < 0 || a.is_empty() || b == 0 || b > MAX_COLUMNS {
        return None;
    }
    usize::try_from(s[0]).ok()
}

/// A row-major, contiguous copy of `x` in `T` (each entry rounded once).
fn rounded<T: Streamed>(x: ArrayView2<'_, f64>) -> Array2<T> {
    Array2::from_shape_fn(x.dim(), |(i, c)| T::round(x[[i, c]]))
}

/// Columns of `X` per call of the panel kernel: four broadcasts against two registers of `A`.
const NR: usize = 4;

/// `out = Aᵀ X` for `A` (`n × m`) with contiguous rows and `X` (`n × b`), `out` (`m × b`) in
/// any layout; `X` is read in `f64` and rounded once to `T`. Returns `false`, leaving `out`
/// untouched, where the kernel does not apply (no AVX2 and FMA, `A`'s rows not contiguous, or
/// `X` wider than [`MAX_COLUMNS`]): the caller then uses faer. Shapes are the caller's to check.
pub(crate) fn at_x_into<T: Streamed>(
    out: ArrayViewMut2<'_, f64>,
    a: ArrayView2<'_, T>,
    x: ArrayView2<'_, f64>,
) -> bool {
    // SAFETY: the CPU runs the instruction set it reports.
    Isa::detect().is_some_and(|isa| unsafe { at_x_with(isa, out, a, x) })
}

/// [`at_x_into`] with the instruction set given.
///
/// # Safety
/// The CPU runs `isa` (it is one of [`Isa::available`]).
unsafe fn at_x_with<T: Streamed>(
    isa: Isa,
    mut out: ArrayViewMut2<'_, f64>,
    a: ArrayView2<'_, T>,
    x: ArrayView2<'_, f64>,
) -> bool {
    let (n, m) = a.dim();
    let b = x.ncols();
    let Some(lda) = row_stride(a, b) else {
        return false;
    };
    let width = panel_width::<T>(isa);
    let xs = rounded::<T>(x);
    let xs = xs.as_slice().unwrap_or(&[]);
    let threads = rayon::current_num_threads().max(1);
    // Bands: a multiple of the thread count, each at most MAX_BAND wide, whole panels.
    let bands = threads * m.div_ceil(threads * MAX_BAND).max(1);
    let band = m.div_ceil(bands).div_ceil(width) * width;
    let base = a.as_ptr() as usize;
    let x_ptr = xs.as_ptr() as usize;
    out.axis_chunks_iter_mut(Axis(0), band)
        .into_par_iter()
        .enumerate()
        .for_each_init(Vec::<T>::new, |acc, (t, mut o)| {
            let j0 = t * band;
            let w = o.nrows();
            let panels = w / width;
            acc.clear();
            acc.resize(panels * width * b, T::default());
            let a_ptr = base as *const T;
            let x_ptr = x_ptr as *const T;
            let mut i0 = 0;
            while i0 < n {
                let rows = isa.rows_per_step().min(n - i0);
                for p in 0..panels {
                    let mut c0 = 0;
                    while c0 < b {
                        let nr = NR.min(b - c0);
                        // SAFETY: `isa` runs here (the caller's promise); rows i0..i0+rows of A
                        // exist and columns j0 + p·width + width ≤ j0 + w ≤ m; X has n rows of b
                        // entries, c0 + nr ≤ b; the panel's accumulators `(p·b + c0)·width ..`
                        // + nr·width lie in `acc`.
                        unsafe {
                            T::panel(
                                isa,
                                rows,
                                a_ptr.add(i0 * lda + j0 + p * width),
                                lda,
                                x_ptr.add(i0 * b + c0),
                                b,
                                acc.as_mut_ptr().add((p * b + c0) * width),
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
                    for r in 0..width {
                        o[[p * width + r, c]] = acc[(p * b + c) * width + r].to_f64();
                    }
                }
            }
            // Columns beyond the last whole panel, summed in the same order.
            for jj in panels * width..w {
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

/// `Xᵀ`'s first `len` columns for the 512-bit dot kernel, each entry of `X` rounded once to
/// `T`: the columns of `X` in pairs, each pair's two rows of `Xᵀ` interleaved [`Streamed::LANES`]
/// entries at a time (a missing second column of an odd `b` is zeros). Pair `p` starts at
/// `p · 2 len`; `len` is a multiple of the lanes.
fn interleaved<T: Streamed>(x: ArrayView2<'_, f64>, len: usize) -> Vec<T> {
    let lanes = T::LANES;
    let mut xp = vec![T::default(); x.ncols().div_ceil(2) * 2 * len];
    for (c, col) in x.columns().into_iter().enumerate() {
        let pair = &mut xp[c / 2 * 2 * len..][..2 * len];
        for (j, &v) in col.iter().take(len).enumerate() {
            pair[(2 * (j / lanes) + c % 2) * lanes + j % lanes] = T::round(v);
        }
    }
    xp
}

/// `out = A X` for `A` (`n × m`) with contiguous rows and `X` (`m × b`), `out` (`n × b`) in any
/// layout; `X` is read in `f64` and rounded once to `T`. Returns `false`, leaving `out` untouched,
/// where the kernel does not apply (as [`at_x_into`]). Shapes are the caller's to check.
pub(crate) fn a_x_into<T: Streamed>(out: ArrayViewMut2<'_, f64>, a: ArrayView2<'_, T>, x: ArrayView2<'_, f64>) -> bool {
    // SAFETY: the CPU runs the instruction set it reports.
    Isa::detect().is_some_and(|isa| unsafe { a_x_with(isa, out, a, x) })
}

/// [`a_x_into`] with the instruction set given.
///
/// # Safety
/// The CPU runs `isa` (it is one of [`Isa::available`]).
unsafe fn a_x_with<T: Streamed>(
    isa: Isa,
    mut out: ArrayViewMut2<'_, f64>,
    a: ArrayView2<'_, T>,
    x: ArrayView2<'_, f64>,
) -> bool {
    let m = a.ncols();
    let b = x.ncols();
    let Some(lda) = row_stride(a, b) else {
        return false;
    };
    let (dot_rows, dot_cols) = isa.dot_block();
    let vec_len = m / T::LANES * T::LANES;
    // The dot kernel's copy of Xᵀ, rounded once: its rows (AVX2), or its rows' pairs
    // interleaved (AVX-512). The columns beyond `vec_len` round X's entries in the same way.
    let (dot_xt, per_col, ld) = match isa {
        Isa::Avx2 => (rounded::<T>(x.t()).into_raw_vec_and_offset().0, 1, m),
        Isa::Avx512 => (interleaved::<T>(x, vec_len), 2, 2 * vec_len),
    };
    let base = a.as_ptr() as usize;
    let xt_ptr = dot_xt.as_ptr() as usize;
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
                    let nr = dot_rows.min(rows - r0);
                    let mut c0 = 0;
                    while c0 < b {
                        let nc = dot_cols.min(b - c0);
                        // Pairs of Xᵀ start at even columns: AVX-512's dot block is 8 columns.
                        debug_assert!(c0 % per_col == 0);
                        // SAFETY: `isa` runs here (the caller's promise); rows i0 + r0 .. + nr of
                        // A exist with columns j0 + len ≤ vec_len ≤ m; the kernel's view of
                        // columns c0 .. c0 + nc of Xᵀ holds `per_col · vec_len` entries per
                        // column (or pair) from column j0 (c0 is even where pairs are read); the
                        // accumulators `(r0·b + c0·nr)·LANES ..` + nr·nc·LANES lie in `acc`
                        // (r0 + nr ≤ rows).
                        unsafe {
                            T::dots(
                                isa,
                                len,
                                a_ptr.add((i0 + r0) * lda + j0),
                                lda,
                                xt_ptr.add(c0 / per_col * ld + per_col * j0),
                                ld,
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
                let nr = dot_rows.min(rows - r0);
                let mut c0 = 0;
                while c0 < b {
                    let nc = dot_cols.min(b - c0);
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
                                s = T::mul_add(s, row[j], T::round(x[[j, c0 + c]]));
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

    type Kernel<T> = unsafe fn(Isa, ArrayViewMut2<'_, f64>, ArrayView2<'_, T>, ArrayView2<'_, f64>) -> bool;

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
    /// with every instruction set the CPU runs and 1 to 3 threads, on `A` and on a row-strided
    /// copy of it (its columns within a wider matrix).
    fn assert_exact(
        kernel: Kernel<f64>,
        reference: fn(ArrayView2<'_, f64>, ArrayView2<'_, f64>) -> Array2<f64>,
        a: &Array2<f64>,
        x: &Array2<f64>,
    ) {
        let want = reference(a.view(), x.view());
        let (n, m) = a.dim();
        let wide = Array2::from_shape_fn((n, m + 3), |(i, j)| if j < m { a[[i, j]] } else { f64::NAN });
        let strided = wide.slice(ndarray::s![.., ..m]);
        for isa in Isa::available() {
            // (ndarray gives a single column the stride 0, which the kernels refuse.)
            let views = [(1, a.view()), (2, a.view()), (3, a.view()), (2, strided)];
            for (threads, a) in views.into_iter().take(if m > 1 { 4 } else { 3 }) {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                let mut out = Array2::from_elem(want.dim(), f64::NAN);
                // SAFETY: `isa` is one the CPU runs.
                assert!(pool.install(|| unsafe { kernel(isa, out.view_mut(), a, x.view()) }));
                assert_eq!(
                    out,
                    want,
                    "A {:?} {:?} X {:?} {isa:?} threads {threads}",
                    a.dim(),
                    a.strides(),
                    x.dim()
                );
            }
        }
    }

    /// The `f32` kernel on a row-strided `A` (a column slice of a wider matrix) into a
    /// column-major `out`, against the exact product of the rounded operands: within `k ε_f32`
    /// of the largest entry for `k` terms; and the same bits with every instruction set.
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
        let scale = exact.iter().fold(0.0f64, |s, v| s.max(v.abs()));
        let mut first: Option<Array2<f64>> = None;
        for isa in Isa::available() {
            let mut out = Array2::<f64>::zeros(exact.dim().f());
            // SAFETY: `isa` is one the CPU runs.
            assert!(unsafe { kernel(isa, out.view_mut(), a32, x.view()) });
            let err = (&out - &exact).iter().fold(0.0f64, |s, v| s.max(v.abs()));
            assert!(
                err <= terms as f64 * f64::from(f32::EPSILON) * scale.max(1.0),
                "{isa:?}: error {err}, scale {scale}"
            );
            match &first {
                None => first = Some(out),
                Some(f) => assert_eq!(&out, f, "{isa:?} against {:?}", Isa::Avx2),
            }
        }
    }

    #[test]
    fn at_x_is_its_ordered_sum_for_every_shape_and_thread_count() {
        // Widths with and without a partial panel, blocks with every remainder of NR, row counts
        // with and without a partial step.
        for &(n, m, b) in &[
            (1, 1, 1),
            (9, 8, 4),
            (17, 23, 5),
            (40, 4100, 7),
            (300, 129, 20),
            (13, 7, 3),
            (33, 47, 9),
        ] {
            assert_exact(at_x_with::<f64>, reference_atx, &matrix(n, m, 0), &matrix(n, b, 1));
        }
        assert_f32_close(
            at_x_with::<f32>,
            reference_atx,
            &matrix(70, 45, 0),
            &matrix(70, 6, 1),
            70,
        );
        assert_f32_close(
            at_x_with::<f32>,
            reference_atx,
            &matrix(41, 100, 2),
            &matrix(41, 9, 3),
            41,
        );
    }

    #[test]
    fn a_x_is_its_ordered_sum_for_every_shape_and_thread_count() {
        // Rows with every remainder of the task (24) and of the dot kernels (3, 4); widths with
        // and without a tail and across tiles (512); blocks with every remainder of 4 and 8.
        for &(n, m, b) in &[
            (1, 1, 1),
            (2, 3, 2),
            (5, 8, 4),
            (25, 1031, 7),
            (50, 37, 20),
            (73, 4, 3),
            (24, 600, 5),
            (7, 45, 11),
            (23, 530, 15),
            (4, 16, 8),
        ] {
            assert_exact(a_x_with::<f64>, reference_ax, &matrix(n, m, 0), &matrix(m, b, 1));
        }
        assert_f32_close(a_x_with::<f32>, reference_ax, &matrix(31, 77, 0), &matrix(77, 6, 1), 77);
        assert_f32_close(
            a_x_with::<f32>,
            reference_ax,
            &matrix(26, 530, 2),
            &matrix(530, 13, 3),
            530,
        );
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
        assert_eq!(
            at_x_into(out.view_mut(), a.view(), limit.view()),
            Isa::detect().is_some()
        );
    }
}
