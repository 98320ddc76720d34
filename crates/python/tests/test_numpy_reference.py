"""Results equal numpy on small cases: the kernel matrix written out in numpy, its SVD by
numpy.linalg, projections by matrix products."""

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import bandwidth_rule, center_both, kernel_matrix, reference_svd, svd_tolerances

import ksvd

N, M, D, R = 30, 25, 4, 3
KERNELS = [
    ("sne", dict(bandwidth=1.5)),
    ("rbf", dict(bandwidth=1.5)),
    ("laplacian", dict(bandwidth=2.0)),
    ("poly", dict(degree=2, coef0=1.0)),
    ("linear", dict()),
]


def data(rng):
    return rng.normal(size=(N, D)), rng.normal(size=(M, D))


def assert_matches_svd(model, G, solver_tol=0.0):
    """Singular values and vectors of ``model`` equal numpy's SVD of ``G`` within the bounds."""
    s_full = np.linalg.svd(G, compute_uv=False)
    U, s, V = reference_svd(G, R)
    ds, dvec = svd_tolerances(G, s_full, R, solver_tol)
    np.testing.assert_allclose(model.singular_values_, s, rtol=0, atol=ds)
    for i in range(R):
        assert np.max(np.abs(model.row_embedding_[:, i] - U[:, i])) <= dvec[i]
        assert np.max(np.abs(model.col_embedding_[:, i] - V[:, i])) <= dvec[i]
    return U, s, V, ds


@pytest.mark.parametrize("kernel,kw", KERNELS)
@pytest.mark.parametrize("solver", ["exact", "lanczos", "auto"])
def test_fit_equals_numpy_svd_of_the_kernel_matrix(rng, kernel, kw, solver):
    X, Z = data(rng)
    model = ksvd.KSVD(n_components=R, kernel=kernel, solver=solver, **kw).fit(X, Z=Z)
    G = kernel_matrix(kernel, X, Z, **kw)
    # tol=None: float64 data take 1e-8.
    assert_matches_svd(model, G, solver_tol=(model.tol or 1e-8) if solver != "exact" else 0.0)
    # residuals_ are those of the returned triplets, relative to s_1.
    U, s, V = model.row_embedding_, model.singular_values_, model.col_embedding_
    want = np.stack(
        [np.linalg.norm(G @ V - U * s, axis=0), np.linalg.norm(G.T @ U - V * s, axis=0)], axis=1
    ) / s[0]
    np.testing.assert_allclose(model.residuals_, want, rtol=0, atol=64 * np.finfo(float).eps * np.sqrt(N))


@pytest.mark.parametrize("kernel,kw", KERNELS)
@pytest.mark.parametrize("center", [False, True])
def test_projections_of_new_rows_and_columns(rng, kernel, kw, center):
    X, Z = data(rng)
    Xn, Zn = rng.normal(size=(7, D)), rng.normal(size=(6, D))
    model = ksvd.KSVD(n_components=R, kernel=kernel, center=center, solver="exact", **kw).fit(X, Z=Z)
    G = kernel_matrix(kernel, X, Z, **kw)
    Kx = kernel_matrix(kernel, Xn, Z, **kw)
    sne_norms = None
    if kernel == "sne":
        sne_norms = np.exp(-((X[:, None, :] - Z[None]) ** 2).sum(-1) / kw["bandwidth"] ** 2).sum(1)
    Kz = kernel_matrix(kernel, X, Zn, sne_normalizers=sne_norms, **kw)
    if center:
        # New rows (columns) are centred with the training column (row) means and their own
        # means over the training columns (rows), like the training matrix.
        Kx = Kx - Kx.mean(axis=1, keepdims=True) - G.mean(axis=0) + G.mean()
        Kz = Kz - Kz.mean(axis=0, keepdims=True) - G.mean(axis=1, keepdims=True) + G.mean()
        G = center_both(G)
    U, s, V, ds = assert_matches_svd(model, G)
    # k(x', Z) V S^-p moves by (backward error of G + ds) |V| / s_r^p.
    base = 64 * np.finfo(float).eps * np.sqrt(max(N, M)) * s[0] + ds
    s_ = model.singular_values_
    for p, transform, transform_cols in ((1.0, model.extend, model.extend_cols), (0.5, model.transform, model.transform_cols)):
        tol = base / s[-1] ** p
        # New samples: transform(x') = k(x', Z) V S^-1/2, extend(x') = k(x', Z) V S^-1 (eq. 10).
        np.testing.assert_allclose(transform(Xn), Kx @ model.col_embedding_ / s_**p, rtol=0, atol=tol)
        np.testing.assert_allclose(transform_cols(Zn), Kz.T @ model.row_embedding_ / s_**p, rtol=0, atol=tol)
        # At the training samples: U S^(1-p) and V S^(1-p).
        np.testing.assert_allclose(transform(X), model.row_embedding_ * s_ ** (1 - p), rtol=0, atol=tol * s[0])
        np.testing.assert_allclose(transform_cols(Z), model.col_embedding_ * s_ ** (1 - p), rtol=0, atol=tol * s[0])
    # fit_transform is the training rows' transform, U S^1/2, from the fit.
    again = ksvd.KSVD(n_components=R, kernel=kernel, center=center, solver="exact", **kw)
    np.testing.assert_array_equal(again.fit_transform(X, Z=Z), again.row_embedding_ * np.sqrt(again.singular_values_))


def test_default_bandwidth_is_the_papers_rule(rng):
    X, Z = data(rng)
    # The default kernel is the RBF with the rule gamma = k sqrt(M gamma_x), k = bandwidth_factor.
    model = ksvd.KSVD(n_components=R, solver="exact").fit(X, Z=Z)
    gamma = bandwidth_rule(X)
    assert model.bandwidth_ == pytest.approx(gamma, rel=16 * np.finfo(float).eps * X.size)
    assert ksvd.bandwidth_rule(X, 2.0) == pytest.approx(2 * gamma, rel=16 * np.finfo(float).eps * X.size)
    assert_matches_svd(model, kernel_matrix("rbf", X, Z, bandwidth=model.bandwidth_))
    wide = ksvd.KSVD(n_components=R, solver="exact", bandwidth_factor=3.0).fit(X, Z=Z)
    assert wide.bandwidth_ == pytest.approx(3 * gamma, rel=16 * np.finfo(float).eps * X.size)
    assert_matches_svd(wide, kernel_matrix("rbf", X, Z, bandwidth=wide.bandwidth_))
    # An explicit bandwidth turns the rule off; kernels without one report None.
    assert ksvd.KSVD(bandwidth=0.3, bandwidth_factor=3.0).fit(X).bandwidth_ == 0.3
    assert ksvd.KSVD(kernel="linear").fit(X).bandwidth_ is None


def test_z_omitted_means_z_equals_x(rng):
    X, _ = data(rng)
    a = ksvd.KSVD(n_components=R, kernel="sne", bandwidth=1.0, solver="exact").fit(X)
    b = ksvd.KSVD(n_components=R, kernel="sne", bandwidth=1.0, solver="exact").fit(X, Z=X)
    np.testing.assert_array_equal(a.singular_values_, b.singular_values_)
    assert_matches_svd(a, kernel_matrix("sne", X, X, bandwidth=1.0))


@pytest.mark.parametrize("center", [False, True])
def test_precomputed_kernel(rng, center):
    X, Z = data(rng)
    G = kernel_matrix("sne", X, Z, bandwidth=1.0)
    model = ksvd.KSVD(n_components=R, kernel="precomputed", center=center, solver="exact").fit(G)
    assert model.n_features_in_ == M
    Gc = center_both(G) if center else G
    _, s, _, ds = assert_matches_svd(model, Gc)
    Xn, Zn = rng.normal(size=(5, D)), rng.normal(size=(4, D))
    sne_norms = np.exp(-((X[:, None, :] - Z[None]) ** 2).sum(-1)).sum(1)
    Kn = kernel_matrix("sne", Xn, Z, bandwidth=1.0)  # new rows: k(x', Z), 5 x M
    Kc = kernel_matrix("sne", X, Zn, bandwidth=1.0, sne_normalizers=sne_norms).T  # new columns: k(X, z')^T, 4 x N
    if center:
        Kn = Kn - Kn.mean(axis=1, keepdims=True) - G.mean(axis=0) + G.mean()
        Kc = Kc - Kc.mean(axis=1, keepdims=True) - G.mean(axis=1) + G.mean()
    tol = (64 * np.finfo(float).eps * np.sqrt(M) * s[0] + ds) / s[-1]
    U, s_, V = model.row_embedding_, model.singular_values_, model.col_embedding_
    np.testing.assert_allclose(model.transform(kernel_matrix("sne", Xn, Z, bandwidth=1.0)), Kn @ V / np.sqrt(s_), rtol=0, atol=tol)
    np.testing.assert_allclose(model.extend(kernel_matrix("sne", Xn, Z, bandwidth=1.0)), Kn @ V / s_, rtol=0, atol=tol)
    K_cols = kernel_matrix("sne", X, Zn, bandwidth=1.0, sne_normalizers=sne_norms).T
    np.testing.assert_allclose(model.transform_cols(K_cols), Kc @ U / np.sqrt(s_), rtol=0, atol=tol)
    np.testing.assert_allclose(model.extend_cols(K_cols), Kc @ U / s_, rtol=0, atol=tol)
    # At the training samples: the rows of G give U S^1/2, its columns V S^1/2.
    np.testing.assert_allclose(model.transform(G), U * np.sqrt(s_), rtol=0, atol=tol * s[0])
    np.testing.assert_allclose(model.transform_cols(G.T), V * np.sqrt(s_), rtol=0, atol=tol * s[0])
    # The same fit as from the samples.
    direct = ksvd.KSVD(n_components=R, kernel="sne", bandwidth=1.0, center=center, solver="exact").fit(X, Z=Z)
    np.testing.assert_allclose(model.singular_values_, direct.singular_values_, rtol=0, atol=ds)


@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_sparse_input_equals_dense(rng, fmt):
    X, Z = data(rng)
    X[X < 0.3] = 0.0
    Z[Z < 0.3] = 0.0
    dense = ksvd.KSVD(n_components=R, kernel="rbf", bandwidth=2.0, solver="exact").fit(X, Z=Z)
    sparse = ksvd.KSVD(n_components=R, kernel="rbf", bandwidth=2.0, solver="exact").fit(
        sp.csr_matrix(X).asformat(fmt), Z=sp.csr_array(Z).asformat(fmt)
    )
    G = kernel_matrix("rbf", X, Z, bandwidth=2.0)
    _, s, _, ds = assert_matches_svd(sparse, G)
    np.testing.assert_allclose(sparse.singular_values_, dense.singular_values_, rtol=0, atol=ds)
    Xn = rng.normal(size=(4, D))
    tol = (64 * np.finfo(float).eps * np.sqrt(M) * s[0] + ds) / s[-1]
    np.testing.assert_allclose(sparse.transform(sp.csr_matrix(Xn)), dense.transform(Xn), rtol=0, atol=tol)


def test_float32_in_float32_out(rng):
    # scikit-learn's preserves_dtype: float32 input gives float32 attributes and projections,
    # and the stored G is kept and multiplied in float32: the exact solver's singular values
    # are those of G rounded to float32, within float32 rounding of the float64 fit's.
    X, Z = data(rng)
    X32, Z32 = X.astype(np.float32), Z.astype(np.float32)
    model = ksvd.KSVD(n_components=R, kernel="rbf", bandwidth=1.5, solver="exact").fit(X32, Z=Z32)
    ref = ksvd.KSVD(n_components=R, kernel="rbf", bandwidth=1.5, solver="exact").fit(X32.astype(np.float64), Z=Z32.astype(np.float64))
    G32 = kernel_matrix("rbf", X32.astype(np.float64), Z32.astype(np.float64), bandwidth=1.5).astype(np.float32)
    s_rounded = np.linalg.svd(G32.astype(np.float64), compute_uv=False)[:R]
    eps32 = np.finfo(np.float32).eps
    for name in ("singular_values_", "row_embedding_", "col_embedding_"):
        assert getattr(model, name).dtype == np.float32
    np.testing.assert_allclose(model.singular_values_, s_rounded, rtol=0, atol=4 * eps32 * s_rounded[0])
    np.testing.assert_allclose(model.singular_values_, ref.singular_values_, rtol=0, atol=1e-5 * s_rounded[0])
    for method in ("transform", "extend"):
        assert getattr(model, method)(X32).dtype == np.float32, method
    assert ksvd.KSVD(n_components=R, bandwidth=1.5).fit_transform(X32, Z=Z32).dtype == np.float32
    assert model.transform_cols(Z32).dtype == np.float32
    # The default solver takes float32's tolerance, and certifies it.
    auto = ksvd.KSVD(n_components=R, kernel="rbf", bandwidth=1.5).fit(X32, Z=Z32)
    assert auto.residuals_.max() <= 1e-5
    np.testing.assert_allclose(auto.singular_values_, s_rounded, rtol=0, atol=1e-5 * s_rounded[0])
    with pytest.raises(ValueError, match="tol"):
        ksvd.KSVD(n_components=R, kernel="rbf", bandwidth=1.5, tol=1e-8).fit(X32, Z=Z32)
    assert model.transform(X).dtype == np.float64  # the input's dtype, not the fit's


@pytest.mark.parametrize("solver", ["rsvd", "nystrom"])
def test_approximate_solvers_are_exact_on_a_low_rank_kernel(rng, solver):
    # The linear kernel in R^4 gives rank(G) = 4: the randomized range finder (rank 3 plus 10
    # oversampling directions) captures all of it, and the Nystrom method with every row and
    # column sampled reproduces G, so both return the exact SVD up to rounding.
    X, Z = data(rng)
    model = ksvd.KSVD(n_components=R, kernel="linear", solver=solver, n_landmarks=max(N, M), random_state=3).fit(X, Z=Z)
    assert_matches_svd(model, kernel_matrix("linear", X, Z))


def test_random_state_is_the_seed(rng):
    X, Z = data(rng)
    fit = lambda seed: ksvd.KSVD(n_components=R, solver="nystrom", n_landmarks=12, random_state=seed).fit(X, Z=Z)
    np.testing.assert_array_equal(fit(4).singular_values_, fit(4).singular_values_)
    np.testing.assert_array_equal(fit(None).singular_values_, fit(0).singular_values_)
    assert not np.array_equal(fit(4).singular_values_, fit(5).singular_values_)


@pytest.mark.parametrize("kernel,kw", [k for k in KERNELS if k[0] != "sne"])
def test_kpca_is_the_eigendecomposition_of_the_centred_kernel(rng, kernel, kw):
    X, _ = data(rng)
    model = ksvd.KPCA(n_components=R, kernel=kernel, solver="exact", **kw).fit(X)
    K = center_both(kernel_matrix(kernel, X, X, **kw))
    w, E = np.linalg.eigh(K)
    order = np.argsort(-w)[:R]
    w, E = w[order], E[:, order]
    s_full = np.sort(np.abs(np.linalg.eigvalsh(K)))[::-1]
    ds, dvec = svd_tolerances(K, s_full, R)
    if kernel == "laplacian":
        # The core evaluates ||x - z||^2 as ||x||^2 + ||z||^2 - 2 x.z (GEMM identity), off by
        # about (d + 2) eps (||x||^2 + ||z||^2); on the diagonal (x = z) the square root turns
        # that into sqrt((d + 2) eps 2 max ||x||^2) / gamma per entry, a diagonal perturbation.
        diag = np.sqrt((D + 2) * np.finfo(float).eps * 2 * np.max((X**2).sum(axis=1))) / kw["bandwidth"]
        gaps = dvec / ds
        ds, dvec = ds + diag, (ds + diag) * gaps
    np.testing.assert_allclose(model.eigenvalues_, w, rtol=0, atol=ds)
    for i in range(R):
        e = E[:, i] * np.sign(E[np.argmax(np.abs(E[:, i])), i])
        assert np.max(np.abs(model.eigenvectors_[:, i] - e)) <= dvec[i]
        # Symmetric PSD: the right singular vectors are the left ones.
        assert np.max(np.abs(model.col_embedding_[:, i] - e)) <= dvec[i]
    # The symmetric model projects new columns like new rows.
    Xn = rng.normal(size=(4, D))
    np.testing.assert_allclose(model.transform_cols(Xn), model.transform(Xn), rtol=0, atol=1e3 * np.finfo(float).eps * w[0])


@pytest.mark.parametrize("graph_input", ksvd._ksvd.GRAPH_INPUTS)  # the core's names: a new one needs a reference here
def test_graph_embedding_equals_numpy(rng, graph_input):
    n = 20
    A = (rng.random((n, n)) < 0.2).astype(float)
    np.fill_diagonal(A, 0.0)
    edges = np.argwhere(A)
    emb = ksvd.graph.embed(edges, n_components=R, n_nodes=n, graph_input=graph_input, kernel="sne", bandwidth=1.0, solver="exact")
    T = A.copy()
    if "self-loops" in graph_input:
        T = T + np.eye(n)
    if graph_input.startswith("row-normalized"):
        d = T.sum(axis=1, keepdims=True)
        T = np.divide(T, d, out=np.zeros_like(T), where=d > 0)
    # x_i = T[i, :] (out-links), z_j = T[:, j] (in-links).
    G = kernel_matrix("sne", T, T.T, bandwidth=1.0)
    U, s, V = reference_svd(G, R)
    s_full = np.linalg.svd(G, compute_uv=False)
    ds, dvec = svd_tolerances(G, s_full, R)
    np.testing.assert_allclose(emb.singular_values, s, rtol=0, atol=ds)
    for i in range(R):
        assert np.max(np.abs(emb.row_embedding[:, i] - U[:, i])) <= dvec[i]
        assert np.max(np.abs(emb.col_embedding[:, i] - V[:, i])) <= dvec[i]
    # The same graph as a scipy sparse matrix gives the same embedding.
    again = ksvd.graph.embed(sp.csr_array(A), n_components=R, graph_input=graph_input, kernel="sne", bandwidth=1.0, solver="exact")
    np.testing.assert_array_equal(again.singular_values, emb.singular_values)


def test_graph_default_bandwidth_uses_the_transformed_adjacency(rng):
    n = 15
    A = (rng.random((n, n)) < 0.3).astype(float)
    emb = ksvd.graph.embed(sp.csr_array(A), n_components=2, graph_input="row-normalized", solver="exact")
    d = A.sum(axis=1, keepdims=True)
    T = np.divide(A, d, out=np.zeros_like(A), where=d > 0)
    assert emb.bandwidth == pytest.approx(bandwidth_rule(T), rel=16 * np.finfo(float).eps * A.size)
