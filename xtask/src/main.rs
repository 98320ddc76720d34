//! `cargo xtask`: command-line front end of the experiment runner (the [`xtask`] library).
//!
//! ```text
//! cargo xtask list
//! cargo xtask reproduce [--only NAME]... [--quick] [--out DIR] [--threads N] [--no-cache] [--render-only]
//! ```
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;
use clap::{Parser, Subcommand};

use xtask::{experiments, fsx, reproduce, values};

#[derive(Parser, Debug)]
#[command(
    name = "cargo xtask",
    about = "Reproduce the paper's tables and figures from experiments/*.toml"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run experiment specs and write results/ (CSV, Parquet, Markdown, figures, REPORT.md).
    Reproduce {
        /// Run only this spec (repeatable); all specs when absent.
        #[arg(long = "only", value_name = "NAME")]
        only: Vec<String>,
        /// Use each spec's [quick] section (reduced grids; the whole run takes a few minutes).
        #[arg(long)]
        quick: bool,
        /// Output directory (default: <workspace>/results, or <workspace>/results/quick with --quick, so a
        /// quick run never overwrites the committed full results).
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Threads for the experiments (default: all available cores).
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
        threads: Option<u32>,
        /// Recompute every cell instead of reusing results/.cache.
        #[arg(long)]
        no_cache: bool,
        /// Run nothing: re-render the Markdown pages, figures and REPORT.md from the result files in the
        /// output directory (after editing a spec's layout, say).
        #[arg(long, conflicts_with = "no_cache")]
        render_only: bool,
    },
    /// Compare the quick run's values (results/quick/) bit for bit with results/quick-values.csv,
    /// skipping measurements of the machine; exits non-zero when one differs.
    CheckValues {
        /// Directory of the quick results.
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
        /// The reference file.
        #[arg(long, value_name = "FILE")]
        reference: Option<PathBuf>,
        /// Write the reference from the quick results instead (after a change meant to move values).
        #[arg(long)]
        bless: bool,
    },
    /// List every spec with its kind and one-line description.
    List,
    /// Run the Table 1 protocol with a config file (a diagnosis outside the specs, e.g.
    /// xtask/configs/pubmed-1000.toml) and print its rows as CSV.
    Table1Config {
        /// The TOML config (keys of the table1 spec's [params], plus datasets, methods, seed).
        file: PathBuf,
    },
    /// One measurement of the scaling spec in its own process (run by the scaling runner): prints
    /// its outcome as TOML.
    #[command(hide = true)]
    ScalingChild {
        /// streaming-nystrom, dense or rsvd.
        #[arg(long)]
        method: String,
        /// Training LIBSVM file.
        #[arg(long)]
        train: PathBuf,
        /// Test LIBSVM file.
        #[arg(long)]
        test: PathBuf,
        /// Threads.
        #[arg(long)]
        threads: Option<usize>,
        /// The measurement's parameters as TOML.
        #[arg(long)]
        params: String,
    },
}

fn list() -> Result<()> {
    let registry = experiments::registry();
    let dir = fsx::project_root().join("experiments");
    let specs = reproduce::load_specs(&dir, false, &registry)?;
    let width = specs.iter().map(|s| s.name().len()).max().unwrap_or(0);
    for s in &specs {
        let implemented = experiments::lookup(&registry, &s.file.kind)
            .map(|e| e.imp.implemented())
            .unwrap_or(false);
        let status = if implemented {
            String::new()
        } else {
            " [not implemented]".to_string()
        };
        println!(
            "{:width$}  {} ({}, kind `{}`){status}",
            s.name(),
            s.file.description,
            s.file.paper_ref,
            s.file.kind
        );
    }
    Ok(())
}

/// Where `reproduce` writes by default: `results/`, or `results/quick/` for `--quick` (so a quick
/// run never overwrites the committed full results); `check-values` reads the quick one.
fn results_dir(root: &Path, quick: bool) -> PathBuf {
    let results = root.join("results");
    if quick {
        results.join("quick")
    } else {
        results
    }
}

fn run(cli: Cli) -> Result<bool> {
    match cli.command {
        Command::List => list().map(|()| true),
        Command::CheckValues { dir, reference, bless } => {
            let root = fsx::project_root();
            let specs = reproduce::load_specs(&root.join("experiments"), true, &experiments::registry())?;
            values::check(
                &specs,
                &dir.unwrap_or_else(|| results_dir(&root, true)),
                &reference.unwrap_or_else(|| root.join("results").join("quick-values.csv")),
                bless,
            )
        }
        Command::Table1Config { file } => experiments::graph_config(&file).map(|()| true),
        Command::ScalingChild {
            method,
            train,
            test,
            threads,
            params,
        } => experiments::scaling_child(&method, &train, &test, threads, &params).map(|()| true),
        Command::Reproduce {
            only,
            quick,
            out,
            threads,
            no_cache,
            render_only,
        } => {
            // The cells allocate and free large arrays again and again: keeping freed memory
            // for reuse saves the page faults and zeroing of fresh mappings
            // (ksvd_linalg::retain_freed_memory has the measurements). In-process peak-memory
            // measurements release it first (large_scale::memory); the scaling benchmark's
            // children (`scaling-child`) keep the allocator as a library user's process has it.
            ksvd_linalg::retain_freed_memory();
            let root = fsx::project_root();
            let threads = threads
                .map(|t| t as usize)
                .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
            let opts = reproduce::Options {
                only,
                quick,
                out: out.unwrap_or_else(|| results_dir(&root, quick)),
                threads,
                no_cache,
                render_only,
                specs: root.join("experiments"),
            };
            let outcome = reproduce::run(&opts)?;
            eprintln!(
                "wrote {} (specs run: {})",
                opts.out.join("REPORT.md").display(),
                outcome.ran.join(", ")
            );
            for (name, err) in &outcome.failed {
                eprintln!("error: experiment `{name}` failed: {err}");
            }
            Ok(outcome.failed.is_empty())
        }
    }
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("error: {}", format!("{e:#}").replace('\n', "\n  "));
            ExitCode::FAILURE
        }
    }
}
