//! Inputs through the readers of `ksvd-datasets` (files, or standard input for `-`), outputs
//! written atomically once everything is computed (or to standard output for `--out -`).
use crate::CliError;
use ksvd_datasets::{DatasetError, MatrixFormat, TextOptions};
use ksvd_kernels::Samples;
use ksvd_linalg::CsrMatrix;
use ksvd_streaming::{DocumentError, ModelDocument};
use ndarray::{Array1, Array2};
use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// The path that stands for standard input (and, as `--out -`, standard output).
pub const STDIO: &str = "-";

/// Whether `path` is `-`: standard input (or output).
pub fn is_stdio(path: &Path) -> bool {
    path.as_os_str() == STDIO
}

/// The name standard input has in error messages.
fn stdin_name() -> &'static Path {
    Path::new("<stdin>")
}

/// How sample files are read.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReadOptions {
    /// CSV/text files start with one header line (skipped).
    pub header: bool,
    /// No notes on stderr (dtype conversions).
    pub quiet: bool,
}

impl ReadOptions {
    fn text(&self) -> TextOptions {
        TextOptions::default().header(self.header)
    }
}

impl From<DatasetError> for CliError {
    /// A reader's error, with the command's flag where the error suggests one.
    fn from(e: DatasetError) -> Self {
        match e {
            DatasetError::UnexpectedHeader { path, line, token } => CliError::Input {
                path,
                line: Some(line),
                msg: format!("`{token}` is not a number (a header line? pass --header)"),
            },
            e => CliError::Dataset(e),
        }
    }
}

/// Standard input can be read once: at most one of `inputs` (flag, path) may be `-`.
pub fn stdin_at_most_once(inputs: &[(&str, Option<&Path>)]) -> Result<(), CliError> {
    let from_stdin: Vec<&str> = inputs
        .iter()
        .filter(|(_, p)| p.is_some_and(is_stdio))
        .map(|(flag, _)| *flag)
        .collect();
    if from_stdin.len() > 1 {
        return Err(CliError::Usage(format!(
            "{} all read standard input (`-`); it can be read once: give files for all but one",
            from_stdin.join(" and ")
        )));
    }
    Ok(())
}

/// All of standard input.
fn read_stdin() -> Result<Vec<u8>, CliError> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .lock()
        .read_to_end(&mut bytes)
        .map_err(|e| CliError::Read {
            path: stdin_name().to_path_buf(),
            msg: e.to_string(),
        })?;
    Ok(bytes)
}

/// Reads samples, one per row, in the format of the file's extension
/// ([`MatrixFormat::of_path`]): `.npy` (dense, any numeric dtype; a conversion is said once on
/// stderr), `.npz` (scipy CSR), `.libsvm` / `.svm` (sparse), anything else CSV / whitespace text.
/// `-` reads standard input, told apart by its first bytes ([`MatrixFormat::sniff`]): `.npy`,
/// scipy `.npz`, else CSV / whitespace text (LIBSVM is not read from standard input).
pub fn read_samples(path: &Path, opts: &ReadOptions) -> Result<Samples, CliError> {
    let (name, samples) = if is_stdio(path) {
        let name = stdin_name();
        let bytes = read_stdin()?;
        let samples = match MatrixFormat::sniff(&bytes) {
            MatrixFormat::Npy => {
                let (a, dtype) = ksvd_datasets::read_npy_matrix_from(&bytes[..], name)?;
                note_dtype(name, dtype, opts);
                Samples::dense(a)
            }
            MatrixFormat::Npz => Samples::sparse(ksvd_datasets::read_npz_csr_from(&bytes[..], name)?),
            _ => Samples::dense(ksvd_datasets::read_text_matrix_from(
                std::io::Cursor::new(bytes),
                name,
                &opts.text(),
            )?),
        };
        (name, samples)
    } else {
        let samples = match MatrixFormat::of_path(path) {
            MatrixFormat::Npy => {
                let (a, dtype) = ksvd_datasets::read_npy_matrix(path)?;
                note_dtype(path, dtype, opts);
                Samples::dense(a)
            }
            MatrixFormat::Npz => Samples::sparse(ksvd_datasets::read_npz_csr(path)?),
            MatrixFormat::Libsvm => {
                let data = ksvd_datasets::read_libsvm(path, &ksvd_datasets::LibsvmOptions::default())?;
                Samples::sparse(data.features)
            }
            MatrixFormat::Text => Samples::dense(ksvd_datasets::read_text_matrix(path, &opts.text())?),
        };
        (path, samples)
    };
    samples.map_err(|e| CliError::Input {
        path: name.to_path_buf(),
        line: None,
        msg: e.to_string(),
    })
}

/// Says once on stderr that an `.npy` input was converted to float64.
fn note_dtype(name: &Path, dtype: ksvd_datasets::NpyDtype, opts: &ReadOptions) {
    if dtype != ksvd_datasets::NpyDtype::Float64 && !opts.quiet {
        eprintln!("ksvd: note: {} holds {dtype}; converted to float64", name.display());
    }
}

/// Reads a list of 0-based indices (`.npy` or text; see [`ksvd_datasets::read_index_list`]).
pub fn read_indices(path: &Path, opts: &ReadOptions) -> Result<Vec<usize>, CliError> {
    Ok(ksvd_datasets::read_index_list(path, &opts.text())?)
}

/// The model file of `path`: `DIR/model.json` for a directory written by `ksvd fit`, the path
/// itself otherwise.
pub fn model_file(path: &Path) -> PathBuf {
    if path.is_dir() {
        path.join("model.json")
    } else {
        path.to_path_buf()
    }
}

/// Loads a model (a model file, a directory written by `ksvd fit`, or `-` for standard input),
/// dispatching on the format its envelope names; the checksum is verified by the loader.
pub fn read_model(path: &Path) -> Result<ModelDocument, CliError> {
    let (file, bytes) = if is_stdio(path) {
        (stdin_name().to_path_buf(), read_stdin()?)
    } else {
        let file = model_file(path);
        if !file.exists() {
            return Err(CliError::Read {
                path: file,
                msg: "model file not found (run `ksvd fit --out DIR` first)".into(),
            });
        }
        let bytes = std::fs::read(&file).map_err(|e| CliError::Read {
            path: file.clone(),
            msg: e.to_string(),
        })?;
        (file, bytes)
    };
    ModelDocument::from_bytes(&bytes).map_err(|e| match e {
        DocumentError::Trained(source) => CliError::StreamingModel { path: file, source },
        DocumentError::Ksvd(source) => CliError::Model { path: file, source },
        other => CliError::Read {
            path: file,
            msg: other.to_string(),
        },
    })
}

/// Sparse samples padded with empty features to dimension `dim` (LIBSVM files only know their
/// largest index). Dense samples and larger dimensions are returned unchanged.
pub fn pad_dim(s: Samples, dim: usize) -> Samples {
    match s {
        Samples::Sparse(c) if c.ncols() < dim => {
            match CsrMatrix::try_new(
                c.nrows(),
                dim,
                c.indptr().to_vec(),
                c.indices().to_vec(),
                c.data().to_vec(),
            ) {
                Ok(p) => Samples::Sparse(p),
                Err(_) => Samples::Sparse(c),
            }
        }
        other => other,
    }
}

/// Which files to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// `.npy` only.
    Npy,
    /// `.csv` only.
    Csv,
    /// Both.
    Both,
}

/// The files of a matrix in `format`, as `(path, bytes)` (written later, atomically): CSV by
/// [`ksvd_datasets::csv_bytes`], `.npy` by [`ksvd_datasets::npy_bytes`].
pub fn matrix_files(
    dir: &Path,
    name: &str,
    a: &Array2<f64>,
    format: Format,
) -> Result<Vec<(PathBuf, Vec<u8>)>, CliError> {
    let mut out = Vec::new();
    if format != Format::Npy {
        out.push((dir.join(format!("{name}.csv")), ksvd_datasets::csv_bytes(a.view())));
    }
    if format != Format::Csv {
        out.push((dir.join(format!("{name}.npy")), ksvd_datasets::npy_bytes(a)?));
    }
    Ok(out)
}

/// The files of a vector in `format` (CSV: one value per line).
pub fn vector_files(
    dir: &Path,
    name: &str,
    v: &Array1<f64>,
    format: Format,
) -> Result<Vec<(PathBuf, Vec<u8>)>, CliError> {
    let mut out = Vec::new();
    if format != Format::Npy {
        let column = v.view().insert_axis(ndarray::Axis(1));
        out.push((dir.join(format!("{name}.csv")), ksvd_datasets::csv_bytes(column)));
    }
    if format != Format::Csv {
        out.push((dir.join(format!("{name}.npy")), ksvd_datasets::npy_bytes(v)?));
    }
    Ok(out)
}

/// Creates `dir` and writes every file atomically through [`ksvd_datasets::write_atomic`] (a
/// temporary file in the same directory, fsynced, then renamed over the target), after
/// everything has been computed: a failed run leaves no partial file behind. Each file is
/// written on its own thread: their fsyncs and renames wait on the disk, not on the CPU (a fit's
/// eleven files took 0.09 s one after the other). The first failure in `files`' order is reported.
pub fn write_all(dir: &Path, files: &[(PathBuf, Vec<u8>)]) -> Result<(), CliError> {
    let output = |path: &Path, e: &dyn std::fmt::Display| CliError::Output {
        path: path.to_path_buf(),
        msg: e.to_string(),
    };
    fs::create_dir_all(dir).map_err(|e| output(dir, &e))?;
    let results: Vec<Result<(), CliError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = files
            .iter()
            .map(|(p, b)| (p, scope.spawn(move || ksvd_datasets::write_atomic(p, b))))
            .collect();
        handles
            .into_iter()
            .map(|(p, h)| match h.join() {
                Ok(r) => r.map_err(|e| output(p, &e)),
                Err(_) => Err(output(p, &"the writing thread panicked")),
            })
            .collect()
    });
    results.into_iter().collect()
}

/// Writes `bytes` to standard output (and flushes it).
pub fn write_stdout(bytes: &[u8]) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    out.write_all(bytes)
        .and_then(|()| out.flush())
        .map_err(|e| CliError::Output {
            path: PathBuf::from("<stdout>"),
            msg: e.to_string(),
        })
}

/// Writes a matrix to `out`: the files `out/name.csv` and/or `out/name.npy` (`format`), or, for
/// `out` = `-`, standard output: CSV, or `.npy` bytes with `--format npy`.
pub fn write_matrix(out: &Path, name: &str, a: &Array2<f64>, format: Format) -> Result<(), CliError> {
    if is_stdio(out) {
        let bytes = match format {
            Format::Npy => ksvd_datasets::npy_bytes(a)?,
            Format::Csv | Format::Both => ksvd_datasets::csv_bytes(a.view()),
        };
        return write_stdout(&bytes);
    }
    write_all(out, &matrix_files(out, name, a, format)?)
}
