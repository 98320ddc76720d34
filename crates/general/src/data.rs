//! Train/test preparation of a UCI table: seeded split, imputation and (optional) standardisation,
//! all fitted on the training part only.
use ksvd_datasets::{ImputeStrategy, Imputer, TabularData, Task};
use ksvd_linalg::random::{rng_from_seed, sample_indices};
use ndarray::{Array1, Array2, Axis};
use rand::seq::SliceRandom;

use crate::error::{GeneralError, Result};

/// The downstream task of a prepared dataset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskKind {
    /// Classification into `classes` classes; targets are class indices stored as `f64`.
    Classification {
        /// Number of classes.
        classes: usize,
    },
    /// Regression on the raw target (never rescaled, so RMSE is in the target's units).
    Regression,
}

/// How a table becomes training and test matrices.
#[derive(Debug, Clone, PartialEq)]
pub struct Preprocessing {
    /// Fraction of the (possibly subsampled) rows held out for testing, in `(0, 1)`.
    pub test_fraction: f64,
    /// Standardise every feature column with the training mean and (population) standard
    /// deviation; a constant training column is only centred.
    pub standardize: bool,
    /// How missing numeric values are filled (nominal columns always use the training mode).
    pub impute: ImputeStrategy,
    /// Keep only this many rows (a seeded uniform subsample, drawn before the split); `None`
    /// keeps all.
    pub max_rows: Option<usize>,
}

impl Default for Preprocessing {
    fn default() -> Self {
        Preprocessing {
            test_fraction: 0.2,
            standardize: false,
            impute: ImputeStrategy::Mean,
            max_rows: None,
        }
    }
}

/// A dataset split into training and test parts, ready for the embeddings.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// Dataset name.
    pub name: String,
    /// Training features `X` (`N × M`, rows are samples).
    pub x_train: Array2<f64>,
    /// Training targets.
    pub y_train: Array1<f64>,
    /// Test features (same columns and preprocessing as `x_train`).
    pub x_test: Array2<f64>,
    /// Test targets.
    pub y_test: Array1<f64>,
    /// Classification or regression.
    pub task: TaskKind,
    /// Rows of the original table in the training part, in training order.
    pub train_rows: Vec<usize>,
    /// Rows of the original table in the test part, in test order.
    pub test_rows: Vec<usize>,
}

/// Splits, imputes and (optionally) standardises `data` with the split drawn from `seed`.
///
/// 1. With `max_rows = Some(k)` and more rows than `k`, a seeded uniform subsample of `k` rows.
/// 2. A seeded random permutation; the first `round(test_fraction · n)` rows (at least one, at
///    most `n − 2`) form the test set, the rest the training set (not stratified).
/// 3. Missing values (`NaN`: four in liver's A/G ratio, six in cholesterol's `ca`/`thal`) are
///    filled with the training mean (numeric) or the training mode (nominal columns).
/// 4. With `standardize`, `x ← (x − μ_train) / σ_train` column by column.
///
/// Nominal columns keep their stored codes as numbers (liver's gender `Female` = 0, `Male` = 1;
/// cholesterol's `cp`, `thal`, ... their UCI codes); nothing is one-hot encoded, so `M` is the
/// paper's column count.
pub fn prepare(data: &TabularData, prep: &Preprocessing, seed: u64) -> Result<Prepared> {
    if !(prep.test_fraction > 0.0 && prep.test_fraction < 1.0) {
        return Err(GeneralError::invalid(
            "test_fraction",
            prep.test_fraction,
            "a fraction in (0, 1)",
        ));
    }
    let task = match &data.task {
        Task::Classification { class_names } => TaskKind::Classification {
            classes: class_names.len(),
        },
        Task::Regression => TaskKind::Regression,
    };
    let n_all = data.features.nrows();
    let mut rng = rng_from_seed(seed);
    let mut rows: Vec<usize> = match prep.max_rows {
        Some(k) if k < n_all => sample_indices(&mut rng, n_all, k),
        _ => (0..n_all).collect(),
    };
    let n = rows.len();
    if n < 3 {
        return Err(GeneralError::Dataset {
            name: data.name.clone(),
            reason: format!("{n} rows, need at least 3 to split"),
        });
    }
    rows.shuffle(&mut rng);
    let n_test = ((prep.test_fraction * n as f64).round() as usize).clamp(1, n - 2);
    let test_rows = rows[..n_test].to_vec();
    let train_rows = rows[n_test..].to_vec();

    let imputer = Imputer::fit(data, &train_rows, prep.impute)?;
    let mut x_train = data.features.select(Axis(0), &train_rows);
    let mut x_test = data.features.select(Axis(0), &test_rows);
    imputer.transform(&mut x_train)?;
    imputer.transform(&mut x_test)?;
    if prep.standardize {
        let mean = x_train
            .mean_axis(Axis(0))
            .unwrap_or_else(|| Array1::zeros(x_train.ncols()));
        let std = x_train.std_axis(Axis(0), 0.0).mapv(|s| if s > 0.0 { s } else { 1.0 });
        for x in [&mut x_train, &mut x_test] {
            *x -= &mean;
            *x /= &std;
        }
    }
    for (what, x) in [("training features", &x_train), ("test features", &x_test)] {
        if let Some(((i, j), v)) = x.indexed_iter().find(|(_, v)| !v.is_finite()) {
            return Err(GeneralError::NonFinite {
                what,
                detail: format!("entry ({i}, {j}) = {v}"),
            });
        }
    }
    Ok(Prepared {
        name: data.name.clone(),
        y_train: data.target.select(Axis(0), &train_rows),
        y_test: data.target.select(Axis(0), &test_rows),
        x_train,
        x_test,
        task,
        train_rows,
        test_rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ksvd_datasets::ColumnKind;
    use ndarray::array;

    fn toy() -> TabularData {
        TabularData {
            name: "toy".into(),
            features: array![
                [1.0, 0.0],
                [2.0, f64::NAN],
                [3.0, 1.0],
                [4.0, 1.0],
                [5.0, 0.0],
                [6.0, 1.0],
                [7.0, 1.0],
                [8.0, 0.0],
                [9.0, 1.0],
                [10.0, 1.0]
            ],
            target: array![0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0],
            feature_names: vec!["a".into(), "sex".into()],
            columns: vec![
                ColumnKind::Numeric,
                ColumnKind::Nominal {
                    levels: vec!["Female".into(), "Male".into()],
                },
            ],
            task: Task::Classification {
                class_names: vec!["n".into(), "p".into()],
            },
        }
    }

    #[test]
    fn split_is_seeded_disjoint_and_complete() {
        let d = toy();
        let p = prepare(&d, &Preprocessing::default(), 4).unwrap();
        let q = prepare(&d, &Preprocessing::default(), 4).unwrap();
        assert_eq!(p.train_rows, q.train_rows);
        assert_eq!((p.x_train.nrows(), p.x_test.nrows()), (8, 2));
        let mut all: Vec<usize> = p.train_rows.iter().chain(&p.test_rows).cloned().collect();
        all.sort_unstable();
        assert_eq!(all, (0..10).collect::<Vec<_>>());
        // Row identity is kept: the first column equals original row + 1.
        for (r, &i) in p.train_rows.iter().enumerate() {
            assert_eq!(p.x_train[[r, 0]], (i + 1) as f64);
            assert_eq!(p.y_train[r], d.target[i]);
        }
    }

    #[test]
    fn imputation_and_standardisation_use_training_rows_only() {
        let d = toy();
        let prep = Preprocessing {
            standardize: true,
            ..Preprocessing::default()
        };
        let p = prepare(&d, &prep, 1).unwrap();
        assert!(p.x_train.iter().chain(p.x_test.iter()).all(|v| v.is_finite()));
        let mean = p.x_train.mean_axis(Axis(0)).unwrap();
        let std = p.x_train.std_axis(Axis(0), 0.0);
        let n = p.x_train.nrows() as f64;
        assert!(mean.iter().all(|m| m.abs() < 8.0 * n * f64::EPSILON));
        assert!(std.iter().all(|s| (s - 1.0).abs() < 8.0 * n * f64::EPSILON));
    }

    #[test]
    fn subsampling_and_bad_fraction() {
        let d = toy();
        let p = prepare(
            &d,
            &Preprocessing {
                max_rows: Some(5),
                ..Preprocessing::default()
            },
            2,
        )
        .unwrap();
        assert_eq!(p.x_train.nrows() + p.x_test.nrows(), 5);
        assert!(prepare(
            &d,
            &Preprocessing {
                test_fraction: 1.0,
                ..Preprocessing::default()
            },
            0
        )
        .is_err());
    }
}
