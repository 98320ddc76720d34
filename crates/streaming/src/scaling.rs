//! The scaling benchmark: wall time and peak memory of the streaming Nyström path against the
//! number of rows `N` (10⁴ … 10⁷ synthetic rows), next to the in-memory dense and randomized
//! SVD paths where they fit. Each measurement runs in a child process (`ksvd-stream bench`), so
//! that peak memories do not accumulate.
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use ksvd_datasets::{read_libsvm, LibsvmOptions};
use ksvd_kernels::{Kernel, KernelMatrix, Samples};
use ksvd_linalg::random::{rng_from_seed, sample_indices};
use ksvd_linalg::{dense, CsrMatrix, MatrixBlocks};
use ksvd_solvers::{dense_svd_operator, randomized_svd, RsvdParams, SvdResult};
use ndarray::{Array1, Array2};
use serde::{Deserialize, Serialize};

use crate::classifier::{auroc, LabelRule, RidgeAccumulator};
use crate::embedding::median;
use crate::error::{Result, StreamingError};
use crate::ksvd::CompatSide;
use crate::memory::{cpu_seconds, peak_rss_bytes};
use crate::params::{Bandwidth, StreamingParams};
use crate::pipeline::{run_pipeline, Method, PipelineParams};
use crate::progress::{Progress, ProgressFn};
use crate::projection::{ProjectionScaling, SparseProjection};
use crate::runner::{ResultRow, Status};
use crate::source::LibsvmSource;
use crate::synthetic::{write_synthetic, SyntheticPart, SyntheticSpec};

/// A path measured by the scaling benchmark.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ScalingMethod {
    /// The out-of-core asymmetric Nyström KSVD of this crate (3 passes over the file).
    StreamingNystrom,
    /// In memory: the whole kernel matrix `G ∈ R^{N×M}` materialised and its exact SVD.
    Dense,
    /// In memory: randomized SVD of the implicit `G` (data and `Z'` in memory, `G` never stored).
    Rsvd,
}

impl ScalingMethod {
    /// Method id of the rows.
    pub fn as_str(self) -> &'static str {
        match self {
            ScalingMethod::StreamingNystrom => "streaming-nystrom",
            ScalingMethod::Dense => "dense",
            ScalingMethod::Rsvd => "rsvd",
        }
    }
}

/// Where each measurement runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Isolation {
    /// One `ksvd-stream bench` child process per measurement: honest, independent peaks.
    #[default]
    ChildProcess,
    /// In this process, resetting `VmHWM` before each measurement when the kernel allows it.
    InProcess,
}

/// Parameters of one measurement (shared by the benchmark and the `ksvd-stream bench` child).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BenchParams {
    /// Feature columns `M` of the files.
    pub features: usize,
    /// Landmarks `n = m`.
    pub landmarks: usize,
    /// Rank `r`.
    pub components: usize,
    /// Bandwidth rule.
    pub bandwidth: Bandwidth,
    /// Ridge `λ`.
    pub ridge: f64,
    /// Rows per chunk.
    pub chunk_rows: usize,
    /// Seed.
    pub seed: u64,
    /// RSVD oversampling `p`.
    pub rsvd_oversampling: usize,
    /// RSVD power iterations `q`.
    pub rsvd_power_iters: usize,
}

/// What one measurement found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchOutcome {
    /// Wall seconds of fit + classifier training + scoring (file reading included).
    pub seconds: f64,
    /// CPU seconds (user + system, all threads) of the measurement; on a shared machine wall
    /// time also counts waiting for a core.
    pub cpu_seconds: Option<f64>,
    /// Peak resident memory of the measuring process (`VmHWM`), bytes.
    pub peak_rss_bytes: Option<u64>,
    /// Test AUROC (a sanity check that the run did something sensible).
    pub auroc: f64,
    /// Embedding dimension used.
    pub rank: usize,
    /// Training rows.
    pub train_rows: usize,
}

/// Configuration of [`run_scaling`].
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
    /// Landmarks `n = m`.
    pub landmarks: usize,
    /// Rank `r`.
    pub components: usize,
    /// Bandwidth rule (the in-memory paths apply it to a uniform `n × m` sample of pairs).
    pub bandwidth: Bandwidth,
    /// Ridge `λ`.
    pub ridge: f64,
    /// Rows per chunk of the streaming path.
    pub chunk_rows: usize,
    /// Seed of landmarks, projections and RSVD.
    pub seed: u64,
    /// RSVD oversampling `p`.
    pub rsvd_oversampling: usize,
    /// RSVD power iterations `q`.
    pub rsvd_power_iters: usize,
    /// In-memory paths are skipped (status `not-run`) when their estimated footprint exceeds
    /// this many MiB.
    pub in_memory_budget_mib: f64,
    /// Where each measurement runs.
    pub isolation: Isolation,
    /// The `ksvd-stream` binary; `None`: `$KSVD_STREAM_BIN`, else next to the current executable.
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
            landmarks: 1000,
            components: 50,
            bandwidth: Bandwidth::Median(1.0),
            ridge: 1e-3,
            chunk_rows: 10_000,
            seed: 0,
            rsvd_oversampling: 10,
            rsvd_power_iters: 2,
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
    /// A small variant for CI: 10⁴ and 3·10⁴ rows, 200 landmarks, 20 components.
    pub fn quick() -> Self {
        ScalingConfig {
            sizes: vec![10_000, 30_000],
            test_rows: 5_000,
            landmarks: 200,
            components: 20,
            ..ScalingConfig::default()
        }
    }

    fn bench_params(&self) -> BenchParams {
        BenchParams {
            features: self.synthetic.features,
            landmarks: self.landmarks,
            components: self.components,
            bandwidth: self.bandwidth,
            ridge: self.ridge,
            chunk_rows: self.chunk_rows,
            seed: self.seed,
            rsvd_oversampling: self.rsvd_oversampling,
            rsvd_power_iters: self.rsvd_power_iters,
        }
    }
}

/// Estimated peak bytes of an in-memory path on `n` rows of `nnz_per_row` nonzeros and `m`
/// columns (`None` for the streaming path, which the benchmark always runs).
pub fn in_memory_estimate(
    method: ScalingMethod,
    n: usize,
    m: usize,
    nnz_per_row: usize,
    test_rows: usize,
    rank: usize,
    oversampling: usize,
) -> Option<f64> {
    let (n, m) = (n as f64, m as f64);
    let data = n * (nnz_per_row as f64) * 16.0 + n * 8.0; // CSR
    let zp = m * m.min(n) * 8.0; // Z' (columns mapped) or X' (rows mapped)
    let test = test_rows as f64 * m * 8.0 * 2.0; // k(x', Z) block and its product
    match method {
        ScalingMethod::StreamingNystrom => None,
        // G materialised, the SVD's working copy, and U (n x min(n, m)).
        ScalingMethod::Dense => Some(data + zp + test + 2.0 * n * m * 8.0 + n * m.min(n) * 8.0),
        // Blocks of G (the operator's chunks) and ~4 tall (n + m) x (r + p) matrices.
        ScalingMethod::Rsvd => {
            Some(data + zp + test + 4.0 * (n + m) * (rank + oversampling) as f64 * 8.0 + 64.0 * 1024.0 * 1024.0)
        }
    }
}

/// Runs one measurement in this process.
pub fn bench_once(method: ScalingMethod, train: &Path, test: &Path, params: &BenchParams) -> Result<BenchOutcome> {
    let t0 = Instant::now();
    let cpu0 = cpu_seconds();
    let (auc, rank, rows) = match method {
        ScalingMethod::StreamingNystrom => {
            let p = PipelineParams {
                model: StreamingParams::new(params.components, params.landmarks)
                    .bandwidth(params.bandwidth)
                    .chunk_rows(params.chunk_rows)
                    .seed(params.seed),
                ridge: params.ridge,
                positive_label: None,
            };
            let tr = LibsvmSource::new(train).n_features(params.features);
            let te = LibsvmSource::new(test).n_features(params.features);
            let o = run_pipeline(Method::Ksvd, &tr, &te, &p, &mut |_: &Progress| {})?;
            (o.auroc, o.rank, o.train_rows)
        }
        ScalingMethod::Dense | ScalingMethod::Rsvd => in_memory(method, train, test, params)?,
    };
    let cpu = match (cpu0, cpu_seconds()) {
        (Some(a), Some(b)) => Some(b - a),
        _ => None,
    };
    Ok(BenchOutcome {
        seconds: t0.elapsed().as_secs_f64(),
        cpu_seconds: cpu,
        peak_rss_bytes: peak_rss_bytes(),
        auroc: auc,
        rank,
        train_rows: rows,
    })
}

/// The in-memory reference paths on the same problem as the streaming path: the same a2
/// projection (same seed), the same bandwidth rule, exact or randomized SVD of the whole `G`.
fn in_memory(method: ScalingMethod, train: &Path, test: &Path, params: &BenchParams) -> Result<(f64, usize, usize)> {
    let opts = LibsvmOptions::default().n_features(params.features);
    let tr = read_libsvm(train, &opts)?;
    let x = tr.features;
    let (nn, mm) = x.shape();
    let (xs, zs, side, proj) = in_memory_samples(&x, params.seed)?;
    let n = params.landmarks.min(nn);
    let m = params.landmarks.min(mm);
    let gamma = match params.bandwidth {
        Bandwidth::Fixed(g) => g,
        Bandwidth::Median(c) => {
            let rows = sample_indices(&mut rng_from_seed(params.seed), nn, n);
            let cols = sample_indices(&mut rng_from_seed(params.seed.wrapping_add(0x9e37_79b9)), mm, m);
            let lin = KernelMatrix::new(xs.select(&rows)?, zs.select(&cols)?, Kernel::Linear)?;
            let all_r: Vec<usize> = (0..rows.len()).collect();
            let all_c: Vec<usize> = (0..cols.len()).collect();
            let ip = lin.block(&all_r, &all_c)?;
            let (nx, nz) = (lin.x().sq_norms(), lin.z().sq_norms());
            let d2: Vec<f64> = (0..rows.len())
                .flat_map(|a| (0..cols.len()).map(move |b| (a, b)))
                .map(|(a, b)| (nx[a] + nz[b] - 2.0 * ip[[a, b]]).max(0.0))
                .collect();
            c * median(d2).unwrap_or(0.0).sqrt()
        }
    };
    let g = KernelMatrix::new(xs, zs, Kernel::Rbf { gamma })?;
    let r = params.components.min(nn).min(mm);
    let svd: SvdResult = match method {
        ScalingMethod::Dense => dense_svd_operator(&g, r)?,
        _ => randomized_svd(
            &g,
            r,
            &RsvdParams {
                oversampling: params.rsvd_oversampling,
                power_iters: params.rsvd_power_iters,
                seed: params.seed,
            },
        )?,
    };
    let labels = LabelRule::from_counts(train, &label_counts(&tr.labels), None)?;
    let y: Vec<f64> = tr.labels.iter().map(|&l| labels.target(l)).collect();
    let mut acc = RidgeAccumulator::new(r);
    acc.add(svd.u.view(), &y)?;
    let clf = acc.solve(params.ridge)?;
    // Test rows: out-of-sample U = k(x', Z) V S⁻¹.
    let te = read_libsvm(test, &opts)?;
    let new_x = match (side, &proj) {
        (CompatSide::Rows, Some(p)) => Samples::dense(map_rows(&te.features, p))?,
        _ => Samples::sparse(te.features)?,
    };
    let all_cols: Vec<usize> = (0..mm).collect();
    let k = g.cross_rows(&new_x, &all_cols)?;
    let inv_s: Array1<f64> = svd.s.mapv(|s| if s > 0.0 { 1.0 / s } else { 0.0 });
    let u_new = dense::matmul(k.view(), (&svd.v * &inv_s).view())?;
    let scores = clf.decision(u_new.view());
    let pos: Vec<bool> = te.labels.iter().map(|&l| labels.target(l) > 0.0).collect();
    Ok((auroc(scores.as_slice().unwrap_or(&scores.to_vec()), &pos)?, r, nn))
}

fn label_counts(labels: &[f64]) -> Vec<(f64, usize)> {
    let mut v = labels.to_vec();
    v.sort_unstable_by(f64::total_cmp);
    let mut out: Vec<(f64, usize)> = Vec::new();
    for l in v {
        match out.last_mut() {
            Some((x, c)) if *x == l => *c += 1,
            _ => out.push((l, 1)),
        }
    }
    out
}

/// `X C_x` for rows mapped with the projection (`C_x`: row `k` per feature).
fn map_rows(x: &CsrMatrix, p: &SparseProjection) -> Array2<f64> {
    let mut out = Array2::zeros((x.nrows(), p.output_dim()));
    for i in 0..x.nrows() {
        let (idx, val) = x.row(i);
        out.row_mut(i).assign(&p.project(idx, val));
    }
    out
}

/// Row and column samples of a data matrix made compatible with the a2 sparse projection
/// exactly as the streaming path does (default density and scaling, `seed`), in memory:
/// columns mapped `Z' = Xᵀ C_z` (`N > M`), rows mapped `X' = X C_x` (`M > N`), or `C = I`.
pub fn in_memory_samples(x: &CsrMatrix, seed: u64) -> Result<(Samples, Samples, CompatSide, Option<SparseProjection>)> {
    let (nn, mm) = x.shape();
    let scaling = ProjectionScaling::default();
    Ok(match nn.cmp(&mm) {
        std::cmp::Ordering::Greater => {
            let p = SparseProjection::new(nn, mm, None, scaling, seed)?;
            let mut zp = Array2::<f64>::zeros((mm, mm));
            let (mut rc, mut rv) = (Vec::new(), Vec::new());
            for i in 0..nn {
                let (idx, val) = x.row(i);
                if idx.is_empty() {
                    continue;
                }
                p.row_into(i, &mut rc, &mut rv);
                for (&j, &v) in idx.iter().zip(val) {
                    for (&l, &r) in rc.iter().zip(&rv) {
                        zp[[j, l]] += v * r;
                    }
                }
            }
            (
                Samples::sparse(x.clone())?,
                Samples::dense(zp)?,
                CompatSide::Cols,
                Some(p),
            )
        }
        std::cmp::Ordering::Less => {
            let p = SparseProjection::new(mm, nn, None, scaling, seed)?;
            (
                Samples::dense(map_rows(x, &p))?,
                Samples::sparse(x.transpose())?,
                CompatSide::Rows,
                Some(p),
            )
        }
        std::cmp::Ordering::Equal => (
            Samples::sparse(x.clone())?,
            Samples::sparse(x.transpose())?,
            CompatSide::Square,
            None,
        ),
    })
}

/// The `ksvd-stream` binary: `config.binary`, `$KSVD_STREAM_BIN`, or a file `ksvd-stream` next
/// to the current executable (or one folder up, for test executables in `deps/`).
pub fn locate_binary(config: &ScalingConfig) -> Result<PathBuf> {
    if let Some(b) = &config.binary {
        return Ok(b.clone());
    }
    if let Some(b) = std::env::var_os("KSVD_STREAM_BIN") {
        return Ok(PathBuf::from(b));
    }
    let name = format!("ksvd-stream{}", std::env::consts::EXE_SUFFIX);
    if let Ok(exe) = std::env::current_exe() {
        for dir in exe.ancestors().skip(1).take(2) {
            let cand = dir.join(&name);
            if cand.is_file() {
                return Ok(cand);
            }
        }
    }
    Err(StreamingError::Child {
        command: name,
        message: "binary not found: build it with `cargo build --release -p ksvd-streaming --bin ksvd-stream` and set \
                  `binary` or $KSVD_STREAM_BIN, or use isolation = \"in-process\""
            .into(),
    })
}

/// FNV-1a, a stable 64-bit hash for file names.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn run_child(
    binary: &Path,
    method: ScalingMethod,
    train: &Path,
    test: &Path,
    params: &BenchParams,
    threads: usize,
) -> Result<BenchOutcome> {
    let text = toml::to_string(params)
        .map_err(|e| StreamingError::invalid("bench params", format!("{params:?}"), e.to_string()))?;
    let mut cmd = Command::new(binary);
    cmd.arg("bench")
        .arg("--method")
        .arg(method.as_str())
        .arg("--train")
        .arg(train)
        .arg("--test")
        .arg(test)
        .arg("--threads")
        .arg(threads.to_string())
        .arg("--params")
        .arg(&text);
    let shown = format!(
        "{} bench --method {} --train {} --test {} --threads {threads}",
        binary.display(),
        method.as_str(),
        train.display(),
        test.display()
    );
    let out = cmd.output().map_err(|e| StreamingError::Child {
        command: shown.clone(),
        message: e.to_string(),
    })?;
    if !out.status.success() {
        return Err(StreamingError::Child {
            command: shown,
            message: format!("{}: {}", out.status, String::from_utf8_lossy(&out.stderr).trim()),
        });
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    toml::from_str(&stdout).map_err(|e| StreamingError::Child {
        command: shown,
        message: format!("unexpected output ({e}): {stdout}"),
    })
}

/// Runs the scaling benchmark: for every size, writes (or reuses) a synthetic training file of
/// `N` rows and one fixed test file, then measures every method (child process per measurement
/// by default). Rows: `dataset = "synthetic"`, `setting = "n=<N>"`, methods
/// `streaming-nystrom` / `dense` / `rsvd` with metrics `seconds` (wall), `cpu_seconds`,
/// `peak_rss_mib`, `auroc`;
/// in-memory paths whose estimated footprint exceeds the budget get a `not-run` row; and
/// `generator/seconds` for each file written.
pub fn run_scaling(config: &ScalingConfig, progress: &mut ProgressFn<'_>) -> Result<Vec<ResultRow>> {
    if config.sizes.is_empty() || config.methods.is_empty() {
        return Err(StreamingError::invalid(
            "sizes/methods",
            "[]",
            "need at least one size and one method",
        ));
    }
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
    let spec_text =
        toml::to_string(spec).map_err(|e| StreamingError::invalid("synthetic", format!("{spec:?}"), e.to_string()))?;
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
    let file =
        |part: SyntheticPart, n: usize, rows: &mut Vec<ResultRow>, written: &mut Vec<PathBuf>| -> Result<PathBuf> {
            let tag = match part {
                SyntheticPart::Train => "train",
                SyntheticPart::Test => "test",
            };
            let path = dir.join(format!("{stem}-{tag}-{n}.svm"));
            if !path.is_file() {
                let s = write_synthetic(&path, spec, part, n)?;
                written.push(path.clone());
                let mut r = ResultRow::ok("synthetic", "generator", "seconds", s.seconds);
                r.setting = format!("{tag} n={n}");
                r.seconds = Some(s.seconds);
                r.threads = Some(rayon::current_num_threads() as u32);
                r.note = Some(format!("{} bytes, {} positives of {n} rows", s.bytes, s.positives));
                rows.push(r);
            }
            Ok(path)
        };
    let test = file(SyntheticPart::Test, config.test_rows, &mut rows, &mut written)?;
    for &n in &config.sizes {
        progress(&Progress {
            stage: format!("generating n={n}"),
            done: cell,
            total: cells,
        });
        let train = file(SyntheticPart::Train, n, &mut rows, &mut written)?;
        for &method in &config.methods {
            let setting = format!("n={n}");
            progress(&Progress {
                stage: format!("{} n={n}", method.as_str()),
                done: cell,
                total: cells,
            });
            let row = |metric: &str, value: f64, note: Option<String>, secs: Option<f64>| {
                let mut r = ResultRow::ok("synthetic", method.as_str(), metric, value);
                r.setting = setting.clone();
                r.seed = Some(config.seed);
                r.trials = Some(1);
                r.seconds = secs;
                r.threads = Some(threads as u32);
                r.note = note;
                r
            };
            if let Some(est) = in_memory_estimate(
                method,
                n,
                spec.features,
                spec.nnz_per_row,
                config.test_rows,
                config.components,
                config.rsvd_oversampling,
            ) {
                let mib = est / (1024.0 * 1024.0);
                if mib > config.in_memory_budget_mib {
                    for metric in ["seconds", "cpu_seconds", "peak_rss_mib", "auroc"] {
                        let mut r = row(
                            metric,
                            0.0,
                            Some(format!(
                                "skipped: estimated {mib:.0} MiB > budget {:.0} MiB",
                                config.in_memory_budget_mib
                            )),
                            None,
                        );
                        r.value = None;
                        r.status = Status::NotRun;
                        rows.push(r);
                    }
                    cell += 1;
                    continue;
                }
            }
            let outcome = match &binary {
                Some(b) => run_child(b, method, &train, &test, &params, threads),
                None => {
                    crate::memory::reset_peak_rss();
                    bench_once(method, &train, &test, &params)
                }
            };
            match outcome {
                Ok(o) => {
                    let note = format!(
                        "r = {}, landmarks n = m = {}, {} training rows, isolation {:?}",
                        o.rank, config.landmarks, o.train_rows, config.isolation
                    );
                    rows.push(row("seconds", o.seconds, Some(note), Some(o.seconds)));
                    if let Some(c) = o.cpu_seconds {
                        rows.push(row("cpu_seconds", c, None, Some(o.seconds)));
                    }
                    if let Some(p) = o.peak_rss_bytes {
                        rows.push(row("peak_rss_mib", p as f64 / (1024.0 * 1024.0), None, Some(o.seconds)));
                    }
                    rows.push(row("auroc", o.auroc, None, Some(o.seconds)));
                }
                Err(e) => {
                    let mut r = row("seconds", 0.0, Some(e.to_string()), None);
                    r.value = None;
                    r.status = Status::Failed;
                    rows.push(r);
                }
            }
            cell += 1;
            progress(&Progress {
                stage: format!("{} n={n} done", method.as_str()),
                done: cell,
                total: cells,
            });
        }
    }
    if !config.keep_files {
        for p in written {
            let _ = std::fs::remove_file(p);
        }
    }
    Ok(rows)
}
