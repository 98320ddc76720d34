"""ksvd.dask.KSVD / KPCA: the single-machine estimators on data partitioned by rows.

The distributed fit runs the single-machine solver on an operator whose products are passes over
the partitions (see ksvd/_dask_estimators.py), so it must give the single-machine answers:
singular values to 1e-9 s_1 and subspaces to a principal angle of 1e-6 (the issue's bar; in
practice the differences are rounding, ~1e-14, and the solver's tolerance for the subspaces),
the same Nystrom landmarks for the same seed, and projections that agree to rounding.
"""

import os

import numpy as np
import pytest
import scipy.sparse as sp

pytest.importorskip("dask.distributed")

import dask.array as da  # noqa: E402

import ksvd  # noqa: E402
from conftest import run_killing_a_worker  # noqa: E402
from ksvd import dask as kd  # noqa: E402


def sin_angle(a, b):
    """The sine of the largest principal angle between the column spans of a and b."""
    qa, _ = np.linalg.qr(np.asarray(a, dtype=np.float64))
    qb, _ = np.linalg.qr(np.asarray(b, dtype=np.float64))
    c = np.linalg.svd(qa.T @ qb, compute_uv=False).min()
    return float(np.sqrt(max(0.0, 1.0 - c * c)))


def assert_same_fit(d, loc, *, values=1e-9, angle=1e-6):
    s, s_ref = d.singular_values_, loc.singular_values_
    assert s.shape == s_ref.shape
    assert np.max(np.abs(s - s_ref)) <= values * s_ref[0], (s, s_ref)
    assert sin_angle(d.row_embedding_, loc.row_embedding_) <= angle
    assert sin_angle(d.col_embedding_, loc.col_embedding_) <= angle


@pytest.fixture(scope="module")
def big():
    """The issue's case: 24000 x 8 data, and its single-machine exact (Lanczos) fit."""
    x = np.random.default_rng(0).normal(size=(24000, 8))
    kw = dict(n_components=3, solver="lanczos", random_state=3)
    return x, kw, ksvd.KSVD(**kw).fit(x)


@pytest.fixture(scope="module")
def client():
    from dask.distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None) as cluster, Client(
        cluster
    ) as c:
        yield c


@pytest.mark.parametrize("chunks", ["dense", "sparse"])
def test_exact_fit_on_two_workers_equals_the_single_machine_fit(big, client, chunks, tmp_path):
    x, kw, loc = big
    X = da.from_array(x, chunks=(3000, 8))
    if chunks == "sparse":
        X = X.map_blocks(sp.csr_matrix)
    d = kd.KSVD(**kw).fit(X)
    assert_same_fit(d, loc)
    # Certified as on one machine: every residual within the tolerance.
    assert d.residuals_.shape == (3, 2) and np.all(d.residuals_ <= kw.get("tol", 1e-8))
    assert d.bandwidth_ == pytest.approx(loc.bandwidth_, rel=1e-12)
    # transform is lazy, chunked like its input, and equals the local model's.
    new = x[:2000] + 0.1
    t = d.transform(da.from_array(new, chunks=500))
    assert isinstance(t, da.Array) and t.chunks[0] == (500,) * 4
    got, want = t.compute(), loc.transform(new)
    assert np.max(np.abs(got - want)) <= 1e-6 * np.max(np.abs(want))
    # The local model travels: save, load, the same projections.
    path = tmp_path / "model.json"
    d.save(path)
    back = ksvd.load(path)
    assert isinstance(back, ksvd.KSVD)
    np.testing.assert_allclose(back.transform(new[:50]), got[:50], rtol=0, atol=1e-12 * np.max(np.abs(got)))


def test_a_killed_worker_changes_nothing(big, client):
    x, kw, _ = big
    X = da.from_array(x, chunks=(3000, 8))
    calm = kd.KSVD(**kw).fit(X)
    # Killed once the passes run (after 1 s): its partitions and their rows of G are recomputed
    # from the graph.
    hit = run_killing_a_worker(client, lambda: kd.KSVD(**kw).fit(X), after=1.0)
    # Every partition's products are deterministic and merged along the same tree.
    np.testing.assert_array_equal(hit.singular_values_, calm.singular_values_)
    np.testing.assert_array_equal(hit.row_embedding_, calm.row_embedding_)


@pytest.fixture(scope="module")
def small():
    rng = np.random.default_rng(5)
    return rng.normal(size=(1500, 6)), rng.normal(size=(900, 6))


@pytest.mark.parametrize("solver", ["rsvd", "auto", "block-krylov", "exact"])
def test_every_solver_gives_the_single_machine_fit(small, solver):
    x, z = small
    kw = dict(n_components=4, kernel="sne", solver=solver, random_state=1)
    loc = ksvd.KSVD(**kw).fit(x, Z=z)
    d = kd.KSVD(**kw).fit(da.from_array(x, chunks=(400, 6)), Z=z)
    assert_same_fit(d, loc)
    if solver == "exact":
        # All of G in one pass (the dense SVD's residuals come from the dense matrix).
        assert d.n_passes_ == 1 and np.all(d.residuals_ <= 1e-12)


def test_nystrom_draws_the_single_machine_landmarks_and_takes_given_ones(small):
    x, z = small
    kw = dict(n_components=4, solver="nystrom", n_landmarks=120, n_col_landmarks=90, random_state=7)
    loc = ksvd.KSVD(**kw).fit(x, Z=z)
    d = kd.KSVD(**kw).fit(da.from_array(x, chunks=(350, 6)), Z=da.from_array(z, chunks=(300, 6)))
    np.testing.assert_array_equal(d.landmark_rows_, loc.landmark_rows_)
    np.testing.assert_array_equal(d.landmark_cols_, loc.landmark_cols_)
    assert np.max(np.abs(d.singular_values_ - loc.singular_values_)) <= 1e-12 * loc.singular_values_[0]
    assert np.max(np.abs(d.row_embedding_ - loc.row_embedding_)) <= 1e-12
    assert np.max(np.abs(d.col_embedding_ - loc.col_embedding_)) <= 1e-12
    # The landmarks of the distributed fit, given to ksvd.KSVD, give its fit.
    given = dict(kw, landmark_rows=d.landmark_rows_.tolist(), landmark_cols=d.landmark_cols_.tolist())
    again = ksvd.KSVD(**given).fit(x, Z=z)
    assert np.max(np.abs(again.row_embedding_ - d.row_embedding_)) <= 1e-12
    dg = kd.KSVD(**given).fit(da.from_array(x, chunks=(500, 6)), Z=z)
    assert np.max(np.abs(dg.row_embedding_ - again.row_embedding_)) <= 1e-12
    # Squared-norm sampling needs the row and column norms: one more pass, the same draw.
    sq = dict(kw, sampling="squared-norm")
    np.testing.assert_array_equal(
        kd.KSVD(**sq).fit(da.from_array(x, chunks=(350, 6)), Z=z).landmark_rows_,
        ksvd.KSVD(**sq).fit(x, Z=z).landmark_rows_,
    )


@pytest.mark.parametrize("solver", ["lanczos", "nystrom"])
def test_kpca_centred_equals_the_single_machine_kpca(small, solver):
    x, _ = small
    kw = dict(n_components=3, solver=solver, n_landmarks=200 if solver == "nystrom" else None, random_state=2)
    loc = ksvd.KPCA(**kw).fit(x)
    d = kd.KPCA(**kw).fit(da.from_array(x, chunks=(400, 6)))
    assert np.max(np.abs(d.eigenvalues_ - loc.eigenvalues_)) <= 1e-9 * loc.eigenvalues_[0]
    assert sin_angle(d.eigenvectors_, loc.eigenvectors_) <= 1e-6
    new = x[:40] * 0.9
    np.testing.assert_allclose(d.transform(new), loc.transform(new), rtol=0, atol=1e-7)
    assert isinstance(d.to_local(), ksvd.KPCA)


def test_centred_ksvd_and_a_callable_kernel(small):
    x, z = small

    def rbf(a, b):
        d2 = (a * a).sum(1)[:, None] + (b * b).sum(1)[None, :] - 2 * a @ b.T
        return np.exp(-np.maximum(d2, 0) / 4.0)

    for kw in (dict(center=True, kernel="rbf", bandwidth=1.5), dict(kernel=rbf)):
        kw = dict(kw, n_components=3, solver="lanczos")
        loc = ksvd.KSVD(**kw).fit(x, Z=z)
        d = kd.KSVD(**kw).fit(da.from_array(x, chunks=(400, 6)), Z=z)
        assert_same_fit(d, loc)
        t = d.transform(da.from_array(x[:100], chunks=50)).compute()
        np.testing.assert_allclose(t, loc.transform(x[:100]), rtol=0, atol=1e-7 * np.abs(t).max())
        np.testing.assert_allclose(d.transform_cols(z[:30]), loc.transform_cols(z[:30]), atol=1e-7 * np.abs(t).max())


def test_dataframes_and_file_lists_are_partitions(small, tmp_path):
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe")  # needs pyarrow (CI installs both)
    from sklearn.datasets import dump_svmlight_file

    x, z = small
    kw = dict(n_components=3, solver="lanczos", random_state=4)
    loc = ksvd.KSVD(**kw).fit(x, Z=z)
    ddf = dd.from_pandas(pd.DataFrame(x, columns=[f"f{j}" for j in range(6)]), npartitions=3)
    npy, svm = [], []
    for k, rows in enumerate(np.array_split(np.arange(len(x)), 4)):
        npy.append(str(tmp_path / f"part-{k}.npy"))
        np.save(npy[-1], x[rows])
        svm.append(str(tmp_path / f"part-{k}.svm"))
        dump_svmlight_file(x[rows], np.zeros(len(rows)), svm[-1], zero_based=False)
    for X in (ddf, npy, svm):
        assert_same_fit(kd.KSVD(**kw).fit(X, Z=z), loc)
    # Column names are checked in transform as scikit-learn checks them.
    fitted = kd.KSVD(**kw).fit(ddf, Z=z)
    assert list(fitted.feature_names_in_) == [f"f{j}" for j in range(6)]
    np.testing.assert_allclose(fitted.transform(ddf).compute(), loc.transform(x), atol=1e-7)
    swapped = ddf[[f"f{j}" for j in (1, 0, 2, 3, 4, 5)]]
    with pytest.raises(ValueError, match="another order"):
        fitted.transform(swapped)
    renamed = ddf.rename(columns={"f5": "g5"})
    with pytest.raises(ValueError, match=r"unseen at fit time: \['g5'\]"):
        fitted.transform(renamed)
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        fitted.transform(da.from_array(x[:50], chunks=25))


def test_bad_partitions_are_named(small, tmp_path):
    x, z = small
    bad = x.copy()
    bad[700, 2] = np.nan
    with pytest.raises(ValueError, match=r"partition 1 \(X rows 500\.\.1000\).*NaN"):
        kd.KSVD(solver="lanczos").fit(da.from_array(bad, chunks=(500, 6)), Z=z)
    files = [str(tmp_path / "a.npy"), str(tmp_path / "b.npy")]
    np.save(files[0], x[:100])
    np.save(files[1], x[:100, :5])
    with pytest.raises(ValueError, match=r"partition 1 \(.*b\.npy\).*5 features where the data has 6"):
        kd.KSVD(solver="lanczos").fit(files, Z=z)
    with pytest.raises(ValueError, match=r"partition 1 \(.*missing\.npy\): cannot read it"):
        kd.KSVD(solver="lanczos").fit([files[0], str(tmp_path / "missing.npy")], Z=z)
    with pytest.raises(TypeError, match="dask array"):
        kd.KSVD().fit(x)
    with pytest.raises(ValueError, match="precomputed"):
        kd.KSVD(kernel="precomputed").fit(da.from_array(x, chunks=500))
    # Nothing is written by a fit, failed or not.
    assert sorted(os.listdir(tmp_path)) == ["a.npy", "b.npy"]


@pytest.mark.parametrize("extra", [dict(kernel="sne", bandwidth=1.3), dict(center=True), dict(kernel="laplacian")])
def test_nystrom_with_row_statistics_equals_the_single_machine_fit(small, extra):
    # G[I, :]^T W is split by columns: the landmark rows carry their SNE normalisers and means
    # over all of Z into every column task.
    x, z = small
    kw = dict(extra, n_components=3, solver="nystrom", n_landmarks=100, random_state=9)
    loc = ksvd.KSVD(**kw).fit(x, Z=z)
    d = kd.KSVD(**kw).fit(da.from_array(x, chunks=(300, 6)), Z=z)
    np.testing.assert_array_equal(d.landmark_rows_, loc.landmark_rows_)
    assert np.max(np.abs(d.singular_values_ - loc.singular_values_)) <= 1e-12 * loc.singular_values_[0]
    assert np.max(np.abs(d.col_embedding_ - loc.col_embedding_)) <= 1e-11
    assert np.max(np.abs(d.row_embedding_ - loc.row_embedding_)) <= 1e-11


def test_partitions_store_and_evaluate_their_rows_in_the_fits_precision():
    # Each partition's rows of G are float32 values when the fit is float32, on every path: stored
    # within the budget, matrix-free, and evaluated with statistics given (SNE's normalisers for
    # a subset of the columns); float64 fits keep float64 values.
    from ksvd import _ksvd
    from ksvd._convert import native_params

    rng = np.random.default_rng(5)
    x, z = rng.normal(size=(30, 4)), rng.normal(size=(25, 4))

    def rows(kernel, precision, **kw):
        params = native_params(ksvd.KSVD(kernel=kernel, bandwidth=1.7))
        params["precision"] = precision
        return _ksvd.PartitionRows(x, z, params=params, **kw).block_mul(None, None, None)

    def is_f32(b):
        return np.array_equal(b, b.astype(np.float32).astype(np.float64))

    logn = _ksvd.PartitionRows(x, z, params=native_params(ksvd.KSVD(kernel="sne", bandwidth=1.7))).log_normalizers()
    for kernel, kw in [
        ("rbf", dict(store=True)),
        ("rbf", dict(store=False)),
        ("sne", dict(store=True)),
        ("sne", dict(store=False, row_stats=(logn, None))),
    ]:
        b32, b64 = rows(kernel, "f32", **kw), rows(kernel, "f64", **kw)
        assert is_f32(b32) and not is_f32(b64), (kernel, kw)
        # The same entries to float32 rounding.
        assert np.max(np.abs(b32 - b64)) <= 4 * np.finfo(np.float32).eps * np.max(np.abs(b64)), (kernel, kw)


def test_empty_chunks_float32_pickling_and_in_memory_lists(small):
    import pickle

    x, z = small
    x32 = x.astype(np.float32)
    kw = dict(n_components=3, solver="lanczos", center=True, random_state=2)
    # float32 data are computed in float32 on the workers, as ksvd.KSVD computes them: each
    # partition stores and multiplies its rows of G in float32 (the centring means are float64
    # sums), and the solver certifies float32's default tolerance, 1e-5.
    loc = ksvd.KSVD(**kw).fit(x32)
    loc64 = ksvd.KSVD(**kw).fit(x32.astype(np.float64))
    # A zero-row chunk (e.g. after filtering) is no partition.
    X = da.from_array(x32, chunks=((700, 0, 500, 300), 6))
    d = kd.KSVD(**kw).fit(X)
    assert np.max(d.residuals_) <= 1e-5
    # The same float32 matrix up to the order of additions and the means' rounding: singular
    # values within float32 rounding of s_1; both are within the tolerance of the float64 fit.
    assert_same_fit(d, loc, values=1e-6, angle=1e-4)
    assert_same_fit(d, loc64, values=1e-5, angle=1e-4)
    # The model records float32, so that its projections evaluate in float32 too.
    assert '"precision":"f32"' in d.to_bytes().decode().replace(" ", "")
    # float32 in, float32 attributes and projections out, as ksvd.KSVD.
    assert d.singular_values_.dtype == np.float32 and d.row_embedding_.dtype == np.float32
    t = d.transform(da.from_array(x32[:60], chunks=20))
    assert t.dtype == np.float32 and t.compute().dtype == np.float32
    # With Z = X the fitted estimator is self-contained: pickled, it projects dask arrays too,
    # and in-memory lists go to the local model.
    back = pickle.loads(pickle.dumps(d))
    np.testing.assert_allclose(back.transform(da.from_array(x32[:60], chunks=30)).compute(), t.compute(), atol=1e-6)
    np.testing.assert_allclose(d.transform(x32[:2].tolist()), t.compute()[:2], atol=1e-5)
    # Sparse chunks with duplicate entries: the bandwidth rule sums them first, as ksvd.KSVD.
    a = sp.csr_array((np.array([1.0, 2.0, 0.5]), np.array([0, 0, 1]), np.array([0, 2, 3, 3])), shape=(3, 2))
    rows = sp.vstack([a] * 20, format="csr")
    dup = da.from_array(rows, chunks=(15, 2), asarray=False)
    fitted = kd.KSVD(n_components=1, solver="lanczos").fit(dup)
    assert fitted.bandwidth_ == pytest.approx(ksvd.KSVD(n_components=1).fit(rows).bandwidth_, rel=1e-12)
