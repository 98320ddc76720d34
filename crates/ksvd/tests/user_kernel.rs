//! Users' own kernels through the whole model: KSVD at several solvers, Nyström, centring,
//! KPCA and the projections of new rows and columns give what the built-in kernel they imitate
//! gives; the singular triplets of an asymmetric one meet `G v = s u` against a dense
//! reference; models save the function's name and load with the function given back; a
//! failing or NaN-producing function is a typed error.
// Test helpers unwrap: a failure is a test failure.
#![allow(clippy::unwrap_used)]
mod common;
use common::solvers;
use ksvd::prelude::*;
use ksvd::{AnyKernel, KernelError, KernelMatrix, KsvdParams};
use ksvd_linalg::random::{gaussian_matrix, rng_from_seed};
use ndarray::{Array1, Array2, ArrayView2, Axis};
use std::sync::Arc;

const GAMMA: f64 = 1.6;
const R: usize = 3;

/// `k(x, z) = exp(-‖(x − s) − z‖² / γ²)`: the RBF kernel between shifted row samples and the
/// column samples (`s = 0`: the RBF kernel itself), through the crate's dense block.
fn shifted_rbf(name: &'static str, shift: Array1<f64>) -> Arc<dyn KernelFunction> {
    FnKernel::new(name, move |x, z, mut out| {
        let g = Kernel::Rbf { gamma: GAMMA }
            .dense_block((&x - &shift).view(), z)
            .map_err(|e| KernelFnError::Failed { reason: e.to_string() })?;
        out.assign(&g);
        Ok(())
    })
}

fn rbf_fn() -> Arc<dyn KernelFunction> {
    shifted_rbf("my-rbf", Array1::zeros(4))
}

fn shift() -> Array1<f64> {
    Array1::from(vec![0.5, -0.25, 0.0, 0.75])
}

fn shifted_fn() -> Arc<dyn KernelFunction> {
    shifted_rbf("shifted", shift())
}

/// X (40), Z (30), new rows (6) and new columns (5), in R^4.
fn sets() -> (Array2<f64>, Array2<f64>, Array2<f64>, Array2<f64>) {
    let mut rng = rng_from_seed(17);
    (
        gaussian_matrix(&mut rng, 40, 4),
        gaussian_matrix(&mut rng, 30, 4) * 0.8 + 0.2,
        gaussian_matrix(&mut rng, 6, 4),
        gaussian_matrix(&mut rng, 5, 4),
    )
}

fn s(a: &Array2<f64>) -> Samples {
    Samples::dense(a.clone()).unwrap()
}

/// Largest entry-wise difference after aligning the sign of every column of `a` to `b`.
fn diff_up_to_sign(a: ArrayView2<'_, f64>, b: ArrayView2<'_, f64>) -> f64 {
    assert_eq!(a.dim(), b.dim());
    a.axis_iter(Axis(1))
        .zip(b.axis_iter(Axis(1)))
        .map(|(ca, cb)| {
            let sign = if ca.dot(&cb) < 0.0 { -1.0 } else { 1.0 };
            ca.iter()
                .zip(&cb)
                .map(|(p, q)| (sign * p - q).abs())
                .fold(0.0, f64::max)
        })
        .fold(0.0, f64::max)
}

fn max_diff(a: &Array2<f64>, b: &Array2<f64>) -> f64 {
    diff_up_to_sign(a.view(), b.view())
}

fn params(solver: &Solver, center: bool) -> KsvdParams {
    Ksvd::params().rank(R).solver(solver.clone()).center(center).seed(3)
}

/// Fits `p` (whose kernel is `k`) on `x`, `z`: through the parameters' own kernel matrix
/// (stored within the default budget; matrix-free for Nyström), or on a matrix-free one built
/// here (centred when `p` centres) when `stored` is false.
fn fit_on(p: KsvdParams, k: impl Into<AnyKernel>, x: Samples, z: Samples, stored: bool) -> Result<Ksvd, KsvdError> {
    let p = p.check()?;
    if stored {
        return p.fit_samples(x, z);
    }
    let mut g = KernelMatrix::matrix_free(x, z, k)?;
    if p.center() {
        g = g.centered()?;
    }
    p.fit_kernel_matrix(g)
}

/// Tolerance of values of size up to `scale` computed through a `40 × 30` matrix: `ε` times
/// the size, times a constant for the solvers' own rounding.
fn tol(scale: f64) -> f64 {
    1e3 * f64::EPSILON * 40.0 * scale
}

/// A user's RBF and a shifted (asymmetric) user kernel fit what the built-in RBF fits on the
/// same (shifted) rows: singular values and vectors, the model's projections of new rows and
/// columns under every scaling, centred or not, with the exact, Lanczos and Nyström solvers
/// (the same seed, hence the same landmarks), on a stored and on a matrix-free `G`.
#[test]
fn user_kernels_fit_and_project_as_the_builtin_kernel() {
    let (x, z, new_x, new_z) = sets();
    let rbf = Kernel::Rbf { gamma: GAMMA };
    let cases = [
        ("rbf", rbf_fn(), x.clone(), new_x.clone()),
        ("shifted", shifted_fn(), &x - &shift(), &new_x - &shift()),
    ];
    for (label, f, x_builtin, new_x_builtin) in cases {
        for (name, solver) in solvers() {
            for center in [false, true] {
                for stored in [true, false] {
                    let at = format!("{label} {name} center={center} stored={stored}");
                    let mine = fit_on(
                        params(&solver, center).kernel_fn(f.clone()),
                        f.clone(),
                        s(&x),
                        s(&z),
                        stored,
                    )
                    .unwrap();
                    let theirs = params(&solver, center)
                        .kernel(rbf)
                        .check()
                        .unwrap()
                        .fit_samples(s(&x_builtin), s(&z))
                        .unwrap();
                    if name != "nystrom" {
                        assert_eq!(mine.kernel_matrix().is_stored(), stored, "{at}");
                    }
                    let s1 = theirs.singular_values()[0];
                    let ds = (&mine.singular_values() - &theirs.singular_values())
                        .iter()
                        .fold(0.0f64, |m, d| m.max(d.abs()));
                    assert!(ds <= tol(s1), "{at}: singular values differ by {ds:e}");
                    // Vectors up to sign; the gap of this spectrum is well above the tolerance.
                    assert!(diff_up_to_sign(mine.u(), theirs.u()) <= 1e3 * tol(1.0), "{at}: U");
                    assert!(diff_up_to_sign(mine.v(), theirs.v()) <= 1e3 * tol(1.0), "{at}: V");
                    let (m_model, t_model) = (mine.to_model().unwrap(), theirs.to_model().unwrap());
                    assert_eq!(m_model.kernel_function_name(), Some(f.name()));
                    for scaling in [Scaling::Unit, Scaling::Sqrt, Scaling::Full] {
                        let a = m_model.project_rows(&s(&new_x), scaling).unwrap();
                        let b = t_model.project_rows(&s(&new_x_builtin), scaling).unwrap();
                        assert!(max_diff(&a, &b) <= 1e3 * tol(s1), "{at}: rows {scaling:?}");
                        let a = m_model.project_cols(&s(&new_z), scaling).unwrap();
                        let b = t_model.project_cols(&s(&new_z), scaling).unwrap();
                        assert!(max_diff(&a, &b) <= 1e3 * tol(s1), "{at}: cols {scaling:?}");
                    }
                }
            }
        }
    }
}

/// The triplets of the asymmetric kernel meet `G v_i = s_i u_i` and `Gᵀ u_i = s_i v_i`
/// against `G` evaluated entry by entry from the definition.
#[test]
fn asymmetric_user_kernel_triplets_meet_their_residuals() {
    let (x, z, _, _) = sets();
    let sh = shift();
    let g = Array2::from_shape_fn((x.nrows(), z.nrows()), |(i, j)| {
        let d2: f64 = (0..4).map(|k| (x[[i, k]] - sh[k] - z[[j, k]]).powi(2)).sum();
        (-d2 / (GAMMA * GAMMA)).exp()
    });
    // The kernel is not symmetric: k(z_a, z_b) ≠ k(z_b, z_a).
    let mut square = Array2::zeros((30, 30));
    shifted_fn().block(z.view(), z.view(), square.view_mut()).unwrap();
    assert!((&square - &square.t()).iter().any(|d| d.abs() > 1e-3));
    for (name, solver) in solvers().into_iter().take(2) {
        let fit = params(&solver, false)
            .kernel_fn(shifted_fn())
            .check()
            .unwrap()
            .fit_samples(s(&x), s(&z))
            .unwrap();
        let (u, sv, v) = (fit.u(), fit.singular_values(), fit.v());
        for i in 0..R {
            let left = &g.dot(&v.column(i)) - &(&u.column(i) * sv[i]);
            let right = &g.t().dot(&u.column(i)) - &(&v.column(i) * sv[i]);
            let worst = left.dot(&left).sqrt().max(right.dot(&right).sqrt());
            assert!(worst <= tol(sv[0]), "{name}: triplet {i} residual {worst:e}");
        }
    }
}

/// KPCA with a user's RBF is KPCA with the built-in RBF: eigenvalues, eigenvectors and the
/// transform of new rows, at two solvers.
#[test]
fn kpca_with_a_user_kernel_is_kpca_with_the_builtin_kernel() {
    let (x, _, new_x, _) = sets();
    for (name, solver) in solvers().into_iter().take(2) {
        let fit = |p: ksvd::KpcaParams| {
            p.rank(R)
                .solver(solver.clone())
                .check()
                .unwrap()
                .fit_samples(s(&x))
                .unwrap()
        };
        let mine = fit(Kpca::params().kernel_fn(rbf_fn()));
        let theirs = fit(Kpca::params().kernel(Kernel::Rbf { gamma: GAMMA }));
        let l1 = theirs.eigenvalues()[0];
        let dl = (&mine.eigenvalues() - &theirs.eigenvalues())
            .iter()
            .fold(0.0f64, |m, d| m.max(d.abs()));
        assert!(dl <= tol(l1), "{name}: eigenvalues");
        assert!(
            diff_up_to_sign(mine.eigenvectors(), theirs.eigenvectors()) <= 1e3 * tol(1.0),
            "{name}"
        );
        let (a, b) = (
            mine.transform(&s(&new_x)).unwrap(),
            theirs.transform(&s(&new_x)).unwrap(),
        );
        assert!(max_diff(&a, &b) <= 1e3 * tol(l1), "{name}: transform");
        assert_eq!(mine.to_model().unwrap().kernel_function_name(), Some("my-rbf"));
    }
}

/// A model with a user kernel records the name, not the function: `load` is a typed error
/// naming it, `load_with_kernel` restores the model (bit-identical transforms), a function of
/// another name is refused, and so is a function for a built-in model. The summary names it.
#[test]
fn user_kernel_models_save_their_name_and_load_with_the_function() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("model.json");
    let (x, z, new_x, new_z) = sets();
    let f = shifted_fn();
    for (name, solver) in solvers() {
        let p = params(&solver, true).kernel_fn(f.clone());
        let model = fit_on(p, f.clone(), s(&x), s(&z), true).unwrap().to_model().unwrap();
        model.save(&path).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains(r#""kernel":{"Custom":{"name":"shifted"}}"#), "{name}");
        match KsvdModel::load(&path) {
            Err(KsvdError::KernelFunctionNeeded { name: needed }) => assert_eq!(needed, "shifted"),
            other => panic!("{name}: {other:?}"),
        }
        let back = KsvdModel::load_with_kernel(&path, f.clone()).unwrap();
        for scaling in [Scaling::Unit, Scaling::Sqrt] {
            assert_eq!(
                back.project_rows(&s(&new_x), scaling).unwrap(),
                model.project_rows(&s(&new_x), scaling).unwrap(),
                "{name}"
            );
            assert_eq!(
                back.project_cols(&s(&new_z), scaling).unwrap(),
                model.project_cols(&s(&new_z), scaling).unwrap(),
                "{name}"
            );
        }
        let summary = back.summary();
        assert_eq!(
            (summary.kernel, summary.kernel_function.as_deref()),
            (None, Some("shifted"))
        );
        assert!(summary.to_string().contains("user kernel `shifted`"), "{summary}");
        match KsvdModel::load_with_kernel(&path, rbf_fn()) {
            Err(KsvdError::KernelFunctionMismatch { expected, given }) => {
                assert_eq!((expected.as_str(), given.as_str()), ("user kernel `shifted`", "my-rbf"))
            }
            other => panic!("{name}: {other:?}"),
        }
    }
    let rbf = Kernel::Rbf { gamma: GAMMA };
    let p = params(&Solver::Exact, false).kernel(rbf);
    let builtin = fit_on(p, rbf, s(&x), s(&z), true).unwrap().to_model().unwrap();
    builtin.save(&path).unwrap();
    assert!(matches!(
        KsvdModel::load_with_kernel(&path, f),
        Err(KsvdError::KernelFunctionMismatch { .. })
    ));
    assert!(KsvdModel::load(&path).unwrap().kernel_function_name().is_none());
}

/// Fails on every call.
fn failing() -> Arc<dyn KernelFunction> {
    FnKernel::new("failing", |_, _, _| {
        Err(KernelFnError::Failed {
            reason: "RuntimeError: boom".into(),
        })
    })
}

/// `1 + x · z`, and NaN in the row of the sample whose first coordinate is 2 (row 4 below).
fn nan_row() -> Arc<dyn KernelFunction> {
    FnKernel::new("nan-row", |x, z, mut out| {
        out.assign(&(x.dot(&z.t()) + 1.0));
        for (a, xi) in x.outer_iter().enumerate() {
            if xi[0] == 2.0 {
                out.row_mut(a).fill(f64::NAN);
            }
        }
        Ok(())
    })
}

/// A failing or NaN-producing function fails the fit with a typed error naming it (stored
/// `G`: the kernel error itself; matrix-free: the product's error, naming function and problem),
/// at every solver; an empty name is refused when the parameters are checked.
#[test]
fn failing_and_nan_functions_are_typed_errors() {
    let x = Array2::from_shape_fn((12, 2), |(i, j)| i as f64 * 0.5 + j as f64 * 0.1);
    for (name, solver) in solvers() {
        for stored in [true, false] {
            let fit = |f: Arc<dyn KernelFunction>| {
                let p = Ksvd::params().rank(2).solver(solver.clone()).kernel_fn(f.clone());
                fit_on(p, f, s(&x), s(&x), stored)
            };
            let at = format!("{name} stored={stored}");
            for (f, needle) in [
                (failing(), "RuntimeError: boom"),
                (nan_row(), "returned NaN for G[4, 0]"),
            ] {
                let err = fit(f.clone()).unwrap_err();
                let msg = err.to_string();
                assert!(msg.contains(f.name()) && msg.contains(needle), "{at}: {msg}");
                if stored && name != "nystrom" {
                    assert!(
                        matches!(err, KsvdError::Kernel(KernelError::KernelFunction { .. })),
                        "{at}: {err:?}"
                    );
                }
            }
        }
    }
    assert!(matches!(
        Ksvd::params().kernel_fn(FnKernel::new(" ", |_, _, _| Ok(()))).check(),
        Err(KsvdError::InvalidParameter { name: "kernel", .. })
    ));
}
