"""The ``sampling`` parameter of the Nystrom solver (``ksvd::Sampling``).

Adaptive cross approximation with ``n_landmarks = min(n, m)`` pivots interpolates every chosen
row and column, so with all ``m`` columns chosen its approximation is ``G`` itself (``G`` of full
column rank): the singular values equal the exact solver's to rounding, compared at
``1e-10 s_1`` (the pivoted core's conditioning on these small, well-separated samples leaves far
more room than that).
"""

import numpy as np
import pytest

from ksvd import KPCA, KSVD
from ksvd.graph import embed


def _samples(seed):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((30, 4)), rng.standard_normal((20, 4))


@pytest.mark.parametrize("kernel", ["rbf", "sne"])
def test_adaptive_with_all_landmarks_equals_exact(kernel):
    x, z = _samples(3)
    exact = KSVD(5, kernel=kernel, bandwidth=1.5, solver="exact").fit(x, Z=z)
    ny = KSVD(5, kernel=kernel, bandwidth=1.5, solver="nystrom", n_landmarks=min(len(x), len(z)), sampling="adaptive", random_state=4).fit(x, Z=z)
    s, s_ref = ny.singular_values_, exact.singular_values_
    assert np.all(np.diff(s) <= 0)
    assert np.max(np.abs(s - s_ref)) <= 1e-10 * s_ref[0]


def test_graph_embed_takes_sampling():
    edges = np.array([[i, (i * 7 + 3) % 25] for i in range(25)] + [[i, (i + 1) % 25] for i in range(25)])
    exact = embed(edges, n_components=3, kernel="rbf", bandwidth=1.0, solver="exact")
    ny = embed(edges, n_components=3, kernel="rbf", bandwidth=1.0, solver="nystrom", n_landmarks=25, sampling="adaptive", random_state=1)
    assert np.max(np.abs(ny.singular_values - exact.singular_values)) <= 1e-10 * exact.singular_values[0]


@pytest.mark.parametrize("sampling", ["uniform", "squared-norm", "leverage", "greedy"])
def test_every_scheme_runs_and_is_stored(sampling):
    x, z = _samples(5)
    est = KSVD(3, kernel="rbf", bandwidth=1.5, solver="nystrom", n_landmarks=12, sampling=sampling, random_state=0)
    assert est.get_params()["sampling"] == sampling
    s = est.fit(x, Z=z).singular_values_
    assert s.shape == (3,) and np.all(np.isfinite(s)) and np.all(np.diff(s) <= 0)
    assert len(est.landmark_rows_) == 12 and len(est.landmark_cols_) == 12
    # KPCA's symmetric Nystrom method samples uniformly and says so for the other schemes.
    kpca = KPCA(2, solver="nystrom", n_landmarks=12, sampling=sampling)
    if sampling == "uniform":
        assert kpca.fit(x).eigenvalues_.shape == (2,)
    else:
        with pytest.raises(ValueError, match="samples one set of landmarks uniformly"):
            kpca.fit(x)


def test_bad_sampling_is_a_value_error_naming_it():
    x, z = _samples(1)
    est = KSVD(2, solver="nystrom", n_landmarks=5, sampling="bogus")  # stored, not checked, in __init__
    assert est.sampling == "bogus"
    with pytest.raises(ValueError, match="sampling"):
        est.fit(x, Z=z)
    with pytest.raises(ValueError, match="sampling"):
        embed(np.array([[0, 1], [1, 0]]), n_components=1, solver="nystrom", n_landmarks=2, sampling="bogus")
