//! The streaming ridge classifier (`RidgeAccumulator`, on `ksvd_lssvm::PrimalStats`) equals an
//! in-memory ridge regression computed by an independent route (two-pass standardisation and the
//! pseudo-inverse of the augmented least-squares system), directly and through a training pass
//! over a file.
#![allow(clippy::unwrap_used, clippy::expect_used)]
mod common;

use common::temp_file;
use ksvd_linalg::dense;
use ksvd_linalg::random::{gaussian_matrix, rng_from_seed};
use ksvd_streaming::{
    fit_ksvd, Embedding, LabelRule, LibsvmSource, LinearClassifier, RidgeAccumulator, StreamingError, StreamingParams,
};
use ndarray::{s, Array1, Array2, ArrayView2, Axis};

/// `min (1/n) Σ (y − w·z − b)² + λ‖w‖²` on standardised columns `z` (columns with `σ ≈ 0` get
/// weight 0) by the pseudo-inverse of the augmented system `[Z 1; √(nλ) I 0]`, mapped back to
/// the original features: the reference of the streaming classifier.
fn ridge_in_memory(features: ArrayView2<'_, f64>, y: &[f64], lambda: f64) -> LinearClassifier {
    let (n, d) = features.dim();
    let mean = features.mean_axis(Axis(0)).unwrap();
    let centered = &features - &mean;
    let sd = centered.map_axis(Axis(0), |c| (c.dot(&c) / n as f64).sqrt());
    let top = sd.iter().copied().fold(0.0, f64::max);
    let keep: Vec<usize> = (0..d)
        .filter(|&a| sd[a] > 1e3 * f64::EPSILON * top && sd[a] > 0.0)
        .collect();
    let k = keep.len();
    let mut design = Array2::zeros((n + k, k + 1));
    let mut rhs = Array2::zeros((n + k, 1));
    for i in 0..n {
        for (p, &a) in keep.iter().enumerate() {
            design[[i, p]] = centered[[i, a]] / sd[a];
        }
        design[[i, k]] = 1.0;
        rhs[[i, 0]] = y[i];
    }
    for p in 0..k {
        design[[n + p, p]] = (n as f64 * lambda).sqrt();
    }
    let sol = dense::pinv(design.view(), 1e-13).unwrap().dot(&rhs);
    let mut weights = Array1::zeros(d);
    for (p, &a) in keep.iter().enumerate() {
        weights[a] = sol[[p, 0]] / sd[a];
    }
    let bias = sol[[k, 0]] - weights.dot(&mean);
    LinearClassifier { weights, bias }
}

fn condition(features: &Array2<f64>, lambda: f64) -> f64 {
    let n = features.nrows() as f64;
    let c = &features.view() - &features.mean_axis(Axis(0)).unwrap();
    let sd = c.map_axis(Axis(0), |col| (col.dot(&col) / n).sqrt());
    let z = &c / &sd;
    let mut corr = z.t().dot(&z) / n;
    for i in 0..corr.nrows() {
        corr[[i, i]] += lambda;
    }
    let sv = dense::singular_values(corr.view()).unwrap();
    sv[0] / sv[sv.len() - 1]
}

#[test]
fn streaming_ridge_equals_in_memory() {
    let (n, d) = (500, 6);
    let mut rng = rng_from_seed(8);
    let mut f = gaussian_matrix(&mut rng, n, d);
    for (k, mut col) in f.axis_iter_mut(Axis(1)).enumerate() {
        col *= 10f64.powi(k as i32 - 3);
        col += 1e3 * k as f64; // large means relative to the spreads
    }
    let noise = gaussian_matrix(&mut rng, n, 1);
    let y: Vec<f64> = (0..n)
        .map(|i| {
            if f[[i, 0]] * 1e3 - f[[i, 2]] * 10.0 + noise[[i, 0]] > 0.0 {
                1.0
            } else {
                -1.0
            }
        })
        .collect();
    for lambda in [1e-8, 1e-2, 1.0] {
        let mut acc = RidgeAccumulator::new(d);
        for start in (0..n).step_by(37) {
            let end = (start + 37).min(n);
            acc.add(f.slice(s![start..end, ..]), &y[start..end]).unwrap();
        }
        assert_eq!(acc.count(), n);
        let ours = acc.solve(lambda).unwrap();
        let reference = ridge_in_memory(f.view(), &y, lambda);
        let kappa = condition(&f, lambda);
        let scale = ours
            .weights
            .iter()
            .zip(f.axis_iter(Axis(1)))
            .map(|(w, c)| (w * c.std(0.0)).abs())
            .fold(1.0, f64::max);
        let tol = 1e3 * f64::EPSILON * (n as f64).sqrt() * kappa * scale;
        let a = ours.decision(f.view());
        let b = reference.decision(f.view());
        let err = (&a - &b).iter().fold(0.0f64, |m, &v| m.max(v.abs()));
        assert!(err <= tol, "lambda {lambda}: decisions differ by {err:e} > {tol:e}");
        for k in 0..d {
            let sd = f.column(k).std(0.0);
            assert!(
                ((ours.weights[k] - reference.weights[k]) * sd).abs() <= tol,
                "weight {k}"
            );
        }
    }
}

#[test]
fn a_ridge_that_is_not_positive_is_a_typed_error() {
    let mut acc = RidgeAccumulator::new(2);
    acc.add(
        ndarray::array![[1.0, 2.0], [3.0, 1.0], [0.0, 1.0]].view(),
        &[1.0, -1.0, 1.0],
    )
    .unwrap();
    for bad in [0.0, -1.0, f64::NAN] {
        assert!(matches!(
            acc.solve(bad),
            Err(StreamingError::InvalidParameter { name: "ridge", .. })
        ));
    }
    assert!(RidgeAccumulator::new(2).solve(1.0).is_err(), "no rows");
}

#[test]
fn training_pass_equals_in_memory_ridge_on_embeddings() {
    let (_dir, path, x, labels) = temp_file(400, 30, 0.3, 12);
    let params = StreamingParams::new(6, 60)
        .col_landmarks(20)
        .chunk_rows(41)
        .seed(1)
        .check()
        .unwrap();
    let source = [LibsvmSource::new(&path)];
    let fitted = fit_ksvd(&source, &params, &mut |_| {}).unwrap();
    let trained = fitted.train(&source, 1e-3, Some(1.0), &mut |_| {}).unwrap();
    let rule = LabelRule { positive: 1.0 };
    let e = trained.model().embed(&x).unwrap();
    // Columns of the normalised embeddings have unit norm.
    for c in e.axis_iter(Axis(1)) {
        assert!((c.dot(&c) - 1.0).abs() <= 1e3 * f64::EPSILON);
    }
    let y: Vec<f64> = labels.iter().map(|&l| rule.target(l)).collect();
    let reference = ridge_in_memory(e.view(), &y, 1e-3);
    let a: Array1<f64> = trained.classifier().decision(e.view());
    let b = reference.decision(e.view());
    let tol = 1e3 * f64::EPSILON * (x.nrows() as f64).sqrt() * condition(&e, 1e-3);
    let err = (&a - &b).iter().fold(0.0f64, |m, &v| m.max(v.abs()));
    assert!(err <= tol, "decisions differ by {err:e} > {tol:e}");
}
