//! The portable fitted model: out-of-sample extension (eq. 10) and model files.
use crate::error::{KsvdError, Result};
use crate::model::{Ksvd, KsvdValidParams, Solver};
use ksvd_kernels::{compat::CompatSide, Centering, Kernel, KernelMatrix, KernelStats, Samples};
use ksvd_linalg::{dense, LinearOperator};
use ksvd_nystrom::{asymmetric_nystrom, NystromParams};
use ksvd_solvers::Residuals;
use ndarray::{Array1, Array2, ArrayView1, ArrayView2, Axis};

/// Identifies a model file.
pub const MODEL_FORMAT: &str = "ksvd-model";
/// The model file version written by this crate (and the only one it reads).
///
/// # Model file format (version 1)
///
/// A model is one JSON document (UTF-8), written by [`KsvdModel::to_writer`] and read by
/// [`KsvdModel::from_reader`]:
///
/// ```text
/// {
///   "format": "ksvd-model",          // always this string
///   "format_version": 1,             // bumped on every incompatible change
///   "crate_version": "0.1.0",        // the ksvd crate that wrote it (informational)
///   "params": { kernel, rank, solver, center, compat, seed, landmark_indices },
///   "n_rows": N, "n_cols": M,        // training sizes
///   "row_landmarks": [..] | null,    // Nyström: sampled rows I (into X), else null
///   "col_landmarks": [..] | null,    // Nyström: sampled columns J (into Z), else null
///   "x": Samples | null, "x_is_full": bool, // stored row samples: all of X, or X_I only
///   "z": Samples | null, "z_is_full": bool, // stored column samples: all of Z, or Z_J only
///   "kernel_stats": null | { "log_normalizers": [..] | null, // SNE log S_i over the stored X
///                            "centering": null | { "row_means": [..], "col_means": [..],
///                                                  "grand_mean": f64 } },
///                                    // present when x and z are full: the fitted normalisers
///                                    // and means, so loading needs no pass over G (absent:
///                                    // recomputed from the samples)
///   "precomputed": null | { "row_means": [..] | null, "col_means": [..] | null,
///                           "grand_mean": f64 }, // a precomputed G (then x, z are null and
///                                                // params.kernel is not used); means if centred
///   "row_coef": Array2 (|J| × r),    // ũ(x') = k̃(x', Z_J) row_coef
///   "col_coef": Array2 (|I| × r),    // ṽ(z') = k̃(X_I, z')ᵀ col_coef
///   "s": Array1 (r), "u": Array2 (N × r), "v": Array2 (M × r),
///   "residuals": { "left": [..], "right": [..] } | null,
///   "compat": { "side": "Rows" | "Cols" | "None", "c": Array2 } | null
/// }
/// ```
///
/// Arrays use ndarray's serde form `{"v": 1, "dim": [..], "data": [..]}` (row-major);
/// `Samples` is `{"Dense": Array2}` or `{"Sparse": {nrows, ncols, indptr, indices, data}}`
/// (CSR, 0-based). Every `f64` is written in shortest round-trip form and parsed exactly, so a
/// reloaded model gives bit-identical transforms.
///
/// Why one JSON document: it is self-describing, readable from any language without this
/// crate, versioned in one place, and the same bytes serve files, pickling (Python) and
/// network transfer ([`KsvdModel::to_bytes`]). The price is size (about 20 bytes per value,
/// 2.5× a binary `.npy`), acceptable for the sample sets this tool targets.
///
/// Unknown `format_version` values are rejected with [`KsvdError::ModelVersion`]; anything that
/// does not parse or violates an invariant (shapes, finite values, CSR structure, landmark
/// indices) with [`KsvdError::CorruptModel`], naming the problem.
pub const MODEL_FORMAT_VERSION: u64 = 1;

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
struct PrecomputedMeans {
    row_means: Option<Vec<f64>>,
    col_means: Option<Vec<f64>>,
    grand_mean: f64,
}

/// The serialised part of a [`KsvdModel`] (see [`MODEL_FORMAT_VERSION`] for the format).
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
struct ModelData {
    format: String,
    format_version: u64,
    crate_version: String,
    params: KsvdValidParams,
    n_rows: usize,
    n_cols: usize,
    row_landmarks: Option<Vec<usize>>,
    col_landmarks: Option<Vec<usize>>,
    x: Option<Samples>,
    x_is_full: bool,
    z: Option<Samples>,
    z_is_full: bool,
    #[cfg_attr(feature = "serde", serde(default))]
    kernel_stats: Option<KernelStats>,
    #[cfg_attr(feature = "serde", serde(default))]
    precomputed: Option<PrecomputedMeans>,
    row_coef: Array2<f64>,
    col_coef: Array2<f64>,
    s: Array1<f64>,
    u: Array2<f64>,
    v: Array2<f64>,
    residuals: Option<Residuals>,
    compat: Option<CompatMap>,
}

/// A fitted KSVD model reduced to what its out-of-sample extension needs, with save and load.
///
/// The extension (eq. 10 of the paper) of the top-`r` SVD `G ≈ U S Vᵀ` to a new row sample
/// `x'` and a new column sample `z'` is
///
/// `ũ(x') = k̃(x', Z) V S⁻¹`,  `ṽ(z') = k̃(X, z')ᵀ U S⁻¹`,
///
/// where `k̃` is the kernel with the fit's centring (`k̃(x, z) = k(x, z) − mean_Z k(x, ·) −
/// mean_X k(·, z) + mean G`, training means) and normalisation (SNE: the normaliser of a new row
/// runs over the whole training Z; a new column uses the training rows' normalisers). At the
/// training samples it reproduces `U` and `V` (exactly for the exact solver, up to the solver's
/// residual `‖Gᵀu − s v‖/s` for Lanczos and RSVD). A Nyström model extends through its landmarks,
/// `ũ(x') = k̃(x', Z_J) R`, `ṽ(z') = k̃(X_I, z')ᵀ L` (see
/// [`ksvd_nystrom::AsymmetricNystrom::row_extension_coefficients`]), and stores only `X_I` and
/// `Z_J`: `O(m)` kernel evaluations per new row and `O(n)` per new column. Exceptions, because
/// the kernel's definition needs the whole set: SNE stores all of Z (the normaliser of a new
/// row is a sum over Z, `O(M)`), and a centred model stores X and Z (the means of a new sample
/// run over the training set).
///
/// Singular values equal to zero give zero extension coefficients (their directions are
/// undefined).
///
/// ```
/// use ksvd::{Ksvd, KsvdModel, Solver};
/// use ksvd_kernels::{Kernel, Samples};
/// use linfa::prelude::*;
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
/// assert!((&u - &fitted.b_phi()).iter().all(|d| d.abs() < 1e-10));
/// # Ok::<(), ksvd::KsvdError>(())
/// ```
#[derive(Debug, Clone)]
pub struct KsvdModel {
    data: ModelData,
    /// `G` over the stored sets (centred like the fit when the fit was centred); `None` for a
    /// precomputed kernel.
    g: Option<KernelMatrix>,
    /// Columns of `g` the row extension uses (`J`), and rows the column extension uses (`I`).
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

    /// The portable model: what the out-of-sample extension needs (see [`KsvdModel`]).
    /// Computes the residuals (two products with `G`) except for Nyström models, where that would
    /// cost the full passes over `G` the method avoids.
    pub fn to_model(&self) -> Result<KsvdModel> {
        let params = self.params_used().clone();
        let g = self.kernel_matrix();
        let (n, m) = (g.nrows(), g.ncols());
        let svd = self.svd();
        let center = params.center();
        let sne = matches!(params.kernel(), Kernel::Sne { .. });
        let (data, gm, row_ext, col_ext) = match self.nystrom() {
            None => {
                let (row_coef, col_coef) = ksvd_nystrom::exact_coefficients(svd);
                let data = ModelData {
                    format: MODEL_FORMAT.into(),
                    format_version: MODEL_FORMAT_VERSION,
                    crate_version: env!("CARGO_PKG_VERSION").into(),
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
                    row_coef,
                    col_coef,
                    s: svd.s.clone(),
                    u: svd.u.clone(),
                    v: svd.v.clone(),
                    residuals: Some(self.residuals()?),
                    compat: self.compat_map(),
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
                    format: MODEL_FORMAT.into(),
                    format_version: MODEL_FORMAT_VERSION,
                    crate_version: env!("CARGO_PKG_VERSION").into(),
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
                    row_coef: ny.row_extension_coefficients(),
                    col_coef: ny.col_extension_coefficients(),
                    s: svd.s.clone(),
                    u: svd.u.clone(),
                    v: svd.v.clone(),
                    residuals: None,
                    compat: self.compat_map(),
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

impl KsvdModel {
    /// `G` over the stored sets and the extension index lists, from the serialised data.
    fn rebuild(d: &ModelData) -> Result<(KernelMatrix, Vec<usize>, Vec<usize>)> {
        let (Some(x), Some(z)) = (&d.x, &d.z) else {
            return Err(corrupt("x and z are required unless the kernel is precomputed"));
        };
        // The extension needs samples, normalisers and centring, never the stored entries.
        let kernel = *d.params.kernel();
        let g = match &d.kernel_stats {
            Some(stats) => {
                if stats.centering.is_some() != d.params.center() {
                    return Err(corrupt("kernel_stats centring does not match params.center"));
                }
                KernelMatrix::matrix_free_with_stats(x.clone(), z.clone(), kernel, stats.clone())
                    .map_err(|e| corrupt(e.to_string()))?
            }
            None if d.params.center() => KernelMatrix::matrix_free(x.clone(), z.clone(), kernel)?.centered()?,
            None => KernelMatrix::matrix_free(x.clone(), z.clone(), kernel)?,
        };
        let (row_ext, col_ext) = KsvdModel::ext_indices(d, x.len(), z.len());
        Ok((g, row_ext, col_ext))
    }

    /// Columns the row extension uses and rows the column extension uses.
    fn ext_indices(d: &ModelData, nx: usize, nz: usize) -> (Vec<usize>, Vec<usize>) {
        let row_ext = match (&d.col_landmarks, d.z_is_full) {
            (Some(j), true) => j.clone(),
            _ => (0..nz).collect(),
        };
        let col_ext = match (&d.row_landmarks, d.x_is_full) {
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
        let r = d.s.len();
        if r == 0 || r != d.params.rank() {
            return Err(corrupt(format!("{r} singular values for rank {}", d.params.rank())));
        }
        if d.s.iter().any(|v| !v.is_finite() || *v < 0.0) {
            return Err(corrupt("singular values must be finite and non-negative"));
        }
        for (name, a) in [
            ("u", &d.u),
            ("v", &d.v),
            ("row_coef", &d.row_coef),
            ("col_coef", &d.col_coef),
        ] {
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
        let n_land = landmarks_ok("row_landmarks", &d.row_landmarks, d.n_rows)?;
        let m_land = landmarks_ok("col_landmarks", &d.col_landmarks, d.n_cols)?;
        if d.row_coef.nrows() != m_land || d.col_coef.nrows() != n_land {
            return Err(corrupt(format!(
                "extension coefficients are {}x{r} and {}x{r}, expected {m_land}x{r} and {n_land}x{r}",
                d.row_coef.nrows(),
                d.col_coef.nrows()
            )));
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
        let (Some(x), Some(z)) = (&d.x, &d.z) else {
            return Err(corrupt("x and z are required unless the kernel is precomputed"));
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

    /// The hyper-parameters of the fit.
    pub fn params(&self) -> &KsvdValidParams {
        &self.data.params
    }
    /// The kernel.
    pub fn kernel(&self) -> &Kernel {
        self.data.params.kernel()
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
    /// Whether the model was fitted on a precomputed kernel matrix (then it extends kernel
    /// values, [`KsvdModel::extend_kernel_rows`], not samples).
    pub fn is_precomputed(&self) -> bool {
        self.data.precomputed.is_some()
    }
    /// Singular values `λ_1 ≥ … ≥ λ_r` (Nyström: the estimates `λ̃`).
    pub fn singular_values(&self) -> ArrayView1<'_, f64> {
        self.data.s.view()
    }
    /// `U` (`N × r`): the training left singular vectors (`B_φ`).
    pub fn u(&self) -> ArrayView2<'_, f64> {
        self.data.u.view()
    }
    /// `V` (`M × r`): the training right singular vectors (`B_ψ`).
    pub fn v(&self) -> ArrayView2<'_, f64> {
        self.data.v.view()
    }
    /// Residual norms of the training triplets (`None` for Nyström models).
    pub fn residuals(&self) -> Option<&Residuals> {
        self.data.residuals.as_ref()
    }
    /// Nyström landmarks `(I, J)` (indices into the training X and Z), if any.
    pub fn landmarks(&self) -> Option<(&[usize], &[usize])> {
        match (&self.data.row_landmarks, &self.data.col_landmarks) {
            (Some(i), Some(j)) => Some((i, j)),
            _ => None,
        }
    }
    /// The compatibility map of a model fitted on a data matrix.
    pub fn compat(&self) -> Option<&CompatMap> {
        self.data.compat.as_ref()
    }
    /// The stored row and column sample sets (all of X/Z, or only the landmarks; see
    /// [`KsvdModel`]).
    pub fn stored_samples(&self) -> Option<(&Samples, &Samples)> {
        match (&self.data.x, &self.data.z) {
            (Some(x), Some(z)) => Some((x, z)),
            _ => None,
        }
    }

    fn sample_kernel(&self) -> Result<&KernelMatrix> {
        self.g.as_ref().ok_or_else(|| KsvdError::InvalidParameter {
            name: "samples",
            reason: "the model was fitted on a precomputed kernel: give kernel values (extend_kernel_rows/cols)".into(),
        })
    }

    /// The out-of-sample extension to new row samples `x'` (`new × r`):
    /// `ũ(x') = k̃(x', Z) V S⁻¹` (eq. 10), equal to the rows of `U` at the training rows.
    pub fn extend_rows(&self, new_x: &Samples) -> Result<Array2<f64>> {
        let k = self.sample_kernel()?.cross_rows(new_x, &self.row_ext)?;
        Ok(dense::matmul(k.view(), self.data.row_coef.view())?)
    }

    /// The out-of-sample extension to new column samples `z'` (`new × r`):
    /// `ṽ(z') = k̃(X, z')ᵀ U S⁻¹`, equal to the rows of `V` at the training columns.
    pub fn extend_cols(&self, new_z: &Samples) -> Result<Array2<f64>> {
        let k = self.sample_kernel()?.cross_cols(&self.col_ext, new_z)?;
        Ok(dense::matmul(k.t(), self.data.col_coef.view())?)
    }

    /// [`KsvdModel::extend_rows`] for new rows of the data matrix of a model fitted with
    /// [`linfa::traits::Fit`]: maps them with the fitted compatibility matrix first (`x C_x`).
    pub fn extend_data_rows(&self, new_rows: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        let mapped = match &self.data.compat {
            Some(CompatMap {
                side: CompatSide::Rows,
                c: Some(c),
            }) => dense::matmul(new_rows, c.view())?,
            _ => new_rows.to_owned(),
        };
        self.extend_rows(&Samples::dense(mapped)?)
    }

    /// [`KsvdModel::extend_cols`] for new columns of the data matrix (each given as a row of
    /// `new_cols`, length `N`), mapped with the fitted compatibility matrix first (`zᵀ C_z`).
    pub fn extend_data_cols(&self, new_cols: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        let mapped = match &self.data.compat {
            Some(CompatMap {
                side: CompatSide::Cols,
                c: Some(c),
            }) => dense::matmul(new_cols, c.view())?,
            _ => new_cols.to_owned(),
        };
        self.extend_cols(&Samples::dense(mapped)?)
    }
}

impl KsvdValidParams {
    /// Fits KSVD on a precomputed kernel matrix `G` (`N × M`, rows index X, columns index Z;
    /// rectangular allowed), centred on both sides when [`crate::KsvdParams::center`] is set.
    /// The kernel parameter is not used. The model extends kernel values
    /// ([`KsvdModel::extend_kernel_rows`], [`KsvdModel::extend_kernel_cols`]); it stores the
    /// centring means, not `G`.
    pub fn fit_precomputed(&self, g: ArrayView2<'_, f64>) -> Result<KsvdModel> {
        let (n, m) = g.dim();
        ksvd_solvers::check_rank(n, m, self.rank())?;
        ksvd_linalg::check_finite("precomputed kernel matrix", g)?;
        // The training block is centred entry by entry (`H G H`), its means kept for new rows
        // and columns.
        let mut gc = g.to_owned();
        let means = if self.center() {
            let c = Centering::center_dense(&mut gc)?;
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
        };
        let rank = self.rank();
        let mut landmarks = None;
        let (svd, row_coef, col_coef, residuals) = match self.solver() {
            Solver::Nystrom {
                landmarks: l,
                cols,
                sampling,
                inner,
            } => {
                let ny = match self.landmark_indices() {
                    Some((ri, cj)) => crate::landmarks::nystrom_at(&gc, ri, cj, rank, *inner, self.seed())?,
                    None => asymmetric_nystrom(
                        &gc,
                        &NystromParams {
                            rank,
                            rows: (*l).min(n),
                            cols: cols.unwrap_or(*l).min(m),
                            sampling: *sampling,
                            inner: *inner,
                            seed: self.seed(),
                            shared_samples: false,
                        },
                    )?,
                };
                landmarks = Some((ny.rows.clone(), ny.cols.clone()));
                let (rc, cc) = (ny.row_extension_coefficients(), ny.col_extension_coefficients());
                (ny.svd, rc, cc, None)
            }
            other => {
                let svd = other.solve_operator(&gc, rank, self.seed(), self.memory_budget())?;
                let residuals = match &svd.residuals {
                    Some(r) => r.clone(),
                    None => svd.compute_residuals(&gc)?,
                };
                let (rc, cc) = ksvd_nystrom::exact_coefficients(&svd);
                (svd, rc, cc, Some(residuals))
            }
        };
        let (row_landmarks, col_landmarks) = match landmarks {
            Some((i, j)) => (Some(i), Some(j)),
            None => (None, None),
        };
        let data = ModelData {
            format: MODEL_FORMAT.into(),
            format_version: MODEL_FORMAT_VERSION,
            crate_version: env!("CARGO_PKG_VERSION").into(),
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
            row_coef,
            col_coef,
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
                reason: "the model was fitted on samples: give samples (extend_rows/cols)".into(),
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

    /// The out-of-sample extension of a precomputed-kernel model to new row samples given by
    /// their kernel values `k(x'_a, z_j)` against every training column sample (`new × M`):
    /// `k̃(x', Z) V S⁻¹`, centred like the fit (the new row's own mean over Z).
    pub fn extend_kernel_rows(&self, k: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        let means = self.check_kernel_values(k, self.data.n_cols, "column")?;
        let kc = center_with(k, means, true)?.select(Axis(1), &self.row_ext);
        Ok(dense::matmul(kc.view(), self.data.row_coef.view())?)
    }

    /// The out-of-sample extension of a precomputed-kernel model to new column samples given by
    /// their kernel values `k(x_i, z'_b)` against every training row sample, one new sample per
    /// row (`new × N`): `k̃(X, z')ᵀ U S⁻¹`.
    pub fn extend_kernel_cols(&self, k: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        let means = self.check_kernel_values(k, self.data.n_rows, "row")?;
        let kc = center_with(k, means, false)?.select(Axis(1), &self.col_ext);
        Ok(dense::matmul(kc.view(), self.data.col_coef.view())?)
    }
}

#[cfg(feature = "serde")]
mod io {
    use super::*;
    use std::io::{Read, Write};
    use std::path::Path;

    #[derive(serde::Deserialize)]
    struct Header {
        format: Option<String>,
        format_version: Option<u64>,
    }

    impl KsvdModel {
        /// Writes the model file (JSON, see [`MODEL_FORMAT_VERSION`]) to `w`.
        pub fn to_writer<W: Write>(&self, w: W) -> Result<()> {
            serde_json::to_writer(w, &self.data).map_err(|e| KsvdError::ModelIo { reason: e.to_string() })
        }
        /// The model file as bytes (for pickling and transfer).
        pub fn to_bytes(&self) -> Result<Vec<u8>> {
            let mut buf = Vec::new();
            self.to_writer(&mut buf)?;
            Ok(buf)
        }
        /// Reads a model file from bytes, checking the format version and every invariant,
        /// and rebuilds the kernel matrix over the stored samples (one pass for SNE normalisers
        /// and centring means).
        pub fn from_bytes(bytes: &[u8]) -> Result<KsvdModel> {
            let header: Header =
                serde_json::from_slice(bytes).map_err(|e| corrupt(format!("not a ksvd model file: {e}")))?;
            if header.format.as_deref() != Some(MODEL_FORMAT) {
                return Err(corrupt(format!(
                    "not a ksvd model file (format is {:?}, expected \"{MODEL_FORMAT}\")",
                    header.format.unwrap_or_default()
                )));
            }
            match header.format_version {
                Some(MODEL_FORMAT_VERSION) => {}
                Some(found) => {
                    return Err(KsvdError::ModelVersion {
                        found,
                        supported: MODEL_FORMAT_VERSION,
                    })
                }
                None => return Err(corrupt("missing format_version")),
            }
            let data: ModelData = serde_json::from_slice(bytes).map_err(|e| corrupt(e.to_string()))?;
            KsvdModel::validate(&data)?;
            KsvdModel::from_data(data)
        }
        /// Reads a model file from a reader (see [`KsvdModel::from_bytes`]).
        pub fn from_reader<R: Read>(mut r: R) -> Result<KsvdModel> {
            let mut bytes = Vec::new();
            r.read_to_end(&mut bytes)
                .map_err(|e| KsvdError::ModelIo { reason: e.to_string() })?;
            KsvdModel::from_bytes(&bytes)
        }
        /// Saves to `path` (not atomically; callers that need it write [`KsvdModel::to_bytes`]
        /// through a temporary file and a rename).
        pub fn save(&self, path: &Path) -> Result<()> {
            let bytes = self.to_bytes()?;
            std::fs::write(path, bytes).map_err(|e| KsvdError::ModelIo {
                reason: format!("{}: {e}", path.display()),
            })
        }
        /// Loads from `path`.
        pub fn load(path: &Path) -> Result<KsvdModel> {
            let bytes = std::fs::read(path).map_err(|e| KsvdError::ModelIo {
                reason: format!("{}: {e}", path.display()),
            })?;
            KsvdModel::from_bytes(&bytes)
        }
    }
}
