"""The Python column of docs/conventions.md is what the package does.

The tables are read from the document itself: every parameter name and default of the Python
column against ``inspect.signature`` of ``KSVD.__init__`` and ``KPCA.__init__`` (and nothing
more in the signatures), and every output of "What comes out" against a fitted estimator, with
its value at the training samples.

A default cell is a Python value when it is one literal in backticks (``2``, ``rbf``, ``1e-8``;
``none`` and ``rule`` are None); ``KSVD `false`, KPCA `true``` gives one per estimator; a default the library
computes at run time (the bandwidth rule, a quarter of the available memory, all cores, "required
for nystrom", ``None`` (= ...)) is Python's None, as is the seed's ``0`` where the meaning says
that Python's None means it.
"""

import inspect
import os
import re

import numpy as np
import pytest

import ksvd

DOC = os.path.join(os.path.dirname(__file__), "..", "..", "..", "docs", "conventions.md")
ESTIMATORS = {"KSVD": ksvd.KSVD, "KPCA": ksvd.KPCA}


def table(heading):
    """The header and body rows of the first table under ``## heading``, as lists of cells."""
    with open(DOC, encoding="utf-8") as f:
        lines = f.read().split(f"## {heading}\n", 1)[1].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    end = next((i for i in range(start, len(lines)) if not lines[i].startswith("|")), len(lines))
    cells = [[c.strip() for c in line.strip().strip("|").split("|")] for line in lines[start:end]]
    return cells[0], cells[2:]  # cells[1] is the |---| line


def ticked(cell):
    """The backticked tokens of a cell."""
    return re.findall(r"`([^`]*)`", cell)


def literal(text):
    if text in ("none", "None", "rule"):  # `rule`: the bandwidth rule, at fit time
        return None
    if text in ("true", "false"):
        return text == "true"
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    if re.fullmatch(r"-?[\d.]+(e-?\d+)?", text):
        return float(text)
    return text


def python_default(default, meaning, estimator):
    """The Python default a default cell stands for (module docstring)."""
    if "Python's `None` means" in meaning:
        return None
    per_estimator = dict(re.findall(r"(KSVD|KPCA) `([^`]*)`", default))
    if per_estimator:
        return literal(per_estimator[estimator])
    if re.fullmatch(r"`[^`]*`", default):
        return literal(ticked(default)[0])
    # Computed at run time (or a descriptive None): the bandwidth rule, a share of the memory,
    # all cores, required for one solver, `None` (= ...).
    return None


def python_parameters():
    """``{name: (default cell, meaning cell)}`` of the Python column."""
    header, body = table("Parameters")
    col = {name: i for i, name in enumerate(header)}
    python = next(i for name, i in col.items() if name.startswith("Python"))
    out = {}
    for row in body:
        for name in ticked(row[python]):
            if name != "—":
                out[name] = (row[col["default"]], row[col["meaning"]])
    return out


def test_the_table_lists_the_parameters_of_the_brief():
    # A guard on the parsing itself: the table names these (among others).
    names = python_parameters()
    for name in ("n_components", "kernel", "bandwidth", "gamma", "tol", "landmark_rows", "landmark_cols", "n_jobs"):
        assert name in names, name


@pytest.mark.parametrize("estimator", sorted(ESTIMATORS))
def test_every_parameter_and_default_of_the_python_column(estimator):
    params = python_parameters()
    sig = inspect.signature(ESTIMATORS[estimator].__init__).parameters
    in_signature = [name for name in sig if name != "self"]
    assert sorted(in_signature) == sorted(params), (
        f"{estimator}.__init__ has {sorted(set(in_signature) ^ set(params))} beyond or missing from the table"
    )
    for name, (default, meaning) in params.items():
        want = python_default(default, meaning, estimator)
        got = sig[name].default
        assert got == want and type(got) is type(want), f"{estimator}({name}=...) defaults to {got!r}, the table to {want!r}"
    # scikit-learn reads the parameters back from the signature.
    assert set(ESTIMATORS[estimator]().get_params()) == set(params)


def outputs():
    """``[(Python cell, value cell)]`` of "What comes out"."""
    header, body = table("What comes out")
    col = {name.split(" ")[0]: i for i, name in enumerate(header)}
    return [(row[col["Python"]], row[col["value"]]) for row in body]


@pytest.fixture(scope="module")
def fitted():
    rng = np.random.default_rng(3)
    X, Z = rng.normal(size=(30, 3)), rng.normal(size=(25, 3))
    return {
        "KSVD": (ksvd.KSVD(3, kernel="rbf", bandwidth=1.5, solver="exact").fit(X, Z=Z), X, Z),
        "KPCA": (ksvd.KPCA(3, kernel="rbf", bandwidth=1.5, solver="exact").fit(X), X, X),
    }


# The value at the training samples of each method of the table, from U, s, V.
VALUES = {
    "`U S^½`": lambda U, s, V: U * np.sqrt(s),
    "`V S^½`": lambda U, s, V: V * np.sqrt(s),
}


@pytest.mark.parametrize("estimator", sorted(ESTIMATORS))
def test_every_output_of_the_python_column(fitted, estimator):
    est, X, Z = fitted[estimator]
    U, s, V = est.row_embedding_, est.singular_values_, est.col_embedding_
    r = est.n_components
    tol = 1e-10 * s[0]
    for cell, value in outputs():
        kpca_only = set(re.findall(r"KPCA also `([^`]*)`", cell))
        for token in ticked(cell):
            if token in kpca_only and estimator != "KPCA":
                continue
            method = re.fullmatch(r"(\w+)\((\w)\)", token)
            if method:
                name, arg = method.groups()
                out = getattr(est, name)(X if arg == "X" else Z)
                assert out.shape == ((X if arg == "X" else Z).shape[0], r), token
                if value in VALUES:
                    want = VALUES[value](U, s, V)
                elif value == "`U`, `V`":  # the extension of rows and of columns
                    want = U if name == "extend" else V
                else:
                    raise AssertionError(f"no check for the value {value!r} of {token}")
                np.testing.assert_allclose(out, want, rtol=0, atol=tol, err_msg=token)
            elif token.endswith("_"):
                assert hasattr(est, token), f"{estimator} has no {token}"
    # KPCA's own names, and the shapes the table gives.
    if estimator == "KPCA":
        np.testing.assert_array_equal(est.eigenvalues_, s)
        np.testing.assert_array_equal(est.eigenvectors_, U)
    assert est.residuals_.shape == (r, 2)
    assert est.landmark_rows_ is None and est.landmark_cols_ is None  # not Nystrom
    np.testing.assert_allclose(np.linalg.norm(U, axis=0), 1.0, rtol=0, atol=1e-12)
