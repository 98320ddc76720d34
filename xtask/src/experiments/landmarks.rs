//! `kind = "landmarks"`: landmark schemes for the asymmetric Nyström method (not in the paper,
//! which samples uniformly). For every input and landmark count `m`, each scheme's rank-`r`
//! approximation error `‖G − Ũ S̃ Ṽᵀ‖_F` relative to the optimal `‖G − G_r‖_F` (both
//! matrix-free: `ksvd_solvers::low_rank_error` and `optimal_low_rank_error` with certified
//! singular values), its wall time end to end (selection included) and the selection's share.
//! A derived table gives the landmarks and time each scheme needs to reach an error ratio.
//!
//! Cells: first the reference of every input (method `optimal`, unseeded: the certified top-`r`
//! singular values and the optimal error), then every scheme x `m` (the setting axis `m=<m>`) x
//! seed against it. A sample that sees fewer than `r` directions, and a target ratio no `m` of
//! the grid reaches, are `unmet` rows: outcomes of the measurement.
use std::collections::BTreeMap;
use std::time::Instant;

use anyhow::{Context as _, Result};
use ksvd_datasets::{DataRoot, DatasetName};
use ksvd_kernels::graph::{bandwidth_rule, graph_samples, GraphInput};
use ksvd_kernels::{Kernel, KernelMatrix, Samples};
use ksvd_linalg::random::{rng_from_seed, sample_indices};
use ksvd_linalg::LinearOperator;
use ksvd_nystrom::{asymmetric_nystrom, InnerSolver, NystromError, NystromParams, Sampling};
use ksvd_solvers::{auto_svd, low_rank_error, optimal_low_rank_error, AutoParams};
use ndarray::{Array2, Axis};
use serde::{Deserialize, Serialize};

use super::timing::adjacency;
use super::{Cell, Context, Experiment, PerDataset};
use crate::rows::{Row, Status};
use crate::spec::setting_value;

/// What one dataset id of the spec is.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// `cora`, `citeseer`, `pubmed` (graphs: SNE kernel of the adjacency rows and columns) or
    /// `protein` (CASP features: dense SNE kernel between two disjoint random row sets).
    pub source: String,
    /// Graphs: the input transform (`ksvd_kernels::graph::GraphInput`: `raw`, `row-normalized-self-loops`,
    /// ...). Dense: `standardised`.
    pub transform: String,
    /// Graphs: `k` of the bandwidth rule for this input (default: `[params] gamma_k`).
    #[serde(default)]
    pub gamma_k: Option<f64>,
}

/// `[params]` of `kind = "landmarks"`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Rank r.
    pub rank: usize,
    /// Landmark counts (`n = m`).
    pub m_grid: Vec<usize>,
    /// Per dataset id of the spec: what it is.
    pub inputs: BTreeMap<String, Input>,
    /// Graphs: `k` of the bandwidth rule `γ = k sqrt(M γ_x)`.
    pub gamma_k: f64,
    /// Dense: rows of X and of Z (disjoint, seeded draw of CASP rows).
    pub dense_n: usize,
    /// Dense: SNE bandwidth γ.
    pub dense_gamma: f64,
    /// Relative residual tolerance of the certified reference (top-r singular values).
    pub reference_tol: f64,
    /// Error ratios for the "landmarks needed" table.
    pub targets: Vec<f64>,
}

/// The experiment.
pub struct Landmarks;

/// A method id of the spec and its sampling scheme (the names are [`Sampling`]'s vocabulary).
fn sampling(method: &str) -> Result<Sampling> {
    Ok(method.parse::<Sampling>()?)
}

/// The kernel matrix of an input (the Nyström runs and the reference use the same one; dense
/// kernels are matrix-free, as a user's large `G` would be) and a description.
fn build(root: &DataRoot, input: &Input, p: &Params, seed: u64) -> Result<(KernelMatrix, String)> {
    if input.source == "protein" {
        anyhow::ensure!(
            input.transform == "standardised",
            "protein: transform must be `standardised`"
        );
        let data = root.tabular(DatasetName::Protein)?;
        let mut f = data.features;
        for mut c in f.axis_iter_mut(Axis(1)) {
            let n = c.len() as f64;
            let mean = c.sum() / n;
            let sd = (c.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n).sqrt();
            c.mapv_inplace(|v| if sd > 0.0 { (v - mean) / sd } else { 0.0 });
        }
        anyhow::ensure!(
            2 * p.dense_n <= f.nrows(),
            "dense_n = {} needs {} CASP rows",
            p.dense_n,
            2 * p.dense_n
        );
        // 2n distinct random rows, alternately to X and Z: two disjoint uniform draws.
        let idx = sample_indices(&mut rng_from_seed(seed), f.nrows(), 2 * p.dense_n);
        let xi: Vec<usize> = idx.iter().step_by(2).copied().collect();
        let zi: Vec<usize> = idx.iter().skip(1).step_by(2).copied().collect();
        let x: Array2<f64> = f.select(Axis(0), &xi);
        let z: Array2<f64> = f.select(Axis(0), &zi);
        let kernel = Kernel::Sne { gamma: p.dense_gamma };
        let g = KernelMatrix::matrix_free(Samples::dense(x)?, Samples::dense(z)?, kernel)?;
        let what = format!(
            "CASP standardised, N = M = {}, SNE gamma = {}",
            p.dense_n, p.dense_gamma
        );
        return Ok((g, what));
    }
    let adj = adjacency(root, &input.source, false)?;
    let transform: GraphInput = input.transform.parse().map_err(anyhow::Error::msg)?;
    let (x, z) = graph_samples(&adj, transform)?;
    let k = input.gamma_k.unwrap_or(p.gamma_k);
    let gamma = bandwidth_rule(&x, k);
    let what = format!(
        "{} {}, N = {}, M = {}, SNE gamma = {gamma:.4} (rule, k = {k})",
        input.source,
        input.transform,
        x.len(),
        z.len(),
    );
    Ok((KernelMatrix::new(x, z, Kernel::Sne { gamma })?, what))
}

impl Experiment for Landmarks {
    type Params = Params;

    fn run(&self, cx: &Context<'_>, p: &Params) -> Result<Vec<Row>> {
        let root = DataRoot::committed()?;
        // `optimal` is the reference (the truncated SVD), not a landmark scheme.
        let methods: Vec<String> = cx
            .spec
            .run_methods
            .iter()
            .filter(|m| *m != "optimal")
            .cloned()
            .collect();
        for m in &methods {
            sampling(m)?;
        }
        let input = |id: &str| {
            p.inputs
                .get(id)
                .with_context(|| format!("landmarks: dataset `{id}` has no entry in [params.inputs]"))
        };
        for id in &cx.spec.run_datasets {
            input(id)?;
        }
        let threads = cx.threads as u32;
        // The matrix of an input and its squared Frobenius norm. The dense input is drawn once
        // (seed 0) so that every scheme and seed sees one G.
        let load = |id: &str| -> Result<(KernelMatrix, String, f64)> {
            let (g, what) = build(&root, input(id)?, p, 0)?;
            let fro_sq: f64 = g.row_sq_norms()?.iter().sum();
            Ok((g, what, fro_sq))
        };

        // First the reference of every input (method `optimal`, unseeded): the optimal error.
        let references = cx.grid().methods(["optimal"]).unseeded().cells();
        let mut matrices = PerDataset::new();
        let reference_key = |c: &Cell| {
            let id = c.dataset.as_str();
            (
                "landmarks-reference",
                id.to_string(),
                p.inputs.get(id).cloned(),
                p.rank,
                p.reference_tol,
                p.gamma_k,
                p.dense_n,
                p.dense_gamma.to_bits(),
            )
        };
        let mut rows = cx.run_cells(&references, reference_key, |c, _| {
            let id = c.dataset.as_str();
            let (g, what, fro_sq) = matrices.get(id, || load(id))?;
            let t = Instant::now();
            let params = AutoParams {
                tol: p.reference_tol,
                ..AutoParams::default()
            };
            let (svd, _) = auto_svd(g, p.rank, &params, &mut |_| {})?;
            let opt = optimal_low_rank_error(*fro_sq, svd.s.view());
            let note = format!(
                "{what}; ||G||_F = {:.6e}, s_1 = {:.6e}, s_r = {:.6e}, largest residual {:.1e} (certified)",
                fro_sq.sqrt(),
                svd.s[0],
                svd.s[p.rank - 1],
                svd.max_residual().unwrap_or(f64::NAN)
            );
            Ok(vec![Row::ok(id, "optimal", "optimal_error", opt)
                .note(note)
                .seconds(t.elapsed().as_secs_f64())])
        })?;
        let optimal: BTreeMap<String, f64> = rows
            .iter()
            .filter(|r| r.metric == "optimal_error" && r.status == Status::Ok)
            .filter_map(|r| Some((r.dataset.clone(), r.value?)))
            .collect();

        // Then every scheme at every m (the setting axis `m=<m>`) and seed, against it.
        let cells = cx
            .grid()
            .methods(&methods)
            .settings(p.m_grid.iter().map(|m| format!("m={m}")))
            .cells();
        let m_of = |c: &Cell| setting_value(&c.setting, "m").map_or(0, |m| m as usize);
        let key = |c: &Cell| {
            let id = c.dataset.as_str();
            (
                "landmarks",
                id.to_string(),
                p.inputs.get(id).cloned(),
                c.method().to_string(),
                m_of(c),
                c.seed(),
                p.rank,
                p.gamma_k,
                p.dense_n,
                p.dense_gamma.to_bits(),
                threads,
            )
        };
        rows.extend(cx.run_cells(&cells, key, |c, _| {
            let id = c.dataset.as_str();
            let opt = *optimal
                .get(id)
                .with_context(|| format!("landmarks {id}: the reference cell has no optimal error"))?;
            let (g, _, fro_sq) = matrices.get(id, || load(id))?;
            let (m, seed) = (m_of(c), c.seed());
            Ok(
                one_run(g, id, c.method(), sampling(c.method())?, m, seed, p.rank, opt, *fro_sq)?
                    .into_iter()
                    .map(|r| r.setting(c.setting.clone()).seed(seed).threads(threads))
                    .collect(),
            )
        })?);
        rows.extend(needed(&cx.spec.run_datasets, &rows, &methods, p));
        Ok(rows)
    }
}

/// One scheme at one `m` and seed: error ratio, time, selection time.
fn one_run(
    g: &KernelMatrix,
    id: &str,
    method: &str,
    scheme: Sampling,
    m: usize,
    seed: u64,
    rank: usize,
    opt: f64,
    fro_sq: f64,
) -> Result<Vec<Row>> {
    let m = m.min(g.nrows()).min(g.ncols());
    let params = NystromParams::new(rank, m)
        .sampling(scheme)
        .seed(seed)
        .inner(InnerSolver::Dense);
    let t = Instant::now();
    let ny = match asymmetric_nystrom(g, &params) {
        Ok(ny) => ny,
        Err(e @ NystromError::RankDeficientSample { .. }) => {
            // A measured outcome: these landmarks see fewer than r directions.
            return Ok(vec![Row::status(
                id,
                method,
                "error_ratio",
                Status::Unmet,
                Some(e.to_string()),
            )]);
        }
        Err(e) => return Err(e.into()),
    };
    let seconds = t.elapsed().as_secs_f64();
    let err = low_rank_error(g, fro_sq, ny.svd.u.view(), ny.svd.s.view(), ny.svd.v.view())?;
    let ratio = if opt > 0.0 { err / opt } else { f64::NAN };
    Ok(vec![
        Row::ok(id, method, "error_ratio", ratio).seconds(seconds),
        Row::ok(id, method, "seconds", seconds),
        Row::ok(id, method, "selection_seconds", ny.selection_seconds),
    ])
}

/// Per scheme and target ratio: the smallest `m` of the grid whose median ratio over seeds meets
/// it, and the median time there (rows with setting `ratio<=T`; `unmet` when no `m` of the grid
/// does). A seed without a ratio (its sample sees fewer than `r` directions) counts as an
/// infinite ratio: it did not meet the target.
fn needed(datasets: &[String], rows: &[Row], methods: &[String], p: &Params) -> Vec<Row> {
    let median = |v: Vec<f64>| ksvd_metrics::median(&v).filter(|m| !m.is_nan());
    let mut out = Vec::new();
    for d in datasets.iter().filter(|d| rows.iter().any(|r| &r.dataset == *d)) {
        let d = d.as_str();
        for method in methods {
            for &target in &p.targets {
                let hit = p.m_grid.iter().find_map(|&m| {
                    let setting = format!("m={m}");
                    let cells = |metric: &'static str| {
                        rows.iter()
                            .filter(move |r| r.dataset == d && &r.method == method && r.metric == metric)
                            .filter(|r| r.setting == setting)
                    };
                    let pick = |metric: &'static str| {
                        median(
                            cells(metric)
                                .filter(|r| r.status == Status::Ok)
                                .filter_map(|r| r.value)
                                .collect(),
                        )
                    };
                    let ratio = median(
                        cells("error_ratio")
                            .map(|r| match (r.status, r.value) {
                                (Status::Ok, Some(v)) => v,
                                _ => f64::INFINITY,
                            })
                            .collect(),
                    )?;
                    (ratio <= target).then(|| (m, pick("seconds")))
                });
                let setting = format!("ratio<={target}");
                match hit {
                    Some((m, secs)) => {
                        out.push(Row::ok(d, method, "m_needed", m as f64).setting(setting.clone()));
                        if let Some(s) = secs {
                            out.push(Row::ok(d, method, "seconds_needed", s).setting(setting));
                        }
                    }
                    None => out.push(
                        Row::status(
                            d,
                            method,
                            "m_needed",
                            Status::Unmet,
                            Some(format!("no m up to {} reaches it", p.m_grid.iter().max().unwrap_or(&0))),
                        )
                        .setting(setting),
                    ),
                }
            }
        }
    }
    out
}
