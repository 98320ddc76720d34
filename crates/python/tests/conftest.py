"""NumPy references shared by the tests: kernel matrices written from the paper's formulas and
the SVD of numpy.linalg, with tolerances scaled by machine epsilon and the problem size."""

import numpy as np
import pytest

EPS = np.finfo(np.float64).eps


def sq_dists(X, Z):
    """``||x_i - z_j||^2`` computed directly (no GEMM identity)."""
    return ((X[:, None, :] - Z[None, :, :]) ** 2).sum(axis=-1)


def kernel_matrix(kernel, X, Z, bandwidth=None, degree=2, coef0=1.0, sne_normalizers=None):
    """``G_ij = k(x_i, z_j)`` in the paper's conventions (RBF: ``exp(-||x - z||^2 / gamma^2)``).

    For SNE the normaliser of row ``i`` is ``sum_j exp(-||x_i - z_j||^2 / gamma^2)`` over ``Z``,
    unless ``sne_normalizers`` gives them (projections of new columns use the training ones).
    """
    if kernel == "linear":
        return X @ Z.T
    if kernel == "poly":
        return (X @ Z.T + coef0) ** degree
    d2 = sq_dists(X, Z)
    if kernel == "laplacian":
        return np.exp(-np.sqrt(d2) / bandwidth)
    rbf = np.exp(-d2 / bandwidth**2)
    if kernel == "rbf":
        return rbf
    if kernel == "sne":
        s = rbf.sum(axis=1, keepdims=True) if sne_normalizers is None else sne_normalizers[:, None]
        return rbf / s
    raise ValueError(kernel)


def center_both(G):
    """``H_n G H_m``."""
    return G - G.mean(axis=1, keepdims=True) - G.mean(axis=0, keepdims=True) + G.mean()


def bandwidth_rule(X, k=1.0):
    """``gamma = k sqrt(M gamma_x)``, ``gamma_x`` the (population) variance of all entries."""
    return k * np.sqrt(X.shape[1] * np.var(X))


def reference_svd(G, r):
    """Top-``r`` SVD by numpy, signs fixed as the core fixes them (the largest-magnitude entry
    of every left singular vector is positive)."""
    U, s, Vt = np.linalg.svd(G, full_matrices=False)
    U, s, V = U[:, :r], s[:r], Vt[:r].T
    for i in range(r):
        if U[np.argmax(np.abs(U[:, i])), i] < 0:
            U[:, i] *= -1
            V[:, i] *= -1
    return U, s, V


def svd_tolerances(G, s_full, r, solver_tol=0.0):
    """Bounds on singular-value and singular-vector errors.

    Backward error of a stable SVD is ``c eps sqrt(max(n, m)) ||G||``; an iterative solver stops
    at relative residual ``solver_tol``. Singular values move by at most the backward error;
    singular vectors by that over the gap to the rest of the spectrum.
    """
    n, m = G.shape
    backward = 16 * EPS * np.sqrt(max(n, m)) * s_full[0] + 16 * solver_tol * s_full[0]
    gaps = []
    for i in range(r):
        neighbours = [abs(s_full[i] - s_full[j]) for j in (i - 1, i + 1) if 0 <= j < len(s_full)]
        gaps.append(min(neighbours))
    return backward, backward / np.array(gaps)


@pytest.fixture
def rng():
    return np.random.default_rng(20240723)


def write_svmlight_pair(directory, rows, test_rows, *, features, density, seed):
    """Seeded sparse LIBSVM files of one classification problem: ``rows`` training and
    ``test_rows`` test rows of scikit-learn's ``make_classification`` (``features`` columns, a
    tenth of them informative), each entry kept with probability ``density``, labels ``+-1``,
    written 1-based by ``sklearn.datasets.dump_svmlight_file``. Returns the two paths."""
    import os

    import scipy.sparse as sp
    from sklearn.datasets import dump_svmlight_file, make_classification

    x, y = make_classification(
        n_samples=rows + test_rows,
        n_features=features,
        n_informative=max(2, features // 10),
        n_redundant=0,
        random_state=seed,
    )
    keep = np.random.default_rng(seed).random(x.shape) < density
    x = sp.csr_matrix(x * keep)
    y = np.where(y > 0, 1.0, -1.0)
    paths = []
    for name, rs in (("train.svm", slice(0, rows)), ("test.svm", slice(rows, rows + test_rows))):
        path = os.path.join(str(directory), name)
        dump_svmlight_file(x[rs], y[rs], path, zero_based=False)
        paths.append(path)
    return tuple(paths)


def run_killing_a_worker(client, fit, *, after=0.0, timeout=300):
    """Runs ``fit()`` in a thread and kills one worker process (SIGKILL) once tasks are running
    (and ``after`` more seconds); its nanny restarts it and the scheduler recomputes what it held.
    Returns ``fit()``'s result, asserting that it finished without an error and that the worker
    was replaced."""
    import os
    import signal
    import threading
    import time

    victim = sorted(client.run(os.getpid).values())[0]
    result, error = {}, []

    def run():
        try:
            result["fit"] = fit()
        except BaseException as e:  # noqa: BLE001 - reported below
            error.append(e)

    th = threading.Thread(target=run)
    th.start()
    deadline = time.monotonic() + 60
    while not any(client.processing().values()) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(after)
    os.kill(victim, signal.SIGKILL)
    th.join(timeout=timeout)
    assert not th.is_alive() and not error, error
    assert victim not in client.run(os.getpid).values()
    return result["fit"]
