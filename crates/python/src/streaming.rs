//! Bindings of the out-of-core passes' partial states (`ksvd_streaming::partial`): the building
//! blocks `ksvd.dask` schedules. Each state is a frozen Python object with a functional `merge`
//! (returns a new state), pickled through its versioned serde bytes
//! ([`ksvd_streaming::PartialState::to_bytes`]); a wrong kind or version or corrupt bytes raise
//! `ValueError` naming the problem. Every pass runs with the GIL released.
use ksvd_linalg::CsrMatrix;
use ksvd_streaming::{
    Bandwidth, ColumnsPartial, Embedding, FittedKpca, FittedKsvd, LandmarkPlan, LibsvmSource, PartRows, PartialModel,
    PartialState, RowSelection, ScanPartial, ScorePartial, StreamingError, StreamingParams, SyntheticPart,
    SyntheticSpec, TrainPartial, TrainedKpca, TrainedKsvd, ValidStreamingParams,
};
use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};

use crate::value_error;

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
            /// The versioned serde form (one JSON document).
            fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
                let bytes = py.detach(|| self.inner.to_bytes()).map_err(value_error)?;
                Ok(PyBytes::new(py, &bytes))
            }

            /// Reads `to_bytes`' output, checking format, kind, version and invariants.
            #[staticmethod]
            fn from_bytes(py: Python<'_>, bytes: &[u8]) -> PyResult<Self> {
                let inner = py.detach(|| <$rust>::from_bytes(bytes)).map_err(value_error)?;
                Ok($py { inner })
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

/// An in-memory partition from Python, the tuple `(part, first_row, x, y)`: part number `part`,
/// the dense block `x` (`rows x features`, e.g. a row chunk of a `dask.array`), its labels `y`
/// and the global row id `first_row` of its first row (the rows of the parts before it).
#[derive(FromPyObject)]
struct BlockArg<'py>(usize, usize, PyReadonlyArray2<'py, f64>, PyReadonlyArray1<'py, f64>);

/// A [`BlockArg`] converted at the edge.
struct Block {
    part: usize,
    first_row: usize,
    x: CsrMatrix,
    labels: Vec<f64>,
}

impl BlockArg<'_> {
    fn convert(&self) -> PyResult<Block> {
        Ok(Block {
            part: self.0,
            first_row: self.1,
            x: CsrMatrix::from_dense(self.2.as_array()).map_err(value_error)?,
            labels: self.3.as_array().to_vec(),
        })
    }
}

impl Block {
    fn rows(&self) -> PartRows<'_> {
        PartRows::Memory {
            x: &self.x,
            labels: &self.labels,
            first_row: self.first_row,
        }
    }
}

fn run<T: Send>(py: Python<'_>, f: impl FnOnce() -> Result<T, StreamingError> + Send) -> PyResult<T> {
    py.detach(f).map_err(value_error)
}

state_class!(
    PyScanPartial,
    ScanPartial,
    "ScanPartial",
    "Pass 1: counts, labels, column norms and the bottom-n key sketch of landmark rows.",
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
        /// Scans an in-memory part of the training data, `block = (part, first_row, x, y)`:
        /// the dense rows `x` (`rows x features`) of part number `part` with labels `y`, the
        /// first with the global row id `first_row` (the rows of the parts before it).
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
    "The driver's plan after pass 1: row offsets, landmark rows and columns, the projection.",
    {
        /// The plan from the merged scan of every training file.
        #[new]
        fn new(py: Python<'_>, scan: &PyScanPartial, params: &PyStreamParams) -> PyResult<Self> {
            let inner = run(py, || LandmarkPlan::new(&scan.inner, &params.params))?;
            Ok(PyLandmarkPlan { inner })
        }
        /// Pass 2 over training file `file`: its partial landmark columns `P_f`.
        #[pyo3(signature = (file, path, zero_based=false))]
        fn columns_file(
            &self,
            py: Python<'_>,
            file: usize,
            path: &str,
            zero_based: bool,
        ) -> PyResult<PyColumnsPartial> {
            let src = source(path, None, zero_based);
            let inner = run(py, || ColumnsPartial::from_file(&self.inner, file, &src))?;
            Ok(PyColumnsPartial { inner })
        }
        /// Pass 2 over an in-memory training block (as `ScanPartial.scan_block`).
        fn columns_block(&self, py: Python<'_>, block: BlockArg<'_>) -> PyResult<PyColumnsPartial> {
            let b = block.convert()?;
            let inner = run(py, || ColumnsPartial::from_part(&self.inner, b.part, b.rows()))?;
            Ok(PyColumnsPartial { inner })
        }
        /// The KSVD landmark solve on the merged columns of every training file.
        fn solve(&self, py: Python<'_>, columns: &PyColumnsPartial) -> PyResult<PyFittedKsvd> {
            let inner = run(py, || self.inner.solve(&columns.inner))?;
            Ok(PyFittedKsvd { inner })
        }
        /// The KPCA landmark solve (symmetric Nystrom on the landmark rows; needs no pass 2).
        fn solve_kpca(&self, py: Python<'_>) -> PyResult<PyFittedKpca> {
            let inner = run(py, || self.inner.solve_kpca())?;
            Ok(PyFittedKpca { inner })
        }
        /// Global ids of the landmark rows (increasing).
        #[getter]
        fn row_landmarks(&self) -> Vec<usize> {
            self.inner.row_landmarks().to_vec()
        }
        /// Landmark columns.
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
    PyColumnsPartial,
    ColumnsPartial,
    "ColumnsPartial",
    "Pass 2: partial landmark columns P (M x m), merged by addition; rows mapped (M > N): the rows of X[:, J], merged by concatenation.",
    merge,
    {
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

/// Writes `rows` seeded synthetic LIBSVM rows with a planted nonlinear signal to `path`
/// (`ksvd_streaming::write_synthetic`; `part` is `"train"` or `"test"`, drawn from the same
/// distribution with disjoint row streams). Returns `(rows, positives)`.
#[pyfunction]
#[pyo3(signature = (path, rows, *, features, nnz_per_row, part, seed))]
fn write_synthetic(
    py: Python<'_>,
    path: &str,
    rows: usize,
    features: usize,
    nnz_per_row: usize,
    part: &str,
    seed: u64,
) -> PyResult<(usize, usize)> {
    let part = match part {
        "train" => SyntheticPart::Train,
        "test" => SyntheticPart::Test,
        other => {
            return Err(value_error(format!(
                "unknown part {other:?} (expected 'train' or 'test')"
            )))
        }
    };
    let spec = SyntheticSpec {
        features,
        nnz_per_row,
        seed,
        ..SyntheticSpec::default()
    };
    let path = std::path::PathBuf::from(path);
    let s = run(py, || ksvd_streaming::write_synthetic(&path, &spec, part, rows))?;
    Ok((s.rows, s.positives))
}

/// The input files of the large-scale spec, resolved as the experiment runner (`xtask`'s
/// `large-scale`) does: the registry stand-ins `stand_ins` under the committed `data/` folder
/// (`data_dir`, default: found as `DataRoot::committed` finds it; checksum-verified), then the
/// paper's datasets (`ksvd_streaming::paper_datasets`, relative to that folder). One dict per dataset: `name`,
/// `train` and `test` paths (`test` is `None` when the set has no test file: the Rust path then
/// splits the training file), `n_features`, `positive_label`, and `missing` (`None`, or the note
/// of a `missing-data` row saying where to get the file).
#[pyfunction]
#[pyo3(signature = (stand_ins, data_dir=None))]
fn large_scale_inputs<'py>(
    py: Python<'py>,
    stand_ins: Vec<String>,
    data_dir: Option<std::path::PathBuf>,
) -> PyResult<Vec<Bound<'py, pyo3::types::PyDict>>> {
    use ksvd_datasets::{sparse_spec, DataRoot, DatasetError, DatasetName};
    use pyo3::types::PyDict;
    let root = match data_dir {
        Some(d) => DataRoot::committed_at(d),
        None => DataRoot::committed(),
    }
    .map_err(value_error)?;
    let mut out = Vec::new();
    let entry = |name: &str,
                 train: Option<std::path::PathBuf>,
                 test: Option<std::path::PathBuf>,
                 n_features: Option<usize>,
                 positive: Option<f64>,
                 missing: Option<String>|
     -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("name", name)?;
        d.set_item("train", train)?;
        d.set_item("test", test)?;
        d.set_item("n_features", n_features)?;
        d.set_item("positive_label", positive)?;
        d.set_item("missing", missing)?;
        Ok(d)
    };
    for name in &stand_ins {
        let ds: DatasetName = name.parse().map_err(value_error)?;
        let spec = sparse_spec(ds)
            .filter(|s| s.ffm.is_none())
            .ok_or_else(|| value_error(format!("{name} is not a LIBSVM dataset of the registry")))?;
        let (train, test, missing) = match root.file(ds, spec.train) {
            Ok(p) => match root.file(ds, spec.test) {
                Ok(t) => (Some(p), Some(t), None),
                Err(DatasetError::MissingFile { .. }) => (Some(p), None, None),
                Err(e) => return Err(value_error(e)),
            },
            Err(e @ DatasetError::MissingFile { .. }) => (None, None, Some(e.to_string())),
            Err(e) => return Err(value_error(e)),
        };
        out.push(entry(name, train, test, Some(spec.n_features), None, missing)?);
    }
    for d in ksvd_streaming::paper_datasets() {
        let at = |p: &std::path::Path| root.dir().join(p);
        let train = at(&d.train_path);
        let test = d.test_path.as_deref().map(at);
        // The note names the path relative to the data folder, as the Rust runner's rows do.
        let missing = std::iter::once(&d.train_path)
            .chain(d.test_path.as_ref())
            .find(|p| !at(p).is_file())
            .map(|p| format!("missing {}: {}", p.display(), d.origin));
        out.push(entry(
            &d.name,
            Some(train),
            test,
            d.n_features,
            d.positive_label,
            missing,
        )?);
    }
    Ok(out)
}

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

/// Peak resident set size (`VmHWM`) of this process in bytes (`ksvd_streaming::peak_rss_bytes`);
/// `None` where `/proc` is not available. Unlike `resource.getrusage(...).ru_maxrss`, it does not
/// include the peak of the process that started this one (Linux carries that across fork + exec,
/// so a Dask worker spawned by a large driver would report the driver's size).
#[pyfunction]
fn peak_rss_bytes() -> Option<u64> {
    ksvd_streaming::peak_rss_bytes()
}

/// Registers the classes in the native module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyStreamParams>()?;
    m.add_class::<PyScanPartial>()?;
    m.add_class::<PyLandmarkPlan>()?;
    m.add_class::<PyColumnsPartial>()?;
    m.add_class::<PyFittedKsvd>()?;
    m.add_class::<PyTrainPartial>()?;
    m.add_class::<PyTrainedKsvd>()?;
    m.add_class::<PyFittedKpca>()?;
    m.add_class::<PyTrainedKpca>()?;
    m.add_class::<PyScorePartial>()?;
    m.add_function(wrap_pyfunction!(write_synthetic, m)?)?;
    m.add_function(wrap_pyfunction!(large_scale_inputs, m)?)?;
    m.add_function(wrap_pyfunction!(split_test_rows, m)?)?;
    m.add_function(wrap_pyfunction!(peak_rss_bytes, m)?)?;
    Ok(())
}
