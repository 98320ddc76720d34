"""scikit-learn conventions: check_estimator, pipelines, grid search, parameters, cloning."""

import inspect
import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, cross_val_score
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
    "KSVD-sne": (ksvd.KSVD(kernel="sne"), {}),
    "KSVD-rbf-centred": (ksvd.KSVD(kernel="rbf", center=True), {}),
    "KSVD-precomputed": (ksvd.KSVD(kernel="precomputed"), RECTANGULAR_G),
    "KSVD-nystrom": (ksvd.KSVD(solver="nystrom", n_landmarks=10), {}),
    "KPCA": (ksvd.KPCA(), {}),
    "KPCA-gamma": (ksvd.KPCA(gamma=0.1, n_jobs=1), {}),
    "KPCA-precomputed": (ksvd.KPCA(kernel="precomputed"), {}),
}


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_check_estimator(name):
    estimator, exempt = ESTIMATORS[name]
    check_estimator(estimator, expected_failed_checks=exempt)


def test_pipeline_with_grid_search_over_bandwidth():
    X, y = make_classification(n_samples=120, n_features=6, n_informative=4, random_state=0)
    pipe = Pipeline([("ksvd", ksvd.KSVD(n_components=5, kernel="rbf")), ("clf", LogisticRegression())])
    grid = [0.5, 2.0, 8.0]
    search = GridSearchCV(pipe, {"ksvd__bandwidth": grid}, cv=3).fit(X, y)
    # Each candidate's score is that of the pipeline with its bandwidth, fitted on its own (the
    # same folds): so set_params reached the estimator, and the bandwidths give different scores.
    scores = [cross_val_score(clone(pipe).set_params(ksvd__bandwidth=b), X, y, cv=3).mean() for b in grid]
    np.testing.assert_allclose(search.cv_results_["mean_test_score"], scores, rtol=0, atol=1e-12)
    assert len(set(np.round(scores, 12))) == len(grid)
    assert search.best_params_["ksvd__bandwidth"] == grid[int(np.argmax(scores))]
    # The refitted pipeline's KSVD used the chosen bandwidth (not the rule's).
    assert search.best_estimator_.named_steps["ksvd"].bandwidth_ == search.best_params_["ksvd__bandwidth"]
    np.testing.assert_array_equal(search.predict(X), search.best_estimator_.predict(X))


def test_get_params_set_params_clone():
    est = ksvd.KSVD(n_components=4, kernel="rbf", bandwidth=0.7, random_state=3)
    params = est.get_params()
    # Every constructor argument is a parameter (their defaults are test_conventions.py's), and the
    # given ones come back as given.
    assert sorted(params) == sorted(inspect.signature(ksvd.KSVD).parameters)
    assert (params["n_components"], params["bandwidth"], params["random_state"]) == (4, 0.7, 3)
    assert params["kernel"] == "rbf" and params["gamma"] is None
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
    assert list(ksvd.KPCA(n_components=2).fit(X).get_feature_names_out()) == ["kpca0", "kpca1"]


def test_pandas_output_and_feature_names():
    pd = pytest.importorskip("pandas")
    X = pd.DataFrame(np.random.default_rng(0).normal(size=(20, 3)), columns=["a", "b", "c"])
    est = ksvd.KSVD(n_components=2).set_output(transform="pandas").fit(X)
    assert list(est.feature_names_in_) == ["a", "b", "c"]
    out = est.transform(X)
    assert list(out.columns) == ["ksvd0", "ksvd1"]
    np.testing.assert_allclose(out.to_numpy(), est.row_embedding_ * np.sqrt(est.singular_values_), rtol=0, atol=1e-10)
