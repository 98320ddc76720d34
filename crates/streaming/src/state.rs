//! What every pass shares: the parts it maps over ([`PartRows`]), the document form of its
//! states ([`PartialState`], the workspace's one envelope), and the bookkeeping of which parts a
//! merged state covers.
//!
//! The training data is a list of parts (LIBSVM files or in-memory blocks of rows); part `f`
//! holds rows `0..N_f` and the global row id of its row `t` is `o_f + t`, `o_f = Σ_{g < f} N_g`
//! (the rows of the parts concatenated in part-index order). Pass 1 counts the rows of every part,
//! so from pass 2 on every part knows its offset ([`FileIndex`]).
use std::collections::BTreeMap;
use std::path::PathBuf;

use ksvd_datasets::envelope;
use ksvd_linalg::CsrMatrix;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::error::{Result, StreamingError};
use crate::source::{for_each_chunk, Chunk, LibsvmSource};

/// The rows of one part of the training (or test) data.
#[derive(Debug, Clone, Copy)]
pub enum PartRows<'a> {
    /// A LIBSVM file (its selected rows, in file order).
    File(&'a LibsvmSource),
    /// An in-memory block (`x`: rows × features, `labels`: one per row, e.g. a row chunk of a
    /// `dask.array`), read in one chunk.
    Memory {
        /// Rows × features.
        x: &'a CsrMatrix,
        /// Label of every row.
        labels: &'a [f64],
    },
}

impl PartRows<'_> {
    /// What error messages call the part.
    pub(crate) fn name(&self, part: usize) -> PathBuf {
        match self {
            PartRows::File(s) => s.path.clone(),
            PartRows::Memory { .. } => PathBuf::from(format!("in-memory part {part}")),
        }
    }

    /// Calls `f` on the part's rows in chunks (a file's: [`for_each_chunk`]; a block: once,
    /// after checking its shape against `labels` and `n_features`). Returns `(rows, width)`.
    pub(crate) fn for_each(
        &self,
        chunk_rows: usize,
        n_features: Option<usize>,
        mut f: impl FnMut(Chunk) -> Result<()>,
    ) -> Result<(usize, usize)> {
        match *self {
            PartRows::File(source) => for_each_chunk(source, chunk_rows, n_features, f),
            PartRows::Memory { x, labels } => {
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

/// The version of every partial-state format written by this crate (and the only one it reads).
/// Version 1 was the crate's own JSON envelope; version 2 is the workspace's
/// [`ksvd_datasets::envelope`] with the passes of this release (landmark rows keyed by global
/// row id in pass 2).
pub const PARTIAL_FORMAT_VERSION: u64 = 2;

/// What the envelope names as the writer of the states.
const WRITER: &str = concat!("ksvd-streaming ", env!("CARGO_PKG_VERSION"));

/// A serialisable state of the passes: one document of the workspace's envelope
/// ([`ksvd_datasets::envelope`]: versioned, checksummed JSON), format
/// `"ksvd-streaming-<kind>"`, version [`PARTIAL_FORMAT_VERSION`]. What pickling and network
/// transfer carry.
pub trait PartialState: Serialize + DeserializeOwned {
    /// The kind of state: `"scan"`, `"plan"`, `"landmarks"`, `"fitted-ksvd"`, `"fitted-kpca"`,
    /// `"train"`, `"trained-ksvd"`, `"trained-kpca"`, `"score"`.
    const KIND: &'static str;

    /// Invariants checked after decoding (shapes, sortedness).
    fn check(&self) -> std::result::Result<(), String> {
        Ok(())
    }

    /// The envelope's format name of this kind, `"ksvd-streaming-<kind>"`.
    fn format() -> String {
        format!("{}{}", crate::FORMAT_PREFIX, Self::KIND)
    }

    /// The state as one envelope document.
    fn to_bytes(&self) -> Result<Vec<u8>> {
        envelope::seal(&Self::format(), PARTIAL_FORMAT_VERSION, WRITER, self)
            .map_err(|e| state_error(Self::KIND, e.to_string()))
    }

    /// Reads a state written by [`PartialState::to_bytes`]: checks format, version and checksum
    /// (the envelope), then the state's invariants. Each failure is a
    /// [`StreamingError::PartialState`] naming the problem.
    fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let state: Self = envelope::open(bytes, &Self::format(), PARTIAL_FORMAT_VERSION)
            .map_err(|e| state_error(Self::KIND, e.to_string()))?;
        state.check().map_err(|reason| state_error(Self::KIND, reason))?;
        Ok(state)
    }
}

pub(crate) fn state_error(kind: &'static str, reason: impl Into<String>) -> StreamingError {
    StreamingError::PartialState {
        kind,
        reason: reason.into(),
    }
}

/// Adds `other`'s parts to `parts`; a part in both was counted twice (a bug in the caller).
pub(crate) fn merge_files(
    kind: &'static str,
    parts: &mut BTreeMap<usize, usize>,
    other: &BTreeMap<usize, usize>,
) -> Result<()> {
    if let Some(f) = other.keys().find(|f| parts.contains_key(f)) {
        return Err(state_error(
            kind,
            format!("part {f} appears in both merged states (each part must be processed exactly once)"),
        ));
    }
    parts.extend(other.iter().map(|(&f, &n)| (f, n)));
    Ok(())
}

/// The parts of a later pass must be exactly those of the scan, with the same row counts.
pub(crate) fn check_files(
    kind: &'static str,
    want: &BTreeMap<usize, usize>,
    got: &BTreeMap<usize, usize>,
) -> Result<()> {
    if want == got {
        return Ok(());
    }
    let missing: Vec<usize> = want.keys().filter(|f| !got.contains_key(f)).copied().collect();
    let extra: Vec<usize> = got.keys().filter(|f| !want.contains_key(f)).copied().collect();
    Err(state_error(
        kind,
        format!("the merged state covers other parts than the scan (missing {missing:?}, unknown {extra:?}, or row counts differ)"),
    ))
}

/// The training parts of a fit: rows of every part and the global row id of its first row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct FileIndex {
    pub(crate) files: BTreeMap<usize, usize>,
    offsets: BTreeMap<usize, usize>,
}

impl FileIndex {
    pub(crate) fn new(files: &BTreeMap<usize, usize>) -> Self {
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

    /// Whether the offsets belong to the row counts.
    pub(crate) fn is_consistent(&self) -> bool {
        *self == FileIndex::new(&self.files)
    }

    /// First global row id and row count of training part `part`.
    pub(crate) fn locate(&self, kind: &'static str, part: usize) -> Result<(usize, usize)> {
        match (self.offsets.get(&part), self.files.get(&part)) {
            (Some(&o), Some(&n)) => Ok((o, n)),
            _ => Err(state_error(kind, format!("part {part} was not part of the scan"))),
        }
    }

    /// What error messages call the training data.
    pub(crate) fn describe(&self) -> PathBuf {
        PathBuf::from(format!("the {} training part(s)", self.files.len()))
    }
}
