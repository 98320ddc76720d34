//! The passes in one process: the training files are the parts of one partition, each pass maps
//! them one after the other to their states and merges those in file order, as a distributed
//! engine does with one partition. [`fit_ksvd`] / [`fit_kpca`] (passes 1 and 2 and the landmark
//! solve), [`Fitted::train`] (pass 3 and the classifier), [`Trained::score`] (pass 4), and
//! [`run_pipeline`], all of them with timings.
use std::time::Instant;

use crate::classifier::LinearClassifier;
use crate::error::{Result, StreamingError};
use crate::ksvd::CompatSide;
use crate::landmarks::LandmarksPartial;
use crate::params::{Method, StreamingParams, ValidStreamingParams};
use crate::progress::ProgressFn;
use crate::scan::ScanPartial;
use crate::score::{ScorePartial, Trained, TrainedModel};
use crate::solve::LandmarkPlan;
use crate::source::LibsvmSource;
use crate::state::PartRows;
use crate::train::{Fitted, FittedKpca, FittedKsvd, PartialModel, TrainPartial};

/// Merges the states of the parts in part order (the tree of one partition).
fn merge_in_order<T>(states: Vec<T>, merge: impl Fn(&mut T, &T) -> Result<()>) -> Result<Option<T>> {
    let mut it = states.into_iter();
    let Some(mut acc) = it.next() else {
        return Ok(None);
    };
    for s in it {
        merge(&mut acc, &s)?;
    }
    Ok(Some(acc))
}

fn need_files(what: &'static str, files: &[LibsvmSource]) -> Result<()> {
    if files.is_empty() {
        return Err(StreamingError::invalid(what, 0, "need at least one LIBSVM file"));
    }
    Ok(())
}

/// Pass 1 over `train` and the plan of `method`; then pass 2 (the landmark rows and, for KSVD,
/// columns).
fn plan_and_landmarks(
    train: &[LibsvmSource],
    params: &ValidStreamingParams,
    method: Method,
    progress: &mut ProgressFn<'_>,
) -> Result<(LandmarkPlan, LandmarksPartial)> {
    need_files("train", train)?;
    let scans = train
        .iter()
        .enumerate()
        .map(|(f, s)| ScanPartial::scan_reporting(params, f, PartRows::File(s), progress))
        .collect::<Result<Vec<_>>>()?;
    let scan = merge_in_order(scans, ScanPartial::merge)?.unwrap_or_default();
    if let [source] = train {
        if scan.rows() == 0 {
            return Err(source.empty_error());
        }
    }
    let plan = LandmarkPlan::new(&scan, params, method)?;
    let parts = train
        .iter()
        .enumerate()
        .map(|(f, s)| LandmarksPartial::from_part_reporting(&plan, f, PartRows::File(s), progress))
        .collect::<Result<Vec<_>>>()?;
    let landmarks = merge_in_order(parts, LandmarksPartial::merge)?.unwrap_or_else(|| LandmarksPartial::empty(&plan));
    Ok((plan, landmarks))
}

/// Fits KSVD with the asymmetric Nyström method on the training files `train` (their rows
/// concatenated in order): pass 1 (sizes, labels, column norms), pass 2 (the landmark rows by
/// the key sketch and the landmark columns `P`), the landmark solve. Memory
/// `O(M m + n (nnz/row + m) + chunk)`, plus `O(nnz(X[:, J]))` when rows are mapped.
pub fn fit_ksvd(
    train: &[LibsvmSource],
    params: &ValidStreamingParams,
    progress: &mut ProgressFn<'_>,
) -> Result<FittedKsvd> {
    let (plan, landmarks) = plan_and_landmarks(train, params, Method::Ksvd, progress)?;
    plan.solve_ksvd(&landmarks)
}

/// Fits KPCA with the symmetric Nyström method on the training files `train`: pass 1, pass 2
/// (the landmark rows only), the solve on the landmark rows. Memory `O(n (nnz/row + n) + chunk)`.
/// Uses `params.rank`, `row_landmarks`, `rows`, `bandwidth`, `chunk_rows` and `seed`.
pub fn fit_kpca(
    train: &[LibsvmSource],
    params: &ValidStreamingParams,
    progress: &mut ProgressFn<'_>,
) -> Result<FittedKpca> {
    let (plan, landmarks) = plan_and_landmarks(train, params, Method::Kpca, progress)?;
    plan.solve_kpca(&landmarks)
}

impl<E: PartialModel> Fitted<E> {
    /// Pass 3 over the training files (the same `train` as the fit) and the classifier solve:
    /// the column normalisation and the ridge classifier (`ridge` `λ`; the positive class is
    /// `positive_label`, or the larger of exactly two training labels).
    pub fn train(
        &self,
        train: &[LibsvmSource],
        ridge: f64,
        positive_label: Option<f64>,
        progress: &mut ProgressFn<'_>,
    ) -> Result<Trained<E>> {
        need_files("train", train)?;
        let labels = self.label_rule(positive_label)?;
        let parts = train
            .iter()
            .enumerate()
            .map(|(f, s)| self.train_reporting(f, PartRows::File(s), labels, progress))
            .collect::<Result<Vec<_>>>()?;
        let state = merge_in_order(parts, TrainPartial::merge)?.unwrap_or_else(|| self.empty_train());
        self.finish(&state, ridge, labels)
    }
}

impl<E: PartialModel> Trained<E> {
    /// Pass 4 over the test files: the classifier's scores, sorted per class
    /// ([`ScorePartial::auroc`] gives the AUROC). Test files are read with the model's feature
    /// count.
    pub fn score(&self, test: &[LibsvmSource], progress: &mut ProgressFn<'_>) -> Result<ScorePartial> {
        need_files("test", test)?;
        let parts = test
            .iter()
            .enumerate()
            .map(|(f, s)| {
                let (state, _) = self.score_reporting(f, PartRows::File(s), false, progress)?;
                if state.rows() == 0 {
                    return Err(s.empty_error());
                }
                Ok(state)
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(merge_in_order(parts, ScorePartial::merge)?.unwrap_or_default())
    }
}

/// Parameters of [`run_pipeline`].
#[derive(Debug, Clone, PartialEq)]
pub struct PipelineParams {
    /// The Nyström fit.
    pub model: StreamingParams,
    /// Ridge `λ > 0` of the classifier (on standardised features).
    pub ridge: f64,
    /// The positive label; `None`: the larger of exactly two training labels.
    pub positive_label: Option<f64>,
}

/// Everything [`run_pipeline`] measured, and the trained model.
#[derive(Debug, Clone)]
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
    /// Landmark rows `n` (global row ids, increasing).
    pub row_landmarks: Vec<usize>,
    /// Landmark columns `m` (KSVD; 0 for KPCA).
    pub col_landmarks: usize,
    /// Compatibility side (KSVD).
    pub side: Option<CompatSide>,
    /// The classifier on normalised embeddings.
    pub classifier: LinearClassifier,
    /// Seconds of passes 1 and 2 and the landmark solve.
    pub fit_seconds: f64,
    /// Seconds of pass 3 and the classifier solve.
    pub train_seconds: f64,
    /// Seconds of pass 4 and the AUROC.
    pub score_seconds: f64,
    /// The trained model (what `ksvd-stream run --out DIR` saves).
    pub model: TrainedModel,
}

/// Fits `method` on the training files, trains the ridge classifier and scores the test files
/// (read with the training feature count): passes over the training files 3 (plus one width
/// scan per file when the feature count is not given), one over the test files.
pub fn run_pipeline(
    method: Method,
    train: &[LibsvmSource],
    test: &[LibsvmSource],
    params: &PipelineParams,
    progress: &mut ProgressFn<'_>,
) -> Result<PipelineOutcome> {
    let valid: ValidStreamingParams = params.model.clone().check()?;
    match method {
        Method::Ksvd => {
            let t0 = Instant::now();
            let fitted = fit_ksvd(train, &valid, progress)?;
            let side = Some(fitted.model().side());
            let cols = fitted.model().col_landmarks().len();
            finish_pipeline(
                method,
                fitted,
                t0,
                (side, cols),
                train,
                test,
                params,
                |t| TrainedModel::Ksvd(Box::new(t)),
                progress,
            )
        }
        Method::Kpca => {
            let t0 = Instant::now();
            let fitted = fit_kpca(train, &valid, progress)?;
            finish_pipeline(
                method,
                fitted,
                t0,
                (None, 0),
                train,
                test,
                params,
                |t| TrainedModel::Kpca(Box::new(t)),
                progress,
            )
        }
    }
}

/// Passes 3 and 4 of [`run_pipeline`] for either model.
#[allow(clippy::too_many_arguments)]
fn finish_pipeline<E: PartialModel>(
    method: Method,
    fitted: Fitted<E>,
    t0: Instant,
    (side, col_landmarks): (Option<CompatSide>, usize),
    train: &[LibsvmSource],
    test: &[LibsvmSource],
    params: &PipelineParams,
    wrap: fn(Trained<E>) -> TrainedModel,
    progress: &mut ProgressFn<'_>,
) -> Result<PipelineOutcome> {
    let fit_seconds = t0.elapsed().as_secs_f64();
    let t1 = Instant::now();
    let trained = fitted.train(train, params.ridge, params.positive_label, progress)?;
    let train_seconds = t1.elapsed().as_secs_f64();
    let t2 = Instant::now();
    let scores = trained.score(test, progress)?;
    let auroc = scores.auroc()?;
    let score_seconds = t2.elapsed().as_secs_f64();
    let model = trained.model();
    let summary = model.scan_summary();
    Ok(PipelineOutcome {
        method,
        auroc,
        train_rows: summary.rows,
        test_rows: scores.rows(),
        features: summary.features,
        train_nnz: summary.nnz,
        rank: model.rank(),
        gamma: model.bandwidth(),
        row_landmarks: model.landmark_rows().to_vec(),
        col_landmarks,
        side,
        classifier: trained.classifier().clone(),
        fit_seconds,
        train_seconds,
        score_seconds,
        model: wrap(trained),
    })
}
