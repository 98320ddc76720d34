"""The large-scale pipeline (``ksvd.dask.fit``: KSVD with the a2 compatibility, Nystrom, ridge,
AUROC) on a local Dask cluster, against the single-process fit.

Generates seeded sparse LIBSVM data (scikit-learn's ``make_classification``, each entry kept with
probability ``--nnz / --features``, written by ``dump_svmlight_file``) split into ``--files``
files, or takes ``--data TRAIN... --test TEST...``; starts a
``dask.distributed.LocalCluster`` of ``--workers`` worker processes (one thread each); runs
``ksvd.dask.fit`` on it and ``ksvd.dask.fit_local`` (one process) on the same files; prints both
fits, the wall time and peak RSS per worker, and as its last line

    max |distributed - single| = <value>; partitions per worker = [<count>, ...]

(the largest difference over the test embeddings, the singular values and the AUROC; the
number of partition tasks of all passes each worker ran).

    python crates/python/examples/dask_streaming.py --workers 2
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections import Counter

import numpy as np

from ksvd import dask as kd


def _peak_rss_bytes() -> float:
    """This process's own peak RSS (``VmHWM`` of ``/proc/self/status``), not ``ru_maxrss``: a
    worker process spawned by the driver inherits the driver's high-water mark in ``ru_maxrss``
    (Linux keeps it across fork + exec), which made workers look as large as the driver. NaN
    where ``/proc`` is absent."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return float(line.split()[1]) * 1024.0
    except OSError:
        pass
    return float("nan")


def _write_data(directory: str, rows: int, test_rows: int, features: int, nnz: int, seed: int) -> tuple:
    """Seeded sparse training and test files (see the module docs); returns their paths."""
    import scipy.sparse as sp
    from sklearn.datasets import dump_svmlight_file, make_classification

    x, y = make_classification(
        n_samples=rows + test_rows, n_features=features, n_informative=max(2, features // 10), n_redundant=0, random_state=seed
    )
    x = sp.csr_matrix(x * (np.random.default_rng(seed).random(x.shape) < nnz / features))
    y = np.where(y > 0, 1.0, -1.0)
    out = []
    for name, rs in (("train.svm", slice(0, rows)), ("test.svm", slice(rows, None))):
        out.append(os.path.join(directory, name))
        dump_svmlight_file(x[rs], y[rs], out[-1], zero_based=False)
    return tuple(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--rows", type=int, default=20_000, help="training rows to generate")
    ap.add_argument("--test-rows", type=int, default=5_000)
    ap.add_argument("--files", type=int, default=8, help="training files to split the generated data into")
    ap.add_argument("--features", type=int, default=500)
    ap.add_argument("--nnz", type=int, default=16, help="expected stored entries per generated row")
    ap.add_argument("--data", nargs="+", help="training LIBSVM files (plain or .bz2) instead of generated data")
    ap.add_argument("--test", nargs="+", help="test LIBSVM files (with --data)")
    ap.add_argument("--rank", type=int, default=10)
    ap.add_argument("--landmarks", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-single", action="store_true", help="skip the single-process fit (scale runs)")
    args = ap.parse_args()

    from dask.distributed import Client, LocalCluster, get_task_stream

    with tempfile.TemporaryDirectory(prefix="ksvd-dask-") as tmp:
        if args.data:
            if not args.test:
                ap.error("--data needs --test")
            train, test = args.data, args.test
        else:
            whole, t = _write_data(tmp, args.rows, args.test_rows, args.features, args.nnz, args.seed)
            train = kd.split_file(whole, args.files, tmp, prefix="train")
            os.unlink(whole)
            test = kd.split_file(t, max(1, min(args.files, 4)), tmp, prefix="test")
        opts = dict(n_components=args.rank, n_landmarks=args.landmarks, seed=args.seed)
        n_features = None if args.data else args.features

        with LocalCluster(n_workers=args.workers, processes=True, threads_per_worker=1, dashboard_address=None) as cluster, Client(cluster) as client:
            workers = sorted(client.scheduler_info()["workers"])
            t0 = time.perf_counter()
            with get_task_stream(client) as ts:
                dist = kd.fit(train, test, n_features=n_features, **opts)
                emb_dist = dist.embeddings.compute(scheduler=client)
            wall = time.perf_counter() - t0
            rss = client.run(_peak_rss_bytes)
            counts = Counter(rec["worker"] for rec in ts.data if "-part-" in str(rec["key"]))
        print(f"distributed: {args.workers} workers, {len(train)} training files, wall {wall:.2f} s, "
              f"load average {os.getloadavg()[0]:.2f}")
        print(f"  AUROC {dist.auroc:.6f}, gamma {dist.bandwidth:.6g}, singular values {np.round(dist.estimator.singular_values_[:4], 6)}")
        print("  peak RSS per worker (MB): " + ", ".join(f"{rss[w] / 2**20:.0f}" for w in workers))
        if args.no_single:
            diff = float("nan")
        else:
            t1 = time.perf_counter()
            single = kd.fit_local(train, test, n_features=n_features, **opts)
            emb_single = single.embeddings
            print(f"single process: AUROC {single.auroc:.6f}, wall {time.perf_counter() - t1:.2f} s, "
                  f"peak RSS {_peak_rss_bytes() / 2**20:.0f} MB")
            diff = max(
                float(np.max(np.abs(emb_dist - emb_single))),
                float(np.max(np.abs(dist.estimator.singular_values_ - single.estimator.singular_values_))),
                abs(dist.auroc - single.auroc),
            )
        per_worker = ", ".join(str(counts.get(w, 0)) for w in workers)
        print(f"max |distributed - single| = {diff:.3e}; partitions per worker = [{per_worker}]")


if __name__ == "__main__":
    main()
