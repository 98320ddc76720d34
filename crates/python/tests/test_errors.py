"""Bad inputs raise ValueError / TypeError with the core's messages; nothing panics."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import NotFittedError

import ksvd


@pytest.fixture
def X():
    return np.random.default_rng(1).normal(size=(12, 3))


@pytest.mark.parametrize(
    "params,exc,match",
    [
        (dict(n_components=0), ValueError, "invalid KSVD parameter rank: must be at least 1"),
        (dict(n_components=13), ValueError, r"rank 13 is invalid for a 12 x 12 matrix \(must be 1..=12\)"),
        (dict(n_components=-1), ValueError, "n_components must be non-negative"),
        (dict(n_components=2.5), TypeError, "n_components must be an integer"),
        (dict(kernel="rbf", bandwidth=-1.0), ValueError, "invalid kernel parameter gamma = -1: bandwidth must be positive and finite"),
        (dict(kernel="rbf", bandwidth=np.inf), ValueError, "bandwidth must be positive and finite"),
        (dict(kernel="rbf", bandwidth="wide"), TypeError, "bandwidth must be a real number"),
        (dict(kernel="poly", degree=0), ValueError, "invalid kernel parameter degree = 0: must be >= 1"),
        (dict(kernel="cosine"), ValueError, "kernel must be one of"),
        (dict(kernel=3), TypeError, "kernel must be a string"),
        (dict(solver="arpack"), ValueError, "solver must be one of"),
        (dict(solver="nystrom"), ValueError, "solver='nystrom' needs n_landmarks"),
        (dict(solver="nystrom", n_landmarks=1), ValueError, "1 landmarks cannot give rank 2"),
        (dict(center="yes"), TypeError, "center must be a bool"),
        (dict(random_state=-3), ValueError, "random_state must be non-negative"),
        (dict(random_state="seed"), TypeError, "random_state must be an integer"),
    ],
)
def test_bad_parameters(X, params, exc, match):
    with pytest.raises(exc, match=match):
        ksvd.KSVD(**params).fit(X)


def test_bad_data(X):
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="Input X contains NaN"):
        ksvd.KSVD().fit(bad)
    with pytest.raises(ValueError, match="Input X contains NaN"):
        ksvd.KSVD().fit(sp.csr_array(bad))
    with pytest.raises(ValueError, match="Input Z contains infinity"):
        ksvd.KSVD().fit(X, Z=np.where(bad == bad, bad, np.inf))
    # Past the scikit-learn checks, the core rejects non-finite samples itself.
    from ksvd import _ksvd

    kw = dict(kernel="sne", bandwidth=None, degree=2, coef0=1.0, center=False, solver="exact",
              n_landmarks=None, sampling="uniform", tol=1e-10, rank=1, seed=0)
    with pytest.raises(ValueError, match=r"samples contains a non-finite value \(NaN or infinity\) at \(3, 1\)"):
        _ksvd.fit(bad, None, **kw)
    with pytest.raises(ValueError, match="dimension mismatch: x has dimension 3 but z has dimension 2"):
        ksvd.KSVD().fit(X, Z=X[:, :2])
    with pytest.raises(ValueError, match="Z must be None with kernel='precomputed'"):
        ksvd.KSVD(kernel="precomputed").fit(X, Z=X)
    with pytest.raises(ValueError):
        ksvd.KSVD().fit(np.array([["a", "b"], ["c", "d"]]))
    with pytest.raises(ValueError, match="Complex data not supported"):
        ksvd.KSVD().fit(X + 1j)
    with pytest.raises(ValueError, match="Expected 2D array"):
        ksvd.KSVD().fit(X[0])


def test_transform_errors(X):
    est = ksvd.KSVD(n_components=2)
    with pytest.raises(NotFittedError):
        est.transform(X)
    est.fit(X)
    with pytest.raises(ValueError, match="X has 2 features, but KSVD is expecting 3 features"):
        est.transform(X[:, :2])
    with pytest.raises(ValueError, match="dimension mismatch: x has dimension 3 but z has dimension 2"):
        est.transform_cols(X[:, :2])
    bad = X.copy()
    bad[0, 0] = np.inf
    with pytest.raises(ValueError, match="Input X contains infinity"):
        est.transform(bad)
    pre = ksvd.KSVD(kernel="precomputed").fit(X @ X.T)
    with pytest.raises(ValueError, match="transform_cols is not available with kernel='precomputed'"):
        pre.transform_cols(X @ X.T)


def test_kpca_refuses_the_asymmetric_kernel_and_rectangular_kernel_matrices(X):
    with pytest.raises(ValueError, match="kernel must be one of"):
        ksvd.KPCA(kernel="sne").fit(X)
    with pytest.raises(ValueError, match=r"KPCA with kernel='precomputed' needs a square kernel matrix; got shape \(12, 3\)"):
        ksvd.KPCA(kernel="precomputed").fit(X)


def test_graph_errors():
    with pytest.raises(ValueError, match="graph_input must be one of"):
        ksvd.graph.embed(np.array([[0, 1], [1, 0]]), n_components=1, graph_input="symmetrised")
    with pytest.raises(ValueError, match="edge array must have shape"):
        ksvd.graph.embed(np.array([0, 1, 2]), n_components=1)
    with pytest.raises(TypeError, match="integer node ids"):
        ksvd.graph.embed(np.array([[0.0, 1.5]]), n_components=1)
    with pytest.raises(ValueError, match="node ids must be non-negative"):
        ksvd.graph.embed(np.array([[0, -1]]), n_components=1)
    with pytest.raises(ValueError, match="node id 5 out of range for n_nodes = 3"):
        ksvd.graph.embed(np.array([[0, 5]]), n_components=1, n_nodes=3)
    with pytest.raises(TypeError, match="adjacency must be a scipy sparse matrix"):
        ksvd.graph.embed("edges.txt", n_components=1)
    with pytest.raises(ValueError, match=r"rank 4 is invalid for a 3 x 3 matrix"):
        ksvd.graph.embed(np.array([[0, 1], [1, 2]]), n_components=4, bandwidth=1.0)


def test_native_csr_validation():
    # Malformed CSR reaching the native module (bypassing the Python conversion) is an error.
    from ksvd import _ksvd

    kw = dict(kernel="linear", bandwidth=None, degree=2, coef0=1.0, center=False, solver="exact",
              n_landmarks=None, sampling="uniform", tol=1e-10, rank=1, seed=0)
    bad = ((2, 2), np.array([0, 1, 2]), np.array([0, 5]), np.array([1.0, 1.0]))
    with pytest.raises(ValueError, match="index 5 out of bounds for column of length 2"):
        _ksvd.fit(bad, None, **kw)
    neg = ((2, 2), np.array([0, 1, 2]), np.array([0, -1]), np.array([1.0, 1.0]))
    with pytest.raises(ValueError, match="negative CSR indices entry -1"):
        _ksvd.fit(neg, None, **kw)
    with pytest.raises(TypeError):
        _ksvd.fit("not an array", None, **kw)
