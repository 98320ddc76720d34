//! Matrices and index lists from files a user hands over (the `ksvd` command's inputs), and the
//! bytes of matrices written back.
//!
//! | format | reader | values |
//! |---|---|---|
//! | `.npy`, any float / integer / bool dtype | [`read_npy`], [`read_npy_matrix`] | converted to `f64`; the stored dtype is returned |
//! | CSV / whitespace / `;` text, `#` comments, optional header line | [`read_text_matrix`] | one sample per line |
//! | scipy CSR `.npz` (`scipy.sparse.save_npz`, stored or deflated) | [`read_npz_csr`] | duplicates summed |
//! | LIBSVM / svmlight | [`read_libsvm`](crate::read_libsvm) | labels kept apart |
//! | 0-based index lists (`.npy` or text) | [`read_index_list`] | `Vec<usize>` |
//!
//! [`MatrixFormat::of_path`] names the format of a file by its extension. Files ending in `.bz2`
//! are decompressed on the fly. A stream without a name (standard input) is told apart by its
//! first bytes ([`MatrixFormat::sniff`]: `.npy`, `.npz`, else text) and read by the `_from`
//! readers ([`read_npy_matrix_from`], [`read_npz_csr_from`], [`read_text_matrix_from`]), which
//! take any [`Read`] and a name for their errors. Every reader rejects what it cannot represent exactly
//! (non-finite values, ragged rows, fractional indices) with a [`DatasetError`] naming the file
//! and, for text, the line; nothing panics or allocates more than the file's size on a corrupt
//! header. [`npy_bytes`] and [`csv_bytes`] encode results (the `.npy` as float64, the CSV with
//! the shortest digits that round-trip, so both read back bit for bit).
use std::io::Read;
use std::path::Path;

use ksvd_linalg::CsrMatrix;
use ndarray::{Array, Array2, ArrayView, ArrayView2, Dimension, Ix1, Ix2};
use ndarray_npy::{ViewNpyError, ViewNpyExt, WriteNpyExt};

use crate::error::{DatasetError, Result};
use crate::io::{read_bytes, read_to_end, LineReader};

/// The file formats of a sample matrix, told apart by extension (case-insensitive; a trailing
/// `.bz2` is looked through).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatrixFormat {
    /// `.npy`: a dense 2-D array ([`read_npy_matrix`]).
    Npy,
    /// `.npz`: a scipy CSR matrix ([`read_npz_csr`]).
    Npz,
    /// `.libsvm`, `.svm`: sparse samples ([`read_libsvm`](crate::read_libsvm)).
    Libsvm,
    /// Anything else: CSV / whitespace text ([`read_text_matrix`]).
    Text,
}

impl MatrixFormat {
    /// The format of `path` by its extension.
    pub fn of_path(path: &Path) -> Self {
        let mut p = path.to_path_buf();
        if crate::io::is_bz2(&p) {
            p.set_extension("");
        }
        let ext = p
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase())
            .unwrap_or_default();
        match ext.as_str() {
            "npy" => MatrixFormat::Npy,
            "npz" => MatrixFormat::Npz,
            "libsvm" | "svm" => MatrixFormat::Libsvm,
            _ => MatrixFormat::Text,
        }
    }

    /// The format of a stream by its first bytes (standard input has no extension): `.npy`'s
    /// magic `\x93NUMPY` is [`MatrixFormat::Npy`], a zip archive's `PK\x03\x04` is
    /// [`MatrixFormat::Npz`], anything else [`MatrixFormat::Text`]. LIBSVM text is not told
    /// apart from CSV (it reads as text, and fails there), nor is a bzip2 stream decompressed.
    pub fn sniff(head: &[u8]) -> Self {
        if head.starts_with(b"\x93NUMPY") {
            MatrixFormat::Npy
        } else if head.starts_with(b"PK\x03\x04") {
            MatrixFormat::Npz
        } else {
            MatrixFormat::Text
        }
    }
}

/// The element type an `.npy` file stores (little-endian; every one is converted to `f64`,
/// exactly except for 64-bit integers beyond `2^53`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum NpyDtype {
    /// `<f8`.
    Float64,
    /// `<f4`.
    Float32,
    /// `<i8`.
    Int64,
    /// `<i4`.
    Int32,
    /// `<i2`.
    Int16,
    /// `|i1`.
    Int8,
    /// `<u8`.
    Uint64,
    /// `<u4`.
    Uint32,
    /// `<u2`.
    Uint16,
    /// `|u1`.
    Uint8,
    /// `|b1` (`false` = 0, `true` = 1).
    Bool,
}

impl NpyDtype {
    /// numpy's name of the dtype (`float64`, `int32`, `bool`, ...).
    pub fn name(self) -> &'static str {
        match self {
            NpyDtype::Float64 => "float64",
            NpyDtype::Float32 => "float32",
            NpyDtype::Int64 => "int64",
            NpyDtype::Int32 => "int32",
            NpyDtype::Int16 => "int16",
            NpyDtype::Int8 => "int8",
            NpyDtype::Uint64 => "uint64",
            NpyDtype::Uint32 => "uint32",
            NpyDtype::Uint16 => "uint16",
            NpyDtype::Uint8 => "uint8",
            NpyDtype::Bool => "bool",
        }
    }
}

impl std::fmt::Display for NpyDtype {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A copy of `bytes` whose `.npy` data section starts at an address aligned for every dtype, so
/// that `ndarray-npy` can check the header against the data without allocating (reading would
/// first allocate what a corrupt header claims).
fn aligned_copy(bytes: &[u8]) -> (Vec<u8>, usize) {
    // Magic (6 bytes), version (2), header length: u16 in version 1, u32 in versions 2 and 3.
    let data_start = match bytes.get(6) {
        Some(1) => bytes
            .get(8..10)
            .map(|b| 10 + usize::from(u16::from_le_bytes([b[0], b[1]]))),
        Some(_) => bytes
            .get(8..12)
            .map(|b| 12 + u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize),
        None => None,
    }
    .unwrap_or(0);
    let mut buf = vec![0u8; bytes.len() + 16];
    let shift = (buf.as_ptr() as usize).wrapping_add(data_start).wrapping_neg() % 8;
    buf[shift..shift + bytes.len()].copy_from_slice(bytes);
    (buf, shift)
}

/// Parses `.npy` bytes of any supported dtype as an `f64` array of dimension `D`; `path` names
/// the file in errors.
pub(crate) fn parse_npy<D: Dimension>(path: &Path, bytes: &[u8]) -> Result<(Array<f64, D>, NpyDtype)> {
    let (buf, shift) = aligned_copy(bytes);
    let data = &buf[shift..shift + bytes.len()];
    let ndim = D::NDIM.map_or_else(|| "n".to_string(), |n| n.to_string());
    let malformed = |e: ViewNpyError| DatasetError::Malformed {
        path: path.to_path_buf(),
        message: format!("not a {ndim}-D .npy array: {e}"),
    };
    let mut descriptor = None;
    macro_rules! try_dtype {
        ($t:ty, $dtype:expr, $convert:expr) => {
            match ArrayView::<$t, D>::view_npy(data) {
                Ok(a) => return Ok((a.mapv($convert), $dtype)),
                Err(ViewNpyError::WrongDescriptor(d)) => {
                    descriptor.get_or_insert(d);
                }
                Err(ViewNpyError::NonNativeEndian) => {
                    return Err(DatasetError::UnsupportedFormat {
                        path: path.to_path_buf(),
                        message: format!(
                            "big-endian {} data; save the array in little-endian byte order",
                            $dtype
                        ),
                    })
                }
                Err(e) => return Err(malformed(e)),
            }
        };
    }
    try_dtype!(f64, NpyDtype::Float64, |v| v);
    try_dtype!(f32, NpyDtype::Float32, f64::from);
    try_dtype!(i64, NpyDtype::Int64, |v| v as f64);
    try_dtype!(i32, NpyDtype::Int32, f64::from);
    try_dtype!(i16, NpyDtype::Int16, f64::from);
    try_dtype!(i8, NpyDtype::Int8, f64::from);
    try_dtype!(u64, NpyDtype::Uint64, |v| v as f64);
    try_dtype!(u32, NpyDtype::Uint32, f64::from);
    try_dtype!(u16, NpyDtype::Uint16, f64::from);
    try_dtype!(u8, NpyDtype::Uint8, f64::from);
    try_dtype!(bool, NpyDtype::Bool, |v| if v { 1.0 } else { 0.0 });
    Err(DatasetError::UnsupportedFormat {
        path: path.to_path_buf(),
        message: format!(
            "dtype {} (supported: float64, float32, signed and unsigned integers, bool)",
            descriptor.map_or_else(|| "?".to_string(), |d| d.to_string())
        ),
    })
}

/// Reads an `.npy` array of dimension `D` (any supported [`NpyDtype`]) as `f64`, with the dtype
/// the file stored. Values are not checked (see [`read_npy_matrix`]).
pub fn read_npy<D: Dimension>(path: &Path) -> Result<(Array<f64, D>, NpyDtype)> {
    parse_npy(path, &read_bytes(path)?)
}

/// Reads a 2-D `.npy` matrix as `f64` (rows are samples) and the dtype the file stored; rejects
/// an empty array and non-finite values.
pub fn read_npy_matrix(path: &Path) -> Result<(Array2<f64>, NpyDtype)> {
    let (a, dtype) = read_npy::<Ix2>(path)?;
    check_npy_matrix(path, a, dtype)
}

/// [`read_npy_matrix`] from a stream (read to its end); `name` names it in errors (e.g.
/// `<stdin>`).
pub fn read_npy_matrix_from<R: Read>(reader: R, name: &Path) -> Result<(Array2<f64>, NpyDtype)> {
    let (a, dtype) = parse_npy::<Ix2>(name, &read_to_end(reader, name)?)?;
    check_npy_matrix(name, a, dtype)
}

/// Rejects an empty `.npy` matrix and non-finite values.
fn check_npy_matrix(path: &Path, a: Array2<f64>, dtype: NpyDtype) -> Result<(Array2<f64>, NpyDtype)> {
    if a.is_empty() {
        return Err(DatasetError::InvalidValue {
            path: path.to_path_buf(),
            message: format!("empty array of shape {:?}", a.dim()),
        });
    }
    if let Some(((i, j), v)) = a.indexed_iter().find(|(_, v)| !v.is_finite()) {
        return Err(DatasetError::InvalidValue {
            path: path.to_path_buf(),
            message: format!("non-finite value {v} at row {i}, column {j}"),
        });
    }
    Ok((a, dtype))
}

/// How text files are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TextOptions {
    /// The first line that is neither blank nor a `#` comment is a header (skipped).
    pub header: bool,
}

impl TextOptions {
    /// Declares a header line.
    pub fn header(mut self, yes: bool) -> Self {
        self.header = yes;
        self
    }
}

/// Splits a text line into its fields: separators are commas, semicolons and whitespace (runs
/// of them count once).
pub(crate) fn fields(line: &str) -> impl Iterator<Item = &str> {
    line.split(|c: char| c == ',' || c == ';' || c.is_whitespace())
        .filter(|t| !t.is_empty())
}

/// The lines of a text file that hold data: blank lines and `#` comments skipped, and the first
/// remaining line too with [`TextOptions::header`]. Calls `each(line number, line)`.
pub(crate) fn for_data_lines(
    path: &Path,
    options: &TextOptions,
    each: impl FnMut(usize, &str) -> Result<()>,
) -> Result<()> {
    for_data_lines_of(LineReader::open(path)?, options, each)
}

/// [`for_data_lines`] over the lines of `r`.
fn for_data_lines_of(
    mut r: LineReader,
    options: &TextOptions,
    mut each: impl FnMut(usize, &str) -> Result<()>,
) -> Result<()> {
    let mut skip_header = options.header;
    while let Some((line_no, line)) = r.next_line()? {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        if std::mem::take(&mut skip_header) {
            continue;
        }
        each(line_no, line)?;
    }
    Ok(())
}

/// Reads a dense matrix from text: one row per line, values separated by commas, semicolons or
/// whitespace, `#` comments (whole-line or trailing) and blank lines ignored, an optional header
/// line ([`TextOptions::header`]). Every row must have as many values as the first; values must
/// be finite. A first line that is not numeric, read without a header, is a
/// [`DatasetError::UnexpectedHeader`].
pub fn read_text_matrix(path: &Path, options: &TextOptions) -> Result<Array2<f64>> {
    parse_text_matrix(LineReader::open(path)?, path, options)
}

/// [`read_text_matrix`] from a stream (standard input, a pipe); `name` names it in errors
/// (e.g. `<stdin>:3: ...`).
pub fn read_text_matrix_from<R: Read + Send + 'static>(
    reader: R,
    name: &Path,
    options: &TextOptions,
) -> Result<Array2<f64>> {
    let lines = LineReader::from_reader(Box::new(std::io::BufReader::new(reader)), name);
    parse_text_matrix(lines, name, options)
}

fn parse_text_matrix(lines: LineReader, path: &Path, options: &TextOptions) -> Result<Array2<f64>> {
    let mut values: Vec<f64> = Vec::new();
    let (mut rows, mut ncols) = (0usize, 0usize);
    for_data_lines_of(lines, options, |line_no, line| {
        let start = values.len();
        for tok in fields(line) {
            let Ok(v) = tok.parse::<f64>() else {
                return Err(if rows == 0 && !options.header {
                    DatasetError::UnexpectedHeader {
                        path: path.to_path_buf(),
                        line: line_no,
                        token: tok.to_string(),
                    }
                } else {
                    DatasetError::parse(path, line_no, format!("`{tok}` is not a number"))
                });
            };
            if !v.is_finite() {
                return Err(DatasetError::parse(path, line_no, format!("non-finite value {v}")));
            }
            values.push(v);
        }
        let len = values.len() - start;
        if rows == 0 {
            ncols = len;
        } else if len != ncols {
            return Err(DatasetError::parse(
                path,
                line_no,
                format!("{len} values but the first row has {ncols}"),
            ));
        }
        rows += 1;
        Ok(())
    })?;
    if rows == 0 {
        return Err(DatasetError::InvalidValue {
            path: path.to_path_buf(),
            message: "no data rows".into(),
        });
    }
    Array2::from_shape_vec((rows, ncols), values).map_err(|e| DatasetError::InvalidValue {
        path: path.to_path_buf(),
        message: e.to_string(),
    })
}

/// `v` as an index: a non-negative integer below `2^52` (exactly representable).
fn as_index(v: f64) -> Option<usize> {
    (v >= 0.0 && v.fract() == 0.0 && v < 2f64.powi(52)).then_some(v as usize)
}

/// Reads a list of 0-based indices: `.npy` (1-D, integer or integral float values) or text (one
/// per line, or separated by commas / whitespace; `#` comments; an optional header line).
pub fn read_index_list(path: &Path, options: &TextOptions) -> Result<Vec<usize>> {
    let not_an_index = |v: f64| DatasetError::InvalidValue {
        path: path.to_path_buf(),
        message: format!("{v} is not a 0-based index"),
    };
    let mut out = Vec::new();
    if MatrixFormat::of_path(path) == MatrixFormat::Npy {
        let (a, _) = read_npy::<Ix1>(path)?;
        for &v in &a {
            out.push(as_index(v).ok_or_else(|| not_an_index(v))?);
        }
    } else {
        for_data_lines(path, options, |line_no, line| {
            for tok in fields(line) {
                let index = tok.parse::<f64>().ok().and_then(as_index);
                out.push(
                    index
                        .ok_or_else(|| DatasetError::parse(path, line_no, format!("`{tok}` is not a 0-based index")))?,
                );
            }
            Ok(())
        })?;
    }
    if out.is_empty() {
        return Err(DatasetError::InvalidValue {
            path: path.to_path_buf(),
            message: "no indices".into(),
        });
    }
    Ok(out)
}

/// Reads a scipy sparse CSR matrix saved by `scipy.sparse.save_npz` (a zip archive, stored or
/// deflated, of `indptr.npy`, `indices.npy`, `data.npy`, `shape.npy` and `format.npy`; index
/// arrays of any integer dtype, values of any numeric dtype). Duplicate entries are summed and
/// column indices sorted; explicit zeros are kept.
pub fn read_npz_csr(path: &Path) -> Result<CsrMatrix> {
    parse_npz_csr(path, read_bytes(path)?)
}

/// [`read_npz_csr`] from a stream (read to its end); `name` names it in errors.
pub fn read_npz_csr_from<R: Read>(reader: R, name: &Path) -> Result<CsrMatrix> {
    parse_npz_csr(name, read_to_end(reader, name)?)
}

fn parse_npz_csr(path: &Path, bytes: Vec<u8>) -> Result<CsrMatrix> {
    let malformed = |message: String| DatasetError::Malformed {
        path: path.to_path_buf(),
        message,
    };
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes))
        .map_err(|e| malformed(format!("not a valid .npz (zip) file: {e}")))?;
    let mut entry = |name: &str| -> Result<Vec<u8>> {
        let mut file = archive.by_name(name).map_err(|e| match e {
            zip::result::ZipError::FileNotFound => DatasetError::UnsupportedFormat {
                path: path.to_path_buf(),
                message: format!("no {name} in the archive (expected scipy.sparse.save_npz output)"),
            },
            e => malformed(format!("not a valid .npz (zip) file: {name}: {e}")),
        })?;
        let mut out = Vec::new();
        file.read_to_end(&mut out)
            .map_err(|e| malformed(format!("not a valid .npz (zip) file: cannot read {name}: {e}")))?;
        Ok(out)
    };
    // `format` is a 0-d bytes (`|S3`) or unicode (`<U3`, UTF-32) array: its data ends the file.
    let format = entry("format.npy")?;
    let utf32: Vec<u8> = b"csr".iter().flat_map(|&c| [c, 0, 0, 0]).collect();
    if !format.ends_with(b"csr") && !format.ends_with(&utf32) {
        return Err(DatasetError::UnsupportedFormat {
            path: path.to_path_buf(),
            message: "only CSR matrices are supported (save a csr_matrix: `save_npz(f, m.tocsr())`)".into(),
        });
    }
    let mut array = |name: &str| -> Result<Array<f64, Ix1>> {
        let (a, _) = parse_npy::<Ix1>(&path.join(name), &entry(name)?)?;
        Ok(a)
    };
    let mut indices_of = |name: &str| -> Result<Vec<usize>> {
        array(name)?
            .iter()
            .map(|&v| {
                as_index(v).ok_or_else(|| DatasetError::InvalidValue {
                    path: path.to_path_buf(),
                    message: format!("{name} holds {v}, not an index"),
                })
            })
            .collect()
    };
    let shape = indices_of("shape.npy")?;
    let indptr = indices_of("indptr.npy")?;
    let indices = indices_of("indices.npy")?;
    let data = array("data.npy")?;
    let &[nrows, ncols] = shape.as_slice() else {
        return Err(DatasetError::inconsistent(
            path,
            format!("shape.npy has {} entries, expected 2", shape.len()),
        ));
    };
    if indptr.len() != nrows + 1 || indices.len() != data.len() || indptr.last() != Some(&indices.len()) {
        return Err(DatasetError::inconsistent(
            path,
            format!(
                "CSR arrays disagree: shape {shape:?}, {} indptr, {} indices, {} values",
                indptr.len(),
                indices.len(),
                data.len()
            ),
        ));
    }
    if let Some(i) = (0..nrows).find(|&i| indptr[i] > indptr[i + 1]) {
        return Err(DatasetError::inconsistent(path, format!("indptr decreases at row {i}")));
    }
    let triplets = (0..nrows).flat_map(|i| (indptr[i]..indptr[i + 1]).map(move |k| (i, k)));
    let triplets: Vec<(usize, usize, f64)> = triplets.map(|(i, k)| (i, indices[k], data[k])).collect();
    CsrMatrix::from_triplets(nrows, ncols, triplets).map_err(|e| DatasetError::matrix(path, e))
}

/// The `.npy` bytes (C order) of an array, as `numpy.save` writes them: float64 for `f64`,
/// int64 for `i64` (any element type `ndarray-npy` writes).
pub fn npy_bytes<A: ndarray_npy::WritableElement + Clone, D: Dimension>(a: &Array<A, D>) -> Result<Vec<u8>> {
    let mut buf = Vec::new();
    a.as_standard_layout()
        .write_npy(&mut buf)
        .map_err(|e| DatasetError::InvalidArgument {
            what: "array",
            message: format!("cannot encode as .npy: {e}"),
        })?;
    Ok(buf)
}

/// Rows per task of [`csv_bytes`].
const CSV_ROWS_PER_TASK: usize = 512;

/// CSV text of a matrix: one row per line, values separated by commas, each written in the
/// shortest form that reads back as the same `f64` (`{:e}`, e.g. `1.5e-3`). Blocks of rows are
/// formatted in parallel (formatting, not writing, is the cost: 0.03 s per `10⁴ × 20` block of
/// values on one core) and joined in order.
pub fn csv_bytes(a: ArrayView2<'_, f64>) -> Vec<u8> {
    use rayon::prelude::*;
    use std::fmt::Write as _;
    let parts: Vec<String> = a
        .axis_chunks_iter(ndarray::Axis(0), CSV_ROWS_PER_TASK)
        .into_par_iter()
        .map(|block| {
            // About 22 bytes per value for unit-scale doubles; the buffer grows when more are
            // needed.
            let mut s = String::with_capacity(block.len() * 22 + block.nrows());
            for row in block.outer_iter() {
                for (k, v) in row.iter().enumerate() {
                    if k > 0 {
                        s.push(',');
                    }
                    // Writing into a String cannot fail.
                    let _ = write!(s, "{v:e}");
                }
                s.push('\n');
            }
            s
        })
        .collect();
    let mut out = Vec::with_capacity(parts.iter().map(String::len).sum());
    parts.iter().for_each(|p| out.extend_from_slice(p.as_bytes()));
    out
}
