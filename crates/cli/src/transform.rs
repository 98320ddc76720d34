//! `ksvd transform`: projections of new samples with a saved model (KSVD or KPCA):
//! `transform` (`U S^½` at the training rows) or the paper's extension (eq. 10, `U`).
use crate::io::{is_stdio, pad_dim, read_model, read_samples, stdin_at_most_once, write_matrix, Format, ReadOptions};
use crate::{progress, set_threads, CliError};
use ksvd::{KsvdModel, Samples, Scaling};
use ksvd_linalg::CsrMatrix;
use ksvd_streaming::{ModelDocument, TrainedModel};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Arguments of `ksvd transform`.
#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("new").required(true).args(["rows", "cols"])))]
pub struct TransformArgs {
    /// Directory written by `ksvd fit` (or its model.json; `-`: standard input). KSVD and KPCA
    /// models alike.
    #[arg(long)]
    model: PathBuf,
    /// New row samples (same formats as `fit`; `-`: standard input): writes OUT/rows =
    /// k̃(x', Z) V S^-½ (U S^½ at the training rows). For a precomputed-kernel model: the kernel
    /// values k(x', Z), one new sample per row (new x M).
    #[arg(long)]
    rows: Option<PathBuf>,
    /// New column samples: writes OUT/cols = k̃(X, z')ᵀ U S^-½ (V S^½ at the training columns).
    /// For a precomputed-kernel model: the kernel values k(X, z'), one new sample per row
    /// (new x N).
    #[arg(long)]
    cols: Option<PathBuf>,
    /// The paper's out-of-sample extension (eq. 10) instead: k̃(x', Z) V S^-1, which gives back
    /// u (and k̃(X, z')ᵀ U S^-1, v) at the training samples.
    #[arg(long)]
    extension: bool,
    /// CSV/text inputs start with a header line.
    #[arg(long)]
    header: bool,
    /// Output directory (created if missing); `-` writes the matrix to standard output, as CSV
    /// (`.npy` bytes with --format npy).
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

/// Samples per block of the transform (one kernel pass of `block × |Z|` entries each).
const TRANSFORM_BLOCK: usize = 2048;

/// Which side of the model the new samples are on.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Rows,
    Cols,
}

impl Side {
    fn name(self) -> &'static str {
        match self {
            Side::Rows => "rows",
            Side::Cols => "cols",
        }
    }
}

pub(crate) fn transform(args: TransformArgs) -> Result<(), CliError> {
    let t0 = Instant::now();
    set_threads(args.threads)?;
    stdin_at_most_once(&[
        ("--model", Some(args.model.as_path())),
        ("--rows", args.rows.as_deref()),
        ("--cols", args.cols.as_deref()),
    ])?;
    let opts = ReadOptions {
        header: args.header,
        quiet: args.quiet,
    };
    let model = read_model(&args.model)?;
    let (path, side) = match (&args.rows, &args.cols) {
        (Some(p), None) => (p, Side::Rows),
        (None, Some(p)) => (p, Side::Cols),
        _ => return Err(CliError::Usage("give exactly one of --rows and --cols".into())),
    };
    let scaling = if args.extension { Scaling::Unit } else { Scaling::Sqrt };
    let new = read_samples(path, &opts)?;
    let out = match model {
        ModelDocument::Ksvd(model) => project_inputs(&model, path, new, side, scaling, args.quiet)?,
        ModelDocument::Trained(model) => embed_streaming(&model, path, new, side, args.extension)?,
    };
    write_matrix(&args.out, side.name(), &out, args.format)?;
    if !args.quiet {
        let what = if args.extension { "extended" } else { "transformed" };
        let to = if is_stdio(&args.out) {
            "standard output".to_string()
        } else {
            Path::new(&args.out).join(side.name()).display().to_string()
        };
        eprintln!(
            "ksvd: {what} {} new {} ({} components), {:.3} s; wrote {to}",
            out.nrows(),
            side.name(),
            out.ncols(),
            t0.elapsed().as_secs_f64(),
        );
    }
    Ok(())
}

/// A trained model of the streaming fit embeds new rows as its fit did: the Nyström embedding
/// through the landmarks (eq. 11), normalised with the training rows' column norms.
fn embed_streaming(
    model: &TrainedModel,
    path: &Path,
    new: Samples,
    side: Side,
    extension: bool,
) -> Result<ndarray::Array2<f64>, CliError> {
    if side == Side::Cols || extension {
        return Err(CliError::Usage(
            "a model of the streaming fit embeds new rows only (--rows; its embedding is the \
             Nyström extension through the landmarks, so --extension does not apply)"
                .into(),
        ));
    }
    let want = model.describe().n_features;
    let new = pad_dim(new, want);
    if new.dim() != want {
        return Err(CliError::Input {
            path: path.to_path_buf(),
            line: None,
            msg: format!("{} features per sample, but the model expects {want}", new.dim()),
        });
    }
    let x = match new {
        Samples::Sparse(c) => c,
        Samples::Dense(d) => CsrMatrix::from_dense(d.view()).map_err(|e| CliError::Input {
            path: path.to_path_buf(),
            line: None,
            msg: e.to_string(),
        })?,
    };
    model.embed(&x).map_err(|source| CliError::StreamingModel {
        path: path.to_path_buf(),
        source,
    })
}

/// New inputs of the kind the fit took, block by block ([`KsvdModel::project_input_rows`] and
/// `_cols`, the core's one dispatch): samples; for a model of a precomputed kernel matrix the
/// kernel values against the training samples; for a fit on a data matrix with a compatibility
/// new rows (or columns, given as rows) of that matrix.
fn project_inputs(
    model: &KsvdModel,
    path: &Path,
    new: Samples,
    side: Side,
    scaling: Scaling,
    quiet: bool,
) -> Result<ndarray::Array2<f64>, CliError> {
    let (row_dim, col_dim) = model.input_dims();
    let want_dim = match side {
        Side::Rows => row_dim,
        Side::Cols => col_dim,
    };
    let new = pad_dim(new, want_dim);
    if new.dim() != want_dim {
        let training = match side {
            Side::Rows => "columns",
            Side::Cols => "rows",
        };
        let msg = if model.is_precomputed() {
            format!(
                "{} kernel values per new sample, but the precomputed model has {want_dim} training {training}",
                new.dim()
            )
        } else if model.compat().is_some() {
            format!(
                "{} features per sample, but the model expects {want_dim} (the {training} of the training data matrix)",
                new.dim()
            )
        } else {
            format!("{} features per sample, but the model expects {want_dim}", new.dim())
        };
        return Err(CliError::Input {
            path: path.to_path_buf(),
            line: None,
            msg,
        });
    }
    let total = new.len();
    let nblocks = total.div_ceil(TRANSFORM_BLOCK);
    let bar = progress(quiet, Some(nblocks as u64));
    bar.set_message(format!("projecting {total} {}", side.name()));
    let mut out = ndarray::Array2::zeros((total, model.rank()));
    for b in 0..nblocks {
        let rows = b * TRANSFORM_BLOCK..((b + 1) * TRANSFORM_BLOCK).min(total);
        let idx: Vec<usize> = rows.clone().collect();
        let block = if nblocks == 1 { new.clone() } else { new.select(&idx)? };
        let projected = match side {
            Side::Rows => model.project_input_rows(&block, scaling)?,
            Side::Cols => model.project_input_cols(&block, scaling)?,
        };
        out.slice_mut(ndarray::s![rows, ..]).assign(&projected);
        bar.inc(1);
    }
    bar.finish_and_clear();
    Ok(out)
}
