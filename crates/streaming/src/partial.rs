//! Mergeable, serialisable partial states of the streaming passes: the building blocks of a
//! distributed fit (Dask tree reductions, Spark `mapPartitions` + `treeAggregate`, Ray tasks).
//!
//! The training data is a list of LIBSVM files; file `f` holds rows `0..N_f` and the global row
//! id of its row `t` is `o_f + t`, `o_f = Σ_{g < f} N_g` (the rows of the files concatenated in
//! file-index order). Every pass maps files to a small state and merges states of disjoint sets
//! of files:
//!
//! | pass | per file | merge | driver |
//! |---|---|---|---|
//! | 1 | [`ScanPartial`]: counts, labels, `‖X[:, j]‖²`, bottom-`n` key sketch | add, keep the `n` smallest keys | [`LandmarkPlan::new`] |
//! | 2 (KSVD) | [`ColumnsPartial`]: `P_f = Σ_{i ∈ f} C_z[i, :]ᵀ X[i, J]` (`M × m`); rows mapped: the rows of `X[:, J]` | add; rows mapped: concatenate | [`LandmarkPlan::solve`] → [`FittedKsvd`] |
//! | — (KPCA) | | | [`LandmarkPlan::solve_kpca`] → [`FittedKpca`] |
//! | 3 | [`TrainPartial`]: column norms + `(r + 1)²` ridge statistics | add | [`Fitted::finish`] → [`TrainedKsvd`], [`TrainedKpca`] |
//! | 4 | [`ScorePartial`]: scores of the test rows, sorted per class | merge sorted lists | [`ScorePartial::auroc`] |
//!
//! **KPCA** (the paper's baseline: the symmetric Nyström method on `K_il = k(x_i, x_l)`) shares
//! pass 1: its landmark rows are the sketch's, and its solve ([`LandmarkPlan::solve_kpca`]) is
//! the code of [`crate::fit_kpca`] on them, so it needs no pass 2. Passes 3 and 4 are generic
//! over the model ([`PartialModel`]: [`Fitted`], [`Trained`]).
//!
//! **The sketch.** Row `(f, t)` gets the key `u = hash(seed, f, t)` (a 64-bit mixer, uniform);
//! the landmark rows are the `n` rows with the smallest keys. A file keeps its own `n` smallest
//! and a merge keeps the `n` smallest of the union, so the result is the same set for every
//! partitioning and merge order: an exact uniform sample without replacement (unlike the
//! reservoir of [`crate::fit_ksvd`], which depends on the order rows arrive in).
//!
//! **Exactness.** Integer parts (counts, labels, the sketch, the files seen, the column-norm
//! signs, the sorted score lists) merge exactly: associative and commutative. Floating-point
//! sums (`P`, `‖X[:, j]‖²`, the ridge statistics, the column norms) are associative only up to
//! rounding: regrouping a sum of `N` terms changes it by at most `N ε Σ|terms|` (`ε = 2⁻⁵²`),
//! so results agree with the single-pass fit to rounding level. The tests bound the sums by
//! `8 N ε` relative to their scale, and what lies behind the landmark SVD (embeddings, scores) by
//! `√ε`, since a perturbation `δ` of the block moves singular vectors by about `δ / gap`. With a
//! fixed reduction tree
//! (e.g. files merged pairwise in index order) the results are bit-for-bit reproducible.
//!
//! Every state serialises to one versioned JSON document ([`PartialState::to_bytes`],
//! [`PartialState::from_bytes`]: `{"format": "ksvd-streaming-partial", "kind": ..,
//! "format_version": 1, "state": ..}`), what pickling and network transfer carry. A wrong kind or
//! version or corrupt bytes is a [`StreamingError::PartialState`] naming the problem.
//!
//! **In-memory parts.** A partition may also be an in-memory block of rows ([`PartRows::Memory`],
//! e.g. a chunk of a `dask.array`) with its global row id `first_row`: its rows are keyed
//! `hash(seed, 0, first_row + t)`, the keys of the same rows in one file `0`, so a matrix cut
//! into blocks anywhere gives the same landmark rows as the matrix as one LIBSVM file.
//!
//! Supported: KSVD with the columns mapped (`N > M`, the large-scale case), `N = M`, or the
//! rows mapped (`M > N`: pass 2 gathers the sparse `X[:, J]`, `nnz(X[:, J])` entries, and the
//! driver forms `P = C_x X[:, J]` as [`crate::fit_ksvd`] does, so that sum is not regrouped);
//! KPCA; landmark rows by the sketch, landmark columns uniform or explicit.
use std::collections::BTreeMap;
use std::path::PathBuf;

use ksvd_linalg::CsrMatrix;
use ndarray::{Array1, Array2, Axis};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::classifier::{auroc, LabelRule, LinearClassifier, RidgeAccumulator};
use crate::embedding::{Embedding, NormAccumulator};
use crate::error::{Result, StreamingError};
use crate::kpca::{solve_kpca, StreamingKpca};
use crate::ksvd::{choose_cols, make_projection, project_gathered, solve_landmarks, ColumnAccumulator, LandmarkInputs};
use crate::ksvd::{CompatSide, StreamingKsvd};
use crate::params::{RowLandmarks, StreamingParams, ValidStreamingParams};
use crate::projection::SparseProjection;
use crate::scan::{ScanCounts, ScanSummary};
use crate::seeding::{domain, item_seed};
use crate::source::{for_each_chunk, Chunk, LibsvmSource};

/// The rows of one partition: part `file` of the training (or test) data.
#[derive(Debug, Clone, Copy)]
pub enum PartRows<'a> {
    /// A LIBSVM file; its row `t` has the sketch key `hash(seed, file, t)`.
    File(&'a LibsvmSource),
    /// An in-memory block (`x`: rows × features, `labels`: one per row) whose first row has the
    /// global row id `first_row` (the rows of the parts before it); its row `t` has the sketch
    /// key `hash(seed, 0, first_row + t)`. Read in one chunk.
    Memory {
        /// Rows × features.
        x: &'a CsrMatrix,
        /// Label of every row.
        labels: &'a [f64],
        /// Global row id of the block's first row.
        first_row: usize,
    },
}

impl PartRows<'_> {
    /// What error messages call the part.
    fn name(&self, file: usize) -> PathBuf {
        match self {
            PartRows::File(s) => s.path.clone(),
            PartRows::Memory { .. } => PathBuf::from(format!("in-memory part {file}")),
        }
    }

    /// `(file, row)` of the sketch key of the part's row `t`.
    fn key_of(&self, file: usize, t: usize) -> (usize, usize) {
        match self {
            PartRows::File(_) => (file, t),
            PartRows::Memory { first_row, .. } => (0, first_row + t),
        }
    }

    /// Calls `f` on the part's rows in chunks (a file's: [`for_each_chunk`]; a block: once,
    /// after checking its shape against `labels` and `n_features`). Returns `(rows, width)`.
    fn for_each(
        &self,
        chunk_rows: usize,
        n_features: Option<usize>,
        mut f: impl FnMut(Chunk) -> Result<()>,
    ) -> Result<(usize, usize)> {
        match *self {
            PartRows::File(source) => for_each_chunk(source, chunk_rows, n_features, f),
            PartRows::Memory { x, labels, .. } => {
                if labels.len() != x.nrows() {
                    return Err(StreamingError::invalid(
                        "labels",
                        labels.len(),
                        format!("need one label per row of the block ({} rows)", x.nrows()),
                    ));
                }
                if let Some(m) = n_features.filter(|&m| m != x.ncols()) {
                    return Err(StreamingError::invalid(
                        "features",
                        x.ncols(),
                        format!("the block has {} feature columns, the model {m}", x.ncols()),
                    ));
                }
                if labels.iter().any(|l| !l.is_finite()) {
                    return Err(StreamingError::NonFinite { what: "label" });
                }
                if x.nrows() > 0 {
                    f(Chunk {
                        first: 0,
                        x: x.clone(),
                        labels: labels.to_vec(),
                    })?;
                }
                Ok((x.nrows(), x.ncols()))
            }
        }
    }
}

/// The `format` field of every serialised partial state.
pub const PARTIAL_FORMAT: &str = "ksvd-streaming-partial";
/// The format version written by this crate (and the only one it reads).
pub const PARTIAL_FORMAT_VERSION: u64 = 1;

/// A serialisable state of the distributed passes: one versioned JSON document.
pub trait PartialState: Serialize + DeserializeOwned {
    /// The `kind` field (`"scan"`, `"plan"`, `"columns"`, `"fitted"`, `"fitted-kpca"`, `"train"`,
    /// `"trained"`, `"trained-kpca"`, `"score"`).
    const KIND: &'static str;

    /// Invariants checked after decoding (shapes, sortedness).
    fn check(&self) -> std::result::Result<(), String> {
        Ok(())
    }

    /// The state as bytes (see the module docs for the format).
    fn to_bytes(&self) -> Result<Vec<u8>> {
        #[derive(Serialize)]
        struct Out<'a, T> {
            format: &'static str,
            kind: &'static str,
            format_version: u64,
            state: &'a T,
        }
        serde_json::to_vec(&Out {
            format: PARTIAL_FORMAT,
            kind: Self::KIND,
            format_version: PARTIAL_FORMAT_VERSION,
            state: self,
        })
        .map_err(|e| state_error(Self::KIND, e.to_string()))
    }

    /// Reads a state written by [`PartialState::to_bytes`], checking format, kind, version and
    /// the state's invariants.
    fn from_bytes(bytes: &[u8]) -> Result<Self> {
        #[derive(Deserialize)]
        struct Header {
            format: Option<String>,
            kind: Option<String>,
            format_version: Option<u64>,
        }
        #[derive(Deserialize)]
        struct In<T> {
            state: T,
        }
        let kind = Self::KIND;
        let header: Header = serde_json::from_slice(bytes)
            .map_err(|e| state_error(kind, format!("not a {PARTIAL_FORMAT} document (corrupt bytes?): {e}")))?;
        if header.format.as_deref() != Some(PARTIAL_FORMAT) {
            return Err(state_error(
                kind,
                format!(
                    "format is {:?}, expected \"{PARTIAL_FORMAT}\"",
                    header.format.unwrap_or_default()
                ),
            ));
        }
        if header.kind.as_deref() != Some(kind) {
            return Err(state_error(
                kind,
                format!("the bytes hold a {:?} state", header.kind.unwrap_or_default()),
            ));
        }
        match header.format_version {
            Some(PARTIAL_FORMAT_VERSION) => {}
            Some(v) => {
                return Err(state_error(
                    kind,
                    format!("format version {v} is not supported (this build reads version {PARTIAL_FORMAT_VERSION})"),
                ))
            }
            None => return Err(state_error(kind, "missing format_version")),
        }
        let state = serde_json::from_slice::<In<Self>>(bytes)
            .map_err(|e| state_error(kind, format!("corrupt state: {e}")))?
            .state;
        state.check().map_err(|reason| state_error(kind, reason))?;
        Ok(state)
    }
}

fn state_error(kind: &'static str, reason: impl Into<String>) -> StreamingError {
    StreamingError::PartialState {
        kind,
        reason: reason.into(),
    }
}

/// Adds `other`'s files to `files`; a file in both was counted twice (a bug in the caller).
fn merge_files(kind: &'static str, files: &mut BTreeMap<usize, usize>, other: &BTreeMap<usize, usize>) -> Result<()> {
    if let Some(f) = other.keys().find(|f| files.contains_key(f)) {
        return Err(state_error(
            kind,
            format!("file {f} appears in both merged states (each file must be processed exactly once)"),
        ));
    }
    files.extend(other.iter().map(|(&f, &n)| (f, n)));
    Ok(())
}

/// The files of a later pass must be exactly those of the scan, with the same row counts.
fn check_files(kind: &'static str, want: &BTreeMap<usize, usize>, got: &BTreeMap<usize, usize>) -> Result<()> {
    if want == got {
        return Ok(());
    }
    let missing: Vec<usize> = want.keys().filter(|f| !got.contains_key(f)).copied().collect();
    let extra: Vec<usize> = got.keys().filter(|f| !want.contains_key(f)).copied().collect();
    Err(state_error(
        kind,
        format!("the merged state covers other files than the scan (missing {missing:?}, unknown {extra:?}, or row counts differ)"),
    ))
}

/// The training files of a fit: rows of every file and the first global row id of each.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct FileIndex {
    files: BTreeMap<usize, usize>,
    offsets: BTreeMap<usize, usize>,
}

impl FileIndex {
    fn new(files: &BTreeMap<usize, usize>) -> Self {
        let mut offsets = BTreeMap::new();
        let mut o = 0usize;
        for (&f, &n) in files {
            offsets.insert(f, o);
            o += n;
        }
        FileIndex {
            files: files.clone(),
            offsets,
        }
    }

    /// First global row id and row count of training file `file`.
    fn locate(&self, kind: &'static str, file: usize) -> Result<(usize, usize)> {
        match (self.offsets.get(&file), self.files.get(&file)) {
            (Some(&o), Some(&n)) => Ok((o, n)),
            _ => Err(state_error(kind, format!("file {file} was not part of the scan"))),
        }
    }
}

/// One landmark candidate of the sketch: its key, file, row in the file and entries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct SketchItem {
    key: u64,
    file: usize,
    row: usize,
    indices: Vec<usize>,
    values: Vec<f64>,
}

impl SketchItem {
    fn order(&self) -> (u64, usize, usize) {
        (self.key, self.file, self.row)
    }
}

/// Pass 1 of the distributed fit: row counts per file, stored entries, labels, `‖X[:, j]‖²`, and
/// the bottom-`n` key sketch of landmark rows (module docs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScanPartial {
    capacity: usize,
    seed: u64,
    /// Rows of every file seen.
    files: BTreeMap<usize, usize>,
    width: usize,
    counts: ScanCounts,
    /// At most `capacity` items, sorted by `(key, file, row)`.
    sketch: Vec<SketchItem>,
}

impl PartialState for ScanPartial {
    const KIND: &'static str = "scan";
    fn check(&self) -> std::result::Result<(), String> {
        if self.sketch.len() > self.capacity || self.sketch.windows(2).any(|w| w[0].order() >= w[1].order()) {
            return Err(format!(
                "the sketch holds {} items, unsorted or more than its capacity {}",
                self.sketch.len(),
                self.capacity
            ));
        }
        Ok(())
    }
}

/// The sketch key of row `row` of file `file`: `hash(seed, file, row)`.
fn sketch_key(seed: u64, file: usize, row: usize) -> u64 {
    item_seed(item_seed(seed, domain::SKETCH, file as u64), domain::SKETCH, row as u64)
}

impl ScanPartial {
    /// The empty state (the identity of [`ScanPartial::merge`]) for `params`: a sketch of
    /// `params.row_landmarks` rows keyed from `params.seed`.
    pub fn empty(params: &ValidStreamingParams) -> Result<Self> {
        if let RowLandmarks::Explicit(_) = params.rows {
            return Err(StreamingError::invalid(
                "rows",
                "explicit",
                "the distributed fit samples its landmark rows with the key sketch; explicit rows are not supported",
            ));
        }
        Ok(ScanPartial {
            capacity: params.row_landmarks,
            seed: params.seed,
            files: BTreeMap::new(),
            width: 0,
            counts: ScanCounts::default(),
            sketch: Vec::new(),
        })
    }

    /// Scans file number `file` (its position in the global list) of the training data.
    pub fn scan_file(params: &ValidStreamingParams, file: usize, source: &LibsvmSource) -> Result<Self> {
        Self::scan_part(params, file, PartRows::File(source))
    }

    /// Scans part number `file` of the training data (a file or an in-memory block).
    pub fn scan_part(params: &ValidStreamingParams, file: usize, part: PartRows<'_>) -> Result<Self> {
        let mut state = ScanPartial::empty(params)?;
        let mut threshold = u64::MAX;
        let (rows, width) = part.for_each(params.chunk_rows, None, |c| {
            state.counts.add_chunk(&c.x, &c.labels);
            for a in 0..c.x.nrows() {
                let row = c.first + a;
                let (kf, kr) = part.key_of(file, row);
                let key = sketch_key(state.seed, kf, kr);
                if key >= threshold {
                    continue;
                }
                let (idx, val) = c.x.row(a);
                state.sketch.push(SketchItem {
                    key,
                    file,
                    row,
                    indices: idx.to_vec(),
                    values: val.to_vec(),
                });
                if state.sketch.len() >= 2 * state.capacity.max(1) {
                    state.compact();
                    threshold = state.sketch.last().map_or(u64::MAX, |s| s.key);
                }
            }
            Ok(())
        })?;
        state.compact();
        state.counts.col_sq.resize(width.max(state.counts.col_sq.len()), 0.0);
        state.width = width;
        state.files.insert(file, rows);
        Ok(state)
    }

    /// Sorts the sketch and keeps the `capacity` smallest keys.
    fn compact(&mut self) {
        self.sketch.sort_unstable_by_key(SketchItem::order);
        self.sketch.truncate(self.capacity);
    }

    /// Merges the state of a disjoint set of files (exact for everything but the column norms).
    pub fn merge(&mut self, other: &ScanPartial) -> Result<()> {
        if (other.capacity, other.seed) != (self.capacity, self.seed) {
            return Err(state_error(
                Self::KIND,
                format!(
                    "cannot merge a sketch of {} rows with seed {} into one of {} rows with seed {}",
                    other.capacity, other.seed, self.capacity, self.seed
                ),
            ));
        }
        merge_files(Self::KIND, &mut self.files, &other.files)?;
        self.width = self.width.max(other.width);
        self.counts.merge(&other.counts);
        self.sketch.extend(other.sketch.iter().cloned());
        self.compact();
        Ok(())
    }

    /// Rows scanned so far.
    pub fn rows(&self) -> usize {
        self.files.values().sum()
    }

    /// Number of feature columns `M` (the largest width of the files).
    pub fn features(&self) -> usize {
        self.width
    }

    /// The sketch as `(file, row in file)`, by increasing key.
    pub fn sketch_rows(&self) -> Vec<(usize, usize)> {
        self.sketch.iter().map(|s| (s.file, s.row)).collect()
    }
}

/// The driver's state after pass 1: global row offsets, the landmark rows (global ids) and
/// columns, the compatibility side and its projection. Broadcast to pass 2.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LandmarkPlan {
    params: StreamingParams,
    index: FileIndex,
    summary: ScanSummary,
    side: CompatSide,
    projection: Option<SparseProjection>,
    col_landmarks: Vec<usize>,
    /// Global ids of the landmark rows, increasing.
    row_landmarks: Vec<usize>,
    /// Their entries (in the order of `row_landmarks`).
    landmark_entries: Vec<(Vec<usize>, Vec<f64>)>,
    col_sq_norms: Vec<f64>,
}

impl PartialState for LandmarkPlan {
    const KIND: &'static str = "plan";
    fn check(&self) -> std::result::Result<(), String> {
        if self.row_landmarks.len() != self.landmark_entries.len() || self.index.offsets.len() != self.index.files.len()
        {
            return Err("inconsistent landmark rows or file offsets".into());
        }
        Ok(())
    }
}

impl LandmarkPlan {
    /// The plan from the merged scan of every training file.
    pub fn new(scan: &ScanPartial, params: &ValidStreamingParams) -> Result<Self> {
        let (nn, mm) = (scan.rows(), scan.width);
        if nn == 0 || mm == 0 {
            return Err(StreamingError::EmptySource {
                path: PathBuf::from(format!("the {} training file(s)", scan.files.len())),
                selection: if nn == 0 {
                    String::new()
                } else {
                    " with features".into()
                },
            });
        }
        if (params.row_landmarks, params.seed) != (scan.capacity, scan.seed) {
            return Err(state_error(
                ScanPartial::KIND,
                "the scan was made with other landmark or seed parameters than the plan",
            ));
        }
        let side = CompatSide::of(nn, mm);
        let index = FileIndex::new(&scan.files);
        let mut rows = Vec::with_capacity(scan.sketch.len());
        for s in &scan.sketch {
            rows.push((index.locate(ScanPartial::KIND, s.file)?.0 + s.row, s));
        }
        rows.sort_unstable_by_key(|r| r.0);
        let mut col_sq_norms = scan.counts.col_sq.clone();
        col_sq_norms.resize(mm, 0.0);
        Ok(LandmarkPlan {
            params: (**params).clone(),
            index,
            summary: ScanSummary {
                rows: nn,
                features: mm,
                nnz: scan.counts.nnz,
                label_counts: scan.counts.labels.clone(),
            },
            side,
            projection: make_projection(side, nn, mm, params)?,
            col_landmarks: choose_cols(params, mm)?,
            row_landmarks: rows.iter().map(|r| r.0).collect(),
            landmark_entries: rows.iter().map(|r| (r.1.indices.clone(), r.1.values.clone())).collect(),
            col_sq_norms,
        })
    }

    /// Global ids of the landmark rows `I` (increasing).
    pub fn row_landmarks(&self) -> &[usize] {
        &self.row_landmarks
    }

    /// Landmark columns `J`.
    pub fn col_landmarks(&self) -> &[usize] {
        &self.col_landmarks
    }

    /// What the scan found (`N`, `M`, entries, labels).
    pub fn summary(&self) -> &ScanSummary {
        &self.summary
    }

    fn valid_params(&self) -> Result<ValidStreamingParams> {
        self.params.clone().check()
    }

    fn landmark_x(&self) -> Result<CsrMatrix> {
        let mut indptr = vec![0usize];
        let (mut indices, mut data) = (Vec::new(), Vec::new());
        for (idx, val) in &self.landmark_entries {
            indices.extend_from_slice(idx);
            data.extend_from_slice(val);
            indptr.push(indices.len());
        }
        Ok(CsrMatrix::try_new(
            self.landmark_entries.len(),
            self.summary.features,
            indptr,
            indices,
            data,
        )?)
    }

    /// The driver's landmark solve of KSVD (the same as [`crate::fit_ksvd`]'s) from the merged
    /// landmark columns of every training file. Rows mapped: `P = C_x X[:, J]` is formed here
    /// from the gathered `X[:, J]`, as [`crate::fit_ksvd`] forms it.
    pub fn solve(&self, columns: &ColumnsPartial) -> Result<FittedKsvd> {
        check_files(ColumnsPartial::KIND, &self.index.files, &columns.files)?;
        let params = self.valid_params()?;
        let landmark_x = self.landmark_x()?;
        let (mm, m) = (self.summary.features, self.col_landmarks.len());
        let p = match (&columns.columns, self.projection.as_ref()) {
            (LandmarkColumns::Summed(p), _) if self.side != CompatSide::Rows && p.dim() == (mm, m) => p.clone(),
            (LandmarkColumns::Gathered { m: mg, rows }, Some(pr)) if self.side == CompatSide::Rows && *mg == m => {
                let xj = gathered_matrix(rows, self.summary.rows, m)?;
                let mut p = Array2::zeros((mm, m));
                project_gathered(pr, &xj, &mut p);
                p
            }
            _ => {
                return Err(state_error(
                    ColumnsPartial::KIND,
                    format!(
                        "the landmark columns ({}) do not belong to this plan ({}, M = {mm}, m = {m})",
                        columns.describe(),
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
                row_landmarks: self.row_landmarks.clone(),
                landmark_x: &landmark_x,
                col_landmarks: self.col_landmarks.clone(),
                p,
                col_sq_norms: &self.col_sq_norms,
            },
            &params,
        )?;
        Fitted::new(model, &landmark_x, self.index.clone(), params.chunk_rows)
    }

    /// The driver's landmark solve of KPCA (the symmetric Nyström method of [`crate::fit_kpca`],
    /// the same code) on the landmark rows of the plan. KPCA needs no pass 2: its landmark
    /// block `K_LL` involves the landmark rows only.
    pub fn solve_kpca(&self) -> Result<FittedKpca> {
        let params = self.valid_params()?;
        let landmark_x = self.landmark_x()?;
        let model = solve_kpca(self.summary.clone(), self.row_landmarks.clone(), &landmark_x, &params)?;
        Fitted::new(model, &landmark_x, self.index.clone(), params.chunk_rows)
    }
}

/// `X[:, J]` (`N × m`, columns by position in `J`) from gathered rows sorted by global row id.
fn gathered_matrix(rows: &[GatheredRow], nn: usize, m: usize) -> Result<CsrMatrix> {
    let mut indptr = Vec::with_capacity(nn + 1);
    indptr.push(0usize);
    let (mut ind, mut dat) = (Vec::new(), Vec::new());
    for r in rows {
        if r.row >= nn {
            return Err(state_error(
                ColumnsPartial::KIND,
                format!("gathered row {} is out of range (N = {nn})", r.row),
            ));
        }
        indptr.resize(r.row + 1, ind.len());
        ind.extend_from_slice(&r.cols);
        dat.extend_from_slice(&r.vals);
        indptr.push(ind.len());
    }
    indptr.resize(nn + 1, ind.len());
    Ok(CsrMatrix::try_new(nn, m, indptr, ind, dat)?)
}

/// One training row's entries in the landmark columns (positions in `J`), by global row id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct GatheredRow {
    row: usize,
    cols: Vec<usize>,
    vals: Vec<f64>,
}

/// What pass 2 accumulates: `P` summed (columns mapped or square) or `X[:, J]` gathered (rows
/// mapped: `P = C_x X[:, J]` needs all of `X[:, J]` for every row of `C_x`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
enum LandmarkColumns {
    /// `P_f = Σ_{i ∈ f} C_z[i, :]ᵀ X[i, J]` (`M × m`).
    Summed(Array2<f64>),
    /// The nonzero rows of `X[:, J]` (`m` columns), sorted by global row id.
    Gathered { m: usize, rows: Vec<GatheredRow> },
}

/// Pass 2: the landmark columns of a set of files. Columns mapped or square (`N ≥ M`): the
/// partial `P_f` (`M × m`), merged by addition. Rows mapped (`M > N`): the rows' entries in
/// the landmark columns, `X[f, J]` (sparse, `nnz(X[:, J])` entries in all), merged by
/// concatenation in row order (exact).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ColumnsPartial {
    files: BTreeMap<usize, usize>,
    columns: LandmarkColumns,
}

impl PartialState for ColumnsPartial {
    const KIND: &'static str = "columns";
    fn check(&self) -> std::result::Result<(), String> {
        if let LandmarkColumns::Gathered { m, rows } = &self.columns {
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

impl ColumnsPartial {
    /// The zero state of `plan` (the identity of [`ColumnsPartial::merge`]).
    pub fn empty(plan: &LandmarkPlan) -> Self {
        let m = plan.col_landmarks.len();
        ColumnsPartial {
            files: BTreeMap::new(),
            columns: match plan.side {
                CompatSide::Rows => LandmarkColumns::Gathered { m, rows: Vec::new() },
                CompatSide::Cols | CompatSide::Square => {
                    LandmarkColumns::Summed(Array2::zeros((plan.summary.features, m)))
                }
            },
        }
    }

    /// Pass 2 over training file `file`: `P_f = Σ_{i ∈ f} C_z[i, :]ᵀ X[i, J]` over its global
    /// row ids `i` (rows mapped: its rows of `X[:, J]`).
    pub fn from_file(plan: &LandmarkPlan, file: usize, source: &LibsvmSource) -> Result<Self> {
        Self::from_part(plan, file, PartRows::File(source))
    }

    /// Pass 2 over part `file` (a file or an in-memory block).
    pub fn from_part(plan: &LandmarkPlan, file: usize, part: PartRows<'_>) -> Result<Self> {
        let (offset, expected) = plan.index.locate(Self::KIND, file)?;
        let mm = plan.summary.features;
        let acc = ColumnAccumulator::new(&plan.col_landmarks, mm);
        let mut state = ColumnsPartial::empty(plan);
        let mut buf = (Vec::new(), Vec::new());
        let changed = |got: usize| StreamingError::SourceChanged {
            path: part.name(file),
            expected,
            got,
        };
        let (rows, _) = part.for_each(plan.params.chunk_rows, Some(mm), |c| {
            let end = c.first + c.x.nrows();
            if end > expected {
                return Err(changed(end));
            }
            for a in 0..c.x.nrows() {
                let (idx, val) = c.x.row(a);
                let i = offset + c.first + a;
                match &mut state.columns {
                    LandmarkColumns::Summed(p) => acc.add_row(p, plan.projection.as_ref(), i, idx, val, &mut buf),
                    LandmarkColumns::Gathered { rows, .. } => {
                        let (mut cols, mut vals) = (Vec::new(), Vec::new());
                        acc.gather_row(idx, val, &mut cols, &mut vals);
                        if !cols.is_empty() {
                            rows.push(GatheredRow { row: i, cols, vals });
                        }
                    }
                }
            }
            Ok(())
        })?;
        if rows != expected {
            return Err(changed(rows));
        }
        state.files.insert(file, rows);
        Ok(state)
    }

    /// What the state holds, for error messages.
    fn describe(&self) -> String {
        match &self.columns {
            LandmarkColumns::Summed(p) => format!("P of shape {:?}", p.dim()),
            LandmarkColumns::Gathered { m, rows } => format!("X[:, J] gathered, {} rows x {m} columns", rows.len()),
        }
    }

    /// Adds the state of a disjoint set of files.
    pub fn merge(&mut self, other: &ColumnsPartial) -> Result<()> {
        let compatible = match (&self.columns, &other.columns) {
            (LandmarkColumns::Summed(a), LandmarkColumns::Summed(b)) => a.dim() == b.dim(),
            (LandmarkColumns::Gathered { m: a, .. }, LandmarkColumns::Gathered { m: b, .. }) => a == b,
            _ => false,
        };
        if !compatible {
            return Err(state_error(
                Self::KIND,
                format!("cannot merge {} into {}", other.describe(), self.describe()),
            ));
        }
        merge_files(Self::KIND, &mut self.files, &other.files)?;
        match (&mut self.columns, &other.columns) {
            (LandmarkColumns::Summed(a), LandmarkColumns::Summed(b)) => *a += b,
            (LandmarkColumns::Gathered { rows: a, .. }, LandmarkColumns::Gathered { rows: b, .. }) => {
                // Disjoint files have disjoint global row ids: a stable sort keeps the merge exact.
                a.extend(b.iter().cloned());
                a.sort_by_key(|r| r.row);
            }
            _ => {}
        }
        Ok(())
    }

    /// The accumulated `P` (`M × m`); `None` when rows are mapped (the state then holds the
    /// gathered `X[:, J]`, and `P = C_x X[:, J]` is formed by [`LandmarkPlan::solve`]).
    pub fn p(&self) -> Option<&Array2<f64>> {
        match &self.columns {
            LandmarkColumns::Summed(p) => Some(p),
            LandmarkColumns::Gathered { .. } => None,
        }
    }

    /// Stored entries of the gathered `X[:, J]` (rows mapped; 0 otherwise).
    pub fn gathered_nnz(&self) -> usize {
        match &self.columns {
            LandmarkColumns::Summed(_) => 0,
            LandmarkColumns::Gathered { rows, .. } => rows.iter().map(|r| r.cols.len()).sum(),
        }
    }
}

/// A model the distributed passes 3 and 4 train and score: [`StreamingKsvd`] (solved from the
/// plan and pass 2) or [`StreamingKpca`] (solved from the plan alone). Implemented by these two.
pub trait PartialModel: Embedding + Clone + Send + Serialize + DeserializeOwned {
    /// The `kind` of its [`Fitted`] state.
    const FITTED_KIND: &'static str;
    /// The `kind` of its [`Trained`] state.
    const TRAINED_KIND: &'static str;
    /// What the scan found (`N`, `M`, labels).
    fn scan_summary(&self) -> &ScanSummary;
    /// The landmark solve's spectrum, descending: KSVD's approximate singular values, KPCA's
    /// eigenvalues of `K_LL`.
    fn spectrum(&self) -> &Array1<f64>;
    /// The RBF bandwidth `γ`.
    fn bandwidth(&self) -> f64;
}

impl PartialModel for StreamingKsvd {
    const FITTED_KIND: &'static str = "fitted";
    const TRAINED_KIND: &'static str = "trained";
    fn scan_summary(&self) -> &ScanSummary {
        self.summary()
    }
    fn spectrum(&self) -> &Array1<f64> {
        self.singular_values()
    }
    fn bandwidth(&self) -> f64 {
        self.gamma()
    }
}

impl PartialModel for StreamingKpca {
    const FITTED_KIND: &'static str = "fitted-kpca";
    const TRAINED_KIND: &'static str = "trained-kpca";
    fn scan_summary(&self) -> &ScanSummary {
        self.summary()
    }
    fn spectrum(&self) -> &Array1<f64> {
        self.eigenvalues()
    }
    fn bandwidth(&self) -> f64 {
        self.gamma()
    }
}

/// The fitted model (the landmark solve) as the driver broadcasts it to pass 3.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Fitted<E> {
    model: E,
    index: FileIndex,
    chunk_rows: usize,
    /// Shift of the ridge statistics: the mean raw embedding of the landmark rows.
    shift: Array1<f64>,
}

/// The KSVD landmark solve ([`LandmarkPlan::solve`]).
pub type FittedKsvd = Fitted<StreamingKsvd>;
/// The KPCA landmark solve ([`LandmarkPlan::solve_kpca`]).
pub type FittedKpca = Fitted<StreamingKpca>;

impl<E: PartialModel> PartialState for Fitted<E> {
    const KIND: &'static str = E::FITTED_KIND;
    fn check(&self) -> std::result::Result<(), String> {
        if self.shift.len() != self.model.rank() {
            return Err(format!(
                "shift of length {} for rank {}",
                self.shift.len(),
                self.model.rank()
            ));
        }
        Ok(())
    }
}

impl<E: PartialModel> Fitted<E> {
    /// Wraps the driver's solve. The ridge statistics of every partition are shifted by the
    /// mean raw embedding of the landmark rows (known here), so that they merge by addition.
    fn new(model: E, landmark_x: &CsrMatrix, index: FileIndex, chunk_rows: usize) -> Result<Self> {
        let raw = model.embed_raw(landmark_x)?;
        let shift = raw.mean_axis(Axis(0)).unwrap_or_else(|| Array1::zeros(raw.ncols()));
        Ok(Fitted {
            model,
            index,
            chunk_rows,
            shift,
        })
    }

    /// The landmark solve (before the column normalisation of pass 3).
    pub fn model(&self) -> &E {
        &self.model
    }

    /// The positive label: `positive`, or the larger of exactly two training labels.
    pub fn label_rule(&self, positive: Option<f64>) -> Result<LabelRule> {
        LabelRule::from_counts(
            &PathBuf::from(format!("the {} training file(s)", self.index.files.len())),
            &self.model.scan_summary().label_counts,
            positive,
        )
    }

    /// The zero state of pass 3.
    pub fn empty_train(&self) -> TrainPartial {
        let r = self.model.rank();
        TrainPartial {
            files: BTreeMap::new(),
            norms: NormAccumulator::new(r),
            ridge: RidgeAccumulator::with_shift(self.shift.clone()),
            positives: 0,
        }
    }

    /// Pass 3 over training file `file`: raw embeddings, their column norms and signs, and the
    /// ridge statistics on `±1` targets (`labels`).
    pub fn train_file(&self, file: usize, source: &LibsvmSource, labels: LabelRule) -> Result<TrainPartial> {
        self.train_part(file, PartRows::File(source), labels)
    }

    /// Pass 3 over part `file` (a file or an in-memory block).
    pub fn train_part(&self, file: usize, part: PartRows<'_>, labels: LabelRule) -> Result<TrainPartial> {
        let (offset, expected) = self.index.locate(TrainPartial::KIND, file)?;
        let mut state = self.empty_train();
        let (rows, _) = part.for_each(self.chunk_rows, Some(self.model.n_features()), |c| {
            let e = self.model.embed_raw(&c.x)?;
            let y: Vec<f64> = c.labels.iter().map(|&l| labels.target(l)).collect();
            state.positives += y.iter().filter(|&&t| t > 0.0).count();
            state.norms.add_from(e.view(), offset + c.first);
            state.ridge.add(e.view(), &y)
        })?;
        if rows != expected {
            return Err(StreamingError::SourceChanged {
                path: part.name(file),
                expected,
                got: rows,
            });
        }
        state.files.insert(file, rows);
        Ok(state)
    }

    /// The driver's classifier solve from the merged pass-3 state of every training file: the
    /// column normalisation of the model and the ridge classifier (`λ = ridge`) on normalised
    /// embeddings, as [`crate::train_pass`] computes them in one process.
    pub fn finish(&self, train: &TrainPartial, ridge: f64, labels: LabelRule) -> Result<Trained<E>> {
        check_files(TrainPartial::KIND, &self.index.files, &train.files)?;
        if train.norms.rank() != self.model.rank() {
            return Err(state_error(
                TrainPartial::KIND,
                format!(
                    "the statistics have rank {}, the model {}",
                    train.norms.rank(),
                    self.model.rank()
                ),
            ));
        }
        let normalization = train.norms.finish();
        let classifier = train.ridge.solve(ridge)?.for_scaled_features(&normalization.factors());
        let mut model = self.model.clone();
        model.set_normalization(normalization);
        Ok(Trained {
            model,
            classifier,
            positive: labels.positive,
            chunk_rows: self.chunk_rows,
        })
    }
}

/// Pass 3: column norms and ridge statistics of a set of training files, merged by addition.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TrainPartial {
    files: BTreeMap<usize, usize>,
    norms: NormAccumulator,
    ridge: RidgeAccumulator,
    positives: usize,
}

impl PartialState for TrainPartial {
    const KIND: &'static str = "train";
}

impl TrainPartial {
    /// Adds the state of a disjoint set of files.
    pub fn merge(&mut self, other: &TrainPartial) -> Result<()> {
        merge_files(Self::KIND, &mut self.files, &other.files)?;
        self.norms.merge(&other.norms)?;
        self.ridge.merge(&other.ridge)?;
        self.positives += other.positives;
        Ok(())
    }

    /// Training rows accumulated.
    pub fn rows(&self) -> usize {
        self.ridge.count()
    }

    /// Positive training rows accumulated.
    pub fn positives(&self) -> usize {
        self.positives
    }
}

/// The trained model: normalised embeddings (KSVD or KPCA) and the linear classifier on them.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Trained<E> {
    model: E,
    classifier: LinearClassifier,
    positive: f64,
    chunk_rows: usize,
}

/// Trained KSVD ([`FittedKsvd::finish`]).
pub type TrainedKsvd = Trained<StreamingKsvd>;
/// Trained KPCA ([`FittedKpca::finish`]).
pub type TrainedKpca = Trained<StreamingKpca>;

impl<E: PartialModel> PartialState for Trained<E> {
    const KIND: &'static str = E::TRAINED_KIND;
    fn check(&self) -> std::result::Result<(), String> {
        if self.model.normalization().is_none() || self.classifier.weights.len() != self.model.rank() {
            return Err("the model has no normalisation or the classifier the wrong dimension".into());
        }
        Ok(())
    }
}

impl<E: PartialModel> Trained<E> {
    /// The fitted model with its column normalisation.
    pub fn model(&self) -> &E {
        &self.model
    }

    /// The classifier on normalised embeddings.
    pub fn classifier(&self) -> &LinearClassifier {
        &self.classifier
    }

    /// Normalised embeddings of every row of `source` (`rows × r`, [`Embedding::embed`]).
    pub fn embed_file(&self, source: &LibsvmSource) -> Result<Array2<f64>> {
        let mut parts = Vec::new();
        for_each_chunk(source, self.chunk_rows, Some(self.model.n_features()), |c| {
            parts.push(self.model.embed(&c.x)?);
            Ok(())
        })?;
        stack(&parts, self.model.rank())
    }

    /// Pass 4 over test file `file`: the classifier's scores of its rows, sorted per class, and
    /// (when `keep_embeddings`) the normalised embeddings of its rows.
    pub fn score_file(
        &self,
        file: usize,
        source: &LibsvmSource,
        keep_embeddings: bool,
    ) -> Result<(ScorePartial, Option<Array2<f64>>)> {
        self.score_part(file, PartRows::File(source), keep_embeddings)
    }

    /// Pass 4 over test part `file` (a file or an in-memory block).
    pub fn score_part(
        &self,
        file: usize,
        part: PartRows<'_>,
        keep_embeddings: bool,
    ) -> Result<(ScorePartial, Option<Array2<f64>>)> {
        let labels = LabelRule {
            positive: self.positive,
        };
        let mut state = ScorePartial::default();
        let mut parts = Vec::new();
        let (rows, _) = part.for_each(self.chunk_rows, Some(self.model.n_features()), |c| {
            let e = self.model.embed(&c.x)?;
            let s = self.classifier.decision(e.view());
            for (&v, &l) in s.iter().zip(&c.labels) {
                if labels.target(l) > 0.0 {
                    state.positive.push(v);
                } else {
                    state.negative.push(v);
                }
            }
            if keep_embeddings {
                parts.push(e);
            }
            Ok(())
        })?;
        if state.positive.iter().chain(&state.negative).any(|s| !s.is_finite()) {
            return Err(StreamingError::NonFinite { what: "score" });
        }
        state.positive.sort_unstable_by(f64::total_cmp);
        state.negative.sort_unstable_by(f64::total_cmp);
        state.files.insert(file, rows);
        let emb = if keep_embeddings {
            Some(stack(&parts, self.model.rank())?)
        } else {
            None
        };
        Ok((state, emb))
    }
}

/// The chunks' embeddings stacked in row order (`0 × r` for none).
fn stack(parts: &[Array2<f64>], r: usize) -> Result<Array2<f64>> {
    if parts.is_empty() {
        return Ok(Array2::zeros((0, r)));
    }
    let views: Vec<_> = parts.iter().map(|p| p.view()).collect();
    ndarray::concatenate(Axis(0), &views)
        .map_err(|e| StreamingError::invalid("embeddings", e, "chunks of different widths"))
}

/// Pass 4: the test scores of a set of files, kept sorted per class (9 bytes per row at most);
/// merging two states merges the sorted lists, exactly.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ScorePartial {
    files: BTreeMap<usize, usize>,
    positive: Vec<f64>,
    negative: Vec<f64>,
}

impl PartialState for ScorePartial {
    const KIND: &'static str = "score";
    fn check(&self) -> std::result::Result<(), String> {
        let sorted = |v: &[f64]| v.windows(2).all(|w| w[0].total_cmp(&w[1]).is_le());
        if !sorted(&self.positive) || !sorted(&self.negative) {
            return Err("score lists are not sorted".into());
        }
        Ok(())
    }
}

fn merge_sorted(a: &[f64], b: &[f64]) -> Vec<f64> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if b[j].total_cmp(&a[i]).is_lt() {
            out.push(b[j]);
            j += 1;
        } else {
            out.push(a[i]);
            i += 1;
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

impl ScorePartial {
    /// Adds the scores of a disjoint set of test files.
    pub fn merge(&mut self, other: &ScorePartial) -> Result<()> {
        merge_files(Self::KIND, &mut self.files, &other.files)?;
        self.positive = merge_sorted(&self.positive, &other.positive);
        self.negative = merge_sorted(&self.negative, &other.negative);
        Ok(())
    }

    /// Test rows scored.
    pub fn rows(&self) -> usize {
        self.positive.len() + self.negative.len()
    }

    /// AUROC of the merged scores ([`crate::auroc`], ties counted as one half).
    pub fn auroc(&self) -> Result<f64> {
        let scores: Vec<f64> = self.positive.iter().chain(&self.negative).copied().collect();
        let labels: Vec<bool> = (0..scores.len()).map(|i| i < self.positive.len()).collect();
        auroc(&scores, &labels)
    }
}
