#!/usr/bin/env python3
"""Race the `ksvd` command against numpy + SciPy + scikit-learn on the same dense kernel.

The case (issue 13 of the project): CASP protein features (data/protein/CASP.csv.bz2, the 9
feature columns, standardised), X = N random rows and Z = N other rows (seeded), the SNE kernel
with gamma = 3 (rows of G sum to 1, exact normalisers), rank r = 20.

| task | ours (`ksvd fit`, end to end) | peer (numpy builds G, then) |
|---|---|---|
| Lanczos, tol 1e-8 | `--solver lanczos --tol 1e-8` | SciPy `svds` (ARPACK, tol 1e-8) |
| randomized SVD p = 10, q = 2 | `--solver rsvd` | scikit-learn `randomized_svd` |
| asymmetric Nystrom, m landmarks | `--solver nystrom --landmarks m` | numpy, eqs. 10-11, exact normalisers |
| default | `--solver auto --tol 1e-8` | SciPy `svds` |
| the same in float32 | `--dtype f32 --tol 1e-5` (G stored and multiplied in float32) | numpy float32 G, SciPy `svds` (tol 1e-5) / scikit-learn on it |
| Nystrom in float32 | `--solver nystrom --dtype f32` (cross blocks evaluated and multiplied in float32) | the numpy Nystrom on float32 X and Z |

Ours is timed as a user runs it: a subprocess on the same X and Z written as .npy (process start,
reading, kernel, solve, residuals, writing u, s, v included). Peers are timed from the arrays in
memory (reading excluded), which favours them. Accuracy is measured against ARPACK's singular
values: max_i |s_i - s_i(ARPACK)| / s_1.

Install the peers (Python is optional for ksvd users; this script is for measuring only):

    python3 -m venv .venv && .venv/bin/pip install numpy scipy scikit-learn
    cargo build --release -p ksvd-cli
    .venv/bin/python scripts/race_dense.py --threads 2 --repeats 3

Thread counts are pinned alike for both sides (OMP/OpenBLAS/MKL and RAYON_NUM_THREADS). Check
`uptime` first: on a loaded machine the numbers are upper bounds. Prints one Markdown table
with medians, ratios (ours / peer: below 1 means ksvd is faster; and ours in float32 / ours in
float64) and our peak resident memory; the header states threads and load.
"""
import argparse
import bz2
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=10000, help="rows of X and of Z (default 10000)")
    p.add_argument("--rank", type=int, default=20)
    p.add_argument("--gamma", type=float, default=3.0)
    p.add_argument("--landmarks", type=int, default=1000)
    p.add_argument("--adaptive-landmarks", type=int, default=200,
                   help="landmarks of ours with --sampling adaptive (raced against the uniform numpy Nystrom)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--ksvd", default=None, help="path of the ksvd binary (default target/release/ksvd)")
    p.add_argument("--only", default=None,
                   help="comma-separated subset of: lanczos,rsvd,nystrom,adaptive,auto,lanczos32,rsvd32,auto32,"
                        "nystrom32")
    p.add_argument("--json", default=None, help="also write the raw measurements to this file")
    return p.parse_args()


ARGS = parse_args()
for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "RAYON_NUM_THREADS"):
    os.environ[var] = str(ARGS.threads)

import numpy as np  # noqa: E402  (after pinning the thread counts)
from scipy.sparse.linalg import svds  # noqa: E402
from sklearn.utils.extmath import randomized_svd  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cpu_model():
    """The processor's model name and its widest vector instructions: machines of one kind have
    differed (an Intel CPU with AVX-512, whose OpenBLAS took its SkylakeX kernels, on 2026-11-27;
    an AMD EPYC with AVX2 on 2026-11-28), and the race's times with them."""
    try:
        with open("/proc/cpuinfo") as f:
            text = f.read()
    except OSError:
        return "an unknown CPU"
    name = next((l.split(":", 1)[1].strip() for l in text.splitlines() if l.startswith("model name")), "unknown")
    simd = "avx512" if " avx512f" in text else "avx2" if " avx2" in text else "sse2"
    return f"{name} ({simd})"


def load_casp():
    path = os.path.join(ROOT, "data", "protein", "CASP.csv.bz2")
    with bz2.open(path, "rt") as f:
        a = np.loadtxt(f, delimiter=",", skiprows=1)
    feats = a[:, 1:]
    return (feats - feats.mean(0)) / feats.std(0)


def split(feats, n, seed):
    rng = np.random.default_rng(seed)
    perm = rng.permutation(feats.shape[0])
    if 2 * n > feats.shape[0]:
        sys.exit(f"--n {n} needs {2 * n} rows, CASP has {feats.shape[0]}")
    return np.ascontiguousarray(feats[perm[:n]]), np.ascontiguousarray(feats[perm[n : 2 * n]])


def sne_numpy(x, z, gamma):
    """The natural numpy SNE kernel: squared distances by the GEMM identity, exp, row normalisation."""
    d2 = (x * x).sum(1)[:, None] + (z * z).sum(1)[None, :] - 2.0 * (x @ z.T)
    np.maximum(d2, 0.0, out=d2)
    d2 *= -1.0 / gamma**2
    d2 -= d2.max(1, keepdims=True)
    np.exp(d2, out=d2)
    d2 /= d2.sum(1, keepdims=True)
    return d2


def sne_rows_numpy(x, z, gamma, cols=None, chunk=2000):
    """Rows of the SNE kernel restricted to `cols`, with exact normalisers over all of Z."""
    nz = (z * z).sum(1)
    out = []
    for s in range(0, x.shape[0], chunk):
        xb = x[s : s + chunk]
        t = -np.maximum((xb * xb).sum(1)[:, None] + nz[None, :] - 2.0 * (xb @ z.T), 0.0) / gamma**2
        mx = t.max(1, keepdims=True)
        logn = mx + np.log(np.exp(t - mx).sum(1, keepdims=True))
        sel = t if cols is None else t[:, cols]
        out.append(np.exp(sel - logn))
    return np.vstack(out)


def nystrom_numpy(x, z, gamma, rank, m, seed):
    """Asymmetric Nystrom (eqs. 10-11), uniform landmarks, dense SVD of the scaled block."""
    rng = np.random.default_rng(seed)
    big_n, big_m = x.shape[0], z.shape[0]
    rows = np.sort(rng.choice(big_n, m, replace=False))
    cols = np.sort(rng.choice(big_m, m, replace=False))
    g_cols = sne_rows_numpy(x, z, gamma, cols)  # G[:, J], N x m
    g_rows = sne_rows_numpy(x[rows], z, gamma)  # G[I, :], m x M
    block = g_rows[:, cols] * np.sqrt(big_n * big_m / (m * m))
    ub, sb, vbt = np.linalg.svd(block, full_matrices=False)
    ub, sb, vbt = ub[:, :rank], sb[:rank], vbt[:rank]
    u = g_cols @ (vbt.T / sb)
    v = g_rows.T @ (ub / sb)
    u /= np.linalg.norm(u, axis=0)
    v /= np.linalg.norm(v, axis=0)
    return u, sb, v


def run_ours(binary, solver_args, xpath, zpath):
    """Wall seconds, singular values and peak resident memory (MB) of one `ksvd fit`."""
    with tempfile.TemporaryDirectory() as out:
        cmd = [binary, "fit", "--rows", xpath, "--cols", zpath, "--kernel", "sne", "--gamma", str(ARGS.gamma),
               "--rank", str(ARGS.rank), "--seed", str(ARGS.seed), "--out", out] + solver_args
        # GNU time reports the peak resident memory of ksvd itself (a child forked from this
        # Python process would count the parent's memory at the fork).
        rss_file = os.path.join(out, "rss.txt")
        timed = ["/usr/bin/time", "-f", "%M", "-o", rss_file] + cmd if os.path.exists("/usr/bin/time") else cmd
        t0 = time.perf_counter()
        proc = subprocess.run(timed, capture_output=True, text=True)
        dt = time.perf_counter() - t0
        if proc.returncode != 0:
            sys.exit(f"ksvd failed ({' '.join(cmd)}):\n{proc.stderr}")
        rss = float(open(rss_file).read().split()[-1]) / 1024.0 if os.path.exists(rss_file) else float("nan")
        s = np.load(os.path.join(out, "s.npy"))
    return dt, s, rss


def main():
    binary = ARGS.ksvd or os.path.join(ROOT, "target", "release", "ksvd")
    if not os.path.exists(binary):
        sys.exit(f"{binary} not found: run `cargo build --release -p ksvd-cli` first (or pass --ksvd)")
    only = set(ARGS.only.split(",")) if ARGS.only else {
        "lanczos", "rsvd", "nystrom", "adaptive", "auto", "lanczos32", "rsvd32", "auto32", "nystrom32"}
    feats = load_casp()
    x, z = split(feats, ARGS.n, ARGS.seed)
    r = ARGS.rank
    meas = {}

    def record(key, dt, s, rss=None):
        meas.setdefault(key, {"times": [], "s": None, "rss": []})
        meas[key]["times"].append(dt)
        meas[key]["s"] = np.asarray(s)
        if rss is not None:
            meas[key]["rss"].append(rss)

    load_at_start = os.getloadavg()[0]
    cpu = cpu_model()

    with tempfile.TemporaryDirectory() as tmp:
        xpath, zpath = os.path.join(tmp, "X.npy"), os.path.join(tmp, "Z.npy")
        np.save(xpath, x)
        np.save(zpath, z)
        for rep in range(ARGS.repeats):
            t0 = time.perf_counter()
            g = sne_numpy(x, z, ARGS.gamma)
            t_build = time.perf_counter() - t0
            record("numpy builds G", t_build, [])
            t0 = time.perf_counter()
            u, s, vt = svds(g, k=r, tol=1e-8, solver="arpack", random_state=ARGS.seed)
            record("peer: svds (ARPACK) tol 1e-8", t_build + time.perf_counter() - t0, np.sort(s)[::-1])
            if "rsvd" in only:
                t0 = time.perf_counter()
                _, s2, _ = randomized_svd(g, r, n_oversamples=10, n_iter=2, random_state=ARGS.seed)
                record("peer: randomized_svd p=10 q=2", t_build + time.perf_counter() - t0, s2)
            del g
            if only & {"lanczos32", "rsvd32", "auto32"}:
                t0 = time.perf_counter()
                g32 = sne_numpy(x.astype(np.float32), z.astype(np.float32), np.float32(ARGS.gamma))
                t_build32 = time.perf_counter() - t0
                record("numpy builds float32 G", t_build32, [])
                if only & {"lanczos32", "auto32"}:
                    t0 = time.perf_counter()
                    _, s5, _ = svds(g32, k=r, tol=1e-5, solver="arpack", random_state=ARGS.seed)
                    record("peer: svds (ARPACK) float32 tol 1e-5", t_build32 + time.perf_counter() - t0,
                           np.sort(s5.astype(np.float64))[::-1])
                if "rsvd32" in only:
                    t0 = time.perf_counter()
                    _, s6, _ = randomized_svd(g32, r, n_oversamples=10, n_iter=2, random_state=ARGS.seed)
                    record("peer: randomized_svd float32 p=10 q=2", t_build32 + time.perf_counter() - t0,
                           s6.astype(np.float64))
                del g32
            if "nystrom" in only or "adaptive" in only:
                t0 = time.perf_counter()
                _, s3, _ = nystrom_numpy(x, z, ARGS.gamma, r, ARGS.landmarks, ARGS.seed)
                record(f"peer: numpy Nystrom m={ARGS.landmarks}", time.perf_counter() - t0, s3)
            if "nystrom32" in only:
                t0 = time.perf_counter()
                _, s7, _ = nystrom_numpy(x.astype(np.float32), z.astype(np.float32), np.float32(ARGS.gamma), r,
                                         ARGS.landmarks, ARGS.seed)
                record(f"peer: numpy Nystrom float32 m={ARGS.landmarks}", time.perf_counter() - t0,
                       s7.astype(np.float64))
            if "lanczos" in only:
                record("ours: lanczos tol 1e-8", *run_ours(binary, ["--solver", "lanczos", "--tol", "1e-8"], xpath, zpath))
            if "auto" in only:
                record("ours: auto tol 1e-8", *run_ours(binary, ["--solver", "auto", "--tol", "1e-8"], xpath, zpath))
            if "rsvd" in only:
                record("ours: rsvd p=10 q=2",
                       *run_ours(binary, ["--solver", "rsvd", "--oversampling", "10", "--power-iters", "2"], xpath, zpath))
            if "nystrom" in only:
                record(f"ours: nystrom m={ARGS.landmarks}",
                       *run_ours(binary, ["--solver", "nystrom", "--landmarks", str(ARGS.landmarks)], xpath, zpath))
            if "adaptive" in only:
                record(f"ours: nystrom adaptive m={ARGS.adaptive_landmarks}",
                       *run_ours(binary, ["--solver", "nystrom", "--landmarks", str(ARGS.adaptive_landmarks),
                                          "--sampling", "adaptive"], xpath, zpath))
            if "lanczos32" in only:
                record("ours: lanczos f32 tol 1e-5",
                       *run_ours(binary, ["--solver", "lanczos", "--tol", "1e-5", "--dtype", "f32"], xpath, zpath))
            if "auto32" in only:
                record("ours: auto f32 tol 1e-5",
                       *run_ours(binary, ["--solver", "auto", "--tol", "1e-5", "--dtype", "f32"], xpath, zpath))
            if "rsvd32" in only:
                record("ours: rsvd f32 p=10 q=2",
                       *run_ours(binary, ["--solver", "rsvd", "--oversampling", "10", "--power-iters", "2",
                                          "--dtype", "f32"], xpath, zpath))
            if "nystrom32" in only:
                record(f"ours: nystrom f32 m={ARGS.landmarks}",
                       *run_ours(binary, ["--solver", "nystrom", "--landmarks", str(ARGS.landmarks), "--dtype", "f32"],
                                 xpath, zpath))
            print(f"repeat {rep + 1}/{ARGS.repeats} done", file=sys.stderr)

    ref = meas["peer: svds (ARPACK) tol 1e-8"]["s"]

    def med(key):
        return statistics.median(meas[key]["times"])

    def err(key):
        s = meas[key]["s"]
        return float(np.max(np.abs(s[:r] - ref[:r])) / ref[0])

    pairs = [
        ("lanczos", "ours: lanczos tol 1e-8", "peer: svds (ARPACK) tol 1e-8", None),
        ("auto", "ours: auto tol 1e-8", "peer: svds (ARPACK) tol 1e-8", None),
        ("rsvd", "ours: rsvd p=10 q=2", "peer: randomized_svd p=10 q=2", None),
        ("nystrom", f"ours: nystrom m={ARGS.landmarks}", f"peer: numpy Nystrom m={ARGS.landmarks}", None),
        ("adaptive", f"ours: nystrom adaptive m={ARGS.adaptive_landmarks}", f"peer: numpy Nystrom m={ARGS.landmarks}",
         None),
        ("lanczos32", "ours: lanczos f32 tol 1e-5", "peer: svds (ARPACK) float32 tol 1e-5", "ours: lanczos tol 1e-8"),
        ("auto32", "ours: auto f32 tol 1e-5", "peer: svds (ARPACK) float32 tol 1e-5", "ours: auto tol 1e-8"),
        ("rsvd32", "ours: rsvd f32 p=10 q=2", "peer: randomized_svd float32 p=10 q=2", "ours: rsvd p=10 q=2"),
        ("nystrom32", f"ours: nystrom f32 m={ARGS.landmarks}", f"peer: numpy Nystrom float32 m={ARGS.landmarks}",
         f"ours: nystrom m={ARGS.landmarks}"),
    ]
    builds = f"numpy builds G in {med('numpy builds G'):.2f} s"
    if "numpy builds float32 G" in meas:
        builds += f" (float32: {med('numpy builds float32 G'):.2f} s)"
    print(f"\nSNE kernel, CASP {ARGS.n} x {ARGS.n}, gamma = {ARGS.gamma}, rank {r}, {ARGS.threads} threads on {cpu}, "
          f"load average {load_at_start:.2f} at the start, medians of {ARGS.repeats}; {builds}, included in peer "
          f"times except Nystrom\n")
    print("| task | ksvd (s) | peer (s) | ksvd / peer | ksvd f32 / ksvd f64 | ksvd peak RSS (MB) "
          "| ksvd max abs(s - s_ARPACK)/s_1 | peer max abs(s - s_ARPACK)/s_1 |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, ours, peer, ours64 in pairs:
        if name not in only or ours not in meas or peer not in meas:
            continue
        perr = "0 (reference)" if peer == "peer: svds (ARPACK) tol 1e-8" else f"{err(peer):.1e}"
        own = f"{med(ours) / med(ours64):.2f}" if ours64 in meas else ""
        rss = statistics.median(meas[ours]["rss"]) if meas[ours]["rss"] else float("nan")
        print(f"| {name} | {med(ours):.2f} | {med(peer):.2f} | {med(ours) / med(peer):.2f} | {own} | {rss:.0f} "
              f"| {err(ours):.1e} | {perr} |")
    if ARGS.json:
        with open(ARGS.json, "w") as f:
            json.dump({"threads": ARGS.threads, "cpu": cpu, "load_at_start": load_at_start,
                       "runs": {k: {"times": v["times"], "s": list(map(float, v["s"])), "rss_mb": v["rss"]}
                                for k, v in meas.items()}}, f, indent=1)


if __name__ == "__main__":
    main()
