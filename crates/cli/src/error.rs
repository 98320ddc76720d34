//! The errors of the `ksvd` command and the one mapping from an error to the exit status of the
//! conventions (docs/conventions.md, `exit_statuses.txt`).
use ksvd::KsvdError;
use ksvd_datasets::DatasetError;
use ksvd_kernels::KernelError;
use ksvd_linalg::LinalgError;
use ksvd_nystrom::NystromError;
use ksvd_solvers::SolverError;
use std::path::PathBuf;

/// The exit statuses of the `ksvd` command (the codes of BSD's `sysexits.h` where one fits).
/// [`CliError::exit_status`] maps every error to one of them; clap's own usage errors exit
/// with [`ExitStatus::Usage`] too.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ExitStatus {
    /// 0: success.
    Success,
    /// 2: usage: an unknown flag, a missing or conflicting option, an option's value out of
    /// range.
    Usage,
    /// 65 (`EX_DATAERR`): bad input data: a malformed file, NaN, a wrong shape, a rank beyond
    /// the matrix, a tampered model file or one of another format.
    Data,
    /// 70 (`EX_SOFTWARE`): the computation did not converge or failed (a solver error).
    Computation,
    /// 74 (`EX_IOERR`): a file cannot be read or written.
    Io,
}

impl ExitStatus {
    /// Every status, in the order `ksvd --help` lists them.
    pub const ALL: &'static [ExitStatus] = &[
        ExitStatus::Success,
        ExitStatus::Usage,
        ExitStatus::Data,
        ExitStatus::Io,
        ExitStatus::Computation,
    ];

    /// The process's exit code.
    pub fn code(self) -> u8 {
        match self {
            ExitStatus::Success => 0,
            ExitStatus::Usage => 2,
            ExitStatus::Data => 65,
            ExitStatus::Computation => 70,
            ExitStatus::Io => 74,
        }
    }
}

/// Errors of the command-line tool: one line on stderr (`ksvd: error: …`) and the exit status
/// of [`CliError::exit_status`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CliError {
    /// Inconsistent options (status 2).
    #[error("{0}")]
    Usage(String),
    /// The options gave parameters the core rejects before looking at any data, e.g. a negative
    /// bandwidth or a tolerance outside (0, 1) (status 2; a landmark list read from a file that
    /// repeats an index or is shorter than the rank: 65).
    #[error(transparent)]
    Parameter(KsvdError),
    /// An input file is malformed or does not fit the model (status 65).
    #[error("{}{}: {msg}", path.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
    Input {
        /// The file.
        path: PathBuf,
        /// 1-based line, when known.
        line: Option<usize>,
        /// What is wrong.
        msg: String,
    },
    /// A reader of `ksvd-datasets` rejected an input file, naming the file and line (status 74
    /// when the file is missing or cannot be read, 65 otherwise).
    #[error(transparent)]
    Dataset(DatasetError),
    /// An input could not be read (status 74).
    #[error("cannot read {}: {msg}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        msg: String,
    },
    /// A model file was refused: not a model document, another format or version, a payload
    /// that does not match its checksum or violates an invariant (status 65); or it could not
    /// be read (74).
    #[error("{}: {source}", path.display())]
    Model {
        /// The model file.
        path: PathBuf,
        /// The core's error.
        source: KsvdError,
    },
    /// A model file of the streaming fit (`ksvd-stream run --out`, `ksvd.dask.fit(out_dir=)`)
    /// was refused: changed, truncated, another format or version (status 65).
    #[error("{}: model file refused: {source}", path.display())]
    StreamingModel {
        /// The model file.
        path: PathBuf,
        /// The streaming crate's error.
        source: ksvd_streaming::StreamingError,
    },
    /// An output could not be written (status 74).
    #[error("cannot write {}: {msg}", path.display())]
    Output {
        /// The file.
        path: PathBuf,
        /// Why.
        msg: String,
    },
    /// The fit or a projection failed: status 65 when the core rejected the data (a rank
    /// beyond the matrix, shapes, non-finite values, landmark indices out of range), 70 when a
    /// solver failed or did not converge.
    #[error(transparent)]
    Ksvd(#[from] KsvdError),
    /// The samples of a graph could not be built (status 65).
    #[error(transparent)]
    Kernel(#[from] KernelError),
}

impl CliError {
    /// The exit status of this error (the table of docs/conventions.md and `ksvd --help`).
    pub fn exit_status(&self) -> ExitStatus {
        match self {
            CliError::Usage(_) => ExitStatus::Usage,
            CliError::Parameter(KsvdError::InvalidParameter {
                name: "landmark rows" | "landmark cols",
                ..
            }) => ExitStatus::Data,
            CliError::Parameter(_) => ExitStatus::Usage,
            CliError::Input { .. } | CliError::Kernel(_) | CliError::StreamingModel { .. } => ExitStatus::Data,
            CliError::Dataset(e) => dataset_status(e),
            CliError::Read { .. } | CliError::Output { .. } => ExitStatus::Io,
            CliError::Model { source, .. } | CliError::Ksvd(source) => ksvd_status(source),
        }
    }
}

fn dataset_status(e: &DatasetError) -> ExitStatus {
    match e {
        DatasetError::MissingFile { .. } | DatasetError::Io { .. } => ExitStatus::Io,
        _ => ExitStatus::Data,
    }
}

/// The status of an error of the core: the data (65), reading a model (74), or the
/// computation (70).
fn ksvd_status(e: &KsvdError) -> ExitStatus {
    match e {
        // Raised while fitting or projecting, these depend on the data: the bandwidth rule on
        // constant samples, landmark indices beyond the samples, kernel values of the wrong
        // width, an exact solve beyond the memory budget.
        KsvdError::InvalidParameter { .. } | KsvdError::Kernel(_) => ExitStatus::Data,
        KsvdError::Solver(e) => solver_status(e),
        KsvdError::Nystrom(e) => match e {
            NystromError::Solver(e) => solver_status(e),
            NystromError::Kernel(_) | NystromError::InvalidParameter { .. } => ExitStatus::Data,
            NystromError::Linalg(e) => linalg_status(e),
            _ => ExitStatus::Computation,
        },
        KsvdError::Linalg(e) => linalg_status(e),
        KsvdError::ModelFile(_) | KsvdError::CorruptModel { .. } => ExitStatus::Data,
        KsvdError::ModelIo { .. } => ExitStatus::Io,
        _ => ExitStatus::Computation,
    }
}

fn solver_status(e: &SolverError) -> ExitStatus {
    match e {
        SolverError::InvalidRank { .. } | SolverError::Empty { .. } | SolverError::ShapeMismatch { .. } => {
            ExitStatus::Data
        }
        SolverError::InvalidParameter { .. } => ExitStatus::Usage,
        SolverError::Linalg(e) => linalg_status(e),
        _ => ExitStatus::Computation,
    }
}

fn linalg_status(e: &LinalgError) -> ExitStatus {
    match e {
        LinalgError::NonFinite { .. }
        | LinalgError::Empty { .. }
        | LinalgError::ShapeMismatch { .. }
        | LinalgError::InvalidCsr(_)
        | LinalgError::IndexOutOfBounds { .. } => ExitStatus::Data,
        LinalgError::InvalidBudget { .. } => ExitStatus::Usage,
        _ => ExitStatus::Computation,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The codes of the conventions' table, and the core's errors where they belong.
    #[test]
    fn every_kind_of_failure_has_its_status() {
        let codes: Vec<u8> = ExitStatus::ALL.iter().map(|s| s.code()).collect();
        assert_eq!(codes, [0, 2, 65, 74, 70]);
        let rank = KsvdError::Solver(SolverError::InvalidRank {
            rank: 50,
            nrows: 30,
            ncols: 20,
        });
        assert_eq!(CliError::Ksvd(rank).exit_status(), ExitStatus::Data);
        let stalled = KsvdError::Solver(SolverError::NotConverged {
            solver: "block Lanczos",
            iterations: 3,
            residual: 1e-3,
            tol: 1e-8,
        });
        assert_eq!(CliError::Ksvd(stalled).exit_status(), ExitStatus::Computation);
        let missing = DatasetError::MissingFile {
            path: "x.csv".into(),
            origin: String::new(),
        };
        assert_eq!(CliError::Dataset(missing).exit_status(), ExitStatus::Io);
        let io = KsvdError::ModelIo { reason: String::new() };
        let path = PathBuf::from("model.json");
        assert_eq!(CliError::Model { path, source: io }.exit_status(), ExitStatus::Io);
        let bad_gamma = KsvdError::InvalidParameter {
            name: "rank",
            reason: String::new(),
        };
        assert_eq!(CliError::Parameter(bad_gamma).exit_status(), ExitStatus::Usage);
        let repeated = KsvdError::InvalidParameter {
            name: "landmark cols",
            reason: String::new(),
        };
        assert_eq!(CliError::Parameter(repeated).exit_status(), ExitStatus::Data);
    }
}
