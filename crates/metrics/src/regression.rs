//! Regression error and the summary of a metric over seeds.
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
}
