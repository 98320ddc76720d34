//! # ksvd-metrics: every evaluation metric of ksvd-rs, in one place
//!
//! The tables of the paper score embeddings with a handful of metrics; each is defined here
//! once and every other crate (and `xtask`) calls it:
//!
//! | metric | function | used by |
//! |---|---|---|
//! | accuracy `#{ŷ = y} / n` | [`accuracy`] | Table 3 (`ksvd-general`), LS-SVM |
//! | micro/macro F1, multi-class and multi-label | [`f1_multiclass`], [`f1_multilabel`] | Table 1 (`ksvd-graph-tasks`, `ksvd-lssvm`) |
//! | AUROC (Mann–Whitney, mid-rank ties) | [`auroc`] | Table 3, streaming |
//! | NMI (arithmetic normalisation, as scikit-learn) | [`nmi`], [`mutual_info`], [`entropy`] | Table 2 (`ksvd-bicluster`, `ksvd-baselines`) |
//! | RMSE `sqrt(mean((y − ŷ)²))` | [`rmse`] | Table 3 (regression) |
//! | mean and sample std over seeds (`n − 1`) | [`mean_std`] | result rows |
//! | median (mean of the middle two for an even count) | [`median`] | timing repeats, landmark errors over seeds |
//!
//! Conventions, stated once:
//! * Argument order is truth-first for labelings (`y_true`, `y_pred`) and **scores first** for
//!   AUROC (`auroc(scores, positive)`).
//! * F1 per class is `2 tp / (2 tp + fp + fn)`; micro pools the counts, macro averages the
//!   classes. A class with `tp = fp = fn = 0` is `0/0`; [`ZeroDivision`] says whether it scores
//!   0, 1 or is left out (scikit-learn on integer labels leaves it out, on indicator matrices
//!   scores it 0).
//! * AUROC counts ties as one half (scikit-learn's `roc_auc_score`).
//! * NMI uses natural logs and `(H(U) + H(V)) / 2` in the denominator; label values are
//!   arbitrary identifiers.
//! * The `std` of a summary over seeds is the sample standard deviation (`n − 1`).
//!
//! Every function checks its input and returns a [`MetricsError`] naming the problem instead of
//! panicking.
//!
//! ```
//! use ksvd_metrics::{accuracy, auroc, f1_multiclass, nmi, ZeroDivision};
//! let (y, y_hat) = ([0, 0, 1, 1, 2, 2], [0, 1, 1, 1, 0, 2]);
//! assert!((accuracy(&y, &y_hat)? - 4.0 / 6.0).abs() < 1e-15);
//! let f1 = f1_multiclass(&y, &y_hat, 3, ZeroDivision::Zero)?;
//! assert!((f1.micro_f1 - 4.0 / 6.0).abs() < 1e-15); // micro-F1 = accuracy for single labels
//! assert_eq!(auroc(&[0.1, 0.9], &[false, true])?, 1.0);
//! assert_eq!(nmi(&[0, 0, 1, 1], &[1, 1, 0, 0])?, 1.0);
//! # Ok::<(), ksvd_metrics::MetricsError>(())
//! ```
mod auroc;
mod classification;
mod error;
mod nmi;
mod regression;

pub use auroc::{auroc, average_precision};
pub use classification::{
    accuracy, f1_multiclass, f1_multilabel, label_counts, label_indicator, F1Scores, ZeroDivision,
};
pub use error::{MetricsError, Result};
pub use nmi::{entropy, mutual_info, nmi};
pub use regression::{mean_std, median, rmse};
