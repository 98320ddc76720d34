"""Bad inputs raise ValueError / TypeError naming the problem (the core's messages where the core
validates); nothing panics."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import NotFittedError

import ksvd

NAMES = dict(kernels=", ".join(ksvd._ksvd.KERNELS), solvers=", ".join(ksvd._ksvd.SOLVERS))


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
        (dict(bandwidth=-1.0), ValueError, "invalid kernel parameter gamma = -1: bandwidth must be positive and finite"),
        (dict(bandwidth=np.inf), ValueError, "bandwidth must be positive and finite"),
        (dict(bandwidth="wide"), TypeError, "bandwidth must be a real number"),
        (dict(bandwidth_factor=0.0), ValueError, "bandwidth_rule: the factor k = 0 must be positive and finite"),
        (dict(gamma=0.5, bandwidth=1.0), ValueError, "give bandwidth .* or gamma .*, not both"),
        (dict(gamma=-2.0), ValueError, "gamma = -2 must be positive and finite"),
        (dict(kernel="poly", gamma=0.5), ValueError, "gamma is scikit-learn's parameter of the rbf, sne and laplacian kernels, not of poly"),
        (dict(kernel="linear", gamma=0.5), ValueError, "not of linear"),
        (dict(kernel="poly", degree=0), ValueError, "invalid kernel parameter degree = 0: must be >= 1"),
        (dict(kernel="cosine"), ValueError, f"unknown kernel `cosine` \\(expected one of {NAMES['kernels']}\\)"),
        (dict(kernel=3), TypeError, "kernel must be a string"),
        (dict(kernel=lambda x, z: x @ z.T, gamma=0.5), ValueError, "bandwidth and gamma are parameters of the built-in kernels"),
        (dict(solver="arpack"), ValueError, f"unknown solver `arpack` \\(expected one of {NAMES['solvers']}\\)"),
        (dict(solver="nystrom"), ValueError, "n_landmarks: the nystrom solver needs the number of landmarks"),
        (dict(solver="nystrom", n_landmarks=1), ValueError, "1 landmarks cannot give rank 2"),
        (dict(solver="lanczos", tol=2.0), ValueError, "solver.tol: 2 must lie in \\(0, 1\\)"),
        (dict(sampling="bogus", solver="nystrom", n_landmarks=5), ValueError, "unknown sampling `bogus`"),
        (dict(center="yes"), TypeError, "center must be a bool"),
        (dict(compat="a9"), ValueError, "unknown compatibility `a9`"),
        (dict(random_state=-3), ValueError, "random_state must be non-negative"),
        (dict(random_state="seed"), TypeError, "random_state must be an integer"),
        (dict(n_jobs=0), ValueError, "n_jobs must be a positive number of threads, or None or -1 for all cores; got 0"),
        (dict(n_jobs=-2), ValueError, "n_jobs must be a positive number of threads"),
        (dict(n_jobs=1.5), TypeError, "n_jobs must be an integer or None"),
        (dict(memory_budget="lots"), ValueError, "not a number of bytes \\(examples: 512M, 4G, 1048576\\)"),
        (dict(memory_budget="12K"), ValueError, "must be between 1 MiB and 1 PiB"),
        (dict(memory_budget=-5), ValueError, "memory_budget must be a positive number of bytes; got -5"),
        (dict(memory_budget=1.5e9), TypeError, "memory_budget must be a number of bytes \\(int\\) or a string"),
        (dict(solver="nystrom", landmark_rows=[0, 1, 12], landmark_cols=[0, 1, 2]), ValueError, "landmark rows: index 12 is out of range for 12 samples"),
        (dict(solver="nystrom", landmark_rows=[0, 1, 2], landmark_cols=[3, 3, 4]), ValueError, "landmark cols: index 3 is repeated"),
        (dict(solver="nystrom", landmark_rows=[0, 1, 2]), ValueError, "landmark_rows and landmark_cols are given together"),
        (dict(solver="nystrom", landmark_rows=[0, -1], landmark_cols=[0, 1]), ValueError, "landmark_rows holds 0-based indices, so no negative ones"),
        (dict(solver="nystrom", landmark_rows=[0.5, 1], landmark_cols=[0, 1]), TypeError, "landmark_rows holds integer indices"),
        (dict(solver="nystrom", landmark_rows=[0], landmark_cols=[0]), ValueError, "landmark rows: 1 landmarks cannot give rank 2"),
        (dict(landmark_rows=[0, 1], landmark_cols=[0, 1]), ValueError, "user landmarks need the Nystrom solver"),
    ],
)
def test_bad_parameters(X, params, exc, match):
    with pytest.raises(exc, match=match):
        ksvd.KSVD(**params).fit(X)


@pytest.mark.parametrize(
    "params,match",
    [
        (dict(kernel="sne"), "KPCA needs a symmetric kernel; SNE is asymmetric"),
        (dict(compat="a1"), "KPCA has Z = X: compat .* is a KSVD parameter"),
        (dict(solver="nystrom", landmark_rows=[0, 1], landmark_cols=[0, 1]), "landmark_rows/landmark_cols are KSVD parameters"),
        (dict(solver="nystrom", n_landmarks=5, sampling="adaptive"), "the symmetric Nyström method samples one set of landmarks uniformly"),
        (dict(solver="nystrom", n_landmarks=5, n_col_landmarks=4), "leave cols unset"),
    ],
)
def test_kpca_refuses_what_only_ksvd_takes(X, params, match):
    with pytest.raises(ValueError, match=match):
        ksvd.KPCA(**params).fit(X)


def test_bad_data(X):
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="Input X contains NaN"):
        ksvd.KSVD().fit(bad)
    with pytest.raises(ValueError, match="Input X contains NaN"):
        ksvd.KPCA().fit(sp.csr_array(bad))
    with pytest.raises(ValueError, match="Input Z contains infinity"):
        ksvd.KSVD().fit(X, Z=np.where(bad == bad, bad, np.inf))
    with pytest.raises(ValueError, match="dimension mismatch: x has dimension 3 but z has dimension 2"):
        ksvd.KSVD().fit(X, Z=X[:, :2])
    with pytest.raises(ValueError, match="Z must be None with kernel='precomputed'"):
        ksvd.KSVD(kernel="precomputed").fit(X, Z=X)
    with pytest.raises(ValueError, match="compat makes Z from the columns of the data matrix X"):
        ksvd.KSVD(compat="a1").fit(X, Z=X)
    with pytest.raises(ValueError):
        ksvd.KSVD().fit(np.array([["a", "b"], ["c", "d"]]))
    with pytest.raises(ValueError, match="Complex data not supported"):
        ksvd.KSVD().fit(X + 1j)
    with pytest.raises(ValueError, match="Expected 2D array"):
        ksvd.KSVD().fit(X[0])
    with pytest.raises(ValueError, match="KPCA needs the square K of the samples with themselves, got 12 x 3"):
        ksvd.KPCA(kernel="precomputed").fit(X)
    with pytest.raises(ValueError, match="bandwidth_rule: the rule .* gives 0 on these samples"):
        ksvd.KSVD().fit(np.ones((5, 2)))


def test_the_core_validates_past_the_python_checks(X):
    # Non-finite samples reaching the native module (bypassing scikit-learn's checks) are the
    # core's error, named with their position.
    from ksvd import _ksvd
    from ksvd._convert import native_params

    params = native_params(ksvd.KSVD(solver="exact"))
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match=r"samples contains a non-finite value \(NaN or infinity\) at \(3, 1\)"):
        _ksvd.fit(bad, None, estimator="ksvd", params=params, n_jobs=None)
    with pytest.raises(ValueError, match='unknown estimator "pca"'):
        _ksvd.fit(X, None, estimator="pca", params=params, n_jobs=None)
    with pytest.raises(ValueError, match="KPCA has Z = X: fit\\(X\\) takes no Z"):
        _ksvd.fit(X, X, estimator="kpca", params=params, n_jobs=None)


def test_transform_errors(X):
    est = ksvd.KSVD(n_components=2)
    for method in (est.transform, est.transform_cols, est.extend, est.extend_cols, est.save):
        with pytest.raises(NotFittedError):
            method(X)
    with pytest.raises(NotFittedError):
        est.to_bytes()
    est.fit(X)
    with pytest.raises(ValueError, match="X has 2 features, but KSVD is expecting 3 features"):
        est.transform(X[:, :2])
    with pytest.raises(ValueError, match="Z has 2 features, but KSVD is expecting 3 features"):
        est.transform_cols(X[:, :2])
    bad = X.copy()
    bad[0, 0] = np.inf
    with pytest.raises(ValueError, match="Input X contains infinity"):
        est.extend(bad)
    with pytest.raises(ValueError, match="n_jobs must be a positive number of threads"):
        est.set_params(n_jobs=0).transform(X)
    pre = ksvd.KSVD(kernel="precomputed").fit(X @ X[:5].T)  # 12 x 5
    with pytest.raises(ValueError, match="X has 12 features, but KSVD is expecting 5 features"):
        pre.transform(X @ X.T)
    with pytest.raises(ValueError, match="Z has 5 features, but KSVD is expecting 12 features"):
        pre.transform_cols(X[:5] @ X[:5].T)


def test_load_errors(tmp_path):
    with pytest.raises(ValueError, match="not a ksvd document"):
        ksvd.load(b"{not json")
    with pytest.raises(ValueError, match="No such file"):
        ksvd.load(tmp_path / "missing.json")
    with pytest.raises(TypeError):
        ksvd.load(3.5)


def test_graph_errors():
    with pytest.raises(ValueError, match="unknown graph input `symmetrised`"):
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
    with pytest.raises(ValueError, match="kernel='precomputed' makes no sense for a graph input"):
        ksvd.graph.embed(np.array([[0, 1], [1, 2]]), n_components=1, kernel="precomputed")
    with pytest.raises(ValueError, match="n_jobs must be a positive number of threads"):
        ksvd.graph.embed(np.array([[0, 1], [1, 2]]), n_components=1, n_jobs=0)


def test_native_csr_validation():
    # Malformed CSR reaching the native module (bypassing the Python conversion) is an error.
    from ksvd import _ksvd
    from ksvd._convert import native_params

    params = native_params(ksvd.KSVD(n_components=1, kernel="linear", solver="exact"))
    kw = dict(estimator="ksvd", params=params, n_jobs=None)
    bad = ((2, 2), np.array([0, 1, 2]), np.array([0, 5]), np.array([1.0, 1.0]))
    with pytest.raises(ValueError, match="index 5 out of bounds for column of length 2"):
        _ksvd.fit(bad, None, **kw)
    neg = ((2, 2), np.array([0, 1, 2]), np.array([0, -1]), np.array([1.0, 1.0]))
    with pytest.raises(ValueError, match="negative CSR indices entry -1"):
        _ksvd.fit(neg, None, **kw)
    with pytest.raises(TypeError):
        _ksvd.fit("not an array", None, **kw)
