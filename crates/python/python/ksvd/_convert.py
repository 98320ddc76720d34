"""Conversion at the edge: Python values to what the native module ``ksvd._ksvd`` accepts.

Nothing here computes: arrays become C-contiguous float64 arrays or canonical CSR triples, and
hyper-parameters are type-checked. Names (kernels, solvers, samplings, graph inputs,
compatibilities) are parsed and values range-checked by the Rust core, whose messages reach the
user unchanged as ``ValueError``.
"""

import os
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp

from . import _ksvd


def to_native(X):
    """A validated 2-D input as the native module takes it.

    Dense input becomes a C-contiguous float64 array; sparse input becomes the CSR triple
    ``((nrows, ncols), indptr, indices, data)`` with int64 indices, sorted within each row and
    duplicates summed (the invariants of ``ksvd_linalg::CsrMatrix``).
    """
    if sp.issparse(X):
        X = sp.csr_array(X, dtype=np.float64, copy=True)
        X.sum_duplicates()  # also sorts the indices
        return (
            (int(X.shape[0]), int(X.shape[1])),
            np.ascontiguousarray(X.indptr, dtype=np.int64),
            np.ascontiguousarray(X.indices, dtype=np.int64),
            np.ascontiguousarray(X.data, dtype=np.float64),
        )
    return np.ascontiguousarray(X, dtype=np.float64)


def check_name(name, value, *, allow_none=False):
    """A name of one of the core's vocabularies (the core parses it and lists the choices)."""
    if value is None and allow_none:
        return None
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string; got {value!r} of type {type(value).__name__}")
    return value


def check_kernel(value):
    """``kernel=``: a kernel name (one of ``ksvd._ksvd.KERNELS``) or a callable
    ``kernel(A, B) -> array of shape (len(A), len(B))``, your own kernel (``docs/conventions.md``),
    passed through unchanged: the core calls it block by block."""
    if callable(value) and not isinstance(value, str):
        return value
    return check_name("kernel", value)


def check_int(name, value, *, allow_none=False):
    """A non-negative Python ``int`` (the native side takes unsigned integers)."""
    if value is None and allow_none:
        return None
    if not isinstance(value, Integral) or isinstance(value, bool):
        raise TypeError(f"{name} must be an integer; got {value!r} of type {type(value).__name__}")
    if value < 0:
        raise ValueError(f"{name} must be non-negative; got {value}")
    return int(value)


def check_real(name, value, *, allow_none=False):
    """A Python ``float`` (range checks are the core's)."""
    if value is None and allow_none:
        return None
    if not isinstance(value, Real) or isinstance(value, bool):
        raise TypeError(f"{name} must be a real number; got {value!r} of type {type(value).__name__}")
    return float(value)


def check_bool(name, value):
    """A Python ``bool``."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a bool; got {value!r} of type {type(value).__name__}")
    return bool(value)


def check_indices(name, value):
    """``None`` or a 1-D array-like of non-negative integer indices, as a list of ints (the core
    checks that they are in range and distinct)."""
    if value is None:
        return None
    a = np.asarray(value)
    if a.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array of indices; got shape {a.shape}")
    if a.size and not np.issubdtype(a.dtype, np.integer):
        raise TypeError(f"{name} holds integer indices; got dtype {a.dtype}")
    if a.size and a.min() < 0:
        raise ValueError(f"{name} holds 0-based indices, so no negative ones; got {a.min()}")
    return [int(i) for i in a]


def check_memory_budget(value):
    """``None``, a number of bytes (int) or a string such as ``"512M"`` (parsed by the core)."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, Integral) and not isinstance(value, bool):
        return int(value)
    raise TypeError(
        f"memory_budget must be a number of bytes (int) or a string such as '512M'; got {value!r} "
        f"of type {type(value).__name__}"
    )


def check_n_jobs(value):
    """``None`` or an int (the core of the binding checks it: positive, or -1 for all cores)."""
    if value is None:
        return None
    if not isinstance(value, Integral) or isinstance(value, bool):
        raise TypeError(f"n_jobs must be an integer or None; got {value!r} of type {type(value).__name__}")
    return int(value)


def seed_of(random_state):
    """The explicit 64-bit seed of every random choice of the core.

    ``None`` gives seed 0 (results are reproducible by default, as in the Rust API); an int is
    the seed; a ``numpy.random.RandomState`` or ``Generator`` draws one.
    """
    if random_state is None:
        return 0
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(np.iinfo(np.int32).max))
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(np.iinfo(np.int64).max))
    return check_int("random_state", random_state)


def native_params(p):
    """The hyper-parameters of ``ksvd._ksvd.fit`` from an object with the Python column's
    attributes (an estimator, or the arguments of :func:`ksvd.graph.embed`), type-checked."""
    return dict(
        n_components=check_int("n_components", p.n_components),
        kernel=check_kernel(p.kernel),
        bandwidth=check_real("bandwidth", p.bandwidth, allow_none=True),
        bandwidth_factor=check_real("bandwidth_factor", p.bandwidth_factor),
        gamma=check_real("gamma", p.gamma, allow_none=True),
        degree=check_int("degree", p.degree),
        coef0=check_real("coef0", p.coef0),
        center=check_bool("center", p.center),
        compat=check_name("compat", p.compat, allow_none=True),
        solver=check_name("solver", p.solver),
        tol=check_real("tol", p.tol, allow_none=True),
        precision=None,
        n_landmarks=check_int("n_landmarks", p.n_landmarks, allow_none=True),
        n_col_landmarks=check_int("n_col_landmarks", p.n_col_landmarks, allow_none=True),
        sampling=check_name("sampling", p.sampling),
        landmark_rows=check_indices("landmark_rows", p.landmark_rows),
        landmark_cols=check_indices("landmark_cols", p.landmark_cols),
        oversampling=check_int("oversampling", p.oversampling),
        power_iters=check_int("power_iters", p.power_iters),
        seed=seed_of(p.random_state),
        memory_budget=check_memory_budget(p.memory_budget),
    )


def fill_names(doc):
    """``doc`` with ``{KERNELS}``, ``{SOLVERS}``, ``{SAMPLINGS}``, ``{GRAPH_INPUTS}`` and
    ``{COMPATS}`` replaced by the core's names (``{"rbf", "sne", ...}``, numpydoc's form of a
    choice)."""
    if doc is None:
        return None
    for key in ("KERNELS", "SOLVERS", "SAMPLINGS", "GRAPH_INPUTS", "COMPATS"):
        names = ", ".join(f'"{n}"' for n in getattr(_ksvd, key))
        doc = doc.replace("{" + key + "}", "{" + names + "}")
    return doc


def read_libsvm(path, n_features=None, zero_based=False):
    """A LIBSVM file (plain or ``.bz2``) as ``(CSR matrix, labels)``, read by the workspace's
    reader (``ksvd_datasets::read_libsvm``: 1-based indices unless ``zero_based``; ``n_features``
    columns, else the largest index). A malformed line raises ``ValueError`` naming file and line."""
    (shape, indptr, indices, data), labels = _ksvd.read_libsvm(os.fspath(path), n_features, bool(zero_based))
    return sp.csr_matrix((data, indices, indptr), shape=shape), labels
