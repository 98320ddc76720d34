"""ksvd.dask.fit on (X, y) dask arrays: row chunks are partitions of rows with their global row
ids, so the same data in 2 or 5 chunks and as one LIBSVM file give the same fit (KSVD and KPCA).

Tolerances (as in test_dask.py, see ksvd/dask.py): the landmarks are exact (functions of the seed
and the shape); sums regrouped by the chunking differ by rounding, so quantities behind the
landmark SVD (singular values, embeddings) are compared at sqrt(eps) relative to their scale, and
the AUROC (a ranking) to 1e-9.
"""

import numpy as np
import pytest

pytest.importorskip("dask.array")

import dask.array as da  # noqa: E402

from ksvd import dask as kd  # noqa: E402

EPS = np.finfo(float).eps
OPTS = dict(n_components=5, n_landmarks=50, seed=7)


def _data(seed, n, m):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, m)) * (rng.random((n, m)) < 0.4)
    w = rng.standard_normal(m)
    y = np.where(np.tanh(x @ w) + 0.3 * rng.standard_normal(n) > 0, 1.0, -1.0)
    return x, y


def _write_libsvm(path, x, y):
    with open(path, "w") as f:
        for row, label in zip(x, y):
            nz = np.flatnonzero(row)
            f.write(" ".join([repr(float(label))] + [f"{j + 1}:{float(row[j])!r}" for j in nz]) + "\n")
    return str(path)


@pytest.fixture(scope="module")
def dense():
    return _data(1, 600, 12), _data(2, 200, 12)


@pytest.fixture(scope="module")
def from_file(dense, tmp_path_factory):
    """The fit of each method on the same rows as one LIBSVM file."""
    (x, y), (xt, yt) = dense
    d = tmp_path_factory.mktemp("dask-array")
    files = [_write_libsvm(d / "train.svm", x, y)], [_write_libsvm(d / "test.svm", xt, yt)]
    out = {}
    for method in ("ksvd", "kpca"):
        fit = kd.fit(*files, method=method, n_features=12, **OPTS)
        out[method] = fit, fit.embeddings.compute()
    return out


@pytest.mark.parametrize("method", ["ksvd", "kpca"])
@pytest.mark.parametrize("chunks", [2, 5])
def test_array_chunks_equal_libsvm_file(dense, from_file, chunks, method):
    (x, y), (xt, yt) = dense
    ref, ref_emb = from_file[method]
    rows = -(-x.shape[0] // chunks)
    train = (da.from_array(x, chunks=(rows, 12)), da.from_array(y, chunks=rows))
    test = (da.from_array(xt, chunks=(-(-xt.shape[0] // chunks), 12)), da.from_array(yt, chunks=-(-xt.shape[0] // chunks)))
    fit = kd.fit(train, test, method=method, **OPTS)
    assert train[0].numblocks[0] == chunks
    np.testing.assert_array_equal(fit.landmark_rows, ref.landmark_rows)
    assert fit.shape == x.shape and fit.n_test == xt.shape[0]
    s, s_ref = fit.estimator.singular_values_, ref.estimator.singular_values_
    assert s.shape == s_ref.shape and np.all(np.diff(s) <= 0)
    assert np.max(np.abs(s - s_ref)) <= np.sqrt(EPS) * s_ref[0]
    emb = fit.embeddings.compute()
    assert fit.embeddings.chunks[0] == test[0].chunks[0]
    assert np.max(np.abs(emb - ref_emb)) <= np.sqrt(EPS) * np.max(np.abs(ref_emb))
    assert abs(fit.auroc - ref.auroc) <= 1e-9


def test_array_input_errors_name_the_problem(dense):
    (x, y), (xt, yt) = dense
    train = (da.from_array(x, chunks=(300, 12)), da.from_array(y[:-1], chunks=300))
    test = (da.from_array(xt, chunks=(100, 12)), da.from_array(yt, chunks=100))
    with pytest.raises(ValueError, match="1-D label array of as many rows"):
        kd.fit(train, test, **OPTS)
    with pytest.raises(ValueError, match="both"):
        kd.fit((da.from_array(x), da.from_array(y)), ["test.svm"], **OPTS)
    wide = (da.from_array(xt[:, :10], chunks=(100, 10)), da.from_array(yt, chunks=100))
    with pytest.raises(ValueError, match="columns"):
        kd.fit((da.from_array(x, chunks=(300, 12)), da.from_array(y, chunks=300)), wide, **OPTS)
    nan = x.copy()
    nan[450, 3] = np.nan
    with pytest.raises(ValueError, match=r"partition 1 \(train rows 300\.\.600\): NaN or infinite values"):
        kd.fit((da.from_array(nan, chunks=(300, 12)), da.from_array(y, chunks=300)), test, **OPTS)


def test_sparse_chunks_equal_dense_chunks(dense, from_file):
    import scipy.sparse as sp

    (x, y), (xt, yt) = dense
    ref, ref_emb = from_file["ksvd"]
    xs = da.from_array(x, chunks=(200, 12)).map_blocks(sp.csr_matrix, meta=sp.csr_matrix((0, 12)))
    fit = kd.fit((xs, da.from_array(y, chunks=200)), (da.from_array(xt, chunks=(100, 12)), da.from_array(yt, chunks=100)), **OPTS)
    np.testing.assert_array_equal(fit.landmark_rows, ref.landmark_rows)
    assert np.max(np.abs(fit.estimator.singular_values_ - ref.estimator.singular_values_)) <= np.sqrt(EPS) * ref.estimator.singular_values_[0]
    assert abs(fit.auroc - ref.auroc) <= 1e-9
