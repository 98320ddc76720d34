//! Reading matrices (CSV, `.npy`) and edge lists; writing results atomically.
use crate::CliError;
use ksvd_linalg::CsrMatrix;
use ndarray::{Array1, Array2};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Reads a dense matrix: `.npy` (float64, 2-D) or CSV/whitespace text without a header.
pub fn read_matrix(path: &Path) -> Result<Array2<f64>, CliError> {
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
    for (lineno, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
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
            msg: format!("`{tok}` is not a number (CSV files must have no header)"),
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

/// Reads an edge list, one arc `src dst` per line (whitespace or comma separated; `#` comments).
/// Integer ids are used as indices directly; otherwise nodes are numbered by first appearance.
pub fn read_edges(path: &Path) -> Result<EdgeList, CliError> {
    let text = fs::read_to_string(path).map_err(|e| CliError::Input {
        path: path.to_path_buf(),
        line: None,
        msg: e.to_string(),
    })?;
    let mut pairs: Vec<(String, String)> = Vec::new();
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
        pairs.push((toks[0].to_string(), toks[1].to_string()));
    }
    if pairs.is_empty() {
        return Err(CliError::Input {
            path: path.to_path_buf(),
            line: None,
            msg: "no edges".into(),
        });
    }
    let numeric: Option<Vec<(usize, usize)>> = pairs
        .iter()
        .map(|(a, b)| Some((a.parse::<usize>().ok()?, b.parse::<usize>().ok()?)))
        .collect();
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
            let e: Vec<(usize, usize)> = pairs.iter().map(|(a, b)| (id(a), id(b))).collect();
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

/// Writes `bytes` to `path` atomically: a temporary file in the same directory, synced, then
/// renamed over the target. An interrupted run never leaves a half-written file.
pub fn atomic_write(path: &Path, bytes: &[u8]) -> Result<(), CliError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_else(|| "out".into());
    let tmp: PathBuf = dir.join(format!(".{name}.tmp{}", std::process::id()));
    let io = |e: std::io::Error| CliError::Output {
        path: path.to_path_buf(),
        msg: e.to_string(),
    };
    let mut f = fs::File::create(&tmp).map_err(io)?;
    f.write_all(bytes).map_err(io)?;
    f.sync_all().map_err(io)?;
    drop(f);
    fs::rename(&tmp, path).map_err(|e| {
        let _ = fs::remove_file(&tmp);
        io(e)
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
