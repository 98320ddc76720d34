//! Ranking metrics of a binary scoring: the area under the ROC curve (ties counted one half)
//! and the average precision.
use crate::error::{check_finite, check_len, check_nonempty, MetricsError, Result};

/// Area under the ROC curve of `scores` for the binary labels `positive` (`true` = positive class;
/// larger scores should mean "more positive"). One argument order everywhere: scores first.
///
/// Computed as the Mann–Whitney statistic with mid-ranks, so ties count one half:
/// `AUROC = (Σ_{i ∈ P} rank_i − |P| (|P| + 1) / 2) / (|P| |N|)`, where `rank_i` is the 1-based
/// average rank of `scores[i]` among all scores. This equals the probability that a random
/// positive scores above a random negative, plus half the probability of a tie (the trapezoidal
/// area under the ROC curve, as scikit-learn's `roc_auc_score`). The value lies in `[0, 1]`, is
/// invariant under strictly increasing maps of the scores, and `auroc(s, p) + auroc(s, !p) = 1`.
///
/// Errors: inputs of different lengths, empty inputs, a non-finite score, or only one class
/// present ([`MetricsError::SingleClass`]).
///
/// ```
/// // Positives {0.35, 0.8}, negatives {0.1, 0.4}: 3 of the 4 pairs are ordered correctly.
/// let a = ksvd_metrics::auroc(&[0.1, 0.4, 0.35, 0.8], &[false, false, true, true])?;
/// assert_eq!(a, 0.75);
/// # Ok::<(), ksvd_metrics::MetricsError>(())
/// ```
pub fn auroc(scores: &[f64], positive: &[bool]) -> Result<f64> {
    let (n_pos, n_neg) = class_counts(("AUROC labels", "AUROC scores"), scores, positive)?;
    let mut order: Vec<usize> = (0..scores.len()).collect();
    order.sort_by(|&a, &b| scores[a].total_cmp(&scores[b]));
    let mut rank_sum_pos = 0.0;
    let mut k = 0;
    while k < order.len() {
        let mut e = k;
        while e + 1 < order.len() && scores[order[e + 1]] == scores[order[k]] {
            e += 1;
        }
        // Positions k..=e (0-based) share the average 1-based rank.
        let mid_rank = (k + e) as f64 / 2.0 + 1.0;
        let pos_in_group = order[k..=e].iter().filter(|&&i| positive[i]).count();
        rank_sum_pos += mid_rank * pos_in_group as f64;
        k = e + 1;
    }
    let (p, n) = (n_pos as f64, n_neg as f64);
    Ok((rank_sum_pos - p * (p + 1.0) / 2.0) / (p * n))
}

/// Average precision of `scores` for the binary labels `positive`, scikit-learn's
/// `average_precision_score`: `AP = Σ_k (R_k − R_{k−1}) P_k` over the distinct scores in
/// decreasing order as thresholds, `P_k` and `R_k` the precision and recall of the scores at or
/// above the `k`-th threshold (no interpolation). Tied scores enter together, so AP does not
/// depend on the order of ties. The value lies in `(0, 1]`; it is 1 exactly when every positive
/// scores above every negative.
///
/// Errors: as [`auroc`] (a scoring without positives or without negatives has no AP either).
///
/// ```
/// // Ranked 0.8 (P), 0.4 (N), 0.35 (P), 0.1 (N): AP = 1/2 * 1 + 1/2 * 2/3.
/// let ap = ksvd_metrics::average_precision(&[0.1, 0.4, 0.35, 0.8], &[false, false, true, true])?;
/// assert!((ap - 5.0 / 6.0).abs() < 1e-15);
/// # Ok::<(), ksvd_metrics::MetricsError>(())
/// ```
pub fn average_precision(scores: &[f64], positive: &[bool]) -> Result<f64> {
    let (n_pos, _) = class_counts(
        ("average precision labels", "average precision scores"),
        scores,
        positive,
    )?;
    let mut order: Vec<usize> = (0..scores.len()).collect();
    order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]));
    let (mut tp, mut seen, mut ap) = (0usize, 0usize, 0.0);
    let mut k = 0;
    while k < order.len() {
        let mut e = k;
        while e + 1 < order.len() && scores[order[e + 1]] == scores[order[k]] {
            e += 1;
        }
        let new_tp = order[k..=e].iter().filter(|&&i| positive[i]).count();
        tp += new_tp;
        seen += e - k + 1;
        ap += (new_tp as f64 / n_pos as f64) * (tp as f64 / seen as f64);
        k = e + 1;
    }
    Ok(ap)
}

/// The positives and negatives of a binary scoring, checked: equal lengths, not empty, finite
/// scores, both classes present.
/// `what` names the labels and the scores in messages.
fn class_counts(what: (&'static str, &'static str), scores: &[f64], positive: &[bool]) -> Result<(usize, usize)> {
    check_len(what.0, scores.len(), positive.len())?;
    check_nonempty(what.1, scores.len())?;
    check_finite(what.1, scores)?;
    let n_pos = positive.iter().filter(|&&p| p).count();
    let n_neg = positive.len() - n_pos;
    if n_pos == 0 || n_neg == 0 {
        return Err(MetricsError::SingleClass {
            positives: n_pos,
            negatives: n_neg,
        });
    }
    Ok((n_pos, n_neg))
}

#[cfg(test)]
mod tests {
    // A failed unwrap in a test is a test failure with a backtrace, which is what we want here.
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// Values of scikit-learn 1.x's `average_precision_score` on the same inputs.
    #[test]
    fn average_precision_by_hand() {
        let ap = |s: &[f64], p: &[bool]| average_precision(s, p).unwrap();
        assert_eq!(ap(&[0.1, 0.2, 0.3, 0.4], &[false, false, true, true]), 1.0);
        // Ranked N, N, P, P: 1/2 * 1/3 + 1/2 * 2/4.
        assert!((ap(&[0.1, 0.2, 0.3, 0.4], &[true, true, false, false]) - 5.0 / 12.0).abs() < 1e-15);
        // One tie of a positive and a negative at the top: both enter at once, P = 1/2.
        assert!((ap(&[0.9, 0.9, 0.1], &[true, false, false]) - 0.5).abs() < 1e-15);
        assert!((ap(&[0.5; 4], &[true, false, true, false]) - 0.5).abs() < 1e-15);
        assert!(matches!(
            average_precision(&[0.1, 0.2], &[true, true]),
            Err(MetricsError::SingleClass { .. })
        ));
        assert!(average_precision(&[f64::NAN, 0.2], &[true, false]).is_err());
    }

    #[test]
    fn by_hand_without_ties() {
        // Perfect, reversed, and one swapped pair out of 2 x 2 = 4.
        assert_eq!(auroc(&[0.1, 0.2, 0.3, 0.4], &[false, false, true, true]).unwrap(), 1.0);
        assert_eq!(auroc(&[0.1, 0.2, 0.3, 0.4], &[true, true, false, false]).unwrap(), 0.0);
        assert_eq!(auroc(&[0.1, 0.2, 0.3, 0.4], &[false, true, false, true]).unwrap(), 0.75);
        assert_eq!(
            auroc(&[0.1, 0.4, 0.35, 0.8], &[false, false, true, true]).unwrap(),
            0.75
        );
        assert_eq!(auroc(&[3.0, 2.0, 1.0], &[true, false, false]).unwrap(), 1.0);
        assert_eq!(auroc(&[3.0, 2.0, 1.0], &[false, false, true]).unwrap(), 0.0);
    }

    #[test]
    fn by_hand_with_ties() {
        // All scores equal: every positive/negative pair is a tie, AUROC = 1/2.
        assert_eq!(auroc(&[0.5; 4], &[true, false, true, false]).unwrap(), 0.5);
        assert_eq!(auroc(&[1.0, 1.0, 1.0], &[true, false, false]).unwrap(), 0.5);
        // Pairs (P = {a: 0.8, b: 0.5}, N = {c: 0.5, d: 0.2}): a>c, a>d, b=c (1/2), b>d: 3.5 / 4.
        assert_eq!(
            auroc(&[0.8, 0.5, 0.5, 0.2], &[true, true, false, false]).unwrap(),
            0.875
        );
        // P = {0.35, 0.8, 0.4}, N = {0.1, 0.4, 0.4}: 0.35 beats 0.1 (1); 0.8 beats all (3);
        // 0.4 beats 0.1 and ties 0.4 twice (1 + 1/2 + 1/2): 6 of 9 pairs.
        let a = auroc(
            &[0.1, 0.4, 0.35, 0.8, 0.4, 0.4],
            &[false, false, true, true, true, false],
        )
        .unwrap();
        assert!((a - 6.0 / 9.0).abs() < 1e-15);
    }

    #[test]
    fn invariant_to_monotone_maps_and_complementary_under_label_flip() {
        let labels = [true, false, true, true, false, false, true];
        let s = [0.3, -1.0, 2.0, 0.3, 0.3, 5.0, -0.5];
        let t: Vec<f64> = s.iter().map(|v: &f64| v.exp() * 3.0 + 1.0).collect();
        assert_eq!(auroc(&s, &labels).unwrap(), auroc(&t, &labels).unwrap());
        let flipped: Vec<bool> = labels.iter().map(|l| !l).collect();
        assert!((auroc(&s, &labels).unwrap() + auroc(&s, &flipped).unwrap() - 1.0).abs() < 1e-15);
    }

    #[test]
    fn undefined_cases_are_typed_errors() {
        assert_eq!(
            auroc(&[0.1, 0.2], &[true, true]),
            Err(MetricsError::SingleClass {
                positives: 2,
                negatives: 0
            })
        );
        assert!(matches!(auroc(&[1.0], &[true]), Err(MetricsError::SingleClass { .. })));
        assert!(matches!(
            auroc(&[0.1, f64::NAN], &[true, false]),
            Err(MetricsError::NonFinite { index: 1, .. })
        ));
        assert!(matches!(
            auroc(&[0.1], &[true, false]),
            Err(MetricsError::LengthMismatch { .. })
        ));
        assert!(matches!(auroc(&[], &[]), Err(MetricsError::Empty { .. })));
    }

    proptest::proptest! {
        /// Against the definition: the fraction of (positive, negative) pairs ranked correctly,
        /// ties counting 1/2, by brute force over all pairs. Scores come from a small integer
        /// range so that ties are frequent.
        #[test]
        fn equals_pair_counting(pairs in proptest::collection::vec((0i32..6, proptest::bool::ANY), 2..60)) {
            let labels: Vec<bool> = pairs.iter().map(|p| p.1).collect();
            let scores: Vec<f64> = pairs.iter().map(|p| f64::from(p.0)).collect();
            let (mut won, mut total) = (0.0, 0.0);
            for (i, &pi) in labels.iter().enumerate() {
                for (j, &pj) in labels.iter().enumerate() {
                    if pi && !pj {
                        total += 1.0;
                        won += if scores[i] > scores[j] { 1.0 } else if scores[i] == scores[j] { 0.5 } else { 0.0 };
                    }
                }
            }
            match auroc(&scores, &labels) {
                Ok(a) => proptest::prop_assert!((a - won / total).abs() <= 4.0 * f64::EPSILON * scores.len() as f64),
                Err(_) => proptest::prop_assert!(total == 0.0),
            }
        }
    }
}
