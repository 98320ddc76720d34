"""scikit-learn estimators over the Rust model: :class:`KSVD` and :class:`KPCA`."""

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import check_array, check_is_fitted, validate_data

from . import _ksvd
from ._convert import KERNELS, native_params, to_native

_ACCEPT_SPARSE = ("csr", "csc")
_DTYPES = (np.float64, np.float32)


class _KernelSVDBase(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Fitting and row projections shared by :class:`KSVD` and :class:`KPCA`."""

    _kernel_choices = KERNELS
    # Whether a precomputed kernel matrix must be square (KPCA's K(X, X)); KSVD's G is n x m.
    _square_precomputed = False

    def __init__(
        self,
        n_components=2,
        *,
        kernel="sne",
        bandwidth=None,
        degree=2,
        coef0=1.0,
        center=False,
        solver="auto",
        n_landmarks=None,
        sampling="uniform",
        tol=1e-10,
        random_state=None,
    ):
        self.n_components = n_components
        self.kernel = kernel
        self.bandwidth = bandwidth
        self.degree = degree
        self.coef0 = coef0
        self.center = center
        self.solver = solver
        self.n_landmarks = n_landmarks
        self.sampling = sampling
        self.tol = tol
        self.random_state = random_state

    def _fit(self, X, Z):
        params = native_params(self, self._kernel_choices)
        X = validate_data(self, X, accept_sparse=_ACCEPT_SPARSE, dtype=_DTYPES)
        if self.kernel == "precomputed" and self._square_precomputed and X.shape[0] != X.shape[1]:
            raise ValueError(f"{type(self).__name__} with kernel='precomputed' needs a square kernel matrix; got shape {X.shape}")
        if Z is not None:
            Z = check_array(Z, accept_sparse=_ACCEPT_SPARSE, dtype=_DTYPES, input_name="Z")
            Z = to_native(Z)
        model = _ksvd.fit(to_native(X), Z, **params)
        self._model = model
        self.singular_values_ = model.singular_values()
        self.row_embedding_ = model.row_embedding()
        self.col_embedding_ = model.col_embedding()
        self.residuals_ = model.residuals()  # None for the Nystrom solver
        self.bandwidth_ = model.bandwidth
        self._n_features_out = self.singular_values_.shape[0]
        return self

    def transform(self, X):
        """Out-of-sample extension to new row samples, ``k(X, Z) V S^-1`` (eq. 10 of the paper).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            New row samples; with ``kernel="precomputed"``, the kernel block ``K(X, Z)`` of
            shape (n_samples, m).

        Returns
        -------
        ndarray of shape (n_samples, n_components)
            At the training rows these are the rows of ``U`` (``row_embedding_``); the kernel
            is centred like the training matrix when ``center=True``, and a Nystrom model
            extends through its landmarks.
        """
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse=_ACCEPT_SPARSE, dtype=_DTYPES, reset=False)
        return self._model.transform_rows(to_native(X))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.pairwise = self.kernel == "precomputed"
        return tags


class KSVD(_KernelSVDBase):
    """Kernel SVD with an asymmetric kernel (Tao, Tonin et al., ICML 2024).

    Fits the top-``n_components`` singular triplets of ``G_ij = k(x_i, z_j)`` between row
    samples ``X`` (n) and column samples ``Z`` (m; ``Z = X`` when omitted), which solve the
    Coupled Covariances Eigenproblem (Proposition 3.4): ``B_phi = U``, ``B_psi = V``. The
    computation is the Rust crate ``ksvd`` (``Ksvd::params()...fit_samples(x, z)``), run with
    the GIL released.

    Parameters
    ----------
    n_components : int, default=2
        Rank ``r``: the number of singular triplets, ``1 <= r <= min(n, m)``.
    kernel : {"sne", "rbf", "laplacian", "poly", "linear", "precomputed"}, default="sne"
        ``rbf``: ``exp(-||x - z||^2 / bandwidth^2)``; ``laplacian``:
        ``exp(-||x - z|| / bandwidth)``; ``sne``: the RBF normalised over Z (every row of
        ``G`` sums to one; asymmetric even for ``Z = X``); ``poly``: ``(x . z + coef0)^degree``;
        ``linear``: ``x . z``; ``precomputed``: ``X`` is ``G`` itself (n x m).
    bandwidth : float or None, default=None
        The paper's ``gamma`` (a length, not scikit-learn's inverse squared ``gamma``). None:
        the paper's rule ``gamma = sqrt(M gamma_x)``, ``gamma_x`` the variance of all entries of
        ``X`` and ``M`` its number of features. The value used is ``bandwidth_``.
    degree : int, default=2
        Degree of the polynomial kernel.
    coef0 : float, default=1.0
        Offset of the polynomial kernel.
    center : bool, default=False
        Centre ``G`` on both sides, ``H_n G H_m`` (section 2.2); projections of new data are
        centred the same way.
    solver : {"auto", "exact", "lanczos", "rsvd", "nystrom"}, default="auto"
        ``exact``: dense SVD of ``G``; ``lanczos``: restarted Lanczos bidiagonalisation
        (matrix-free); ``rsvd``: randomized SVD; ``nystrom``: the asymmetric Nystrom method
        with ``n_landmarks`` sampled rows and columns; ``auto``: the core's choice (a dense
        SVD when that is cheapest and fits its memory budget, block Lanczos otherwise), every
        triplet meeting ``tol``.
    n_landmarks : int or None, default=None
        Sampled rows and columns of the Nystrom solver (capped at n and m; required for it).
    sampling : {"uniform", "squared-norm", "adaptive", "greedy"}, default="uniform"
        Landmark scheme of the Nystrom solver (``ksvd::Sampling``): ``uniform`` (the paper's),
        ``squared-norm`` (length-squared with importance weights), ``adaptive`` (randomly
        pivoted cross approximation of ``G``; with ``n_landmarks = min(n, m)`` it reproduces
        ``G``) or ``greedy`` (deterministic cross approximation after a seeded first block).
        Ignored by the other solvers.
    tol : float, default=1e-10
        Relative residual tolerance (``||G v - s u|| <= tol s_1``) of the ``auto`` and
        ``lanczos`` solvers.
    random_state : int, RandomState, Generator or None, default=None
        Seed of every random choice (starting vectors, random projections, sampling). None
        means seed 0, so results are reproducible by default.

    Attributes
    ----------
    singular_values_ : ndarray of shape (n_components,)
        ``lambda_1 >= ... >= lambda_r``.
    row_embedding_ : ndarray of shape (n, n_components)
        ``B_phi`` (left singular vectors; the largest entry of each column is positive).
    col_embedding_ : ndarray of shape (m, n_components)
        ``B_psi`` (right singular vectors).
    residuals_ : ndarray of shape (n_components, 2) or None
        ``[||G v_i - lambda_i u_i||, ||G^T u_i - lambda_i v_i||] / lambda_1`` of every triplet (None for
        the Nystrom solver, whose point is not to pass over all of ``G``).
    bandwidth_ : float or None
        The bandwidth used (None for kernels without one).
    n_features_in_ : int
        Number of features of ``X``.

    Examples
    --------
    >>> import numpy as np
    >>> from ksvd import KSVD
    >>> rng = np.random.default_rng(0)
    >>> X, Z = rng.normal(size=(40, 3)), rng.normal(size=(30, 3))
    >>> model = KSVD(n_components=3, kernel="sne", bandwidth=1.0, random_state=0).fit(X, Z=Z)
    >>> model.row_embedding_.shape, model.col_embedding_.shape
    ((40, 3), (30, 3))
    >>> model.transform(X[:5]).shape
    (5, 3)
    """

    def fit(self, X, y=None, Z=None):
        """Fits on row samples ``X`` and column samples ``Z`` (``Z = X`` when omitted).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n, d)
            Row samples (or the kernel matrix ``G`` with ``kernel="precomputed"``).
        y : ignored
        Z : array-like or sparse matrix of shape (m, d), default=None
            Column samples, in the same space as ``X``.

        Returns
        -------
        self : KSVD
        """
        return self._fit(X, Z)

    def fit_transform(self, X, y=None, Z=None):
        """Fits, then returns the extension to the row samples ``X`` (``U`` up to the solver)."""
        return self.fit(X, y, Z=Z).transform(X)

    def transform_cols(self, Z):
        """Out-of-sample extension to new column samples, ``k(X, Z')^T U S^-1``.

        Parameters
        ----------
        Z : array-like or sparse matrix of shape (n_samples, d)

        Returns
        -------
        ndarray of shape (n_samples, n_components)
            At the training columns these are the rows of ``V`` (``col_embedding_``).
        """
        check_is_fitted(self)
        Z = check_array(Z, accept_sparse=_ACCEPT_SPARSE, dtype=_DTYPES, input_name="Z")
        return self._model.transform_cols(to_native(Z))


class KPCA(_KernelSVDBase):
    """Kernel PCA: the symmetric case of :class:`KSVD` (``Z = X``, a symmetric kernel).

    With a symmetric positive semi-definite kernel and ``center=True`` the SVD of the centred
    ``G = H K H`` is its eigen-decomposition, so ``eigenvalues_`` are the top eigenvalues of the
    centred kernel matrix and ``eigenvectors_`` its eigenvectors. ``transform`` is the
    out-of-sample extension ``k(X, X_train) U diag(1/lambda)`` (centred), so
    ``transform(X_train) = U`` (scikit-learn's ``KernelPCA`` returns ``U diag(sqrt(lambda))``).

    Parameters are those of :class:`KSVD`, with ``kernel="rbf"`` and ``center=True`` by
    default; ``kernel="sne"`` is refused (it is asymmetric).

    Attributes
    ----------
    eigenvalues_ : ndarray of shape (n_components,)
    eigenvectors_ : ndarray of shape (n_samples, n_components)
    singular_values_, row_embedding_, col_embedding_, residuals_, bandwidth_, n_features_in_
        As for :class:`KSVD`.
    """

    _kernel_choices = ("rbf", "laplacian", "poly", "linear", "precomputed")
    _square_precomputed = True

    def __init__(
        self,
        n_components=2,
        *,
        kernel="rbf",
        bandwidth=None,
        degree=2,
        coef0=1.0,
        center=True,
        solver="auto",
        n_landmarks=None,
        sampling="uniform",
        tol=1e-10,
        random_state=None,
    ):
        super().__init__(
            n_components,
            kernel=kernel,
            bandwidth=bandwidth,
            degree=degree,
            coef0=coef0,
            center=center,
            solver=solver,
            n_landmarks=n_landmarks,
            sampling=sampling,
            tol=tol,
            random_state=random_state,
        )

    def fit(self, X, y=None):
        """Fits on the samples ``X`` (shape (n, d); a square kernel matrix if precomputed)."""
        self._fit(X, None)
        self.eigenvalues_ = self.singular_values_
        self.eigenvectors_ = self.row_embedding_
        return self
