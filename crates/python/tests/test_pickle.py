"""Models travel: pickling, ``save`` and :func:`ksvd.load` go through the model's checksummed
envelope (the Rust ``KsvdModel::to_bytes``) and round-trip exactly; a changed byte is refused."""

import os
import pickle

import numpy as np
import pytest

import ksvd

CASES = {
    "sne": lambda: ksvd.KSVD(n_components=3, kernel="sne", random_state=1),
    "rbf-centred-nystrom": lambda: ksvd.KSVD(n_components=3, center=True, solver="nystrom", n_landmarks=15, random_state=2),
    "precomputed": lambda: ksvd.KSVD(n_components=2, kernel="precomputed"),
    "compat": lambda: ksvd.KSVD(n_components=2, compat="a0", bandwidth=2.0),
    "kpca": lambda: ksvd.KPCA(n_components=3),
    "kpca-nystrom": lambda: ksvd.KPCA(n_components=3, solver="nystrom", n_landmarks=12),
    "kpca-precomputed": lambda: ksvd.KPCA(n_components=2, kernel="precomputed"),
}


def fitted(name):
    """A fitted estimator of ``CASES[name]`` with new rows and columns in the form it takes."""
    rng = np.random.default_rng(5)
    X, Z, Xn = rng.normal(size=(25, 3)), rng.normal(size=(20, 3)), rng.normal(size=(6, 3))
    est = CASES[name]()
    if name == "precomputed":
        return est.fit(X @ Z.T), Xn @ Z.T, Xn @ X.T
    if name == "kpca-precomputed":
        return est.fit(X @ X.T), Xn @ X.T, Xn @ X.T
    if name == "compat":
        A = rng.normal(size=(8, 12))
        return est.fit(A), rng.normal(size=(3, 12)), rng.normal(size=(4, 8))
    if isinstance(est, ksvd.KPCA):
        return est.fit(X), Xn, Xn
    return est.fit(X, Z=Z), Xn, Xn


def assert_same_model(again, est, rows, cols):
    assert type(again) is type(est)
    for name in ("singular_values_", "row_embedding_", "col_embedding_", "residuals_", "landmark_rows_", "landmark_cols_"):
        if getattr(est, name) is None:  # residuals_ of a KSVD Nystrom model; landmarks of others
            assert getattr(again, name) is None, name
        else:
            np.testing.assert_array_equal(getattr(again, name), getattr(est, name), err_msg=name)
    assert again.bandwidth_ == est.bandwidth_
    assert again.n_features_in_ == est.n_features_in_
    for method, data in (("transform", rows), ("extend", rows), ("transform_cols", cols), ("extend_cols", cols)):
        np.testing.assert_array_equal(getattr(again, method)(data), getattr(est, method)(data), err_msg=method)
    assert again.to_bytes() == est.to_bytes()


@pytest.mark.parametrize("name", sorted(CASES))
def test_pickle_round_trip(name):
    est, rows, cols = fitted(name)
    again = pickle.loads(pickle.dumps(est))
    assert again.get_params() == est.get_params()
    assert_same_model(again, est, rows, cols)
    if isinstance(est, ksvd.KPCA):
        np.testing.assert_array_equal(again.eigenvalues_, est.eigenvalues_)
        np.testing.assert_array_equal(again.eigenvectors_, est.eigenvectors_)


@pytest.mark.parametrize("name", sorted(CASES))
def test_save_and_load_round_trip(name, tmp_path):
    est, rows, cols = fitted(name)
    path = tmp_path / "model.json"
    est.save(path)
    assert os.listdir(tmp_path) == ["model.json"]  # written atomically: no temporary left
    for source in (path, str(path), tmp_path, est.to_bytes()):  # a directory holds model.json
        again = ksvd.load(source)
        assert_same_model(again, est, rows, cols)
        # The loaded estimator has the model's parameters (the bandwidth the fit used).
        assert again.get_params()["bandwidth"] == est.bandwidth_
        for key in ("n_components", "kernel", "solver", "center", "n_landmarks", "compat"):
            assert again.get_params()[key] == est.get_params()[key], key


def test_loaded_models_refit_like_the_original():
    rng = np.random.default_rng(8)
    X, Z = rng.normal(size=(30, 4)), rng.normal(size=(22, 4))
    est = ksvd.KSVD(n_components=3, kernel="laplacian", gamma=0.7, solver="rsvd", oversampling=5, power_iters=3, random_state=4).fit(X, Z=Z)
    again = ksvd.load(est.to_bytes())
    params = again.get_params()
    assert (params["oversampling"], params["power_iters"], params["random_state"]) == (5, 3, 4)
    assert params["bandwidth"] == pytest.approx(1 / 0.7, rel=1e-15) and params["gamma"] is None
    refit = again.fit(X, Z=Z)
    np.testing.assert_array_equal(refit.singular_values_, est.singular_values_)


def tampered(data, model_bytes):
    """``data`` with one digit of the model's payload changed."""
    start = data.index(model_bytes)
    at = model_bytes.index(b'"s":')
    at = next(i for i in range(at, len(model_bytes)) if model_bytes[i : i + 1].isdigit() and model_bytes[i : i + 1] != b"9")
    pos = start + at
    return data[:pos] + bytes([data[pos] + 1]) + data[pos + 1 :]


def test_a_tampered_pickle_or_model_is_refused():
    est, _, _ = fitted("sne")
    model_bytes = est.to_bytes()
    with pytest.raises(ValueError, match="SHA-256"):
        pickle.loads(tampered(pickle.dumps(est), model_bytes))
    with pytest.raises(ValueError, match="SHA-256"):
        ksvd.load(tampered(model_bytes, model_bytes))
    with pytest.raises(ValueError, match="SHA-256"):
        pickle.loads(tampered(pickle.dumps(est._model), model_bytes))


def test_a_truncated_model_file_or_another_version_is_refused(tmp_path):
    est, _, _ = fitted("sne")
    path = tmp_path / "model.json"
    est.save(path)
    raw = path.read_bytes()
    path.write_bytes(raw[: len(raw) - 10])
    with pytest.raises(ValueError, match="truncated"):
        ksvd.load(path)
    newer = raw.replace(b'"format_version":2', b'"format_version":99', 1)
    assert newer != raw
    with pytest.raises(ValueError, match="version 99"):
        ksvd.load(newer)


def test_unfitted_estimator_pickles():
    est = ksvd.KSVD(n_components=3, bandwidth=2.0)
    again = pickle.loads(pickle.dumps(est))
    assert again.get_params() == est.get_params()
    assert not hasattr(again, "singular_values_")


def test_float32_models_pickle_in_float32():
    X = np.random.default_rng(2).normal(size=(20, 3)).astype(np.float32)
    est = ksvd.KPCA(n_components=2).fit(X)
    again = pickle.loads(pickle.dumps(est))
    assert again.eigenvalues_.dtype == np.float32 and again.transform(X).dtype == np.float32
    np.testing.assert_array_equal(again.transform(X), est.transform(X))


def test_a_model_whose_kernel_this_build_does_not_know_is_refused():
    # A well-formed document (valid checksum) naming a kernel this build lacks, as a newer
    # writer could produce: the loader says which kernel, instead of guessing.
    import hashlib

    est, _, _ = fitted("sne")
    raw = est.to_bytes()
    head, payload = raw.split(b',"payload":', 1)
    payload = payload[:-1]  # the envelope's closing brace
    assert b'{"Sne":' in payload
    payload = payload.replace(b'{"Sne":', b'{"Wavelet":', 1)
    old_sum = hashlib.sha256(raw.split(b',"payload":', 1)[1][:-1]).hexdigest().encode()
    assert old_sum in head
    head = head.replace(old_sum, hashlib.sha256(payload).hexdigest().encode())
    with pytest.raises(ValueError, match="Wavelet"):
        ksvd.load(head + b',"payload":' + payload + b"}")
