//! The experiments: one implementation per spec `kind`, looked up in [`registry`], all driven by
//! one loop ([`Context::run_cells`]).
//!
//! # The driver
//!
//! An experiment is a cell function and the list of its cells. A [`Cell`] is the unit of
//! computation, caching, progress and failure: a dataset, a method (or all methods of the run
//! together, when one computation yields them all), a value of the spec's setting axis (or
//! none), a seed (or none). [`Context::grid`] lists the run's cells (the spec's datasets x methods
//! x seeds, the `--quick` subset under `--quick`); [`Grid`] reshapes it (`methods`,
//! `all_methods`, `settings`, `unseeded`). [`Context::run_cells`] then owns the loop: for each
//! cell in order it shows the cell in the spec's progress bar (a cell reports its own steps as
//! [`ksvd_linalg::Progress`] through the callback it is given), reads its rows from the cell
//! cache or computes and stores them ([`Context::cell`], keyed by everything the cell depends
//! on), keeps the rows of declared metrics and of the run's methods, and turns a cell that
//! returns an error into [`Context::failed_rows`] (`missing-data` for an absent input file,
//! `failed` otherwise) while the other cells still run. [`PerDataset`] holds what the cells of
//! one dataset share (a loaded graph), loaded only if one of them is computed.
//!
//! How each kind maps onto cells:
//!
//! | kind | cell | setting axis |
//! |---|---|---|
//! | `datasets` | dataset (method `data`, unseeded, not cached) | — |
//! | `graph-embedding` (Table 1, `cargo xtask table1-config`) | dataset x method x seed | — (rows carry `arcs=reversed`, ...) |
//! | `nystrom-f1` | dataset x method (`ksvd`, `kpca`) x seed | — (rows carry `m=...`, `exact`) |
//! | `timing` | dataset x seed, all methods (the scans share a reference) | — (rows carry `eps=...`) |
//! | `spectrum` | dataset x gamma x seed, all methods | `gamma=<γ>` |
//! | `landmarks` | the reference per dataset (method `optimal`), then dataset x scheme x m x seed | `m=<m>` |
//! | `uci`, `ablation` (Table 3) | dataset x seed, all methods (one shared preparation) | — |
//! | `biclustering` (Table 2) | dataset x seed, all methods | — |
//!
//! # Adding an experiment
//!
//! 1. Write the spec `experiments/<name>.toml` (see the existing ones): `kind`, the datasets, methods and
//!    metrics with the paper's labels, `[params]`, `[quick]`, the layouts and the paper's values.
//! 2. Define the parameters as a struct with `#[derive(Deserialize)] #[serde(deny_unknown_fields)]`: it is
//!    what `[params]` (merged with `[quick.params]` under `--quick`) deserialises into. Every choice the paper
//!    leaves open belongs there, with a doc comment. Validate it once, before the cells run (an invalid
//!    parameter is an error of the spec, not of a cell).
//! 3. Implement [`Experiment`]: `run` gets the validated parameters and a [`Context`] (the spec, `quick`,
//!    `threads`, the cell cache, the progress bar) and returns [`Row`]s (built with [`Row`]'s builder), one
//!    per dataset x method x metric x setting x seed, from [`Context::run_cells`] over its cells. A cell
//!    reports a measured target it did not reach (a tolerance, a rank) as [`Status::Unmet`] rows whose
//!    note says which target and what was reached: a result, cached like `ok`. A fault is an error of the
//!    cell function (the driver writes its `failed` rows); put the likely cause of a known mismatch in the
//!    row's note.
//! 4. Register it in [`registry`] under its kind. Bump `VERSION` whenever a change alters results: cached
//!    cells of the old version are then ignored.
//!
//! Everything else (joining the paper's values, CSV/Parquet/Markdown, figures, `REPORT.md`) is generic.
//!
//! ```no_run
//! use anyhow::Result;
//! use serde::Deserialize;
//! use xtask::experiments::{Context, Experiment};
//! use xtask::rows::Row;
//!
//! /// `[params]` of the spec.
//! #[derive(Deserialize)]
//! #[serde(deny_unknown_fields)]
//! struct Params {
//!     /// Rank r (stated: 20).
//!     rank: usize,
//! }
//!
//! struct Demo;
//!
//! impl Experiment for Demo {
//!     type Params = Params;
//!     fn run(&self, cx: &Context<'_>, p: &Params) -> Result<Vec<Row>> {
//!         let cells = cx.grid().cells(); // dataset x method x seed of this run
//!         cx.run_cells(
//!             &cells,
//!             // Everything the cell depends on goes into its key.
//!             |cell| (cell.clone(), p.rank, cx.threads),
//!             |cell, _progress| {
//!                 let (f1, seconds) = (0.79, 1.5); // the real computation
//!                 Ok(vec![Row::ok(&cell.dataset, cell.method(), "micro_f1", f1)
//!                     .seed(cell.seed())
//!                     .seconds(seconds)])
//!             },
//!         )
//!     }
//! }
//! ```
//!
//! An experiment that loops itself (the large-scale kinds, for now) uses the parts directly:
//! [`Context::cell`] for the cache, `cx.progress` for the bar, [`Context::failed_rows`] for a cell
//! that errs. Adopting the driver means listing its cells ([`Context::grid`]: `large-scale` is
//! dataset x seed with all methods, `cx.grid().all_methods()`; `scaling` is one cell per size
//! and seed, a setting axis `cx.grid().all_methods().settings(sizes)` of one dataset) and moving
//! the body of its loop into the cell function given to [`Context::run_cells`], with the key it
//! builds now.
use std::any::type_name;
use std::marker::PhantomData;

use anyhow::{Context as _, Result};
use indicatif::ProgressBar;
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::cache::{Cache, Origin, SharedEmbeddings};
use crate::rows::{Row, Status};
use crate::spec::Spec;

mod biclustering;
mod datasets;
mod driver;
mod general;
mod graph;
mod landmarks;
mod large_scale;
pub mod race;

pub use large_scale::scaling_child;
mod spectrum;
mod timing;

pub use driver::{Cell, Grid, PerDataset};

/// An experiment implementation: turns a spec into result rows.
pub trait Experiment: Send + Sync + 'static {
    /// The spec's `[params]`.
    type Params: DeserializeOwned;
    /// Bump when a change alters results (invalidates cached cells).
    const VERSION: u32 = 1;
    /// Whether this kind is implemented; unimplemented kinds are listed as such by `cargo xtask list`.
    const IMPLEMENTED: bool = true;

    /// Runs the experiment. Errors abort the spec (every row of it `failed`); a failing *cell* is an error
    /// of its cell function, which [`Context::run_cells`] turns into that cell's `failed` rows.
    fn run(&self, cx: &Context<'_>, params: &Self::Params) -> Result<Vec<Row>>;
}

/// What an experiment gets besides its parameters.
pub struct Context<'a> {
    /// The spec (with `--quick` applied when `quick` is set).
    pub spec: &'a Spec,
    /// `--quick`: a reduced run for CI.
    pub quick: bool,
    /// `--threads`: threads the experiment may use (the global rayon pool has this size).
    pub threads: usize,
    /// The cell cache of this spec.
    pub cache: &'a Cache,
    /// Embeddings shared between the specs of the run.
    pub shared: &'a SharedEmbeddings,
    /// This spec's progress bar (its length is the experiment's to set; [`Context::cell`] advances it).
    pub progress: &'a ProgressBar,
}

impl Context<'_> {
    /// The cached rows of a cell, or `compute()`'s. Advances the progress bar by one.
    pub fn cell<K: Serialize>(&self, key: &K, compute: impl FnOnce() -> Result<Vec<Row>>) -> Result<Vec<Row>> {
        let (rows, origin) = self.cache.get_or_compute(key, compute)?;
        if origin == Origin::Cached {
            self.progress
                .set_message(format!("{} (cached cells reused)", self.spec.name()));
        }
        self.progress.inc(1);
        Ok(rows)
    }

    /// One row with `status` for every key the spec has a paper value for, plus rows for the selected
    /// dataset x method pairs that have none (so that stand-in datasets and figures are listed too).
    /// Only datasets and methods selected for this run are included. Datasets the spec marks `unavailable`
    /// get `missing-data` with the spec's reason instead.
    pub fn rows_with_status(&self, status: Status, note: &str) -> Vec<Row> {
        self.status_rows(|_, _| true, None, status, note, true)
    }

    /// [`Context::rows_with_status`] for the dataset x method pairs `keep` accepts and, with
    /// `setting`, that setting only; `unavailable`: whether datasets the spec marks unavailable
    /// get its reason instead.
    fn status_rows(
        &self,
        keep: impl Fn(&str, &str) -> bool,
        setting: Option<&str>,
        status: Status,
        note: &str,
        unavailable: bool,
    ) -> Vec<Row> {
        let f = &self.spec.file;
        let selected = |d: &str, m: &str| {
            keep(d, m) && self.spec.run_datasets.iter().any(|x| x == d) && self.spec.run_methods.iter().any(|x| x == m)
        };
        let row = |d: &str, m: &str, metric: &str| match self.spec.unavailable(d).filter(|_| unavailable) {
            Some(why) => Row::status(d, m, metric, Status::MissingData, Some(why.to_string())),
            None => Row::status(d, m, metric, status, Some(note.to_string())),
        };
        let mut rows: Vec<Row> = f
            .paper
            .iter()
            .filter(|p| selected(&p.dataset, &p.method) && setting.is_none_or(|s| s == p.setting))
            .map(|p| row(&p.dataset, &p.method, &p.metric).setting(p.setting.clone()))
            .collect();
        // Pairs without any paper value get the metrics the paper reports for that method elsewhere (all
        // metrics when it reports none, as for figures).
        for d in &self.spec.run_datasets {
            for m in &self.spec.run_methods {
                if !selected(d, m) || f.paper.iter().any(|p| &p.dataset == d && &p.method == m) {
                    continue;
                }
                let reported: Vec<&str> = f
                    .metrics
                    .iter()
                    .map(|x| x.id.as_str())
                    .filter(|x| f.paper.iter().any(|p| &p.method == m && p.metric == *x))
                    .collect();
                let metrics: Vec<&str> = if reported.is_empty() {
                    f.metrics.iter().map(|x| x.id.as_str()).collect()
                } else {
                    reported
                };
                let setting = setting.unwrap_or_default();
                rows.extend(metrics.into_iter().map(|metric| row(d, m, metric).setting(setting)));
            }
        }
        rows
    }
}

/// An [`Experiment`] behind a uniform interface (parameters still as TOML).
pub trait Registered: Send + Sync {
    /// Parses the parameters (the check run for every spec at load time).
    fn check(&self, spec: &Spec) -> Result<()>;
    /// Parses the parameters and runs.
    fn run(&self, cx: &Context<'_>) -> Result<Vec<Row>>;
    /// The experiment's `VERSION`.
    fn version(&self) -> u32;
    /// The experiment's `IMPLEMENTED`.
    fn implemented(&self) -> bool;
}

struct Erased<E>(E);

fn parse_params<P: DeserializeOwned>(spec: &Spec) -> Result<P> {
    let section = if spec.quick {
        "[params] with [quick.params] merged"
    } else {
        "[params]"
    };
    toml::Value::Table(spec.file.params.clone())
        .try_into::<P>()
        .with_context(|| {
            format!(
                "{}: {section} of kind `{}` ({})",
                spec.path.display(),
                spec.file.kind,
                type_name::<P>()
            )
        })
}

impl<E: Experiment> Registered for Erased<E> {
    fn check(&self, spec: &Spec) -> Result<()> {
        parse_params::<E::Params>(spec).map(drop)
    }
    fn run(&self, cx: &Context<'_>) -> Result<Vec<Row>> {
        let params = parse_params::<E::Params>(cx.spec)?;
        self.0.run(cx, &params)
    }
    fn version(&self) -> u32 {
        E::VERSION
    }
    fn implemented(&self) -> bool {
        E::IMPLEMENTED
    }
}

/// A registry entry.
pub struct Entry {
    /// The spec `kind` this implementation runs.
    pub kind: &'static str,
    /// The implementation.
    pub imp: Box<dyn Registered>,
}

fn entry<E: Experiment>(kind: &'static str, e: E) -> Entry {
    Entry {
        kind,
        imp: Box::new(Erased(e)),
    }
}

/// A kind whose parameters are typed but whose implementation is not written yet: every cell it would
/// produce is reported as `not-implemented`.
pub struct NotImplemented<P>(PhantomData<fn() -> P>);

impl<P> NotImplemented<P> {
    /// The placeholder for parameters `P`.
    pub fn new() -> Self {
        NotImplemented(PhantomData)
    }
}

impl<P: DeserializeOwned + 'static> Experiment for NotImplemented<P> {
    type Params = P;
    const IMPLEMENTED: bool = false;
    fn run(&self, cx: &Context<'_>, _params: &P) -> Result<Vec<Row>> {
        let note = format!("experiment kind `{}` is not implemented yet", cx.spec.file.kind);
        Ok(cx.rows_with_status(Status::NotImplemented, &note))
    }
}

/// `cargo xtask table1-config FILE`: the Table 1 experiment with a protocol from a file (see
/// `graph::run_config_file`).
pub fn graph_config(path: &std::path::Path) -> Result<()> {
    graph::run_config_file(path)
}

/// All experiment kinds.
pub fn registry() -> Vec<Entry> {
    vec![
        entry("datasets", datasets::Datasets),
        entry("timing", timing::Timing),
        entry("spectrum", spectrum::Spectrum),
        entry("graph-embedding", graph::Table1),
        entry("nystrom-f1", graph::NystromF1),
        entry("biclustering", biclustering::Biclustering),
        entry("uci", general::Table3),
        entry("ablation", general::Ablation),
        entry("large-scale", large_scale::LargeScale),
        entry("scaling", large_scale::Scaling),
        entry("landmarks", landmarks::Landmarks),
    ]
}

/// The entry for `kind`, or an error listing the known kinds.
pub fn lookup<'r>(registry: &'r [Entry], kind: &str) -> Result<&'r Entry> {
    registry.iter().find(|e| e.kind == kind).with_context(|| {
        let known: Vec<&str> = registry.iter().map(|e| e.kind).collect();
        format!("unknown experiment kind `{kind}`; known kinds: {}", known.join(", "))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    use crate::fsx::project_root;
    use crate::reproduce::load_specs;

    /// Every spec in experiments/ parses (common part and its kind's `[params]`, full and quick), and every
    /// paper row names a declared dataset, method, metric and setting (checked by `Spec::parse`).
    #[test]
    fn every_spec_parses() {
        let registry = registry();
        let dir = project_root().join("experiments");
        for quick in [false, true] {
            let specs = load_specs(&dir, quick, &registry).unwrap();
            let names: Vec<&str> = specs.iter().map(Spec::name).collect();
            for expected in [
                "ablation",
                "datasets",
                "landmarks",
                "large-scale",
                "nystrom-f1",
                "scaling",
                "spectrum",
                "table1",
                "table2",
                "table3",
                "timing",
            ] {
                assert!(names.contains(&expected), "{expected} missing: {names:?}");
            }
            for s in &specs {
                for p in &s.file.paper {
                    assert!(s.file.datasets.iter().any(|d| d.id == p.dataset));
                    assert!(s.file.methods.iter().any(|m| m.id == p.method));
                    assert!(s.file.metrics.iter().any(|m| m.id == p.metric));
                }
                if quick {
                    assert!(s.file.quick.is_some(), "{} has no [quick] section", s.name());
                }
            }
        }
    }

    #[test]
    fn every_kind_is_registered_once() {
        let r = registry();
        let mut kinds: Vec<&str> = r.iter().map(|e| e.kind).collect();
        kinds.sort_unstable();
        kinds.dedup();
        assert_eq!(kinds.len(), r.len());
    }

    #[test]
    fn unknown_param_names_file_and_key() {
        let src = std::fs::read_to_string(project_root().join("experiments/timing.toml")).unwrap();
        let bad = src.replace("rank = 20", "rank = 20\nrnak = 3");
        let spec = Spec::parse(Path::new("experiments/timing.toml"), &bad, false).unwrap();
        let err = format!(
            "{:#}",
            lookup(&registry(), "timing").unwrap().imp.check(&spec).unwrap_err()
        );
        assert!(err.contains("experiments/timing.toml") && err.contains("rnak"), "{err}");
    }
}
