//! Hyper-parameters of the streaming Nyström fits, validated once, and the one bandwidth rule.
use ksvd_kernels::bandwidth::sq_distances_from_inner_products;
use ksvd_linalg::Vocabulary;
use ndarray::ArrayView2;
use serde::{Deserialize, Serialize};

use crate::error::{Result, StreamingError};
use crate::projection::ProjectionScaling;

/// An embedding method of the large-scale table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// KPCA: symmetric Nyström on the RBF kernel between samples.
    Kpca,
    /// KSVD: asymmetric Nyström on the RBF kernel between rows and (mapped) columns, a2.
    Ksvd,
}

/// The names `ksvd-stream --method` and `ksvd.dask.fit(method=)` take: `"kpca"` and `"ksvd"`
/// (`"kpca".parse()` is [`Method::Kpca`], `Method::Kpca.to_string()` is `"kpca"`).
impl Vocabulary for Method {
    const WHAT: &'static str = "streaming method";
    const ALL: &'static [Method] = &[Method::Kpca, Method::Ksvd];

    fn names(self) -> &'static [&'static str] {
        match self {
            Method::Kpca => &["kpca"],
            Method::Ksvd => &["ksvd"],
        }
    }
}

ksvd_linalg::vocabulary_traits!(Method);

impl Method {
    /// `"kpca"` or `"ksvd"` (the canonical name, [`Vocabulary::name`]).
    pub fn as_str(self) -> &'static str {
        self.name()
    }
}

/// The RBF bandwidth `γ` of `k(x, z) = exp(-‖x − z‖² / γ²)`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Bandwidth {
    /// A fixed `γ > 0`.
    Fixed(f64),
    /// The median heuristic on the landmarks, times a factor `c > 0`:
    /// `γ² = c² · median ‖a − b‖²` over the landmark pairs (KSVD: the `n × m` pairs of landmark
    /// rows and landmark columns; KPCA: the pairs of distinct landmark rows), with the
    /// workspace's one convention (`ksvd_kernels::bandwidth::median_positive`: exact zeros
    /// dropped, the upper middle value for an even count). Computed from the landmarks only, so
    /// it costs no extra pass.
    Median(f64),
}

impl Bandwidth {
    /// The bandwidth `γ` this rule gives for the landmark pairs whose squared distances
    /// `‖a − b‖²` `sq_distances` computes (called only by the median heuristic): the fixed value,
    /// or `c · sqrt(median)` with the median of
    /// [`ksvd_kernels::bandwidth::median_positive`] (exact zeros dropped, the upper middle value
    /// for an even count). The one place the streaming fits turn distances into `γ`; a typed
    /// error when no pair is at a positive distance.
    pub fn gamma<I: IntoIterator<Item = f64>>(&self, sq_distances: impl FnOnce() -> Result<I>) -> Result<f64> {
        let gamma = match *self {
            Bandwidth::Fixed(g) => g,
            Bandwidth::Median(c) => match ksvd_kernels::bandwidth::median_positive(sq_distances()?) {
                Ok(median) => c * median.sqrt(),
                Err(_) => {
                    return Err(StreamingError::invalid(
                        "bandwidth",
                        self,
                        "the median heuristic found no pair of distinct landmarks; set a fixed bandwidth",
                    ))
                }
            },
        };
        if gamma.is_finite() && gamma > 0.0 {
            Ok(gamma)
        } else {
            Err(StreamingError::invalid(
                "bandwidth",
                gamma,
                "must be positive and finite",
            ))
        }
    }
}

impl Bandwidth {
    /// [`Bandwidth::gamma`] for landmark pairs given by their inner products `p` (`a_sq`, `b_sq`:
    /// the squared norms of its rows' and columns' samples): all pairs of `p`, or with
    /// `distinct` the pairs `i < l` of a square `p` (a set of samples with itself, KPCA).
    /// Distances by `ksvd_kernels`' one identity; the streaming fits and `ksvd.dask.fit` share it.
    pub fn gamma_from_inner_products(
        &self,
        p: ArrayView2<'_, f64>,
        a_sq: &[f64],
        b_sq: &[f64],
        distinct: bool,
    ) -> Result<f64> {
        self.gamma(|| {
            let mut d = p.to_owned();
            sq_distances_from_inner_products(d.view_mut(), a_sq, b_sq)?;
            let n = d.nrows();
            Ok::<_, StreamingError>(if distinct {
                (0..n)
                    .flat_map(|i| (i + 1..n).map(move |l| (i, l)))
                    .map(|(i, l)| d[[i, l]])
                    .collect::<Vec<f64>>()
            } else {
                d.into_iter().collect::<Vec<f64>>()
            })
        })
    }
}

impl Default for Bandwidth {
    fn default() -> Self {
        Bandwidth::Median(1.0)
    }
}

impl std::fmt::Display for Bandwidth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Bandwidth::Fixed(g) => write!(f, "fixed gamma {g}"),
            Bandwidth::Median(c) => write!(f, "median heuristic x {c}"),
        }
    }
}

/// How the `n` landmark rows are chosen.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RowLandmarks {
    /// Uniformly without replacement: the `n` rows with the smallest keys
    /// `hash(seed, global row id)` (a bottom-`n` sketch, seeded; the same rows for every
    /// partitioning of the data, see the crate docs).
    #[default]
    Sketch,
    /// These global row ids, strictly increasing (e.g. to reproduce an in-memory fit).
    Explicit(Vec<usize>),
}

/// How the `m` landmark columns (features) are chosen.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ColLandmarks {
    /// Uniformly without replacement, `sample_indices(rng(seed + 0x9e3779b9), M, m)` (the same
    /// draw as `ksvd_nystrom`'s uniform column sampling).
    #[default]
    Uniform,
    /// These feature indices, strictly increasing.
    Explicit(Vec<usize>),
}

/// Parameters of the streaming fits ([`crate::fit_ksvd`], [`crate::fit_kpca`] and the passes of
/// [`crate::LandmarkPlan`]): build with
/// [`StreamingParams::new`] and the builder methods, validate once with
/// [`StreamingParams::check`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StreamingParams {
    /// Target rank `r` (number of embedding dimensions); lowered to the numerical rank of the
    /// landmark block when that is smaller (the fitted model reports the rank it used).
    pub rank: usize,
    /// Number of landmark rows `n` (capped at the number of rows `N`).
    pub row_landmarks: usize,
    /// Number of landmark columns `m` of KSVD (capped at the number of columns `M`).
    pub col_landmarks: usize,
    /// The RBF bandwidth.
    pub bandwidth: Bandwidth,
    /// Density `1/s` of the sparse projection of the a2 compatibility; `None`: `1/√D` with `D`
    /// the dimension being projected (Li et al.'s very sparse projection).
    pub projection_density: Option<f64>,
    /// Scaling of the projection's entries.
    pub projection_scaling: ProjectionScaling,
    /// Rows per chunk (memory per chunk is about `chunk_rows · (nnz per row · 16 + m · 8)` bytes).
    pub chunk_rows: usize,
    /// Seed of every random choice (landmark rows, landmark columns, projection).
    pub seed: u64,
    /// How the landmark rows are chosen.
    pub rows: RowLandmarks,
    /// How the landmark columns are chosen.
    pub cols: ColLandmarks,
}

impl StreamingParams {
    /// Rank `r` with `n = m = landmarks`, median-heuristic bandwidth, very sparse norm-preserving
    /// projection, chunks of 10 000 rows, seed 0.
    pub fn new(rank: usize, landmarks: usize) -> Self {
        StreamingParams {
            rank,
            row_landmarks: landmarks,
            col_landmarks: landmarks,
            bandwidth: Bandwidth::default(),
            projection_density: None,
            projection_scaling: ProjectionScaling::default(),
            chunk_rows: 10_000,
            seed: 0,
            rows: RowLandmarks::Sketch,
            cols: ColLandmarks::Uniform,
        }
    }

    /// Sets the seed.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Sets the bandwidth.
    pub fn bandwidth(mut self, bandwidth: Bandwidth) -> Self {
        self.bandwidth = bandwidth;
        self
    }

    /// Sets the number of rows per chunk.
    pub fn chunk_rows(mut self, rows: usize) -> Self {
        self.chunk_rows = rows;
        self
    }

    /// Sets the density of the sparse projection.
    pub fn projection_density(mut self, density: Option<f64>) -> Self {
        self.projection_density = density;
        self
    }

    /// Sets the scaling of the sparse projection.
    pub fn projection_scaling(mut self, scaling: ProjectionScaling) -> Self {
        self.projection_scaling = scaling;
        self
    }

    /// Uses explicit landmark rows (strictly increasing global row ids).
    pub fn explicit_rows(mut self, rows: Vec<usize>) -> Self {
        self.row_landmarks = rows.len();
        self.rows = RowLandmarks::Explicit(rows);
        self
    }

    /// Uses explicit landmark columns (strictly increasing feature indices).
    pub fn explicit_cols(mut self, cols: Vec<usize>) -> Self {
        self.col_landmarks = cols.len();
        self.cols = ColLandmarks::Explicit(cols);
        self
    }

    /// Sets the number of landmark columns (KSVD).
    pub fn col_landmarks(mut self, m: usize) -> Self {
        self.col_landmarks = m;
        self
    }

    /// Validates every field once.
    pub fn check(self) -> Result<ValidStreamingParams> {
        if self.rank == 0 {
            return Err(StreamingError::invalid("rank", self.rank, "must be at least 1"));
        }
        if self.row_landmarks == 0 {
            return Err(StreamingError::invalid(
                "row_landmarks",
                self.row_landmarks,
                "must be at least 1",
            ));
        }
        if self.col_landmarks == 0 {
            return Err(StreamingError::invalid(
                "col_landmarks",
                self.col_landmarks,
                "must be at least 1",
            ));
        }
        if self.chunk_rows == 0 {
            return Err(StreamingError::invalid(
                "chunk_rows",
                self.chunk_rows,
                "must be at least 1",
            ));
        }
        match self.bandwidth {
            Bandwidth::Fixed(g) | Bandwidth::Median(g) => {
                if !(g.is_finite() && g > 0.0) {
                    return Err(StreamingError::invalid("bandwidth", g, "must be positive and finite"));
                }
            }
        }
        if let Some(d) = self.projection_density {
            if !(d.is_finite() && d > 0.0 && d <= 1.0) {
                return Err(StreamingError::invalid("projection_density", d, "must lie in (0, 1]"));
            }
        }
        for (name, list) in [
            (
                "rows",
                if let RowLandmarks::Explicit(v) = &self.rows {
                    Some(v)
                } else {
                    None
                },
            ),
            (
                "cols",
                if let ColLandmarks::Explicit(v) = &self.cols {
                    Some(v)
                } else {
                    None
                },
            ),
        ] {
            if let Some(v) = list {
                if v.is_empty() || v.windows(2).any(|w| w[0] >= w[1]) {
                    return Err(StreamingError::invalid(
                        name,
                        format!("{v:?}"),
                        "explicit landmarks must be non-empty and strictly increasing",
                    ));
                }
            }
        }
        Ok(ValidStreamingParams(self))
    }
}

/// [`StreamingParams`] that passed [`StreamingParams::check`]; read the fields through `Deref`.
#[derive(Debug, Clone, PartialEq)]
pub struct ValidStreamingParams(StreamingParams);

impl std::ops::Deref for ValidStreamingParams {
    type Target = StreamingParams;
    fn deref(&self) -> &StreamingParams {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn method_names_round_trip_and_unknown_names_are_errors() {
        for &m in Method::ALL {
            assert_eq!(m.to_string().parse::<Method>().unwrap(), m);
            assert_eq!(serde_json::to_string(&m).unwrap(), format!("\"{}\"", m.as_str()));
        }
        let e = "pca".parse::<Method>().unwrap_err();
        assert_eq!(e.expected, vec!["kpca", "ksvd"]);
    }
}
