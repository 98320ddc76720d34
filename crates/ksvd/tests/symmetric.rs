//! KPCA is the symmetric case of KSVD: with a symmetric PSD kernel, `Z = X` and centring, KSVD's
//! singular values are KPCA's eigenvalues and the two transforms agree; a KPCA model is a
//! `KsvdModel` (estimator `Kpca`) that round-trips bit for bit.
#![allow(clippy::unwrap_used)] // Tests panic on failure by design.
use ksvd::prelude::*;
use ksvd::{Estimator, InnerSolver};
use ksvd_linalg::random::{gaussian_matrix, rng_from_seed};
use ndarray::Array2;

const N: usize = 50;
const R: usize = 4;

fn sets() -> (Array2<f64>, Array2<f64>) {
    let mut rng = rng_from_seed(21);
    (gaussian_matrix(&mut rng, N, 3), gaussian_matrix(&mut rng, 6, 3))
}

fn max_abs(a: &Array2<f64>) -> f64 {
    a.iter().fold(0.0f64, |m, v| m.max(v.abs()))
}

#[test]
fn ksvd_with_z_equal_x_and_centring_is_kpca() {
    let (x, new) = sets();
    let kernel = Kernel::Rbf { gamma: 1.3 };
    let xs = Samples::dense(x.clone()).unwrap();
    let ksvd = Ksvd::params()
        .kernel(kernel)
        .rank(R)
        .center(true)
        .solver(Solver::Exact)
        .check()
        .unwrap()
        .fit_samples(xs.clone(), xs.clone())
        .unwrap();
    let kpca = Kpca::params()
        .kernel(kernel)
        .rank(R)
        .solver(Solver::Exact)
        .check()
        .unwrap()
        .fit_samples(xs.clone())
        .unwrap();
    let s = ksvd.singular_values().to_owned();
    let eps_n = f64::EPSILON * (8.0 * N as f64).sqrt();
    for l in 0..R {
        assert!(
            (s[l] - kpca.eigenvalues()[l]).abs() <= 1e2 * eps_n * s[0],
            "s_{l} = {} but λ_{l} = {}",
            s[l],
            kpca.eigenvalues()[l]
        );
    }
    // The same sign rule on both sides: the transforms agree column by column, on the
    // training samples and on new ones (eigenvector error ~ eps / relative gap).
    let gap = (0..R).map(|l| s[l] - ksvd.singular_values().get(l + 1).copied().unwrap_or(0.0));
    let min_gap = gap.fold(f64::INFINITY, f64::min).max(f64::MIN_POSITIVE);
    let tol = 1e3 * eps_n * s[0] / min_gap * s[0].sqrt();
    for samples in [xs.clone(), Samples::dense(new.clone()).unwrap()] {
        let a = ksvd.transform(&samples).unwrap();
        let b = kpca.transform(&samples).unwrap();
        assert!(max_abs(&(&a - &b)) <= tol, "{} > {tol}", max_abs(&(&a - &b)));
    }
}

#[test]
fn kpca_models_round_trip_bit_for_bit() {
    let (x, new) = sets();
    let xs = Samples::dense(x.clone()).unwrap();
    let news = Samples::dense(new.clone()).unwrap();
    let nystrom = Solver::Nystrom {
        landmarks: 30,
        cols: None,
        sampling: Sampling::Uniform,
        inner: InnerSolver::Dense,
    };
    for solver in [Solver::Exact, Solver::Auto { tol: 1e-10 }, nystrom] {
        for center in [true, false] {
            let kpca = Kpca::params()
                .rank(R)
                .center(center)
                .solver(solver.clone())
                .check()
                .unwrap()
                .fit_samples(xs.clone())
                .unwrap();
            let model = kpca.to_model().unwrap();
            assert_eq!(model.estimator(), Estimator::Kpca);
            assert_eq!(model.shape(), (N, N));
            assert_eq!(model.u(), kpca.eigenvectors());
            assert_eq!(model.v(), kpca.eigenvectors());
            assert_eq!(model.singular_values(), kpca.eigenvalues());
            // The rule's bandwidth is the one reported.
            assert_eq!(model.bandwidth(), kpca.bandwidth());
            assert_eq!(kpca.bandwidth(), Some(ksvd::bandwidth_rule(&xs, 1.0)));
            let (sx, sz) = model.stored_samples().unwrap();
            assert_eq!((sx.len(), sz.len()), (N, N));
            let back = KsvdModel::from_bytes(&model.to_bytes().unwrap()).unwrap();
            assert_eq!(back.to_bytes().unwrap(), model.to_bytes().unwrap());
            for scaling in [Scaling::Unit, Scaling::Sqrt, Scaling::Full] {
                let want = kpca.project_rows(&news, scaling).unwrap();
                assert_eq!(
                    model.project_rows(&news, scaling).unwrap(),
                    want,
                    "{solver:?} {scaling:?}"
                );
                assert_eq!(
                    back.project_rows(&news, scaling).unwrap(),
                    want,
                    "{solver:?} {scaling:?}"
                );
                assert_eq!(
                    back.project_cols(&news, scaling).unwrap(),
                    kpca.project_cols(&news, scaling).unwrap()
                );
            }
            let summary = back.summary();
            assert_eq!(summary.estimator, Estimator::Kpca);
            assert_eq!(summary.center, center);
            assert_eq!(
                summary.landmarks.map(|l| (l.rows, l.cols)),
                kpca.landmarks().map(|l| (l.len(), l.len()))
            );
            assert!(summary.to_string().starts_with("KPCA of a 50 x 50 rbf"), "{summary}");
        }
    }
}
