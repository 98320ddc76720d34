//! `kind = "biclustering"`: Table 2 of the paper: biclustering of documents × terms matrices by
//! k-means on left (documents) and right (terms) embeddings of SVD, KPCA (rows and columns
//! separately) and KSVD (compatibility a1), scored by NMI of the document clusters and BCOT's PMI
//! coherence of the term clusters.
//!
//! Kernel bandwidths: `γ = k sqrt(M γ_x)` with `k` from `gamma_grid`. The paper tunes kernel
//! parameters by cross-validation, which has no labels to use in an unsupervised task; here `k` is
//! chosen without labels, by the smallest k-means inertia ratio (within-cluster over total sum of
//! squares, documents plus terms) of the embeddings. Every grid value's NMI and coherence are in
//! the row's note, so the choice can be audited.
use std::collections::BTreeMap;

use anyhow::{Context as _, Result};
use ksvd_baselines::{run_bicluster_baselines, BiclusterBaseline, BiclusterBaselineConfig, BiclusterBaselinesConfig};
use ksvd_bicluster::{coherence, embed, kmeans, nmi, EmbeddingMethod, KMeansParams, KsvdKernel};
use ksvd_datasets::{DataRoot, DatasetError, DatasetName};
use ksvd_kernels::Compat;
use ndarray::{s, Array2, Axis};
use serde::{Deserialize, Serialize};

use super::{Context, Experiment};
use crate::rows::{Row, Status};

/// `[params]` of `kind = "biclustering"`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Stated: compatibility alternative (a0, a1, a2).
    pub compatibility: String,
    /// Stated: "kernel setup the same as above": `sne` (or `rbf`).
    pub ksvd_kernel: String,
    /// Stated: KPCA with RBF, applied twice.
    pub kpca_kernel: String,
    /// Open: number of singular vectors fed to k-means.
    pub components: usize,
    /// Stated: document clusters per dataset.
    pub doc_clusters: BTreeMap<String, usize>,
    /// Stated: term clusters per dataset.
    pub term_clusters: BTreeMap<String, usize>,
    /// Open: k-means restarts.
    pub kmeans_restarts: usize,
    /// Open: the coherence index (BCOT's PMI coherence on the raw matrix).
    pub coherence: String,
    /// Open: bandwidth factors k tried.
    pub gamma_grid: Vec<f64>,
    /// Hyper-parameters of the BCOT and EBC baselines ([`BiclusterBaselineConfig`]; absent keys take the
    /// defaults documented there).
    #[serde(default)]
    pub baselines: BiclusterBaselineConfig,
}

/// The experiment.
pub struct Biclustering;

/// Within-cluster over total sum of squares of a k-means fit.
fn inertia_ratio(x: &Array2<f64>, inertia: f64) -> f64 {
    let mean = x
        .mean_axis(Axis(0))
        .unwrap_or_else(|| ndarray::Array1::zeros(x.ncols()));
    let total: f64 = x.outer_iter().map(|r| (&r - &mean).mapv(|v| v * v).sum()).sum();
    if total > 0.0 {
        inertia / total
    } else {
        0.0
    }
}

struct Scored {
    nmi: f64,
    coherence: f64,
    criterion: f64,
}

fn score(
    data: &ksvd_datasets::DocumentTermData,
    method: EmbeddingMethod,
    components: usize,
    kd: usize,
    kt: usize,
    seed: u64,
    km: &KMeansParams,
) -> Result<Scored> {
    let e = embed(&data.matrix, method, components, seed)?;
    let c = components.min(e.docs.ncols());
    let docs = e.docs.slice(s![.., ..c]).to_owned();
    let terms = e.terms.slice(s![.., ..c]).to_owned();
    let fd = kmeans(docs.view(), kd, seed, km)?;
    let ft = kmeans(terms.view(), kt, seed.wrapping_add(1), km)?;
    Ok(Scored {
        nmi: nmi(&data.labels, &fd.labels)?,
        coherence: coherence(&data.matrix, &ft.labels)?.score,
        criterion: inertia_ratio(&docs, fd.inertia) + inertia_ratio(&terms, ft.inertia),
    })
}

/// The BCOT or EBC rows of one dataset and seed.
fn baseline_rows(
    root: &DataRoot,
    params: &Params,
    id: &str,
    method: &str,
    kd: usize,
    kt: usize,
    seed: u64,
) -> Result<Vec<Row>> {
    let Some(b) = BiclusterBaseline::ALL.into_iter().find(|b| b.id() == method) else {
        anyhow::bail!("biclustering: unknown baseline `{method}`");
    };
    let config = BiclusterBaselinesConfig {
        datasets: vec![id.to_string()],
        methods: vec![b],
        seeds: vec![seed],
        trials: 1,
        doc_clusters: [(id.to_string(), kd)].into(),
        term_clusters: [(id.to_string(), kt)].into(),
        params: params.baselines.clone(),
    };
    let rows = run_bicluster_baselines(&config, root, &mut |_| {}).with_context(|| format!("{method} on {id}"))?;
    Ok(rows
        .into_iter()
        .map(|r| {
            use ksvd_baselines::RowStatus as S;
            let status = match r.status {
                S::Ok => Status::Ok,
                S::Failed => Status::Failed,
                S::MissingData => Status::MissingData,
            };
            Row {
                dataset: r.dataset,
                method: r.method,
                metric: r.metric,
                setting: String::new(),
                seed: r.seed,
                value: r.value,
                std: r.std,
                trials: r.trials,
                seconds: r.seconds,
                threads: r.threads,
                status,
                note: r.note,
            }
        })
        .collect())
}

impl Experiment for Biclustering {
    type Params = Params;
    const VERSION: u32 = 2;

    fn run(&self, cx: &Context<'_>, params: &Params) -> Result<Vec<Row>> {
        let compat: Compat = params.compatibility.parse().map_err(anyhow::Error::msg)?;
        let ksvd_kernel = match params.ksvd_kernel.as_str() {
            "sne" => KsvdKernel::Sne,
            "rbf" => KsvdKernel::Rbf,
            other => anyhow::bail!("biclustering: unknown ksvd_kernel `{other}`"),
        };
        anyhow::ensure!(
            params.kpca_kernel == "rbf",
            "biclustering: KPCA is implemented with the RBF kernel only"
        );
        let root = DataRoot::committed()?;
        let seeds = cx.spec.file.seeds.clone();
        let km = KMeansParams::new().n_runs(params.kmeans_restarts);
        cx.progress
            .set_length((cx.spec.run_datasets.len() * seeds.len()) as u64);
        let mut rows = Vec::new();
        for id in &cx.spec.run_datasets {
            let name: DatasetName = id.parse().with_context(|| format!("dataset `{id}`"))?;
            let data = match root.document_term(name) {
                Ok(d) => d,
                Err(e @ DatasetError::MissingFile { .. }) => {
                    for m in &cx.spec.run_methods {
                        for metric in ["nmi", "coherence"] {
                            rows.push(Row::status(id, m, metric, Status::MissingData, Some(e.to_string())));
                        }
                    }
                    cx.progress.inc(seeds.len() as u64);
                    continue;
                }
                Err(e) => return Err(e.into()),
            };
            let kd = *params
                .doc_clusters
                .get(id)
                .with_context(|| format!("doc_clusters has no `{id}`"))?;
            let kt = *params
                .term_clusters
                .get(id)
                .with_context(|| format!("term_clusters has no `{id}`"))?;
            for &seed in &seeds {
                cx.progress.set_message(format!("biclustering {id} seed {seed}"));
                let key = ("table2", id, seed, params);
                let mut cell = cx.cell(&key, || {
                    let mut out = Vec::new();
                    for m in &cx.spec.run_methods {
                        let candidates: Vec<(f64, EmbeddingMethod)> = match m.as_str() {
                            "svd" => vec![(f64::NAN, EmbeddingMethod::Svd)],
                            "kpca" => params
                                .gamma_grid
                                .iter()
                                .map(|&k| (k, EmbeddingMethod::Kpca { gamma_k: k }))
                                .collect(),
                            "ksvd" => params
                                .gamma_grid
                                .iter()
                                .map(|&k| {
                                    (
                                        k,
                                        EmbeddingMethod::Ksvd {
                                            kernel: ksvd_kernel,
                                            gamma_k: k,
                                            compat,
                                        },
                                    )
                                })
                                .collect(),
                            ext if BiclusterBaseline::ALL.iter().any(|b| b.id() == ext) => {
                                out.extend(baseline_rows(&root, params, id, ext, kd, kt, seed)?);
                                continue;
                            }
                            other => anyhow::bail!("biclustering: unknown method `{other}`"),
                        };
                        let t = std::time::Instant::now();
                        let mut best: Option<(f64, Scored)> = None;
                        let mut audit = Vec::new();
                        for (k, method) in candidates {
                            let sc = score(&data, method, params.components, kd, kt, seed, &km)?;
                            audit.push(format!(
                                "k={k}: NMI {:.3}, Coh {:.3}, inertia ratio {:.3}",
                                sc.nmi, sc.coherence, sc.criterion
                            ));
                            if best.as_ref().is_none_or(|b| sc.criterion < b.1.criterion) {
                                best = Some((k, sc));
                            }
                        }
                        let Some((k, sc)) = best else { continue };
                        let secs = t.elapsed().as_secs_f64();
                        let note = if k.is_nan() {
                            String::new()
                        } else {
                            format!(
                                "gamma factor k = {k} chosen by the k-means inertia ratio (no labels); {}",
                                audit.join("; ")
                            )
                        };
                        out.push(
                            Row::ok(id, m, "nmi", sc.nmi)
                                .seed(seed)
                                .seconds(secs)
                                .note(note.clone()),
                        );
                        out.push(
                            Row::ok(id, m, "coherence", sc.coherence)
                                .seed(seed)
                                .seconds(secs)
                                .note(note),
                        );
                    }
                    Ok(out)
                })?;
                rows.append(&mut cell);
            }
        }
        Ok(rows)
    }
}
