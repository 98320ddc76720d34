//! Bindings of `ksvd_streaming` that the Python package uses: the trained models of
//! `ksvd-stream` (`TrainedKsvd`, `TrainedKpca`: what `ksvd.load` reads from its model files,
//! wrapped as `ksvd.StreamingModel`) and the pieces of the large-scale pipeline that
//! `ksvd.dask.fit` runs with the estimators (the a2 projection, the landmarks, the bandwidth
//! median, the ridge classifier, AUROC). A model is a frozen Python object pickled through its
//! document in the workspace's envelope (versioned and checksummed); another format or version or
//! corrupt bytes raise `ValueError` naming the problem. Work runs with the GIL released.
use ksvd::CsrMatrix;
use ksvd::Vocabulary;
use ksvd_streaming::{
    mapped_columns, sketch_landmarks, uniform_cols, Bandwidth, Embedding, Method, PartialModel, PartialState,
    ProjectionScaling, RidgeAccumulator, RowSelection, SparseProjection, StreamingError, TrainedKpca, TrainedKsvd,
    TrainedModel,
};
use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};

use crate::{value_error, SamplesArg};
use ksvd_datasets::write_atomic;
use std::path::PathBuf;

/// New rows for a streaming model's embedding: CSR, with the model's `m` features.
fn model_rows(x: &SamplesArg<'_>, m: usize) -> PyResult<CsrMatrix> {
    let x = x.to_csr()?;
    if x.ncols() != m {
        return Err(value_error(format!(
            "the rows have {} features, the model {m}",
            x.ncols()
        )));
    }
    Ok(x)
}

fn run<T: Send>(py: Python<'_>, f: impl FnOnce() -> Result<T, StreamingError> + Send) -> PyResult<T> {
    py.detach(f).map_err(value_error)
}

/// Pickle support shared by every state: `(Type.from_bytes, (bytes,))`.
fn reduce<'py, T: pyo3::type_object::PyTypeInfo>(py: Python<'py>, bytes: Vec<u8>) -> PyResult<Bound<'py, PyTuple>> {
    let ctor = py.get_type::<T>().getattr("from_bytes")?;
    let args = (PyBytes::new(py, &bytes),).into_pyobject(py)?;
    PyTuple::new(py, [ctor.into_any(), args.into_any()])
}

/// Declares a frozen state class with `to_bytes`, `from_bytes`, pickling and the given methods.
macro_rules! state_class {
    ($py:ident, $rust:ty, $name:literal, $doc:literal, { $($methods:tt)* }) => {
        #[doc = $doc]
        #[pyclass(module = "ksvd._ksvd", name = $name, frozen)]
        pub(crate) struct $py {
            inner: $rust,
        }

        #[pymethods]
        impl $py {
            /// The state as one document of the workspace's envelope (versioned, checksummed JSON).
            fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
                let bytes = py.detach(|| self.inner.to_bytes()).map_err(value_error)?;
                Ok(PyBytes::new(py, &bytes))
            }

            /// Reads `to_bytes`' output, checking format, version, checksum and invariants.
            #[staticmethod]
            pub(crate) fn from_bytes(py: Python<'_>, bytes: &[u8]) -> PyResult<Self> {
                let inner = py.detach(|| <$rust>::from_bytes(bytes)).map_err(value_error)?;
                Ok($py { inner })
            }

            /// Writes `to_bytes` to `path`, atomically (`ksvd_datasets::write_atomic`).
            fn save(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
                py.detach(|| -> Result<(), String> {
                    let bytes = self.inner.to_bytes().map_err(|e| e.to_string())?;
                    write_atomic(&path, &bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))
                })
                .map_err(value_error)
            }

            fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
                let py = slf.py();
                let inner = &slf.get().inner;
                let bytes = py.detach(|| inner.to_bytes()).map_err(value_error)?;
                reduce::<$py>(py, bytes)
            }

            $($methods)*
        }
    };
}

/// A trained model's class: its spectrum (under the name `$spectrum`), rank, `γ`, landmark rows,
/// embeddings of new rows and the classifier on them.
macro_rules! model_class {
    ($py:ident, $rust:ty, $name:literal, $doc:literal, $spectrum:ident, $sdoc:literal) => {
        state_class!($py, $rust, $name, $doc, {
            #[doc = $sdoc]
            fn $spectrum<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
                self.inner.model().spectrum().to_owned().into_pyarray(py)
            }
            /// The embedding dimension `r` actually used.
            #[getter]
            fn rank(&self) -> usize {
                self.inner.model().rank()
            }
            /// The bandwidth `γ`.
            #[getter]
            fn gamma(&self) -> f64 {
                self.inner.model().bandwidth()
            }
            /// Global ids of the landmark rows (increasing).
            #[getter]
            fn row_landmarks(&self) -> Vec<usize> {
                self.inner.model().landmark_rows().to_vec()
            }
            /// Number of feature columns `M` the model was fitted with.
            #[getter]
            fn n_features(&self) -> usize {
                self.inner.model().n_features()
            }
            /// Normalised embeddings of the rows of `x` (dense `float64` rows or a CSR triple,
            /// `rows x M`): what `ksvd-stream embed` gives for the same rows.
            fn embed<'py>(&self, py: Python<'py>, x: SamplesArg<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
                let x = model_rows(&x, self.inner.model().n_features())?;
                Ok(run(py, || self.inner.model().embed(&x))?.into_pyarray(py))
            }
            /// The classifier's scores of the rows of `x` (as `embed`; larger: the positive label).
            fn decision_function<'py>(
                &self,
                py: Python<'py>,
                x: SamplesArg<'py>,
            ) -> PyResult<Bound<'py, PyArray1<f64>>> {
                let x = model_rows(&x, self.inner.model().n_features())?;
                let scores = run(py, || {
                    let e = self.inner.model().embed(&x)?;
                    Ok(self.inner.classifier().decision(e.view()))
                })?;
                Ok(scores.into_pyarray(py))
            }
            /// Classifier weights on normalised embeddings.
            fn weights<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
                self.inner.classifier().weights.clone().into_pyarray(py)
            }
            /// Classifier intercept.
            #[getter]
            fn bias(&self) -> f64 {
                self.inner.classifier().bias
            }
        });
    };
}

model_class!(
    PyTrainedKsvd,
    TrainedKsvd,
    "TrainedKsvd",
    "A trained model of ksvd-stream's KSVD: normalised embeddings and the linear classifier on them.",
    singular_values,
    "Approximate singular values, descending."
);

model_class!(
    PyTrainedKpca,
    TrainedKpca,
    "TrainedKpca",
    "A trained model of ksvd-stream's KPCA: normalised embeddings and the linear classifier on them.",
    eigenvalues,
    "Top eigenvalues of K_LL (the landmark rows' kernel matrix), descending."
);

/// The test side of the runner's seeded train/test split of a file of `rows` rows
/// (`ksvd_streaming::RowSelection::SplitTest`): `mask[t]` is true when file row `t` is held out.
#[pyfunction]
fn split_test_rows<'py>(
    py: Python<'py>,
    rows: usize,
    test_fraction: f64,
    seed: u64,
) -> PyResult<Bound<'py, PyArray1<bool>>> {
    let sel = RowSelection::SplitTest { test_fraction, seed };
    sel.validate().map_err(value_error)?;
    Ok((0..rows).map(|t| sel.keeps(t)).collect::<Vec<bool>>().into_pyarray(py))
}

/// The a2 compatibility's very sparse random projection (`ksvd_streaming::SparseProjection`,
/// unit-variance-preserving scaling, density `1/sqrt(input_dim)`), `R` of shape
/// `input_dim x output_dim`, every row generated from `(seed, row)`: `ksvd.dask.fit` maps the
/// rows (`X R`, `M > N`) or the landmark columns (`R^T X[:, J]`, `N > M`) with it, partition by
/// partition. Pickled as its three numbers.
#[pyclass(module = "ksvd._ksvd", name = "SparseProjection", frozen)]
struct PySparseProjection {
    inner: SparseProjection,
}

#[pymethods]
impl PySparseProjection {
    #[new]
    fn new(input_dim: usize, output_dim: usize, seed: u64) -> PyResult<Self> {
        let inner = SparseProjection::new(input_dim, output_dim, None, ProjectionScaling::NormPreserving, seed)
            .map_err(value_error)?;
        Ok(PySparseProjection { inner })
    }

    fn __getnewargs__(&self) -> (usize, usize, u64) {
        (self.inner.input_dim(), self.inner.output_dim(), self.inner.seed())
    }

    /// `(input_dim, output_dim)`.
    #[getter]
    fn shape(&self) -> (usize, usize) {
        (self.inner.input_dim(), self.inner.output_dim())
    }

    /// `X R` for rows `x` (dense or CSR, `input_dim` features): dense `rows x output_dim`.
    fn map_rows<'py>(&self, py: Python<'py>, x: SamplesArg<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let x = x.to_csr()?;
        Ok(run(py, || self.inner.project_rows(&x))?.into_pyarray(py))
    }

    /// One partition's share `sum_t R[offset + t, :]^T X[t, cols]` of the mapped landmark
    /// columns (`output_dim x len(cols)`; `x` has `output_dim` features and global rows
    /// `offset..`): summed over the partitions, `R^T X[:, cols]`.
    fn map_columns<'py>(
        &self,
        py: Python<'py>,
        offset: usize,
        x: SamplesArg<'py>,
        cols: Vec<usize>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let x = x.to_csr()?;
        Ok(run(py, || mapped_columns(&self.inner, offset, &x, &cols))?.into_pyarray(py))
    }
}

/// The streaming fits' landmarks from the seed and the shape alone: the key sketch's `n` rows of
/// `rows` (`ksvd_streaming::sketch_landmarks`) and `m` uniform columns of `features`
/// (`ksvd_streaming::uniform_cols`), both increasing: `ksvd.dask.fit` chooses what `ksvd-stream`
/// chooses for the same rows.
#[pyfunction]
fn stream_landmarks<'py>(
    py: Python<'py>,
    seed: u64,
    shape: (usize, usize),
    n: usize,
    m: usize,
) -> (Bound<'py, PyArray1<usize>>, Bound<'py, PyArray1<usize>>) {
    let (rows, cols) = py.detach(|| (sketch_landmarks(seed, shape.0, n), uniform_cols(seed, shape.1, m)));
    (rows.into_pyarray(py), cols.into_pyarray(py))
}

/// The large-scale pipeline's classifier (`ksvd_streaming::RidgeAccumulator`): ridge regression
/// on `targets` (`+-1`) with standardised `features` and an unpenalised intercept, `ridge` the
/// penalty; returns the decision function `features @ weights + bias` as `(weights, bias)`.
#[pyfunction]
fn ridge_classifier<'py>(
    py: Python<'py>,
    features: PyReadonlyArray2<'py, f64>,
    targets: PyReadonlyArray1<'py, f64>,
    ridge: f64,
) -> PyResult<(Bound<'py, PyArray1<f64>>, f64)> {
    let f = features.as_array();
    let y = targets.as_array().to_vec();
    let c = run(py, || {
        let mut acc = RidgeAccumulator::new(f.ncols());
        acc.add(f, &y)?;
        acc.solve(ridge)
    })?;
    Ok((c.weights.into_pyarray(py), c.bias))
}

/// AUROC of `scores` for the classes `positive` (ties count one half): `ksvd_metrics::auroc`.
#[pyfunction]
#[pyo3(name = "auroc")]
fn auroc_py(scores: PyReadonlyArray1<'_, f64>, positive: PyReadonlyArray1<'_, bool>) -> PyResult<f64> {
    let (s, p) = (scores.as_array().to_vec(), positive.as_array().to_vec());
    ksvd_metrics::auroc(&s, &p).map_err(value_error)
}

/// The streaming fits' median heuristic (`ksvd_streaming::Bandwidth::Median(factor)`) on the
/// landmark pairs: `gamma = factor * sqrt(median ||x_i - z_j||^2)` over all pairs of rows of `x`
/// and `z` (dense or CSR), or, with `distinct`, over the pairs `i < j` (`z` is then `x`; KPCA).
/// Distances by `ksvd_kernels`'s one identity, the median by its one convention (exact zeros
/// dropped).
#[pyfunction]
#[pyo3(signature = (x, z, factor, distinct = false))]
fn landmark_bandwidth<'py>(
    py: Python<'py>,
    x: SamplesArg<'py>,
    z: SamplesArg<'py>,
    factor: f64,
    distinct: bool,
) -> PyResult<f64> {
    let x = x.to_csr()?;
    let z = z.to_csr()?;
    py.detach(|| -> Result<f64, String> {
        let p = x.matmul_sparse(&z.transpose()).map_err(|e| e.to_string())?.to_dense();
        let (nx, nz) = (x.row_sq_norms(), z.row_sq_norms());
        Bandwidth::Median(factor)
            .gamma_from_inner_products(p.view(), &nx, &nz, distinct)
            .map_err(|e| e.to_string())
    })
    .map_err(value_error)
}

/// A trained streaming model of either method as its Python class (`TrainedKsvd`, `TrainedKpca`).
pub(crate) fn trained(py: Python<'_>, model: TrainedModel) -> PyResult<Bound<'_, PyAny>> {
    match model {
        TrainedModel::Ksvd(inner) => Ok(Bound::new(py, PyTrainedKsvd { inner: *inner })?.into_any()),
        TrainedModel::Kpca(inner) => Ok(Bound::new(py, PyTrainedKpca { inner: *inner })?.into_any()),
        other => Err(value_error(format!(
            "a trained {} model is not supported by this build of the Python package",
            other.method()
        ))),
    }
}

/// Registers the classes in the native module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyTrainedKsvd>()?;
    m.add_class::<PyTrainedKpca>()?;
    m.add_class::<PySparseProjection>()?;
    m.add_function(wrap_pyfunction!(split_test_rows, m)?)?;
    m.add_function(wrap_pyfunction!(ridge_classifier, m)?)?;
    m.add_function(wrap_pyfunction!(stream_landmarks, m)?)?;
    m.add_function(wrap_pyfunction!(auroc_py, m)?)?;
    m.add_function(wrap_pyfunction!(landmark_bandwidth, m)?)?;
    m.add("METHODS", PyTuple::new(m.py(), Method::canonical_names())?)?;
    Ok(())
}
