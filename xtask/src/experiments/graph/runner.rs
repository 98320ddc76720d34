//! The Table 1 and Nyström-F1 cells (moved here from `ksvd-graph-tasks`, which keeps the
//! embeddings, the LS-SVM protocol and reconstruction as building blocks): configs (serde), the
//! per-cell protocol ([`table1_cell`], [`nystrom_f1_cell`]) and its tidy result rows. The loop
//! over datasets, methods and seeds is the experiment driver's (`super::super::Context::run_cells`).
use ksvd::{InnerSolver, RsvdParams, Solver};
use ksvd_baselines::{GraphBaseline, GraphBaselineConfig};
use ksvd_datasets::{DataRoot, DatasetName, Graph, GraphOptions, SelfLoops};
use ksvd_graph_tasks::{
    bandwidth, embed, ensure, evaluate_features, evaluate_reconstruction, nystrom_embed, select, Candidate, Candidates,
    ClassifierOptions, CvMetric, CvScope, Distance, EmbeddingOutput, EmbeddingSpec, Embeddings, GraphEmbedder,
    GraphInput, GraphTaskError, LssvmForm, Method, NystromMethod, Outcome, Protocol, ReconstructionNorms, Result,
    Scaling, Selection, Task,
};
use ksvd_linalg::{Progress, ProgressFn, Vocabulary};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Instant;

use crate::cache::SharedEmbeddings;
use crate::rows::Row;

/// Mean and sample standard deviation ([`ksvd_metrics::mean_std`], `n − 1`); `NaN` for no values.
fn mean_std_or_nan(v: &[f64]) -> (f64, f64) {
    ksvd_metrics::mean_std(v).unwrap_or((f64::NAN, f64::NAN))
}

/// A result row of a cell: value, seed, the rayon pool's size.
fn result_row(dataset: &str, method: &str, metric: &str, value: f64, seed: u64) -> Row {
    Row::ok(dataset, method, metric, value)
        .seed(seed)
        .threads(rayon::current_num_threads() as u32)
}

/// Per-dataset overrides of a config (absent fields keep the global value).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DatasetOverride {
    /// Components per side for this dataset.
    pub components: Option<usize>,
    /// Solver for this dataset.
    pub solver: Option<Solver>,
    /// Solver of single methods on this dataset, keyed by method id (`pca`, `kpca`, `svd`,
    /// `ksvd_rbf`, `ksvd_sne`); the other methods take `solver`.
    pub method_solvers: BTreeMap<String, Solver>,
    /// Bandwidth grid (multiples of the rule) for this dataset.
    pub gamma_grid: Option<Vec<f64>>,
    /// Solver of the sampled block of the asymmetric Nyström method for this dataset (Nyström
    /// F1 figure only; Table 1 rejects it).
    pub nystrom_inner: Option<InnerSolver>,
}

impl DatasetOverride {
    /// Checks the overridden values (the dataset name is checked by the caller).
    fn validate(&self) -> Result<()> {
        if let Some(c) = self.components {
            ensure(c >= 1, "overrides.components", c, "must be at least 1")?;
        }
        if let Some(g) = &self.gamma_grid {
            validate_grid(g)?;
        }
        if let Some(s) = &self.solver {
            s.validate()?;
        }
        for (id, s) in &self.method_solvers {
            ensure(
                Method::ALL.iter().any(|m| m.id() == id),
                "overrides.method_solvers",
                id,
                "not a method id (pca, kpca, svd, ksvd_rbf, ksvd_sne)",
            )?;
            s.validate()?;
        }
        Ok(())
    }
}

/// How a node-classification and reconstruction evaluation is run (shared by every method,
/// including externally computed embeddings).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EvalConfig {
    /// Random train/test splits ("trials"); trial `t` uses split seed `seed + t`. Paper: 10.
    pub trials: usize,
    /// Fraction of the labelled nodes used for training (stratified by class for single-label
    /// graphs). Not stated by the paper; AsK-LS uses 0.6.
    pub train_fraction: f64,
    /// LS-SVM regularisation `γ` (paper: 1), one-vs-rest, linear kernel on the features.
    pub lssvm_regularization: f64,
    /// Primal or dual LS-SVM solve (same model; `auto` picks the cheaper).
    pub lssvm_form: LssvmForm,
    /// Standardise every feature column to zero mean and unit variance before the LS-SVM, as
    /// LS-SVMlab (the MATLAB toolbox of the paper's group) does by default (`initlssvm`'s
    /// `'preprocess'`, applied by `prelssvm`). Statistics over all labelled nodes (the features
    /// are unsupervised; no label is used). Default `true`. The paper does not say; without it
    /// the fixed regularisation 1 makes the result depend on the features' scale (unit vectors
    /// versus projection scores).
    pub standardize_features: bool,
    /// Folds of the hyper-parameter cross-validation on each training part (paper: 10).
    pub cv_folds: usize,
    /// Score maximised by the cross-validation.
    pub cv_metric: CvMetric,
    /// Nested CV in every trial, or only in the first.
    pub cv_scope: CvScope,
    /// Distance of the reconstruction's nearest-neighbour search (rows `l1`, `l2`).
    pub reconstruction_distance: Distance,
    /// Further distances reported with `setting = "distance=<name>"`.
    pub extra_distances: Vec<Distance>,
    /// Exclude `v` itself from the candidates of its own reconstruction.
    pub exclude_self: bool,
    /// With `standardize_features` on, also classify the unstandardised features (bandwidth
    /// chosen by its own CV) and report them with `setting = "features=unstandardized"`. The
    /// embeddings are shared, so this costs only the LS-SVM fits.
    pub also_unstandardized: bool,
}

impl Default for EvalConfig {
    fn default() -> Self {
        EvalConfig {
            trials: 10,
            train_fraction: 0.6,
            lssvm_regularization: 1.0,
            lssvm_form: LssvmForm::Auto,
            standardize_features: true,
            cv_folds: 10,
            cv_metric: CvMetric::MacroF1,
            cv_scope: CvScope::PerTrial,
            reconstruction_distance: Distance::Euclidean,
            extra_distances: vec![Distance::InnerProduct],
            exclude_self: true,
            also_unstandardized: false,
        }
    }
}

impl EvalConfig {
    fn validate(&self) -> Result<()> {
        ensure(self.trials >= 1, "trials", self.trials, "must be at least 1")?;
        ensure(
            self.train_fraction > 0.0 && self.train_fraction < 1.0,
            "train_fraction",
            self.train_fraction,
            "must lie in (0, 1)",
        )?;
        ensure(
            self.lssvm_regularization.is_finite() && self.lssvm_regularization > 0.0,
            "lssvm_regularization",
            self.lssvm_regularization,
            "must be positive and finite",
        )?;
        ensure(self.cv_folds >= 2, "cv_folds", self.cv_folds, "must be at least 2")?;
        Ok(())
    }

    fn classifier(&self) -> ClassifierOptions {
        ClassifierOptions {
            reg: self.lssvm_regularization,
            form: self.lssvm_form,
            metric: self.cv_metric,
            standardize: self.standardize_features,
        }
    }
}

/// How the feature budget `components` is shared by two-sided methods (SVD, KSVD).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TwoSided {
    /// `components / 2` source plus `components / 2` target columns, so every method has the same
    /// number of features (HOPE's convention, whose protocol the paper follows).
    #[default]
    Split,
    /// `components` columns per side (`2 × components` features).
    PerSide,
}

/// Number of singular triplets per side for `method` with a budget of `components` features.
fn method_rank(components: usize, method: Method, two_sided: TwoSided) -> usize {
    if method.is_two_sided() && two_sided == TwoSided::Split {
        (components / 2).max(1)
    } else {
        components
    }
}

/// How self-loops of the loaded graph are treated (see `ksvd_datasets::SelfLoops`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LoadSelfLoops {
    /// Keep the file's self-loops (CiteSeer 124, Pubmed 3, others none).
    #[default]
    AsInFile,
    /// Add `v → v` for every node (Twitch PT then has the paper's 64 510 arcs).
    AddMissing,
    /// Drop all self-loops.
    Remove,
}

impl LoadSelfLoops {
    fn options(self) -> GraphOptions {
        GraphOptions::default().self_loops(match self {
            LoadSelfLoops::AsInFile => SelfLoops::AsInFile,
            LoadSelfLoops::AddMissing => SelfLoops::AddMissing,
            LoadSelfLoops::Remove => SelfLoops::Remove,
        })
    }
}

/// Table 1 of the paper: node classification (micro/macro F1) and graph reconstruction (ℓ1, ℓ2)
/// on five graphs with PCA, KPCA, SVD, KSVD (RBF), KSVD (SNE). `Default` is the full protocol
/// (measured to finish in under 30 minutes on 2 cores), [`Table1Config::quick`] the CI variant.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Table1Config {
    /// Dataset ids (`cora`, `citeseer`, `pubmed`, `twitch_pt`, `blogcatalog`).
    pub datasets: Vec<String>,
    /// Methods, from `pca`, `kpca`, `svd`, `ksvd_rbf`, `ksvd_sne`.
    pub methods: Vec<Method>,
    /// Base seed: splits (`seed + t`), folds, solvers.
    pub seed: u64,
    /// Number of features per node (paper: "the extracted 1000 components"), capped by the
    /// number of nodes and by `overrides.<dataset>.components`; see `two_sided`.
    pub components: usize,
    /// Whether two-sided methods split `components` between source and target (default) or get
    /// `components` per side.
    pub two_sided: TwoSided,
    /// Graph input transform `A → X` (paper: unstated; AsK-LS: `row-normalized-self-loops`).
    pub graph_input: GraphInput,
    /// Self-loop policy when loading the graphs (also defines the reconstruction target `X`).
    pub graph_self_loops: LoadSelfLoops,
    /// Features: singular vectors, or projection scores.
    pub scaling: Scaling,
    /// Centre KPCA's `K` and KSVD's `G` on both sides (the paper assumes centred feature maps).
    pub center_kernels: bool,
    /// Truncated-SVD solver of the embeddings (`ksvd::Solver`, externally tagged in TOML:
    /// `{ Auto = { tol = 1e-8 } }`, `{ Rsvd = { oversampling = 10, power_iters = 2 } }`, `"Exact"`;
    /// the seed is `seed`).
    pub solver: Solver,
    /// Bandwidth grid in units of the paper's rule: `γ = k sqrt(M γ_x)` for each `k` listed.
    /// The same grid is cross-validated for KPCA, KSVD (RBF) and KSVD (SNE).
    pub gamma_grid: Vec<f64>,
    /// Classification and reconstruction protocol.
    pub eval: EvalConfig,
    /// Per-dataset overrides (components, solver, grid), keyed by dataset id.
    pub overrides: BTreeMap<String, DatasetOverride>,
    /// Datasets run a second time with every arc reversed (`Aᵀ`: rows become the in-links),
    /// reported with `setting = "arcs=reversed"`. For Cora and CiteSeer, whose files list the
    /// cited paper first, this is the reading "first column → second column" of the files.
    pub also_reversed: Vec<String>,
    /// Split off the exactly repeated singular values of twin nodes before solving
    /// (`ksvd_graph_tasks::EmbeddingSpec::split_twins`; same values, another basis inside a
    /// repeated value that the rank cuts). Default `false`: a plain truncated SVD.
    pub split_twins: bool,
}

impl Default for Table1Config {
    fn default() -> Self {
        let mut overrides = BTreeMap::new();
        // Time budget (30 min on 2 cores for the whole table): the two large graphs get 500
        // features instead of 1000 and 2 power iterations instead of 4. See the crate docs for
        // the measured times.
        let large = DatasetOverride {
            components: Some(500),
            solver: Some(Solver::Rsvd(RsvdParams {
                oversampling: 10,
                power_iters: 2,
                ..RsvdParams::default()
            })),
            gamma_grid: None,
            nystrom_inner: None,
            method_solvers: BTreeMap::new(),
        };
        overrides.insert("pubmed".to_string(), large.clone());
        overrides.insert("blogcatalog".to_string(), large);
        Table1Config {
            datasets: ["cora", "citeseer", "pubmed", "twitch_pt", "blogcatalog"]
                .map(String::from)
                .to_vec(),
            methods: Method::ALL.to_vec(),
            seed: 0,
            components: 1000,
            two_sided: TwoSided::Split,
            graph_input: GraphInput::RowNormalizedSelfLoops,
            graph_self_loops: LoadSelfLoops::AsInFile,
            scaling: Scaling::Vectors,
            center_kernels: true,
            solver: Solver::Rsvd(RsvdParams {
                oversampling: 10,
                power_iters: 4,
                ..RsvdParams::default()
            }),
            gamma_grid: vec![0.25, 0.5, 1.0, 2.0, 4.0, 8.0],
            eval: EvalConfig::default(),
            overrides,
            also_reversed: vec![],
            split_twins: false,
        }
    }
}

// The named presets are the tests'; `reproduce` takes its configs from the spec files.
#[cfg(test)]
impl Table1Config {
    /// The CI variant: Cora and Citeseer, all five methods, 512 features, 3 trials, 5-fold CV
    /// over four bandwidths.
    pub fn quick() -> Self {
        Table1Config {
            datasets: vec!["cora".into(), "citeseer".into()],
            components: 512,
            gamma_grid: vec![0.5, 1.0, 2.0, 4.0],
            eval: EvalConfig {
                trials: 3,
                cv_folds: 5,
                ..EvalConfig::default()
            },
            overrides: BTreeMap::new(),
            ..Table1Config::default()
        }
    }
}

impl Table1Config {
    /// Checks the config (datasets and overrides name datasets, grids and solvers are valid).
    pub fn validate(&self) -> Result<()> {
        validate_shared(
            &self.datasets,
            self.methods.len(),
            self.components,
            &self.gamma_grid,
            &self.solver,
            &self.overrides,
        )?;
        for (name, o) in &self.overrides {
            ensure(
                o.nystrom_inner.is_none(),
                "overrides.nystrom_inner",
                name,
                "Table 1 has no Nystrom embeddings; remove the key",
            )?;
        }
        for d in self.datasets.iter().chain(&self.also_reversed) {
            d.parse::<DatasetName>()?;
        }
        self.eval.validate()
    }
}

/// The checks Table 1 and the Nystrom figure share: datasets and methods listed, at least one
/// component, a valid bandwidth grid and solver, overrides that name datasets and are valid.
fn validate_shared(
    datasets: &[String],
    methods: usize,
    components: usize,
    gamma_grid: &[f64],
    solver: &Solver,
    overrides: &BTreeMap<String, DatasetOverride>,
) -> Result<()> {
    ensure(!datasets.is_empty(), "datasets", "[]", "list at least one dataset")?;
    ensure(methods > 0, "methods", "[]", "list at least one method")?;
    ensure(components >= 1, "components", components, "must be at least 1")?;
    validate_grid(gamma_grid)?;
    solver.validate()?;
    for (name, o) in overrides {
        name.parse::<DatasetName>()?;
        o.validate()?;
    }
    Ok(())
}

fn validate_grid(g: &[f64]) -> Result<()> {
    ensure(
        !g.is_empty(),
        "gamma_grid",
        "[]",
        "list at least one multiple of the bandwidth rule",
    )?;
    for &k in g {
        ensure(
            k.is_finite() && k > 0.0,
            "gamma_grid",
            k,
            "every multiple must be positive and finite",
        )?;
    }
    Ok(())
}

/// The settings of an exact embedding that Table 1 and the Nyström figure both read from their
/// configs: one rule turns them into an [`EmbeddingSpec`], so that equal settings give equal
/// specs (and the figure's exact references serve Table 1 through [`SharedEmbeddings`]).
struct EmbeddingProtocol {
    transform: GraphInput,
    scaling: Scaling,
    center_kernels: bool,
    split_twins: bool,
}

impl EmbeddingProtocol {
    /// The spec of `method`'s embedding at `rank` and bandwidth `gamma`, with the dataset's
    /// solver for `method`.
    fn spec(&self, res: &Resolved, method: Method, rank: usize, gamma: Option<f64>, seed: u64) -> EmbeddingSpec {
        EmbeddingSpec {
            method,
            rank,
            transform: self.transform,
            scaling: self.scaling,
            center_kernels: self.center_kernels,
            gamma,
            solver: res.solver_for(method).clone(),
            seed,
            split_twins: self.split_twins,
        }
    }
}

/// Settings of one dataset after overrides.
struct Resolved {
    components: usize,
    solver: Solver,
    method_solvers: BTreeMap<String, Solver>,
    grid: Vec<f64>,
}

impl Resolved {
    /// The solver of `method` on this dataset.
    fn solver_for(&self, method: Method) -> &Solver {
        self.method_solvers.get(method.id()).unwrap_or(&self.solver)
    }
}

fn resolve(
    name: &str,
    components: usize,
    solver: &Solver,
    grid: &[f64],
    overrides: &BTreeMap<String, DatasetOverride>,
    n: usize,
) -> Resolved {
    let o = overrides.get(name).cloned().unwrap_or_default();
    Resolved {
        components: o.components.unwrap_or(components).min(components).min(n),
        solver: o.solver.unwrap_or_else(|| solver.clone()),
        method_solvers: o.method_solvers,
        grid: o.gamma_grid.unwrap_or_else(|| grid.to_vec()),
    }
}

/// What [`evaluate_method`] found.
struct MethodResult {
    chosen: Vec<usize>,
    outcomes: Vec<Outcome>,
    /// Further classification settings on the same embeddings: (setting, chosen, outcomes).
    extra: Vec<(String, Vec<usize>, Vec<Outcome>)>,
    recon_index: usize,
    recon: Vec<(Distance, ReconstructionNorms)>,
    classify_seconds: f64,
    recon_seconds: f64,
}

impl MethodResult {
    /// What the evaluation chose, for the method's note.
    fn selection(&self) -> Selection<'_> {
        Selection {
            chosen: &self.chosen,
            reconstruction: self.recon_index,
            form: self.outcomes[0].form,
            classify_seconds: self.classify_seconds,
            reconstruct_seconds: self.recon_seconds,
        }
    }
}

/// Classification over all candidates (CV picks one per trial), reconstruction with the candidate
/// chosen most often (ties: the smaller index).
fn evaluate_method(
    graph: &Graph,
    task: &Task,
    protocol: &Protocol,
    eval: &EvalConfig,
    candidates: &[&Embeddings],
) -> Result<MethodResult> {
    let t0 = Instant::now();
    let with_cv = candidates.len() > 1;
    for c in candidates {
        c.validate(graph.n_nodes())?;
    }
    // Every (classifier setting, candidate) pair is independent and deterministic (the dense
    // solves run sequentially), so they are evaluated on the thread pool: same results, both
    // cores busy during the many small LS-SVM solves of the cross-validation.
    let mut settings = vec![eval.classifier()];
    if eval.standardize_features && eval.also_unstandardized {
        settings.push(ClassifierOptions {
            standardize: false,
            ..eval.classifier()
        });
    }
    let jobs: Vec<(usize, usize)> = (0..settings.len())
        .flat_map(|s| (0..candidates.len()).map(move |c| (s, c)))
        .collect();
    let mut results: Vec<Outcome> = jobs
        .par_iter()
        .map(|&(s, c)| evaluate_features(task, candidates[c].features().view(), protocol, &settings[s], with_cv))
        .collect::<Result<_>>()?;
    let raw = results.split_off(candidates.len());
    let outcomes = results;
    let chosen = select(&outcomes);
    let mut extra = vec![];
    if !raw.is_empty() {
        extra.push(("features=unstandardized".to_string(), select(&raw), raw));
    }
    let classify_seconds = t0.elapsed().as_secs_f64();
    let mut counts = vec![0usize; candidates.len()];
    for &c in &chosen {
        counts[c] += 1;
    }
    let recon_index = (0..candidates.len()).fold(0, |best, i| if counts[i] > counts[best] { i } else { best });
    let t1 = Instant::now();
    let mut recon = vec![];
    let mut distances = vec![eval.reconstruction_distance];
    distances.extend(
        eval.extra_distances
            .iter()
            .filter(|&&d| d != eval.reconstruction_distance),
    );
    for d in distances {
        recon.push((
            d,
            evaluate_reconstruction(&graph.adjacency, candidates[recon_index], d, eval.exclude_self)?,
        ));
    }
    Ok(MethodResult {
        chosen,
        outcomes,
        extra,
        recon_index,
        recon,
        classify_seconds,
        recon_seconds: t1.elapsed().as_secs_f64(),
    })
}

/// `a; b`, or whichever is non-empty.
fn join_setting(a: &str, b: &str) -> String {
    match (a.is_empty(), b.is_empty()) {
        (true, _) => b.to_string(),
        (_, true) => a.to_string(),
        _ => format!("{a}; {b}"),
    }
}

/// Rows of one evaluated method; `prefix` is prepended to every row's setting (e.g.
/// `arcs=reversed`).
fn method_rows(
    dataset: &str,
    method: &str,
    seed: u64,
    r: &MethodResult,
    seconds: f64,
    note: Option<&str>,
    prefix: &str,
) -> Vec<Row> {
    let mut rows = vec![];
    let mut push = |metric: &str, setting: String, value: f64, std: Option<f64>, n: usize| {
        let row = result_row(dataset, method, metric, value, seed)
            .setting(join_setting(prefix, &setting))
            .trials(n as u32, std)
            .seconds(seconds);
        rows.push(match note {
            Some(note) => row.note(note),
            None => row,
        });
    };
    let extra = r.extra.iter().map(|(s, c, o)| (s.as_str(), c, o));
    for (setting, chosen, outcomes) in std::iter::once(("", &r.chosen, &r.outcomes)).chain(extra) {
        let trials = chosen.len();
        let test: Vec<(f64, f64)> = (0..trials).map(|t| outcomes[chosen[t]].test[t]).collect();
        let (mi, mi_sd) = mean_std_or_nan(&test.iter().map(|t| t.0).collect::<Vec<_>>());
        let (ma, ma_sd) = mean_std_or_nan(&test.iter().map(|t| t.1).collect::<Vec<_>>());
        push("micro_f1", setting.to_string(), mi, Some(mi_sd), trials);
        push("macro_f1", setting.to_string(), ma, Some(ma_sd), trials);
    }
    for (i, (d, n)) in r.recon.iter().enumerate() {
        let setting = if i == 0 {
            String::new()
        } else {
            format!("distance={}", d.id())
        };
        push("l1", setting.clone(), n.l1, None, 1);
        push("l2", setting.clone(), n.l2, None, 1);
        push("wrong_entries", setting.clone(), n.wrong_entries as f64, None, 1);
        push("frobenius", setting, n.frobenius, None, 1);
    }
    rows
}

/// A graph with its classification task: what the cells of one dataset share.
pub struct LoadedGraph {
    graph: Graph,
    task: Task,
}

/// Loads a graph dataset (an absent file stays a [`ksvd_datasets::DatasetError`] in the
/// error's chain: the driver reports `missing-data`).
pub fn load(root: &DataRoot, name: &str, self_loops: LoadSelfLoops) -> anyhow::Result<LoadedGraph> {
    let graph = root.graph(name.parse::<DatasetName>()?, &self_loops.options())?;
    let task = Task::from_labels(&graph.labels)?;
    Ok(LoadedGraph { graph, task })
}

/// A method of Table 1: ours ([`Method`]) or a baseline of `ksvd-baselines` ([`GraphBaseline`]),
/// both embedding through [`GraphEmbedder`] and evaluated by the same cell ([`method_cell`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Table1Method {
    /// PCA, KPCA, SVD, KSVD (RBF), KSVD (SNE).
    Ours(Method),
    /// DeepWalk, HOPE, DiGAE.
    Baseline(GraphBaseline),
}

impl Table1Method {
    /// The method of a spec's method id (`None`: not a method of this runner).
    pub fn from_id(id: &str) -> Option<Table1Method> {
        let ours = Method::ALL.into_iter().find(|m| m.id() == id).map(Table1Method::Ours);
        ours.or_else(|| {
            GraphBaseline::ALL
                .into_iter()
                .find(|m| m.id() == id)
                .map(Table1Method::Baseline)
        })
    }

    /// Whether the method is also evaluated in the diagnostic settings (`also_reversed`,
    /// `eval.also_unstandardized`, `eval.extra_distances`). They probe our preprocessing, so
    /// only ours are; the baselines are evaluated in the paper's setting (reversing the arcs
    /// would also double their cost).
    fn diagnostic_settings(self) -> bool {
        matches!(self, Table1Method::Ours(_))
    }

    /// The evaluation protocol of this method: `eval`, without the diagnostic settings unless
    /// [`Self::diagnostic_settings`].
    fn eval(self, eval: &EvalConfig) -> Cow<'_, EvalConfig> {
        if self.diagnostic_settings() {
            Cow::Borrowed(eval)
        } else {
            Cow::Owned(EvalConfig {
                also_unstandardized: false,
                extra_distances: vec![],
                ..eval.clone()
            })
        }
    }

    /// The method's embedder on a dataset with settings `res` (ours) and the baselines'
    /// hyper-parameters `baselines`.
    fn embedder<'a>(
        self,
        config: &'a Table1Config,
        res: &'a Resolved,
        baselines: &'a GraphBaselineConfig,
        shared: &'a SharedEmbeddings,
    ) -> Box<dyn Embedder + 'a> {
        match self {
            Table1Method::Ours(method) => Box::new(Ours {
                config,
                res,
                method,
                shared,
                reused: Default::default(),
            }),
            Table1Method::Baseline(b) => Box::new(b.with(baselines)),
        }
    }
}

/// Any [`GraphEmbedder`] with its error as text, so that ours and the baselines fit one list.
trait Embedder {
    fn id(&self) -> &'static str;
    fn candidates(&self, adjacency: &ksvd_linalg::CsrMatrix, seed: u64) -> std::result::Result<Candidates, String>;
    fn note(&self, candidates: &Candidates, selection: &Selection<'_>) -> Option<String>;
}

impl<E: GraphEmbedder> Embedder for E {
    fn id(&self) -> &'static str {
        GraphEmbedder::id(self)
    }
    fn candidates(&self, adjacency: &ksvd_linalg::CsrMatrix, seed: u64) -> std::result::Result<Candidates, String> {
        self.embed_candidates(adjacency, seed).map_err(|e| e.to_string())
    }
    fn note(&self, candidates: &Candidates, selection: &Selection<'_>) -> Option<String> {
        GraphEmbedder::note(self, candidates, selection)
    }
}

/// Ours in Table 1: `method` with a dataset's resolved settings. A method with a bandwidth
/// embeds once per multiple `k` of the bandwidth rule in the grid (the evaluation picks one per
/// trial by CV); the others embed once. The note states the protocol, the bandwidths chosen,
/// the times and the solver's certificate.
struct Ours<'a> {
    config: &'a Table1Config,
    res: &'a Resolved,
    method: Method,
    /// Embeddings an earlier spec of the run computed (nystrom-f1's exact references).
    shared: &'a SharedEmbeddings,
    /// How many of the last candidates were read from `shared` (for the note).
    reused: std::cell::Cell<usize>,
}

impl Ours<'_> {
    fn spec(&self, rank: usize, gamma: Option<f64>, seed: u64) -> EmbeddingSpec {
        let c = self.config;
        let protocol = EmbeddingProtocol {
            transform: c.graph_input,
            scaling: c.scaling,
            center_kernels: c.center_kernels,
            split_twins: c.split_twins,
        };
        protocol.spec(self.res, self.method, rank, gamma, seed)
    }

    /// The bandwidth rule's `γ` on `adjacency`, for methods with a bandwidth.
    fn bandwidth_rule(&self, adjacency: &ksvd_linalg::CsrMatrix) -> Result<Option<f64>> {
        if self.method.has_bandwidth() {
            Ok(Some(bandwidth(adjacency, self.config.graph_input, 1.0)?))
        } else {
            Ok(None)
        }
    }
}

impl GraphEmbedder for Ours<'_> {
    type Error = GraphTaskError;

    fn id(&self) -> &'static str {
        self.method.id()
    }

    /// The embedding at the grid's first multiple.
    fn embed_graph(&self, adjacency: &ksvd_linalg::CsrMatrix, seed: u64) -> Result<Embeddings> {
        let gamma = self.bandwidth_rule(adjacency)?.map(|b| self.res.grid[0] * b);
        let rank = method_rank(self.res.components, self.method, self.config.two_sided);
        Ok(embed(adjacency, &self.spec(rank, gamma, seed))?.embeddings)
    }

    fn embed_candidates(&self, adjacency: &ksvd_linalg::CsrMatrix, seed: u64) -> Result<Candidates> {
        let base = self.bandwidth_rule(adjacency)?;
        let ks: Vec<Option<f64>> = if base.is_some() {
            self.res.grid.iter().map(|&k| Some(k)).collect()
        } else {
            vec![None]
        };
        let mut list = vec![];
        let mut rank = method_rank(self.res.components, self.method, self.config.two_sided);
        self.reused.set(0);
        for k in &ks {
            let spec = self.spec(rank, k.zip(base).map(|(k, b)| k * b), seed);
            let e = self.shared.embed(adjacency, &spec, false)?;
            self.reused.set(self.reused.get() + usize::from(e.reused));
            let out = e.output;
            rank = out.rank;
            list.push(Candidate {
                embeddings: out.embeddings,
                // Where it was computed, if an earlier spec of the run did.
                seconds: e.seconds,
                rank: Some(out.rank),
                max_residual: out.max_residual,
            });
        }
        Ok(Candidates {
            list,
            bandwidth_rule: base,
        })
    }

    fn note(&self, candidates: &Candidates, r: &Selection<'_>) -> Option<String> {
        let (config, res, method) = (self.config, self.res, self.method);
        let rank = candidates.list.last().and_then(|c| c.rank).unwrap_or(0);
        let mut note = format!(
            "graph_input={}; rank={rank}{}; solver={}; scaling={:?}; standardized={}; train_fraction={}; trials={}; lssvm={:?}",
            config.graph_input.name(),
            if method.is_two_sided() { " per side, sides concatenated" } else { "" },
            describe_solver(res.solver_for(method)),
            config.scaling,
            config.eval.standardize_features,
            config.eval.train_fraction,
            config.eval.trials,
            r.form,
        );
        if let Some(b) = candidates.bandwidth_rule {
            let chosen: Vec<String> = r.chosen.iter().map(|&i| format!("{}", res.grid[i])).collect();
            let _ = write!(
                note,
                "; gamma = k * {b:.4} (rule sqrt(M var X)); CV ({}-fold, {:?}, {:?}) chose k per trial [{}]; reconstruction at k={} (gamma={:.4})",
                config.eval.cv_folds,
                config.eval.cv_metric,
                config.eval.cv_scope,
                chosen.join(","),
                res.grid[r.reconstruction],
                res.grid[r.reconstruction] * b
            );
            if config.center_kernels {
                note.push_str("; kernel centred");
            }
        }
        let embed_secs: Vec<f64> = candidates.list.iter().map(|c| c.seconds).collect();
        let _ = write!(
            note,
            "; seconds: embed {:.1} ([{}]), classify {:.1}, reconstruct {:.1}",
            embed_secs.iter().sum::<f64>(),
            embed_secs
                .iter()
                .map(|s| format!("{s:.1}"))
                .collect::<Vec<_>>()
                .join(","),
            r.classify_seconds,
            r.reconstruct_seconds
        );
        if self.reused.get() > 0 {
            let _ = write!(
                note,
                " ({} of the embeddings computed by an earlier spec of the run, nystrom-f1's exact references; their times are those)",
                self.reused.get()
            );
        }
        // The solver's own certificate: the largest relative residual over the solves of the cell.
        let worst = candidates
            .list
            .iter()
            .filter_map(|c| c.max_residual)
            .fold(None, |a: Option<f64>, x| Some(a.map_or(x, |a| a.max(x))));
        if let Some(w) = worst {
            let _ = write!(note, "; max relative residual {w:.1e}");
        }
        Some(note)
    }
}

/// The rows of one method on one graph (`prefix`: the graph's setting, e.g. `arcs=reversed`):
/// its candidate embeddings, LS-SVM classification with one candidate per trial chosen by CV,
/// reconstruction with the candidate chosen most often, the method's note; the error if a step
/// fails.
fn method_cell(
    embedder: &dyn Embedder,
    dataset: &str,
    graph: &Graph,
    task: &Task,
    protocol: &Protocol,
    eval: &EvalConfig,
    seed: u64,
    prefix: &str,
) -> std::result::Result<Vec<Row>, String> {
    let t0 = Instant::now();
    let c = embedder.candidates(&graph.adjacency, seed)?;
    let list: Vec<&Embeddings> = c.list.iter().map(|c| &c.embeddings).collect();
    let r = evaluate_method(graph, task, protocol, eval, &list).map_err(|e| e.to_string())?;
    let note = embedder.note(&c, &r.selection());
    let seconds = t0.elapsed().as_secs_f64();
    Ok(method_rows(
        dataset,
        embedder.id(),
        seed,
        &r,
        seconds,
        note.as_deref(),
        prefix,
    ))
}

/// The Table 1 cell: one method (ours or a baseline; the baselines with the hyper-parameters
/// `baselines`, `config.methods` unused) on one loaded graph (`config`'s settings for
/// `graph`'s dataset) with `seed`: the method's candidate embeddings (ours with a bandwidth:
/// one per multiple of the grid), LS-SVM node classification over `eval.trials` splits with the
/// candidate chosen by `eval.cv_folds`-fold CV on each training part, and graph reconstruction
/// with the candidate chosen most often ([`method_cell`]); ours again with every arc reversed
/// (`setting = "arcs=reversed"`) when the dataset is in `also_reversed`. Ours read the
/// embeddings an earlier spec of the run published in `shared`. Tidy rows (see [`Row`]); an
/// error if a step fails. `config` must be valid (`Table1Config::validate`).
pub fn table1_cell(
    config: &Table1Config,
    method: Table1Method,
    baselines: &GraphBaselineConfig,
    loaded: &LoadedGraph,
    seed: u64,
    shared: &SharedEmbeddings,
    progress: &mut ProgressFn<'_>,
) -> anyhow::Result<Vec<Row>> {
    let (graph, task) = (&loaded.graph, &loaded.task);
    let name = graph.name.as_str();
    let flipped;
    let mut graphs: Vec<(&Graph, &str)> = vec![(graph, "")];
    if method.diagnostic_settings() && config.also_reversed.iter().any(|d| d == name) {
        flipped = Graph {
            adjacency: graph.adjacency.transpose(),
            ..graph.clone()
        };
        graphs.push((&flipped, "arcs=reversed"));
    }
    let res = resolve(
        name,
        config.components,
        &config.solver,
        &config.gamma_grid,
        &config.overrides,
        graph.n_nodes(),
    );
    let ev = &config.eval;
    let protocol = Protocol::new(task, ev.trials, ev.train_fraction, ev.cv_folds, ev.cv_scope, seed)?;
    let embedder = method.embedder(config, &res, baselines, shared);
    let eval = method.eval(&config.eval);
    let mut rows = vec![];
    for (v, &(graph, prefix)) in graphs.iter().enumerate() {
        let stage = if prefix.is_empty() {
            "embedding"
        } else {
            "embedding (arcs reversed)"
        };
        progress(&Progress::new(stage, v, Some(graphs.len())));
        let cell = method_cell(embedder.as_ref(), name, graph, task, &protocol, &eval, seed, prefix);
        rows.extend(cell.map_err(|e| match prefix {
            "" => anyhow::anyhow!(e),
            _ => anyhow::anyhow!("{prefix}: {e}"),
        })?);
    }
    Ok(rows)
}

/// The Nyström F1-vs-m figure: KSVD (RBF) by the asymmetric Nyström method and KPCA (RBF) by the
/// symmetric Nyström method, node-classification F1 for each number of subsamples `m`, with the
/// exact solutions as references.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NystromF1Config {
    /// Dataset ids (paper: cora, citeseer, pubmed).
    pub datasets: Vec<String>,
    /// `ksvd` (asymmetric Nyström) and/or `kpca` (symmetric Nyström).
    pub methods: Vec<NystromMethod>,
    /// Subsample counts `m` per dataset id (`m` rows and `m` columns for the asymmetric method,
    /// `m` landmarks for the symmetric one). Values above the node count are clamped.
    pub m_grid: BTreeMap<String, Vec<usize>>,
    /// Also report the exact solutions (methods `ksvd_exact`, `kpca_exact`, setting `exact`).
    pub include_exact: bool,
    /// Base seed (splits, folds, solvers, landmarks).
    pub seed: u64,
    /// Number of features per node (as in Table 1); the rank per side is `min(r, m)` with `r`
    /// from `two_sided` (lower if the sampled block is numerically rank-deficient; reported in
    /// the note).
    pub components: usize,
    /// How two-sided KSVD shares `components` between source and target.
    pub two_sided: TwoSided,
    /// Graph input transform.
    pub graph_input: GraphInput,
    /// Self-loop policy when loading the graphs.
    pub graph_self_loops: LoadSelfLoops,
    /// Features: vectors or projection scores.
    pub scaling: Scaling,
    /// Centre `K` and `G` (the Nyström methods then sample the centred matrices).
    pub center_kernels: bool,
    /// Solver of the exact reference embeddings (`ksvd::Solver`, as in [`Table1Config::solver`]).
    pub solver: Solver,
    /// Solver of the sampled `m × m` block (asymmetric Nyström); `overrides.<dataset>.nystrom_inner`
    /// replaces it for one dataset (see [`NystromF1Config::inner_for`]).
    /// (`ksvd::InnerSolver`: `"Dense"`, or `{ Rsvd = { oversampling = 10, power_iters = 2 } }`.)
    pub nystrom_inner: InnerSolver,
    /// Fresh landmarks in every trial (seed `seed + 7919 t`) rather than one landmark set.
    pub resample_landmarks: bool,
    /// Bandwidth grid (multiples of the rule); the bandwidth of every trial is chosen by CV on
    /// the exact embedding and reused by the Nyström embeddings of that trial.
    pub gamma_grid: Vec<f64>,
    /// Classification protocol (reconstruction settings unused).
    pub eval: EvalConfig,
    /// Per-dataset overrides.
    pub overrides: BTreeMap<String, DatasetOverride>,
    /// Split off the exactly repeated singular values of twin nodes before the exact solves
    /// (as [`Table1Config::split_twins`]; default `true`).
    pub split_twins: bool,
}

impl Default for NystromF1Config {
    fn default() -> Self {
        let mut m_grid = BTreeMap::new();
        m_grid.insert("cora".to_string(), vec![900, 1300, 1700, 2100, 2500, 2900]);
        m_grid.insert("citeseer".to_string(), vec![900, 1400, 1900, 2400, 2900, 3450]);
        m_grid.insert("pubmed".to_string(), vec![600, 1000, 2000, 4000, 8000]);
        let mut overrides = BTreeMap::new();
        // Pubmed (N = 19717): 500 components (250 per side), as in Table 1.
        let large = DatasetOverride {
            components: Some(500),
            ..DatasetOverride::default()
        };
        overrides.insert("pubmed".to_string(), large);
        NystromF1Config {
            datasets: vec!["cora".into(), "citeseer".into(), "pubmed".into()],
            methods: vec![NystromMethod::Ksvd, NystromMethod::Kpca],
            m_grid,
            include_exact: true,
            seed: 0,
            components: 1000,
            two_sided: TwoSided::Split,
            graph_input: GraphInput::RowNormalizedSelfLoops,
            graph_self_loops: LoadSelfLoops::AsInFile,
            scaling: Scaling::Vectors,
            center_kernels: true,
            solver: Solver::Auto { tol: 1e-8 },
            nystrom_inner: InnerSolver::Dense,
            resample_landmarks: false,
            gamma_grid: vec![0.25, 0.5, 1.0, 2.0, 4.0, 8.0],
            eval: EvalConfig::default(),
            overrides,
            split_twins: true,
        }
    }
}

// The named preset is the tests'; `reproduce` takes its configs from the spec files.
#[cfg(test)]
impl NystromF1Config {
    /// The CI variant: Cora, m in {500, 1000, 2000, 2708}, 256 features, 3 trials, 5-fold CV over
    /// four bandwidths.
    pub fn quick() -> Self {
        let mut m_grid = BTreeMap::new();
        m_grid.insert("cora".to_string(), vec![500, 1000, 2000, 2708]);
        NystromF1Config {
            datasets: vec!["cora".into()],
            m_grid,
            components: 256,
            gamma_grid: vec![0.5, 1.0, 2.0, 4.0],
            eval: EvalConfig {
                trials: 3,
                cv_folds: 5,
                ..EvalConfig::default()
            },
            overrides: BTreeMap::new(),
            ..NystromF1Config::default()
        }
    }
}

impl NystromF1Config {
    /// The inner solver of the asymmetric Nyström method on `dataset`: its override, else
    /// `nystrom_inner`.
    pub fn inner_for(&self, dataset: &str) -> InnerSolver {
        self.overrides
            .get(dataset)
            .and_then(|o| o.nystrom_inner)
            .unwrap_or(self.nystrom_inner)
    }

    /// Checks the config (every dataset has an `m` grid, overrides name datasets, grids and
    /// solvers are valid).
    pub fn validate(&self) -> Result<()> {
        validate_shared(
            &self.datasets,
            self.methods.len(),
            self.components,
            &self.gamma_grid,
            &self.solver,
            &self.overrides,
        )?;
        for d in &self.datasets {
            d.parse::<DatasetName>()?;
            let grid = self.m_grid.get(d).map(Vec::as_slice).unwrap_or(&[]);
            ensure(!grid.is_empty(), "m_grid", d, "every dataset needs a list of m values")?;
            for &m in grid {
                ensure(m >= 1, "m_grid", m, "m must be at least 1")?;
            }
        }
        self.eval.validate()
    }
}

/// The larger of two optional values (`None` if both are).
fn max_opt(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

/// Short description of a solver for notes: `auto(tol=1e-8)`, `rsvd(p=10,q=2)`, `lanczos(tol=1e-10)`,
/// `dense` (the exact SVD), `block-krylov(tol=1e-8)`, `nystrom(m=500)`.
fn describe_solver(solver: &Solver) -> String {
    match solver {
        Solver::Auto { tol } => format!("auto(tol={tol:e})"),
        Solver::Exact => "dense".into(),
        Solver::Lanczos(p) => format!("lanczos(tol={:e})", p.tol),
        Solver::Rsvd(p) => format!("rsvd(p={},q={})", p.oversampling, p.power_iters),
        Solver::BlockKrylov(p) => format!(
            "block-krylov(tol={:e},p={},depth<={})",
            p.tol, p.oversampling, p.max_depth
        ),
        Solver::Nystrom { landmarks, .. } => format!("nystrom(m={landmarks})"),
    }
}

/// Short description of the asymmetric Nyström method's inner solver for notes: `dense`,
/// `exact`, or `rsvd` with its parameters when they differ from the paper's `p = 10`, `q = 2`.
fn describe_inner(inner: InnerSolver) -> String {
    match inner {
        InnerSolver::Dense => "dense".into(),
        InnerSolver::Exact => "exact".into(),
        InnerSolver::Rsvd {
            oversampling: 10,
            power_iters: 2,
        } => "rsvd".into(),
        InnerSolver::Rsvd {
            oversampling,
            power_iters,
        } => format!("rsvd(p={oversampling},q={power_iters})"),
    }
}

/// `"max relative residual 1.2e-3"` (as in Table 1's notes), or `"residual not computed"` when
/// the solver did not report one.
fn residual_note(r: Option<f64>) -> String {
    r.map_or_else(
        || "residual not computed".to_string(),
        |r| format!("max relative residual {r:.1e}"),
    )
}

/// The exact embedding of `method` that the Nyström F1 cell compares with, at bandwidth `gamma`.
fn exact_spec(
    config: &NystromF1Config,
    res: &Resolved,
    method: NystromMethod,
    gamma: Option<f64>,
    seed: u64,
) -> EmbeddingSpec {
    let protocol = EmbeddingProtocol {
        transform: config.graph_input,
        scaling: config.scaling,
        center_kernels: config.center_kernels,
        split_twins: config.split_twins,
    };
    let rank = method_rank(res.components, method.exact(), config.two_sided);
    protocol.spec(res, method.exact(), rank, gamma, seed)
}

/// The Nyström F1 cell: one method on one loaded graph with `seed`. Rows: `method` (`ksvd`,
/// `kpca`), one per `m` of the dataset's grid (`setting = "m=<m>"`), and with `include_exact`
/// `ksvd_exact` / `kpca_exact` (`setting = "exact"`), metrics `micro_f1` and `macro_f1`, mean
/// and std over the trials. The bandwidth of every trial is chosen by CV on the exact
/// embedding and reused by the Nyström embeddings of that trial. The exact embeddings are
/// Table 1's (same graph, kernel, rank, solver and seed): they are published in `shared` for a
/// later spec of the run. `config` must be valid (`NystromF1Config::validate`).
pub fn nystrom_f1_cell(
    config: &NystromF1Config,
    method: NystromMethod,
    loaded: &LoadedGraph,
    seed: u64,
    shared: &SharedEmbeddings,
    progress: &mut ProgressFn<'_>,
) -> Result<Vec<Row>> {
    let t0 = Instant::now();
    let (graph, task) = (&loaded.graph, &loaded.task);
    let ev = &config.eval;
    let name = graph.name.as_str();
    let res = resolve(
        name,
        config.components,
        &config.solver,
        &config.gamma_grid,
        &config.overrides,
        graph.n_nodes(),
    );
    let inner = config.inner_for(name);
    let protocol = Protocol::new(task, ev.trials, ev.train_fraction, ev.cv_folds, ev.cv_scope, seed)?;
    let base = bandwidth(&graph.adjacency, config.graph_input, 1.0)?;
    let rank = method_rank(res.components, method.exact(), config.two_sided);
    let spec = |k: f64| exact_spec(config, &res, method, Some(k * base), seed);
    // Exact embeddings over the grid, bandwidth per trial by CV.
    let mut outcomes = vec![];
    let mut exact_residual = None;
    for &k in &res.grid {
        let out = shared.embed(&graph.adjacency, &spec(k), true)?.output;
        exact_residual = max_opt(exact_residual, out.max_residual);
        let e = out.embeddings;
        let f = e.features();
        outcomes.push(evaluate_features(
            task,
            f.view(),
            &protocol,
            &ev.classifier(),
            res.grid.len() > 1,
        )?);
    }
    let chosen = select(&outcomes);
    let chosen_k: Vec<String> = chosen.iter().map(|&i| format!("{}", res.grid[i])).collect();
    let exact_secs = t0.elapsed().as_secs_f64();
    let mut rows = vec![];
    let mut push = |method_id: String, setting: String, scores: &[(f64, f64)], secs: f64, note: String| {
        for (metric, pick) in [("micro_f1", 0), ("macro_f1", 1)] {
            let v: Vec<f64> = scores.iter().map(|s| if pick == 0 { s.0 } else { s.1 }).collect();
            let (mean, std) = mean_std_or_nan(&v);
            rows.push(
                result_row(name, &method_id, metric, mean, seed)
                    .setting(setting.clone())
                    .trials(v.len() as u32, Some(std))
                    .seconds(secs)
                    .note(note.clone()),
            );
        }
    };
    let common = format!(
        "graph_input={}; rank {rank} per side; gamma = k * {base:.4}, k per trial by {}-fold CV on the exact embedding: [{}]",
        config.graph_input.name(),
        ev.cv_folds,
        chosen_k.join(",")
    );
    if config.include_exact {
        let scores: Vec<(f64, f64)> = chosen.iter().enumerate().map(|(t, &i)| outcomes[i].test[t]).collect();
        push(
            format!("{}_exact", method.id()),
            "exact".into(),
            &scores,
            exact_secs,
            format!(
                "{common}; solver={}; {}",
                describe_solver(res.solver_for(method.exact())),
                residual_note(exact_residual)
            ),
        );
    }
    let n = graph.n_nodes();
    let mut ms: Vec<usize> = config
        .m_grid
        .get(name)
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .map(|m| m.min(n))
        .collect();
    ms.dedup();
    for (i, &m) in ms.iter().enumerate() {
        progress(&Progress::new(format!("m = {m}"), i, Some(ms.len())));
        let tm = Instant::now();
        // One Nyström fit per (bandwidth, landmark set) at this m: trials that chose the same
        // bandwidth share it (same numbers, one inner SVD).
        let mut cache: BTreeMap<(usize, u64), EmbeddingOutput> = BTreeMap::new();
        let mut scores = vec![];
        let mut ranks = vec![];
        for t in 0..protocol.trials() {
            let lseed = if config.resample_landmarks {
                seed.wrapping_add(7919 * t as u64)
            } else {
                seed
            };
            let key = (chosen[t], lseed);
            if let std::collections::btree_map::Entry::Vacant(slot) = cache.entry(key) {
                let mut s = spec(res.grid[chosen[t]]);
                s.seed = lseed;
                slot.insert(nystrom_embed(&graph.adjacency, method, &s, m, inner)?);
            }
            let out = &cache[&key];
            let emb = &out.embeddings;
            ranks.push(out.rank);
            let sub = Protocol {
                train: vec![protocol.train[t].clone()],
                test: vec![protocol.test[t].clone()],
                folds: vec![None],
            };
            let f = emb.features();
            let o = evaluate_features(task, f.view(), &sub, &ev.classifier(), false)?;
            scores.push(o.test[0]);
        }
        ranks.sort_unstable();
        ranks.dedup();
        let worst = |f: fn(&EmbeddingOutput) -> Option<f64>| cache.values().map(f).fold(None, max_opt);
        let inner_note = match method {
            NystromMethod::Ksvd => format!(
                "inner={} (sampled block's SVD: {})",
                describe_inner(inner),
                residual_note(worst(|o| o.inner_residual))
            ),
            NystromMethod::Kpca => "inner=dense symmetric eigendecomposition".to_string(),
        };
        let note = format!(
            "{common}; Nystrom rank {:?}; {} landmark set(s); {inner_note}; Nystrom triplets against the full kernel matrix: {}",
            ranks,
            if config.resample_landmarks { "per-trial" } else { "one" },
            residual_note(worst(|o| o.max_residual))
        );
        push(
            method.id().into(),
            format!("m={m}"),
            &scores,
            tm.elapsed().as_secs_f64(),
            note,
        );
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // Test helpers panic on failure by design.
    use super::*;
    use crate::rows::Status;
    use ksvd_linalg::random::rng_from_seed;
    use ndarray::Array2;
    use rand::Rng;

    /// nystrom-f1's exact references are Table 1's embeddings, so that a run shares them
    /// (`SharedEmbeddings`: 11 minutes of Table 1's full run): on every dataset the committed specs have
    /// in common, full and quick, both ask for the same `EmbeddingSpec` at every bandwidth.
    #[test]
    fn nystrom_f1_exact_references_are_table1_embeddings() {
        use crate::fsx::project_root;
        use crate::spec::Spec;
        for quick in [false, true] {
            let load =
                |name: &str| Spec::load(&project_root().join(format!("experiments/{name}.toml")), quick).unwrap();
            let (t1, nf) = (load("table1"), load("nystrom-f1"));
            let t1p: super::super::Table1Params = toml::Value::Table(t1.file.params.clone()).try_into().unwrap();
            let nfp: NystromF1Config = toml::Value::Table(nf.file.params.clone()).try_into().unwrap();
            let (tc, nc) = (&t1p.protocol, &nfp);
            let common: Vec<&String> = nf.run_datasets.iter().filter(|d| t1.run_datasets.contains(d)).collect();
            assert!(!common.is_empty(), "quick = {quick}");
            for d in common {
                let n = usize::MAX;
                let tr = resolve(d, tc.components, &tc.solver, &tc.gamma_grid, &tc.overrides, n);
                let nr = resolve(d, nc.components, &nc.solver, &nc.gamma_grid, &nc.overrides, n);
                assert_eq!(tr.grid, nr.grid, "{d}, quick = {quick}");
                for method in [NystromMethod::Ksvd, NystromMethod::Kpca] {
                    let ours = Ours {
                        config: tc,
                        res: &tr,
                        method: method.exact(),
                        shared: &SharedEmbeddings::off(),
                        reused: Default::default(),
                    };
                    for &k in &tr.grid {
                        let rank = method_rank(tr.components, method.exact(), tc.two_sided);
                        assert_eq!(
                            format!("{:?}", ours.spec(rank, Some(k), 0)),
                            format!("{:?}", exact_spec(nc, &nr, method, Some(k), 0)),
                            "{d} {method:?} k = {k}, quick = {quick}"
                        );
                    }
                }
            }
        }
    }

    include!("../../../../crates/graph-tasks/tests/support/planted.rs");

    /// With a bandwidth 50x below the rule every off-diagonal kernel entry underflows (K = I, no
    /// information); at the rule the kernel sees the communities. CV must pick the latter in
    /// every trial, for KPCA and both KSVD kernels.
    #[test]
    fn cross_validation_picks_the_informative_bandwidth() {
        let g = planted(2, 60, 0.12, 0.01, 5);
        let task = Task::from_labels(&g.labels).unwrap();
        let config = Table1Config {
            components: 10,
            gamma_grid: vec![0.02, 1.0],
            eval: EvalConfig {
                trials: 4,
                cv_folds: 4,
                ..EvalConfig::default()
            },
            ..Table1Config::default()
        };
        let ev = &config.eval;
        let protocol = Protocol::new(&task, ev.trials, ev.train_fraction, ev.cv_folds, ev.cv_scope, 0).unwrap();
        let res = Resolved {
            components: 10,
            solver: config.solver.clone(),
            method_solvers: BTreeMap::new(),
            grid: config.gamma_grid.clone(),
        };
        for method in [Method::Kpca, Method::KsvdRbf, Method::KsvdSne] {
            let ours = Ours {
                config: &config,
                res: &res,
                method,
                shared: &SharedEmbeddings::off(),
                reused: Default::default(),
            };
            let c = ours.embed_candidates(&g.adjacency, 0).unwrap();
            let list: Vec<&Embeddings> = c.list.iter().map(|c| &c.embeddings).collect();
            let r = evaluate_method(&g, &task, &protocol, &config.eval, &list).unwrap();
            let note = GraphEmbedder::note(&ours, &c, &r.selection()).unwrap();
            assert_eq!(r.chosen, vec![1; 4], "{method:?}: {note}");
            let cv = |i: usize| r.outcomes[i].cv.iter().map(|c| c.unwrap()).sum::<f64>() / 4.0;
            assert!(
                cv(1) > 0.95 && cv(1) > cv(0) + 0.2,
                "{method:?}: cv scores {} {}",
                cv(0),
                cv(1)
            );
            assert_eq!(r.recon_index, 1);
            assert!(note.contains("chose k per trial [1,1,1,1]"), "{note}");
        }
    }

    #[test]
    fn configs_parse_validate_and_reject_bad_values() {
        let c: Table1Config = toml::from_str(
            r#"
            datasets = ["cora"]
            methods = ["pca", "ksvd_sne"]
            components = 100
            graph_input = "row-normalised-self-loops"
            scaling = "scores"
            solver = { Rsvd = { oversampling = 20, power_iters = 1 } }
            gamma_grid = [0.5, 1.0]
            [eval]
            trials = 2
            cv_scope = "first-trial"
            reconstruction_distance = "inner-product"
            extra_distances = ["cosine"]
            [overrides.cora]
            components = 50
            "#,
        )
        .unwrap();
        assert_eq!(c.graph_input, GraphInput::RowNormalizedSelfLoops);
        assert_eq!(
            c.solver,
            Solver::Rsvd(RsvdParams {
                oversampling: 20,
                power_iters: 1,
                seed: 0
            })
        );
        assert_eq!(c.eval.cv_scope, CvScope::FirstTrial);
        assert_eq!(c.eval.cv_folds, 10, "unset fields keep the defaults");
        c.validate().unwrap();
        Table1Config::default().validate().unwrap();
        Table1Config::quick().validate().unwrap();
        NystromF1Config::default().validate().unwrap();
        NystromF1Config::quick().validate().unwrap();
        assert!(
            toml::from_str::<Table1Config>("component = 3").is_err(),
            "unknown keys are rejected"
        );
        let bad = [
            Table1Config {
                gamma_grid: vec![1.0, -1.0],
                ..Table1Config::quick()
            },
            Table1Config {
                datasets: vec!["nope".into()],
                ..Table1Config::quick()
            },
            Table1Config {
                components: 0,
                ..Table1Config::quick()
            },
            Table1Config {
                eval: EvalConfig {
                    train_fraction: 1.0,
                    ..EvalConfig::default()
                },
                ..Table1Config::quick()
            },
            Table1Config {
                eval: EvalConfig {
                    cv_folds: 1,
                    ..EvalConfig::default()
                },
                ..Table1Config::quick()
            },
        ];
        for b in bad {
            assert!(b.validate().is_err(), "{b:?}");
        }
        let mut ny = NystromF1Config::quick();
        ny.datasets.push("citeseer".into());
        assert!(ny.validate().is_err(), "citeseer has no m grid");
    }

    /// `overrides.<dataset>.nystrom_inner` replaces the global inner solver for that dataset only;
    /// Table 1, which has no Nyström embeddings, rejects the key.
    #[test]
    fn nystrom_inner_override_applies_per_dataset() {
        let c: NystromF1Config = toml::from_str(
            r#"
            datasets = ["cora", "pubmed"]
            nystrom_inner = "Dense"
            [m_grid]
            cora = [100]
            pubmed = [100]
            [overrides.pubmed]
            components = 500
            nystrom_inner = { Rsvd = { oversampling = 10, power_iters = 2 } }
            "#,
        )
        .unwrap();
        c.validate().unwrap();
        assert_eq!(c.inner_for("cora"), InnerSolver::Dense);
        assert_eq!(c.inner_for("pubmed"), InnerSolver::default());
        assert_eq!(
            c.inner_for("citeseer"),
            InnerSolver::Dense,
            "no override: the global value"
        );
        let d = NystromF1Config::default();
        assert_eq!(d.inner_for("cora"), InnerSolver::Dense);
        assert_eq!(d.inner_for("pubmed"), InnerSolver::Dense);
        assert!(toml::from_str::<NystromF1Config>("[overrides.cora]\nnystrom_inner = \"Lanczos\"").is_err());
        let inner_only = |i| DatasetOverride {
            nystrom_inner: Some(i),
            ..DatasetOverride::default()
        };
        let mut bad = NystromF1Config::quick();
        bad.overrides.insert("nope".into(), inner_only(InnerSolver::default()));
        assert!(bad.validate().is_err(), "unknown dataset in overrides");
        let mut t1 = Table1Config::quick();
        t1.overrides.insert("cora".into(), inner_only(InnerSolver::Dense));
        assert!(t1.validate().is_err(), "Table 1 rejects nystrom_inner");
    }

    /// `overrides.<dataset>.method_solvers` gives single methods of one dataset their own solver;
    /// the other methods keep the dataset's solver, and unknown method ids are rejected.
    #[test]
    fn method_solvers_override_single_methods() {
        let c: Table1Config = toml::from_str(
            r#"
            datasets = ["cora", "pubmed"]
            solver = { Auto = { tol = 1e-8 } }
            [overrides.pubmed]
            solver = "Exact"
            [overrides.pubmed.method_solvers]
            ksvd_sne = { BlockKrylov = { tol = 1e-6, max_depth = 4 } }
            "#,
        )
        .unwrap();
        c.validate().unwrap();
        let at = |name: &str| resolve(name, c.components, &c.solver, &c.gamma_grid, &c.overrides, 100);
        let pubmed = at("pubmed");
        let krylov = Solver::BlockKrylov(ksvd::BlockKrylovParams {
            tol: 1e-6,
            max_depth: 4,
            ..Default::default()
        });
        assert_eq!(pubmed.solver_for(Method::KsvdSne), &krylov);
        assert_eq!(pubmed.solver_for(Method::KsvdRbf), &Solver::Exact);
        assert_eq!(at("cora").solver_for(Method::KsvdSne), &Solver::Auto { tol: 1e-8 });
        for bad in [
            "[overrides.cora.method_solvers]\nksvd = \"Exact\"",
            "[overrides.cora.method_solvers]\nksvd_sne = { Auto = { tol = 0.0 } }",
        ] {
            let c: Table1Config = toml::from_str(bad).unwrap();
            assert!(c.validate().is_err(), "{bad}");
        }
    }

    /// The rows of `embedder` on `graph` by the Table 1 cell, with the protocol of `eval` and `seed`.
    fn evaluate(graph: &Graph, embedder: &dyn Embedder, eval: &EvalConfig, seed: u64) -> Vec<Row> {
        let task = Task::from_labels(&graph.labels).unwrap();
        let protocol = Protocol::new(
            &task,
            eval.trials,
            eval.train_fraction,
            eval.cv_folds,
            eval.cv_scope,
            seed,
        )
        .unwrap();
        method_cell(embedder, &graph.name, graph, &task, &protocol, eval, seed, "").unwrap()
    }

    /// On two planted communities every method's embedding classifies the nodes almost perfectly.
    #[test]
    fn planted_communities_are_classified() {
        let g = planted(2, 60, 0.12, 0.01, 1);
        let gamma = bandwidth(&g.adjacency, GraphInput::RowNormalizedSelfLoops, 1.0).unwrap();
        let eval = EvalConfig {
            trials: 3,
            cv_folds: 3,
            ..EvalConfig::default()
        };
        for method in Method::ALL {
            let spec = EmbeddingSpec {
                method,
                rank: 8,
                transform: GraphInput::RowNormalizedSelfLoops,
                scaling: Scaling::Vectors,
                center_kernels: true,
                gamma: method.has_bandwidth().then_some(gamma),
                solver: Solver::Rsvd(RsvdParams::default()),
                seed: 7,
                split_twins: true,
            };
            let rows = evaluate(&g, &spec, &eval, 0);
            let micro = rows.iter().find(|r| r.metric == "micro_f1").unwrap();
            let macro_ = rows.iter().find(|r| r.metric == "macro_f1").unwrap();
            assert_eq!(micro.status, Status::Ok, "{micro:?}");
            assert_eq!(micro.trials, Some(3));
            assert!(
                micro.value.unwrap() > 0.95 && macro_.value.unwrap() > 0.95,
                "{method:?}: {:?} {:?}",
                micro.value,
                macro_.value
            );
            assert!(rows.iter().any(|r| r.metric == "l1") && rows.iter().any(|r| r.metric == "l2"));
            assert_eq!(micro.note, None, "a method without a note of its own has none");
        }
    }

    /// A method offering fixed candidates, whose note lists the evaluation's choices.
    struct Fixed(Vec<Embeddings>);

    impl GraphEmbedder for Fixed {
        type Error = GraphTaskError;
        fn id(&self) -> &'static str {
            "fixed"
        }
        fn embed_graph(&self, _: &ksvd_linalg::CsrMatrix, _: u64) -> Result<Embeddings> {
            Ok(self.0[0].clone())
        }
        fn embed_candidates(&self, _: &ksvd_linalg::CsrMatrix, _: u64) -> Result<Candidates> {
            let list = self
                .0
                .iter()
                .map(|e| Candidate {
                    embeddings: e.clone(),
                    seconds: 0.0,
                    rank: None,
                    max_residual: None,
                })
                .collect();
            Ok(Candidates {
                list,
                bandwidth_rule: None,
            })
        }
        fn note(&self, _: &Candidates, s: &Selection<'_>) -> Option<String> {
            Some(format!(
                "candidate per trial {:?}; reconstruction with {}",
                s.chosen, s.reconstruction
            ))
        }
    }

    /// Through the trait's candidates, cross-validation over two embeddings, one informative
    /// (community indicator plus noise) and one pure noise, picks the informative one in every
    /// trial, and the method's note sees that choice.
    #[test]
    fn cross_validation_picks_the_informative_candidate() {
        let g = planted(2, 50, 0.1, 0.01, 3);
        let mut rng = rng_from_seed(9);
        let noise = Array2::from_shape_fn((100, 5), |_| rng.gen::<f64>() - 0.5);
        let informative =
            Array2::from_shape_fn((100, 5), |(i, j)| if j == 0 { (i / 50) as f64 } else { noise[[i, j]] });
        let good = Embeddings::Single(informative);
        let bad = Embeddings::Single(noise);
        let eval = EvalConfig {
            trials: 4,
            cv_folds: 5,
            ..EvalConfig::default()
        };
        for (cands, want) in [
            (vec![bad.clone(), good.clone()], "[1, 1, 1, 1]; reconstruction with 1"),
            (vec![good.clone(), bad.clone()], "[0, 0, 0, 0]; reconstruction with 0"),
        ] {
            let rows = evaluate(&g, &Fixed(cands), &eval, 0);
            let note = rows[0].note.clone().unwrap();
            assert!(note.contains(&format!("candidate per trial {want}")), "{note}");
            assert!(rows[0].value.unwrap() > 0.99);
        }
    }

    /// The baselines run through the same cell: HOPE on Cora gives the declared metrics, without
    /// a note, and only in the paper's setting (no reversed arcs or unstandardised features).
    #[test]
    fn baselines_share_the_cell() {
        let root = DataRoot::committed().unwrap();
        let config = Table1Config {
            datasets: vec!["cora".into()],
            components: 8,
            also_reversed: vec!["cora".into()],
            eval: EvalConfig {
                trials: 2,
                cv_folds: 2,
                also_unstandardized: true,
                ..EvalConfig::default()
            },
            overrides: Default::default(),
            ..Table1Config::default()
        };
        let mut baselines = GraphBaselineConfig::default();
        baselines.hope.rank = 4;
        let hope = Table1Method::from_id("hope").unwrap();
        assert_eq!(hope, Table1Method::Baseline(GraphBaseline::Hope));
        config.validate().unwrap();
        let cora = load(&root, "cora", config.graph_self_loops).unwrap();
        let cell =
            |b: &GraphBaselineConfig| table1_cell(&config, hope, b, &cora, 0, &SharedEmbeddings::off(), &mut |_| {});
        let rows = cell(&baselines).unwrap();
        let keys: Vec<(&str, &str)> = rows.iter().map(|r| (r.metric.as_str(), r.setting.as_str())).collect();
        assert_eq!(
            keys,
            [
                ("micro_f1", ""),
                ("macro_f1", ""),
                ("l1", ""),
                ("l2", ""),
                ("wrong_entries", ""),
                ("frobenius", "")
            ]
        );
        for r in &rows {
            assert_eq!(
                (r.method.as_str(), r.status, r.trials.is_some()),
                ("hope", Status::Ok, true),
                "{r:?}"
            );
            assert_eq!(r.note, None);
        }
        // A bad parameter fails the cell with the reason (the driver writes its `failed` rows).
        baselines.hope.rank = 0;
        let err = cell(&baselines).unwrap_err();
        assert!(format!("{err:#}").contains("rank"), "{err:#}");
    }
}

/// The extra settings of Table 1 on the committed Cora: `arcs=reversed` and
/// `features=unstandardized` (moved with the runner from `ksvd-graph-tasks`' `tests/settings.rs`).
#[cfg(test)]
mod settings_tests {
    #![allow(clippy::unwrap_used)] // Test helpers panic on failure by design.
    use super::*;
    use crate::rows::Status;
    use ksvd_datasets::DataRoot;

    /// The rows of every method of `config` on its dataset, seed 0.
    fn run(config: &Table1Config, root: &DataRoot) -> Vec<Row> {
        config.validate().unwrap();
        let graph = load(root, &config.datasets[0], config.graph_self_loops).unwrap();
        let mut rows = vec![];
        for &m in &config.methods {
            let m = Table1Method::Ours(m);
            rows.extend(
                table1_cell(
                    config,
                    m,
                    &GraphBaselineConfig::default(),
                    &graph,
                    0,
                    &SharedEmbeddings::off(),
                    &mut |_| {},
                )
                .unwrap(),
            );
        }
        rows
    }

    fn config() -> Table1Config {
        Table1Config {
            datasets: vec!["cora".into()],
            methods: vec![Method::Svd],
            components: 16,
            graph_input: GraphInput::Raw,
            solver: Solver::Lanczos(ksvd::LanczosParams {
                tol: 1e-12,
                max_restarts: 200,
                ..ksvd::LanczosParams::default()
            }),
            eval: EvalConfig {
                trials: 2,
                cv_folds: 2,
                extra_distances: vec![],
                ..EvalConfig::default()
            },
            overrides: Default::default(),
            ..Table1Config::default()
        }
    }

    fn value(rows: &[Row], metric: &str, setting: &str) -> f64 {
        let row = rows
            .iter()
            .find(|r| r.metric == metric && r.setting == setting)
            .unwrap_or_else(|| panic!("no row {metric} / {setting:?}"));
        assert_eq!(row.status, Status::Ok, "{row:?}");
        row.value.unwrap()
    }

    /// SVD of `Aᵀ` is the SVD of `A` with the sides swapped (`Aᵀ = V Σ Uᵀ`), so with the raw input
    /// the node features of the reversed graph are a column permutation (up to signs) of the
    /// original ones; the standardised linear LS-SVM is invariant to both, so the F1 scores agree
    /// (up to decisions that flip on near-ties: at most a couple of the ~1085 test nodes).
    /// `features=unstandardized` rows equal a separate run with standardisation off.
    #[test]
    fn reversed_and_unstandardized_settings() {
        let root = DataRoot::committed().unwrap();
        let mut c = config();
        c.also_reversed = vec!["cora".into()];
        c.eval.also_unstandardized = true;
        let rows = run(&c, &root);
        let settings: std::collections::BTreeSet<&str> = rows.iter().map(|r| r.setting.as_str()).collect();
        let want = [
            "",
            "features=unstandardized",
            "arcs=reversed",
            "arcs=reversed; features=unstandardized",
        ];
        assert_eq!(settings, want.into_iter().collect(), "{settings:?}");
        // Reconstruction is reported once per graph, not per classifier setting.
        assert!(!rows.iter().any(|r| r.metric == "l1" && r.setting.contains("features=")));

        let one_node = 1.0 / 1000.0;
        for metric in ["micro_f1", "macro_f1"] {
            let (a, b) = (value(&rows, metric, ""), value(&rows, metric, "arcs=reversed"));
            assert!((a - b).abs() <= 2.5 * one_node, "{metric}: {a} vs reversed {b}");
        }
        // The reversed graph's reconstruction targets Aᵀ: Cora's largest in-degree (166) becomes an
        // out-degree, so the two graphs' reconstruction errors differ.
        assert_ne!(value(&rows, "l1", ""), value(&rows, "l1", "arcs=reversed"));

        let mut raw = config();
        raw.eval.standardize_features = false;
        let raw_rows = run(&raw, &root);
        for metric in ["micro_f1", "macro_f1"] {
            assert_eq!(
                value(&rows, metric, "features=unstandardized"),
                value(&raw_rows, metric, ""),
                "{metric}"
            );
        }
    }

    /// A dataset to reverse that is not a dataset is a config error, not a silent no-op.
    #[test]
    fn unknown_reversed_dataset_is_rejected() {
        let mut c = config();
        c.also_reversed = vec!["koala".into()];
        assert!(c.validate().is_err());
    }
}
