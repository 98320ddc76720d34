//! `ksvd inspect MODEL`: what a saved model holds, from its [`ksvd::ModelSummary`] (the source of
//! `summary.json` too).
use crate::io::{read_model, write_stdout};
use crate::CliError;
use ksvd::ModelSummary;
use ksvd_streaming::{ModelDocument, TrainedSummary};
use std::fmt::Write;
use std::path::PathBuf;

/// Arguments of `ksvd inspect`.
#[derive(Debug, clap::Args)]
pub struct InspectArgs {
    /// A model file, a directory written by `ksvd fit`, or `-` (standard input).
    model: PathBuf,
    /// Print the summary as JSON (the fields of summary.json that describe the model).
    #[arg(long)]
    json: bool,
}

pub(crate) fn inspect(args: InspectArgs) -> Result<(), CliError> {
    let text = match read_model(&args.model)? {
        ModelDocument::Ksvd(model) if args.json => {
            serde_json::to_string_pretty(&model.summary()).map_err(json_error)? + "\n"
        }
        ModelDocument::Ksvd(model) => render(&model.summary()),
        ModelDocument::Trained(model) if args.json => {
            serde_json::to_string_pretty(&model.describe()).map_err(json_error)? + "\n"
        }
        ModelDocument::Trained(model) => render_streaming(&model.describe()),
    };
    write_stdout(text.as_bytes())
}

fn json_error(e: serde_json::Error) -> CliError {
    CliError::Output {
        path: PathBuf::from("<stdout>"),
        msg: e.to_string(),
    }
}

/// A trained model of the streaming fit: method, sizes, bandwidth, landmarks and its spectrum.
fn render_streaming(s: &TrainedSummary) -> String {
    let mut out = format!(
        "{} model of the streaming fit (ksvd-stream / ksvd.dask): {} training rows x {} features, rank {}\n",
        s.method.to_uppercase(),
        s.train_rows,
        s.n_features,
        s.rank
    );
    let mut line = |key: &str, value: String| {
        let _ = writeln!(out, "  {key:<16} {value}");
    };
    line("bandwidth", s.bandwidth.to_string());
    line("landmark rows", s.landmark_rows.to_string());
    line("positive label", s.positive_label.to_string());
    let _ = writeln!(out, "  {:>4}  {:>24}", "i", "spectrum");
    for (i, v) in s.spectrum.iter().enumerate() {
        let _ = writeln!(out, "  {:>4}  {:>24.17e}", i + 1, v);
    }
    out
}

/// The summary's one line ([`ModelSummary`]'s `Display`), then what it holds per item: the
/// bandwidth and how it was chosen, centring, compatibility, landmarks, and every singular value
/// with its residuals.
fn render(s: &ModelSummary) -> String {
    let mut out = format!("{s}\n");
    let yes_no = |b: bool| if b { "yes" } else { "no" };
    // Writing to a String cannot fail.
    let mut line = |key: &str, value: String| {
        let _ = writeln!(out, "  {key:<16} {value}");
    };
    line("estimator", s.estimator.to_string());
    line("size", format!("{} x {}", s.n_rows, s.n_cols));
    line(
        "kernel",
        s.kernel
            .as_ref()
            .map_or_else(|| "precomputed".to_string(), ToString::to_string),
    );
    if let Some(gamma) = s.bandwidth {
        let how = match s.bandwidth_rule {
            Some(k) => format!("rule gamma = k sqrt(M gamma_x), k = {k}"),
            None => "given".to_string(),
        };
        line("bandwidth", format!("{gamma} ({how})"));
    }
    if let Some(d) = s.dim {
        line("sample dim", d.to_string());
    }
    line("rank", s.rank.to_string());
    line("solver", format!("{:?}", s.solver));
    line("centred", yes_no(s.center).to_string());
    if let Some(c) = &s.compat {
        line("compat", format!("{c:?}"));
    }
    if let Some(l) = &s.landmarks {
        line("landmarks", format!("{} rows x {} cols", l.rows, l.cols));
    }
    line("seed", s.seed.to_string());
    line("format version", s.format_version.to_string());
    let _ = writeln!(
        out,
        "  {:>4}  {:>24}  {:>12}  {:>12}",
        "i", "singular value", "left res/s_1", "right res/s_1"
    );
    for (i, sv) in s.singular_values.iter().enumerate() {
        let res = |side: Option<&Vec<f64>>| {
            side.and_then(|r| r.get(i))
                .map_or_else(|| "-".into(), |v| format!("{v:.3e}"))
        };
        let left = res(s.residuals.as_ref().map(|r| &r.left));
        let right = res(s.residuals.as_ref().map(|r| &r.right));
        let _ = writeln!(out, "  {:>4}  {sv:>24.17e}  {left:>12}  {right:>12}", i + 1);
    }
    out
}
