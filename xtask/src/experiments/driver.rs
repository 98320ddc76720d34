//! The one loop of every experiment: [`Context::run_cells`] runs an experiment's cells in order,
//! each through the cell cache and the progress display, and turns a cell that fails into
//! failure rows; [`Grid`] lists the cells of a run (the spec's datasets, methods and seeds, the
//! `--quick` subset under `--quick`); [`PerDataset`] shares what the cells of one dataset load.
use std::fmt;

use anyhow::{anyhow, Result};
use ksvd_datasets::DatasetError;
use ksvd_linalg::{Progress, ProgressFn};
use serde::Serialize;

use super::Context;
use crate::rows::{Row, Status};

/// One cell of an experiment: the rows of one computation, cached, shown and failed as a unit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Cell {
    /// Dataset id.
    pub dataset: String,
    /// Method id; `None` when one computation gives the rows of every method of the run (the
    /// timing scans share one reference).
    pub method: Option<String>,
    /// A value of the spec's setting axis (`gamma=0.5`, `m=200`); empty when the cell's rows
    /// carry their own settings (or the spec has none).
    pub setting: String,
    /// Seed; `None` for a cell that draws nothing at random (data descriptions, a reference).
    pub seed: Option<u64>,
}

impl Cell {
    /// The cell's method (`""` for a cell of every method).
    pub fn method(&self) -> &str {
        self.method.as_deref().unwrap_or_default()
    }

    /// The cell's seed (0 for an unseeded cell).
    pub fn seed(&self) -> u64 {
        self.seed.unwrap_or(0)
    }
}

impl fmt::Display for Cell {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.dataset)?;
        for part in [self.method(), &self.setting] {
            if !part.is_empty() {
                write!(f, " {part}")?;
            }
        }
        match self.seed {
            Some(seed) => write!(f, " seed {seed}"),
            None => Ok(()),
        }
    }
}

/// The cells of a run, in the order dataset, method, setting, seed: by default one cell per
/// dataset x method x seed of the run ([`Context::grid`]).
#[derive(Debug, Clone)]
pub struct Grid {
    datasets: Vec<String>,
    /// `None`: one cell for every method of the run.
    methods: Option<Vec<String>>,
    settings: Vec<String>,
    /// `None`: unseeded cells.
    seeds: Option<Vec<u64>>,
}

impl Grid {
    /// Cells for these methods instead of the run's (e.g. the run's methods that are computed,
    /// not derived).
    pub fn methods<S: Into<String>>(mut self, methods: impl IntoIterator<Item = S>) -> Grid {
        self.methods = Some(methods.into_iter().map(Into::into).collect());
        self
    }

    /// One cell per dataset (and setting and seed) for every method of the run together.
    pub fn all_methods(mut self) -> Grid {
        self.methods = None;
        self
    }

    /// A setting axis: one cell per setting (e.g. `gamma=0.5`, `m=200`).
    pub fn settings<S: Into<String>>(mut self, settings: impl IntoIterator<Item = S>) -> Grid {
        self.settings = settings.into_iter().map(Into::into).collect();
        self
    }

    /// Cells without a seed (the run's seeds are not an axis).
    pub fn unseeded(mut self) -> Grid {
        self.seeds = None;
        self
    }

    /// The cells, dataset by dataset.
    pub fn cells(&self) -> Vec<Cell> {
        let methods: Vec<Option<&String>> = match &self.methods {
            Some(m) => m.iter().map(Some).collect(),
            None => vec![None],
        };
        let settings: Vec<&str> = if self.settings.is_empty() {
            vec![""]
        } else {
            self.settings.iter().map(String::as_str).collect()
        };
        let seeds: Vec<Option<u64>> = match &self.seeds {
            Some(s) => s.iter().copied().map(Some).collect(),
            None => vec![None],
        };
        let mut cells = Vec::new();
        for dataset in &self.datasets {
            for method in &methods {
                for setting in &settings {
                    for &seed in &seeds {
                        cells.push(Cell {
                            dataset: dataset.clone(),
                            method: method.cloned(),
                            setting: setting.to_string(),
                            seed,
                        });
                    }
                }
            }
        }
        cells
    }
}

/// What the cells of one dataset share (a loaded graph, a kernel matrix): made when the first of
/// them needs it and kept while the cells stay on that dataset (the driver runs them dataset by
/// dataset); a dataset whose cells are all cached is never loaded.
pub struct PerDataset<T> {
    current: Option<(String, T)>,
}

impl<T> Default for PerDataset<T> {
    fn default() -> Self {
        PerDataset { current: None }
    }
}

impl<T> PerDataset<T> {
    /// Nothing loaded yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The value for `dataset`, from `load` unless it is the one held. A failed load is not
    /// kept (the next cell tries again, and fails alike).
    pub fn get(&mut self, dataset: &str, load: impl FnOnce() -> Result<T>) -> Result<&T> {
        if !matches!(&self.current, Some((d, _)) if d == dataset) {
            // The previous dataset's value goes before the next one is made.
            self.current = None;
            self.current = Some((dataset.to_string(), load()?));
        }
        match &self.current {
            Some((_, value)) => Ok(value),
            None => Err(anyhow!("no value for dataset `{dataset}`")),
        }
    }
}

/// A cell's cache key as JSON.
type KeyFn<'k> = dyn Fn(&Cell) -> serde_json::Result<serde_json::Value> + 'k;

/// Whether an error comes from an input file that is absent (its rows are `missing-data`, not
/// `failed`).
fn missing_file(err: &anyhow::Error) -> bool {
    err.chain()
        .any(|e| matches!(e.downcast_ref::<DatasetError>(), Some(DatasetError::MissingFile { .. })))
}

impl Context<'_> {
    /// The cells of this run: the spec's datasets, methods and seeds (the `--quick` subset under
    /// `--quick`), one cell per dataset x method x seed; see [`Grid`] for the other shapes.
    pub fn grid(&self) -> Grid {
        Grid {
            datasets: self.spec.run_datasets.clone(),
            methods: Some(self.spec.run_methods.clone()),
            settings: Vec::new(),
            seeds: Some(self.spec.file.seeds.clone()),
        }
    }

    /// The one loop of every experiment. For each cell in order: the progress display names
    /// it; its rows are read from the cell cache under `key(cell)` (everything the cell's rows
    /// depend on), or computed by `compute(cell, progress)` and stored when the cell is
    /// finished; rows of metrics the spec does not declare, or of methods outside this run, are
    /// dropped (the crates report diagnostics beside the spec's metrics); a cell whose `compute`
    /// returns an error gives [`Context::failed_rows`] instead, and the other cells still run.
    /// `compute` may report its own progress through `progress` (shown after the cell's name).
    pub fn run_cells<K: Serialize>(
        &self,
        cells: &[Cell],
        key: impl Fn(&Cell) -> K,
        compute: impl FnMut(&Cell, &mut ProgressFn<'_>) -> Result<Vec<Row>>,
    ) -> Result<Vec<Row>> {
        self.drive(cells, Some(&|c: &Cell| serde_json::to_value(key(c))), compute)
    }

    /// [`Context::run_cells`] without the cache: for cells that are cheaper than a cache entry
    /// or must notice a changed input file (the data descriptions).
    pub fn run_cells_uncached(
        &self,
        cells: &[Cell],
        compute: impl FnMut(&Cell, &mut ProgressFn<'_>) -> Result<Vec<Row>>,
    ) -> Result<Vec<Row>> {
        self.drive(cells, None, compute)
    }

    fn drive(
        &self,
        cells: &[Cell],
        key: Option<&KeyFn<'_>>,
        mut compute: impl FnMut(&Cell, &mut ProgressFn<'_>) -> Result<Vec<Row>>,
    ) -> Result<Vec<Row>> {
        self.progress.inc_length(cells.len() as u64);
        let mut rows = Vec::new();
        for cell in cells {
            let label = cell.to_string();
            self.progress.set_message(label.clone());
            let bar = self.progress;
            let mut report = |p: &Progress| bar.set_message(format!("{label}: {p}"));
            let mut run = || match compute(cell, &mut report) {
                Ok(out) => Ok(self.declared(out)),
                Err(e) => Ok(self.failed_rows(cell, &e)),
            };
            let out = match key {
                Some(key) => self.cell(&key(cell)?, run)?,
                None => {
                    let out = run()?;
                    self.progress.inc(1);
                    out
                }
            };
            for row in out {
                // The unseeded missing-data rows of a dataset come once, not once per seed.
                let repeated = row.status == Status::MissingData && row.seed.is_none() && rows.contains(&row);
                if !repeated {
                    rows.push(row);
                }
            }
        }
        Ok(rows)
    }

    /// The rows of metrics the spec declares, of methods in this run.
    fn declared(&self, rows: Vec<Row>) -> Vec<Row> {
        let spec = self.spec;
        rows.into_iter()
            .filter(|r| spec.metric(&r.metric).is_some() && spec.run_methods.contains(&r.method))
            .collect()
    }

    /// The rows of a cell that could not be computed, with the error as the note: `failed`, or
    /// `missing-data` when the error comes from an absent input file. Which rows, see
    /// [`Context::cell_status_rows`]; missing data is a fact about the dataset, not the seed:
    /// those rows carry none (and [`Context::run_cells`] keeps one of each).
    pub fn failed_rows(&self, cell: &Cell, err: &anyhow::Error) -> Vec<Row> {
        let note = format!("{err:#}");
        if missing_file(err) {
            let dataset = Cell {
                seed: None,
                ..cell.clone()
            };
            self.cell_status_rows(&dataset, Status::MissingData, &note)
        } else {
            self.cell_status_rows(cell, Status::Failed, &note)
        }
    }

    /// Rows with `status` and `note` for a cell, the form of every row without a value: the
    /// rows of [`Context::rows_with_status`] (whatever the spec says of the dataset's
    /// availability: the cell ran) for the cell's dataset and method (every method of the run
    /// for a cell of all methods) and, when the cell has one, its setting; with the cell's seed.
    pub fn cell_status_rows(&self, cell: &Cell, status: Status, note: &str) -> Vec<Row> {
        let setting = (!cell.setting.is_empty()).then_some(cell.setting.as_str());
        let of_cell = |d: &str, m: &str| d == cell.dataset && cell.method.as_deref().is_none_or(|x| x == m);
        self.status_rows(of_cell, setting, status, note, false)
            .into_iter()
            .map(|r| match cell.seed {
                Some(seed) => r.seed(seed),
                None => r,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell as Counter;
    use std::path::PathBuf;

    use indicatif::ProgressBar;

    use crate::cache::Cache;
    use crate::spec::{test_spec, Spec};

    /// The tests' spec after the fixture's header.
    const BODY: &str = r#"
seeds = [0, 1]
datasets = [{ id = "a", label = "A" }, { id = "b", label = "B" }]
methods = [{ id = "m", label = "M" }, { id = "n", label = "N" }]
metrics = [{ id = "f1", label = "F1" }, { id = "l1", label = "L1" }]
paper = [{ dataset = "a", method = "m", metric = "f1", value = 0.5 }]
"#;

    fn spec() -> Spec {
        test_spec(BODY).unwrap()
    }

    /// Runs `f` with a context over `spec` and `cache`.
    fn with_context<T>(spec: &Spec, cache: &Cache, f: impl FnOnce(&Context<'_>) -> T) -> T {
        let bar = ProgressBar::hidden();
        let cx = Context {
            spec,
            quick: false,
            threads: 1,
            cache,
            shared: &crate::cache::SharedEmbeddings::off(),
            progress: &bar,
        };
        f(&cx)
    }

    fn ids(cells: &[Cell]) -> Vec<String> {
        cells.iter().map(Cell::to_string).collect()
    }

    #[test]
    fn the_grid_runs_dataset_by_dataset() {
        let spec = spec();
        let cache = Cache::off();
        with_context(&spec, &cache, |cx| {
            assert_eq!(
                ids(&cx.grid().cells()),
                [
                    "a m seed 0",
                    "a m seed 1",
                    "a n seed 0",
                    "a n seed 1",
                    "b m seed 0",
                    "b m seed 1",
                    "b n seed 0",
                    "b n seed 1"
                ]
            );
            let g = cx.grid().all_methods().settings(["x=1", "x=2"]).unseeded();
            assert_eq!(ids(&g.cells()), ["a x=1", "a x=2", "b x=1", "b x=2"]);
            assert_eq!(ids(&cx.grid().methods(["m"]).unseeded().cells()), ["a m", "b m"]);
        });
    }

    /// One pass of the driver: a finished cell is stored and read back, undeclared metrics and
    /// methods outside the run are dropped, an error becomes that cell's rows (`missing-data` for
    /// an absent file, `failed` otherwise) while the other cells run, and a failed cell is
    /// computed again on the next run.
    /// A missing file gives the dataset's `missing-data` rows once, without a seed, with the
    /// loader's message (not the spec's `unavailable` reason: the cell ran).
    #[test]
    fn missing_data_is_reported_once_per_dataset() {
        let src = BODY.replace(
            r#"label = "B" }"#,
            r#"label = "B", unavailable = "the spec's reason" }"#,
        );
        let spec = test_spec(&src).unwrap();
        let rows = with_context(&spec, &Cache::off(), |cx| {
            cx.run_cells(
                &cx.grid().methods(["m"]).cells(),
                |c| c.clone(),
                |c, _| match c.dataset.as_str() {
                    "a" => Ok(vec![Row::ok("a", "m", "f1", 0.5).seed(c.seed())]),
                    _ => Err(DatasetError::MissingFile {
                        path: PathBuf::from("b.csv"),
                        origin: "nowhere".into(),
                    }
                    .into()),
                },
            )
            .unwrap()
        });
        let b: Vec<&Row> = rows.iter().filter(|r| r.dataset == "b").collect();
        assert_eq!(rows.len(), 3, "{rows:?}");
        assert_eq!((b.len(), b[0].status, b[0].seed), (1, Status::MissingData, None));
        assert_eq!(b[0].note.as_deref(), Some("missing file b.csv: nowhere"));
    }

    #[test]
    fn cells_are_cached_filtered_and_failed_one_by_one() {
        let spec = spec();
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::new(dir.path().to_path_buf(), &spec.source, "datasets", 1, true);
        let cells: Vec<Cell> = with_context(&spec, &cache, |cx| cx.grid().unseeded().cells());
        let calls = Counter::new(0);
        let run = || {
            with_context(&spec, &cache, |cx| {
                cx.run_cells(
                    &cells,
                    |c| c.clone(),
                    |c, progress| {
                        calls.set(calls.get() + 1);
                        progress(&Progress::new("step", 1, Some(2)));
                        match (c.dataset.as_str(), c.method()) {
                            ("a", "m") => Ok(vec![
                                Row::ok("a", "m", "f1", 0.75),
                                Row::ok("a", "m", "diagnostic", 1.0),
                                Row::ok("a", "other", "f1", 1.0),
                            ]),
                            ("a", _) => Err(anyhow!("solver diverged")),
                            _ => Err(DatasetError::MissingFile {
                                path: PathBuf::from("b.csv"),
                                origin: "nowhere".into(),
                            }
                            .into()),
                        }
                    },
                )
                .unwrap()
            })
        };
        let rows = run();
        let got: Vec<(&str, &str, &str, Status)> = rows
            .iter()
            .map(|r| (r.dataset.as_str(), r.method.as_str(), r.metric.as_str(), r.status))
            .collect();
        assert_eq!(
            got,
            [
                ("a", "m", "f1", Status::Ok),
                // No paper value for (a, n): the metrics the paper reports for `n` elsewhere,
                // none, so every metric.
                ("a", "n", "f1", Status::Failed),
                ("a", "n", "l1", Status::Failed),
                // (b, m): the metric the paper reports for `m`.
                ("b", "m", "f1", Status::MissingData),
                ("b", "n", "f1", Status::MissingData),
                ("b", "n", "l1", Status::MissingData),
            ]
        );
        assert_eq!(rows[1].note.as_deref(), Some("solver diverged"));
        assert_eq!(calls.get(), 4);
        // The finished cell is read back, the three failed ones computed again.
        assert_eq!(run(), rows);
        assert_eq!(calls.get(), 7);
    }

    #[test]
    fn per_dataset_values_are_loaded_once_per_dataset() {
        let loads = Counter::new(0);
        let mut held = PerDataset::new();
        let mut get = |d: &str| {
            *held
                .get(d, || {
                    loads.set(loads.get() + 1);
                    Ok(d.len())
                })
                .unwrap()
        };
        assert_eq!(
            [get("ab"), get("ab"), get("abc"), get("abc"), get("ab")],
            [2, 2, 3, 3, 2]
        );
        assert_eq!(loads.get(), 3);
        assert!(held.get("x", || Err(anyhow!("absent"))).is_err());
        assert_eq!(*held.get("x", || Ok(7)).unwrap(), 7, "a failed load is not kept");
    }
}
