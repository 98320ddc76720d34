//! # ksvd-cli
//!
//! The `ksvd` command: KSVD embeddings, the top-`r` singular triplets of an asymmetric kernel
//! matrix `G_ij = k(x_i, z_j)` (rows index X, columns index Z, `G ≈ U S Vᵀ`, singular values in
//! descending order), of two sample sets, of one set (`Z = X`), of a data matrix and its columns
//! (Algorithm 1), or of a directed graph; the projections of new samples with a saved model; and
//! what a saved model holds. Install it with `cargo install --path crates/cli` (the binary is
//! `ksvd`).
//!
//! ```text
//! ksvd fit --rows X.csv [--cols Z.csv | --compat a1] --kernel sne --bandwidth 0.7 --n-components 20 \
//!          --solver nystrom --n-landmarks 1000 --seed 0 --out DIR
//! ksvd fit --graph edges.txt --graph-input row-normalized --kernel sne --n-components 20 --out DIR
//! ksvd transform --model DIR --rows NEW.csv [--extension] --out OUT
//! ksvd inspect DIR [--json]
//! ksvd completions bash > ~/.local/share/bash-completion/completions/ksvd
//! ```
//!
//! ## One contract with Rust and Python
//!
//! The flags of `ksvd fit` are the CLI column of the workspace's conventions table
//! (`docs/conventions.md`; `tests/conventions.rs` checks every flag, alias and default against
//! it): `--n-components` (alias `--rank`, default 2), `--kernel` (default `rbf`, a
//! [`KernelKind`](ksvd::KernelKind)), `--bandwidth` (alias `--gamma`; default the paper's rule
//! `γ = k sqrt(M γ_x)` with `k` = `--bandwidth-factor`, alias `--gamma-k`, default 1),
//! `--degree` (3), `--coef0` (alias `--offset`, 1), `--center`, `--compat`, `--solver` (default
//! `auto`, a [`SolverKind`](ksvd::SolverKind), built by [`ksvd::SolverOptions`] like Python's),
//! `--tol` (1e-8), `--n-landmarks` (alias `--landmarks`), `--n-col-landmarks` (alias
//! `--col-landmarks`), `--sampling`, `--landmark-rows`/`--landmark-cols`, `--oversampling`,
//! `--power-iters`, `--seed`, `--memory-budget`, `--threads`. Without `--cols`, `Z = X`; with
//! `--compat a0|a1|a2` (and no `--cols`), Z is the columns of X made comparable with its rows.
//!
//! ## Files
//!
//! `fit` writes `DIR/u` (N × r), `DIR/s` (r), `DIR/v` (M × r) as `.csv` and/or `.npy`
//! (`--format`), the model `DIR/model.json` ([`ksvd::KsvdModel`]'s checksummed envelope, format
//! [`ksvd::MODEL_FORMAT_VERSION`]) and `DIR/summary.json`: the model's
//! [`ksvd::ModelSummary`] (what `ksvd inspect --json` prints) plus the command's own fields
//! (`bandwidth_source`, `inputs`, `seconds`, `threads`, `model_file`). With `--json` the same
//! summary goes to standard output, and nothing else does.
//!
//! `transform` writes `OUT/rows` or `OUT/cols`: [`ksvd::KsvdModel::transform`]'s
//! `k̃(x', Z) V S^-½` (`U S^½` at the training rows) or, with `--extension`, the paper's
//! extension (eq. 10) `k̃(x', Z) V S⁻¹` (`U` at the training rows); `k̃(X, z')ᵀ U S^-p` for new
//! columns. It reads KSVD and KPCA models alike; a model file of another format (a streaming
//! fit's, say), of another version or with a changed byte is refused by the envelope.
//!
//! Every file is written atomically once everything is computed. Inputs: `.npy` (any float or
//! integer dtype, converted to float64), CSV/whitespace text (`--header` skips a header line),
//! sparse samples in LIBSVM format (`.libsvm`, `.svm`) and scipy CSR `.npz`. `-` is standard
//! input for `--rows`, `--cols`, `--matrix` and `--model` (one of them per run): CSV/text, `.npy`
//! or `.npz`, told apart by their first bytes (not LIBSVM); `transform --out -` writes the
//! projections to standard output as CSV (`.npy` with `--format npy`).
//!
//! Every file is read by `ksvd-datasets` (this crate only picks the reader), and the values of
//! `--kernel`, `--solver`, `--graph-input`, `--sampling` and `--node-ids` are parsed by the types
//! that own their names ([`ksvd_linalg::Vocabulary`]).
//!
//! ## Errors and exit statuses
//!
//! An error is one line on stderr (`ksvd: error: …`) and the exit status of
//! [`CliError::exit_status`], the table of `docs/conventions.md` (also in `ksvd --help`):
//!
#![doc = concat!("```text\n", include_str!("exit_statuses.txt"), "```")]
mod error;
mod fit;
mod inspect;
mod io;
mod transform;
mod values;

pub use error::{CliError, ExitStatus};
pub use fit::FitArgs;
pub use inspect::InspectArgs;
pub use io::{
    is_stdio, matrix_files, model_file, pad_dim, read_indices, read_model, read_samples, vector_files, write_all,
    write_matrix, Format, ReadOptions, STDIO,
};
pub use transform::TransformArgs;

use clap::{CommandFactory, Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;

/// The examples and exit statuses after `ksvd --help` (and each subcommand's help).
pub const AFTER_HELP: &str = concat!(
    "\
Examples:
  # Fit on two sample sets (one sample per CSV line); write u, s, v, model.json, summary.json:
  ksvd fit --rows X.csv --cols Z.csv --kernel rbf --bandwidth 1.5 --n-components 5 --solver exact --out fit/
  # One sample set (Z = X), the defaults (rbf, the bandwidth rule, rank 2), X from standard input,
  # the summary on standard output:
  cat X.csv | ksvd fit --rows - --json --out fit/
  # New row samples with the saved model: U S^1/2 at the training rows (writes out/rows.npy, .csv):
  ksvd transform --model fit/ --rows X_new.csv --out out/
  # The paper's extension (eq. 10; U at the training rows), as CSV on standard output:
  ksvd transform --model fit/ --rows X_new.csv --extension --out -
  # What a saved model holds (--json: as JSON):
  ksvd inspect fit/
  # A data matrix with a header, its columns as column samples (PCA compatibility, Algorithm 1):
  ksvd fit --rows A.csv --header --compat a1 --kernel sne --n-components 10 --out fit/
  # Sparse samples (LIBSVM or scipy .npz), asymmetric Nystrom with 500 landmarks, 4 threads:
  ksvd fit --rows X.libsvm --cols Z.npz --kernel linear --n-components 20 --solver nystrom --n-landmarks 500 --threads 4 --out fit/
  # A directed graph given as an edge list:
  ksvd fit --graph edges.txt --graph-input row-normalized --kernel sne --n-components 20 --out fit/
  # Shell completions:
  ksvd completions bash > ~/.local/share/bash-completion/completions/ksvd

",
    include_str!("exit_statuses.txt")
);

/// Command-line arguments.
#[derive(Debug, Parser)]
#[command(
    name = "ksvd",
    version,
    about = "Kernel SVD with asymmetric kernels (CCE) and the asymmetric Nyström method",
    after_help = AFTER_HELP
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Fit KSVD; write u, s, v, the model (model.json) and summary.json.
    #[command(after_help = AFTER_HELP)]
    Fit(Box<FitArgs>),
    /// Project new row or column samples with a saved model (KSVD or KPCA): U S^½ at the
    /// training rows, or the paper's extension (eq. 10) with --extension.
    #[command(after_help = AFTER_HELP)]
    Transform(TransformArgs),
    /// Print what a saved model holds: estimator, kernel, bandwidth, sizes, rank, solver,
    /// singular values, residuals, landmarks, centring.
    #[command(after_help = AFTER_HELP)]
    Inspect(InspectArgs),
    /// Print the completion script of a shell (bash, zsh, fish, powershell, elvish).
    Completions(CompletionsArgs),
}

/// Arguments of `ksvd completions`.
#[derive(Debug, clap::Args)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    shell: clap_complete::Shell,
}

/// Runs the tool on parsed arguments.
pub fn run(cli: Cli) -> Result<(), CliError> {
    match cli.command {
        Command::Fit(args) => fit::fit(*args),
        Command::Transform(args) => transform::transform(args),
        Command::Inspect(args) => inspect::inspect(args),
        Command::Completions(args) => completions(&args),
    }
}

/// `ksvd completions SHELL`: the script on standard output (generated into memory first, so a
/// closed pipe is an error rather than a panic).
fn completions(args: &CompletionsArgs) -> Result<(), CliError> {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut Cli::command(), "ksvd", &mut script);
    io::write_stdout(&script)
}

pub(crate) fn set_threads(threads: Option<usize>) -> Result<(), CliError> {
    if let Some(t) = threads {
        if t == 0 {
            return Err(CliError::Usage("--threads must be at least 1".into()));
        }
        rayon::ThreadPoolBuilder::new()
            .num_threads(t)
            .build_global()
            .map_err(|e| CliError::Usage(format!("cannot set --threads {t}: {e}")))?;
    }
    Ok(())
}

/// A progress display on stderr: hidden with `--quiet` or when stderr is not a terminal.
pub(crate) fn progress(quiet: bool, len: Option<u64>) -> ProgressBar {
    if quiet || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let b = match len {
        Some(n) => {
            let b = ProgressBar::new(n);
            b.set_style(
                ProgressStyle::with_template("{spinner} {elapsed} [{bar:30}] {pos}/{len} {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            b
        }
        None => {
            let b = ProgressBar::new_spinner();
            b.set_style(
                ProgressStyle::with_template("{spinner} {elapsed} {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            b
        }
    };
    b.enable_steady_tick(std::time::Duration::from_millis(120));
    b
}
