//! Reservoir sampling (Vitter's Algorithm R): a uniform sample of `k` items from a stream of
//! unknown length, in one pass and `O(k)` memory.
use ksvd_linalg::random::{rng_from_seed, SeededRng};
use rand::Rng;

/// A uniform sample without replacement of `capacity` items from a stream.
///
/// Item `t` (0-based) enters with probability `k/(t+1)` and replaces a uniformly chosen member,
/// so after `N ≥ k` items every item is in the sample with probability exactly `k/N`. The
/// generator draws one number per item past the first `k`, so the sample depends only on the
/// seed and the sequence of items, not on how the stream is chunked.
#[derive(Debug, Clone)]
pub struct Reservoir<T> {
    capacity: usize,
    seen: usize,
    items: Vec<(usize, T)>,
    rng: SeededRng,
}

impl<T> Reservoir<T> {
    /// An empty reservoir of `capacity` slots drawing from `seed`.
    pub fn new(capacity: usize, seed: u64) -> Self {
        Reservoir {
            capacity,
            seen: 0,
            items: Vec::with_capacity(capacity.min(1 << 16)),
            rng: rng_from_seed(seed),
        }
    }

    /// Offers the next item of the stream, identified by `index`; `make` builds it only when it
    /// is kept. Returns whether it was kept.
    pub fn offer(&mut self, index: usize, make: impl FnOnce() -> T) -> bool {
        let t = self.seen;
        self.seen += 1;
        if t < self.capacity {
            self.items.push((index, make()));
            return true;
        }
        let j = self.rng.gen_range(0..=t);
        if j < self.capacity {
            self.items[j] = (index, make());
            true
        } else {
            false
        }
    }

    /// Number of items offered so far.
    pub fn seen(&self) -> usize {
        self.seen
    }

    /// Number of slots.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// The sample, sorted by index.
    pub fn into_sorted(self) -> Vec<(usize, T)> {
        let mut items = self.items;
        items.sort_by_key(|(i, _)| *i);
        items
    }
}
