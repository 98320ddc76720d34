//! Sparse samples in LIBSVM / svmlight text format (`label idx:val idx:val ...`), whole-file and
//! chunked streaming readers, and a LIBFFM (`label field:feature:value`) reader.
//!
//! Format accepted: one sample per line; the label is a real number (`+1`, `-1`, `1.0`, `0`);
//! features are `index:value` with 1-based indices (0-based with
//! [`LibsvmOptions::zero_based`]), in any order but without repeats; values may use `e`/`E`
//! exponents. Blank lines, `#` comments (whole-line or trailing) and `qid:` tokens are ignored.
//! Explicit zero values are kept as stored entries. Files ending in `.bz2` are decompressed on
//! the fly.
use std::path::{Path, PathBuf};

use ksvd_linalg::CsrMatrix;

use crate::error::{DatasetError, Result};
use crate::io::LineReader;

/// Reading options.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LibsvmOptions {
    /// Number of columns. `None`: the largest index in the file. A larger value pads (a9a.t never
    /// uses feature 123, so pass 123 to match a9a); an index beyond it is a parse error.
    pub n_features: Option<usize>,
    /// Indices start at 0 instead of LIBSVM's 1.
    pub zero_based: bool,
}

impl LibsvmOptions {
    /// Fixes the number of feature columns.
    pub fn n_features(mut self, n: usize) -> Self {
        self.n_features = Some(n);
        self
    }

    /// Declares 0-based feature indices.
    pub fn zero_based(mut self, yes: bool) -> Self {
        self.zero_based = yes;
        self
    }
}

/// A sparse sample: `features` (rows = samples, columns = 0-based feature index) and one label per row.
#[derive(Debug, Clone, PartialEq)]
pub struct LibsvmData {
    /// Registry name or the file name.
    pub name: String,
    /// Samples x features.
    pub features: CsrMatrix,
    /// Label of every row, as written (e.g. `-1.0` / `1.0`).
    pub labels: Vec<f64>,
}

/// Counts for dataset tables.
#[derive(Debug, Clone, PartialEq)]
pub struct LibsvmStats {
    /// Number of samples.
    pub rows: usize,
    /// Number of feature columns.
    pub features: usize,
    /// Stored entries (explicit zeros included).
    pub nnz: usize,
    /// 1 + the largest column that holds an entry (0 when empty).
    pub max_used_feature: usize,
    /// `(label, count)` sorted by label.
    pub label_counts: Vec<(f64, usize)>,
}

impl LibsvmData {
    /// Sizes and label balance.
    pub fn stats(&self) -> LibsvmStats {
        let mut labels = self.labels.clone();
        labels.sort_unstable_by(f64::total_cmp);
        let mut label_counts: Vec<(f64, usize)> = Vec::new();
        for l in labels {
            match label_counts.last_mut() {
                Some((v, c)) if *v == l => *c += 1,
                _ => label_counts.push((l, 1)),
            }
        }
        LibsvmStats {
            rows: self.features.nrows(),
            features: self.features.ncols(),
            nnz: self.features.nnz(),
            max_used_feature: self.features.indices().iter().max().map_or(0, |m| m + 1),
            label_counts,
        }
    }
}

/// Parses one line; `None` for blank and comment lines. Entries come back sorted by index.
/// A parsed sample: label and `(column, value)` entries sorted by column.
type Sample = (f64, Vec<(usize, f64)>);

fn parse_line(path: &Path, line_no: usize, line: &str, zero_based: bool) -> Result<Option<Sample>> {
    let body = line.split('#').next().unwrap_or("").trim();
    if body.is_empty() {
        return Ok(None);
    }
    let mut tokens = body.split_whitespace();
    let label_text = tokens.next().unwrap_or("");
    let label = label_text
        .parse::<f64>()
        .ok()
        .filter(|x| x.is_finite())
        .ok_or_else(|| DatasetError::parse(path, line_no, format!("label `{label_text}` is not a number")))?;
    let mut entries = Vec::new();
    for tok in tokens {
        if tok.starts_with("qid:") {
            continue;
        }
        let Some((i, v)) = tok.split_once(':') else {
            return Err(DatasetError::parse(
                path,
                line_no,
                format!("expected `index:value`, found `{tok}`"),
            ));
        };
        let idx = i.parse::<usize>().map_err(|_| {
            DatasetError::parse(
                path,
                line_no,
                format!("feature index `{i}` is not a non-negative integer"),
            )
        })?;
        let col = if zero_based {
            idx
        } else {
            idx.checked_sub(1).ok_or_else(|| {
                DatasetError::parse(
                    path,
                    line_no,
                    "feature index 0: LIBSVM indices start at 1 (0-based files: LibsvmOptions::zero_based)",
                )
            })?
        };
        let val = v
            .parse::<f64>()
            .map_err(|_| DatasetError::parse(path, line_no, format!("value `{v}` of feature {idx} is not a number")))?;
        if !val.is_finite() {
            return Err(DatasetError::parse(
                path,
                line_no,
                format!("non-finite value {val} of feature {idx}"),
            ));
        }
        entries.push((col, val));
    }
    entries.sort_unstable_by_key(|e| e.0);
    if let Some(w) = entries.windows(2).find(|w| w[0].0 == w[1].0) {
        let shown = if zero_based { w[0].0 } else { w[0].0 + 1 };
        return Err(DatasetError::parse(
            path,
            line_no,
            format!("feature index {shown} appears twice"),
        ));
    }
    Ok(Some((label, entries)))
}

/// Accumulates rows into CSR arrays.
#[derive(Default)]
struct CsrBuilder {
    indptr: Vec<usize>,
    indices: Vec<usize>,
    data: Vec<f64>,
    labels: Vec<f64>,
    max_col: Option<usize>,
}

impl CsrBuilder {
    fn new() -> Self {
        Self {
            indptr: vec![0],
            ..Self::default()
        }
    }

    fn push(&mut self, label: f64, entries: &[(usize, f64)]) {
        for &(j, v) in entries {
            self.indices.push(j);
            self.data.push(v);
        }
        if let Some(&(j, _)) = entries.last() {
            self.max_col = Some(self.max_col.map_or(j, |m| m.max(j)));
        }
        self.indptr.push(self.indices.len());
        self.labels.push(label);
    }

    fn rows(&self) -> usize {
        self.labels.len()
    }

    fn finish(self, path: &Path, ncols: usize) -> Result<(CsrMatrix, Vec<f64>)> {
        let n = self.labels.len();
        let m = CsrMatrix::try_new(n, ncols, self.indptr, self.indices, self.data)
            .map_err(|e| DatasetError::matrix(path, e))?;
        Ok((m, self.labels))
    }
}

fn check_bound(
    path: &Path,
    line_no: usize,
    entries: &[(usize, f64)],
    n_features: Option<usize>,
    zero_based: bool,
) -> Result<()> {
    if let (Some(n), Some(&(j, _))) = (n_features, entries.last()) {
        if j >= n {
            let shown = if zero_based { j } else { j + 1 };
            return Err(DatasetError::parse(
                path,
                line_no,
                format!("feature index {shown} exceeds the {n} declared features"),
            ));
        }
    }
    Ok(())
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned())
}

/// Reads a whole LIBSVM file (plain or `.bz2`).
pub fn read_libsvm(path: &Path, options: &LibsvmOptions) -> Result<LibsvmData> {
    let mut r = LineReader::open(path)?;
    let mut b = CsrBuilder::new();
    while let Some((line_no, line)) = r.next_line()? {
        if let Some((label, entries)) = parse_line(path, line_no, line, options.zero_based)? {
            check_bound(path, line_no, &entries, options.n_features, options.zero_based)?;
            b.push(label, &entries);
        }
    }
    let ncols = options.n_features.unwrap_or(b.max_col.map_or(0, |m| m + 1));
    let (features, labels) = b.finish(path, ncols)?;
    Ok(LibsvmData {
        name: file_name(path),
        features,
        labels,
    })
}

/// One chunk of a streamed LIBSVM file.
#[derive(Debug, Clone, PartialEq)]
pub struct LibsvmChunk {
    /// Index (0-based, over the whole file) of the chunk's first sample.
    pub first_row: usize,
    /// The chunk's samples; every chunk has the same number of columns.
    pub features: CsrMatrix,
    /// Labels of the chunk's samples.
    pub labels: Vec<f64>,
}

/// Streams a LIBSVM file as chunks of at most `chunk_rows` samples, holding one chunk in memory
/// at a time. Created by [`libsvm_chunks`]; yields `Err` once and then stops on a bad line.
pub struct LibsvmChunks {
    reader: LineReader,
    path: PathBuf,
    chunk_rows: usize,
    n_features: usize,
    zero_based: bool,
    next_row: usize,
    done: bool,
}

impl std::fmt::Debug for LibsvmChunks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LibsvmChunks")
            .field("path", &self.path)
            .field("chunk_rows", &self.chunk_rows)
            .field("n_features", &self.n_features)
            .field("next_row", &self.next_row)
            .finish()
    }
}

impl LibsvmChunks {
    /// Number of columns of every chunk.
    pub fn n_features(&self) -> usize {
        self.n_features
    }

    fn next_chunk(&mut self) -> Result<Option<LibsvmChunk>> {
        let mut b = CsrBuilder::new();
        while b.rows() < self.chunk_rows {
            let Some((line_no, line)) = self.reader.next_line()? else {
                break;
            };
            if let Some((label, entries)) = parse_line(&self.path, line_no, line, self.zero_based)? {
                check_bound(&self.path, line_no, &entries, Some(self.n_features), self.zero_based)?;
                b.push(label, &entries);
            }
        }
        if b.rows() == 0 {
            return Ok(None);
        }
        let first_row = self.next_row;
        self.next_row += b.rows();
        let (features, labels) = b.finish(&self.path, self.n_features)?;
        Ok(Some(LibsvmChunk {
            first_row,
            features,
            labels,
        }))
    }
}

impl Iterator for LibsvmChunks {
    type Item = Result<LibsvmChunk>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.next_chunk() {
            Ok(Some(c)) => Some(Ok(c)),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

/// Streams `path` in chunks of at most `chunk_rows` samples (the building block of out-of-core
/// methods). Without [`LibsvmOptions::n_features`] the file is first scanned once (streaming,
/// constant memory) to find the largest feature index, so that all chunks share one width.
pub fn libsvm_chunks(path: &Path, chunk_rows: usize, options: &LibsvmOptions) -> Result<LibsvmChunks> {
    if chunk_rows == 0 {
        return Err(DatasetError::InvalidArgument {
            what: "chunk_rows",
            message: "must be at least 1".into(),
        });
    }
    let n_features = match options.n_features {
        Some(n) => n,
        None => {
            let mut r = LineReader::open(path)?;
            let mut max_col: Option<usize> = None;
            while let Some((line_no, line)) = r.next_line()? {
                if let Some((_, entries)) = parse_line(path, line_no, line, options.zero_based)? {
                    if let Some(&(j, _)) = entries.last() {
                        max_col = Some(max_col.map_or(j, |m| m.max(j)));
                    }
                }
            }
            max_col.map_or(0, |m| m + 1)
        }
    };
    Ok(LibsvmChunks {
        reader: LineReader::open(path)?,
        path: path.to_path_buf(),
        chunk_rows,
        n_features,
        zero_based: options.zero_based,
        next_row: 0,
        done: false,
    })
}

/// How LIBFFM `field:feature:value` tokens become LIBSVM columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FfmColumns {
    /// Column = `field * stride + feature` (no collisions when every feature id is `< stride`);
    /// `n_fields * stride` columns.
    FieldOffset {
        /// Feature ids per field.
        stride: usize,
        /// Number of fields.
        n_fields: usize,
    },
    /// Column = `feature`, the field is dropped; `n_features` columns. Tokens of one row that map
    /// to the same column are summed.
    DropField {
        /// Number of columns.
        n_features: usize,
    },
}

/// Reads a LIBFFM file (`label field:feature:value ...`, 0-based fields and features) into a
/// LIBSVM-style sparse sample, mapping (field, feature) to a column as `columns` says.
pub fn read_libffm(path: &Path, columns: FfmColumns) -> Result<LibsvmData> {
    let mut r = LineReader::open(path)?;
    let mut b = CsrBuilder::new();
    let ncols = match columns {
        FfmColumns::FieldOffset { stride, n_fields } => {
            stride
                .checked_mul(n_fields)
                .ok_or_else(|| DatasetError::InvalidArgument {
                    what: "columns",
                    message: format!("{stride} x {n_fields} overflows"),
                })?
        }
        FfmColumns::DropField { n_features } => n_features,
    };
    while let Some((line_no, line)) = r.next_line()? {
        let body = line.split('#').next().unwrap_or("").trim();
        if body.is_empty() {
            continue;
        }
        let mut tokens = body.split_whitespace();
        let lt = tokens.next().unwrap_or("");
        let label = lt
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite())
            .ok_or_else(|| DatasetError::parse(path, line_no, format!("label `{lt}` is not a number")))?;
        let mut entries: Vec<(usize, f64)> = Vec::new();
        for tok in tokens {
            let parts: Vec<&str> = tok.split(':').collect();
            let [f, j, v] = parts.as_slice() else {
                return Err(DatasetError::parse(
                    path,
                    line_no,
                    format!("expected `field:feature:value`, found `{tok}`"),
                ));
            };
            let bad = |what: &str| DatasetError::parse(path, line_no, format!("{what} in `{tok}`"));
            let field = f
                .parse::<usize>()
                .map_err(|_| bad("field is not a non-negative integer"))?;
            let feat = j
                .parse::<usize>()
                .map_err(|_| bad("feature is not a non-negative integer"))?;
            let val = v
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .ok_or_else(|| bad("value is not a number"))?;
            let col = match columns {
                FfmColumns::FieldOffset { stride, n_fields } => {
                    if feat >= stride || field >= n_fields {
                        return Err(bad(&format!("field >= {n_fields} or feature >= {stride}")));
                    }
                    field * stride + feat
                }
                FfmColumns::DropField { n_features } => {
                    if feat >= n_features {
                        return Err(bad(&format!("feature >= {n_features}")));
                    }
                    feat
                }
            };
            entries.push((col, val));
        }
        entries.sort_unstable_by_key(|e| e.0);
        let mut merged: Vec<(usize, f64)> = Vec::with_capacity(entries.len());
        for (c, v) in entries {
            match merged.last_mut() {
                Some((lc, lv)) if *lc == c => *lv += v,
                _ => merged.push((c, v)),
            }
        }
        b.push(label, &merged);
    }
    let (features, labels) = b.finish(path, ncols)?;
    Ok(LibsvmData {
        name: file_name(path),
        features,
        labels,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    const TOY: &str = "+1 3:1 1:0.5 \n-1 2:9.5E-01 # comment\n\n# whole-line comment\n1.0 qid:3 4:0.0\n-1\n";

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    #[test]
    fn parses_labels_indices_comments_and_explicit_zeros() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "toy.svm", TOY);
        let d = read_libsvm(&p, &LibsvmOptions::default()).unwrap();
        assert_eq!(d.labels, vec![1.0, -1.0, 1.0, -1.0]);
        assert_eq!(d.features.shape(), (4, 4));
        assert_eq!(d.features.row(0), (&[0usize, 2][..], &[0.5, 1.0][..]));
        assert_eq!(d.features.row(1), (&[1usize][..], &[0.95][..]));
        assert_eq!(
            d.features.row(2),
            (&[3usize][..], &[0.0][..]),
            "explicit zeros are kept"
        );
        assert_eq!(d.stats().nnz, 4);
        assert_eq!(d.stats().label_counts, vec![(-1.0, 2), (1.0, 2)]);
        let wide = read_libsvm(&p, &LibsvmOptions::default().n_features(10)).unwrap();
        assert_eq!(wide.features.ncols(), 10);
        let zb = read_libsvm(&p, &LibsvmOptions::default().zero_based(true)).unwrap();
        assert_eq!(zb.features.row(0).0, &[1, 3]);
    }

    #[test]
    fn corrupt_lines_are_parse_errors() {
        let dir = tempfile::tempdir().unwrap();
        for (text, line, needle) in [
            ("1 1:1\nx 2:1\n", 2, "label"),
            ("1 1:1\n1 0:1\n", 2, "index 0"),
            ("1 2:1 2:3\n", 1, "twice"),
            ("1 1:1\n\n1 3:abc\n", 3, "value"),
            ("1 1-1\n", 1, "index:value"),
            ("1 1:nan\n", 1, "finite"),
        ] {
            let p = write(dir.path(), "bad.svm", text);
            match read_libsvm(&p, &LibsvmOptions::default()) {
                Err(e @ DatasetError::Parse { line: l, .. }) => {
                    assert_eq!(l, line, "{text}");
                    assert!(e.to_string().contains(needle), "{e}");
                }
                other => panic!("{text}: {other:?}"),
            }
        }
        let p = write(dir.path(), "wide.svm", "1 5:1\n");
        assert!(matches!(
            read_libsvm(&p, &LibsvmOptions::default().n_features(4)),
            Err(DatasetError::Parse { .. })
        ));
        assert!(matches!(
            read_libsvm(&dir.path().join("absent.svm"), &LibsvmOptions::default()),
            Err(DatasetError::MissingFile { .. })
        ));
    }

    #[test]
    fn streaming_matches_whole_file_for_every_chunk_size() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "toy.svm", TOY);
        let whole = read_libsvm(&p, &LibsvmOptions::default()).unwrap();
        for k in 1..=5 {
            let chunks: Vec<_> = libsvm_chunks(&p, k, &LibsvmOptions::default())
                .unwrap()
                .collect::<Result<_>>()
                .unwrap();
            assert_eq!(chunks.len(), 4usize.div_ceil(k));
            let mut row = 0;
            for c in &chunks {
                assert_eq!(c.first_row, row);
                assert!(c.features.nrows() <= k);
                assert_eq!(c.features.ncols(), whole.features.ncols());
                for i in 0..c.features.nrows() {
                    assert_eq!(c.features.row(i), whole.features.row(row + i));
                    assert_eq!(c.labels[i], whole.labels[row + i]);
                }
                row += c.features.nrows();
            }
            assert_eq!(row, 4);
        }
        assert!(matches!(
            libsvm_chunks(&p, 0, &LibsvmOptions::default()),
            Err(DatasetError::InvalidArgument { .. })
        ));
        let bad = write(dir.path(), "bad.svm", "1 1:1\n1 1:1\n1 x\n");
        let mut it = libsvm_chunks(&bad, 2, &LibsvmOptions::default().n_features(3)).unwrap();
        assert!(it.next().unwrap().is_ok());
        assert!(matches!(it.next(), Some(Err(DatasetError::Parse { line: 3, .. }))));
        assert!(it.next().is_none());
    }

    #[test]
    fn libffm_columns() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "t.ffm", "1 0:5:0.5 2:5:0.25 1:7:1\n0 1:0:2\n");
        let d = read_libffm(
            &p,
            FfmColumns::FieldOffset {
                stride: 10,
                n_fields: 3,
            },
        )
        .unwrap();
        assert_eq!(d.features.shape(), (2, 30));
        assert_eq!(d.features.row(0), (&[5usize, 17, 25][..], &[0.5, 1.0, 0.25][..]));
        let d = read_libffm(&p, FfmColumns::DropField { n_features: 8 }).unwrap();
        assert_eq!(
            d.features.row(0),
            (&[5usize, 7][..], &[0.75, 1.0][..]),
            "collisions are summed"
        );
        let bad = write(dir.path(), "b.ffm", "1 0:5\n");
        assert!(matches!(
            read_libffm(&bad, FfmColumns::DropField { n_features: 8 }),
            Err(DatasetError::Parse { line: 1, .. })
        ));
    }

    proptest::proptest! {
        #[test]
        fn parsers_never_panic(text in "\\PC{0,60}") {
            let p = Path::new("fuzz.svm");
            let _ = parse_line(p, 1, &text, false);
            let _ = parse_line(p, 1, &text, true);
        }

        #[test]
        fn lines_round_trip(label in -5i32..5, cols in proptest::collection::btree_set(1usize..50, 0..10)) {
            let line: String = std::iter::once(label.to_string())
                .chain(cols.iter().map(|c| format!("{c}:{}", *c as f64 / 4.0)))
                .collect::<Vec<_>>()
                .join(" ");
            let (l, e) = parse_line(Path::new("x"), 1, &line, false).unwrap().unwrap();
            proptest::prop_assert_eq!(l, f64::from(label));
            let back: Vec<usize> = e.iter().map(|x| x.0 + 1).collect();
            proptest::prop_assert_eq!(back, cols.into_iter().collect::<Vec<_>>());
        }
    }
}
