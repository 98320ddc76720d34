//! The portable fitted model: out-of-sample extension (eq. 10) and model files.
use crate::error::{KsvdError, Result};
use crate::model::{Ksvd, KsvdValidParams, Solver};
use ksvd_kernels::{compat::CompatSide, Kernel, KernelMatrix, Samples};
use ksvd_linalg::{dense, LinearOperator};
use ndarray::{Array1, Array2, ArrayView1, ArrayView2};

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
///   "x": Samples, "x_is_full": bool, // stored row samples: all of X, or X_I only
///   "z": Samples, "z_is_full": bool, // stored column samples: all of Z, or Z_J only
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

/// Residual norms of the training triplets: `left[i] = ‖G v_i − s_i u_i‖`,
/// `right[i] = ‖Gᵀ u_i − s_i v_i‖` (absolute, in the units of `G`).
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Residuals {
    /// `‖G v_i − s_i u_i‖` for every triplet.
    pub left: Vec<f64>,
    /// `‖Gᵀ u_i − s_i v_i‖` for every triplet.
    pub right: Vec<f64>,
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
    x: Samples,
    x_is_full: bool,
    z: Samples,
    z_is_full: bool,
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
    /// `G` over the stored sets (centred like the fit when the fit was centred).
    g: KernelMatrix,
    /// Columns of `g` the row extension uses (`J`), and rows the column extension uses (`I`).
    row_ext: Vec<usize>,
    col_ext: Vec<usize>,
}

fn inverse(s: ArrayView1<'_, f64>) -> Array1<f64> {
    s.mapv(|v| if v > 0.0 { 1.0 / v } else { 0.0 })
}

fn corrupt(reason: impl Into<String>) -> KsvdError {
    KsvdError::CorruptModel { reason: reason.into() }
}

impl Ksvd {
    /// Residual norms of the fitted triplets against `G` (two products with `G`).
    pub fn residuals(&self) -> Result<Residuals> {
        let r = self.svd().residuals(self.kernel_matrix())?;
        Ok(Residuals {
            left: r.iter().map(|p| p.0).collect(),
            right: r.iter().map(|p| p.1).collect(),
        })
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
                let inv = inverse(svd.s.view());
                let row_coef = &svd.v * &inv;
                let col_coef = &svd.u * &inv;
                let data = ModelData {
                    format: MODEL_FORMAT.into(),
                    format_version: MODEL_FORMAT_VERSION,
                    crate_version: env!("CARGO_PKG_VERSION").into(),
                    params,
                    n_rows: n,
                    n_cols: m,
                    row_landmarks: None,
                    col_landmarks: None,
                    x: g.x().clone(),
                    x_is_full: true,
                    z: g.z().clone(),
                    z_is_full: true,
                    row_coef,
                    col_coef,
                    s: svd.s.clone(),
                    u: svd.u.clone(),
                    v: svd.v.clone(),
                    residuals: Some(self.residuals()?),
                    compat: self.compat_map(),
                };
                (data, g.clone(), (0..m).collect(), (0..n).collect())
            }
            Some(ny) => {
                let x_is_full = center;
                let z_is_full = center || sne;
                let x = if x_is_full { g.x().clone() } else { g.x().select(&ny.rows)? };
                let z = if z_is_full { g.z().clone() } else { g.z().select(&ny.cols)? };
                let data = ModelData {
                    format: MODEL_FORMAT.into(),
                    format_version: MODEL_FORMAT_VERSION,
                    crate_version: env!("CARGO_PKG_VERSION").into(),
                    params,
                    n_rows: n,
                    n_cols: m,
                    row_landmarks: Some(ny.rows.clone()),
                    col_landmarks: Some(ny.cols.clone()),
                    x,
                    x_is_full,
                    z,
                    z_is_full,
                    row_coef: ny.row_extension_coefficients(),
                    col_coef: ny.col_extension_coefficients(),
                    s: svd.s.clone(),
                    u: svd.u.clone(),
                    v: svd.v.clone(),
                    residuals: None,
                    compat: self.compat_map(),
                };
                let (gm, row_ext, col_ext) = if x_is_full && z_is_full {
                    (g.clone(), ny.cols.clone(), ny.rows.clone())
                } else {
                    KsvdModel::rebuild(&data)?
                };
                (data, gm, row_ext, col_ext)
            }
        };
        Ok(KsvdModel {
            data,
            g: gm,
            row_ext,
            col_ext,
        })
    }
}

impl KsvdModel {
    /// `G` over the stored sets and the extension index lists, from the serialised data.
    fn rebuild(d: &ModelData) -> Result<(KernelMatrix, Vec<usize>, Vec<usize>)> {
        let mut g = KernelMatrix::new(d.x.clone(), d.z.clone(), *d.params.kernel())?;
        if d.params.center() {
            g = g.centered()?;
        }
        let row_ext = match (&d.col_landmarks, d.z_is_full) {
            (Some(j), true) => j.clone(),
            _ => (0..d.z.len()).collect(),
        };
        let col_ext = match (&d.row_landmarks, d.x_is_full) {
            (Some(i), true) => i.clone(),
            _ => (0..d.x.len()).collect(),
        };
        Ok((g, row_ext, col_ext))
    }

    /// Checks every invariant of deserialised data.
    fn validate(d: &ModelData) -> Result<()> {
        d.params.kernel().validate().map_err(|e| corrupt(format!("kernel: {e}")))?;
        let r = d.s.len();
        if r == 0 || r != d.params.rank() {
            return Err(corrupt(format!("{r} singular values for rank {}", d.params.rank())));
        }
        if d.s.iter().any(|v| !v.is_finite() || *v < 0.0) {
            return Err(corrupt("singular values must be finite and non-negative"));
        }
        for (name, a) in [("u", &d.u), ("v", &d.v), ("row_coef", &d.row_coef), ("col_coef", &d.col_coef)] {
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
        for (name, s) in [("x", &d.x), ("z", &d.z)] {
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
        if d.x.dim() != d.z.dim() {
            return Err(corrupt(format!("x has dimension {} but z {}", d.x.dim(), d.z.dim())));
        }
        let landmarks = |name: &str, l: &Option<Vec<usize>>, total: usize| -> Result<usize> {
            let Some(l) = l else { return Ok(total) };
            let mut seen = vec![false; total];
            for &i in l {
                if i >= total || std::mem::replace(&mut seen[i], true) {
                    return Err(corrupt(format!("{name} index {i} out of range or repeated ({total} samples)")));
                }
            }
            Ok(l.len())
        };
        let n_land = landmarks("row_landmarks", &d.row_landmarks, d.n_rows)?;
        let m_land = landmarks("col_landmarks", &d.col_landmarks, d.n_cols)?;
        let want_x = if d.x_is_full { d.n_rows } else { n_land };
        let want_z = if d.z_is_full { d.n_cols } else { m_land };
        if d.x.len() != want_x || d.z.len() != want_z {
            return Err(corrupt(format!(
                "{} row and {} column samples stored, expected {want_x} and {want_z}",
                d.x.len(),
                d.z.len()
            )));
        }
        if d.row_coef.nrows() != m_land || d.col_coef.nrows() != n_land {
            return Err(corrupt(format!(
                "extension coefficients are {}x{r} and {}x{r}, expected {m_land}x{r} and {n_land}x{r}",
                d.row_coef.nrows(),
                d.col_coef.nrows()
            )));
        }
        if let Some(cm) = &d.compat {
            let dim_ok = match (&cm.side, &cm.c) {
                (CompatSide::None, None) => true,
                (CompatSide::Rows, Some(c)) | (CompatSide::Cols, Some(c)) => {
                    c.ncols() == d.x.dim() && c.iter().all(|v| v.is_finite())
                }
                _ => false,
            };
            if !dim_ok {
                return Err(corrupt("compatibility matrix does not match its side or the sample dimension"));
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
    /// Dimension of the samples (after the compatibility map, if any).
    pub fn sample_dim(&self) -> usize {
        self.data.x.dim()
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
    pub fn stored_samples(&self) -> (&Samples, &Samples) {
        (&self.data.x, &self.data.z)
    }

    /// The out-of-sample extension to new row samples `x'` (`new × r`):
    /// `ũ(x') = k̃(x', Z) V S⁻¹` (eq. 10), equal to the rows of `U` at the training rows.
    pub fn extend_rows(&self, new_x: &Samples) -> Result<Array2<f64>> {
        let k = self.g.cross_rows(new_x, &self.row_ext)?;
        Ok(dense::matmul(k.view(), self.data.row_coef.view())?)
    }

    /// The out-of-sample extension to new column samples `z'` (`new × r`):
    /// `ṽ(z') = k̃(X, z')ᵀ U S⁻¹`, equal to the rows of `V` at the training columns.
    pub fn extend_cols(&self, new_z: &Samples) -> Result<Array2<f64>> {
        let k = self.g.cross_cols(&self.col_ext, new_z)?;
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
            let (g, row_ext, col_ext) = KsvdModel::rebuild(&data)?;
            Ok(KsvdModel {
                data,
                g,
                row_ext,
                col_ext,
            })
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
