//! Pass 2: the landmark rows and (KSVD) the landmark columns of a set of training parts
//! ([`LandmarksPartial`]).
//!
//! **Landmark rows: a bottom-`n` key sketch.** The row with global id `g` gets the key
//! `u = hash(seed, g)` (a 64-bit mixer, uniform); the landmark rows are the `n` rows with the
//! smallest keys. A part keeps its own `n` smallest and a merge keeps the `n` smallest of the
//! union, so the result is the same set for every partitioning and merge order: an exact uniform
//! sample without replacement that depends only on the seed and the rows' global ids, i.e. on
//! the concatenation of the parts, not on where it is cut. (Explicit rows,
//! [`crate::RowLandmarks::Explicit`], are kept by id instead.)
//!
//! **Landmark columns.** Columns mapped or square (`N ≥ M`): the partial
//! `P_f = Σ_{i ∈ f} C_z[i, :]ᵀ X[i, J]` (`M × m`), merged by addition. Rows mapped (`M > N`): the
//! rows' entries in the landmark columns, `X[f, J]` (sparse), merged by concatenation in row
//! order (exact); the driver forms `P = C_x X[:, J]` from them. KPCA needs no columns.
use std::collections::BTreeMap;

use ndarray::Array2;
use serde::{Deserialize, Serialize};

use crate::error::{Result, StreamingError};
use crate::ksvd::{ColumnAccumulator, CompatSide};
use crate::params::RowLandmarks;
use crate::progress::{report, ProgressFn};
use crate::seeding::{domain, item_seed};
use crate::solve::LandmarkPlan;
use crate::source::LibsvmSource;
use crate::state::{merge_files, state_error, PartRows, PartialState};

/// One landmark candidate: its key, global row id and entries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct SketchRow {
    pub(crate) key: u64,
    pub(crate) row: usize,
    pub(crate) indices: Vec<usize>,
    pub(crate) values: Vec<f64>,
}

impl SketchRow {
    fn order(&self) -> (u64, usize) {
        (self.key, self.row)
    }
}

/// The sketch key of the row with global id `row`: `hash(seed, row)`.
fn sketch_key(seed: u64, row: usize) -> u64 {
    item_seed(seed, domain::SKETCH, row as u64)
}

/// The landmark rows the key sketch keeps among `rows` rows (global ids `0..rows`): the `n`
/// smallest keys `hash(seed, row)` (ties by row id), increasing; all rows when `n >= rows`. What
/// the streaming passes' merged sketch gives ([`LandmarksPartial::row_landmarks`]), computed
/// from the row count alone (`O(rows)` hashes): an exact uniform sample without replacement,
/// independent of how the rows are cut into parts.
pub fn sketch_landmarks(seed: u64, rows: usize, n: usize) -> Vec<usize> {
    let mut keyed: Vec<(u64, usize)> = (0..rows).map(|row| (sketch_key(seed, row), row)).collect();
    if n < rows {
        keyed.select_nth_unstable(n);
        keyed.truncate(n);
    }
    let mut ids: Vec<usize> = keyed.into_iter().map(|(_, row)| row).collect();
    ids.sort_unstable();
    ids
}

/// One training row's entries in the landmark columns (positions in `J`), by global row id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct GatheredRow {
    pub(crate) row: usize,
    pub(crate) cols: Vec<usize>,
    pub(crate) vals: Vec<f64>,
}

/// What pass 2 accumulates for KSVD: `P` summed (columns mapped or square) or `X[:, J]`
/// gathered (rows mapped: `P = C_x X[:, J]` needs all of `X[:, J]` for every row of `C_x`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum LandmarkColumns {
    /// `P_f = Σ_{i ∈ f} C_z[i, :]ᵀ X[i, J]` (`M × m`).
    Summed(Array2<f64>),
    /// The nonzero rows of `X[:, J]` (`m` columns), sorted by global row id.
    Gathered { m: usize, rows: Vec<GatheredRow> },
}

/// Pass 2 of a fit over a set of training parts: the landmark rows found so far (at most
/// `capacity`, sorted by key) and, for KSVD, the landmark columns (module docs).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LandmarksPartial {
    pub(crate) files: BTreeMap<usize, usize>,
    /// Landmark rows kept (`n`, or the number of explicit rows).
    capacity: usize,
    /// Seed of the sketch keys (`None`: explicit rows, keyed by their id).
    seed: Option<u64>,
    /// At most `capacity` rows, sorted by `(key, row)`.
    pub(crate) rows: Vec<SketchRow>,
    pub(crate) columns: Option<LandmarkColumns>,
}

impl PartialState for LandmarksPartial {
    const KIND: &'static str = "landmarks";
    fn check(&self) -> std::result::Result<(), String> {
        if self.rows.len() > self.capacity || self.rows.windows(2).any(|w| w[0].order() >= w[1].order()) {
            return Err(format!(
                "the landmark rows are {} items, unsorted or more than the capacity {}",
                self.rows.len(),
                self.capacity
            ));
        }
        if let Some(LandmarkColumns::Gathered { m, rows }) = &self.columns {
            let bad_row = |r: &GatheredRow| {
                r.cols.len() != r.vals.len() || r.cols.iter().any(|&b| b >= *m) || r.vals.iter().any(|v| !v.is_finite())
            };
            if rows.windows(2).any(|w| w[0].row >= w[1].row) || rows.iter().any(bad_row) {
                return Err(format!(
                    "the gathered rows are unsorted, repeated, or hold entries outside the {m} landmark columns"
                ));
            }
        }
        Ok(())
    }
}

impl LandmarksPartial {
    /// The zero state of `plan` (the identity of [`LandmarksPartial::merge`]).
    pub fn empty(plan: &LandmarkPlan) -> Self {
        let (capacity, seed) = match &plan.params.rows {
            RowLandmarks::Sketch => (plan.params.row_landmarks, Some(plan.params.seed)),
            RowLandmarks::Explicit(v) => (v.len(), None),
        };
        LandmarksPartial {
            files: BTreeMap::new(),
            capacity,
            seed,
            rows: Vec::new(),
            columns: plan.columns_needed().then(|| {
                let m = plan.col_landmarks.len();
                match plan.side {
                    CompatSide::Rows => LandmarkColumns::Gathered { m, rows: Vec::new() },
                    CompatSide::Cols | CompatSide::Square => {
                        LandmarkColumns::Summed(Array2::zeros((plan.summary.features, m)))
                    }
                }
            }),
        }
    }

    /// Pass 2 over training file `file` (its landmark rows, and for KSVD its `P_f` or rows of
    /// `X[:, J]`).
    pub fn from_file(plan: &LandmarkPlan, file: usize, source: &LibsvmSource) -> Result<Self> {
        Self::from_part(plan, file, PartRows::File(source))
    }

    /// Pass 2 over training part `part` (a file or an in-memory block).
    pub fn from_part(plan: &LandmarkPlan, part: usize, rows: PartRows<'_>) -> Result<Self> {
        Self::from_part_reporting(plan, part, rows, &mut |_| {})
    }

    /// [`LandmarksPartial::from_part`], reporting rows done (stage `"landmarks"`).
    pub(crate) fn from_part_reporting(
        plan: &LandmarkPlan,
        part: usize,
        rows: PartRows<'_>,
        progress: &mut ProgressFn<'_>,
    ) -> Result<Self> {
        let (offset, expected) = plan.index.locate(Self::KIND, part)?;
        let mm = plan.summary.features;
        let acc = ColumnAccumulator::new(&plan.col_landmarks, mm);
        let explicit = match &plan.params.rows {
            RowLandmarks::Explicit(v) => Some(v.as_slice()),
            RowLandmarks::Sketch => None,
        };
        let mut state = LandmarksPartial::empty(plan);
        let mut threshold = u64::MAX;
        let mut buf = (Vec::new(), Vec::new());
        let changed = |got: usize| StreamingError::SourceChanged {
            path: rows.name(part),
            expected,
            got,
        };
        let (n, _) = rows.for_each(plan.params.chunk_rows, Some(mm), |c| {
            let end = c.first + c.x.nrows();
            if end > expected {
                return Err(changed(end));
            }
            for a in 0..c.x.nrows() {
                let (idx, val) = c.x.row(a);
                let g = offset + c.first + a;
                let key = match (explicit, state.seed) {
                    (Some(list), _) => list.binary_search(&g).ok().map(|_| g as u64),
                    (None, Some(seed)) => Some(sketch_key(seed, g)).filter(|&k| k < threshold),
                    (None, None) => None,
                };
                if let Some(key) = key {
                    state.rows.push(SketchRow {
                        key,
                        row: g,
                        indices: idx.to_vec(),
                        values: val.to_vec(),
                    });
                    if state.rows.len() >= 2 * state.capacity.max(1) {
                        state.compact();
                        threshold = state.rows.last().map_or(u64::MAX, |s| s.key);
                    }
                }
                match &mut state.columns {
                    Some(LandmarkColumns::Summed(p)) => acc.add_row(p, plan.projection.as_ref(), g, idx, val, &mut buf),
                    Some(LandmarkColumns::Gathered { rows, .. }) => {
                        let (mut cols, mut vals) = (Vec::new(), Vec::new());
                        acc.gather_row(idx, val, &mut cols, &mut vals);
                        if !cols.is_empty() {
                            rows.push(GatheredRow { row: g, cols, vals });
                        }
                    }
                    None => {}
                }
            }
            report(progress, "landmarks", end, expected);
            Ok(())
        })?;
        if n != expected {
            return Err(changed(n));
        }
        state.compact();
        state.files.insert(part, n);
        Ok(state)
    }

    /// Sorts the rows by key and keeps the `capacity` smallest.
    fn compact(&mut self) {
        self.rows.sort_unstable_by_key(SketchRow::order);
        self.rows.truncate(self.capacity);
    }

    /// What the state holds, for error messages.
    pub(crate) fn describe(&self) -> String {
        let rows = format!("{} landmark rows", self.rows.len());
        match &self.columns {
            None => rows,
            Some(LandmarkColumns::Summed(p)) => format!("{rows}, P of shape {:?}", p.dim()),
            Some(LandmarkColumns::Gathered { m, rows: g }) => {
                format!("{rows}, X[:, J] gathered ({} rows x {m} columns)", g.len())
            }
        }
    }

    /// Adds the state of a disjoint set of parts (exact for the rows and gathered columns, to
    /// rounding for `P`).
    pub fn merge(&mut self, other: &LandmarksPartial) -> Result<()> {
        let columns_fit = match (&self.columns, &other.columns) {
            (None, None) => true,
            (Some(LandmarkColumns::Summed(a)), Some(LandmarkColumns::Summed(b))) => a.dim() == b.dim(),
            (Some(LandmarkColumns::Gathered { m: a, .. }), Some(LandmarkColumns::Gathered { m: b, .. })) => a == b,
            _ => false,
        };
        if !columns_fit || (self.capacity, self.seed) != (other.capacity, other.seed) {
            return Err(state_error(
                Self::KIND,
                format!(
                    "cannot merge {} ({} kept, seed {:?}) into {} ({} kept, seed {:?}): states of different plans",
                    other.describe(),
                    other.capacity,
                    other.seed,
                    self.describe(),
                    self.capacity,
                    self.seed
                ),
            ));
        }
        merge_files(Self::KIND, &mut self.files, &other.files)?;
        self.rows.extend(other.rows.iter().cloned());
        self.compact();
        match (&mut self.columns, &other.columns) {
            (Some(LandmarkColumns::Summed(a)), Some(LandmarkColumns::Summed(b))) => *a += b,
            (Some(LandmarkColumns::Gathered { rows: a, .. }), Some(LandmarkColumns::Gathered { rows: b, .. })) => {
                // Disjoint parts have disjoint global row ids: a stable sort keeps the merge exact.
                a.extend(b.iter().cloned());
                a.sort_by_key(|r| r.row);
            }
            _ => {}
        }
        Ok(())
    }

    /// Global ids of the landmark rows kept so far, increasing.
    pub fn row_landmarks(&self) -> Vec<usize> {
        let mut ids: Vec<usize> = self.rows.iter().map(|r| r.row).collect();
        ids.sort_unstable();
        ids
    }

    /// Whether the state holds landmark columns (KSVD; not KPCA).
    pub fn has_columns(&self) -> bool {
        self.columns.is_some()
    }

    /// The accumulated `P` (`M × m`); `None` for KPCA and when rows are mapped (the state then
    /// holds the gathered `X[:, J]`, and `P = C_x X[:, J]` is formed by
    /// [`LandmarkPlan::solve_ksvd`]).
    pub fn p(&self) -> Option<&Array2<f64>> {
        match &self.columns {
            Some(LandmarkColumns::Summed(p)) => Some(p),
            _ => None,
        }
    }

    /// Stored entries of the gathered `X[:, J]` (rows mapped; 0 otherwise).
    pub fn gathered_nnz(&self) -> usize {
        match &self.columns {
            Some(LandmarkColumns::Gathered { rows, .. }) => rows.iter().map(|r| r.cols.len()).sum(),
            _ => 0,
        }
    }
}
