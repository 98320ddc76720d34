//! Element-wise maths on slices, written so that the compiler vectorises it.
//!
//! Kernel matrices spend most of their evaluation time in `exp`. The standard library calls
//! the C library's scalar `exp` once per entry; [`exp_in_place`] evaluates a branch-free
//! Cody–Waite reduction `x = k ln 2 + r`, `|r| ≤ ln 2 / 2`, a degree-13 Taylor polynomial in `r`
//! and the scaling by `2^k` through the exponent bits, which LLVM turns into SIMD code. On x86-64
//! with AVX2 and FMA (checked at run time) a 4-lane fused-multiply-add version is used.
//!
//! Accuracy: relative error below `4 ε` for `x ≥ -700`. Arguments below [`EXP_FLUSH_BELOW`]
//! give exactly `0` (the kernels flush such values anyway: they would soon be subnormal, and
//! subnormal arithmetic is about 100 times slower); arguments above 709 give `+∞`; NaN stays NaN.
//!
//! [`CompensatedSum`] accumulates sums of products as if in twice the working precision
//! (Ogita, Rump and Oishi's `Dot2`), with a rigorous bound on its error: for residuals and
//! small bilinear forms whose value is far below the size of their terms. [`add_scaled`] is the
//! row update `y += c x` of sparse products and scatters.

/// Arguments below this give `exp = 0` exactly (`e^-700 ≈ 1e-304`).
pub const EXP_FLUSH_BELOW: f64 = -700.0;

const LOG2E: f64 = std::f64::consts::LOG2_E;
// ln 2 split so that k * LN2_HI is exact for |k| < 2^11.
const LN2_HI: f64 = 6.931_471_803_691_238_2e-1;
const LN2_LO: f64 = 1.908_214_929_270_587_7e-10;
// 1.5 * 2^52: adding it rounds to the nearest integer, kept in the low mantissa bits.
const ROUND: f64 = 6_755_399_441_055_744.0;
const INV_FACT: [f64; 14] = [
    1.0,
    1.0,
    1.0 / 2.0,
    1.0 / 6.0,
    1.0 / 24.0,
    1.0 / 120.0,
    1.0 / 720.0,
    1.0 / 5040.0,
    1.0 / 40320.0,
    1.0 / 362_880.0,
    1.0 / 3_628_800.0,
    1.0 / 39_916_800.0,
    1.0 / 479_001_600.0,
    1.0 / 6_227_020_800.0,
];

macro_rules! exp_body {
    ($x:expr, $fma:ident) => {{
        let x: f64 = $x;
        let nan = x != x;
        let xc = x.max(EXP_FLUSH_BELOW).min(709.5);
        let t = $fma(xc, LOG2E, ROUND);
        let k = t - ROUND;
        let r = $fma(-k, LN2_LO, $fma(-k, LN2_HI, xc));
        // Horner's rule from the highest coefficient down (a fixed trip count: unrolled).
        let mut p = INV_FACT[13];
        for &c in INV_FACT[..13].iter().rev() {
            p = $fma(p, r, c);
        }
        // 2^k from the exponent bits: k + 1023 in [1, 2046] for x in [-700, 709.5]; the
        // top half of the range is split into two factors so that 2^k never overflows early.
        let kb = t.to_bits().wrapping_add(1023 - 1) << 52;
        let scale = f64::from_bits(kb);
        let y = p * scale * 2.0;
        let y = if x < EXP_FLUSH_BELOW { 0.0 } else { y };
        let y = if x > 709.78 { f64::INFINITY } else { y };
        // `x + x` (NaN for NaN), not `x`: returning the input lets the compiler turn the slice
        // loops' stores into masked stores (`vmaskmovps`), microcoded on AMD CPUs (a third of
        // the `f32` loop's time on an EPYC).
        if nan {
            x + x
        } else {
            y
        }
    }};
}

#[inline(always)]
fn mul_add_plain(a: f64, b: f64, c: f64) -> f64 {
    a * b + c
}

#[inline(always)]
fn mul_add_fused(a: f64, b: f64, c: f64) -> f64 {
    a.mul_add(b, c)
}

/// `exp(x)` by the same branch-free formula as [`exp_in_place`] (scalar, portable).
#[inline]
pub fn exp(x: f64) -> f64 {
    exp_body!(x, mul_add_plain)
}

fn exp_slice_portable(v: &mut [f64]) {
    for x in v.iter_mut() {
        *x = exp_body!(*x, mul_add_plain);
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn exp_slice_avx2(v: &mut [f64]) {
    for x in v.iter_mut() {
        *x = exp_body!(*x, mul_add_fused);
    }
}

/// `v[i] = exp(v[i])` for every entry (see the module docs for accuracy and range).
pub fn exp_in_place(v: &mut [f64]) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
            // SAFETY: the CPU supports the features the function is compiled for (checked above).
            unsafe { exp_slice_avx2(v) };
            return;
        }
    }
    exp_slice_portable(v);
}

/// Arguments below this give `exp = 0` exactly in [`exp_in_place_f32`] (`e^-86 ≈ 4.5e-38`, near the
/// bottom of the normal `f32` range).
pub const EXP_F32_FLUSH_BELOW: f32 = -86.0;

const LOG2E_F32: f32 = std::f32::consts::LOG2_E;
// ln 2 split so that k * LN2_HI_F32 is exact for |k| < 2^8.
const LN2_HI_F32: f32 = 0.693_359_4;
const LN2_LO_F32: f32 = -2.121_944_4e-4;
// 1.5 * 2^23: adding it rounds to the nearest integer, kept in the low mantissa bits.
const ROUND_F32: f32 = 12_582_912.0;

macro_rules! exp_f32_body {
    ($x:expr, $fma:ident) => {{
        let x: f32 = $x;
        let nan = x != x;
        let xc = x.max(EXP_F32_FLUSH_BELOW).min(88.5);
        let t = $fma(xc, LOG2E_F32, ROUND_F32);
        let k = t - ROUND_F32;
        let r = $fma(-k, LN2_LO_F32, $fma(-k, LN2_HI_F32, xc));
        // Degree 7 (Taylor): truncation below 6e-9 for |r| <= ln 2 / 2, under f32's epsilon.
        let mut p = 1.0f32 / 5040.0;
        for &c in &[1.0f32 / 720.0, 1.0 / 120.0, 1.0 / 24.0, 1.0 / 6.0, 0.5, 1.0, 1.0] {
            p = $fma(p, r, c);
        }
        // 2^k from the exponent bits: k + 127 - 1 in [1, 254] for x in [-86, 88.5].
        let kb = t.to_bits().wrapping_add(127 - 1) << 23;
        let y = p * f32::from_bits(kb) * 2.0;
        let y = if x < EXP_F32_FLUSH_BELOW { 0.0 } else { y };
        let y = if x > 88.72 { f32::INFINITY } else { y };
        // `x + x` (NaN for NaN), not `x`: returning the input lets the compiler turn the slice
        // loops' stores into masked stores (`vmaskmovps`), microcoded on AMD CPUs (a third of
        // the `f32` loop's time on an EPYC).
        if nan {
            x + x
        } else {
            y
        }
    }};
}

#[inline(always)]
fn mul_add_plain_f32(a: f32, b: f32, c: f32) -> f32 {
    a * b + c
}

#[inline(always)]
fn mul_add_fused_f32(a: f32, b: f32, c: f32) -> f32 {
    a.mul_add(b, c)
}

/// `exp(x)` in `f32` by the same formula as [`exp_in_place_f32`] (scalar, portable).
#[inline]
pub fn exp_f32(x: f32) -> f32 {
    exp_f32_body!(x, mul_add_plain_f32)
}

fn exp_f32_portable(v: &mut [f32]) {
    for x in v.iter_mut() {
        *x = exp_f32_body!(*x, mul_add_plain_f32);
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn exp_f32_avx2(v: &mut [f32]) {
    for x in v.iter_mut() {
        *x = exp_f32_body!(*x, mul_add_fused_f32);
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,fma")]
unsafe fn exp_f32_avx512(v: &mut [f32]) {
    for x in v.iter_mut() {
        *x = exp_f32_body!(*x, mul_add_fused_f32);
    }
}

/// `v[i] = exp(v[i])` in `f32` (the same reduction as [`exp_in_place`] with `f32` constants and a
/// degree-7 polynomial): relative error below `4 ε_f32` for `x ≥ -86`; below
/// [`EXP_F32_FLUSH_BELOW`] exactly `0`, above 88.72 `+∞`, NaN stays NaN. Sixteen lanes with
/// AVX-512, eight with AVX2 (checked at run time).
pub fn exp_in_place_f32(v: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") && std::arch::is_x86_feature_detected!("fma") {
            // SAFETY: the CPU supports the features the function is compiled for (checked above).
            unsafe { exp_f32_avx512(v) };
            return;
        }
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
            // SAFETY: as above.
            unsafe { exp_f32_avx2(v) };
            return;
        }
    }
    exp_f32_portable(v);
}

/// `a + b = s + e` exactly (Knuth's TwoSum).
#[inline]
fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    (s, (a - (s - bb)) + (b - bb))
}

/// Unit roundoff `u = 2⁻⁵³`.
const UNIT_ROUNDOFF: f64 = f64::EPSILON / 2.0;

/// `γ_n = n u / (1 − n u)` (Higham's constant), `∞` once `n u ≥ 1`.
fn gamma(n: usize) -> f64 {
    let nu = n as f64 * UNIT_ROUNDOFF;
    if nu >= 1.0 {
        f64::INFINITY
    } else {
        nu / (1.0 - nu)
    }
}

/// A sum of terms and products accumulated in compensated arithmetic (Ogita, Rump and Oishi,
/// "Accurate sum and dot product", SIAM J. Sci. Comput. 26, 2005: algorithm `Dot2`): each
/// product is split exactly into its rounded value and its error (a fused multiply-add), each
/// addition likewise (TwoSum), and the errors are summed on the side. The result is as accurate
/// as if computed in twice the working precision and then rounded:
/// `|value − exact| ≤ u |exact| + γ_n² Σ |termᵢ|` ([`CompensatedSum::error_bound`] returns a
/// bound of this from the accumulated quantities).
///
/// ```
/// use ksvd_linalg::vecmath::CompensatedSum;
///
/// // 1e16 + 1 - 1e16 loses the 1 in plain arithmetic.
/// let mut acc = CompensatedSum::new();
/// acc.add(1e16);
/// acc.add_product(1.0, 1.0);
/// acc.add(-1e16);
/// assert_eq!(acc.value(), 1.0);
/// assert!(acc.error_bound() < 1e-13);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CompensatedSum {
    sum: f64,
    error: f64,
    magnitude: f64,
    terms: usize,
}

impl CompensatedSum {
    /// An empty sum (value 0).
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `x`.
    #[inline]
    pub fn add(&mut self, x: f64) {
        let (s, e) = two_sum(self.sum, x);
        self.sum = s;
        self.error += e;
        self.magnitude += x.abs();
        self.terms += 1;
    }

    /// Adds `a b` (the product is split exactly with a fused multiply-add).
    #[inline]
    pub fn add_product(&mut self, a: f64, b: f64) {
        let p = a * b;
        let pe = a.mul_add(b, -p);
        let (s, e) = two_sum(self.sum, p);
        self.sum = s;
        self.error += e + pe;
        self.magnitude += p.abs();
        self.terms += 1;
    }

    /// The sum, rounded once.
    pub fn value(&self) -> f64 {
        self.sum + self.error
    }

    /// A bound on `|value − exact|`: `u |value| + γ_{2n}² Σ |termᵢ|` (with `n` terms), slightly
    /// above the bound of Ogita, Rump and Oishi (Proposition 4.5 and Theorem 5.3) to cover the
    /// rounding of `|value|` and of the sum of magnitudes themselves.
    pub fn error_bound(&self) -> f64 {
        let g = gamma(2 * self.terms + 2);
        2.0 * UNIT_ROUNDOFF * self.value().abs() + g * g * self.magnitude * (1.0 + gamma(self.terms + 1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rel(a: f64, b: f64) -> f64 {
        if b == 0.0 {
            a.abs()
        } else {
            ((a - b) / b).abs()
        }
    }

    #[test]
    fn matches_std_exp_to_a_few_ulps() {
        let mut xs: Vec<f64> = (0..200_001).map(|i| -700.0 + 1409.0 * i as f64 / 200_000.0).collect();
        xs.extend([
            0.0,
            -0.0,
            1e-300,
            -1e-300,
            0.5 * std::f64::consts::LN_2,
            1.0,
            -1.0,
            709.0,
        ]);
        let mut v = xs.clone();
        exp_in_place(&mut v);
        for (&x, &y) in xs.iter().zip(&v) {
            assert!(rel(y, x.exp()) <= 4.0 * f64::EPSILON, "exp({x}) = {y}, std {}", x.exp());
            assert!(rel(exp(x), x.exp()) <= 4.0 * f64::EPSILON, "scalar exp({x})");
        }
    }

    #[test]
    fn f32_exp_matches_std_to_a_few_f32_ulps() {
        let mut xs: Vec<f32> = (0..200_001).map(|i| -86.0 + 174.5 * i as f32 / 200_000.0).collect();
        xs.extend([0.0, -0.0, 1e-30, -1e-30, 0.5 * std::f32::consts::LN_2, 1.0, -1.0, 88.0]);
        let mut v = xs.clone();
        exp_in_place_f32(&mut v);
        let mut portable = xs.clone();
        exp_f32_portable(&mut portable);
        for ((&x, &y), &q) in xs.iter().zip(&v).zip(&portable) {
            let exact = f64::from(x).exp();
            assert!(
                rel(f64::from(y), exact) <= 4.0 * f64::from(f32::EPSILON),
                "exp({x}) = {y}, exact {exact}"
            );
            assert!(
                rel(f64::from(q), exact) <= 4.0 * f64::from(f32::EPSILON),
                "portable exp({x}) = {q}"
            );
        }
        let mut special = [f32::NEG_INFINITY, -1e10, -87.5, 89.0, f32::INFINITY, f32::NAN];
        exp_in_place_f32(&mut special);
        assert_eq!(&special[..5], &[0.0, 0.0, 0.0, f32::INFINITY, f32::INFINITY]);
        assert!(special[5].is_nan());
    }

    #[test]
    fn special_values() {
        let mut v = [f64::NEG_INFINITY, -1e10, -700.5, 710.0, f64::INFINITY, f64::NAN];
        exp_in_place(&mut v);
        assert_eq!(&v[..5], &[0.0, 0.0, 0.0, f64::INFINITY, f64::INFINITY]);
        assert!(v[5].is_nan());
        assert_eq!(exp(0.0), 1.0);
    }

    #[test]
    fn compensated_sums_cancel_exactly() {
        // Terms whose exact sum is far below their size: plain summation returns garbage,
        // the compensated one the exact value (all terms are exactly representable).
        let terms = [1e20, 3.0, -1e20, 0.5, 1e-3, -1e-3];
        let plain: f64 = terms.iter().sum();
        assert_ne!(plain, 3.5);
        let mut acc = CompensatedSum::new();
        for &t in &terms {
            acc.add(t);
        }
        assert_eq!(acc.value(), 3.5);
        assert!(acc.error_bound() <= 1e-15 * 3.5 + 1e-9, "{}", acc.error_bound());
    }

    #[test]
    fn compensated_products_match_exact_integer_arithmetic() {
        // Products of 30-bit integers need up to 60 bits (not exact in f64); each a (a + d) is
        // followed by −a a, so the sum (of the a d) is 1e8 times smaller than its terms. i128
        // gives the exact value.
        let mut rng = crate::random::rng_from_seed(7);
        use rand::Rng as _;
        let mut acc = CompensatedSum::new();
        let mut plain = 0.0f64;
        let mut exact: i128 = 0;
        for _ in 0..1000 {
            let a: i64 = rng.gen_range(1 << 29..1 << 30);
            let d: i64 = rng.gen_range(-3..=3);
            for (x, y) in [(a, a + d), (-a, a)] {
                acc.add_product(x as f64, y as f64);
                plain += (x as f64) * (y as f64);
                exact += x as i128 * y as i128;
            }
        }
        let exact = exact as f64;
        assert!(
            (acc.value() - exact).abs() <= acc.error_bound(),
            "{} vs {exact}",
            acc.value()
        );
        assert!((acc.value() - exact).abs() <= f64::EPSILON * exact.abs().max(1.0) * 2.0);
        // The bound is tight enough to matter, and plain summation is visibly worse.
        assert!(acc.error_bound() < 1e-3 * (plain - exact).abs().max(1.0));
    }
}

/// `y += c x` with `ndarray`'s `scaled_add` arithmetic (`y + c x`, two roundings, so the same
/// bits), as a plain slice loop when both rows are contiguous: the row update of sparse products
/// and gradient scatters, where `scaled_add`'s generic iteration cost time per short row.
#[inline]
pub fn add_scaled(mut y: ndarray::ArrayViewMut1<'_, f64>, c: f64, x: ndarray::ArrayView1<'_, f64>) {
    match (y.as_slice_mut(), x.as_slice()) {
        (Some(ys), Some(xs)) => ys.iter_mut().zip(xs).for_each(|(y, &x)| *y += c * x),
        _ => y.scaled_add(c, &x),
    }
}
