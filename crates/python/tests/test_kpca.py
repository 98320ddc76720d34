"""KPCA is scikit-learn's KernelPCA, and KSVD with Z = X and centring is KPCA.

``KPCA.transform`` is ``k~(x', X) A Lambda^-1/2`` (``A Lambda^1/2`` at the training samples),
``KernelPCA.transform``; both fix the sign of each eigenvector by its largest-magnitude entry, so
the outputs are compared as they are. Tolerances: the dense eigensolvers agree to
``c eps n lambda_1`` on the eigenvalues and to that over the eigengap on the eigenvectors;
the transforms scale that by ``sqrt(lambda_1)``; 1e-8 (absolute) covers both with room.
"""

import numpy as np
import pytest
from sklearn.decomposition import KernelPCA
from sklearn.metrics.pairwise import rbf_kernel

import ksvd

N, D, R = 120, 5, 4


@pytest.fixture
def samples():
    rng = np.random.default_rng(34)
    return rng.normal(size=(N, D)), rng.normal(size=(15, D))


@pytest.mark.parametrize("solver", ["exact", "auto", "lanczos"])
def test_kpca_transform_is_kernelpca_transform(samples, solver):
    X, Xn = samples
    g = 0.1
    ours = ksvd.KPCA(n_components=R, kernel="rbf", gamma=g, solver=solver, tol=1e-12).fit(X)
    ref = KernelPCA(n_components=R, kernel="rbf", gamma=g, eigen_solver="dense").fit(X)
    np.testing.assert_allclose(ours.eigenvalues_, ref.eigenvalues_, rtol=0, atol=1e-8)
    np.testing.assert_allclose(ours.eigenvectors_, ref.eigenvectors_, rtol=0, atol=1e-8)
    np.testing.assert_allclose(ours.transform(X), ref.transform(X), rtol=0, atol=1e-8)
    np.testing.assert_allclose(ours.transform(Xn), ref.transform(Xn), rtol=0, atol=1e-8)
    np.testing.assert_allclose(ours.fit_transform(X), ref.fit_transform(X), rtol=0, atol=1e-8)
    # The bandwidth this gamma means: exp(-g d^2) = exp(-d^2 / bandwidth^2).
    assert ours.bandwidth_ == pytest.approx(1 / np.sqrt(g), rel=1e-15)


def test_kpca_polynomial_kernel_is_kernelpca_with_unit_gamma(samples):
    # scikit-learn's (gamma x.z + coef0)^degree with gamma = 1 is ksvd's (x.z + coef0)^degree.
    X, Xn = samples
    ours = ksvd.KPCA(n_components=R, kernel="poly", degree=3, coef0=0.5, solver="exact").fit(X)
    ref = KernelPCA(n_components=R, kernel="poly", gamma=1.0, degree=3, coef0=0.5, eigen_solver="dense").fit(X)
    lam = ref.eigenvalues_
    tol = 1e-12 * lam[0]
    np.testing.assert_allclose(ours.eigenvalues_, lam, rtol=0, atol=tol)
    np.testing.assert_allclose(ours.transform(Xn), ref.transform(Xn), rtol=0, atol=1e3 * tol / np.sqrt(lam[-1]))


def test_kpca_on_a_precomputed_kernel_is_kernelpca_on_it(samples):
    X, Xn = samples
    K, K_new = rbf_kernel(X, gamma=0.2), rbf_kernel(Xn, X, gamma=0.2)
    ours = ksvd.KPCA(n_components=R, kernel="precomputed").fit(K)
    ref = KernelPCA(n_components=R, kernel="precomputed", eigen_solver="dense").fit(K)
    np.testing.assert_allclose(ours.eigenvalues_, ref.eigenvalues_, rtol=0, atol=1e-8)
    np.testing.assert_allclose(ours.transform(K_new), ref.transform(K_new), rtol=0, atol=1e-8)
    np.testing.assert_allclose(ours.transform(K), ref.transform(K), rtol=0, atol=1e-8)
    # The same as KPCA on the samples (the kernel entries differ by rounding only).
    on_samples = ksvd.KPCA(n_components=R, gamma=0.2, solver="exact").fit(X)
    np.testing.assert_allclose(ours.transform(K_new), on_samples.transform(Xn), rtol=0, atol=1e-8)


def test_kpca_nystrom_is_the_symmetric_method(samples):
    # The symmetric Nystrom method with every sample as a landmark is the exact
    # eigendecomposition; the landmarks it drew are reported (one set: I = J).
    X, Xn = samples
    exact = ksvd.KPCA(n_components=R, gamma=0.1, solver="exact").fit(X)
    full = ksvd.KPCA(n_components=R, gamma=0.1, solver="nystrom", n_landmarks=N).fit(X)
    np.testing.assert_array_equal(np.sort(full.landmark_rows_), np.arange(N))
    np.testing.assert_array_equal(full.landmark_rows_, full.landmark_cols_)
    np.testing.assert_allclose(full.eigenvalues_, exact.eigenvalues_, rtol=0, atol=1e-10)
    np.testing.assert_allclose(full.transform(Xn), exact.transform(Xn), rtol=0, atol=1e-8)
    part = ksvd.KPCA(n_components=R, gamma=0.1, solver="nystrom", n_landmarks=40, random_state=3).fit(X)
    assert len(part.landmark_rows_) == 40 and len(set(part.landmark_rows_)) == 40
    # Symmetric: the eigenvectors are the right vectors too (the asymmetric method's are not).
    np.testing.assert_array_equal(part.row_embedding_, part.col_embedding_)


def test_ksvd_with_z_equal_x_and_centring_is_kpca(samples):
    X, Xn = samples
    kpca = ksvd.KPCA(n_components=R, gamma=0.1, solver="exact").fit(X)
    ksvd_ = ksvd.KSVD(n_components=R, kernel="rbf", gamma=0.1, center=True, solver="exact").fit(X)
    np.testing.assert_allclose(ksvd_.singular_values_, kpca.eigenvalues_, rtol=0, atol=1e-10)
    for data in (X, Xn):
        np.testing.assert_allclose(ksvd_.transform(data), kpca.transform(data), rtol=0, atol=1e-8)
        np.testing.assert_allclose(ksvd_.transform_cols(data), kpca.transform(data), rtol=0, atol=1e-8)
