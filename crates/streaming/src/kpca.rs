//! The KPCA baseline: the symmetric Nyström method (Williams & Seeger) on the RBF kernel between
//! samples, `K_il = exp(-‖x_i − x_l‖²/γ²)`, out of core.
use ksvd_linalg::CsrMatrix;
use ndarray::{s, Array1, Array2, ArrayViewMut2};
use serde::{Deserialize, Serialize};

use crate::embedding::{blocked_embed, ColumnNormalization, Embedding};
use crate::error::{Result, StreamingError};
use crate::params::{Bandwidth, ValidStreamingParams};
use crate::progress::ProgressFn;
use crate::scan::{scan, ScanSummary};
use crate::source::LibsvmSource;
use ksvd_kernels::bandwidth::median_positive;
use ksvd_nystrom::{eigen_coefficients, landmark_eigen, numerical_rank};

/// KPCA by the symmetric Nyström method, fitted in one streaming pass.
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

fn sq_dists(
    lt: &CsrMatrix,
    l_sq: &Array1<f64>,
    x: &CsrMatrix,
    rows: std::ops::Range<usize>,
    mut out: ArrayViewMut2<'_, f64>,
) {
    for (a, i) in rows.enumerate() {
        let (idx, val) = x.row(i);
        let mut orow = out.row_mut(a);
        for (&k, &v) in idx.iter().zip(val) {
            let (ls, ws) = lt.row(k);
            for (&l, &w) in ls.iter().zip(ws) {
                orow[l] += v * w;
            }
        }
        let na: f64 = val.iter().map(|v| v * v).sum();
        for (o, &nb) in orow.iter_mut().zip(l_sq.iter()) {
            *o = (na + nb - 2.0 * *o).max(0.0);
        }
    }
}

/// Fits KPCA with the symmetric Nyström method on the training rows of `source` in one pass
/// (sizes, labels and the landmark rows by reservoir sampling). Memory `O(n (nnz/row + n))`.
/// Only `params.rank`, `row_landmarks`, `bandwidth`, `chunk_rows`, `seed` and `rows` are used.
pub fn fit_kpca(
    source: &LibsvmSource,
    params: &ValidStreamingParams,
    progress: &mut ProgressFn<'_>,
) -> Result<StreamingKpca> {
    let sc = scan(source, params, progress, "kpca: pass 1/1 (scan, reservoir)")?;
    solve_kpca(sc.summary, sc.landmark_rows, &sc.landmark_x, params)
}

/// The landmark solve of KPCA, shared by [`fit_kpca`] and the distributed fit
/// ([`crate::LandmarkPlan::solve_kpca`]): `γ` (fixed, or the median heuristic on the landmark
/// pairs), `K_LL` and its top-`r` eigenpairs (`r` capped at the numerical rank) and `Q_r Λ_r⁻¹`,
/// with `ksvd_nystrom`'s eigendecomposition, rank rule and extension coefficients.
/// `row_landmarks` are the indices of the rows of `landmark_x` among the training rows.
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
    let landmark_sq = Array1::from(landmark_x.row_sq_norms());
    let mut d2 = Array2::<f64>::zeros((n, n));
    sq_dists(&landmarks_t, &landmark_sq, landmark_x, 0..n, d2.view_mut());
    let gamma = match params.bandwidth {
        Bandwidth::Fixed(g) => g,
        Bandwidth::Median(c) => {
            let pairs: Vec<f64> = (0..n)
                .flat_map(|i| (i + 1..n).map(move |l| (i, l)))
                .map(|(i, l)| d2[[i, l]])
                .collect();
            c * median_positive(pairs).unwrap_or(0.0).sqrt()
        }
    };
    if !(gamma.is_finite() && gamma > 0.0) {
        return Err(StreamingError::invalid(
            "bandwidth",
            gamma,
            "the median heuristic gave a zero bandwidth (fewer than two distinct landmark rows); set a fixed bandwidth",
        ));
    }
    let g2 = gamma * gamma;
    let k = d2.mapv(|d| (-d / g2).exp());
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
    /// Landmark rows (indices among the training rows, increasing).
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
        if x.ncols() != self.summary.features {
            return Err(StreamingError::FeatureMismatch {
                expected: self.summary.features,
                got: x.ncols(),
            });
        }
        let g2 = self.gamma * self.gamma;
        blocked_embed(
            x,
            self.right.view(),
            || (),
            |rows, mut out, _| {
                sq_dists(&self.landmarks_t, &self.landmark_sq, x, rows, out.view_mut());
                out.mapv_inplace(|d| (-d / g2).exp());
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
