"""scikit-learn conventions: check_estimator, pipelines, grid search, parameters, cloning."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline
from sklearn.utils.estimator_checks import check_estimator

import ksvd

# Checks exempted from check_estimator, and why.
RECTANGULAR_G = {
    # KSVD's precomputed kernel matrix is G = k(X, Z), n x m: rectangular by design (Z is not X),
    # so it must not refuse non-square input. KPCA's K(X, X) must be square, and is checked.
    "check_nonsquare_error": "a precomputed asymmetric kernel matrix G is n x m, rectangular by design",
}
ESTIMATORS = {
    "KSVD": (ksvd.KSVD(), {}),
    "KSVD-rbf-centred": (ksvd.KSVD(kernel="rbf", center=True), {}),
    "KSVD-precomputed": (ksvd.KSVD(kernel="precomputed"), RECTANGULAR_G),
    "KPCA": (ksvd.KPCA(), {}),
    "KPCA-precomputed": (ksvd.KPCA(kernel="precomputed"), {}),
}


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_check_estimator(name):
    estimator, exempt = ESTIMATORS[name]
    check_estimator(estimator, expected_failed_checks=exempt)


def test_pipeline_with_grid_search_over_bandwidth():
    X, y = make_classification(n_samples=120, n_features=6, n_informative=4, random_state=0)
    pipe = Pipeline([("ksvd", ksvd.KSVD(n_components=5, kernel="rbf", random_state=0)), ("clf", LogisticRegression())])
    search = GridSearchCV(pipe, {"ksvd__bandwidth": [0.5, 2.0, 8.0]}, cv=3).fit(X, y)
    assert search.best_params_["ksvd__bandwidth"] in (0.5, 2.0, 8.0)
    assert search.best_estimator_.named_steps["ksvd"].bandwidth_ == search.best_params_["ksvd__bandwidth"]
    assert search.predict(X).shape == (120,)
    assert 0.0 <= search.best_score_ <= 1.0


def test_get_params_set_params_clone():
    est = ksvd.KSVD(n_components=4, kernel="rbf", bandwidth=0.7, random_state=3)
    params = est.get_params()
    assert params == dict(
        n_components=4,
        kernel="rbf",
        bandwidth=0.7,
        degree=2,
        coef0=1.0,
        center=False,
        solver="auto",
        n_landmarks=None,
        sampling="uniform",
        tol=1e-10,
        random_state=3,
    )
    assert est.set_params(bandwidth=1.5) is est and est.bandwidth == 1.5
    X = np.random.default_rng(0).normal(size=(20, 3))
    est.fit(X)
    c = clone(est)
    assert c.get_params() == est.get_params()
    assert not hasattr(c, "singular_values_")
    np.testing.assert_array_equal(c.fit(X).singular_values_, est.singular_values_)
    assert ksvd.KPCA().get_params()["kernel"] == "rbf" and ksvd.KPCA().get_params()["center"] is True


def test_feature_names_out():
    X = np.random.default_rng(0).normal(size=(20, 3))
    est = ksvd.KSVD(n_components=3).fit(X)
    assert list(est.get_feature_names_out()) == ["ksvd0", "ksvd1", "ksvd2"]
