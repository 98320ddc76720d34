//! Seeded random matrices: every random choice in ksvd-rs goes through an explicit seed.
use ndarray::Array2;
use rand::{seq::index::sample, Rng, SeedableRng};
use rand_distr::StandardNormal;
use rand_xoshiro::Xoshiro256PlusPlus;

/// The random number generator used throughout ksvd-rs (rand 0.8 API, as linfa 0.8 expects).
pub type SeededRng = Xoshiro256PlusPlus;

/// A generator from a 64-bit seed.
pub fn rng_from_seed(seed: u64) -> SeededRng {
    Xoshiro256PlusPlus::seed_from_u64(seed)
}

/// An `nrows x ncols` matrix of independent standard normal entries.
pub fn gaussian_matrix<R: Rng + ?Sized>(rng: &mut R, nrows: usize, ncols: usize) -> Array2<f64> {
    Array2::from_shape_simple_fn((nrows, ncols), || rng.sample(StandardNormal))
}

/// `k` distinct indices drawn uniformly from `0..n`, in increasing order.
/// `k` is clamped to `n`.
pub fn sample_indices<R: Rng + ?Sized>(rng: &mut R, n: usize, k: usize) -> Vec<usize> {
    let mut idx = sample(rng, n, k.min(n)).into_vec();
    idx.sort_unstable();
    idx
}
