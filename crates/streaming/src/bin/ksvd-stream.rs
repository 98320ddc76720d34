//! `ksvd-stream`: out-of-core KSVD / KPCA on LIBSVM files, synthetic file generation, and the
//! per-measurement child of the scaling benchmark.
//!
//! ```text
//! ksvd-stream run --train criteo.svm --features 1000000 --landmarks 1000 --components 100
//! ksvd-stream generate --out train.svm --rows 10000000 --features 2000 --nnz 16 --seed 0
//! ksvd-stream bench --method streaming-nystrom --train t.svm --test s.svm --threads 2 --params '<toml>'
//! ```
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use ksvd_streaming::{
    bench_once, run_pipeline, write_synthetic, Bandwidth, BenchParams, LibsvmSource, Method, PipelineParams,
    RowSelection, ScalingMethod, StreamingParams, SyntheticPart, SyntheticSpec,
};

#[derive(Parser)]
#[command(
    name = "ksvd-stream",
    version,
    about = "Out-of-core asymmetric Nyström KSVD on LIBSVM files"
)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Clone, Copy, ValueEnum)]
enum MethodArg {
    Ksvd,
    Kpca,
    Both,
}

#[derive(Clone, Copy, ValueEnum)]
enum PartArg {
    Train,
    Test,
}

#[derive(Clone, Copy, ValueEnum)]
enum BenchMethodArg {
    StreamingNystrom,
    Dense,
    Rsvd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Fit KSVD (asymmetric Nyström, a2) and/or KPCA on a training file, train a ridge classifier
    /// in a second pass and print the test AUROC.
    Run {
        /// Training file (LIBSVM, plain or .bz2).
        #[arg(long)]
        train: PathBuf,
        /// Test file; without it a seeded split of the training file is held out.
        #[arg(long)]
        test: Option<PathBuf>,
        /// Number of features M (default: the largest index of the training file).
        #[arg(long)]
        features: Option<usize>,
        /// Method.
        #[arg(long, value_enum, default_value = "both")]
        method: MethodArg,
        /// Landmarks n = m.
        #[arg(long, default_value_t = 1000)]
        landmarks: usize,
        /// Embedding dimension r.
        #[arg(long, default_value_t = 100)]
        components: usize,
        /// Fixed RBF bandwidth (default: median heuristic on the landmarks).
        #[arg(long)]
        gamma: Option<f64>,
        /// Ridge lambda of the classifier.
        #[arg(long, default_value_t = 1e-3)]
        ridge: f64,
        /// Held-out fraction when there is no test file.
        #[arg(long, default_value_t = 0.2)]
        test_fraction: f64,
        /// Positive label (default: the larger of two labels).
        #[arg(long)]
        positive_label: Option<f64>,
        /// Rows per chunk.
        #[arg(long, default_value_t = 10_000)]
        chunk_rows: usize,
        /// Seed.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Threads (default: all cores).
        #[arg(long)]
        threads: Option<usize>,
    },
    /// Write a seeded synthetic LIBSVM file with a planted linear + quadratic signal.
    Generate {
        /// Output file.
        #[arg(long)]
        out: PathBuf,
        /// Rows.
        #[arg(long)]
        rows: usize,
        /// Part (train and test use independent rows, the same planted weights).
        #[arg(long, value_enum, default_value = "train")]
        part: PartArg,
        /// Features M.
        #[arg(long, default_value_t = 2000)]
        features: usize,
        /// Nonzeros per row.
        #[arg(long, default_value_t = 16)]
        nnz: usize,
        /// Popularity exponent (1 = uniform features).
        #[arg(long, default_value_t = 2.0)]
        popularity: f64,
        /// Number of (most frequent) features carrying the planted signal.
        #[arg(long, default_value_t = 64)]
        signal_features: usize,
        /// Seed.
        #[arg(long, default_value_t = 0)]
        seed: u64,
    },
    /// One measurement of the scaling benchmark; prints a TOML `BenchOutcome`.
    Bench {
        /// Path to measure.
        #[arg(long, value_enum)]
        method: BenchMethodArg,
        /// Training file.
        #[arg(long)]
        train: PathBuf,
        /// Test file.
        #[arg(long)]
        test: PathBuf,
        /// Threads.
        #[arg(long)]
        threads: Option<usize>,
        /// `BenchParams` as TOML.
        #[arg(long)]
        params: String,
    },
}

fn pool(threads: Option<usize>) -> Result<(), String> {
    if let Some(t) = threads {
        rayon::ThreadPoolBuilder::new()
            .num_threads(t)
            .build_global()
            .map_err(|e| format!("cannot start {t} threads: {e}"))?;
    }
    Ok(())
}

fn run(cli: Cli) -> Result<(), String> {
    match cli.command {
        Cmd::Run {
            train,
            test,
            features,
            method,
            landmarks,
            components,
            gamma,
            ridge,
            test_fraction,
            positive_label,
            chunk_rows,
            seed,
            threads,
        } => {
            pool(threads)?;
            let mut tr = LibsvmSource::new(&train);
            if let Some(m) = features {
                tr = tr.n_features(m);
            }
            let te = match test {
                Some(t) => LibsvmSource::new(t),
                None => {
                    tr = tr.selection(RowSelection::SplitTrain { test_fraction, seed });
                    LibsvmSource::new(&train).selection(RowSelection::SplitTest { test_fraction, seed })
                }
            };
            let bandwidth = gamma.map_or(Bandwidth::Median(1.0), Bandwidth::Fixed);
            let params = PipelineParams {
                model: StreamingParams::new(components, landmarks)
                    .bandwidth(bandwidth)
                    .chunk_rows(chunk_rows)
                    .seed(seed),
                ridge,
                positive_label,
            };
            let methods: &[Method] = match method {
                MethodArg::Ksvd => &[Method::Ksvd],
                MethodArg::Kpca => &[Method::Kpca],
                MethodArg::Both => &[Method::Kpca, Method::Ksvd],
            };
            for &m in methods {
                let mut last = std::time::Instant::now();
                let o = run_pipeline(m, &tr, &te, &params, &mut |p| {
                    if last.elapsed().as_secs_f64() > 2.0 {
                        eprintln!("{}: {}: {} rows", m.as_str(), p.stage, p.done);
                        last = std::time::Instant::now();
                    }
                })
                .map_err(|e| e.to_string())?;
                println!(
                    "{}\tauroc={:.4}\ttrain_rows={}\ttest_rows={}\tfeatures={}\trank={}\tgamma={:.4e}\tseconds={:.2}\tpeak_rss_mib={}",
                    m.as_str(),
                    o.auroc,
                    o.train_rows,
                    o.test_rows,
                    o.features,
                    o.rank,
                    o.gamma,
                    o.fit_seconds + o.train_seconds + o.score_seconds,
                    ksvd_streaming::peak_rss_bytes().map_or("?".into(), |b| format!("{:.0}", b as f64 / 1048576.0)),
                );
            }
            Ok(())
        }
        Cmd::Generate {
            out,
            rows,
            part,
            features,
            nnz,
            popularity,
            signal_features,
            seed,
        } => {
            let spec = SyntheticSpec {
                features,
                nnz_per_row: nnz,
                popularity,
                signal_features,
                seed,
                ..SyntheticSpec::default()
            };
            let part = match part {
                PartArg::Train => SyntheticPart::Train,
                PartArg::Test => SyntheticPart::Test,
            };
            let s = write_synthetic(&out, &spec, part, rows).map_err(|e| e.to_string())?;
            println!(
                "{}: {} rows, {} positive, {} bytes, {:.2} s",
                out.display(),
                s.rows,
                s.positives,
                s.bytes,
                s.seconds
            );
            Ok(())
        }
        Cmd::Bench {
            method,
            train,
            test,
            threads,
            params,
        } => {
            pool(threads)?;
            let params: BenchParams =
                toml::from_str(&params).map_err(|e| format!("--params is not a BenchParams TOML: {e}"))?;
            let method = match method {
                BenchMethodArg::StreamingNystrom => ScalingMethod::StreamingNystrom,
                BenchMethodArg::Dense => ScalingMethod::Dense,
                BenchMethodArg::Rsvd => ScalingMethod::Rsvd,
            };
            let o = bench_once(method, &train, &test, &params).map_err(|e| e.to_string())?;
            print!("{}", toml::to_string(&o).map_err(|e| e.to_string())?);
            Ok(())
        }
    }
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ksvd-stream: {e}");
            ExitCode::FAILURE
        }
    }
}
