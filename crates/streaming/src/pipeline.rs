//! The full out-of-core pipeline: fit, embed + train the classifier, embed + score the test part.
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::classifier::{auroc, LabelRule, LinearClassifier, RidgeAccumulator};
use crate::embedding::{ColumnNormalization, Embedding, NormAccumulator};
use crate::error::{Result, StreamingError};
use crate::kpca::fit_kpca;
use crate::ksvd::{fit_ksvd, CompatSide};
use crate::params::{StreamingParams, ValidStreamingParams};
use crate::progress::{report, ProgressFn};
use crate::source::{for_each_chunk, LibsvmSource};

/// An embedding method of the large-scale table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// KPCA: symmetric Nyström on the RBF kernel between samples.
    Kpca,
    /// KSVD: asymmetric Nyström on the RBF kernel between rows and (mapped) columns, a2.
    Ksvd,
}

impl Method {
    /// `"kpca"` or `"ksvd"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Kpca => "kpca",
            Method::Ksvd => "ksvd",
        }
    }
}

/// What a training pass produces.
#[derive(Debug, Clone)]
pub struct TrainOutcome {
    /// Column normalisation of the embeddings over the training rows.
    pub normalization: ColumnNormalization,
    /// The classifier, on normalised embeddings ([`Embedding::embed`]).
    pub classifier: LinearClassifier,
    /// Training rows seen.
    pub rows: usize,
    /// Positive training rows.
    pub positives: usize,
}

/// One streaming pass over the training rows: embeds every chunk, accumulates the column norms
/// and the ridge statistics, and stores the normalisation in the model. The returned classifier
/// acts on normalised embeddings.
pub fn train_pass(
    source: &LibsvmSource,
    model: &mut dyn Embedding,
    labels: LabelRule,
    ridge: f64,
    chunk_rows: usize,
    progress: &mut ProgressFn<'_>,
) -> Result<TrainOutcome> {
    let r = model.rank();
    let mut norms = NormAccumulator::new(r);
    let mut acc = RidgeAccumulator::new(r);
    let mut positives = 0usize;
    let m: &dyn Embedding = model;
    let (rows, _) = for_each_chunk(source, chunk_rows, Some(m.n_features()), |c| {
        let e = m.embed_raw(&c.x)?;
        let y: Vec<f64> = c.labels.iter().map(|&l| labels.target(l)).collect();
        positives += y.iter().filter(|&&t| t > 0.0).count();
        norms.add(e.view());
        acc.add(e.view(), &y)?;
        report(progress, "embed + train", c.first + c.x.nrows(), 0);
        Ok(())
    })?;
    if rows == 0 {
        return Err(source.empty_error());
    }
    let normalization = norms.finish();
    let classifier = acc.solve(ridge)?.for_scaled_features(&normalization.factors());
    model.set_normalization(normalization.clone());
    Ok(TrainOutcome {
        normalization,
        classifier,
        rows,
        positives,
    })
}

/// One streaming pass that only computes (and stores) the column normalisation.
pub fn normalize(source: &LibsvmSource, model: &mut dyn Embedding, chunk_rows: usize) -> Result<ColumnNormalization> {
    let mut norms = NormAccumulator::new(model.rank());
    let m: &dyn Embedding = model;
    let (rows, _) = for_each_chunk(source, chunk_rows, Some(m.n_features()), |c| {
        norms.add(m.embed_raw(&c.x)?.view());
        Ok(())
    })?;
    if rows == 0 {
        return Err(source.empty_error());
    }
    let n = norms.finish();
    model.set_normalization(n.clone());
    Ok(n)
}

/// Scores of the rows of `source` (normalised embeddings through `classifier`) and whether each
/// row is positive. Keeps 9 bytes per row: the only `O(rows)` state of the pipeline.
pub fn score_pass(
    source: &LibsvmSource,
    model: &dyn Embedding,
    classifier: &LinearClassifier,
    labels: LabelRule,
    chunk_rows: usize,
    progress: &mut ProgressFn<'_>,
) -> Result<(Vec<f64>, Vec<bool>)> {
    let (mut scores, mut pos) = (Vec::new(), Vec::new());
    let (rows, _) = for_each_chunk(source, chunk_rows, Some(model.n_features()), |c| {
        let e = model.embed(&c.x)?;
        scores.extend(classifier.decision(e.view()));
        pos.extend(c.labels.iter().map(|&l| labels.target(l) > 0.0));
        report(progress, "embed + score", c.first + c.x.nrows(), 0);
        Ok(())
    })?;
    if rows == 0 {
        return Err(source.empty_error());
    }
    Ok((scores, pos))
}

/// Parameters of [`run_pipeline`].
#[derive(Debug, Clone, PartialEq)]
pub struct PipelineParams {
    /// The Nyström fit.
    pub model: StreamingParams,
    /// Ridge `λ` of the classifier (on standardised features).
    pub ridge: f64,
    /// The positive label; `None`: the larger of exactly two training labels.
    pub positive_label: Option<f64>,
}

/// The fitted model of one run (boxed: the two models are large and of different sizes).
enum Fitted {
    Ksvd(Box<crate::ksvd::StreamingKsvd>),
    Kpca(Box<crate::kpca::StreamingKpca>),
}

/// Everything [`run_pipeline`] measured.
#[derive(Debug, Clone, PartialEq)]
pub struct PipelineOutcome {
    /// The method.
    pub method: Method,
    /// AUROC on the test rows.
    pub auroc: f64,
    /// Training rows `N`.
    pub train_rows: usize,
    /// Test rows.
    pub test_rows: usize,
    /// Feature columns `M`.
    pub features: usize,
    /// Stored entries of the training rows.
    pub train_nnz: usize,
    /// Embedding dimension actually used.
    pub rank: usize,
    /// Bandwidth `γ`.
    pub gamma: f64,
    /// Landmark rows `n`.
    pub row_landmarks: usize,
    /// Landmark columns `m` (KSVD; 0 for KPCA).
    pub col_landmarks: usize,
    /// Compatibility side (KSVD).
    pub side: Option<CompatSide>,
    /// Seconds of the fit passes and the landmark solve.
    pub fit_seconds: f64,
    /// Seconds of the embed + train pass.
    pub train_seconds: f64,
    /// Seconds of the embed + score pass and the AUROC.
    pub score_seconds: f64,
}

/// Fits `method` on `train`, trains the ridge classifier in a second streaming pass and scores
/// the `test` rows (read with the training feature count). Passes over the training file: KSVD 3,
/// KPCA 2 (plus one width scan when the feature count is not given); one over the test file.
pub fn run_pipeline(
    method: Method,
    train: &LibsvmSource,
    test: &LibsvmSource,
    params: &PipelineParams,
    progress: &mut ProgressFn<'_>,
) -> Result<PipelineOutcome> {
    let valid: ValidStreamingParams = params.model.clone().check()?;
    let t0 = Instant::now();
    let mut fitted = match method {
        Method::Ksvd => Fitted::Ksvd(Box::new(fit_ksvd(train, &valid, progress)?)),
        Method::Kpca => Fitted::Kpca(Box::new(fit_kpca(train, &valid, progress)?)),
    };
    let fit_seconds = t0.elapsed().as_secs_f64();
    let (summary, gamma, row_landmarks, col_landmarks, side) = match &fitted {
        Fitted::Ksvd(k) => (
            k.summary().clone(),
            k.gamma(),
            k.row_landmarks().len(),
            k.col_landmarks().len(),
            Some(k.side()),
        ),
        Fitted::Kpca(k) => (k.summary().clone(), k.gamma(), k.row_landmarks().len(), 0, None),
    };
    let model: &mut dyn Embedding = match &mut fitted {
        Fitted::Ksvd(k) => k.as_mut(),
        Fitted::Kpca(k) => k.as_mut(),
    };
    let labels = LabelRule::from_counts(&train.path, &summary.label_counts, params.positive_label)?;
    let t1 = Instant::now();
    let trained = train_pass(train, model, labels, params.ridge, valid.chunk_rows, progress)?;
    let train_seconds = t1.elapsed().as_secs_f64();
    let t2 = Instant::now();
    let test = test.clone().n_features(summary.features);
    let (scores, positive) = score_pass(&test, model, &trained.classifier, labels, valid.chunk_rows, progress)?;
    let auc = auroc(&scores, &positive)?;
    let score_seconds = t2.elapsed().as_secs_f64();
    if scores.is_empty() {
        return Err(StreamingError::EmptySource {
            path: test.path.clone(),
            selection: String::new(),
        });
    }
    Ok(PipelineOutcome {
        method,
        auroc: auc,
        train_rows: summary.rows,
        test_rows: scores.len(),
        features: summary.features,
        train_nnz: summary.nnz,
        rank: model.rank(),
        gamma,
        row_landmarks,
        col_landmarks,
        side,
        fit_seconds,
        train_seconds,
        score_seconds,
    })
}
