//! Shared helpers: small random LIBSVM files written to a temporary folder.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(dead_code)]
use std::io::Write;
use std::path::{Path, PathBuf};

use ksvd_linalg::random::rng_from_seed;
use ksvd_linalg::CsrMatrix;
use rand::Rng;

/// A random sparse `n × m` matrix (density `density`, values in [0.5, 2)), with rows that are
/// never empty, and labels `±1` from a planted linear rule.
pub fn random_sparse(n: usize, m: usize, density: f64, seed: u64) -> (CsrMatrix, Vec<f64>) {
    let mut rng = rng_from_seed(seed);
    let w: Vec<f64> = (0..m).map(|_| rng.gen::<f64>() - 0.5).collect();
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

/// Largest absolute entrywise difference.
pub fn max_abs_diff(a: &ndarray::Array2<f64>, b: &ndarray::Array2<f64>) -> f64 {
    assert_eq!(a.dim(), b.dim());
    a.iter().zip(b.iter()).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max)
}
