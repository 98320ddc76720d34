//! `kind = "biclustering"`: Table 2 of the paper: biclustering of documents × terms matrices by
//! k-means on left (documents) and right (terms) embeddings of SVD, KPCA (rows and columns
//! separately) and KSVD (SNE kernel, compatibility a1), scored by NMI of the document clusters
//! and BCOT's PMI coherence of the term clusters. One cell per dataset and seed (every method),
//! run by the driver ([`Context::run_cells`]); the data is loaded once per dataset.
//!
//! Choices (the paper leaves them open; all label-free, documented in `experiments/table2.toml`):
//!
//! * Embeddings: the unit singular/eigen vectors ([`ksvd_bicluster::embed`]), as the paper says
//!   ("k-means on the left and right singular vectors"), no row normalisation.
//! * `components = "clusters"`: k-means on the documents uses the first `doc_clusters`
//!   vectors, on the terms the first `term_clusters` (the spectral-clustering convention: `k`
//!   eigenvectors for `k` clusters). With a fixed 20 vectors for 3 or 4 clusters the k-means
//!   optimum is ill-determined: on DBLP the partitions of five k-means seeds agree at a mean
//!   pairwise NMI of only 0.1–0.35, and on ACM two different partitions (NMI 0.58 and 0.01 against
//!   the labels) have within-cluster sums of squares 0.02 % apart, so which one a run reports
//!   flips with the bandwidth and the seed. A number is still accepted.
//! * Bandwidth: `γ = k sqrt(M γ_x)` with `k = gamma_grid[0]` (1, the rule's default: `γ²` is
//!   then about half the mean squared distance between samples). The paper cross-validates `γ`,
//!   which needs labels; the previous label-free selection (smallest k-means inertia ratio) is not
//!   comparable across bandwidths and picked degenerate embeddings (KPCA on ACM with `k = 0.5`:
//!   localised eigenvectors, document clusters of 2355/552/118). Further `gamma_grid` entries are
//!   only a sensitivity audit: their NMI and coherence are listed in the row's note, never used
//!   to choose.
//! * `stability_seeds`: the label-free reproducibility of the k-means partitions (mean pairwise
//!   NMI between the partitions of that many extra k-means seeds and the reported one), in the
//!   note.
use std::collections::BTreeMap;
use std::time::Instant;

use anyhow::{Context as _, Result};
use ksvd_baselines::{BiclusterBaseline, BiclusterBaselineConfig};
use ksvd_bicluster::{
    coherence, nmi, Biclusterer, Biclustering as Clusters, EmbedAndCluster, EmbeddingMethod, KMeansParams,
};
use ksvd_datasets::{DataRoot, DatasetName, DocumentTermData};
use ksvd_kernels::{Compat, Kernel};
use serde::{Deserialize, Serialize};

use super::{Cell, Context, Experiment, PerDataset};
use crate::rows::Row;

/// How many singular/eigen vectors feed k-means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(untagged)]
pub enum Components {
    /// The same number on both sides.
    Fixed(usize),
    /// `"clusters"`: as many as clusters sought on that side.
    Named(ComponentsRule),
}

/// The named rule of [`Components`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ComponentsRule {
    /// `doc_clusters` vectors for the documents, `term_clusters` for the terms.
    Clusters,
}

impl Components {
    /// Vectors for the documents and for the terms.
    fn sides(self, kd: usize, kt: usize) -> (usize, usize) {
        match self {
            Components::Fixed(c) => (c, c),
            Components::Named(ComponentsRule::Clusters) => (kd, kt),
        }
    }
}

/// `[params]` of `kind = "biclustering"`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Stated: compatibility alternative, by its [`Compat`] name: `a1-shared` (a1 with both sides
    /// on the shared principal axes), `a1` (Algorithm 1 literally: only the longer side
    /// projected), `a0` or `a2`.
    pub compatibility: Compat,
    /// Stated: "kernel setup the same as above": `sne` (or `rbf`).
    pub ksvd_kernel: String,
    /// Stated: KPCA with RBF, applied twice.
    pub kpca_kernel: String,
    /// Open: singular vectors fed to k-means: a number, or `"clusters"`.
    pub components: Components,
    /// Stated: document clusters per dataset.
    pub doc_clusters: BTreeMap<String, usize>,
    /// Stated: term clusters per dataset.
    pub term_clusters: BTreeMap<String, usize>,
    /// Open: k-means restarts.
    pub kmeans_restarts: usize,
    /// Open: the coherence index (BCOT's PMI coherence on the raw matrix).
    pub coherence: String,
    /// Open: bandwidth factors `k`; the first is reported, the others are a sensitivity audit in
    /// the note (never used to choose).
    pub gamma_grid: Vec<f64>,
    /// Extra k-means seeds for the label-free stability figure in the note (0: none).
    #[serde(default)]
    pub stability_seeds: usize,
    /// Hyper-parameters of the BCOT and EBC baselines ([`BiclusterBaselineConfig`]; absent keys take the
    /// defaults documented there).
    #[serde(default)]
    pub baselines: BiclusterBaselineConfig,
}

/// The experiment.
pub struct Biclustering;

/// A biclustering, the method's note, or the error as text.
type Outcome = Result<(Clusters, Option<String>), String>;

/// Any [`Biclusterer`] with its error as text, so that ours and the baselines fit one list.
trait Method {
    fn id(&self) -> &'static str;
    fn run(&self, data: &DocumentTermData, kd: usize, kt: usize, seed: u64) -> Outcome;
}

impl<B: Biclusterer> Method for B {
    fn id(&self) -> &'static str {
        Biclusterer::id(self)
    }
    fn run(&self, data: &DocumentTermData, kd: usize, kt: usize, seed: u64) -> Outcome {
        self.bicluster_with_note(&data.matrix, kd, kt, seed)
            .map_err(|e| e.to_string())
    }
}

/// A method of the spec as runs of [`Biclusterer`]s: the first is reported, the others (ours'
/// further `gamma_grid` factors `k`) are a sensitivity audit listed in the note, never used to
/// choose. Methods without a bandwidth have one run and no `k`.
type Runs<'a> = Vec<(Option<f64>, Box<dyn Method + 'a>)>;

/// The runs of `method` on a dataset with `kd` document and `kt` term clusters.
fn runs<'a>(params: &'a Params, method: &str, kernel: (Kernel, Compat), kd: usize, kt: usize) -> Result<Runs<'a>> {
    let km = KMeansParams::new().n_runs(params.kmeans_restarts);
    let ours = |method: EmbeddingMethod, first: bool| -> Box<dyn Method> {
        let (doc_components, term_components) = params.components.sides(kd, kt);
        Box::new(EmbedAndCluster {
            method,
            doc_components,
            term_components,
            kmeans: km.clone(),
            stability_seeds: if first { params.stability_seeds } else { 0 },
        })
    };
    let grid = |of: &dyn Fn(f64) -> EmbeddingMethod| -> Runs<'a> {
        params
            .gamma_grid
            .iter()
            .enumerate()
            .map(|(i, &k)| (Some(k), ours(of(k), i == 0)))
            .collect()
    };
    Ok(match method {
        "svd" => vec![(None, ours(EmbeddingMethod::Svd, true))],
        "kpca" => grid(&|gamma_k| EmbeddingMethod::Kpca { gamma_k }),
        "ksvd" => grid(&|gamma_k| EmbeddingMethod::Ksvd {
            kernel: kernel.0,
            gamma_k,
            compat: kernel.1,
        }),
        other => match BiclusterBaseline::ALL.into_iter().find(|b| b.id() == other) {
            Some(b) => vec![(None, Box::new(b.with(&params.baselines)) as Box<dyn Method>)],
            None => anyhow::bail!("biclustering: unknown method `{other}`"),
        },
    })
}

/// NMI of the document clusters against the labels and coherence of the term clusters.
fn scores(data: &DocumentTermData, b: &Clusters) -> Result<(f64, f64), String> {
    let nmi = nmi(&data.labels, &b.doc_labels).map_err(|e| e.to_string())?;
    let coh = coherence(&data.matrix, &b.term_labels).map_err(|e| e.to_string())?;
    Ok((nmi, coh.score))
}

/// The `nmi` and `coherence` rows of one method on one dataset and seed: its first run scored,
/// its note (else the cluster counts), the audit of its further runs; the error otherwise (the
/// driver writes its failure rows).
fn method_rows(
    id: &str,
    runs: &Runs<'_>,
    data: &DocumentTermData,
    kd: usize,
    kt: usize,
    seed: u64,
) -> Result<Vec<Row>, String> {
    let clusters = format!("k_docs = {kd}, k_terms = {kt}");
    let t = Instant::now();
    let scored = (|| {
        let (k0, first) = &runs[0];
        let (b, note) = first.run(data, kd, kt, seed)?;
        let (nmi, coh) = scores(data, &b)?;
        let secs = t.elapsed().as_secs_f64();
        let mut note = note.unwrap_or_else(|| clusters.clone());
        if let Some(k0) = k0 {
            note = format!("gamma factor k = {k0} (first of gamma_grid, no selection); {note}");
        }
        let audit: Vec<String> = runs[1..]
            .iter()
            .map(|(k, run)| {
                let (nmi, coh) = scores(data, &run.run(data, kd, kt, seed)?.0)?;
                let k = k.map_or(String::new(), |k| format!("k = {k}: "));
                Ok(format!("{k}NMI {nmi:.3}, Coh {coh:.3}"))
            })
            .collect::<Result<_, String>>()?;
        if !audit.is_empty() {
            note.push_str(&format!("; sensitivity (not used to choose): {}", audit.join("; ")));
        }
        Ok::<_, String>(([nmi, coh], secs, note))
    })();
    let method = runs[0].1.id();
    let threads = rayon::current_num_threads() as u32;
    let (values, secs, note) = scored.map_err(|e| format!("{e} ({clusters})"))?;
    Ok(["nmi", "coherence"]
        .into_iter()
        .zip(values)
        .map(|(metric, value)| {
            Row::ok(id, method, metric, value)
                .seconds(secs)
                .trials(1, None)
                .note(note.clone())
                .seed(seed)
                .threads(threads)
        })
        .collect())
}

impl Experiment for Biclustering {
    type Params = Params;
    const VERSION: u32 = 3;

    fn run(&self, cx: &Context<'_>, params: &Params) -> Result<Vec<Row>> {
        let compat = params.compatibility;
        anyhow::ensure!(
            !params.gamma_grid.is_empty(),
            "biclustering: gamma_grid needs at least one bandwidth factor"
        );
        // The bandwidth is set by the rule `γ = k sqrt(M γ_x)` (`gamma_grid`): 1 is a placeholder.
        let ksvd_kernel = match params.ksvd_kernel.as_str() {
            "sne" => Kernel::Sne { gamma: 1.0 },
            "rbf" => Kernel::Rbf { gamma: 1.0 },
            other => anyhow::bail!("biclustering: unknown ksvd_kernel `{other}`"),
        };
        anyhow::ensure!(
            params.kpca_kernel == "rbf",
            "biclustering: KPCA is implemented with the RBF kernel only"
        );
        params.baselines.bcot.check()?;
        params.baselines.ebc.check()?;
        let root = DataRoot::committed()?;
        let clusters = |id: &str| -> Result<(usize, usize)> {
            let kd = *params
                .doc_clusters
                .get(id)
                .with_context(|| format!("doc_clusters has no `{id}`"))?;
            let kt = *params
                .term_clusters
                .get(id)
                .with_context(|| format!("term_clusters has no `{id}`"))?;
            Ok((kd, kt))
        };
        // A wrong dataset, cluster count or method is an error of the spec, found before any cell runs.
        for id in &cx.spec.run_datasets {
            id.parse::<DatasetName>().with_context(|| format!("dataset `{id}`"))?;
            let (kd, kt) = clusters(id)?;
            for m in &cx.spec.run_methods {
                runs(params, m, (ksvd_kernel, compat), kd, kt)?;
            }
        }
        // One cell per dataset and seed, every method of the run; the data loaded once per dataset
        // (an absent file: the driver's `missing-data` rows).
        let mut loaded: PerDataset<DocumentTermData> = PerDataset::new();
        cx.run_cells(
            &cx.grid().all_methods().cells(),
            |c| ("table2", c.dataset.clone(), c.seed(), params),
            |c, _| {
                let id = c.dataset.as_str();
                let data = loaded.get(id, || Ok(root.document_term(id.parse()?)?))?;
                let (kd, kt) = clusters(id)?;
                let mut rows = Vec::new();
                for m in &cx.spec.run_methods {
                    let runs = runs(params, m, (ksvd_kernel, compat), kd, kt)?;
                    match method_rows(id, &runs, data, kd, kt, c.seed()) {
                        Ok(r) => rows.extend(r),
                        Err(e) => rows.extend(cx.failed_rows(
                            &Cell {
                                method: Some(m.clone()),
                                ..c.clone()
                            },
                            &anyhow::anyhow!(e),
                        )),
                    }
                }
                Ok(rows)
            },
        )
    }
}
