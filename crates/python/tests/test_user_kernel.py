"""Kernels of your own: a callable kernel(A, B) evaluated block by block from Rust gives what the
built-in kernel it imitates gives; it saves, pickles and loads; its failures are clear errors."""

import pickle

import numpy as np
import pytest
from sklearn.decomposition import KernelPCA

import ksvd


def rbf(A, B):
    """The built-in rbf with bandwidth 1.5, written by hand: exp(-||a - b||^2 / 1.5^2)."""
    d = (A**2).sum(1)[:, None] + (B**2).sum(1)[None, :] - 2.0 * A @ B.T
    return np.exp(-np.maximum(d, 0.0) / 1.5**2)


def shifted(A, B):
    """An asymmetric kernel: exp(-||a - b - 0.3||^2)."""
    return rbf(A, B + 0.3)


def data(seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(60, 3)), rng.normal(size=(45, 3))


def close(a, b, scale=1.0):
    """Agreement to rounding of the two GEMM orders (tolerance scaled by eps, size and scale)."""
    n = max(a.shape[0], 1)
    np.testing.assert_allclose(a, b, rtol=0, atol=1e3 * np.finfo(float).eps * n * scale)


@pytest.mark.parametrize("solver", ["exact", "lanczos"])
def test_a_callable_rbf_is_the_builtin_rbf(solver):
    X, Z = data()
    mine = ksvd.KSVD(n_components=4, kernel=rbf, solver=solver).fit(X, Z=Z)
    builtin = ksvd.KSVD(n_components=4, kernel="rbf", bandwidth=1.5, solver=solver).fit(X, Z=Z)
    s = builtin.singular_values_
    close(mine.singular_values_, s, s[0])
    close(mine.row_embedding_, builtin.row_embedding_, s[0] / (s[-2] - s[-1]))
    close(mine.transform(X[:7]), builtin.transform(X[:7]), s[0])
    close(mine.transform_cols(Z[:5]), builtin.transform_cols(Z[:5]), s[0])


def test_an_asymmetric_callable_satisfies_the_svd_residuals():
    X, Z = data(1)
    model = ksvd.KSVD(n_components=3, kernel=shifted, solver="exact").fit(X, Z=Z)
    G = shifted(X, Z)
    U, s, V = model.row_embedding_, model.singular_values_, model.col_embedding_
    np.testing.assert_allclose(G @ V, U * s, atol=1e-12 * s[0])
    np.testing.assert_allclose(G.T @ U, V * s, atol=1e-12 * s[0])
    np.testing.assert_allclose(s, np.linalg.svd(G, compute_uv=False)[:3], rtol=1e-12)


def test_kpca_with_a_callable_is_scikit_learns_kernel_pca():
    X, _ = data(2)
    ours = ksvd.KPCA(n_components=3, kernel=rbf, solver="exact").fit(X)
    sk = KernelPCA(n_components=3, kernel="rbf", gamma=1 / 1.5**2, eigen_solver="dense").fit(X)
    np.testing.assert_allclose(ours.transform(X[:9]), sk.transform(X[:9]), atol=1e-8)


def test_models_with_a_callable_save_pickle_and_load(tmp_path):
    X, Z = data(3)
    model = ksvd.KSVD(n_components=3, kernel=shifted).fit(X, Z=Z)
    want = model.transform(X[:4])
    path = tmp_path / "model.json"
    model.save(path)
    with pytest.raises(ValueError, match="shifted"):
        ksvd.load(path)
    loaded = ksvd.load(path, kernel=shifted)
    np.testing.assert_array_equal(loaded.transform(X[:4]), want)
    with pytest.raises(ValueError):
        ksvd.load(path, kernel=rbf)  # another name than the one recorded
    again = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(again.transform(X[:4]), want)


def test_a_callable_that_fails_says_how():
    X, Z = data(4)

    def raises(A, B):
        raise RuntimeError("boom")

    def wrong_shape(A, B):
        return np.zeros((len(A), len(B) + 1))

    def nan(A, B):
        out = rbf(A, B)
        out[0, 0] = np.nan
        return out

    def not_an_array(A, B):
        return "no"

    for f, message in [
        (raises, "boom"),
        (wrong_shape, "shape|block"),
        (nan, "finite|NaN|nan"),
        (not_an_array, "array"),
    ]:
        with pytest.raises(ValueError, match=message):
            ksvd.KSVD(n_components=2, kernel=f).fit(X, Z=Z)
    with pytest.raises(ValueError, match="bandwidth"):
        ksvd.KSVD(kernel=rbf, bandwidth=2.0).fit(X, Z=Z)
