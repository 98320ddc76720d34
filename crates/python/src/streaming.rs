//! Bindings of the out-of-core passes' partial states (`ksvd_streaming`: scan, landmarks,
//! train, score): the building blocks `ksvd.dask` schedules. Each state is a frozen Python object
//! with a functional `merge` (returns a new state), pickled through its document in the
//! workspace's envelope ([`ksvd_streaming::PartialState::to_bytes`]: format
//! `ksvd-streaming-<kind>`, versioned and checksummed); another format or version or corrupt
//! bytes raise `ValueError` naming the problem. Every pass runs with the GIL released.
use ksvd::CsrMatrix;
use ksvd::Vocabulary;
use ksvd_streaming::{
    Bandwidth, Embedding, FittedKpca, FittedKsvd, LandmarkPlan, LandmarksPartial, LibsvmSource, Method, PartRows,
    PartialModel, PartialState, RowSelection, ScanPartial, ScorePartial, StreamingError, StreamingParams, TrainPartial,
    TrainedKpca, TrainedKsvd, TrainedModel, ValidStreamingParams,
};
use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};

use crate::{value_error, SamplesArg};
use ksvd_datasets::write_atomic;
use std::path::PathBuf;

fn source(path: &str, n_features: Option<usize>, zero_based: bool) -> LibsvmSource {
    let s = LibsvmSource::new(path).zero_based(zero_based);
    match n_features {
        Some(m) => s.n_features(m),
        None => s,
    }
}

/// Pickle support shared by every state: `(Type.from_bytes, (bytes,))`.
fn reduce<'py, T: pyo3::type_object::PyTypeInfo>(py: Python<'py>, bytes: Vec<u8>) -> PyResult<Bound<'py, PyTuple>> {
    let ctor = py.get_type::<T>().getattr("from_bytes")?;
    let args = (PyBytes::new(py, &bytes),).into_pyobject(py)?;
    PyTuple::new(py, [ctor.into_any(), args.into_any()])
}

/// Declares a frozen state class with `to_bytes`, `from_bytes`, pickling and the given methods.
macro_rules! state_class {
    ($py:ident, $rust:ty, $name:literal, $doc:literal, merge, { $($methods:tt)* }) => {
        state_class!($py, $rust, $name, $doc, {
            /// The merge with the state of a disjoint set of files (a new state).
            fn merge(&self, py: Python<'_>, other: &$py) -> PyResult<Self> {
                let mut inner = self.inner.clone();
                run(py, || inner.merge(&other.inner))?;
                Ok($py { inner })
            }
            $($methods)*
        });
    };
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

/// Validated parameters of the streaming fit (`ksvd_streaming::StreamingParams`).
#[pyclass(module = "ksvd._ksvd", name = "StreamParams", frozen)]
pub(crate) struct PyStreamParams {
    params: ValidStreamingParams,
    args: (usize, usize, usize, Option<f64>, f64, usize, u64),
}

#[pymethods]
impl PyStreamParams {
    /// Rank `r`, `n` landmark rows, `m` landmark columns, a fixed bandwidth `γ` or (`None`) the
    /// median heuristic times `bandwidth_factor`, rows per chunk, seed.
    #[new]
    #[pyo3(signature = (rank, row_landmarks, col_landmarks, bandwidth, bandwidth_factor, chunk_rows, seed))]
    fn new(
        rank: usize,
        row_landmarks: usize,
        col_landmarks: usize,
        bandwidth: Option<f64>,
        bandwidth_factor: f64,
        chunk_rows: usize,
        seed: u64,
    ) -> PyResult<Self> {
        let bw = match bandwidth {
            Some(g) => Bandwidth::Fixed(g),
            None => Bandwidth::Median(bandwidth_factor),
        };
        let params = StreamingParams::new(rank, row_landmarks)
            .col_landmarks(col_landmarks)
            .bandwidth(bw)
            .chunk_rows(chunk_rows)
            .seed(seed)
            .check()
            .map_err(value_error)?;
        Ok(PyStreamParams {
            params,
            args: (
                rank,
                row_landmarks,
                col_landmarks,
                bandwidth,
                bandwidth_factor,
                chunk_rows,
                seed,
            ),
        })
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let py = slf.py();
        let args = slf.get().args.into_pyobject(py)?;
        PyTuple::new(py, [py.get_type::<PyStreamParams>().into_any(), args.into_any()])
    }
}

/// An in-memory part from Python, the tuple `(part, x, y)`: part number `part` (its position in
/// the list of parts: its rows follow those of the parts before it), the dense block `x`
/// (`rows x features`, e.g. a row chunk of a `dask.array`) and its labels `y`.
#[derive(FromPyObject)]
struct BlockArg<'py>(usize, PyReadonlyArray2<'py, f64>, PyReadonlyArray1<'py, f64>);

/// A [`BlockArg`] converted at the edge.
struct Block {
    part: usize,
    x: CsrMatrix,
    labels: Vec<f64>,
}

impl BlockArg<'_> {
    fn convert(&self) -> PyResult<Block> {
        Ok(Block {
            part: self.0,
            x: CsrMatrix::from_dense(self.1.as_array()).map_err(value_error)?,
            labels: self.2.as_array().to_vec(),
        })
    }
}

impl Block {
    fn rows(&self) -> PartRows<'_> {
        PartRows::Memory {
            x: &self.x,
            labels: &self.labels,
        }
    }
}

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

/// A method by name (`ksvd_streaming::Method`'s vocabulary).
fn parse_method(method: &str) -> PyResult<Method> {
    method.parse().map_err(value_error)
}

fn run<T: Send>(py: Python<'_>, f: impl FnOnce() -> Result<T, StreamingError> + Send) -> PyResult<T> {
    py.detach(f).map_err(value_error)
}

state_class!(
    PyScanPartial,
    ScanPartial,
    "ScanPartial",
    "Pass 1: row counts of every part, labels and column norms.",
    merge,
    {
        /// Scans training file number `file` (its position in the global list) at `path`.
        #[staticmethod]
        #[pyo3(signature = (params, file, path, n_features=None, zero_based=false))]
        fn scan_file(
            py: Python<'_>,
            params: &PyStreamParams,
            file: usize,
            path: &str,
            n_features: Option<usize>,
            zero_based: bool,
        ) -> PyResult<Self> {
            let src = source(path, n_features, zero_based);
            let inner = run(py, || ScanPartial::scan_file(&params.params, file, &src))?;
            Ok(PyScanPartial { inner })
        }
        /// Scans an in-memory part of the training data, `block = (part, x, y)`: the dense rows
        /// `x` (`rows x features`) of part number `part` with labels `y`.
        #[staticmethod]
        fn scan_block(py: Python<'_>, params: &PyStreamParams, block: BlockArg<'_>) -> PyResult<Self> {
            let b = block.convert()?;
            let inner = run(py, || ScanPartial::scan_part(&params.params, b.part, b.rows()))?;
            Ok(PyScanPartial { inner })
        }
        /// Rows scanned.
        #[getter]
        fn rows(&self) -> usize {
            self.inner.rows()
        }
        /// Feature columns `M`.
        #[getter]
        fn features(&self) -> usize {
            self.inner.features()
        }
    }
);

state_class!(
    PyLandmarkPlan,
    LandmarkPlan,
    "LandmarkPlan",
    "The driver's plan after pass 1 for one method: part offsets, N, M, and for KSVD the landmark columns and the projection.",
    {
        /// The plan of `method` (`"ksvd"` or `"kpca"`) from the merged scan of every training part.
        #[new]
        #[pyo3(signature = (scan, params, method="ksvd"))]
        fn new(py: Python<'_>, scan: &PyScanPartial, params: &PyStreamParams, method: &str) -> PyResult<Self> {
            let method = parse_method(method)?;
            let inner = run(py, || LandmarkPlan::new(&scan.inner, &params.params, method))?;
            Ok(PyLandmarkPlan { inner })
        }
        /// Pass 2 over training file `file`: its landmark rows (key sketch) and, for KSVD, its
        /// partial landmark columns.
        #[pyo3(signature = (file, path, zero_based=false))]
        fn landmarks_file(
            &self,
            py: Python<'_>,
            file: usize,
            path: &str,
            zero_based: bool,
        ) -> PyResult<PyLandmarksPartial> {
            let src = source(path, None, zero_based);
            let inner = run(py, || LandmarksPartial::from_file(&self.inner, file, &src))?;
            Ok(PyLandmarksPartial { inner })
        }
        /// Pass 2 over an in-memory training block (as `ScanPartial.scan_block`).
        fn landmarks_block(&self, py: Python<'_>, block: BlockArg<'_>) -> PyResult<PyLandmarksPartial> {
            let b = block.convert()?;
            let inner = run(py, || LandmarksPartial::from_part(&self.inner, b.part, b.rows()))?;
            Ok(PyLandmarksPartial { inner })
        }
        /// The KSVD landmark solve on the merged pass-2 state of every training part.
        fn solve(&self, py: Python<'_>, landmarks: &PyLandmarksPartial) -> PyResult<PyFittedKsvd> {
            let inner = run(py, || self.inner.solve_ksvd(&landmarks.inner))?;
            Ok(PyFittedKsvd { inner })
        }
        /// The KPCA landmark solve (symmetric Nystrom on the landmark rows of the merged pass-2 state).
        fn solve_kpca(&self, py: Python<'_>, landmarks: &PyLandmarksPartial) -> PyResult<PyFittedKpca> {
            let inner = run(py, || self.inner.solve_kpca(&landmarks.inner))?;
            Ok(PyFittedKpca { inner })
        }
        /// `"ksvd"` or `"kpca"`.
        #[getter]
        fn method(&self) -> &'static str {
            self.inner.method().as_str()
        }
        /// Landmark columns (KSVD; empty for KPCA).
        #[getter]
        fn col_landmarks(&self) -> Vec<usize> {
            self.inner.col_landmarks().to_vec()
        }
        /// `(N, M)`.
        #[getter]
        fn shape(&self) -> (usize, usize) {
            (self.inner.summary().rows, self.inner.summary().features)
        }
    }
);

state_class!(
    PyLandmarksPartial,
    LandmarksPartial,
    "LandmarksPartial",
    "Pass 2: the landmark rows (bottom-n key sketch, keyed by global row id) and, for KSVD, the partial landmark columns P (M x m, merged by addition; rows mapped, M > N: the rows of X[:, J], merged by concatenation).",
    merge,
    {
        /// Global ids of the landmark rows kept so far (increasing).
        #[getter]
        fn row_landmarks(&self) -> Vec<usize> {
            self.inner.row_landmarks()
        }
        /// Whether the state holds landmark columns (KSVD; not KPCA).
        #[getter]
        fn has_columns(&self) -> bool {
            self.inner.has_columns()
        }
        /// Stored entries of the gathered `X[:, J]` (rows mapped; 0 otherwise).
        #[getter]
        fn gathered_nnz(&self) -> usize {
            self.inner.gathered_nnz()
        }
    }
);

/// A state class of a fitted model with its spectrum (under the name `$spectrum`), rank and `γ`.
macro_rules! model_class {
    ($py:ident, $rust:ty, $name:literal, $doc:literal, $spectrum:ident, $sdoc:literal, { $($methods:tt)* }) => {
        state_class!($py, $rust, $name, $doc, {
            $($methods)*
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
        });
    };
}

/// Declares the fitted and trained classes of one model (KSVD, KPCA): the same passes 3 and 4
/// (`ksvd_streaming::Fitted`, `Trained`), the spectrum under the model's own name.
macro_rules! model_classes {
    (
        $fpy:ident, $fitted:ty, $fname:literal, $fdoc:literal,
        $tpy:ident, $trained:ty, $tname:literal, $tdoc:literal,
        $spectrum:ident, $sdoc:literal
    ) => {
        model_class!($fpy, $fitted, $fname, $fdoc, $spectrum, $sdoc, {
            /// Pass 3 over training file `file`: column norms and ridge statistics of its embeddings.
            #[pyo3(signature = (file, path, zero_based=false, positive_label=None))]
            fn train_file(
                &self,
                py: Python<'_>,
                file: usize,
                path: &str,
                zero_based: bool,
                positive_label: Option<f64>,
            ) -> PyResult<PyTrainPartial> {
                let src = source(path, None, zero_based);
                let inner = run(py, || {
                    self.inner
                        .train_file(file, &src, self.inner.label_rule(positive_label)?)
                })?;
                Ok(PyTrainPartial { inner })
            }
            /// Pass 3 over an in-memory training block (as `ScanPartial.scan_block`).
            #[pyo3(signature = (block, positive_label=None))]
            fn train_block(
                &self,
                py: Python<'_>,
                block: BlockArg<'_>,
                positive_label: Option<f64>,
            ) -> PyResult<PyTrainPartial> {
                let b = block.convert()?;
                let inner = run(py, || {
                    self.inner
                        .train_part(b.part, b.rows(), self.inner.label_rule(positive_label)?)
                })?;
                Ok(PyTrainPartial { inner })
            }
            /// The classifier solve (ridge `λ`) on the merged pass-3 state of every training file.
            #[pyo3(signature = (train, ridge, positive_label=None))]
            fn finish(
                &self,
                py: Python<'_>,
                train: &PyTrainPartial,
                ridge: f64,
                positive_label: Option<f64>,
            ) -> PyResult<$tpy> {
                let inner = run(py, || {
                    self.inner
                        .finish(&train.inner, ridge, self.inner.label_rule(positive_label)?)
                })?;
                Ok($tpy { inner })
            }
        });

        model_class!($tpy, $trained, $tname, $tdoc, $spectrum, $sdoc, {
            /// Pass 4 over test file `file`: its scores sorted per class and (`keep_embeddings`) its
            /// normalised embeddings (`rows x r`, else `None`).
            #[pyo3(signature = (file, path, zero_based=false, keep_embeddings=false))]
            fn score_file<'py>(
                &self,
                py: Python<'py>,
                file: usize,
                path: &str,
                zero_based: bool,
                keep_embeddings: bool,
            ) -> PyResult<(PyScorePartial, Option<Bound<'py, PyArray2<f64>>>)> {
                let src = source(path, None, zero_based);
                let (inner, emb) = run(py, || self.inner.score_file(file, &src, keep_embeddings))?;
                Ok((PyScorePartial { inner }, emb.map(|e| e.into_pyarray(py))))
            }
            /// Pass 4 over an in-memory test block (as `ScanPartial.scan_block`): as `score_file`.
            #[pyo3(signature = (block, keep_embeddings=false))]
            fn score_block<'py>(
                &self,
                py: Python<'py>,
                block: BlockArg<'py>,
                keep_embeddings: bool,
            ) -> PyResult<(PyScorePartial, Option<Bound<'py, PyArray2<f64>>>)> {
                let b = block.convert()?;
                let (inner, emb) = run(py, || self.inner.score_part(b.part, b.rows(), keep_embeddings))?;
                Ok((PyScorePartial { inner }, emb.map(|e| e.into_pyarray(py))))
            }
            /// Normalised embeddings of every row of `path` (`rows x r`).
            #[pyo3(signature = (path, zero_based=false))]
            fn embed_file<'py>(
                &self,
                py: Python<'py>,
                path: &str,
                zero_based: bool,
            ) -> PyResult<Bound<'py, PyArray2<f64>>> {
                let src = source(path, None, zero_based);
                Ok(run(py, || self.inner.embed_file(&src))?.into_pyarray(py))
            }
            /// Normalised embeddings of the rows of `x` (dense `float64` rows or a CSR triple,
            /// `rows x M`): what `embed_file` gives for the same rows.
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

model_classes!(
    PyFittedKsvd,
    FittedKsvd,
    "FittedKsvd",
    "The KSVD landmark solve (asymmetric Nystrom), broadcast to pass 3.",
    PyTrainedKsvd,
    TrainedKsvd,
    "TrainedKsvd",
    "Normalised KSVD embeddings and the linear classifier on them.",
    singular_values,
    "Approximate singular values, descending."
);

model_classes!(
    PyFittedKpca,
    FittedKpca,
    "FittedKpca",
    "The KPCA landmark solve (symmetric Nystrom on the landmark rows), broadcast to pass 3.",
    PyTrainedKpca,
    TrainedKpca,
    "TrainedKpca",
    "Normalised KPCA embeddings and the linear classifier on them.",
    eigenvalues,
    "Top eigenvalues of K_LL (the landmark rows' kernel matrix), descending."
);

state_class!(
    PyTrainPartial,
    TrainPartial,
    "TrainPartial",
    "Pass 3: column norms and (r+1)^2 ridge statistics, merged by addition.",
    merge,
    {
        /// Training rows accumulated.
        #[getter]
        fn rows(&self) -> usize {
            self.inner.rows()
        }
    }
);

state_class!(
    PyScorePartial,
    ScorePartial,
    "ScorePartial",
    "Pass 4: test scores sorted per class; merged exactly.",
    merge,
    {
        /// AUROC of the merged scores (ties count one half).
        fn auroc(&self, py: Python<'_>) -> PyResult<f64> {
            run(py, || self.inner.auroc())
        }
        /// Test rows scored.
        #[getter]
        fn rows(&self) -> usize {
            self.inner.rows()
        }
    }
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
    m.add_class::<PyStreamParams>()?;
    m.add_class::<PyScanPartial>()?;
    m.add_class::<PyLandmarkPlan>()?;
    m.add_class::<PyLandmarksPartial>()?;
    m.add_class::<PyFittedKsvd>()?;
    m.add_class::<PyTrainPartial>()?;
    m.add_class::<PyTrainedKsvd>()?;
    m.add_class::<PyFittedKpca>()?;
    m.add_class::<PyTrainedKpca>()?;
    m.add_class::<PyScorePartial>()?;
    m.add_function(wrap_pyfunction!(split_test_rows, m)?)?;
    m.add("METHODS", PyTuple::new(m.py(), Method::canonical_names())?)?;
    Ok(())
}
