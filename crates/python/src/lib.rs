//! # ksvd-python
//!
//! The native module `ksvd._ksvd` behind the Python package `ksvd` (scikit-learn style
//! estimators `ksvd.KSVD`, `ksvd.KPCA` and `ksvd.graph.embed`, in `python/ksvd/`).
//!
//! The binding is thin: it converts at the edge and nothing else. NumPy arrays (`float64`, any
//! layout) and CSR triples `(shape, indptr, indices, data)` become [`Samples`]; strings become
//! [`Kernel`], [`Solver`] and [`GraphInput`]; the model is fitted by
//! [`ksvd::KsvdValidParams::fit_samples`] with the GIL released and kept as the portable
//! [`ksvd::KsvdModel`] (projections of new data by its out-of-sample extension, eq. 10;
//! pickling by its serde form, [`ksvd::KsvdModel::to_bytes`]); errors of the core
//! ([`KsvdError`], [`ksvd_kernels::KernelError`], [`ksvd_linalg::LinalgError`]) become
//! `ValueError` with the core's message. Input copies are made while the GIL is held (so no
//! other Python thread can mutate a buffer under the computation), everything after them runs
//! detached from the interpreter.
//!
//! [`streaming`] binds the mergeable partial states of `ksvd_streaming`'s out-of-core passes
//! (pickled through their versioned bytes), which `ksvd.dask` schedules on a Dask cluster.
//!
//! `kernel="precomputed"` is expressed with the core's own types: a precomputed `G` (`n × m`)
//! is the linear kernel between the row samples `x_i = G[i, :]` and the unit column samples
//! `z_j = e_j` (a sparse identity), so `k(x_i, z_j) = G_ij` exactly, and the extension to a new
//! kernel block `K(x', Z)` is `K(x', Z) V S⁻¹` (centred like `G` when `center=True`).

mod streaming;

use ksvd::{InnerSolver, Ksvd, KsvdError, KsvdModel, LanczosParams, RsvdParams, Sampling, Solver};
use ksvd_kernels::graph::{bandwidth_rule, graph_samples, GraphInput};
use ksvd_kernels::{Kernel, Samples};
use ksvd_linalg::CsrMatrix;
use linfa::param_guard::ParamGuard;
use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};

/// Any error of the core, as a Python `ValueError` carrying the core's message.
fn value_error(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// A CSR matrix handed over as `((nrows, ncols), indptr, indices, data)` (what
/// `scipy.sparse.csr_array` stores, with 64-bit indices).
#[derive(FromPyObject)]
struct CsrArg<'py>(
    (usize, usize),
    PyReadonlyArray1<'py, i64>,
    PyReadonlyArray1<'py, i64>,
    PyReadonlyArray1<'py, f64>,
);

impl CsrArg<'_> {
    /// Copies into a validated [`CsrMatrix`] (sorted, in-range indices, finite values).
    fn to_csr(&self) -> PyResult<CsrMatrix> {
        let index = |name: &str, a: &PyReadonlyArray1<'_, i64>| -> PyResult<Vec<usize>> {
            a.as_array()
                .iter()
                .map(|&i| usize::try_from(i).map_err(|_| value_error(format!("negative CSR {name} entry {i}"))))
                .collect()
        };
        let (nrows, ncols) = self.0;
        let indptr = index("indptr", &self.1)?;
        let indices = index("indices", &self.2)?;
        let data = self.3.as_array().to_vec();
        CsrMatrix::try_new(nrows, ncols, indptr, indices, data).map_err(value_error)
    }
}

/// A sample set from Python: a dense `float64` 2-D array or a CSR triple (rows are samples).
#[derive(FromPyObject)]
enum SamplesArg<'py> {
    Dense(PyReadonlyArray2<'py, f64>),
    Csr(CsrArg<'py>),
}

impl SamplesArg<'_> {
    /// Owned, validated samples (finite, non-empty), copied while the GIL is held.
    fn to_samples(&self) -> PyResult<Samples> {
        match self {
            SamplesArg::Dense(a) => Samples::dense(a.as_array().as_standard_layout().into_owned()).map_err(value_error),
            SamplesArg::Csr(c) => Samples::sparse(c.to_csr()?).map_err(value_error),
        }
    }
}

/// The kernel names of the Python API.
#[derive(Debug, Clone, Copy, PartialEq)]
enum KernelName {
    Sne,
    Rbf,
    Laplacian,
    Poly,
    Linear,
    Precomputed,
}

impl KernelName {
    fn parse(s: &str) -> PyResult<Self> {
        Ok(match s {
            "sne" => KernelName::Sne,
            "rbf" => KernelName::Rbf,
            "laplacian" => KernelName::Laplacian,
            "poly" => KernelName::Poly,
            "linear" => KernelName::Linear,
            "precomputed" => KernelName::Precomputed,
            other => {
                return Err(value_error(format!(
                    "unknown kernel {other:?} (expected 'sne', 'rbf', 'laplacian', 'poly', 'linear' or 'precomputed')"
                )))
            }
        })
    }

    fn has_bandwidth(self) -> bool {
        matches!(self, KernelName::Sne | KernelName::Rbf | KernelName::Laplacian)
    }

    /// The core kernel; `gamma` is the bandwidth for the kernels that have one.
    fn kernel(self, gamma: f64, degree: u32, coef0: f64) -> Kernel {
        match self {
            KernelName::Sne => Kernel::Sne { gamma },
            KernelName::Rbf => Kernel::Rbf { gamma },
            KernelName::Laplacian => Kernel::Laplacian { gamma },
            KernelName::Poly => Kernel::Polynomial { degree, offset: coef0 },
            // A precomputed G is the linear kernel against unit column samples (module docs).
            KernelName::Linear | KernelName::Precomputed => Kernel::Linear,
        }
    }
}

/// Hyper-parameters as the Python layer passes them (already type-checked there).
struct FitConfig {
    kernel: KernelName,
    bandwidth: Option<f64>,
    degree: u32,
    coef0: f64,
    center: bool,
    solver: Solver,
    rank: usize,
    seed: u64,
}

/// `solver=` of the Python API; `sampling` (the Nyström landmark scheme, any of
/// `ksvd_linalg::Vocabulary::names` of `ksvd::Sampling`; the error lists them) is parsed for every solver, used by `nystrom`.
fn parse_solver(name: &str, n_landmarks: Option<usize>, sampling: &str, tol: f64) -> PyResult<Solver> {
    let sampling: Sampling = sampling.parse().map_err(value_error)?;
    let lanczos = Solver::Lanczos(LanczosParams {
        tol,
        ..LanczosParams::default()
    });
    Ok(match name {
        "auto" => Solver::Auto { tol },
        "lanczos" => lanczos,
        "exact" => Solver::Exact,
        "rsvd" => Solver::Rsvd(RsvdParams::default()),
        "nystrom" => {
            let Some(landmarks) = n_landmarks else {
                return Err(value_error(
                    "solver='nystrom' needs n_landmarks (the number of sampled rows and columns)",
                ));
            };
            Solver::Nystrom {
                landmarks,
                cols: None,
                sampling,
                inner: InnerSolver::default(),
            }
        }
        other => {
            return Err(value_error(format!(
                "unknown solver {other:?} (expected 'auto', 'exact', 'lanczos', 'rsvd' or 'nystrom')"
            )))
        }
    })
}

/// Fits on owned samples (no Python objects: runs detached) and returns the portable model.
/// The bandwidth rule `γ = sqrt(M γ_x)` (`ksvd_kernels::graph::bandwidth_rule` with `k = 1`, as
/// the CLI) is evaluated on `rule_data` when no bandwidth is given.
fn fit_detached(x: Samples, z: Samples, rule_data: &Samples, cfg: &FitConfig) -> Result<KsvdModel, KsvdError> {
    let gamma = match (cfg.kernel.has_bandwidth(), cfg.bandwidth) {
        (true, Some(g)) => g,
        (true, None) => bandwidth_rule(rule_data, 1.0),
        // Unused by kernels without a bandwidth.
        (false, _) => 1.0,
    };
    let params = Ksvd::params()
        .kernel(cfg.kernel.kernel(gamma, cfg.degree, cfg.coef0))
        .rank(cfg.rank)
        .solver(cfg.solver.clone())
        .center(cfg.center)
        .seed(cfg.seed)
        .check()?;
    params.fit_samples(x, z)?.to_model()
}

/// A fitted KSVD model (`ksvd::KsvdModel`): the top-`r` singular triplets of
/// `G_ij = k(x_i, z_j)`, with `B_φ = U` (`n × r`), `B_ψ = V` (`m × r`), singular values in
/// descending order, and the out-of-sample extension (eq. 10).
#[pyclass(module = "ksvd._ksvd", name = "KsvdModel", frozen)]
struct PyKsvdModel {
    model: KsvdModel,
    precomputed: bool,
}

#[pymethods]
impl PyKsvdModel {
    /// Singular values `λ_1 ≥ … ≥ λ_r` (a new array; Nyström: the estimates).
    fn singular_values<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        self.model.singular_values().to_owned().into_pyarray(py)
    }
    /// `B_φ`: left singular vectors, `n × r` (a new array).
    fn row_embedding<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<f64>> {
        self.model.u().to_owned().into_pyarray(py)
    }
    /// `B_ψ`: right singular vectors, `m × r` (a new array).
    fn col_embedding<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<f64>> {
        self.model.v().to_owned().into_pyarray(py)
    }
    /// Residual norms relative to `λ_1`, `[‖G v_i − λ_i u_i‖, ‖Gᵀ u_i − λ_i v_i‖] / λ_1`, of every
    /// triplet (`r × 2`; `ksvd_solvers::Residuals`);
    /// `None` for the Nyström solver (they would cost the passes over `G` it avoids).
    fn residuals<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyArray2<f64>>> {
        self.model.residuals().map(|r| {
            let a =
                ndarray::Array2::from_shape_fn((r.left.len(), 2), |(i, j)| if j == 0 { r.left[i] } else { r.right[i] });
            a.into_pyarray(py)
        })
    }
    /// The bandwidth `γ` used (`None` for kernels without one).
    #[getter]
    fn bandwidth(&self) -> Option<f64> {
        if self.precomputed {
            None
        } else {
            self.model.kernel().gamma()
        }
    }
    /// `(n, m)`: the shape of `G`.
    #[getter]
    fn shape(&self) -> (usize, usize) {
        self.model.shape()
    }
    /// Whether the model was fitted on a precomputed kernel matrix.
    #[getter]
    fn precomputed(&self) -> bool {
        self.precomputed
    }

    /// Out-of-sample extension to new row samples, `ũ(x') = k̃(x', Z) V S⁻¹` (eq. 10;
    /// `new × r`; the rows of `U` at the training rows). With a precomputed kernel, `x` is the
    /// block `K(x', Z)` (`new × m`).
    fn transform_rows<'py>(&self, py: Python<'py>, x: SamplesArg<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let x = x.to_samples()?;
        let out = py.detach(|| self.model.extend_rows(&x)).map_err(value_error)?;
        Ok(out.into_pyarray(py))
    }

    /// Out-of-sample extension to new column samples, `ṽ(z') = k̃(X, z')ᵀ U S⁻¹` (`new × r`;
    /// the rows of `V` at the training columns).
    fn transform_cols<'py>(&self, py: Python<'py>, z: SamplesArg<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        if self.precomputed {
            // The unit-column-sample form of a precomputed G (module docs) has no column
            // samples to evaluate against; this needs a precomputed kernel type in the core.
            return Err(value_error(
                "transform_cols is not available with kernel='precomputed' (ksvd-kernels has no precomputed kernel type)",
            ));
        }
        let z = z.to_samples()?;
        let out = py.detach(|| self.model.extend_cols(&z)).map_err(value_error)?;
        Ok(out.into_pyarray(py))
    }

    /// The model's serde form (`ksvd::KsvdModel::to_bytes`: one versioned JSON document).
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = py.detach(|| self.model.to_bytes()).map_err(value_error)?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// Pickle support: `KsvdModel._from_state(bytes, precomputed)`.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let py = slf.py();
        let this = slf.get();
        let ctor = py.get_type::<PyKsvdModel>().getattr("_from_state")?;
        let state = (this.to_bytes(py)?, this.precomputed);
        PyTuple::new(py, [ctor.into_any(), state.into_pyobject(py)?.into_any()])
    }

    /// Rebuilds a model from [`PyKsvdModel::__reduce__`]'s state (`ksvd::KsvdModel::from_bytes`,
    /// which validates the document and names what is wrong).
    #[staticmethod]
    fn _from_state(py: Python<'_>, bytes: &[u8], precomputed: bool) -> PyResult<Self> {
        let model = py.detach(|| KsvdModel::from_bytes(bytes)).map_err(value_error)?;
        Ok(PyKsvdModel { model, precomputed })
    }

    fn __repr__(&self) -> String {
        let (n, m) = self.shape();
        let kernel = if self.precomputed {
            "precomputed".to_string()
        } else {
            self.model.kernel().to_string()
        };
        format!("KsvdModel({n} x {m}, {kernel}, rank {})", self.model.rank())
    }
}

/// Fits KSVD on row samples `x` and column samples `z` (`None`: `Z = X`), or on a precomputed
/// kernel matrix `x = G` (`kernel="precomputed"`, `z` must be `None`). `bandwidth=None` uses
/// the paper's rule `γ = sqrt(M γ_x)` on `x`. Runs with the GIL released.
#[pyfunction]
#[pyo3(signature = (x, z, *, kernel, bandwidth, degree, coef0, center, solver, n_landmarks, sampling, tol, rank, seed))]
fn fit<'py>(
    py: Python<'py>,
    x: SamplesArg<'py>,
    z: Option<SamplesArg<'py>>,
    kernel: &str,
    bandwidth: Option<f64>,
    degree: u32,
    coef0: f64,
    center: bool,
    solver: &str,
    n_landmarks: Option<usize>,
    sampling: &str,
    tol: f64,
    rank: usize,
    seed: u64,
) -> PyResult<PyKsvdModel> {
    let kernel = KernelName::parse(kernel)?;
    let cfg = FitConfig {
        kernel,
        bandwidth,
        degree,
        coef0,
        center,
        solver: parse_solver(solver, n_landmarks, sampling, tol)?,
        rank,
        seed,
    };
    let x = x.to_samples()?;
    let precomputed = kernel == KernelName::Precomputed;
    let z = match (z, precomputed) {
        (None, false) => x.clone(),
        (Some(z), false) => z.to_samples()?,
        (None, true) => Samples::sparse(CsrMatrix::identity(x.dim())).map_err(value_error)?,
        (Some(_), true) => {
            return Err(value_error(
                "Z must be None with kernel='precomputed' (X is the kernel matrix)",
            ))
        }
    };
    let model = py
        .detach(|| fit_detached(x.clone(), z, &x, &cfg))
        .map_err(value_error)?;
    Ok(PyKsvdModel { model, precomputed })
}

/// Fits KSVD on a directed graph: `adjacency` is a CSR triple (`A_ij ≠ 0` for an arc
/// `i → j`), transformed by `graph_input` (`raw`, `row-normalized`, `self-loops`,
/// `row-normalized-self-loops`); row samples are the out-rows and column samples the
/// in-columns of the transformed `A`. `bandwidth=None` uses the rule on the transformed `A`.
#[pyfunction]
#[pyo3(signature = (adjacency, *, graph_input, kernel, bandwidth, degree, coef0, center, solver, n_landmarks, sampling, tol, rank, seed))]
fn fit_graph<'py>(
    py: Python<'py>,
    adjacency: CsrArg<'py>,
    graph_input: &str,
    kernel: &str,
    bandwidth: Option<f64>,
    degree: u32,
    coef0: f64,
    center: bool,
    solver: &str,
    n_landmarks: Option<usize>,
    sampling: &str,
    tol: f64,
    rank: usize,
    seed: u64,
) -> PyResult<PyKsvdModel> {
    let kernel = KernelName::parse(kernel)?;
    if kernel == KernelName::Precomputed {
        return Err(value_error("kernel='precomputed' makes no sense for a graph input"));
    }
    let input: GraphInput = graph_input.parse().map_err(value_error)?;
    let cfg = FitConfig {
        kernel,
        bandwidth,
        degree,
        coef0,
        center,
        solver: parse_solver(solver, n_landmarks, sampling, tol)?,
        rank,
        seed,
    };
    let a = adjacency.to_csr()?;
    let model = py
        .detach(|| -> Result<KsvdModel, KsvdError> {
            let (x, z) = graph_samples(&a, input)?;
            fit_detached(x.clone(), z, &x, &cfg)
        })
        .map_err(value_error)?;
    Ok(PyKsvdModel {
        model,
        precomputed: false,
    })
}

/// The paper's bandwidth rule `γ = k sqrt(M γ_x)` (`γ_x`: variance of all entries of the
/// `N × M` data matrix, zeros included).
#[pyfunction]
#[pyo3(name = "bandwidth_rule", signature = (x, k = 1.0))]
fn bandwidth_rule_py<'py>(x: SamplesArg<'py>, k: f64) -> PyResult<f64> {
    Ok(bandwidth_rule(&x.to_samples()?, k))
}

/// The native module `ksvd._ksvd`.
#[pymodule]
fn _ksvd(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyKsvdModel>()?;
    m.add_function(wrap_pyfunction!(fit, m)?)?;
    m.add_function(wrap_pyfunction!(fit_graph, m)?)?;
    m.add_function(wrap_pyfunction!(bandwidth_rule_py, m)?)?;
    streaming::register(m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
