//! Regression error and the summaries of a metric over seeds or repeats (mean and std, median).
use crate::error::{check_len, check_nonempty, MetricsError, Result};

/// Root mean squared error `sqrt(mean((y − ŷ)²))`, in the units of `y`.
///
/// Errors: empty inputs, inputs of different lengths, or a non-finite mean squared error.
pub fn rmse(y_true: &[f64], y_pred: &[f64]) -> Result<f64> {
    check_len("RMSE predictions", y_true.len(), y_pred.len())?;
    check_nonempty("RMSE targets", y_true.len())?;
    let mse = y_true.iter().zip(y_pred).map(|(a, b)| (a - b) * (a - b)).sum::<f64>() / y_true.len() as f64;
    if !mse.is_finite() {
        return Err(MetricsError::NonFinite {
            what: "RMSE mean squared error",
            index: 0,
            value: mse,
        });
    }
    Ok(mse.sqrt())
}

/// Mean and sample standard deviation of `values` (`n − 1` in the denominator, Bessel's
/// correction; `0` for a single value). `None` for an empty slice. This is the `std` of every
/// result row that summarises seeds.
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

/// Median of `values`: the middle value of the sorted values for an odd count, the mean of the
/// two middle ones (`0.5 (a + b)`) for an even count; `None` for an empty slice. Values are
/// ordered by IEEE total order ([`f64::total_cmp`]), so a NaN sorts above every number. The
/// summary of timing repeats, robust to a slow outlier.
pub fn median(values: &[f64]) -> Option<f64> {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(v[n / 2]),
        _ => Some(0.5 * (v[n / 2 - 1] + v[n / 2])),
    }
}

#[cfg(test)]
mod tests {
    // A failed unwrap in a test is a test failure with a backtrace, which is what we want here.
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn rmse_by_hand() {
        // errors 1, -2, 2 -> mean square 3 -> sqrt 3.
        assert!((rmse(&[1.0, 2.0, 3.0], &[2.0, 0.0, 5.0]).unwrap() - 3f64.sqrt()).abs() < 1e-15);
        assert_eq!(rmse(&[4.0], &[4.0]).unwrap(), 0.0);
        assert!(matches!(
            rmse(&[1.0], &[1.0, 2.0]),
            Err(MetricsError::LengthMismatch { .. })
        ));
        assert!(matches!(rmse(&[], &[]), Err(MetricsError::Empty { .. })));
        assert!(matches!(rmse(&[1.0], &[f64::NAN]), Err(MetricsError::NonFinite { .. })));
    }

    #[test]
    fn mean_std_by_hand() {
        // mean 2.5; squared deviations 2.25 + 0.25 + 0.25 + 2.25 = 5, over n - 1 = 3.
        let (m, s) = mean_std(&[1.0, 2.0, 3.0, 4.0]).unwrap();
        assert_eq!(m, 2.5);
        assert!((s - (5.0f64 / 3.0).sqrt()).abs() < 1e-15);
        assert_eq!(mean_std(&[1.0, 3.0]), Some((2.0, 2f64.sqrt())));
        assert_eq!(mean_std(&[7.0]), Some((7.0, 0.0)));
        assert_eq!(mean_std(&[]), None);
    }

    #[test]
    fn median_by_hand() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        // Even count: the mean of the two middle values 2 and 3.
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[7.0]), Some(7.0));
        assert_eq!(median(&[]), None);
        // One slow outlier does not move it.
        assert_eq!(median(&[1.0, 1.0, 1000.0]), Some(1.0));
        // NaN sorts last.
        assert_eq!(median(&[f64::NAN, 1.0, 2.0]), Some(2.0));
    }
}
