//! Pass 1: what the training data holds. Per part: its row count, stored entries, labels and
//! squared column norms `‖X[:, j]‖²` ([`ScanPartial`]); merged by addition. The driver turns the
//! merged scan into a [`crate::LandmarkPlan`] (the global row offsets of the parts, `N`, `M`, the
//! landmark columns and the projection).
use std::collections::BTreeMap;

use ksvd_linalg::CsrMatrix;
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::params::ValidStreamingParams;
use crate::progress::{report, ProgressFn};
use crate::source::LibsvmSource;
use crate::state::{merge_files, PartRows, PartialState};

/// Distinct labels recorded by a scan before it stops listing new ones.
const MAX_LABELS: usize = 1000;

/// What the first pass learned about the training data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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

impl ScanSummary {
    /// Checks that `x` has the [`features`](Self::features) columns of the scanned data; errors:
    /// [`crate::StreamingError::FeatureMismatch`].
    pub(crate) fn check_features(&self, x: &CsrMatrix) -> Result<()> {
        if x.ncols() != self.features {
            return Err(crate::StreamingError::FeatureMismatch {
                expected: self.features,
                got: x.ncols(),
            });
        }
        Ok(())
    }
}

/// The additive part of a scan: stored entries, label counts and squared column norms. Partial
/// counts of disjoint row sets merge by addition ([`ScanCounts::merge`]): exactly for the
/// integers, up to the order of the floating-point additions for the norms.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
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

/// Pass 1 of a fit: row counts per part, stored entries, labels and `‖X[:, j]‖²`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ScanPartial {
    /// Rows of every part seen.
    pub(crate) files: BTreeMap<usize, usize>,
    pub(crate) width: usize,
    pub(crate) counts: ScanCounts,
}

impl PartialState for ScanPartial {
    const KIND: &'static str = "scan";
}

impl ScanPartial {
    /// The empty state (the identity of [`ScanPartial::merge`]).
    pub fn empty() -> Self {
        ScanPartial::default()
    }

    /// Scans training file number `file` (its position in the list of training parts).
    pub fn scan_file(params: &ValidStreamingParams, file: usize, source: &LibsvmSource) -> Result<Self> {
        Self::scan_part(params, file, PartRows::File(source))
    }

    /// Scans training part number `part` (a file or an in-memory block).
    pub fn scan_part(params: &ValidStreamingParams, part: usize, rows: PartRows<'_>) -> Result<Self> {
        Self::scan_reporting(params, part, rows, &mut |_| {})
    }

    /// [`ScanPartial::scan_part`], reporting rows done (stage `"scan"`).
    pub(crate) fn scan_reporting(
        params: &ValidStreamingParams,
        part: usize,
        rows: PartRows<'_>,
        progress: &mut ProgressFn<'_>,
    ) -> Result<Self> {
        let mut state = ScanPartial::empty();
        let (n, width) = rows.for_each(params.chunk_rows, None, |c| {
            state.counts.add_chunk(&c.x, &c.labels);
            report(progress, "scan", c.first + c.x.nrows(), 0);
            Ok(())
        })?;
        state.counts.col_sq.resize(width.max(state.counts.col_sq.len()), 0.0);
        state.width = width;
        state.files.insert(part, n);
        Ok(state)
    }

    /// Merges the state of a disjoint set of parts (exact but for the column norms' rounding).
    pub fn merge(&mut self, other: &ScanPartial) -> Result<()> {
        merge_files(Self::KIND, &mut self.files, &other.files)?;
        self.width = self.width.max(other.width);
        self.counts.merge(&other.counts);
        Ok(())
    }

    /// Rows scanned so far.
    pub fn rows(&self) -> usize {
        self.files.values().sum()
    }

    /// Number of feature columns `M` (the largest width of the parts).
    pub fn features(&self) -> usize {
        self.width
    }

    /// Rows of every part scanned, by part number.
    pub fn part_rows(&self) -> &BTreeMap<usize, usize> {
        &self.files
    }
}
