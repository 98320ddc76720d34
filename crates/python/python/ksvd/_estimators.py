"""scikit-learn estimators over the Rust model: :class:`KSVD`, :class:`KPCA` and :func:`load` (which\nalso reads the out-of-core fit's models, :class:`ksvd.StreamingModel`)."""

import os

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import check_array, check_is_fitted, validate_data

from . import _ksvd
from ._convert import check_n_jobs, fill_names, native_params, to_native
from ._streaming import StreamingModel

_ACCEPT_SPARSE = ("csr", "csc")
_DTYPES = (np.float64, np.float32)

# Fitted attributes read from the native model: not pickled, rebuilt on unpickling from the
# model's checksummed bytes.
_FROM_MODEL = (
    "singular_values_",
    "row_embedding_",
    "col_embedding_",
    "residuals_",
    "bandwidth_",
    "landmark_rows_",
    "landmark_cols_",
    "eigenvalues_",
    "eigenvectors_",
    "_n_features_out",
)


def _store_params(est, params):
    """``__init__``'s only work (scikit-learn's convention): every parameter stored unchanged,
    under its own name."""
    for name, value in params.items():
        if name != "self":
            setattr(est, name, value)


class _Estimator(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """What :class:`KSVD` and :class:`KPCA` share: the fit through the native module, the
    projections, the fitted attributes, saving and pickling. Subclasses define ``__init__`` (the
    Python column of ``docs/conventions.md``) and ``_estimator`` (the model's ``estimator``)."""

    _estimator = None

    def _fit(self, X, Z):
        params = native_params(self)
        n_jobs = check_n_jobs(self.n_jobs)
        X = validate_data(self, X, accept_sparse=_ACCEPT_SPARSE, dtype=_DTYPES)
        if Z is not None:
            Z = to_native(check_array(Z, accept_sparse=_ACCEPT_SPARSE, dtype=_DTYPES, input_name="Z"))
        # float32 data are computed in float32 (scikit-learn's preserved dtype).
        params["precision"] = "f32" if X.dtype == np.float32 else "f64"
        model = _ksvd.fit(to_native(X), Z, estimator=self._estimator, params=params, n_jobs=n_jobs)
        self._set_model(model, X.dtype)
        return self

    def _set_model(self, model, dtype):
        """The fitted attributes of ``model``, in ``dtype`` (the training data's)."""
        self._model = model
        self._dtype = np.dtype(dtype)

        def cast(a):
            return None if a is None else a.astype(self._dtype, copy=False)

        self.singular_values_ = cast(model.singular_values())
        self.row_embedding_ = cast(model.row_embedding())
        self.col_embedding_ = cast(model.col_embedding())
        self.residuals_ = cast(model.residuals())
        self.bandwidth_ = model.bandwidth
        landmarks = model.landmarks()
        self.landmark_rows_, self.landmark_cols_ = (None, None) if landmarks is None else landmarks
        self._n_features_out = self.singular_values_.shape[0]

    def _rows(self, X):
        check_is_fitted(self)
        return validate_data(self, X, accept_sparse=_ACCEPT_SPARSE, dtype=_DTYPES, reset=False)

    def _cols(self, Z):
        check_is_fitted(self)
        Z = check_array(Z, accept_sparse=_ACCEPT_SPARSE, dtype=_DTYPES, input_name="Z")
        want = self._model.input_dims[1]
        if Z.shape[1] != want:
            raise ValueError(
                f"Z has {Z.shape[1]} features, but {type(self).__name__} is expecting {want} features as input"
            )
        return Z

    def _project(self, X, *, cols, extend):
        """The native model's projection of ``X``, in ``X``'s dtype."""
        out = self._model.project(to_native(X), cols=cols, extend=extend, n_jobs=check_n_jobs(self.n_jobs))
        return out.astype(X.dtype, copy=False)

    def transform(self, X):
        """Projections of new row samples, ``k(x', Z) V S^-1/2``.

        ``U S^1/2`` at the training rows, so that ``transform(x) @ transform_cols(z).T`` is the
        rank-``r`` approximation of ``k(x, z)``; for :class:`KPCA` this is scikit-learn's
        ``KernelPCA.transform``, ``k(x', X) A Lambda^-1/2``. The kernel is centred with the
        training means when ``center=True`` (SNE normalises a new row over the training Z); a
        Nystrom KSVD model projects through its landmarks.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            New row samples; with ``compat``, new rows of the data matrix; with
            ``kernel="precomputed"``, their kernel values ``k(x', z_j)`` against every training
            column sample (n_samples, M).

        Returns
        -------
        ndarray of shape (n_samples, n_components)
            In ``X``'s dtype (float32 or float64; a float32 model evaluates and multiplies its
            kernel values in float32).
        """
        return self._project(self._rows(X), cols=False, extend=False)

    def transform_cols(self, Z):
        """Projections of new column samples, ``k(X, z')^T U S^-1/2`` (``V S^1/2`` at the
        training columns; for :class:`KPCA` the same as :meth:`transform`).

        Parameters
        ----------
        Z : {array-like, sparse matrix} of shape (n_samples, n_features)
            New column samples; with ``compat``, new columns of the data matrix, one per row
            (n_samples, N); with ``kernel="precomputed"``, their kernel values ``k(x_i, z')``
            against every training row sample, one new sample per row (n_samples, N).

        Returns
        -------
        ndarray of shape (n_samples, n_components)
            In ``Z``'s dtype.
        """
        return self._project(self._cols(Z), cols=True, extend=False)

    def extend(self, X):
        """The paper's out-of-sample extension (eq. 10) of new row samples, ``k(x', Z) V S^-1``.

        It gives back ``U`` (``row_embedding_``) at the training rows; a Nystrom KSVD model
        extends through its landmarks (eq. 11). Input as for :meth:`transform`.

        Returns
        -------
        ndarray of shape (n_samples, n_components)
        """
        return self._project(self._rows(X), cols=False, extend=True)

    def extend_cols(self, Z):
        """The out-of-sample extension of new column samples, ``k(X, z')^T U S^-1`` (``V`` at the
        training columns). Input as for :meth:`transform_cols`.

        Returns
        -------
        ndarray of shape (n_samples, n_components)
        """
        return self._project(self._cols(Z), cols=True, extend=True)

    def _training_transform(self):
        """``U S^1/2``: the transform of the training rows, from the fit."""
        return self.row_embedding_ * np.sqrt(self.singular_values_)

    def save(self, path):
        """Saves the fitted model to ``path``: one checksummed, versioned JSON document, written
        atomically; :func:`ksvd.load`, ``ksvd transform --model`` and Rust's ``KsvdModel::load``
        read it. Run-time settings (``memory_budget``, ``n_jobs``) are not saved."""
        check_is_fitted(self)
        self._model.save(os.fspath(path))

    def to_bytes(self):
        """The bytes :meth:`save` writes (what pickling stores)."""
        check_is_fitted(self)
        return self._model.to_bytes()

    def __getstate__(self):
        # The model pickles as its checksummed bytes; the attributes read from it are rebuilt
        # from those bytes, so a tampered pickle is refused rather than loaded.
        state = dict(super().__getstate__())
        for name in _FROM_MODEL:
            state.pop(name, None)
        return state

    def __setstate__(self, state):
        super().__setstate__(state)
        if "_model" in state:
            self._set_model(state["_model"], state["_dtype"])

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.pairwise = self.kernel == "precomputed"
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags


class KSVD(_Estimator):
    """Kernel SVD with an asymmetric kernel (Tao, Tonin et al., ICML 2024).

    Fits the top-``n_components`` singular triplets of ``G_ij = k(x_i, z_j)`` between row
    samples ``X`` (N) and column samples ``Z`` (M; ``Z = X`` when omitted), which solve the
    Coupled Covariances Eigenproblem (Proposition 3.4): ``B_phi = U``, ``B_psi = V``. The
    computation is the Rust crate ``ksvd``, run with the GIL released. Parameters, defaults and
    outputs are those of every front door (the Rust crate, the ``ksvd`` command, this package;
    ``docs/conventions.md``).

    Parameters
    ----------
    n_components : int, default=2
        Rank ``r``: the number of singular triplets, ``1 <= r <= min(N, M)``.
    kernel : {KERNELS} or callable, default="rbf"
        ``rbf``: ``exp(-||x - z||^2 / bandwidth^2)``; ``laplacian``:
        ``exp(-||x - z|| / bandwidth)``; ``sne``: the RBF normalised over Z (every row of ``G``
        sums to one; asymmetric even for ``Z = X``); ``poly``: ``(x . z + coef0)^degree``;
        ``linear``: ``x . z``; ``precomputed``: ``X`` is ``G`` itself (N x M). A callable
        ``kernel(A, B)`` is your own kernel: it returns the ``len(A) x len(B)`` block of
        ``k(a_i, b_j)`` (float64 rows of X and Z; asymmetric kernels welcome) and is called
        block by block (blocks sized from ``memory_budget``, the only part run with the GIL);
        a saved model records its ``__name__`` and ``ksvd.load(path, kernel=f)`` takes it back.
    bandwidth : float or None, default=None
        The paper's ``gamma``, a length (``rbf``, ``laplacian``, ``sne``). None: the paper's
        rule ``gamma = bandwidth_factor * sqrt(M gamma_x)``, ``gamma_x`` the variance of all
        entries of ``X`` and ``M`` its number of features. The value used is ``bandwidth_``.
        Kernels without a bandwidth ignore it.
    bandwidth_factor : float, default=1.0
        The factor ``k`` of the bandwidth rule.
    gamma : float or None, default=None
        scikit-learn's ``gamma`` instead of ``bandwidth`` (not both): ``rbf`` and ``sne``
        ``exp(-gamma ||x - z||^2)``, i.e. ``bandwidth = 1/sqrt(gamma)``; ``laplacian``
        ``exp(-gamma ||x - z||)``, ``bandwidth = 1/gamma``. Other kernels refuse it
        (scikit-learn's polynomial gamma scales ``x . z``, which this kernel does not).
    degree : int, default=3
        Degree of the polynomial kernel.
    coef0 : float, default=1.0
        Offset of the polynomial kernel.
    center : bool, default=False
        Centre ``G`` on both sides, ``H_N G H_M`` (every row and column sums to zero);
        projections of new data are centred with the training means.
    compat : {COMPATS} or None, default=None
        Only when ``Z`` is omitted: the column samples are the columns of the data matrix ``X``,
        made comparable with its rows by a compatibility of the core: ``"a0"``
        (pseudo-inverse), ``"a1"`` (PCA) or ``"a2"`` (random projection seeded by
        ``random_state``) (Algorithm 1; ``"a1-shared"`` and ``"a3"`` have no single matrix and
        are refused). New rows and columns
        of the data matrix are then what :meth:`transform` and :meth:`transform_cols` take.
    solver : {SOLVERS}, default="auto"
        ``auto``: a dense SVD when that is cheapest and fits the memory budget, block Lanczos
        otherwise, every triplet meeting ``tol``; ``exact``: dense SVD of ``G``;
        ``lanczos``: restarted Lanczos bidiagonalisation (matrix-free); ``rsvd``: randomized
        SVD; ``block-krylov``: randomized block Krylov SVD stopping at ``tol``; ``nystrom``: the
        asymmetric Nystrom method on ``n_landmarks`` sampled rows and ``n_col_landmarks``
        columns.
    tol : float or None, default=None
        Every triplet has ``||G v - s u|| <= tol s_1`` and ``||G^T u - s v|| <= tol s_1``
        (``auto``, ``lanczos``, ``block-krylov``). None: 1e-8, or 1e-5 for float32 data
        (whose limit is 1e-6).
    n_landmarks : int or None, default=None
        Sampled rows (and columns) of the Nystrom solver; required for it unless
        ``landmark_rows`` are given.
    n_col_landmarks : int or None, default=None
        Sampled columns, when different from ``n_landmarks``.
    sampling : {SAMPLINGS}, default="uniform"
        How the Nystrom solver chooses its landmarks (the core's ``Sampling``): ``uniform``
        (the paper's), ``squared-norm`` (length-squared with importance weights), ``leverage``,
        ``adaptive`` (randomly pivoted cross approximation of ``G``) or ``greedy``.
    landmark_rows, landmark_cols : array-like of int or None, default=None
        Your own Nystrom landmarks: 0-based indices into ``X`` and into ``Z`` (given together,
        each distinct; ``solver="nystrom"``). The landmarks used are ``landmark_rows_`` and
        ``landmark_cols_``.
    oversampling : int, default=10
        Extra vectors of the randomized SVD (``rsvd``, ``block-krylov``, and a large Nystrom
        block's inner SVD).
    power_iters : int, default=2
        Power iterations of the randomized SVD.
    random_state : int, RandomState, Generator or None, default=None
        Seed of every random choice (starting vectors, landmarks, projections). None means
        seed 0, so results are reproducible by default.
    memory_budget : int, str or None, default=None
        How much the fit may hold: ``G`` is stored within it and evaluated block by block
        beyond. Bytes (int) or a string such as ``"512M"``, ``"4G"``; None: a quarter of the
        available memory (or the environment variable ``KSVD_MEMORY_BUDGET``). A run-time
        setting: not saved with a model.
    n_jobs : int or None, default=None
        Worker threads of each call (fit and projections): a thread pool of that size for
        the call. None or -1: all cores.

    Attributes
    ----------
    singular_values_ : ndarray of shape (n_components,)
        ``s_1 >= ... >= s_r`` (Nystrom: the estimates).
    row_embedding_ : ndarray of shape (N, n_components)
        ``U`` (``B_phi``), unit columns; the largest-magnitude entry of each column is positive.
    col_embedding_ : ndarray of shape (M, n_components)
        ``V`` (``B_psi``); it flips with ``U``.
    residuals_ : ndarray of shape (n_components, 2) or None
        ``||G v_i - s_i u_i|| / s_1`` and ``||G^T u_i - s_i v_i|| / s_1`` of every triplet (None
        for the Nystrom solver, whose point is not to pass over all of ``G``).
    bandwidth_ : float or None
        The bandwidth the fit used (None for kernels without one).
    landmark_rows_, landmark_cols_ : ndarray of int or None
        The Nystrom landmarks (indices into ``X`` and ``Z``); None for the other solvers.
    n_features_in_ : int
        Number of features of ``X``.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of the features of ``X``, when it has string column names.

    Notes
    -----
    float32 input gives float32 output (attributes and projections), and ``G`` is evaluated and
    multiplied in float32: a stored ``G`` in half the memory (twice the samples fit
    ``memory_budget``), products in about half the time, residuals those of the rounded ``G``
    (``tol`` defaults to 1e-5). Matrix-free and Nystrom fits and projections of new samples
    evaluate their kernel blocks in float32 alike (inner products and exponents in float64);
    sparse-graph fits compute in float64.

    Examples
    --------
    >>> import numpy as np
    >>> from ksvd import KSVD
    >>> rng = np.random.default_rng(0)
    >>> X, Z = rng.normal(size=(40, 3)), rng.normal(size=(30, 3))
    >>> model = KSVD(n_components=3, kernel="sne", bandwidth=1.0).fit(X, Z=Z)
    >>> model.row_embedding_.shape, model.col_embedding_.shape
    ((40, 3), (30, 3))
    >>> model.transform(X[:5]).shape
    (5, 3)
    """

    _estimator = "ksvd"

    def __init__(
        self,
        n_components=2,
        *,
        kernel="rbf",
        bandwidth=None,
        bandwidth_factor=1.0,
        gamma=None,
        degree=3,
        coef0=1.0,
        center=False,
        compat=None,
        solver="auto",
        tol=None,
        n_landmarks=None,
        n_col_landmarks=None,
        sampling="uniform",
        landmark_rows=None,
        landmark_cols=None,
        oversampling=10,
        power_iters=2,
        random_state=None,
        memory_budget=None,
        n_jobs=None,
    ):
        _store_params(self, locals())

    def fit(self, X, y=None, Z=None):
        """Fits on row samples ``X`` and column samples ``Z``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (N, n_features)
            Row samples; with ``compat``, the data matrix; with ``kernel="precomputed"``, the
            kernel matrix ``G`` (N x M).
        y : None
            Ignored.
        Z : {array-like, sparse matrix} of shape (M, n_features), default=None
            Column samples, in the same space as ``X``. None: ``Z = X``, or with ``compat`` the
            columns of ``X``.

        Returns
        -------
        self : KSVD
        """
        return self._fit(X, Z)

    def fit_transform(self, X, y=None, Z=None):
        """Fits, then returns the transform of the training rows, ``U S^1/2``, from the fit.

        Parameters as for :meth:`fit`.

        Returns
        -------
        ndarray of shape (N, n_components)
        """
        return self.fit(X, y, Z=Z)._training_transform()


class KPCA(_Estimator):
    """Kernel PCA: the symmetric case of :class:`KSVD` (``Z = X``, a symmetric kernel).

    The top-``n_components`` eigenpairs ``K~ a_l = lambda_l a_l`` of the kernel matrix
    ``K_ij = k(x_i, x_j)``, centred on both sides (``K~ = H K H``) by default, computed by the
    Rust crate's ``Kpca`` with the same solvers as :class:`KSVD` (``solver="nystrom"`` is the
    symmetric Nystrom method on ``n_landmarks`` uniformly sampled samples).
    :meth:`transform` is scikit-learn's ``KernelPCA.transform``, ``k~(x', X) A Lambda^-1/2``
    (``A Lambda^1/2`` at the training samples), with the same sign rule (the largest-magnitude
    entry of each eigenvector positive); with a symmetric positive semi-definite kernel
    ``KSVD(center=True)`` with ``Z = X`` gives the same eigenvalues and transforms.

    Parameters
    ----------
    n_components : int, default=2
        Number of eigenpairs.
    kernel : {KERNELS} or callable, default="rbf"
        A symmetric kernel: ``sne`` is refused (it is asymmetric). ``precomputed``: ``X`` is
        the square kernel matrix ``K``, and :meth:`transform` takes kernel values
        ``k(x', x_j)`` against every training sample. A callable ``kernel(A, B)`` returning
        the ``len(A) x len(B)`` block is your own (symmetric, positive semi-definite) kernel,
        as for :class:`KSVD`.
    center : bool, default=True
        Centre ``K`` on both sides.
    solver : {SOLVERS}, default="auto"
        As for :class:`KSVD`; ``nystrom`` is the symmetric Nystrom method (``sampling`` must
        be ``uniform``, no ``n_col_landmarks``).
    bandwidth, bandwidth_factor, gamma, degree, coef0, tol, n_landmarks, oversampling, power_iters, random_state, memory_budget, n_jobs
        As for :class:`KSVD`.
    compat, n_col_landmarks, sampling, landmark_rows, landmark_cols
        The parameters of the contract that apply to KSVD only: ``compat``, ``landmark_rows``
        and ``landmark_cols`` must be None, ``n_col_landmarks`` None and ``sampling``
        ``"uniform"`` (a ``ValueError`` says so otherwise).

    Attributes
    ----------
    eigenvalues_ : ndarray of shape (n_components,)
        ``lambda_1 >= ... >= lambda_r`` (``singular_values_`` too).
    eigenvectors_ : ndarray of shape (N, n_components)
        ``A``, unit columns (``row_embedding_`` and ``col_embedding_`` too).
    singular_values_, row_embedding_, col_embedding_, residuals_, bandwidth_, landmark_rows_, landmark_cols_, n_features_in_
        As for :class:`KSVD` (``landmark_cols_`` equals ``landmark_rows_``).

    Notes
    -----
    float32 input gives float32 output, and ``K`` is evaluated and multiplied in float32, as for
    :class:`KSVD`.

    Examples
    --------
    >>> import numpy as np
    >>> from ksvd import KPCA
    >>> X = np.random.default_rng(0).normal(size=(50, 4))
    >>> kpca = KPCA(n_components=3, gamma=0.5).fit(X)
    >>> kpca.transform(X[:2]).shape
    (2, 3)
    """

    _estimator = "kpca"

    def __init__(
        self,
        n_components=2,
        *,
        kernel="rbf",
        bandwidth=None,
        bandwidth_factor=1.0,
        gamma=None,
        degree=3,
        coef0=1.0,
        center=True,
        compat=None,
        solver="auto",
        tol=None,
        n_landmarks=None,
        n_col_landmarks=None,
        sampling="uniform",
        landmark_rows=None,
        landmark_cols=None,
        oversampling=10,
        power_iters=2,
        random_state=None,
        memory_budget=None,
        n_jobs=None,
    ):
        _store_params(self, locals())

    def fit(self, X, y=None):
        """Fits on the samples ``X``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (N, n_features)
            Samples; with ``kernel="precomputed"``, the square kernel matrix ``K``.
        y : None
            Ignored.

        Returns
        -------
        self : KPCA
        """
        return self._fit(X, None)

    def fit_transform(self, X, y=None):
        """Fits, then returns ``A Lambda^1/2`` (the transform of the training samples, from the
        fit; scikit-learn's ``KernelPCA.fit_transform``).

        Returns
        -------
        ndarray of shape (N, n_components)
        """
        return self.fit(X, y)._training_transform()

    def _set_model(self, model, dtype):
        super()._set_model(model, dtype)
        self.eigenvalues_ = self.singular_values_
        self.eigenvectors_ = self.row_embedding_


KSVD.__doc__ = fill_names(KSVD.__doc__)
KPCA.__doc__ = fill_names(KPCA.__doc__)

_ESTIMATORS = {"ksvd": KSVD, "kpca": KPCA}


def load(source, kernel=None):
    """A fitted estimator from a model file or its bytes.

    Any model document of the workspace loads, by the format its envelope names (read by the
    Rust loaders): a model written by ``ksvd fit --out DIR`` (the directory or its
    ``model.json``), by :meth:`KSVD.save` / :meth:`KPCA.save` or by Rust's ``KsvdModel::save``
    gives a :class:`KSVD` or :class:`KPCA` (the model's own estimator), with the parameters the
    model records (the kernel with the bandwidth the fit used) and the defaults for the rest; it
    projects new data as the fitted one did (``ksvd.dask.fit(out_dir=...)``'s ``model.<method>``
    included). A trained model of the out-of-core fit (``ksvd-stream run --out DIR``'s
    ``model.<method>-trained``; formats ``ksvd-streaming-trained-ksvd`` / ``-kpca``) gives a
    :class:`StreamingModel`.

    Parameters
    ----------
    source : str, os.PathLike or bytes
        A path to a model file (or to a directory holding ``model.json``), or the bytes of one
        (:meth:`KSVD.to_bytes`).
    kernel : callable, optional
        The kernel function of a model fitted with ``kernel=callable``: the file records only
        its name (``__name__``), which must match.

    Returns
    -------
    KSVD, KPCA or StreamingModel

    Raises
    ------
    ValueError
        The document is not a model (another format, or a partial state of the streaming
        passes), was changed (checksum), is truncated, is of another format version, or breaks
        an invariant; the message names which.
    """
    if isinstance(source, (bytes, bytearray, memoryview)):
        model = _ksvd.load(bytes(source), kernel)
    else:
        path = os.fspath(source)
        if os.path.isdir(path):
            path = os.path.join(path, "model.json")
        model = _ksvd.load(path, kernel)
    if not isinstance(model, _ksvd.KsvdModel):
        return StreamingModel(model)
    return _from_model(model)


def _from_model(model):
    """The fitted estimator of a native ``KsvdModel``: its own class with the parameters it
    records."""
    est = _ESTIMATORS[model.estimator](**model.params())
    est._set_model(model, np.float64)
    est.n_features_in_ = model.input_dims[0]
    return est
