"""examples/large_scale_dask.py: the spec's quick variant (a9a, 200 landmarks) through Dask writes
rows in the schema of results/large-scale.csv, with the registry's row counts and real KPCA and
KSVD rows; the Reuters stand-in (more features than rows: rows mapped) runs through ksvd.dask."""

import csv
import importlib.util
import os

import pytest

pytest.importorskip("dask.distributed")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def _example():
    path = os.path.join(ROOT, "crates", "python", "examples", "large_scale_dask.py")
    spec = importlib.util.spec_from_file_location("large_scale_dask", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_quick_spec_rows(tmp_path):
    if not os.path.exists(os.path.join(ROOT, "data", "a9a", "a9a.bz2")):
        pytest.skip("data/a9a is not present")
    out = str(tmp_path / "rows.csv")
    assert _example().main(["--quick", "--workers", "1", "--parts", "3", "--out", out]) == 0
    with open(out, newline="") as f:
        rows = list(csv.DictReader(f))
    with open(os.path.join(ROOT, "results", "large-scale.csv"), newline="") as f:
        assert list(rows[0]) == next(csv.reader(f))
    cell = {(r["dataset"], r["method"], r["metric"]): r for r in rows}
    assert cell[("a9a", "data", "n_samples")]["value"] == "32561.0"
    assert cell[("a9a", "data", "n_features")]["value"] == "123.0"
    for method in ("kpca", "ksvd"):
        r = cell[("a9a", method, "auroc")]
        assert r["status"] == "ok" and 0.5 < float(r["value"]) <= 1.0 and r["quick"] == "true", r
        assert "n = 200 landmark rows" in r["note"]
    assert "compatibility a2: columns mapped (N > M)" in cell[("a9a", "ksvd", "auroc")]["note"]


def test_reuters_stand_in_maps_the_rows_and_matches_one_process(tmp_path):
    """M > N (7770 x 8315): KSVD maps the rows (N numbers each) and takes the columns X[:, J] as
    its column samples; KPCA maps nothing. Both equal the single-process fit on the same files
    (singular values at sqrt(eps) relative, AUROC to 1e-9) and find the signal."""
    import numpy as np

    import ksvd.dask as kd

    ex = _example()
    inp = ex.stand_in_inputs(["reuters_lasvm"])["reuters_lasvm"]
    if inp["missing"] is not None:
        pytest.skip(inp["missing"])
    assert inp["n_features"] == 8315, "the largest feature index is the registry's M"
    train = ex.split_parts(inp["train"], 4, str(tmp_path), "train")
    test = ex.split_parts(inp["test"], 2, str(tmp_path), "test")
    opts = dict(n_components=10, n_landmarks=100, seed=0, n_features=inp["n_features"])
    for method in ("ksvd", "kpca"):
        one = kd.fit_local(train, test, method=method, **opts)
        dist = kd.fit(train, test, method=method, **opts)
        assert dist.shape == (7770, 8315) and dist.compat == ("rows" if method == "ksvd" else None)
        s, s_ref = dist.estimator.singular_values_, one.estimator.singular_values_
        assert np.max(np.abs(s - s_ref)) <= np.sqrt(np.finfo(float).eps) * s_ref[0]
        assert abs(dist.auroc - one.auroc) <= 1e-9 and 0.5 < dist.auroc <= 1.0
        np.testing.assert_array_equal(dist.landmark_rows, one.landmark_rows)
        assert len(one.landmark_rows) == 100
