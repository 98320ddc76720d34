//! Experiment specs: one TOML file per paper table or figure in `experiments/`.
//!
//! A spec is parsed in two steps. The framework reads the common part ([`SpecFile`]: names, the datasets,
//! methods and metrics it declares, layouts, seeds, the paper's reported values) with unknown keys rejected;
//! the experiment named by `kind` then reads its own `[params]` table into its typed parameter struct (also
//! rejecting unknown keys). `--quick` merges the `[quick]` section over the spec before both steps, so the
//! quick variant is validated exactly like the full one.
//!
//! Paper values live only here, in `paper = [...]` rows `{ dataset, method, metric, value }` (plus an optional
//! `setting`), and are joined to our results by those keys.
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

use anyhow::{bail, ensure, Context as _, Result};
use serde::{Deserialize, Serialize};

/// The file as written: every key the framework knows. Unknown keys are errors.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpecFile {
    /// Must equal the file stem; used for `--only` and output file names.
    pub name: String,
    /// One line, shown by `cargo xtask list`.
    pub description: String,
    /// Which [`crate::experiments`] implementation runs this spec.
    pub kind: String,
    /// Where in the paper: "Table 1 (tab:node:classify:reconstruct)".
    pub paper_ref: String,
    /// Default absolute tolerance for "matches the paper" (a metric may override it).
    #[serde(default = "default_tolerance")]
    pub tolerance: f64,
    /// Datasets, in the paper's order.
    pub datasets: Vec<Item>,
    /// Methods, in the paper's order.
    pub methods: Vec<Item>,
    /// Metrics, in the paper's order.
    pub metrics: Vec<Metric>,
    /// Declared settings (e.g. `"eps=0.1"`), in display order. Paper rows may only use these.
    #[serde(default)]
    pub settings: Vec<String>,
    /// Seeds; one cell per seed.
    #[serde(default = "default_seeds")]
    pub seeds: Vec<u64>,
    /// Repetitions inside one cell (e.g. the paper's "averaged over 10 trials").
    #[serde(default = "default_trials")]
    pub trials: u32,
    /// What the paper states about its protocol and which choices it leaves open.
    #[serde(default)]
    pub protocol: Protocol,
    /// Markdown tables to render, laid out like the paper's.
    #[serde(default)]
    pub tables: Vec<TableLayout>,
    /// Figures to draw (SVG and PNG).
    #[serde(default)]
    pub figures: Vec<FigureLayout>,
    /// Qualitative claims of the paper (for figures, whose numbers are not in the .tex).
    #[serde(default)]
    pub claims: Vec<String>,
    /// What changed in this spec's results since earlier versions and why (shown on its page
    /// and in REPORT.md), so that moved numbers are explained where they are read.
    #[serde(default)]
    pub changes: Vec<String>,
    /// Checks made outside the reproduction (cross-checks of baselines against independent
    /// implementations, measurements of what could explain a gap to the paper), each under a
    /// title with the script that measures it (shown on its page and in REPORT.md).
    #[serde(default)]
    pub findings: Vec<Finding>,
    /// Ranking claims checked against our numbers and the paper's ("does KSVD beat SVD?").
    #[serde(default)]
    pub comparisons: Vec<Comparison>,
    /// Kind-specific parameters, parsed by the experiment into its own struct.
    #[serde(default)]
    pub params: toml::Table,
    /// Overrides applied by `--quick`.
    #[serde(default)]
    pub quick: Option<Quick>,
    /// The paper's reported values.
    #[serde(default)]
    pub paper: Vec<PaperValue>,
}

fn default_tolerance() -> f64 {
    0.01
}
fn default_seeds() -> Vec<u64> {
    vec![0]
}
fn default_trials() -> u32 {
    1
}

/// A dataset or method: a stable id (used in result rows) and the paper's label.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Item {
    /// Identifier used in result rows and paper rows (`cora`, `ksvd_sne`).
    pub id: String,
    /// Label as printed in the paper (`Cora`, `KSVD (SNE)`).
    pub label: String,
    /// Free text shown under the table (provenance, substitutions, ...).
    #[serde(default)]
    pub note: Option<String>,
    /// Set when the data is known to be unavailable here (the reason): every row of this dataset is then
    /// `missing-data` (see [`crate::experiments::Context::rows_with_status`]).
    #[serde(default)]
    pub unavailable: Option<String>,
}

/// Direction in which a metric improves.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum Better {
    /// Larger is better (F1, NMI, AUROC).
    Higher,
    /// Smaller is better (errors, norms, seconds).
    Lower,
    /// Not a score (counts, sizes).
    #[default]
    None,
}

/// A metric with its display and comparison rules.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Metric {
    /// Identifier used in result rows (`micro_f1`).
    pub id: String,
    /// Label as printed in the paper (`Micro`).
    pub label: String,
    /// Direction of improvement.
    #[serde(default)]
    pub better: Better,
    /// Tolerance for "matches the paper"; the spec's `tolerance` when absent.
    #[serde(default)]
    pub tolerance: Option<f64>,
    /// When true the tolerance is relative: |ours - paper| <= tolerance * |paper|.
    #[serde(default)]
    pub relative: bool,
    /// Decimals shown in Markdown tables.
    #[serde(default = "default_decimals")]
    pub decimals: usize,
    /// A measurement of the machine (wall time, memory, speed-up) rather than a value the code
    /// fixes: `cargo xtask check-values` does not compare it ([`crate::values`]).
    #[serde(default)]
    pub measured: bool,
}

fn default_decimals() -> usize {
    3
}

/// What the paper states (facts) and what it leaves open (our explicit choices, found in `[params]`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Protocol {
    /// Facts stated by the paper, with the section they come from.
    #[serde(default)]
    pub stated: Vec<String>,
    /// Choices the paper leaves open, and which `[params]` key records ours.
    #[serde(default)]
    pub open: Vec<String>,
}

/// A key of a result row, used to lay out tables and figures.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Key {
    /// The dataset id.
    Dataset,
    /// The method id.
    Method,
    /// The metric id.
    Metric,
    /// The setting string.
    Setting,
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Key::Dataset => "Dataset",
            Key::Method => "Method",
            Key::Metric => "Metric",
            Key::Setting => "Setting",
        })
    }
}

/// One Markdown table: which keys index its rows and its columns, and which rows it shows.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TableLayout {
    /// Caption (the paper's caption, shortened).
    pub title: String,
    /// Keys that index the table's rows, outermost first.
    pub rows: Vec<Key>,
    /// Keys that index the table's columns, outermost first.
    pub columns: Vec<Key>,
    /// Restrict to these datasets (all when absent).
    #[serde(default)]
    pub datasets: Option<Vec<String>>,
    /// Restrict to these methods (all when absent).
    #[serde(default)]
    pub methods: Option<Vec<String>>,
    /// Restrict to these metrics (all when absent).
    #[serde(default)]
    pub metrics: Option<Vec<String>>,
    /// Restrict to these settings (all when absent; `""` is the empty setting).
    #[serde(default)]
    pub settings: Option<Vec<String>>,
}

/// One figure: a panel per (dataset, metric), a line per method, x read from the setting (or, with
/// `x_metric`, from another metric of the same dataset, method and setting).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FigureLayout {
    /// File stem: the figure is written to `<spec>-<file>.svg` and `.png`.
    pub file: String,
    /// Caption.
    pub title: String,
    /// Name of the setting that gives the x coordinate (`m` for `setting = "m=1000"`); with
    /// `x_metric`, the setting that orders the points along each line.
    pub x: String,
    /// Metric whose value (same dataset, method and setting) gives the x coordinate instead of the
    /// setting, e.g. `"seconds"` for an error-against-time figure. Points stay those of the `x=`
    /// settings, joined in the order of that setting.
    #[serde(default)]
    pub x_metric: Option<String>,
    /// Label of the x axis.
    pub x_label: String,
    /// Metrics to plot (one panel row each).
    pub metrics: Vec<String>,
    /// Restrict to these datasets (all when absent); one panel column each.
    #[serde(default)]
    pub datasets: Option<Vec<String>>,
    /// Restrict to these methods (all when absent); one line each.
    #[serde(default)]
    pub methods: Option<Vec<String>>,
    /// Logarithmic x axis (base 10; non-positive x values are dropped).
    #[serde(default)]
    pub log_x: bool,
    /// Logarithmic y axis (base 10; non-positive y values are dropped).
    #[serde(default)]
    pub log_y: bool,
}

/// `[quick]`: the reduced variant run by `--quick` (CI).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Quick {
    /// Replaces `seeds`.
    #[serde(default)]
    pub seeds: Option<Vec<u64>>,
    /// Replaces `trials`.
    #[serde(default)]
    pub trials: Option<u32>,
    /// Runs only these datasets (ids declared in `datasets`).
    #[serde(default)]
    pub datasets: Option<Vec<String>>,
    /// Runs only these methods (ids declared in `methods`).
    #[serde(default)]
    pub methods: Option<Vec<String>>,
    /// Merged key by key (recursively) over `[params]`.
    #[serde(default)]
    pub params: toml::Table,
    /// Why the quick variant is representative.
    #[serde(default)]
    pub note: Option<String>,
}

/// One value reported by the paper.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PaperValue {
    /// Dataset id (declared in `datasets`).
    pub dataset: String,
    /// Method id (declared in `methods`).
    pub method: String,
    /// Metric id (declared in `metrics`).
    pub metric: String,
    /// Setting (declared in `settings`); empty when the table has one setting.
    #[serde(default)]
    pub setting: String,
    /// The number as printed.
    pub value: f64,
    /// True for values present in the .tex but in a column hidden (`H`) in the published table.
    #[serde(default)]
    pub hidden: bool,
    /// Provenance remarks.
    #[serde(default)]
    pub note: Option<String>,
}

/// A titled list of measured findings ([`SpecFile::findings`]).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Finding {
    /// Heading, e.g. "Baselines".
    pub title: String,
    /// The script (relative to the repository root) that measures these findings.
    pub script: Option<String>,
    /// One Markdown bullet each.
    pub lines: Vec<String>,
}

/// A ranking claim: does `method` beat every method of `than` on `metrics` (in each metric's
/// direction of improvement), per dataset, in the paper and in our rows of `setting`?
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Comparison {
    /// The method the paper presents as better.
    pub method: String,
    /// The methods it is compared with.
    pub than: Vec<String>,
    /// Metrics compared (each must have a direction, `better = "higher"` or `"lower"`).
    pub metrics: Vec<String>,
    /// Setting of our rows (empty: the main one).
    #[serde(default)]
    pub setting: String,
    /// Restrict to these datasets (all when absent).
    #[serde(default)]
    pub datasets: Option<Vec<String>>,
}

/// A spec ready to run: the file's content with `--quick` applied and everything cross-checked.
#[derive(Debug, Clone)]
pub struct Spec {
    /// The file it came from.
    pub path: PathBuf,
    /// The file's bytes (part of every cache key).
    pub source: String,
    /// The parsed file, with the quick overrides applied when `quick` is set.
    pub file: SpecFile,
    /// Whether the quick overrides were applied.
    pub quick: bool,
    /// Datasets to run (all declared ones, or the quick subset).
    pub run_datasets: Vec<String>,
    /// Methods to run (all declared ones, or the quick subset).
    pub run_methods: Vec<String>,
}

impl Spec {
    /// Reads and validates `path`; `quick` applies the `[quick]` section.
    pub fn load(path: &Path, quick: bool) -> Result<Spec> {
        let source = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        Spec::parse(path, &source, quick)
    }

    /// Parses and validates spec text (`path` only names it in errors and cache keys).
    pub fn parse(path: &Path, source: &str, quick: bool) -> Result<Spec> {
        let shown = path.display();
        let mut file: SpecFile = toml::from_str(source).with_context(|| format!("{shown}: invalid spec"))?;
        validate(&file).with_context(|| format!("{shown}: invalid spec"))?;
        let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
        ensure!(
            file.name == stem,
            "{shown}: `name = \"{}\"` must equal the file name `{stem}`",
            file.name
        );
        let mut run_datasets: Vec<String> = file.datasets.iter().map(|d| d.id.clone()).collect();
        let mut run_methods: Vec<String> = file.methods.iter().map(|m| m.id.clone()).collect();
        if quick {
            if let Some(q) = file.quick.clone() {
                if let Some(seeds) = q.seeds {
                    file.seeds = seeds;
                }
                if let Some(trials) = q.trials {
                    file.trials = trials;
                }
                if let Some(ds) = q.datasets {
                    run_datasets = ds;
                }
                if let Some(ms) = q.methods {
                    run_methods = ms;
                }
                merge_tables(&mut file.params, q.params);
            }
        }
        ensure!(!file.seeds.is_empty(), "{shown}: `seeds` is empty");
        ensure!(file.trials >= 1, "{shown}: `trials` must be at least 1");
        Ok(Spec {
            path: path.to_path_buf(),
            source: source.to_string(),
            file,
            quick,
            run_datasets,
            run_methods,
        })
    }

    /// The spec's name.
    pub fn name(&self) -> &str {
        &self.file.name
    }

    /// The declared metric with this id.
    pub fn metric(&self, id: &str) -> Option<&Metric> {
        self.file.metrics.iter().find(|m| m.id == id)
    }

    /// Why a dataset is unavailable, if the spec says it is.
    pub fn unavailable(&self, dataset: &str) -> Option<&str> {
        self.file
            .datasets
            .iter()
            .find(|d| d.id == dataset)
            .and_then(|d| d.unavailable.as_deref())
    }

    /// Tolerance for a metric, and whether it is relative.
    pub fn tolerance(&self, metric: &str) -> (f64, bool) {
        match self.metric(metric) {
            Some(m) => (m.tolerance.unwrap_or(self.file.tolerance), m.relative),
            None => (self.file.tolerance, false),
        }
    }

    /// Paper values indexed by (dataset, method, metric, setting).
    pub fn paper_index(&self) -> BTreeMap<(String, String, String, String), &PaperValue> {
        self.file
            .paper
            .iter()
            .map(|p| {
                (
                    (p.dataset.clone(), p.method.clone(), p.metric.clone(), p.setting.clone()),
                    p,
                )
            })
            .collect()
    }

    /// Display label of a key value (dataset/method/metric label, or the setting itself).
    pub fn label(&self, key: Key, id: &str) -> String {
        let items = match key {
            Key::Dataset => &self.file.datasets,
            Key::Method => &self.file.methods,
            Key::Metric => return self.metric(id).map_or_else(|| id.to_string(), |m| m.label.clone()),
            Key::Setting => return if id.is_empty() { "-".to_string() } else { id.to_string() },
        };
        items
            .iter()
            .find(|i| i.id == id)
            .map_or_else(|| id.to_string(), |i| i.label.clone())
    }

    /// Position of a key value in the spec's declared order (unknown values sort last).
    pub fn order(&self, key: Key, id: &str) -> usize {
        let pos = match key {
            Key::Dataset => self.file.datasets.iter().position(|i| i.id == id),
            Key::Method => self.file.methods.iter().position(|i| i.id == id),
            Key::Metric => self.file.metrics.iter().position(|m| m.id == id),
            Key::Setting => {
                if id.is_empty() {
                    Some(0)
                } else {
                    self.file.settings.iter().position(|s| s == id).map(|p| p + 1)
                }
            }
        };
        pos.unwrap_or(usize::MAX)
    }
}

/// Recursively merges `over` into `base`: tables merge key by key, any other value replaces.
pub fn merge_tables(base: &mut toml::Table, over: toml::Table) {
    for (k, v) in over {
        match (base.get_mut(&k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => merge_tables(b, o),
            (_, v) => {
                base.insert(k, v);
            }
        }
    }
}

fn check_unique<'a>(what: &str, ids: impl Iterator<Item = &'a str>) -> Result<BTreeSet<&'a str>> {
    let mut seen = BTreeSet::new();
    for id in ids {
        ensure!(!id.is_empty(), "empty {what} id");
        ensure!(seen.insert(id), "{what} `{id}` is declared twice");
    }
    Ok(seen)
}

fn check_subset(what: &str, field: &str, list: &[String], declared: &BTreeSet<&str>) -> Result<()> {
    for id in list {
        if !declared.contains(id.as_str()) {
            bail!("{field} names {what} `{id}`, which `{what}s` does not declare (declared: {declared:?})");
        }
    }
    Ok(())
}

fn validate(f: &SpecFile) -> Result<()> {
    ensure!(
        !f.name.is_empty() && !f.description.is_empty(),
        "`name` and `description` must not be empty"
    );
    ensure!(!f.description.contains('\n'), "`description` must be one line");
    ensure!(f.tolerance >= 0.0, "`tolerance` must be non-negative");
    let datasets = check_unique("dataset", f.datasets.iter().map(|i| i.id.as_str()))?;
    let methods = check_unique("method", f.methods.iter().map(|i| i.id.as_str()))?;
    let metrics = check_unique("metric", f.metrics.iter().map(|m| m.id.as_str()))?;
    let settings = check_unique("setting", f.settings.iter().map(|s| s.as_str()))?;
    for m in &f.metrics {
        ensure!(
            m.tolerance.is_none_or(|t| t >= 0.0),
            "metric `{}`: tolerance must be non-negative",
            m.id
        );
    }
    let mut keys = BTreeSet::new();
    for (i, p) in f.paper.iter().enumerate() {
        let row = format!(
            "paper row {} ({}/{}/{}/{:?})",
            i + 1,
            p.dataset,
            p.method,
            p.metric,
            p.setting
        );
        ensure!(
            datasets.contains(p.dataset.as_str()),
            "{row}: dataset `{}` is not declared",
            p.dataset
        );
        ensure!(
            methods.contains(p.method.as_str()),
            "{row}: method `{}` is not declared",
            p.method
        );
        ensure!(
            metrics.contains(p.metric.as_str()),
            "{row}: metric `{}` is not declared",
            p.metric
        );
        ensure!(
            p.setting.is_empty() || settings.contains(p.setting.as_str()),
            "{row}: setting `{}` is not declared in `settings`",
            p.setting
        );
        ensure!(p.value.is_finite(), "{row}: value is not finite");
        ensure!(
            keys.insert((&p.dataset, &p.method, &p.metric, &p.setting)),
            "{row}: duplicate paper value"
        );
    }
    for c in &f.comparisons {
        for m in std::iter::once(&c.method).chain(&c.than) {
            ensure!(methods.contains(m.as_str()), "comparison: method `{m}` is not declared");
        }
        ensure!(!c.than.is_empty(), "comparison of `{}`: `than` is empty", c.method);
        for d in c.datasets.iter().flatten() {
            ensure!(
                datasets.contains(d.as_str()),
                "comparison: dataset `{d}` is not declared"
            );
        }
        for m in &c.metrics {
            let metric = f.metrics.iter().find(|x| &x.id == m);
            ensure!(
                metric.is_some_and(|x| x.better != Better::None),
                "comparison of `{}`: metric `{m}` is not declared or has no direction (`better`)",
                c.method
            );
        }
    }
    for t in &f.tables {
        ensure!(
            !t.rows.is_empty() && !t.columns.is_empty(),
            "table `{}`: needs row and column keys",
            t.title
        );
        let mut all: Vec<Key> = t.rows.iter().chain(&t.columns).copied().collect();
        all.sort();
        all.dedup();
        ensure!(
            all.len() == t.rows.len() + t.columns.len(),
            "table `{}`: a key is used twice",
            t.title
        );
        let ctx = format!("table `{}`", t.title);
        check_subset("dataset", &ctx, t.datasets.as_deref().unwrap_or_default(), &datasets)?;
        check_subset("method", &ctx, t.methods.as_deref().unwrap_or_default(), &methods)?;
        check_subset("metric", &ctx, t.metrics.as_deref().unwrap_or_default(), &metrics)?;
    }
    for g in &f.figures {
        let ctx = format!("figure `{}`", g.file);
        ensure!(!g.metrics.is_empty(), "{ctx}: no metrics");
        check_subset("dataset", &ctx, g.datasets.as_deref().unwrap_or_default(), &datasets)?;
        check_subset("method", &ctx, g.methods.as_deref().unwrap_or_default(), &methods)?;
        check_subset("metric", &ctx, &g.metrics, &metrics)?;
        check_subset("metric", &ctx, g.x_metric.as_slice(), &metrics)?;
    }
    if let Some(q) = &f.quick {
        check_subset(
            "dataset",
            "[quick] datasets",
            q.datasets.as_deref().unwrap_or_default(),
            &datasets,
        )?;
        check_subset(
            "method",
            "[quick] methods",
            q.methods.as_deref().unwrap_or_default(),
            &methods,
        )?;
    }
    Ok(())
}

/// Value of `key` in a setting string such as `"eps=0.1,m=1000"`.
pub fn setting_value(setting: &str, key: &str) -> Option<f64> {
    setting.split(',').find_map(|kv| {
        let (k, v) = kv.split_once('=')?;
        (k.trim() == key).then(|| v.trim().parse().ok()).flatten()
    })
}

/// A sort key from [`setting_sort_key`]: per `k=v` part, the key, the value in micro-units (if numeric) and the
/// value text (if not).
pub type SettingSortKey = Vec<(String, i64, String)>;

/// Sort key of a setting string that orders numbers numerically (`m=3000` before `m=14000`).
pub fn setting_sort_key(setting: &str) -> SettingSortKey {
    setting
        .split(',')
        .map(|kv| match kv.split_once('=') {
            Some((k, v)) => match v.trim().parse::<f64>() {
                // Micro-units keep six decimals, plenty for grids of gamma, eps and m.
                Ok(x) => (k.trim().to_string(), (x * 1e6).round() as i64, String::new()),
                Err(_) => (k.trim().to_string(), i64::MIN, v.trim().to_string()),
            },
            None => (kv.trim().to_string(), i64::MIN, String::new()),
        })
        .collect()
}

/// All spec files in `dir`, sorted by name.
pub fn spec_paths(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("listing {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    paths.sort();
    Ok(paths)
}

/// Test fixture: the header every spec needs, for a spec `t` of kind `datasets`, so that a test's
/// spec states only the tables the test is about.
#[cfg(test)]
pub(crate) const TEST_HEADER: &str = r#"name = "t"
description = "d"
kind = "datasets"
paper_ref = "Table 0"
"#;

/// Test fixture: [`TEST_HEADER`] followed by `body`, parsed as the full (not quick) spec `t.toml`.
#[cfg(test)]
pub(crate) fn test_spec(body: &str) -> Result<Spec> {
    Spec::parse(Path::new("t.toml"), &format!("{TEST_HEADER}{body}"), false)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINIMAL_BODY: &str = r##"
datasets = [{ id = "cora", label = "Cora" }]
methods = [{ id = "data", label = "Data" }]
metrics = [{ id = "nodes", label = "# Nodes", decimals = 0 }]
paper = [{ dataset = "cora", method = "data", metric = "nodes", value = 2708 }]
[params]
a = { b = 1, c = 2 }
[quick]
seeds = [7]
params = { a = { c = 3 } }
"##;

    fn minimal() -> String {
        format!("{TEST_HEADER}{MINIMAL_BODY}")
    }

    #[test]
    fn parses_and_applies_quick() {
        let p = Path::new("experiments/t.toml");
        let full = Spec::parse(p, &minimal(), false).unwrap();
        assert_eq!(full.file.seeds, vec![0]);
        let quick = Spec::parse(p, &minimal(), true).unwrap();
        assert_eq!(quick.file.seeds, vec![7]);
        let a = quick.file.params["a"].as_table().unwrap();
        assert_eq!((a["b"].as_integer(), a["c"].as_integer()), (Some(1), Some(3)));
    }

    #[test]
    fn unknown_key_names_file_and_key() {
        let src = minimal().replace("kind = ", "kidn = \"x\"\nkind = ");
        let err = format!(
            "{:#}",
            Spec::parse(Path::new("experiments/t.toml"), &src, false).unwrap_err()
        );
        assert!(err.contains("experiments/t.toml") && err.contains("kidn"), "{err}");
    }

    #[test]
    fn undeclared_paper_key_is_an_error() {
        let src = minimal().replace("metric = \"nodes\", value", "metric = \"edges\", value");
        let err = format!(
            "{:#}",
            Spec::parse(Path::new("experiments/t.toml"), &src, false).unwrap_err()
        );
        assert!(err.contains("metric `edges` is not declared"), "{err}");
    }

    #[test]
    fn name_must_match_file() {
        assert!(Spec::parse(Path::new("experiments/other.toml"), &minimal(), false).is_err());
    }

    #[test]
    fn setting_values() {
        assert_eq!(setting_value("eps=0.1,m=1000", "m"), Some(1000.0));
        assert_eq!(setting_value("eps=0.1", "m"), None);
        assert_eq!(setting_value("", "m"), None);
        let mut v = vec!["m=14000", "m=3000", "m=19717"];
        v.sort_by_key(|s| setting_sort_key(s));
        assert_eq!(v, vec!["m=3000", "m=14000", "m=19717"]);
    }
}
