//! Pass 3: embeddings of the training rows, their column norms and the ridge statistics
//! ([`TrainPartial`], merged by addition), from the driver's landmark solve ([`Fitted`]); the
//! driver's classifier solve ([`Fitted::finish`]) gives the [`crate::Trained`] model. Generic over
//! the model ([`PartialModel`]: [`StreamingKsvd`], [`StreamingKpca`]).
use std::collections::BTreeMap;

use ksvd_linalg::CsrMatrix;
use ndarray::{Array1, Axis};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::classifier::{LabelRule, RidgeAccumulator};
use crate::embedding::{Embedding, NormAccumulator};
use crate::error::{Result, StreamingError};
use crate::kpca::StreamingKpca;
use crate::ksvd::StreamingKsvd;
use crate::progress::{report, ProgressFn};
use crate::scan::ScanSummary;
use crate::score::Trained;
use crate::source::LibsvmSource;
use crate::state::{check_files, merge_files, state_error, FileIndex, PartRows, PartialState};

/// A model passes 3 and 4 train and score: [`StreamingKsvd`] or [`StreamingKpca`] (both solved
/// from the plan and pass 2). Implemented by these two.
pub trait PartialModel: Embedding + Clone + Send + Serialize + DeserializeOwned {
    /// The `kind` of its [`Fitted`] state.
    const FITTED_KIND: &'static str;
    /// The `kind` of its [`Trained`] state.
    const TRAINED_KIND: &'static str;
    /// What the scan found (`N`, `M`, labels).
    fn scan_summary(&self) -> &ScanSummary;
    /// The landmark solve's spectrum, descending: KSVD's approximate singular values, KPCA's
    /// eigenvalues of `K_LL`.
    fn spectrum(&self) -> &Array1<f64>;
    /// The RBF bandwidth `γ`.
    fn bandwidth(&self) -> f64;
    /// The landmark rows (global row ids, increasing).
    fn landmark_rows(&self) -> &[usize];
}

impl PartialModel for StreamingKsvd {
    const FITTED_KIND: &'static str = "fitted-ksvd";
    const TRAINED_KIND: &'static str = "trained-ksvd";
    fn scan_summary(&self) -> &ScanSummary {
        self.summary()
    }
    fn spectrum(&self) -> &Array1<f64> {
        self.singular_values()
    }
    fn bandwidth(&self) -> f64 {
        self.gamma()
    }
    fn landmark_rows(&self) -> &[usize] {
        self.row_landmarks()
    }
}

impl PartialModel for StreamingKpca {
    const FITTED_KIND: &'static str = "fitted-kpca";
    const TRAINED_KIND: &'static str = "trained-kpca";
    fn scan_summary(&self) -> &ScanSummary {
        self.summary()
    }
    fn spectrum(&self) -> &Array1<f64> {
        self.eigenvalues()
    }
    fn bandwidth(&self) -> f64 {
        self.gamma()
    }
    fn landmark_rows(&self) -> &[usize] {
        self.row_landmarks()
    }
}

/// The fitted model (the landmark solve) as the driver broadcasts it to pass 3.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Fitted<E> {
    model: E,
    index: FileIndex,
    chunk_rows: usize,
    /// Shift of the ridge statistics: the mean raw embedding of the landmark rows.
    shift: Array1<f64>,
}

/// The KSVD landmark solve ([`crate::LandmarkPlan::solve_ksvd`]).
pub type FittedKsvd = Fitted<StreamingKsvd>;
/// The KPCA landmark solve ([`crate::LandmarkPlan::solve_kpca`]).
pub type FittedKpca = Fitted<StreamingKpca>;

impl<E: PartialModel> PartialState for Fitted<E> {
    const KIND: &'static str = E::FITTED_KIND;
    fn check(&self) -> std::result::Result<(), String> {
        if self.shift.len() != self.model.rank() {
            return Err(format!(
                "shift of length {} for rank {}",
                self.shift.len(),
                self.model.rank()
            ));
        }
        Ok(())
    }
}

impl<E: PartialModel> Fitted<E> {
    /// Wraps the driver's solve. The ridge statistics of every partition are shifted by the
    /// mean raw embedding of the landmark rows (known here), so that they merge by addition.
    pub(crate) fn new(model: E, landmark_x: &CsrMatrix, index: FileIndex, chunk_rows: usize) -> Result<Self> {
        let raw = model.embed_raw(landmark_x)?;
        let shift = raw.mean_axis(Axis(0)).unwrap_or_else(|| Array1::zeros(raw.ncols()));
        Ok(Fitted {
            model,
            index,
            chunk_rows,
            shift,
        })
    }

    /// The landmark solve (before the column normalisation of pass 3).
    pub fn model(&self) -> &E {
        &self.model
    }

    /// The positive label: `positive`, or the larger of exactly two training labels.
    pub fn label_rule(&self, positive: Option<f64>) -> Result<LabelRule> {
        LabelRule::from_counts(
            &self.index.describe(),
            &self.model.scan_summary().label_counts,
            positive,
        )
    }

    /// The zero state of pass 3.
    pub fn empty_train(&self) -> TrainPartial {
        let r = self.model.rank();
        TrainPartial {
            files: BTreeMap::new(),
            norms: NormAccumulator::new(r),
            ridge: RidgeAccumulator::with_shift(self.shift.clone()),
            positives: 0,
        }
    }

    /// Pass 3 over training file `file`: raw embeddings, their column norms and signs, and the
    /// ridge statistics on `±1` targets (`labels`).
    pub fn train_file(&self, file: usize, source: &LibsvmSource, labels: LabelRule) -> Result<TrainPartial> {
        self.train_part(file, PartRows::File(source), labels)
    }

    /// Pass 3 over training part `part` (a file or an in-memory block).
    pub fn train_part(&self, part: usize, rows: PartRows<'_>, labels: LabelRule) -> Result<TrainPartial> {
        self.train_reporting(part, rows, labels, &mut |_| {})
    }

    /// [`Fitted::train_part`], reporting rows done (stage `"train"`).
    pub(crate) fn train_reporting(
        &self,
        part: usize,
        rows: PartRows<'_>,
        labels: LabelRule,
        progress: &mut ProgressFn<'_>,
    ) -> Result<TrainPartial> {
        let (offset, expected) = self.index.locate(TrainPartial::KIND, part)?;
        let mut state = self.empty_train();
        let (n, _) = rows.for_each(self.chunk_rows, Some(self.model.n_features()), |c| {
            let e = self.model.embed_raw(&c.x)?;
            let y: Vec<f64> = c.labels.iter().map(|&l| labels.target(l)).collect();
            state.positives += y.iter().filter(|&&t| t > 0.0).count();
            state.norms.add_from(e.view(), offset + c.first);
            state.ridge.add(e.view(), &y)?;
            report(progress, "train", c.first + c.x.nrows(), expected);
            Ok(())
        })?;
        if n != expected {
            return Err(StreamingError::SourceChanged {
                path: rows.name(part),
                expected,
                got: n,
            });
        }
        state.files.insert(part, n);
        Ok(state)
    }

    /// The driver's classifier solve from the merged pass-3 state of every training part: the
    /// column normalisation of the model and the ridge classifier (`λ = ridge`, see
    /// [`RidgeAccumulator::solve`]) on normalised embeddings.
    pub fn finish(&self, train: &TrainPartial, ridge: f64, labels: LabelRule) -> Result<Trained<E>> {
        check_files(TrainPartial::KIND, &self.index.files, &train.files)?;
        if train.norms.rank() != self.model.rank() {
            return Err(state_error(
                TrainPartial::KIND,
                format!(
                    "the statistics have rank {}, the model {}",
                    train.norms.rank(),
                    self.model.rank()
                ),
            ));
        }
        let normalization = train.norms.finish();
        let classifier = train.ridge.solve(ridge)?.for_scaled_features(&normalization.factors());
        let mut model = self.model.clone();
        model.set_normalization(normalization);
        Ok(Trained {
            model,
            classifier,
            positive: labels.positive,
            chunk_rows: self.chunk_rows,
        })
    }
}

/// Pass 3: column norms and ridge statistics of a set of training parts, merged by addition.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TrainPartial {
    files: BTreeMap<usize, usize>,
    norms: NormAccumulator,
    ridge: RidgeAccumulator,
    positives: usize,
}

impl PartialState for TrainPartial {
    const KIND: &'static str = "train";
}

impl TrainPartial {
    /// Adds the state of a disjoint set of parts.
    pub fn merge(&mut self, other: &TrainPartial) -> Result<()> {
        merge_files(Self::KIND, &mut self.files, &other.files)?;
        self.norms.merge(&other.norms)?;
        self.ridge.merge(&other.ridge)?;
        self.positives += other.positives;
        Ok(())
    }

    /// Training rows accumulated.
    pub fn rows(&self) -> usize {
        self.ridge.count()
    }

    /// Positive training rows accumulated.
    pub fn positives(&self) -> usize {
        self.positives
    }
}
