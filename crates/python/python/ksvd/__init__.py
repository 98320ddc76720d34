"""ksvd: kernel SVD with asymmetric kernels, from Rust.

Python front of ksvd-rs, which implements the Coupled Covariances Eigenproblem (KSVD) and the
asymmetric Nystrom method of Tao, Tonin et al. (ICML 2024), with scikit-learn conventions. The
package speaks the workspace's one contract (``docs/conventions.md``): the same parameters,
defaults and outputs as the Rust crate ``ksvd`` and the ``ksvd`` command, under scikit-learn's
keyword names.

* :class:`KSVD`: the top singular triplets ``G ~ U S V^T`` of ``G_ij = k(x_i, z_j)`` between row
  samples ``X`` and column samples ``Z``. ``transform`` / ``transform_cols`` project new rows /
  columns to ``U S^1/2`` / ``V S^1/2`` at the training samples; ``extend`` / ``extend_cols`` are
  the paper's out-of-sample extension (eq. 10, ``U`` / ``V``).
* :class:`KPCA`: the symmetric case (``Z = X``, a symmetric kernel, centred); ``transform`` is
  scikit-learn's ``KernelPCA.transform``.
* :func:`load`: a fitted :class:`KSVD` or :class:`KPCA` from any model file (``ksvd fit``,
  ``save``, Rust) or its bytes, or a :class:`StreamingModel` from a model of the out-of-core
  fit (``ksvd.dask``); fitted estimators ``save`` and pickle through the same checksummed
  document.
* :func:`ksvd.graph.embed`: source and target embeddings of a directed graph.
* :func:`bandwidth_rule`: the paper's default bandwidth ``gamma = k sqrt(M gamma_x)``.
* :mod:`ksvd.dask` (``pip install "ksvd[dask]"``): ``ksvd.dask.KSVD`` and ``ksvd.dask.KPCA``,
  these estimators on data partitioned by rows on a Dask cluster (every solver, the
  single-machine answers), and the out-of-core Nystrom pipeline of LIBSVM files from mergeable
  partial states (not imported by default).

Example
-------
>>> import numpy as np
>>> from ksvd import KSVD
>>> X = np.random.default_rng(0).normal(size=(50, 4))
>>> KSVD(n_components=3, kernel="sne").fit(X).singular_values_.shape
(3,)
"""

from sklearn.utils.validation import check_array as _check_array

from . import graph
from ._convert import check_real, to_native
from ._estimators import KPCA, KSVD, load
from ._streaming import StreamingModel
from ._ksvd import __version__
from ._ksvd import bandwidth_rule as _native_bandwidth_rule

__all__ = ["KSVD", "KPCA", "StreamingModel", "load", "bandwidth_rule", "graph", "__version__"]


def bandwidth_rule(X, k=1.0):
    """The paper's bandwidth ``gamma = k sqrt(M gamma_x)``.

    ``gamma_x`` is the variance of all ``N x M`` entries of ``X`` (zeros of a sparse matrix
    included) and ``M`` its number of columns; this is what ``bandwidth=None`` uses with
    ``k = bandwidth_factor``.
    """
    X = _check_array(X, accept_sparse=("csr", "csc"), dtype=(float, "float32"), ensure_all_finite=False)
    return _native_bandwidth_rule(to_native(X), check_real("k", k))
