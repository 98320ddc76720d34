//! Inputs through the readers of `ksvd-datasets`, outputs written atomically once everything is
//! computed.
use crate::CliError;
use ksvd_datasets::{DatasetError, MatrixFormat, TextOptions};
use ksvd_kernels::Samples;
use ksvd_linalg::CsrMatrix;
use ndarray::{Array1, Array2};
use std::fs;
use std::path::{Path, PathBuf};

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

/// Reads samples, one per row, in the format of the file's extension
/// ([`MatrixFormat::of_path`]): `.npy` (dense, any numeric dtype; a conversion is said once on
/// stderr), `.npz` (scipy CSR), `.libsvm` / `.svm` (sparse), anything else CSV / whitespace text.
pub fn read_samples(path: &Path, opts: &ReadOptions) -> Result<Samples, CliError> {
    let samples = match MatrixFormat::of_path(path) {
        MatrixFormat::Npy => {
            let (a, dtype) = ksvd_datasets::read_npy_matrix(path)?;
            if dtype != ksvd_datasets::NpyDtype::Float64 && !opts.quiet {
                eprintln!("ksvd: note: {} holds {dtype}; converted to float64", path.display());
            }
            Samples::dense(a)
        }
        MatrixFormat::Npz => Samples::sparse(ksvd_datasets::read_npz_csr(path)?),
        MatrixFormat::Libsvm => {
            let data = ksvd_datasets::read_libsvm(path, &ksvd_datasets::LibsvmOptions::default())?;
            Samples::sparse(data.features)
        }
        MatrixFormat::Text => Samples::dense(ksvd_datasets::read_text_matrix(path, &opts.text())?),
    };
    samples.map_err(|e| CliError::Input {
        path: path.to_path_buf(),
        line: None,
        msg: e.to_string(),
    })
}

/// Reads a list of 0-based indices (`.npy` or text; see [`ksvd_datasets::read_index_list`]).
pub fn read_indices(path: &Path, opts: &ReadOptions) -> Result<Vec<usize>, CliError> {
    Ok(ksvd_datasets::read_index_list(path, &opts.text())?)
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
/// everything has been computed: a failed run leaves no partial file behind.
pub fn write_all(dir: &Path, files: &[(PathBuf, Vec<u8>)]) -> Result<(), CliError> {
    let output = |path: &Path, e: &dyn std::fmt::Display| CliError::Output {
        path: path.to_path_buf(),
        msg: e.to_string(),
    };
    fs::create_dir_all(dir).map_err(|e| output(dir, &e))?;
    for (p, b) in files {
        ksvd_datasets::write_atomic(p, b).map_err(|e| output(p, &e))?;
    }
    Ok(())
}
