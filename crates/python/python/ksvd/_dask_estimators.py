"""``ksvd.dask.KSVD`` and ``ksvd.dask.KPCA``: the estimators of :mod:`ksvd` on data partitioned
by rows on a Dask cluster (``pip install "ksvd[dask]"``).

The fit is the single-machine fit with its products taken over the partitions. The solver (every
one of ``ksvd.KSVD``'s: ``auto``, ``exact``, ``lanczos``, ``rsvd``, ``block-krylov``,
``nystrom``) runs on the driver, in Rust, exactly as ``ksvd.KSVD`` runs it (same starting vectors
for the same ``random_state``, same restarts, same certified residuals, same Nystrom arithmetic and
landmarks); only its operator is distributed (``_ksvd.fit_operator``). Every product ``G V``,
``G^T U`` or landmark block is one pass over the row partitions:

* each partition ``p`` holds its rows ``X_p`` (persisted on the workers once) and evaluates its
  rows of the kernel matrix ``G_p = k(X_p, Z)`` against all column samples ``Z`` (broadcast
  once per fit) in Rust (``_ksvd.PartitionRows``: stored within the partition's share of
  ``memory_budget`` and kept on its worker between passes, evaluated block by block beyond);
* ``G V`` is the concatenation of the partitions' ``G_p V``; ``G^T U``, the column statistics
  and the squared column norms are sums of per-partition terms, merged pairwise along a fixed
  binary tree (the same tree for the same partitioning, so results are bit-for-bit reproducible,
  also when a worker dies and Dask recomputes its partitions);
* the bandwidth rule (``gamma = k sqrt(M gamma_x)``) and the centring means are sums over the
  partitions, merged the same way.

The results equal the single-machine fit up to the order of floating-point additions: singular
values to about ``1e-12 s_1``, subspaces to the solver's tolerance. Float32 data are computed in
float32 as ``ksvd.KSVD`` computes them (each partition stores and multiplies its rows of ``G`` in
float32, half the memory per worker; a centred fit's column and grand means come from a float64
pass; the default tolerance is float32's, 1e-5), and the model records float32 for its
projections. The driver holds what the
solver holds (``O((N + M) k)`` numbers for a Krylov basis of ``k`` vectors, ``O((N + M) r)`` for
Nystrom) and ``Z``; the data ``X`` stays on the workers. ``Z`` must fit in memory (by default
``Z = X``: then ``X`` is gathered once to broadcast it).
"""

from __future__ import annotations

import os
import uuid

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import check_array, check_is_fitted

from . import _estimators, _ksvd
from ._convert import check_n_jobs, native_params, read_libsvm, to_native


# Per-process cache of the partitions' native kernel rows, keyed by (fit token, partition): a
# worker evaluates (and, within the budget, stores) its rows of G once per fit, not once per pass.
_CACHE: dict = {}
_SMALL_Z = 64 << 20


def _nbytes(a):
    return a.data.nbytes + a.indices.nbytes + a.indptr.nbytes if sp.issparse(a) else a.nbytes


def _drop_cache(token):
    for key in [k for k in list(_CACHE) if k[0] == token]:
        del _CACHE[key]
    return len(_CACHE)


# ---------------------------------------------------------------------------------------------
# Inputs: partitions by rows


class _Part:
    """One row partition: where it comes from (for error messages), its first global row and its
    row count; the rows themselves are a separate (persisted) dask key."""

    def __init__(self, index, source, offset, rows):
        self.index, self.source, self.offset, self.rows = index, source, offset, rows

    def __repr__(self):
        return f"partition {self.index} ({self.source}, rows {self.offset}..{self.offset + self.rows})"


def _checked(block, k, source, n_features):
    """A partition's rows as float64 (dense C-contiguous, or CSR), checked: 2-D, the expected
    width, finite. Errors name the partition."""
    try:
        if sp.issparse(block):
            block = sp.csr_array(block, dtype=np.float64)
            block.sum_duplicates()
            values = block.data
        else:
            block = np.ascontiguousarray(np.asarray(block), dtype=np.float64)
            values = block
        if block.ndim != 2:
            raise ValueError(f"expected 2-D rows, got a {block.ndim}-D block")
        if n_features is not None and block.shape[1] != n_features:
            raise ValueError(f"{block.shape[1]} features where the data has {n_features}")
        if not np.all(np.isfinite(values)):
            raise ValueError("NaN or infinite values")
    except ValueError as e:
        raise ValueError(f"partition {k} ({source}): {e}") from None
    return block


def read_part(path, k, n_features, zero_based):
    """Partition ``k``'s file as ``(rows, labels)``: ``.npy`` (no labels: None), else LIBSVM
    (``ksvd_datasets``' reader). A file that cannot be read is a ``ValueError`` naming the
    partition (also ``ksvd.dask.fit``'s reader)."""
    try:
        if str(path).endswith(".npy"):
            return np.load(path, mmap_mode="r"), None
        return read_libsvm(path, n_features, zero_based)
    except (OSError, ValueError) as e:
        raise ValueError(f"partition {k} ({path}): cannot read it: {e}") from None


def _load_file(path, k, n_features, zero_based):
    block, _ = read_part(path, k, n_features, zero_based)
    return _checked(block, k, path, n_features)


def _file_shape(path, k, zero_based):
    """Rows and features of one file (a scan task)."""
    block = _load_file(path, k, None, zero_based)
    return block.shape


def _is_file_list(X):
    return isinstance(X, (list, tuple)) and len(X) > 0 and all(isinstance(f, (str, os.PathLike)) for f in X)


def _column_names(X):
    """A dask dataframe's column names as strings (as ``fit`` records them), else None."""
    if hasattr(X, "columns") and hasattr(X, "npartitions"):
        return np.asarray([str(c) for c in X.columns], dtype=object)
    return None


def _partitions(X, what="X", zero_based=False, n_features=None, drop_empty=False):
    """``X`` as ``(parts, delayed blocks, n_features, feature names)``: a dask array (rows
    chunked, dense or scipy.sparse chunks), a dask dataframe, or a list of files (``.npy``, else
    LIBSVM, 1-based as LIBSVM writes them; ``n_features`` fixes their width, else the widest
    file's). ``drop_empty``: leave out partitions without rows (a fit's passes skip them; they keep
    their index and source for messages)."""
    import dask
    import dask.array as da
    from dask import delayed

    names = _column_names(X)
    if hasattr(X, "to_dask_array") and hasattr(X, "npartitions"):
        X = X.to_dask_array(lengths=True)
    if isinstance(X, da.Array):
        if X.ndim != 2:
            raise ValueError(f"{what} must be 2-D; got {X.ndim} dimensions")
        if any(np.isnan(c) for c in X.chunks[0]):
            X = X.compute_chunk_sizes()
        X = X.rechunk({1: -1})
        blocks = X.to_delayed().ravel()
        parts, offset = [], 0
        for k, rows in enumerate(X.chunks[0]):
            parts.append(_Part(k, f"{what} rows {offset}..{offset + int(rows)}", offset, int(rows)))
            offset += int(rows)
        n_features = int(X.shape[1])
        checked = [delayed(_checked)(b, p.index, p.source, n_features) for b, p in zip(blocks, parts)]
        return _kept(parts, checked, drop_empty) + (n_features, names)
    if _is_file_list(X):
        paths = [os.fspath(f) for f in X]
        shapes = dask.compute(*[delayed(_file_shape)(f, k, zero_based) for k, f in enumerate(paths)])
        if n_features is None:
            n_features = max(int(s[1]) for s in shapes)
        parts, offset = [], 0
        for k, (f, (rows, _)) in enumerate(zip(paths, shapes)):
            parts.append(_Part(k, f, offset, int(rows)))
            offset += int(rows)
        blocks = [delayed(_load_file)(f, k, n_features, zero_based) for k, f in enumerate(paths)]
        return _kept(parts, blocks, drop_empty) + (n_features, None)
    raise TypeError(
        f"{what} must be a dask array, a dask dataframe or a list of files (.npy or LIBSVM); got {type(X).__name__}"
    )


def _kept(parts, blocks, drop_empty):
    if not drop_empty:
        return parts, blocks
    keep = [i for i, p in enumerate(parts) if p.rows > 0]
    return [parts[i] for i in keep], [blocks[i] for i in keep]


def _stack(blocks):
    return sp.vstack(blocks, format="csr") if any(sp.issparse(b) for b in blocks) else np.vstack(blocks)


# ---------------------------------------------------------------------------------------------
# Passes over the partitions


def _add(a, b):
    if isinstance(a, tuple):
        return tuple(_add(x, y) for x, y in zip(a, b))
    return a + b


def merge_tree(parts, name, merge=_add):
    """Merges delayed terms pairwise in list order (``merge``, default ``+``): a fixed binary tree
    of depth log2(k), so the same partitioning gives the same additions in the same order. The
    one reduction of every distributed pass (also ``ksvd.dask.fit``'s a2 map)."""
    from dask import delayed

    level = 0
    while len(parts) > 1:
        nxt = []
        for i in range(0, len(parts) - 1, 2):
            nxt.append(delayed(merge)(parts[i], parts[i + 1], dask_key_name=f"{name}-merge-{level}-{i // 2}"))
        if len(parts) % 2:
            nxt.append(parts[-1])
        parts, level = nxt, level + 1
    return parts[0]


def _rows_of(spec, k, block):
    """The partition's native rows of G (cached in this process for the fit)."""
    key = (spec["token"], k)
    rows = _CACHE.get(key)
    if rows is None:
        # This worker's budget (the estimator's, else a quarter of this machine's available
        # memory), shared by the partitions it holds.
        budget = max(1 << 20, _ksvd.memory_budget_bytes(spec["budget"]) // spec["share"])
        rows = _ksvd.PartitionRows(
            to_native(block),
            to_native(spec["z"]),
            params=spec["params"],
            centering=spec["centering"],
            memory_budget=budget,
            store=spec["store"],
            n_jobs=spec["n_jobs"],
        )
        # Kept for the fit's later passes when its rows of G are stored, or when its copy of Z
        # is small (each partition's KernelMatrix holds its own copy of Z).
        if spec["cache"] and (rows.stored or _nbytes(spec["z"]) <= _SMALL_Z):
            _CACHE[key] = rows
    return rows


def _stats_task(spec, k, block):
    """The un-centred rows' sums, their column sums and (SNE) normalisers, and the entries' sum
    and sum of squares."""
    g = _rows_of(spec, k, block)
    m = g.shape[1]
    row_sums = g.apply(np.ones((m, 1)))[:, 0]
    col_sums = g.apply_t(np.ones((g.shape[0], 1)))[:, 0]
    return row_sums, col_sums, g.log_normalizers()


def _second(t):
    return t[1]


def _moments_task(block):
    values = block.data if sp.issparse(block) else block
    return np.array([values.sum(), np.square(values).sum()])


def _product_task(spec, k, block, what, local_rows, cols, w):
    g = _rows_of(spec, k, block)
    if what == "apply":
        return g.apply(w)
    if what == "apply_t":
        return g.apply_t(w)
    if what == "block":
        return g.block_mul(local_rows, cols, None)
    if what == "block_mul":
        return g.block_mul(local_rows, cols, w)
    if what == "block_t_mul":
        return g.block_t_mul(local_rows, cols, w)
    if what == "sq_norms":
        r, c = g.sq_norms()
        return r, c
    raise ValueError(f"unknown product {what!r}")


def _take(block, local):
    return block if local is None else block[local]


def _columns_task(spec, xr, row_stats, cols, w):
    """``G[rows, cols]^T W`` from the rows ``xr`` (with their statistics over all of Z) and the
    columns ``cols`` of Z."""
    z = spec["z"][cols]
    c = spec["centering"]
    g = _ksvd.PartitionRows(
        to_native(xr),
        to_native(z),
        params=spec["params"],
        centering=None if c is None else (np.ascontiguousarray(c[0][cols]), c[1]),
        store=False,
        row_stats=row_stats,
        n_jobs=spec["n_jobs"],
    )
    return g.block_t_mul(None, None, w)


def _is_all(idx, n):
    """Whether the index array ``idx`` is ``0, 1, ..., n - 1``."""
    return len(idx) == n and (n == 0 or (idx[0] == 0 and idx[-1] == n - 1 and bool(np.all(np.diff(idx) == 1))))


class _Operator:
    """``G`` over the partitions, as ``_ksvd.fit_operator`` calls it: ``op(what, rows, cols, w)``."""

    def __init__(self, parts, blocks, m, spec, stats, compute, name):
        self.parts, self.blocks, self.m, self.spec, self.compute, self.name = parts, blocks, m, spec, compute, name
        self.stats = stats
        self.bounds = np.cumsum([0] + [p.rows for p in parts])
        self.n = int(self.bounds[-1])
        self.passes = 0
        self._norms = None

    def _tasks(self, what, per_part, w_of=None, cols=None):
        from dask import delayed

        self.passes += 1
        tag = f"{self.name}-{self.passes}"
        spec = self.spec
        out = {}
        for k, local in per_part:
            w = None if w_of is None else w_of(k)
            out[k] = delayed(_product_task)(
                spec, k, self.blocks[k], what, local, cols, w, dask_key_name=f"{tag}-part-{k}"
            )
        return out, tag

    def _split(self, rows):
        """Global ``rows`` as ``[(k, local rows or None for all of them in order, positions in
        rows)]`` per partition holding any."""
        rows = np.asarray(rows, dtype=np.int64)
        owner = np.searchsorted(self.bounds, rows, side="right") - 1
        out = []
        for k in np.unique(owner):
            pos = np.flatnonzero(owner == k)
            local = rows[pos] - self.bounds[k]
            out.append((int(k), None if _is_all(local, self.parts[k].rows) else local, pos))
        return out

    def _by_columns(self, rows, cols, w):
        """``G[rows, cols]^T W`` for a few rows (the Nystrom solver's ``G[I, :]^T W``): the rows
        ``X[rows]`` are gathered once with their statistics, and the columns are split among
        tasks that evaluate ``k(X[rows], Z[cols_q])`` and return their own rows of the result,
        so nothing of size ``M`` is summed across partitions."""
        from dask import delayed

        split = self._split(rows)
        taken = self.compute([delayed(_take)(self.blocks[k], local) for k, local, _ in split])
        order = np.argsort(np.concatenate([pos for _, _, pos in split]), kind="stable")
        xr = _stack(taken)[order]
        st = self.stats or {}
        logn = st.get("log_normalizers")
        row_stats = None
        if logn is not None or self.stats is not None and st.get("centred"):
            row_stats = (
                None if logn is None else np.ascontiguousarray(logn[rows]),
                np.ascontiguousarray(st["row_means"][rows]) if st.get("centred") else None,
            )
        cols = np.arange(self.m) if cols is None else np.asarray(cols, dtype=np.int64)
        self.passes += 1
        tag = f"{self.name}-{self.passes}"
        xd, wd = _broadcast(xr, f"{tag}-rows"), _broadcast(w, f"{tag}-w")
        chunks = [c for c in np.array_split(cols, max(1, min(len(self.parts), 64))) if len(c)]
        tasks = [
            delayed(_columns_task)(self.spec, xd, row_stats, c, wd, dask_key_name=f"{tag}-cols-{q}")
            for q, c in enumerate(chunks)
        ]
        return np.vstack(self.compute(tasks))

    def __call__(self, what, rows, cols, w):
        from dask import delayed

        every = [(k, None) for k in range(len(self.parts))]
        if cols is not None and _is_all(cols, self.m):
            cols = None
        if what == "apply":
            wd = _broadcast(np.asarray(w), f"{self.name}-w-{self.passes}")
            tasks, _ = self._tasks("apply", every, lambda k: wd)
            return np.vstack(self.compute([tasks[k] for k in range(len(self.parts))]))
        if what == "apply_t":
            b = self.bounds
            tasks, tag = self._tasks("apply_t", every, lambda k: np.ascontiguousarray(w[b[k] : b[k + 1]]))
            return self.compute([merge_tree([tasks[k] for k in range(len(self.parts))], tag)])[0]
        if what in ("row_weights", "col_weights"):
            if self._norms is None:
                tasks, tag = self._tasks("sq_norms", every)
                order = [tasks[k] for k in range(len(self.parts))]
                # The column norms are summed along the same tree as every other reduction.
                tree = merge_tree([delayed(_second)(t) for t in order], tag + "-cols")
                *rows_cols, col = self.compute(order + [tree])
                self._norms = (np.concatenate([rc[0] for rc in rows_cols]), col)
            r, c = self._norms
            return (r if what == "row_weights" else c)[:, None]
        if rows is None:  # all rows (the whole G: the dense solver's one pass)
            rows = np.arange(self.n)
        split = self._split(rows)
        if what in ("block", "block_mul"):
            wd = None if w is None else _broadcast(np.asarray(w), f"{self.name}-w-{self.passes}")
            tasks, _ = self._tasks(what, [(k, local) for k, local, _ in split], (lambda k: wd), cols)
            results = self.compute([tasks[k] for k, _, _ in split])
            width = (self.m if cols is None else len(cols)) if w is None else w.shape[1]
            out = np.empty((len(rows), width))
            for (k, _, pos), r in zip(split, results):
                out[pos] = r
            return out
        if what == "block_t_mul" and 4 * len(rows) <= self.n:
            return self._by_columns(rows, cols, np.asarray(w))
        if what == "block_t_mul":
            w = np.asarray(w)
            by_k = {k: np.ascontiguousarray(w[pos]) for k, _, pos in split}
            tasks, tag = self._tasks(what, [(k, local) for k, local, _ in split], lambda k: by_k[k], cols)
            return self.compute([merge_tree([tasks[k] for k, _, _ in split], tag)])[0]
        raise ValueError(f"unknown product {what!r}")


# ---------------------------------------------------------------------------------------------
# The estimators


def _compute(collections):
    """Computes a list of dask objects on the current scheduler (the default client if there is
    one)."""
    import dask

    return list(dask.compute(*collections))


def _workers():
    try:
        from dask.distributed import default_client

        return max(1, len(default_client().scheduler_info()["workers"]))
    except (ImportError, ValueError):
        return 1


class _DaskFit:
    """What the fit leaves besides the attributes: the partitions and what ``to_local`` needs."""

    def __init__(self, **kw):
        self.__dict__.update(kw)


class _DaskMixin:
    """The distributed fit, ``transform`` as a lazy dask array and ``to_local``, over the
    parameters of the local estimator this class derives from (one contract)."""

    def _dask_fit(self, X, Z):
        import dask

        params = native_params(self)
        n_jobs = check_n_jobs(self.n_jobs)
        if callable(self.kernel):
            kernel = None
        else:
            kernel = self.kernel
        if kernel == "precomputed":
            raise ValueError("ksvd.dask evaluates its kernel: kernel='precomputed' is ksvd.KSVD's")
        if params["compat"] is not None:
            raise ValueError("compat (Algorithm 1) needs the whole data matrix: fit ksvd.KSVD instead")
        dtype = np.float32 if getattr(X, "dtype", None) == np.float32 else np.float64
        # float32 data are computed in float32, as ksvd.KSVD computes them: every partition's
        # rows of G are evaluated, stored and multiplied in float32 (half the memory per worker),
        # with the default tolerance of float32.
        params["precision"] = "f32" if dtype == np.float32 else "f64"
        parts, blocks, n_features, names = _partitions(X, "X", drop_empty=True)
        if not parts:
            raise ValueError("X has no rows")
        blocks = list(dask.persist(*blocks))
        n = sum(p.rows for p in parts)
        token = uuid.uuid4().hex[:12]
        try:
            return self._fit_parts(parts, blocks, n, n_features, names, dtype, Z, params, n_jobs, kernel, token)
        finally:
            # The partitions' rows of G go with the fit, failed or not.
            _forget(token)
            _forget(token + "-stats")

    def _fit_parts(self, parts, blocks, n, n_features, names, dtype, Z, params, n_jobs, kernel, token):
        from dask import delayed

        if Z is None:
            z = _stack(_compute(blocks))
            z_is_x = True
        else:
            z_is_x = False
            if hasattr(Z, "compute") or hasattr(Z, "to_dask_array"):
                _, zb, _, _ = _partitions(Z, "Z")
                Z = _stack(_compute(zb))
            z = check_array(Z, accept_sparse=("csr", "csc"), dtype=(np.float64, np.float32), input_name="Z")
            if z.shape[1] != n_features:
                raise ValueError(f"Z has {z.shape[1]} features, X has {n_features}")
        m = z.shape[0]
        # The bandwidth rule over all entries of X (sums merged along the tree).
        if kernel in _ksvd.BANDWIDTH_KERNELS and params["bandwidth"] is None and params["gamma"] is None:
            s, s2 = _compute([merge_tree([delayed(_moments_task)(b) for b in blocks], f"ksvd-moments-{token}")])[0]
            params["bandwidth"] = _ksvd.bandwidth_rule_from_sums(s, s2, n, n_features, params["bandwidth_factor"])
        spec = dict(
            token=token,
            z=z,
            params=params,
            centering=None,
            budget=params["memory_budget"],
            share=max(1, -(-len(parts) // _workers())),
            # As on one machine: the Nystrom solver reads blocks only and never stores G.
            store=params["solver"] != "nystrom",
            n_jobs=n_jobs,
            cache=True,
        )
        stats = None
        if params["center"] or kernel == "sne":
            # Un-centred statistics first: the rows' own sums, the column sums (tree), SNE's
            # normalisers; the centred rows are built from them.
            # A centred fit's statistics pass is its own (its rows are not kept): it evaluates
            # in float64, so that the means are float64 sums whatever the fit's precision.
            stats_params = dict(params, precision="f64") if params["center"] else params
            stats_spec = dict(spec, params=stats_params, cache=not params["center"], token=token + "-stats")
            sd = _broadcast(stats_spec, f"ksvd-stats-spec-{token}")
            tasks = [delayed(_stats_task)(sd, k, b) for k, b in enumerate(blocks)]
            *per_part, col_sums = _compute(tasks + [merge_tree([delayed(_second)(t) for t in tasks], f"ksvd-colsums-{token}")])
            del sd, tasks  # Z is on the workers once more below, not twice
            row_sums = np.concatenate([t[0] for t in per_part])
            logn = per_part[0][2]
            stats = dict(
                centred=bool(params["center"]),
                row_means=row_sums / m,
                col_means=col_sums / n,
                grand_mean=float(np.sum(row_sums / m) / n),
                log_normalizers=None if logn is None else np.concatenate([t[2] for t in per_part]),
            )
            if not params["center"]:
                spec["token"] = stats_spec["token"]
            else:
                spec["centering"] = (stats["col_means"], stats["grand_mean"])
        spec_d = _broadcast(spec, f"ksvd-spec-{token}")
        op = _Operator(parts, blocks, m, spec_d, stats, _compute, f"ksvd-pass-{token}")
        fit = _ksvd.fit_operator(op, (n, m), estimator=self._estimator, params=params)
        self._dask = _DaskFit(
            fit=fit,
            parts=parts,
            blocks=blocks,
            z=None if z_is_x else z,
            stats=stats,
            params=params,
            passes=op.passes,
            n_jobs=n_jobs,
            kernel=kernel,
        )
        self._local = None
        self._dtype = np.dtype(dtype)
        self.n_features_in_ = n_features
        if names is not None:
            self.feature_names_in_ = names
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_

        def cast(a):
            return None if a is None else a.astype(dtype, copy=False)

        self.singular_values_ = cast(fit.singular_values())
        self.row_embedding_ = cast(fit.u())
        self.col_embedding_ = cast(fit.v())
        self.residuals_ = cast(fit.residuals())
        self.bandwidth_ = fit.bandwidth
        landmarks = fit.landmarks()
        self.landmark_rows_, self.landmark_cols_ = (None, None) if landmarks is None else map(np.asarray, landmarks)
        self.n_passes_ = op.passes
        self._n_features_out = self.singular_values_.shape[0]
        if z_is_x:
            # X is on the driver already (as Z): the local model costs no gather now, and the
            # fitted estimator no longer needs the cluster.
            self._local = self._local_model(z)
        return self

    def to_local(self):
        """The fitted model as the single-machine estimator (``ksvd.KSVD`` / ``ksvd.KPCA``):
        ``save``, :func:`ksvd.load`, pickling, ``ksvd transform`` and in-memory projections. The
        training rows are gathered once (the model keeps what its projections need)."""
        check_is_fitted(self)
        if self._local is not None:
            return self._local
        try:
            x = _stack(_compute(self._dask.blocks))
        except Exception as e:  # noqa: BLE001 - any loss of the persisted partitions
            raise RuntimeError(
                "the fit's partitions are gone (was its Dask client closed?): call to_local() (or save, "
                f"pickle, transform) while the cluster that fitted the model is up ({type(e).__name__}: {e})"
            ) from e
        self._local = self._local_model(x)
        return self._local

    def _local_model(self, x):
        """The ``ksvd.KSVD`` / ``ksvd.KPCA`` of this fit, given the training rows ``x``."""
        d = self._dask
        stats = d.stats or {}
        centering = None
        if d.params["center"]:
            centering = (stats["row_means"], stats["col_means"], stats["grand_mean"])
        logn = stats.get("log_normalizers")
        z = None if self._estimator == "kpca" else to_native(x if d.z is None else d.z)
        model = d.fit.to_model(to_native(x), z, log_normalizers=logn, centering=centering)
        if callable(self.kernel):
            # The document records the function's name; loading attaches the function again.
            local = _estimators.load(model.to_bytes(), kernel=self.kernel)
        else:
            local = _estimators._from_model(model)
        local.set_params(n_jobs=self.n_jobs, memory_budget=self.memory_budget)
        local._set_model(local._model, self._dtype)
        if hasattr(self, "feature_names_in_"):
            local.feature_names_in_ = self.feature_names_in_
        return local

    def _lazy(self, X, cols, extend):
        import dask.array as da
        from dask import delayed

        check_is_fitted(self)
        if not (hasattr(X, "to_dask_array") or isinstance(X, da.Array) or _is_file_list(X)):
            local = self.to_local()
            fn = {(False, False): local.transform, (True, False): local.transform_cols,
                  (False, True): local.extend, (True, True): local.extend_cols}[(cols, extend)]
            return fn(X)
        local = self.to_local()
        if not cols:
            self._check_names(X)
        want = local._model.input_dims[1 if cols else 0]
        parts, blocks, n_features, _ = _partitions(X, "X", n_features=want)
        if n_features != want:
            raise ValueError(f"X has {n_features} features, but {type(self).__name__} is expecting {want}")
        r = self._n_features_out
        name = f"ksvd-transform-{uuid.uuid4().hex[:8]}"
        model = self._model_on_workers(local, f"{name}-model")
        n_jobs = check_n_jobs(self.n_jobs)
        dtype = np.float32 if getattr(X, "dtype", None) == np.float32 else np.float64
        out = [
            da.from_delayed(
                delayed(_project_task)(model, b, cols, extend, n_jobs, dtype, dask_key_name=f"{name}-part-{p.index}"),
                shape=(p.rows, r),
                dtype=dtype,
            )
            for p, b in zip(parts, blocks)
        ]
        return da.concatenate(out, axis=0)

    def _model_on_workers(self, local, name):
        """The local model as the projections' input: scattered once per client to every worker
        (and kept with this estimator, so that lazy results computed later still find it), else
        one graph key. The model holds the training rows: in the graph it would travel with every
        computation."""
        from dask import delayed

        try:
            from dask.distributed import default_client

            client = default_client()
        except (ImportError, ValueError):
            return delayed(local._model, name=name)
        cache = self.__dict__.setdefault("_scattered", {})
        future = cache.get(id(client))
        if future is None or future.status != "finished":
            future = client.scatter([local._model], broadcast=True, hash=False)[0]
            cache[id(client)] = future
        return future

    def _check_names(self, X):
        """The rows' column names against those seen in ``fit``, as scikit-learn checks them: a
        dataframe with other names (or another order) is an error; names on one side only warn."""
        import warnings

        names = _column_names(X)
        fitted = getattr(self, "feature_names_in_", None)
        if names is not None and fitted is not None and list(names) != list(fitted):
            seen, given = set(fitted), set(names)
            unseen = [c for c in names if c not in seen]
            missing = [c for c in fitted if c not in given]
            detail = f"unseen at fit time: {unseen}; seen at fit time, yet now missing: {missing}"
            if not unseen and not missing:
                detail = "the same names in another order"
            raise ValueError(f"The feature names should match those that were passed during fit ({detail})")
        if names is not None and fitted is None:
            warnings.warn(f"X has feature names, but {type(self).__name__} was fitted without feature names", UserWarning)
        if names is None and fitted is not None and hasattr(X, "npartitions"):
            warnings.warn(f"X does not have valid feature names, but {type(self).__name__} was fitted with feature names", UserWarning)

    def transform(self, X):
        """``k(x', Z) V S^-1/2`` of new row samples (``ksvd.KSVD.transform``), as a lazy dask
        array with ``X``'s row chunks: the fitted model is broadcast once and applied to every
        partition. An in-memory ``X`` gives a NumPy array (``to_local().transform``)."""
        return self._lazy(X, cols=False, extend=False)

    def transform_cols(self, Z):
        """``k(X, z')^T U S^-1/2`` of new column samples, lazily as :meth:`transform`."""
        return self._lazy(Z, cols=True, extend=False)

    def extend(self, X):
        """The paper's extension (eq. 10) of new rows, ``k(x', Z) V S^-1``, lazily."""
        return self._lazy(X, cols=False, extend=True)

    def extend_cols(self, Z):
        """The extension of new columns, ``k(X, z')^T U S^-1``, lazily."""
        return self._lazy(Z, cols=True, extend=True)

    def fit_transform(self, X, y=None, **kw):
        """Fits, then ``U S^1/2`` (the transform of the training rows, from the fit) as a dask
        array with ``X``'s partitions as row chunks."""
        import dask.array as da

        self.fit(X, y, **kw)
        chunks = tuple(p.rows for p in self._dask.parts)
        return da.from_array(self._training_transform(), chunks=(chunks, -1))

    def save(self, path):
        """``to_local().save(path)``: one checksummed model document."""
        self.to_local().save(path)

    def to_bytes(self):
        return self.to_local().to_bytes()

    def __getstate__(self):
        # A fitted distributed estimator pickles as its local model (the partitions are the
        # cluster's); unpickled, it projects as the local model does.
        state = dict(self.__dict__)
        state.pop("_scattered", None)
        if "_dask" in state:
            state["_local"] = self.to_local()
            state.pop("_dask")
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)


def _project_task(model, block, cols, extend, n_jobs, dtype):
    return model.project(to_native(block), cols=cols, extend=extend, n_jobs=n_jobs).astype(dtype, copy=False)


def _broadcast(obj, name):
    """``obj`` once on every worker (a distributed client's scatter), else one graph key."""
    from dask import delayed

    try:
        from dask.distributed import default_client

        return default_client().scatter([obj], broadcast=True, hash=False)[0]
    except (ImportError, ValueError):
        return delayed(obj, name=name)


def _forget(token):
    try:
        from dask.distributed import default_client

        default_client().run(_drop_cache, token)
    except (ImportError, ValueError):
        pass
    _drop_cache(token)


class KSVD(_DaskMixin, _estimators.KSVD):
    """:class:`ksvd.KSVD` on data partitioned by rows on a Dask cluster.

    The same parameters, defaults and fitted attributes as :class:`ksvd.KSVD`
    (``docs/conventions.md``); every solver, with the same answers as the single-machine fit (see
    :mod:`ksvd.dask`). ``fit(X, Z=None)``: ``X`` is a dask array chunked by rows (dense or
    ``scipy.sparse`` chunks), a dask dataframe, or a list of files (``.npy``, else LIBSVM), one
    partition per chunk or file; ``Z`` is in memory or a dask array (gathered: it must fit).

    Besides the attributes of :class:`ksvd.KSVD` (``row_embedding_`` is a NumPy array on the
    driver): ``n_passes_``, the passes over the partitions the fit took. :meth:`transform`
    returns a lazy dask array; :meth:`to_local` gives the :class:`ksvd.KSVD` model (``save``,
    :func:`ksvd.load`, ``ksvd transform``).
    """

    def fit(self, X, y=None, Z=None):
        return self._dask_fit(X, Z)


class KPCA(_DaskMixin, _estimators.KPCA):
    """:class:`ksvd.KPCA` on data partitioned by rows on a Dask cluster (as :class:`KSVD`; the
    samples are gathered once as ``Z = X``)."""

    def fit(self, X, y=None):
        return self._dask_fit(X, None)

    @property
    def eigenvalues_(self):
        return self.singular_values_

    @property
    def eigenvectors_(self):
        return self.row_embedding_
