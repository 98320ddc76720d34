"""Conversion at the edge: Python values to what the native module ``ksvd._ksvd`` accepts.

Nothing here computes: arrays become C-contiguous float64 arrays or canonical CSR triples, and
hyper-parameters are type-checked (their ranges are checked by the Rust core, whose messages
reach the user unchanged).
"""

from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp

KERNELS = ("sne", "rbf", "laplacian", "poly", "linear", "precomputed")
SOLVERS = ("auto", "exact", "lanczos", "rsvd", "nystrom")
SAMPLINGS = ("uniform", "squared-norm", "adaptive", "greedy")


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


def check_choice(name, value, choices):
    """``value`` if it is one of ``choices`` (strings); ``TypeError``/``ValueError`` otherwise."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, one of {choices}; got {value!r}")
    if value not in choices:
        raise ValueError(f"{name} must be one of {choices}; got {value!r}")
    return value


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


def native_params(est, kernel_choices=KERNELS):
    """The keyword arguments of ``ksvd._ksvd.fit`` from an estimator's hyper-parameters."""
    return dict(
        kernel=check_choice("kernel", est.kernel, kernel_choices),
        bandwidth=check_real("bandwidth", est.bandwidth, allow_none=True),
        degree=check_int("degree", est.degree),
        coef0=check_real("coef0", est.coef0),
        center=check_bool("center", est.center),
        solver=check_choice("solver", est.solver, SOLVERS),
        n_landmarks=check_int("n_landmarks", est.n_landmarks, allow_none=True),
        sampling=check_choice("sampling", est.sampling, SAMPLINGS),
        tol=check_real("tol", est.tol),
        rank=check_int("n_components", est.n_components),
        seed=seed_of(est.random_state),
    )
