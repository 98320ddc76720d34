//! `cargo xtask reproduce`: runs the selected specs and writes every output file.
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context as _, Result};
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::cache::{Cache, SharedEmbeddings};
use crate::experiments::{self, Context, Entry};
use crate::rows::{self, Row, Status, Summary, TidyRow};
use crate::spec::{self, Spec};
use crate::{fsx, plot, render, timings};

/// Options of `reproduce`.
#[derive(Debug, Clone)]
pub struct Options {
    /// Specs to run (all when empty).
    pub only: Vec<String>,
    /// Apply the `[quick]` sections.
    pub quick: bool,
    /// Output directory.
    pub out: PathBuf,
    /// Threads for the experiments.
    pub threads: usize,
    /// Ignore cached cells.
    pub no_cache: bool,
    /// Do not run: re-render pages, figures and the report from the result files in `out`.
    pub render_only: bool,
    /// Directory of the spec files.
    pub specs: PathBuf,
}

/// What a run produced.
#[derive(Debug)]
pub struct Outcome {
    /// Specs that ran.
    pub ran: Vec<String>,
    /// Specs whose experiment returned an error, with the error.
    pub failed: Vec<(String, String)>,
}

/// Loads every spec in `dir` and checks its kind and parameters; all problems are reported together.
pub fn load_specs(dir: &Path, quick: bool, registry: &[Entry]) -> Result<Vec<Spec>> {
    let mut specs = Vec::new();
    let mut problems = Vec::new();
    for path in spec::spec_paths(dir)? {
        // Both variants are checked, whichever runs, so a broken [quick] section is caught in a full run too.
        let checked = Spec::load(&path, !quick).and_then(|other| {
            let spec = Spec::load(&path, quick)?;
            let entry =
                experiments::lookup(registry, &spec.file.kind).with_context(|| format!("{}", path.display()))?;
            entry.imp.check(&other)?;
            entry.imp.check(&spec)?;
            Ok(spec)
        });
        match checked {
            Ok(s) => specs.push(s),
            Err(e) => problems.push(format!("{e:#}")),
        }
    }
    if !problems.is_empty() {
        bail!("{} invalid spec file(s):\n  {}", problems.len(), problems.join("\n  "));
    }
    if specs.is_empty() {
        bail!("no spec files (*.toml) in {}", dir.display());
    }
    Ok(specs)
}

/// The style of every experiment's progress bar.
pub(crate) fn bar_style() -> ProgressStyle {
    ProgressStyle::with_template("{prefix:>12} [{bar:28}] {pos}/{len} cells {elapsed:>4} {wide_msg}")
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ")
}

/// `<out>/<spec>.parquet`: the stored tidy rows of a spec's last run.
pub(crate) fn stored_path(spec: &Spec, out: &Path) -> PathBuf {
    out.join(format!("{}.parquet", spec.name()))
}

/// The rows of a previous run, read back from [`stored_path`] (for `--render-only`, which skips
/// specs without one).
fn stored_rows(spec: &Spec, out: &Path) -> Result<Vec<Row>> {
    let tidy = rows::from_frame(&rows::read_parquet(&stored_path(spec, out))?)?;
    Ok(tidy
        .into_iter()
        // `tidy` adds these again for paper values without a result.
        .filter(|t| {
            let added = matches!(
                t.row.note.as_deref(),
                Some("outside the --quick subset" | "no result produced")
            );
            !(t.row.status == Status::NotRun && added)
        })
        .map(|t| t.row)
        .collect())
}

/// Checks that an experiment only produced declared ids.
fn check_rows(spec: &Spec, rows: &[Row]) -> Result<()> {
    let f = &spec.file;
    for r in rows {
        let known = f.datasets.iter().any(|d| d.id == r.dataset)
            && f.methods.iter().any(|m| m.id == r.method)
            && f.metrics.iter().any(|m| m.id == r.metric);
        if !known {
            bail!(
                "the experiment produced a row for {}/{}/{}, which the spec does not declare",
                r.dataset,
                r.method,
                r.metric
            );
        }
        if r.status == Status::Ok && r.value.is_none() {
            bail!("row {}/{}/{} has status ok but no value", r.dataset, r.method, r.metric);
        }
    }
    Ok(())
}

fn remove_if_exists(path: &Path) -> Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(e).with_context(|| format!("removing {}", path.display()))
        }
        _ => Ok(()),
    }
}

/// Writes the data files of a spec and returns the summary read back from its Parquet file.
fn write_data(spec: &Spec, tidy: &[TidyRow], out: &Path) -> Result<(Vec<Summary>, render::Outputs)> {
    let name = spec.name();
    let mut df = rows::to_frame(tidy)?;
    fsx::write_atomic(&out.join(format!("{name}.csv")), &rows::csv_bytes(&mut df)?)?;
    let parquet = out.join(format!("{name}.parquet"));
    fsx::write_atomic(&parquet, &rows::parquet_bytes(&mut df)?)?;
    // Everything below is rendered from the file just written.
    let tidy = rows::from_frame(&rows::read_parquet(&parquet)?)?;
    let summary = rows::summarize(spec, &tidy);
    let mut sdf = rows::summary_frame(&summary)?;
    fsx::write_atomic(&out.join(format!("{name}.summary.csv")), &rows::csv_bytes(&mut sdf)?)?;
    let outputs = render::Outputs {
        data: vec![
            format!("{name}.csv"),
            format!("{name}.parquet"),
            format!("{name}.summary.csv"),
        ],
        ..Default::default()
    };
    Ok((summary, outputs))
}

fn draw_figures(spec: &Spec, summary: &[Summary], out: &Path, outputs: &mut render::Outputs) -> Result<()> {
    for fig in &spec.file.figures {
        match plot::figure(spec, fig, summary, out) {
            Ok(files) => outputs.figures.push(files),
            Err(e) => {
                // A stale figure from an earlier run must not pass for a current one.
                let stem = format!("{}-{}", spec.name(), fig.file);
                remove_if_exists(&out.join(format!("{stem}.svg")))?;
                remove_if_exists(&out.join(format!("{stem}.png")))?;
                outputs.skipped_figures.push(format!("{e:#}"));
            }
        }
    }
    Ok(())
}

/// Outputs of a spec found on disk (for specs not run in this invocation).
fn existing_outputs(spec: &Spec, out: &Path) -> render::Outputs {
    let name = spec.name();
    let mut o = render::Outputs::default();
    for f in [
        format!("{name}.csv"),
        format!("{name}.parquet"),
        format!("{name}.summary.csv"),
    ] {
        if out.join(&f).exists() {
            o.data.push(f);
        }
    }
    for fig in &spec.file.figures {
        let (svg, png) = (format!("{name}-{}.svg", fig.file), format!("{name}-{}.png", fig.file));
        if out.join(&svg).exists() && out.join(&png).exists() {
            o.figures.push((svg, png));
        } else {
            o.skipped_figures.push(format!("`{}` has not been drawn", fig.file));
        }
    }
    o
}

/// Runs `f`; a panic inside it (a bug in an experiment, not a measurement) becomes an error, so
/// the other specs still run and `reproduce` exits non-zero after writing everything else.
fn run_catching_panics<T>(f: impl FnOnce() -> Result<T>) -> Result<T> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => {
            let msg = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "non-string panic payload".to_string());
            bail!("panicked: {msg}")
        }
    }
}

/// Runs the selected specs, writes `<out>/<spec>.{csv,parquet,summary.csv,md}`, figures, and `REPORT.md`.
pub fn run(opts: &Options) -> Result<Outcome> {
    let registry = experiments::registry();
    let specs = load_specs(&opts.specs, opts.quick, &registry)?;
    for name in &opts.only {
        if !specs.iter().any(|s| s.name() == name) {
            let known: Vec<&str> = specs.iter().map(Spec::name).collect();
            bail!("--only {name}: no such spec; known specs: {}", known.join(", "));
        }
    }
    let selected: Vec<&Spec> = specs
        .iter()
        .filter(|s| opts.only.is_empty() || opts.only.iter().any(|o| o == s.name()))
        .collect();
    // Fails only if a pool exists already (a second run in the same process): keep that one.
    let _ = rayon::ThreadPoolBuilder::new().num_threads(opts.threads).build_global();
    std::fs::create_dir_all(&opts.out).with_context(|| format!("creating {}", opts.out.display()))?;

    let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr());
    let mut outcome = Outcome {
        ran: Vec::new(),
        failed: Vec::new(),
    };
    let mut errors: Vec<(String, String)> = Vec::new();
    let mut fresh: Vec<(String, Vec<Summary>, render::Outputs)> = Vec::new();
    // Embeddings one spec computes and a later one needs again (nystrom-f1's exact references
    // are Table 1's), for this run only, when both run.
    let kinds: Vec<&str> = selected.iter().map(|s| s.file.kind.as_str()).collect();
    let shared = if !opts.render_only && kinds.contains(&"nystrom-f1") && kinds.contains(&"graph-embedding") {
        SharedEmbeddings::in_dir(opts.out.join(".cache").join("shared-embeddings")).unwrap_or_else(|e| {
            eprintln!("warning: embeddings are not shared between specs in this run ({e:#})");
            SharedEmbeddings::off()
        })
    } else {
        SharedEmbeddings::off()
    };
    for spec in &selected {
        let entry = experiments::lookup(&registry, &spec.file.kind)?;
        if opts.render_only && !stored_path(spec, &opts.out).exists() {
            // Nothing stored to render: the report lists the spec as not run yet (writing
            // `failed` result files here would make it look as if it had been run).
            eprintln!("{:>12}: no stored results, listed as not run yet", spec.name());
            continue;
        }
        let cache_dir = opts.out.join(".cache").join(spec.name());
        let cache = Cache::new(
            cache_dir,
            &spec.source,
            &spec.file.kind,
            entry.imp.version(),
            !opts.no_cache,
        );
        let bar = multi.add(
            ProgressBar::new(0)
                .with_style(bar_style())
                .with_prefix(spec.name().to_string()),
        );
        let cx = Context {
            spec,
            quick: opts.quick,
            threads: opts.threads,
            cache: &cache,
            shared: &shared,
            progress: &bar,
        };
        let load_at_start = timings::load_average();
        let start = Instant::now();
        let result = if opts.render_only {
            stored_rows(spec, &opts.out)
        } else {
            run_catching_panics(|| entry.imp.run(&cx))
        }
        .and_then(|rows| check_rows(spec, &rows).map(|()| rows));
        bar.finish_and_clear();
        let rows = match result {
            Ok(rows) => rows,
            Err(e) => {
                let msg = format!("{e:#}");
                errors.push((spec.name().to_string(), msg.clone()));
                cx.rows_with_status(Status::Failed, &format!("experiment error: {msg}"))
            }
        };
        let tidy = rows::tidy(spec, rows);
        let (summary, mut outputs) = write_data(spec, &tidy, &opts.out)?;
        draw_figures(spec, &summary, &opts.out, &mut outputs)?;
        let page = render::spec_page(spec, &summary, &outputs);
        fsx::write_atomic(&opts.out.join(format!("{}.md", spec.name())), page.as_bytes())?;
        let c = render::Counts::of(&summary);
        let counts: Vec<String> = c.by_verdict.iter().map(|(k, v)| format!("{v} {k}")).collect();
        multi.suspend(|| {
            eprintln!(
                "{:>12}: {} ({:.1} s)",
                spec.name(),
                counts.join(", "),
                start.elapsed().as_secs_f64()
            );
        });
        // A failed spec keeps its last good timing; a timings file that cannot be written costs
        // a warning, not the rest of the run.
        let failed = errors.iter().any(|(n, _)| n == spec.name());
        if !opts.render_only && !failed {
            let (cached, computed) = cache.counts();
            let timing = timings::Timing {
                spec: spec.name().to_string(),
                mode: if opts.quick { "quick" } else { "full" }.to_string(),
                wall_seconds: start.elapsed().as_secs_f64(),
                computed_cells: computed,
                cached_cells: cached,
                threads: opts.threads,
                load_at_start,
                date: timings::utc_now(),
                cpu: timings::cpu(),
            };
            if let Err(e) = timings::record(&opts.out.join("timings.csv"), &[timing]) {
                eprintln!("warning: timings.csv not updated: {e:#}");
            }
        }
        outcome.ran.push(spec.name().to_string());
        fresh.push((spec.name().to_string(), summary, outputs));
    }

    let mut entries = Vec::new();
    for spec in &specs {
        let entry = experiments::lookup(&registry, &spec.file.kind)?;
        let error = errors.iter().find(|(n, _)| n == spec.name()).map(|(_, e)| e.clone());
        let (summary, outputs) = match fresh.iter().find(|(n, _, _)| n == spec.name()) {
            Some((_, s, o)) => (Some(s.clone()), o.clone()),
            None => {
                let parquet = stored_path(spec, &opts.out);
                let summary = if parquet.exists() {
                    let tidy = rows::read_parquet(&parquet).and_then(|df| rows::from_frame(&df));
                    match tidy {
                        Ok(t) => Some(rows::summarize(spec, &t)),
                        Err(e) => {
                            eprintln!(
                                "warning: {} is unreadable ({e:#}); listed as not run",
                                parquet.display()
                            );
                            None
                        }
                    }
                } else {
                    None
                };
                (summary, existing_outputs(spec, &opts.out))
            }
        };
        entries.push(render::ReportEntry {
            spec,
            summary,
            outputs,
            implemented: entry.imp.implemented(),
            error,
        });
    }
    fsx::write_atomic(&opts.out.join("REPORT.md"), render::report(&entries).as_bytes())?;
    outcome.failed = errors;
    Ok(outcome)
}

#[cfg(test)]
mod panic_tests {
    use super::run_catching_panics;

    #[test]
    fn a_panicking_experiment_becomes_an_error_naming_the_panic() {
        let e = run_catching_panics::<()>(|| panic!("cell exploded")).unwrap_err();
        assert!(format!("{e:#}").contains("panicked: cell exploded"), "{e:#}");
        assert_eq!(run_catching_panics(|| Ok(3)).unwrap(), 3);
        assert!(run_catching_panics::<()>(|| anyhow::bail!("measured failure")).is_err());
    }
}
