#!/usr/bin/env python3
"""Reference DiGAE (gidiko/DiGAE, model `digae`) on the project's graphs: link prediction with
its task_1 protocol, and Table 1's node classification of its [S, T] embeddings.

The few classes needed are PORTED (copied with trivial edits, not imported) from
gidiko/DiGAE at commit 912fcdc ("added citation info"): layers.py `DirectedGCNConv`,
`SourceGCNConvEncoder`, `TargetGCNConvEncoder`, `DirectedGCNConvEncoder`,
`DirectedInnerProductDecoder`; models.py `DirectedGAE` (`recon_loss`, `test`); preprocessing.py
`general_train_test_split_edges` (task_1: 5 % validation, 10 % test arcs; as many negatives,
drawn uniformly from the non-arcs, self-pairs allowed); train.py's loop (Adam, weight decay
5e-4, full batch, PyG `negative_sampling` each epoch, evaluation after the last epoch). Edits:
every random choice is seeded (torch, numpy and Python's random, seed = run index); identity features are
applied as `lin(I) = W^T + b` instead of a dense `n x n` eye (same function, same
initialisation: `nn.Linear(n, h)`); the split tensors are written to .npz.

Graphs come from scripts/graph_protocol.py (`load_graph`: arcs citing -> cited, node order as
the Rust loader); bag-of-words features from the ORIGINAL LINQS .content files in --shared.

Parts (--parts):
  lp  link prediction, task_1, `--runs` runs (seeds 0..runs-1), test AUC / AP (and validation
      AUC / AP: the reference's run script passes `--validate=False`, which argparse's
      `type=bool` turns into True, so its logged numbers are validation-arc numbers); settings
      of scripts/citation_run.sh for cora_ml (alpha 0.4, beta 0.2, lr 0.005, hidden 32, dim 16)
      and for citeseer (alpha 0.6, beta 0.0, lr 0.005, hidden 64, dim 32), each with bag-of-words
      and with identity features. Splits go to --splits-out/<graph>-run<k>.npz (and .txt).
  nc  node classification (Table 1 protocol, graph_protocol.evaluate: LS-SVM gamma 1, 60/40
      stratified, 10 trials, seed 0) of [S, T] from a model trained on ALL arcs, for identity
      features with Table 1's settings (alpha 1, beta 0, lr 0.01, hidden 64, dim 32), identity
      with the run settings, bag-of-words with the run settings; plus the bag-of-words alone and
      the majority rate.

Run from the repository root with a Python that has torch + torch_geometric (CPU), one thread:
    OMP_NUM_THREADS=1 python scripts/digae_reference.py --parts lp nc --graphs cora citeseer
  probe  identity features, Table 1 settings, 200 / 1000 epochs x weight decay 5e-4 / 0.
Options: --npz FILE (also a graph2gauss .npz, e.g. DiGAE's own cora_ml.npz; not shipped),
         --data DIR (default data), --shared DIR (default ../shared/data or ../../shared/data),
         --splits-out DIR (default target/digae-splits; .npz and the .txt that
         crates/baselines/examples/digae_link.rs reads with --splits), --runs R (5), --nc-seeds S (1),
         --epochs E (200), --json FILE (write all results).
"""
import argparse
import itertools
import json
import math
import os
import random
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch_geometric.nn import MessagePassing
from torch_geometric.utils import add_self_loops, degree, negative_sampling, remove_self_loops
from sklearn.metrics import average_precision_score, roc_auc_score

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import graph_protocol as gp  # noqa: E402

EPS = 1e-15

# Settings: scripts/citation_run.sh (digae, features) and train.py's defaults (Table 1's).
RUN_SETTINGS = {
    "cora_ml": dict(alpha=0.4, beta=0.2, lr=0.005, hidden=32, dim=16),
    "citeseer": dict(alpha=0.6, beta=0.0, lr=0.005, hidden=64, dim=32),
}
TABLE1 = dict(alpha=1.0, beta=0.0, lr=0.01, hidden=64, dim=32)
OURS_RUN = {"cora": "cora_ml", "citeseer": "citeseer", "pubmed": "citeseer"}


# ------------------------------------------------------------------------------------------
# Ported from gidiko/DiGAE@912fcdc layers.py / models.py
# ------------------------------------------------------------------------------------------
class IdentityLinear(nn.Linear):
    """nn.Linear applied to the identity matrix: forward(None) = W^T + b (n x out)."""

    def forward(self, x):
        return self.weight.t() + self.bias if x is None else super().forward(x)


class DirectedGCNConv(MessagePassing):
    def __init__(self, in_channels, out_channels, alpha=1.0, beta=0.0, self_loops=True, identity=False):
        super().__init__(aggr="add")
        self.lin = (IdentityLinear if identity else nn.Linear)(in_channels, out_channels)
        self.alpha, self.beta, self.self_loops = alpha, beta, self_loops

    def forward(self, x, edge_index, num_nodes):
        if self.self_loops is True:
            edge_index, _ = add_self_loops(edge_index, num_nodes=num_nodes)
        x = self.lin(x)
        row, col = edge_index
        in_degree = degree(col)
        out_degree = degree(row)
        in_norm_inv = pow(in_degree, -self.alpha)
        out_norm_inv = pow(out_degree, -self.beta)
        norm = in_norm_inv[col] * out_norm_inv[row]
        return self.propagate(edge_index, x=x, norm=norm)

    def message(self, x_j, norm):
        return norm.view(-1, 1) * x_j


class SourceGCNConvEncoder(nn.Module):
    def __init__(self, in_channels, hidden, out, alpha, beta, self_loops=True, identity=False):
        super().__init__()
        self.conv1 = DirectedGCNConv(in_channels, hidden, alpha, beta, self_loops, identity)
        self.conv2 = DirectedGCNConv(hidden, out, alpha, beta, self_loops)

    def forward(self, x, edge_index, n):
        x = F.relu(self.conv1(x, edge_index, n))
        return self.conv2(x, torch.flip(edge_index, [0]), n)


class TargetGCNConvEncoder(nn.Module):
    def __init__(self, in_channels, hidden, out, alpha, beta, self_loops=True, identity=False):
        super().__init__()
        self.conv1 = DirectedGCNConv(in_channels, hidden, alpha, beta, self_loops, identity)
        self.conv2 = DirectedGCNConv(hidden, out, alpha, beta, self_loops)

    def forward(self, x, edge_index, n):
        x = F.relu(self.conv1(x, torch.flip(edge_index, [0]), n))
        return self.conv2(x, edge_index, n)


class DirectedGCNConvEncoder(nn.Module):
    def __init__(self, in_channels, hidden, out, alpha=1.0, beta=0.0, self_loops=True, identity=False):
        super().__init__()
        self.source_conv = SourceGCNConvEncoder(in_channels, hidden, out, alpha, beta, self_loops, identity)
        self.target_conv = TargetGCNConvEncoder(in_channels, hidden, out, alpha, beta, self_loops, identity)

    def forward(self, s, t, edge_index, n):
        return self.source_conv(s, edge_index, n), self.target_conv(t, edge_index, n)


class DirectedInnerProductDecoder(nn.Module):
    def forward(self, s, t, edge_index, sigmoid=True):
        value = (s[edge_index[0]] * t[edge_index[1]]).sum(dim=1)
        return torch.sigmoid(value) if sigmoid else value


class DirectedGAE(nn.Module):
    def __init__(self, encoder, decoder):
        super().__init__()
        self.encoder, self.decoder = encoder, decoder

    def encode(self, *args):
        return self.encoder(*args)

    def recon_loss(self, s, t, pos_edge_index):
        pos_loss = -torch.log(self.decoder(s, t, pos_edge_index, sigmoid=True) + EPS).mean()
        pos_edge_index, _ = remove_self_loops(pos_edge_index)
        pos_edge_index, _ = add_self_loops(pos_edge_index)
        neg_edge_index = negative_sampling(pos_edge_index, s.size(0))
        neg_loss = -torch.log(1 - self.decoder(s, t, neg_edge_index, sigmoid=True) + EPS).mean()
        return pos_loss + neg_loss

    def test(self, s, t, pos_edge_index, neg_edge_index):
        y = np.r_[np.ones(pos_edge_index.size(1)), np.zeros(neg_edge_index.size(1))]
        pred = torch.cat([self.decoder(s, t, pos_edge_index), self.decoder(s, t, neg_edge_index)]).numpy()
        return roc_auc_score(y, pred), average_precision_score(y, pred)


# ------------------------------------------------------------------------------------------
# Ported from gidiko/DiGAE@912fcdc preprocessing.py (directed=True branch)
# ------------------------------------------------------------------------------------------
def general_train_test_split_edges(edge_index, num_nodes, val_ratio=0.05, test_ratio=0.1):
    row, col = edge_index
    n_v = int(math.floor(val_ratio * row.size(0)))
    n_t = int(math.floor(test_ratio * row.size(0)))
    perm = torch.randperm(row.size(0))
    row, col = row[perm], col[perm]
    out = {
        "val_pos": torch.stack([row[:n_v], col[:n_v]]),
        "test_pos": torch.stack([row[n_v:n_v + n_t], col[n_v:n_v + n_t]]),
        "train_pos": torch.stack([row[n_v + n_t:], col[n_v + n_t:]]),
    }
    neg_adj_mask = torch.ones(num_nodes, num_nodes, dtype=torch.bool)
    neg_adj_mask[row, col] = 0
    neg_row, neg_col = neg_adj_mask.nonzero(as_tuple=False).t()
    perm = torch.randperm(neg_row.size(0))[:n_v + n_t]
    neg_row, neg_col = neg_row[perm], neg_col[perm]
    out["val_neg"] = torch.stack([neg_row[:n_v], neg_col[:n_v]])
    out["test_neg"] = torch.stack([neg_row[n_v:n_v + n_t], neg_col[n_v:n_v + n_t]])
    return out


def load_g2g_npz(path):
    """A graph2gauss-format .npz (as DiGAE's Citation.load_npz_dataset reads it: `adj_*`/`attr_*`
    keys, or the newer `adj_matrix.*`/`attr_matrix.*`): (n, arcs, labels, features), arcs as the
    non-zeros of A (row -> column), as DiGAE's load_data_from_npz (directed=True)."""
    import scipy.sparse as sp
    with np.load(path, allow_pickle=True) as f:
        d = dict(f)
    def mat(p):
        for k in (p, p + "_matrix"):
            for sep in ("_", "."):
                if f"{k}{sep}data" in d:
                    return sp.csr_matrix((d[f"{k}{sep}data"], d[f"{k}{sep}indices"], d[f"{k}{sep}indptr"]),
                                         shape=tuple(d[f"{k}{sep}shape"]))
        raise KeyError(p)
    a, x = mat("adj").tocoo(), mat("attr").tocsr()
    return a.shape[0], np.c_[a.row, a.col].astype(np.int64), np.asarray(d["labels"], dtype=np.int64), x


# ------------------------------------------------------------------------------------------
def seed_all(seed):
    """torch, numpy and Python's `random` (PyG's negative_sampling draws with random.sample)."""
    random.seed(seed)
    torch.manual_seed(seed)
    np.random.seed(seed)


def train(n, x, train_pos, cfg, epochs, seed):
    """Train the `digae` model on arcs `train_pos` (2 x E); x = None means identity features.
    Returns (model, S, T, losses, seconds). Seeds torch/numpy with `seed` first."""
    seed_all(seed)
    in_channels = n if x is None else x.shape[1]
    enc = DirectedGCNConvEncoder(in_channels, cfg["hidden"], cfg["dim"], alpha=cfg["alpha"], beta=cfg["beta"],
                                 identity=x is None)
    model = DirectedGAE(enc, DirectedInnerProductDecoder())
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"], weight_decay=cfg.get("wd", 5e-4))
    losses, t0 = [], time.time()
    for _ in range(epochs):
        model.train()
        opt.zero_grad()
        s, t = model.encode(x, x, train_pos, n)
        loss = model.recon_loss(s, t, train_pos)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    secs = time.time() - t0
    model.eval()
    with torch.no_grad():
        s, t = model.encode(x, x, train_pos, n)
    return model, s, t, losses, secs


def fmt(xs):
    xs = np.asarray(xs, float)
    return f"{xs.mean():.4f} +- {xs.std(ddof=1) if len(xs) > 1 else 0.0:.4f}"


def link_prediction(name, n, arcs, feats, args, results):
    edge_index = torch.as_tensor(arcs.T.copy(), dtype=torch.long)
    xb = torch.as_tensor(feats.toarray(), dtype=torch.float32) if feats is not None else None
    os.makedirs(args.splits_out, exist_ok=True)
    splits = []
    for k in range(args.runs):
        seed_all(k)
        sp_ = general_train_test_split_edges(edge_index, n)
        np.savez_compressed(
            os.path.join(args.splits_out, f"{name}-run{k}.npz"), n=n,
            train=sp_["train_pos"].numpy().T, test_pos=sp_["test_pos"].numpy().T,
            test_neg=sp_["test_neg"].numpy().T, val_pos=sp_["val_pos"].numpy().T,
            val_neg=sp_["val_neg"].numpy().T, seed=k)
        # The same split as text for `cargo run --release -p ksvd-baselines --example digae_link
        # -- <graph> --splits DIR` (our DiGAE on the same held-out arcs).
        with open(os.path.join(args.splits_out, f"{name}-run{k}.txt"), "w") as f:
            for part in ("train", "val_pos", "val_neg", "test_pos", "test_neg"):
                key = "train_pos" if part == "train" else part
                for i, j in sp_[key].numpy().T:
                    f.write(f"{part} {i} {j}\n")
        splits.append(sp_)
    for setting, cfg in RUN_SETTINGS.items():
        for fname, x in (("bow", xb), ("identity", None)):
            if fname == "bow" and x is None:
                continue
            rec = {"auc": [], "ap": [], "val_auc": [], "val_ap": [], "secs": [], "final_loss": []}
            for k, sp_ in enumerate(splits):
                model, s, t, losses, secs = train(n, x, sp_["train_pos"], cfg, args.epochs, k)
                with torch.no_grad():
                    auc, ap = model.test(s, t, sp_["test_pos"], sp_["test_neg"])
                    vauc, vap = model.test(s, t, sp_["val_pos"], sp_["val_neg"])
                for key, v in zip(rec, (auc, ap, vauc, vap, secs, losses[-1])):
                    rec[key].append(float(v))
            key = f"lp/{name}/{setting}/{fname}"
            results[key] = dict(cfg=cfg, **rec)
            print(f"LP {name:8s} settings={setting:8s} features={fname:8s} runs={args.runs}: "
                  f"test AUC {fmt(rec['auc'])}  AP {fmt(rec['ap'])} | val AUC {fmt(rec['val_auc'])} "
                  f"AP {fmt(rec['val_ap'])} | final loss {fmt(rec['final_loss'])} | "
                  f"{np.mean(rec['secs']):.1f} s/run", flush=True)


def node_classification(name, n, arcs, labels, feats, args, results):
    edge_index = torch.as_tensor(arcs.T.copy(), dtype=torch.long)
    print(f"NC {name}: majority rate {gp.majority_rate(labels):.4f}", flush=True)
    if feats is not None:
        for st in (False, True):
            r = gp.evaluate(feats, labels, trials=10, seed=0, standardise=st)
            tag = "standardised" if st else "raw"
            results[f"nc/{name}/bow-alone/{tag}"] = r
            print(f"NC {name:8s} bag-of-words alone ({feats.shape[1]} cols, {tag}): micro "
                  f"{r['micro'][0]:.4f} +- {r['micro'][1]:.4f}  macro {r['macro'][0]:.4f} +- {r['macro'][1]:.4f}",
                  flush=True)
    xb = torch.as_tensor(feats.toarray(), dtype=torch.float32) if feats is not None else None
    run = RUN_SETTINGS[OURS_RUN[name]]
    configs = [("identity", "table1", TABLE1, None), ("identity", f"run:{OURS_RUN[name]}", run, None)]
    if xb is not None:
        configs += [("bow", f"run:{OURS_RUN[name]}", run, xb), ("bow", "table1", TABLE1, xb)]
    for fname, sname, cfg, x in configs:
        for seed in range(args.nc_seeds):
            _, s, t, losses, secs = train(n, x, edge_index, cfg, args.epochs, seed)
            emb = torch.cat([s, t], 1).numpy().astype(float)
            for st in (True, False):
                r = gp.evaluate(emb, labels, trials=10, seed=0, standardise=st)
                tag = "standardised" if st else "raw"
                results[f"nc/{name}/{fname}/{sname}/seed{seed}/{tag}"] = dict(
                    cfg=cfg, micro=r["micro"], macro=r["macro"], secs=secs, final_loss=losses[-1])
                print(f"NC {name:8s} features={fname:8s} settings={sname:14s} model-seed={seed} [S,T] "
                      f"{emb.shape[1]} cols {tag:12s}: micro {r['micro'][0]:.4f} +- {r['micro'][1]:.4f}  "
                      f"macro {r['macro'][0]:.4f} +- {r['macro'][1]:.4f} | final loss {losses[-1]:.4f} "
                      f"| train {secs:.1f} s", flush=True)


def probe(name, n, arcs, labels, args, results):
    """Is the identity-feature model held back by training? Table 1 settings, identity features,
    model seeds 0..nc_seeds-1, longer training and / or no weight decay."""
    edge_index = torch.as_tensor(arcs.T.copy(), dtype=torch.long)
    for epochs, wd, seed in itertools.product((200, 1000), (5e-4, 0.0), range(args.nc_seeds)):
        cfg = dict(TABLE1, wd=wd)
        _, s, t, losses, secs = train(n, None, edge_index, cfg, epochs, seed)
        emb = torch.cat([s, t], 1).numpy().astype(float)
        r = gp.evaluate(emb, labels, trials=10, seed=0, standardise=True)
        results[f"probe/{name}/identity/table1/epochs{epochs}/wd{wd}/seed{seed}"] = dict(
            micro=r["micro"], macro=r["macro"], secs=secs, final_loss=losses[-1])
        print(f"PROBE {name:8s} identity, Table 1 settings, epochs {epochs:4d}, weight decay {wd:g}, "
              f"model-seed={seed}: "
              f"micro {r['micro'][0]:.4f} +- {r['micro'][1]:.4f}  macro {r['macro'][0]:.4f} +- "
              f"{r['macro'][1]:.4f} | final loss {losses[-1]:.4f} | train {secs:.1f} s", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="data")
    ap.add_argument("--shared", default=None)
    ap.add_argument("--splits-out", default=os.path.join("target", "digae-splits"))
    ap.add_argument("--graphs", nargs="*", default=["cora", "citeseer"])
    ap.add_argument("--parts", nargs="+", default=["lp", "nc"], choices=["lp", "nc", "probe"])
    ap.add_argument("--npz", default=None,
                    help="also run the parts on a graph2gauss .npz (e.g. DiGAE's cora_ml); name = file stem")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--nc-seeds", type=int, default=1)
    ap.add_argument("--epochs", type=int, default=200)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    torch.set_num_threads(1)
    shared = args.shared or gp.default_shared()
    print(f"torch {torch.__version__}, threads {torch.get_num_threads()}, shared data: {shared}", flush=True)
    results = {}
    graphs = list(args.graphs) + ([args.npz] if args.npz else [])
    for name in graphs:
        if name.endswith(".npz"):
            n, arcs, labels, feats = load_g2g_npz(name)
            name = os.path.splitext(os.path.basename(name))[0]
            OURS_RUN.setdefault(name, "cora_ml" if "cora" in name else "citeseer")
        else:
            n, arcs, labels, feats = gp.load_graph(name, data=args.data,
                                                   shared=shared if name in ("cora", "citeseer") else None)
        print(f"== {name}: {n} nodes, {len(arcs)} arcs, features "
              f"{None if feats is None else feats.shape}", flush=True)
        if "lp" in args.parts:
            link_prediction(name, n, arcs, feats, args, results)
        if "nc" in args.parts:
            node_classification(name, n, arcs, labels, feats, args, results)
        if "probe" in args.parts:
            probe(name, n, arcs, labels, args, results)
        if args.json:
            with open(args.json, "w") as fh:
                json.dump(results, fh, indent=1, default=lambda o: list(o) if isinstance(o, tuple) else str(o))


if __name__ == "__main__":
    main()
