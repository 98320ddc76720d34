//! Landmark sampling: uniform, proportional to squared row/column norms of `G`, or adaptive
//! (pivoted cross approximation, see [`Sampling::AdaptiveCross`]).
use crate::error::Result;
use ksvd_linalg::random::{gaussian_matrix, rng_from_seed, sample_indices};
use ksvd_linalg::{dense, LinearOperator, Vocabulary};
use rand::Rng;

/// How rows and columns of `G` are sampled.
///
/// Names: this type owns them for every front end (the `ksvd` command's `--sampling`,
/// Python's `sampling=`, the experiment specs). [`Vocabulary::name`] is the canonical name
/// (`uniform`, `squared-norm`, `leverage`, `adaptive`, `greedy`; [`Display`](std::fmt::Display)
/// and serde write it); [`FromStr`](std::str::FromStr) and serde also read the other spellings
/// of [`Vocabulary::names`] (`norm`, `adaptive-cross`, snake_case, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Sampling {
    /// Uniformly without replacement (the paper's choice).
    #[default]
    Uniform,
    /// Without replacement with probabilities proportional to the squared Euclidean norms of
    /// the rows (for row samples) and columns (for column samples) of `G` (Drineas, Kannan &
    /// Mahoney's length-squared sampling). The sampled block is rescaled by `1/sqrt(n p_i)`
    /// on each side, the usual importance weighting.
    SquaredNorm,
    /// Without replacement with probabilities proportional to approximate rank-`r` leverage
    /// scores mixed half and half with uniform (`p_i = ℓ_i/(2r) + 1/(2N)`, which bounds the
    /// importance weights `1/sqrt(n p_i)` of rows the sketch deems irrelevant): `ℓ_i = ‖U_{i,:}‖²`
    /// for the top `r` singular vectors of the sketch `G Ω`, and likewise for columns from
    /// `Gᵀ U` ([`sketched_leverage`]); two products with `G`. Importance-scaled like
    /// [`Sampling::SquaredNorm`], then eq. 11.
    Leverage,
    /// Adaptive, randomly pivoted block cross approximation: landmark rows are drawn in
    /// proportion to the squared norms of the current residual's rows `‖(G − Ĝ)_{i,:}‖²`
    /// (estimated for every row at once from a Gaussian sketch `(G − Ĝ) Ω` that is updated
    /// through the chosen rows and columns, never by forming `G`), and landmark columns are the
    /// pivots of a column-pivoted QR of the chosen residual rows (bounded multipliers, hence a
    /// stable approximation). `Ĝ = C W⁺ R` interpolates every chosen row and column.
    /// `n = m = min(rows, cols)` pivots; `O((N + M) m²)` work plus one product of `G` with a
    /// 10-column sketch. The result is the truncated SVD of `Ĝ` (orthonormal `Ũ`, `Ṽ`, singular
    /// values of `Ĝ`), not the paper's eq. 11 rescaling, which holds only for uniform samples.
    AdaptiveCross,
    /// Greedy cross approximation (deterministic after a seeded first block of rows): adaptive
    /// cross approximation with partial pivoting in blocks (Bebendorf's ACA), each block of rows
    /// the pivots of the last residual columns, each block of columns the pivots of the chosen
    /// residual rows. No product with `G`; it only reaches rows and columns coupled to the
    /// landmarks it already has, so it can miss isolated structure that
    /// [`Sampling::AdaptiveCross`] finds. Same result form.
    GreedyCross,
}

impl Sampling {
    /// Whether the scheme picks landmarks adaptively by cross approximation (the result is then
    /// the SVD of the cross approximation `C W⁺ R` of `G`).
    pub fn is_cross(&self) -> bool {
        matches!(self, Sampling::AdaptiveCross | Sampling::GreedyCross)
    }
}

impl Vocabulary for Sampling {
    const WHAT: &'static str = "sampling";
    const ALL: &'static [Sampling] = &[
        Sampling::Uniform,
        Sampling::SquaredNorm,
        Sampling::Leverage,
        Sampling::AdaptiveCross,
        Sampling::GreedyCross,
    ];

    fn names(self) -> &'static [&'static str] {
        match self {
            Sampling::Uniform => &["uniform"],
            Sampling::SquaredNorm => &["squared-norm", "squared_norm", "norm"],
            Sampling::Leverage => &["leverage"],
            Sampling::AdaptiveCross => &["adaptive", "adaptive-cross", "adaptive_cross"],
            Sampling::GreedyCross => &["greedy", "greedy-cross", "greedy_cross"],
        }
    }
}

ksvd_linalg::vocabulary_traits!(Sampling);
#[cfg(feature = "serde")]
ksvd_linalg::vocabulary_serde!(Sampling);

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

/// Approximate rank-`k` leverage scores of the rows and of the columns of `G` (see
/// [`Sampling::Leverage`]): `‖U_{i,:}‖²` for the top `k` left singular vectors `U` of the sketch
/// `G Ω` (`Ω` Gaussian with `k + 10` columns drawn from `seed`), and `‖V_{j,:}‖²` for the top `k`
/// left singular vectors `V` of `Gᵀ U` (one power step). Exact when `rank(G) ≤ k`; each list
/// sums to at most `k`.
pub fn sketched_leverage<G: LinearOperator + ?Sized>(g: &G, k: usize, seed: u64) -> Result<(Vec<f64>, Vec<f64>)> {
    let width = (k + 10).min(g.nrows()).min(g.ncols());
    let omega = gaussian_matrix(&mut rng_from_seed(seed), g.ncols(), width);
    let top = |y: ndarray::Array2<f64>| -> Result<ndarray::Array2<f64>> {
        let svd = dense::thin_svd(y.view())?;
        let floor = svd.s.first().copied().unwrap_or(0.0) * f64::EPSILON * (y.nrows() as f64).sqrt() * 64.0;
        let keep = svd.s.iter().take(k).filter(|&&x| x > floor).count();
        Ok(svd.u.slice(ndarray::s![.., ..keep]).to_owned())
    };
    let u = top(g.apply(omega.view())?)?;
    let v = top(g.apply_transpose(u.view())?)?;
    let scores = |q: &ndarray::Array2<f64>| q.outer_iter().map(|r| r.dot(&r)).collect();
    Ok((scores(&u), scores(&v)))
}

/// `k` uniform indices of `0..n`, sorted.
pub fn uniform_indices(n: usize, k: usize, seed: u64) -> Vec<usize> {
    let mut rng = rng_from_seed(seed);
    sample_indices(&mut rng, n, k)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::Sampling;
    use ksvd_linalg::Vocabulary;

    #[test]
    fn every_name_parses_to_its_scheme_and_display_gives_the_canonical_one() {
        let mut seen = std::collections::HashSet::new();
        for &m in Sampling::ALL {
            assert_eq!(m.to_string(), m.name());
            for name in m.names() {
                assert_eq!(name.parse::<Sampling>().unwrap(), m, "{name}");
                assert!(seen.insert(*name), "{name} names two schemes");
            }
        }
        // The command line's names.
        let cli = ["uniform", "squared-norm", "leverage", "adaptive", "greedy"];
        assert_eq!(Sampling::canonical_names(), cli);
    }

    #[test]
    fn unknown_names_are_rejected_with_the_valid_ones() {
        for bad in ["", "sideways", "Uniform", "AdaptiveCross", "adaptive "] {
            let err = bad.parse::<Sampling>().unwrap_err().to_string();
            assert!(err.contains(&format!("`{bad}`")), "{err}");
            for &m in Sampling::ALL {
                assert!(err.contains(m.name()), "{err}");
            }
        }
    }

    #[cfg(feature = "serde")]
    #[test]
    fn serde_reads_every_name() {
        use serde::de::{value, Deserialize, IntoDeserializer};
        let read = |s: &str| {
            let de: value::StrDeserializer<'_, value::Error> = s.into_deserializer();
            Sampling::deserialize(de)
        };
        for &m in Sampling::ALL {
            for name in m.names() {
                assert_eq!(read(name).unwrap(), m);
            }
        }
        let err = read("sideways").unwrap_err().to_string();
        assert!(err.contains("squared-norm"), "{err}");
    }
}
