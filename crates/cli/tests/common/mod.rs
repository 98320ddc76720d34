//! What the end-to-end tests share: running the `ksvd` binary, and reading what it wrote.
// Test helpers unwrap: a failure is a test failure. Not every test file uses every helper.
#![allow(clippy::unwrap_used, dead_code)]
use ndarray::Array2;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// What a run of the binary gave.
pub struct Run {
    /// The exit status (`-1` when killed by a signal).
    pub code: i32,
    /// Standard output.
    pub stdout: Vec<u8>,
    /// Standard error.
    pub stderr: String,
}

impl Run {
    /// Standard output as text.
    pub fn stdout_text(&self) -> String {
        String::from_utf8(self.stdout.clone()).unwrap()
    }
}

/// Runs `ksvd args`, with `stdin` on its standard input (an empty one otherwise).
pub fn run(args: &[&str], stdin: Option<&[u8]>) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ksvd"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    // A child that exits without reading all of its input (an error found early) closes the
    // pipe; its exit status and standard error are what the caller checks.
    if let Err(e) = input.write_all(stdin.unwrap_or_default()) {
        assert_eq!(
            e.kind(),
            std::io::ErrorKind::BrokenPipe,
            "writing the child's input: {e}"
        );
    }
    drop(input);
    let out = child.wait_with_output().unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: out.stdout,
        stderr: String::from_utf8_lossy(&out.stderr).to_string(),
    }
}

/// Runs `ksvd args --quiet`: whether it succeeded, and its standard error.
pub fn ksvd(args: &[&str]) -> (bool, String) {
    let mut all = args.to_vec();
    all.push("--quiet");
    let r = run(&all, None);
    (r.code == 0, r.stderr)
}

/// Runs `ksvd args --quiet` and requires success.
pub fn ok(args: &[&str]) {
    let (ok, err) = ksvd(args);
    assert!(ok, "{args:?}: {err}");
}

/// A path as a `&str` argument.
pub fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// CSV text of a matrix (Rust's shortest round-trip form of every value).
pub fn csv(a: &Array2<f64>) -> String {
    a.outer_iter()
        .map(|r| r.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(",") + "\n")
        .collect()
}

/// A matrix from CSV text (what the binary writes).
pub fn parse_csv(text: &str) -> Array2<f64> {
    let rows: Vec<Vec<f64>> = text
        .lines()
        .map(|l| l.split(',').map(|t| t.parse().unwrap()).collect())
        .collect();
    let ncols = rows.first().map_or(0, Vec::len);
    Array2::from_shape_vec((rows.len(), ncols), rows.into_iter().flatten().collect()).unwrap()
}

/// `‖a − b‖_F / ‖b‖_F`.
pub fn rel(a: &Array2<f64>, b: &Array2<f64>) -> f64 {
    assert_eq!(a.dim(), b.dim());
    (a - b).mapv(|v| v * v).sum().sqrt() / b.mapv(|v| v * v).sum().sqrt()
}

/// The files in `dir` (none when it does not exist).
pub fn files_in(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|d| d.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default()
}

/// Integer-valued samples (exact in every input format): X (30 × 4) and Z (20 × 4).
pub fn x_data() -> Array2<f64> {
    Array2::from_shape_fn((30, 4), |(i, j)| ((i * 7 + j * 3) % 11) as f64 - 4.0)
}
pub fn z_data() -> Array2<f64> {
    Array2::from_shape_fn((20, 4), |(i, j)| ((i * 5 + j) % 13) as f64 - 5.0)
}

/// The arguments of the tests' reference fit: rows from `rows`, columns from `cols` (files of
/// [`x_data`] and [`z_data`]), an RBF kernel with γ = 6, rank 3, written to `out`; callers add
/// the solver and anything else.
pub fn rbf_fit_args<'a>(rows: &'a Path, cols: &'a Path, out: &'a Path) -> Vec<&'a str> {
    vec![
        "fit",
        "--rows",
        p(rows),
        "--cols",
        p(cols),
        "--kernel",
        "rbf",
        "--gamma",
        "6",
        "--rank",
        "3",
        "--out",
        p(out),
    ]
}
