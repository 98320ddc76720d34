"""The paper's large-scale spec (``experiments/large-scale.toml``) run through Dask.

For every dataset of the spec whose files are present (the stand-ins committed under ``data/``;
the paper's AmazonCat-13K, Avazu and Criteo when put under ``data/external/`` where the spec's
``[[params.datasets]]`` say), runs :func:`ksvd.dask.fit` on a ``LocalCluster`` of ``--workers``
processes with the spec's ``[params]`` (``components`` = rank, ``landmarks`` = n = m, RBF with the
median heuristic or a fixed bandwidth, compatibility a2, ``ridge``) and the spec's seeds, and writes rows in the tidy schema of ``results/large-scale.csv`` to ``--out``
(atomically: temp file + ``os.replace``).

:func:`ksvd.dask.fit` is the estimators (``ksvd.dask.KSVD``) plus a ridge step, with the
landmarks, projection and bandwidth of the single-machine runner (``cargo xtask reproduce --only
large-scale``, i.e. ``ksvd-stream``): the landmark rows are the bottom-n key sketch of the
training rows' global ids, so they are the runner's whatever ``--parts`` and ``--workers``, and
the AUROCs agree with the runner's up to rounding. As in the runner:

* each training file is split into ``--parts`` consecutive files (the unit of work);
* a set with more features than rows (``M > N``, the Reuters stand-in) maps the rows (a2 on
  ``x_i``, ``N`` numbers per row) and takes the columns ``X[:, J]`` as the column samples;
* a dataset without a test file (w8a; Criteo) gets the runner's seeded train/test split (the
  same held-out rows: ``RowSelection::SplitTest`` through ``_ksvd.split_test_rows``), done on
  the driver while splitting the file into parts (a real cluster would split per partition);
* ``M`` of a stand-in is the largest feature index of its files (the registry's value for the
  four stand-ins), that of a paper dataset the spec's ``n_features``.

The committed stand-in files are read directly (``data/<id>/``, checked against the sha256 of
``data/MANIFEST.toml``).

Usage: ``python large_scale_dask.py [--spec experiments/large-scale.toml] [--workers 2]
[--parts 8] [--datasets a9a,...] [--quick] [--out results/large-scale-dask.csv]``
"""

from __future__ import annotations

import argparse
import bz2
import csv
import io
import os
import sys
import tempfile
import time

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib

import ksvd.dask as kd
from ksvd import _ksvd

COLUMNS = ["dataset", "method", "metric", "setting", "seed", "value", "std", "trials", "seconds", "threads", "status", "note", "paper", "diff", "quick"]


def repo_root() -> str:
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.dirname(os.path.dirname(os.path.dirname(here)))


def _open(path: str):
    path = os.fspath(path)
    return bz2.open(path, "rb") if path.endswith(".bz2") else open(path, "rb")


def split_parts(path: str, parts: int, out_dir: str, prefix: str) -> list:
    """``path`` (plain or ``.bz2``) as ``parts`` consecutive plain files (:func:`ksvd.dask.split_file`)."""
    plain = os.path.join(out_dir, f"{prefix}-all.svm")
    with _open(path) as src, open(plain, "wb") as dst:
        while chunk := src.read(1 << 20):
            dst.write(chunk)
    return kd.split_file(plain, parts, out_dir, prefix=prefix)


# The committed stand-ins (data/<id>/SOURCE.md): training file and test file (None: the runner's
# seeded split of the training file).
STAND_IN_FILES = {
    "a9a": ("a9a.bz2", "a9a.t.bz2"),
    "w8a": ("w8a.bz2", None),
    "ijcnn1": ("ijcnn1.trn.bz2", "ijcnn1.tst.bz2"),
    "reuters_lasvm": ("reuters.trn.bz2", "reuters.tst.bz2"),
}


def data_dir(given=None) -> str:
    """The committed data folder: ``given``, ``$KSVD_DATA_DIR``, or the repository's ``data/``."""
    return given or os.environ.get("KSVD_DATA_DIR") or os.path.join(repo_root(), "data")


def max_feature_index(paths) -> int:
    """The largest (1-based) feature index in LIBSVM files (plain or ``.bz2``)."""
    top = 0
    for path in paths:
        with _open(path) as f:
            for line in f:
                body = line.split(b"#", 1)[0].split()
                if len(body) > 1:
                    top = max(top, max(int(tok.split(b":", 1)[0]) for tok in body[1:]))
    return top


def stand_in_inputs(names, directory=None) -> dict:
    """The committed files of the stand-ins ``names``: per name a dict ``train``, ``test`` (``None``
    without a test file), ``n_features`` (the largest feature index of the files),
    ``positive_label`` (``None``: the larger of two labels) and ``missing`` (``None``, or why the
    files cannot be used). Every file is checked against its sha256 in ``data/MANIFEST.toml``."""
    import hashlib

    directory = data_dir(directory)
    manifest_path = os.path.join(directory, "MANIFEST.toml")
    with open(manifest_path, "rb") as f:
        sha = {e["path"]: e["sha256"] for e in tomllib.load(f)["file"]}
    out = {}
    for name in names:
        if name not in STAND_IN_FILES:
            out[name] = {"missing": f"{name} is not a committed LIBSVM stand-in ({sorted(STAND_IN_FILES)})"}
            continue
        files = [f"{name}/{f}" for f in STAND_IN_FILES[name] if f is not None]
        problem = None
        for rel in files:
            path = os.path.join(directory, rel)
            if rel not in sha or not os.path.isfile(path):
                problem = f"missing {rel}: not in {manifest_path}"
                break
            with open(path, "rb") as f:
                if hashlib.sha256(f.read()).hexdigest() != sha[rel]:
                    problem = f"{rel} does not match its sha256 in {manifest_path}"
                    break
        paths = [os.path.join(directory, rel) for rel in files]
        out[name] = {
            "train": paths[0],
            "test": paths[1] if len(paths) > 1 else None,
            "n_features": None if problem else max_feature_index(paths),
            "positive_label": None,
            "missing": problem,
        }
    return out


def paper_inputs(datasets, directory=None) -> dict:
    """The user datasets of the spec's ``[[params.datasets]]`` (paths relative to the data folder),
    in the form of :func:`stand_in_inputs`; ``missing`` names the first absent file and where to
    get it, as the runner's ``missing-data`` rows do."""
    directory = data_dir(directory)
    out = {}
    for d in datasets:
        rels = [d["train_path"]] + ([d["test_path"]] if d.get("test_path") else [])
        absent = [r for r in rels if not os.path.isfile(os.path.join(directory, r))]
        out[d["name"]] = {
            "train": os.path.join(directory, rels[0]),
            "test": os.path.join(directory, rels[1]) if len(rels) > 1 else None,
            "n_features": d.get("n_features"),
            "positive_label": d.get("positive_label"),
            "missing": f"missing {absent[0]}: {d.get('origin', '')}" if absent else None,
        }
    return out


def seeded_split(path: str, test_fraction: float, seed: int, out_dir: str) -> tuple:
    """The runner's seeded train/test split of a file without a test part (the mask is
    ``ksvd_streaming::RowSelection::SplitTest`` of the file's row indices) as two plain files."""
    with _open(path) as f:
        lines = f.read().splitlines(keepends=True)
    held_out = _ksvd.split_test_rows(len(lines), test_fraction, seed)
    train, test = os.path.join(out_dir, "split-train.svm"), os.path.join(out_dir, "split-test.svm")
    with open(train, "wb") as a, open(test, "wb") as b:
        for line, t in zip(lines, held_out):
            (b if t else a).write(line)
    return train, test


def row(dataset, method, metric, seed, *, value=None, seconds=None, threads=None, status="ok", note="", paper=None, quick=False):
    diff = value - paper if value is not None and paper is not None else None
    return {
        "dataset": dataset, "method": method, "metric": metric, "setting": "", "seed": seed,
        "value": value, "std": None, "trials": 1 if status == "ok" else None, "seconds": seconds,
        "threads": threads, "status": status, "note": note, "paper": paper, "diff": diff,
        "quick": "true" if quick else "false",
    }


def write_atomic_csv(path: str, rows: list) -> None:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: ("" if v is None else v) for k, v in r.items()})
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".tmp-", suffix=".csv")
    try:
        with os.fdopen(fd, "w", newline="") as f:
            f.write(buf.getvalue())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def bandwidth_args(bw) -> dict:
    """The spec's ``bandwidth`` (``{ median = f }`` or ``{ fixed = g }``) as ``ksvd.dask.fit`` arguments."""
    if isinstance(bw, dict) and set(bw) == {"median"}:
        return {"bandwidth": None, "bandwidth_factor": float(bw["median"])}
    if isinstance(bw, dict) and set(bw) == {"fixed"}:
        return {"bandwidth": float(bw["fixed"]), "bandwidth_factor": 1.0}
    raise ValueError(f"bandwidth {bw!r}: expected {{ median = f }} or {{ fixed = g }}")


def method_note(method: str, res, args, partitions: int, rank: int, ridge: float) -> str:
    """The note of a ``kpca`` / ``ksvd`` AUROC row, with the runner's facts (rank used, landmarks,
    bandwidth, compatibility side) and the Dask setting."""
    parts = [
        f"Dask: {args.workers} workers, {partitions} partitions; r = {res.rank} (requested {rank})",
        f"n = {len(res.landmark_rows)} landmark rows (key sketch)",
    ]
    if method == "ksvd":
        side = {"columns": "columns mapped (N > M)", "rows": "rows mapped (M > N)", "square": "square (C = I)"}[res.compat]
        parts += [f"m = {len(res.landmark_cols)} landmark columns", f"compatibility a2: {side}"]
    parts += [f"gamma = {res.bandwidth:.4e}", f"ridge = {ridge}"]
    return ", ".join(parts)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--spec", default=os.path.join(repo_root(), "experiments", "large-scale.toml"))
    ap.add_argument("--data-dir", default=None, help="the committed data folder (default: found like the Rust runner)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--parts", type=int, default=8, help="files per training / test file (fixes the landmarks)")
    ap.add_argument("--datasets", default=None, help="comma-separated subset of the spec's datasets")
    ap.add_argument("--quick", action="store_true", help="the spec's [quick] variant")
    ap.add_argument("--out", default=None, help="default: results/large-scale-dask.csv (--quick: results/quick/)")
    args = ap.parse_args(argv)
    if args.out is None:
        args.out = os.path.join(repo_root(), "results", *(["quick"] if args.quick else []), "large-scale-dask.csv")

    with open(args.spec, "rb") as f:
        spec = tomllib.load(f)
    params = dict(spec.get("params", {}))
    datasets = [d["id"] for d in spec["datasets"]]
    if args.quick:
        params.update(spec.get("quick", {}).get("params", {}))
        datasets = spec.get("quick", {}).get("datasets", datasets)
    if args.datasets:
        wanted = args.datasets.split(",")
        unknown = [d for d in wanted if d not in datasets]
        if unknown:
            raise SystemExit(f"error: datasets {unknown} are not in the spec ({datasets})")
        datasets = wanted
    # Defaults of xtask's LargeScaleConfig (experiments/large_scale/runner.rs) for keys the spec leaves out.
    user_datasets = params.get("datasets", [])
    stand_ins = params.get("stand_ins", ["a9a", "w8a", "ijcnn1", "reuters_lasvm"])
    methods = [m for m in params.get("methods", ["kpca", "ksvd"]) if any(m == x["id"] for x in spec["methods"])]
    landmarks = int(params.get("landmarks", 1000))
    rank = int(params.get("components", 100))
    bw = bandwidth_args(params.get("bandwidth", {"median": 1.0}))
    ridge = float(params.get("ridge", 1e-3))
    test_fraction = float(params.get("test_fraction", 0.2))
    seeds = [int(s) for s in spec.get("seeds", [0])]
    paper = {(p["dataset"], p["method"], p["metric"]): float(p["value"]) for p in spec.get("paper", [])}

    inputs = stand_in_inputs([s for s in stand_ins if s in datasets], args.data_dir)
    inputs.update(paper_inputs([d for d in user_datasets if d["name"] in datasets], args.data_dir))
    from dask.distributed import Client, LocalCluster

    rows = []
    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, Client(cluster), tempfile.TemporaryDirectory() as tmp:
        for name in datasets:
            inp = inputs.get(name)
            for seed in seeds:
                pv = lambda m, k: paper.get((name, m, k))  # noqa: E731
                base = dict(quick=args.quick)
                if inp is None or inp["missing"] is not None:
                    if inp is None:
                        status, note = "failed", f"{name} is neither a stand-in nor a paper dataset of the Rust runner"
                    else:
                        status, note = "missing-data", inp["missing"]
                    rows.append(row(name, "data", "n_samples", seed, status=status, note=note, paper=pv("data", "n_samples"), **base))
                    rows += [row(name, m, "auroc", seed, status=status, note=note, paper=pv(m, "auroc"), **base) for m in methods]
                    continue
                d = os.path.join(tmp, f"{name}-{seed}")
                os.makedirs(d)
                train_file, test_file = inp["train"], inp["test"]
                if test_file is None:
                    train_file, test_file = seeded_split(train_file, test_fraction, seed, d)
                train = split_parts(train_file, args.parts, d, "train")
                test = split_parts(test_file, args.parts, d, "test")
                fits = {}
                for meth in methods:
                    t0 = time.perf_counter()
                    try:
                        res = kd.fit(
                            train, test, method=meth, n_components=rank, n_landmarks=landmarks, ridge=ridge,
                            seed=seed, n_features=inp["n_features"], positive_label=inp["positive_label"], **bw,
                        )
                        fits[meth] = (res, time.perf_counter() - t0, None)
                    except ValueError as e:
                        fits[meth] = (None, time.perf_counter() - t0, str(e))
                done = [f[0] for f in fits.values() if f[0] is not None]
                if done:
                    res = done[0]
                    note = f"{res.n_test} test rows"
                    rows.append(row(name, "data", "n_samples", seed, value=float(res.shape[0]), paper=pv("data", "n_samples"), note=note, **base))
                    rows.append(row(name, "data", "n_features", seed, value=float(res.shape[1]), paper=pv("data", "n_features"), **base))
                for meth, (res, secs, err) in fits.items():
                    if res is None:
                        rows.append(row(name, meth, "auroc", seed, status="failed", note=err, seconds=secs, paper=pv(meth, "auroc"), **base))
                        continue
                    rows.append(row(name, meth, "auroc", seed, value=res.auroc, seconds=secs, threads=args.workers, note=method_note(meth, res, args, len(train), rank, ridge), paper=pv(meth, "auroc"), **base))
                    rows.append(row(name, meth, "seconds", seed, value=secs, seconds=secs, threads=args.workers, **base))
                    print(f"{name} seed {seed}: {meth} auroc = {res.auroc:.6f} ({secs:.1f} s)", file=sys.stderr)
    write_atomic_csv(args.out, rows)
    print(f"wrote {len(rows)} rows to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
