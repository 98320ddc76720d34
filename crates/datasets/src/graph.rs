//! Graphs with node labels: the directed citation graphs (Cora, CiteSeer, Pubmed) and the
//! undirected social graphs (Twitch PT, BlogCatalog), with the readers of their original formats.
//!
//! Convention everywhere: `adjacency[src, dst] = 1` for an arc `src -> dst`; for citation graphs
//! `src` is the citing paper and `dst` the cited paper. Undirected sources store both directions.
use std::collections::HashMap;
use std::path::Path;

use ksvd_linalg::CsrMatrix;
use petgraph::graph::DiGraph;

use crate::error::{DatasetError, Result};
use crate::io::LineReader;

/// Node labels of a graph, indexed like its nodes.
#[derive(Debug, Clone, PartialEq)]
pub enum Labels {
    /// One class per node (`None` for nodes without a label, e.g. CiteSeer's 15 dangling ids).
    Single {
        /// Class index `0..class_names.len()` of every node.
        classes: Vec<Option<usize>>,
        /// Name of every class, indexed by class.
        class_names: Vec<String>,
    },
    /// Any number of classes per node (BlogCatalog groups); each set is sorted and duplicate-free.
    Multi {
        /// Class indices of every node.
        sets: Vec<Vec<usize>>,
        /// Name of every class, indexed by class.
        class_names: Vec<String>,
    },
}

impl Labels {
    /// Number of classes (including classes no node carries, if the source declares them).
    pub fn n_classes(&self) -> usize {
        self.class_names().len()
    }

    /// Names of the classes, indexed by class.
    pub fn class_names(&self) -> &[String] {
        match self {
            Self::Single { class_names, .. } | Self::Multi { class_names, .. } => class_names,
        }
    }

    /// Number of nodes the labels cover.
    pub fn len(&self) -> usize {
        match self {
            Self::Single { classes, .. } => classes.len(),
            Self::Multi { sets, .. } => sets.len(),
        }
    }

    /// `true` when the labels cover no node.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `true` for multi-label data.
    pub fn is_multi(&self) -> bool {
        matches!(self, Self::Multi { .. })
    }

    /// Indices of the nodes that carry at least one label.
    pub fn labelled_nodes(&self) -> Vec<usize> {
        match self {
            Self::Single { classes, .. } => classes.iter().enumerate().filter_map(|(i, c)| c.map(|_| i)).collect(),
            Self::Multi { sets, .. } => sets
                .iter()
                .enumerate()
                .filter(|(_, s)| !s.is_empty())
                .map(|(i, _)| i)
                .collect(),
        }
    }

    /// Number of (node, class) memberships.
    pub fn memberships(&self) -> usize {
        match self {
            Self::Single { classes, .. } => classes.iter().flatten().count(),
            Self::Multi { sets, .. } => sets.iter().map(Vec::len).sum(),
        }
    }

    /// How many nodes carry each class.
    pub fn class_counts(&self) -> Vec<usize> {
        let mut counts = vec![0usize; self.n_classes()];
        match self {
            Self::Single { classes, .. } => classes.iter().flatten().for_each(|&c| bump(&mut counts, c)),
            Self::Multi { sets, .. } => sets.iter().flatten().for_each(|&c| bump(&mut counts, c)),
        }
        counts
    }

    fn extend_unlabelled(&mut self, extra: usize) {
        match self {
            Self::Single { classes, .. } => classes.extend(std::iter::repeat_n(None, extra)),
            Self::Multi { sets, .. } => sets.extend(std::iter::repeat_n(Vec::new(), extra)),
        }
    }
}

/// Adds one to `counts[c]`, growing `counts` for classes beyond the declared names.
fn bump(counts: &mut Vec<usize>, c: usize) {
    if c >= counts.len() {
        counts.resize(c + 1, 0);
    }
    counts[c] += 1;
}

/// What to do with self-loops (arcs `i -> i`) when building a graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SelfLoops {
    /// Keep exactly the self-loops the file lists (CiteSeer has 124, Pubmed 3, the others none).
    #[default]
    AsInFile,
    /// Add `i -> i` for every node that lacks it. Twitch PT then has `2 * 31299 + 1912 = 64510`
    /// arcs, the count the paper reports (PyTorch Geometric's convention).
    AddMissing,
    /// Drop every self-loop.
    Remove,
}

/// Options applied while building a [`Graph`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GraphOptions {
    /// Self-loop policy (default: as in the file).
    pub self_loops: SelfLoops,
}

impl GraphOptions {
    /// Sets the self-loop policy.
    pub fn self_loops(mut self, self_loops: SelfLoops) -> Self {
        self.self_loops = self_loops;
        self
    }
}

/// A graph with labelled nodes.
///
/// `adjacency` is `n x n` with `adjacency[src, dst] = 1.0` for every arc `src -> dst` (rows are
/// sources, columns targets). For citation graphs an arc goes from the citing to the cited paper.
/// For undirected sources (`directed == false`) both directions are stored, so the matrix is
/// symmetric. Repeated arcs in a file collapse to one entry of weight 1 (counted in
/// `duplicate_records`).
#[derive(Debug, Clone, PartialEq)]
pub struct Graph {
    /// Registry name or a user-chosen name.
    pub name: String,
    /// The `n x n` 0/1 adjacency matrix, `A[src, dst] = 1`.
    pub adjacency: CsrMatrix,
    /// Original id of every node (paper id, PMID, user id), indexed like the rows of `adjacency`.
    pub node_ids: Vec<String>,
    /// Node labels, indexed like the nodes.
    pub labels: Labels,
    /// `false` when the source lists undirected pairs (then `adjacency` is symmetric).
    pub directed: bool,
    /// Edge records in the file that repeated an arc (directed) or pair (undirected) already seen.
    pub duplicate_records: usize,
}

/// Counts for the paper's dataset tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GraphStats {
    /// Number of nodes.
    pub nodes: usize,
    /// Stored arcs, i.e. non-zeros of the adjacency (an undirected pair counts twice, a loop once).
    pub arcs: usize,
    /// Arcs `i -> i`.
    pub self_loops: usize,
    /// Unordered pairs `{i, j}`, `i != j`, joined in both directions.
    pub reciprocal_pairs: usize,
    /// Unordered pairs `{i, j}`, `i != j`, joined in at least one direction.
    pub undirected_pairs: usize,
    /// Number of classes.
    pub classes: usize,
    /// Nodes with at least one label.
    pub labelled_nodes: usize,
    /// (node, class) memberships (equals `labelled_nodes` for single-label data).
    pub memberships: usize,
}

impl Graph {
    /// Number of nodes.
    pub fn n_nodes(&self) -> usize {
        self.node_ids.len()
    }

    /// Number of stored arcs (non-zeros of the adjacency).
    pub fn n_arcs(&self) -> usize {
        self.adjacency.nnz()
    }

    /// Node, arc and class counts.
    pub fn stats(&self) -> GraphStats {
        let a = &self.adjacency;
        let (mut self_loops, mut reciprocal, mut non_loop) = (0, 0, 0);
        for i in 0..a.nrows() {
            for &j in a.row(i).0 {
                if i == j {
                    self_loops += 1;
                } else {
                    non_loop += 1;
                    if i < j && a.get(j, i).is_some_and(|v| v != 0.0) {
                        reciprocal += 1;
                    }
                }
            }
        }
        GraphStats {
            nodes: self.n_nodes(),
            arcs: a.nnz(),
            self_loops,
            reciprocal_pairs: reciprocal,
            undirected_pairs: non_loop - reciprocal,
            classes: self.labels.n_classes(),
            labelled_nodes: self.labels.labelled_nodes().len(),
            memberships: self.labels.memberships(),
        }
    }

    /// The graph as a `petgraph` directed graph: node `i` has weight `i` (index into `node_ids`),
    /// every stored arc `src -> dst` becomes an edge with the adjacency value as weight.
    pub fn to_petgraph(&self) -> DiGraph<usize, f64> {
        let a = &self.adjacency;
        let n = self.n_nodes().max(a.nrows()).max(a.ncols());
        let mut g = DiGraph::with_capacity(n, self.n_arcs());
        let nodes: Vec<_> = (0..n).map(|i| g.add_node(i)).collect();
        for i in 0..a.nrows() {
            let (idx, val) = a.row(i);
            for (&j, &v) in idx.iter().zip(val) {
                g.add_edge(nodes[i], nodes[j], v);
            }
        }
        g
    }

    /// Index of the node with original id `id` (a linear search).
    pub fn node_index(&self, id: &str) -> Option<usize> {
        self.node_ids.iter().position(|x| x == id)
    }
}

/// Collects nodes (in first-seen order) and arcs, then assembles a [`Graph`].
struct GraphBuilder {
    ids: Vec<String>,
    index: HashMap<String, usize>,
    arcs: Vec<(usize, usize)>,
}

impl GraphBuilder {
    fn with_nodes(ids: Vec<String>, path: &Path) -> Result<Self> {
        let mut index = HashMap::with_capacity(ids.len());
        for (i, id) in ids.iter().enumerate() {
            if index.insert(id.clone(), i).is_some() {
                return Err(DatasetError::inconsistent(
                    path,
                    format!("node id `{id}` is listed twice"),
                ));
            }
        }
        Ok(Self {
            ids,
            index,
            arcs: Vec::new(),
        })
    }

    fn node(&mut self, id: &str) -> usize {
        if let Some(&i) = self.index.get(id) {
            return i;
        }
        let i = self.ids.len();
        self.ids.push(id.to_string());
        self.index.insert(id.to_string(), i);
        i
    }

    fn existing(&self, id: &str, path: &Path, line: usize) -> Result<usize> {
        self.index
            .get(id)
            .copied()
            .ok_or_else(|| DatasetError::parse(path, line, format!("unknown node id `{id}`")))
    }

    fn build(
        self,
        name: &str,
        mut labels: Labels,
        directed: bool,
        options: &GraphOptions,
        path: &Path,
    ) -> Result<Graph> {
        let n = self.ids.len();
        let records = self.arcs.len();
        let mut arcs = self.arcs;
        // Duplicate records: repeated arcs (directed) or repeated unordered pairs (undirected).
        let mut keys: Vec<(usize, usize)> = if directed {
            arcs.clone()
        } else {
            arcs.iter().map(|&(u, v)| (u.min(v), u.max(v))).collect()
        };
        keys.sort_unstable();
        keys.dedup();
        let duplicate_records = records - keys.len();
        if !directed {
            arcs = keys.iter().flat_map(|&(u, v)| [(u, v), (v, u)]).collect();
        }
        match options.self_loops {
            SelfLoops::AsInFile => {}
            SelfLoops::Remove => arcs.retain(|&(u, v)| u != v),
            SelfLoops::AddMissing => arcs.extend((0..n).map(|i| (i, i))),
        }
        arcs.sort_unstable();
        arcs.dedup();
        let mut indptr = vec![0usize; n + 1];
        for &(u, _) in &arcs {
            indptr[u + 1] += 1;
        }
        for i in 0..n {
            indptr[i + 1] += indptr[i];
        }
        let indices: Vec<usize> = arcs.iter().map(|&(_, v)| v).collect();
        let data = vec![1.0; indices.len()];
        let adjacency = CsrMatrix::try_new(n, n, indptr, indices, data).map_err(|e| DatasetError::matrix(path, e))?;
        if labels.len() < n {
            labels.extend_unlabelled(n - labels.len());
        }
        Ok(Graph {
            name: name.to_string(),
            adjacency,
            node_ids: self.ids,
            labels,
            directed,
            duplicate_records,
        })
    }
}

/// Class names sorted in byte order and the index of each name.
fn class_index(names: impl IntoIterator<Item = String>) -> (Vec<String>, HashMap<String, usize>) {
    let mut v: Vec<String> = names.into_iter().collect();
    v.sort_unstable();
    v.dedup();
    let map = v.iter().enumerate().map(|(i, s)| (s.clone(), i)).collect();
    (v, map)
}

// ---------------------------------------------------------------------------------------------
// LINQS .content / .cites (Cora, CiteSeer)
// ---------------------------------------------------------------------------------------------

/// The id and label columns of a LINQS `.content` file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinqsContent {
    /// Paper ids, in file order.
    pub ids: Vec<String>,
    /// Class label strings, in file order.
    pub labels: Vec<String>,
    /// Number of feature columns between id and label (equal on every line; 0 for trimmed files).
    pub n_features: usize,
}

/// Reads a LINQS `.content` file: `<id>\t<features...>\t<label>` per line.
///
/// Only the first (id) and last (label) tab-separated fields are kept; the word-indicator
/// columns in between are skipped (they may be absent, as in the trimmed copies in `data/`), but
/// every line must have the same number of them. Blank lines are ignored.
pub fn read_linqs_content(path: &Path) -> Result<LinqsContent> {
    let mut r = LineReader::open(path)?;
    let (mut ids, mut labels) = (Vec::new(), Vec::new());
    let mut n_features = None;
    while let Some((line_no, line)) = r.next_line()? {
        if line.trim().is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split('\t').collect();
        if fields.len() < 2 {
            return Err(DatasetError::parse(
                path,
                line_no,
                "expected `<id>\\t[features\\t]<label>`, found one field",
            ));
        }
        let nf = fields.len() - 2;
        match n_features {
            None => n_features = Some(nf),
            Some(k) if k != nf => {
                return Err(DatasetError::parse(
                    path,
                    line_no,
                    format!("{nf} feature columns, earlier lines have {k}"),
                ))
            }
            Some(_) => {}
        }
        let (id, label) = (fields[0].trim(), fields[fields.len() - 1].trim());
        if id.is_empty() || label.is_empty() {
            return Err(DatasetError::parse(path, line_no, "empty id or label"));
        }
        ids.push(id.to_string());
        labels.push(label.to_string());
    }
    Ok(LinqsContent {
        ids,
        labels,
        n_features: n_features.unwrap_or(0),
    })
}

/// Reads a LINQS `.cites` file. Each line is `<cited id>\t<citing id>` (the LINQS README: "the
/// paper on the right cites the paper on the left"); returns `(cited, citing)` pairs in file order.
pub fn read_linqs_cites(path: &Path) -> Result<Vec<(String, String)>> {
    let mut r = LineReader::open(path)?;
    let mut out = Vec::new();
    while let Some((line_no, line)) = r.next_line()? {
        if line.trim().is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.len() != 2 {
            return Err(DatasetError::parse(
                path,
                line_no,
                format!(
                    "expected `<cited id>\\t<citing id>`, found {} fields in `{line}`",
                    fields.len()
                ),
            ));
        }
        out.push((fields[0].to_string(), fields[1].to_string()));
    }
    Ok(out)
}

/// Builds a LINQS citation graph (Cora, CiteSeer) from its `.cites` and `.content` files.
///
/// Nodes are the content rows in file order, followed by ids that occur only in the cites file,
/// in order of first appearance (these get label `None`: CiteSeer has 15). A line `a\tb` gives
/// the arc `b -> a` (citing -> cited). Classes are the label strings sorted in byte order.
pub fn load_linqs_graph(name: &str, cites: &Path, content: &Path, options: &GraphOptions) -> Result<Graph> {
    let c = read_linqs_content(content)?;
    let (class_names, map) = class_index(c.labels.iter().cloned());
    let classes = c.labels.iter().map(|l| map.get(l).copied()).collect();
    let mut b = GraphBuilder::with_nodes(c.ids, content)?;
    for (cited, citing) in read_linqs_cites(cites)? {
        let (t, s) = (b.node(&cited), b.node(&citing));
        b.arcs.push((s, t));
    }
    b.build(name, Labels::Single { classes, class_names }, true, options, cites)
}

// ---------------------------------------------------------------------------------------------
// Pubmed-Diabetes
// ---------------------------------------------------------------------------------------------

/// Reads `Pubmed-Diabetes.DIRECTED.cites.tab`; returns `(citing, cited)` PMID pairs in file order.
///
/// Data lines are `<edge id>\tpaper:<A>\t|\tpaper:<B>`, meaning **A cites B** (left to right, the
/// opposite of the Cora/CiteSeer `.cites` convention). The LINQS header lines (`DIRECTED\tcites`,
/// `NO_FEATURES`, possibly `#`-prefixed) are skipped.
pub fn read_pubmed_cites(path: &Path) -> Result<Vec<(String, String)>> {
    let mut r = LineReader::open(path)?;
    let mut out = Vec::new();
    while let Some((line_no, line)) = r.next_line()? {
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') || (out.is_empty() && (t.starts_with("DIRECTED") || t == "NO_FEATURES")) {
            continue;
        }
        let fields: Vec<&str> = t.split('\t').map(str::trim).collect();
        let paper = |f: &str| f.strip_prefix("paper:").filter(|p| !p.is_empty()).map(str::to_string);
        match fields.as_slice() {
            [_, a, "|", b] => match (paper(a), paper(b)) {
                (Some(a), Some(b)) => out.push((a, b)),
                _ => {
                    return Err(DatasetError::parse(
                        path,
                        line_no,
                        format!("expected `paper:<id>` fields in `{t}`"),
                    ))
                }
            },
            _ => {
                return Err(DatasetError::parse(
                    path,
                    line_no,
                    format!("expected `<edge id>\\tpaper:<A>\\t|\\tpaper:<B>`, found `{t}`"),
                ))
            }
        }
    }
    Ok(out)
}

/// How a PMID of the derived Pubmed label table was matched to a Planetoid node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PubmedMatch {
    /// The pairing is forced by the graph structure; the label is exact.
    Unique,
    /// Several structurally identical nodes all carry the same label; the label is exact.
    ClassUniform,
    /// Strict twins with differing labels: the label may be swapped with a twin's.
    TwinGroup(usize),
}

/// One row of `pubmed_pmid_labels.derived.tsv`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PubmedLabelRow {
    /// PubMed id.
    pub pmid: String,
    /// LINQS label number `1..=3` (the `label=` field of `NODE.paper.tab`).
    pub label: usize,
    /// Index of the matched Planetoid node.
    pub planetoid_index: usize,
    /// Quality of the match.
    pub matched: PubmedMatch,
}

/// Reads the **derived** PMID -> label table `pubmed_pmid_labels.derived.tsv`.
///
/// Header `pmid label planetoid_index match twin_group` (tab separated). The table was built in
/// `shared/data/pubmed` by graph matching the LINQS citation graph to the Planetoid graph (the
/// original `NODE.paper.tab` was unobtainable): labels are exact for 18780 PMIDs; for 937 strict
/// twins (`match = twin_group`) a label may be swapped with its twin's. See `data/pubmed/SOURCE.md`.
pub fn read_pubmed_derived_labels(path: &Path) -> Result<Vec<PubmedLabelRow>> {
    let mut r = LineReader::open(path)?;
    let mut out = Vec::new();
    let mut seen_header = false;
    while let Some((line_no, line)) = r.next_line()? {
        if line.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split('\t').map(str::trim).collect();
        if !seen_header {
            if f.len() < 4 || f[0] != "pmid" || f[1] != "label" || f[2] != "planetoid_index" || f[3] != "match" {
                return Err(DatasetError::parse(
                    path,
                    line_no,
                    format!("expected header `pmid\\tlabel\\tplanetoid_index\\tmatch\\ttwin_group`, found `{line}`"),
                ));
            }
            seen_header = true;
            continue;
        }
        if f.len() < 4 {
            return Err(DatasetError::parse(
                path,
                line_no,
                format!("expected 5 tab-separated fields, found {}", f.len()),
            ));
        }
        let num = |s: &str, what: &str| {
            s.parse::<usize>()
                .map_err(|_| DatasetError::parse(path, line_no, format!("{what} `{s}` is not an integer")))
        };
        let label = num(f[1], "label")?;
        if !(1..=3).contains(&label) {
            return Err(DatasetError::parse(
                path,
                line_no,
                format!("label {label} outside 1..=3"),
            ));
        }
        let matched = match f[3] {
            "unique" => PubmedMatch::Unique,
            "class_uniform" => PubmedMatch::ClassUniform,
            "twin_group" => PubmedMatch::TwinGroup(num(f.get(4).copied().unwrap_or(""), "twin_group")?),
            other => {
                return Err(DatasetError::parse(
                    path,
                    line_no,
                    format!("unknown match kind `{other}`"),
                ))
            }
        };
        out.push(PubmedLabelRow {
            pmid: f[0].to_string(),
            label,
            planetoid_index: num(f[2], "planetoid_index")?,
            matched,
        });
    }
    Ok(out)
}

/// The content of a LINQS `Pubmed-Diabetes.NODE.paper.tab` file.
#[derive(Debug, Clone, PartialEq)]
pub struct PubmedNodeTable {
    /// PMIDs in file order.
    pub pmids: Vec<String>,
    /// LINQS label numbers (`label=1..3`) in file order.
    pub labels: Vec<usize>,
    /// The vocabulary (`w-rat`, `w-common`, ... in declaration order; 500 words in the release).
    pub words: Vec<String>,
    /// TF-IDF weights, papers x words (the same matrix as BCOT's `pubmed.mat` `fea`, up to row order).
    pub tfidf: CsrMatrix,
}

/// Reads the LINQS `Pubmed-Diabetes.NODE.paper.tab` (not shipped here; readable when supplied).
///
/// Format (tab separated): line 1 `NODE\tpaper`; line 2 declares the attributes,
/// `cat=1,2,3:label\tnumeric:w-rat\tnumeric:w-common\t...\tstring:summary`; then one line per
/// paper, `<pmid>\tlabel=<k>\tw-rat=<x>\t...\tsummary=<words>`, listing only non-zero words.
pub fn read_pubmed_node_paper(path: &Path) -> Result<PubmedNodeTable> {
    let mut r = LineReader::open(path)?;
    let mut words: Option<(Vec<String>, HashMap<String, usize>)> = None;
    let (mut pmids, mut labels, mut triplets) = (Vec::new(), Vec::new(), Vec::new());
    let mut seen_node_header = false;
    let mut last_line = 0;
    while let Some((line_no, line)) = r.next_line()? {
        last_line = line_no;
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        let t = t.strip_prefix('#').map(str::trim).unwrap_or(t);
        if !seen_node_header {
            if !t.starts_with("NODE") {
                return Err(DatasetError::parse(
                    path,
                    line_no,
                    format!("expected header `NODE\\tpaper`, found `{t}`"),
                ));
            }
            seen_node_header = true;
            continue;
        }
        if words.is_none() {
            let mut vocab = Vec::new();
            for decl in t.split('\t').map(str::trim) {
                if let Some(w) = decl.strip_prefix("numeric:") {
                    vocab.push(w.to_string());
                } else if !(decl.starts_with("cat=") || decl.starts_with("string:")) {
                    return Err(DatasetError::parse(
                        path,
                        line_no,
                        format!("unknown attribute declaration `{decl}`"),
                    ));
                }
            }
            let index = vocab.iter().enumerate().map(|(i, w)| (w.clone(), i)).collect();
            words = Some((vocab, index));
            continue;
        }
        let Some((_, index)) = &words else { continue };
        let mut fields = t.split('\t').map(str::trim);
        let pmid = fields.next().unwrap_or_default();
        let row = pmids.len();
        let mut label = None;
        for f in fields {
            let Some((key, value)) = f.split_once('=') else {
                return Err(DatasetError::parse(
                    path,
                    line_no,
                    format!("expected `key=value`, found `{f}`"),
                ));
            };
            match key {
                "label" => {
                    let l = value.parse::<usize>().map_err(|_| {
                        DatasetError::parse(path, line_no, format!("label `{value}` is not an integer"))
                    })?;
                    label = Some(l);
                }
                "summary" => {}
                w => {
                    let j = *index.get(w).ok_or_else(|| {
                        DatasetError::parse(path, line_no, format!("word `{w}` is not declared on line 2"))
                    })?;
                    let x = value
                        .parse::<f64>()
                        .ok()
                        .filter(|x| x.is_finite())
                        .ok_or_else(|| DatasetError::parse(path, line_no, format!("value `{value}` of `{w}`")))?;
                    triplets.push((row, j, x));
                }
            }
        }
        let label = label.ok_or_else(|| DatasetError::parse(path, line_no, "no `label=` field"))?;
        pmids.push(pmid.to_string());
        labels.push(label);
    }
    let Some((vocab, _)) = words else {
        return Err(DatasetError::parse(
            path,
            last_line + 1,
            "missing the attribute declaration line (line 2)",
        ));
    };
    let tfidf =
        CsrMatrix::from_triplets(pmids.len(), vocab.len(), triplets).map_err(|e| DatasetError::matrix(path, e))?;
    Ok(PubmedNodeTable {
        pmids,
        labels,
        words: vocab,
        tfidf,
    })
}

/// Where the Pubmed labels come from.
#[derive(Debug, Clone, Copy)]
pub enum PubmedLabelFile<'a> {
    /// The derived table `pubmed_pmid_labels.derived.tsv` (shipped).
    Derived(&'a Path),
    /// The original LINQS `Pubmed-Diabetes.NODE.paper.tab` (user-supplied).
    NodePaperTab(&'a Path),
}

/// Builds the Pubmed citation graph: arcs citing -> cited, classes `0..3` = LINQS labels `1..=3`
/// minus one (class names `"1"`, `"2"`, `"3"`: the LINQS README names the classes "Diabetes
/// Mellitus, Experimental", "Type 1" and "Type 2", but which number is which is not verified). Nodes are the label table's PMIDs in its order (sorted numerically in the derived
/// table), then PMIDs found only in the cites file, in order of first appearance (unlabelled).
pub fn load_pubmed_graph(cites: &Path, labels: PubmedLabelFile<'_>, options: &GraphOptions) -> Result<Graph> {
    let (ids, raw): (Vec<String>, Vec<usize>) = match labels {
        PubmedLabelFile::Derived(p) => read_pubmed_derived_labels(p)?
            .into_iter()
            .map(|r| (r.pmid, r.label))
            .unzip(),
        PubmedLabelFile::NodePaperTab(p) => {
            let t = read_pubmed_node_paper(p)?;
            (t.pmids, t.labels)
        }
    };
    let label_path = match labels {
        PubmedLabelFile::Derived(p) | PubmedLabelFile::NodePaperTab(p) => p,
    };
    let mut classes = Vec::with_capacity(raw.len());
    for (i, &l) in raw.iter().enumerate() {
        if !(1..=3).contains(&l) {
            return Err(DatasetError::inconsistent(
                label_path,
                format!("row {i}: label {l} outside 1..=3"),
            ));
        }
        classes.push(Some(l - 1));
    }
    let class_names = vec!["1".to_string(), "2".to_string(), "3".to_string()];
    let mut b = GraphBuilder::with_nodes(ids, label_path)?;
    for (citing, cited) in read_pubmed_cites(cites)? {
        let (s, t) = (b.node(&citing), b.node(&cited));
        b.arcs.push((s, t));
    }
    b.build("pubmed", Labels::Single { classes, class_names }, true, options, cites)
}

// ---------------------------------------------------------------------------------------------
// MUSAE (Twitch) and ASU (BlogCatalog) CSVs
// ---------------------------------------------------------------------------------------------

fn split_csv(line: &str) -> Vec<&str> {
    line.split(',').map(str::trim).collect()
}

/// Reads a two-column integer edge CSV (`u,v`), skipping a non-numeric header line if present.
fn read_pair_csv(path: &Path) -> Result<Vec<(usize, usize, usize)>> {
    let mut r = LineReader::open(path)?;
    let mut out = Vec::new();
    let mut first = true;
    while let Some((line_no, line)) = r.next_line()? {
        if line.trim().is_empty() {
            continue;
        }
        let f = split_csv(line);
        let parsed = match f.as_slice() {
            [a, b] => a.parse::<usize>().ok().zip(b.parse::<usize>().ok()),
            _ => None,
        };
        match parsed {
            Some((a, b)) => out.push((line_no, a, b)),
            None if first && f.len() == 2 => {} // header such as `from,to`
            None => {
                return Err(DatasetError::parse(
                    path,
                    line_no,
                    format!("expected two non-negative integers `u,v`, found `{line}`"),
                ))
            }
        }
        first = false;
    }
    Ok(out)
}

/// Builds the Twitch graph from MUSAE's `musae_<LANG>_edges.csv` (`from,to`, undirected, node ids
/// `0..n`) and `musae_<LANG>_target.csv` (header `id,days,mature,views,partner,new_id`).
///
/// Node `i` is the user with `new_id == i` (`node_ids[i]` is that `new_id`). Class = `mature`:
/// `False` = 0, `True` = 1. Both directions of every pair are stored; use
/// [`SelfLoops::AddMissing`] for the paper's 64510-arc count.
pub fn load_musae_graph(name: &str, edges: &Path, target: &Path, options: &GraphOptions) -> Result<Graph> {
    let mut r = LineReader::open(target)?;
    let (mut col_new, mut col_mature) = (None, None);
    let mut rows: Vec<(usize, usize, bool)> = Vec::new();
    while let Some((line_no, line)) = r.next_line()? {
        if line.trim().is_empty() {
            continue;
        }
        let f = split_csv(line);
        let (Some(cn), Some(cm)) = (col_new, col_mature) else {
            col_new = f.iter().position(|h| *h == "new_id");
            col_mature = f.iter().position(|h| *h == "mature");
            if col_new.is_none() || col_mature.is_none() {
                return Err(DatasetError::parse(
                    target,
                    line_no,
                    "header must name the columns `new_id` and `mature`",
                ));
            }
            continue;
        };
        let get = |k: usize| f.get(k).copied().unwrap_or("");
        let id = get(cn)
            .parse::<usize>()
            .map_err(|_| DatasetError::parse(target, line_no, format!("new_id `{}` is not an integer", get(cn))))?;
        let mature = match get(cm) {
            "True" | "true" | "1" => true,
            "False" | "false" | "0" => false,
            other => {
                return Err(DatasetError::parse(
                    target,
                    line_no,
                    format!("mature `{other}` is not True/False"),
                ))
            }
        };
        rows.push((line_no, id, mature));
    }
    let n = rows.len();
    let mut classes = vec![None; n];
    for &(line_no, id, mature) in &rows {
        if id >= n {
            return Err(DatasetError::parse(
                target,
                line_no,
                format!("new_id {id} outside 0..{n}"),
            ));
        }
        if classes[id].replace(usize::from(mature)).is_some() {
            return Err(DatasetError::parse(
                target,
                line_no,
                format!("new_id {id} listed twice"),
            ));
        }
    }
    let mut b = GraphBuilder::with_nodes((0..n).map(|i| i.to_string()).collect(), target)?;
    for (line_no, u, v) in read_pair_csv(edges)? {
        let (u, v) = (
            b.existing(&u.to_string(), edges, line_no)?,
            b.existing(&v.to_string(), edges, line_no)?,
        );
        b.arcs.push((u, v));
    }
    let class_names = vec!["mature=False".to_string(), "mature=True".to_string()];
    b.build(name, Labels::Single { classes, class_names }, false, options, edges)
}

/// Reads a one-column file of ids (ASU `nodes.csv`, `groups.csv`).
fn read_id_column(path: &Path) -> Result<Vec<String>> {
    let mut r = LineReader::open(path)?;
    let mut out = Vec::new();
    while let Some((line_no, line)) = r.next_line()? {
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        if t.contains(',') {
            return Err(DatasetError::parse(
                path,
                line_no,
                format!("expected one id per line, found `{t}`"),
            ));
        }
        out.push(t.to_string());
    }
    Ok(out)
}

/// Paths of the four ASU social-network CSV files.
#[derive(Debug, Clone, Copy)]
pub struct AsuFiles<'a> {
    /// `edges.csv`: `u,v` per line, undirected, each pair once.
    pub edges: &'a Path,
    /// `nodes.csv`: one user id per line.
    pub nodes: &'a Path,
    /// `groups.csv`: one group id per line.
    pub groups: &'a Path,
    /// `group-edges.csv`: `user,group` memberships.
    pub group_edges: &'a Path,
}

/// Builds an ASU social graph (BlogCatalog): nodes in `nodes.csv` order, classes in `groups.csv`
/// order, multi-label memberships from `group-edges.csv`, both directions of every pair stored.
pub fn load_asu_graph(name: &str, files: AsuFiles<'_>, options: &GraphOptions) -> Result<Graph> {
    let b0 = GraphBuilder::with_nodes(read_id_column(files.nodes)?, files.nodes)?;
    let class_names = read_id_column(files.groups)?;
    let group_index: HashMap<&str, usize> = class_names.iter().enumerate().map(|(i, g)| (g.as_str(), i)).collect();
    let mut sets = vec![Vec::new(); b0.ids.len()];
    let mut r = LineReader::open(files.group_edges)?;
    while let Some((line_no, line)) = r.next_line()? {
        if line.trim().is_empty() {
            continue;
        }
        let f = split_csv(line);
        let [user, group] = f.as_slice() else {
            return Err(DatasetError::parse(
                files.group_edges,
                line_no,
                format!("expected `user,group`, found `{line}`"),
            ));
        };
        let u = b0.existing(user, files.group_edges, line_no)?;
        let g = *group_index
            .get(group)
            .ok_or_else(|| DatasetError::parse(files.group_edges, line_no, format!("unknown group `{group}`")))?;
        sets[u].push(g);
    }
    for s in &mut sets {
        s.sort_unstable();
        s.dedup();
    }
    let mut b = b0;
    for (line_no, u, v) in read_pair_csv(files.edges)? {
        let (u, v) = (
            b.existing(&u.to_string(), files.edges, line_no)?,
            b.existing(&v.to_string(), files.edges, line_no)?,
        );
        b.arcs.push((u, v));
    }
    b.build(name, Labels::Multi { sets, class_names }, false, options, files.edges)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    fn bz2(dir: &Path, name: &str, text: &str) -> PathBuf {
        use std::io::Write;
        let mut enc = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::best());
        enc.write_all(text.as_bytes()).unwrap();
        let p = dir.join(name);
        std::fs::write(&p, enc.finish().unwrap()).unwrap();
        p
    }

    #[test]
    fn linqs_direction_dangling_ids_and_feature_columns() {
        let dir = tempfile::tempdir().unwrap();
        let content = write(dir.path(), "t.content", "p1\t0\t1\tB\np2\t1\t0\tA\np3\t0\t0\tB\n");
        // `a\tb`: b cites a. p4 has no content row; `p3\tp3` is a self-loop.
        let cites = write(dir.path(), "t.cites", "p1\tp2\np1\tp3\np4\tp1\np3\tp3\np1\tp2\n");
        let g = load_linqs_graph("toy", &cites, &content, &GraphOptions::default()).unwrap();
        assert_eq!(g.node_ids, ["p1", "p2", "p3", "p4"]);
        let a = g.adjacency.to_dense();
        assert_eq!(
            a,
            ndarray::array![[0., 0., 0., 1.], [1., 0., 0., 0.], [1., 0., 1., 0.], [0., 0., 0., 0.]]
        );
        assert_eq!(g.duplicate_records, 1);
        assert_eq!(
            g.labels,
            Labels::Single {
                classes: vec![Some(1), Some(0), Some(1), None],
                class_names: vec!["A".into(), "B".into()]
            }
        );
        let s = g.stats();
        assert_eq!(
            (s.nodes, s.arcs, s.self_loops, s.labelled_nodes, s.undirected_pairs),
            (4, 4, 1, 3, 3)
        );
        let with = load_linqs_graph(
            "toy",
            &cites,
            &content,
            &GraphOptions::default().self_loops(SelfLoops::AddMissing),
        );
        assert_eq!(with.unwrap().stats().self_loops, 4);
        // A trimmed .content (no feature columns) gives the same graph.
        let trimmed = write(dir.path(), "t2.content", "p1\tB\np2\tA\np3\tB\n");
        assert_eq!(
            load_linqs_graph("toy", &cites, &trimmed, &GraphOptions::default()).unwrap(),
            g
        );
        // The same files bzip2-compressed.
        let (cz, tz) = (
            bz2(dir.path(), "t.cites.bz2", "p1\tp2\np1\tp3\np4\tp1\np3\tp3\np1\tp2\n"),
            bz2(dir.path(), "t.content.bz2", "p1\tB\np2\tA\np3\tB\n"),
        );
        assert_eq!(load_linqs_graph("toy", &cz, &tz, &GraphOptions::default()).unwrap(), g);
    }

    #[test]
    fn linqs_errors() {
        let dir = tempfile::tempdir().unwrap();
        let content = write(dir.path(), "t.content", "p1\t0\tA\np2\t1\t0\tB\n");
        assert!(matches!(
            read_linqs_content(&content),
            Err(DatasetError::Parse { line: 2, .. })
        ));
        let content = write(dir.path(), "u.content", "p1\tA\np1\tB\n");
        let cites = write(dir.path(), "t.cites", "p1\tp1\n");
        assert!(matches!(
            load_linqs_graph("t", &cites, &content, &GraphOptions::default()),
            Err(DatasetError::Inconsistent { .. })
        ));
        let cites = write(dir.path(), "b.cites", "p1\tp2\np1 p2 p3\n");
        assert!(matches!(
            read_linqs_cites(&cites),
            Err(DatasetError::Parse { line: 2, .. })
        ));
        let e = read_linqs_cites(&dir.path().join("none.cites")).unwrap_err();
        assert!(matches!(e, DatasetError::MissingFile { .. }));
        let bad_bz2 = write(dir.path(), "c.cites.bz2", "this is not bzip2 data");
        assert!(matches!(read_linqs_cites(&bad_bz2), Err(DatasetError::Io { .. })));
    }

    #[test]
    fn pubmed_formats() {
        let dir = tempfile::tempdir().unwrap();
        let cites = write(
            dir.path(),
            "c.tab",
            "DIRECTED\tcites\nNO_FEATURES\n1\tpaper:10\t|\tpaper:20\n2\tpaper:30\t|\tpaper:10\n",
        );
        let labels = write(
            dir.path(),
            "l.tsv",
            "pmid\tlabel\tplanetoid_index\tmatch\ttwin_group\n10\t1\t5\tunique\t\n20\t3\t6\ttwin_group\t4\n30\t2\t7\tclass_uniform\t\n",
        );
        let rows = read_pubmed_derived_labels(&labels).unwrap();
        assert_eq!(rows[1].matched, PubmedMatch::TwinGroup(4));
        let g = load_pubmed_graph(&cites, PubmedLabelFile::Derived(&labels), &GraphOptions::default()).unwrap();
        assert_eq!(g.node_ids, ["10", "20", "30"]);
        // `paper:A | paper:B` means A cites B.
        assert_eq!(
            g.adjacency.to_dense(),
            ndarray::array![[0., 1., 0.], [0., 0., 0.], [1., 0., 0.]]
        );
        assert_eq!(g.labels.class_counts(), vec![1, 1, 1]);

        let node = write(
            dir.path(),
            "n.tab",
            "NODE\tpaper\ncat=1,2,3:label\tnumeric:w-rat\tnumeric:w-common\tstring:summary\n\
             10\tlabel=1\tw-rat=0.5\tsummary=w-rat\n20\tlabel=3\tw-common=0.25\tw-rat=0.125\tsummary=w-rat,w-common\n\
             30\tlabel=2\tsummary=\n",
        );
        let t = read_pubmed_node_paper(&node).unwrap();
        assert_eq!(t.words, ["w-rat", "w-common"]);
        assert_eq!(t.labels, [1, 3, 2]);
        assert_eq!(
            t.tfidf.to_dense(),
            ndarray::array![[0.5, 0.0], [0.125, 0.25], [0.0, 0.0]]
        );
        let g2 = load_pubmed_graph(&cites, PubmedLabelFile::NodePaperTab(&node), &GraphOptions::default()).unwrap();
        assert_eq!(g2, g);

        let bad = write(dir.path(), "b.tab", "DIRECTED\tcites\n1\tpaper:10\tpaper:20\n");
        assert!(matches!(
            read_pubmed_cites(&bad),
            Err(DatasetError::Parse { line: 2, .. })
        ));
        let bad = write(
            dir.path(),
            "b.tsv",
            "pmid\tlabel\tplanetoid_index\tmatch\n10\t4\t1\tunique\n",
        );
        assert!(matches!(
            read_pubmed_derived_labels(&bad),
            Err(DatasetError::Parse { line: 2, .. })
        ));
        let bad = write(
            dir.path(),
            "bn.tab",
            "NODE\tpaper\ncat=1,2,3:label\tnumeric:w-rat\n10\tlabel=1\tw-cat=1\n",
        );
        assert!(matches!(
            read_pubmed_node_paper(&bad),
            Err(DatasetError::Parse { line: 3, .. })
        ));
    }

    #[test]
    fn musae_and_asu() {
        let dir = tempfile::tempdir().unwrap();
        let edges = write(dir.path(), "e.csv", "from,to\n0,1\n1,2\n2,0\n");
        let target = write(
            dir.path(),
            "t.csv",
            "id,days,mature,views,partner,new_id\n9,1,True,1,False,2\n8,1,False,1,False,0\n7,1,False,3,True,1\n",
        );
        let g = load_musae_graph("tw", &edges, &target, &GraphOptions::default()).unwrap();
        assert_eq!(g.n_arcs(), 6);
        assert_eq!(g.adjacency, g.adjacency.transpose());
        assert_eq!(g.labels.class_counts(), vec![2, 1]);
        let g = load_musae_graph(
            "tw",
            &edges,
            &target,
            &GraphOptions::default().self_loops(SelfLoops::AddMissing),
        );
        assert_eq!(g.unwrap().n_arcs(), 9);
        let bad_edges = write(dir.path(), "be.csv", "from,to\n0,1\n1,7\n");
        assert!(matches!(
            load_musae_graph("tw", &bad_edges, &target, &GraphOptions::default()),
            Err(DatasetError::Parse { line: 3, .. })
        ));
        let bad_target = write(dir.path(), "bt.csv", "id,mature,new_id\n1,Maybe,0\n");
        assert!(matches!(
            load_musae_graph("tw", &edges, &bad_target, &GraphOptions::default()),
            Err(DatasetError::Parse { line: 2, .. })
        ));

        let nodes = write(dir.path(), "nodes.csv", "1\n2\n3");
        let groups = write(dir.path(), "groups.csv", "1\n2");
        let ge = write(dir.path(), "group-edges.csv", "1,2\n1,1\n3,2\n1,2");
        let edges = write(dir.path(), "edges.csv", "1,2\n2,3\n3,2");
        let files = AsuFiles {
            edges: &edges,
            nodes: &nodes,
            groups: &groups,
            group_edges: &ge,
        };
        let g = load_asu_graph("bc", files, &GraphOptions::default()).unwrap();
        assert_eq!(
            g.labels,
            Labels::Multi {
                sets: vec![vec![0, 1], vec![], vec![1]],
                class_names: vec!["1".into(), "2".into()]
            }
        );
        assert_eq!((g.n_arcs(), g.duplicate_records), (4, 1));
        assert_eq!(g.stats().memberships, 3);
        let ge_bad = write(dir.path(), "ge2.csv", "1,9\n");
        let files = AsuFiles {
            group_edges: &ge_bad,
            ..files
        };
        assert!(matches!(
            load_asu_graph("bc", files, &GraphOptions::default()),
            Err(DatasetError::Parse { line: 1, .. })
        ));
    }
}
