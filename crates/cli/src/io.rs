//! Reading matrices (CSV, `.npy`) and edge lists; writing results atomically.
use crate::CliError;
use ksvd_linalg::CsrMatrix;
use ndarray::{Array1, Array2};
use std::fs;
use std::path::{Path, PathBuf};

/// Reads a dense matrix: `.npy` (float64, 2-D) or CSV/whitespace text without a header.
pub fn read_matrix(path: &Path) -> Result<Array2<f64>, CliError> {
    read_text_or_npy(path, false)
}

fn read_text_or_npy(path: &Path, header: bool) -> Result<Array2<f64>, CliError> {
    if !path.exists() {
        return Err(CliError::Input {
            path: path.to_path_buf(),
            line: None,
            msg: "file not found".into(),
        });
    }
    if path.extension().is_some_and(|e| e == "npy") {
        return ndarray_npy::read_npy::<_, Array2<f64>>(path).map_err(|e| CliError::Input {
            path: path.to_path_buf(),
            line: None,
            msg: format!("not a 2-D float64 .npy file: {e}"),
        });
    }
    let text = fs::read_to_string(path).map_err(|e| CliError::Input {
        path: path.to_path_buf(),
        line: None,
        msg: e.to_string(),
    })?;
    let mut rows: Vec<Vec<f64>> = Vec::new();
    let mut skip_header = header;
    for (lineno, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if std::mem::take(&mut skip_header) {
            continue;
        }
        let row: Result<Vec<f64>, _> = line
            .split(|c: char| c == ',' || c.is_whitespace() || c == ';')
            .filter(|t| !t.is_empty())
            .map(|t| t.parse::<f64>().map_err(|_| t.to_string()))
            .collect();
        let row = row.map_err(|tok| CliError::Input {
            path: path.to_path_buf(),
            line: Some(lineno + 1),
            msg: if header || !rows.is_empty() {
                format!("`{tok}` is not a number")
            } else {
                format!("`{tok}` is not a number (a header line? pass --header)")
            },
        })?;
        if let Some(v) = row.iter().find(|v| !v.is_finite()) {
            return Err(CliError::Input {
                path: path.to_path_buf(),
                line: Some(lineno + 1),
                msg: format!("non-finite value {v}"),
            });
        }
        if let Some(first) = rows.first() {
            if first.len() != row.len() {
                return Err(CliError::Input {
                    path: path.to_path_buf(),
                    line: Some(lineno + 1),
                    msg: format!("{} values but the first row has {}", row.len(), first.len()),
                });
            }
        }
        rows.push(row);
    }
    if rows.is_empty() {
        return Err(CliError::Input {
            path: path.to_path_buf(),
            line: None,
            msg: "no data rows".into(),
        });
    }
    let (n, d) = (rows.len(), rows[0].len());
    Array2::from_shape_vec((n, d), rows.into_iter().flatten().collect()).map_err(|e| CliError::Input {
        path: path.to_path_buf(),
        line: None,
        msg: e.to_string(),
    })
}

/// A directed graph read from an edge list.
pub struct EdgeList {
    /// Adjacency `A[src, dst] = 1` (duplicates collapse to 1).
    pub adjacency: CsrMatrix,
    /// Node names in index order (`None` when the file uses integer ids `0..n`).
    pub names: Option<Vec<String>>,
}

/// How the node ids of an edge list become row/column indices of the adjacency matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum NodeIds {
    /// `index` when every id is an integer and the ids cover `0..=max` without a gap (no node
    /// is invented), `name` otherwise: paper ids such as Cora's (up to 1.15 million for 2708
    /// papers) must not become a million isolated nodes.
    #[default]
    Auto,
    /// Integer ids are the indices `0..=max id`; ids that appear in no arc are isolated nodes.
    Index,
    /// Every id is a name; nodes are numbered by first appearance (written to `nodes.csv`).
    Name,
}

/// Reads an edge list, one arc `src dst` per line (whitespace or comma separated; `#` comments),
/// numbering the nodes as `ids` says.
pub fn read_edges(path: &Path, ids: NodeIds) -> Result<EdgeList, CliError> {
    let text = fs::read_to_string(path).map_err(|e| CliError::Input {
        path: path.to_path_buf(),
        line: None,
        msg: e.to_string(),
    })?;
    // (1-based line, src, dst)
    let mut pairs: Vec<(usize, String, String)> = Vec::new();
    for (lineno, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let toks: Vec<&str> = line
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|t| !t.is_empty())
            .collect();
        if toks.len() < 2 {
            return Err(CliError::Input {
                path: path.to_path_buf(),
                line: Some(lineno + 1),
                msg: "expected `src dst`".into(),
            });
        }
        pairs.push((lineno + 1, toks[0].to_string(), toks[1].to_string()));
    }
    if pairs.is_empty() {
        return Err(CliError::Input {
            path: path.to_path_buf(),
            line: None,
            msg: "no edges".into(),
        });
    }
    let numeric: Option<Vec<(usize, usize)>> = match ids {
        NodeIds::Name => None,
        NodeIds::Auto | NodeIds::Index => pairs
            .iter()
            .map(|(_, a, b)| Some((a.parse::<usize>().ok()?, b.parse::<usize>().ok()?)))
            .collect(),
    };
    if ids == NodeIds::Index && numeric.is_none() {
        // The first id that is not an index, with its line.
        let (line, id) = pairs
            .iter()
            .flat_map(|(line, a, b)| [(*line, a), (*line, b)])
            .find(|(_, id)| id.parse::<usize>().is_err())
            .map_or((0, ""), |(line, id)| (line, id.as_str()));
        return Err(CliError::Input {
            path: path.to_path_buf(),
            line: Some(line),
            msg: format!("node id `{id}` is not a non-negative integer (--node-ids index); use --node-ids name"),
        });
    }
    // `auto`: integer ids are indices only when they leave no gap in 0..=max.
    let numeric = numeric.filter(|e| ids == NodeIds::Index || covers_range(e));
    let (edges, n, names) = match numeric {
        Some(e) => {
            let n = e.iter().map(|&(a, b)| a.max(b)).max().unwrap_or(0) + 1;
            (e, n, None)
        }
        None => {
            let mut index = std::collections::HashMap::new();
            let mut names = Vec::new();
            let mut id = |s: &String| {
                *index.entry(s.clone()).or_insert_with(|| {
                    names.push(s.clone());
                    names.len() - 1
                })
            };
            let e: Vec<(usize, usize)> = pairs.iter().map(|(_, a, b)| (id(a), id(b))).collect();
            let n = names.len();
            (e, n, Some(names))
        }
    };
    let mut trip: Vec<(usize, usize, f64)> = edges.into_iter().map(|(a, b)| (a, b, 1.0)).collect();
    trip.sort_unstable_by_key(|t| (t.0, t.1));
    trip.dedup_by_key(|t| (t.0, t.1));
    let adjacency = CsrMatrix::from_triplets(n, n, trip).map_err(|e| CliError::Input {
        path: path.to_path_buf(),
        line: None,
        msg: e.to_string(),
    })?;
    Ok(EdgeList { adjacency, names })
}

/// Whether the ids of `edges` are exactly `0..=max` (every index in between appears).
fn covers_range(edges: &[(usize, usize)]) -> bool {
    let n = edges.iter().map(|&(a, b)| a.max(b)).max().unwrap_or(0) + 1;
    if n > 2 * edges.len() {
        // More indices than the arcs' two ends: some must be missing.
        return false;
    }
    let mut seen = vec![false; n];
    for &(a, b) in edges {
        seen[a] = true;
        seen[b] = true;
    }
    seen.into_iter().all(|s| s)
}

/// Writes `bytes` to `path` atomically through [`ksvd_datasets::write_atomic`] (a temporary
/// file in the same directory, fsynced, then renamed over the target), so an interrupted run
/// never leaves a half-written file; errors become [`CliError::Output`].
pub fn atomic_write(path: &Path, bytes: &[u8]) -> Result<(), CliError> {
    ksvd_datasets::write_atomic(path, bytes).map_err(|e| CliError::Output {
        path: path.to_path_buf(),
        msg: e.to_string(),
    })
}

fn csv_bytes<'a>(rows: impl Iterator<Item = Vec<f64>> + 'a) -> Vec<u8> {
    let mut s = String::new();
    for r in rows {
        let line: Vec<String> = r.iter().map(|v| format!("{v:.17e}")).collect();
        s.push_str(&line.join(","));
        s.push('\n');
    }
    s.into_bytes()
}

/// Writes a matrix as `name.csv` and `name.npy` in `dir`.
pub fn write_matrix(dir: &Path, name: &str, a: &Array2<f64>) -> Result<(), CliError> {
    atomic_write(
        &dir.join(format!("{name}.csv")),
        &csv_bytes(a.outer_iter().map(|r| r.to_vec())),
    )?;
    let mut buf = Vec::new();
    ndarray_npy::WriteNpyExt::write_npy(&a.as_standard_layout().to_owned(), &mut buf).map_err(|e| {
        CliError::Output {
            path: dir.join(format!("{name}.npy")),
            msg: e.to_string(),
        }
    })?;
    atomic_write(&dir.join(format!("{name}.npy")), &buf)
}

/// Writes a vector as `name.csv` (one value per line) and `name.npy`.
pub fn write_vector(dir: &Path, name: &str, v: &Array1<f64>) -> Result<(), CliError> {
    atomic_write(&dir.join(format!("{name}.csv")), &csv_bytes(v.iter().map(|x| vec![*x])))?;
    let mut buf = Vec::new();
    ndarray_npy::WriteNpyExt::write_npy(v, &mut buf).map_err(|e| CliError::Output {
        path: dir.join(format!("{name}.npy")),
        msg: e.to_string(),
    })?;
    atomic_write(&dir.join(format!("{name}.npy")), &buf)
}

/// How sample files are read.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReadOptions {
    /// CSV/text files start with one header line (skipped).
    pub header: bool,
    /// No notes on stderr (dtype conversions).
    pub quiet: bool,
}

fn input_err(path: &Path, msg: impl Into<String>) -> CliError {
    CliError::Input {
        path: path.to_path_buf(),
        line: None,
        msg: msg.into(),
    }
}

fn read_bytes(path: &Path) -> Result<Vec<u8>, CliError> {
    if !path.exists() {
        return Err(input_err(path, "file not found"));
    }
    fs::read(path).map_err(|e| input_err(path, e.to_string()))
}

/// Parses `.npy` bytes of any float, integer or bool dtype into `f64`, returning the source
/// dtype name when a conversion happened.
fn npy_as_f64<D: ndarray::Dimension>(bytes: &[u8]) -> Result<(ndarray::Array<f64, D>, Option<&'static str>), String> {
    use ndarray_npy::{ReadNpyError, ReadNpyExt};
    let first = match ndarray::Array::<f64, D>::read_npy(bytes) {
        Ok(a) => return Ok((a, None)),
        Err(e) => e,
    };
    if !matches!(first, ReadNpyError::WrongDescriptor(_)) {
        return Err(first.to_string());
    }
    macro_rules! try_dtype {
        ($t:ty, $name:expr) => {
            if let Ok(a) = ndarray::Array::<$t, D>::read_npy(bytes) {
                return Ok((a.mapv(|v| v as f64), Some($name)));
            }
        };
    }
    try_dtype!(f32, "float32");
    try_dtype!(i64, "int64");
    try_dtype!(i32, "int32");
    try_dtype!(i16, "int16");
    try_dtype!(i8, "int8");
    try_dtype!(u64, "uint64");
    try_dtype!(u32, "uint32");
    try_dtype!(u16, "uint16");
    try_dtype!(u8, "uint8");
    if let Ok(a) = ndarray::Array::<bool, D>::read_npy(bytes) {
        return Ok((a.mapv(|v| if v { 1.0 } else { 0.0 }), Some("bool")));
    }
    Err(format!(
        "{first} (supported: float64, float32, signed and unsigned integers, bool)"
    ))
}

fn check_finite_2d(path: &Path, a: &Array2<f64>) -> Result<(), CliError> {
    if let Some(((i, j), v)) = a.indexed_iter().find(|(_, v)| !v.is_finite()) {
        return Err(input_err(path, format!("non-finite value {v} at row {i}, column {j}")));
    }
    Ok(())
}

/// Reads a 2-D `.npy` of any numeric dtype as `f64` (a conversion is said once on stderr).
pub fn read_npy_matrix(path: &Path, opts: &ReadOptions) -> Result<Array2<f64>, CliError> {
    let bytes = read_bytes(path)?;
    let (a, from) =
        npy_as_f64::<ndarray::Ix2>(&bytes).map_err(|e| input_err(path, format!("not a 2-D .npy array: {e}")))?;
    if let (Some(t), false) = (from, opts.quiet) {
        eprintln!("ksvd: note: {} holds {t}; converted to float64", path.display());
    }
    check_finite_2d(path, &a)?;
    if a.nrows() == 0 || a.ncols() == 0 {
        return Err(input_err(path, format!("empty array of shape {:?}", a.dim())));
    }
    Ok(a)
}

/// Reads CSV/whitespace text; with `header` the first non-comment line is skipped.
pub fn read_text_matrix(path: &Path, header: bool) -> Result<Array2<f64>, CliError> {
    read_text_or_npy(path, header)
}

/// Reads sparse samples in LIBSVM/SVMlight format: `label idx:val idx:val ...` per line,
/// 1-based feature indices (labels and `qid:` are ignored). The dimension is the largest index.
pub fn read_libsvm(path: &Path) -> Result<CsrMatrix, CliError> {
    let text = fs::read_to_string(path).map_err(|e| input_err(path, e.to_string()))?;
    let mut trip: Vec<(usize, usize, f64)> = Vec::new();
    let mut n = 0usize;
    let mut dim = 0usize;
    for (lineno, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let err = |msg: String| CliError::Input {
            path: path.to_path_buf(),
            line: Some(lineno + 1),
            msg,
        };
        for tok in line.split_whitespace().skip(1) {
            let Some((k, v)) = tok.split_once(':') else {
                return Err(err(format!("`{tok}` is not `index:value`")));
            };
            if k == "qid" {
                continue;
            }
            let k: usize = k.parse().map_err(|_| err(format!("`{k}` is not a feature index")))?;
            if k == 0 {
                return Err(err("feature index 0: LIBSVM indices start at 1".into()));
            }
            let v: f64 = v.parse().map_err(|_| err(format!("`{v}` is not a number")))?;
            if !v.is_finite() {
                return Err(err(format!("non-finite value {v}")));
            }
            dim = dim.max(k);
            if v != 0.0 {
                trip.push((n, k - 1, v));
            }
        }
        n += 1;
    }
    if n == 0 || dim == 0 {
        return Err(input_err(path, "no samples"));
    }
    CsrMatrix::from_triplets(n, dim, trip).map_err(|e| input_err(path, e.to_string()))
}

/// The entries of a zip archive (stored or deflated), by name. Enough for `.npz` files written
/// by numpy/scipy, including their ZIP64 records.
fn unzip(path: &Path, bytes: &[u8]) -> Result<Vec<(String, Vec<u8>)>, CliError> {
    let bad = |what: &str| input_err(path, format!("not a valid .npz (zip) file: {what}"));
    let u16_at = |o: usize| -> Result<u64, CliError> {
        bytes
            .get(o..o + 2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]) as u64)
            .ok_or_else(|| bad("truncated"))
    };
    let u32_at = |o: usize| -> Result<u64, CliError> {
        bytes
            .get(o..o + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as u64)
            .ok_or_else(|| bad("truncated"))
    };
    let u64_at = |o: usize| -> Result<u64, CliError> {
        bytes
            .get(o..o + 8)
            .map(|b| u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]))
            .ok_or_else(|| bad("truncated"))
    };
    let min = bytes.len().saturating_sub(22 + 65_535);
    let eocd = (min..=bytes.len().saturating_sub(22))
        .rev()
        .find(|&o| bytes[o..].starts_with(&[0x50, 0x4b, 0x05, 0x06]))
        .ok_or_else(|| bad("no end of central directory"))?;
    let (mut entries, mut cd) = (u16_at(eocd + 10)?, u32_at(eocd + 16)?);
    if cd == 0xFFFF_FFFF || entries == 0xFFFF {
        let loc = eocd.checked_sub(20).ok_or_else(|| bad("no zip64 locator"))?;
        if u32_at(loc)? != 0x0706_4b50 {
            return Err(bad("no zip64 locator"));
        }
        let z = u64_at(loc + 8)? as usize;
        if u32_at(z)? != 0x0606_4b50 {
            return Err(bad("bad zip64 end record"));
        }
        entries = u64_at(z + 32)?;
        cd = u64_at(z + 48)?;
    }
    let mut out = Vec::new();
    let mut p = cd as usize;
    for _ in 0..entries {
        if u32_at(p)? != 0x0201_4b50 {
            return Err(bad("bad central directory entry"));
        }
        let method = u16_at(p + 10)?;
        let (mut csize, mut usize_) = (u32_at(p + 20)?, u32_at(p + 24)?);
        let (nlen, elen, clen) = (
            u16_at(p + 28)? as usize,
            u16_at(p + 30)? as usize,
            u16_at(p + 32)? as usize,
        );
        let mut off = u32_at(p + 42)?;
        let name =
            String::from_utf8_lossy(bytes.get(p + 46..p + 46 + nlen).ok_or_else(|| bad("truncated"))?).to_string();
        // ZIP64 extra field: the 0xFFFFFFFF fields, in order uncompressed, compressed, offset.
        let mut e = p + 46 + nlen;
        let eend = e + elen;
        while e + 4 <= eend {
            let (id, len) = (u16_at(e)?, u16_at(e + 2)? as usize);
            if id == 1 {
                let mut q = e + 4;
                if usize_ == 0xFFFF_FFFF {
                    usize_ = u64_at(q)?;
                    q += 8;
                }
                if csize == 0xFFFF_FFFF {
                    csize = u64_at(q)?;
                    q += 8;
                }
                if off == 0xFFFF_FFFF {
                    off = u64_at(q)?;
                }
            }
            e += 4 + len;
        }
        let lo = off as usize;
        if u32_at(lo)? != 0x0403_4b50 {
            return Err(bad("bad local header"));
        }
        let start = lo + 30 + u16_at(lo + 26)? as usize + u16_at(lo + 28)? as usize;
        let data = bytes
            .get(start..start.saturating_add(csize as usize))
            .ok_or_else(|| bad("truncated entry"))?;
        let content = match method {
            0 => data.to_vec(),
            8 => miniz_oxide::inflate::decompress_to_vec_with_limit(data, usize_ as usize)
                .map_err(|_| bad(&format!("cannot inflate {name}")))?,
            m => {
                return Err(bad(&format!(
                    "{name} uses compression method {m} (expected stored or deflate)"
                )))
            }
        };
        out.push((name, content));
        p += 46 + nlen + elen + clen;
    }
    Ok(out)
}

/// Reads a scipy sparse CSR matrix saved with `scipy.sparse.save_npz` (a zip of `indptr.npy`,
/// `indices.npy`, `data.npy`, `shape.npy`, `format.npy`; compressed or not). Duplicate entries
/// are summed and column indices sorted.
pub fn read_npz_csr(path: &Path) -> Result<CsrMatrix, CliError> {
    let bytes = read_bytes(path)?;
    let entries = unzip(path, &bytes)?;
    let get = |name: &str| {
        entries
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, b)| b.as_slice())
            .ok_or_else(|| {
                input_err(
                    path,
                    format!("no {name} in the archive (expected scipy.sparse.save_npz output)"),
                )
            })
    };
    let format = get("format.npy")?;
    // `format` is a bytes (`|S3`) or unicode (`<U3`, UTF-32) scalar.
    let utf32: Vec<u8> = b"csr".iter().flat_map(|&c| [c, 0, 0, 0]).collect();
    if !format.windows(3).any(|w| w == b"csr") && !format.windows(12).any(|w| w == utf32.as_slice()) {
        return Err(input_err(path, "only CSR matrices are supported (save a csr_matrix)"));
    }
    let arr1 = |name: &str| -> Result<ndarray::Array1<f64>, CliError> {
        npy_as_f64::<ndarray::Ix1>(get(name)?)
            .map(|(a, _)| a)
            .map_err(|e| input_err(path, format!("{name}: {e}")))
    };
    let as_index = |name: &str, a: ndarray::Array1<f64>| -> Result<Vec<usize>, CliError> {
        a.iter()
            .map(|&v| {
                if v >= 0.0 && v.fract() == 0.0 && v < 2f64.powi(52) {
                    Ok(v as usize)
                } else {
                    Err(input_err(path, format!("{name} holds {v}, not an index")))
                }
            })
            .collect()
    };
    let shape = as_index("shape.npy", arr1("shape.npy")?)?;
    if shape.len() != 2 {
        return Err(input_err(
            path,
            format!("shape.npy has {} entries, expected 2", shape.len()),
        ));
    }
    let indptr = as_index("indptr.npy", arr1("indptr.npy")?)?;
    let indices = as_index("indices.npy", arr1("indices.npy")?)?;
    let data = arr1("data.npy")?;
    if indptr.len() != shape[0] + 1 || indices.len() != data.len() || indptr.last() != Some(&indices.len()) {
        return Err(input_err(
            path,
            format!(
                "inconsistent CSR arrays: shape {:?}, {} indptr, {} indices, {} values",
                shape,
                indptr.len(),
                indices.len(),
                data.len()
            ),
        ));
    }
    if let Some(v) = data.iter().find(|v| !v.is_finite()) {
        return Err(input_err(path, format!("non-finite value {v}")));
    }
    let mut trip = Vec::with_capacity(data.len());
    for i in 0..shape[0] {
        let (a, b) = (indptr[i], indptr[i + 1]);
        if a > b || b > indices.len() {
            return Err(input_err(path, format!("indptr decreases at row {i}")));
        }
        for k in a..b {
            trip.push((i, indices[k], data[k]));
        }
    }
    CsrMatrix::from_triplets(shape[0], shape[1], trip).map_err(|e| input_err(path, e.to_string()))
}

/// Reads samples: `.npy` (dense, any numeric dtype), `.npz` (scipy CSR, sparse),
/// `.libsvm`/`.svm` (sparse), anything else CSV/whitespace text (dense).
pub fn read_samples(path: &Path, opts: &ReadOptions) -> Result<ksvd_kernels::Samples, CliError> {
    use ksvd_kernels::Samples;
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    if !path.exists() {
        return Err(input_err(path, "file not found"));
    }
    let s = match ext.as_str() {
        "npy" => Samples::dense(read_npy_matrix(path, opts)?),
        "npz" => Samples::sparse(read_npz_csr(path)?),
        "libsvm" | "svm" => Samples::sparse(read_libsvm(path)?),
        _ => Samples::dense(read_text_matrix(path, opts.header)?),
    };
    s.map_err(|e| input_err(path, e.to_string()))
}

/// Sparse samples padded with empty features to dimension `dim` (LIBSVM files only know their
/// largest index). Dense samples and larger dimensions are returned unchanged.
pub fn pad_dim(s: ksvd_kernels::Samples, dim: usize) -> ksvd_kernels::Samples {
    use ksvd_kernels::Samples;
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

/// Reads a list of 0-based indices: `.npy` (1-D, integer) or text (one per line, or separated
/// by commas/whitespace).
pub fn read_indices(path: &Path, opts: &ReadOptions) -> Result<Vec<usize>, CliError> {
    let bytes = read_bytes(path)?;
    let values: Vec<f64> = if path.extension().is_some_and(|e| e == "npy") {
        let (a, _) =
            npy_as_f64::<ndarray::Ix1>(&bytes).map_err(|e| input_err(path, format!("not a 1-D .npy array: {e}")))?;
        a.to_vec()
    } else {
        let text = String::from_utf8(bytes).map_err(|_| input_err(path, "not UTF-8 text"))?;
        let mut v = Vec::new();
        for (lineno, line) in text.lines().enumerate().skip(usize::from(opts.header)) {
            let line = line.split('#').next().unwrap_or("");
            for tok in line
                .split(|c: char| c == ',' || c.is_whitespace())
                .filter(|t| !t.is_empty())
            {
                v.push(tok.parse::<f64>().map_err(|_| CliError::Input {
                    path: path.to_path_buf(),
                    line: Some(lineno + 1),
                    msg: format!("`{tok}` is not an index"),
                })?);
            }
        }
        v
    };
    if values.is_empty() {
        return Err(input_err(path, "no indices"));
    }
    values
        .into_iter()
        .map(|v| {
            if v >= 0.0 && v.fract() == 0.0 && v < 2f64.powi(52) {
                Ok(v as usize)
            } else {
                Err(input_err(path, format!("{v} is not a 0-based index")))
            }
        })
        .collect()
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

fn npy_bytes<D: ndarray::Dimension>(path: &Path, a: &ndarray::Array<f64, D>) -> Result<Vec<u8>, CliError> {
    let mut buf = Vec::new();
    ndarray_npy::WriteNpyExt::write_npy(&a.as_standard_layout().to_owned(), &mut buf).map_err(|e| {
        CliError::Output {
            path: path.to_path_buf(),
            msg: e.to_string(),
        }
    })?;
    Ok(buf)
}

/// The files of a matrix in `format`, as `(path, bytes)` (written later, atomically).
pub fn matrix_files(
    dir: &Path,
    name: &str,
    a: &Array2<f64>,
    format: Format,
) -> Result<Vec<(PathBuf, Vec<u8>)>, CliError> {
    let mut out = Vec::new();
    if format != Format::Npy {
        out.push((
            dir.join(format!("{name}.csv")),
            csv_bytes(a.outer_iter().map(|r| r.to_vec())),
        ));
    }
    if format != Format::Csv {
        let p = dir.join(format!("{name}.npy"));
        let b = npy_bytes(&p, a)?;
        out.push((p, b));
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
        out.push((dir.join(format!("{name}.csv")), csv_bytes(v.iter().map(|x| vec![*x]))));
    }
    if format != Format::Csv {
        let p = dir.join(format!("{name}.npy"));
        let b = npy_bytes(&p, v)?;
        out.push((p, b));
    }
    Ok(out)
}

/// Creates `dir` and writes every file atomically (each through a temporary file and a rename),
/// after everything has been computed: a failed run leaves no partial file behind.
pub fn write_all(dir: &Path, files: &[(PathBuf, Vec<u8>)]) -> Result<(), CliError> {
    fs::create_dir_all(dir).map_err(|e| CliError::Output {
        path: dir.to_path_buf(),
        msg: e.to_string(),
    })?;
    for (p, b) in files {
        atomic_write(p, b)?;
    }
    Ok(())
}
