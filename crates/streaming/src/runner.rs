//! Runner entry point of the large-scale table (`tab:large:scale`): KPCA (symmetric Nyström) vs
//! KSVD (asymmetric Nyström, a2), RBF, AUROC, on LIBSVM files streamed from disk.
use std::path::{Path, PathBuf};
use std::time::Instant;

use ksvd_datasets::{sparse_spec, DataRoot, DatasetError, DatasetName};
use serde::{Deserialize, Serialize};

use crate::error::StreamingError;
use crate::memory::{cpu_seconds, peak_rss_bytes, reset_peak_rss};
use crate::params::{Bandwidth, StreamingParams};
use crate::pipeline::{run_pipeline, Method, PipelineParams};
use crate::progress::{Progress, ProgressFn};
use crate::projection::ProjectionScaling;
use crate::source::{LibsvmSource, RowSelection};

/// Status of a result row (the vocabulary of the experiment runner's tidy table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// `value` holds a result.
    Ok,
    /// An input file is absent; the note says where to get it.
    MissingData,
    /// Deliberately not run (e.g. too large for an in-memory path); the note says why.
    NotRun,
    /// The computation failed; the note holds the error.
    Failed,
}

impl Status {
    /// `ok`, `missing-data`, `not-run` or `failed`.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::MissingData => "missing-data",
            Status::NotRun => "not-run",
            Status::Failed => "failed",
        }
    }
}

/// One tidy result: one dataset × method × metric × setting × seed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResultRow {
    /// Dataset id (`a9a`, `avazu`, `synthetic`, ...).
    pub dataset: String,
    /// Method id (`kpca`, `ksvd`, `data`; scaling: `streaming-nystrom`, `dense`, `rsvd`, `generator`).
    pub method: String,
    /// Metric id (`auroc`, `n_samples`, `n_features`, `peak_rss_mib`, `seconds`, ...).
    pub metric: String,
    /// Setting, e.g. `n=1000000`; empty when there is only one.
    pub setting: String,
    /// The value (only with [`Status::Ok`]).
    pub value: Option<f64>,
    /// Spread over trials (`None`: one trial).
    pub std: Option<f64>,
    /// Seed of the cell.
    pub seed: Option<u64>,
    /// Trials in the cell.
    pub trials: Option<u32>,
    /// Wall seconds of the cell (fit + train + score).
    pub seconds: Option<f64>,
    /// Threads of the rayon pool.
    pub threads: Option<u32>,
    /// Status.
    pub status: Status,
    /// Free text: parameters actually used, or why there is no value.
    pub note: Option<String>,
}

impl ResultRow {
    /// A row with a value.
    pub fn ok(dataset: &str, method: &str, metric: &str, value: f64) -> Self {
        ResultRow {
            value: Some(value),
            ..ResultRow::status(dataset, method, metric, Status::Ok, None)
        }
    }

    /// A row without a value.
    pub fn status(dataset: &str, method: &str, metric: &str, status: Status, note: Option<String>) -> Self {
        ResultRow {
            dataset: dataset.to_string(),
            method: method.to_string(),
            metric: metric.to_string(),
            setting: String::new(),
            value: None,
            std: None,
            seed: None,
            trials: None,
            seconds: None,
            threads: None,
            status,
            note,
        }
    }

    fn with(mut self, seed: Option<u64>, seconds: Option<f64>, note: Option<String>) -> Self {
        self.seed = seed;
        self.trials = Some(1);
        self.seconds = seconds;
        self.threads = Some(rayon::current_num_threads() as u32);
        if note.is_some() {
            self.note = note;
        }
        self
    }
}

/// A user-supplied LIBSVM dataset (e.g. one of the paper's: AmazonCat-13K, Avazu, Criteo).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UserDataset {
    /// Dataset id of the rows.
    pub name: String,
    /// Training file (plain or `.bz2`); a relative path is resolved against the data root's folder.
    pub train_path: PathBuf,
    /// Test file; `None`: a seeded split of the training file (`test_fraction`).
    #[serde(default)]
    pub test_path: Option<PathBuf>,
    /// Number of features `M`; `None`: the largest index of the training file (one extra scan).
    #[serde(default)]
    pub n_features: Option<usize>,
    /// The positive label; `None`: the larger of exactly two labels.
    #[serde(default)]
    pub positive_label: Option<f64>,
    /// Where to get the files (goes into the note of a `missing-data` row).
    #[serde(default)]
    pub origin: String,
}

/// Configuration of [`run_large_scale`]. Every field has a default (the full run); the quick
/// variant is a smaller config, e.g. [`LargeScaleConfig::quick`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LargeScaleConfig {
    /// Registry stand-ins streamed from the committed `data/` (`a9a`, `w8a`, `ijcnn1`,
    /// `reuters_lasvm`); their LIBSVM test parts are used, except w8a (seeded split).
    pub stand_ins: Vec<String>,
    /// User-supplied datasets; an absent file gives `missing-data` rows.
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
            datasets: LargeScaleConfig::paper_datasets(),
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

const LIBSVM_BINARY: &str = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/binary.html";

impl LargeScaleConfig {
    /// The paper's three datasets at conventional places under `<data root>/external/`. They
    /// are not distributed with the repository (gigabytes); download them as the notes say.
    pub fn paper_datasets() -> Vec<UserDataset> {
        vec![
            UserDataset {
                name: "amazoncat_13k".into(),
                train_path: "external/amazoncat_13k/train.svm".into(),
                test_path: Some("external/amazoncat_13k/test.svm".into()),
                n_features: Some(203_882),
                positive_label: None,
                origin: "AmazonCat-13K (1,186,239 x 203,882, multi-label) from the Extreme Classification Repository \
                         (http://manikvarma.org/downloads/XC/XMLRepository.html); convert it to single-label LIBSVM \
                         lines (e.g. one-vs-rest for one label, set positive_label) first: the reader rejects \
                         comma-separated label lists"
                    .into(),
            },
            UserDataset {
                name: "avazu".into(),
                train_path: "external/avazu/avazu-app.bz2".into(),
                test_path: Some("external/avazu/avazu-app.t.bz2".into()),
                n_features: Some(1_000_000),
                positive_label: None,
                origin: format!("Avazu (avazu-app: 14,596,137 x 1,000,000) from the LIBSVM binary datasets page {LIBSVM_BINARY}"),
            },
            UserDataset {
                name: "criteo_kaggle".into(),
                train_path: "external/criteo/criteo.kaggle2014.train.svm".into(),
                test_path: None,
                n_features: Some(1_000_000),
                positive_label: None,
                origin: format!(
                    "Criteo (Kaggle 2014: 45,840,617 x 1,000,000) from the LIBSVM binary datasets page {LIBSVM_BINARY}; \
                     the test part is a seeded split of the training file"
                ),
            },
        ]
    }

    /// A small variant for CI: a9a only, 200 landmarks, 20 components, no user datasets.
    pub fn quick() -> Self {
        LargeScaleConfig {
            stand_ins: vec!["a9a".into()],
            datasets: Vec::new(),
            landmarks: 200,
            components: 20,
            ..LargeScaleConfig::default()
        }
    }
}

struct Resolved {
    name: String,
    train: LibsvmSource,
    test: LibsvmSource,
    positive: Option<f64>,
}

fn missing(name: &str, what: &str, methods: &[Method], note: String) -> Vec<ResultRow> {
    let mut rows = vec![ResultRow::status(
        name,
        "data",
        "n_samples",
        Status::MissingData,
        Some(note.clone()),
    )];
    for m in methods {
        rows.push(ResultRow::status(
            name,
            m.as_str(),
            what,
            Status::MissingData,
            Some(note.clone()),
        ));
    }
    rows
}

fn resolve_stand_in(
    name: &str,
    root: &DataRoot,
    cfg: &LargeScaleConfig,
    seed: u64,
) -> std::result::Result<Resolved, (Status, String)> {
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
    let (train_sel, test) = match root.file(ds, spec.test) {
        Ok(p) => (RowSelection::All, LibsvmSource::new(p)),
        Err(DatasetError::MissingFile { .. }) => {
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
            (split(false), LibsvmSource::new(&train_path).selection(split(true)))
        }
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
) -> std::result::Result<Resolved, (Status, String)> {
    let train_path = resolve_path(root, &d.train_path);
    let where_ = if d.origin.is_empty() {
        format!("see the LIBSVM datasets page {LIBSVM_BINARY}")
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

/// Runs the large-scale table: for every dataset (stand-ins, then user datasets), method and
/// seed, fits the streaming Nyström model on the training file, trains the ridge classifier in
/// a second pass and scores the test part. Rows: `data/n_samples`, `data/n_features` once per
/// dataset and seed, and per method `auroc` (with `seconds`), `peak_rss_mib`, `seconds` (wall)
/// and `cpu_seconds` (user + system of this process).
/// Missing files give `missing-data` rows saying where to get them; a failing cell gives a
/// `failed` row with the error; nothing aborts the table.
///
/// `peak_rss_mib` is this process's `VmHWM`, reset before each cell when the kernel allows it
/// (the note says when it could not be reset, in which case peaks accumulate).
pub fn run_large_scale(
    config: &LargeScaleConfig,
    root: &DataRoot,
    progress: &mut ProgressFn<'_>,
) -> crate::error::Result<Vec<ResultRow>> {
    if config.methods.is_empty() || config.seeds.is_empty() {
        return Err(StreamingError::invalid(
            "methods/seeds",
            "[]",
            "need at least one method and one seed",
        ));
    }
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
            let resolved = match entry {
                None => resolve_stand_in(&config.stand_ins[e], root, config, seed),
                Some(d) => resolve_user(d, root, config, seed),
            };
            let name = match entry {
                None => config.stand_ins[e].clone(),
                Some(d) => d.name.clone(),
            };
            let res = match resolved {
                Ok(r) => r,
                Err((status, note)) => {
                    let mut rs = missing(&name, "auroc", &config.methods, note);
                    for r in &mut rs {
                        r.status = status;
                        r.seed = Some(seed);
                    }
                    rows.extend(rs);
                    cell += config.methods.len();
                    progress(&Progress {
                        stage: format!("{name}: {}", status.as_str()),
                        done: cell,
                        total: cells,
                    });
                    continue;
                }
            };
            let mut data_rows_done = false;
            for &method in &config.methods {
                let stage = format!("{}/{} seed {seed}", res.name, method.as_str());
                progress(&Progress {
                    stage: stage.clone(),
                    done: cell,
                    total: cells,
                });
                let reset = reset_peak_rss();
                let params = PipelineParams {
                    model: StreamingParams {
                        rank: config.components,
                        row_landmarks: config.landmarks,
                        col_landmarks: config.landmarks,
                        bandwidth: config.bandwidth,
                        projection_density: config.projection_density,
                        projection_scaling: config.projection_scaling,
                        chunk_rows: config.chunk_rows,
                        seed,
                        rows: Default::default(),
                        cols: Default::default(),
                    },
                    ridge: config.ridge,
                    positive_label: res.positive,
                };
                let t0 = Instant::now();
                let cpu0 = cpu_seconds();
                let mut inner = |p: &Progress| {
                    progress(&Progress {
                        stage: format!("{stage}: {} ({} rows)", p.stage, p.done),
                        done: cell,
                        total: cells,
                    })
                };
                let outcome = run_pipeline(method, &res.train, &res.test, &params, &mut inner);
                let secs = t0.elapsed().as_secs_f64();
                let cpu = cpu0.zip(cpu_seconds()).map(|(a, b)| b - a);
                let peak = peak_rss_bytes().map(|b| b as f64 / (1024.0 * 1024.0));
                match outcome {
                    Ok(o) => {
                        if !data_rows_done {
                            rows.push(ResultRow::ok(&res.name, "data", "n_samples", o.train_rows as f64).with(
                                Some(seed),
                                None,
                                Some(format!(
                                    "{} test rows, {} nonzeros in the training rows",
                                    o.test_rows, o.train_nnz
                                )),
                            ));
                            rows.push(ResultRow::ok(&res.name, "data", "n_features", o.features as f64).with(
                                Some(seed),
                                None,
                                None,
                            ));
                            data_rows_done = true;
                        }
                        let note = format!(
                            "r = {} (requested {}), n = {} landmark rows{}, gamma = {:.4e} ({}){}, ridge = {}, passes: fit {:.2} s, train {:.2} s, score {:.2} s",
                            o.rank,
                            config.components,
                            o.row_landmarks,
                            if method == Method::Ksvd { format!(", m = {} landmark columns", o.col_landmarks) } else { String::new() },
                            o.gamma,
                            config.bandwidth,
                            o.side.map(|s| format!(", compatibility a2: {s}")).unwrap_or_default(),
                            config.ridge,
                            o.fit_seconds,
                            o.train_seconds,
                            o.score_seconds,
                        );
                        let m = method.as_str();
                        rows.push(ResultRow::ok(&res.name, m, "auroc", o.auroc).with(
                            Some(seed),
                            Some(secs),
                            Some(note),
                        ));
                        rows.push(ResultRow::ok(&res.name, m, "seconds", secs).with(Some(seed), Some(secs), None));
                        if let Some(c) = cpu {
                            rows.push(ResultRow::ok(&res.name, m, "cpu_seconds", c).with(Some(seed), Some(secs), None));
                        }
                        match peak {
                            Some(p) => {
                                rows.push(ResultRow::ok(&res.name, m, "peak_rss_mib", p).with(
                                    Some(seed),
                                    Some(secs),
                                    (!reset).then(|| {
                                        "VmHWM could not be reset: peak of the whole process so far".to_string()
                                    }),
                                ))
                            }
                            None => rows.push(
                                ResultRow::status(
                                    &res.name,
                                    m,
                                    "peak_rss_mib",
                                    Status::NotRun,
                                    Some("no /proc/self/status".into()),
                                )
                                .with(Some(seed), None, None),
                            ),
                        }
                    }
                    Err(e) => {
                        let status = match &e {
                            StreamingError::Dataset(DatasetError::MissingFile { .. }) => Status::MissingData,
                            _ => Status::Failed,
                        };
                        rows.push(
                            ResultRow::status(&res.name, method.as_str(), "auroc", status, Some(e.to_string())).with(
                                Some(seed),
                                Some(secs),
                                None,
                            ),
                        );
                    }
                }
                cell += 1;
                progress(&Progress {
                    stage,
                    done: cell,
                    total: cells,
                });
            }
        }
    }
    Ok(rows)
}
