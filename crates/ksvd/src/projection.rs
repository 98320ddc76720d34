//! Projections of new samples: one formula for every fitted model ([`crate::Ksvd`],
//! [`crate::Kpca`], [`crate::KsvdModel`]) under one of three [`Scaling`]s, and the named
//! conventions (`transform`, `transform_cols`, `extend_rows`, `extend_cols`) as thin calls of it.
use crate::error::{KsvdError, Result};
use ksvd_kernels::compat::CompatSide;
use ksvd_kernels::{KernelMatrix, Samples};
use ksvd_linalg::{dense, Precision};
use ndarray::{Array1, Array2, ArrayView1, ArrayView2, CowArray, Ix2};

/// How projections of new samples are scaled, named by the value they take at the training
/// samples. With `k̃` the kernel centred and normalised like the training matrix, a new row
/// sample `x'` projects to `k̃(x', Z) V S^-p` and a new column sample `z'` to
/// `k̃(X, z')ᵀ U S^-p`:
///
/// | scaling | `p` | rows of `U` become | named method |
/// |---|---|---|---|
/// | [`Scaling::Unit`] | 1 | `U` | `extend_rows`, `extend_cols` (the paper's eq. 10) |
/// | [`Scaling::Sqrt`] | ½ | `U S^½` | `transform`, `transform_cols` (KPCA: scikit-learn's `KernelPCA.transform`) |
/// | [`Scaling::Full`] | 0 | `U S` | the projection scores of Proposition 2.2, `k(x', Z) V` |
///
/// Zero singular values give zero columns for `Unit` and `Sqrt` (their directions are
/// undefined); `Full` multiplies by `V` itself. A Nyström model projects through its landmarks
/// (eq. 11): `k̃(x', Z_J) R S^{1-p}` with `R` its extension coefficients.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
pub enum Scaling {
    /// `k̃(x', Z) V S⁻¹`: `U` at the training rows (the out-of-sample extension, eq. 10).
    Unit,
    /// `k̃(x', Z) V S^-½`: `U S^½` at the training rows (`transform`).
    Sqrt,
    /// `k̃(x', Z) V`: `U S` at the training rows (Proposition 2.2's scores).
    Full,
}

/// What a projection needs: the kernel over the stored sets, which of its columns (rows) the
/// row (column) projection uses, the singular triplets and, for Nyström models, the extension
/// coefficients through the landmarks (`S⁻¹` included).
pub(crate) struct Projector<'a> {
    /// `None` for a model of a precomputed kernel matrix, which projects kernel values.
    pub(crate) g: Option<&'a KernelMatrix>,
    pub(crate) row_ext: &'a [usize],
    pub(crate) col_ext: &'a [usize],
    pub(crate) s: ArrayView1<'a, f64>,
    pub(crate) u: ArrayView2<'a, f64>,
    pub(crate) v: ArrayView2<'a, f64>,
    pub(crate) landmark_coef: Option<(ArrayView2<'a, f64>, ArrayView2<'a, f64>)>,
}

impl Projector<'_> {
    fn kernel(&self) -> Result<&KernelMatrix> {
        self.g.ok_or_else(|| KsvdError::InvalidParameter {
            name: "samples",
            reason: "the model was fitted on a precomputed kernel: give kernel values (project_kernel_rows/cols)"
                .into(),
        })
    }

    /// `k̃(x', Z_{row_ext}) C` with `C` the row coefficients of `scaling`.
    pub(crate) fn rows(&self, new_x: &Samples, scaling: Scaling) -> Result<Array2<f64>> {
        let k = self.kernel()?.cross_rows(new_x, self.row_ext)?;
        self.rows_of_kernel(k.view(), scaling)
    }

    /// `k̃(X_{col_ext}, z')ᵀ C` with `C` the column coefficients of `scaling`.
    pub(crate) fn cols(&self, new_z: &Samples, scaling: Scaling) -> Result<Array2<f64>> {
        let k = self.kernel()?.cross_cols(self.col_ext, new_z)?;
        self.cols_of_kernel(k.t(), scaling)
    }

    /// The row projection of kernel values already evaluated and centred (`new × |row_ext|`),
    /// multiplied in the kernel's precision ([`KernelMatrix::precision`]; `f64` for kernel
    /// values given).
    pub(crate) fn rows_of_kernel(&self, k: ArrayView2<'_, f64>, scaling: Scaling) -> Result<Array2<f64>> {
        let c = coefficients(self.v, self.s, self.landmark_coef.map(|(r, _)| r), scaling);
        Ok(self.precision().matmul(k, c.view())?)
    }

    /// The column projection of kernel values already evaluated and centred, one new sample per
    /// row (`new × |col_ext|`), multiplied as [`Projector::rows_of_kernel`].
    pub(crate) fn cols_of_kernel(&self, k: ArrayView2<'_, f64>, scaling: Scaling) -> Result<Array2<f64>> {
        let c = coefficients(self.u, self.s, self.landmark_coef.map(|(_, l)| l), scaling);
        Ok(self.precision().matmul(k, c.view())?)
    }

    fn precision(&self) -> Precision {
        self.g.map_or(Precision::F64, KernelMatrix::precision)
    }
}

/// The coefficient matrix of a projection: from the singular vectors `w` (`V` for rows, `U` for
/// columns), `w S^-p`; from Nyström extension coefficients `c = w̃ S⁻¹`, `c S^{1-p}`.
fn coefficients<'a>(
    w: ArrayView2<'a, f64>,
    s: ArrayView1<'_, f64>,
    landmark: Option<ArrayView2<'a, f64>>,
    scaling: Scaling,
) -> CowArray<'a, f64, Ix2> {
    // `1/s` and `1/sqrt(s)` where `s > 0`, else 0.
    let inv = |f: fn(f64) -> f64| -> Array1<f64> { s.mapv(|v| if v > 0.0 { 1.0 / f(v) } else { 0.0 }) };
    match (landmark, scaling) {
        (None, Scaling::Full) => CowArray::from(w),
        (None, Scaling::Sqrt) => CowArray::from(&w * &inv(f64::sqrt)),
        (None, Scaling::Unit) => CowArray::from(&w * &inv(|v| v)),
        (Some(c), Scaling::Unit) => CowArray::from(c),
        (Some(c), Scaling::Sqrt) => CowArray::from(&c * &s.mapv(f64::sqrt)),
        (Some(c), Scaling::Full) => CowArray::from(&c * &s),
    }
}

/// New rows (`want = Rows`) or columns (`want = Cols`, one per row of `data`) of a data matrix
/// as samples: mapped by the compatibility matrix `c` of a fit on that data matrix when it maps
/// that side (`x C_x`, `zᵀ C_z`), as they are otherwise.
pub(crate) fn map_data(
    side: CompatSide,
    c: Option<&Array2<f64>>,
    want: CompatSide,
    data: ArrayView2<'_, f64>,
) -> Result<Samples> {
    let mapped = match c {
        Some(c) if side == want => dense::matmul(data, c.view())?,
        _ => data.to_owned(),
    };
    Ok(Samples::dense(mapped)?)
}

/// The named projections of a fitted model, as thin calls of its `project_rows` and
/// `project_cols` (one definition for [`crate::Ksvd`], [`crate::Kpca`] and [`crate::KsvdModel`]).
macro_rules! named_projections {
    () => {
        /// `transform(x') = k̃(x', Z) V S^-½` (`new × r`): `U S^½` at the training rows, so that
        /// `transform(x) transform_cols(z)ᵀ` is the rank-`r` approximation of `k̃(x, z)`. For
        /// KPCA (`Z = X`, `U = V = A`, `S = Λ`) this is scikit-learn's `KernelPCA.transform`,
        /// `k̃(x', X) A Λ^-½`. Shorthand of `project_rows(x, Scaling::Sqrt)`
        /// ([`crate::Scaling`]); zero singular values give zero columns.
        pub fn transform(&self, new_x: &Samples) -> $crate::Result<ndarray::Array2<f64>> {
            self.project_rows(new_x, $crate::Scaling::Sqrt)
        }

        /// `transform_cols(z') = k̃(X, z')ᵀ U S^-½` (`new × r`): `V S^½` at the training columns.
        /// Shorthand of `project_cols(z, Scaling::Sqrt)`.
        pub fn transform_cols(&self, new_z: &Samples) -> $crate::Result<ndarray::Array2<f64>> {
            self.project_cols(new_z, $crate::Scaling::Sqrt)
        }

        /// The paper's out-of-sample extension (eq. 10) to new row samples,
        /// `ũ(x') = k̃(x', Z) V S⁻¹` (`new × r`): the rows of `U` at the training rows (exactly
        /// for the exact solver, up to the solver's residual otherwise; Nyström: through the
        /// landmarks, eq. 11). Shorthand of `project_rows(x, Scaling::Unit)`.
        pub fn extend_rows(&self, new_x: &Samples) -> $crate::Result<ndarray::Array2<f64>> {
            self.project_rows(new_x, $crate::Scaling::Unit)
        }

        /// The out-of-sample extension to new column samples, `ṽ(z') = k̃(X, z')ᵀ U S⁻¹`
        /// (`new × r`): the rows of `V` at the training columns. Shorthand of
        /// `project_cols(z, Scaling::Unit)`.
        pub fn extend_cols(&self, new_z: &Samples) -> $crate::Result<ndarray::Array2<f64>> {
            self.project_cols(new_z, $crate::Scaling::Unit)
        }
    };
}
pub(crate) use named_projections;

/// The projections of new rows and columns of the data matrix of a fit with a compatibility,
/// for a fitted model with `compat_parts()` (its compatibility's side and matrix).
macro_rules! data_projections {
    () => {
        /// `project_rows` for new rows of the data matrix of a fit on a data matrix with a
        /// compatibility (linfa's `Fit` and `compat(Some(..))`): they are mapped like the
        /// training rows first (`x C_x`). Without a compatibility the rows are the samples
        /// themselves.
        pub fn project_data_rows(
            &self,
            new_rows: ndarray::ArrayView2<'_, f64>,
            scaling: $crate::Scaling,
        ) -> $crate::Result<ndarray::Array2<f64>> {
            let (side, c) = self.compat_parts();
            let x = $crate::projection::map_data(side, c, ksvd_kernels::CompatSide::Rows, new_rows)?;
            self.project_rows(&x, scaling)
        }

        /// `project_cols` for new columns of the data matrix (each given as a row of
        /// `new_cols`, length `N`), mapped like the training columns first (`zᵀ C_z`).
        pub fn project_data_cols(
            &self,
            new_cols: ndarray::ArrayView2<'_, f64>,
            scaling: $crate::Scaling,
        ) -> $crate::Result<ndarray::Array2<f64>> {
            let (side, c) = self.compat_parts();
            let z = $crate::projection::map_data(side, c, ksvd_kernels::CompatSide::Cols, new_cols)?;
            self.project_cols(&z, scaling)
        }
    };
}
pub(crate) use data_projections;

/// linfa's [`linfa::traits::Transformer`] for a fitted model: the rows of a data matrix (linfa's
/// records, as [`linfa::traits::Fit`] takes them) to `transform`'s projections
/// (`project_data_rows(x, Scaling::Sqrt)`).
macro_rules! linfa_transformer {
    ($model:ty) => {
        /// linfa's transformer: new rows of a data matrix (the records of a dataset, mapped by the
        /// compatibility of a fit with one) to `transform(x) = k̃(x', Z) V S^-½`. An inherent
        /// `transform` (on samples) exists too, so call this one as
        /// `Transformer::transform(&model, &x)`.
        impl linfa::traits::Transformer<&ndarray::Array2<f64>, $crate::Result<ndarray::Array2<f64>>> for $model {
            fn transform(&self, x: &ndarray::Array2<f64>) -> $crate::Result<ndarray::Array2<f64>> {
                self.project_data_rows(x.view(), $crate::Scaling::Sqrt)
            }
        }
    };
}
pub(crate) use linfa_transformer;
