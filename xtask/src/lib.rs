//! The experiment runner of ksvd-rs (the library behind `cargo xtask`).
//!
//! ```text
//! cargo xtask list                                   # every spec with its one-line description
//! cargo xtask reproduce                              # run every spec in experiments/
//! cargo xtask reproduce --only table1 --only timing  # run some
//! cargo xtask reproduce --quick                      # the reduced [quick] variants (CI, a few minutes)
//!     [--out results] [--threads N] [--no-cache]
//! ```
//!
//! # How it is organised
//!
//! - `experiments/<name>.toml` — one spec per table or figure of the paper ([`spec`]): datasets, methods,
//!   metrics (with tolerances), `[params]` (the paper's protocol and our explicit choices where it is silent),
//!   `[quick]` overrides, table/figure layouts, and the paper's reported values (`paper = [...]`). Paper values
//!   live only there.
//! - [`experiments`] — the [`experiments::Experiment`] trait, the registry from `kind` to implementation, and
//!   the one loop every experiment runs ([`experiments::Context::run_cells`]: cells in order, cached, shown in
//!   the progress bar, a failing cell turned into `failed` rows); its module docs explain how to add one.
//!   Unimplemented kinds report `not-implemented` rows.
//! - [`cache`] — finished cells in `results/.cache/<spec>/<sha256>.json`; a rerun resumes.
//! - [`rows`] — the tidy schema (`dataset, method, metric, setting, seed, value, std, trials, seconds,
//!   threads, status, note, paper, diff, quick`) and the summary against the paper.
//! - [`render`] and [`plot`] — Markdown pages laid out like the paper's tables, `REPORT.md`, SVG/PNG figures.
//! - [`timings`] — `results/timings.csv`: wall time, cells (cached), threads and load of each spec's latest run.
//! - [`values`] — `cargo xtask check-values`: the quick run's values bit for bit against the committed
//!   `results/quick-values.csv` (CI runs it), so a change that moves a value is seen where it is made.
//! - [`fsx`] — every output file is written atomically (temporary file, fsync, rename), through `ksvd_datasets::write_atomic`.
//!
//! Outputs per spec: `results/<name>.csv` and `.parquet` (tidy rows), `<name>.summary.csv` (means over seeds,
//! paper value, difference, verdict), `<name>.md`, figures `<name>-<figure>.svg/.png`; `results/REPORT.md`; and
//! `results/timings.csv`, the wall time of every spec's latest run ([`timings`]).
//! Every row has one status of one vocabulary ([`rows::Status`]): `ok`; `unmet` (a measured target, such as
//! `η ≤ ε` or a rank, not reached: a result whose note says what was reached); `failed` (an error, only);
//! `missing-data`; `not-implemented`; `not-run`. The process exits non-zero if a spec is invalid or an
//! experiment fails with an error; unmet targets, missing data and unimplemented methods are reported, not
//! errors.

pub mod cache;
pub mod experiments;
pub mod fsx;
pub mod plot;
pub mod render;
pub mod reproduce;
pub mod rows;
pub mod spec;
#[cfg(test)]
mod tidy;
pub mod timings;
pub mod values;
