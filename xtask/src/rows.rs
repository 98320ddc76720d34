//! Result rows, the tidy table, and its summary against the paper.
//!
//! Schema of `results/<spec>.csv` / `.parquet` (one row per dataset x method x metric x setting x seed;
//! paper values without any result of ours appear once with status `not-run`):
//!
//! | column | type | meaning |
//! |---|---|---|
//! | `dataset`, `method`, `metric` | str | ids declared in the spec |
//! | `setting` | str | e.g. `eps=0.1` or `m=1000`; empty when the table has a single setting |
//! | `seed` | u64? | seed of the cell (absent for rows that are not seeded) |
//! | `value` | f64? | our number (absent unless `status = ok`) |
//! | `std` | f64? | spread over `trials` repetitions inside the cell: the sample standard deviation (`n − 1`, `ksvd_metrics::mean_std`), in every row type and in the summary |
//! | `trials` | u32? | repetitions inside the cell |
//! | `seconds` | f64? | wall time of the cell |
//! | `threads` | u32? | threads the cell used (timing experiments) |
//! | `status` | str | `ok`, `unmet`, `missing-data`, `not-implemented`, `failed`, `not-run` (see [`Status`]) |
//! | `note` | str? | free text; for a mismatch, the likely cause |
//! | `paper` | f64? | the paper's value for (dataset, method, metric, setting) |
//! | `diff` | f64? | `value - paper` |
//! | `quick` | bool | produced by `--quick` |
use std::collections::BTreeMap;
use std::fmt;

use anyhow::{Context as _, Result};
use polars::prelude::*;
use serde::{Deserialize, Serialize};

use crate::spec::Spec;

/// Whether a row carries a number of ours, and if not why not: one vocabulary for every spec.
///
/// The order (best first) decides a summary's status over seeds: `ok` if any seed has a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// `value` holds our result.
    Ok,
    /// A measurement whose target was not reached: the computation ran, and its outcome is that
    /// the target (a tolerance, a rank, an error ratio) was not met within the grid or budget.
    /// The note says which target and what was reached. A result, not a fault.
    Unmet,
    /// The input data is not available (the note says which file).
    MissingData,
    /// The method or experiment is not implemented yet.
    NotImplemented,
    /// The computation stopped with an error (the note holds it): a fault, never a measurement.
    Failed,
    /// A paper value for which this run produced no row (e.g. outside the `--quick` subset).
    NotRun,
}

impl Status {
    /// Every status, in order.
    pub const ALL: [Status; 6] = [
        Status::Ok,
        Status::Unmet,
        Status::MissingData,
        Status::NotImplemented,
        Status::Failed,
        Status::NotRun,
    ];

    /// The kebab-case name used in files.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Unmet => "unmet",
            Status::MissingData => "missing-data",
            Status::NotImplemented => "not-implemented",
            Status::Failed => "failed",
            Status::NotRun => "not-run",
        }
    }

    /// Inverse of [`Status::as_str`].
    pub fn parse(s: &str) -> Option<Status> {
        Status::ALL.into_iter().find(|st| st.as_str() == s)
    }

    /// Whether a cell whose rows all have this status is finished: a result (`ok`, `unmet`) or a
    /// deliberate, configuration-determined skip (`not-run`), which the cell cache may keep.
    pub fn is_final(self) -> bool {
        matches!(self, Status::Ok | Status::Unmet | Status::NotRun)
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One result: what an experiment returns, what the cache stores, one line of the tidy table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// Dataset id.
    pub dataset: String,
    /// Method id.
    pub method: String,
    /// Metric id.
    pub metric: String,
    /// Setting, e.g. `eps=0.1`; empty for single-setting tables.
    #[serde(default)]
    pub setting: String,
    /// Seed of the cell.
    #[serde(default)]
    pub seed: Option<u64>,
    /// Our value (only with `Status::Ok`).
    #[serde(default)]
    pub value: Option<f64>,
    /// Sample standard deviation (`n − 1`) over the repetitions inside the cell.
    #[serde(default)]
    pub std: Option<f64>,
    /// Repetitions inside the cell.
    #[serde(default)]
    pub trials: Option<u32>,
    /// Wall time of the cell.
    #[serde(default)]
    pub seconds: Option<f64>,
    /// Threads used.
    #[serde(default)]
    pub threads: Option<u32>,
    /// Status.
    pub status: Status,
    /// Free text; for a mismatch, the likely cause.
    #[serde(default)]
    pub note: Option<String>,
}

impl Row {
    /// A result of ours.
    pub fn ok(dataset: &str, method: &str, metric: &str, value: f64) -> Row {
        Row {
            value: Some(value),
            ..Row::status(dataset, method, metric, Status::Ok, None)
        }
    }

    /// A row without a value (`unmet`, `missing-data`, `not-implemented`, `failed`) and why.
    pub fn status(dataset: &str, method: &str, metric: &str, status: Status, note: Option<String>) -> Row {
        Row {
            dataset: dataset.to_string(),
            method: method.to_string(),
            metric: metric.to_string(),
            setting: String::new(),
            seed: None,
            value: None,
            std: None,
            trials: None,
            seconds: None,
            threads: None,
            status,
            note,
        }
    }

    /// Sets the setting.
    pub fn setting(mut self, setting: impl Into<String>) -> Row {
        self.setting = setting.into();
        self
    }
    /// Sets the seed.
    pub fn seed(mut self, seed: u64) -> Row {
        self.seed = Some(seed);
        self
    }
    /// Sets the spread and number of repetitions.
    pub fn trials(mut self, trials: u32, std: Option<f64>) -> Row {
        self.trials = Some(trials);
        self.std = std;
        self
    }
    /// Sets the wall time.
    pub fn seconds(mut self, seconds: f64) -> Row {
        self.seconds = Some(seconds);
        self
    }
    /// Sets the thread count.
    pub fn threads(mut self, threads: u32) -> Row {
        self.threads = Some(threads);
        self
    }
    /// Sets the note (likely cause of a mismatch, provenance, ...).
    pub fn note(mut self, note: impl Into<String>) -> Row {
        self.note = Some(note.into());
        self
    }

    fn key(&self) -> (String, String, String, String) {
        (
            self.dataset.clone(),
            self.method.clone(),
            self.metric.clone(),
            self.setting.clone(),
        )
    }
}

/// A row of the tidy table: a [`Row`] with the paper's value joined.
#[derive(Debug, Clone, PartialEq)]
pub struct TidyRow {
    /// The result.
    pub row: Row,
    /// The paper's value for its key.
    pub paper: Option<f64>,
    /// Whether the row was produced by `--quick`.
    pub quick: bool,
}

impl TidyRow {
    /// `value - paper`.
    pub fn diff(&self) -> Option<f64> {
        Some(self.row.value? - self.paper?)
    }
}

/// Joins the paper's values to the rows (and adds `not-run` rows for paper values without results).
pub fn tidy(spec: &Spec, rows: Vec<Row>) -> Vec<TidyRow> {
    let paper = spec.paper_index();
    let mut seen = std::collections::BTreeSet::new();
    let mut out: Vec<TidyRow> = rows
        .into_iter()
        .map(|mut row| {
            // Paths in committed results are relative to the data root (error messages of the
            // loaders name absolute paths).
            row.note = row.note.map(|n| crate::fsx::data_relative(&n));
            let key = row.key();
            let p = paper.get(&key).map(|p| p.value);
            seen.insert(key);
            TidyRow {
                row,
                paper: p,
                quick: spec.quick,
            }
        })
        .collect();
    for (key, p) in &paper {
        if !seen.contains(key) {
            let note = if spec.quick {
                "outside the --quick subset"
            } else {
                "no result produced"
            };
            let row = Row::status(&key.0, &key.1, &key.2, Status::NotRun, Some(note.into())).setting(key.3.clone());
            out.push(TidyRow {
                row,
                paper: Some(p.value),
                quick: spec.quick,
            });
        }
    }
    out
}

/// How an aggregated result compares with the paper.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Verdict {
    /// Within tolerance.
    Match,
    /// Outside tolerance.
    Differs,
    /// We have a number, the paper has none.
    NoPaperValue,
    /// No number of ours (the status says why).
    NoResult(Status),
}

impl Verdict {
    /// Short label for reports.
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Match => "match",
            Verdict::Differs => "differs",
            Verdict::NoPaperValue => "no paper value",
            Verdict::NoResult(s) => s.as_str(),
        }
    }
}

/// One (dataset, method, metric, setting): the mean over seeds, compared with the paper.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// Dataset id.
    pub dataset: String,
    /// Method id.
    pub method: String,
    /// Metric id.
    pub metric: String,
    /// Setting.
    pub setting: String,
    /// Mean over seeds of our values.
    pub value: Option<f64>,
    /// Spread: the sample standard deviation (`n − 1`) over seeds when there are several, else the
    /// cell's own `std`.
    pub std: Option<f64>,
    /// Number of seeds with a value.
    pub seeds: usize,
    /// Mean wall time.
    pub seconds: Option<f64>,
    /// Threads (of the first row that reports it).
    pub threads: Option<u32>,
    /// Best status over the group (`ok` if any seed succeeded).
    pub status: Status,
    /// Distinct notes of the group, joined.
    pub note: Option<String>,
    /// The paper's value.
    pub paper: Option<f64>,
    /// `value - paper`.
    pub diff: Option<f64>,
    /// Comparison with the paper under the spec's tolerance.
    pub verdict: Verdict,
    /// Produced by `--quick`.
    pub quick: bool,
}

/// Aggregates tidy rows over seeds and compares them with the paper.
pub fn summarize(spec: &Spec, rows: &[TidyRow]) -> Vec<Summary> {
    let mut groups: BTreeMap<(String, String, String, String), Vec<&TidyRow>> = BTreeMap::new();
    for r in rows {
        groups.entry(r.row.key()).or_default().push(r);
    }
    let mut out: Vec<Summary> = groups
        .into_iter()
        .map(|((dataset, method, metric, setting), g)| {
            let values: Vec<f64> = g
                .iter()
                .filter(|r| r.row.status == Status::Ok)
                .filter_map(|r| r.row.value)
                .collect();
            let n = values.len();
            let value = (n > 0).then(|| values.iter().sum::<f64>() / n as f64);
            let std = match (n, value) {
                (0, _) | (_, None) => None,
                (1, _) => g.iter().find_map(|r| r.row.std),
                (_, Some(_)) => ksvd_metrics::mean_std(&values).map(|(_, std)| std),
            };
            let secs: Vec<f64> = g.iter().filter_map(|r| r.row.seconds).collect();
            let seconds = (!secs.is_empty()).then(|| secs.iter().sum::<f64>() / secs.len() as f64);
            let status = g.iter().map(|r| r.row.status).min().unwrap_or(Status::NotRun);
            let mut notes: Vec<&str> = g.iter().filter_map(|r| r.row.note.as_deref()).collect();
            notes.dedup();
            notes.sort_unstable();
            notes.dedup();
            let note = (!notes.is_empty()).then(|| notes.join("; "));
            let paper = g.iter().find_map(|r| r.paper);
            let diff = value.zip(paper).map(|(v, p)| v - p);
            let verdict = match (value, paper) {
                (None, _) => Verdict::NoResult(status),
                (Some(_), None) => Verdict::NoPaperValue,
                (Some(v), Some(p)) => {
                    let (tol, relative) = spec.tolerance(&metric);
                    let bound = if relative { tol * p.abs() } else { tol };
                    // A hair of slack so that a value printed at the tolerance's precision still matches.
                    if (v - p).abs() <= bound * (1.0 + 1e-9) + f64::EPSILON * p.abs() {
                        Verdict::Match
                    } else {
                        Verdict::Differs
                    }
                }
            };
            Summary {
                threads: g.iter().find_map(|r| r.row.threads),
                quick: g.iter().any(|r| r.quick),
                dataset,
                method,
                metric,
                setting,
                value,
                std,
                seeds: n,
                seconds,
                status,
                note,
                paper,
                diff,
                verdict,
            }
        })
        .collect();
    out.sort_by_key(|s| {
        (
            spec.order(crate::spec::Key::Dataset, &s.dataset),
            spec.order(crate::spec::Key::Metric, &s.metric),
            spec.order(crate::spec::Key::Method, &s.method),
            spec.order(crate::spec::Key::Setting, &s.setting),
            crate::spec::setting_sort_key(&s.setting),
        )
    });
    out
}

/// The tidy table as a polars DataFrame (schema in the module docs).
pub fn to_frame(rows: &[TidyRow]) -> Result<DataFrame> {
    let s = |f: &dyn Fn(&TidyRow) -> String| rows.iter().map(f).collect::<Vec<String>>();
    let columns = vec![
        Column::new("dataset".into(), s(&|r| r.row.dataset.clone())),
        Column::new("method".into(), s(&|r| r.row.method.clone())),
        Column::new("metric".into(), s(&|r| r.row.metric.clone())),
        Column::new("setting".into(), s(&|r| r.row.setting.clone())),
        Column::new("seed".into(), rows.iter().map(|r| r.row.seed).collect::<Vec<_>>()),
        Column::new("value".into(), rows.iter().map(|r| r.row.value).collect::<Vec<_>>()),
        Column::new("std".into(), rows.iter().map(|r| r.row.std).collect::<Vec<_>>()),
        Column::new("trials".into(), rows.iter().map(|r| r.row.trials).collect::<Vec<_>>()),
        Column::new("seconds".into(), rows.iter().map(|r| r.row.seconds).collect::<Vec<_>>()),
        Column::new("threads".into(), rows.iter().map(|r| r.row.threads).collect::<Vec<_>>()),
        Column::new("status".into(), s(&|r| r.row.status.as_str().to_string())),
        Column::new(
            "note".into(),
            rows.iter().map(|r| r.row.note.clone()).collect::<Vec<_>>(),
        ),
        Column::new("paper".into(), rows.iter().map(|r| r.paper).collect::<Vec<_>>()),
        Column::new("diff".into(), rows.iter().map(TidyRow::diff).collect::<Vec<_>>()),
        Column::new("quick".into(), rows.iter().map(|r| r.quick).collect::<Vec<_>>()),
    ];
    Ok(DataFrame::new(rows.len(), columns)?)
}

/// Reads a tidy table back (inverse of [`to_frame`]).
pub fn from_frame(df: &DataFrame) -> Result<Vec<TidyRow>> {
    let str_col = |name: &str| -> Result<Vec<Option<String>>> {
        Ok(df.column(name)?.str()?.iter().map(|v| v.map(str::to_string)).collect())
    };
    let f64_col = |name: &str| -> Result<Vec<Option<f64>>> { Ok(df.column(name)?.f64()?.iter().collect()) };
    let u64_col = |name: &str| -> Result<Vec<Option<u64>>> {
        let c = df.column(name)?.cast(&DataType::UInt64)?;
        Ok(c.u64()?.iter().collect())
    };
    let (dataset, method, metric, setting) = (
        str_col("dataset")?,
        str_col("method")?,
        str_col("metric")?,
        str_col("setting")?,
    );
    let (status, note) = (str_col("status")?, str_col("note")?);
    let (value, std, seconds, paper) = (
        f64_col("value")?,
        f64_col("std")?,
        f64_col("seconds")?,
        f64_col("paper")?,
    );
    let (seed, trials, threads) = (u64_col("seed")?, u64_col("trials")?, u64_col("threads")?);
    let quick: Vec<Option<bool>> = df.column("quick")?.bool()?.iter().collect();
    (0..df.height())
        .map(|i| {
            let st = status[i].as_deref().unwrap_or_default();
            let status = Status::parse(st).with_context(|| format!("row {i}: unknown status `{st}`"))?;
            let row = Row {
                dataset: dataset[i].clone().unwrap_or_default(),
                method: method[i].clone().unwrap_or_default(),
                metric: metric[i].clone().unwrap_or_default(),
                setting: setting[i].clone().unwrap_or_default(),
                seed: seed[i],
                value: value[i],
                std: std[i],
                trials: trials[i].map(|t| t as u32),
                seconds: seconds[i],
                threads: threads[i].map(|t| t as u32),
                status,
                note: note[i].clone(),
            };
            Ok(TidyRow {
                row,
                paper: paper[i],
                quick: quick[i].unwrap_or(false),
            })
        })
        .collect()
}

/// The summary as a DataFrame (written to `results/<spec>.summary.csv`).
pub fn summary_frame(rows: &[Summary]) -> Result<DataFrame> {
    let s = |f: &dyn Fn(&Summary) -> String| rows.iter().map(f).collect::<Vec<String>>();
    let columns = vec![
        Column::new("dataset".into(), s(&|r| r.dataset.clone())),
        Column::new("method".into(), s(&|r| r.method.clone())),
        Column::new("metric".into(), s(&|r| r.metric.clone())),
        Column::new("setting".into(), s(&|r| r.setting.clone())),
        Column::new("value".into(), rows.iter().map(|r| r.value).collect::<Vec<_>>()),
        Column::new("std".into(), rows.iter().map(|r| r.std).collect::<Vec<_>>()),
        Column::new("seeds".into(), rows.iter().map(|r| r.seeds as u64).collect::<Vec<_>>()),
        Column::new("seconds".into(), rows.iter().map(|r| r.seconds).collect::<Vec<_>>()),
        Column::new("threads".into(), rows.iter().map(|r| r.threads).collect::<Vec<_>>()),
        Column::new("status".into(), s(&|r| r.status.as_str().to_string())),
        Column::new("paper".into(), rows.iter().map(|r| r.paper).collect::<Vec<_>>()),
        Column::new("diff".into(), rows.iter().map(|r| r.diff).collect::<Vec<_>>()),
        Column::new("verdict".into(), s(&|r| r.verdict.label().to_string())),
        Column::new("note".into(), rows.iter().map(|r| r.note.clone()).collect::<Vec<_>>()),
    ];
    Ok(DataFrame::new(rows.len(), columns)?)
}

/// CSV bytes of a frame.
pub fn csv_bytes(df: &mut DataFrame) -> Result<Vec<u8>> {
    let mut buf = Vec::new();
    CsvWriter::new(&mut buf).include_header(true).finish(df)?;
    Ok(buf)
}

/// Parquet bytes of a frame.
pub fn parquet_bytes(df: &mut DataFrame) -> Result<Vec<u8>> {
    let mut buf = Vec::new();
    ParquetWriter::new(&mut buf).finish(df)?;
    Ok(buf)
}

/// Reads a Parquet file written by [`parquet_bytes`].
pub fn read_parquet(path: &std::path::Path) -> Result<DataFrame> {
    let file = std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
    ParquetReader::new(file)
        .finish()
        .map_err(anyhow::Error::from)
        .with_context(|| format!("reading {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> Spec {
        let src = r#"
tolerance = 0.01
datasets = [{ id = "a", label = "A" }, { id = "b", label = "B" }]
methods = [{ id = "m", label = "M" }]
metrics = [{ id = "f1", label = "F1" }, { id = "t", label = "Time", relative = true, tolerance = 0.5 }]
paper = [
  { dataset = "a", method = "m", metric = "f1", value = 0.80 },
  { dataset = "b", method = "m", metric = "f1", value = 0.50 },
  { dataset = "a", method = "m", metric = "t", value = 2.0 },
]
"#;
        crate::spec::test_spec(src).unwrap()
    }

    #[test]
    fn summary_means_seeds_and_judges_with_tolerance() {
        let spec = spec();
        let rows = vec![
            Row::ok("a", "m", "f1", 0.80).seed(0),
            Row::ok("a", "m", "f1", 0.81).seed(1),
            Row::ok("a", "m", "t", 2.9),
            Row::status("c", "m", "f1", Status::MissingData, Some("no file".into())),
        ];
        let tidy_rows = tidy(&spec, rows);
        assert_eq!(tidy_rows.len(), 5, "b/m/f1 is added as not-run");
        let s = summarize(&spec, &tidy_rows);
        let get = |d: &str, met: &str| s.iter().find(|x| x.dataset == d && x.metric == met).unwrap();
        let a = get("a", "f1");
        assert!((a.value.unwrap() - 0.805).abs() < 1e-12 && a.seeds == 2);
        assert_eq!(a.verdict, Verdict::Match);
        assert_eq!(get("a", "t").verdict, Verdict::Match, "relative tolerance 50% of 2.0");
        assert_eq!(get("b", "f1").verdict, Verdict::NoResult(Status::NotRun));
        assert_eq!(get("c", "f1").verdict, Verdict::NoResult(Status::MissingData));
    }

    #[test]
    fn frame_round_trips_through_parquet() {
        let spec = spec();
        let rows = tidy(
            &spec,
            vec![
                Row::ok("a", "m", "f1", 0.7).seed(3).trials(10, Some(0.01)).threads(2),
                Row::status("b", "m", "t", Status::Unmet, Some("eta <= 0.01 not reached".into())).seed(3),
            ],
        );
        let mut df = to_frame(&rows).unwrap();
        let bytes = parquet_bytes(&mut df).unwrap();
        let back = ParquetReader::new(std::io::Cursor::new(bytes)).finish().unwrap();
        assert_eq!(from_frame(&back).unwrap(), rows);
        // And through CSV, every status by its name.
        for st in Status::ALL {
            assert_eq!(Status::parse(st.as_str()), Some(st));
        }
        let csv = String::from_utf8(csv_bytes(&mut df).unwrap()).unwrap();
        assert!(csv.contains(",unmet,"), "{csv}");
    }
}
