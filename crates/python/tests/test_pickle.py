"""Pickling goes through the model's serde form and round-trips exactly."""

import pickle

import numpy as np
import pytest

import ksvd


@pytest.mark.parametrize(
    "make",
    [
        lambda: ksvd.KSVD(n_components=3, kernel="sne", random_state=1),
        lambda: ksvd.KSVD(n_components=3, kernel="rbf", center=True, solver="nystrom", n_landmarks=15, random_state=2),
        lambda: ksvd.KSVD(n_components=2, kernel="precomputed"),
        lambda: ksvd.KPCA(n_components=3),
    ],
    ids=["sne", "rbf-centred-nystrom", "precomputed", "kpca"],
)
def test_pickle_round_trip(make):
    rng = np.random.default_rng(5)
    X, Z, Xn = rng.normal(size=(25, 3)), rng.normal(size=(20, 3)), rng.normal(size=(6, 3))
    est = make()
    if est.kernel == "precomputed":
        X, Xn = X @ Z.T, Xn @ Z.T
        est.fit(X)
    elif isinstance(est, ksvd.KSVD):
        est.fit(X, Z=Z)
    else:
        est.fit(X)
    again = pickle.loads(pickle.dumps(est))
    assert again.get_params() == est.get_params()
    for name in ("singular_values_", "row_embedding_", "col_embedding_", "residuals_"):
        if getattr(est, name) is None:  # residuals_ of the Nystrom solver
            assert getattr(again, name) is None
        else:
            np.testing.assert_array_equal(getattr(again, name), getattr(est, name))
    # The native model itself round-trips through its serde form (bit-identical extension).
    assert pickle.loads(pickle.dumps(est._model)).to_bytes() == est._model.to_bytes()
    assert again.bandwidth_ == est.bandwidth_
    np.testing.assert_array_equal(again.transform(Xn), est.transform(Xn))
    if est.kernel != "precomputed" and isinstance(est, ksvd.KSVD):
        np.testing.assert_array_equal(again.transform_cols(Xn), est.transform_cols(Xn))


def test_corrupt_model_bytes_are_a_value_error():
    from ksvd import _ksvd

    with pytest.raises(ValueError, match="model"):
        _ksvd.KsvdModel._from_state(b"{not json", False)


def test_unfitted_estimator_pickles():
    est = ksvd.KSVD(n_components=3, bandwidth=2.0)
    again = pickle.loads(pickle.dumps(est))
    assert again.get_params() == est.get_params()
