"""A model of the out-of-core fit travels: ``ksvd.dask.fit(out_dir=)`` writes it, ``ksvd.load``
reads it back (through the Rust loaders) as a fitted :class:`ksvd.StreamingModel` whose
embeddings and scores are the fit's own; a changed or truncated file, or a partial state that is
not a model, is a clear error."""

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
from ksvd import _ksvd  # noqa: E402
from ksvd import dask as kd  # noqa: E402

EPS = np.finfo(float).eps
FEATURES = 30
OPTS = dict(n_components=4, n_landmarks=40, chunk_rows=100, seed=5, n_features=FEATURES, scheduler="synchronous")


@pytest.fixture(scope="module", params=["ksvd", "kpca"])
def fitted(request, tmp_path_factory):
    d = tmp_path_factory.mktemp(f"stream-{request.param}")
    train, test = write_svmlight_pair(d, 400, 150, features=FEATURES, density=0.3, seed=4)
    fit = kd.fit([train], [test], method=request.param, out_dir=str(d), **OPTS)
    x, y = load_svmlight_file(test, n_features=FEATURES, zero_based=False)
    return request.param, fit, d / f"model.{request.param}-trained", x, y


def test_load_gives_the_fits_embeddings_and_scores(fitted):
    method, fit, path, x, y = fitted
    model = ksvd.load(path)
    assert isinstance(model, ksvd.StreamingModel) and model.method == method
    spectrum = fit.model.singular_values() if method == "ksvd" else fit.model.eigenvalues()
    np.testing.assert_array_equal(model.singular_values_, spectrum)
    np.testing.assert_array_equal(model.landmark_rows_, fit.model.row_landmarks)
    assert model.n_components == 4 and model.n_features_in_ == FEATURES and model.bandwidth_ == fit.model.gamma
    # The embeddings of the test rows, sparse or dense, are those pass 4 computed (the same
    # per-row arithmetic), and the classifier's scores give the fit's AUROC.
    emb = fit.embeddings.compute(scheduler="synchronous")
    scale = np.max(np.abs(emb))
    for rows in (x, x.toarray()):
        np.testing.assert_allclose(model.transform(rows), emb, rtol=0, atol=64 * EPS * scale)
    scores = model.decision_function(x)
    np.testing.assert_allclose(scores, emb @ model.coef_ + model.intercept_, rtol=0, atol=1e-12 * np.max(np.abs(scores)))
    assert abs(roc_auc_score(y == y.max(), scores) - fit.auroc) <= 1e-12
    # float32 rows give float32 output.
    assert model.transform(x.astype(np.float32)).dtype == np.float32


def test_save_bytes_and_pickle_round_trip(fitted, tmp_path):
    _, fit, path, x, _ = fitted
    model = ksvd.load(path)
    again = tmp_path / "again"
    model.save(again)
    assert again.read_bytes() == path.read_bytes() == model.to_bytes()
    assert ksvd.load(path.read_bytes()).to_bytes() == model.to_bytes()
    back = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(back.transform(x), model.transform(x))


def test_bad_files_are_clear_errors(fitted, tmp_path):
    _, fit, path, x, _ = fitted
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
    # A partial state of the passes is not a model.
    bad.write_bytes(fit.scan.to_bytes())
    with pytest.raises(ValueError, match="a `ksvd-streaming-scan` document is not a trained model .* ksvd.load also reads `ksvd-model` documents"):
        ksvd.load(bad)
    with pytest.raises(ValueError, match="cannot read the model file"):
        ksvd.load(tmp_path / "missing")
    model = ksvd.load(path)
    with pytest.raises(ValueError, match=f"the rows have {FEATURES + 1} features, the model {FEATURES}"):
        model.transform(np.zeros((2, FEATURES + 1)))


def test_the_old_keyword_names_are_deprecated_aliases(fitted):
    method, fit, _, _, _ = fitted
    opts = {k: v for k, v in OPTS.items() if k not in ("n_components", "n_landmarks")}
    with pytest.warns(DeprecationWarning) as record:
        old = kd.fit(*_files(fitted), method=method, rank=4, landmarks=40, **opts)
    assert sorted(str(w.message) for w in record) == [
        "ksvd.dask.fit: landmarks= is deprecated; use n_landmarks=",
        "ksvd.dask.fit: rank= is deprecated; use n_components=",
    ]
    # The same files and parameters as the fixture's fit: the same model, byte for byte.
    assert old.model.to_bytes() == fit.model.to_bytes()
    with pytest.raises(TypeError, match="unexpected keyword argument 'components'"):
        kd.fit(*_files(fitted), method=method, components=4, **opts)
    with pytest.raises(ValueError, match="unknown streaming method 'svd'"):
        kd.fit(*_files(fitted), method="svd", **OPTS)


def _files(fitted):
    path = fitted[2]
    return [str(path.parent / "train.svm")], [str(path.parent / "test.svm")]


STREAM = os.environ.get("KSVD_STREAM") or os.path.join(
    os.path.dirname(__file__), "..", "..", "..", "target", "release", "ksvd-stream"
)


@pytest.mark.skipif(
    not os.path.isfile(STREAM),
    reason=f"ksvd-stream is not built ({os.path.normpath(STREAM)}; cargo build --release -p ksvd-streaming, or set KSVD_STREAM)",
)
def test_a_model_of_ksvd_stream_loads_and_embeds_as_the_dask_fits(fitted, tmp_path):
    method, fit, _, x, _ = fitted
    train, test = _files(fitted)
    args = ["run", "--train", train[0], "--test", test[0], "--method", method, "--out", str(tmp_path)]
    args += ["--n-components", "4", "--n-landmarks", "40", "--chunk-rows", "100", "--seed", "5", "--features", str(FEATURES)]
    done = subprocess.run([STREAM, *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    model = ksvd.load(tmp_path / f"model.{method}-trained")
    # The same passes on the same rows: the same landmarks, the same embeddings to rounding.
    np.testing.assert_array_equal(model.landmark_rows_, fit.model.row_landmarks)
    emb = fit.embeddings.compute(scheduler="synchronous")
    np.testing.assert_allclose(model.transform(x), emb, rtol=0, atol=np.sqrt(EPS) * np.max(np.abs(emb)))
