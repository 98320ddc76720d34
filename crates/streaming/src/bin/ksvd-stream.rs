//! `ksvd-stream`: out-of-core KSVD / KPCA on LIBSVM files, with the ridge classifier and the
//! test AUROC.
//!
//! ```text
//! ksvd-stream run --train criteo.svm --features 1000000 --n-landmarks 1000 --n-components 100
//! ksvd-stream run --train part-0.svm --train part-1.svm --test test.svm --method ksvd --out models
//! ```
//!
//! With `--out DIR` the trained models are saved as `DIR/model.<method>-trained`
//! ([`ksvd_streaming::TrainedModel`]), the files `ksvd.dask.fit(out_dir=)` writes.
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use ksvd_streaming::{run_pipeline, Bandwidth, LibsvmSource, Method, PipelineParams, RowSelection, StreamingParams};

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

#[derive(Subcommand)]
enum Cmd {
    /// Fit KSVD (asymmetric Nyström, a2) and/or KPCA on training files, train a ridge classifier
    /// in another pass and print the test AUROC. Several files are the parts of one data set, in
    /// order: the same landmarks and results (to rounding) as `ksvd.dask.fit` on those files.
    Run {
        /// Training file (LIBSVM, plain or .bz2); repeat for several parts.
        #[arg(long, required = true)]
        train: Vec<PathBuf>,
        /// Test file (repeatable); without one a seeded split of every training file is held out.
        #[arg(long)]
        test: Vec<PathBuf>,
        /// Number of features M (default: the largest index of the training file).
        #[arg(long)]
        features: Option<usize>,
        /// Method.
        #[arg(long, value_enum, default_value = "both")]
        method: MethodArg,
        /// Landmarks n = m (`n_landmarks` of ksvd.dask.fit and the conventions).
        #[arg(long = "n-landmarks", visible_alias = "landmarks", default_value_t = 1000)]
        landmarks: usize,
        /// Embedding dimension r (`n_components` of ksvd.dask.fit and the conventions).
        #[arg(long = "n-components", visible_alias = "components", default_value_t = 100)]
        components: usize,
        /// Fixed RBF bandwidth (default: median heuristic on the landmarks).
        #[arg(long)]
        gamma: Option<f64>,
        /// Ridge lambda of the classifier (> 0).
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
        /// Directory for the trained models, `DIR/model.<method>-trained` (what `ksvd.dask.fit`'s
        /// `out_dir` holds and Python's `ksvd.load` reads), written atomically once every method
        /// has finished.
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
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
            out,
        } => {
            pool(threads)?;
            let source = |p: &PathBuf| {
                let s = LibsvmSource::new(p);
                match features {
                    Some(m) => s.n_features(m),
                    None => s,
                }
            };
            let (tr, te): (Vec<_>, Vec<_>) = if test.is_empty() {
                let split = |test| {
                    let (test_fraction, seed) = (test_fraction, seed);
                    if test {
                        RowSelection::SplitTest { test_fraction, seed }
                    } else {
                        RowSelection::SplitTrain { test_fraction, seed }
                    }
                };
                (
                    train.iter().map(|p| source(p).selection(split(false))).collect(),
                    train.iter().map(|p| source(p).selection(split(true))).collect(),
                )
            } else {
                (train.iter().map(source).collect(), test.iter().map(source).collect())
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
            let mut models = Vec::new();
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
                    "{}\tauroc={:.4}\ttrain_rows={}\ttest_rows={}\tfeatures={}\trank={}\tgamma={:.4e}\tlandmark_rows={}\tseconds={:.2}",
                    m.as_str(),
                    o.auroc,
                    o.train_rows,
                    o.test_rows,
                    o.features,
                    o.rank,
                    o.gamma,
                    o.row_landmarks.len(),
                    o.fit_seconds + o.train_seconds + o.score_seconds,
                );
                models.push(o.model);
            }
            if let Some(dir) = out {
                for model in &models {
                    let path = dir.join(format!("model.{}-trained", model.method()));
                    model.save(&path).map_err(|e| e.to_string())?;
                }
            }
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
