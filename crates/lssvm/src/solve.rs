//! Low-level LS-SVM solvers on matrices and operators: the bordered dual system (dense
//! Cholesky/LU with the Schur-complement elimination of the bias, or conjugate gradient on an
//! operator) and the primal normal equations of the linear kernel.
//!
//! All solvers take a block of targets `T` (`N x m`, one column per one-vs-rest problem) and
//! solve the `m` problems together with one factorisation (or one operator product per CG
//! iteration).
use crate::error::{check_finite, check_gamma, check_nonempty, LssvmError, Result};
use ksvd_linalg::dense::{cholesky_solve, gemm_into, lu_solve};
use ksvd_linalg::{LinalgError, LinearOperator};
use ndarray::{s, Array1, Array2, ArrayView1, ArrayView2, Axis};

/// The solution of the dual (bordered) system for `m` target columns.
#[derive(Debug, Clone, PartialEq)]
pub struct DualSolution {
    /// Dual coefficients `alpha`, `N x m` (function-estimation form: the decision value is
    /// `sum_i alpha_i k(x, x_i) + b`; each column sums to zero).
    pub alpha: Array2<f64>,
    /// Biases `b`, one per target column.
    pub bias: Array1<f64>,
    /// Conjugate-gradient iterations, `None` for the direct solver.
    pub cg_iterations: Option<usize>,
}

/// The solution of the primal linear problem for `m` target columns.
#[derive(Debug, Clone, PartialEq)]
pub struct PrimalSolution {
    /// Weights `w`, `d x m` (decision value `x^T w + b`).
    pub weights: Array2<f64>,
    /// Biases `b`, one per target column.
    pub bias: Array1<f64>,
}

/// Options of the conjugate-gradient solver.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CgOptions {
    /// Stop when every column's relative residual `||b - H x|| / ||b||` is at most `tol`
    /// (checked on the true, not the recursively updated, residual). In `(0, 1)`.
    pub tol: f64,
    /// Maximum number of iterations (operator products), at least 1.
    pub max_iter: usize,
    /// In the high-level API: evaluate kernel rows on the fly (`O(N)` memory per right-hand side
    /// plus one `block x N` buffer, `O(N^2 d)` work per iteration) instead of storing the
    /// `N x N` kernel matrix once.
    pub matrix_free: bool,
}

impl Default for CgOptions {
    /// `tol = 1e-8`, `max_iter = 1000`, `matrix_free = true`.
    fn default() -> Self {
        Self {
            tol: 1e-8,
            max_iter: 1000,
            matrix_free: true,
        }
    }
}

impl CgOptions {
    /// `Ok` if `tol` is in `(0, 1)` and `max_iter >= 1`.
    pub fn check(&self) -> Result<()> {
        if !(self.tol > 0.0 && self.tol < 1.0) {
            return Err(LssvmError::InvalidTolerance { tol: self.tol });
        }
        if self.max_iter == 0 {
            return Err(LssvmError::InvalidMaxIter {
                max_iter: self.max_iter,
            });
        }
        Ok(())
    }
}

/// The outcome of [`conjugate_gradient`].
#[derive(Debug, Clone, PartialEq)]
pub struct CgOutcome {
    /// The solution `X`, same shape as the right-hand side.
    pub solution: Array2<f64>,
    /// Iterations (block operator products, not counting residual checks) performed.
    pub iterations: usize,
    /// The largest true relative residual over the columns at exit.
    pub relative_residual: f64,
}

/// The function-estimation bordered matrix `[[0, 1^T], [1, K + I/gamma]]`, `(N+1) x (N+1)`,
/// whose solution for the right-hand side `[0; y]` is `[b; alpha]`. Meant for small problems and
/// for checking the solvers.
pub fn bordered_matrix(k: ArrayView2<'_, f64>, gamma: f64) -> Result<Array2<f64>> {
    check_square(k)?;
    check_gamma(gamma)?;
    let n = k.nrows();
    let mut a = Array2::zeros((n + 1, n + 1));
    a.slice_mut(s![1.., 1..]).assign(&k);
    for i in 1..=n {
        a[[0, i]] = 1.0;
        a[[i, 0]] = 1.0;
        a[[i, i]] += 1.0 / gamma;
    }
    Ok(a)
}

/// Suykens' classifier bordered matrix `[[0, y^T], [y, Omega + I/gamma]]` with
/// `Omega[i, j] = y_i y_j K[i, j]`, whose solution for the right-hand side `[0; 1]` is
/// `[b; alpha_c]`. For `y` in `{-1, +1}` it is equivalent to the function-estimation form:
/// `alpha_c = y .* alpha` (see [`classifier_alpha`]) and the biases coincide.
pub fn classifier_bordered_matrix(k: ArrayView2<'_, f64>, y: ArrayView1<'_, f64>, gamma: f64) -> Result<Array2<f64>> {
    check_square(k)?;
    check_gamma(gamma)?;
    let n = k.nrows();
    if y.len() != n {
        return Err(LssvmError::LengthMismatch {
            what: "labels",
            expected: n,
            found: y.len(),
        });
    }
    let mut a = Array2::zeros((n + 1, n + 1));
    for i in 0..n {
        a[[0, i + 1]] = y[i];
        a[[i + 1, 0]] = y[i];
        for j in 0..n {
            a[[i + 1, j + 1]] = y[i] * y[j] * k[[i, j]];
        }
        a[[i + 1, i + 1]] += 1.0 / gamma;
    }
    Ok(a)
}

/// Converts function-estimation coefficients to Suykens' classifier coefficients,
/// `alpha_c[i] = y_i alpha[i]` (valid for labels `y_i` in `{-1, +1}`, where `y_i^2 = 1`).
pub fn classifier_alpha(alpha: ArrayView1<'_, f64>, y: ArrayView1<'_, f64>) -> Result<Array1<f64>> {
    if alpha.len() != y.len() {
        return Err(LssvmError::LengthMismatch {
            what: "labels",
            expected: alpha.len(),
            found: y.len(),
        });
    }
    Ok(&alpha * &y)
}

/// Solves the dual bordered system `[[0, 1^T], [1, H]] [b; alpha] = [0; t]`, `H = K + I/gamma`,
/// for every column `t` of `targets` with one dense factorisation of `H`:
///
/// `H [eta, nu] = [1, T]`, `s = 1^T eta`, `b = 1^T nu / s`, `alpha = nu - eta b`.
///
/// A symmetric `K` (to `16 N eps max|K|`) is factored by Cholesky (lower triangle read), falling
/// back to LU if `H` is not numerically positive definite; an asymmetric `K` (e.g. an
/// asymmetric kernel as in AsK-LS) goes straight to LU. Memory: one `N x N` copy plus the factor.
pub fn solve_dual_direct(k: ArrayView2<'_, f64>, targets: ArrayView2<'_, f64>, gamma: f64) -> Result<DualSolution> {
    check_square(k)?;
    check_gamma(gamma)?;
    let n = k.nrows();
    check_targets(targets, n)?;
    check_finite("kernel matrix", k)?;
    solve_dual_direct_owned(k.to_owned(), targets, gamma)
}

/// [`solve_dual_direct`] on an owned, checked kernel matrix, which becomes `H` in place.
pub(crate) fn solve_dual_direct_owned(
    mut h: Array2<f64>,
    targets: ArrayView2<'_, f64>,
    gamma: f64,
) -> Result<DualSolution> {
    let symmetric = is_symmetric(h.view());
    h.diag_mut().mapv_inplace(|v| v + 1.0 / gamma);
    let rhs = bordered_rhs(targets);
    let sol = if symmetric {
        match cholesky_solve(h.view(), rhs.view()) {
            Ok(sol) => sol,
            Err(LinalgError::Factorization { .. }) => lu_solve(h.view(), rhs.view())?,
            Err(e) => return Err(e.into()),
        }
    } else {
        lu_solve(h.view(), rhs.view())?
    };
    let (alpha, bias) = eliminate_bias(sol)?;
    Ok(DualSolution {
        alpha,
        bias,
        cg_iterations: None,
    })
}

/// Solves the same bordered system as [`solve_dual_direct`] by conjugate gradient on
/// `H = K + I/gamma`, with `K` given only through its action (`kernel` must be symmetric with
/// `K + I/gamma` positive definite, e.g. a [`KernelOperator`](crate::KernelOperator) or a dense
/// array). The `m + 1` right-hand sides `[1, T]` share one operator product per iteration.
pub fn solve_dual_cg<O: LinearOperator + ?Sized>(
    kernel: &O,
    targets: ArrayView2<'_, f64>,
    gamma: f64,
    options: &CgOptions,
) -> Result<DualSolution> {
    check_gamma(gamma)?;
    if kernel.nrows() != kernel.ncols() {
        return Err(LssvmError::LengthMismatch {
            what: "kernel operator columns",
            expected: kernel.nrows(),
            found: kernel.ncols(),
        });
    }
    check_targets(targets, kernel.nrows())?;
    let rhs = bordered_rhs(targets);
    let out = conjugate_gradient(kernel, 1.0 / gamma, rhs.view(), options)?;
    let (alpha, bias) = eliminate_bias(out.solution)?;
    Ok(DualSolution {
        alpha,
        bias,
        cg_iterations: Some(out.iterations),
    })
}

/// Solves `(A + shift I) X = B` by conjugate gradient, one independent recurrence per column of
/// `B`, all columns sharing one block product `A P` per iteration. `A` must be symmetric and
/// `A + shift I` positive definite (a non-positive curvature is reported, not ignored).
///
/// Convergence is declared when every column's recursively updated residual is below
/// `tol ||b_j||`; the true residual `B - (A + shift I) X` is then recomputed (one extra product)
/// and columns that fail it are restarted from it.
pub fn conjugate_gradient<O: LinearOperator + ?Sized>(
    a: &O,
    shift: f64,
    rhs: ArrayView2<'_, f64>,
    options: &CgOptions,
) -> Result<CgOutcome> {
    options.check()?;
    let n = a.nrows();
    if a.ncols() != n {
        return Err(LssvmError::LengthMismatch {
            what: "operator columns",
            expected: n,
            found: a.ncols(),
        });
    }
    if rhs.nrows() != n {
        return Err(LssvmError::LengthMismatch {
            what: "right-hand side rows",
            expected: n,
            found: rhs.nrows(),
        });
    }
    if !shift.is_finite() {
        return Err(LssvmError::NonFinite {
            what: "CG shift",
            row: 0,
            col: 0,
        });
    }
    check_finite("right-hand side", rhs)?;
    let m = rhs.ncols();
    let tol = options.tol;
    let bnorm: Vec<f64> = rhs.axis_iter(Axis(1)).map(|c| c.dot(&c).sqrt()).collect();
    let mut x = Array2::<f64>::zeros((n, m));
    let mut r = rhs.to_owned();
    let mut p = r.clone();
    let mut q = Array2::<f64>::zeros((n, m));
    let mut rr: Vec<f64> = r.axis_iter(Axis(1)).map(|c| c.dot(&c)).collect();
    let mut done: Vec<bool> = (0..m).map(|j| rr[j].sqrt() <= tol * bnorm[j]).collect();
    let mut iterations = 0;
    loop {
        if done.iter().all(|&d| d) {
            // Verify on the true residual; restart the columns that drifted.
            a.apply_into(x.view(), q.view_mut())?;
            let true_r = &rhs - &q - &(&x * shift);
            let mut worst = 0.0_f64;
            for j in 0..m {
                let res = true_r.column(j).dot(&true_r.column(j)).sqrt();
                let rel = if bnorm[j] > 0.0 { res / bnorm[j] } else { 0.0 };
                worst = worst.max(rel);
                if rel > tol {
                    r.column_mut(j).assign(&true_r.column(j));
                    p.column_mut(j).assign(&true_r.column(j));
                    rr[j] = res * res;
                    done[j] = false;
                }
            }
            if done.iter().all(|&d| d) {
                return Ok(CgOutcome {
                    solution: x,
                    iterations,
                    relative_residual: worst,
                });
            }
        }
        if iterations >= options.max_iter {
            let residual = (0..m)
                .filter(|&j| !done[j])
                .map(|j| rr[j].sqrt() / bnorm[j])
                .fold(0.0_f64, f64::max);
            return Err(LssvmError::NotConverged {
                iterations,
                residual,
                tol,
            });
        }
        a.apply_into(p.view(), q.view_mut())?;
        q.scaled_add(shift, &p);
        iterations += 1;
        for j in 0..m {
            if done[j] {
                continue;
            }
            let pq = p.column(j).dot(&q.column(j));
            if pq.is_nan() || pq <= 0.0 {
                return Err(LssvmError::NotPositiveDefinite { curvature: pq });
            }
            let step = rr[j] / pq;
            x.column_mut(j).scaled_add(step, &p.column(j));
            r.column_mut(j).scaled_add(-step, &q.column(j));
            let rr_new = r.column(j).dot(&r.column(j));
            done[j] = rr_new.sqrt() <= tol * bnorm[j];
            let beta = rr_new / rr[j];
            rr[j] = rr_new;
            let mut pj = p.column_mut(j);
            pj *= beta;
            pj += &r.column(j);
        }
    }
}

/// Solves the primal linear LS-SVM for every column `t` of `targets`:
///
/// `min_{w, b} 1/2 ||w||^2 + gamma/2 sum_i (t_i - w^T x_i - b)^2`, bias unregularised.
///
/// Eliminating the bias (`b = mean(t) - mean(x)^T w`) leaves the `d x d` system
/// `(X_c^T X_c + I/gamma) w = X_c^T t_c` on centred data, which is solved by Cholesky. This is
/// the `(d+1) x (d+1)` bordered primal system with its bias row eliminated, better conditioned
/// than the uncentred form. `X_c^T X_c` is accumulated over row chunks, so only a chunk of the
/// centred data is ever stored. Cost `O(N d^2 + d^3)`, memory `O(d^2)`.
pub fn solve_primal(x: ArrayView2<'_, f64>, targets: ArrayView2<'_, f64>, gamma: f64) -> Result<PrimalSolution> {
    check_gamma(gamma)?;
    check_nonempty("training features", x)?;
    let (n, d) = x.dim();
    check_targets(targets, n)?;
    check_finite("training features", x)?;
    let m = targets.ncols();
    let x_mean = x.sum_axis(Axis(0)) / n as f64;
    let t_mean = targets.sum_axis(Axis(0)) / n as f64;
    let mut a = Array2::<f64>::zeros((d, d));
    let mut r = Array2::<f64>::zeros((d, m));
    let chunk = (CHUNK_ENTRIES / d).clamp(1, n);
    let mut xc = Array2::<f64>::zeros((chunk, d));
    let mut tc = Array2::<f64>::zeros((chunk, m));
    let mut start = 0;
    while start < n {
        let end = (start + chunk).min(n);
        let mut xb = xc.slice_mut(s![..end - start, ..]);
        xb.assign(&x.slice(s![start..end, ..]));
        xb -= &x_mean;
        let mut tb = tc.slice_mut(s![..end - start, ..]);
        tb.assign(&targets.slice(s![start..end, ..]));
        tb -= &t_mean;
        syrk_lower_into(&mut a, xb.view())?;
        gemm_into(r.view_mut(), xb.t(), tb.view(), 1.0, true)?;
        start = end;
    }
    a.diag_mut().mapv_inplace(|v| v + 1.0 / gamma);
    let weights = cholesky_solve(a.view(), r.view())?;
    let bias = &t_mean - &weights.t().dot(&x_mean);
    Ok(PrimalSolution { weights, bias })
}

/// Rows per chunk of the centred data in [`solve_primal`], in entries (32 MiB of `f64`).
const CHUNK_ENTRIES: usize = 1 << 22;

/// Column-block width of the lower-triangular rank-k update.
const SYRK_BLOCK: usize = 256;

/// `a += x^T x` on (at least) the lower triangle of `a`, block by block: only the blocks on or
/// below the diagonal are multiplied, about half the flops of a full GEMM. Entries strictly above
/// the diagonal blocks are left untouched (Cholesky reads the lower triangle only).
fn syrk_lower_into(a: &mut Array2<f64>, x: ArrayView2<'_, f64>) -> Result<()> {
    let d = x.ncols();
    let mut j0 = 0;
    while j0 < d {
        let j1 = (j0 + SYRK_BLOCK).min(d);
        // Rows j0..d, columns j0..j1: the diagonal block and everything below it.
        gemm_into(
            a.slice_mut(s![j0.., j0..j1]),
            x.slice(s![.., j0..]).t(),
            x.slice(s![.., j0..j1]),
            1.0,
            true,
        )?;
        j0 = j1;
    }
    Ok(())
}

fn check_square(k: ArrayView2<'_, f64>) -> Result<()> {
    check_nonempty("kernel matrix", k)?;
    if k.nrows() != k.ncols() {
        return Err(LssvmError::LengthMismatch {
            what: "kernel matrix columns",
            expected: k.nrows(),
            found: k.ncols(),
        });
    }
    Ok(())
}

/// One target row per sample: `targets` has `n` rows.
pub(crate) fn check_target_rows(targets: ArrayView2<'_, f64>, n: usize) -> Result<()> {
    if targets.nrows() != n {
        return Err(LssvmError::LengthMismatch {
            what: "targets",
            expected: n,
            found: targets.nrows(),
        });
    }
    Ok(())
}

fn check_targets(targets: ArrayView2<'_, f64>, n: usize) -> Result<()> {
    check_target_rows(targets, n)?;
    check_nonempty("targets", targets)?;
    check_finite("targets", targets)
}

/// `[1, T]`.
fn bordered_rhs(targets: ArrayView2<'_, f64>) -> Array2<f64> {
    let (n, m) = targets.dim();
    let mut rhs = Array2::ones((n, m + 1));
    rhs.slice_mut(s![.., 1..]).assign(&targets);
    rhs
}

/// From `[eta, nu] = H^{-1} [1, T]`: `b = 1^T nu / 1^T eta`, `alpha = nu - eta b`.
fn eliminate_bias(sol: Array2<f64>) -> Result<(Array2<f64>, Array1<f64>)> {
    let eta = sol.column(0);
    let s = eta.sum();
    if !(s.is_finite() && s != 0.0) {
        return Err(LinalgError::Factorization {
            op: "bordered LS-SVM system",
            reason: format!("1^T H^-1 1 = {s}: the bordered matrix is singular"),
        }
        .into());
    }
    let nu = sol.slice(s![.., 1..]);
    let bias = nu.sum_axis(Axis(0)) / s;
    let mut alpha = nu.to_owned();
    for (mut col, &b) in alpha.axis_iter_mut(Axis(1)).zip(bias.iter()) {
        col.scaled_add(-b, &eta);
    }
    Ok((alpha, bias))
}

fn is_symmetric(k: ArrayView2<'_, f64>) -> bool {
    let n = k.nrows();
    let scale = k.iter().fold(0.0_f64, |a, v| a.max(v.abs()));
    let tol = 16.0 * n as f64 * f64::EPSILON * scale;
    (0..n).all(|i| (0..i).all(|j| (k[[i, j]] - k[[j, i]]).abs() <= tol))
}
