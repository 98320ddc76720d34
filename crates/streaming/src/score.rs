//! Pass 4: the test rows' scores ([`ScorePartial`], sorted per class, merged exactly) from the
//! trained model ([`Trained`]); the driver's AUROC ([`ScorePartial::auroc`]).
use std::collections::BTreeMap;
use std::path::Path;

use ksvd_datasets::{envelope, write_atomic};

use ksvd_linalg::{CsrMatrix, Vocabulary};
use ndarray::{Array1, Array2, Axis};
use serde::{Deserialize, Serialize};

use crate::classifier::{LabelRule, LinearClassifier};
use crate::embedding::Embedding;
use crate::error::{Result, StreamingError};
use crate::params::Method;
use crate::progress::{report, ProgressFn};
use crate::source::{for_each_chunk, LibsvmSource};
use crate::state::{merge_files, state_error, PartRows, PartialState};
use crate::train::PartialModel;

/// The trained model: normalised embeddings (KSVD or KPCA) and the linear classifier on them.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Trained<E> {
    pub(crate) model: E,
    pub(crate) classifier: LinearClassifier,
    pub(crate) positive: f64,
    pub(crate) chunk_rows: usize,
}

/// Trained KSVD ([`crate::Fitted::finish`]).
pub type TrainedKsvd = Trained<crate::StreamingKsvd>;
/// Trained KPCA ([`crate::Fitted::finish`]).
pub type TrainedKpca = Trained<crate::StreamingKpca>;

impl<E: PartialModel> PartialState for Trained<E> {
    const KIND: &'static str = E::TRAINED_KIND;
    fn check(&self) -> std::result::Result<(), String> {
        if self.model.normalization().is_none() || self.classifier.weights.len() != self.model.rank() {
            return Err("the model has no normalisation or the classifier the wrong dimension".into());
        }
        Ok(())
    }
}

impl<E: PartialModel> Trained<E> {
    /// The fitted model with its column normalisation.
    pub fn model(&self) -> &E {
        &self.model
    }

    /// The classifier on normalised embeddings.
    pub fn classifier(&self) -> &LinearClassifier {
        &self.classifier
    }

    /// Normalised embeddings of every row of `source` (`rows × r`, [`crate::Embedding::embed`]).
    pub fn embed_file(&self, source: &LibsvmSource) -> Result<Array2<f64>> {
        let mut parts = Vec::new();
        for_each_chunk(source, self.chunk_rows, Some(self.model.n_features()), |c| {
            parts.push(self.model.embed(&c.x)?);
            Ok(())
        })?;
        stack(&parts, self.model.rank())
    }

    /// Pass 4 over test file `file`: the classifier's scores of its rows, sorted per class, and
    /// (when `keep_embeddings`) the normalised embeddings of its rows.
    pub fn score_file(
        &self,
        file: usize,
        source: &LibsvmSource,
        keep_embeddings: bool,
    ) -> Result<(ScorePartial, Option<Array2<f64>>)> {
        self.score_part(file, PartRows::File(source), keep_embeddings)
    }

    /// Pass 4 over test part `part` (a file or an in-memory block).
    pub fn score_part(
        &self,
        part: usize,
        rows: PartRows<'_>,
        keep_embeddings: bool,
    ) -> Result<(ScorePartial, Option<Array2<f64>>)> {
        self.score_reporting(part, rows, keep_embeddings, &mut |_| {})
    }

    /// [`Trained::score_part`], reporting rows done (stage `"score"`).
    pub(crate) fn score_reporting(
        &self,
        part: usize,
        rows: PartRows<'_>,
        keep_embeddings: bool,
        progress: &mut ProgressFn<'_>,
    ) -> Result<(ScorePartial, Option<Array2<f64>>)> {
        let labels = LabelRule {
            positive: self.positive,
        };
        let mut state = ScorePartial::default();
        let mut parts = Vec::new();
        let (n, _) = rows.for_each(self.chunk_rows, Some(self.model.n_features()), |c| {
            let e = self.model.embed(&c.x)?;
            let s = self.classifier.decision(e.view());
            for (&v, &l) in s.iter().zip(&c.labels) {
                if labels.target(l) > 0.0 {
                    state.positive.push(v);
                } else {
                    state.negative.push(v);
                }
            }
            if keep_embeddings {
                parts.push(e);
            }
            report(progress, "score", c.first + c.x.nrows(), 0);
            Ok(())
        })?;
        if state.positive.iter().chain(&state.negative).any(|s| !s.is_finite()) {
            return Err(StreamingError::NonFinite { what: "score" });
        }
        state.positive.sort_unstable_by(f64::total_cmp);
        state.negative.sort_unstable_by(f64::total_cmp);
        state.files.insert(part, n);
        let emb = if keep_embeddings {
            Some(stack(&parts, self.model.rank())?)
        } else {
            None
        };
        Ok((state, emb))
    }
}

/// What a trained streaming model holds ([`TrainedModel::describe`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct TrainedSummary {
    /// `ksvd` or `kpca`.
    pub method: String,
    /// Training rows `N`.
    pub train_rows: usize,
    /// Features `M` of a row.
    pub n_features: usize,
    /// Components `r` per row.
    pub rank: usize,
    /// The landmark solve's spectrum, descending (KSVD: approximate singular values; KPCA:
    /// eigenvalues of the landmark kernel matrix).
    pub spectrum: Vec<f64>,
    /// The RBF bandwidth `γ`.
    pub bandwidth: f64,
    /// Number of landmark rows.
    pub landmark_rows: usize,
    /// The label scored as positive.
    pub positive_label: f64,
}

/// A trained model of either method: what [`crate::run_pipeline`] returns and a model file of
/// the streaming fit holds (`ksvd-stream run --out DIR`, `ksvd.dask.fit(out_dir=)`:
/// `DIR/model.<method>-trained`). [`TrainedModel::from_bytes`] is the one loader of both
/// documents (formats `ksvd-streaming-trained-ksvd` and `ksvd-streaming-trained-kpca`).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum TrainedModel {
    /// Trained KSVD.
    Ksvd(Box<TrainedKsvd>),
    /// Trained KPCA.
    Kpca(Box<TrainedKpca>),
}

impl TrainedModel {
    /// The method of the model.
    pub fn method(&self) -> Method {
        match self {
            TrainedModel::Ksvd(_) => Method::Ksvd,
            TrainedModel::Kpca(_) => Method::Kpca,
        }
    }

    /// Normalised embeddings of the rows of `x` (`rows × r`, [`crate::Embedding::embed`]); `x`
    /// has the model's [`TrainedModel::n_features`] columns.
    pub fn embed(&self, x: &CsrMatrix) -> Result<Array2<f64>> {
        match self {
            TrainedModel::Ksvd(t) => t.model().embed(x),
            TrainedModel::Kpca(t) => t.model().embed(x),
        }
    }

    /// The classifier's scores of the rows of `x` (larger: the positive label).
    pub fn decision(&self, x: &CsrMatrix) -> Result<Array1<f64>> {
        let e = self.embed(x)?;
        Ok(match self {
            TrainedModel::Ksvd(t) => t.classifier().decision(e.view()),
            TrainedModel::Kpca(t) => t.classifier().decision(e.view()),
        })
    }

    /// What the model is, for `ksvd inspect`: method, sizes, spectrum, bandwidth, landmarks.
    pub fn describe(&self) -> TrainedSummary {
        fn of<E: PartialModel>(t: &Trained<E>, method: Method) -> TrainedSummary {
            let m = t.model();
            TrainedSummary {
                method: method.name().to_string(),
                train_rows: m.scan_summary().rows,
                n_features: m.n_features(),
                rank: m.rank(),
                spectrum: m.spectrum().to_vec(),
                bandwidth: m.bandwidth(),
                landmark_rows: m.landmark_rows().len(),
                positive_label: t.positive,
            }
        }
        match self {
            TrainedModel::Ksvd(t) => of(t, Method::Ksvd),
            TrainedModel::Kpca(t) => of(t, Method::Kpca),
        }
    }

    /// The model's document ([`PartialState::to_bytes`] of the variant).
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        match self {
            TrainedModel::Ksvd(t) => t.to_bytes(),
            TrainedModel::Kpca(t) => t.to_bytes(),
        }
    }

    /// Reads a trained model of either method by the format its envelope names (the checksum is
    /// verified first). Another document (a partial state of the passes, a model of another
    /// crate), a changed byte or a truncated document is a [`StreamingError::PartialState`]
    /// naming the problem.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let header = envelope::peek(bytes).map_err(|e| state_error("trained", e.to_string()))?;
        if header.format == TrainedKsvd::format() {
            Ok(TrainedModel::Ksvd(Box::new(TrainedKsvd::from_bytes(bytes)?)))
        } else if header.format == TrainedKpca::format() {
            Ok(TrainedModel::Kpca(Box::new(TrainedKpca::from_bytes(bytes)?)))
        } else {
            Err(state_error(
                "trained",
                format!(
                    "a `{}` document is not a trained model (expected `{}` or `{}`)",
                    header.format,
                    TrainedKsvd::format(),
                    TrainedKpca::format()
                ),
            ))
        }
    }

    /// Writes the model's document to `path` atomically ([`ksvd_datasets::write_atomic`]).
    pub fn save(&self, path: &Path) -> Result<()> {
        let bytes = self.to_bytes()?;
        write_atomic(path, &bytes).map_err(|source| {
            StreamingError::Dataset(ksvd_datasets::DatasetError::Io {
                path: path.to_path_buf(),
                source,
            })
        })
    }
}

/// The chunks' embeddings stacked in row order (`0 × r` for none).
fn stack(parts: &[Array2<f64>], r: usize) -> Result<Array2<f64>> {
    if parts.is_empty() {
        return Ok(Array2::zeros((0, r)));
    }
    let views: Vec<_> = parts.iter().map(|p| p.view()).collect();
    ndarray::concatenate(Axis(0), &views)
        .map_err(|e| StreamingError::invalid("embeddings", e, "chunks of different widths"))
}

/// Pass 4: the test scores of a set of parts, kept sorted per class (9 bytes per row at most);
/// merging two states merges the sorted lists, exactly.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ScorePartial {
    files: BTreeMap<usize, usize>,
    positive: Vec<f64>,
    negative: Vec<f64>,
}

impl PartialState for ScorePartial {
    const KIND: &'static str = "score";
    fn check(&self) -> std::result::Result<(), String> {
        let sorted = |v: &[f64]| v.windows(2).all(|w| w[0].total_cmp(&w[1]).is_le());
        if !sorted(&self.positive) || !sorted(&self.negative) {
            return Err("score lists are not sorted".into());
        }
        Ok(())
    }
}

fn merge_sorted(a: &[f64], b: &[f64]) -> Vec<f64> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if b[j].total_cmp(&a[i]).is_lt() {
            out.push(b[j]);
            j += 1;
        } else {
            out.push(a[i]);
            i += 1;
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

impl ScorePartial {
    /// Adds the scores of a disjoint set of test parts.
    pub fn merge(&mut self, other: &ScorePartial) -> Result<()> {
        merge_files(Self::KIND, &mut self.files, &other.files)?;
        self.positive = merge_sorted(&self.positive, &other.positive);
        self.negative = merge_sorted(&self.negative, &other.negative);
        Ok(())
    }

    /// Test rows scored.
    pub fn rows(&self) -> usize {
        self.positive.len() + self.negative.len()
    }

    /// The scores of the positive and of the negative test rows, each sorted increasingly.
    pub fn scores(&self) -> (&[f64], &[f64]) {
        (&self.positive, &self.negative)
    }

    /// AUROC of the merged scores ([`ksvd_metrics::auroc`], ties counted as one half).
    pub fn auroc(&self) -> Result<f64> {
        let scores: Vec<f64> = self.positive.iter().chain(&self.negative).copied().collect();
        let labels: Vec<bool> = (0..scores.len()).map(|i| i < self.positive.len()).collect();
        Ok(ksvd_metrics::auroc(&scores, &labels)?)
    }
}
