//! Shared helpers: small seeded LIBSVM files with a planted linear rule, written to a temporary
//! folder, and the same files cut into parts.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(dead_code)]
use std::io::Write;
use std::path::{Path, PathBuf};

use ksvd_linalg::random::rng_from_seed;
use ksvd_linalg::CsrMatrix;
use ksvd_streaming::LibsvmSource;
use rand::Rng;

/// A random sparse `n × m` matrix (density `density`, values in [0.5, 2)) whose rows are drawn
/// from `row_seed` and never empty, with labels `±1` from a linear rule drawn from `rule_seed`
/// plus a little noise (so that files of different `row_seed` and one `rule_seed` are a training
/// and a test part of one problem).
pub fn planted_sparse(n: usize, m: usize, density: f64, rule_seed: u64, row_seed: u64) -> (CsrMatrix, Vec<f64>) {
    let mut rule = rng_from_seed(rule_seed);
    let w: Vec<f64> = (0..m).map(|_| rule.gen::<f64>() - 0.5).collect();
    let mut rng = rng_from_seed(row_seed ^ 0x005e_ed0f_7e57);
    let mut trip = Vec::new();
    let mut labels = Vec::new();
    for i in 0..n {
        let mut any = false;
        let mut score = 0.0;
        for j in 0..m {
            if rng.gen::<f64>() < density || (!any && j == m - 1) {
                let v = 0.5 + 1.5 * rng.gen::<f64>();
                trip.push((i, j, v));
                score += w[j] * v;
                any = true;
            }
        }
        labels.push(if score + 0.3 * (rng.gen::<f64>() - 0.5) > 0.0 {
            1.0
        } else {
            -1.0
        });
    }
    (CsrMatrix::from_triplets(n, m, trip).unwrap(), labels)
}

/// [`planted_sparse`] with one seed for the rule and the rows.
pub fn random_sparse(n: usize, m: usize, density: f64, seed: u64) -> (CsrMatrix, Vec<f64>) {
    planted_sparse(n, m, density, seed, seed)
}

/// Writes `x` and `labels` as a LIBSVM file.
pub fn write_libsvm(path: &Path, x: &CsrMatrix, labels: &[f64]) {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    for i in 0..x.nrows() {
        write!(f, "{}", if labels[i] > 0.0 { "+1" } else { "-1" }).unwrap();
        let (idx, val) = x.row(i);
        for (&j, &v) in idx.iter().zip(val) {
            // `{:?}` prints the shortest representation that round-trips exactly.
            write!(f, " {}:{:?}", j + 1, v).unwrap();
        }
        writeln!(f).unwrap();
    }
}

/// A temporary folder and a file in it holding a random sparse matrix.
pub fn temp_file(n: usize, m: usize, density: f64, seed: u64) -> (tempfile::TempDir, PathBuf, CsrMatrix, Vec<f64>) {
    let dir = tempfile::tempdir().unwrap();
    let (x, y) = random_sparse(n, m, density, seed);
    let path = dir.path().join("data.svm");
    write_libsvm(&path, &x, &y);
    (dir, path, x, y)
}

/// A planted training file of `n` rows and a test file of `n_test` rows (same rule, other rows)
/// in `dir`, `m` features of density `density`.
pub fn train_and_test(dir: &Path, n: usize, n_test: usize, m: usize, density: f64, seed: u64) -> (PathBuf, PathBuf) {
    let (train, test) = (dir.join("train.svm"), dir.join("test.svm"));
    let (x, y) = planted_sparse(n, m, density, seed, seed);
    write_libsvm(&train, &x, &y);
    let (xt, yt) = planted_sparse(n_test, m, density, seed, seed + 1_000_003);
    write_libsvm(&test, &xt, &yt);
    (train, test)
}

/// Splits the lines of `path` into `parts` consecutive files of random sizes (some may be
/// empty), named `<tag>-<k>.svm` in `dir`; their concatenation in order is the input.
pub fn split_lines(path: &Path, dir: &Path, tag: &str, parts: usize, seed: u64) -> Vec<PathBuf> {
    let text = std::fs::read_to_string(path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mut rng = rng_from_seed(seed);
    let mut cuts: Vec<usize> = (0..parts - 1).map(|_| rng.gen_range(0..=lines.len())).collect();
    cuts.push(0);
    cuts.push(lines.len());
    cuts.sort_unstable();
    cuts.windows(2)
        .enumerate()
        .map(|(k, w)| {
            let p = dir.join(format!("{tag}-{k}.svm"));
            let mut body = lines[w[0]..w[1]].join("\n");
            body.push('\n');
            std::fs::write(&p, if w[0] == w[1] { String::new() } else { body }).unwrap();
            p
        })
        .collect()
}

/// LIBSVM sources of `paths` with `m` feature columns.
pub fn sources(paths: &[PathBuf], m: usize) -> Vec<LibsvmSource> {
    paths.iter().map(|p| LibsvmSource::new(p).n_features(m)).collect()
}

/// The rows and labels of a LIBSVM file with `m` columns (the dataset reader, in memory).
pub fn read_rows(path: &Path, m: usize) -> (CsrMatrix, Vec<f64>) {
    let opts = ksvd_datasets::LibsvmOptions::default().n_features(m);
    let d = ksvd_datasets::read_libsvm(path, &opts).unwrap();
    (d.features, d.labels)
}

/// Largest absolute entrywise difference.
pub fn max_abs_diff(a: &ndarray::Array2<f64>, b: &ndarray::Array2<f64>) -> f64 {
    assert_eq!(a.dim(), b.dim());
    a.iter().zip(b.iter()).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max)
}

/// Largest absolute value.
pub fn max_abs(a: impl IntoIterator<Item = f64>) -> f64 {
    a.into_iter().fold(0.0, |m, x| m.max(x.abs()))
}

/// The largest change of the AUROC of `scores` (positives `positive`) when every score moves by
/// at most `delta`: the fraction of positive–negative pairs at most `2 delta` apart, the only
/// pairs whose order (or tie) can change.
pub fn auroc_slack(scores: &[f64], positive: &[bool], delta: f64) -> f64 {
    let (mut pos, mut neg): (Vec<f64>, Vec<f64>) = (Vec::new(), Vec::new());
    for (&s, &p) in scores.iter().zip(positive) {
        if p {
            pos.push(s)
        } else {
            neg.push(s)
        }
    }
    neg.sort_unstable_by(f64::total_cmp);
    let close: usize = pos
        .iter()
        .map(|&s| {
            let lo = neg.partition_point(|&v| v < s - 2.0 * delta);
            let hi = neg.partition_point(|&v| v <= s + 2.0 * delta);
            hi - lo
        })
        .sum();
    close as f64 / (pos.len() * neg.len()) as f64
}
