//! The error type of this crate: every failure names the file and, where it applies, the line,
//! the byte offset or the values involved.
use std::path::PathBuf;

use thiserror::Error;

/// Everything that can go wrong while locating, verifying or parsing a dataset.
///
/// Library code never panics on a bad file: truncated, corrupt or unexpected input always ends
/// here, with the offending path and values.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum DatasetError {
    /// A file the loader needs does not exist.
    #[error("missing file {path}: {origin}")]
    MissingFile {
        /// The path that was looked for (without and with a `.bz2` suffix).
        path: PathBuf,
        /// Where the file comes from and how to obtain it.
        origin: String,
    },
    /// Reading a file failed for a reason other than its absence.
    #[error("I/O error on {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A committed file's sha256 differs from the one recorded in `data/MANIFEST.toml`.
    #[error("checksum mismatch for {path}: MANIFEST.toml expects sha256 {expected}, the file has {actual}")]
    ChecksumMismatch {
        /// The file.
        path: PathBuf,
        /// Hex sha256 recorded in the manifest.
        expected: String,
        /// Hex sha256 of the file on disk.
        actual: String,
    },
    /// A line of a text file could not be parsed.
    #[error("{path}:{line}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// 1-based line number (of the decompressed text for `.bz2` files).
        line: usize,
        /// What was wrong, with the offending text.
        message: String,
    },
    /// A binary file (MATLAB `.mat`) is malformed.
    #[error("{path}: malformed binary data at byte {offset}: {message}")]
    MalformedBinary {
        /// The file.
        path: PathBuf,
        /// Byte offset (in the decompressed stream for compressed elements) where parsing failed.
        offset: usize,
        /// What was wrong.
        message: String,
    },
    /// A binary file (`.npy`, `.npz`) cannot be decoded: truncated, corrupt, or an array of the
    /// wrong dimension.
    #[error("{path}: {message}")]
    Malformed {
        /// The file (for an array inside an archive: `archive.npz/name.npy`).
        path: PathBuf,
        /// What is wrong, with the decoder's words.
        message: String,
    },
    /// A file decodes, but its values cannot be used: non-finite, not an index, no data at all.
    #[error("{path}: {message}")]
    InvalidValue {
        /// The file.
        path: PathBuf,
        /// The offending value or what is missing.
        message: String,
    },
    /// The first data line of a text matrix read without a header is not numeric: probably a
    /// header line (read with [`TextOptions::header`](crate::TextOptions::header)).
    #[error("{path}:{line}: `{token}` is not a number (a header line? read the file with a header)")]
    UnexpectedHeader {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// The first field that is not a number.
        token: String,
    },
    /// The file is well formed but uses a feature this crate does not read.
    #[error("unsupported format in {path}: {message}")]
    UnsupportedFormat {
        /// The file.
        path: PathBuf,
        /// What is unsupported.
        message: String,
    },
    /// Two files (or two parts of one file) contradict each other, e.g. a label for an unknown node.
    #[error("inconsistent data in {path}: {message}")]
    Inconsistent {
        /// The file where the contradiction was detected.
        path: PathBuf,
        /// The contradiction.
        message: String,
    },
    /// The data folder or its manifest could not be found or read.
    #[error("data directory problem: {message}")]
    DataDir {
        /// What went wrong and which paths were searched.
        message: String,
    },
    /// `data/MANIFEST.toml` does not list a file that a loader asked for.
    #[error("{path} is not listed in {manifest}; regenerate the manifest or use DataRoot::shared")]
    NotInManifest {
        /// The requested path relative to the data folder.
        path: String,
        /// The manifest file.
        manifest: PathBuf,
    },
    /// A dataset name that the registry does not know.
    #[error("unknown dataset `{name}`; known datasets: {known}")]
    UnknownDataset {
        /// The name that was given.
        name: String,
        /// Comma-separated list of valid names.
        known: String,
    },
    /// A dataset was requested as the wrong kind (e.g. `cora` as a LIBSVM set).
    #[error("dataset `{dataset}` is a {actual} dataset, not a {requested} dataset")]
    WrongKind {
        /// The dataset's registry name.
        dataset: String,
        /// The kind that was requested.
        requested: &'static str,
        /// The dataset's actual kind.
        actual: &'static str,
    },
    /// An argument is out of its valid range (e.g. `chunk_rows = 0`).
    #[error("invalid argument {what}: {message}")]
    InvalidArgument {
        /// The argument.
        what: &'static str,
        /// Why it is invalid.
        message: String,
    },
    /// A sparse matrix could not be assembled from the parsed values.
    #[error("building a sparse matrix from {path}: {source}")]
    Matrix {
        /// The file the values came from.
        path: PathBuf,
        /// The linear-algebra error.
        #[source]
        source: ksvd_linalg::LinalgError,
    },
}

/// Result alias for this crate.
pub type Result<T> = std::result::Result<T, DatasetError>;

impl DatasetError {
    pub(crate) fn parse(path: &std::path::Path, line: usize, message: impl Into<String>) -> Self {
        Self::Parse {
            path: path.to_path_buf(),
            line,
            message: message.into(),
        }
    }

    pub(crate) fn io(path: &std::path::Path, source: std::io::Error) -> Self {
        Self::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    pub(crate) fn matrix(path: &std::path::Path, source: ksvd_linalg::LinalgError) -> Self {
        Self::Matrix {
            path: path.to_path_buf(),
            source,
        }
    }

    pub(crate) fn inconsistent(path: &std::path::Path, message: impl Into<String>) -> Self {
        Self::Inconsistent {
            path: path.to_path_buf(),
            message: message.into(),
        }
    }
}
