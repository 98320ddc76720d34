//! Dimensionality compatibility matrices (Remark 3.2 and Algorithm 1 of the paper).
//!
//! A data matrix `X ∈ R^{N×M}` gives row samples `x_i ∈ R^M` and column samples
//! `z_j ∈ R^N` (the columns of `X`). A kernel needs both in one space, so:
//!
//! * `M > N`: `C_x ∈ R^{M×N}` maps the rows, `x'_i = C_xᵀ x_i`, i.e. `X' = X C_x` (N × N);
//! * `N > M`: `C_z ∈ R^{N×M}` maps the columns, `Z' = Xᵀ C_z` (M × M);
//! * `N = M`: `C = I`.
//!
//! With `C_x`: a0 `C_x = ((X Xᵀ)^† X)ᵀ`; a1 the top-N right singular vectors of `X`
//! (`argmin_C ‖X − X C Cᵀ‖_F`, uncentred as in Algorithm 1); a2 a seeded `randn(M, N)` matrix
//! (unscaled, as in Algorithm 1). `C_z` mirrors these with `Xᵀ` in place of `X`.
//! a3 (learned by gradient descent) lives with the downstream task.
use crate::error::{KernelError, Result};
use crate::samples::Samples;
use ksvd_linalg::{dense, random};
use ndarray::{Array2, ArrayView2, Axis};

/// A compatibility alternative of Remark 3.2.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Compat {
    /// a0: the pseudo-inverse of the data matrix.
    PseudoInverse,
    /// a1: PCA projection (top singular vectors).
    Pca,
    /// a2: seeded Gaussian random projection.
    Random {
        /// Seed of the Gaussian entries.
        seed: u64,
    },
}

impl std::str::FromStr for Compat {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "a0" | "pinv" => Ok(Compat::PseudoInverse),
            "a1" | "pca" => Ok(Compat::Pca),
            "a2" | "random" => Ok(Compat::Random { seed: 0 }),
            other => Err(format!("unknown compatibility `{other}` (expected a0, a1 or a2)")),
        }
    }
}

/// Which side the compatibility matrix acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum CompatSide {
    /// `N = M`: nothing to do.
    None,
    /// `M > N`: rows are mapped, `X' = X C_x`.
    Rows,
    /// `N > M`: columns are mapped, `Z' = Xᵀ C_z`.
    Cols,
}

/// Row and column samples of a data matrix made dimension-compatible.
#[derive(Debug, Clone)]
pub struct CompatibleSamples {
    /// Row samples (`N` of them).
    pub x: Samples,
    /// Column samples (`M` of them).
    pub z: Samples,
    /// The compatibility matrix (`None` when square).
    pub c: Option<Array2<f64>>,
    /// Which side `c` maps.
    pub side: CompatSide,
}

/// The compatibility matrix `C` for `X` (`M × N` when `M > N`, mirrored otherwise).
pub fn compat_matrix(x: ArrayView2<'_, f64>, compat: Compat) -> Result<Array2<f64>> {
    let (n, m) = x.dim();
    if n == 0 || m == 0 {
        return Err(KernelError::Empty {
            what: "data matrix",
            rows: n,
            dim: m,
        });
    }
    ksvd_linalg::check_finite("data matrix", x)?;
    // Work with `a` (rows mapped): a = X when M > N, a = Xᵀ when N > M; C maps a's rows.
    let a = if m >= n { x } else { x.reversed_axes() };
    let (p, q) = a.dim(); // p <= q, C is q x p
    Ok(match compat {
        Compat::PseudoInverse => {
            let aat = dense::matmul(a, a.t())?;
            let pinv = dense::pinv(aat.view(), 1e-12 * (p.max(q) as f64))?;
            dense::matmul(a.t(), pinv.view())?
        }
        Compat::Pca => {
            let svd = dense::thin_svd(a)?;
            svd.v.slice(ndarray::s![.., ..p]).to_owned()
        }
        Compat::Random { seed } => {
            let mut rng = random::rng_from_seed(seed);
            random::gaussian_matrix(&mut rng, q, p)
        }
    })
}

/// Row samples `x_i` (rows of `X`) and column samples `z_j` (columns of `X`) in a common space.
pub fn compatible_samples(x: ArrayView2<'_, f64>, compat: Compat) -> Result<CompatibleSamples> {
    let (n, m) = x.dim();
    if n == m {
        return Ok(CompatibleSamples {
            x: Samples::dense(x.to_owned())?,
            z: Samples::dense(x.t().to_owned())?,
            c: None,
            side: CompatSide::None,
        });
    }
    let c = compat_matrix(x, compat)?;
    if m > n {
        let xp = dense::matmul(x, c.view())?;
        Ok(CompatibleSamples {
            x: Samples::dense(xp)?,
            z: Samples::dense(x.t().to_owned())?,
            c: Some(c),
            side: CompatSide::Rows,
        })
    } else {
        let zp = dense::matmul(x.t(), c.view())?;
        Ok(CompatibleSamples {
            x: Samples::dense(x.to_owned())?,
            z: Samples::dense(zp)?,
            c: Some(c),
            side: CompatSide::Cols,
        })
    }
}

/// Maps new row samples (rows of a matrix with the training `M` columns) with the fitted
/// compatibility, so they can be compared with the column samples.
pub fn map_new_rows(new_x: ArrayView2<'_, f64>, cs: &CompatibleSamples) -> Result<Array2<f64>> {
    match (&cs.side, &cs.c) {
        (CompatSide::Rows, Some(c)) => Ok(dense::matmul(new_x, c.view())?),
        _ => Ok(new_x.to_owned()),
    }
}

/// Column means helper used by tests and PCA-style callers.
pub fn column_means(x: ArrayView2<'_, f64>) -> Array2<f64> {
    x.mean_axis(Axis(0))
        .map(|m| m.insert_axis(Axis(0)))
        .unwrap_or_else(|| Array2::zeros((1, x.ncols())))
}
