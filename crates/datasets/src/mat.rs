//! A small reader for MATLAB level-5 `.mat` files (the format of BCOT's biclustering data):
//! numeric arrays, dense or sparse, stored plainly or zlib-compressed (`miCOMPRESSED`).
//!
//! The `matfile` crate skips sparse arrays, and Wiki's `fea` is sparse, hence this reader. It
//! follows "MAT-File Format" (The MathWorks, R2024a), chapter 1: a 128-byte header whose last two
//! bytes (`IM` or `MI`) give the byte order, then tagged data elements, each padded to 8 bytes
//! except compressed ones. Cell, struct, char and object arrays are skipped. MAT v7.3 files
//! (HDF5) and v4 files are reported as unsupported.
use std::io::Read;
use std::path::Path;

use ksvd_linalg::CsrMatrix;

use crate::error::{DatasetError, Result};

/// The numeric arrays of a `.mat` file, in file order.
#[derive(Debug, Clone, PartialEq)]
pub struct MatFile {
    /// Every numeric (dense or sparse) variable.
    pub variables: Vec<MatVariable>,
}

/// One named numeric array.
#[derive(Debug, Clone, PartialEq)]
pub struct MatVariable {
    /// Variable name.
    pub name: String,
    /// Dimensions (at least two; `[rows, cols]` for matrices).
    pub dims: Vec<usize>,
    /// `true` when the array has an imaginary part (which is dropped).
    pub complex: bool,
    /// The real part.
    pub data: MatData,
}

/// Storage of a numeric array's real part, converted to `f64` whatever the stored type.
#[derive(Debug, Clone, PartialEq)]
pub enum MatData {
    /// Dense values in column-major order (`dims.iter().product()` of them).
    Dense(Vec<f64>),
    /// Compressed sparse column storage of a 2-D array.
    Sparse {
        /// Row index of every stored entry.
        row_indices: Vec<usize>,
        /// Column pointers (`cols + 1` of them).
        col_ptr: Vec<usize>,
        /// Value of every stored entry.
        values: Vec<f64>,
    },
}

impl MatFile {
    /// The variable called `name`.
    pub fn get(&self, name: &str) -> Option<&MatVariable> {
        self.variables.iter().find(|v| v.name == name)
    }
}

impl MatVariable {
    /// `(rows, cols)` of a 2-D array, or an error naming the file for higher dimensions.
    pub fn shape(&self, path: &Path) -> Result<(usize, usize)> {
        match self.dims.as_slice() {
            [r, c] => Ok((*r, *c)),
            d => Err(DatasetError::UnsupportedFormat {
                path: path.to_path_buf(),
                message: format!(
                    "variable `{}` has {} dimensions {d:?}, expected a matrix",
                    self.name,
                    d.len()
                ),
            }),
        }
    }

    /// The 2-D array as a CSR matrix (exact zeros of dense arrays are dropped).
    pub fn to_csr(&self, path: &Path) -> Result<CsrMatrix> {
        let (rows, cols) = self.shape(path)?;
        match &self.data {
            MatData::Dense(v) => {
                if v.len() != rows * cols {
                    return Err(DatasetError::inconsistent(
                        path,
                        format!("`{}` is {rows} x {cols} but holds {} values", self.name, v.len()),
                    ));
                }
                let mut triplets = Vec::new();
                for j in 0..cols {
                    for i in 0..rows {
                        let x = v[j * rows + i];
                        if x != 0.0 {
                            triplets.push((i, j, x));
                        }
                    }
                }
                CsrMatrix::from_triplets(rows, cols, triplets).map_err(|e| DatasetError::matrix(path, e))
            }
            MatData::Sparse {
                row_indices,
                col_ptr,
                values,
            } => {
                // CSC of A is CSR of A^T.
                let t = CsrMatrix::try_new(cols, rows, col_ptr.clone(), row_indices.clone(), values.clone())
                    .map_err(|e| DatasetError::matrix(path, e))?;
                Ok(t.transpose())
            }
        }
    }

    /// All values of a dense array in column-major order (for vectors: the vector).
    pub fn dense_values(&self, path: &Path) -> Result<&[f64]> {
        match &self.data {
            MatData::Dense(v) => Ok(v),
            MatData::Sparse { .. } => Err(DatasetError::UnsupportedFormat {
                path: path.to_path_buf(),
                message: format!("variable `{}` is sparse, expected a dense array", self.name),
            }),
        }
    }
}

// MAT-file data types (Table 1-1 of the format description).
const MI_INT8: u32 = 1;
const MI_UINT8: u32 = 2;
const MI_INT16: u32 = 3;
const MI_UINT16: u32 = 4;
const MI_INT32: u32 = 5;
const MI_UINT32: u32 = 6;
const MI_SINGLE: u32 = 7;
const MI_DOUBLE: u32 = 9;
const MI_INT64: u32 = 12;
const MI_UINT64: u32 = 13;
const MI_MATRIX: u32 = 14;
const MI_COMPRESSED: u32 = 15;
// Array classes.
const MX_SPARSE: u32 = 5;
const MX_DOUBLE: u32 = 6;
const MX_UINT64: u32 = 15;
/// Guard against corrupt dimensions: converting a sparse array allocates one word per row.
const MAX_SPARSE_ROWS: usize = 1 << 26;

/// Reads the numeric variables of a level-5 `.mat` file (`.mat.bz2` is decompressed first).
pub fn read_mat(path: &Path) -> Result<MatFile> {
    let bytes = crate::io::read_bytes(path)?;
    parse_mat(&bytes, path)
}

/// Parses the bytes of a level-5 `.mat` file; `path` only labels errors.
pub fn parse_mat(bytes: &[u8], path: &Path) -> Result<MatFile> {
    if bytes.len() < 128 {
        return Err(unsupported(
            path,
            format!("{} bytes is too short for a MAT v5 header (128 bytes)", bytes.len()),
        ));
    }
    let text = String::from_utf8_lossy(&bytes[..116]);
    if text.contains("MATLAB 7.3") || bytes.starts_with(b"\x89HDF") {
        return Err(unsupported(
            path,
            "MAT v7.3 (HDF5) files are not supported; re-save with `save -v7`".into(),
        ));
    }
    let big = match &bytes[126..128] {
        b"IM" => false,
        b"MI" => true,
        other => {
            return Err(unsupported(
                path,
                format!("no MAT v5 endian indicator (found {other:?} at byte 126); MAT v4 files are not supported"),
            ))
        }
    };
    let mut variables = Vec::new();
    let mut cur = Cursor::after_header(bytes, big, path);
    while cur.pos < bytes.len() {
        let start = cur.pos;
        let (ty, body) = cur.element()?;
        match ty {
            MI_MATRIX => {
                let mut inner = Cursor::new(body, big, path);
                if let Some(v) = parse_matrix(&mut inner).map_err(|e| e.shift(start + 8))? {
                    variables.push(v);
                }
            }
            MI_COMPRESSED => {
                let dec = inflate(body, start, path)?;
                let mut c = Cursor::new(&dec, big, path);
                let (ty, body) = c.element().map_err(|e| e.context("inside a compressed element"))?;
                if ty == MI_MATRIX {
                    let mut inner = Cursor::new(body, big, path);
                    if let Some(v) = parse_matrix(&mut inner).map_err(|e| e.context("inside a compressed element"))? {
                        variables.push(v);
                    }
                }
            }
            _ => {} // other top-level elements carry no arrays
        }
    }
    Ok(MatFile { variables })
}

/// Copies a level-5 `.mat` file keeping only the variables named in `keep`: the 128-byte header
/// and the kept top-level elements are copied byte for byte (compressed elements stay as they
/// were), every other element is dropped. Used to build the trimmed committed copies of
/// `acm.mat` and `DBLP.mat` (which carry large `X_pca` extras).
pub fn keep_mat_variables(bytes: &[u8], keep: &[&str], path: &Path) -> Result<Vec<u8>> {
    parse_mat(bytes, path)?; // validates the whole file first
    let big = &bytes[126..128] == b"MI";
    let mut out = bytes[..128].to_vec();
    let mut cur = Cursor::after_header(bytes, big, path);
    while cur.pos < bytes.len() {
        let start = cur.pos;
        let (ty, body) = cur.element()?;
        let name = match ty {
            MI_MATRIX => element_name(body, big, path)?,
            MI_COMPRESSED => {
                let dec = inflate(body, start, path)?;
                let mut c = Cursor::new(&dec, big, path);
                let (ty, inner) = c.element()?;
                if ty == MI_MATRIX {
                    element_name(inner, big, path)?
                } else {
                    None
                }
            }
            _ => None,
        };
        if name.is_some_and(|n| keep.contains(&n.as_str())) {
            out.extend_from_slice(&bytes[start..cur.pos]);
        }
    }
    Ok(out)
}

/// The bytes of an `miCOMPRESSED` element's zlib stream `body`, which starts at byte `offset` of
/// the file `path`.
fn inflate(body: &[u8], offset: usize, path: &Path) -> Result<Vec<u8>> {
    let mut dec = Vec::new();
    flate2::read::ZlibDecoder::new(body)
        .read_to_end(&mut dec)
        .map_err(|e| DatasetError::MalformedBinary {
            path: path.to_path_buf(),
            offset,
            message: format!("zlib stream of a compressed element is corrupt: {e}"),
        })?;
    Ok(dec)
}

/// The name of an `miMATRIX` body (array flags, dimensions, name).
fn element_name(body: &[u8], big: bool, path: &Path) -> Result<Option<String>> {
    if body.is_empty() {
        return Ok(None);
    }
    let mut c = Cursor::new(body, big, path);
    c.element()?;
    c.element()?;
    let (_, name) = c.element()?;
    Ok(Some(String::from_utf8_lossy(name).into_owned()))
}

fn unsupported(path: &Path, message: String) -> DatasetError {
    DatasetError::UnsupportedFormat {
        path: path.to_path_buf(),
        message,
    }
}

trait ErrorExt {
    fn shift(self, by: usize) -> Self;
    fn context(self, what: &str) -> Self;
}

impl ErrorExt for DatasetError {
    fn shift(self, by: usize) -> Self {
        match self {
            DatasetError::MalformedBinary { path, offset, message } => DatasetError::MalformedBinary {
                path,
                offset: offset + by,
                message,
            },
            other => other,
        }
    }
    fn context(self, what: &str) -> Self {
        match self {
            DatasetError::MalformedBinary { path, offset, message } => DatasetError::MalformedBinary {
                path,
                offset,
                message: format!("{message} ({what})"),
            },
            other => other,
        }
    }
}

struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
    big: bool,
    path: &'a Path,
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `buf`.
    fn new(buf: &'a [u8], big: bool, path: &'a Path) -> Self {
        Cursor { buf, pos: 0, big, path }
    }

    /// A cursor at the first top-level element of a whole file (after the 128-byte header).
    fn after_header(bytes: &'a [u8], big: bool, path: &'a Path) -> Self {
        Cursor {
            pos: 128,
            ..Cursor::new(bytes, big, path)
        }
    }

    fn err(&self, message: impl Into<String>) -> DatasetError {
        DatasetError::MalformedBinary {
            path: self.path.to_path_buf(),
            offset: self.pos,
            message: message.into(),
        }
    }

    fn u32_at(&self, at: usize) -> Option<u32> {
        let b: [u8; 4] = self.buf.get(at..at + 4)?.try_into().ok()?;
        Some(if self.big {
            u32::from_be_bytes(b)
        } else {
            u32::from_le_bytes(b)
        })
    }

    /// Reads one tagged element; returns its type and body and moves past its padding.
    fn element(&mut self) -> Result<(u32, &'a [u8])> {
        let first = self.u32_at(self.pos).ok_or_else(|| self.err("truncated element tag"))?;
        if first >> 16 != 0 {
            // Small data element: type and size packed in 4 bytes, up to 4 data bytes.
            let (ty, n) = (first & 0xffff, (first >> 16) as usize);
            if n > 4 {
                return Err(self.err(format!("small data element claims {n} > 4 bytes")));
            }
            let body = self
                .buf
                .get(self.pos + 4..self.pos + 4 + n)
                .ok_or_else(|| self.err("truncated small element"))?;
            self.pos += 8;
            return Ok((ty, body));
        }
        let n = self
            .u32_at(self.pos + 4)
            .ok_or_else(|| self.err("truncated element tag"))? as usize;
        let start = self.pos + 8;
        let body = start
            .checked_add(n)
            .and_then(|end| self.buf.get(start..end))
            .ok_or_else(|| {
                self.err(format!(
                    "element of type {first} claims {n} bytes, past the end of the data"
                ))
            })?;
        let padded = if first == MI_COMPRESSED { n } else { n.div_ceil(8) * 8 };
        self.pos = (start + padded).min(self.buf.len());
        Ok((first, body))
    }

    fn numeric(&mut self, what: &str) -> Result<Vec<f64>> {
        let at = self.pos;
        let (ty, body) = self.element()?;
        decode_numeric(ty, body, self.big).ok_or_else(|| DatasetError::MalformedBinary {
            path: self.path.to_path_buf(),
            offset: at,
            message: format!(
                "{what}: data type {ty} with {} bytes is not a numeric array",
                body.len()
            ),
        })
    }

    fn indices(&mut self, what: &str) -> Result<Vec<usize>> {
        let v = self.numeric(what)?;
        v.iter()
            .map(|&x| {
                if x >= 0.0 && x.fract() == 0.0 && x < 1e15 {
                    Some(x as usize)
                } else {
                    None
                }
            })
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| self.err(format!("{what} holds a negative or non-integer index")))
    }
}

fn decode_numeric(ty: u32, b: &[u8], big: bool) -> Option<Vec<f64>> {
    macro_rules! conv {
        ($t:ty, $n:expr) => {{
            if b.len() % std::mem::size_of::<$t>() != 0 {
                return None;
            }
            b.chunks_exact($n)
                .map(|c| {
                    let a: [u8; $n] = c.try_into().ok()?;
                    Some(
                        (if big {
                            <$t>::from_be_bytes(a)
                        } else {
                            <$t>::from_le_bytes(a)
                        }) as f64,
                    )
                })
                .collect()
        }};
    }
    match ty {
        MI_INT8 => conv!(i8, 1),
        MI_UINT8 => conv!(u8, 1),
        MI_INT16 => conv!(i16, 2),
        MI_UINT16 => conv!(u16, 2),
        MI_INT32 => conv!(i32, 4),
        MI_UINT32 => conv!(u32, 4),
        MI_SINGLE => conv!(f32, 4),
        MI_DOUBLE => conv!(f64, 8),
        MI_INT64 => conv!(i64, 8),
        MI_UINT64 => conv!(u64, 8),
        _ => None,
    }
}

/// Parses the sub-elements of an `miMATRIX`; `None` for non-numeric classes.
fn parse_matrix(c: &mut Cursor<'_>) -> Result<Option<MatVariable>> {
    if c.buf.is_empty() {
        return Ok(None); // an empty miMATRIX is legal (empty cell content)
    }
    let (ty, flags) = c.element()?;
    if ty != MI_UINT32 || flags.len() < 8 {
        return Err(c.err(format!(
            "array flags: expected miUINT32 with 8 bytes, found type {ty}, {} bytes",
            flags.len()
        )));
    }
    let f0 = if c.big {
        u32::from_be_bytes([flags[0], flags[1], flags[2], flags[3]])
    } else {
        u32::from_le_bytes([flags[0], flags[1], flags[2], flags[3]])
    };
    let class = f0 & 0xff;
    let complex = f0 & 0x0800 != 0;
    let dims = c.indices("dimensions")?;
    if dims.len() < 2 {
        return Err(c.err(format!("{} dimensions, a MAT array has at least 2", dims.len())));
    }
    let (nty, name_bytes) = c.element()?;
    if nty != MI_INT8 && nty != MI_UINT8 {
        return Err(c.err(format!("array name: expected miINT8, found type {nty}")));
    }
    let name = String::from_utf8_lossy(name_bytes).into_owned();
    let numel = dims
        .iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d))
        .ok_or_else(|| c.err("dimensions overflow"))?;
    let data = if class == MX_SPARSE {
        let [rows, cols] = dims[..] else {
            return Err(c.err(format!("sparse array `{name}` must be 2-D, has dims {dims:?}")));
        };
        if rows > MAX_SPARSE_ROWS {
            return Err(c.err(format!(
                "sparse array `{name}` claims {rows} rows (more than 2^26: corrupt dimensions?)"
            )));
        }
        let mut row_indices = c.indices("sparse row indices")?;
        let col_ptr = c.indices("sparse column pointers")?;
        let mut values = c.numeric("sparse values")?;
        if complex {
            c.numeric("sparse imaginary values")?;
        }
        if col_ptr.len() != cols + 1 || col_ptr[0] != 0 || col_ptr.windows(2).any(|w| w[0] > w[1]) {
            return Err(c.err(format!("sparse `{name}`: invalid column pointers for {cols} columns")));
        }
        let nnz = col_ptr[cols];
        if row_indices.len() < nnz || values.len() < nnz {
            return Err(c.err(format!(
                "sparse `{name}`: {nnz} entries but {} row indices and {} values",
                row_indices.len(),
                values.len()
            )));
        }
        if let Some(&r) = row_indices[..nnz].iter().find(|&&r| r >= rows) {
            return Err(c.err(format!("sparse `{name}`: row index {r} >= {rows} rows")));
        }
        row_indices.truncate(nnz);
        values.truncate(nnz);
        MatData::Sparse {
            row_indices,
            col_ptr,
            values,
        }
    } else if (MX_DOUBLE..=MX_UINT64).contains(&class) {
        let values = c.numeric("real part")?;
        if values.len() != numel {
            return Err(c.err(format!(
                "`{name}` has dims {dims:?} ({numel} values) but stores {}",
                values.len()
            )));
        }
        if complex {
            c.numeric("imaginary part")?;
        }
        MatData::Dense(values)
    } else {
        return Ok(None);
    };
    Ok(Some(MatVariable {
        name,
        dims,
        complex,
        data,
    }))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
pub(crate) mod tests {
    use super::*;

    /// Writes a little-endian, uncompressed MAT v5 file for tests: dense (column-major) and
    /// sparse (CSC) double arrays.
    pub(crate) enum TestVar<'a> {
        Dense {
            name: &'a str,
            rows: usize,
            cols: usize,
            values: Vec<f64>,
            as_uint8: bool,
        },
        Sparse {
            name: &'a str,
            rows: usize,
            cols: usize,
            ir: Vec<i32>,
            jc: Vec<i32>,
            pr: Vec<f64>,
        },
    }

    fn sub(out: &mut Vec<u8>, ty: u32, bytes: &[u8]) {
        out.extend_from_slice(&ty.to_le_bytes());
        out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
        out.extend_from_slice(bytes);
        while out.len() % 8 != 0 {
            out.push(0);
        }
    }

    pub(crate) fn write_mat(vars: &[TestVar<'_>], compress: bool) -> Vec<u8> {
        let mut out = Vec::new();
        let mut header = b"MATLAB 5.0 MAT-file, written by ksvd-datasets tests".to_vec();
        header.resize(116, b' ');
        header.extend_from_slice(&[0u8; 8]);
        header.extend_from_slice(&0x0100u16.to_le_bytes());
        header.extend_from_slice(b"IM");
        out.extend_from_slice(&header);
        for v in vars {
            let mut m = Vec::new();
            let (name, rows, cols, class) = match v {
                TestVar::Dense { name, rows, cols, .. } => (*name, *rows, *cols, MX_DOUBLE),
                TestVar::Sparse { name, rows, cols, .. } => (*name, *rows, *cols, MX_SPARSE),
            };
            let mut flags = class.to_le_bytes().to_vec();
            flags.extend_from_slice(&0u32.to_le_bytes());
            sub(&mut m, MI_UINT32, &flags);
            let dims: Vec<u8> = [rows as i32, cols as i32]
                .iter()
                .flat_map(|d| d.to_le_bytes())
                .collect();
            sub(&mut m, MI_INT32, &dims);
            sub(&mut m, MI_INT8, name.as_bytes());
            match v {
                TestVar::Dense {
                    values, as_uint8: true, ..
                } => {
                    let b: Vec<u8> = values.iter().map(|&x| x as u8).collect();
                    sub(&mut m, MI_UINT8, &b);
                }
                TestVar::Dense { values, .. } => {
                    let b: Vec<u8> = values.iter().flat_map(|x| x.to_le_bytes()).collect();
                    sub(&mut m, MI_DOUBLE, &b);
                }
                TestVar::Sparse { ir, jc, pr, .. } => {
                    sub(
                        &mut m,
                        MI_INT32,
                        &ir.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<_>>(),
                    );
                    sub(
                        &mut m,
                        MI_INT32,
                        &jc.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<_>>(),
                    );
                    sub(
                        &mut m,
                        MI_DOUBLE,
                        &pr.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<_>>(),
                    );
                }
            }
            let mut element = Vec::new();
            sub(&mut element, MI_MATRIX, &m);
            if compress {
                use std::io::Write;
                let mut enc = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
                enc.write_all(&element).unwrap();
                let z = enc.finish().unwrap();
                out.extend_from_slice(&MI_COMPRESSED.to_le_bytes());
                out.extend_from_slice(&(z.len() as u32).to_le_bytes());
                out.extend_from_slice(&z);
            } else {
                out.extend_from_slice(&element);
            }
        }
        out
    }

    fn example() -> Vec<TestVar<'static>> {
        // fea = [[1, 0, 2], [0, 0, 3]] ; gnd = [1, 2]
        vec![
            TestVar::Sparse {
                name: "fea",
                rows: 2,
                cols: 3,
                ir: vec![0, 0, 1],
                jc: vec![0, 1, 1, 3],
                pr: vec![1.0, 2.0, 3.0],
            },
            TestVar::Dense {
                name: "gnd",
                rows: 2,
                cols: 1,
                values: vec![1.0, 2.0],
                as_uint8: true,
            },
            TestVar::Dense {
                name: "D",
                rows: 2,
                cols: 3,
                values: vec![1.0, 0.0, 0.0, 0.0, 2.0, 3.0],
                as_uint8: false,
            },
        ]
    }

    #[test]
    fn reads_dense_and_sparse_plain_and_compressed() {
        for compress in [false, true] {
            let bytes = write_mat(&example(), compress);
            let m = parse_mat(&bytes, Path::new("x.mat")).unwrap();
            assert_eq!(m.variables.len(), 3);
            let p = Path::new("x.mat");
            let fea = m.get("fea").unwrap().to_csr(p).unwrap();
            let d = m.get("D").unwrap().to_csr(p).unwrap();
            assert_eq!(fea, d);
            assert_eq!(fea.to_dense(), ndarray::array![[1.0, 0.0, 2.0], [0.0, 0.0, 3.0]]);
            assert_eq!(m.get("gnd").unwrap().dense_values(p).unwrap(), &[1.0, 2.0]);
        }
    }

    #[test]
    fn keeping_variables_copies_elements_verbatim() {
        for compress in [false, true] {
            let bytes = write_mat(&example(), compress);
            let p = Path::new("k.mat");
            let kept = keep_mat_variables(&bytes, &["fea", "gnd"], p).unwrap();
            assert!(kept.len() < bytes.len());
            let full = parse_mat(&bytes, p).unwrap();
            let m = parse_mat(&kept, p).unwrap();
            assert_eq!(m.variables.len(), 2);
            assert_eq!(m.get("fea"), full.get("fea"));
            assert_eq!(m.get("gnd"), full.get("gnd"));
            assert!(m.get("D").is_none());
        }
    }

    #[test]
    fn truncation_and_garbage_give_typed_errors() {
        let bytes = write_mat(&example(), false);
        for cut in [0, 100, 130, 140, 200, bytes.len() - 3] {
            let r = parse_mat(&bytes[..cut], Path::new("t.mat"));
            assert!(
                matches!(
                    r,
                    Err(DatasetError::MalformedBinary { .. } | DatasetError::UnsupportedFormat { .. })
                ),
                "cut {cut}: {r:?}"
            );
        }
        let mut z = write_mat(&example(), true);
        let n = z.len();
        z[n - 10] ^= 0xff;
        z[140] ^= 0x55;
        assert!(parse_mat(&z, Path::new("z.mat")).is_err());
        let mut hdf = vec![0u8; 200];
        hdf[..19].copy_from_slice(b"MATLAB 7.3 MAT-file");
        assert!(matches!(
            parse_mat(&hdf, Path::new("h.mat")),
            Err(DatasetError::UnsupportedFormat { .. })
        ));
    }

    proptest::proptest! {
        #[test]
        fn never_panics_on_corrupted_bytes(flips in proptest::collection::vec((0usize..400, proptest::prelude::any::<u8>()), 1..8)) {
            for compress in [false, true] {
                let mut bytes = write_mat(&example(), compress);
                for &(at, b) in &flips {
                    let k = 128 + at % (bytes.len() - 128);
                    bytes[k] ^= b;
                }
                if let Ok(m) = parse_mat(&bytes, Path::new("p.mat")) {
                    for v in &m.variables {
                        let _ = v.to_csr(Path::new("p.mat"));
                    }
                }
            }
        }
    }
}
