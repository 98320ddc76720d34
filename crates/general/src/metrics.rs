//! Downstream metrics: accuracy, AUROC (ties handled) and RMSE, and the mean/std over seeds.
use crate::error::{GeneralError, Result};

fn check_len(what: &'static str, a: usize, b: usize) -> Result<()> {
    if a != b {
        return Err(GeneralError::ShapeMismatch {
            what,
            expected: a.to_string(),
            got: b.to_string(),
        });
    }
    if a == 0 {
        return Err(GeneralError::UndefinedMetric {
            metric: what,
            reason: "no samples".into(),
        });
    }
    Ok(())
}

/// Fraction of samples whose predicted class equals the true class.
pub fn accuracy(y_true: &[usize], y_pred: &[usize]) -> Result<f64> {
    check_len("accuracy", y_true.len(), y_pred.len())?;
    let hits = y_true.iter().zip(y_pred).filter(|(a, b)| a == b).count();
    Ok(hits as f64 / y_true.len() as f64)
}

/// Area under the ROC curve of `scores` for the binary labels `positive` (`true` = positive class).
///
/// Computed as the Mann–Whitney statistic with mid-ranks, so ties count one half:
/// `AUROC = (Σ_{i ∈ P} rank_i − |P| (|P| + 1) / 2) / (|P| |N|)`, where `rank_i` is the 1-based
/// average rank of `scores[i]` among all scores. This equals the probability that a random
/// positive scores above a random negative, plus half the probability of a tie (the trapezoidal
/// area under the ROC curve, as scikit-learn's `roc_auc_score`). Fails when only one class is
/// present or a score is not finite.
pub fn auroc(positive: &[bool], scores: &[f64]) -> Result<f64> {
    check_len("AUROC", positive.len(), scores.len())?;
    if let Some(i) = scores.iter().position(|s| !s.is_finite()) {
        return Err(GeneralError::NonFinite {
            what: "AUROC scores",
            detail: format!("score {i} = {}", scores[i]),
        });
    }
    let n_pos = positive.iter().filter(|&&p| p).count();
    let n_neg = positive.len() - n_pos;
    if n_pos == 0 || n_neg == 0 {
        return Err(GeneralError::UndefinedMetric {
            metric: "AUROC",
            reason: format!("needs both classes, got {n_pos} positives and {n_neg} negatives"),
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

/// Root mean squared error `sqrt(mean((y − ŷ)²))`.
pub fn rmse(y_true: &[f64], y_pred: &[f64]) -> Result<f64> {
    check_len("RMSE", y_true.len(), y_pred.len())?;
    let mse = y_true.iter().zip(y_pred).map(|(a, b)| (a - b) * (a - b)).sum::<f64>() / y_true.len() as f64;
    if !mse.is_finite() {
        return Err(GeneralError::NonFinite {
            what: "RMSE",
            detail: format!("mean squared error {mse}"),
        });
    }
    Ok(mse.sqrt())
}

/// Mean and sample standard deviation (`n − 1` in the denominator; `0` for a single value).
/// `None` for an empty slice.
pub fn mean_std(values: &[f64]) -> Option<(f64, f64)> {
    if values.is_empty() {
        return None;
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    if values.len() == 1 {
        return Some((mean, 0.0));
    }
    let var = values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (n - 1.0);
    Some((mean, var.sqrt()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accuracy_by_hand() {
        assert_eq!(accuracy(&[0, 1, 1, 0], &[0, 1, 0, 0]).unwrap(), 0.75);
        assert!(accuracy(&[0], &[0, 1]).is_err());
        assert!(accuracy(&[], &[]).is_err());
    }

    #[test]
    fn auroc_by_hand_without_ties() {
        // Perfect, reversed, and one swapped pair out of 2 x 2 = 4.
        assert_eq!(auroc(&[false, false, true, true], &[0.1, 0.2, 0.3, 0.4]).unwrap(), 1.0);
        assert_eq!(auroc(&[true, true, false, false], &[0.1, 0.2, 0.3, 0.4]).unwrap(), 0.0);
        assert_eq!(auroc(&[false, true, false, true], &[0.1, 0.2, 0.3, 0.4]).unwrap(), 0.75);
    }

    #[test]
    fn auroc_by_hand_with_ties() {
        // All scores equal: every positive/negative pair is a tie, AUROC = 1/2.
        assert_eq!(auroc(&[true, false, true, false], &[0.5; 4]).unwrap(), 0.5);
        // Pairs (P = {a: 0.8, b: 0.5}, N = {c: 0.5, d: 0.2}): a>c, a>d, b=c (1/2), b>d: 3.5 / 4.
        assert_eq!(
            auroc(&[true, true, false, false], &[0.8, 0.5, 0.5, 0.2]).unwrap(),
            0.875
        );
        // P = {0.35, 0.8, 0.4}, N = {0.1, 0.4, 0.4}: 0.35 beats 0.1 (1); 0.8 beats all (3);
        // 0.4 beats 0.1 and ties 0.4 twice (1 + 1/2 + 1/2): 6 of 9 pairs.
        let a = auroc(
            &[false, false, true, true, true, false],
            &[0.1, 0.4, 0.35, 0.8, 0.4, 0.4],
        )
        .unwrap();
        assert!((a - 6.0 / 9.0).abs() < 1e-15);
    }

    #[test]
    fn auroc_is_invariant_to_monotone_maps() {
        let labels = [true, false, true, true, false, false, true];
        let s = [0.3, -1.0, 2.0, 0.3, 0.3, 5.0, -0.5];
        let t: Vec<f64> = s.iter().map(|v: &f64| v.exp() * 3.0 + 1.0).collect();
        assert_eq!(auroc(&labels, &s).unwrap(), auroc(&labels, &t).unwrap());
        let flipped: Vec<bool> = labels.iter().map(|l| !l).collect();
        assert!((auroc(&labels, &s).unwrap() + auroc(&flipped, &s).unwrap() - 1.0).abs() < 1e-15);
    }

    #[test]
    fn auroc_undefined_cases() {
        assert!(matches!(
            auroc(&[true, true], &[0.1, 0.2]),
            Err(GeneralError::UndefinedMetric { .. })
        ));
        assert!(matches!(
            auroc(&[true, false], &[0.1, f64::NAN]),
            Err(GeneralError::NonFinite { .. })
        ));
    }

    proptest::proptest! {
        /// Against the definition: the fraction of (positive, negative) pairs ranked correctly,
        /// ties counting 1/2, by brute force over all pairs. Scores come from a small integer
        /// range so that ties are frequent.
        #[test]
        fn auroc_equals_pair_counting(pairs in proptest::collection::vec((0i32..6, proptest::bool::ANY), 2..40)) {
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
            match auroc(&labels, &scores) {
                Ok(a) => proptest::prop_assert!((a - won / total).abs() < 1e-12),
                Err(_) => proptest::prop_assert!(total == 0.0),
            }
        }
    }

    #[test]
    fn rmse_by_hand() {
        // errors 1, -2, 2 -> mean square 3 -> sqrt 3.
        assert!((rmse(&[1.0, 2.0, 3.0], &[2.0, 0.0, 5.0]).unwrap() - 3f64.sqrt()).abs() < 1e-15);
        assert_eq!(rmse(&[4.0], &[4.0]).unwrap(), 0.0);
    }

    #[test]
    fn mean_std_by_hand() {
        let (m, s) = mean_std(&[1.0, 2.0, 3.0, 4.0]).unwrap();
        assert_eq!(m, 2.5);
        assert!((s - (5.0f64 / 3.0).sqrt()).abs() < 1e-15);
        assert_eq!(mean_std(&[7.0]), Some((7.0, 0.0)));
        assert_eq!(mean_std(&[]), None);
    }
}
