//! The scaling benchmark: wall time and peak memory of the streaming Nyström path against the
//! number of rows `N` (10⁴ … 10⁷ synthetic rows), next to the in-memory dense and randomized SVD
//! paths where they fit. Each measurement ([`bench_once`]) runs in a child process (`cargo xtask
//! scaling-child`, [`scaling_child`]), so that peak memories do not accumulate.
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{ensure, Context as _, Result};
use ksvd_streaming::{Progress, ProgressFn};
use serde::{Deserialize, Serialize};

use super::bench::{bench_once, in_memory_estimate, BenchModel, BenchOutcome, BenchParams, ScalingMethod};
use super::memory::reset_peak_rss;
use super::synthetic::{write_synthetic, SyntheticPart, SyntheticSpec};
use crate::rows::{Row, Status};

/// Where each measurement runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Isolation {
    /// One child process (`<binary> scaling-child`) per measurement: honest, independent peaks.
    #[default]
    ChildProcess,
    /// In this process, resetting `VmHWM` before each measurement when the kernel allows it.
    InProcess,
}

/// Configuration of [`run_scaling`] (the spec's `[params]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ScalingConfig {
    /// Training sizes `N`.
    pub sizes: Vec<usize>,
    /// Rows of the (fixed) test file.
    pub test_rows: usize,
    /// The synthetic problem.
    pub synthetic: SyntheticSpec,
    /// Paths to measure.
    pub methods: Vec<ScalingMethod>,
    /// The model fitted (`[params.model]`).
    pub model: BenchModel,
    /// In-memory paths are skipped (status `not-run`) when their estimated footprint exceeds
    /// this many MiB.
    pub in_memory_budget_mib: f64,
    /// Where each measurement runs.
    pub isolation: Isolation,
    /// The program whose `scaling-child` subcommand runs each measurement (the `cargo xtask`
    /// binary); `None`: the running executable.
    pub binary: Option<PathBuf>,
    /// Where the synthetic files go (reused when present); `None`: `$TMPDIR/ksvd-streaming-scaling`.
    pub scratch_dir: Option<PathBuf>,
    /// Keep the synthetic files after the run.
    pub keep_files: bool,
    /// Threads of each measurement (`None`: the current rayon pool's).
    pub threads: Option<usize>,
}

impl Default for ScalingConfig {
    fn default() -> Self {
        ScalingConfig {
            sizes: vec![10_000, 100_000, 1_000_000, 10_000_000],
            test_rows: 10_000,
            synthetic: SyntheticSpec::default(),
            methods: vec![
                ScalingMethod::StreamingNystrom,
                ScalingMethod::Dense,
                ScalingMethod::Rsvd,
            ],
            model: BenchModel::default(),
            in_memory_budget_mib: 1536.0,
            isolation: Isolation::ChildProcess,
            binary: None,
            scratch_dir: None,
            keep_files: true,
            threads: None,
        }
    }
}

impl ScalingConfig {
    fn bench_params(&self) -> BenchParams {
        BenchParams {
            features: self.synthetic.features,
            model: self.model.clone(),
        }
    }
}

/// The child program: `config.binary`, else the running executable (`cargo xtask`).
fn locate_binary(config: &ScalingConfig) -> Result<PathBuf> {
    match &config.binary {
        Some(b) => Ok(b.clone()),
        None => std::env::current_exe().context("scaling: locating the running executable for the child processes"),
    }
}

/// The child's side of a measurement (`cargo xtask scaling-child`): runs [`bench_once`] with
/// `threads` threads and prints the [`BenchOutcome`] as TOML on stdout.
pub fn scaling_child(method: &str, train: &Path, test: &Path, threads: Option<usize>, params: &str) -> Result<()> {
    if let Some(t) = threads {
        rayon::ThreadPoolBuilder::new()
            .num_threads(t)
            .build_global()
            .with_context(|| format!("cannot start {t} threads"))?;
    }
    let method: ScalingMethod = method.parse()?;
    let params: BenchParams = toml::from_str(params).context("--params is not a BenchParams TOML")?;
    let outcome = bench_once(method, train, test, &params)?;
    print!("{}", toml::to_string(&outcome)?);
    Ok(())
}

/// FNV-1a, a stable 64-bit hash for file names.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// One measurement in a child process `<binary> scaling-child` (it prints a TOML [`BenchOutcome`]).
fn run_child(
    binary: &Path,
    method: ScalingMethod,
    train: &Path,
    test: &Path,
    params: &BenchParams,
    threads: usize,
) -> Result<BenchOutcome> {
    let text = toml::to_string(params).context("serialising the bench params")?;
    let shown = format!(
        "{} scaling-child --method {} --train {} --test {} --threads {threads}",
        binary.display(),
        method.as_str(),
        train.display(),
        test.display()
    );
    let failed = |message: String| anyhow::anyhow!("benchmark child `{shown}` failed: {message}");
    let out = Command::new(binary)
        .arg("scaling-child")
        .arg("--method")
        .arg(method.as_str())
        .arg("--train")
        .arg(train)
        .arg("--test")
        .arg(test)
        .arg("--threads")
        .arg(threads.to_string())
        .arg("--params")
        .arg(&text)
        .output()
        .map_err(|e| failed(e.to_string()))?;
    if !out.status.success() {
        return Err(failed(format!(
            "{}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    toml::from_str(&stdout).map_err(|e| failed(format!("unexpected output ({e}): {stdout}")))
}

/// Runs the scaling benchmark: for every size, writes (or reuses) a synthetic training file of
/// `N` rows and one fixed test file, then measures every method (child process per measurement
/// by default). Rows: `dataset = "synthetic"`, `setting = "n=<N>"`, methods
/// `streaming-nystrom` / `dense` / `rsvd` with metrics `seconds` (wall), `cpu_seconds`,
/// `peak_rss_mib`, `auroc`;
/// in-memory paths whose estimated footprint exceeds the budget get a `not-run` row; and
/// `generator/seconds` for each file written.
pub fn run_scaling(config: &ScalingConfig, progress: &mut ProgressFn<'_>) -> Result<Vec<Row>> {
    ensure!(
        !config.sizes.is_empty() && !config.methods.is_empty(),
        "scaling: need at least one size and one method"
    );
    let threads = config.threads.unwrap_or_else(rayon::current_num_threads);
    let binary = match config.isolation {
        Isolation::ChildProcess => Some(locate_binary(config)?),
        Isolation::InProcess => None,
    };
    let dir = config
        .scratch_dir
        .clone()
        .unwrap_or_else(|| std::env::temp_dir().join("ksvd-streaming-scaling"));
    let spec = &config.synthetic;
    // Files are named after a hash of the whole spec, so a changed spec never reuses a file.
    let spec_text = toml::to_string(spec).context("serialising the synthetic spec")?;
    let stem = format!(
        "synthetic-m{}-k{}-{:016x}",
        spec.features,
        spec.nnz_per_row,
        fnv1a(spec_text.as_bytes())
    );
    let params = config.bench_params();
    let mut rows = Vec::new();
    let cells = config.sizes.len() * config.methods.len();
    let mut cell = 0usize;
    let mut written: Vec<PathBuf> = Vec::new();
    let file = |part: SyntheticPart, n: usize, rows: &mut Vec<Row>, written: &mut Vec<PathBuf>| -> Result<PathBuf> {
        let tag = match part {
            SyntheticPart::Train => "train",
            SyntheticPart::Test => "test",
        };
        let path = dir.join(format!("{stem}-{tag}-{n}.svm"));
        if !path.is_file() {
            let s = write_synthetic(&path, spec, part, n)?;
            written.push(path.clone());
            rows.push(
                Row::ok("synthetic", "generator", "seconds", s.seconds)
                    .setting(format!("{tag} n={n}"))
                    .seconds(s.seconds)
                    .threads(rayon::current_num_threads() as u32)
                    .note(format!("{} bytes, {} positives of {n} rows", s.bytes, s.positives)),
            );
        }
        Ok(path)
    };
    let test = file(SyntheticPart::Test, config.test_rows, &mut rows, &mut written)?;
    for &n in &config.sizes {
        progress(&Progress::new(format!("generating n={n}"), cell, Some(cells)));
        let train = file(SyntheticPart::Train, n, &mut rows, &mut written)?;
        for &method in &config.methods {
            progress(&Progress::new(format!("{} n={n}", method.as_str()), cell, Some(cells)));
            // One row of this measurement: seed, one trial, the measurement's threads.
            let row = |metric: &str, status: Status, value: Option<f64>, note: Option<String>, secs: Option<f64>| Row {
                setting: format!("n={n}"),
                seed: Some(config.model.seed),
                value,
                trials: Some(1),
                seconds: secs,
                threads: Some(threads as u32),
                ..Row::status("synthetic", method.as_str(), metric, status, note)
            };
            if let Some(est) = in_memory_estimate(
                method,
                n,
                spec.features,
                spec.nnz_per_row,
                config.test_rows,
                config.model.components,
                config.model.rsvd_oversampling,
            ) {
                let mib = est / (1024.0 * 1024.0);
                if mib > config.in_memory_budget_mib {
                    let note = format!(
                        "skipped: estimated {mib:.0} MiB > budget {:.0} MiB",
                        config.in_memory_budget_mib
                    );
                    for metric in ["seconds", "cpu_seconds", "peak_rss_mib", "auroc"] {
                        rows.push(row(metric, Status::NotRun, None, Some(note.clone()), None));
                    }
                    cell += 1;
                    continue;
                }
            }
            let outcome = match &binary {
                Some(b) => run_child(b, method, &train, &test, &params, threads),
                None => {
                    reset_peak_rss();
                    bench_once(method, &train, &test, &params)
                }
            };
            match outcome {
                Ok(o) => {
                    let ok = |metric: &str, value: f64, note: Option<String>| {
                        row(metric, Status::Ok, Some(value), note, Some(o.seconds))
                    };
                    let note = format!(
                        "r = {}, landmarks n = m = {}, {} training rows, isolation {:?}",
                        o.rank, config.model.landmarks, o.train_rows, config.isolation
                    );
                    rows.push(ok("seconds", o.seconds, Some(note)));
                    if let Some(c) = o.cpu_seconds {
                        rows.push(ok("cpu_seconds", c, None));
                    }
                    if let Some(p) = o.peak_rss_bytes {
                        rows.push(ok("peak_rss_mib", p as f64 / (1024.0 * 1024.0), None));
                    }
                    rows.push(ok("auroc", o.auroc, None));
                }
                Err(e) => rows.push(row("seconds", Status::Failed, None, Some(e.to_string()), None)),
            }
            cell += 1;
            progress(&Progress::new(
                format!("{} n={n} done", method.as_str()),
                cell,
                Some(cells),
            ));
        }
    }
    if !config.keep_files {
        for p in written {
            // Best effort: a scratch file left behind is reused (or overwritten) by the next run.
            let _ = std::fs::remove_file(p);
        }
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn tiny(dir: &Path) -> ScalingConfig {
        ScalingConfig {
            sizes: vec![1500, 3000],
            test_rows: 1000,
            synthetic: SyntheticSpec {
                features: 150,
                nnz_per_row: 6,
                ..SyntheticSpec::default()
            },
            model: BenchModel {
                landmarks: 60,
                components: 8,
                chunk_rows: 700,
                ..BenchModel::default()
            },
            isolation: Isolation::InProcess,
            scratch_dir: Some(dir.to_path_buf()),
            ..ScalingConfig::default()
        }
    }

    #[test]
    fn in_process_rows_budget_skips_and_file_reuse() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = tiny(dir.path());
        let rows = run_scaling(&cfg, &mut |_| {}).unwrap();
        // The AUROC of a scorer independent of the labels has mean 0.5 and standard deviation
        // sqrt((P + N + 1) / (12 P N)) on this test file; every path finds the planted signal, 5 of
        // those above (a random scorer gets there with probability 3e-7).
        let test_file = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.to_string_lossy().contains("-test-"))
            .unwrap();
        let text = std::fs::read_to_string(test_file).unwrap();
        let p = text.lines().filter(|l| l.starts_with("+1")).count() as f64;
        let n_neg = text.lines().count() as f64 - p;
        let bound = 0.5 + 5.0 * ((p + n_neg + 1.0) / (12.0 * p * n_neg)).sqrt();
        for method in ScalingMethod::ALL {
            for n in [1500, 3000] {
                let r: Vec<_> = rows
                    .iter()
                    .filter(|r| r.method == method.as_str() && r.setting == format!("n={n}"))
                    .collect();
                assert!(r.iter().all(|r| r.status == Status::Ok && r.seed == Some(0)), "{r:#?}");
                let auc = r.iter().find(|r| r.metric == "auroc").unwrap().value.unwrap();
                assert!(auc > bound, "{method:?} at n = {n}: AUROC {auc} <= {bound}");
                let note = r
                    .iter()
                    .find(|r| r.metric == "seconds")
                    .unwrap()
                    .note
                    .as_deref()
                    .unwrap();
                assert!(note.contains(&format!("{n} training rows")), "{note}");
            }
        }
        // One test file and two training files were written.
        assert_eq!(rows.iter().filter(|r| r.method == "generator").count(), 3);
        // A tiny budget skips the in-memory paths with a reason; the files are reused.
        let small = ScalingConfig {
            in_memory_budget_mib: 1e-3,
            methods: vec![ScalingMethod::Dense],
            sizes: vec![1500],
            ..cfg
        };
        let rows = run_scaling(&small, &mut |_| {}).unwrap();
        assert!(rows.iter().all(|r| r.method != "generator"), "files are reused");
        assert_eq!(rows.len(), 4, "seconds, cpu_seconds, peak_rss_mib, auroc");
        assert!(rows
            .iter()
            .all(|r| r.status == Status::NotRun && r.value.is_none() && r.note.as_deref().unwrap().contains("budget")));
    }

    #[test]
    fn keep_files_false_removes_the_files() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = ScalingConfig {
            sizes: vec![1500],
            methods: vec![ScalingMethod::StreamingNystrom],
            keep_files: false,
            ..tiny(dir.path())
        };
        run_scaling(&cfg, &mut |_| {}).unwrap();
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_missing_binary_gives_a_failed_row() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = ScalingConfig {
            sizes: vec![1500],
            methods: vec![ScalingMethod::StreamingNystrom],
            isolation: Isolation::ChildProcess,
            binary: Some(dir.path().join("no-such-binary")),
            ..tiny(dir.path())
        };
        let rows = run_scaling(&cfg, &mut |_| {}).unwrap();
        let failed: Vec<_> = rows.iter().filter(|r| r.method == "streaming-nystrom").collect();
        assert_eq!(failed.len(), 1);
        assert_eq!(failed[0].status, Status::Failed);
        assert!(failed[0].note.as_deref().unwrap().contains("no-such-binary"));
    }

    #[test]
    fn config_deserializes_from_partial_toml() {
        let sc: ScalingConfig = toml::from_str(
            "sizes = [10000]\nmethods = [\"streaming-nystrom\"]\nisolation = \"in-process\"\n[synthetic]\nfeatures = 500\n",
        )
        .unwrap();
        assert_eq!(sc.synthetic.features, 500);
        assert_eq!(sc.synthetic.nnz_per_row, SyntheticSpec::default().nnz_per_row);
        assert_eq!(sc.isolation, Isolation::InProcess);
        assert!(toml::from_str::<ScalingConfig>("size = [1]").is_err());
    }
}
