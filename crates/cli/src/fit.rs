//! `ksvd fit`: the flags of the conventions table (docs/conventions.md) made into
//! [`ksvd::KsvdParams`], the fit, and its files.
use crate::io::{
    is_stdio, matrix_files, pad_dim, read_indices, read_samples, stdin_at_most_once, vector_files, write_all,
    write_stdout, Format, ReadOptions,
};
use crate::{progress, set_threads, values, CliError};
use ksvd::{
    Compat, GraphInput, KernelKind, Ksvd, KsvdModel, KsvdParams, MemoryBudget, ParamGuard, Precision, Progress,
    Samples, Sampling, SolverKind, SolverOptions,
};
use ksvd_datasets::{read_edge_list, NodeIds};
use ksvd_kernels::graph::graph_samples;
use linfa::traits::Fit;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Instant;

/// Arguments of `ksvd fit`. The names and defaults are the CLI column of docs/conventions.md
/// (checked by `tests/conventions.rs`); older spellings are aliases.
#[derive(Debug, clap::Args)]
pub struct FitArgs {
    /// Row samples X, one per row: .npy (any numeric dtype), CSV/text, .libsvm/.svm or scipy CSR
    /// .npz; `-` reads standard input (CSV/text, .npy or .npz, told apart by their first bytes).
    #[arg(long, conflicts_with_all = ["graph", "matrix"])]
    rows: Option<PathBuf>,
    /// With --kernel precomputed: the kernel matrix G (N x M; .npy or CSV; `-`: standard input),
    /// rectangular allowed.
    #[arg(long, conflicts_with = "graph")]
    matrix: Option<PathBuf>,
    /// Column samples Z (same formats; `-`: standard input). Omitted: Z = X, unless --compat.
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
    /// Without --cols: Z = the columns of the data matrix X, made comparable with its rows
    /// (Algorithm 1) by `a0` (pseudo-inverse), `a1` (PCA projection) or `a2` (Gaussian random
    /// projection seeded by --seed). Omitted: Z = X.
    #[arg(long, value_parser = Compat::from_str, conflicts_with_all = ["cols", "graph", "matrix"])]
    compat: Option<Compat>,
    /// Kernel.
    #[arg(long, value_parser = values::core::<KernelKind>(), default_value = "rbf")]
    kernel: KernelKind,
    /// Bandwidth γ, a length (rbf: exp(-||x - z||^2 / γ^2); laplacian, sne). Default: the
    /// paper's rule γ = k sqrt(M γ_x), γ_x the variance of all entries of X, M its features.
    #[arg(long, visible_alias = "gamma", allow_negative_numbers = true)]
    bandwidth: Option<f64>,
    /// The factor k of the bandwidth rule (when --bandwidth is not given).
    #[arg(
        long,
        visible_alias = "gamma-k",
        default_value = "1.0",
        allow_negative_numbers = true
    )]
    bandwidth_factor: f64,
    /// Degree of the polynomial kernel (x . z + coef0)^degree.
    #[arg(long, default_value_t = 3)]
    degree: u32,
    /// Offset of the polynomial kernel.
    #[arg(long, visible_alias = "offset", default_value = "1.0", allow_negative_numbers = true)]
    coef0: f64,
    /// Number of singular triplets r, 1 <= r <= min(N, M).
    #[arg(long, visible_alias = "rank", default_value_t = 2)]
    n_components: usize,
    /// Solver.
    #[arg(long, value_parser = values::core::<SolverKind>(), default_value = "auto")]
    solver: SolverKind,
    /// Nyström: sampled rows (and columns); the full sizes give the exact solution.
    #[arg(long, visible_alias = "landmarks")]
    n_landmarks: Option<usize>,
    /// Nyström: sampled columns, if different from --n-landmarks.
    #[arg(long, visible_alias = "col-landmarks")]
    n_col_landmarks: Option<usize>,
    /// Nyström: how landmarks are chosen. `adaptive` finds the rows and columns that matter
    /// (coherent kernels, sparse graphs) where uniform samples miss them.
    #[arg(long, value_parser = values::core::<Sampling>(), default_value = "uniform")]
    sampling: Sampling,
    /// Nyström: the same as `--sampling squared-norm` (kept for older scripts).
    #[arg(long, conflicts_with = "sampling")]
    norm_sampling: bool,
    /// Nyström with your landmark rows: 0-based indices into X (.npy or text).
    #[arg(long, requires = "landmark_cols")]
    landmark_rows: Option<PathBuf>,
    /// Nyström with your landmark columns: 0-based indices into Z (.npy or text).
    #[arg(long, requires = "landmark_rows")]
    landmark_cols: Option<PathBuf>,
    /// Relative residual tolerance of auto, lanczos and block-krylov: every triplet has
    /// ‖G v − s u‖ ≤ tol s_1 and ‖Gᵀ u − s v‖ ≤ tol s_1 [default: 1e-8; 1e-5 with --dtype f32,
    /// whose limit is 1e-6].
    #[arg(long)]
    tol: Option<f64>,
    /// Precision of G's entries and of the products with them: f32 halves a stored G's memory
    /// and about halves the time of its products; matrix-free and Nyström fits and the
    /// projections of new samples evaluate their kernel blocks in f32 (inner products and
    /// exponents in f64, exp and products in f32; residuals are those of the rounded G). Graph
    /// fits (rank one plus sparse) run in f64 either way.
    #[arg(long, value_parser = values::core::<Precision>(), default_value = "f64")]
    dtype: Precision,
    /// Memory budget for storing G (products become GEMMs) and for the dense solver, e.g. 512M,
    /// 4G (default: a quarter of the available memory; env KSVD_MEMORY_BUDGET).
    #[arg(long)]
    memory_budget: Option<String>,
    /// RSVD (and block Krylov) oversampling.
    #[arg(long, default_value_t = 10)]
    oversampling: usize,
    /// RSVD power iterations.
    #[arg(long, default_value_t = 2)]
    power_iters: usize,
    /// Centre G on both sides (H_N G H_M).
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
    /// Print the summary (summary.json) on standard output; nothing else goes there.
    #[arg(long)]
    json: bool,
    /// Worker threads (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
    /// No progress output.
    #[arg(long)]
    quiet: bool,
}

/// User-chosen Nyström landmarks: row indices into X, column indices into Z.
type LandmarkLists = (Vec<usize>, Vec<usize>);

/// The samples of a fit: X and Z, or a data matrix whose columns a compatibility makes the
/// column samples (fitted through [`Fit`], which keeps the map in the model).
enum Inputs {
    Samples {
        x: Samples,
        z: Samples,
        node_names: Option<Vec<String>>,
    },
    DataMatrix(ndarray::Array2<f64>),
}

impl Inputs {
    /// The size `(N, M)` of the kernel matrix.
    fn shape(&self) -> (usize, usize) {
        match self {
            Inputs::Samples { x, z, .. } => (x.len(), z.len()),
            Inputs::DataMatrix(a) => a.dim(),
        }
    }
}

fn read_inputs(args: &FitArgs, opts: &ReadOptions) -> Result<Inputs, CliError> {
    if let Some(g) = &args.graph {
        if is_stdio(g) {
            return Err(CliError::Usage(
                "--graph reads a file (standard input: --rows, --cols or --matrix)".into(),
            ));
        }
        let edges = read_edge_list(g, args.node_ids)?;
        let (x, z) = graph_samples(&edges.adjacency, args.graph_input)?;
        return Ok(Inputs::Samples {
            x,
            z,
            node_names: edges.names,
        });
    }
    let Some(rows) = &args.rows else {
        return Err(CliError::Usage("give --rows (with optional --cols) or --graph".into()));
    };
    let x = read_samples(rows, opts)?;
    if args.compat.is_some() {
        return Ok(Inputs::DataMatrix(x.to_dense()));
    }
    let Some(cols) = &args.cols else {
        return Ok(Inputs::Samples {
            z: x.clone(),
            x,
            node_names: None,
        });
    };
    let z = read_samples(cols, opts)?;
    let dim = x.dim().max(z.dim());
    let (x, z) = (pad_dim(x, dim), pad_dim(z, dim));
    if z.dim() != x.dim() {
        return Err(CliError::Input {
            path: cols.clone(),
            line: None,
            msg: format!(
                "X has {} features per sample but Z has {}: both sets must live in the same space",
                x.dim(),
                z.dim()
            ),
        });
    }
    Ok(Inputs::Samples { x, z, node_names: None })
}

impl FitArgs {
    /// The landmark lists of `--landmark-rows` and `--landmark-cols`, when given.
    fn user_landmarks(&self, opts: &ReadOptions) -> Result<Option<LandmarkLists>, CliError> {
        match (&self.landmark_rows, &self.landmark_cols) {
            (Some(r), Some(c)) => Ok(Some((read_indices(r, opts)?, read_indices(c, opts)?))),
            _ => Ok(None),
        }
    }

    /// The KSVD parameters of the flags for an `n × m` kernel matrix, checked (errors: status
    /// 2, see [`CliError::Parameter`]). Landmark counts are capped at the matrix sizes (so
    /// is the choice of the Nyström block's solver); user landmarks replace them.
    fn params(
        &self,
        n: usize,
        m: usize,
        user: Option<(Vec<usize>, Vec<usize>)>,
    ) -> Result<ksvd::KsvdValidParams, CliError> {
        let mut options = SolverOptions {
            tol: self.tol.unwrap_or(self.dtype.default_tol()),
            oversampling: self.oversampling,
            power_iters: self.power_iters,
            n_landmarks: self.n_landmarks.map(|l| l.min(n)),
            n_col_landmarks: self.n_landmarks.map(|l| self.n_col_landmarks.unwrap_or(l).min(m)),
            sampling: if self.norm_sampling {
                Sampling::SquaredNorm
            } else {
                self.sampling
            },
        };
        if let Some((rows, cols)) = &user {
            if self.solver != SolverKind::Nystrom {
                return Err(CliError::Usage(
                    "--landmark-rows/--landmark-cols need --solver nystrom".into(),
                ));
            }
            // The counts of the lists (the core samples no landmarks then).
            options.n_landmarks = Some(rows.len());
            options.n_col_landmarks = Some(cols.len());
        } else if self.solver == SolverKind::Nystrom && self.n_landmarks.is_none() {
            return Err(CliError::Usage(
                "--solver nystrom needs --n-landmarks L (or --landmark-rows/--landmark-cols files)".into(),
            ));
        }
        let solver = self.solver.solver(&options).map_err(CliError::Parameter)?;
        // `KsvdParams::check` does not look at the solver's own parameters (the tolerance).
        solver.validate().map_err(CliError::Parameter)?;
        let mut params: KsvdParams = Ksvd::params()
            .rank(self.n_components)
            .solver(solver)
            .center(self.center)
            .seed(self.seed)
            .compat(self.compat)
            .precision(self.dtype);
        if let Some(kernel) = self
            .kernel
            .kernel(self.bandwidth.unwrap_or(1.0), self.degree, self.coef0)
        {
            params = params.kernel(kernel);
            if self.bandwidth.is_none() {
                params = params.bandwidth_rule(Some(self.bandwidth_factor));
            }
        }
        if let Some(text) = &self.memory_budget {
            let budget =
                MemoryBudget::parse(text).map_err(|e| CliError::Usage(format!("--memory-budget {text}: {e}")))?;
            params = params.memory_budget(budget);
        }
        if let Some((rows, cols)) = user {
            params = params.landmark_indices(rows, cols);
        }
        params.check().map_err(CliError::Parameter)
    }

    /// The flags with a path and `-` (standard input) allowed.
    fn stdin_inputs(&self) -> [(&'static str, Option<&Path>); 3] {
        [
            ("--rows", self.rows.as_deref()),
            ("--cols", self.cols.as_deref()),
            ("--matrix", self.matrix.as_deref()),
        ]
    }
}

pub(crate) fn fit(args: FitArgs) -> Result<(), CliError> {
    let t0 = Instant::now();
    set_threads(args.threads)?;
    stdin_at_most_once(&args.stdin_inputs())?;
    if is_stdio(&args.out) {
        return Err(CliError::Usage(
            "`ksvd fit --out` is a directory (u, s, v, model.json, summary.json); --json prints the summary on \
             standard output"
                .into(),
        ));
    }
    let opts = ReadOptions {
        header: args.header,
        quiet: args.quiet,
    };
    if args.kernel == KernelKind::Precomputed {
        return fit_precomputed(&args, &opts, t0);
    }
    if args.matrix.is_some() {
        return Err(CliError::Usage("--matrix needs --kernel precomputed".into()));
    }
    let inputs = read_inputs(&args, &opts)?;
    let (n, m) = inputs.shape();
    let params = args.params(n, m, args.user_landmarks(&opts)?)?;
    let bar = progress(args.quiet, None);
    let (fitted, node_names) = match inputs {
        Inputs::DataMatrix(a) => {
            bar.set_message(format!(
                "fitting the {n} x {m} data matrix and its columns (Algorithm 1)"
            ));
            (params.fit(&linfa::DatasetBase::from(a))?, None)
        }
        Inputs::Samples { x, z, node_names } => {
            bar.set_message(format!("building G ({n} x {m})"));
            // Stored within the budget, except for Nyström (the policy of `kernel_matrix`);
            // centring costs two kernel passes.
            let g = params.kernel_matrix(x, z)?;
            bar.set_message(format!("solving rank {} with {}", args.n_components, args.solver));
            let b = bar.clone();
            let fitted = params.fit_kernel_matrix_with_progress(g, &mut |p: &Progress| b.set_message(p.to_string()))?;
            (fitted, node_names)
        }
    };
    bar.set_message("residuals (two kernel passes) and model");
    let model = fitted.to_model()?;
    // The fit holds the stored G (800 MB at 10⁴ × 10⁴) and the process ends after writing: the
    // operating system takes the memory back faster than freeing it page by page (0.07 s).
    std::mem::forget(fitted);
    bar.finish_and_clear();
    write_fit(&args, &model, t0, node_names.as_deref())
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
    let g = read_samples(path, opts)?.to_dense();
    let (n, m) = g.dim();
    let params = args.params(n, m, args.user_landmarks(opts)?)?;
    let bar = progress(args.quiet, None);
    bar.set_message(format!(
        "solving rank {} of the {n} x {m} precomputed G",
        args.n_components
    ));
    let model = params.fit_precomputed(g.view())?;
    bar.finish_and_clear();
    write_fit(args, &model, t0, None)
}

/// Writes u, s, v, model.json, summary.json (and nodes.csv) atomically; with `--json`, prints
/// the summary on standard output.
fn write_fit(args: &FitArgs, model: &KsvdModel, t0: Instant, node_names: Option<&[String]>) -> Result<(), CliError> {
    let seconds = t0.elapsed().as_secs_f64();
    let summary = serde_json::to_string_pretty(&summary_json(args, model, seconds)).map_err(|e| CliError::Output {
        path: args.out.join("summary.json"),
        msg: e.to_string(),
    })? + "\n";
    // The two matrices' text and the model's bytes are formatted side by side.
    let ((u_files, v_files), model_bytes) = rayon::join(
        || {
            rayon::join(
                || matrix_files(&args.out, "u", &model.u().to_owned(), args.format),
                || matrix_files(&args.out, "v", &model.v().to_owned(), args.format),
            )
        },
        || model.to_bytes(),
    );
    let mut files = u_files?;
    files.extend(vector_files(
        &args.out,
        "s",
        &model.singular_values().to_owned(),
        args.format,
    )?);
    files.extend(v_files?);
    files.push((args.out.join("model.json"), model_bytes?));
    files.push((args.out.join("summary.json"), summary.clone().into_bytes()));
    if let Some(names) = node_names {
        files.push((args.out.join("nodes.csv"), (names.join("\n") + "\n").into_bytes()));
    }
    write_all(&args.out, &files)?;
    if args.json {
        write_stdout(summary.as_bytes())?;
    }
    if !args.quiet {
        eprintln!(
            "ksvd: {}; {seconds:.3} s; wrote {}",
            model.summary(),
            args.out.display()
        );
    }
    Ok(())
}

/// `summary.json`: the model's [`ksvd::ModelSummary`] (what `ksvd inspect --json` prints), and
/// the command's own fields: `bandwidth_source` (how γ was chosen), `inputs` (the files),
/// `seconds`, `threads`, `model_file`.
fn summary_json(args: &FitArgs, model: &KsvdModel, seconds: f64) -> serde_json::Value {
    let summary = model.summary();
    let bandwidth_source = match (summary.bandwidth, summary.bandwidth_rule) {
        (Some(_), Some(k)) => Some(format!("rule gamma = k sqrt(M gamma_x), k = {k}")),
        (Some(_), None) => Some("given (--bandwidth)".to_string()),
        _ => None,
    };
    let path = |p: &Option<PathBuf>| p.as_ref().map(|p| p.display().to_string());
    let inputs = serde_json::json!({
        "rows": path(&args.rows),
        "cols": path(&args.cols),
        "matrix": path(&args.matrix),
        "graph": path(&args.graph),
        "graph_input": args.graph.as_ref().map(|_| args.graph_input.to_string()),
        "landmark_rows": path(&args.landmark_rows),
        "landmark_cols": path(&args.landmark_cols),
        "header": args.header,
    });
    let mut value = serde_json::to_value(&summary).unwrap_or_default();
    if let Some(map) = value.as_object_mut() {
        map.insert("bandwidth_source".into(), bandwidth_source.into());
        map.insert("inputs".into(), inputs);
        map.insert("seconds".into(), seconds.into());
        map.insert("threads".into(), rayon::current_num_threads().into());
        map.insert("model_file".into(), "model.json".into());
    }
    value
}
