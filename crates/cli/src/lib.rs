//! # ksvd-cli
//!
//! The `ksvd` command-line tool: KSVD embeddings (the top-`r` singular triplets of an
//! asymmetric kernel matrix `G_ij = k(x_i, z_j)`) of two data sets, of a data matrix and its
//! columns, or of a directed graph, computed exactly or approximately.
//!
//! ```text
//! ksvd fit --rows X.csv [--cols Z.csv | --compat a1] --kernel sne --gamma 0.7 --rank 20 \
//!          --solver nystrom --landmarks 1000 --seed 0 --out DIR
//! ksvd fit --graph edges.txt --graph-input row-normalized --kernel sne --rank 20 --solver lanczos --out DIR
//! ```
//!
//! Outputs `DIR/u.csv` (n × r), `DIR/s.csv` (r), `DIR/v.csv` (m × r), and the same as `.npy`,
//! all written atomically. Errors are one line on stderr and a non-zero exit status.
mod io;

pub use io::{atomic_write, read_edges, read_matrix, write_matrix, write_vector, EdgeList};

use clap::{Parser, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use ksvd::{InnerSolver, Ksvd, LanczosParams, RsvdParams, Sampling, Solver};
use ksvd_kernels::graph::{bandwidth_rule, graph_samples, GraphInput};
use ksvd_kernels::{compat, Compat, Kernel, KernelMatrix, Samples};
use ksvd_linalg::LinearOperator;
use linfa::param_guard::ParamGuard;
use std::path::PathBuf;
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

/// Command-line arguments.
#[derive(Debug, Parser)]
#[command(
    name = "ksvd",
    version,
    about = "Kernel SVD with asymmetric kernels (CCE) and the asymmetric Nyström method"
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Fit KSVD and write u, s, v.
    Fit(FitArgs),
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
}

/// Solver choice.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum SolverArg {
    /// Dense SVD of the materialised G.
    Exact,
    /// Restarted Lanczos bidiagonalisation (matrix-free).
    Lanczos,
    /// Randomized SVD (matrix-free).
    Rsvd,
    /// Asymmetric Nyström method.
    Nystrom,
}

/// Compatibility alternative.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum CompatArg {
    /// Pseudo-inverse.
    A0,
    /// PCA projection.
    A1,
    /// Seeded Gaussian random projection.
    A2,
}

/// Graph input transform.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum GraphInputArg {
    /// A as given.
    Raw,
    /// D_out^-1 A.
    RowNormalized,
    /// A + I.
    SelfLoops,
    /// D_out^-1 (A + I).
    RowNormalizedSelfLoops,
}

/// Arguments of `ksvd fit`.
#[derive(Debug, clap::Args)]
pub struct FitArgs {
    /// Row samples X: CSV (no header, one sample per line) or .npy.
    #[arg(long, conflicts_with = "graph")]
    rows: Option<PathBuf>,
    /// Column samples Z (same formats). Omitted: Z = the columns of X.
    #[arg(long, requires = "rows")]
    cols: Option<PathBuf>,
    /// Directed graph as an edge list "src dst" per line: x_i = out-row, z_j = in-column of A.
    #[arg(long)]
    graph: Option<PathBuf>,
    /// Transform of the adjacency matrix.
    #[arg(long, value_enum, default_value = "raw")]
    graph_input: GraphInputArg,
    /// Compatibility matrix when Z is omitted and X is not square.
    #[arg(long, value_enum, default_value = "a1")]
    compat: CompatArg,
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
    #[arg(long, value_enum, default_value = "lanczos")]
    solver: SolverArg,
    /// Nyström: sampled rows (and columns); the full sizes give the exact solution.
    #[arg(long)]
    landmarks: Option<usize>,
    /// Nyström: sampled columns if different from --landmarks.
    #[arg(long)]
    landmark_cols: Option<usize>,
    /// Nyström: sample proportionally to squared row/column norms instead of uniformly.
    #[arg(long)]
    norm_sampling: bool,
    /// Lanczos relative residual tolerance.
    #[arg(long, default_value_t = 1e-10)]
    tol: f64,
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
    /// No progress output.
    #[arg(long)]
    quiet: bool,
}

/// Runs the tool on parsed arguments.
pub fn run(cli: Cli) -> Result<(), CliError> {
    match cli.command {
        Command::Fit(args) => fit(args),
    }
}

fn samples_and_data(args: &FitArgs) -> Result<(Samples, Samples, Samples), CliError> {
    if let Some(g) = &args.graph {
        let edges = read_edges(g)?;
        let input = match args.graph_input {
            GraphInputArg::Raw => GraphInput::Raw,
            GraphInputArg::RowNormalized => GraphInput::RowNormalized,
            GraphInputArg::SelfLoops => GraphInput::SelfLoops,
            GraphInputArg::RowNormalizedSelfLoops => GraphInput::RowNormalizedSelfLoops,
        };
        let (x, z) = graph_samples(&edges.adjacency, input)?;
        if let Some(names) = &edges.names {
            std::fs::create_dir_all(&args.out).map_err(|e| CliError::Output {
                path: args.out.clone(),
                msg: e.to_string(),
            })?;
            atomic_write(&args.out.join("nodes.csv"), (names.join("\n") + "\n").as_bytes())?;
        }
        return Ok((x.clone(), z, x));
    }
    let Some(rows) = &args.rows else {
        return Err(CliError::Usage("give --rows (with optional --cols) or --graph".into()));
    };
    let x = read_matrix(rows)?;
    if let Some(cols) = &args.cols {
        let z = read_matrix(cols)?;
        if z.ncols() != x.ncols() {
            return Err(CliError::Usage(format!(
                "X has {} features per sample but Z has {}: both sets must live in the same space",
                x.ncols(),
                z.ncols()
            )));
        }
        let data = Samples::dense(x.clone())?;
        return Ok((Samples::dense(x)?, Samples::dense(z)?, data));
    }
    let c = match args.compat {
        CompatArg::A0 => Compat::PseudoInverse,
        CompatArg::A1 => Compat::Pca,
        CompatArg::A2 => Compat::Random { seed: args.seed },
    };
    let data = Samples::dense(x.clone())?;
    let cs = compat::compatible_samples(x.view(), c)?;
    Ok((cs.x, cs.z, data))
}

fn fit(args: FitArgs) -> Result<(), CliError> {
    let t0 = Instant::now();
    let (x, z, data) = samples_and_data(&args)?;
    let gamma = match args.gamma {
        Some(g) => g,
        None => bandwidth_rule(&data, args.gamma_k),
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
    };
    let (n, m) = (x.len(), z.len());
    let solver = match args.solver {
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
                return Err(CliError::Usage("--solver nystrom needs --landmarks M".into()));
            };
            let rows = l.min(n);
            let cols = args.landmark_cols.unwrap_or(l).min(m);
            // The exact SVD of the sampled block when it is small (always for full landmarks on
            // moderate sizes), a randomized SVD otherwise.
            let inner = if rows.saturating_mul(cols) <= 4_000_000 {
                InnerSolver::Dense
            } else {
                InnerSolver::Rsvd {
                    oversampling: args.oversampling,
                    power_iters: args.power_iters,
                }
            };
            let sampling = if args.norm_sampling {
                Sampling::SquaredNorm
            } else {
                Sampling::Uniform
            };
            Solver::Nystrom {
                landmarks: rows,
                cols: Some(cols),
                sampling,
                inner,
            }
        }
    };
    let params = Ksvd::params()
        .kernel(kernel)
        .rank(args.rank)
        .solver(solver)
        .center(args.center)
        .seed(args.seed)
        .check()?;
    let bar = if args.quiet {
        ProgressBar::hidden()
    } else {
        let b = ProgressBar::new_spinner();
        b.set_style(
            ProgressStyle::with_template("{spinner} {elapsed} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        b.enable_steady_tick(std::time::Duration::from_millis(120));
        b
    };
    bar.set_message(format!("building G ({n} x {m}, {kernel})"));
    let mut g = KernelMatrix::new(x, z, kernel)?;
    if args.center {
        g = g.centered()?;
    }
    bar.set_message(format!("solving rank {} with {:?}", args.rank, args.solver));
    let model = params.fit_kernel_matrix(g)?;
    bar.finish_and_clear();
    std::fs::create_dir_all(&args.out).map_err(|e| CliError::Output {
        path: args.out.clone(),
        msg: e.to_string(),
    })?;
    write_matrix(&args.out, "u", &model.b_phi().to_owned())?;
    write_vector(&args.out, "s", &model.singular_values().to_owned())?;
    write_matrix(&args.out, "v", &model.b_psi().to_owned())?;
    if !args.quiet {
        eprintln!(
            "ksvd: {} x {} kernel matrix, rank {}, {:?} solver: s_1 = {:.6e}, {:.3} s; wrote {}",
            model.kernel_matrix().nrows(),
            model.kernel_matrix().ncols(),
            args.rank,
            args.solver,
            model.singular_values()[0],
            t0.elapsed().as_secs_f64(),
            args.out.display()
        );
    }
    Ok(())
}
