"""KSVD and KPCA on Dask (``pip install "ksvd[dask]"``).

:class:`KSVD` and :class:`KPCA` are ``ksvd.KSVD`` / ``ksvd.KPCA`` on data partitioned by rows (dask
arrays, dataframes, file lists): every solver, the single-machine answers (see
``ksvd/_dask_estimators.py``). :func:`fit` below is the paper's large-scale pipeline.

The out-of-core asymmetric Nystrom KSVD (and the KPCA baseline) of :func:`fit`:

Runs the four passes of ``ksvd-stream`` (Tao, Tonin et al., ICML 2024, the large-scale table:
RBF kernel, compatibility a2 by a very sparse random projection, ridge / LS-SVM classifier on the
embeddings, AUROC) over a list (or a ``dask.bag``) of LIBSVM files (plain or ``.bz2``) as Dask
tasks, or over a ``dask.array`` pair ``(X, y)`` (dense features chunked by rows, labels). File
``f`` (or row chunk ``k``) is one part; a partition is a group of consecutive files. Every pass
maps each partition to a small mergeable state (Rust, pickled through a versioned, checksummed
document) and merges them along a fixed binary tree of ``dask.delayed`` tasks; the driver does
the small solves in between. These are the states and merges ``ksvd-stream`` runs in one
process, so both give the same landmarks and the same results on the same rows:

1. scan: row counts of every part, labels and ``||X[:, j]||^2``; driver: the plan (the parts'
   global row offsets, ``N``, ``M``, the landmark columns ``J``, the projection);
2. landmarks: the bottom-n key sketch of landmark rows (``key = hash(seed, global row id)``: an
   exact uniform sample that depends only on the rows in order, not on how they are cut into
   files, chunks or partitions) and, for KSVD, the landmark columns ``P = C_z^T X[:, J]``
   (``M x m``), summed (when the rows are mapped, ``M > N``: the rows' entries of ``X[:, J]`` are
   gathered instead, sparse and merged exactly, and the driver forms ``P = C_x X[:, J]``);
   driver: the landmark SVD (KSVD) or eigendecomposition of ``K_LL`` (KPCA);
3. embeddings + ``(r+1)^2`` ridge statistics and column norms, summed; driver: the classifier;
4. test scores sorted per class, merged; driver: AUROC.

``method="kpca"`` runs the paper's KPCA baseline (the symmetric Nystrom method on the RBF kernel
between samples) through the same passes; its pass 2 carries the landmark rows only.

Results do not depend on the number of workers, and on the partitioning only through the
order of floating-point additions: the landmark rows and columns, counts, the gathered
``X[:, J]`` and the sorted scores are exact; sums agree to ``8 N eps`` relative, embeddings and
scores (behind an SVD) to ``sqrt(eps)`` relative. With a fixed partitioning the reduction tree is
fixed, so results are bit-for-bit reproducible (also when a worker dies and Dask recomputes its
partitions).
"""

from __future__ import annotations

import os
import tempfile
import uuid
from dataclasses import dataclass, field
from typing import Callable, Optional, Sequence

import numpy as np

from . import _ksvd
from ._dask_estimators import KPCA, KSVD, merge_tree

__all__ = ["KSVD", "KPCA", "DaskFit", "fit", "fit_local", "embeddings", "split_file"]


@dataclass
class DaskFit:
    """What :func:`fit` returns.

    ``model``: the trained model (``_ksvd.TrainedKsvd`` or ``_ksvd.TrainedKpca``: the landmark
    solve, the column normalisation and the classifier; ``model.row_landmarks`` are the global ids
    of the landmark rows; ``ksvd.StreamingModel(model)`` is it as a fitted estimator, what
    :func:`ksvd.load` gives for its saved file); ``auroc``: the classifier's AUROC on the test files;
    ``embeddings``: normalised embeddings of the test rows as a lazy ``dask.array``
    (``rows x r``, files in order); ``plan``: the plan after the scan (``shape``, landmark
    columns); ``state_bytes``: size in bytes of each pass's merged state (what one message
    carries); ``scan``: the merged scan (``rows``, ``features`` of the training files);
    ``scores``: the merged test scores (``rows``); ``landmarks``: the merged pass-2 state
    (``row_landmarks``, ``has_columns``).
    """

    model: object
    auroc: float
    embeddings: object
    plan: object
    state_bytes: dict = field(default_factory=dict)
    scan: object = None
    scores: object = None
    landmarks: object = None


def _paths(files):
    """A list of paths, or a ``dask.bag`` of paths (then also its partition count)."""
    if hasattr(files, "to_delayed") and hasattr(files, "npartitions"):
        return [os.fspath(p) for p in files.compute(scheduler="synchronous")], files.npartitions
    return [os.fspath(p) for p in files], None


def _groups(n_files: int, npartitions: Optional[int]) -> list:
    k = n_files if npartitions is None else max(1, min(int(npartitions), n_files))
    return [list(map(int, g)) for g in np.array_split(np.arange(n_files), k) if len(g)]


def _merge_all(states):
    acc = states[0]
    for s in states[1:]:
        acc = acc.merge(s)
    return acc


def _merge2(a, b):
    return a.merge(b)


def _scan_part(params, files, n_features, zero_based, hook):
    if hook is not None:
        hook()
    return _merge_all([_ksvd.ScanPartial.scan_file(params, f, p, n_features, zero_based) for f, p in files])


def _landmarks_part(plan, files, zero_based, hook):
    if hook is not None:
        hook()
    return _merge_all([plan.landmarks_file(f, p, zero_based) for f, p in files])


def _train_part(fitted, files, zero_based, positive_label, hook):
    if hook is not None:
        hook()
    return _merge_all([fitted.train_file(f, p, zero_based, positive_label) for f, p in files])


def _score_part(trained, files, zero_based, hook):
    if hook is not None:
        hook()
    return _merge_all([trained.score_file(f, p, zero_based, False)[0] for f, p in files])


def _block(part, x, y):
    return part, np.ascontiguousarray(x, dtype=np.float64), np.ascontiguousarray(y, dtype=np.float64)


def _scan_block(params, part, x, y, hook):
    if hook is not None:
        hook()
    return _ksvd.ScanPartial.scan_block(params, _block(part, x, y))


def _landmarks_block(plan, part, x, y, hook):
    if hook is not None:
        hook()
    return plan.landmarks_block(_block(part, x, y))


def _train_block(fitted, part, x, y, positive_label, hook):
    if hook is not None:
        hook()
    return fitted.train_block(_block(part, x, y), positive_label)


def _score_block(trained, part, x, y, hook):
    if hook is not None:
        hook()
    return trained.score_block(_block(part, x, y), False)[0]


def _embed_block(trained, part, x, y):
    return trained.score_block(_block(part, x, y), True)[1]


def _is_arrays(data) -> bool:
    return isinstance(data, tuple) and len(data) == 2 and all(hasattr(a, "to_delayed") and hasattr(a, "chunks") for a in data)


def _blocks(data, what):
    """The row blocks of a ``(X, y)`` pair of dask arrays as pass units ``(part, x, y)`` (part ``k``
    is the ``k``-th row chunk): ``X`` is rechunked to whole rows (one chunk along the features),
    ``y`` to ``X``'s row chunks."""
    x, y = data
    if x.ndim != 2 or y.ndim != 1 or x.shape[0] != y.shape[0]:
        raise ValueError(f"{what}: need a 2-D feature array and a 1-D label array of as many rows; got shapes {x.shape} and {y.shape}")
    if any(np.isnan(c) for c in x.chunks[0]):
        raise ValueError(f"{what}: the row chunk sizes of X are unknown; call X.compute_chunk_sizes() first")
    x = x.rechunk({1: -1})
    y = y.rechunk((x.chunks[0],))
    xs, ys = x.to_delayed().ravel(), y.to_delayed().ravel()
    return [(k, xs[k], ys[k]) for k in range(len(xs))], x.chunks[0]


def _tree(parts, name):
    """The states merged along the fixed binary tree of every distributed pass."""
    return merge_tree(parts, name, _merge2)


def _pass(fn, units, args, name, order, client):
    """One pass: ``fn(state, *units[k], *rest)`` per partition ``k``, then the merge tree. The first argument
    (the driver's broadcast state) is scattered to every worker once (with a client), or one key
    of the graph, so that the scheduler places partitions by load, not by where the state is."""
    from dask import delayed

    if client is not None:
        bcast = client.scatter(args[0], broadcast=True, hash=False)
    else:
        bcast = delayed(args[0], name=f"{name}-input")
    parts = [delayed(fn)(bcast, *units[k], *args[1:], dask_key_name=f"{name}-part-{k}") for k in order]
    return _tree(parts, name)


def _write_atomic(path: str, data: bytes) -> None:
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".tmp-", suffix=os.path.basename(path))
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _embed_file(trained, path, zero_based):
    return trained.embed_file(path, zero_based)


def split_file(path: str, parts: int, out_dir: str, *, prefix: str = "part") -> list:
    """Splits the lines of a LIBSVM file into ``parts`` consecutive files of (nearly) equal row
    counts in ``out_dir`` (``<prefix>-<k>.svm``, each written atomically); the concatenation of
    the parts in order is the input. Returns their paths."""
    with open(path, "rb") as f:
        total = sum(1 for _ in f)
    sizes = [len(g) for g in np.array_split(np.arange(total), parts)]
    out = []
    with open(path, "rb") as f:
        for k, n in enumerate(sizes):
            dest = os.path.join(out_dir, f"{prefix}-{k}.svm")
            _write_atomic(dest, b"".join(f.readline() for _ in range(n)))
            out.append(dest)
    return out


def embeddings(trained, paths: Sequence[str], *, zero_based: bool = False):
    """Normalised embeddings of the rows of ``paths`` as a lazy ``dask.array`` (one block per
    file, ``rows x r``; row counts are unknown until computed)."""
    import dask.array as da
    from dask import delayed

    r = trained.rank
    name = f"ksvd-embed-{uuid.uuid4().hex[:8]}"
    bcast = delayed(trained, name=f"{name}-input")
    blocks = [
        da.from_delayed(
            delayed(_embed_file)(bcast, str(p), zero_based, dask_key_name=f"{name}-part-{k}"),
            shape=(np.nan, r),
            dtype=np.float64,
        )
        for k, p in enumerate(paths)
    ]
    return da.concatenate(blocks, axis=0)


def _array_embeddings(trained, units, chunks):
    """Normalised embeddings of the test row blocks as a lazy ``dask.array`` with their row chunks."""
    import dask.array as da
    from dask import delayed

    r = trained.rank
    name = f"ksvd-embed-{uuid.uuid4().hex[:8]}"
    bcast = delayed(trained, name=f"{name}-input")
    blocks = [
        da.from_delayed(delayed(_embed_block)(bcast, *u, dask_key_name=f"{name}-part-{k}"), shape=(int(c), r), dtype=np.float64)
        for k, (u, c) in enumerate(zip(units, chunks))
    ]
    return da.concatenate(blocks, axis=0)


def fit(
    train: Sequence[str],
    test: Sequence[str],
    *,
    method: str = "ksvd",
    n_components: int = 10,
    n_landmarks: int = 1000,
    n_col_landmarks: Optional[int] = None,
    bandwidth: Optional[float] = None,
    bandwidth_factor: float = 1.0,
    ridge: float = 1e-3,
    positive_label: Optional[float] = None,
    n_features: Optional[int] = None,
    zero_based: bool = False,
    chunk_rows: int = 10_000,
    seed: int = 0,
    npartitions: Optional[int] = None,
    order_seed: Optional[int] = None,
    client=None,
    scheduler=None,
    out_dir: Optional[str] = None,
    partition_hook: Optional[Callable[[], None]] = None,
    **deprecated,
) -> DaskFit:
    """Fits KSVD (asymmetric Nystrom, ``n_components`` r, ``n_landmarks`` n rows and
    ``n_col_landmarks`` m columns, default n; either side of the data mapped by the a2
    compatibility) or, with ``method="kpca"``, KPCA (symmetric Nystrom on the ``n_landmarks``
    rows; ``n_col_landmarks`` is unused) on the ``train`` LIBSVM files, trains the ridge classifier (``ridge`` λ on
    standardised features, ``±1`` targets; ``positive_label`` or the larger of two labels) and
    scores the ``test`` files, all as Dask tasks.

    ``train`` and ``test`` may also be ``(X, y)`` pairs of dask arrays (``X`` dense, ``N x M``,
    chunked by rows; ``y`` the labels): every row chunk is a partition and its rows have their
    global row ids, so the landmark rows and the results do not depend on the chunking (beyond
    rounding) and equal those of the same rows as one LIBSVM file; ``embeddings`` then has
    ``X``'s row chunks. Likewise for files: the landmark rows depend only on the training rows in
    order, so ``ksvd-stream run`` on one file and this function on that file cut into parts give
    the same landmarks and (to rounding) the same results.

    ``bandwidth``: a fixed γ of ``exp(-||a - b||^2 / γ^2)``, or ``None`` for the median heuristic on
    the landmark pairs times ``bandwidth_factor``. ``train`` and ``test`` are lists of paths or
    bags (``dask.bag``) of paths. ``npartitions``: groups of consecutive files per task (default: the
    bag's partition count, else one file per task). ``order_seed``: shuffles the order in which the
    partitions are merged (the result changes only by rounding). ``client``: a
    ``dask.distributed.Client`` (default: the current one, else ``scheduler``). ``out_dir``: when
    given, the trained model's bytes are written there atomically as ``model.<method>-trained``
    after every pass has succeeded (nothing is written on failure). ``partition_hook``: a
    picklable callable run at the start of every partition task (for tests).

    The parameter names are those of every front door (``docs/conventions.md``); the earlier
    names ``rank``, ``landmarks`` and ``col_landmarks`` are deprecated aliases of
    ``n_components``, ``n_landmarks`` and ``n_col_landmarks``.
    """
    import dask

    n_components, n_landmarks, n_col_landmarks = _renamed(
        deprecated, n_components=n_components, n_landmarks=n_landmarks, n_col_landmarks=n_col_landmarks
    )
    if method not in _ksvd.METHODS:
        raise ValueError(f"unknown streaming method {method!r} (expected one of {', '.join(_ksvd.METHODS)})")
    arrays = _is_arrays(train)
    if arrays != _is_arrays(test):
        raise ValueError("train and test must both be file lists / bags, or both (X, y) pairs of dask arrays")
    if arrays:
        if n_features is not None and n_features != train[0].shape[1]:
            raise ValueError(f"n_features = {n_features} but X has {train[0].shape[1]} columns")
        (units, _), (tunits, tchunks) = _blocks(train, "train"), _blocks(test, "test")
        if train[0].shape[1] != test[0].shape[1]:
            raise ValueError(f"train X has {train[0].shape[1]} columns, test X {test[0].shape[1]}")
        if not units or not tunits:
            raise ValueError("need at least one training row chunk and one test row chunk")
        fns = (_scan_block, _landmarks_block, _train_block, _score_block)
        scan_rest = (partition_hook,)
        zb = ()
    else:
        (train, bag_parts), (test, _) = _paths(train), _paths(test)
        if npartitions is None:
            npartitions = bag_parts
        if not train or not test:
            raise ValueError("need at least one training file and one test file")
        groups, tgroups = _groups(len(train), npartitions), _groups(len(test), npartitions)
        units = [([(f, train[f]) for f in g],) for g in groups]
        tunits = [([(f, test[f]) for f in g],) for g in tgroups]
        fns = (_scan_part, _landmarks_part, _train_part, _score_part)
        scan_rest = (n_features, zero_based, partition_hook)
        zb = (zero_based,)

    def compute(x):
        if client is not None:
            return client.compute(x).result()
        return dask.compute(x, scheduler=scheduler)[0]

    params = _ksvd.StreamParams(
        n_components,
        n_landmarks,
        n_landmarks if n_col_landmarks is None else n_col_landmarks,
        bandwidth,
        bandwidth_factor,
        chunk_rows,
        seed,
    )
    def order(k):
        idx = list(range(k))
        if order_seed is not None:
            np.random.default_rng(order_seed).shuffle(idx)
        return idx

    o, to = order(len(units)), order(len(tunits))
    sizes = {}
    tag = uuid.uuid4().hex[:8]  # unique task keys per call
    scan_fn, landmarks_fn, train_fn, score_fn = fns
    scan = compute(_pass(scan_fn, units, (params, *scan_rest), f"ksvd-scan-{tag}", o, client))
    plan = _ksvd.LandmarkPlan(scan, params, method)
    lm = compute(_pass(landmarks_fn, units, (plan, *zb, partition_hook), f"ksvd-landmarks-{tag}", o, client))
    fitted = plan.solve_kpca(lm) if method == "kpca" else plan.solve(lm)
    states = [("scan", scan), ("plan", plan), ("landmarks", lm)]
    tr = compute(_pass(train_fn, units, (fitted, *zb, positive_label, partition_hook), f"ksvd-train-{tag}", o, client))
    trained = fitted.finish(tr, ridge, positive_label)
    scores = compute(_pass(score_fn, tunits, (trained, *zb, partition_hook), f"ksvd-score-{tag}", to, client))
    auc = scores.auroc()
    for name, state in states + [("fitted", fitted), ("train", tr), ("trained", trained), ("score", scores)]:
        sizes[name] = len(state.to_bytes())
    if out_dir is not None:
        trained.save(os.path.join(out_dir, f"model.{method}-trained"))
    emb = _array_embeddings(trained, tunits, tchunks) if arrays else embeddings(trained, test, zero_based=zero_based)
    return DaskFit(trained, auc, emb, plan, sizes, scan, scores, lm)


# The earlier keyword names of :func:`fit` and the conventions' names they stand for.
_RENAMED = {"rank": "n_components", "landmarks": "n_landmarks", "col_landmarks": "n_col_landmarks"}


def _renamed(deprecated, **current):
    """``current``'s values, with each deprecated alias in ``deprecated`` (a ``DeprecationWarning``)
    replacing the default of its new name; an unknown keyword is a ``TypeError`` as usual."""
    import warnings

    for old, value in deprecated.items():
        if old not in _RENAMED:
            raise TypeError(f"fit() got an unexpected keyword argument {old!r}")
        new = _RENAMED[old]
        warnings.warn(f"ksvd.dask.fit: {old}= is deprecated; use {new}=", DeprecationWarning, stacklevel=3)
        current[new] = value
    return tuple(current.values())


def fit_local(train: Sequence[str], test: Sequence[str], **kwargs) -> DaskFit:
    """The single-process reference of :func:`fit`: the same passes with every file in one
    partition, on Dask's synchronous scheduler (no workers, no serialisation)."""
    kwargs = {**kwargs, "npartitions": 1, "client": None, "scheduler": "synchronous", "order_seed": None}
    return fit(train, test, **kwargs)
