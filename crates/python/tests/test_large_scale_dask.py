"""examples/large_scale_dask.py: the spec's quick variant (a9a, 200 landmarks) through Dask writes
rows in the schema of results/large-scale.csv, with the registry's row counts."""

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
    assert cell[("a9a", "kpca", "auroc")]["status"] == "not-run"
    ksvd = cell[("a9a", "ksvd", "auroc")]
    assert ksvd["status"] == "ok" and 0.5 < float(ksvd["value"]) <= 1.0 and ksvd["quick"] == "true"
    assert "n = 200 landmark rows" in ksvd["note"]
