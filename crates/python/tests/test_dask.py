"""ksvd.dask.fit, the paper's large-scale pipeline as the estimators plus a ridge step: it is
ksvd.KSVD on the a2-mapped data plus a standardised ridge classifier (checked against an
independent NumPy / scikit-learn computation of every step), equals the single-process run for
any cut of the rows into files (KSVD with either side mapped, and KPCA), survives a killed
worker, and fails cleanly on a bad partition.

Tolerances (see ksvd/dask.py): the landmarks, the labels and the gathered columns are exact; the
mapped landmark columns P are sums, regrouped by the partitioning, so they and what follows the
landmark SVD (singular values, embeddings) are compared at sqrt(eps) relative to their scale;
AUROC is a ranking and changes only if two scores swap (1e-9).
"""

import numpy as np
import pytest

pytest.importorskip("dask.distributed")

import scipy.sparse as sp  # noqa: E402
from sklearn.datasets import load_svmlight_file  # noqa: E402
from sklearn.metrics import roc_auc_score  # noqa: E402

import ksvd  # noqa: E402
from conftest import run_killing_a_worker, write_svmlight_pair  # noqa: E402
from ksvd import _ksvd  # noqa: E402
from ksvd import dask as kd  # noqa: E402

EPS = np.finfo(float).eps
OPTS = dict(n_components=6, n_landmarks=60, seed=3, n_features=80)


def synthetic_files(d, rows, test_rows, *, features, density, seed, parts, test_parts):
    """Seeded training and test rows in ``d`` (conftest's ``write_svmlight_pair``), split into
    ``parts`` and ``test_parts`` files."""
    whole = write_svmlight_pair(d, rows, test_rows, features=features, density=density, seed=seed)
    return tuple(kd.split_file(w, k, str(d), prefix=tag) for w, k, tag in zip(whole, (parts, test_parts), ("train", "test")))


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    d = tmp_path_factory.mktemp("dask-data")
    return synthetic_files(d, 3000, 800, features=80, density=0.1, seed=1, parts=7, test_parts=3)


@pytest.fixture(scope="module")
def single(data):
    return kd.fit_local(*data, **OPTS)


def assert_same(fit, ref):
    s, s_ref = fit.estimator.singular_values_, ref.estimator.singular_values_
    assert s.shape == s_ref.shape
    assert np.max(np.abs(s - s_ref)) <= np.sqrt(EPS) * s_ref[0]
    np.testing.assert_array_equal(fit.landmark_rows, ref.landmark_rows)
    assert (fit.shape, fit.compat, fit.n_test) == (ref.shape, ref.compat, ref.n_test)
    emb = np.asarray(fit.embeddings)
    ref_emb = np.asarray(ref.embeddings)
    assert emb.shape == ref_emb.shape
    assert np.max(np.abs(emb - ref_emb)) <= np.sqrt(EPS) * np.max(np.abs(ref_emb))
    assert abs(fit.bandwidth - ref.bandwidth) <= 64 * EPS * ref.bandwidth
    assert abs(fit.auroc - ref.auroc) <= 1e-9


def _ridge_scores(f, t, ridge, f_test):
    """The standardised ridge classifier in NumPy: ``min (1/n) ||t - Z w - b||^2 + ridge ||w||^2``
    on ``Z = (f - mean) / std``; the scores of ``f_test``."""
    mu, sd = f.mean(0), f.std(0)
    z = (f - mu) / sd
    n = len(t)
    w = np.linalg.solve(z.T @ z / n + ridge * np.eye(z.shape[1]), z.T @ (t - t.mean()) / n)
    return ((f_test - mu) / sd) @ w + t.mean()


def test_the_pipeline_is_ksvd_on_the_mapped_data_plus_ridge(data, single):
    # Every step recomputed independently on the gathered rows: the a2 map of the landmark
    # columns from the dense projection matrix (R = e_i R row by row), the median heuristic in
    # NumPy, ksvd.KSVD given the landmarks, a NumPy ridge, scikit-learn's AUROC.
    train, test = data
    x, y = load_svmlight_file(train[0], n_features=80)
    parts = [load_svmlight_file(f, n_features=80) for f in train]
    x = sp.vstack([p[0] for p in parts], format="csr")
    y = np.concatenate([p[1] for p in parts])
    tparts = [load_svmlight_file(f, n_features=80) for f in test]
    xt = sp.vstack([p[0] for p in tparts], format="csr")
    yt = np.concatenate([p[1] for p in tparts])
    n, m = x.shape
    assert single.shape == (n, m) and single.compat == "columns" and n > m
    rows, cols = single.landmark_rows, single.landmark_cols
    assert len(rows) == 60 and len(cols) == 60 and np.all(np.diff(rows) > 0) and np.all(np.diff(cols) > 0)
    r = single.projection.map_rows(np.eye(n))  # the N x M projection, row i generated from (seed, i)
    assert r.shape == (n, m) and 0 < np.count_nonzero(r) < r.size
    z = (r.T @ x[:, cols].toarray()).T  # z'_j = R^T X[:, j], one row per landmark column
    xi = x[rows].toarray()
    d2 = ((xi[:, None, :] - z[None, :, :]) ** 2).sum(-1).ravel()
    d2 = np.sort(d2[d2 > 0])
    gamma = np.sqrt(d2[len(d2) // 2])
    assert abs(single.bandwidth - gamma) <= 1e-12 * gamma
    est = ksvd.KSVD(n_components=6, bandwidth=gamma, solver="nystrom", landmark_rows=rows,
                    landmark_cols=np.arange(len(cols))).fit(x, Z=z)
    s = single.estimator.singular_values_
    assert np.max(np.abs(s - est.singular_values_)) <= np.sqrt(EPS) * s[0]
    scores = _ridge_scores(est.transform(x), np.where(y == 1, 1.0, -1.0), 1e-3, est.transform(xt))
    assert abs(roc_auc_score(yt == 1, scores) - single.auroc) <= 1e-9
    assert 0.5 < single.auroc <= 1.0  # the planted signal is found
    np.testing.assert_allclose(single.embeddings, est.transform(xt), rtol=0, atol=np.sqrt(EPS) * np.max(np.abs(single.embeddings)))


@pytest.mark.parametrize("method", ["ksvd", "kpca"])
def test_the_same_rows_cut_into_other_files_give_the_same_fit(tmp_path, method):
    # The landmarks are functions of the seed and the shape: the training rows as one file (what
    # `ksvd-stream run` reads) and cut into 2 or 5 files give the same landmarks and fit.
    train, test = write_svmlight_pair(tmp_path, 1500, 400, features=40, density=0.2, seed=4)
    opts = dict(method=method, n_components=5, n_landmarks=50, seed=2, n_features=40)
    one = kd.fit_local([train], [test], **opts)
    assert one.compat == (None if method == "kpca" else "columns")
    for parts in (2, 5):
        cut = kd.split_file(train, parts, str(tmp_path), prefix=f"cut{parts}")
        fit = kd.fit(cut, [test], **opts)
        assert isinstance(fit.estimator, kd.KSVD) and fit.estimator.n_passes_ > 0
        assert_same(fit, one)


def test_distributed_fit_equals_the_local_one(data, single):
    fit = kd.fit(*data, **OPTS)
    assert fit.embeddings.chunks[0] == (267, 267, 266)  # one block per test file
    assert_same(fit, single)


def test_kpca_is_the_symmetric_nystrom_method_on_the_landmark_rows(data):
    # KPCA's spectrum: the top eigenvalues of K[I, I], scaled by N/n (the symmetric Nystrom
    # method), from the same landmark rows as KSVD's key sketch.
    train, test = data
    fit = kd.fit(train, test, method="kpca", **OPTS)
    ref = kd.fit_local(train, test, method="kpca", **OPTS)
    assert_same(fit, ref)
    assert fit.compat is None and fit.landmark_cols is None
    x = sp.vstack([load_svmlight_file(f, n_features=80)[0] for f in train], format="csr")
    xi = x[fit.landmark_rows].toarray()
    d2 = ((xi[:, None, :] - xi[None, :, :]) ** 2).sum(-1)
    k = np.exp(-d2 / fit.bandwidth**2)
    lam = np.sort(np.linalg.eigvalsh(k))[::-1][:6]
    s = fit.estimator.singular_values_
    # The Nystrom scaling of the landmark spectrum is a common factor: compare the ratios.
    np.testing.assert_allclose(s / s[0], lam / lam[0], rtol=1e-9)
    assert 0.5 < fit.auroc <= 1.0


@pytest.mark.parametrize("method", ["ksvd", "kpca"])
def test_more_features_than_rows_maps_the_rows(tmp_path, method):
    # M > N: KSVD maps every row (x' = R^T x, N numbers) and takes the columns X[:, J] as the
    # column samples; the fit equals the single-process one for every partitioning.
    train, test = synthetic_files(tmp_path, 400, 200, features=600, density=0.02, seed=2, parts=5, test_parts=2)
    opts = dict(method=method, n_components=6, n_landmarks=50, seed=1, n_features=600)
    ref = kd.fit_local(train, test, **opts)
    assert ref.shape == (400, 600) and ref.compat == (None if method == "kpca" else "rows")
    fit = kd.fit(train, test, **opts)
    assert_same(fit, ref)
    if method == "ksvd":
        # The fitted model takes mapped rows: the projection's map of the test rows.
        xt = sp.vstack([load_svmlight_file(f, n_features=600)[0] for f in test], format="csr")
        mapped = fit.projection.map_rows(ksvd._convert.to_native(xt))
        np.testing.assert_allclose(fit.estimator.to_local().transform(mapped), ref.embeddings, rtol=0,
                                   atol=np.sqrt(EPS) * np.max(np.abs(ref.embeddings)))


def test_a_bag_of_paths_with_bz2_gives_the_same_fit(data, single, tmp_path):
    import bz2

    import dask.bag as db

    train, test = data
    packed = str(tmp_path / "train-0.svm.bz2")
    with open(train[0], "rb") as src, bz2.open(packed, "wb") as dst:
        dst.write(src.read())
    files = [packed] + train[1:]
    assert_same(kd.fit(db.from_sequence(files, npartitions=3), test, **OPTS), single)


def test_bad_partitions_name_themselves_and_write_nothing(data, tmp_path):
    train, test = data
    bad = tmp_path / "bad.svm"
    lines = open(train[2]).read().splitlines()
    lines[4] = "+1 3:0.5 oops"
    bad.write_text("\n".join(lines) + "\n")
    out = tmp_path / "out"
    out.mkdir()
    files = [train[0], train[1], str(bad)] + train[3:]
    with pytest.raises(ValueError, match=r"partition 2 \(.*bad\.svm\): cannot read it: .*bad\.svm:5:"):
        kd.fit(files, test, out_dir=str(out), **OPTS)
    with pytest.raises(ValueError, match=r"partition (\d) \(.*train-\1\.svm\): cannot read it: .*train-\1\.svm:\d+: feature index \d+ exceeds the 40"):
        kd.fit(train, test, **{**OPTS, "n_features": 40})
    with pytest.raises(ValueError, match="not binary"):
        _three_labels(tmp_path)
    with pytest.raises(ValueError, match="unknown method 'pca'"):
        kd.fit(train, test, method="pca", **OPTS)
    assert list(out.iterdir()) == []
    # The same call on good data writes the fitted estimator's model atomically.
    fit = kd.fit(train, test, out_dir=str(out), **OPTS)
    assert [p.name for p in out.iterdir()] == ["model.ksvd"]
    back = ksvd.load(out / "model.ksvd")
    x = load_svmlight_file(test[0], n_features=80)[0]
    np.testing.assert_allclose(back.transform(x), np.asarray(fit.embeddings)[: x.shape[0]], rtol=0,
                               atol=np.sqrt(EPS) * np.max(np.abs(np.asarray(fit.embeddings))))


def _three_labels(tmp_path):
    from sklearn.datasets import dump_svmlight_file

    x = sp.random(30, 5, density=0.5, random_state=0, format="csr")
    path = str(tmp_path / "three.svm")
    dump_svmlight_file(x, np.arange(30) % 3, path, zero_based=False)
    kd.fit([path], [path], n_components=2, n_landmarks=5)


def test_the_old_keyword_names_are_deprecated_aliases(data, single):
    with pytest.warns(DeprecationWarning) as record:
        old = kd.fit_local(*data, rank=6, landmarks=60, seed=3, n_features=80)
    assert sorted(str(w.message) for w in record) == [
        "ksvd.dask.fit: landmarks= is deprecated; use n_landmarks=",
        "ksvd.dask.fit: rank= is deprecated; use n_components=",
    ]
    assert old.auroc == single.auroc
    with pytest.raises(TypeError, match="unexpected keyword argument 'components'"):
        kd.fit(*data, components=4)


def test_a_killed_worker_changes_nothing(data):
    from dask.distributed import Client, LocalCluster

    train, test = data
    # One worker process is killed (SIGKILL) once the first tasks run; its nanny restarts it and
    # the scheduler recomputes the partitions it held (persisted rows included). With the same
    # partitioning the reduction tree is fixed, so the result equals the undisturbed run.
    with LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None) as cluster, Client(
        cluster
    ) as client:
        calm = kd.fit(train, test, **OPTS)
        hit = run_killing_a_worker(client, lambda: kd.fit(train, test, **OPTS))
        np.testing.assert_array_equal(hit.estimator.singular_values_, calm.estimator.singular_values_)
        assert hit.auroc == calm.auroc
        np.testing.assert_array_equal(hit.weights, calm.weights)
