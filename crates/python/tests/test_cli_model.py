"""A model written by the command line loads in Python and projects like ``ksvd transform``.

The binary is ``target/release/ksvd`` of the workspace (built by ``cargo test --workspace
--release`` or ``cargo build --release -p ksvd-cli``), or the path in ``KSVD_CLI``; without it
the test is skipped. ``ksvd transform --rows NEW`` writes ``transform`` (``U S^1/2`` at the
training rows) and, with ``--extension``, the paper's extension (``U``); a command line that
predates the contract has no ``--extension`` and writes the extension (eq. 10), which is then
what is compared.
"""

import os
import subprocess

import numpy as np
import pytest

import ksvd

ROOT = os.path.join(os.path.dirname(__file__), "..", "..", "..")
CLI = os.environ.get("KSVD_CLI") or os.path.join(ROOT, "target", "release", "ksvd")

pytestmark = pytest.mark.skipif(
    not os.path.isfile(CLI),
    reason=f"the ksvd command is not built ({os.path.normpath(CLI)}; cargo build --release -p ksvd-cli, or set KSVD_CLI)",
)


def run(*args):
    done = subprocess.run([CLI, *map(str, args)], capture_output=True, text=True)
    assert done.returncode == 0, f"ksvd {' '.join(map(str, args))}: {done.stderr}"
    return done.stdout


def written(directory, name):
    """The matrix ``ksvd transform`` wrote as ``name`` (.npy, else .csv)."""
    npy = os.path.join(directory, f"{name}.npy")
    if os.path.exists(npy):
        return np.load(npy)
    return np.loadtxt(os.path.join(directory, f"{name}.csv"), delimiter=",", ndmin=2)


@pytest.mark.parametrize("center", [False, True])
def test_a_cli_model_loads_and_transforms_like_the_cli(tmp_path, center):
    rng = np.random.default_rng(12)
    X, Z, new_rows, new_cols = (rng.normal(size=s) for s in ((35, 4), (28, 4), (6, 4), (5, 4)))
    for name, a in (("X", X), ("Z", Z), ("rows", new_rows), ("cols", new_cols)):
        np.save(tmp_path / f"{name}.npy", a)
    fit_dir = tmp_path / "fit"
    args = ["fit", "--rows", tmp_path / "X.npy", "--cols", tmp_path / "Z.npy", "--kernel", "rbf", "--gamma", 1.3]
    args += ["--rank", 3, "--solver", "exact", "--out", fit_dir, "--quiet"] + (["--center"] if center else [])
    run(*args)

    est = ksvd.load(fit_dir)  # the directory, as `ksvd transform --model` takes it
    assert isinstance(est, ksvd.KSVD)
    assert est.get_params()["center"] is center and est.bandwidth_ == 1.3
    assert est.n_features_in_ == 4
    np.testing.assert_array_equal(est.singular_values_, np.load(fit_dir / "s.npy"))
    np.testing.assert_array_equal(est.row_embedding_, np.load(fit_dir / "u.npy"))
    np.testing.assert_array_equal(est.col_embedding_, np.load(fit_dir / "v.npy"))
    # The same fit from Python (Z given, as --cols).
    again = ksvd.KSVD(3, bandwidth=1.3, center=center, solver="exact").fit(X, Z=Z)
    np.testing.assert_allclose(again.singular_values_, est.singular_values_, rtol=0, atol=1e-12 * est.singular_values_[0])

    has_extension = "--extension" in run("transform", "--help")
    for side, data, ours in (("rows", new_rows, (est.transform, est.extend)), ("cols", new_cols, (est.transform_cols, est.extend_cols))):
        out = tmp_path / f"out-{side}"
        if has_extension:
            run("transform", "--model", fit_dir, f"--{side}", tmp_path / f"{side}.npy", "--out", out, "--quiet")
            np.testing.assert_allclose(ours[0](data), written(out, side), rtol=0, atol=1e-12)
            out = tmp_path / f"ext-{side}"
            run("transform", "--model", fit_dir, f"--{side}", tmp_path / f"{side}.npy", "--extension", "--out", out, "--quiet")
        else:
            run("transform", "--model", fit_dir, f"--{side}", tmp_path / f"{side}.npy", "--out", out, "--quiet")
        np.testing.assert_allclose(ours[1](data), written(out, side), rtol=0, atol=1e-12)


def test_a_python_model_transforms_in_the_cli(tmp_path):
    rng = np.random.default_rng(13)
    X, new = rng.normal(size=(30, 3)), rng.normal(size=(4, 3))
    est = ksvd.KSVD(2, kernel="sne", bandwidth=0.9, solver="exact").fit(X)
    est.save(tmp_path / "model.json")
    np.save(tmp_path / "new.npy", new)
    out = tmp_path / "out"
    has_extension = "--extension" in run("transform", "--help")
    extra = ["--extension"] if has_extension else []
    run("transform", "--model", tmp_path / "model.json", "--rows", tmp_path / "new.npy", "--out", out, "--quiet", *extra)
    np.testing.assert_allclose(est.extend(new), written(out, "rows"), rtol=0, atol=1e-12)
