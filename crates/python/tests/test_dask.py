"""ksvd.dask: the distributed out-of-core fit (KSVD with either side mapped, and KPCA) equals the
single-process one for any partitioning and merge order and for any cut of the training rows
into files, survives a killed worker, and fails cleanly on a malformed line.

Tolerances (see ksvd/dask.py): sums regrouped differently change by at most N eps relative;
quantities behind the landmark SVD (singular values, embeddings, scores) are compared at
sqrt(eps) relative to their scale; AUROC is a ranking and changes only if two scores swap.
"""

import functools
import pickle
import time

import numpy as np
import pytest

pytest.importorskip("dask.distributed")

from conftest import run_killing_a_worker, write_svmlight_pair  # noqa: E402
from ksvd import _ksvd  # noqa: E402
from ksvd import dask as kd  # noqa: E402

EPS = np.finfo(float).eps
OPTS = dict(n_components=6, n_landmarks=60, chunk_rows=300, seed=3, n_features=80)


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
    train, test = data
    fit = kd.fit_local(train, test, **OPTS)
    return fit, fit.embeddings.compute(scheduler="synchronous")


def assert_same(fit, emb, ref, ref_emb):
    s, s_ref = fit.model.singular_values(), ref.model.singular_values()
    assert s.shape == s_ref.shape
    assert np.max(np.abs(s - s_ref)) <= np.sqrt(EPS) * s_ref[0]
    assert fit.model.row_landmarks == ref.model.row_landmarks
    assert emb.shape == ref_emb.shape
    assert np.max(np.abs(emb - ref_emb)) <= np.sqrt(EPS) * np.max(np.abs(ref_emb))
    assert abs(fit.auroc - ref.auroc) <= 1e-9


@pytest.mark.parametrize("npartitions,order_seed", [(2, None), (3, 5), (7, 11)])
def test_partition_count_and_order_do_not_matter(data, single, npartitions, order_seed):
    train, test = data
    fit = kd.fit(train, test, npartitions=npartitions, order_seed=order_seed, scheduler="threads", **OPTS)
    assert_same(fit, fit.embeddings.compute(scheduler="threads"), *single)
    assert fit.landmarks.has_columns and len(fit.model.row_landmarks) == 60
    assert 0.5 < fit.auroc <= 1.0  # the planted signal is found


@pytest.mark.parametrize("method,spectrum", [("ksvd", "singular_values"), ("kpca", "eigenvalues")])
def test_the_same_rows_cut_into_other_files_give_the_same_fit(tmp_path, method, spectrum):
    # The landmark keys are global row ids: the training rows as one file (what `ksvd-stream run`
    # reads) and cut into 2 or 5 files give the same landmark rows and the same fit to rounding.
    train, test = write_svmlight_pair(tmp_path, 1500, 400, features=40, density=0.2, seed=4)
    opts = dict(method=method, n_components=5, n_landmarks=50, chunk_rows=200, seed=2, n_features=40)
    one = kd.fit_local([train], [test], **opts)
    s_one = getattr(one.model, spectrum)()
    for parts in (2, 5):
        cut = kd.split_file(train, parts, str(tmp_path), prefix=f"cut{parts}")
        fit = kd.fit(cut, [test], npartitions=parts, order_seed=parts, scheduler="threads", **opts)
        assert fit.model.row_landmarks == one.model.row_landmarks
        assert len(fit.model.row_landmarks) == 50 and fit.scan.rows == 1500
        s = getattr(fit.model, spectrum)()
        assert np.max(np.abs(s - s_one)) <= 8 * 1500 * EPS * s_one[0]
        assert abs(fit.auroc - one.auroc) <= 1e-9


@pytest.fixture(scope="module")
def single_kpca(data):
    train, test = data
    fit = kd.fit_local(train, test, method="kpca", **OPTS)
    return fit, fit.embeddings.compute(scheduler="synchronous")


@pytest.mark.parametrize("npartitions,order_seed", [(2, None), (4, 5), (7, 11)])
def test_kpca_partition_count_and_order_do_not_matter(data, single_kpca, npartitions, order_seed):
    # KPCA's solve sees only the landmark rows (the same for every partitioning), so its
    # eigenvalues are bit for bit the same; embeddings and AUROC go through the merged sums.
    train, test = data
    ref, ref_emb = single_kpca
    fit = kd.fit(train, test, method="kpca", npartitions=npartitions, order_seed=order_seed, scheduler="threads", **OPTS)
    np.testing.assert_array_equal(fit.model.eigenvalues(), ref.model.eigenvalues())
    assert fit.model.row_landmarks == ref.model.row_landmarks
    emb = fit.embeddings.compute(scheduler="threads")
    assert emb.shape == ref_emb.shape == (800, fit.model.rank)
    assert np.max(np.abs(emb - ref_emb)) <= np.sqrt(EPS) * np.max(np.abs(ref_emb))
    assert abs(fit.auroc - ref.auroc) <= 1e-9 and 0.5 < fit.auroc <= 1.0
    assert not fit.landmarks.has_columns, "KPCA's pass 2 carries the landmark rows only"


def test_kpca_states_pickle_and_are_not_ksvd_states(data):
    train, test = data
    fit = kd.fit_local(train, test, method="kpca", **OPTS)
    back = pickle.loads(pickle.dumps(fit.model))
    np.testing.assert_array_equal(back.weights(), fit.model.weights())
    with pytest.raises(ValueError, match='"ksvd-streaming-trained-kpca"'):
        _ksvd.TrainedKsvd.from_bytes(fit.model.to_bytes())
    with pytest.raises(ValueError, match="method 'pca'"):
        kd.fit(train, test, method="pca", **OPTS)


@pytest.mark.parametrize("method", ["ksvd", "kpca"])
def test_more_features_than_rows_maps_the_rows(tmp_path, method):
    # M > N: KSVD maps the rows (pass 2 gathers the sparse X[:, J], merged exactly); the fit
    # equals the single-process one for every partitioning.
    train, test = synthetic_files(tmp_path, 400, 200, features=600, density=0.02, seed=2, parts=5, test_parts=2)
    opts = dict(method=method, n_components=6, n_landmarks=50, chunk_rows=90, seed=1, n_features=600)
    ref = kd.fit_local(train, test, **opts)
    spectrum = "singular_values" if method == "ksvd" else "eigenvalues"
    s_ref = getattr(ref.model, spectrum)()
    for npartitions, order_seed in [(2, None), (5, 3)]:
        fit = kd.fit(train, test, npartitions=npartitions, order_seed=order_seed, scheduler="threads", **opts)
        assert fit.plan.shape == (400, 600)
        s = getattr(fit.model, spectrum)()
        assert np.max(np.abs(s - s_ref)) <= 8 * 400 * EPS * s_ref[0]
        assert abs(fit.auroc - ref.auroc) <= 1e-9


def test_a_bag_of_paths_with_bz2_gives_the_same_fit(data, single, tmp_path):
    import bz2

    import dask.bag as db

    train, test = data
    packed = str(tmp_path / "train-0.svm.bz2")
    with open(train[0], "rb") as src, bz2.open(packed, "wb") as dst:
        dst.write(src.read())
    files = [packed] + train[1:]
    fit = kd.fit(db.from_sequence(files, npartitions=3), test, scheduler="threads", **OPTS)
    assert_same(fit, fit.embeddings.compute(scheduler="threads"), *single)


def test_states_pickle_and_bad_bytes_raise(data):
    train, _ = data
    params = _ksvd.StreamParams(6, 60, 60, None, 1.0, 300, 3)
    scan = _ksvd.ScanPartial.scan_file(params, 0, train[0], 80)
    back = pickle.loads(pickle.dumps(scan))
    assert back.to_bytes() == scan.to_bytes()
    # The plan records every parameter: unpickled parameters give the same plan, other ones not.
    plan = _ksvd.LandmarkPlan(scan, params).to_bytes()
    assert _ksvd.LandmarkPlan(scan, pickle.loads(pickle.dumps(params))).to_bytes() == plan
    assert _ksvd.LandmarkPlan(scan, _ksvd.StreamParams(6, 60, 60, None, 1.0, 300, 4)).to_bytes() != plan
    raw = scan.to_bytes()
    with pytest.raises(ValueError, match="version 3 is not supported"):
        _ksvd.ScanPartial.from_bytes(raw.replace(b'"format_version":2', b'"format_version":3'))
    with pytest.raises(ValueError, match="truncated"):
        _ksvd.ScanPartial.from_bytes(raw[: len(raw) // 2])
    with pytest.raises(ValueError, match="corrupt"):
        _ksvd.ScanPartial.from_bytes(raw.replace(b'"nnz":', b'"nnz":1', 1))
    with pytest.raises(ValueError, match='"ksvd-streaming-scan"'):
        _ksvd.ScorePartial.from_bytes(raw)


def test_malformed_line_names_file_and_line_and_writes_nothing(data, tmp_path):
    train, test = data
    bad = tmp_path / "bad.svm"
    lines = open(train[2]).read().splitlines()
    lines[4] = "+1 3:0.5 oops"
    bad.write_text("\n".join(lines) + "\n")
    out = tmp_path / "out"
    out.mkdir()
    files = [train[0], train[1], str(bad)] + train[3:]
    with pytest.raises(ValueError, match=r"bad\.svm:5:"):
        kd.fit(files, test, scheduler="threads", out_dir=str(out), **OPTS)
    assert list(out.iterdir()) == []
    # The same call on good data writes the model atomically.
    kd.fit(train, test, scheduler="threads", out_dir=str(out), **OPTS)
    assert [p.name for p in out.iterdir()] == ["model.ksvd-trained"]


def test_a_killed_worker_changes_nothing(data):
    from dask.distributed import Client, LocalCluster

    train, test = data
    # Each partition task sleeps 0.5 s, so a pass over 7 partitions on 2 workers lasts > 1.5 s;
    # one worker process is killed (SIGKILL) once tasks are running, its nanny restarts it and
    # the scheduler recomputes its partitions. With the same partitioning the reduction tree is
    # fixed, so the result equals the undisturbed run bit for bit.
    hook = functools.partial(time.sleep, 0.5)
    with LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None) as cluster, Client(
        cluster
    ) as client:
        calm = kd.fit(train, test, client=client, **OPTS)
        hit = run_killing_a_worker(client, lambda: kd.fit(train, test, client=client, partition_hook=hook, **OPTS))
        np.testing.assert_array_equal(hit.model.singular_values(), calm.model.singular_values())
        assert hit.auroc == calm.auroc
        np.testing.assert_array_equal(hit.model.weights(), calm.model.weights())
