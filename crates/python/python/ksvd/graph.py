"""KSVD embeddings of directed graphs.

A directed graph with adjacency ``A`` (``A_ij != 0`` for an arc ``i -> j``) gives row samples
``x_i = A[i, :]`` (out-links) and column samples ``z_j = A[:, j]`` (in-links), so that every
node has a source embedding (a row of ``B_phi``) and a target embedding (a row of ``B_psi``);
``A`` is first transformed as ``graph_input`` says (``ksvd_kernels::graph::GraphInput``).
"""

from dataclasses import dataclass
from typing import Optional

import numpy as np
import scipy.sparse as sp

from . import _ksvd
from ._convert import check_int, check_n_jobs, check_name, fill_names, native_params, to_native


@dataclass(frozen=True)
class GraphEmbedding:
    """The top-``r`` singular triplets of the graph's kernel matrix ``G``.

    Attributes
    ----------
    row_embedding : ndarray of shape (n_nodes, r)
        ``B_phi = U``: source (out-link) embeddings.
    singular_values : ndarray of shape (r,)
        Descending.
    col_embedding : ndarray of shape (n_nodes, r)
        ``B_psi = V``: target (in-link) embeddings.
    residuals : ndarray of shape (r, 2) or None
        ``[||G v_i - s_i u_i||, ||G^T u_i - s_i v_i||] / s_1`` (None for the Nystrom solver).
    bandwidth : float or None
        The bandwidth used.
    landmark_rows, landmark_cols : ndarray of int or None
        The Nystrom landmarks (source and target nodes); None for the other solvers.
    """

    row_embedding: np.ndarray
    singular_values: np.ndarray
    col_embedding: np.ndarray
    residuals: Optional[np.ndarray]
    bandwidth: Optional[float]
    landmark_rows: Optional[np.ndarray] = None
    landmark_cols: Optional[np.ndarray] = None


class _Params:
    """Hyper-parameters in the estimators' form (for the shared conversion)."""

    def __init__(self, **kw):
        self.__dict__.update(kw)
def _adjacency(adjacency, n_nodes, weights):
    if sp.issparse(adjacency):
        if n_nodes is not None or weights is not None:
            raise ValueError("n_nodes and weights apply to an edge array, not to a sparse adjacency matrix")
        if adjacency.ndim != 2:
            raise ValueError(f"the adjacency matrix must be 2-D; got shape {adjacency.shape}")
        return adjacency
    if not isinstance(adjacency, (np.ndarray, list, tuple)):
        raise TypeError(
            "adjacency must be a scipy sparse matrix or an edge array of shape (n_edges, 2); "
            f"got {type(adjacency).__name__}"
        )
    edges = np.asarray(adjacency)
    if edges.ndim != 2 or edges.shape[1] != 2:
        raise ValueError(
            f"an edge array must have shape (n_edges, 2) (source, target); got shape {edges.shape} "
            "(wrap a dense adjacency matrix in scipy.sparse.csr_array)"
        )
    if edges.size and not np.issubdtype(edges.dtype, np.integer):
        raise TypeError(f"edge arrays hold integer node ids; got dtype {edges.dtype}")
    edges = edges.astype(np.int64, copy=False)
    if edges.size and edges.min() < 0:
        raise ValueError(f"node ids must be non-negative; got {edges.min()}")
    n = check_int("n_nodes", n_nodes, allow_none=True)
    if n is None:
        n = int(edges.max()) + 1 if edges.size else 0
    w = np.ones(edges.shape[0]) if weights is None else np.asarray(weights, dtype=np.float64)
    if w.shape != (edges.shape[0],):
        raise ValueError(f"weights must have shape ({edges.shape[0]},); got {w.shape}")
    if edges.size and edges.max() >= n:
        raise ValueError(f"node id {edges.max()} out of range for n_nodes = {n}")
    # Repeated arcs are summed (as ksvd_linalg::CsrMatrix::from_triplets does).
    return sp.csr_array((w, (edges[:, 0], edges[:, 1])), shape=(n, n))


def embed(
    adjacency,
    n_components=2,
    *,
    n_nodes=None,
    weights=None,
    graph_input="raw",
    kernel="rbf",
    bandwidth=None,
    bandwidth_factor=1.0,
    gamma=None,
    degree=3,
    coef0=1.0,
    center=False,
    solver="auto",
    tol=1e-8,
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
    """KSVD embedding of a directed graph.

    Parameters
    ----------
    adjacency : scipy sparse matrix of shape (n, n), or edge array of shape (n_edges, 2)
        ``A_ij != 0`` for an arc ``i -> j``. An edge array lists ``(source, target)`` node ids;
        repeated arcs are summed. A dense adjacency matrix must be wrapped in
        ``scipy.sparse.csr_array``.
    n_components : int, default=2
        Rank ``r``.
    n_nodes : int, optional
        Number of nodes of an edge array (default: largest id + 1).
    weights : array-like of shape (n_edges,), optional
        Arc weights of an edge array (default: ones).
    graph_input : {GRAPH_INPUTS}, default="raw"
        Transform of ``A`` (the core's ``GraphInput``): ``A``, ``D_out^-1 A``, ``A + I`` or
        ``D_out^-1 (A + I)``.
    kernel, bandwidth, bandwidth_factor, gamma, degree, coef0, center, solver, tol, n_landmarks, n_col_landmarks, sampling, landmark_rows, landmark_cols, oversampling, power_iters, random_state, memory_budget, n_jobs
        As for :class:`ksvd.KSVD`, with the same defaults (``bandwidth=None``: the rule on
        the transformed ``A``; ``kernel="precomputed"`` and ``compat`` are not available;
        landmarks are node indices).

    Returns
    -------
    GraphEmbedding

    Examples
    --------
    >>> import numpy as np
    >>> from ksvd.graph import embed
    >>> edges = np.array([[0, 1], [1, 2], [2, 0], [2, 3], [3, 0]])
    >>> emb = embed(edges, n_components=2, kernel="sne", bandwidth=1.0)
    >>> emb.row_embedding.shape, emb.col_embedding.shape
    ((4, 2), (4, 2))
    """
    params = native_params(
        _Params(
            n_components=n_components,
            kernel=kernel,
            bandwidth=bandwidth,
            bandwidth_factor=bandwidth_factor,
            gamma=gamma,
            degree=degree,
            coef0=coef0,
            center=center,
            compat=None,
            solver=solver,
            tol=tol,
            n_landmarks=n_landmarks,
            n_col_landmarks=n_col_landmarks,
            sampling=sampling,
            landmark_rows=landmark_rows,
            landmark_cols=landmark_cols,
            oversampling=oversampling,
            power_iters=power_iters,
            random_state=random_state,
            memory_budget=memory_budget,
        )
    )
    check_name("graph_input", graph_input)
    a = to_native(_adjacency(adjacency, n_nodes, weights))
    model = _ksvd.fit_graph(a, graph_input=graph_input, params=params, n_jobs=check_n_jobs(n_jobs))
    landmarks = model.landmarks()
    return GraphEmbedding(
        row_embedding=model.row_embedding(),
        singular_values=model.singular_values(),
        col_embedding=model.col_embedding(),
        residuals=model.residuals(),
        bandwidth=model.bandwidth,
        landmark_rows=None if landmarks is None else landmarks[0],
        landmark_cols=None if landmarks is None else landmarks[1],
    )


embed.__doc__ = fill_names(embed.__doc__)
