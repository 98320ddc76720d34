//! Measurements, the building blocks of the large-scale table and the scaling benchmark (moved
//! here from `ksvd-streaming`, which is no experiment harness): one cell of the table
//! ([`measure_pipeline`]: files + method + params + seed → AUROC, wall and CPU seconds, peak
//! memory) and one point of the benchmark ([`bench_once`], what the `cargo xtask scaling-child`
//! process runs), with the in-memory reference paths (dense and randomized SVD of the whole `G`)
//! and their memory estimate.
use std::path::Path;
use std::time::Instant;

use anyhow::Result;
use ksvd_datasets::{read_libsvm, LibsvmOptions};
use ksvd_kernels::bandwidth::sq_distances;
use ksvd_kernels::{Kernel, KernelMatrix, Samples};
use ksvd_linalg::random::{rng_from_seed, sample_indices};
use ksvd_linalg::{dense, CsrMatrix};
use ksvd_solvers::{dense_svd_operator, randomized_svd, RsvdParams, SvdResult};
use ksvd_streaming::{
    run_pipeline, Bandwidth, CompatSide, LabelRule, LibsvmSource, Method, PipelineOutcome, PipelineParams, Progress,
    ProgressFn, ProjectionScaling, RidgeAccumulator, SparseProjection, StreamingParams,
};
use ndarray::Array2;
use serde::{Deserialize, Serialize};

use super::memory::{cpu_seconds, peak_rss_bytes, reset_peak_rss};

/// What one cell of the large-scale table measured ([`measure_pipeline`]).
#[derive(Debug)]
pub struct CellMeasurement {
    /// The pipeline's outcome (AUROC, sizes, rank, `γ`, per-pass seconds), or why it failed.
    pub outcome: ksvd_streaming::Result<PipelineOutcome>,
    /// Wall seconds of fit + classifier training + scoring (file reading included).
    pub seconds: f64,
    /// CPU seconds (user + system, all threads) of this process during the cell.
    pub cpu_seconds: Option<f64>,
    /// Peak resident memory of this process (`VmHWM`) after the cell, bytes (`None`: no
    /// `/proc/self/status`).
    pub peak_rss_bytes: Option<u64>,
    /// Whether `VmHWM` was reset before the cell; if not, the peak is the whole process's so far.
    pub peak_reset: bool,
}

/// One cell of the large-scale table: resets the peak-memory mark, runs [`run_pipeline`]
/// (`method` on `train`, scored on `test`, randomness from `params.model.seed`) and measures
/// wall time, CPU time and peak memory. A failing pipeline is a measured outcome, not an error.
pub fn measure_pipeline(
    method: Method,
    train: &LibsvmSource,
    test: &LibsvmSource,
    params: &PipelineParams,
    progress: &mut ProgressFn<'_>,
) -> CellMeasurement {
    let peak_reset = reset_peak_rss();
    let t0 = Instant::now();
    let cpu0 = cpu_seconds();
    let outcome = run_pipeline(
        method,
        std::slice::from_ref(train),
        std::slice::from_ref(test),
        params,
        progress,
    );
    let seconds = t0.elapsed().as_secs_f64();
    let cpu_seconds = cpu0.zip(cpu_seconds()).map(|(a, b)| b - a);
    CellMeasurement {
        outcome,
        seconds,
        cpu_seconds,
        peak_rss_bytes: peak_rss_bytes(),
        peak_reset,
    }
}

/// A path measured by the scaling benchmark.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ScalingMethod {
    /// The out-of-core asymmetric Nyström KSVD of `ksvd-streaming` (3 passes over the file).
    StreamingNystrom,
    /// In memory: the whole kernel matrix `G ∈ R^{N×M}` materialised and its exact SVD.
    Dense,
    /// In memory: randomized SVD of the implicit `G` (data and `Z'` in memory, `G` never stored).
    Rsvd,
}

impl ScalingMethod {
    /// Every path, in the order of the rows.
    pub const ALL: [ScalingMethod; 3] = [
        ScalingMethod::StreamingNystrom,
        ScalingMethod::Dense,
        ScalingMethod::Rsvd,
    ];

    /// Method id of the rows.
    pub fn as_str(self) -> &'static str {
        match self {
            ScalingMethod::StreamingNystrom => "streaming-nystrom",
            ScalingMethod::Dense => "dense",
            ScalingMethod::Rsvd => "rsvd",
        }
    }
}

impl std::str::FromStr for ScalingMethod {
    type Err = anyhow::Error;
    fn from_str(s: &str) -> Result<Self> {
        ScalingMethod::ALL
            .into_iter()
            .find(|m| m.as_str() == s)
            .ok_or_else(|| anyhow::anyhow!("unknown scaling method `{s}` (expected streaming-nystrom, dense or rsvd)"))
    }
}

/// The model every measurement of a scaling run fits, whatever its size and path (the spec's
/// `[params.model]`; absent keys take these defaults).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BenchModel {
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
}

impl Default for BenchModel {
    fn default() -> Self {
        BenchModel {
            landmarks: 1000,
            components: 50,
            bandwidth: Bandwidth::Median(1.0),
            ridge: 1e-3,
            chunk_rows: 10_000,
            seed: 0,
            rsvd_oversampling: 10,
            rsvd_power_iters: 2,
        }
    }
}

/// Parameters of one measurement (shared by the benchmark and its child process).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BenchParams {
    /// Feature columns `M` of the files.
    pub features: usize,
    /// The model fitted.
    pub model: BenchModel,
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
                model: StreamingParams::new(params.model.components, params.model.landmarks)
                    .bandwidth(params.model.bandwidth)
                    .chunk_rows(params.model.chunk_rows)
                    .seed(params.model.seed),
                ridge: params.model.ridge,
                positive_label: None,
            };
            let tr = LibsvmSource::new(train).n_features(params.features);
            let te = LibsvmSource::new(test).n_features(params.features);
            let o = run_pipeline(Method::Ksvd, &[tr], &[te], &p, &mut |_: &Progress| {})?;
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
    let (xs, zs, side, proj) = in_memory_samples(&x, params.model.seed)?;
    let n = params.model.landmarks.min(nn);
    let m = params.model.landmarks.min(mm);
    // The median heuristic on a uniform n x m sample of pairs (the streaming path takes its
    // landmark pairs), by the one bandwidth rule.
    let gamma = params.model.bandwidth.gamma(|| -> ksvd_streaming::Result<Vec<f64>> {
        let rows = sample_indices(&mut rng_from_seed(params.model.seed), nn, n);
        let cols = sample_indices(&mut rng_from_seed(params.model.seed.wrapping_add(0x9e37_79b9)), mm, m);
        let (a, b) = (xs.select(&rows)?.to_dense(), zs.select(&cols)?.to_dense());
        Ok(sq_distances(a.view(), b.view())?.into_iter().collect())
    })?;
    let g = KernelMatrix::new(xs, zs, Kernel::Rbf { gamma })?;
    let r = params.model.components.min(nn).min(mm);
    let svd: SvdResult = match method {
        ScalingMethod::Dense => dense_svd_operator(&g, r)?,
        _ => randomized_svd(
            &g,
            r,
            &RsvdParams {
                oversampling: params.model.rsvd_oversampling,
                power_iters: params.model.rsvd_power_iters,
                seed: params.model.seed,
            },
        )?,
    };
    let labels = LabelRule::from_counts(train, &label_counts(&tr.labels), None)?;
    let y: Vec<f64> = tr.labels.iter().map(|&l| labels.target(l)).collect();
    let mut acc = RidgeAccumulator::new(r);
    acc.add(svd.u.view(), &y)?;
    let clf = acc.solve(params.model.ridge)?;
    // Test rows: out-of-sample U = k(x', Z) V S⁻¹.
    let te = read_libsvm(test, &opts)?;
    let new_x = match (side, &proj) {
        (CompatSide::Rows, Some(p)) => Samples::dense(map_rows(&te.features, p))?,
        _ => Samples::sparse(te.features)?,
    };
    let all_cols: Vec<usize> = (0..mm).collect();
    let k = g.cross_rows(&new_x, &all_cols)?;
    let (row_coef, _) = ksvd_nystrom::exact_coefficients(&svd);
    let u_new = dense::matmul(k.view(), row_coef.view())?;
    let scores = clf.decision(u_new.view());
    let pos: Vec<bool> = te.labels.iter().map(|&l| labels.target(l) > 0.0).collect();
    Ok((
        ksvd_metrics::auroc(scores.as_slice().unwrap_or(&scores.to_vec()), &pos)?,
        r,
        nn,
    ))
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::super::synthetic::{write_synthetic, SyntheticPart, SyntheticSpec};
    use super::*;

    #[test]
    fn the_cell_measures_the_pipelines_outcome() {
        let dir = tempfile::tempdir().unwrap();
        let spec = SyntheticSpec {
            features: 300,
            nnz_per_row: 10,
            ..SyntheticSpec::default()
        };
        let (tr, te) = (dir.path().join("train.svm"), dir.path().join("test.svm"));
        write_synthetic(&tr, &spec, SyntheticPart::Train, 3000).unwrap();
        write_synthetic(&te, &spec, SyntheticPart::Test, 1000).unwrap();
        let params = PipelineParams {
            model: StreamingParams::new(10, 100).chunk_rows(700).seed(4),
            ridge: 1e-3,
            positive_label: None,
        };
        let train = LibsvmSource::new(&tr).n_features(300);
        let test = LibsvmSource::new(&te);
        for method in [Method::Ksvd, Method::Kpca] {
            let direct = run_pipeline(
                method,
                std::slice::from_ref(&train),
                std::slice::from_ref(&test),
                &params,
                &mut |_| {},
            )
            .unwrap();
            let cell = measure_pipeline(method, &train, &test, &params, &mut |_| {});
            let o = cell.outcome.unwrap();
            // Seeded: the same AUROC, rank, bandwidth and landmarks to the bit.
            assert_eq!(
                (o.auroc, o.rank, o.gamma, o.train_rows, &o.row_landmarks),
                (
                    direct.auroc,
                    direct.rank,
                    direct.gamma,
                    direct.train_rows,
                    &direct.row_landmarks
                )
            );
            assert!(cell.seconds > 0.0);
        }
        // A missing file is a measured outcome (an error in the cell), not a panic.
        let absent = LibsvmSource::new(dir.path().join("absent.svm"));
        assert!(measure_pipeline(Method::Ksvd, &absent, &test, &params, &mut |_| {})
            .outcome
            .is_err());
    }

    #[test]
    fn in_memory_estimates_grow_with_n_and_skip_the_streaming_path() {
        let est = |m, n| in_memory_estimate(m, n, 2000, 16, 10_000, 50, 10);
        assert_eq!(est(ScalingMethod::StreamingNystrom, 1_000_000), None);
        for m in [ScalingMethod::Dense, ScalingMethod::Rsvd] {
            let (a, b) = (est(m, 10_000).unwrap(), est(m, 100_000).unwrap());
            assert!(a > 0.0 && b > a, "{m:?}: {a} {b}");
        }
        // Dense stores G and its working copy: at least 2 N M doubles.
        let n = 100_000.0;
        assert!(est(ScalingMethod::Dense, 100_000).unwrap() >= 2.0 * n * 2000.0 * 8.0);
        assert_eq!("rsvd".parse::<ScalingMethod>().unwrap(), ScalingMethod::Rsvd);
        assert!("svd".parse::<ScalingMethod>().is_err());
    }
}
