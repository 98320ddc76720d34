"""Per-call overhead of the Python package against calling Rust directly.

Runs the fits of ``examples/overhead.rs`` (same deterministic data, kernel, solver, rank) through
``ksvd.KSVD`` (scikit-learn input validation included) and through the native ``ksvd._ksvd.fit``,
and prints a table with the Rust times read from the JSON the Rust example prints::

    cargo run --release -p ksvd-python --example overhead > rust-times.json
    python crates/python/examples/overhead.py rust-times.json

Set ``RAYON_NUM_THREADS`` alike for both runs. Times are medians over repeats, in seconds.
"""

import json
import sys
import time

import numpy as np

import ksvd
from ksvd import _ksvd
from ksvd._convert import native_params

CASES = [  # name, n, m, rank, solver, repeats (as in overhead.rs)
    ("tiny_exact", 30, 25, 3, "exact", 400),
    ("small_exact", 300, 250, 5, "exact", 40),
    ("medium_auto", 3000, 2500, 10, "auto", 7),
]


def data(n, m):
    i, j = np.meshgrid(np.arange(n), np.arange(8), indexing="ij")
    x = ((i * 7 + j * 3) % 101) / 101.0
    i, j = np.meshgrid(np.arange(m), np.arange(8), indexing="ij")
    z = ((i * 5 + j) % 103) / 103.0
    return x, z, x[: min(10, n)].copy()


def median_time(f, repeats):
    t = []
    for _ in range(repeats):
        s = time.perf_counter()
        f()
        t.append(time.perf_counter() - s)
    return float(np.median(t))


def main():
    rust = json.load(open(sys.argv[1])) if len(sys.argv) > 1 else {}
    print("| case | Rust fit | KSVD.fit | native fit | Rust transform | KSVD.transform | fit overhead | transform overhead |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, n, m, rank, solver, repeats in CASES:
        x, z, new = data(n, m)
        est = ksvd.KSVD(n_components=rank, kernel="sne", bandwidth=0.5, solver=solver, tol=1e-10, random_state=0)
        fit = median_time(lambda: est.fit(x, Z=z), repeats)
        params = native_params(est)
        native = median_time(lambda: _ksvd.fit(x, z, estimator="ksvd", params=params, n_jobs=None), repeats)
        est.fit(x, Z=z)
        transform = median_time(lambda: est.transform(new), max(repeats, 50))
        r = rust.get(name, {})
        rf, rt = r.get("fit", float("nan")), r.get("transform", float("nan"))
        print(f"| {name} ({n}x{m}, r={rank}, {solver}) | {rf * 1e3:.3f} ms | {fit * 1e3:.3f} ms | {native * 1e3:.3f} ms "
              f"| {rt * 1e3:.3f} ms | {transform * 1e3:.3f} ms | {(fit - rf) * 1e3:+.3f} ms | {(transform - rt) * 1e3:+.3f} ms |")


if __name__ == "__main__":
    main()
