"""Shared graph loading and Table 1 evaluation protocol for the project's Python cross-checks.

Importable (numpy, scipy, scikit-learn only); no side effects on import. Used by
scripts/label_balance.py, scripts/digae_reference.py and the other baseline checks.

Graphs (`load_graph`), as crates/datasets/src/graph.rs builds them:
  * cora, citeseer (LINQS): nodes = `.content` rows in file order, then ids found only in
    `.cites` in order of first appearance (cited id before citing id of a line; CiteSeer has 15,
    unlabelled); a `.cites` line `<cited>\t<citing>` gives the arc citing -> cited;
    classes = label strings sorted in byte order.
  * pubmed: nodes = PMIDs of `pubmed_pmid_labels.derived.tsv(.bz2)` in file order, then PMIDs only
    in the cites file (first appearance, citing before cited); a line `id paper:A | paper:B`
    gives the arc A -> B (A cites B); classes = LINQS label - 1.
  * twitch_pt (MUSAE, undirected, both directions stored, node i = new_id i, class = mature) and
    blogcatalog (ASU, undirected, multi-label: `labels` is then a bool n x 39 indicator matrix).
  Arcs are de-duplicated and sorted by (source, target) like the Rust CSR. Self-loops: as in the
  file by default (`self_loops="add"` / `"remove"` as `SelfLoops::AddMissing` / `Remove`).
  `labels` is int (n,), -1 for unlabelled nodes. `features` is the bag-of-words matrix
  (scipy.sparse CSR, rows in node order, zero rows for nodes without a content row) read from
  the ORIGINAL LINQS `.content` in `shared/<name>/` (the committed copies in data/ have no word
  columns) when `shared` is given, else None. Pubmed, Twitch and BlogCatalog: always None.

Protocol (`splits`, `standardize`, `lssvm_scores`, `evaluate`): 60/40 random splits of the
labelled nodes (stratified for single-label data), trial t seeded seed + t, ceil(0.4 n) test nodes;
features standardised (column mean 0, sd 1 with ddof 1) over the labelled nodes before
splitting, as classify.rs `evaluate_features` does; linear LS-SVM primal with gamma = 1 on +-1 one-vs-rest
targets, argmax; micro / macro F1 (sklearn). The splits are sklearn's, not the Rust RNG's.
"""
import bz2
import csv
import math
import os

import numpy as np
import scipy.sparse as sp
from sklearn.metrics import f1_score
from sklearn.model_selection import train_test_split

GRAPHS = ("cora", "citeseer", "pubmed", "twitch_pt", "blogcatalog")


def _open_text(path):
    """Open `path`, or `path.bz2` if only the compressed copy exists."""
    if os.path.exists(path):
        return open(path, encoding="utf-8")
    if os.path.exists(path + ".bz2"):
        return bz2.open(path + ".bz2", "rt", encoding="utf-8")
    raise FileNotFoundError(path)


class _Nodes:
    def __init__(self, ids):
        self.ids = list(ids)
        self.index = {k: i for i, k in enumerate(self.ids)}
        assert len(self.index) == len(self.ids), "duplicate node id"

    def node(self, k):
        i = self.index.get(k)
        if i is None:
            i = self.index[k] = len(self.ids)
            self.ids.append(k)
        return i


def _finish(n, arcs, directed, self_loops):
    arcs = np.asarray(arcs, dtype=np.int64).reshape(-1, 2)
    if not directed:
        arcs = np.unique(np.sort(arcs, axis=1), axis=0)
        arcs = np.vstack([arcs, arcs[:, ::-1]])
    if self_loops == "remove":
        arcs = arcs[arcs[:, 0] != arcs[:, 1]]
    elif self_loops == "add":
        arcs = np.vstack([arcs, np.repeat(np.arange(n)[:, None], 2, axis=1)])
    elif self_loops not in (None, "as_in_file"):
        raise ValueError(f"self_loops {self_loops!r}")
    return np.unique(arcs, axis=0)  # sorted by (source, target), duplicates collapsed


def _linqs(name, data, shared, self_loops):
    rows = [line.rstrip("\n").split("\t") for line in _open_text(f"{data}/{name}/{name}.content") if line.strip()]
    ids = [r[0].strip() for r in rows]
    lab = [r[-1].strip() for r in rows]
    names = sorted(set(lab))
    cmap = {c: i for i, c in enumerate(names)}
    nodes = _Nodes(ids)
    arcs = []
    for line in _open_text(f"{data}/{name}/{name}.cites"):
        f = line.split()
        if not f:
            continue
        cited, citing = f
        t, s = nodes.node(cited), nodes.node(citing)
        arcs.append((s, t))
    n = len(nodes.ids)
    labels = np.full(n, -1, dtype=np.int64)
    labels[: len(lab)] = [cmap[c] for c in lab]
    features = None
    if shared is not None:
        rr, cc = [], []
        n_words = None
        for line in _open_text(f"{shared}/{name}/{name}.content"):
            if not line.strip():
                continue
            f = line.rstrip("\n").split("\t")
            i = nodes.index[f[0].strip()]
            w = np.asarray(f[1:-1], dtype=float)
            n_words = len(w) if n_words is None else n_words
            assert len(w) == n_words and f[-1].strip() == lab[i], "shared .content disagrees with data/"
            nz = np.flatnonzero(w)
            rr.extend([i] * len(nz))
            cc.extend(nz.tolist())
        features = sp.csr_matrix((np.ones(len(rr)), (rr, cc)), shape=(n, n_words))
    return n, _finish(n, arcs, True, self_loops), labels, features


def _pubmed(data, self_loops):
    with _open_text(f"{data}/pubmed/pubmed_pmid_labels.derived.tsv") as fh:
        r = csv.reader(fh, delimiter="\t")
        head = next(r)
        assert head[:4] == ["pmid", "label", "planetoid_index", "match"], head
        rows = [x for x in r if x]
    nodes = _Nodes([x[0].strip() for x in rows])
    lab = [int(x[1]) - 1 for x in rows]
    arcs = []
    first = True
    for line in _open_text(f"{data}/pubmed/Pubmed-Diabetes.DIRECTED.cites.tab"):
        t = line.strip()
        if not t or t.startswith("#") or (first and (t.startswith("DIRECTED") or t == "NO_FEATURES")):
            continue
        first = False
        f = [x.strip() for x in t.split("\t")]
        assert len(f) == 4 and f[2] == "|", t
        s, d = nodes.node(f[1][len("paper:"):]), nodes.node(f[3][len("paper:"):])
        arcs.append((s, d))
    n = len(nodes.ids)
    labels = np.full(n, -1, dtype=np.int64)
    labels[: len(lab)] = lab
    return n, _finish(n, arcs, True, self_loops), labels, None


def _twitch(data, self_loops):
    rows = list(csv.DictReader(_open_text(f"{data}/twitch_pt/musae_PTBR_target.csv")))
    n = len(rows)
    labels = np.full(n, -1, dtype=np.int64)
    for r in rows:
        labels[int(r["new_id"])] = r["mature"] in ("True", "true", "1")
    with _open_text(f"{data}/twitch_pt/musae_PTBR_edges.csv") as fh:
        pairs = [list(map(int, r)) for r in list(csv.reader(fh))[1:] if r]
    return n, _finish(n, pairs, False, self_loops), labels, None


def _blogcatalog(data, self_loops):
    ids = [x.strip() for x in _open_text(f"{data}/blogcatalog/nodes.csv") if x.strip()]
    groups = [x.strip() for x in _open_text(f"{data}/blogcatalog/groups.csv") if x.strip()]
    nodes, gi = _Nodes(ids), {g: j for j, g in enumerate(groups)}
    y = np.zeros((len(ids), len(groups)), bool)
    for line in _open_text(f"{data}/blogcatalog/group-edges.csv"):
        if line.strip():
            u, g = [x.strip() for x in line.split(",")]
            y[nodes.index[u], gi[g]] = True
    pairs = []
    for line in _open_text(f"{data}/blogcatalog/edges.csv"):
        if line.strip():
            u, v = [x.strip() for x in line.split(",")]
            pairs.append((nodes.index[u], nodes.index[v]))
    return len(ids), _finish(len(ids), pairs, False, self_loops), y, None


def load_graph(name, data="data", shared=None, self_loops="as_in_file"):
    """`(n, arcs, labels, features)` of graph `name` (see the module docstring)."""
    if name in ("cora", "citeseer"):
        return _linqs(name, data, shared, self_loops)
    if name == "pubmed":
        return _pubmed(data, self_loops)
    if name == "twitch_pt":
        return _twitch(data, self_loops)
    if name == "blogcatalog":
        return _blogcatalog(data, self_loops)
    raise ValueError(f"unknown graph {name!r}; one of {GRAPHS}")


def default_shared(repo_root="."):
    """The shared data folder beside the checkout: `../shared/data` (main checkout) or
    `../../shared/data` (a work tree one level deeper), if one exists; else None."""
    for up in (("..",), ("..", "..")):
        p = os.path.join(repo_root, *up, "shared", "data")
        if os.path.isdir(p):
            return p
    return None


def mean_std(xs):
    xs = np.asarray(xs, float)
    return f"{xs.mean():.3f}+-{xs.std(ddof=1) if len(xs) > 1 else 0.0:.3f}"


def splits(n, trials, seed, strat=None):
    """Trial t: seed + t, ceil(0.4 n) test nodes (as ksvd-lssvm's split.rs)."""
    n_test = math.ceil(0.4 * n)
    for t in range(trials):
        tr, te = train_test_split(np.arange(n), test_size=n_test, random_state=seed + t, stratify=strat)
        yield np.sort(tr), np.sort(te)


def standardize(f):
    return (f - f.mean(0)) / np.where(f.std(0, ddof=1) > 0, f.std(0, ddof=1), 1.0)


def lssvm_scores(f, t, tr, te, gam=1.0):
    """LS-SVM primal, linear kernel: (Xc'Xc + I/gam) w = Xc' tc, b = mean(t) - mean(x)'w."""
    mx, mt = f[tr].mean(0), t[tr].mean(0)
    xc = f[tr] - mx
    w = np.linalg.solve(xc.T @ xc + np.eye(f.shape[1]) / gam, xc.T @ (t[tr] - mt))
    return f[te] @ w + (mt - mx @ w)


def evaluate(features, labels, trials=10, seed=0, standardise=True, gam=1.0):
    """Single-label node classification as Table 1: LS-SVM (gamma) one-vs-rest on the labelled
    nodes (labels >= 0), stratified 60/40 splits, `trials` trials seeded seed + t.

    `features`: n x d (dense or scipy.sparse; densified). Returns
    {"micro": (mean, std), "macro": (mean, std), "micro_all": [...], "macro_all": [...]}
    (std with ddof 1)."""
    f = features.toarray() if sp.issparse(features) else np.asarray(features, float)
    labels = np.asarray(labels)
    keep = np.flatnonzero(labels >= 0)
    f, y = f[keep].astype(float), labels[keep]
    if standardise:
        f = standardize(f)
    classes = np.unique(y)
    t = np.where(y[:, None] == classes[None, :], 1.0, -1.0)
    mic, mac = [], []
    for tr, te in splits(len(y), trials, seed, strat=y):
        pred = classes[lssvm_scores(f, t, tr, te, gam).argmax(1)]
        mic.append(f1_score(y[te], pred, average="micro"))
        mac.append(f1_score(y[te], pred, average="macro", zero_division=0))
    sd = lambda v: float(np.std(v, ddof=1)) if len(v) > 1 else 0.0
    return {"micro": (float(np.mean(mic)), sd(mic)), "macro": (float(np.mean(mac)), sd(mac)),
            "micro_all": mic, "macro_all": mac}


def majority_rate(labels):
    y = np.asarray(labels)
    y = y[y >= 0]
    return np.bincount(y).max() / len(y)
