//! `kind = "datasets"`: the appendix's dataset-description tables, recomputed from the loaded data.
//!
//! Graphs give nodes, edges (under the convention the spec names per dataset) and classes, plus the raw counts
//! behind the edge conventions (stored arcs, self-loops, undirected pairs, labelled nodes) so that any
//! difference is explained by numbers. Document-term matrices give documents, terms and document clusters;
//! term clusters are a protocol value and come from the spec. A file that is not available becomes a
//! `missing-data` row naming it. One cell per dataset (method `data`).
//!
//! Cells are not cached: loading is fast, and a cached count would not notice a changed data file.
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Context as _, Result};
use ksvd_datasets::{DataRoot, DatasetKind, DatasetName, GraphOptions, SelfLoops};
use serde::Deserialize;

use super::{Cell, Context, Experiment};
use crate::fsx::{project_root, root_relative};
use crate::rows::{Row, Status};

/// Which copy of the data to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RootChoice {
    /// The repository's checksummed `data/` (or `$KSVD_DATA_DIR`) when it exists, else `shared_dir`.
    Auto,
    /// The repository's checksummed `data/` (or `$KSVD_DATA_DIR`).
    Committed,
    /// The originals in `shared_dir`.
    Shared,
}

/// How "# Edges" is counted for a graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EdgeConvention {
    /// Stored arcs as in the files (an undirected pair counts twice).
    Arcs,
    /// Stored arcs after adding a self-loop to every node (PyTorch Geometric's count for Twitch PT).
    ArcsWithSelfLoops,
    /// Unordered pairs {i, j}, i != j.
    UndirectedPairs,
}

/// `[params]` of the datasets spec.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Which copy of the data to read.
    pub data_root: RootChoice,
    /// The originals, relative to the workspace root.
    pub shared_dir: PathBuf,
    /// Edge convention per graph dataset id.
    pub edge_convention: BTreeMap<String, EdgeConvention>,
    /// Term clusters per document-term dataset id (a protocol value, not a property of the data).
    pub term_clusters: BTreeMap<String, usize>,
}

/// The experiment.
pub struct Datasets;

fn root(params: &Params) -> Result<(DataRoot, String)> {
    let shared = project_root().join(&params.shared_dir);
    let shared_root = || {
        (
            DataRoot::shared(&shared),
            format!("originals in {}", params.shared_dir.display()),
        )
    };
    match params.data_root {
        RootChoice::Shared => Ok(shared_root()),
        RootChoice::Committed => {
            let r = DataRoot::committed().context("data_root = \"committed\"")?;
            let what = format!(
                "committed copies in {} (checksums verified)",
                root_relative(&r.dir().display().to_string())
            );
            Ok((r, what))
        }
        RootChoice::Auto => Ok(match DataRoot::committed() {
            Ok(r) => {
                let what = format!(
                    "committed copies in {} (checksums verified)",
                    root_relative(&r.dir().display().to_string())
                );
                (r, what)
            }
            Err(_) => shared_root(),
        }),
    }
}

/// The rows of a graph dataset; an error if it cannot be loaded.
fn graph_rows(root: &DataRoot, id: &str, name: DatasetName, convention: EdgeConvention) -> Result<Vec<Row>> {
    let start = Instant::now();
    let self_loops = match convention {
        EdgeConvention::ArcsWithSelfLoops => SelfLoops::AddMissing,
        _ => SelfLoops::AsInFile,
    };
    let g = root.graph(name, &GraphOptions::default().self_loops(self_loops))?;
    let s = g.stats();
    let edges = match convention {
        EdgeConvention::Arcs | EdgeConvention::ArcsWithSelfLoops => s.arcs,
        EdgeConvention::UndirectedPairs => s.undirected_pairs,
    };
    let note = match convention {
        EdgeConvention::Arcs => "edges = stored arcs",
        EdgeConvention::ArcsWithSelfLoops => "edges = stored arcs (both directions) plus a self-loop per node",
        EdgeConvention::UndirectedPairs => "edges = undirected pairs",
    };
    let secs = start.elapsed().as_secs_f64();
    let count = |metric: &str, v: usize| Row::ok(id, "data", metric, v as f64).seconds(secs);
    Ok(vec![
        count("nodes", s.nodes),
        count("edges", edges).note(note),
        count("classes", s.classes),
        count("arcs", s.arcs),
        count("self_loops", s.self_loops),
        count("undirected_pairs", s.undirected_pairs),
        count("labelled_nodes", s.labelled_nodes),
    ])
}

/// The rows of a document-term dataset: counts from the file (the cell's failure rows for them
/// when it cannot be loaded) and the term clusters, a protocol value from the spec.
fn document_term_rows(
    cx: &Context<'_>,
    cell: &Cell,
    root: &DataRoot,
    name: DatasetName,
    term_clusters: Option<usize>,
) -> Vec<Row> {
    let id = cell.dataset.as_str();
    let start = Instant::now();
    let mut rows = match root.document_term(name) {
        Ok(d) => {
            let s = d.stats();
            let secs = start.elapsed().as_secs_f64();
            let count = |metric: &str, v: usize| Row::ok(id, "data", metric, v as f64).seconds(secs);
            vec![
                count("documents", s.documents),
                count("terms", s.terms),
                count("doc_clusters", s.clusters),
            ]
        }
        Err(e) => cx
            .failed_rows(cell, &e.into())
            .into_iter()
            .filter(|r| r.metric != "term_clusters")
            .collect(),
    };
    rows.push(match term_clusters {
        Some(k) => Row::ok(id, "data", "term_clusters", k as f64).note("protocol value from the spec"),
        None => Row::status(
            id,
            "data",
            "term_clusters",
            Status::MissingData,
            Some("no `term_clusters` entry in [params]".into()),
        ),
    });
    rows
}

impl Experiment for Datasets {
    type Params = Params;

    fn run(&self, cx: &Context<'_>, params: &Params) -> Result<Vec<Row>> {
        let (root, what) = root(params)?;
        cx.progress.set_message(what.clone());
        // Every dataset is checked before the cells run: a wrong spec is an error of the spec.
        for id in &cx.spec.run_datasets {
            let name: DatasetName = id.parse().with_context(|| format!("dataset `{id}` of the spec"))?;
            match name.kind() {
                DatasetKind::Graph if !params.edge_convention.contains_key(id) => {
                    bail!("[params] edge_convention has no entry for graph dataset `{id}`")
                }
                DatasetKind::Graph | DatasetKind::DocumentTerm => {}
                other => bail!(
                    "dataset `{id}` is a {other} dataset; the datasets tables cover graphs and document-term data"
                ),
            }
        }
        let cells = cx.grid().methods(["data"]).unseeded().cells();
        let rows = cx.run_cells_uncached(&cells, |cell, _| {
            let id = cell.dataset.as_str();
            let name: DatasetName = id.parse()?;
            Ok(match params.edge_convention.get(id) {
                Some(&conv) if name.kind() == DatasetKind::Graph => graph_rows(&root, id, name, conv)?,
                _ => document_term_rows(cx, cell, &root, name, params.term_clusters.get(id).copied()),
            })
        })?;
        Ok(rows
            .into_iter()
            .map(|r| {
                if r.status == Status::Ok && r.note.is_none() {
                    r.note(format!("read from {what}"))
                } else {
                    r
                }
            })
            .collect())
    }
}
