//! What a fitted model holds, as one serialisable value.
use crate::fitted::{Estimator, KsvdModel, MODEL_FORMAT_VERSION};
use crate::model::Solver;
use ksvd_kernels::{Compat, Kernel};
use ksvd_linalg::Precision;

/// A summary of a [`KsvdModel`] ([`KsvdModel::summary`]): the one description of a model that
/// the command line's `summary.json`, `ksvd inspect` and Python's `repr` share. Serialisable
/// (feature `serde`); [`std::fmt::Display`] gives one line.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct ModelSummary {
    /// The estimator that produced the model.
    pub estimator: Estimator,
    /// The built-in kernel the fit used; `None` for a precomputed kernel matrix and a user's
    /// kernel function.
    pub kernel: Option<Kernel>,
    /// The name of the user's kernel function the fit used, if any.
    #[cfg_attr(feature = "serde", serde(default))]
    pub kernel_function: Option<String>,
    /// The bandwidth `γ` the fit used (`None` for kernels without one).
    pub bandwidth: Option<f64>,
    /// The `k` of the bandwidth rule `γ = k sqrt(M γ_x)` when the rule chose `γ`.
    pub bandwidth_rule: Option<f64>,
    /// Number of row samples `N`.
    pub n_rows: usize,
    /// Number of column samples `M` (KPCA: `N`).
    pub n_cols: usize,
    /// Dimension of the samples (after a compatibility map); `None` for a precomputed kernel.
    pub dim: Option<usize>,
    /// The rank `r`.
    pub rank: usize,
    /// The solver.
    pub solver: Solver,
    /// Whether the kernel matrix was centred on both sides.
    pub center: bool,
    /// The precision `G`'s entries were evaluated and multiplied in (summaries without it: `f64`).
    #[cfg_attr(feature = "serde", serde(default))]
    pub precision: Precision,
    /// The compatibility of a fit on a data matrix (Algorithm 1), if any.
    pub compat: Option<Compat>,
    /// The seed of every random choice.
    pub seed: u64,
    /// `s_1 ≥ … ≥ s_r` (KPCA: the eigenvalues).
    pub singular_values: Vec<f64>,
    /// Residuals relative to `s_1` (`None` for KSVD Nyström models).
    pub residuals: Option<ResidualSummary>,
    /// Numbers of Nyström landmark rows and columns (KPCA: the same number twice).
    pub landmarks: Option<LandmarkCounts>,
    /// The model file format version ([`MODEL_FORMAT_VERSION`]).
    pub format_version: u64,
}

/// The residuals of a model's triplets, relative to `s_1`.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct ResidualSummary {
    /// `‖G v_i − s_i u_i‖ / s_1` for every triplet.
    pub left: Vec<f64>,
    /// `‖Gᵀ u_i − s_i v_i‖ / s_1` for every triplet.
    pub right: Vec<f64>,
    /// The largest of them.
    pub max_relative_to_s1: f64,
}

/// Numbers of Nyström landmarks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct LandmarkCounts {
    /// Sampled rows `n`.
    pub rows: usize,
    /// Sampled columns `m`.
    pub cols: usize,
}

impl ModelSummary {
    pub(crate) fn of(model: &KsvdModel) -> ModelSummary {
        let params = model.params();
        let (n_rows, n_cols) = model.shape();
        let precomputed = model.is_precomputed();
        ModelSummary {
            estimator: model.estimator(),
            kernel: (!precomputed && model.kernel_function_name().is_none()).then(|| *model.kernel()),
            kernel_function: model.kernel_function_name().map(str::to_string),
            bandwidth: model.bandwidth(),
            bandwidth_rule: if model.bandwidth().is_some() {
                params.bandwidth_rule()
            } else {
                None
            },
            n_rows,
            n_cols,
            dim: model.sample_dim(),
            rank: model.rank(),
            solver: model.solver().clone(),
            center: params.center(),
            precision: params.precision(),
            compat: params.compat().filter(|_| model.compat().is_some()),
            seed: params.seed(),
            singular_values: model.singular_values().to_vec(),
            residuals: model.residuals().map(|r| ResidualSummary {
                left: r.left.to_vec(),
                right: r.right.to_vec(),
                max_relative_to_s1: r.max(),
            }),
            landmarks: model.landmarks().map(|(i, j)| LandmarkCounts {
                rows: i.len(),
                cols: j.len(),
            }),
            format_version: MODEL_FORMAT_VERSION,
        }
    }
}

/// One line: estimator, sizes, kernel, rank, solver, `s_1` and the largest residual.
impl std::fmt::Display for ModelSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} of a {} x {} ", self.estimator, self.n_rows, self.n_cols)?;
        match (&self.kernel, &self.kernel_function) {
            (_, Some(name)) => write!(f, "user kernel `{name}` matrix")?,
            (Some(k), None) => write!(f, "{k} kernel matrix")?,
            (None, None) => write!(f, "precomputed kernel matrix")?,
        }
        if self.center {
            write!(f, " (centred)")?;
        }
        write!(f, ", rank {}, {:?} solver", self.rank, self.solver)?;
        if self.precision != Precision::F64 {
            write!(f, " in {}", self.precision)?;
        }
        if let Some(l) = &self.landmarks {
            write!(f, " ({} x {} landmarks)", l.rows, l.cols)?;
        }
        if let Some(s1) = self.singular_values.first() {
            write!(f, ": s_1 = {s1:.6e}")?;
        }
        if let Some(r) = &self.residuals {
            write!(f, ", max residual / s_1 = {:.1e}", r.max_relative_to_s1)?;
        }
        Ok(())
    }
}
