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

/// KPCA on a precomputed `K` is KPCA on the samples whose kernel matrix it is, at every solver
/// (the symmetric Nyström method samples the same landmarks from the same seed): the same
/// eigenpairs, and kernel values `k(x', X)` project as the samples `x'` do. The model is a KPCA
/// model of kernel values and round-trips bit for bit.
#[test]
fn kpca_on_a_precomputed_kernel_matrix_is_kpca_on_the_samples() {
    let (x, new) = sets();
    let gamma = 1.3;
    let k_of = |a: &Array2<f64>| {
        Array2::from_shape_fn((a.nrows(), N), |(i, j)| {
            Kernel::Rbf { gamma }
                .eval_pair(a.row(i).as_slice().unwrap(), x.row(j).as_slice().unwrap())
                .unwrap()
        })
    };
    let (k, k_new) = (k_of(&x), k_of(&new));
    let (xs, news) = (Samples::dense(x.clone()).unwrap(), Samples::dense(new.clone()).unwrap());
    let nystrom = Solver::Nystrom {
        landmarks: 30,
        cols: None,
        sampling: Sampling::Uniform,
        inner: InnerSolver::Dense,
    };
    let eps_n = f64::EPSILON * (8.0 * N as f64).sqrt();
    for solver in [Solver::Exact, Solver::Auto { tol: 1e-10 }, nystrom] {
        for center in [true, false] {
            let params = Kpca::params()
                .kernel(Kernel::Rbf { gamma })
                .rank(R)
                .center(center)
                .solver(solver.clone())
                .seed(4)
                .check()
                .unwrap();
            let on_samples = params.fit_samples(xs.clone()).unwrap();
            let model = params.fit_precomputed(k.view()).unwrap();
            assert_eq!(model.estimator(), Estimator::Kpca);
            assert!(model.is_precomputed() && model.stored_samples().is_none());
            assert_eq!(
                model.landmarks().map(|(i, _)| i.to_vec()),
                on_samples.landmarks().map(<[usize]>::to_vec)
            );
            // The kernel entries differ from KernelMatrix's by rounding only (eval_pair forms
            // ‖x − z‖² directly), so the eigenpairs agree to eps over the eigengap.
            let lam = on_samples.eigenvalues();
            let gap = (0..R)
                .map(|l| lam[l] - lam.get(l + 1).copied().unwrap_or(0.0))
                .fold(f64::INFINITY, f64::min);
            let tol = 1e4 * eps_n * lam[0] / gap;
            let ds = (&model.singular_values() - &lam)
                .iter()
                .fold(0.0f64, |a, b| a.max(b.abs()));
            assert!(ds <= 1e4 * eps_n * lam[0], "{solver:?} center={center}: {ds:e}");
            let du = max_abs(&(&model.u() - &on_samples.eigenvectors()));
            assert!(du <= tol, "{solver:?} center={center}: {du:e} > {tol:e}");
            for scaling in [Scaling::Unit, Scaling::Sqrt] {
                let got = model.project_kernel_rows(k_new.view(), scaling).unwrap();
                let want = on_samples.project_rows(&news, scaling).unwrap();
                let err = max_abs(&(&got - &want));
                assert!(err <= tol * lam[0].sqrt() * 10.0, "{solver:?} {scaling:?}: {err:e}");
                // Symmetric: the column side gives the same values (centred in another order).
                let cols = model.project_kernel_cols(k_new.view(), scaling).unwrap();
                assert!(max_abs(&(&got - &cols)) <= 1e2 * eps_n * max_abs(&got), "{solver:?}");
                // The front ends' dispatch takes kernel values as the model's input.
                assert_eq!(
                    got,
                    model
                        .project_input_rows(&Samples::dense(k_new.clone()).unwrap(), scaling)
                        .unwrap()
                );
            }
            let back = KsvdModel::from_bytes(&model.to_bytes().unwrap()).unwrap();
            assert_eq!(back.to_bytes().unwrap(), model.to_bytes().unwrap());
            assert_eq!(
                back.project_kernel_rows(k_new.view(), Scaling::Sqrt).unwrap(),
                model.project_kernel_rows(k_new.view(), Scaling::Sqrt).unwrap()
            );
        }
    }
    // Not square.
    let err = Kpca::params()
        .check()
        .unwrap()
        .fit_precomputed(k.slice(ndarray::s![.., ..10]))
        .unwrap_err();
    assert!(err.to_string().contains("KPCA needs the square K"), "{err}");
}
