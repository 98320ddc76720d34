#!/usr/bin/env python3
"""Benchmark `ksvd.dask.KSVD` (the estimators on data partitioned by rows on a Dask cluster)
against the single-machine `ksvd.KSVD` and against dask-ml's TruncatedSVD.

The issue: 10^6 and 10^7 rows, one process vs 1 and 2 workers, time and peak memory per worker;
the exact solver against dask-ml's TruncatedSVD on a linear kernel (same data, same rank, same
accuracy), stating load and threads.

Data: X = N seeded rows x 16 features, x_ij ~ N(0, 0.8^(2j)) (a decaying spectrum, so the top 10
singular values are well separated), generated chunk by chunk (chunk k from
`numpy.random.default_rng([seed, k])`), so 10^7 rows never sit in one process in the Dask
settings; the single-machine setting stacks the very same chunks in memory.

1. Nystrom: `KSVD(kernel="rbf", bandwidth=2.0, solver="nystrom", n_components=10,
   n_landmarks=1000, random_state=seed).fit(X)` (Z = X, the default) in three settings:
   * `one process`: `ksvd.KSVD` on the in-memory array (only for N <= --local-max-rows);
   * `dask 1 worker`, `dask 2 workers`: `ksvd.dask.KSVD` on a fresh `LocalCluster` of worker
     processes (threads_per_worker = threads / workers, n_jobs the same), X persisted on the
     workers before the clock starts (generation is not timed).
   Reported: wall time of `fit` (median and min of --repeats), the passes over the partitions, the
   peak RSS of the driver and of every worker (`getrusage(RUSAGE_SELF).ru_maxrss`; workers:
   after the data is persisted and after the fits), and max |s_i - s_i(one process)| / s_1
   (against the 1-worker fit when the one-process fit did not run).
2. Exact: with the linear kernel and Z = I_16, G = X Z^T = X, so
   `KSVD(kernel="linear", solver="lanczos", n_components=10).fit(X, Z=np.eye(16))` is the
   rank-10 truncated SVD of X. Raced against `dask_ml.decomposition.TruncatedSVD(n_components=10,
   algorithm="tsqr")` and `algorithm="randomized"` (n_iter 5, seeded) on the same persisted dask
   array and the same cluster. Accuracy: max_i |s_i - s_ref_i| / s_ref_1 with s_ref the exact
   singular values from the 16 x 16 Gram matrix X^T X (computed with dask, eigvalsh in numpy;
   its own error is about eps s_1 / s_10 ~ 1e-15 here). Note the fits do not do the same work
   after the SVD: `ksvd.dask.KSVD` gathers U (N x 10) to the driver (`row_embedding_` is numpy),
   dask-ml's TruncatedSVD computes only V, s and the explained variances.

Every (part, N, setting, method) runs in its own child process (this script with --child) with
its own cluster, so every peak RSS is that measurement's alone. Thread counts are pinned alike:
OMP/OpenBLAS/MKL_NUM_THREADS and RAYON_NUM_THREADS = --threads in the driver (which runs the
Rust solver) and = threads per worker in the workers. The 1-minute load average is printed when
each child starts; on a loaded machine the times are upper bounds (check `uptime` first).

Run (from the repository root, with the `ksvd` package installed, dask[distributed], and for the
peer `pip install dask-ml`; without dask-ml its rows say "dask-ml unavailable: <reason>"):

    python scripts/bench_dask.py                                  # the issue's benchmark
    python scripts/bench_dask.py --rows 2e5 --repeats 1 --threads 2   # a smoke test
    python scripts/bench_dask.py --out results/bench_dask.csv     # also write the raw rows

Run time (2026-11-27, 2 cores): `--rows 1e6 --repeats 3` about 4 minutes, `--rows 1e7 --repeats 1`
about 12 minutes (the Nystrom fits 182-242 s each); the results are in docs/streaming.md. Memory
at 1e7 rows: up to 6.6 GB for the driver (which also runs the scheduler; Z = X is gathered there,
1.3 GB, and sent to every worker) and 6.1 GB for a single worker.
"""
import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import time


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rows", default="1e6,1e7", help="comma-separated row counts N (default 1e6,1e7)")
    p.add_argument("--features", type=int, default=16)
    p.add_argument("--rank", type=int, default=10)
    p.add_argument("--landmarks", type=int, default=1000, help="n_landmarks of the Nystrom fit")
    p.add_argument("--bandwidth", type=float, default=2.0, help="fixed RBF bandwidth (default 2.0)")
    p.add_argument("--threads", type=int, default=2, help="total threads (driver; split among workers)")
    p.add_argument("--workers", default="1,2", help="comma-separated worker counts (default 1,2)")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--chunk-rows", type=int, default=0,
                   help="rows per dask chunk / partition (default: min(250000, ceil(N / 8)))")
    p.add_argument("--local-max-rows", type=float, default=1e6,
                   help="run the one-process ksvd.KSVD only up to this many rows (default 1e6)")
    p.add_argument("--only", default="nystrom,exact", help="comma-separated subset of: nystrom,exact")
    p.add_argument("--no-randomized", action="store_true", help="skip dask-ml's randomized TruncatedSVD")
    p.add_argument("--out", default=None, help="also write the table's raw rows to this CSV file")
    p.add_argument("--child", default=None, help=argparse.SUPPRESS)
    return p.parse_args(argv)


ARGS = parse_args()
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "RAYON_NUM_THREADS"):
    os.environ[_var] = str(ARGS.threads)

import numpy as np  # noqa: E402  (after pinning the thread counts)

THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "RAYON_NUM_THREADS")


# ---------------------------------------------------------------------------------------------
# Data: seeded per chunk


def make_chunk(seed, k, rows, d):
    """Chunk k of X: rows x d, column j ~ N(0, 0.8^(2j)), from its own seeded generator."""
    rng = np.random.default_rng([seed, k])
    return rng.standard_normal((rows, d)) * (0.8 ** np.arange(d))


def chunk_rows(n):
    return ARGS.chunk_rows if ARGS.chunk_rows > 0 else min(250_000, -(-n // 8))


def chunk_sizes(n, chunk):
    return [min(chunk, n - s) for s in range(0, n, chunk)]


def dask_data(n, d, chunk, seed):
    import dask.array as da
    from dask import delayed

    parts = [
        da.from_delayed(delayed(make_chunk)(seed, k, r, d, dask_key_name=f"bench-x-{seed}-{n}-{k}"),
                        shape=(r, d), dtype=np.float64)
        for k, r in enumerate(chunk_sizes(n, chunk))
    ]
    return da.concatenate(parts, axis=0)


def local_data(n, d, chunk, seed):
    return np.vstack([make_chunk(seed, k, r, d) for k, r in enumerate(chunk_sizes(n, chunk))])


def exact_singular_values(gram, rank):
    w = np.linalg.eigvalsh(gram)[::-1]
    return np.sqrt(np.maximum(w, 0.0))[:rank]


# ---------------------------------------------------------------------------------------------
# One measurement (in a child process)


def peak_mib():
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # KiB on Linux


def worker_info():
    import os as _os
    import resource as _resource

    return {
        "peak_mib": _resource.getrusage(_resource.RUSAGE_SELF).ru_maxrss / 1024.0,
        "threads": {v: _os.environ.get(v) for v in ("OMP_NUM_THREADS", "RAYON_NUM_THREADS")},
    }


def nystrom_estimator(cls, n_jobs):
    return cls(n_components=ARGS.rank, kernel="rbf", bandwidth=ARGS.bandwidth, solver="nystrom",
               n_landmarks=ARGS.landmarks, random_state=ARGS.seed, n_jobs=n_jobs)


def exact_estimator(cls, n_jobs):
    return cls(n_components=ARGS.rank, kernel="linear", solver="lanczos", random_state=ARGS.seed, n_jobs=n_jobs)


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def run_child(job):
    """Runs one (part, n, setting, method) and returns its measurements as a dict."""
    import warnings

    warnings.filterwarnings("ignore", message="Sending large graph")
    part, n, workers, method = job["part"], job["n"], job["workers"], job["method"]
    d, chunk, seed, rank = ARGS.features, chunk_rows(n), ARGS.seed, ARGS.rank
    res = dict(job, load_start=os.getloadavg()[0], times=[], s=None, s_ref=None, n_passes=None,
               worker_base_mib=None, worker_peak_mib=None, worker_threads=None, error=None)
    if workers == 0:  # one process, in memory
        import ksvd

        x = local_data(n, d, chunk, seed)
        if part == "exact":
            res["s_ref"] = exact_singular_values(x.T @ x, rank).tolist()
        for _ in range(ARGS.repeats):
            if part == "nystrom":
                dt, est = timed(lambda: nystrom_estimator(ksvd.KSVD, ARGS.threads).fit(x))
            else:
                dt, est = timed(lambda: exact_estimator(ksvd.KSVD, ARGS.threads).fit(x, Z=np.eye(d)))
            res["times"].append(dt)
        res["s"] = np.asarray(est.singular_values_).tolist()
        res["driver_peak_mib"] = peak_mib()
        return res

    import dask
    from dask.distributed import Client, LocalCluster, wait

    tpw = max(1, ARGS.threads // workers)
    env = {v: str(tpw) for v in THREAD_VARS}
    with LocalCluster(n_workers=workers, threads_per_worker=tpw, processes=True, dashboard_address=None,
                      env=env) as cluster, Client(cluster) as client:
        X = dask_data(n, d, chunk, seed).persist()
        wait(X)
        info = client.run(worker_info)
        res["worker_base_mib"] = [info[w]["peak_mib"] for w in sorted(info)]
        res["worker_threads"] = [info[w]["threads"] for w in sorted(info)]
        if part == "exact":
            res["s_ref"] = exact_singular_values(dask.compute(X.T @ X)[0], rank).tolist()
        try:
            for _ in range(ARGS.repeats):
                if method == "ksvd":
                    import ksvd.dask

                    if part == "nystrom":
                        dt, est = timed(lambda: nystrom_estimator(ksvd.dask.KSVD, tpw).fit(X))
                    else:
                        dt, est = timed(lambda: exact_estimator(ksvd.dask.KSVD, tpw).fit(X, Z=np.eye(d)))
                    res["n_passes"] = int(est.n_passes_)
                else:
                    try:
                        from dask_ml.decomposition import TruncatedSVD
                    except Exception as e:  # noqa: BLE001  (report any import failure)
                        res["error"] = f"dask-ml unavailable: {type(e).__name__}: {e}"
                        break
                    algorithm = method.split()[-1]
                    dt, est = timed(lambda: TruncatedSVD(n_components=rank, algorithm=algorithm, n_iter=5,
                                                         random_state=seed).fit(X))
                res["times"].append(dt)
                res["s"] = np.asarray(est.singular_values_).tolist()
                del est
        except Exception as e:  # noqa: BLE001  (a failed measurement is a row, not a crash)
            res["error"] = f"{type(e).__name__}: {e}"
        info = client.run(worker_info)
        res["worker_peak_mib"] = [info[w]["peak_mib"] for w in sorted(info)]
    res["driver_peak_mib"] = peak_mib()
    return res


# ---------------------------------------------------------------------------------------------
# The parent: one child per measurement, then the tables


def spawn(job):
    argv = [sys.executable, os.path.abspath(__file__), "--child", json.dumps(job)] + sys.argv[1:]
    t0 = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True)
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT "):])
    tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
    return dict(job, times=[], error=f"child failed (exit {proc.returncode}, {time.perf_counter() - t0:.0f} s): {tail}")


def setting_name(workers):
    return "one process" if workers == 0 else f"dask {workers} worker{'s' if workers > 1 else ''}"


def fmt_mib(v):
    if v is None:
        return "-"
    if isinstance(v, list):
        return " / ".join(f"{x:.0f}" for x in v) if v else "-"
    return f"{v:.0f}"


def rel_err(s, ref):
    if s is None or ref is None:
        return None
    s, ref = np.asarray(s), np.asarray(ref)
    k = min(len(s), len(ref))
    return float(np.max(np.abs(s[:k] - ref[:k])) / ref[0])


def main():
    rows = [int(float(r)) for r in ARGS.rows.split(",")]
    workers = [int(w) for w in ARGS.workers.split(",")]
    parts = ARGS.only.split(",")
    jobs = []
    for n in rows:
        settings = ([0] if n <= ARGS.local_max_rows else []) + workers
        for w in settings:
            if "nystrom" in parts:
                jobs.append(dict(part="nystrom", n=n, workers=w, method="ksvd"))
        for w in settings:
            if "exact" in parts:
                jobs.append(dict(part="exact", n=n, workers=w, method="ksvd"))
                if w:
                    jobs.append(dict(part="exact", n=n, workers=w, method="dask-ml tsqr"))
                    if not ARGS.no_randomized:
                        jobs.append(dict(part="exact", n=n, workers=w, method="dask-ml randomized"))
    import dask

    try:
        import dask_ml

        peer = f"dask-ml {dask_ml.__version__}"
    except Exception as e:  # noqa: BLE001
        peer = f"dask-ml unavailable: {type(e).__name__}: {e}"
    try:
        import ksvd

        ours = f"ksvd {getattr(ksvd, '__version__', '?')}"
    except ImportError as e:
        sys.exit(f"cannot import ksvd: {e}")
    print(f"# {ours}, dask {dask.__version__}, {peer}; {os.cpu_count()} cores, --threads {ARGS.threads} "
          f"(threads per worker = {ARGS.threads} / workers); load average at start "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}", file=sys.stderr)
    results = []
    for i, job in enumerate(jobs):
        print(f"[{i + 1}/{len(jobs)}] {job['part']} N={job['n']} {setting_name(job['workers'])} {job['method']} ...",
              file=sys.stderr, flush=True)
        r = spawn(job)
        results.append(r)
        t = f"{statistics.median(r['times']):.2f} s" if r["times"] else "-"
        print(f"    median {t}, load at start {r.get('load_start', float('nan')):.2f}"
              + (f", {r['error']}" if r.get("error") else ""), file=sys.stderr, flush=True)

    # Accuracy references: Nystrom against the one-process fit (else the 1-worker fit); exact
    # against the Gram-matrix singular values.
    table = []
    for r in results:
        ref = r.get("s_ref")
        ref_name = "exact (X^T X)"
        if r["part"] == "nystrom":
            same = [q for q in results if q["part"] == "nystrom" and q["n"] == r["n"] and q.get("s")]
            base = next((q for q in same if q["workers"] == 0), None) or (same[0] if same else None)
            ref = base.get("s") if base else None
            ref_name = setting_name(base["workers"]) if base else "-"
        times = r.get("times") or []
        tpw = "-" if not r["workers"] else max(1, ARGS.threads // r["workers"])
        table.append({
            "part": r["part"],
            "rows": r["n"],
            "setting": setting_name(r["workers"]),
            "method": (f"ksvd nystrom m={ARGS.landmarks}" if r["part"] == "nystrom" else "ksvd lanczos, Z=I")
            if r["method"] == "ksvd" else r["method"],
            "threads_per_worker": ARGS.threads if not r["workers"] else tpw,
            "median_s": statistics.median(times) if times else None,
            "min_s": min(times) if times else None,
            "repeats": len(times),
            "n_passes": r.get("n_passes"),
            "driver_peak_mib": r.get("driver_peak_mib"),
            "worker_base_mib": r.get("worker_base_mib"),
            "worker_peak_mib": r.get("worker_peak_mib"),
            "worker_env_threads": r.get("worker_threads"),
            "max_abs_ds_over_s1": rel_err(r.get("s"), ref),
            "accuracy_ref": ref_name,
            "s1": (r.get("s") or [None])[0],
            "load_start": r.get("load_start"),
            "error": r.get("error") or "",
            "times": times,
            "s": r.get("s"),
        })

    chunks = ", ".join(f"{len(chunk_sizes(n, chunk_rows(n)))} x {chunk_rows(n)} rows" for n in rows)
    print(f"\nX: N x {ARGS.features} seeded Gaussian rows (column scales 0.8^j), chunks: {chunks}; "
          f"rank {ARGS.rank}; --threads {ARGS.threads} (driver; threads per worker = threads / workers, n_jobs "
          f"alike); medians of {ARGS.repeats}; RSS peaks in MiB (workers: after persisting X -> after the fits)\n")
    print("| part | N | setting | method | thr/worker | median s | min s | passes | driver peak | "
          "worker peak (base -> after) | max abs(ds)/s_1 | vs | load | note |")
    print("|---|---:|---|---|---:|---:|---:|---:|---:|---|---:|---|---:|---|")
    for t in table:
        med = f"{t['median_s']:.2f}" if t["median_s"] is not None else "-"
        mn = f"{t['min_s']:.2f}" if t["min_s"] is not None else "-"
        err = f"{t['max_abs_ds_over_s1']:.1e}" if t["max_abs_ds_over_s1"] is not None else "-"
        wp = "-" if t["worker_peak_mib"] is None else f"{fmt_mib(t['worker_base_mib'])} -> {fmt_mib(t['worker_peak_mib'])}"
        load = f"{t['load_start']:.2f}" if t["load_start"] is not None else "-"
        print(f"| {t['part']} | {t['rows']:.0e} | {t['setting']} | {t['method']} | {t['threads_per_worker']} | {med} | "
              f"{mn} | {t['n_passes'] if t['n_passes'] is not None else '-'} | {fmt_mib(t['driver_peak_mib'])} | {wp} | "
              f"{err} | {t['accuracy_ref'] if t['max_abs_ds_over_s1'] is not None else '-'} | {load} | {t['error']} |")
    print(f"\nload average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if ARGS.out:
        os.makedirs(os.path.dirname(os.path.abspath(ARGS.out)), exist_ok=True)
        with open(ARGS.out, "w", newline="") as f:
            wr = csv.DictWriter(f, fieldnames=list(table[0].keys()))
            wr.writeheader()
            for t in table:
                wr.writerow({k: (json.dumps(v) if isinstance(v, list) else v) for k, v in t.items()})
        print(f"wrote {ARGS.out}", file=sys.stderr)


if __name__ == "__main__":
    if ARGS.child:
        print("RESULT " + json.dumps(run_child(json.loads(ARGS.child))), flush=True)
    else:
        main()
