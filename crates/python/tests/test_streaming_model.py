"""A model of the out-of-core fit travels: ``ksvd-stream run --out`` writes it, ``ksvd.load``
reads it back (through the Rust loaders) as a fitted :class:`ksvd.StreamingModel`; a changed or
truncated file is a clear error. ``ksvd.dask.fit`` on the same files and parameters (the
estimators plus a ridge step) chooses the same landmarks and gives the same embeddings up to a
scale per column (the stream normalises its columns), hence the same AUROC."""

import os
import pickle
import subprocess

import numpy as np
import pytest
from sklearn.datasets import load_svmlight_file
from sklearn.metrics import roc_auc_score

pytest.importorskip("dask")

import ksvd  # noqa: E402
from conftest import write_svmlight_pair  # noqa: E402
from ksvd import dask as kd  # noqa: E402

EPS = np.finfo(float).eps
FEATURES = 30
STREAM = os.environ.get("KSVD_STREAM") or os.path.join(
    os.path.dirname(__file__), "..", "..", "..", "target", "release", "ksvd-stream"
)
pytestmark = pytest.mark.skipif(
    not os.path.isfile(STREAM),
    reason=f"ksvd-stream is not built ({os.path.normpath(STREAM)}; cargo build --release -p ksvd-streaming, or set KSVD_STREAM)",
)


@pytest.fixture(scope="module", params=["ksvd", "kpca"])
def fitted(request, tmp_path_factory):
    method = request.param
    d = tmp_path_factory.mktemp(f"stream-{method}")
    train, test = write_svmlight_pair(d, 400, 150, features=FEATURES, density=0.3, seed=4)
    args = ["run", "--train", train, "--test", test, "--method", method, "--out", str(d)]
    args += ["--n-components", "4", "--n-landmarks", "40", "--chunk-rows", "100", "--seed", "5", "--features", str(FEATURES)]
    done = subprocess.run([STREAM, *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    x, y = load_svmlight_file(test, n_features=FEATURES, zero_based=False)
    return method, d / f"model.{method}-trained", x, y, train, test


def test_load_gives_a_fitted_streaming_model(fitted):
    method, path, x, y, _, _ = fitted
    model = ksvd.load(path)
    assert isinstance(model, ksvd.StreamingModel) and model.method == method
    assert model.n_components == 4 and model.n_features_in_ == FEATURES and len(model.landmark_rows_) == 40
    emb = model.transform(x)
    np.testing.assert_allclose(model.transform(x.toarray()), emb, rtol=0, atol=64 * EPS * np.max(np.abs(emb)))
    scores = model.decision_function(x)
    np.testing.assert_allclose(scores, emb @ model.coef_ + model.intercept_, rtol=0, atol=1e-12 * np.max(np.abs(scores)))
    assert 0.5 < roc_auc_score(y == y.max(), scores) <= 1.0
    # float32 rows give float32 output.
    assert model.transform(x.astype(np.float32)).dtype == np.float32


def test_the_dask_pipeline_gives_the_streams_landmarks_embeddings_and_auroc(fitted):
    method, path, x, y, train, test = fitted
    model = ksvd.load(path)
    fit = kd.fit([train], [test], method=method, n_components=4, n_landmarks=40, seed=5, n_features=FEATURES)
    np.testing.assert_array_equal(fit.landmark_rows, model.landmark_rows_)
    assert fit.bandwidth == pytest.approx(model.bandwidth_, rel=64 * EPS)
    # The spectra agree up to the Nystrom scaling (a common factor).
    s, t = fit.estimator.singular_values_, model.singular_values_
    np.testing.assert_allclose(s / s[0], t / t[0], rtol=np.sqrt(EPS))
    # Column k of the stream's embedding is c_k times column k of the pipeline's.
    a, b = model.transform(x), np.asarray(fit.embeddings)
    c = (a * b).sum(0) / (b * b).sum(0)
    assert np.max(np.abs(a - b * c)) <= np.sqrt(EPS) * np.max(np.abs(a))
    assert abs(roc_auc_score(y == y.max(), model.decision_function(x)) - fit.auroc) <= 1e-9


def test_save_bytes_and_pickle_round_trip(fitted, tmp_path):
    _, path, x, _, _, _ = fitted
    model = ksvd.load(path)
    again = tmp_path / "again"
    model.save(again)
    assert again.read_bytes() == path.read_bytes() == model.to_bytes()
    assert ksvd.load(path.read_bytes()).to_bytes() == model.to_bytes()
    back = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(back.transform(x), model.transform(x))


def test_bad_files_are_clear_errors(fitted, tmp_path):
    _, path, x, _, _, _ = fitted
    raw = path.read_bytes()
    bad = tmp_path / "bad"
    # One changed digit of the payload: the checksum says so.
    i = raw.index(b'"bias":') + len(b'"bias":') + 2
    digit = raw[i : i + 1]
    bad.write_bytes(raw[:i] + (b"1" if digit != b"1" else b"2") + raw[i + 1 :])
    with pytest.raises(ValueError, match="document is corrupt: its payload.s SHA-256"):
        ksvd.load(bad)
    bad.write_bytes(raw[: len(raw) // 2])
    with pytest.raises(ValueError, match="truncated"):
        ksvd.load(bad)
    with pytest.raises(ValueError, match="cannot read the model file"):
        ksvd.load(tmp_path / "missing")
    model = ksvd.load(path)
    with pytest.raises(ValueError, match=f"the rows have {FEATURES + 1} features, the model {FEATURES}"):
        model.transform(np.zeros((2, FEATURES + 1)))
