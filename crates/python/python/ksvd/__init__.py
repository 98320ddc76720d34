"""ksvd: kernel SVD with asymmetric kernels, from Rust.

Python front of ksvd-rs, which implements the Coupled Covariances Eigenproblem (KSVD) and the
asymmetric Nystrom method of Tao, Tonin et al. (ICML 2024), with scikit-learn conventions:

* :class:`KSVD`: the top singular triplets of ``G_ij = k(x_i, z_j)`` between row samples ``X``
  and column samples ``Z``; ``transform`` / ``transform_cols`` project new rows / columns.
* :class:`KPCA`: the symmetric case (``Z = X``, symmetric kernel, centred).
* :func:`ksvd.graph.embed`: source and target embeddings of a directed graph.
* :func:`bandwidth_rule`: the paper's default bandwidth ``gamma = k sqrt(M gamma_x)``.
* :mod:`ksvd.dask` (``pip install "ksvd[dask]"``): the out-of-core asymmetric Nystrom fit of
  LIBSVM files on a Dask cluster, from mergeable partial states (not imported by default).

Example
-------
>>> import numpy as np
>>> from ksvd import KSVD
>>> X = np.random.default_rng(0).normal(size=(50, 4))
>>> KSVD(n_components=3, kernel="sne", random_state=0).fit(X).singular_values_.shape
(3,)
"""

from . import graph
from ._estimators import KPCA, KSVD
from ._ksvd import __version__
from ._ksvd import bandwidth_rule as _native_bandwidth_rule
from ._convert import check_real, to_native
from sklearn.utils.validation import check_array as _check_array

__all__ = ["KSVD", "KPCA", "bandwidth_rule", "graph", "__version__"]


def bandwidth_rule(X, k=1.0):
    """The paper's bandwidth ``gamma = k sqrt(M gamma_x)``.

    ``gamma_x`` is the variance of all ``N x M`` entries of ``X`` (zeros of a sparse matrix
    included) and ``M`` its number of columns; this is what ``bandwidth=None`` uses with
    ``k = 1``.
    """
    X = _check_array(X, accept_sparse=("csr", "csc"), dtype=(float, "float32"), ensure_all_finite=False)
    return _native_bandwidth_rule(to_native(X), check_real("k", k))
