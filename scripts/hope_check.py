#!/usr/bin/env python3
"""Independent HOPE (Ou et al., KDD 2016, Katz proximity) against ksvd-baselines' HOPE (Table 1).

For each graph, from the files the `embed` example writes (same arcs, labels and our embedding):

    cargo build --release -p ksvd-baselines --example embed
    RAYON_NUM_THREADS=1 target/release/examples/embed cora hope target/embed/cora-hope
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python scripts/hope_check.py cora citeseer pubmed

it computes, with numpy/SciPy only:
  1. rho(A) exactly: A is block triangular over its strongly connected components, so its
     eigenvalues are those of the SCC diagonal blocks, each taken by a dense eigenvalue solve
     (LAPACK geev); compared with our power-iteration estimate (HOPE's getRadius.m);
  2. the Katz matrix S = (I - beta A)^-1 beta A with beta = 0.5 / rho, from a sparse LU of
     I - beta A (scipy splu): dense S and a full dense SVD for n <= --dense-max, otherwise a
     LinearOperator (S x = LU^-1 beta A x, S^T y = beta A^T LU^-T y) and ARPACK svds;
  3. U_s = U sqrt(s), U_t = V sqrt(s) at our rank r; against ours: singular values (ours from
     singular_values.npy, also = column norms squared of our U_s), principal angles between the
     column spaces (source vs U, target vs V), the relative residuals ||S v_i - s_i u_i|| / s_i of
     our own triplets under the reference S, and the gap s_r / s_{r+1};
  4. node classification F1 under scripts/graph_protocol.py (LS-SVM gamma = 1, one-vs-rest,
     stratified 60/40 splits, 10 trials, seed 0, standardised features) of ours and the
     reference, and of formulation variants of the reference: arcs reversed (A^T), other
     ranks per side (the paper's 1000 components = 500 per side), other decays (GEM's fixed
     beta = 0.01, 0.1 / rho, 0.9 / rho), unstandardised features, beta from our rho estimate, and
     HOPE of the input our SVD/KSVD rows get, X = D_out^-1 (A + I) (rho(X) = 1, beta = 0.5).

Options: --emb-root DIR (default target/embed; reads DIR/<graph>-hope/), --data DIR (default
data; the arcs are cross-checked against graph_protocol.load_graph), --trials T (10), --seed S
(0), --ranks (extra ranks per side, default 32,128,500), --dense-max N (5000), --out FILE
(optional JSON of every number), --compare-only (skip the F1 part). Rank 500 on a graph above --dense-max uses a randomized SVD
(oversampling 20, 4 power iterations, seeded) on the operator; its residuals are printed.
"""
import argparse
import json
import os
import sys
import time

import numpy as np
import scipy.linalg as la
import scipy.sparse as sp
import scipy.sparse.csgraph as csg
import scipy.sparse.linalg as sla

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import graph_protocol as gp  # noqa: E402


def adjacency(arcs, n):
    return sp.csr_matrix((np.ones(len(arcs)), (arcs[:, 0], arcs[:, 1])), shape=(n, n))


def exact_radius(a):
    """rho(A) from the SCC blocks (dense eigenvalues of each block with more than one node or a
    self-loop); the number of non-trivial SCCs and the largest one's size."""
    k, comp = csg.connected_components(a, directed=True, connection="strong")
    order = np.argsort(comp, kind="stable")
    bounds = np.searchsorted(comp[order], np.arange(k + 1))
    rho, nontrivial, largest = 0.0, 0, 0
    for c in range(k):
        idx = order[bounds[c]:bounds[c + 1]]
        block = a[idx][:, idx].toarray()
        if len(idx) == 1 and block[0, 0] == 0:
            continue
        nontrivial += 1
        largest = max(largest, len(idx))
        rho = max(rho, np.abs(np.linalg.eigvals(block)).max())
    return rho, nontrivial, largest


class Katz:
    """S = (I - beta A)^-1 beta A through one sparse LU of I - beta A."""

    def __init__(self, a, beta):
        n = a.shape[0]
        self.a, self.at, self.beta, self.n = a, a.T.tocsr(), beta, n
        self.lu = sla.splu((sp.identity(n, format="csc") - beta * a).tocsc())

    def mat(self, x):
        return self.lu.solve(np.ascontiguousarray(self.beta * (self.a @ x)))

    def rmat(self, y):
        return self.beta * (self.at @ self.lu.solve(np.ascontiguousarray(y), trans="T"))

    def op(self):
        return sla.LinearOperator((self.n, self.n), matvec=self.mat, rmatvec=self.rmat,
                                  matmat=self.mat, rmatmat=self.rmat, dtype=float)

    def dense(self):
        return self.mat(np.eye(self.n))


def reference_svd(katz, r, dense_max, seed):
    """Top-r (U, s, V) of S and s_{r+1} (and the method used)."""
    if katz.n <= dense_max:
        if not hasattr(katz, "full"):
            katz.full = la.svd(katz.dense(), full_matrices=False, lapack_driver="gesdd")
        u, s, vt = katz.full
        return u[:, :r], s[:r], vt[:r].T, s[r] if r < len(s) else np.nan, "dense LU + dense SVD (gesdd)"
    if r <= 200:
        rng = np.random.default_rng(seed)
        u, s, vt = sla.svds(katz.op(), k=r + 1, tol=1e-12, v0=rng.standard_normal(katz.n), maxiter=100000)
        o = np.argsort(s)[::-1]
        u, s, v = u[:, o], s[o], vt[o].T
        return u[:, :r], s[:r], v[:, :r], s[r], "sparse LU + ARPACK svds (tol 1e-12)"
    # Randomized SVD (Halko et al.) with oversampling 20 and 4 power iterations.
    rng = np.random.default_rng(seed)
    q, _ = np.linalg.qr(katz.mat(rng.standard_normal((katz.n, r + 21))))
    for _ in range(4):
        q, _ = np.linalg.qr(katz.rmat(q))
        q, _ = np.linalg.qr(katz.mat(q))
    ub, s, vt = np.linalg.svd(katz.rmat(q).T, full_matrices=False)
    u = q @ ub
    return u[:, :r], s[:r], vt[:r].T, s[r], "sparse LU + randomized SVD (p 20, q 4)"


def residuals(katz, u, s, v):
    """max_i ||S v_i - s_i u_i|| / s_i and ||S^T u_i - s_i v_i|| / s_i for unit u, v."""
    r1 = np.linalg.norm(katz.mat(v) - u * s, axis=0) / s
    r2 = np.linalg.norm(katz.rmat(u) - v * s, axis=0) / s
    return float(max(r1.max(), r2.max()))


def angles(x, y):
    a = la.subspace_angles(x, y)
    return float(a.max()), int((a > 1e-3).sum())


def f1(features, labels, args, standardise=True):
    r = gp.evaluate(features, labels, trials=args.trials, seed=args.seed, standardise=standardise)
    return {"micro": r["micro"], "macro": r["macro"]}


def fmt(r):
    return f"micro {r['micro'][0]:.3f}+-{r['micro'][1]:.3f}  macro {r['macro'][0]:.3f}+-{r['macro'][1]:.3f}"


def hope_features(u, s, v):
    root = np.sqrt(s)
    return np.hstack([u * root, v * root])


def check(name, args):
    out = {}
    d = os.path.join(args.emb_root, f"{name}-hope")
    arcs, labels = np.load(f"{d}/arcs.npy"), np.load(f"{d}/labels.npy")
    ours, ours_s = np.load(f"{d}/features.npy"), np.load(f"{d}/singular_values.npy")
    meta = json.load(open(f"{d}/meta.json"))
    n, r = len(labels), len(ours_s)
    if args.data:
        n2, arcs2, labels2, _ = gp.load_graph(name, data=args.data)
        out["same_graph_as_graph_protocol"] = bool(n2 == n and np.array_equal(arcs2, arcs) and np.array_equal(labels2, labels))
    a = adjacency(arcs, n)
    print(f"== {name}: n {n}, arcs {len(arcs)}, self-loops {int((arcs[:, 0] == arcs[:, 1]).sum())}, ours rank {r}/side"
          f" (same graph as graph_protocol: {out.get('same_graph_as_graph_protocol')})")

    t = time.time()
    rho, nscc, big = exact_radius(a)
    a_noloop = a - sp.diags(a.diagonal())
    rho_nl = exact_radius(a_noloop.tocsr())[0]
    out.update(rho_exact=rho, rho_ours=meta["spectral_radius"], beta_ours=meta["beta"], rho_without_self_loops=rho_nl,
               nontrivial_scc=nscc, largest_scc=big)
    print(f"rho exact {rho:.6f} (SCC blocks, dense geev; {nscc} non-trivial SCCs, largest {big}); "
          f"ours (power iteration) {meta['spectral_radius']:.6f}; beta ref {0.5 / rho:.6f} ours {meta['beta']:.6f}; "
          f"rho without self-loops {rho_nl:.6f}  [{time.time() - t:.1f} s]")

    # Reference at beta = 0.5 / rho_exact, and at our beta (to separate beta from the solver).
    ref = {}
    for label, beta in (("ref", 0.5 / rho), ("ref_our_beta", meta["beta"])):
        if label == "ref_our_beta" and abs(beta - 0.5 / rho) <= 1e-12 * beta:
            ref[label] = ref["ref"]
            continue
        t = time.time()
        katz = Katz(a, beta)
        u, s, v, s_next, how = reference_svd(katz, r, args.dense_max, args.seed)
        ref[label] = (katz, u, s, v, s_next)
        print(f"{label}: beta {beta:.6f}, {how}, {time.time() - t:.1f} s; s_1 {s[0]:.6g}, s_r {s[-1]:.6g}, "
              f"s_(r+1) {s_next:.6g} (gap s_r/s_r+1 {s[-1] / s_next:.6f})")
    katz, u, s, v, s_next = ref["ref_our_beta"]
    src, tgt = ours[:, :r], ours[:, r:]
    rel_s = float(np.abs(ours_s - s).max() / s[0])
    norms = bool(np.allclose((src ** 2).sum(0), ours_s, rtol=1e-10))
    res = residuals(katz, src / np.sqrt(ours_s), ours_s, tgt / np.sqrt(ours_s))
    (ang_s, cnt_s), (ang_t, cnt_t) = angles(src, u), angles(tgt, v)
    out.update(sv_max_rel_diff=rel_s, ours_col_norms_sq_equal_s=norms, ours_max_residual=res,
               angle_source_max=ang_s, angle_source_count=cnt_s, angle_target_max=ang_t, angle_target_count=cnt_t,
               gap=float(s[-1] / s_next))
    print(f"ours vs reference (same beta): max |s_ours - s_ref| / s_1 = {rel_s:.2e}; ours' column norms^2 = s: {norms}; "
          f"ours' residuals max {res:.2e}; principal angles source max {ang_s:.2e} rad ({cnt_s} > 1e-3), "
          f"target max {ang_t:.2e} ({cnt_t} > 1e-3)")

    if args.compare_only:
        return out
    # F1 under the shared protocol.
    rows = []

    def row(label, feats, **kw):
        t = time.time()
        res = f1(feats, labels, args, **kw)
        rows.append((label, res))
        print(f"  {label:<44} {fmt(res)}  [{time.time() - t:.1f} s]")

    print("node classification (graph_protocol.evaluate: LS-SVM gamma 1, 60/40 stratified, "
          f"{args.trials} trials, seed {args.seed}):")
    row(f"ours r={r}/side (Table 1 setting)", ours)
    katz0, u0, s0, v0, _ = ref["ref"]
    row(f"reference r={r}/side beta=0.5/rho", hope_features(u0, s0, v0))
    if ref["ref_our_beta"] is not ref["ref"]:
        row(f"reference r={r}/side beta ours", hope_features(u, s, v))
    row(f"ours r={r}/side, unstandardised", ours, standardise=False)
    row(f"reference r={r}/side, unstandardised", hope_features(u0, s0, v0), standardise=False)
    # Reversed arcs: S(A^T) = S(A)^T, so U and V swap and the concatenation [U_s, U_t] only
    # permutes its columns; computed anyway as a check.
    at = a.T.tocsr()
    rho_t = rho  # same eigenvalues
    kz = Katz(at, 0.5 / rho_t)
    ur, sr, vr, _, _ = reference_svd(kz, r, args.dense_max, args.seed)
    row(f"reference A^T (arcs reversed) r={r}/side", hope_features(ur, sr, vr))
    # Other decays.
    for lab, beta in (("beta=0.01 (GEM default)", 0.01), ("beta=0.1/rho", 0.1 / rho), ("beta=0.9/rho", 0.9 / rho)):
        kz = Katz(a, beta)
        ub, sb, vb, _, _ = reference_svd(kz, r, args.dense_max, args.seed)
        row(f"reference {lab} r={r}/side", hope_features(ub, sb, vb))
    # Other ranks.
    for rr in args.ranks:
        if rr == r or rr >= n:
            continue
        t = time.time()
        ux, sx, vx, _, how = reference_svd(katz0, rr, args.dense_max, args.seed)
        extra = ""
        if "randomized" in how:
            extra = f" (rsvd residual max {residuals(katz0, ux, sx, vx):.1e})"
        row(f"reference r={rr}/side{extra}", hope_features(ux, sx, vx))
        row(f"reference r={rr}/side, unstandardised", hope_features(ux, sx, vx), standardise=False)
    # HOPE on the input ours get (graph_input = row-normalized-self-loops): X = D_out^-1 (A + I),
    # row-stochastic, rho(X) = 1, beta = 0.5.
    ai = (a + sp.identity(n, format="csr")).tocsr()
    x = (sp.diags(1.0 / np.asarray(ai.sum(1)).ravel()) @ ai).tocsr()
    kx = Katz(x, 0.5)
    for rr in sorted({r, 500} - {n}):
        ux, sx, vx, _, how = reference_svd(kx, rr, args.dense_max, args.seed)
        row(f"reference X=D^-1(A+I), beta 0.5, r={rr}/side", hope_features(ux, sx, vx))
        row(f"reference X=D^-1(A+I), r={rr}/side, unstd.", hope_features(ux, sx, vx), standardise=False)
    out["f1"] = {k: v for k, v in rows}
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("graphs", nargs="*", default=["cora", "citeseer", "pubmed"])
    p.add_argument("--emb-root", default=os.path.join("target", "embed"))
    p.add_argument("--data", default="data")
    p.add_argument("--trials", type=int, default=10)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--ranks", default="32,128,500")
    p.add_argument("--dense-max", type=int, default=5000)
    p.add_argument("--out", default=None)
    p.add_argument("--compare-only", action="store_true", help="stop after the comparison with ours (no F1)")
    args = p.parse_args()
    args.ranks = [int(x) for x in args.ranks.split(",") if x]
    results = {}
    for g in args.graphs:
        t = time.time()
        results[g] = check(g, args)
        results[g]["seconds"] = time.time() - t
        print(f"[{g}: {results[g]['seconds']:.1f} s]\n", flush=True)
    if args.out:
        with open(args.out, "w") as fh:
            json.dump(results, fh, indent=1, default=float)


if __name__ == "__main__":
    main()
