//! LIBSVM files as a stream of row chunks (plain or `.bz2`), read on a background thread while
//! the previous chunk is processed, with an optional seeded train/test split.
use std::path::{Path, PathBuf};
use std::sync::mpsc::sync_channel;

use ksvd_datasets::{libsvm_chunks, LibsvmOptions};
use ksvd_linalg::CsrMatrix;
use serde::{Deserialize, Serialize};

use crate::error::{Result, StreamingError};
use crate::seeding::{domain, item_uniform};

/// Which rows of a file a [`LibsvmSource`] yields.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RowSelection {
    /// Every row.
    #[default]
    All,
    /// The training side of a seeded split: rows `t` (file order) with `u(seed, t) ≥ test_fraction`,
    /// where `u` is a hash of the row index uniform on `[0, 1)`. No state, no `O(N)` memory.
    SplitTrain {
        /// Expected fraction of rows held out.
        test_fraction: f64,
        /// Seed of the split.
        seed: u64,
    },
    /// The test side of the same split (`u(seed, t) < test_fraction`).
    SplitTest {
        /// Expected fraction of rows held out.
        test_fraction: f64,
        /// Seed of the split.
        seed: u64,
    },
}

impl RowSelection {
    /// Whether file row `t` is selected.
    #[inline]
    pub fn keeps(&self, t: usize) -> bool {
        match *self {
            RowSelection::All => true,
            RowSelection::SplitTrain { test_fraction, seed } => {
                item_uniform(seed, domain::SPLIT, t as u64) >= test_fraction
            }
            RowSelection::SplitTest { test_fraction, seed } => {
                item_uniform(seed, domain::SPLIT, t as u64) < test_fraction
            }
        }
    }

    fn describe(&self) -> String {
        match self {
            RowSelection::All => String::new(),
            RowSelection::SplitTrain { test_fraction, seed } => {
                format!(" in the training split (test fraction {test_fraction}, seed {seed})")
            }
            RowSelection::SplitTest { test_fraction, seed } => {
                format!(" in the test split (test fraction {test_fraction}, seed {seed})")
            }
        }
    }

    /// Checks the split: `test_fraction` must lie in `(0, 1)` (a typed error naming it otherwise).
    pub fn validate(&self) -> Result<()> {
        match *self {
            RowSelection::All => Ok(()),
            RowSelection::SplitTrain { test_fraction, .. } | RowSelection::SplitTest { test_fraction, .. } => {
                if test_fraction > 0.0 && test_fraction < 1.0 {
                    Ok(())
                } else {
                    Err(StreamingError::invalid(
                        "test_fraction",
                        test_fraction,
                        "must lie in (0, 1)",
                    ))
                }
            }
        }
    }
}

/// A LIBSVM file read in chunks: the data is never held in memory as a whole.
#[derive(Debug, Clone, PartialEq)]
pub struct LibsvmSource {
    /// The file (`.bz2` is decompressed on the fly).
    pub path: PathBuf,
    /// Number of feature columns `M`; `None`: the largest index in the file (found by an extra
    /// scan of the file).
    pub n_features: Option<usize>,
    /// Feature indices start at 0 instead of LIBSVM's 1.
    pub zero_based: bool,
    /// Which rows are used.
    pub selection: RowSelection,
    /// Read at most this many rows of the file (before the selection); `None`: all.
    pub max_rows: Option<usize>,
}

impl LibsvmSource {
    /// Every row of `path`.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        LibsvmSource {
            path: path.into(),
            n_features: None,
            zero_based: false,
            selection: RowSelection::All,
            max_rows: None,
        }
    }

    /// Fixes the number of feature columns.
    pub fn n_features(mut self, m: usize) -> Self {
        self.n_features = Some(m);
        self
    }

    /// Sets the row selection.
    pub fn selection(mut self, selection: RowSelection) -> Self {
        self.selection = selection;
        self
    }

    /// Reads at most `rows` rows of the file.
    pub fn max_rows(mut self, rows: Option<usize>) -> Self {
        self.max_rows = rows;
        self
    }

    /// Declares 0-based feature indices.
    pub fn zero_based(mut self, yes: bool) -> Self {
        self.zero_based = yes;
        self
    }

    pub(crate) fn empty_error(&self) -> StreamingError {
        StreamingError::EmptySource {
            path: self.path.clone(),
            selection: self.selection.describe(),
        }
    }
}

/// A chunk of selected rows.
#[derive(Debug, Clone)]
pub(crate) struct Chunk {
    /// Index (among the selected rows) of the chunk's first row.
    pub first: usize,
    /// Rows x features.
    pub x: CsrMatrix,
    /// Label of every row.
    pub labels: Vec<f64>,
}

fn options(source: &LibsvmSource, n_features: Option<usize>) -> LibsvmOptions {
    let mut o = LibsvmOptions::default().zero_based(source.zero_based);
    if let Some(m) = n_features.or(source.n_features) {
        o = o.n_features(m);
    }
    o
}

/// Streams the selected rows of `source` in chunks of at most `chunk_rows` file rows and calls
/// `f` on each, in file order. A background thread parses the next chunks (at most two ahead)
/// while `f` runs. Returns the number of selected rows and the number of feature columns.
pub(crate) fn for_each_chunk(
    source: &LibsvmSource,
    chunk_rows: usize,
    n_features: Option<usize>,
    mut f: impl FnMut(Chunk) -> Result<()>,
) -> Result<(usize, usize)> {
    source.selection.validate()?;
    if chunk_rows == 0 {
        return Err(StreamingError::invalid("chunk_rows", 0, "must be at least 1"));
    }
    let opts = options(source, n_features);
    let path: &Path = &source.path;
    let selection = source.selection;
    let max_rows = source.max_rows.unwrap_or(usize::MAX);
    // Opening (and, without a feature count, the width scan) happens here, so that a missing
    // file is reported before the thread starts.
    let chunks = libsvm_chunks(path, chunk_rows, &opts)?;
    let width = chunks.n_features();
    let (tx, rx) = sync_channel::<Result<Chunk>>(2);
    std::thread::scope(|scope| -> Result<(usize, usize)> {
        let reader = scope.spawn(move || {
            let mut selected = 0usize;
            for item in chunks {
                let chunk = match item {
                    Ok(c) => c,
                    Err(e) => {
                        let _ = tx.send(Err(e.into()));
                        return;
                    }
                };
                if chunk.first_row >= max_rows {
                    return;
                }
                let take = chunk.features.nrows().min(max_rows - chunk.first_row);
                let keep: Vec<usize> = (0..take).filter(|&a| selection.keeps(chunk.first_row + a)).collect();
                if keep.is_empty() {
                    continue;
                }
                let out = if keep.len() == chunk.features.nrows() {
                    Ok(Chunk {
                        first: selected,
                        x: chunk.features,
                        labels: chunk.labels,
                    })
                } else {
                    chunk
                        .features
                        .select_rows(&keep)
                        .map(|x| Chunk {
                            first: selected,
                            x,
                            labels: keep.iter().map(|&a| chunk.labels[a]).collect(),
                        })
                        .map_err(StreamingError::from)
                };
                selected += keep.len();
                let stop = out.is_err();
                if tx.send(out).is_err() || stop {
                    return;
                }
            }
        });
        let mut total = 0usize;
        let mut result = Ok(());
        for item in rx.iter() {
            match item.and_then(|c| {
                total = c.first + c.x.nrows();
                f(c)
            }) {
                Ok(()) => {}
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        // Dropping the receiver (end of scope of `rx` happens after join, so drop explicitly)
        // unblocks a reader waiting on a full channel.
        drop(rx);
        if reader.join().is_err() {
            return Err(StreamingError::ReaderThread {
                path: source.path.clone(),
            });
        }
        result.map(|()| (total, width))
    })
}
