//! Helpers shared by the solver tests: test matrices with a known spectrum and the checks of an
//! SVD that do not trust the solver's own bookkeeping.
#![allow(dead_code)] // each test binary uses its own subset

use ksvd_linalg::dense;
use ksvd_linalg::random::{gaussian_matrix, rng_from_seed};
use ksvd_solvers::SvdResult;
use ndarray::{Array1, Array2};

/// `U diag(s) Vᵀ` with random orthonormal `U`, `V` (`n × k`, `m × k`): a matrix with the
/// prescribed singular values `s` (sorted descending by the caller).
pub fn with_spectrum(n: usize, m: usize, s: &[f64], seed: u64) -> Array2<f64> {
    let mut rng = rng_from_seed(seed);
    let k = s.len();
    let u = dense::thin_q(gaussian_matrix(&mut rng, n, k).view()).unwrap();
    let v = dense::thin_q(gaussian_matrix(&mut rng, m, k).view()).unwrap();
    (&u * &Array1::from(s.to_vec())).dot(&v.t())
}

/// Explicit residuals `max_i max(‖G v_i − s_i u_i‖, ‖Gᵀ u_i − s_i v_i‖) / s_1` (independent of
/// the solver's own computation).
pub fn explicit_residual(g: &Array2<f64>, r: &SvdResult) -> f64 {
    let s1 = r.s[0].max(f64::MIN_POSITIVE);
    let e1 = &g.dot(&r.v) - &(&r.u * &r.s);
    let e2 = &g.t().dot(&r.u) - &(&r.v * &r.s);
    let col_max = |e: &Array2<f64>| e.columns().into_iter().map(|c| c.dot(&c).sqrt()).fold(0.0f64, f64::max);
    col_max(&e1).max(col_max(&e2)) / s1
}

/// `max |AᵀA − I|` entrywise.
pub fn orthonormality_error(a: &Array2<f64>) -> f64 {
    (&a.t().dot(a) - &Array2::<f64>::eye(a.ncols()))
        .iter()
        .fold(0.0f64, |x, v| x.max(v.abs()))
}

/// faer's convention `eps sqrt(8 max(n, m))`, with head-room (64) for the products in the checks.
pub fn eps_tol(n: usize, m: usize) -> f64 {
    64.0 * f64::EPSILON * (8.0 * n.max(m) as f64).sqrt()
}
