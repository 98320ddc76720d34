//! Users' own kernel functions (`KernelFunction`) against the built-in kernels they imitate:
//! the same matrix, products, centring and out-of-sample blocks in every representation, and
//! typed errors for a function that fails or writes NaN.
use ksvd_kernels::{AnyKernel, FnKernel, Kernel, KernelError, KernelFnError, KernelFunction, KernelMatrix, Samples};
use ksvd_linalg::random::{gaussian_matrix, rng_from_seed};
use ksvd_linalg::{CsrMatrix, LinalgError, LinearOperator, MatrixBlocks, MemoryBudget};
use ndarray::{Array1, Array2};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// `exp(-‖x − z − s‖² / γ²)` entry by entry (differences, not the GEMM identity): with `s = 0`
/// the RBF kernel; otherwise asymmetric, and equal to the RBF kernel between `x − s` and `z`.
/// Counts its calls in `calls`.
fn shifted_rbf(gamma: f64, shift: Vec<f64>, calls: Arc<AtomicUsize>) -> Arc<dyn KernelFunction> {
    FnKernel::new("shifted-rbf", move |x, z, mut out| {
        calls.fetch_add(1, Ordering::Relaxed);
        for (xi, mut orow) in x.outer_iter().zip(out.outer_iter_mut()) {
            for (zj, o) in z.outer_iter().zip(orow.iter_mut()) {
                let d2: f64 = xi
                    .iter()
                    .zip(&zj)
                    .zip(&shift)
                    .map(|((a, b), s)| (a - b - s) * (a - b - s))
                    .sum();
                *o = (-d2 / (gamma * gamma)).exp();
            }
        }
        Ok(())
    })
}

fn uncounted(gamma: f64, shift: Vec<f64>) -> Arc<dyn KernelFunction> {
    shifted_rbf(gamma, shift, Arc::default())
}

/// Fails on every call.
fn failing() -> Arc<dyn KernelFunction> {
    FnKernel::new("failing", |_, _, _| {
        Err(KernelFnError::Failed {
            reason: "ValueError: no".into(),
        })
    })
}

/// `x · z`, but NaN for the sample whose first coordinate is exactly `marker`.
fn nan_at(marker: f64) -> Arc<dyn KernelFunction> {
    FnKernel::new("nan-at", move |x, z, mut out| {
        out.assign(&x.dot(&z.t()));
        for (a, xi) in x.outer_iter().enumerate() {
            if xi[0] == marker {
                out.row_mut(a).fill(f64::NAN);
            }
        }
        Ok(())
    })
}

fn max_abs_diff(a: &Array2<f64>, b: &Array2<f64>) -> f64 {
    assert_eq!(a.dim(), b.dim());
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max)
}

/// Rounding of kernel values in `[0, 1]` and of products summing `n` of them: `64 ε n`.
fn tol(n: usize) -> f64 {
    64.0 * f64::EPSILON * n as f64
}

fn dense(a: &Array2<f64>) -> Samples {
    Samples::dense(a.clone()).unwrap()
}

/// Samples with exact zeros, so that a sparse copy is worth testing.
fn data(n: usize, d: usize, seed: u64) -> Array2<f64> {
    gaussian_matrix(&mut rng_from_seed(seed), n, d).mapv(|v| if v.abs() < 0.4 { 0.0 } else { 0.5 * v })
}

fn every_representation(
    x: &Samples,
    z: &Samples,
    k: impl Into<AnyKernel> + Clone,
) -> Vec<(&'static str, KernelMatrix)> {
    vec![
        ("stored", KernelMatrix::new(x.clone(), z.clone(), k.clone()).unwrap()),
        (
            "matrix-free",
            KernelMatrix::matrix_free(x.clone(), z.clone(), k).unwrap(),
        ),
    ]
}

/// The user's matrix and the built-in one agree entry by entry, in every product, centred or
/// not, and on out-of-sample rows and columns.
fn check_same_matrix(mine: &KernelMatrix, builtin: &KernelMatrix, new_x: &Samples, new_z: &Samples, label: &str) {
    let (n, m) = (builtin.nrows(), builtin.ncols());
    let t = tol(n.max(m));
    let want = builtin.to_dense().unwrap();
    assert!(max_abs_diff(&mine.to_dense().unwrap(), &want) <= t, "{label}: G");
    let mut rng = rng_from_seed(5);
    let v = gaussian_matrix(&mut rng, m, 3);
    let u = gaussian_matrix(&mut rng, n, 2);
    assert!(
        max_abs_diff(&mine.apply(v.view()).unwrap(), &want.dot(&v)) <= t * 8.0,
        "{label}: G V"
    );
    assert!(
        max_abs_diff(&mine.apply_transpose(u.view()).unwrap(), &want.t().dot(&u)) <= t * 8.0,
        "{label}: Gt U"
    );
    let (rows, cols) = (vec![n - 1, 0, 3, 0], vec![2, m - 1]);
    let sub = Array2::from_shape_fn((4, 2), |(a, b)| want[[rows[a], cols[b]]]);
    assert!(
        max_abs_diff(&mine.block(&rows, &cols).unwrap(), &sub) <= t,
        "{label}: block"
    );
    let w = gaussian_matrix(&mut rng, 2, 2);
    assert!(
        max_abs_diff(&mine.block_mul(&rows, &cols, w.view()).unwrap(), &sub.dot(&w)) <= t * 4.0,
        "{label}: block_mul"
    );
    let w4 = gaussian_matrix(&mut rng, 4, 2);
    assert!(
        max_abs_diff(&mine.block_t_mul(&rows, &cols, w4.view()).unwrap(), &sub.t().dot(&w4)) <= t * 4.0,
        "{label}: block_t_mul"
    );
    let norms = Array1::from(mine.row_sq_norms().unwrap());
    let want_norms = want.map_axis(ndarray::Axis(1), |r| r.dot(&r));
    assert!(
        (&norms - &want_norms).iter().all(|d| d.abs() <= t * m as f64),
        "{label}: row norms"
    );
    let all_cols: Vec<usize> = (0..m).collect();
    let all_rows: Vec<usize> = (0..n).collect();
    assert!(
        max_abs_diff(
            &mine.cross_rows(new_x, &all_cols).unwrap(),
            &builtin.cross_rows(new_x, &all_cols).unwrap()
        ) <= t,
        "{label}: cross_rows"
    );
    assert!(
        max_abs_diff(
            &mine.cross_cols(&all_rows, new_z).unwrap(),
            &builtin.cross_cols(&all_rows, new_z).unwrap()
        ) <= t,
        "{label}: cross_cols"
    );
}

/// A hand-written RBF gives the built-in RBF matrix, stored and matrix-free, dense and sparse
/// samples, centred or not.
#[test]
fn a_user_rbf_is_the_builtin_rbf() {
    let (xa, za) = (data(37, 4, 1), data(29, 4, 2));
    let (nx, nz) = (dense(&data(5, 4, 3)), dense(&data(6, 4, 4)));
    let rbf = Kernel::Rbf { gamma: 1.7 };
    let f = uncounted(1.7, vec![0.0; 4]);
    let sparse = |a: &Array2<f64>| Samples::sparse(CsrMatrix::from_dense(a.view()).unwrap()).unwrap();
    for (storage, x, z) in [("dense", dense(&xa), dense(&za)), ("sparse", sparse(&xa), sparse(&za))] {
        let builtin = KernelMatrix::matrix_free(dense(&xa), dense(&za), rbf).unwrap();
        for (repr, mine) in every_representation(&x, &z, f.clone()) {
            assert_eq!(mine.is_stored(), repr == "stored");
            assert!(!mine.is_rank_one_plus_sparse());
            assert_eq!(mine.kernel().function().map(|f| f.name()), Some("shifted-rbf"));
            let label = format!("{storage} {repr}");
            check_same_matrix(&mine, &builtin, &nx, &nz, &label);
            let centred = mine.centered().unwrap();
            let builtin_c = builtin.clone().centered().unwrap();
            check_same_matrix(&centred, &builtin_c, &nx, &nz, &format!("{label} centred"));
        }
    }
}

/// An asymmetric user kernel `k(x, z) = rbf(x − s, z)` equals the built-in RBF between the
/// shifted row samples and Z, and is not symmetric.
#[test]
fn an_asymmetric_user_kernel_is_the_rbf_of_shifted_rows() {
    let (xa, za) = (data(31, 3, 11), data(23, 3, 12));
    let shift = vec![0.4, -0.3, 0.2];
    let s = Array1::from(shift.clone());
    let f = uncounted(1.1, shift);
    let rbf = Kernel::Rbf { gamma: 1.1 };
    let builtin = KernelMatrix::matrix_free(dense(&(&xa - &s)), dense(&za), rbf).unwrap();
    let new_x = data(4, 3, 13);
    let new_z = dense(&data(5, 3, 14));
    // The built-in matrix of the shifted rows extends to shifted new rows.
    let builtin_new_rows = builtin.cross_rows(&dense(&(&new_x - &s)), &[0, 5, 22]).unwrap();
    for (repr, mine) in every_representation(&dense(&xa), &dense(&za), f.clone()) {
        let want = builtin.to_dense().unwrap();
        assert!(max_abs_diff(&mine.to_dense().unwrap(), &want) <= tol(31), "{repr}");
        let got = mine.cross_rows(&dense(&new_x), &[0, 5, 22]).unwrap();
        assert!(max_abs_diff(&got, &builtin_new_rows) <= tol(31), "{repr}: new rows");
        let got = mine.cross_cols(&[1, 30], &new_z).unwrap();
        let theirs = builtin.cross_cols(&[1, 30], &new_z).unwrap();
        assert!(max_abs_diff(&got, &theirs) <= tol(31), "{repr}: new cols");
    }
    let square = KernelMatrix::new(dense(&xa), dense(&xa), f)
        .unwrap()
        .to_dense()
        .unwrap();
    assert!(max_abs_diff(&square, &square.t().to_owned()) > 1e-3, "asymmetric");
}

/// A stored matrix is evaluated in few calls: at most one per worker thread when the budget
/// allows (the whole `G` here).
#[test]
fn a_stored_matrix_takes_few_large_calls() {
    let calls = Arc::new(AtomicUsize::new(0));
    let f = shifted_rbf(1.0, vec![0.0; 3], calls.clone());
    let x = dense(&data(300, 3, 21));
    let budget = MemoryBudget::bytes(1 << 30).unwrap();
    let g = KernelMatrix::with_budget(x.clone(), x, f, budget).unwrap();
    assert!(g.is_stored());
    let calls = calls.load(Ordering::Relaxed);
    assert!(
        (1..=rayon::current_num_threads()).contains(&calls),
        "{calls} calls for a stored 300 x 300 matrix"
    );
}

/// A failing function, a NaN and a reported wrong shape are typed errors naming the function (and the entry), when
/// building a stored matrix, taking blocks and out-of-sample values; inside a product of a
/// matrix-free one they are the operator's error naming both.
#[test]
fn a_failing_or_nan_function_is_a_typed_error() {
    let x = dense(&Array2::from_shape_fn((9, 2), |(i, j)| (i + j) as f64));
    let z = dense(&Array2::from_shape_fn((7, 2), |(i, j)| (i * j) as f64));
    let failing = failing();
    match KernelMatrix::new(x.clone(), z.clone(), failing.clone()) {
        Err(KernelError::KernelFunction {
            kernel,
            error: KernelFnError::Failed { reason },
        }) => assert_eq!((kernel.as_str(), reason.as_str()), ("failing", "ValueError: no")),
        other => panic!("{other:?}"),
    }
    let g = KernelMatrix::matrix_free(x.clone(), z.clone(), failing).unwrap();
    match g.apply(Array2::ones((7, 1)).view()) {
        Err(LinalgError::OperatorFailed { reason, .. }) => {
            assert!(
                reason.contains("failing") && reason.contains("ValueError: no"),
                "{reason}"
            )
        }
        other => panic!("{other:?}"),
    }
    assert!(g.row_sq_norms().is_err());
    assert!(g.cross_rows(&x, &[0, 1]).is_err());
    // Sample 4 of X has first coordinate 4: row 4 of G is NaN.
    let nan = nan_at(4.0);
    match KernelMatrix::new(x.clone(), z.clone(), nan.clone()) {
        Err(KernelError::KernelFunction {
            kernel,
            error: KernelFnError::NonFinite { row: 4, col: 0, value },
        }) => assert!(kernel == "nan-at" && value.is_nan()),
        other => panic!("{other:?}"),
    }
    let g = KernelMatrix::matrix_free(x.clone(), z, nan).unwrap();
    assert!(g.block(&[0, 1], &[2]).is_ok());
    match g.block(&[6, 4], &[2, 3]) {
        Err(LinalgError::OperatorFailed { reason, .. }) => assert!(reason.contains("G[4, 2]"), "{reason}"),
        other => panic!("{other:?}"),
    }
    // A binding that copies its callable's array reports a wrong shape; it reaches the caller.
    let wrong = FnKernel::new("wrong-shape", |x, z, _| {
        Err(KernelFnError::WrongShape {
            expected: (x.nrows(), z.nrows()),
            got: (z.nrows(), x.nrows()),
        })
    });
    match KernelMatrix::new(x.clone(), x.clone(), wrong) {
        Err(KernelError::KernelFunction {
            kernel,
            error: KernelFnError::WrongShape { expected, got },
        }) => assert!(kernel == "wrong-shape" && expected.0 == got.1 && expected.1 == got.0),
        other => panic!("{other:?}"),
    }
    match g.cross_cols(&[3, 4], &x) {
        Err(KernelError::KernelFunction {
            error: KernelFnError::NonFinite { row: 4, .. },
            ..
        }) => {}
        other => panic!("{other:?}"),
    }
}
