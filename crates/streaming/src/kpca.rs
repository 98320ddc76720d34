//! The KPCA baseline: the symmetric Nyström method (Williams & Seeger) on the RBF kernel between
//! samples, `K_il = exp(-‖x_i − x_l‖²/γ²)`, out of core: the fitted model and the driver's
//! landmark solve ([`crate::LandmarkPlan::solve_kpca`]; [`crate::fit_kpca`] runs the passes in
//! one process).
use ksvd_kernels::Kernel;
use ksvd_linalg::CsrMatrix;
use ndarray::{s, Array1, Array2, ArrayViewMut2};
use serde::{Deserialize, Serialize};

use crate::embedding::{blocked_embed, ColumnNormalization, Embedding};
use crate::error::{Result, StreamingError};
use crate::params::ValidStreamingParams;
use crate::scan::ScanSummary;
use ksvd_nystrom::{eigen_coefficients, landmark_eigen, numerical_rank};

/// KPCA by the symmetric Nyström method on landmark rows of the training data.
///
/// With landmark rows `L` (`n` of them), `K_LL = Q Λ Qᵀ` (eigenvalues descending), every row is
/// embedded as `ũ(x) = k(x, x_L) Q_r Λ_r⁻¹ ⊙ f` with `f` the [`ColumnNormalization`]: at the
/// training rows these are the unit-norm Nyström eigenvectors of `K` computed by
/// `ksvd_nystrom::symmetric_nystrom` (without centring, as the paper's KPCA).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StreamingKpca {
    summary: ScanSummary,
    row_landmarks: Vec<usize>,
    /// Landmark rows transposed (`M × n`), for `x · x_l` over the nonzeros of `x`.
    landmarks_t: CsrMatrix,
    landmark_sq: Array1<f64>,
    gamma: f64,
    eigenvalues: Array1<f64>,
    /// `Q_r Λ_r⁻¹` (`n × r`).
    right: Array2<f64>,
    normalization: Option<ColumnNormalization>,
}

/// Writes the inner products `x_i · x_l` of the rows `rows` of `x` with the landmark rows (held
/// transposed, `lt`: `M × n`) into the zeroed `out` and returns `‖x_i‖²`.
fn products(lt: &CsrMatrix, x: &CsrMatrix, rows: std::ops::Range<usize>, mut out: ArrayViewMut2<'_, f64>) -> Vec<f64> {
    rows.enumerate()
        .map(|(a, i)| {
            let (idx, val) = x.row(i);
            let mut orow = out.row_mut(a);
            for (&k, &v) in idx.iter().zip(val) {
                let (ls, ws) = lt.row(k);
                for (&l, &w) in ls.iter().zip(ws) {
                    orow[l] += v * w;
                }
            }
            val.iter().map(|v| v * v).sum()
        })
        .collect()
}

/// The landmark solve of KPCA ([`crate::LandmarkPlan::solve_kpca`]): `γ` (fixed, or the median
/// heuristic on the pairs of distinct landmark rows), `K_LL` and its top-`r` eigenpairs (`r`
/// capped at the numerical rank) and `Q_r Λ_r⁻¹`, with `ksvd_nystrom`'s eigendecomposition, rank
/// rule and extension coefficients. `row_landmarks` are the global row ids of the rows of
/// `landmark_x`.
pub(crate) fn solve_kpca(
    summary: ScanSummary,
    row_landmarks: Vec<usize>,
    landmark_x: &CsrMatrix,
    params: &ValidStreamingParams,
) -> Result<StreamingKpca> {
    let n = row_landmarks.len();
    if n == 0 || landmark_x.nrows() != n {
        return Err(StreamingError::invalid(
            "landmark rows",
            n,
            format!(
                "need at least one landmark row and one index per row ({} rows given)",
                landmark_x.nrows()
            ),
        ));
    }
    let landmarks_t = landmark_x.transpose();
    let mut k = Array2::<f64>::zeros((n, n));
    let landmark_sq = products(&landmarks_t, landmark_x, 0..n, k.view_mut());
    let gamma = params
        .bandwidth
        .gamma_from_inner_products(k.view(), &landmark_sq, &landmark_sq, true)?;
    Kernel::Rbf { gamma }.values_from_inner_products(k.view_mut(), &landmark_sq, &landmark_sq)?;
    let landmark_sq = Array1::from(landmark_sq);
    let (w, q) = landmark_eigen(k.view())?;
    let r = params.rank.min(numerical_rank(&w.to_vec(), n));
    if r == 0 {
        return Err(StreamingError::RankZero {
            rows: n,
            cols: n,
            largest: w.first().copied().unwrap_or(0.0),
        });
    }
    let eigenvalues = w.slice(s![..r]).to_owned();
    let right = eigen_coefficients(q.view(), w.view(), r)?;
    Ok(StreamingKpca {
        summary,
        row_landmarks,
        landmarks_t,
        landmark_sq,
        gamma,
        eigenvalues,
        right,
        normalization: None,
    })
}

impl StreamingKpca {
    /// What the pass found (rows `N`, features `M`, labels).
    pub fn summary(&self) -> &ScanSummary {
        &self.summary
    }
    /// Landmark rows (global row ids, increasing).
    pub fn row_landmarks(&self) -> &[usize] {
        &self.row_landmarks
    }
    /// The RBF bandwidth `γ` used.
    pub fn gamma(&self) -> f64 {
        self.gamma
    }
    /// Top eigenvalues of `K_LL`, descending (multiply by `N/n` for those of `K`).
    pub fn eigenvalues(&self) -> &Array1<f64> {
        &self.eigenvalues
    }
}

impl Embedding for StreamingKpca {
    fn rank(&self) -> usize {
        self.eigenvalues.len()
    }

    fn n_features(&self) -> usize {
        self.summary.features
    }

    fn embed_raw(&self, x: &CsrMatrix) -> Result<Array2<f64>> {
        self.summary.check_features(x)?;
        let kernel = Kernel::Rbf { gamma: self.gamma };
        let l_sq = self.landmark_sq.as_slice().unwrap_or(&[]);
        blocked_embed(
            x,
            self.right.view(),
            || (),
            |rows, mut out, _| {
                let x_sq = products(&self.landmarks_t, x, rows, out.view_mut());
                Ok(kernel.values_from_inner_products(out, &x_sq, l_sq)?)
            },
        )
    }

    fn normalization(&self) -> Option<&ColumnNormalization> {
        self.normalization.as_ref()
    }

    fn set_normalization(&mut self, normalization: ColumnNormalization) {
        self.normalization = Some(normalization);
    }
}
