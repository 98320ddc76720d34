"""A trained model of the out-of-core fit (``ksvd-stream run --out``) as a fitted estimator: what
:func:`ksvd.load` returns for such a model file."""

import numpy as np
from sklearn.utils.validation import check_array

from . import _ksvd
from ._convert import to_native


class StreamingModel:
    """A trained streaming model: the Nystrom embedding of KSVD (asymmetric, with the a2
    compatibility) or KPCA (symmetric) of the out-of-core fit, its column normalisation and the
    linear classifier on the embeddings (the Rust types ``ksvd_streaming::TrainedKsvd`` and
    ``TrainedKpca``). Obtained from :func:`ksvd.load` of a ``ksvd-stream`` model file; nothing
    to fit (:func:`ksvd.dask.fit` runs the same method with the estimators).

    Attributes
    ----------
    method : {"ksvd", "kpca"}
        Which embedding.
    n_components : int
        The embedding dimension ``r`` actually used.
    singular_values_ : ndarray of shape (n_components,)
        KSVD's approximate singular values (KPCA: the eigenvalues of the landmarks' kernel
        matrix, also ``eigenvalues_``).
    bandwidth_ : float
        The RBF bandwidth ``gamma`` of ``exp(-||a - b||^2 / gamma^2)``.
    landmark_rows_ : ndarray of int
        Global ids of the landmark rows (increasing).
    n_features_in_ : int
        Number of features ``M``.
    coef_, intercept_ : ndarray of shape (n_components,), float
        The classifier on normalised embeddings.
    """

    def __init__(self, model):
        if not isinstance(model, (_ksvd.TrainedKsvd, _ksvd.TrainedKpca)):
            raise TypeError(f"expected a trained streaming model; got {type(model).__name__}")
        self._model = model
        self.method = "ksvd" if isinstance(model, _ksvd.TrainedKsvd) else "kpca"
        self.n_components = model.rank
        spectrum = model.singular_values() if self.method == "ksvd" else model.eigenvalues()
        self.singular_values_ = spectrum
        if self.method == "kpca":
            self.eigenvalues_ = spectrum
        self.bandwidth_ = model.gamma
        self.landmark_rows_ = np.asarray(model.row_landmarks, dtype=np.int64)
        self.n_features_in_ = model.n_features
        self.coef_ = model.weights()
        self.intercept_ = model.bias

    def __sklearn_is_fitted__(self):
        return True

    def _rows(self, X):
        X = check_array(X, accept_sparse=("csr", "csc"), dtype=(np.float64, np.float32))
        return X, to_native(X)

    def transform(self, X):
        """Normalised embeddings of the rows of ``X`` (``n_samples x n_components``, in ``X``'s
        dtype): unit-norm columns over the training rows, the out-of-sample Nystrom extension
        elsewhere; the same numbers as the fit's ``embeddings`` of those rows."""
        X, native = self._rows(X)
        return self._model.embed(native).astype(X.dtype, copy=False)

    def decision_function(self, X):
        """The classifier's scores ``transform(X) @ coef_ + intercept_`` (larger: the positive
        label)."""
        X, native = self._rows(X)
        return self._model.decision_function(native).astype(X.dtype, copy=False)

    def to_bytes(self):
        """The model document (the streaming format's checksummed envelope)."""
        return self._model.to_bytes()

    def save(self, path):
        """Writes the model document to ``path`` atomically; :func:`ksvd.load` reads it back."""
        self._model.save(str(path))

    def __repr__(self):
        return (
            f"StreamingModel(method={self.method!r}, n_components={self.n_components}, "
            f"n_features_in_={self.n_features_in_}, landmark_rows={len(self.landmark_rows_)})"
        )


__all__ = ["StreamingModel"]
