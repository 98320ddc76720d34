//! Directed graphs given as an edge list: one arc `src dst` per line.
use std::collections::HashMap;
use std::path::Path;

use ksvd_linalg::{CsrMatrix, Vocabulary};

use crate::error::{DatasetError, Result};
use crate::matrix::{fields, for_data_lines, TextOptions};

/// How the node ids of an edge list become row / column indices of the adjacency matrix.
///
/// Names ([`Vocabulary::name`], what `Display` writes and [`FromStr`](std::str::FromStr) reads):
/// `auto`, `index`, `name` (the `ksvd` command's `--node-ids`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum NodeIds {
    /// `index` when every id is an integer and the ids cover `0..=max` without a gap (no node
    /// is invented), `name` otherwise: paper ids such as Cora's (up to 1.15 million for 2708
    /// papers) must not become a million isolated nodes.
    #[default]
    Auto,
    /// Integer ids are the indices `0..=max id`; ids that appear in no arc are isolated nodes.
    Index,
    /// Every id is a name; nodes are numbered by first appearance.
    Name,
}

impl Vocabulary for NodeIds {
    const WHAT: &'static str = "node numbering";
    const ALL: &'static [NodeIds] = &[NodeIds::Auto, NodeIds::Index, NodeIds::Name];

    fn names(self) -> &'static [&'static str] {
        match self {
            NodeIds::Auto => &["auto"],
            NodeIds::Index => &["index"],
            NodeIds::Name => &["name"],
        }
    }
}

ksvd_linalg::vocabulary_traits!(NodeIds);

/// A directed graph read from an edge list.
#[derive(Debug, Clone, PartialEq)]
pub struct EdgeList {
    /// Adjacency `A[src, dst] = 1` (`n x n`; repeated arcs count once).
    pub adjacency: CsrMatrix,
    /// Node names in index order; `None` when the ids are the indices `0..n`.
    pub names: Option<Vec<String>>,
}

/// Reads an edge list: one arc `src dst` per line (whitespace, comma or semicolon separated;
/// further fields ignored; blank lines and `#` comments skipped), numbering the nodes as `ids`
/// says.
pub fn read_edge_list(path: &Path, ids: NodeIds) -> Result<EdgeList> {
    // (1-based line, src, dst)
    let mut pairs: Vec<(usize, String, String)> = Vec::new();
    for_data_lines(path, &TextOptions::default(), |line_no, line| {
        let mut f = fields(line);
        match (f.next(), f.next()) {
            (Some(a), Some(b)) => {
                pairs.push((line_no, a.to_string(), b.to_string()));
                Ok(())
            }
            _ => Err(DatasetError::parse(
                path,
                line_no,
                format!("expected `src dst`, found `{line}`"),
            )),
        }
    })?;
    if pairs.is_empty() {
        return Err(DatasetError::InvalidValue {
            path: path.to_path_buf(),
            message: "no edges".into(),
        });
    }
    let numeric: Option<Vec<(usize, usize)>> = match ids {
        NodeIds::Name => None,
        NodeIds::Auto | NodeIds::Index => pairs
            .iter()
            .map(|(_, a, b)| Some((a.parse::<usize>().ok()?, b.parse::<usize>().ok()?)))
            .collect(),
    };
    if ids == NodeIds::Index && numeric.is_none() {
        // The first id that is not an index, with its line.
        if let Some((line, id)) = pairs
            .iter()
            .flat_map(|(line, a, b)| [(*line, a), (*line, b)])
            .find(|(_, id)| id.parse::<usize>().is_err())
        {
            return Err(DatasetError::parse(
                path,
                line,
                format!("node id `{id}` is not a non-negative integer (node ids `index`); number the nodes by name"),
            ));
        }
    }
    // `auto`: integer ids are indices only when they leave no gap in 0..=max.
    let numeric = numeric.filter(|e| ids == NodeIds::Index || covers_range(e));
    let (arcs, n, names) = match numeric {
        Some(e) => {
            let max = e.iter().map(|&(a, b)| a.max(b)).max().unwrap_or(0);
            let n = max.checked_add(1).ok_or_else(|| DatasetError::InvalidValue {
                path: path.to_path_buf(),
                message: format!("node id {max} is too large for an index"),
            })?;
            (e, n, None)
        }
        None => {
            let mut index = HashMap::new();
            let mut names = Vec::new();
            let mut id = |s: &String| {
                *index.entry(s.clone()).or_insert_with(|| {
                    names.push(s.clone());
                    names.len() - 1
                })
            };
            let e: Vec<(usize, usize)> = pairs.iter().map(|(_, a, b)| (id(a), id(b))).collect();
            let n = names.len();
            (e, n, Some(names))
        }
    };
    let mut triplets: Vec<(usize, usize, f64)> = arcs.into_iter().map(|(a, b)| (a, b, 1.0)).collect();
    triplets.sort_unstable_by_key(|t| (t.0, t.1));
    triplets.dedup_by_key(|t| (t.0, t.1));
    let adjacency = CsrMatrix::from_triplets(n, n, triplets).map_err(|e| DatasetError::matrix(path, e))?;
    Ok(EdgeList { adjacency, names })
}

/// Whether the ids of `arcs` are exactly `0..=max` (every index in between appears).
fn covers_range(arcs: &[(usize, usize)]) -> bool {
    let max = arcs.iter().map(|&(a, b)| a.max(b)).max().unwrap_or(0);
    if max >= 2 * arcs.len() {
        // More indices than the arcs' two ends: some must be missing.
        return false;
    }
    let mut seen = vec![false; max + 1];
    for &(a, b) in arcs {
        seen[a] = true;
        seen[b] = true;
    }
    seen.into_iter().all(|s| s)
}
