//! The portable fitted model of both estimators: projections of new samples and model files.
use crate::error::{KsvdError, Result};
use crate::model::{Ksvd, KsvdValidParams, Solver};
use crate::projection::{Projector, Scaling};
use crate::summary::ModelSummary;
use ksvd_kernels::{compat::CompatSide, Centering, Kernel, KernelMatrix, KernelStats, Samples};
use ksvd_linalg::LinearOperator;
use ksvd_solvers::Residuals;
use ndarray::{Array1, Array2, ArrayView1, ArrayView2, Axis};

/// Identifies a model document (the envelope's `format`, `ksvd_datasets::envelope`).
pub const MODEL_FORMAT: &str = "ksvd-model";
/// The model format version written by this crate (and the only one it reads).
///
/// # Model file format (version 2)
///
/// A model is one JSON document (UTF-8) in the workspace's envelope
/// (`ksvd_datasets::envelope`): format `"ksvd-model"`, this version, the writer, the SHA-256 of
/// the payload, and the payload:
///
/// ```text
/// {
///   "format": "ksvd-model", "format_version": 2, "writer": "ksvd 0.1.0", "sha256": "…",
///   "payload": {
///     "estimator": "ksvd" | "kpca",     // KPCA: the symmetric case, Z = X, U = V = A, s = λ
///     "params": { kernel, bandwidth_rule, rank, solver, center, compat, seed, landmark_indices },
///                                       // the kernel the fit used (bandwidth chosen by the
///                                       // rule when bandwidth_rule is set); no memory budget
///     "n_rows": N, "n_cols": M,         // training sizes (KPCA: N = M)
///     "row_landmarks": [..] | null,     // Nyström: sampled rows I (into X), else null
///     "col_landmarks": [..] | null,     // Nyström: sampled columns J (into Z; KPCA: = I)
///     "x": Samples | null, "x_is_full": bool, // stored row samples: all of X, or X_I only
///     "z": Samples | null, "z_is_full": bool, // stored column samples: all of Z, or Z_J only;
///                                       // null for KPCA (Z = X) and precomputed kernels
///     "kernel_stats": null | { "log_normalizers": [..] | null, // SNE log S_i over the stored X
///                              "centering": null | { "row_means": [..], "col_means": [..],
///                                                    "grand_mean": f64 } },
///                                       // present when x and z are full: the fitted
///                                       // normalisers and means, so loading needs no pass
///                                       // over G (absent: recomputed from the samples)
///     "precomputed": null | { "row_means": [..] | null, "col_means": [..] | null,
///                             "grand_mean": f64 }, // a precomputed G (KPCA: K; then x, z are
///                                                  // null and params.kernel is not used)
///     "landmark_extension": null | {    // KSVD Nyström: the extension through the landmarks
///       "row_coef": Array2 (|J| × r),   //   ũ(x') = k̃(x', Z_J) row_coef
///       "col_coef": Array2 (|I| × r) }, //   ṽ(z') = k̃(X_I, z')ᵀ col_coef
///                                       // (null: the extension runs over all of X and Z)
///     "s": Array1 (r), "u": Array2 (N × r), "v": Array2 (M × r),
///     "residuals": { "left": Array1, "right": Array1 } | null,
///     "compat": { "side": "Rows" | "Cols" | "None", "c": Array2 | null } | null
///   }
/// }
/// ```
///
/// Arrays use ndarray's serde form `{"v": 1, "dim": [..], "data": [..]}` (row-major);
/// `Samples` is `{"Dense": Array2}` or `{"Sparse": {nrows, ncols, indptr, indices, data}}`
/// (CSR, 0-based). Every `f64` is written in shortest round-trip form and parsed exactly, so a
/// reloaded model gives bit-identical projections.
///
/// Why one JSON document: it is self-describing, readable from any language without this
/// crate, versioned in one place, and the same bytes serve files, pickling (Python) and
/// network transfer ([`KsvdModel::to_bytes`]). The price is size (about 20 bytes per value,
/// 2.5× a binary `.npy`), acceptable for the sample sets this tool targets.
///
/// A document that is not an envelope, is truncated, holds another format or another version,
/// or whose payload does not match its checksum (one changed digit) is refused before it is
/// used, with [`KsvdError::ModelFile`] naming which; a payload that matches its checksum but
/// violates an invariant (shapes, finite values, CSR structure, landmark indices) with
/// [`KsvdError::CorruptModel`], naming the problem.
///
/// Version 1 (no envelope, no estimator, exact models storing `V S⁻¹` and `U S⁻¹`, the memory
/// budget among the parameters) is not read.
pub const MODEL_FORMAT_VERSION: u64 = 2;

/// The estimator that produced a model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
pub enum Estimator {
    /// Kernel SVD ([`crate::Ksvd`]): `G ≈ U S Vᵀ` of row samples X and column samples Z.
    Ksvd,
    /// Kernel PCA ([`crate::Kpca`]): the symmetric case, `Z = X`, `U = V = A`, `S = Λ`.
    Kpca,
}

impl std::fmt::Display for Estimator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Estimator::Ksvd => "KSVD",
            Estimator::Kpca => "KPCA",
        })
    }
}

/// The compatibility map of a model fitted on a data matrix (Algorithm 1).
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct CompatMap {
    /// Which side `c` maps: new data rows `x ↦ x C_x` (`Rows`) or new data columns
    /// `z ↦ zᵀ C_z` (`Cols`).
    pub side: CompatSide,
    /// The compatibility matrix (`M × N` for `Rows`, `N × M` for `Cols`).
    pub c: Option<Array2<f64>>,
}

/// Centring data of a model fitted on a precomputed kernel matrix: the training row means
/// `r_i`, column means `c_j` and grand mean `g` of `G` (all `None`/0 when not centred).
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub(crate) struct PrecomputedMeans {
    row_means: Option<Vec<f64>>,
    col_means: Option<Vec<f64>>,
    grand_mean: f64,
}

/// A Nyström model's extension coefficients through its landmarks (`S⁻¹` included):
/// `ũ(x') = k̃(x', Z_J) row_coef`, `ṽ(z') = k̃(X_I, z')ᵀ col_coef`.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
struct LandmarkExtension {
    row_coef: Array2<f64>,
    col_coef: Array2<f64>,
}

/// The serialised part of a [`KsvdModel`] (see [`MODEL_FORMAT_VERSION`] for the format).
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
struct ModelData {
    estimator: Estimator,
    params: KsvdValidParams,
    n_rows: usize,
    n_cols: usize,
    row_landmarks: Option<Vec<usize>>,
    col_landmarks: Option<Vec<usize>>,
    x: Option<Samples>,
    x_is_full: bool,
    z: Option<Samples>,
    z_is_full: bool,
    kernel_stats: Option<KernelStats>,
    precomputed: Option<PrecomputedMeans>,
    landmark_extension: Option<LandmarkExtension>,
    s: Array1<f64>,
    u: Array2<f64>,
    v: Array2<f64>,
    residuals: Option<Residuals>,
    compat: Option<CompatMap>,
}

/// A fitted model of either estimator, reduced to what its projections of new samples need,
/// with save and load: KSVD ([`Ksvd::to_model`]) and KPCA ([`crate::Kpca::to_model`], the
/// symmetric case: `Z = X`, `U = V = A`, `S = Λ`; [`KsvdModel::estimator`] says which).
///
/// New row samples `x'` and column samples `z'` project to
///
/// `k̃(x', Z) V S^-p`,  `k̃(X, z')ᵀ U S^-p`
///
/// ([`KsvdModel::project_rows`], [`KsvdModel::project_cols`]) for the [`Scaling`] `p`:
/// [`KsvdModel::transform`] (`p = ½`, `U S^½` at the training rows; for KPCA scikit-learn's
/// `KernelPCA.transform`), [`KsvdModel::extend_rows`] (`p = 1`, the paper's out-of-sample
/// extension, eq. 10, `U` at the training rows) and `Scaling::Full` (`p = 0`, Proposition 2.2's
/// scores). `k̃` is the kernel with the fit's centring (`k̃(x, z) = k(x, z) − mean_Z k(x, ·) −
/// mean_X k(·, z) + mean G`, training means) and normalisation (SNE: the normaliser of a new
/// row runs over the whole training Z; a new column uses the training rows' normalisers). At the
/// training samples they reproduce `U S^{1-p}` (exactly for the exact solver, up to the solver's
/// residual `‖Gᵀu − s v‖/s` for Lanczos and RSVD). A KSVD Nyström model projects through its
/// landmarks, `k̃(x', Z_J) R S^{1-p}`, `k̃(X_I, z')ᵀ L S^{1-p}` (see
/// [`ksvd_nystrom::AsymmetricNystrom::row_extension_coefficients`]), and stores only `X_I` and
/// `Z_J`: `O(m)` kernel evaluations per new row and `O(n)` per new column. Exceptions, because
/// the kernel's definition needs the whole set: SNE stores all of Z (the normaliser of a new
/// row is a sum over Z, `O(M)`), and a centred model stores X and Z (the means of a new sample
/// run over the training set). A KPCA model stores X once and projects over all of it (a
/// Nyström KPCA model too, with its approximate eigenpairs); fitted on a precomputed `K`
/// ([`crate::KpcaValidParams::fit_precomputed`]), it stores the centring means of `K` instead.
///
/// Singular values equal to zero give zero coefficients for `Unit` and `Sqrt` (their
/// directions are undefined).
///
/// The model file ([`KsvdModel::save`], [`KsvdModel::load`], [`KsvdModel::to_bytes`]; feature
/// `serde`, on by default) is the workspace's checksummed envelope, format
/// [`MODEL_FORMAT_VERSION`]: a changed byte, a truncated file, another format or version are
/// typed errors. The memory budget of the fit is not part of it.
///
/// ```
/// use ksvd::prelude::*;
/// use ndarray::Array2;
///
/// let x = Array2::from_shape_fn((30, 2), |(i, j)| ((i * 7 + j * 3) % 11) as f64 / 11.0);
/// let z = Array2::from_shape_fn((20, 2), |(i, j)| ((i * 5 + j) % 13) as f64 / 13.0);
/// let fitted = Ksvd::params()
///     .kernel(Kernel::Rbf { gamma: 0.8 })
///     .rank(3)
///     .solver(Solver::Exact)
///     .check()?
///     .fit_samples(Samples::dense(x.clone())?, Samples::dense(z)?)?;
/// let model = fitted.to_model()?;
/// let reloaded = KsvdModel::from_bytes(&model.to_bytes()?)?;
/// // The extension at the training rows reproduces U.
/// let u = reloaded.extend_rows(&Samples::dense(x)?)?;
/// assert!((&u - &fitted.u()).iter().all(|d| d.abs() < 1e-10));
/// # Ok::<(), ksvd::KsvdError>(())
/// ```
#[derive(Debug, Clone)]
pub struct KsvdModel {
    data: ModelData,
    /// `G` over the stored sets (centred like the fit when the fit was centred); `None` for a
    /// precomputed kernel.
    g: Option<KernelMatrix>,
    /// Columns of `g` the row projection uses (`J`), and rows the column projection uses (`I`).
    row_ext: Vec<usize>,
    col_ext: Vec<usize>,
}

fn corrupt(reason: impl Into<String>) -> KsvdError {
    KsvdError::CorruptModel { reason: reason.into() }
}

impl Ksvd {
    /// Residuals of the fitted triplets against `G`, relative to `s_1`: those the solver
    /// certified, or computed now (two products with `G`) when it did not.
    pub fn residuals(&self) -> Result<Residuals> {
        match &self.svd().residuals {
            Some(r) => Ok(r.clone()),
            None => Ok(self.svd().compute_residuals(self.kernel_matrix())?),
        }
    }

    /// The portable model: what the projections of new samples need (see [`KsvdModel`]).
    /// Computes the residuals (two products with `G`) except for Nyström models, where that would
    /// cost the full passes over `G` the method avoids.
    pub fn to_model(&self) -> Result<KsvdModel> {
        let residuals = match self.nystrom() {
            None => Some(self.residuals()?),
            Some(_) => None,
        };
        ksvd_model(
            self.params_used().clone(),
            self.kernel_matrix(),
            self.svd(),
            self.nystrom(),
            residuals,
            self.compat_map(),
        )
    }
}

/// The portable model of a KSVD fit on `g` (what [`Ksvd::to_model`] and
/// [`crate::OperatorFit::to_model`] give): `svd` with its residuals, the Nyström fit's landmarks
/// and extension coefficients when there is one.
pub(crate) fn ksvd_model(
    params: KsvdValidParams,
    g: &KernelMatrix,
    svd: &ksvd_solvers::SvdResult,
    nystrom: Option<&ksvd_nystrom::AsymmetricNystrom>,
    residuals: Option<Residuals>,
    compat: Option<CompatMap>,
) -> Result<KsvdModel> {
    {
        let (n, m) = (g.nrows(), g.ncols());
        let center = params.center();
        let sne = matches!(params.kernel(), Kernel::Sne { .. });
        let (data, gm, row_ext, col_ext) = match nystrom {
            None => {
                let data = ModelData {
                    estimator: Estimator::Ksvd,
                    params,
                    n_rows: n,
                    n_cols: m,
                    row_landmarks: None,
                    col_landmarks: None,
                    x: Some(g.x().clone()),
                    x_is_full: true,
                    z: Some(g.z().clone()),
                    z_is_full: true,
                    kernel_stats: Some(g.stats()),
                    precomputed: None,
                    landmark_extension: None,
                    s: svd.s.clone(),
                    u: svd.u.clone(),
                    v: svd.v.clone(),
                    residuals,
                    compat,
                };
                (data, g.to_matrix_free(), (0..m).collect(), (0..n).collect())
            }
            Some(ny) => {
                let x_is_full = center;
                let z_is_full = center || sne;
                let x = if x_is_full {
                    g.x().clone()
                } else {
                    g.x().select(&ny.rows)?
                };
                let z = if z_is_full {
                    g.z().clone()
                } else {
                    g.z().select(&ny.cols)?
                };
                let data = ModelData {
                    estimator: Estimator::Ksvd,
                    params,
                    n_rows: n,
                    n_cols: m,
                    row_landmarks: Some(ny.rows.clone()),
                    col_landmarks: Some(ny.cols.clone()),
                    x: Some(x),
                    x_is_full,
                    z: Some(z),
                    z_is_full,
                    kernel_stats: (x_is_full && z_is_full).then(|| g.stats()),
                    precomputed: None,
                    landmark_extension: Some(LandmarkExtension {
                        row_coef: ny.row_extension_coefficients(),
                        col_coef: ny.col_extension_coefficients(),
                    }),
                    s: svd.s.clone(),
                    u: svd.u.clone(),
                    v: svd.v.clone(),
                    residuals: None,
                    compat,
                };
                let (gm, row_ext, col_ext) = if x_is_full && z_is_full {
                    (g.to_matrix_free(), ny.cols.clone(), ny.rows.clone())
                } else {
                    KsvdModel::rebuild(&data)?
                };
                (data, gm, row_ext, col_ext)
            }
        };
        Ok(KsvdModel {
            data,
            g: Some(gm),
            row_ext,
            col_ext,
        })
    }
}

/// The record of a fitted KPCA: `Z = X`, `U = V = A`, `s = λ`, the residual of each pair on
/// both sides; the samples `x` stored once (`None` with a precomputed `K`, whose centring means
/// `precomputed` holds).
#[allow(clippy::too_many_arguments)]
fn kpca_data(
    params: KsvdValidParams,
    n: usize,
    x: Option<Samples>,
    kernel_stats: Option<KernelStats>,
    precomputed: Option<PrecomputedMeans>,
    values: &Array1<f64>,
    vectors: &Array2<f64>,
    residuals: &Array1<f64>,
    landmarks: Option<&[usize]>,
) -> ModelData {
    ModelData {
        estimator: Estimator::Kpca,
        params,
        n_rows: n,
        n_cols: n,
        row_landmarks: landmarks.map(<[usize]>::to_vec),
        col_landmarks: landmarks.map(<[usize]>::to_vec),
        x,
        x_is_full: true,
        z: None,
        z_is_full: true,
        kernel_stats,
        precomputed,
        landmark_extension: None,
        s: values.clone(),
        u: vectors.clone(),
        v: vectors.clone(),
        residuals: Some(Residuals {
            left: residuals.clone(),
            right: residuals.clone(),
        }),
        compat: None,
    }
}

/// The model of a fitted KPCA (`crate::Kpca::to_model`): `Z = X`, `U = V = A`, `s = λ`, the
/// residual of each pair on both sides, the samples stored once.
pub(crate) fn kpca_model(
    params: KsvdValidParams,
    k: &KernelMatrix,
    values: &Array1<f64>,
    vectors: &Array2<f64>,
    residuals: &Array1<f64>,
    landmarks: Option<&[usize]>,
) -> KsvdModel {
    let n = k.nrows();
    let data = kpca_data(
        params,
        n,
        Some(k.x().clone()),
        Some(k.stats()),
        None,
        values,
        vectors,
        residuals,
        landmarks,
    );
    KsvdModel {
        data,
        g: Some(k.to_matrix_free()),
        row_ext: (0..n).collect(),
        col_ext: (0..n).collect(),
    }
}

/// A precomputed kernel matrix `g`, centred in place on both sides when `center` is set, and
/// the means a model keeps for new kernel values.
pub(crate) fn center_precomputed(g: &mut Array2<f64>, center: bool) -> Result<PrecomputedMeans> {
    Ok(if center {
        let c = Centering::center_dense(g)?;
        PrecomputedMeans {
            row_means: Some(c.row_means),
            col_means: Some(c.col_means),
            grand_mean: c.grand_mean,
        }
    } else {
        PrecomputedMeans {
            row_means: None,
            col_means: None,
            grand_mean: 0.0,
        }
    })
}

/// The model of a KPCA fitted on a precomputed kernel matrix (`crate::KpcaValidParams::fit_precomputed`):
/// as [`kpca_model`], with the centring means of `K` in place of the samples.
pub(crate) fn kpca_precomputed_model(
    params: KsvdValidParams,
    n: usize,
    means: PrecomputedMeans,
    values: &Array1<f64>,
    vectors: &Array2<f64>,
    residuals: &Array1<f64>,
    landmarks: Option<&[usize]>,
) -> Result<KsvdModel> {
    let data = kpca_data(
        params,
        n,
        None,
        None,
        Some(means),
        values,
        vectors,
        residuals,
        landmarks,
    );
    KsvdModel::from_data(data)
}

impl KsvdModel {
    /// `G` over the stored sets and the projection index lists, from the serialised data.
    fn rebuild(d: &ModelData) -> Result<(KernelMatrix, Vec<usize>, Vec<usize>)> {
        let Some(x) = &d.x else {
            return Err(corrupt("x is required unless the kernel is precomputed"));
        };
        // KPCA: Z = X, stored once.
        let z = match (&d.z, d.estimator) {
            (Some(z), Estimator::Ksvd) => z,
            (None, Estimator::Kpca) => x,
            _ => return Err(corrupt("z is required for KSVD and absent for KPCA (Z = X)")),
        };
        // The projections need samples, normalisers and centring, never the stored entries; they
        // are evaluated in the precision of the fit.
        let kernel = d.params.kernel.any()?;
        let precision = d.params.precision();
        let g = match &d.kernel_stats {
            Some(stats) => {
                if stats.centering.is_some() != d.params.center() {
                    return Err(corrupt("kernel_stats centring does not match params.center"));
                }
                KernelMatrix::matrix_free_with_stats(x.clone(), z.clone(), kernel, stats.clone())
                    .map_err(|e| corrupt(e.to_string()))?
                    .into_precision(precision)
            }
            None if d.params.center() => {
                KernelMatrix::matrix_free_in(x.clone(), z.clone(), kernel, precision)?.centered()?
            }
            None => KernelMatrix::matrix_free_in(x.clone(), z.clone(), kernel, precision)?,
        };
        let (row_ext, col_ext) = KsvdModel::ext_indices(d, x.len(), z.len());
        Ok((g, row_ext, col_ext))
    }

    /// Columns the row projection uses and rows the column projection uses: the landmarks of a
    /// model that extends through them (within full stored sets), every stored sample otherwise.
    fn ext_indices(d: &ModelData, nx: usize, nz: usize) -> (Vec<usize>, Vec<usize>) {
        let through = d.landmark_extension.is_some();
        let row_ext = match (&d.col_landmarks, through && d.z_is_full) {
            (Some(j), true) => j.clone(),
            _ => (0..nz).collect(),
        };
        let col_ext = match (&d.row_landmarks, through && d.x_is_full) {
            (Some(i), true) => i.clone(),
            _ => (0..nx).collect(),
        };
        (row_ext, col_ext)
    }

    /// The model from loaded, validated data.
    fn from_data(data: ModelData) -> Result<KsvdModel> {
        if data.precomputed.is_some() {
            let (row_ext, col_ext) = KsvdModel::ext_indices(&data, data.n_rows, data.n_cols);
            return Ok(KsvdModel {
                data,
                g: None,
                row_ext,
                col_ext,
            });
        }
        let (g, row_ext, col_ext) = KsvdModel::rebuild(&data)?;
        Ok(KsvdModel {
            data,
            g: Some(g),
            row_ext,
            col_ext,
        })
    }

    /// Checks every invariant of deserialised data.
    fn validate(d: &ModelData) -> Result<()> {
        let landmarks_ok = |name: &str, l: &Option<Vec<usize>>, total: usize| -> Result<usize> {
            let Some(l) = l else { return Ok(total) };
            let mut seen = vec![false; total];
            for &i in l {
                if i >= total || std::mem::replace(&mut seen[i], true) {
                    return Err(corrupt(format!(
                        "{name} index {i} out of range or repeated ({total} samples)"
                    )));
                }
            }
            Ok(l.len())
        };
        d.params
            .kernel()
            .validate()
            .map_err(|e| corrupt(format!("kernel: {e}")))?;
        if d.params.kernel_function_name().is_some_and(|n| n.trim().is_empty()) {
            return Err(corrupt("a user kernel is recorded without a name"));
        }
        let r = d.s.len();
        if r == 0 || r != d.params.rank() {
            return Err(corrupt(format!("{r} singular values for rank {}", d.params.rank())));
        }
        if d.s.iter().any(|v| !v.is_finite() || *v < 0.0) {
            return Err(corrupt("singular values must be finite and non-negative"));
        }
        let mut matrices = vec![("u", &d.u), ("v", &d.v)];
        if let Some(ext) = &d.landmark_extension {
            matrices.extend([("row_coef", &ext.row_coef), ("col_coef", &ext.col_coef)]);
        }
        for (name, a) in matrices {
            if a.iter().any(|v| !v.is_finite()) {
                return Err(corrupt(format!("{name} has a non-finite entry")));
            }
            if a.ncols() != r {
                return Err(corrupt(format!("{name} has {} columns, expected rank {r}", a.ncols())));
            }
        }
        if d.u.nrows() != d.n_rows || d.v.nrows() != d.n_cols {
            return Err(corrupt(format!(
                "u is {}x{} and v {}x{} for a {}x{} kernel matrix",
                d.u.nrows(),
                r,
                d.v.nrows(),
                r,
                d.n_rows,
                d.n_cols
            )));
        }
        if d.row_landmarks.is_some() != d.col_landmarks.is_some() {
            return Err(corrupt("row and column landmarks must be given together"));
        }
        let n_land = landmarks_ok("row_landmarks", &d.row_landmarks, d.n_rows)?;
        let m_land = landmarks_ok("col_landmarks", &d.col_landmarks, d.n_cols)?;
        match &d.landmark_extension {
            Some(ext) => {
                if d.row_landmarks.is_none() {
                    return Err(corrupt("landmark extension coefficients without landmarks"));
                }
                if ext.row_coef.nrows() != m_land || ext.col_coef.nrows() != n_land {
                    return Err(corrupt(format!(
                        "extension coefficients are {}x{r} and {}x{r}, expected {m_land}x{r} and {n_land}x{r}",
                        ext.row_coef.nrows(),
                        ext.col_coef.nrows()
                    )));
                }
            }
            None if !(d.x_is_full && d.z_is_full) => {
                return Err(corrupt("a model without landmark extension stores all of X and Z"));
            }
            None => {}
        }
        if d.estimator == Estimator::Kpca {
            let ok = d.n_rows == d.n_cols
                && d.u == d.v
                && d.z.is_none()
                && (d.x.is_some() != d.precomputed.is_some())
                && d.compat.is_none()
                && d.landmark_extension.is_none()
                && d.row_landmarks == d.col_landmarks;
            if !ok {
                return Err(corrupt(
                    "a KPCA model is symmetric: N = M, u = v, the samples stored once (z null) or a \
                     precomputed kernel's means, one set of landmarks, no compatibility",
                ));
            }
        }
        if let Some(p) = &d.precomputed {
            let ok = d.x.is_none()
                && d.z.is_none()
                && d.x_is_full
                && d.z_is_full
                && p.grand_mean.is_finite()
                && p.row_means
                    .as_ref()
                    .is_none_or(|v| v.len() == d.n_rows && v.iter().all(|x| x.is_finite()))
                && p.col_means
                    .as_ref()
                    .is_none_or(|v| v.len() == d.n_cols && v.iter().all(|x| x.is_finite()))
                && (p.row_means.is_some() == d.params.center())
                && (p.col_means.is_some() == d.params.center());
            if !ok {
                return Err(corrupt("inconsistent precomputed-kernel record"));
            }
            return Ok(());
        }
        let x =
            d.x.as_ref()
                .ok_or_else(|| corrupt("x is required unless the kernel is precomputed"))?;
        let z = match (&d.z, d.estimator) {
            (Some(z), Estimator::Ksvd) => z,
            (None, Estimator::Kpca) => x,
            _ => return Err(corrupt("z is required unless the kernel is precomputed")),
        };
        for (name, s) in [("x", x), ("z", z)] {
            match s {
                Samples::Dense(a) => {
                    Samples::dense(a.clone()).map_err(|e| corrupt(format!("{name}: {e}")))?;
                }
                Samples::Sparse(c) => {
                    ksvd_linalg::CsrMatrix::try_new(
                        c.nrows(),
                        c.ncols(),
                        c.indptr().to_vec(),
                        c.indices().to_vec(),
                        c.data().to_vec(),
                    )
                    .map_err(|e| corrupt(format!("{name}: {e}")))?;
                }
            }
        }
        if x.dim() != z.dim() {
            return Err(corrupt(format!("x has dimension {} but z {}", x.dim(), z.dim())));
        }
        let want_x = if d.x_is_full { d.n_rows } else { n_land };
        let want_z = if d.z_is_full { d.n_cols } else { m_land };
        if x.len() != want_x || z.len() != want_z {
            return Err(corrupt(format!(
                "{} row and {} column samples stored, expected {want_x} and {want_z}",
                x.len(),
                z.len()
            )));
        }
        if let Some(cm) = &d.compat {
            let dim_ok = match (&cm.side, &cm.c) {
                (CompatSide::None, None) => true,
                (CompatSide::Rows, Some(c)) | (CompatSide::Cols, Some(c)) => {
                    c.ncols() == x.dim() && c.iter().all(|v| v.is_finite())
                }
                _ => false,
            };
            if !dim_ok {
                return Err(corrupt(
                    "compatibility matrix does not match its side or the sample dimension",
                ));
            }
        }
        Ok(())
    }

    /// The estimator that produced the model.
    pub fn estimator(&self) -> Estimator {
        self.data.estimator
    }
    /// The hyper-parameters of the fit, with the kernel it used (for a KPCA model, its
    /// parameters in this form: no compatibility, no user landmarks). The memory budget is not
    /// part of a model: this one is the default.
    pub fn params(&self) -> &KsvdValidParams {
        &self.data.params
    }
    /// The built-in kernel the fit used (not used by a precomputed-kernel model;
    /// `Kernel::Linear` stands in for a user's function: [`KsvdModel::kernel_function_name`]).
    pub fn kernel(&self) -> &Kernel {
        self.data.params.kernel()
    }
    /// The name of the user's kernel function the fit used (what the model file records),
    /// `None` for a built-in kernel.
    pub fn kernel_function_name(&self) -> Option<&str> {
        self.data.params.kernel_function_name()
    }
    /// The user's kernel function the model projects with, `None` for a built-in kernel.
    pub fn kernel_function(&self) -> Option<&std::sync::Arc<dyn ksvd_kernels::KernelFunction>> {
        self.data.params.kernel_function()
    }
    /// The bandwidth `γ` the fit used (`None` for kernels without one and precomputed kernels).
    pub fn bandwidth(&self) -> Option<f64> {
        if self.is_precomputed() {
            None
        } else {
            self.kernel().gamma()
        }
    }
    /// The solver that produced the model.
    pub fn solver(&self) -> &Solver {
        self.data.params.solver()
    }
    /// Training sizes `(N, M)`: the number of row samples and of column samples.
    pub fn shape(&self) -> (usize, usize) {
        (self.data.n_rows, self.data.n_cols)
    }
    /// The rank `r`.
    pub fn rank(&self) -> usize {
        self.data.s.len()
    }
    /// Dimension of the samples (after the compatibility map, if any); `None` for a
    /// precomputed kernel.
    pub fn sample_dim(&self) -> Option<usize> {
        self.data.x.as_ref().map(Samples::dim)
    }
    /// Values per new input `(row, column)` of [`KsvdModel::project_input_rows`] and
    /// [`KsvdModel::project_input_cols`]: the sample dimension for a fit on samples; `(M, N)`
    /// for a precomputed kernel matrix (kernel values against every training column or row) and
    /// for a fit on an `N × M` data matrix with a compatibility (a new row of it has `M`
    /// entries, a new column `N`).
    pub fn input_dims(&self) -> (usize, usize) {
        match self.sample_dim() {
            Some(d) if self.compat().is_none() => (d, d),
            _ => (self.data.n_cols, self.data.n_rows),
        }
    }
    /// Whether the model was fitted on a precomputed kernel matrix (then it projects kernel
    /// values, [`KsvdModel::project_kernel_rows`], not samples).
    pub fn is_precomputed(&self) -> bool {
        self.data.precomputed.is_some()
    }
    /// Singular values `s_1 ≥ … ≥ s_r` (KPCA: eigenvalues; Nyström: the estimates).
    pub fn singular_values(&self) -> ArrayView1<'_, f64> {
        self.data.s.view()
    }
    /// `U` (`N × r`): the training left singular vectors (`B_φ`; KPCA: the eigenvectors `A`).
    pub fn u(&self) -> ArrayView2<'_, f64> {
        self.data.u.view()
    }
    /// `V` (`M × r`): the training right singular vectors (`B_ψ`; KPCA: `A` again).
    pub fn v(&self) -> ArrayView2<'_, f64> {
        self.data.v.view()
    }
    /// Residual norms of the training triplets relative to `s_1` (`None` for KSVD Nyström
    /// models).
    pub fn residuals(&self) -> Option<&Residuals> {
        self.data.residuals.as_ref()
    }
    /// Nyström landmarks `(I, J)` (indices into the training X and Z; KPCA: `I = J`), if any.
    pub fn landmarks(&self) -> Option<(&[usize], &[usize])> {
        match (&self.data.row_landmarks, &self.data.col_landmarks) {
            (Some(i), Some(j)) => Some((i, j)),
            _ => None,
        }
    }
    /// The compatibility map of a model fitted on a data matrix with a compatibility.
    pub fn compat(&self) -> Option<&CompatMap> {
        self.data.compat.as_ref()
    }
    /// The stored row and column sample sets (all of X/Z, or only the landmarks; KPCA: X
    /// twice; see [`KsvdModel`]).
    pub fn stored_samples(&self) -> Option<(&Samples, &Samples)> {
        match (&self.data.x, &self.data.z, self.data.estimator) {
            (Some(x), Some(z), _) => Some((x, z)),
            (Some(x), None, Estimator::Kpca) => Some((x, x)),
            _ => None,
        }
    }
    /// What the model holds, as one serialisable value (the CLI's `summary.json`, `ksvd
    /// inspect`, Python's `repr`).
    pub fn summary(&self) -> ModelSummary {
        ModelSummary::of(self)
    }

    fn projector(&self) -> Projector<'_> {
        Projector {
            g: self.g.as_ref(),
            row_ext: &self.row_ext,
            col_ext: &self.col_ext,
            s: self.data.s.view(),
            u: self.data.u.view(),
            v: self.data.v.view(),
            landmark_coef: self
                .data
                .landmark_extension
                .as_ref()
                .map(|e| (e.row_coef.view(), e.col_coef.view())),
        }
    }

    /// Projections of new row samples `x'` (`new × r`): `k̃(x', Z) V S^-p` for the [`Scaling`]
    /// `p` (`U S^{1-p}` at the training rows): `Unit` is the paper's extension (eq. 10), `Sqrt`
    /// [`KsvdModel::transform`], `Full` Proposition 2.2's scores. A KSVD Nyström model projects
    /// through its landmarks.
    pub fn project_rows(&self, new_x: &Samples, scaling: Scaling) -> Result<Array2<f64>> {
        self.projector().rows(new_x, scaling)
    }

    /// Projections of new column samples `z'` (`new × r`): `k̃(X, z')ᵀ U S^-p` (`V S^{1-p}` at
    /// the training columns).
    pub fn project_cols(&self, new_z: &Samples, scaling: Scaling) -> Result<Array2<f64>> {
        self.projector().cols(new_z, scaling)
    }

    crate::projection::named_projections!();

    fn compat_parts(&self) -> (CompatSide, Option<&Array2<f64>>) {
        match &self.data.compat {
            Some(cm) => (cm.side, cm.c.as_ref()),
            None => (CompatSide::None, None),
        }
    }

    crate::projection::data_projections!();

    /// [`KsvdModel::project_data_rows`] with [`Scaling::Unit`] (the extension, eq. 10).
    pub fn extend_data_rows(&self, new_rows: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        self.project_data_rows(new_rows, Scaling::Unit)
    }

    /// [`KsvdModel::project_data_cols`] with [`Scaling::Unit`] (the extension, eq. 10).
    pub fn extend_data_cols(&self, new_cols: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        self.project_data_cols(new_cols, Scaling::Unit)
    }
}

crate::projection::linfa_transformer!(KsvdModel);

impl KsvdValidParams {
    /// Fits KSVD on a precomputed kernel matrix `G` (`N × M`, rows index X, columns index Z;
    /// rectangular allowed), centred on both sides when [`crate::KsvdParams::center`] is set.
    /// The kernel parameter and the bandwidth rule are not used. The model projects kernel
    /// values ([`KsvdModel::project_kernel_rows`], [`KsvdModel::project_kernel_cols`]); it
    /// stores the centring means, not `G`.
    pub fn fit_precomputed(&self, g: ArrayView2<'_, f64>) -> Result<KsvdModel> {
        let (n, m) = g.dim();
        ksvd_solvers::check_rank(n, m, self.rank())?;
        ksvd_linalg::check_finite("precomputed kernel matrix", g)?;
        // The training block is centred entry by entry (`H G H`), its means kept for new rows
        // and columns.
        let mut gc = g.to_owned();
        let means = center_precomputed(&mut gc, self.center())?;
        let (svd, nystrom) = self.solve(&gc, &mut |_| {})?;
        let (residuals, row_landmarks, col_landmarks, landmark_extension) = match nystrom {
            Some(ny) => {
                let ext = LandmarkExtension {
                    row_coef: ny.row_extension_coefficients(),
                    col_coef: ny.col_extension_coefficients(),
                };
                (None, Some(ny.rows), Some(ny.cols), Some(ext))
            }
            None => {
                let residuals = match &svd.residuals {
                    Some(r) => r.clone(),
                    None => svd.compute_residuals(&gc)?,
                };
                (Some(residuals), None, None, None)
            }
        };
        let data = ModelData {
            estimator: Estimator::Ksvd,
            params: self.clone(),
            n_rows: n,
            n_cols: m,
            row_landmarks,
            col_landmarks,
            x: None,
            x_is_full: true,
            z: None,
            z_is_full: true,
            kernel_stats: None,
            precomputed: Some(means),
            landmark_extension,
            s: svd.s,
            u: svd.u,
            v: svd.v,
            residuals,
            compat: None,
        };
        KsvdModel::from_data(data)
    }
}

/// A block of new kernel values centred like the fit (`Centering::center_dense` centred the
/// training block in `fit_precomputed`): `rows_own` new rows (`new × M`: their own mean over Z,
/// training column means, [`Centering::center_new_rows`]), otherwise new columns (`new × N`, one
/// new sample per row: training row means, their own mean over X,
/// [`Centering::center_new_cols`]). Uncentred models return the block unchanged.
fn center_with(k: ArrayView2<'_, f64>, means: &PrecomputedMeans, rows_own: bool) -> Result<Array2<f64>> {
    let (Some(r), Some(c)) = (&means.row_means, &means.col_means) else {
        return Ok(k.to_owned());
    };
    let centering = Centering {
        row_means: r.clone(),
        col_means: c.clone(),
        grand_mean: means.grand_mean,
    };
    let mut out = k.to_owned();
    let own = k
        .mean_axis(Axis(1))
        .unwrap_or_else(|| Array1::zeros(k.nrows()))
        .to_vec();
    let all: Vec<usize> = (0..k.ncols()).collect();
    if rows_own {
        centering.center_new_rows(out.view_mut(), &own, &all)?;
    } else {
        centering.center_new_cols(out.view_mut().reversed_axes(), &all, &own)?;
    }
    Ok(out)
}

impl KsvdModel {
    fn check_kernel_values(&self, k: ArrayView2<'_, f64>, want: usize, what: &str) -> Result<&PrecomputedMeans> {
        let Some(means) = &self.data.precomputed else {
            return Err(KsvdError::InvalidParameter {
                name: "kernel values",
                reason: "the model was fitted on samples: give samples (project_rows/cols)".into(),
            });
        };
        if k.ncols() != want {
            return Err(KsvdError::InvalidParameter {
                name: "kernel values",
                reason: format!(
                    "{} values per new sample, expected {want} (one per training {what})",
                    k.ncols()
                ),
            });
        }
        ksvd_linalg::check_finite("kernel values", k)?;
        Ok(means)
    }

    /// A precomputed-kernel model's projections of new row samples given by their kernel values
    /// `k(x'_a, z_j)` against every training column sample (`new × M`): `k̃(x', Z) V S^-p`,
    /// centred like the fit (the new row's own mean over Z); see [`KsvdModel::project_rows`].
    pub fn project_kernel_rows(&self, k: ArrayView2<'_, f64>, scaling: Scaling) -> Result<Array2<f64>> {
        let means = self.check_kernel_values(k, self.data.n_cols, "column")?;
        let kc = center_with(k, means, true)?.select(Axis(1), &self.row_ext);
        self.projector().rows_of_kernel(kc.view(), scaling)
    }

    /// A precomputed-kernel model's projections of new column samples given by their kernel
    /// values `k(x_i, z'_b)` against every training row sample, one new sample per row
    /// (`new × N`): `k̃(X, z')ᵀ U S^-p`.
    pub fn project_kernel_cols(&self, k: ArrayView2<'_, f64>, scaling: Scaling) -> Result<Array2<f64>> {
        let means = self.check_kernel_values(k, self.data.n_rows, "row")?;
        let kc = center_with(k, means, false)?.select(Axis(1), &self.col_ext);
        self.projector().cols_of_kernel(kc.view(), scaling)
    }

    /// Projections of new row inputs of the kind the fit took (`new × r`): for a model of a
    /// precomputed kernel matrix the kernel values `k(x', Z)`, one new sample per row
    /// ([`KsvdModel::project_kernel_rows`]); for a fit on a data matrix with a compatibility
    /// new rows of that matrix, mapped like the training rows
    /// ([`KsvdModel::project_data_rows`]); samples otherwise ([`KsvdModel::project_rows`]).
    /// The one dispatch behind the front ends' `transform` and `extend` of a loaded model.
    pub fn project_input_rows(&self, input: &Samples, scaling: Scaling) -> Result<Array2<f64>> {
        if self.is_precomputed() {
            self.project_kernel_rows(input.to_dense().view(), scaling)
        } else if self.compat().is_some() {
            self.project_data_rows(input.to_dense().view(), scaling)
        } else {
            self.project_rows(input, scaling)
        }
    }

    /// [`KsvdModel::project_input_rows`] for new column inputs: kernel values `k(X, z')` (one
    /// new sample per row, `new × N`), new columns of the data matrix (each given as a row), or
    /// column samples.
    pub fn project_input_cols(&self, input: &Samples, scaling: Scaling) -> Result<Array2<f64>> {
        if self.is_precomputed() {
            self.project_kernel_cols(input.to_dense().view(), scaling)
        } else if self.compat().is_some() {
            self.project_data_cols(input.to_dense().view(), scaling)
        } else {
            self.project_cols(input, scaling)
        }
    }

    /// [`KsvdModel::project_kernel_rows`] with [`Scaling::Unit`] (the extension, eq. 10).
    pub fn extend_kernel_rows(&self, k: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        self.project_kernel_rows(k, Scaling::Unit)
    }

    /// [`KsvdModel::project_kernel_cols`] with [`Scaling::Unit`] (the extension, eq. 10).
    pub fn extend_kernel_cols(&self, k: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        self.project_kernel_cols(k, Scaling::Unit)
    }
}

#[cfg(feature = "serde")]
mod io {
    use super::*;
    use ksvd_datasets::envelope;
    use std::io::{Read, Write};
    use std::path::Path;

    /// The envelope's `writer`.
    const WRITER: &str = concat!("ksvd ", env!("CARGO_PKG_VERSION"));

    impl KsvdModel {
        /// The model document (the checksummed envelope of [`MODEL_FORMAT_VERSION`]) as bytes:
        /// what [`KsvdModel::save`] writes, for pickling and transfer.
        pub fn to_bytes(&self) -> Result<Vec<u8>> {
            Ok(envelope::seal(MODEL_FORMAT, MODEL_FORMAT_VERSION, WRITER, &self.data)?)
        }
        /// Writes the model document to `w`.
        pub fn to_writer<W: Write>(&self, mut w: W) -> Result<()> {
            w.write_all(&self.to_bytes()?)
                .map_err(|e| KsvdError::ModelIo { reason: e.to_string() })
        }
        /// Reads a model document from bytes: checks the envelope (format, version, checksum:
        /// [`KsvdError::ModelFile`]), then every invariant of the payload
        /// ([`KsvdError::CorruptModel`]), and rebuilds the kernel matrix over the stored samples
        /// (normalisers and centring means from the file; recomputed when absent).
        ///
        /// A model fitted with a user's kernel function records its name only: it is
        /// [`KsvdError::KernelFunctionNeeded`] here (naming the function), and
        /// [`KsvdModel::from_bytes_with_kernel`] loads it.
        pub fn from_bytes(bytes: &[u8]) -> Result<KsvdModel> {
            let data: ModelData = envelope::open(bytes, MODEL_FORMAT, MODEL_FORMAT_VERSION)?;
            KsvdModel::validate(&data)?;
            KsvdModel::from_data(data)
        }
        /// [`KsvdModel::from_bytes`] for a model fitted with a user's kernel function: gives the
        /// model `function` back (its [`KernelFunction::name`](ksvd_kernels::KernelFunction::name)
        /// must be the one the model records).
        ///
        /// # Errors
        /// As [`KsvdModel::from_bytes`], and [`KsvdError::KernelFunctionMismatch`] when the model
        /// records another name or a built-in kernel.
        pub fn from_bytes_with_kernel(
            bytes: &[u8],
            function: std::sync::Arc<dyn ksvd_kernels::KernelFunction>,
        ) -> Result<KsvdModel> {
            let mut data: ModelData = envelope::open(bytes, MODEL_FORMAT, MODEL_FORMAT_VERSION)?;
            KsvdModel::validate(&data)?;
            data.params.kernel.attach(function)?;
            KsvdModel::from_data(data)
        }
        /// Reads a model document from a reader (see [`KsvdModel::from_bytes`]).
        pub fn from_reader<R: Read>(mut r: R) -> Result<KsvdModel> {
            let mut bytes = Vec::new();
            r.read_to_end(&mut bytes)
                .map_err(|e| KsvdError::ModelIo { reason: e.to_string() })?;
            KsvdModel::from_bytes(&bytes)
        }
        /// Saves to `path` atomically (`ksvd_datasets::write_atomic`: a temporary file in the
        /// same directory, then a rename), so a reader never sees a partial model.
        pub fn save(&self, path: &Path) -> Result<()> {
            let bytes = self.to_bytes()?;
            ksvd_datasets::write_atomic(path, &bytes).map_err(|e| KsvdError::ModelIo {
                reason: format!("{}: {e}", path.display()),
            })
        }
        /// Loads from `path` (see [`KsvdModel::from_bytes`]).
        pub fn load(path: &Path) -> Result<KsvdModel> {
            KsvdModel::from_bytes(&read(path)?)
        }
        /// Loads a model fitted with a user's kernel function from `path`, giving it the
        /// function back (see [`KsvdModel::from_bytes_with_kernel`]).
        pub fn load_with_kernel(
            path: &Path,
            function: std::sync::Arc<dyn ksvd_kernels::KernelFunction>,
        ) -> Result<KsvdModel> {
            KsvdModel::from_bytes_with_kernel(&read(path)?, function)
        }
    }

    fn read(path: &Path) -> Result<Vec<u8>> {
        std::fs::read(path).map_err(|e| KsvdError::ModelIo {
            reason: format!("{}: {e}", path.display()),
        })
    }
}
