//! The first pass over a training source: sizes, labels, column norms and the landmark rows.
use ksvd_linalg::CsrMatrix;

use crate::error::{Result, StreamingError};
use crate::params::{RowLandmarks, ValidStreamingParams};
use crate::progress::{report, ProgressFn};
use crate::reservoir::Reservoir;
use crate::seeding::{domain, item_seed};
use crate::source::{for_each_chunk, LibsvmSource};

/// Distinct labels recorded by a scan before it stops listing new ones.
const MAX_LABELS: usize = 1000;

/// What the first pass learned about a training source.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ScanSummary {
    /// Number of (selected) rows `N`.
    pub rows: usize,
    /// Number of feature columns `M`.
    pub features: usize,
    /// Stored entries.
    pub nnz: usize,
    /// `(label, count)` sorted by label (at most 1000 distinct labels are listed).
    pub label_counts: Vec<(f64, usize)>,
}

/// The scan's result: summary, landmark rows and squared column norms.
#[derive(Debug, Clone)]
pub(crate) struct Scan {
    pub summary: ScanSummary,
    /// Indices (among the selected rows) of the landmark rows, increasing.
    pub landmark_rows: Vec<usize>,
    /// The landmark rows (`n × M`).
    pub landmark_x: CsrMatrix,
    /// `‖X[:, j]‖²` for every column.
    pub col_sq_norms: Vec<f64>,
}

type SparseRow = (Vec<usize>, Vec<f64>);

/// The additive part of a scan: stored entries, label counts and squared column norms. Partial
/// counts of disjoint row sets merge by addition ([`ScanCounts::merge`]): exactly for the
/// integers, up to the order of the floating-point additions for the norms.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct ScanCounts {
    /// Stored entries.
    pub nnz: usize,
    /// `(label, count)` sorted by label (at most [`MAX_LABELS`] distinct labels).
    pub labels: Vec<(f64, usize)>,
    /// `‖X[:, j]‖²` of the columns seen so far.
    pub col_sq: Vec<f64>,
}

impl ScanCounts {
    /// Adds a chunk of rows and their labels.
    pub(crate) fn add_chunk(&mut self, x: &CsrMatrix, labels: &[f64]) {
        if self.col_sq.len() < x.ncols() {
            self.col_sq.resize(x.ncols(), 0.0);
        }
        for (&j, &v) in x.indices().iter().zip(x.data()) {
            self.col_sq[j] += v * v;
        }
        self.nnz += x.nnz();
        for &label in labels {
            self.add_label(label, 1);
        }
    }

    fn add_label(&mut self, label: f64, count: usize) {
        match self.labels.binary_search_by(|(l, _)| l.total_cmp(&label)) {
            Ok(p) => self.labels[p].1 += count,
            Err(p) if self.labels.len() < MAX_LABELS => self.labels.insert(p, (label, count)),
            Err(_) => {}
        }
    }

    /// Adds the counts of a disjoint set of rows.
    pub(crate) fn merge(&mut self, other: &ScanCounts) {
        if self.col_sq.len() < other.col_sq.len() {
            self.col_sq.resize(other.col_sq.len(), 0.0);
        }
        for (a, b) in self.col_sq.iter_mut().zip(&other.col_sq) {
            *a += b;
        }
        self.nnz += other.nnz;
        for &(label, count) in &other.labels {
            self.add_label(label, count);
        }
    }
}

/// Pass 1: counts rows, entries and labels, accumulates squared column norms, and keeps the
/// landmark rows (reservoir sample or explicit indices).
pub(crate) fn scan(
    source: &LibsvmSource,
    params: &ValidStreamingParams,
    progress: &mut ProgressFn<'_>,
    stage: &str,
) -> Result<Scan> {
    let mut reservoir: Reservoir<SparseRow> =
        Reservoir::new(params.row_landmarks, item_seed(params.seed, domain::RESERVOIR, 0));
    let explicit: Option<&[usize]> = match &params.rows {
        RowLandmarks::Reservoir => None,
        RowLandmarks::Explicit(v) => Some(v),
    };
    let mut explicit_found: Vec<(usize, SparseRow)> = Vec::new();
    let mut counts = ScanCounts::default();
    let (rows, width) = for_each_chunk(source, params.chunk_rows, None, |c| {
        counts.add_chunk(&c.x, &c.labels);
        for a in 0..c.x.nrows() {
            let i = c.first + a;
            let row = || {
                let (idx, val) = c.x.row(a);
                (idx.to_vec(), val.to_vec())
            };
            match explicit {
                None => {
                    reservoir.offer(i, row);
                }
                Some(list) => {
                    if list.binary_search(&i).is_ok() {
                        explicit_found.push((i, row()));
                    }
                }
            }
        }
        report(progress, stage, c.first + c.x.nrows(), 0);
        Ok(())
    })?;
    if rows == 0 {
        return Err(source.empty_error());
    }
    if width == 0 {
        return Err(StreamingError::invalid(
            "n_features",
            0,
            format!("{} has no feature columns", source.path.display()),
        ));
    }
    counts.col_sq.resize(width, 0.0);
    let items = match explicit {
        None => reservoir.into_sorted(),
        Some(list) => {
            if explicit_found.len() != list.len() {
                let missing = list.iter().copied().find(|&i| i >= rows).unwrap_or(rows);
                return Err(StreamingError::LandmarkOutOfRange {
                    what: "row",
                    index: missing,
                    len: rows,
                });
            }
            explicit_found
        }
    };
    let mut indptr = Vec::with_capacity(items.len() + 1);
    indptr.push(0);
    let (mut indices, mut data) = (Vec::new(), Vec::new());
    let mut landmark_rows = Vec::with_capacity(items.len());
    for (i, (idx, val)) in items {
        landmark_rows.push(i);
        indices.extend_from_slice(&idx);
        data.extend_from_slice(&val);
        indptr.push(indices.len());
    }
    let landmark_x = CsrMatrix::try_new(landmark_rows.len(), width, indptr, indices, data)?;
    Ok(Scan {
        summary: ScanSummary {
            rows,
            features: width,
            nnz: counts.nnz,
            label_counts: counts.labels,
        },
        landmark_rows,
        landmark_x,
        col_sq_norms: counts.col_sq,
    })
}
