//! The streaming ridge classifier equals the in-memory one (independent pseudo-inverse route),
//! directly and through a training pass over a file.
#![allow(clippy::unwrap_used, clippy::expect_used)]
mod common;

use common::temp_file;
use ksvd_linalg::dense;
use ksvd_linalg::random::{gaussian_matrix, rng_from_seed};
use ksvd_streaming::{
    fit_ksvd, fit_ridge_in_memory, train_pass, Embedding, LabelRule, LibsvmSource, RidgeAccumulator, StreamingParams,
};
use ndarray::{s, Array1, Array2, Axis};

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
    for lambda in [0.0, 1e-2, 1.0] {
        let mut acc = RidgeAccumulator::new(d);
        for start in (0..n).step_by(37) {
            let end = (start + 37).min(n);
            acc.add(f.slice(s![start..end, ..]), &y[start..end]).unwrap();
        }
        assert_eq!(acc.count(), n);
        let ours = acc.solve(lambda).unwrap();
        let reference = fit_ridge_in_memory(f.view(), &y, lambda).unwrap();
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
fn training_pass_equals_in_memory_ridge_on_embeddings() {
    let (_dir, path, x, labels) = temp_file(400, 30, 0.3, 12);
    let params = StreamingParams::new(6, 60)
        .col_landmarks(20)
        .chunk_rows(41)
        .seed(1)
        .check()
        .unwrap();
    let source = LibsvmSource::new(&path);
    let mut model = fit_ksvd(&source, &params, &mut |_| {}).unwrap();
    let rule = LabelRule { positive: 1.0 };
    let trained = train_pass(&source, &mut model, rule, 1e-3, 41, &mut |_| {}).unwrap();
    assert_eq!(trained.rows, 400);
    assert_eq!(trained.positives, labels.iter().filter(|&&l| l > 0.0).count());
    let e = model.embed(&x).unwrap();
    // Columns of the normalised embeddings have unit norm.
    for c in e.axis_iter(Axis(1)) {
        assert!((c.dot(&c) - 1.0).abs() <= 1e3 * f64::EPSILON);
    }
    let y: Vec<f64> = labels.iter().map(|&l| rule.target(l)).collect();
    let reference = fit_ridge_in_memory(e.view(), &y, 1e-3).unwrap();
    let a: Array1<f64> = trained.classifier.decision(e.view());
    let b = reference.decision(e.view());
    let tol = 1e3 * f64::EPSILON * (x.nrows() as f64).sqrt() * condition(&e, 1e-3);
    let err = (&a - &b).iter().fold(0.0f64, |m, &v| m.max(v.abs()));
    assert!(err <= tol, "decisions differ by {err:e} > {tol:e}");
}
