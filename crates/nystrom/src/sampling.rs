//! Landmark sampling: uniform, or proportional to squared row/column norms of `G`.
use ksvd_linalg::random::{rng_from_seed, sample_indices};
use rand::Rng;

/// How rows and columns of `G` are sampled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Sampling {
    /// Uniformly without replacement (the paper's choice).
    #[default]
    Uniform,
    /// Without replacement with probabilities proportional to the squared Euclidean norms of
    /// the rows (for row samples) and columns (for column samples) of `G` (Drineas, Kannan &
    /// Mahoney's length-squared sampling). The sampled block is rescaled by `1/sqrt(n p_i)`
    /// on each side, the usual importance weighting.
    SquaredNorm,
}

impl std::str::FromStr for Sampling {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "uniform" => Ok(Sampling::Uniform),
            "norm" | "squared-norm" | "squared_norm" => Ok(Sampling::SquaredNorm),
            other => Err(format!("unknown sampling `{other}` (expected uniform or squared-norm)")),
        }
    }
}

/// `k` distinct indices of `0..weights.len()` drawn with probability proportional to the
/// weights (Efraimidis & Spirakis' exponential keys), sorted. Zero-weight items are drawn last.
pub fn weighted_indices(weights: &[f64], k: usize, seed: u64) -> Vec<usize> {
    let mut rng = rng_from_seed(seed);
    let mut keys: Vec<(f64, usize)> = weights
        .iter()
        .enumerate()
        .map(|(i, &w)| {
            let u: f64 = rng.gen::<f64>().max(f64::MIN_POSITIVE);
            let key = if w > 0.0 { u.ln() / w } else { f64::NEG_INFINITY };
            (key, i)
        })
        .collect();
    keys.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut idx: Vec<usize> = keys.into_iter().take(k.min(weights.len())).map(|(_, i)| i).collect();
    idx.sort_unstable();
    idx
}

/// `k` uniform indices of `0..n`, sorted.
pub fn uniform_indices(n: usize, k: usize, seed: u64) -> Vec<usize> {
    let mut rng = rng_from_seed(seed);
    sample_indices(&mut rng, n, k)
}
