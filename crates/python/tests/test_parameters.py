"""Every parameter of the Python column reaches the core and does what docs/conventions.md says:
scikit-learn's gamma, the compatibility of a data matrix (Algorithm 1), the solver options, your
own landmarks, the memory budget and the threads."""

import numpy as np
import pytest
from conftest import kernel_matrix, reference_svd, svd_tolerances
from sklearn.metrics.pairwise import rbf_kernel

import ksvd

EPS = np.finfo(float).eps


@pytest.fixture
def sets(rng):
    return rng.normal(size=(40, 4)), rng.normal(size=(30, 4))


@pytest.mark.parametrize("kernel", ["rbf", "sne", "laplacian"])
def test_gamma_is_scikit_learns(sets, kernel):
    X, Z = sets
    g = 0.3
    est = ksvd.KSVD(n_components=3, kernel=kernel, gamma=g, solver="exact").fit(X, Z=Z)
    # rbf, sne: exp(-g d^2) = exp(-d^2 / bandwidth^2); laplacian: exp(-g d) = exp(-d / bandwidth).
    bandwidth = 1 / np.sqrt(g) if kernel != "laplacian" else 1 / g
    assert est.bandwidth_ == bandwidth
    same = ksvd.KSVD(n_components=3, kernel=kernel, bandwidth=bandwidth, solver="exact").fit(X, Z=Z)
    np.testing.assert_array_equal(est.singular_values_, same.singular_values_)
    if kernel == "rbf":
        G = rbf_kernel(X, Z, gamma=g)  # scikit-learn's own kernel
    else:
        G = kernel_matrix(kernel, X, Z, bandwidth=bandwidth)
    _, s, _ = reference_svd(G, 3)
    ds, _ = svd_tolerances(G, np.linalg.svd(G, compute_uv=False), 3)
    np.testing.assert_allclose(est.singular_values_, s, rtol=0, atol=ds)


def test_compat_a0_makes_the_columns_of_the_data_matrix_comparable(rng):
    # a0 with M > N: C_x = ((A A^T)^+ A)^T maps the rows to x'_i = A_i C_x = e_i, and the column
    # samples are the columns of A, so G_ij = k(e_i, A[:, j]).
    A = rng.normal(size=(8, 12))
    b = 2.0
    est = ksvd.KSVD(n_components=3, kernel="rbf", bandwidth=b, compat="a0", solver="exact").fit(A)
    C = (np.linalg.pinv(A @ A.T) @ A).T
    G = kernel_matrix("rbf", A @ C, A.T, bandwidth=b)
    U, s, V = reference_svd(G, 3)
    ds, dvec = svd_tolerances(G, np.linalg.svd(G, compute_uv=False), 3)
    np.testing.assert_allclose(est.singular_values_, s, rtol=0, atol=1e3 * ds)
    np.testing.assert_allclose(est.row_embedding_, U, rtol=0, atol=1e3 * dvec.max())
    assert est.n_features_in_ == 12
    # New rows of the data matrix are mapped like the training rows; new columns are given one
    # per row (length N). At the training rows and columns: U S^1/2 and V S^1/2.
    tol = 1e3 * ds / np.sqrt(s[-1])
    np.testing.assert_allclose(est.transform(A), U * np.sqrt(s), rtol=0, atol=tol)
    np.testing.assert_allclose(est.transform_cols(A.T), V * np.sqrt(s), rtol=0, atol=tol)
    new = rng.normal(size=(3, 12))
    want = kernel_matrix("rbf", new @ C, A.T, bandwidth=b) @ V / s
    np.testing.assert_allclose(est.extend(new), want, rtol=0, atol=1e3 * ds / s[-1])
    with pytest.raises(ValueError, match="Z has 12 features, but KSVD is expecting 8 features"):
        est.transform_cols(A)


# Every compatibility of the core: those of one closed-form matrix C fit; a1-shared (both sides
# mapped, no single C) and a3 (learned with a downstream task) are refused by name.
NO_SINGLE_MATRIX = {"a1-shared": "has no single matrix C", "a3": "has no closed form"}


@pytest.mark.parametrize("compat", ksvd._ksvd.COMPATS)
def test_every_compat_fits_and_extends_its_training_data(rng, compat):
    A = rng.normal(size=(15, 9))  # N > M: the columns are mapped
    if compat in NO_SINGLE_MATRIX:
        with pytest.raises(ValueError, match=f"compatibility {compat} {NO_SINGLE_MATRIX[compat]}"):
            ksvd.KSVD(n_components=3, compat=compat).fit(A)
        return
    est = ksvd.KSVD(n_components=3, bandwidth=3.0, compat=compat, solver="exact", random_state=2).fit(A)
    s = est.singular_values_
    tol = 1e3 * EPS * np.sqrt(A.size) * s[0] / s[-1]
    np.testing.assert_allclose(est.extend(A), est.row_embedding_, rtol=0, atol=tol)
    np.testing.assert_allclose(est.extend_cols(A.T), est.col_embedding_, rtol=0, atol=tol)
    assert ksvd.load(est.to_bytes()).get_params()["compat"] == compat


def test_solver_options_reach_the_solver(rng):
    # A slowly decaying spectrum: the randomized SVD without oversampling or power iterations
    # misses it, with them it is exact to rounding.
    X = rng.normal(size=(150, 3))
    exact = ksvd.KSVD(n_components=5, bandwidth=0.5, solver="exact").fit(X)
    s = exact.singular_values_
    rough = ksvd.KSVD(n_components=5, bandwidth=0.5, solver="rsvd", oversampling=0, power_iters=0).fit(X)
    sharp = ksvd.KSVD(n_components=5, bandwidth=0.5, solver="rsvd", oversampling=30, power_iters=8).fit(X)
    assert np.max(np.abs(rough.singular_values_ - s)) > 1e-3 * s[0]
    assert np.max(np.abs(sharp.singular_values_ - s)) < 1e-8 * s[0]
    # tol bounds every triplet's residual.
    for tol in (1e-3, 1e-11):
        est = ksvd.KSVD(n_components=5, bandwidth=0.5, solver="lanczos", tol=tol).fit(X)
        assert est.residuals_.max() <= tol
    loose = ksvd.KSVD(n_components=5, bandwidth=0.5, solver="block-krylov", tol=1e-10).fit(X)
    np.testing.assert_allclose(loose.singular_values_, s, rtol=0, atol=1e-8 * s[0])


def test_nystrom_landmarks_drawn_and_given(sets):
    X, Z = sets
    drawn = ksvd.KSVD(n_components=3, bandwidth=2.0, solver="nystrom", n_landmarks=20, n_col_landmarks=12, random_state=1).fit(X, Z=Z)
    assert drawn.residuals_ is None
    assert len(drawn.landmark_rows_) == 20 and len(drawn.landmark_cols_) == 12
    assert drawn.landmark_rows_.max() < 40 and drawn.landmark_cols_.max() < 30
    # Given landmarks are the ones used (any order); with all rows and columns Nystrom is exact.
    rows, cols = [7, 3, 31, 12, 0, 25], [4, 20, 1, 9, 17]
    given = ksvd.KSVD(n_components=3, bandwidth=2.0, solver="nystrom", landmark_rows=rows, landmark_cols=cols).fit(X, Z=Z)
    assert sorted(given.landmark_rows_) == sorted(rows) and sorted(given.landmark_cols_) == sorted(cols)
    every = ksvd.KSVD(n_components=3, bandwidth=2.0, solver="nystrom", landmark_rows=np.arange(40)[::-1], landmark_cols=range(30)).fit(X, Z=Z)
    exact = ksvd.KSVD(n_components=3, bandwidth=2.0, solver="exact").fit(X, Z=Z)
    np.testing.assert_allclose(every.singular_values_, exact.singular_values_, rtol=0, atol=1e-10 * exact.singular_values_[0])
    # The given landmarks travel with the model.
    again = ksvd.load(given.to_bytes())
    assert sorted(again.get_params()["landmark_rows"]) == sorted(rows)


def test_the_memory_budget_bounds_the_fit(rng):
    X = rng.normal(size=(600, 3))
    # A dense SVD of the 600 x 600 G needs more than 1 MiB: refused; the default solver stays
    # within the budget (matrix-free) and gives the same spectrum.
    with pytest.raises(ValueError, match="over the memory budget of 1.0 MiB"):
        ksvd.KSVD(n_components=3, solver="exact", memory_budget="1M").fit(X)
    with pytest.raises(ValueError, match="over the memory budget of 1.0 MiB"):
        ksvd.KSVD(n_components=3, solver="exact", memory_budget=1 << 20).fit(X)
    small = ksvd.KSVD(n_components=3, memory_budget="1M").fit(X)
    big = ksvd.KSVD(n_components=3, memory_budget=1 << 30).fit(X)
    s = big.singular_values_
    np.testing.assert_allclose(small.singular_values_, s, rtol=0, atol=1e-7 * s[0])
    # A run-time setting: not part of the model.
    assert ksvd.load(small.to_bytes()).memory_budget is None


def test_n_jobs_runs_the_call_in_that_many_threads(sets):
    X, Z = sets
    fits = [ksvd.KSVD(n_components=3, n_jobs=n).fit(X, Z=Z) for n in (None, 1, 2, -1)]
    s = fits[0].singular_values_
    for est in fits[1:]:
        np.testing.assert_allclose(est.singular_values_, s, rtol=0, atol=1e-12 * s[0])
        np.testing.assert_allclose(est.transform(X), fits[0].transform(X), rtol=0, atol=1e-10)
    emb = ksvd.graph.embed(np.array([[0, 1], [1, 2], [2, 0], [2, 3]]), n_components=2, bandwidth=1.0, n_jobs=1)
    assert emb.singular_values.shape == (2,)
