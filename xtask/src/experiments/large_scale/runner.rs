//! The large-scale table (`tab:large:scale`): KPCA (symmetric Nyström) vs KSVD (asymmetric
//! Nyström, a2), RBF, AUROC, on LIBSVM files streamed from disk by `ksvd-streaming`. The config
//! (serde, the spec's `[params]`, which also lists the paper's three datasets), the resolution of
//! a dataset id to files, the loop over datasets, seeds and methods around one cell
//! ([`measure_pipeline`]), and the tidy rows.
use std::path::{Path, PathBuf};

use ksvd_datasets::{sparse_spec, DataRoot, DatasetError, DatasetName};
use ksvd_streaming::{
    Bandwidth, LibsvmSource, Method, PipelineParams, Progress, ProgressFn, ProjectionScaling, RowSelection,
    StreamingError, StreamingParams,
};
use serde::{Deserialize, Serialize};

use super::bench::measure_pipeline;
use super::inputs::{UserDataset, LIBSVM_BINARY_PAGE};
use crate::rows::{Row, Status};

/// Configuration of [`run_large_scale`] (the spec's `[params]`). Every field has a default; the
/// spec sets the full run's values and lists the paper's datasets, and its `[quick]` section
/// overrides a few of them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LargeScaleConfig {
    /// Registry stand-ins streamed from the committed `data/` (`a9a`, `w8a`, `ijcnn1`,
    /// `reuters_lasvm`); their LIBSVM test parts are used, except w8a (seeded split).
    pub stand_ins: Vec<String>,
    /// User-supplied datasets (the spec lists the paper's three under `data/external/`); an
    /// absent file gives `missing-data` rows. Default: none.
    pub datasets: Vec<UserDataset>,
    /// Methods to run.
    pub methods: Vec<Method>,
    /// Landmarks `n = m` (the paper: 1000; capped at the rows / columns available).
    pub landmarks: usize,
    /// Embedding dimension `r` (the paper does not state it; lowered to the numerical rank of
    /// the landmark block when smaller).
    pub components: usize,
    /// RBF bandwidth (the paper does not state it).
    pub bandwidth: Bandwidth,
    /// Density of the sparse projection of a2 (`None`: `1/√D`).
    pub projection_density: Option<f64>,
    /// Scaling of the projection's entries.
    pub projection_scaling: ProjectionScaling,
    /// Ridge `λ` of the classifier on standardised embeddings.
    pub ridge: f64,
    /// Held-out fraction for datasets without a test file.
    pub test_fraction: f64,
    /// Rows per chunk.
    pub chunk_rows: usize,
    /// Seeds: one trial each (landmarks, projection and split).
    pub seeds: Vec<u64>,
    /// Use at most this many rows of each training file (`None`: all).
    pub max_train_rows: Option<usize>,
    /// Use at most this many rows of each test file (`None`: all).
    pub max_test_rows: Option<usize>,
}

impl Default for LargeScaleConfig {
    fn default() -> Self {
        LargeScaleConfig {
            stand_ins: ["a9a", "w8a", "ijcnn1", "reuters_lasvm"].map(String::from).to_vec(),
            datasets: Vec::new(),
            methods: vec![Method::Kpca, Method::Ksvd],
            landmarks: 1000,
            components: 100,
            bandwidth: Bandwidth::Median(1.0),
            projection_density: None,
            projection_scaling: ProjectionScaling::NormPreserving,
            ridge: 1e-3,
            test_fraction: 0.2,
            chunk_rows: 10_000,
            seeds: vec![0],
            max_train_rows: None,
            max_test_rows: None,
        }
    }
}

impl LargeScaleConfig {
    /// A small variant: a9a only, 200 landmarks, 20 components, no user datasets.
    #[cfg(test)]
    pub fn quick() -> Self {
        LargeScaleConfig {
            stand_ins: vec!["a9a".into()],
            datasets: Vec::new(),
            landmarks: 200,
            components: 20,
            ..LargeScaleConfig::default()
        }
    }

    fn pipeline_params(&self, seed: u64, positive_label: Option<f64>) -> PipelineParams {
        PipelineParams {
            model: StreamingParams {
                rank: self.components,
                row_landmarks: self.landmarks,
                col_landmarks: self.landmarks,
                bandwidth: self.bandwidth,
                projection_density: self.projection_density,
                projection_scaling: self.projection_scaling,
                chunk_rows: self.chunk_rows,
                seed,
                rows: Default::default(),
                cols: Default::default(),
            },
            ridge: self.ridge,
            positive_label,
        }
    }
}

/// A dataset resolved to its training and test sources.
struct Resolved {
    name: String,
    train: LibsvmSource,
    test: LibsvmSource,
    positive: Option<f64>,
}

/// Why a dataset has no sources: the status of its rows and their note.
type Unresolved = (Status, String);

fn resolve_stand_in(
    name: &str,
    root: &DataRoot,
    cfg: &LargeScaleConfig,
    seed: u64,
) -> std::result::Result<Resolved, Unresolved> {
    let ds: DatasetName = name
        .parse()
        .map_err(|e: DatasetError| (Status::Failed, e.to_string()))?;
    let spec = sparse_spec(ds).ok_or_else(|| {
        (
            Status::Failed,
            format!("{name} is not a LIBSVM dataset of the registry"),
        )
    })?;
    if spec.ffm.is_some() {
        return Err((
            Status::Failed,
            format!("{name} is LIBFFM, not LIBSVM text; it cannot be streamed"),
        ));
    }
    let status_of = |e: &DatasetError| match e {
        DatasetError::MissingFile { .. } => Status::MissingData,
        _ => Status::Failed,
    };
    let train_path = root.file(ds, spec.train).map_err(|e| (status_of(&e), e.to_string()))?;
    let split = |test| {
        if test {
            RowSelection::SplitTest {
                test_fraction: cfg.test_fraction,
                seed,
            }
        } else {
            RowSelection::SplitTrain {
                test_fraction: cfg.test_fraction,
                seed,
            }
        }
    };
    let (train_sel, test) = match root.file(ds, spec.test) {
        Ok(p) => (RowSelection::All, LibsvmSource::new(p)),
        Err(DatasetError::MissingFile { .. }) => (split(false), LibsvmSource::new(&train_path).selection(split(true))),
        Err(e) => return Err((status_of(&e), e.to_string())),
    };
    Ok(Resolved {
        name: name.to_string(),
        train: LibsvmSource::new(train_path)
            .n_features(spec.n_features)
            .selection(train_sel)
            .max_rows(cfg.max_train_rows),
        test: test.n_features(spec.n_features).max_rows(cfg.max_test_rows),
        positive: None,
    })
}

fn resolve_path(root: &DataRoot, p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        root.dir().join(p)
    }
}

fn resolve_user(
    d: &UserDataset,
    root: &DataRoot,
    cfg: &LargeScaleConfig,
    seed: u64,
) -> std::result::Result<Resolved, Unresolved> {
    let train_path = resolve_path(root, &d.train_path);
    let where_ = if d.origin.is_empty() {
        format!("see the LIBSVM datasets page {LIBSVM_BINARY_PAGE}")
    } else {
        d.origin.clone()
    };
    if !train_path.is_file() {
        return Err((
            Status::MissingData,
            format!("missing {}: {where_}", train_path.display()),
        ));
    }
    let mut train = LibsvmSource::new(&train_path).max_rows(cfg.max_train_rows);
    let mut test = match &d.test_path {
        Some(t) => {
            let tp = resolve_path(root, t);
            if !tp.is_file() {
                return Err((Status::MissingData, format!("missing {}: {where_}", tp.display())));
            }
            LibsvmSource::new(tp)
        }
        None => {
            train = train.selection(RowSelection::SplitTrain {
                test_fraction: cfg.test_fraction,
                seed,
            });
            LibsvmSource::new(&train_path).selection(RowSelection::SplitTest {
                test_fraction: cfg.test_fraction,
                seed,
            })
        }
    };
    test = test.max_rows(cfg.max_test_rows);
    if let Some(m) = d.n_features {
        train = train.n_features(m);
        test = test.n_features(m);
    }
    Ok(Resolved {
        name: d.name.clone(),
        train,
        test,
        positive: d.positive_label,
    })
}

/// Seed, one trial, wall seconds, the thread count of the current pool, and a note.
fn cell_row(row: Row, seed: u64, seconds: Option<f64>, note: Option<String>) -> Row {
    Row {
        seed: Some(seed),
        trials: Some(1),
        seconds,
        threads: Some(rayon::current_num_threads() as u32),
        note: note.or(row.note),
        ..row
    }
}

/// Runs the large-scale table: for every dataset (stand-ins, then user datasets), method and
/// seed, fits the streaming Nyström model on the training file, trains the ridge classifier in
/// a second pass and scores the test part ([`measure_pipeline`]). Rows: `data/n_samples`,
/// `data/n_features` once per dataset and seed, and per method `auroc` (with `seconds`),
/// `peak_rss_mib`, `seconds` (wall) and `cpu_seconds` (user + system of this process).
/// Missing files give `missing-data` rows saying where to get them; a failing cell gives a
/// `failed` row with the error; nothing aborts the table.
///
/// `peak_rss_mib` is this process's `VmHWM`, reset before each cell when the kernel allows it
/// (the note says when it could not be reset, in which case peaks accumulate).
pub fn run_large_scale(
    config: &LargeScaleConfig,
    root: &DataRoot,
    progress: &mut ProgressFn<'_>,
) -> anyhow::Result<Vec<Row>> {
    anyhow::ensure!(
        !config.methods.is_empty() && !config.seeds.is_empty(),
        "large-scale: need at least one method and one seed"
    );
    let entries: Vec<Option<&UserDataset>> = config
        .stand_ins
        .iter()
        .map(|_| None)
        .chain(config.datasets.iter().map(Some))
        .collect();
    let cells = entries.len() * config.seeds.len() * config.methods.len();
    let mut rows = Vec::new();
    let mut cell = 0usize;
    for (e, entry) in entries.iter().enumerate() {
        for &seed in &config.seeds {
            let (name, resolved) = match entry {
                None => (
                    config.stand_ins[e].clone(),
                    resolve_stand_in(&config.stand_ins[e], root, config, seed),
                ),
                Some(d) => (d.name.clone(), resolve_user(d, root, config, seed)),
            };
            let res = match resolved {
                Ok(r) => r,
                Err((status, note)) => {
                    let methods = config.methods.iter().map(|m| (m.as_str(), "auroc"));
                    for (method, metric) in std::iter::once(("data", "n_samples")).chain(methods) {
                        rows.push(Row::status(&name, method, metric, status, Some(note.clone())).seed(seed));
                    }
                    cell += config.methods.len();
                    progress(&Progress::new(
                        format!("{name}: {}", status.as_str()),
                        cell,
                        Some(cells),
                    ));
                    continue;
                }
            };
            let mut data_rows_done = false;
            for &method in &config.methods {
                let stage = format!("{}/{} seed {seed}", res.name, method.as_str());
                progress(&Progress::new(stage.clone(), cell, Some(cells)));
                let params = config.pipeline_params(seed, res.positive);
                let mut inner = |p: &Progress| {
                    progress(&Progress::new(
                        format!("{stage}: {} ({} rows)", p.stage, p.done),
                        cell,
                        Some(cells),
                    ))
                };
                let measured = measure_pipeline(method, &res.train, &res.test, &params, &mut inner);
                let secs = measured.seconds;
                let m = method.as_str();
                match measured.outcome {
                    Ok(o) => {
                        if !data_rows_done {
                            let note = format!(
                                "{} test rows, {} nonzeros in the training rows",
                                o.test_rows, o.train_nnz
                            );
                            rows.push(cell_row(
                                Row::ok(&res.name, "data", "n_samples", o.train_rows as f64),
                                seed,
                                None,
                                Some(note),
                            ));
                            rows.push(cell_row(
                                Row::ok(&res.name, "data", "n_features", o.features as f64),
                                seed,
                                None,
                                None,
                            ));
                            data_rows_done = true;
                        }
                        let note = format!(
                            "r = {} (requested {}), n = {} landmark rows{}, gamma = {:.4e} ({}){}, ridge = {}, passes: fit {:.2} s, train {:.2} s, score {:.2} s",
                            o.rank,
                            config.components,
                            o.row_landmarks.len(),
                            if method == Method::Ksvd { format!(", m = {} landmark columns", o.col_landmarks) } else { String::new() },
                            o.gamma,
                            config.bandwidth,
                            o.side.map(|s| format!(", compatibility a2: {s}")).unwrap_or_default(),
                            config.ridge,
                            o.fit_seconds,
                            o.train_seconds,
                            o.score_seconds,
                        );
                        rows.push(cell_row(
                            Row::ok(&res.name, m, "auroc", o.auroc),
                            seed,
                            Some(secs),
                            Some(note),
                        ));
                        rows.push(cell_row(Row::ok(&res.name, m, "seconds", secs), seed, Some(secs), None));
                        if let Some(c) = measured.cpu_seconds {
                            rows.push(cell_row(
                                Row::ok(&res.name, m, "cpu_seconds", c),
                                seed,
                                Some(secs),
                                None,
                            ));
                        }
                        rows.push(match measured.peak_rss_bytes {
                            Some(b) => cell_row(
                                Row::ok(&res.name, m, "peak_rss_mib", b as f64 / (1024.0 * 1024.0)),
                                seed,
                                Some(secs),
                                (!measured.peak_reset)
                                    .then(|| "VmHWM could not be reset: peak of the whole process so far".to_string()),
                            ),
                            None => cell_row(
                                Row::status(
                                    &res.name,
                                    m,
                                    "peak_rss_mib",
                                    Status::NotRun,
                                    Some("no /proc/self/status".into()),
                                ),
                                seed,
                                None,
                                None,
                            ),
                        });
                    }
                    Err(e) => {
                        let status = match &e {
                            StreamingError::Dataset(DatasetError::MissingFile { .. }) => Status::MissingData,
                            _ => Status::Failed,
                        };
                        rows.push(cell_row(
                            Row::status(&res.name, m, "auroc", status, Some(e.to_string())),
                            seed,
                            Some(secs),
                            None,
                        ));
                    }
                }
                cell += 1;
                progress(&Progress::new(stage, cell, Some(cells)));
            }
        }
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::super::synthetic::{write_synthetic, SyntheticPart, SyntheticSpec};
    use super::*;

    #[test]
    fn reports_missing_files_and_runs_user_files() {
        let dir = tempfile::tempdir().unwrap();
        let root = DataRoot::shared(dir.path());
        let spec = SyntheticSpec {
            features: 300,
            nnz_per_row: 10,
            ..SyntheticSpec::default()
        };
        write_synthetic(&dir.path().join("mine.svm"), &spec, SyntheticPart::Train, 4000).unwrap();
        let cfg = LargeScaleConfig {
            stand_ins: vec![],
            datasets: vec![
                UserDataset {
                    name: "criteo_kaggle".into(),
                    train_path: "external/criteo/absent.svm".into(),
                    test_path: None,
                    n_features: Some(1_000_000),
                    positive_label: None,
                    origin: "the LIBSVM binary datasets page".into(),
                },
                UserDataset {
                    name: "mine".into(),
                    train_path: "mine.svm".into(),
                    test_path: None,
                    n_features: Some(300),
                    positive_label: Some(1.0),
                    origin: String::new(),
                },
            ],
            landmarks: 100,
            components: 10,
            ..LargeScaleConfig::default()
        };
        let mut cells = Vec::new();
        let rows = run_large_scale(&cfg, &root, &mut |p| cells.push(p.done)).unwrap();
        let missing: Vec<_> = rows.iter().filter(|r| r.dataset == "criteo_kaggle").collect();
        assert_eq!(missing.len(), 3, "data + kpca + ksvd");
        for r in &missing {
            assert_eq!(r.status, Status::MissingData);
            assert_eq!(r.seed, Some(0));
            let note = r.note.as_deref().unwrap();
            assert!(note.contains("absent.svm") && note.contains("LIBSVM"), "{note}");
        }
        let ok: Vec<_> = rows.iter().filter(|r| r.dataset == "mine").collect();
        assert!(ok.iter().all(|r| r.status == Status::Ok), "{ok:#?}");
        for m in ["kpca", "ksvd"] {
            let auc = ok.iter().find(|r| r.method == m && r.metric == "auroc").unwrap();
            assert!(auc.value.unwrap() > 0.5);
            assert!(ok.iter().any(|r| r.method == m && r.metric == "peak_rss_mib"));
        }
        // The training rows are the seeded split's: about 80% of 4000 (Binomial sd 25).
        let n = ok.iter().find(|r| r.metric == "n_samples").unwrap().value.unwrap();
        assert!(n > 2800.0 && n < 3600.0, "about 80% of 4000 rows train: {n}");
        // Two datasets x two methods: the counter reaches every cell, missing ones included.
        assert_eq!(cells.iter().copied().max(), Some(4));
    }

    #[test]
    fn the_a9a_stand_in_streams_from_the_committed_data() {
        let root = DataRoot::committed().unwrap();
        let cfg = LargeScaleConfig {
            max_train_rows: Some(8000),
            max_test_rows: Some(4000),
            ..LargeScaleConfig::quick()
        };
        let rows = run_large_scale(&cfg, &root, &mut |_| {}).unwrap();
        for r in &rows {
            assert_eq!(r.status, Status::Ok, "{r:?}");
        }
        let value = |m: &str, metric: &str| {
            rows.iter()
                .find(|r| r.method == m && r.metric == metric)
                .unwrap()
                .value
                .unwrap()
        };
        assert_eq!(value("data", "n_samples"), 8000.0);
        assert_eq!(value("data", "n_features"), 123.0);
        for m in ["kpca", "ksvd"] {
            let a = value(m, "auroc");
            assert!(a > 0.6 && a <= 1.0, "{m}: {a}");
        }
    }

    #[test]
    fn no_methods_is_an_error_not_a_panic() {
        let root = DataRoot::shared(std::env::temp_dir());
        let cfg = LargeScaleConfig {
            methods: vec![],
            ..LargeScaleConfig::quick()
        };
        assert!(run_large_scale(&cfg, &root, &mut |_| {}).is_err());
    }

    #[test]
    fn config_deserializes_from_partial_toml() {
        let cfg: LargeScaleConfig = toml::from_str(
            "landmarks = 200\nbandwidth = { median = 1.5 }\nmethods = [\"ksvd\"]\nseeds = [0, 1]\n\
             [[datasets]]\nname = \"avazu\"\ntrain_path = \"external/avazu/avazu-app.bz2\"\nn_features = 1000000\n",
        )
        .unwrap();
        assert_eq!(cfg.landmarks, 200);
        assert_eq!(cfg.bandwidth, Bandwidth::Median(1.5));
        assert_eq!(cfg.methods, vec![Method::Ksvd]);
        assert_eq!(cfg.datasets.len(), 1);
        assert_eq!(
            cfg.stand_ins,
            LargeScaleConfig::default().stand_ins,
            "unset fields keep their defaults"
        );
        assert!(
            toml::from_str::<LargeScaleConfig>("landmark = 3").is_err(),
            "unknown fields are rejected"
        );
    }

    /// The spec lists the paper's three datasets under `data/external/` (relative paths, an
    /// origin each) with the sizes of `tab:large:scale`, and every key of its `[params]` is one of
    /// this config's.
    #[test]
    fn the_spec_lists_the_paper_datasets() {
        let path = crate::fsx::project_root().join("experiments").join("large-scale.toml");
        let spec: toml::Table = toml::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let cfg: LargeScaleConfig = spec["params"].clone().try_into().unwrap();
        let names: Vec<&str> = cfg.datasets.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["amazoncat_13k", "avazu", "criteo_kaggle"]);
        for d in &cfg.datasets {
            assert!(d.train_path.is_relative() && d.train_path.starts_with("external"));
            assert!(d.test_path.as_ref().is_none_or(|p| p.is_relative()));
            assert!(!d.origin.is_empty());
        }
        let m: Vec<_> = cfg.datasets.iter().map(|d| d.n_features).collect();
        assert_eq!(m, [Some(203_882), Some(1_000_000), Some(1_000_000)]);
    }
}
