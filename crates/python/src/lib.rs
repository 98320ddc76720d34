//! # ksvd-python
//!
//! The native module `ksvd._ksvd` behind the Python package `ksvd` (the scikit-learn style
//! estimators `ksvd.KSVD`, `ksvd.KPCA`, `ksvd.load` and `ksvd.graph.embed`, in `python/ksvd/`).
//! The package speaks the workspace's one contract, `docs/conventions.md`: the parameters of
//! its Python column, with their defaults, and the outputs of "What comes out".
//!
//! The binding is thin: it converts at the edge and nothing else.
//!
//! * NumPy arrays (`float64`, any layout) and CSR triples `(shape, indptr, indices, data)`
//!   become [`Samples`]; the hyper-parameters arrive as one dict under the Python column's names
//!   ([`Hyper`]) and become the core's parameters: names are parsed by the core's vocabularies
//!   ([`KernelKind`], [`SolverKind`], [`Sampling`], [`GraphInput`], [`Compat`]), the flat solver
//!   options go through [`SolverOptions`] and [`SolverKind::solver`], and the core validates
//!   the values ([`ParamGuard::check`], [`Solver::validate`]).
//! * `KSVD` fits [`ksvd::KsvdValidParams::fit_samples`] (with `Z`, or `Z = X`),
//!   [`Fit`] on a data matrix with a compatibility (Algorithm 1) or
//!   [`ksvd::KsvdValidParams::fit_precomputed`]; `KPCA` fits [`ksvd::Kpca`] (the symmetric
//!   method at every solver; its Nyström solver is the symmetric Nyström method) or
//!   [`ksvd::KpcaValidParams::fit_precomputed`]. Either way the result is the portable
//!   [`KsvdModel`] (its `estimator` says which), projected by
//!   [`KsvdModel::project_input_rows`] / [`KsvdModel::project_input_cols`] (samples, rows of
//!   the data matrix, or kernel values: whatever the fit took), saved by [`KsvdModel::save`] and
//!   pickled through its checksummed envelope ([`KsvdModel::to_bytes`]).
//! * Computations run with the GIL released, in a rayon pool of `n_jobs` threads built for that
//!   call when `n_jobs` is set ([`Threads`]; no global state). Input copies are made while the
//!   GIL is held, so no other Python thread can mutate a buffer under the computation.
//! * Errors of the core ([`KsvdError`], `ksvd_kernels::KernelError`,
//!   `ksvd_linalg::LinalgError`, an unknown name) become `ValueError` with the core's message.
//!
//! [`streaming`] binds the mergeable partial states of `ksvd_streaming`'s out-of-core passes
//! (pickled through their versioned bytes), which `ksvd.dask` schedules on a Dask cluster.

mod distributed;
mod streaming;

use ksvd::{
    bandwidth_rule, graph_samples, Compat, CsrMatrix, DatasetBase, Fit, GraphInput, Kernel, KernelKind, Kpca,
    KpcaValidParams, Ksvd, KsvdError, KsvdModel, KsvdValidParams, MemoryBudget, ParamGuard, Precision, Samples,
    Sampling, Scaling, Solver, SolverKind, SolverOptions, Vocabulary,
};
use ksvd::{KernelFnError, KernelFunction};
use ksvd_streaming::{DocumentError, ModelDocument};
use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyTuple};
use std::path::PathBuf;
use std::sync::Arc;

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
pub(crate) enum SamplesArg<'py> {
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

    /// The rows as a validated CSR matrix (dense input converted; the streaming models' input).
    pub(crate) fn to_csr(&self) -> PyResult<CsrMatrix> {
        match self {
            SamplesArg::Dense(a) => CsrMatrix::from_dense(a.as_array()).map_err(value_error),
            SamplesArg::Csr(c) => c.to_csr(),
        }
    }
}

/// The threads of one call (`n_jobs`): a rayon pool of that size, built for the call and
/// installed around it, or the global pool (all cores) for `None` and `-1` (scikit-learn's
/// "all processors"). Nothing global is changed.
struct Threads(Option<rayon::ThreadPool>);

impl Threads {
    fn new(n_jobs: Option<i64>) -> PyResult<Threads> {
        match n_jobs {
            None | Some(-1) => Ok(Threads(None)),
            Some(n) if n >= 1 => {
                let n = usize::try_from(n).map_err(value_error)?;
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(n)
                    .build()
                    .map_err(|e| value_error(format!("cannot start {n} threads (n_jobs): {e}")))?;
                Ok(Threads(Some(pool)))
            }
            Some(n) => Err(value_error(format!(
                "n_jobs must be a positive number of threads, or None or -1 for all cores; got {n}"
            ))),
        }
    }

    /// Runs `f` detached from the interpreter, in this call's pool.
    fn run<T: Send>(&self, py: Python<'_>, f: impl FnOnce() -> T + Send) -> T {
        py.detach(|| match &self.0 {
            Some(pool) => pool.install(f),
            None => f(),
        })
    }
}

/// `memory_budget=`: bytes as an int, or a string such as `"512M"` ([`MemoryBudget::parse`]).
#[derive(FromPyObject)]
enum BudgetArg {
    Bytes(i64),
    Text(String),
}

impl BudgetArg {
    fn budget(&self) -> PyResult<MemoryBudget> {
        match self {
            BudgetArg::Bytes(b) => {
                let bytes = u64::try_from(*b)
                    .map_err(|_| value_error(format!("memory_budget must be a positive number of bytes; got {b}")))?;
                MemoryBudget::bytes(bytes).map_err(value_error)
            }
            BudgetArg::Text(t) => MemoryBudget::parse(t).map_err(value_error),
        }
    }
}

/// `kernel=`: a name of the core's vocabulary ([`KernelKind`]) or a callable of the user's.
#[derive(FromPyObject)]
enum KernelArg {
    /// `"rbf"`, `"sne"`, ..., `"precomputed"`.
    Name(String),
    /// `kernel(A, B) -> array (len(A), len(B))`.
    Function(Py<PyAny>),
}

/// A Python callable `kernel(A, B)` as a [`KernelFunction`]: the core asks for blocks of `G`
/// (rows of X against rows of Z, sized from the memory budget) from its worker threads; each call
/// attaches to the interpreter for the callable only (everything else runs detached). The
/// result goes through `numpy.asarray(result, float64)` and must be `len(A) × len(B)`; an
/// exception, another shape or a non-array is the core's typed error naming the function, and
/// NaN/inf values are refused by the core.
#[derive(Debug)]
struct PyKernel {
    name: String,
    f: Py<PyAny>,
}

impl PyKernel {
    /// The callable `f`, recorded in model files by its `__name__` (its type's name otherwise).
    fn new(f: &Bound<'_, PyAny>) -> PyResult<Self> {
        if !f.is_callable() {
            return Err(pyo3::exceptions::PyTypeError::new_err(format!(
                "kernel must be a kernel name or a callable kernel(A, B) -> array; got {}",
                f.repr()?
            )));
        }
        let name = match f.getattr("__name__").and_then(|n| n.extract::<String>()) {
            Ok(n) => n,
            Err(_) => f.get_type().name()?.to_string(),
        };
        Ok(PyKernel {
            name,
            f: f.clone().unbind(),
        })
    }
}

impl PyKernel {
    /// The callable `f` as the core's kernel function.
    fn function(f: &Bound<'_, PyAny>) -> PyResult<Arc<dyn KernelFunction>> {
        Ok(Arc::new(PyKernel::new(f)?))
    }
}

/// An error of a model's loader as a `ValueError`; a model of a user's kernel function says how
/// to give it back.
fn model_error(e: KsvdError) -> PyErr {
    match e {
        KsvdError::KernelFunctionNeeded { .. } => {
            value_error(format!("{e}; pass the callable: ksvd.load(path, kernel=f)"))
        }
        e => value_error(e),
    }
}

impl KernelFunction for PyKernel {
    fn name(&self) -> &str {
        &self.name
    }

    fn block(
        &self,
        x: ndarray::ArrayView2<'_, f64>,
        z: ndarray::ArrayView2<'_, f64>,
        mut out: ndarray::ArrayViewMut2<'_, f64>,
    ) -> Result<(), KernelFnError> {
        Python::attach(|py| {
            let failed = |e: PyErr| KernelFnError::Failed { reason: e.to_string() };
            let a = PyArray2::from_array(py, &x);
            let b = PyArray2::from_array(py, &z);
            let result = self.f.bind(py).call1((a, b)).map_err(failed)?;
            let kind = result.get_type().name().map(|n| n.to_string()).unwrap_or_default();
            let array = py
                .import("numpy")
                .and_then(|np| np.getattr("asarray"))
                .and_then(|asarray| asarray.call1((&result, "float64")))
                .map_err(|e| KernelFnError::Failed {
                    reason: format!("it returned a {kind} that is not an array of numbers ({e})"),
                })?;
            let array: PyReadonlyArray2<'_, f64> = match array.extract() {
                Ok(a) => a,
                Err(_) => {
                    let ndim: usize = array.getattr("ndim").and_then(|d| d.extract()).unwrap_or(0);
                    return Err(KernelFnError::Failed {
                        reason: format!("it returned a {ndim}-d {kind} where a 2-d array (len(A) x len(B)) was asked"),
                    });
                }
            };
            let view = array.as_array();
            if view.dim() != out.dim() {
                return Err(KernelFnError::WrongShape {
                    expected: out.dim(),
                    got: view.dim(),
                });
            }
            out.assign(&view);
            Ok(())
        })
    }
}

/// The hyper-parameters of a fit, under the names and with the meanings of the Python column of
/// `docs/conventions.md` (the Python layer passes every key, type-checked; values are checked
/// here and by the core).
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
struct Hyper {
    n_components: usize,
    kernel: KernelArg,
    bandwidth: Option<f64>,
    bandwidth_factor: f64,
    gamma: Option<f64>,
    degree: u32,
    coef0: f64,
    center: bool,
    compat: Option<String>,
    solver: String,
    /// `None`: the precision's default (1e-8, float32 1e-5).
    tol: Option<f64>,
    /// `"f64"` or `"f32"` (the training data's dtype); `None`: f64.
    precision: Option<String>,
    n_landmarks: Option<usize>,
    n_col_landmarks: Option<usize>,
    sampling: String,
    landmark_rows: Option<Vec<usize>>,
    landmark_cols: Option<Vec<usize>>,
    oversampling: usize,
    power_iters: usize,
    seed: u64,
    memory_budget: Option<BudgetArg>,
}

/// The parameters KSVD and KPCA share (kernel or bandwidth rule, rank, solver, centring, seed,
/// memory budget), set on either builder (`Ksvd::params()`, `Kpca::params()`) from a [`Hyper`].
macro_rules! shared_params {
    ($builder:expr, $hyper:expr, $kind:expr, $py:expr) => {{
        let h: &Hyper = $hyper;
        let (kernel, rule) = h.kernel($kind)?;
        let mut p = $builder;
        if let Some(kernel) = kernel {
            p = p.kernel(kernel);
        }
        if let Some(f) = h.kernel_fn($py)? {
            p = p.kernel_fn(f);
        }
        if rule {
            p = p.bandwidth_rule(Some(h.bandwidth_factor));
        }
        p = p
            .rank(h.n_components)
            .solver(h.solver()?)
            .center(h.center)
            .seed(h.seed)
            .precision(h.precision()?);
        if let Some(budget) = h.budget()? {
            p = p.memory_budget(budget);
        }
        p
    }};
}

impl Hyper {
    /// The built-in kernel by name; `None` for a callable.
    fn kernel_kind(&self) -> PyResult<Option<KernelKind>> {
        match &self.kernel {
            KernelArg::Name(name) => name.parse().map(Some).map_err(value_error),
            KernelArg::Function(_) => Ok(None),
        }
    }

    /// The user's callable as the core's kernel function, if `kernel=` is one.
    fn kernel_fn(&self, py: Python<'_>) -> PyResult<Option<Arc<dyn KernelFunction>>> {
        match &self.kernel {
            KernelArg::Name(_) => Ok(None),
            KernelArg::Function(f) => {
                if self.bandwidth.is_some() || self.gamma.is_some() {
                    return Err(value_error(
                        "bandwidth and gamma are parameters of the built-in kernels; a callable kernel \
                         takes its own (e.g. functools.partial)",
                    ));
                }
                Ok(Some(Arc::new(PyKernel::new(f.bind(py))?)))
            }
        }
    }

    /// The paper's bandwidth `γ` (a length): `bandwidth` as given, or scikit-learn's `gamma`
    /// converted (`exp(-gamma d²)` is `exp(-d²/γ²)` with `γ = 1/sqrt(gamma)`, `exp(-gamma d)`
    /// is `exp(-d/γ)` with `γ = 1/gamma`); `None`: the bandwidth rule.
    fn bandwidth(&self, kind: KernelKind) -> PyResult<Option<f64>> {
        let Some(g) = self.gamma else {
            return Ok(self.bandwidth);
        };
        if self.bandwidth.is_some() {
            return Err(value_error(
                "give bandwidth (the paper's length) or gamma (scikit-learn's inverse), not both",
            ));
        }
        if !(g.is_finite() && g > 0.0) {
            return Err(value_error(format!("gamma = {g} must be positive and finite")));
        }
        match kind {
            KernelKind::Rbf | KernelKind::Sne => Ok(Some(1.0 / g.sqrt())),
            KernelKind::Laplacian => Ok(Some(1.0 / g)),
            other => Err(value_error(format!(
                "gamma is scikit-learn's parameter of the rbf, sne and laplacian kernels, not of {other} \
                 (scikit-learn's gamma of the polynomial kernel scales x . z, which ksvd's does not)"
            ))),
        }
    }

    /// The kernel (`None` for `precomputed`) and whether the bandwidth rule picks its `γ`.
    fn kernel(&self, kind: Option<KernelKind>) -> PyResult<(Option<Kernel>, bool)> {
        let Some(kind) = kind else {
            return Ok((None, false));
        };
        let bandwidth = self.bandwidth(kind)?;
        // The rule replaces the placeholder bandwidth at fit time.
        let kernel = kind.kernel(bandwidth.unwrap_or(1.0), self.degree, self.coef0);
        Ok((kernel, kind.has_bandwidth() && bandwidth.is_none()))
    }

    /// User-chosen Nyström landmarks `(I, J)`.
    fn landmarks(&self) -> PyResult<Option<(Vec<usize>, Vec<usize>)>> {
        match (&self.landmark_rows, &self.landmark_cols) {
            (None, None) => Ok(None),
            (Some(r), Some(c)) => Ok(Some((r.clone(), c.clone()))),
            _ => Err(value_error(
                "landmark_rows and landmark_cols are given together (0-based indices into X and into Z)",
            )),
        }
    }

    /// The solver by name with the flat options ([`SolverKind::solver`]); user landmarks give
    /// the Nyström counts.
    fn solver(&self) -> PyResult<Solver> {
        let kind: SolverKind = self.solver.parse().map_err(value_error)?;
        let sampling: Sampling = self.sampling.parse().map_err(value_error)?;
        let user = self.landmarks()?;
        let options = SolverOptions {
            tol: self.tol.unwrap_or(self.precision()?.default_tol()),
            oversampling: self.oversampling,
            power_iters: self.power_iters,
            n_landmarks: self.n_landmarks.or(user.as_ref().map(|(r, _)| r.len())),
            n_col_landmarks: self.n_col_landmarks.or(user.as_ref().map(|(_, c)| c.len())),
            sampling,
        };
        let solver = kind.solver(&options).map_err(value_error)?;
        solver.validate().map_err(value_error)?;
        Ok(solver)
    }

    /// The precision of `G`'s entries and products (`f64` unless the data were float32).
    fn precision(&self) -> PyResult<Precision> {
        self.precision
            .as_deref()
            .map_or(Ok(Precision::F64), |p| p.parse().map_err(value_error))
    }

    fn compat(&self) -> PyResult<Option<Compat>> {
        self.compat
            .as_deref()
            .map(|c| c.parse::<Compat>().map_err(value_error))
            .transpose()
    }

    fn budget(&self) -> PyResult<Option<MemoryBudget>> {
        self.memory_budget.as_ref().map(BudgetArg::budget).transpose()
    }

    /// KSVD's validated parameters.
    fn ksvd_params(&self, py: Python<'_>, kind: Option<KernelKind>) -> PyResult<KsvdValidParams> {
        let mut p = shared_params!(Ksvd::params(), self, kind, py).compat(self.compat()?);
        if let Some((rows, cols)) = self.landmarks()? {
            p = p.landmark_indices(rows, cols);
        }
        p.check().map_err(value_error)
    }

    /// KPCA's validated parameters (`Z = X`: no compatibility; the symmetric Nyström method
    /// samples its landmarks).
    fn kpca_params(&self, py: Python<'_>, kind: Option<KernelKind>) -> PyResult<KpcaValidParams> {
        if self.compat.is_some() {
            return Err(value_error(
                "KPCA has Z = X: compat (the columns of X as Z, Algorithm 1) is a KSVD parameter",
            ));
        }
        if self.landmarks()?.is_some() {
            return Err(value_error(
                "KPCA's symmetric Nystrom method samples its landmarks: landmark_rows/landmark_cols are KSVD \
                 parameters",
            ));
        }
        shared_params!(Kpca::params(), self, kind, py)
            .check()
            .map_err(value_error)
    }
}

/// A fitted model of either estimator (`ksvd::KsvdModel`): KSVD's top-`r` singular triplets of
/// `G_ij = k(x_i, z_j)` (`U = B_φ`, `V = B_ψ`) or KPCA's eigenpairs (`U = V = A`, `s = λ`),
/// with the projections of new inputs, save and pickling through the checksummed envelope.
#[pyclass(module = "ksvd._ksvd", name = "KsvdModel", frozen)]
struct PyKsvdModel {
    model: KsvdModel,
    /// The user's callable of a model with a kernel function (what pickling and `params` give
    /// back; the model file records only its name).
    kernel: Option<Py<PyAny>>,
}

impl PyKsvdModel {
    /// A fitted model; `params` gives the callable of a user's kernel.
    fn fitted(py: Python<'_>, model: KsvdModel, params: &Hyper) -> Self {
        let kernel = match &params.kernel {
            KernelArg::Function(f) => Some(f.clone_ref(py)),
            KernelArg::Name(_) => None,
        };
        PyKsvdModel { model, kernel }
    }
}

/// Landmark rows and columns as two NumPy index arrays.
type IndexPair<'py> = (Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<i64>>);

#[pymethods]
impl PyKsvdModel {
    /// `"ksvd"` or `"kpca"`: the estimator that produced the model.
    #[getter]
    fn estimator(&self) -> &'static str {
        match self.model.estimator() {
            ksvd::Estimator::Ksvd => "ksvd",
            ksvd::Estimator::Kpca => "kpca",
        }
    }
    /// Singular values `s_1 ≥ … ≥ s_r` (KPCA: eigenvalues; Nyström: the estimates; a new array).
    fn singular_values<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        self.model.singular_values().to_owned().into_pyarray(py)
    }
    /// `U` (`B_φ`, `N × r`; KPCA: the eigenvectors; a new array).
    fn row_embedding<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<f64>> {
        self.model.u().to_owned().into_pyarray(py)
    }
    /// `V` (`B_ψ`, `M × r`; a new array).
    fn col_embedding<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<f64>> {
        self.model.v().to_owned().into_pyarray(py)
    }
    /// `[‖G v_i − s_i u_i‖, ‖Gᵀ u_i − s_i v_i‖] / s_1` of every triplet (`r × 2`); `None` for a
    /// KSVD Nyström model (they would cost the passes over `G` the method avoids).
    fn residuals<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyArray2<f64>>> {
        self.model.residuals().map(|r| {
            ndarray::Array2::from_shape_fn((r.left.len(), 2), |(i, j)| if j == 0 { r.left[i] } else { r.right[i] })
                .into_pyarray(py)
        })
    }
    /// The Nyström landmarks `(I, J)` (indices into X and Z; KPCA: `I = J`), or `None`.
    fn landmarks<'py>(&self, py: Python<'py>) -> Option<IndexPair<'py>> {
        let as_array = |idx: &[usize]| idx.iter().map(|&i| i as i64).collect::<Vec<_>>().into_pyarray(py);
        self.model.landmarks().map(|(i, j)| (as_array(i), as_array(j)))
    }
    /// The bandwidth `γ` the fit used (`None` for kernels without one and precomputed kernels).
    #[getter]
    fn bandwidth(&self) -> Option<f64> {
        self.model.bandwidth()
    }
    /// `(N, M)`: the training sizes.
    #[getter]
    fn shape(&self) -> (usize, usize) {
        self.model.shape()
    }
    /// Values per new row and per new column input (`KsvdModel::input_dims`).
    #[getter]
    fn input_dims(&self) -> (usize, usize) {
        self.model.input_dims()
    }
    /// Whether the model was fitted on a precomputed kernel matrix.
    #[getter]
    fn precomputed(&self) -> bool {
        self.model.is_precomputed()
    }

    /// The hyper-parameters the model records, under the Python column's names (the kernel
    /// with the bandwidth the fit used; no run-time settings): what `ksvd.load` gives the
    /// estimator it returns. Parameters the model does not record are absent.
    fn params<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let p = self.model.params();
        let d = PyDict::new(py);
        d.set_item("n_components", p.rank())?;
        if let Some(f) = &self.kernel {
            d.set_item("kernel", f.bind(py))?;
        } else if self.model.is_precomputed() {
            d.set_item("kernel", KernelKind::Precomputed.name())?;
        } else {
            let kernel = self.model.kernel();
            d.set_item("kernel", kernel.kind().name())?;
            d.set_item("bandwidth", kernel.gamma())?;
            if let Kernel::Polynomial { degree, offset } = *kernel {
                d.set_item("degree", degree)?;
                d.set_item("coef0", offset)?;
            }
        }
        d.set_item("center", p.center())?;
        if let (Some(c), Some(_)) = (p.compat(), self.model.compat()) {
            d.set_item("compat", c.name())?;
        }
        let solver = p.solver();
        d.set_item("solver", solver.kind().name())?;
        let o = solver.options();
        d.set_item("tol", o.tol)?;
        d.set_item("oversampling", o.oversampling)?;
        d.set_item("power_iters", o.power_iters)?;
        d.set_item("n_landmarks", o.n_landmarks)?;
        d.set_item("n_col_landmarks", o.n_col_landmarks)?;
        d.set_item("sampling", o.sampling.name())?;
        if let Some((rows, cols)) = p.landmark_indices() {
            d.set_item("landmark_rows", rows.to_vec())?;
            d.set_item("landmark_cols", cols.to_vec())?;
        }
        d.set_item("random_state", p.seed())?;
        Ok(d)
    }

    /// Projections of new rows (`cols = False`) or columns, given as the fit took its input
    /// (samples; rows, or columns one per row, of the data matrix of a fit with a
    /// compatibility; kernel values `k(x', Z)` (`new × M`) or `k(X, z')ᵀ` (`new × N`) of a
    /// precomputed model): `transform` `k̃(x', Z) V S^-½` (`U S^½` at the training rows; KPCA:
    /// scikit-learn's `KernelPCA.transform`), or with `extend = True` the paper's extension
    /// (eq. 10) `k̃(x', Z) V S⁻¹` (`U` at the training rows); likewise `k̃(X, z')ᵀ U S^-p` for
    /// columns.
    #[pyo3(signature = (x, *, cols, extend, n_jobs = None))]
    fn project<'py>(
        &self,
        py: Python<'py>,
        x: SamplesArg<'py>,
        cols: bool,
        extend: bool,
        n_jobs: Option<i64>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let scaling = if extend { Scaling::Unit } else { Scaling::Sqrt };
        let threads = Threads::new(n_jobs)?;
        let input = x.to_samples()?;
        let out = threads
            .run(py, || {
                if cols {
                    self.model.project_input_cols(&input, scaling)
                } else {
                    self.model.project_input_rows(&input, scaling)
                }
            })
            .map_err(value_error)?;
        Ok(out.into_pyarray(py))
    }

    /// The model document: the checksummed envelope `KsvdModel::save` writes.
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = py.detach(|| self.model.to_bytes()).map_err(value_error)?;
        Ok(PyBytes::new(py, &bytes))
    }
    /// Saves the model document to `path`, atomically (`KsvdModel::save`).
    fn save(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        py.detach(|| self.model.save(&path)).map_err(value_error)
    }
    /// Reads a model document (`KsvdModel::from_bytes`: a changed byte, another format or
    /// version, a broken invariant are a `ValueError` naming which).
    /// A model with a kernel function of the user's needs it back: `kernel` is the callable
    /// (its `__name__` must be the one the file records).
    #[staticmethod]
    #[pyo3(signature = (bytes, kernel=None))]
    fn from_bytes(py: Python<'_>, bytes: &[u8], kernel: Option<Bound<'_, PyAny>>) -> PyResult<Self> {
        let model = match kernel.as_ref().map(PyKernel::function).transpose()? {
            Some(f) => py.detach(|| KsvdModel::from_bytes_with_kernel(bytes, f)),
            None => py.detach(|| KsvdModel::from_bytes(bytes)),
        }
        .map_err(model_error)?;
        Ok(PyKsvdModel {
            model,
            kernel: kernel.map(Bound::unbind),
        })
    }
    /// Pickle support: `KsvdModel.from_bytes(model.to_bytes(), kernel)` (a user's callable
    /// pickles as Python pickles functions: by reference).
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let py = slf.py();
        let ctor = py.get_type::<PyKsvdModel>().getattr("from_bytes")?;
        let bytes = slf.get().to_bytes(py)?.into_any();
        let kernel = match &slf.get().kernel {
            Some(f) => f.bind(py).clone(),
            None => py.None().into_bound(py),
        };
        let state = PyTuple::new(py, [bytes, kernel])?;
        PyTuple::new(py, [ctor.into_any(), state.into_any()])
    }
    /// What the model holds, in one line (`ksvd::ModelSummary`).
    fn __repr__(&self) -> String {
        self.model.summary().to_string()
    }
}

/// `ksvd.load`: any model document of the workspace, from a path or from its bytes, by the
/// format its envelope names (`ksvd_streaming::ModelDocument`, the one dispatcher; the loader
/// verifies the checksum): a `KsvdModel` (`ksvd fit --out DIR`'s `DIR/model.json`, `save` of
/// either door) or a trained streaming model (`ksvd_streaming::TrainedModel`: written by
/// `ksvd-stream run --out DIR`, `ksvd.dask.fit(out_dir=)` or `save`). Anything else, a changed byte or a truncated file is a
/// `ValueError` naming the problem.
#[pyfunction]
#[pyo3(signature = (source, kernel=None))]
fn load<'py>(
    py: Python<'py>,
    source: &Bound<'py, PyAny>,
    kernel: Option<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let bytes = match source.cast::<PyBytes>() {
        Ok(b) => b.as_bytes().to_vec(),
        Err(_) => {
            let path: PathBuf = source.extract()?;
            py.detach(|| std::fs::read(&path))
                .map_err(|e| value_error(format!("cannot read the model file {}: {e}", path.display())))?
        }
    };
    let function = kernel.as_ref().map(PyKernel::function).transpose()?;
    let document = py
        .detach(|| ModelDocument::from_bytes_with_kernel(&bytes, function))
        .map_err(|e| match e {
            DocumentError::Trained(e) => {
                value_error(format!("{e}; ksvd.load also reads `{}` documents", ksvd::MODEL_FORMAT))
            }
            DocumentError::Ksvd(e) => model_error(e),
            e => value_error(e),
        })?;
    match document {
        ModelDocument::Ksvd(model) => Ok(Bound::new(
            py,
            PyKsvdModel {
                model: *model,
                kernel: kernel.map(Bound::unbind),
            },
        )?
        .into_any()),
        ModelDocument::Trained(model) => streaming::trained(py, *model),
    }
}

/// Fits `estimator` (`"ksvd"` or `"kpca"`) on row samples `x` and column samples `z` (`None`:
/// `Z = X`, or with `compat` the columns of the data matrix `x`, Algorithm 1), or on a
/// precomputed kernel matrix `x` (`kernel = "precomputed"`). Runs detached, in `n_jobs` threads.
#[pyfunction]
#[pyo3(signature = (x, z, *, estimator, params, n_jobs))]
fn fit<'py>(
    py: Python<'py>,
    x: SamplesArg<'py>,
    z: Option<SamplesArg<'py>>,
    estimator: &str,
    params: Hyper,
    n_jobs: Option<i64>,
) -> PyResult<PyKsvdModel> {
    let kind = params.kernel_kind()?;
    let threads = Threads::new(n_jobs)?;
    let x = x.to_samples()?;
    let z = z.map(|z| z.to_samples()).transpose()?;
    let precomputed = kind == Some(KernelKind::Precomputed);
    if precomputed && z.is_some() {
        return Err(value_error(
            "Z must be None with kernel='precomputed' (X is the kernel matrix)",
        ));
    }
    let model = match estimator {
        "kpca" => {
            if z.is_some() {
                return Err(value_error("KPCA has Z = X: fit(X) takes no Z"));
            }
            let p = params.kpca_params(py, kind)?;
            threads.run(py, || -> Result<KsvdModel, KsvdError> {
                if precomputed {
                    p.fit_precomputed(x.to_dense().view())
                } else {
                    p.fit_samples(x)?.to_model()
                }
            })
        }
        "ksvd" => {
            let p = params.ksvd_params(py, kind)?;
            if p.compat().is_some() && (z.is_some() || precomputed) {
                return Err(value_error(
                    "compat makes Z from the columns of the data matrix X (Algorithm 1): it takes neither Z nor \
                     kernel='precomputed'",
                ));
            }
            threads.run(py, || -> Result<KsvdModel, KsvdError> {
                if precomputed {
                    return p.fit_precomputed(x.to_dense().view());
                }
                let fitted = match (z, p.compat()) {
                    (_, Some(_)) => p.fit(&DatasetBase::from(x.to_dense()))?,
                    (Some(z), None) => p.fit_samples(x, z)?,
                    (None, None) => p.fit_samples(x.clone(), x)?,
                };
                fitted.to_model()
            })
        }
        other => return Err(value_error(format!("unknown estimator {other:?}"))),
    }
    .map_err(value_error)?;
    Ok(PyKsvdModel::fitted(py, model, &params))
}

/// Fits KSVD on a directed graph: `adjacency` is a CSR triple (`A_ij ≠ 0` for an arc
/// `i → j`), transformed by `graph_input` (`ksvd::GraphInput`'s names); row samples are the
/// out-rows and column samples the in-columns of the transformed `A`. `bandwidth=None` uses the
/// rule on the transformed `A`.
#[pyfunction]
#[pyo3(signature = (adjacency, *, graph_input, params, n_jobs))]
fn fit_graph<'py>(
    py: Python<'py>,
    adjacency: CsrArg<'py>,
    graph_input: &str,
    params: Hyper,
    n_jobs: Option<i64>,
) -> PyResult<PyKsvdModel> {
    let kind = params.kernel_kind()?;
    if kind == Some(KernelKind::Precomputed) {
        return Err(value_error("kernel='precomputed' makes no sense for a graph input"));
    }
    let input: GraphInput = graph_input.parse().map_err(value_error)?;
    let p = params.ksvd_params(py, kind)?;
    let threads = Threads::new(n_jobs)?;
    let a = adjacency.to_csr()?;
    let model = threads
        .run(py, || -> Result<KsvdModel, KsvdError> {
            let (x, z) = graph_samples(&a, input)?;
            p.fit_samples(x, z)?.to_model()
        })
        .map_err(value_error)?;
    Ok(PyKsvdModel::fitted(py, model, &params))
}

/// The paper's bandwidth rule `γ = k sqrt(M γ_x)` (`γ_x`: variance of all entries of the
/// `N × M` data matrix, zeros included).
#[pyfunction]
#[pyo3(name = "bandwidth_rule", signature = (x, k = 1.0))]
fn bandwidth_rule_py<'py>(x: SamplesArg<'py>, k: f64) -> PyResult<f64> {
    Ok(bandwidth_rule(&x.to_samples()?, k))
}

/// A LIBSVM file (plain or `.bz2`) read by the workspace's reader (`ksvd_datasets::read_libsvm`):
/// `(((rows, features), indptr, indices, data), labels)`, the rows as a CSR triple (int64
/// indices) with `n_features` columns (None: the largest index). Errors name the file and line.
#[pyfunction]
#[pyo3(signature = (path, n_features = None, zero_based = false))]
#[allow(clippy::type_complexity)]
fn read_libsvm<'py>(
    py: Python<'py>,
    path: PathBuf,
    n_features: Option<usize>,
    zero_based: bool,
) -> PyResult<(
    (
        (usize, usize),
        Bound<'py, PyArray1<i64>>,
        Bound<'py, PyArray1<i64>>,
        Bound<'py, PyArray1<f64>>,
    ),
    Bound<'py, PyArray1<f64>>,
)> {
    let options = ksvd_datasets::LibsvmOptions { n_features, zero_based };
    let d = py
        .detach(|| ksvd_datasets::read_libsvm(&path, &options))
        .map_err(value_error)?;
    let x = &d.features;
    let index = |v: &[usize]| v.iter().map(|&i| i as i64).collect::<Vec<i64>>().into_pyarray(py);
    Ok((
        (
            x.shape(),
            index(x.indptr()),
            index(x.indices()),
            x.data().to_vec().into_pyarray(py),
        ),
        d.labels.into_pyarray(py),
    ))
}

/// The native module `ksvd._ksvd`. Besides the functions and the model class it holds the
/// canonical names of the core's vocabularies (`KERNELS`, `SOLVERS`, `SAMPLINGS`,
/// `GRAPH_INPUTS`, `COMPATS`), for the package's docstrings and tests.
#[pymodule]
fn _ksvd(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyKsvdModel>()?;
    m.add_function(wrap_pyfunction!(fit, m)?)?;
    m.add_function(wrap_pyfunction!(fit_graph, m)?)?;
    m.add_function(wrap_pyfunction!(load, m)?)?;
    m.add_function(wrap_pyfunction!(bandwidth_rule_py, m)?)?;
    m.add_function(wrap_pyfunction!(read_libsvm, m)?)?;
    let py = m.py();
    m.add("KERNELS", PyTuple::new(py, KernelKind::canonical_names())?)?;
    m.add("SOLVERS", PyTuple::new(py, SolverKind::canonical_names())?)?;
    m.add("SAMPLINGS", PyTuple::new(py, Sampling::canonical_names())?)?;
    m.add("GRAPH_INPUTS", PyTuple::new(py, GraphInput::canonical_names())?)?;
    m.add("COMPATS", PyTuple::new(py, Compat::canonical_names())?)?;
    streaming::register(m)?;
    distributed::register(m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
