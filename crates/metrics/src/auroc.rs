//! The area under the ROC curve of a binary scoring, ties counted one half.
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
    check_len("AUROC labels", scores.len(), positive.len())?;
    check_nonempty("AUROC scores", scores.len())?;
    check_finite("AUROC scores", scores)?;
    let n_pos = positive.iter().filter(|&&p| p).count();
    let n_neg = positive.len() - n_pos;
    if n_pos == 0 || n_neg == 0 {
        return Err(MetricsError::SingleClass {
            positives: n_pos,
            negatives: n_neg,
        });
    }
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

#[cfg(test)]
mod tests {
    // A failed unwrap in a test is a test failure with a backtrace, which is what we want here.
    #![allow(clippy::unwrap_used)]
    use super::*;

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
