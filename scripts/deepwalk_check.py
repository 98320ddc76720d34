#!/usr/bin/env python3
"""DeepWalk with gensim's Word2Vec against ksvd-baselines' DeepWalk (Table 1), same graph, same classifier.

    cargo build --release -p ksvd-baselines --example embed
    RAYON_NUM_THREADS=1 target/release/examples/embed cora deepwalk target/embed/cora-deepwalk
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python scripts/deepwalk_check.py cora citeseer pubmed

with a Python that has gensim, numpy, scipy and scikit-learn (a venv of its own: `python3 -m venv
<dir>; <dir>/bin/pip install gensim scipy scikit-learn`; gensim 4.4.0 with numpy 2.4.6 on CPython
3.11 installs from PyPI). The arcs and labels come from the example's arcs.npy / labels.npy, so both
sides use the identical graph (`A[src, dst]`, citing -> cited, self-loops as in the file).

Walks as crates/baselines/src/deepwalk.rs makes them with its default view (`GraphView::Undirected`,
DeepWalk's `--undirected true`): neighbours of `A + A^T` without self-loops, `walks_per_node`
rounds, each over a seeded shuffle of the nodes, one walk of at most `walk_length` nodes from every
node, each step to a uniformly chosen neighbour, a walk stops at a node without neighbours.
(`--directed` follows out-arcs only and stops at sinks, `GraphView::Directed`.) numpy's PCG64
replaces our Rust streams: the same distribution of corpora, not the same corpus.

Word2Vec (gensim, workers = 1, seeded, PYTHONHASHSEED fixed by re-executing): skip-gram, window
10, dimension 128, min_count 0, sample 1e-3 (gensim's default), alpha 0.025 -> 0.0001, in the
configurations of `--configs` (default: all four):
  ref      phanein/deepwalk's call `Word2Vec(walks, sg=1, hs=1, min_count=0, ...)`: hierarchical
           softmax AND gensim's default negative = 5, gensim's default epochs = 5;
  hs       hierarchical softmax only (negative = 0), 5 epochs (DeepWalk's paper);
  ns5      negative sampling only (hs = 0, negative = 5), 5 epochs (gensim's SGNS default);
  ours     hs = 0, negative = 5, 1 epoch: the configuration deepwalk.rs implements.
Then node classification F1 of each and of our embedding (features.npy) under
scripts/graph_protocol.py (LS-SVM gamma 1, one-vs-rest, stratified 60/40 splits, 10 trials,
seed 0, standardised features).

Options: --emb-root DIR (default target/embed; reads DIR/<graph>-deepwalk/), --seed S (walks
and Word2Vec, default 0), --seeds K (repeat every configuration with seeds S..S+K-1, default 1),
--configs LIST, --walk-length 80, --walks 10, --window 10, --dimension 128, --directed,
--trials 10, --out FILE (JSON).
"""
import argparse
import json
import os
import sys
import time

if os.environ.get("PYTHONHASHSEED") != "0":  # gensim hashes tokens only through str; fix it anyway
    os.environ["PYTHONHASHSEED"] = "0"
    os.execv(sys.executable, [sys.executable] + sys.argv)

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402
from gensim.models import Word2Vec  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import graph_protocol as gp  # noqa: E402

CONFIGS = {
    "ref": dict(hs=1, negative=5, epochs=5),
    "hs": dict(hs=1, negative=0, epochs=5),
    "ns5": dict(hs=0, negative=5, epochs=5),
    "ours": dict(hs=0, negative=5, epochs=1),
}


def neighbours(arcs, n, directed):
    """CSR (indptr, indices) of the walk graph: out-arcs, or A + A^T; self-loops dropped."""
    a = arcs[arcs[:, 0] != arcs[:, 1]]
    if not directed:
        a = np.vstack([a, a[:, ::-1]])
    m = sp.csr_matrix((np.ones(len(a)), (a[:, 0], a[:, 1])), shape=(n, n))
    m.sum_duplicates()
    m.sort_indices()
    return m.indptr, m.indices


def random_walks(indptr, indices, n, walks_per_node, walk_length, seed):
    """All walks of one round advance together (vectorised); rounds in order."""
    rng = np.random.default_rng(seed)
    deg = np.diff(indptr)
    walks = []
    for _ in range(walks_per_node):
        cur = rng.permutation(n)
        paths = np.full((n, walk_length), -1, dtype=np.int64)
        paths[:, 0] = cur
        alive = np.ones(n, bool)
        for step in range(1, walk_length):
            alive &= deg[cur] > 0
            if not alive.any():
                break
            pick = (rng.random(n) * np.maximum(deg[cur], 1)).astype(np.int64)
            nxt = indices[np.minimum(indptr[cur] + pick, len(indices) - 1)] if len(indices) else cur
            cur = np.where(alive, nxt, cur)
            paths[alive, step] = cur[alive]
        for p in paths:
            walks.append([str(v) for v in p[p >= 0]])
    return walks


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("graphs", nargs="*", default=["cora", "citeseer", "pubmed"])
    p.add_argument("--emb-root", default=os.path.join("target", "embed"))
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--seeds", type=int, default=1)
    p.add_argument("--configs", default="ref,hs,ns5,ours")
    p.add_argument("--walk-length", type=int, default=80)
    p.add_argument("--walks", type=int, default=10)
    p.add_argument("--window", type=int, default=10)
    p.add_argument("--dimension", type=int, default=128)
    p.add_argument("--directed", action="store_true")
    p.add_argument("--trials", type=int, default=10)
    p.add_argument("--out", default=None)
    args = p.parse_args()
    results = {}
    for g in args.graphs:
        d = os.path.join(args.emb_root, f"{g}-deepwalk")
        arcs, labels, ours = np.load(f"{d}/arcs.npy"), np.load(f"{d}/labels.npy"), np.load(f"{d}/features.npy")
        meta = json.load(open(f"{d}/meta.json"))
        n = len(labels)
        res = results[g] = {}
        print(f"== {g}: n {n}, arcs {len(arcs)}; ours (seed {meta['seed']}, {meta['seconds']:.1f} s, "
              f"{meta['rayon_threads']} thread) {ours.shape}", flush=True)

        def report(label, feats, secs):
            r = gp.evaluate(feats, labels, trials=args.trials, seed=0)
            res[label] = {"micro": r["micro"], "macro": r["macro"], "seconds": secs}
            print(f"  {label:<34} micro {r['micro'][0]:.3f}+-{r['micro'][1]:.3f}  "
                  f"macro {r['macro'][0]:.3f}+-{r['macro'][1]:.3f}  [{secs:.1f} s]", flush=True)

        report("ours (deepwalk.rs, features.npy)", ours, meta["seconds"])
        indptr, indices = neighbours(arcs, n, args.directed)
        for s in range(args.seed, args.seed + args.seeds):
            t = time.time()
            walks = random_walks(indptr, indices, n, args.walks, args.walk_length, s)
            tw = time.time() - t
            print(f"  walks seed {s}: {len(walks)} walks, {sum(map(len, walks))} tokens "
                  f"({'out-arcs' if args.directed else 'A + A^T'}), {tw:.1f} s", flush=True)
            for c in args.configs.split(","):
                cfg = CONFIGS[c]
                t = time.time()
                model = Word2Vec(walks, vector_size=args.dimension, window=args.window, min_count=0, sg=1,
                                 sample=1e-3, alpha=0.025, min_alpha=0.0001, workers=1, seed=s, **cfg)
                emb = np.vstack([model.wv[str(i)] for i in range(n)]).astype(float)
                report(f"gensim {c} {cfg} seed {s}", emb, time.time() - t)
            del walks
    if args.out:
        with open(args.out, "w") as fh:
            json.dump(results, fh, indent=1)


if __name__ == "__main__":
    main()
