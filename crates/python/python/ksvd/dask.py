"""KSVD and KPCA on Dask (``pip install "ksvd[dask]"``).

:class:`KSVD` and :class:`KPCA` are ``ksvd.KSVD`` / ``ksvd.KPCA`` on data partitioned by rows (dask
arrays, dataframes, file lists): every solver, the single-machine answers (see
``ksvd/_dask_estimators.py``).

:func:`fit` is the paper's large-scale pipeline (Tao, Tonin et al., ICML 2024, appendix table
``tab:large:scale``: RBF kernel, the Nystrom method with ``m = 1000`` subsamples, compatibility
a2, a linear classifier on the embeddings, AUROC) as a user of those estimators plus a ridge step.
On LIBSVM files (plain or ``.bz2``; a list or a ``dask.bag`` of paths, one partition per file) or
on ``(X, y)`` pairs of dask arrays (one partition per row chunk), with ``X`` the ``N x M`` data
matrix whose rows are the row samples and whose columns are the column samples:

1. **Landmarks**: ``n`` rows by the key sketch (the rows with the ``n`` smallest
   ``hash(seed, global row id)``) and ``m`` uniform columns ``J`` from the seed, the choices of
   ``ksvd-stream`` for the same rows: functions of the seed and the shape only, so the same for
   any partitioning (``_ksvd.stream_landmarks``).
2. **Compatibility a2** (Algorithm 1 with a very sparse random projection ``R`` whose row ``k``
   is generated from ``(seed, k)``, ``_ksvd.SparseProjection``): with more rows than features
   (``N > M``) the columns are mapped, and the column samples are the mapped landmark columns
   ``z'_j = R^T X[:, j]`` (``P = R^T X[:, J]``, ``M x m``: each partition's share summed along the
   fixed binary tree of every distributed pass); with more features (``M > N``) every row is
   mapped, ``x' = R^T x`` (``N`` numbers per row, by each partition), and the column samples are
   the columns ``X[:, J]`` (gathered); ``N = M`` maps nothing.
3. **Bandwidth**: a fixed ``gamma``, or the median heuristic over the landmark pairs times
   ``bandwidth_factor`` (KSVD: landmark rows against the column samples; KPCA: distinct pairs of
   landmark rows), as ``ksvd-stream`` computes it.
4. **The estimator**: :class:`KSVD` (``solver="nystrom"``, the landmark rows, every column sample
   a landmark column) fitted on the rows with the column samples as ``Z``. The KPCA baseline is
   the symmetric Nystrom method on the landmark rows (uncentred): ``K[I, I]`` is symmetric
   positive semi-definite, so its SVD is its eigendecomposition and :class:`KSVD` with
   ``Z = X[I]`` is exactly that method, projecting through the ``n`` landmarks.
5. **The classifier**: ridge regression on ``+-1`` targets with standardised features and an
   unpenalised intercept (``ksvd-streaming``'s ``RidgeAccumulator``) on the transform of the
   training rows (``U S^1/2``, from the fit); the scores of ``transform`` of the test rows (a lazy
   dask array, one block per test partition) give the AUROC (``ksvd-metrics``' AUROC).

:func:`fit_local` runs the same steps with ``ksvd.KSVD`` / ``ksvd.KPCA`` on the gathered data in
one process. Results do not depend on the number of workers, and on the partitioning only through
the order of floating-point additions (the landmarks, the labels and the gathered columns are
exact; ``P`` is a sum). The landmarks, projection and bandwidth are ``ksvd-stream``'s, and the
embeddings differ from ``ksvd-stream``'s by a scale per column only (``transform`` against the
stream's unit-norm columns), which the standardised classifier does not see: both give the same
AUROC up to rounding. The fitted estimator is an ordinary ``ksvd.dask`` model
(``to_local``, ``save``; with rows mapped it projects mapped rows: map new rows with
``DaskFit.projection.map_rows`` first). The driver holds what the estimator's fit holds
(``O((N + m) r)`` numbers, the column samples, ``N`` labels) and, like every ``ksvd`` model, the
fitted model keeps the training rows: ``transform`` of the test rows gathers them to the driver
once (``to_local``). ``ksvd-stream`` (Rust) runs the same method in one process in ``O(M m)``
memory for data beyond that.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from typing import Optional, Sequence

import numpy as np
import scipy.sparse as sp

from . import _estimators, _ksvd
from ._convert import to_native
from ._dask_estimators import KPCA, KSVD, _checked, _stack, _take, merge_tree, read_part

__all__ = ["KSVD", "KPCA", "DaskFit", "fit", "fit_local", "split_file"]

METHODS = tuple(_ksvd.METHODS)  # ksvd-streaming's vocabulary: "ksvd", "kpca"


@dataclass
class DaskFit:
    """What :func:`fit` returns.

    ``estimator``: the fitted :class:`KSVD` (:func:`fit_local`: ``ksvd.KSVD``; for KPCA the
    symmetric Nystrom fit with ``Z = X[I]``); ``weights``, ``bias``: the classifier ``score = transform(x) @ weights +
    bias``; ``auroc``: its AUROC on the test rows; ``embeddings``: ``transform`` of the test rows
    (a lazy dask array with one block per test partition; :func:`fit_local`: a NumPy array);
    ``shape``: ``(N, M)`` of the training data; ``compat``: ``"columns"`` (``N > M``),
    ``"rows"`` (``M > N``) or ``"square"`` for KSVD, None for KPCA; ``projection``: the a2 map
    (``_ksvd.SparseProjection``) or None; ``landmark_rows``: the ``n`` landmark rows (global
    training row ids); ``landmark_cols``: KSVD's ``m`` landmark columns of the data (None for
    KPCA); ``bandwidth``: the ``gamma`` used; ``positive_label``: the label scored as positive;
    ``n_test``: the test rows.
    """

    estimator: object
    weights: np.ndarray
    bias: float
    auroc: float
    embeddings: object
    shape: tuple
    compat: Optional[str]
    projection: object
    landmark_rows: np.ndarray
    landmark_cols: Optional[np.ndarray]
    bandwidth: float
    positive_label: float
    n_test: int
    # The persisted partitions (futures on a cluster): kept while this result lives, so that
    # ``embeddings`` can still be computed from the test rows.
    _partitions: tuple = field(default=(), repr=False, compare=False)

    @property
    def rank(self) -> int:
        """The embedding dimension ``r`` of the fitted model."""
        return int(self.estimator.singular_values_.shape[0])


# ---------------------------------------------------------------------------------------------
# The rows of one side (training or test): partitions with their row counts and labels


class _Rows:
    """One side's rows: delayed blocks (checked, ``M`` columns, one per non-empty file or row
    chunk), their row counts, their sources (for messages) and the labels (on the driver)."""

    def __init__(self, blocks, rows, sources, labels, n_features):
        self.blocks, self.rows, self.sources, self.labels, self.n_features = blocks, rows, sources, labels, n_features
        self.offsets = np.concatenate([[0], np.cumsum(rows)]).astype(np.int64)

    @property
    def n(self) -> int:
        return int(self.offsets[-1])

    def mapped(self, fn, width):
        """The rows with ``fn`` applied to every block (dense, ``width`` columns)."""
        from dask import delayed

        return _Rows([delayed(fn)(b) for b in self.blocks], self.rows, self.sources, self.labels, width)

    def array(self, dense):
        """The rows as one dask array (row chunks = partitions)."""
        import dask.array as da

        meta = np.empty((0, self.n_features)) if dense else sp.csr_matrix((0, self.n_features))
        return da.concatenate(
            [da.from_delayed(b, shape=(r, self.n_features), dtype=np.float64, meta=meta) for b, r in zip(self.blocks, self.rows)],
            axis=0,
        )

    def take(self, rows, compute):
        """The rows with global ids ``rows`` (increasing), gathered to the driver."""
        from dask import delayed

        owner = np.searchsorted(self.offsets, rows, side="right") - 1
        picked = [delayed(_take)(self.blocks[k], rows[owner == k] - self.offsets[k]) for k in np.unique(owner)]
        return _stack(compute(picked))


def _take_cols(block, cols):
    return block[:, cols]


def _dense(a):
    return np.ascontiguousarray(a.toarray() if sp.issparse(a) else a, dtype=np.float64)


def _shape_and_labels(xy, k, path):
    if xy[1] is None:
        raise ValueError(f"partition {k} ({path}): a .npy file has no labels; the pipeline reads LIBSVM files")
    return xy[0].shape, xy[1]


def _widened(xy, k, path, m):
    """A file's rows with ``m`` columns (LIBSVM files are as wide as their largest index), checked."""
    x = xy[0]
    if x.shape[1] > m:
        raise ValueError(f"partition {k} ({path}): {x.shape[1]} features where the data has {m}")
    x = sp.csr_matrix((x.data, x.indices, x.indptr), shape=(x.shape[0], m))
    return _checked(x, k, path, m)


def _files_rows(paths, what, n_features, zero_based, compute, persist):
    """The rows of a list of LIBSVM files (one partition each)."""
    from dask import delayed

    if not paths:
        raise ValueError(f"need at least one {what} file")
    xy = persist([delayed(read_part)(p, k, n_features, zero_based) for k, p in enumerate(paths)])
    meta = compute([delayed(_shape_and_labels)(t, k, p) for k, (t, p) in enumerate(zip(xy, paths))])
    m = n_features if n_features is not None else max(int(s[1]) for s, _ in meta)
    keep = [k for k, (s, _) in enumerate(meta) if s[0] > 0]
    blocks = persist([delayed(_widened)(xy[k], k, paths[k], m) for k in keep])
    labels = np.concatenate([meta[k][1] for k in keep]) if keep else np.empty(0)
    return _Rows(blocks, [int(meta[k][0][0]) for k in keep], [paths[k] for k in keep], labels, m)


def _array_rows(data, what, compute, persist):
    """The rows of an ``(X, y)`` pair of dask arrays (one partition per row chunk of ``X``)."""
    from dask import delayed

    x, y = data
    if x.ndim != 2 or y.ndim != 1 or x.shape[0] != y.shape[0]:
        raise ValueError(f"{what}: need a 2-D feature array and a 1-D label array of as many rows; got shapes {x.shape} and {y.shape}")
    if any(np.isnan(c) for c in x.chunks[0]):
        x = x.compute_chunk_sizes()
    x = x.rechunk({1: -1})
    m = int(x.shape[1])
    blocks, rows, sources, offset = [], [], [], 0
    for k, (b, r) in enumerate(zip(x.to_delayed().ravel(), x.chunks[0])):
        source = f"{what} rows {offset}..{offset + int(r)}"
        offset += int(r)
        if r:
            blocks.append(delayed(_checked)(b, k, source, m))
            rows.append(int(r))
            sources.append(source)
    labels = np.asarray(compute([y])[0], dtype=np.float64)
    return _Rows(persist(blocks), rows, sources, labels, m)


def _is_arrays(data) -> bool:
    return isinstance(data, tuple) and len(data) == 2 and all(hasattr(a, "to_delayed") and hasattr(a, "chunks") for a in data)


def _paths(files):
    """A list of paths from a list or a ``dask.bag`` of paths."""
    if hasattr(files, "to_delayed") and hasattr(files, "npartitions"):
        files = files.compute(scheduler="synchronous")
    return [os.fspath(p) for p in files]


# ---------------------------------------------------------------------------------------------
# The pipeline


def _map_columns(projection, offset, block, cols):
    return projection.map_columns(int(offset), to_native(block), cols)


def _map_rows(projection):
    def fn(block):
        return projection.map_rows(to_native(block))

    return fn


def _targets(labels, positive_label):
    """The positive label (given, else the larger of exactly two) and the ``+-1`` targets."""
    if positive_label is None:
        classes = np.unique(labels)
        if len(classes) != 2:
            raise ValueError(
                f"the training labels are not binary ({len(classes)} classes: {classes[:10].tolist()}); set positive_label"
            )
        positive_label = float(classes[1])
    return float(positive_label), np.where(labels == positive_label, 1.0, -1.0)


def _run(train, test, *, local, method, n_components, n_landmarks, n_col_landmarks, bandwidth, bandwidth_factor,
         ridge, positive_label, n_features, zero_based, seed, out_dir):
    import dask

    if method not in METHODS:
        raise ValueError(f"unknown method {method!r} (expected one of {', '.join(METHODS)})")
    scheduler = "synchronous" if local else None

    def compute(xs):
        return list(dask.compute(*xs, scheduler=scheduler))

    def persist(xs):
        if local:  # evaluated once, kept as values
            from dask import delayed

            return [delayed(v, traverse=False) for v in compute(xs)]
        return list(dask.persist(*xs))

    arrays = _is_arrays(train)
    if arrays != _is_arrays(test):
        raise ValueError("train and test must both be file lists / bags, or both (X, y) pairs of dask arrays")
    if arrays:
        if n_features is not None and n_features != train[0].shape[1]:
            raise ValueError(f"n_features = {n_features} but X has {train[0].shape[1]} columns")
        tr = _array_rows(train, "train", compute, persist)
        if test[0].shape[1] != tr.n_features:
            raise ValueError(f"train X has {tr.n_features} columns, test X {test[0].shape[1]}")
        te = _array_rows(test, "test", compute, persist)
    else:
        tr = _files_rows(_paths(train), "training", n_features, zero_based, compute, persist)
        te = _files_rows(_paths(test), "test", tr.n_features, zero_based, compute, persist)
    if tr.n == 0 or te.n == 0:
        raise ValueError("need at least one training row and one test row")
    nn, mm = tr.n, tr.n_features
    positive_label, targets = _targets(tr.labels, positive_label)

    m = n_landmarks if n_col_landmarks is None else n_col_landmarks
    rows, cols = _ksvd.stream_landmarks(int(seed), (nn, mm), int(n_landmarks), int(m))
    rows, cols = rows.astype(np.int64), cols.astype(np.int64)
    compat = projection = z = None
    from dask import delayed

    if method == "ksvd":
        compat = "columns" if nn > mm else "rows" if mm > nn else "square"
        if compat == "columns":
            projection = _ksvd.SparseProjection(nn, mm, int(seed))
            shares = [delayed(_map_columns)(projection, off, b, cols) for off, b in zip(tr.offsets, tr.blocks)]
            z = np.ascontiguousarray(compute([merge_tree(shares, f"ksvd-a2-{seed}")])[0].T)
        else:
            z = _dense(_stack(compute([delayed(_take_cols)(b, cols) for b in tr.blocks])).T)
            if compat == "rows":
                projection = _ksvd.SparseProjection(mm, nn, int(seed))
                fn = _map_rows(projection)
                tr, te = tr.mapped(fn, nn), te.mapped(fn, nn)
                tr.blocks, te.blocks = persist(tr.blocks), persist(te.blocks)
    x_landmarks = tr.take(rows, compute)
    if method == "kpca":
        # Symmetric Nystrom on the landmark rows: the block K[I, I] is symmetric positive
        # semi-definite, so its SVD is its eigendecomposition, and KSVD with Z = X[I] (every
        # column a landmark) is Nystrom KPCA (uncentred) that projects through the n landmarks.
        z, cols = x_landmarks, None
    if bandwidth is None:
        native = to_native(x_landmarks)
        if method == "ksvd":
            bandwidth = _ksvd.landmark_bandwidth(native, to_native(z), float(bandwidth_factor))
        else:
            bandwidth = _ksvd.landmark_bandwidth(native, native, float(bandwidth_factor), distinct=True)
    r = int(min(n_components, len(rows), z.shape[0]))
    est = (_estimators.KSVD if local else KSVD)(
        n_components=r, kernel="rbf", bandwidth=float(bandwidth), solver="nystrom", center=False,
        landmark_rows=rows, landmark_cols=np.arange(z.shape[0]), random_state=int(seed),
    )
    dense = compat == "rows"
    x_train = _stack(compute(tr.blocks)) if local else tr.array(dense)
    x_test = _stack(compute(te.blocks)) if local else te.array(dense)
    est.fit(x_train, Z=z)
    features = est._training_transform()  # transform of the training rows, U S^1/2, from the fit
    weights, bias = _ksvd.ridge_classifier(np.ascontiguousarray(features, dtype=np.float64), targets, float(ridge))
    embeddings = est.transform(x_test)
    scores = embeddings @ weights + bias
    if not local:
        scores = compute([scores])[0]
    auroc = _ksvd.auroc(np.ascontiguousarray(scores, dtype=np.float64), te.labels == positive_label)
    if out_dir is not None:
        est.save(os.path.join(out_dir, f"model.{method}"))
    return DaskFit(
        estimator=est,
        weights=weights,
        bias=float(bias),
        auroc=float(auroc),
        embeddings=embeddings,
        shape=(nn, mm),
        compat=compat,
        projection=projection,
        landmark_rows=rows,
        landmark_cols=cols,
        bandwidth=float(bandwidth),
        positive_label=positive_label,
        n_test=te.n,
        _partitions=(tr.blocks, te.blocks),
    )


def fit(
    train,
    test,
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
    seed: int = 0,
    out_dir: Optional[str] = None,
    **deprecated,
) -> DaskFit:
    """The paper's large-scale pipeline on a Dask cluster (the current client, else Dask's
    default scheduler): KSVD (``method="ksvd"``: asymmetric Nystrom with ``n_landmarks`` rows and
    ``n_col_landmarks`` columns, default as many, compatibility a2) or the KPCA baseline
    (``method="kpca"``: symmetric Nystrom on ``n_landmarks`` rows) with the RBF kernel, rank
    ``n_components`` (at most the landmarks), then the ridge classifier (``ridge`` on
    standardised features, ``+-1`` targets; ``positive_label`` or the larger of two labels)
    trained on the ``train`` rows and scored on the ``test`` rows. See the module's text for the
    steps.

    ``train``, ``test``: lists (or ``dask.bag``) of LIBSVM files (plain or ``.bz2``;
    ``zero_based`` indices or 1-based as LIBSVM writes them; ``n_features`` fixes the width, else
    the widest training file's), or ``(X, y)`` pairs of dask arrays (``X`` chunked by rows, dense
    or ``scipy.sparse`` chunks). ``bandwidth``: a fixed ``gamma`` of
    ``exp(-||a - b||^2 / gamma^2)``, or None for the median heuristic on the landmark pairs times
    ``bandwidth_factor``. ``seed``: the landmarks and the projection.
    ``out_dir``: the fitted estimator's model is saved there as ``model.<method>`` (atomically,
    after every step has succeeded).

    A bad partition (unreadable file, NaN, wrong width) raises ``ValueError`` naming it; nothing
    is written. The earlier keyword names ``rank``, ``landmarks`` and ``col_landmarks`` are
    deprecated aliases of ``n_components``, ``n_landmarks`` and ``n_col_landmarks``.
    """
    n_components, n_landmarks, n_col_landmarks = _renamed(
        deprecated, n_components=n_components, n_landmarks=n_landmarks, n_col_landmarks=n_col_landmarks
    )
    return _run(train, test, local=False, method=method, n_components=n_components, n_landmarks=n_landmarks,
                n_col_landmarks=n_col_landmarks, bandwidth=bandwidth, bandwidth_factor=bandwidth_factor, ridge=ridge,
                positive_label=positive_label, n_features=n_features, zero_based=zero_based, seed=seed, out_dir=out_dir)


def fit_local(train, test, **kwargs) -> DaskFit:
    """The single-process reference of :func:`fit`: the same steps with ``ksvd.KSVD`` on the
    gathered data (Dask's synchronous scheduler reads the inputs)."""
    params = dict(method="ksvd", n_components=10, n_landmarks=1000, n_col_landmarks=None, bandwidth=None,
                  bandwidth_factor=1.0, ridge=1e-3, positive_label=None, n_features=None, zero_based=False, seed=0,
                  out_dir=None)
    unknown = set(kwargs) - set(params) - set(_RENAMED)
    if unknown:
        raise TypeError(f"fit_local() got unexpected keyword arguments {sorted(unknown)}")
    deprecated = {k: kwargs.pop(k) for k in list(kwargs) if k in _RENAMED}
    params.update(kwargs)
    params["n_components"], params["n_landmarks"], params["n_col_landmarks"] = _renamed(
        deprecated, n_components=params["n_components"], n_landmarks=params["n_landmarks"],
        n_col_landmarks=params["n_col_landmarks"]
    )
    return _run(train, test, local=True, **params)


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
