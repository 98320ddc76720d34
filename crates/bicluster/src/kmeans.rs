//! Seeded k-means over the rows of a dense matrix: a thin wrapper around
//! [`linfa_clustering::KMeans`] with k-means++ initialisation and `n_runs` restarts.
use crate::error::{check_matrix, BiclusterError, Result};
use linfa::traits::{Fit, Predict};
use linfa::DatasetBase;
use linfa_clustering::{KMeans, KMeansInit};
use ndarray::{Array1, Array2, ArrayView2, Axis};

/// Hyper-parameters of [`kmeans`] (everything except the number of clusters and the seed, which
/// are explicit arguments). Defaults follow scikit-learn's `KMeans` (the implementation the
/// paper used): `n_runs = 10` (scikit-learn's default `n_init` before 1.4; since 1.4 `"auto"`
/// runs k-means++ once), `max_iterations = 300`,
/// `tolerance = 1e-4`, no row normalisation.
///
/// Check once with [`KMeansParams::check`]; [`kmeans`] and [`crate::bicluster`] do this on entry.
#[derive(Debug, Clone, PartialEq)]
pub struct KMeansParams {
    n_runs: usize,
    max_iterations: u64,
    tolerance: f64,
    normalize_rows: bool,
}

impl Default for KMeansParams {
    fn default() -> Self {
        Self {
            n_runs: 10,
            max_iterations: 300,
            tolerance: 1e-4,
            normalize_rows: false,
        }
    }
}

impl KMeansParams {
    /// The defaults (see the type's documentation).
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of k-means++ restarts; the run with the smallest inertia is kept. Must be `>= 1`.
    pub fn n_runs(mut self, n_runs: usize) -> Self {
        self.n_runs = n_runs;
        self
    }

    /// Maximum number of Lloyd-type iterations per run. Must be `>= 1`.
    pub fn max_iterations(mut self, max_iterations: u64) -> Self {
        self.max_iterations = max_iterations;
        self
    }

    /// Relative convergence tolerance, scikit-learn's `tol`: a run stops once the squared
    /// Frobenius norm of the centroid shift is below `tolerance * mean_j var(x[:, j])` (the mean
    /// per-feature population variance of the clustered data). Must be finite and `>= 0`.
    pub fn tolerance(mut self, tolerance: f64) -> Self {
        self.tolerance = tolerance;
        self
    }

    /// If `true`, every row is scaled to unit Euclidean norm before clustering (rows of norm 0
    /// are left at 0), i.e. k-means on directions, as is common for spectral embeddings
    /// (Ng, Jordan & Weiss 2001). Off by default, matching the paper's plain k-means.
    pub fn normalize_rows(mut self, normalize_rows: bool) -> Self {
        self.normalize_rows = normalize_rows;
        self
    }

    /// Validates the parameters.
    pub fn check(&self) -> Result<KMeansValidParams> {
        if self.n_runs == 0 {
            return Err(BiclusterError::InvalidParameter {
                name: "n_runs",
                value: self.n_runs.to_string(),
                expected: "at least 1",
            });
        }
        if self.max_iterations == 0 {
            return Err(BiclusterError::InvalidParameter {
                name: "max_iterations",
                value: self.max_iterations.to_string(),
                expected: "at least 1",
            });
        }
        if !(self.tolerance.is_finite() && self.tolerance >= 0.0) {
            return Err(BiclusterError::InvalidParameter {
                name: "tolerance",
                value: self.tolerance.to_string(),
                expected: "a finite number >= 0",
            });
        }
        Ok(KMeansValidParams {
            n_runs: self.n_runs,
            max_iterations: self.max_iterations,
            tolerance: self.tolerance,
            normalize_rows: self.normalize_rows,
        })
    }
}

/// [`KMeansParams`] that passed [`KMeansParams::check`].
#[derive(Debug, Clone, PartialEq)]
pub struct KMeansValidParams {
    n_runs: usize,
    max_iterations: u64,
    tolerance: f64,
    normalize_rows: bool,
}

impl KMeansValidParams {
    /// Number of k-means++ restarts.
    pub fn n_runs(&self) -> usize {
        self.n_runs
    }

    /// Maximum number of iterations per run.
    pub fn max_iterations(&self) -> u64 {
        self.max_iterations
    }

    /// Relative tolerance (scikit-learn's `tol`).
    pub fn tolerance(&self) -> f64 {
        self.tolerance
    }

    /// Whether rows are L2-normalised before clustering.
    pub fn normalize_rows(&self) -> bool {
        self.normalize_rows
    }
}

/// The result of [`kmeans`].
#[derive(Debug, Clone, PartialEq)]
pub struct KMeansFit {
    /// Cluster of every row of the input, in `0..n_clusters`: `labels[i] = c` means row `i` is
    /// closest to `centroids.row(c)`. A cluster can end up empty, so not every value need occur.
    pub labels: Vec<usize>,
    /// `n_clusters x d` centroids, in the (row-normalised, if requested) space that was clustered.
    pub centroids: Array2<f64>,
    /// Sum over rows of the squared Euclidean distance to the assigned centroid (scikit-learn's
    /// `inertia_`), in the clustered space.
    pub inertia: f64,
}

/// k-means of the rows of `x` (`n` points x `d` features) into `n_clusters` clusters.
///
/// k-means++ initialisation, `n_runs` restarts keeping the smallest inertia, all randomness drawn
/// from [`ksvd_linalg::random::rng_from_seed`]`(seed)`: the same seed and input give the same
/// labels (independently of the rayon thread count). linfa's update step is the "m_k-means"
/// variant, which counts the previous centroid as one extra member of its cluster (so clusters
/// never become undefined); its fixed points with non-empty clusters are exactly those of Lloyd's
/// algorithm (each centroid is the mean of its cluster).
///
/// Errors: empty or non-finite `x`, invalid `params`, `n_clusters == 0` or `n_clusters > n`.
pub fn kmeans(x: ArrayView2<'_, f64>, n_clusters: usize, seed: u64, params: &KMeansParams) -> Result<KMeansFit> {
    params.check()?.fit(x, n_clusters, seed)
}

impl KMeansValidParams {
    /// [`kmeans`] with already validated parameters.
    pub fn fit(&self, x: ArrayView2<'_, f64>, n_clusters: usize, seed: u64) -> Result<KMeansFit> {
        kmeans_checked("k-means input", x, n_clusters, seed, self)
    }
}

/// Validates `x` and `n_clusters`, then runs linfa's k-means. `what` names `x` in errors.
pub(crate) fn kmeans_checked(
    what: &'static str,
    x: ArrayView2<'_, f64>,
    n_clusters: usize,
    seed: u64,
    params: &KMeansValidParams,
) -> Result<KMeansFit> {
    check_matrix(what, x)?;
    if n_clusters == 0 {
        return Err(BiclusterError::InvalidParameter {
            name: "n_clusters",
            value: "0".to_string(),
            expected: "at least 1",
        });
    }
    if n_clusters > x.nrows() {
        return Err(BiclusterError::TooManyClusters {
            what,
            k: n_clusters,
            n: x.nrows(),
        });
    }
    let mut data = x.to_owned();
    if params.normalize_rows {
        normalize_rows_in_place(&mut data);
    }
    let tolerance = absolute_tolerance(data.view(), params.tolerance);
    let model = KMeans::params_with_rng(n_clusters, ksvd_linalg::random::rng_from_seed(seed))
        .n_runs(params.n_runs)
        .max_n_iterations(params.max_iterations)
        .tolerance(tolerance)
        .init_method(KMeansInit::KMeansPlusPlus)
        .fit(&DatasetBase::from(data.view()))
        .map_err(|e| BiclusterError::KMeans(e.to_string()))?;
    let labels: Array1<usize> = model.predict(&data);
    let centroids = model.centroids().to_owned();
    let inertia = data
        .outer_iter()
        .zip(labels.iter())
        .map(|(row, &c)| {
            row.iter()
                .zip(centroids.row(c))
                .map(|(a, b)| (a - b) * (a - b))
                .sum::<f64>()
        })
        .sum();
    Ok(KMeansFit {
        labels: labels.to_vec(),
        centroids,
        inertia,
    })
}

/// Scales every non-zero row to unit Euclidean norm.
fn normalize_rows_in_place(x: &mut Array2<f64>) {
    for mut row in x.outer_iter_mut() {
        let norm = row.iter().map(|v| v * v).sum::<f64>().sqrt();
        if norm > 0.0 {
            row.mapv_inplace(|v| v / norm);
        }
    }
}

/// Converts scikit-learn's relative `tol` into linfa's absolute one.
///
/// scikit-learn stops when `sum_c ||mu_c^new - mu_c^old||^2 <= tol * mean_j var(x[:, j])`
/// (`sklearn/cluster/_kmeans.py`, `_tolerance`); linfa stops when the Frobenius norm of the
/// centroid shift is `< tolerance`, so linfa's tolerance is the square root. linfa requires a
/// positive value: a zero (constant data or `tol = 0`) becomes the smallest positive normal f64,
/// i.e. "stop when the centroids no longer move".
fn absolute_tolerance(x: ArrayView2<'_, f64>, tol: f64) -> f64 {
    let n = x.nrows() as f64;
    let mean = x.sum_axis(Axis(0)) / n;
    let mean_var = x
        .outer_iter()
        .map(|row| row.iter().zip(mean.iter()).map(|(v, m)| (v - m) * (v - m)).sum::<f64>())
        .sum::<f64>()
        / (n * x.ncols() as f64);
    let abs = (tol * mean_var).sqrt();
    if abs.is_finite() && abs >= f64::MIN_POSITIVE {
        abs
    } else {
        f64::MIN_POSITIVE
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn absolute_tolerance_is_sqrt_of_scaled_mean_variance() {
        // Columns [0, 2] and [0, 4]: population variances 1 and 4, mean 2.5.
        let x = array![[0.0, 0.0], [2.0, 4.0]];
        let tol = absolute_tolerance(x.view(), 1e-4);
        assert!((tol - (2.5e-4f64).sqrt()).abs() <= 4.0 * f64::EPSILON * tol);
        // Constant data: no variance, the tolerance falls back to a tiny positive number.
        let c = array![[1.0, 1.0], [1.0, 1.0]];
        assert_eq!(absolute_tolerance(c.view(), 1e-4), f64::MIN_POSITIVE);
    }

    #[test]
    fn row_normalisation_keeps_zero_rows() {
        let mut x = array![[3.0, 4.0], [0.0, 0.0]];
        normalize_rows_in_place(&mut x);
        assert_eq!(x, array![[0.6, 0.8], [0.0, 0.0]]);
    }

    #[test]
    fn invalid_parameters_are_typed_errors() {
        let x = array![[0.0], [1.0]];
        let p = KMeansParams::new();
        assert!(matches!(
            p.clone().n_runs(0).check(),
            Err(BiclusterError::InvalidParameter { name: "n_runs", .. })
        ));
        assert!(matches!(
            p.clone().max_iterations(0).check(),
            Err(BiclusterError::InvalidParameter {
                name: "max_iterations",
                ..
            })
        ));
        assert!(matches!(
            p.clone().tolerance(f64::NAN).check(),
            Err(BiclusterError::InvalidParameter { name: "tolerance", .. })
        ));
        assert!(matches!(
            kmeans(x.view(), 0, 0, &p),
            Err(BiclusterError::InvalidParameter { name: "n_clusters", .. })
        ));
        assert!(matches!(
            kmeans(x.view(), 3, 0, &p),
            Err(BiclusterError::TooManyClusters { k: 3, n: 2, .. })
        ));
        let empty = Array2::<f64>::zeros((0, 2));
        assert!(matches!(
            kmeans(empty.view(), 1, 0, &p),
            Err(BiclusterError::Empty { rows: 0, .. })
        ));
        let nan = array![[0.0], [f64::NAN]];
        assert!(matches!(
            kmeans(nan.view(), 1, 0, &p),
            Err(BiclusterError::NonFinite { row: 1, col: 0, .. })
        ));
    }

    #[test]
    fn identical_points_and_k_equal_n_do_not_panic() {
        let p = KMeansParams::new();
        let same = Array2::<f64>::ones((4, 2));
        let fit = kmeans(same.view(), 3, 1, &p).unwrap();
        assert_eq!(fit.labels.len(), 4);
        assert_eq!(fit.inertia, 0.0);
        let x = array![[0.0, 0.0], [10.0, 0.0], [0.0, 10.0]];
        let fit = kmeans(x.view(), 3, 1, &p).unwrap();
        let mut l = fit.labels.clone();
        l.sort_unstable();
        l.dedup();
        assert_eq!(
            l.len(),
            3,
            "k = n puts every point in its own cluster: {:?}",
            fit.labels
        );
        assert_eq!(fit.inertia, 0.0);
    }
}
