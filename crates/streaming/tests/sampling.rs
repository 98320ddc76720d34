//! Statistical checks of the very sparse projection: it preserves norms and inner products in
//! expectation, has the stated density, and is reproducible. Bounds are 5 standard deviations of
//! the exact (or, for inner products, the sample) variance: they fail for a biased
//! implementation. (The landmark sketch's uniformity is checked in `passes.rs`.)
#![allow(clippy::unwrap_used, clippy::expect_used)]
use ksvd_streaming::{ProjectionScaling, SparseProjection};

fn test_vector(dim: usize) -> (Vec<usize>, Vec<f64>) {
    let idx: Vec<usize> = (0..dim).filter(|k| k % 3 != 1).collect();
    let val: Vec<f64> = idx
        .iter()
        .map(|&k| 1.0 + (k % 7) as f64 * 0.5 - if k % 2 == 0 { 3.0 } else { 0.0 })
        .collect();
    (idx, val)
}

#[test]
fn sparse_projection_preserves_norms_in_expectation() {
    let (big_d, d, trials) = (400usize, 100usize, 2000u64);
    let (idx, val) = test_vector(big_d);
    let norm2: f64 = val.iter().map(|v| v * v).sum();
    let sum4: f64 = val.iter().map(|v| v.powi(4)).sum();
    for scaling in [ProjectionScaling::NormPreserving, ProjectionScaling::Unit] {
        let mut total = 0.0;
        let mut s = 0.0;
        for seed in 0..trials {
            let p = SparseProjection::new(big_d, d, None, scaling, seed).unwrap();
            s = 1.0 / p.density();
            let y = p.project(&idx, &val);
            total += y.dot(&y);
        }
        let sigma2 = match scaling {
            ProjectionScaling::NormPreserving => 1.0 / d as f64,
            ProjectionScaling::Unit => 1.0,
        };
        let expect = d as f64 * sigma2 * norm2;
        // Li, Hastie & Church (2006): Var ‖Rᵀv‖² = d σ⁴ (2‖v‖⁴ + (s − 3) Σ v⁴).
        let var = d as f64 * sigma2 * sigma2 * (2.0 * norm2 * norm2 + (s - 3.0) * sum4);
        let mean = total / trials as f64;
        let bound = 5.0 * (var / trials as f64).sqrt();
        assert!(
            (mean - expect).abs() <= bound,
            "{scaling:?}: mean {mean} vs {expect} ± {bound}"
        );
    }
}

#[test]
fn sparse_projection_preserves_inner_products_in_expectation() {
    let (big_d, d, trials) = (300usize, 60usize, 2000u64);
    let (iu, vu) = test_vector(big_d);
    let iv: Vec<usize> = (0..big_d).filter(|k| k % 2 == 0).collect();
    let vv: Vec<f64> = iv.iter().map(|&k| (k as f64 * 0.37).sin() + 0.5).collect();
    let mut dense_u = vec![0.0; big_d];
    let mut dense_v = vec![0.0; big_d];
    for (&k, &x) in iu.iter().zip(&vu) {
        dense_u[k] = x;
    }
    for (&k, &x) in iv.iter().zip(&vv) {
        dense_v[k] = x;
    }
    let want: f64 = dense_u.iter().zip(&dense_v).map(|(a, b)| a * b).sum();
    let samples: Vec<f64> = (0..trials)
        .map(|seed| {
            let p = SparseProjection::new(big_d, d, None, ProjectionScaling::NormPreserving, seed).unwrap();
            p.project(&iu, &vu).dot(&p.project(&iv, &vv))
        })
        .collect();
    let mean = samples.iter().sum::<f64>() / trials as f64;
    let var = samples.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (trials - 1) as f64;
    let bound = 5.0 * (var / trials as f64).sqrt();
    assert!((mean - want).abs() <= bound, "mean {mean} vs {want} ± {bound}");
}

#[test]
fn sparse_projection_density_and_reproducibility() {
    let (big_d, d) = (10_000usize, 500usize);
    let p = SparseProjection::new(big_d, d, None, ProjectionScaling::NormPreserving, 42).unwrap();
    assert!((p.density() - 0.01).abs() < 1e-15, "default density 1/sqrt(D)");
    let rows = 2000;
    let nnz: usize = (0..rows).map(|k| p.row(k).0.len()).sum();
    let trials = (rows * d) as f64;
    let (mean, sd) = (
        trials * p.density(),
        (trials * p.density() * (1.0 - p.density())).sqrt(),
    );
    assert!(
        (nnz as f64 - mean).abs() <= 5.0 * sd,
        "{nnz} nonzeros, expected {mean} ± {}",
        5.0 * sd
    );
    // Signs are balanced.
    let pos: usize = (0..rows).map(|k| p.row(k).1.iter().filter(|&&v| v > 0.0).count()).sum();
    let half = nnz as f64 / 2.0;
    assert!((pos as f64 - half).abs() <= 5.0 * (nnz as f64 / 4.0).sqrt());
    // Same seed, same matrix, whichever order rows are generated in; another seed differs.
    let q = SparseProjection::new(big_d, d, None, ProjectionScaling::NormPreserving, 42).unwrap();
    for k in [9999, 0, 517, 3] {
        assert_eq!(p.row(k), q.row(k));
    }
    let other = SparseProjection::new(big_d, d, None, ProjectionScaling::NormPreserving, 43).unwrap();
    assert_ne!(
        (0..20).map(|k| p.row(k)).collect::<Vec<_>>(),
        (0..20).map(|k| other.row(k)).collect::<Vec<_>>()
    );
    // Dense materialisation agrees with the rows.
    let small = SparseProjection::new(30, 8, Some(0.3), ProjectionScaling::Unit, 1).unwrap();
    let m = small.to_dense();
    for k in 0..30 {
        let (c, v) = small.row(k);
        for (&l, &x) in c.iter().zip(&v) {
            assert_eq!(m[[k, l]], x);
        }
        assert_eq!(m.row(k).iter().filter(|&&x| x != 0.0).count(), c.len());
    }
    assert!(SparseProjection::new(0, 3, None, ProjectionScaling::Unit, 0).is_err());
    assert!(SparseProjection::new(3, 3, Some(0.0), ProjectionScaling::Unit, 0).is_err());
}
