//! Per-item seeds: a random stream for row `i` that does not depend on how rows are chunked or
//! partitioned.
use ksvd_linalg::random::{rng_from_seed, SeededRng};

/// SplitMix64's finaliser: a bijective 64-bit mixer.
#[inline]
pub(crate) fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A seed for item `index` of the stream `(seed, domain)`; distinct domains give unrelated
/// streams for the same seed.
#[inline]
pub(crate) fn item_seed(seed: u64, domain: u64, index: u64) -> u64 {
    mix64(mix64(seed ^ mix64(domain.wrapping_add(0x9e37_79b9_7f4a_7c15))).wrapping_add(index))
}

/// The generator of item `index` of the stream `(seed, domain)`: the same numbers whichever items
/// are generated, in whichever order or on whichever thread. Streams of distinct `domain`s are
/// unrelated; this crate uses the domains 1 (projection rows), 2 (train/test split) and
/// 7 (landmark-row keys).
#[inline]
pub fn item_rng(seed: u64, domain: u64, index: u64) -> SeededRng {
    rng_from_seed(item_seed(seed, domain, index))
}

/// A uniform number in `[0, 1)` for item `index` of the stream `(seed, domain)`.
#[inline]
pub(crate) fn item_uniform(seed: u64, domain: u64, index: u64) -> f64 {
    (item_seed(seed, domain, index) >> 11) as f64 / (1u64 << 53) as f64
}

/// Stream domains used across the crate.
pub(crate) mod domain {
    /// Rows of a sparse projection.
    pub const PROJECTION: u64 = 1;
    /// Train/test split of a file without a test part.
    pub const SPLIT: u64 = 2;
    /// Keys of the bottom-`n` landmark sketch.
    pub const SKETCH: u64 = 7;
}
