//! The two native pieces of `ksvd.dask`'s estimators (`ksvd.dask.KSVD`, `ksvd.dask.KPCA`):
//!
//! * [`PyPartitionRows`] (`_ksvd.PartitionRows`), on a worker: the rows `G̃[p, :] =
//!   k̃(X_p, Z)` of one row partition against all column samples, a [`KernelMatrix`] (stored
//!   within its memory budget, block by block beyond it) centred with the whole matrix's column
//!   and grand means ([`KernelMatrix::centered_with`]). Its products and blocks are the
//!   per-partition halves of the operator's: `G̃_p V` (rows of `G̃ V`), `G̃_pᵀ U_p` (summed over the
//!   partitions along a fixed tree), `G̃[I ∩ p, J]`.
//! * [`fit_operator`], on the driver: the estimator's own fit ([`ksvd::KsvdValidParams::fit_operator`],
//!   [`ksvd::KpcaValidParams::fit_operator`]: the same solvers, starting vectors, restarts,
//!   certified residuals and Nyström arithmetic as a fit on samples) on an operator whose
//!   products and blocks are one Python call each (`op(what, rows, cols, w)`: one pass of the
//!   partitions on the cluster). The result ([`PyOperatorFit`]) becomes the portable model with
//!   the gathered samples and statistics (`to_model`).
use crate::{value_error, BudgetArg, Hyper, PyKsvdModel, SamplesArg, Threads};
use ksvd::{
    AnyKernel, Centering, KernelKind, KernelMatrix, KernelStats, LandmarkWeights, LinalgError, LinearOperator,
    MatrixBlocks, MemoryBudget, NystromError, OperatorFit, Vocabulary,
};
use ndarray::{Array2, ArrayView2, ArrayViewMut2};
use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::prelude::*;
use std::sync::Mutex;

/// The kernel of `params` with its bandwidth given (a distributed fit resolves the bandwidth
/// rule over all partitions first), and the user's callable if it is one.
fn resolved_kernel(py: Python<'_>, params: &Hyper) -> PyResult<AnyKernel> {
    if let Some(f) = params.kernel_fn(py)? {
        return Ok(AnyKernel::from(f));
    }
    let kind = params.kernel_kind()?;
    if kind == Some(KernelKind::Precomputed) {
        return Err(value_error(
            "a distributed fit evaluates its kernel: kernel='precomputed' is not one",
        ));
    }
    let (kernel, rule) = params.kernel(kind)?;
    if rule {
        return Err(value_error(
            "resolve the bandwidth rule over every partition first (bandwidth=None)",
        ));
    }
    kernel
        .map(AnyKernel::from)
        .ok_or_else(|| value_error("the fit needs a kernel"))
}

/// An index array from Python (`None`: all `len`), checked against `len`.
fn indices(what: &str, idx: Option<PyReadonlyArray1<'_, i64>>, len: usize) -> PyResult<Vec<usize>> {
    match idx {
        None => Ok((0..len).collect()),
        Some(v) => v
            .as_array()
            .iter()
            .map(|&i| match usize::try_from(i) {
                Ok(i) if i < len => Ok(i),
                _ => Err(value_error(format!("{what} index {i} is out of range for {len}"))),
            })
            .collect(),
    }
}

/// `(log_normalizers, row_means)` of some rows, each optional.
type RowStats<'py> = (Option<PyReadonlyArray1<'py, f64>>, Option<PyReadonlyArray1<'py, f64>>);

/// Two NumPy vectors (row and column norms).
type VectorPair<'py> = (Bound<'py, PyArray1<f64>>, Bound<'py, PyArray1<f64>>);

/// Rows `k̃(X_p, Z)` of a row partition against every column sample: see the module docs.
#[pyclass(module = "ksvd._ksvd", name = "PartitionRows", frozen)]
pub(crate) struct PyPartitionRows {
    g: KernelMatrix,
    threads: Threads,
}

#[pymethods]
impl PyPartitionRows {
    /// `x`: the partition's row samples; `z`: all column samples; `params`: the estimator's
    /// parameters with the bandwidth resolved (and the precision of the entries and products:
    /// `f32` stores and multiplies the rows in float32, as a local fit on float32 data); `centering`: `(col_means, grand_mean)` of the
    /// whole un-centred `G` (the rows' own means are taken here); `memory_budget`: what this
    /// partition may store (beyond it, products evaluate the kernel block by block); `store =
    /// False`: never stored (the Nyström solver reads blocks only, as on one machine).
    /// `row_stats = (log_normalizers, row_means)`: the rows' SNE normalisers over all of `Z` and
    /// their means (centred fits), known already, so that `z` may be any subset of the columns
    /// (then the rows are `G̃[x, z]` of the whole matrix, never stored).
    #[new]
    #[pyo3(signature = (x, z, *, params, centering = None, memory_budget = None, store = true, row_stats = None, n_jobs = None))]
    fn new<'py>(
        py: Python<'py>,
        x: SamplesArg<'py>,
        z: SamplesArg<'py>,
        params: Hyper,
        centering: Option<(PyReadonlyArray1<'py, f64>, f64)>,
        memory_budget: Option<BudgetArg>,
        store: bool,
        row_stats: Option<RowStats<'py>>,
        n_jobs: Option<i64>,
    ) -> PyResult<Self> {
        let kernel = resolved_kernel(py, &params)?;
        let precision = params.precision()?;
        let (x, z) = (x.to_samples()?, z.to_samples()?);
        let budget = match memory_budget {
            Some(b) => b.budget()?,
            None => MemoryBudget::auto(),
        };
        let means = centering.map(|(c, g)| (c.as_array().to_vec(), g));
        let threads = Threads::new(n_jobs)?;
        if let Some((log_norm, row_means)) = row_stats {
            let stats = KernelStats {
                log_normalizers: log_norm.map(|l| l.as_array().to_vec()),
                centering: match (means, row_means) {
                    (Some((col_means, grand_mean)), Some(r)) => Some(Centering {
                        row_means: r.as_array().to_vec(),
                        col_means,
                        grand_mean,
                    }),
                    (None, None) => None,
                    _ => return Err(value_error("centring needs both the column means and the rows' means")),
                },
            };
            let g = threads
                .run(py, || {
                    KernelMatrix::matrix_free_with_stats(x, z, kernel, stats).map(|g| g.into_precision(precision))
                })
                .map_err(value_error)?;
            return Ok(PyPartitionRows { g, threads });
        }
        let g = threads
            .run(py, || -> Result<KernelMatrix, ksvd::KernelError> {
                let g = if store {
                    KernelMatrix::with_budget_in(x, z, kernel, budget, precision)?
                } else {
                    KernelMatrix::matrix_free_in(x, z, kernel, precision)?
                };
                match means {
                    Some((c, grand)) => g.centered_with(c, grand),
                    None => Ok(g),
                }
            })
            .map_err(value_error)?;
        Ok(PyPartitionRows { g, threads })
    }

    /// Whether the rows of `G` are stored (products are GEMMs) rather than evaluated per product.
    #[getter]
    fn stored(&self) -> bool {
        self.g.is_stored()
    }

    /// `(rows, cols)` of this partition's block of `G`.
    #[getter]
    fn shape(&self) -> (usize, usize) {
        (self.g.nrows(), self.g.ncols())
    }

    /// `G̃_p W` (`rows × b`) for `W` (`M × b`).
    fn apply<'py>(&self, py: Python<'py>, w: PyReadonlyArray2<'py, f64>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let w = w.as_array().to_owned();
        let out = self.threads.run(py, || self.g.apply(w.view())).map_err(value_error)?;
        Ok(out.into_pyarray(py))
    }

    /// `G̃_pᵀ U_p` (`M × b`) for the partition's rows `U_p` (`rows × b`).
    fn apply_t<'py>(&self, py: Python<'py>, u: PyReadonlyArray2<'py, f64>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let u = u.as_array().to_owned();
        let out = self
            .threads
            .run(py, || self.g.apply_transpose(u.view()))
            .map_err(value_error)?;
        Ok(out.into_pyarray(py))
    }

    /// `G̃_p[rows, cols] W` (`rows` local to the partition, `cols` global; `None`: all), or the
    /// block itself when `w` is `None`.
    #[pyo3(signature = (rows, cols, w = None))]
    fn block_mul<'py>(
        &self,
        py: Python<'py>,
        rows: Option<PyReadonlyArray1<'py, i64>>,
        cols: Option<PyReadonlyArray1<'py, i64>>,
        w: Option<PyReadonlyArray2<'py, f64>>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let rows = indices("row", rows, self.g.nrows())?;
        let cols = indices("column", cols, self.g.ncols())?;
        let w = w.map(|w| w.as_array().to_owned());
        let out = self
            .threads
            .run(py, || match &w {
                Some(w) => self.g.block_mul(&rows, &cols, w.view()),
                None => self.g.block(&rows, &cols),
            })
            .map_err(value_error)?;
        Ok(out.into_pyarray(py))
    }

    /// `G̃_p[rows, cols]ᵀ W` (`|cols| × b`) for `W` (`|rows| × b`).
    fn block_t_mul<'py>(
        &self,
        py: Python<'py>,
        rows: Option<PyReadonlyArray1<'py, i64>>,
        cols: Option<PyReadonlyArray1<'py, i64>>,
        w: PyReadonlyArray2<'py, f64>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let rows = indices("row", rows, self.g.nrows())?;
        let cols = indices("column", cols, self.g.ncols())?;
        let w = w.as_array().to_owned();
        let out = self
            .threads
            .run(py, || self.g.block_t_mul(&rows, &cols, w.view()))
            .map_err(value_error)?;
        Ok(out.into_pyarray(py))
    }

    /// `‖G̃_{i,:}‖²` of the partition's rows and its share `Σ_{i∈p} G̃_ij²` of every column's.
    fn sq_norms<'py>(&self, py: Python<'py>) -> PyResult<VectorPair<'py>> {
        let (r, c) = self
            .threads
            .run(py, || -> Result<(Vec<f64>, Vec<f64>), NystromError> {
                Ok((self.g.row_weights()?, self.g.col_weights()?))
            })
            .map_err(value_error)?;
        Ok((r.into_pyarray(py), c.into_pyarray(py)))
    }

    /// `log S_i` of the SNE kernel for the partition's rows (`None` for other kernels).
    fn log_normalizers<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyArray1<f64>>> {
        self.g.log_normalizers().map(|l| l.to_vec().into_pyarray(py))
    }
}

/// `G` as an operator whose products and blocks are calls of the Python callable
/// `op(what, rows, cols, w) -> ndarray` (`what` one of `apply`, `apply_t`, `block`,
/// `block_mul`, `block_t_mul`, `row_weights`, `col_weights`; `rows`/`cols` global index lists or
/// `None` for all). The first exception is kept and raised as it was once the solver returns.
struct CallbackOp {
    shape: (usize, usize),
    f: Py<PyAny>,
    error: Mutex<Option<PyErr>>,
}

impl CallbackOp {
    fn call(
        &self,
        what: &'static str,
        rows: Option<&[usize]>,
        cols: Option<&[usize]>,
        w: Option<ArrayView2<'_, f64>>,
        want: (usize, usize),
    ) -> Result<Array2<f64>, LinalgError> {
        Python::attach(|py| {
            let failed = |reason: String| LinalgError::OperatorFailed {
                operator: "the distributed kernel matrix",
                reason,
            };
            let result = (|| -> PyResult<Array2<f64>> {
                let w = w.map(|w| PyArray2::from_array(py, &w));
                let index = |idx: &[usize]| PyArray1::from_iter(py, idx.iter().map(|&i| i as i64));
                let out = self.f.bind(py).call1((what, rows.map(index), cols.map(index), w))?;
                let a: PyReadonlyArray2<'_, f64> = out.extract()?;
                Ok(a.as_array().to_owned())
            })();
            match result {
                Ok(a) if a.dim() == want => Ok(a),
                Ok(a) => Err(failed(format!(
                    "{what} returned a {:?} array where {want:?} was due",
                    a.dim()
                ))),
                Err(e) => {
                    let reason = format!("{what}: {e}");
                    if let Ok(mut slot) = self.error.lock() {
                        slot.get_or_insert(e);
                    }
                    Err(failed(reason))
                }
            }
        })
    }
}

impl LinearOperator for CallbackOp {
    fn nrows(&self) -> usize {
        self.shape.0
    }
    fn ncols(&self) -> usize {
        self.shape.1
    }
    fn apply_into(&self, x: ArrayView2<'_, f64>, mut out: ArrayViewMut2<'_, f64>) -> Result<(), LinalgError> {
        let r = self.call("apply", None, None, Some(x), (self.shape.0, x.ncols()))?;
        out.assign(&r);
        Ok(())
    }
    fn apply_transpose_into(&self, x: ArrayView2<'_, f64>, mut out: ArrayViewMut2<'_, f64>) -> Result<(), LinalgError> {
        let r = self.call("apply_t", None, None, Some(x), (self.shape.1, x.ncols()))?;
        out.assign(&r);
        Ok(())
    }
    /// All of `G` in one pass (every partition's rows), not one product per 256 columns.
    fn to_dense(&self) -> Result<Array2<f64>, LinalgError> {
        self.call("block", None, None, None, self.shape)
    }
}

impl MatrixBlocks for CallbackOp {
    fn block(&self, rows: &[usize], cols: &[usize]) -> Result<Array2<f64>, LinalgError> {
        self.call("block", Some(rows), Some(cols), None, (rows.len(), cols.len()))
    }
    fn block_mul(&self, rows: &[usize], cols: &[usize], w: ArrayView2<'_, f64>) -> Result<Array2<f64>, LinalgError> {
        self.call("block_mul", Some(rows), Some(cols), Some(w), (rows.len(), w.ncols()))
    }
    fn block_t_mul(&self, rows: &[usize], cols: &[usize], w: ArrayView2<'_, f64>) -> Result<Array2<f64>, LinalgError> {
        self.call("block_t_mul", Some(rows), Some(cols), Some(w), (cols.len(), w.ncols()))
    }
}

impl LandmarkWeights for CallbackOp {
    fn row_weights(&self) -> Result<Vec<f64>, NystromError> {
        Ok(self
            .call("row_weights", None, None, None, (self.shape.0, 1))?
            .into_raw_vec_and_offset()
            .0)
    }
    fn col_weights(&self) -> Result<Vec<f64>, NystromError> {
        Ok(self
            .call("col_weights", None, None, None, (self.shape.1, 1))?
            .into_raw_vec_and_offset()
            .0)
    }
}

/// A fit on a distributed operator (`fit_operator`): the triplets or eigenpairs, the
/// residuals, the landmarks, and `to_model`.
#[pyclass(module = "ksvd._ksvd", name = "OperatorFit", frozen)]
pub(crate) struct PyOperatorFit {
    fit: OperatorFit,
    params: Hyper,
    /// The bandwidth `γ` the operator's entries were evaluated with (None for kernels without one).
    bandwidth: Option<f64>,
}

#[pymethods]
impl PyOperatorFit {
    /// `s` (KSVD) or `λ` (KPCA), descending.
    fn singular_values<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        self.fit.singular_values().clone().into_pyarray(py)
    }
    /// `U` (`N × r`).
    fn u<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<f64>> {
        self.fit.svd().u.clone().into_pyarray(py)
    }
    /// `V` (`M × r`).
    fn v<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<f64>> {
        self.fit.svd().v.clone().into_pyarray(py)
    }
    /// `r × 2`: `‖G v − s u‖/s_1`, `‖Gᵀ u − s v‖/s_1` (None for a KSVD Nyström fit).
    fn residuals<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyArray2<f64>>> {
        self.fit.residuals().map(|r| {
            let mut a = Array2::zeros((r.left.len(), 2));
            a.column_mut(0).assign(&r.left);
            a.column_mut(1).assign(&r.right);
            a.into_pyarray(py)
        })
    }
    /// The bandwidth `γ` of the fit's kernel (`bandwidth=` or converted from `gamma=`; None for
    /// kernels without one).
    #[getter]
    fn bandwidth(&self) -> Option<f64> {
        self.bandwidth
    }
    /// The Nyström landmarks `(I, J)`, or None.
    fn landmarks(&self) -> Option<(Vec<usize>, Vec<usize>)> {
        self.fit.landmarks()
    }

    /// The portable model (`_ksvd.KsvdModel`) from all row samples `x`, all column samples `z`
    /// (None for KPCA), the SNE normalisers `log S_i` of every row (SNE only) and the centring
    /// means `(row_means, col_means, grand_mean)` (centred fits only).
    #[pyo3(signature = (x, z, *, log_normalizers = None, centering = None))]
    fn to_model<'py>(
        &self,
        py: Python<'py>,
        x: SamplesArg<'py>,
        z: Option<SamplesArg<'py>>,
        log_normalizers: Option<PyReadonlyArray1<'py, f64>>,
        centering: Option<(PyReadonlyArray1<'py, f64>, PyReadonlyArray1<'py, f64>, f64)>,
    ) -> PyResult<PyKsvdModel> {
        let x = x.to_samples()?;
        let z = z.map(|z| z.to_samples()).transpose()?;
        let stats = KernelStats {
            log_normalizers: log_normalizers.map(|l| l.as_array().to_vec()),
            centering: centering.map(|(r, c, g)| Centering {
                row_means: r.as_array().to_vec(),
                col_means: c.as_array().to_vec(),
                grand_mean: g,
            }),
        };
        let model = py.detach(|| self.fit.to_model(x, z, stats)).map_err(value_error)?;
        Ok(PyKsvdModel::fitted(py, model, &self.params))
    }
}

/// Fits `estimator` (`"ksvd"` or `"kpca"`) with `params` (bandwidth resolved) on the `shape`
/// operator whose products and blocks `op(what, rows, cols, w)` computes (see [`CallbackOp`]).
/// The solver runs detached; each product attaches to call `op`. An exception raised by `op` is
/// raised again as it was.
#[pyfunction]
#[pyo3(signature = (op, shape, *, estimator, params))]
pub(crate) fn fit_operator(
    py: Python<'_>,
    op: Py<PyAny>,
    shape: (usize, usize),
    estimator: &str,
    params: Hyper,
) -> PyResult<PyOperatorFit> {
    // Checks the kernel (a callable is checked here, and the rule must be resolved).
    let bandwidth = match resolved_kernel(py, &params)? {
        AnyKernel::Builtin(k) => k.gamma(),
        _ => None,
    };
    let kind = params.kernel_kind()?;
    let op = CallbackOp {
        shape,
        f: op,
        error: Mutex::new(None),
    };
    let fit = match estimator {
        "ksvd" => {
            let p = params.ksvd_params(py, kind)?;
            if p.compat().is_some() {
                return Err(value_error(
                    "compat (Algorithm 1) is not distributed: fit ksvd.KSVD on the data matrix",
                ));
            }
            py.detach(|| p.fit_operator(&op))
        }
        "kpca" => {
            if shape.0 != shape.1 {
                return Err(value_error("KPCA's operator is square"));
            }
            let p = params.kpca_params(py, kind)?;
            py.detach(|| p.fit_operator(&op))
        }
        other => return Err(value_error(format!("unknown estimator {other:?}"))),
    };
    if let Some(e) = op.error.lock().ok().and_then(|mut slot| slot.take()) {
        return Err(e);
    }
    let fit = fit.map_err(value_error)?;
    Ok(PyOperatorFit { fit, params, bandwidth })
}

/// `memory_budget=` in bytes (`None`: `MemoryBudget::auto`, a quarter of the available memory
/// or `KSVD_MEMORY_BUDGET`): what a distributed fit shares out among a worker's partitions.
#[pyfunction]
#[pyo3(signature = (budget = None))]
pub(crate) fn memory_budget_bytes(budget: Option<BudgetArg>) -> PyResult<u64> {
    Ok(match budget {
        Some(b) => b.budget()?.as_bytes(),
        None => MemoryBudget::auto().as_bytes(),
    })
}

/// The paper's bandwidth rule `γ = k sqrt(M γ_x)` from the sum and the sum of squares of the
/// entries of an `n × m` data matrix (`ksvd::bandwidth_rule_from_sums`): a distributed fit adds
/// its partitions' sums.
#[pyfunction]
pub(crate) fn bandwidth_rule_from_sums(sum: f64, sumsq: f64, n: f64, m: f64, k: f64) -> f64 {
    ksvd::bandwidth_rule_from_sums(sum, sumsq, n, m, k)
}

/// Adds the classes and the functions to the native module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyPartitionRows>()?;
    m.add_class::<PyOperatorFit>()?;
    m.add_function(wrap_pyfunction!(fit_operator, m)?)?;
    m.add_function(wrap_pyfunction!(memory_budget_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(bandwidth_rule_from_sums, m)?)?;
    // The kernels with a bandwidth (the rule's, `gamma`'s), by their canonical names.
    let with_bandwidth: Vec<&str> = KernelKind::ALL
        .iter()
        .filter(|k| k.has_bandwidth())
        .map(|k| k.name())
        .collect();
    m.add("BANDWIDTH_KERNELS", pyo3::types::PyTuple::new(m.py(), with_bandwidth)?)?;
    Ok(())
}
