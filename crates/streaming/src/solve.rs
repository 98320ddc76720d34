//! The driver between the passes: after pass 1 the [`LandmarkPlan`] (global row offsets, `N`,
//! `M`, the landmark columns and the compatibility's projection), broadcast to pass 2; after
//! pass 2 the landmark solve ([`LandmarkPlan::solve_ksvd`], [`LandmarkPlan::solve_kpca`]), whose
//! [`Fitted`] model is broadcast to pass 3.
use ksvd_linalg::CsrMatrix;
use ndarray::Array2;
use serde::{Deserialize, Serialize};

use crate::error::{Result, StreamingError};
use crate::kpca::solve_kpca;
use crate::ksvd::{choose_cols, make_projection, project_gathered, solve_landmarks, CompatSide, LandmarkInputs};
use crate::landmarks::{LandmarkColumns, LandmarksPartial};
use crate::params::{Method, RowLandmarks, StreamingParams, ValidStreamingParams};
use crate::projection::SparseProjection;
use crate::scan::{ScanPartial, ScanSummary};
use crate::state::{check_files, state_error, FileIndex, PartialState};
use crate::train::{Fitted, FittedKpca, FittedKsvd};

/// The driver's state after pass 1: the parts' global row offsets, what the scan found, and for
/// KSVD the compatibility side, its projection and the landmark columns `J`. Broadcast to pass 2
/// ([`LandmarksPartial::from_part`]).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LandmarkPlan {
    pub(crate) params: StreamingParams,
    pub(crate) method: Method,
    pub(crate) index: FileIndex,
    pub(crate) summary: ScanSummary,
    pub(crate) side: CompatSide,
    pub(crate) projection: Option<SparseProjection>,
    /// Landmark columns `J` (KSVD; empty for KPCA).
    pub(crate) col_landmarks: Vec<usize>,
    /// `‖X[:, j]‖²` of every column (KSVD).
    pub(crate) col_sq_norms: Vec<f64>,
}

impl PartialState for LandmarkPlan {
    const KIND: &'static str = "plan";
    fn check(&self) -> std::result::Result<(), String> {
        if !self.index.is_consistent() {
            return Err("the part offsets do not add up to the row counts".into());
        }
        Ok(())
    }
}

impl LandmarkPlan {
    /// The plan of `method` from the merged scan of every training part.
    pub fn new(scan: &ScanPartial, params: &ValidStreamingParams, method: Method) -> Result<Self> {
        let index = FileIndex::new(&scan.files);
        let (nn, mm) = (scan.rows(), scan.width);
        if nn == 0 || mm == 0 {
            return Err(StreamingError::EmptySource {
                path: index.describe(),
                selection: if nn == 0 {
                    String::new()
                } else {
                    " with features".into()
                },
            });
        }
        if let RowLandmarks::Explicit(v) = &params.rows {
            if let Some(&bad) = v.iter().find(|&&i| i >= nn) {
                return Err(StreamingError::LandmarkOutOfRange {
                    what: "row",
                    index: bad,
                    len: nn,
                });
            }
        }
        let side = CompatSide::of(nn, mm);
        let ksvd = method == Method::Ksvd;
        let mut col_sq_norms = Vec::new();
        if ksvd {
            col_sq_norms.clone_from(&scan.counts.col_sq);
            col_sq_norms.resize(mm, 0.0);
        }
        Ok(LandmarkPlan {
            params: (**params).clone(),
            method,
            index,
            summary: ScanSummary {
                rows: nn,
                features: mm,
                nnz: scan.counts.nnz,
                label_counts: scan.counts.labels.clone(),
            },
            side,
            projection: if ksvd {
                make_projection(side, nn, mm, params)?
            } else {
                None
            },
            col_landmarks: if ksvd { choose_cols(params, mm)? } else { Vec::new() },
            col_sq_norms,
        })
    }

    /// The method the plan is for.
    pub fn method(&self) -> Method {
        self.method
    }

    /// Whether pass 2 accumulates landmark columns (KSVD).
    pub(crate) fn columns_needed(&self) -> bool {
        self.method == Method::Ksvd
    }

    /// Landmark columns `J` (KSVD; empty for KPCA).
    pub fn col_landmarks(&self) -> &[usize] {
        &self.col_landmarks
    }

    /// What the scan found (`N`, `M`, entries, labels).
    pub fn summary(&self) -> &ScanSummary {
        &self.summary
    }

    /// The first global row id and the row count of training part `part`.
    pub fn part_offsets(&self, part: usize) -> Result<(usize, usize)> {
        self.index.locate(Self::KIND, part)
    }

    fn valid_params(&self) -> Result<ValidStreamingParams> {
        self.params.clone().check()
    }

    /// The landmark rows of the merged pass-2 state (checked complete) as global ids and rows.
    fn landmark_rows(&self, landmarks: &LandmarksPartial) -> Result<(Vec<usize>, CsrMatrix)> {
        check_files(LandmarksPartial::KIND, &self.index.files, &landmarks.files)?;
        let want = match &self.params.rows {
            RowLandmarks::Sketch => self.params.row_landmarks.min(self.summary.rows),
            RowLandmarks::Explicit(v) => v.len(),
        };
        if landmarks.rows.len() != want {
            return Err(state_error(
                LandmarksPartial::KIND,
                format!("{} landmark rows found, {want} expected", landmarks.rows.len()),
            ));
        }
        let mut rows: Vec<_> = landmarks.rows.iter().collect();
        rows.sort_unstable_by_key(|r| r.row);
        let mut indptr = vec![0usize];
        let (mut indices, mut data) = (Vec::new(), Vec::new());
        for r in &rows {
            indices.extend_from_slice(&r.indices);
            data.extend_from_slice(&r.values);
            indptr.push(indices.len());
        }
        let x = CsrMatrix::try_new(rows.len(), self.summary.features, indptr, indices, data)?;
        Ok((rows.iter().map(|r| r.row).collect(), x))
    }

    fn check_method(&self, want: Method) -> Result<()> {
        if self.method != want {
            return Err(state_error(
                Self::KIND,
                format!("the plan is for {}, not {}", self.method.as_str(), want.as_str()),
            ));
        }
        Ok(())
    }

    /// The driver's landmark solve of KSVD from the merged pass-2 state of every training part:
    /// `P` (rows mapped: `P = C_x X[:, J]` formed here from the gathered `X[:, J]`, each row of
    /// `P` summed over rows in increasing order), the `n × m` landmark block, `γ`, its SVD.
    pub fn solve_ksvd(&self, landmarks: &LandmarksPartial) -> Result<FittedKsvd> {
        self.check_method(Method::Ksvd)?;
        let params = self.valid_params()?;
        let (row_landmarks, landmark_x) = self.landmark_rows(landmarks)?;
        let (mm, m) = (self.summary.features, self.col_landmarks.len());
        let p = match (&landmarks.columns, self.projection.as_ref()) {
            (Some(LandmarkColumns::Summed(p)), _) if self.side != CompatSide::Rows && p.dim() == (mm, m) => p.clone(),
            (Some(LandmarkColumns::Gathered { m: mg, rows }), Some(pr))
                if self.side == CompatSide::Rows && *mg == m =>
            {
                let mut indptr = Vec::with_capacity(self.summary.rows + 1);
                indptr.push(0usize);
                let (mut ind, mut dat) = (Vec::new(), Vec::new());
                for r in rows {
                    indptr.resize(r.row + 1, ind.len());
                    ind.extend_from_slice(&r.cols);
                    dat.extend_from_slice(&r.vals);
                    indptr.push(ind.len());
                }
                indptr.resize(self.summary.rows + 1, ind.len());
                let xj = CsrMatrix::try_new(self.summary.rows, m, indptr, ind, dat)?;
                let mut p = Array2::zeros((mm, m));
                project_gathered(pr, &xj, &mut p);
                p
            }
            _ => {
                return Err(state_error(
                    LandmarksPartial::KIND,
                    format!(
                        "the landmark columns ({}) do not belong to this plan ({}, M = {mm}, m = {m})",
                        landmarks.describe(),
                        self.side
                    ),
                ))
            }
        };
        let model = solve_landmarks(
            LandmarkInputs {
                side: self.side,
                summary: self.summary.clone(),
                projection: self.projection.clone(),
                row_landmarks,
                landmark_x: &landmark_x,
                col_landmarks: self.col_landmarks.clone(),
                p,
                col_sq_norms: &self.col_sq_norms,
            },
            &params,
        )?;
        Fitted::new(model, &landmark_x, self.index.clone(), params.chunk_rows)
    }

    /// The driver's landmark solve of KPCA (the symmetric Nyström method on the landmark rows of
    /// the merged pass-2 state).
    pub fn solve_kpca(&self, landmarks: &LandmarksPartial) -> Result<FittedKpca> {
        self.check_method(Method::Kpca)?;
        let params = self.valid_params()?;
        let (row_landmarks, landmark_x) = self.landmark_rows(landmarks)?;
        let model = solve_kpca(self.summary.clone(), row_landmarks, &landmark_x, &params)?;
        Fitted::new(model, &landmark_x, self.index.clone(), params.chunk_rows)
    }
}
