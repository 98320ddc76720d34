//! # ksvd-cli
//!
//! The `ksvd` command-line tool: KSVD embeddings (the top-`r` singular triplets of an
//! asymmetric kernel matrix `G_ij = k(x_i, z_j)`) of two data sets, of a data matrix and its
//! columns, or of a directed graph, computed exactly or approximately; and the out-of-sample
//! extension (eq. 10) of a saved model to new samples.
//!
//! ```text
//! ksvd fit --rows X.csv [--cols Z.csv | --compat a1] --kernel sne --gamma 0.7 --rank 20 \
//!          --solver nystrom --landmarks 1000 --seed 0 --out DIR
//! ksvd fit --graph edges.txt --graph-input row-normalized --kernel sne --rank 20 --solver lanczos --out DIR
//! ksvd transform --model DIR --rows NEW.csv --out OUT
//! ```
//!
//! `fit` writes `DIR/u` (n × r), `DIR/s` (r), `DIR/v` (m × r) as `.csv` and/or `.npy`
//! (`--format`), the model `DIR/model.json` (format: [`ksvd::MODEL_FORMAT_VERSION`]) and
//! `DIR/summary.json` (sizes, kernel, γ and how it was chosen, solver, singular values,
//! residuals, time). `transform` writes `OUT/rows` or `OUT/cols`: `k̃(x', Z) V S⁻¹` or
//! `k̃(X, z')ᵀ U S⁻¹`, which reproduce `u` and `v` on the training samples. Every file is written
//! atomically once everything is computed. Errors are one line on stderr and a non-zero exit.
//!
//! Inputs: `.npy` (any float/integer dtype, converted to float64), CSV/whitespace text
//! (`--header` skips a header line), sparse samples in LIBSVM format (`.libsvm`, `.svm`) and
//! scipy CSR `.npz` (`scipy.sparse.save_npz`).
//!
//! Every file is read by `ksvd-datasets` (this crate only picks the reader), and the values of
//! `--graph-input`, `--sampling`, `--node-ids` and `--compat` are parsed by the types that own
//! their names ([`GraphInput`], [`Sampling`], [`NodeIds`], [`Compat`]).
mod io;
mod values;

pub use io::{matrix_files, pad_dim, read_indices, read_samples, vector_files, write_all, Format, ReadOptions};

use clap::{Parser, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use ksvd::{InnerSolver, Ksvd, KsvdModel, LanczosParams, Progress, RsvdParams, Sampling, Solver};
use ksvd_datasets::{read_edge_list, NodeIds};
use ksvd_kernels::graph::{bandwidth_rule, graph_samples, GraphInput};
use ksvd_kernels::{Compat, Kernel, Samples};
use linfa::param_guard::ParamGuard;
use linfa::traits::Fit;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Instant;

/// Errors of the command-line tool.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CliError {
    /// An input file is missing or malformed.
    #[error("{}{}: {msg}", path.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
    Input {
        /// The file.
        path: PathBuf,
        /// 1-based line, when known.
        line: Option<usize>,
        /// What is wrong.
        msg: String,
    },
    /// A reader of `ksvd-datasets` rejected an input file (the error names the file and line).
    #[error(transparent)]
    Dataset(ksvd_datasets::DatasetError),
    /// An output could not be written.
    #[error("cannot write {}: {msg}", path.display())]
    Output {
        /// The file.
        path: PathBuf,
        /// Why.
        msg: String,
    },
    /// Inconsistent options.
    #[error("{0}")]
    Usage(String),
    /// The computation failed.
    #[error(transparent)]
    Ksvd(#[from] ksvd::KsvdError),
    /// Kernel construction failed.
    #[error(transparent)]
    Kernel(#[from] ksvd_kernels::KernelError),
}

const EXAMPLES: &str = "\
Examples:
  # Fit on two sample sets (one sample per CSV line) and write u, s, v, model.json, summary.json:
  ksvd fit --rows X.csv --cols Z.csv --kernel rbf --gamma 1.5 --rank 5 --solver exact --out fit/
  # Out-of-sample extension of new row samples with the saved model (writes out/rows.npy, .csv):
  ksvd transform --model fit/ --rows X_new.csv --out out/
  # A data matrix with a header, its columns as column samples (PCA compatibility), Lanczos:
  ksvd fit --rows A.csv --header --compat a1 --kernel sne --rank 10 --out fit/
  # Sparse samples (LIBSVM or scipy .npz), asymmetric Nystrom with 500 landmarks, 4 threads:
  ksvd fit --rows X.libsvm --cols Z.npz --kernel linear --rank 20 --solver nystrom --landmarks 500 --threads 4 --out fit/
  # A directed graph given as an edge list:
  ksvd fit --graph edges.txt --graph-input row-normalized --kernel sne --rank 20 --out fit/";

/// Command-line arguments.
#[derive(Debug, Parser)]
#[command(
    name = "ksvd",
    version,
    about = "Kernel SVD with asymmetric kernels (CCE) and the asymmetric Nyström method",
    after_help = EXAMPLES
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Fit KSVD; write u, s, v, the model (model.json) and summary.json.
    #[command(after_help = EXAMPLES)]
    Fit(Box<FitArgs>),
    /// Project new row or column samples with a saved model (out-of-sample extension, eq. 10).
    #[command(after_help = EXAMPLES)]
    Transform(TransformArgs),
}

/// Kernel choice.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum KernelArg {
    /// x . z
    Linear,
    /// (x . z + offset)^degree
    Poly,
    /// exp(-||x - z||^2 / gamma^2)
    Rbf,
    /// exp(-||x - z|| / gamma)
    Laplacian,
    /// RBF normalised over Z (rows of G sum to 1)
    Sne,
    /// A kernel matrix you computed: --matrix G (N x M, rows index X, columns Z)
    Precomputed,
}

/// Solver choice.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum SolverArg {
    /// Dense SVD when cheapest and within the memory budget, block Lanczos otherwise; every
    /// triplet meets --tol.
    Auto,
    /// Dense SVD of the materialised G.
    Exact,
    /// Restarted block Lanczos bidiagonalisation to --tol.
    Lanczos,
    /// Randomized SVD with --oversampling and --power-iters (residuals reported, not guaranteed).
    Rsvd,
    /// Randomized block Krylov SVD with --oversampling, stopping at --tol (or its depth limit).
    BlockKrylov,
    /// Asymmetric Nyström method.
    Nystrom,
}

/// Arguments of `ksvd fit`.
#[derive(Debug, clap::Args)]
pub struct FitArgs {
    /// Row samples X, one per row: .npy (any numeric dtype), CSV/text, .libsvm/.svm or scipy CSR .npz.
    #[arg(long, conflicts_with_all = ["graph", "matrix"])]
    rows: Option<PathBuf>,
    /// With --kernel precomputed: the kernel matrix G (N x M; .npy or CSV), rectangular allowed.
    #[arg(long, conflicts_with = "graph")]
    matrix: Option<PathBuf>,
    /// Column samples Z (same formats). Omitted: Z = the columns of X.
    #[arg(long, requires = "rows")]
    cols: Option<PathBuf>,
    /// CSV/text inputs start with a header line.
    #[arg(long)]
    header: bool,
    /// Directed graph as an edge list "src dst" per line: x_i = out-row, z_j = in-column of A.
    #[arg(long)]
    graph: Option<PathBuf>,
    /// Transform of the adjacency matrix A: `raw` (A), `row-normalized` (D_out^-1 A),
    /// `self-loops` (A + I), `row-normalized-self-loops` (D_out^-1 (A + I)).
    #[arg(long, value_parser = values::core::<GraphInput>(), default_value = "raw")]
    graph_input: GraphInput,
    /// How --graph ids become node indices: `auto` (integer ids covering 0..=max are indices,
    /// anything else is numbered by first appearance and written to nodes.csv), `index`, `name`.
    #[arg(long, value_parser = values::core::<NodeIds>(), default_value = "auto", requires = "graph")]
    node_ids: NodeIds,
    /// Compatibility matrix when Z is omitted and X is not square: `a0` (pseudo-inverse), `a1`
    /// (PCA projection), `a2` (Gaussian random projection seeded by --seed).
    #[arg(long, value_parser = Compat::from_str, default_value = "a1")]
    compat: Compat,
    /// Kernel.
    #[arg(long, value_enum)]
    kernel: KernelArg,
    /// Bandwidth γ (RBF, Laplacian, SNE). Default: the paper's rule γ = k sqrt(M γ_x).
    #[arg(long, allow_negative_numbers = true)]
    gamma: Option<f64>,
    /// Factor k of the bandwidth rule when --gamma is not given.
    #[arg(long, default_value_t = 1.0)]
    gamma_k: f64,
    /// Polynomial degree.
    #[arg(long, default_value_t = 2)]
    degree: u32,
    /// Polynomial offset.
    #[arg(long, default_value_t = 1.0)]
    offset: f64,
    /// Number of singular triplets r.
    #[arg(long)]
    rank: usize,
    /// Solver.
    #[arg(long, value_enum, default_value = "auto")]
    solver: SolverArg,
    /// Nyström: sampled rows (and columns); the full sizes give the exact solution.
    #[arg(long)]
    landmarks: Option<usize>,
    /// Nyström: sampled columns if different from --landmarks.
    #[arg(long)]
    col_landmarks: Option<usize>,
    /// Nyström: how landmarks are chosen. `adaptive` finds the rows and columns that matter
    /// (coherent kernels, sparse graphs) where uniform samples miss them.
    #[arg(long, value_parser = values::core::<Sampling>(), default_value = "uniform")]
    sampling: Sampling,
    /// Nyström: same as `--sampling squared-norm` (kept for older scripts).
    #[arg(long, conflicts_with = "sampling")]
    norm_sampling: bool,
    /// Nyström with user-chosen landmark rows: 0-based indices into X (.npy or text).
    #[arg(long, requires = "landmark_cols")]
    landmark_rows: Option<PathBuf>,
    /// Nyström with user-chosen landmark columns: 0-based indices into Z (.npy or text).
    #[arg(long, requires = "landmark_rows")]
    landmark_cols: Option<PathBuf>,
    /// Relative residual tolerance of auto, lanczos and block-krylov: every triplet has
    /// ‖G v − s u‖ ≤ tol s_1 and ‖Gᵀ u − s v‖ ≤ tol s_1.
    #[arg(long, default_value_t = 1e-8)]
    tol: f64,
    /// Memory budget for storing G (products become GEMMs) and for the dense solver, e.g. 512M,
    /// 4G (default: a quarter of the available memory; env KSVD_MEMORY_BUDGET).
    #[arg(long)]
    memory_budget: Option<String>,
    /// RSVD oversampling.
    #[arg(long, default_value_t = 10)]
    oversampling: usize,
    /// RSVD power iterations.
    #[arg(long, default_value_t = 2)]
    power_iters: usize,
    /// Centre G on both sides.
    #[arg(long)]
    center: bool,
    /// Seed of every random choice.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Output directory (created if missing).
    #[arg(long)]
    out: PathBuf,
    /// Which files to write for u, s, v.
    #[arg(long, value_enum, default_value = "both")]
    format: Format,
    /// Worker threads (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
    /// No progress output.
    #[arg(long)]
    quiet: bool,
}

/// Arguments of `ksvd transform`.
#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("new").required(true).args(["rows", "cols"])))]
pub struct TransformArgs {
    /// Directory written by `ksvd fit` (or its model.json).
    #[arg(long)]
    model: PathBuf,
    /// New row samples (same formats as `fit`): writes OUT/rows = k(x', Z) V S^-1. For a
    /// precomputed-kernel model: the kernel values k(x', Z), one new sample per row (new x M).
    #[arg(long)]
    rows: Option<PathBuf>,
    /// New column samples: writes OUT/cols = k(X, z')^T U S^-1. For a precomputed-kernel model:
    /// the kernel values k(X, z'), one new sample per row (new x N).
    #[arg(long)]
    cols: Option<PathBuf>,
    /// CSV/text inputs start with a header line.
    #[arg(long)]
    header: bool,
    /// Output directory (created if missing).
    #[arg(long)]
    out: PathBuf,
    /// Which files to write.
    #[arg(long, value_enum, default_value = "both")]
    format: Format,
    /// Worker threads (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
    /// No progress output.
    #[arg(long)]
    quiet: bool,
}

/// Runs the tool on parsed arguments.
pub fn run(cli: Cli) -> Result<(), CliError> {
    match cli.command {
        Command::Fit(args) => fit(*args),
        Command::Transform(args) => transform(args),
    }
}

fn set_threads(threads: Option<usize>) -> Result<(), CliError> {
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
fn progress(quiet: bool, len: Option<u64>) -> ProgressBar {
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

/// Row and column samples, the data the bandwidth rule looks at, and whether Z came from the
/// columns of X (compatibility path: fitted through [`Fit`], which keeps the map in the model).
struct Inputs {
    x: Samples,
    z: Samples,
    data: Samples,
    compat_data: Option<ndarray::Array2<f64>>,
    node_names: Option<Vec<String>>,
}

fn read_inputs(args: &FitArgs, opts: &ReadOptions) -> Result<Inputs, CliError> {
    if let Some(g) = &args.graph {
        let edges = read_edge_list(g, args.node_ids)?;
        let (x, z) = graph_samples(&edges.adjacency, args.graph_input)?;
        return Ok(Inputs {
            data: x.clone(),
            x,
            z,
            compat_data: None,
            node_names: edges.names,
        });
    }
    let Some(rows) = &args.rows else {
        return Err(CliError::Usage("give --rows (with optional --cols) or --graph".into()));
    };
    let x = read_samples(rows, opts)?;
    if let Some(cols) = &args.cols {
        let z = read_samples(cols, opts)?;
        let dim = x.dim().max(z.dim());
        let (x, z) = (pad_dim(x, dim), pad_dim(z, dim));
        if z.dim() != x.dim() {
            return Err(CliError::Usage(format!(
                "X has {} features per sample but Z has {}: both sets must live in the same space",
                x.dim(),
                z.dim()
            )));
        }
        return Ok(Inputs {
            data: x.clone(),
            x,
            z,
            compat_data: None,
            node_names: None,
        });
    }
    // Z = the columns of X, made compatible (Algorithm 1): a dense data matrix.
    let a = x.to_dense();
    Ok(Inputs {
        data: x.clone(),
        x: x.clone(),
        z: x,
        compat_data: Some(a),
        node_names: None,
    })
}

/// `--memory-budget`, or the machine's default.
fn memory_budget(args: &FitArgs) -> Result<ksvd::MemoryBudget, CliError> {
    match &args.memory_budget {
        Some(text) => ksvd::MemoryBudget::parse(text).map_err(|e| CliError::Usage(format!("--memory-budget: {e}"))),
        None => Ok(ksvd::MemoryBudget::auto()),
    }
}

fn build_solver(args: &FitArgs, n: usize, m: usize, user: Option<(usize, usize)>) -> Result<Solver, CliError> {
    let inner_for = |rows: usize, cols: usize| {
        // The exact SVD of the sampled block when it is small, a randomized SVD otherwise.
        if rows.saturating_mul(cols) <= 4_000_000 {
            InnerSolver::Dense
        } else {
            InnerSolver::Rsvd {
                oversampling: args.oversampling,
                power_iters: args.power_iters,
            }
        }
    };
    if let Some((rows, cols)) = user {
        if !matches!(args.solver, SolverArg::Nystrom) {
            return Err(CliError::Usage(
                "--landmark-rows/--landmark-cols need --solver nystrom".into(),
            ));
        }
        return Ok(Solver::Nystrom {
            landmarks: rows,
            cols: Some(cols),
            sampling: Sampling::Uniform,
            inner: inner_for(rows, cols),
        });
    }
    Ok(match args.solver {
        SolverArg::Auto => Solver::Auto { tol: args.tol },
        SolverArg::BlockKrylov => Solver::BlockKrylov(ksvd::BlockKrylovParams {
            tol: args.tol,
            oversampling: args.oversampling,
            seed: args.seed,
            ..Default::default()
        }),
        SolverArg::Exact => Solver::Exact,
        SolverArg::Lanczos => Solver::Lanczos(LanczosParams {
            tol: args.tol,
            ..Default::default()
        }),
        SolverArg::Rsvd => Solver::Rsvd(RsvdParams {
            oversampling: args.oversampling,
            power_iters: args.power_iters,
            seed: args.seed,
        }),
        SolverArg::Nystrom => {
            let Some(l) = args.landmarks else {
                return Err(CliError::Usage(
                    "--solver nystrom needs --landmarks M (or --landmark-rows/--landmark-cols files)".into(),
                ));
            };
            let rows = l.min(n);
            let cols = args.col_landmarks.unwrap_or(l).min(m);
            Solver::Nystrom {
                landmarks: rows,
                cols: Some(cols),
                sampling: if args.norm_sampling {
                    Sampling::SquaredNorm
                } else {
                    args.sampling
                },
                inner: inner_for(rows, cols),
            }
        }
    })
}

fn fit(args: FitArgs) -> Result<(), CliError> {
    let t0 = Instant::now();
    set_threads(args.threads)?;
    let opts = ReadOptions {
        header: args.header,
        quiet: args.quiet,
    };
    if matches!(args.kernel, KernelArg::Precomputed) {
        return fit_precomputed(&args, &opts, t0);
    }
    if args.matrix.is_some() {
        return Err(CliError::Usage("--matrix needs --kernel precomputed".into()));
    }
    let inputs = read_inputs(&args, &opts)?;
    let (gamma, gamma_source) = match args.gamma {
        Some(g) => (g, "given (--gamma)".to_string()),
        None => (
            bandwidth_rule(&inputs.data, args.gamma_k),
            format!("rule gamma = k sqrt(M gamma_x), k = {}", args.gamma_k),
        ),
    };
    let kernel = match args.kernel {
        KernelArg::Linear => Kernel::Linear,
        KernelArg::Poly => Kernel::Polynomial {
            degree: args.degree,
            offset: args.offset,
        },
        KernelArg::Rbf => Kernel::Rbf { gamma },
        KernelArg::Laplacian => Kernel::Laplacian { gamma },
        KernelArg::Sne => Kernel::Sne { gamma },
        // Dispatched to `fit_precomputed` above.
        KernelArg::Precomputed => Kernel::Linear,
    };
    let user = match (&args.landmark_rows, &args.landmark_cols) {
        (Some(r), Some(c)) => Some((read_indices(r, &opts)?, read_indices(c, &opts)?)),
        _ => None,
    };
    let (n, m) = match &inputs.compat_data {
        Some(a) => a.dim(),
        None => (inputs.x.len(), inputs.z.len()),
    };
    let solver = build_solver(&args, n, m, user.as_ref().map(|(r, c)| (r.len(), c.len())))?;
    let budget = memory_budget(&args)?;
    let mut params = Ksvd::params()
        .kernel(kernel)
        .rank(args.rank)
        .memory_budget(budget)
        .solver(solver)
        .center(args.center)
        .seed(args.seed)
        .compat(Some(match args.compat {
            Compat::Random { .. } => Compat::Random { seed: args.seed },
            other => other,
        }));
    if let Some((r, c)) = user {
        params = params.landmark_indices(r, c);
    }
    let params = params.check()?;
    let bar = progress(args.quiet, None);
    let fitted = match inputs.compat_data {
        Some(a) => {
            bar.set_message(format!(
                "fitting {n} x {m} data matrix ({kernel}, compatibility {:?})",
                args.compat
            ));
            params.fit(&linfa::DatasetBase::from(a))?
        }
        None => {
            bar.set_message(format!("building G ({n} x {m}, {kernel})"));
            // Stored within the budget, except for Nyström (the policy of `kernel_matrix`);
            // centring costs two kernel passes.
            let g = params.kernel_matrix(inputs.x, inputs.z)?;
            bar.set_message(format!("solving rank {} with {:?}", args.rank, args.solver));
            let b = bar.clone();
            params.fit_kernel_matrix_with_progress(g, &mut |p: &Progress| b.set_message(p.to_string()))?
        }
    };
    bar.set_message("residuals (two kernel passes) and model");
    let model = fitted.to_model()?;
    bar.finish_and_clear();
    write_fit(&args, &model, gamma_source, t0, inputs.node_names.as_deref())
}

/// `--kernel precomputed --matrix G`.
fn fit_precomputed(args: &FitArgs, opts: &ReadOptions, t0: Instant) -> Result<(), CliError> {
    let Some(path) = &args.matrix else {
        return Err(CliError::Usage(
            "--kernel precomputed needs --matrix G (N x M kernel values)".into(),
        ));
    };
    if args.rows.is_some() || args.cols.is_some() {
        return Err(CliError::Usage(
            "--kernel precomputed takes --matrix, not --rows/--cols".into(),
        ));
    }
    let g = match read_samples(path, opts)? {
        Samples::Dense(a) => a,
        Samples::Sparse(c) => c.to_dense(),
    };
    let (n, m) = g.dim();
    let user = match (&args.landmark_rows, &args.landmark_cols) {
        (Some(r), Some(c)) => Some((read_indices(r, opts)?, read_indices(c, opts)?)),
        _ => None,
    };
    let solver = build_solver(args, n, m, user.as_ref().map(|(r, c)| (r.len(), c.len())))?;
    let mut params = Ksvd::params()
        .rank(args.rank)
        .solver(solver)
        .center(args.center)
        .seed(args.seed);
    if let Some((r, c)) = user {
        params = params.landmark_indices(r, c);
    }
    let params = params.check()?;
    let bar = progress(args.quiet, None);
    bar.set_message(format!("solving rank {} of the {n} x {m} precomputed G", args.rank));
    let model = params.fit_precomputed(g.view())?;
    bar.finish_and_clear();
    write_fit(args, &model, String::new(), t0, None)
}

/// Writes u, s, v, model.json, summary.json (and nodes.csv) atomically.
fn write_fit(
    args: &FitArgs,
    model: &KsvdModel,
    gamma_source: String,
    t0: Instant,
    node_names: Option<&[String]>,
) -> Result<(), CliError> {
    let seconds = t0.elapsed().as_secs_f64();
    let (gn, gm) = model.shape();
    let summary = summary_json(args, model, gamma_source, seconds);
    let mut files = matrix_files(&args.out, "u", &model.u().to_owned(), args.format)?;
    files.extend(vector_files(
        &args.out,
        "s",
        &model.singular_values().to_owned(),
        args.format,
    )?);
    files.extend(matrix_files(&args.out, "v", &model.v().to_owned(), args.format)?);
    files.push((args.out.join("model.json"), model.to_bytes()?));
    files.push((args.out.join("summary.json"), summary.into_bytes()));
    if let Some(names) = node_names {
        files.push((args.out.join("nodes.csv"), (names.join("\n") + "\n").into_bytes()));
    }
    write_all(&args.out, &files)?;
    if !args.quiet {
        eprintln!(
            "ksvd: {gn} x {gm} kernel matrix, rank {}, {:?} solver: s_1 = {:.6e}, {:.3} s; wrote {}",
            args.rank,
            args.solver,
            model.singular_values()[0],
            seconds,
            args.out.display()
        );
    }
    Ok(())
}

fn summary_json(args: &FitArgs, model: &KsvdModel, gamma_source: String, seconds: f64) -> String {
    let (n, m) = model.shape();
    let s = model.singular_values();
    let kernel = model.kernel();
    let residuals = model.residuals().map(|r| {
        serde_json::json!({
            "left": r.left.to_vec(),
            "right": r.right.to_vec(),
            "max_relative_to_s1": r.max(),
            "definition": "left_i = ||G v_i - s_i u_i|| / s_1, right_i = ||G^T u_i - s_i v_i|| / s_1",
        })
    });
    let landmarks = model
        .landmarks()
        .map(|(i, j)| serde_json::json!({"rows": i.len(), "cols": j.len()}));
    let value = serde_json::json!({
        "n_rows": n,
        "n_cols": m,
        "dim": model.sample_dim(),
        "rank": model.rank(),
        "kernel": if model.is_precomputed() { serde_json::Value::from("precomputed") } else { serde_json::json!(kernel) },
        "gamma": if model.is_precomputed() { None } else { kernel.gamma() },
        "gamma_source": if kernel.gamma().is_some() && !model.is_precomputed() { serde_json::Value::from(gamma_source) } else { serde_json::Value::Null },
        "center": model.params().center(),
        "solver": model.solver(),
        "landmarks": landmarks,
        "seed": args.seed,
        "singular_values": s.to_vec(),
        "residuals": residuals,
        "seconds": seconds,
        "threads": rayon::current_num_threads(),
        "model_file": "model.json",
        "model_format_version": ksvd::MODEL_FORMAT_VERSION,
    });
    serde_json::to_string_pretty(&value).unwrap_or_default() + "\n"
}

/// Samples per block of the transform (one kernel pass of `block × |Z|` entries each).
const TRANSFORM_BLOCK: usize = 2048;

fn transform(args: TransformArgs) -> Result<(), CliError> {
    let t0 = Instant::now();
    set_threads(args.threads)?;
    let opts = ReadOptions {
        header: args.header,
        quiet: args.quiet,
    };
    let model_path = if args.model.is_dir() {
        args.model.join("model.json")
    } else {
        args.model.clone()
    };
    if !model_path.exists() {
        return Err(CliError::Input {
            path: model_path,
            line: None,
            msg: "model file not found (run `ksvd fit --out DIR` first)".into(),
        });
    }
    let model = KsvdModel::load(&model_path).map_err(|e| CliError::Input {
        path: model_path.clone(),
        line: None,
        msg: e.to_string(),
    })?;
    let (path, name, rows_side) = match (&args.rows, &args.cols) {
        (Some(p), None) => (p, "rows", true),
        (None, Some(p)) => (p, "cols", false),
        _ => return Err(CliError::Usage("give exactly one of --rows and --cols".into())),
    };
    let new = read_samples(path, &opts)?;
    if model.is_precomputed() {
        let k = new.to_dense();
        let bar = progress(args.quiet, None);
        let (n, m) = model.shape();
        let want = if rows_side { m } else { n };
        if k.ncols() != want {
            return Err(CliError::Input {
                path: path.clone(),
                line: None,
                msg: format!(
                    "{} kernel values per new sample, but the precomputed model has {want} training {}",
                    k.ncols(),
                    if rows_side { "columns" } else { "rows" }
                ),
            });
        }
        let out = if rows_side {
            model.extend_kernel_rows(k.view())?
        } else {
            model.extend_kernel_cols(k.view())?
        };
        bar.finish_and_clear();
        return write_all(&args.out, &matrix_files(&args.out, name, &out, args.format)?);
    }
    let data_model = model.compat().is_some_and(|c| c.c.is_some());
    let want_dim = if data_model {
        // New rows of the data matrix have M entries, new columns N.
        let (n, m) = model.shape();
        if rows_side {
            m
        } else {
            n
        }
    } else {
        model.sample_dim().unwrap_or(0)
    };
    let new = pad_dim(new, want_dim);
    if new.dim() != want_dim {
        return Err(CliError::Input {
            path: path.clone(),
            line: None,
            msg: format!(
                "{} features per sample, but the model expects {want_dim}{}",
                new.dim(),
                if data_model {
                    if rows_side {
                        " (the columns of the training data matrix)"
                    } else {
                        " (the rows of the training data matrix)"
                    }
                } else {
                    ""
                }
            ),
        });
    }
    let total = new.len();
    let nblocks = total.div_ceil(TRANSFORM_BLOCK);
    let bar = progress(args.quiet, Some(nblocks as u64));
    bar.set_message(format!("extending {total} {name}"));
    let mut parts = Vec::with_capacity(nblocks);
    for b in 0..nblocks {
        let idx: Vec<usize> = (b * TRANSFORM_BLOCK..((b + 1) * TRANSFORM_BLOCK).min(total)).collect();
        let block = if nblocks == 1 { new.clone() } else { new.select(&idx)? };
        let out = match (data_model, rows_side) {
            (true, true) => model.extend_data_rows(block.to_dense().view())?,
            (true, false) => model.extend_data_cols(block.to_dense().view())?,
            (false, true) => model.extend_rows(&block)?,
            (false, false) => model.extend_cols(&block)?,
        };
        parts.push(out);
        bar.inc(1);
    }
    bar.finish_and_clear();
    let views: Vec<_> = parts.iter().map(|p| p.view()).collect();
    let out = ndarray::concatenate(ndarray::Axis(0), &views).map_err(|e| CliError::Usage(e.to_string()))?;
    let files = matrix_files(&args.out, name, &out, args.format)?;
    write_all(&args.out, &files)?;
    if !args.quiet {
        eprintln!(
            "ksvd: extended {total} new {name} ({} x {}), {:.3} s; wrote {}",
            out.nrows(),
            out.ncols(),
            t0.elapsed().as_secs_f64(),
            Path::new(&args.out).join(name).display()
        );
    }
    Ok(())
}
