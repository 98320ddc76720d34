//! Truncated SVD by restarted Golub–Kahan–Lanczos bidiagonalisation.
//!
//! This is the augmented implicitly restarted scheme of Baglama & Reichel (IRLBA, SIAM J. Sci.
//! Comput. 27, 2005) with full re-orthogonalisation, which plays the role of ARPACK/PROPACK's
//! `svds` in the paper. With `U_w`, `V_w` orthonormal and `B_w` upper triangular,
//! `G V_w = U_w B_w` and `Gᵀ U_w = V_w B_wᵀ + f e_wᵀ`; if `B_w = P S Qᵀ` then the Ritz triplet
//! `(s_i, U_w p_i, V_w q_i)` has residual `‖Gᵀ u_i − s_i v_i‖ = ‖f‖ |P_{w,i}|` (and zero on the
//! other side). The iteration restarts by keeping the best Ritz vectors until every wanted
//! triplet has relative residual `≤ tol`.
use crate::error::{Result, SolverError};
use crate::svd::{check_rank, SvdResult};
use ksvd_linalg::{dense, random, LinearOperator};
use ndarray::{s, Array1, Array2, ArrayViewMut1, Axis};

/// Parameters of [`lanczos_svd`].
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct LanczosParams {
    /// Relative residual tolerance: stop when `‖Gᵀu_i − s_i v_i‖ ≤ tol · s_1` for every wanted `i`.
    pub tol: f64,
    /// Dimension of the Krylov subspace (default `max(2r, r + 20)`, capped at `min(n, m)`).
    pub work_dim: Option<usize>,
    /// Maximum number of restarts.
    pub max_restarts: usize,
    /// Seed of the starting vector.
    pub seed: u64,
}

impl Default for LanczosParams {
    fn default() -> Self {
        LanczosParams {
            tol: 1e-10,
            work_dim: None,
            max_restarts: 500,
            seed: 0,
        }
    }
}

/// Progress of a Lanczos run, reported after every restart.
#[derive(Debug, Clone, Copy)]
pub struct LanczosProgress {
    /// Restarts done so far.
    pub restart: usize,
    /// Products with `G` and `Gᵀ` so far.
    pub matvecs: usize,
    /// Largest relative residual of the wanted triplets.
    pub residual: f64,
    /// Tolerance being aimed at.
    pub tol: f64,
}

/// Statistics of a finished run.
#[derive(Debug, Clone, Copy)]
pub struct LanczosStats {
    /// Restarts performed.
    pub restarts: usize,
    /// Products with `G` plus products with `Gᵀ`.
    pub matvecs: usize,
    /// Final largest relative residual.
    pub residual: f64,
}

/// The top-`rank` singular triplets of `op` by restarted Lanczos bidiagonalisation.
pub fn lanczos_svd<O: LinearOperator + ?Sized>(op: &O, rank: usize, params: &LanczosParams) -> Result<SvdResult> {
    lanczos_svd_with_progress(op, rank, params, &mut |_| {}).map(|(r, _)| r)
}

/// Orthogonalises `x` against the first `k` columns of `basis` twice (classical Gram–Schmidt
/// with re-orthogonalisation), returning the accumulated coefficients.
fn orthogonalize(basis: &Array2<f64>, k: usize, x: &mut Array1<f64>) -> Array1<f64> {
    let mut coef = Array1::zeros(k);
    if k == 0 {
        return coef;
    }
    let b = basis.slice(s![.., ..k]);
    for _ in 0..2 {
        let c = b.t().dot(x);
        *x -= &b.dot(&c);
        coef += &c;
    }
    coef
}

fn norm(x: &Array1<f64>) -> f64 {
    x.dot(x).sqrt()
}

/// A unit vector orthogonal to the first `k` columns of `basis`, drawn from `rng`.
fn random_orthogonal(basis: &Array2<f64>, k: usize, rng: &mut random::SeededRng) -> Array1<f64> {
    for _ in 0..8 {
        let mut x = random::gaussian_matrix(rng, basis.nrows(), 1).column(0).to_owned();
        orthogonalize(basis, k, &mut x);
        let nx = norm(&x);
        if nx > 1e-8 {
            return x / nx;
        }
    }
    Array1::zeros(basis.nrows())
}

fn apply_vec<O: LinearOperator + ?Sized>(op: &O, x: &Array1<f64>, transpose: bool) -> Result<Array1<f64>> {
    let xv = x.view().insert_axis(Axis(1));
    let y = if transpose {
        op.apply_transpose(xv)?
    } else {
        op.apply(xv)?
    };
    let y = y.index_axis_move(Axis(1), 0);
    if y.iter().any(|v| !v.is_finite()) {
        return Err(SolverError::NonFinite);
    }
    Ok(y)
}

fn set_col(mut col: ArrayViewMut1<'_, f64>, x: &Array1<f64>) {
    col.assign(x);
}

/// [`lanczos_svd`] with a progress callback (called after every restart) and run statistics.
pub fn lanczos_svd_with_progress<O: LinearOperator + ?Sized>(
    op: &O,
    rank: usize,
    params: &LanczosParams,
    progress: &mut dyn FnMut(LanczosProgress),
) -> Result<(SvdResult, LanczosStats)> {
    let (n, m) = (op.nrows(), op.ncols());
    check_rank(n, m, rank)?;
    if !(params.tol.is_finite() && params.tol > 0.0) {
        return Err(SolverError::InvalidParameter {
            name: "tol",
            value: params.tol,
            reason: "must be positive",
        });
    }
    let kmax = n.min(m);
    let w = params.work_dim.unwrap_or((2 * rank).max(rank + 20)).clamp(rank, kmax);
    let mut rng = random::rng_from_seed(params.seed);
    let mut vb = Array2::<f64>::zeros((m, w));
    let mut ub = Array2::<f64>::zeros((n, w));
    let mut b = Array2::<f64>::zeros((w, w));
    let v0 = random_orthogonal(&vb, 0, &mut rng);
    set_col(vb.column_mut(0), &v0);
    let mut kept = 0usize;
    let mut matvecs = 0usize;
    let mut anorm = 0.0f64;
    let mut restart = 0usize;
    loop {
        let mut f = Array1::<f64>::zeros(m);
        let mut beta = 0.0;
        for j in kept..w {
            let vj = vb.column(j).to_owned();
            let mut u = apply_vec(op, &vj, false)?;
            matvecs += 1;
            let coef = orthogonalize(&ub, j, &mut u);
            b.slice_mut(s![..j, j]).assign(&coef);
            let mut alpha = norm(&u);
            anorm = anorm.max(alpha).max(coef.iter().fold(0.0f64, |a, c| a.max(c.abs())));
            let tiny = f64::EPSILON * (n.max(m) as f64).sqrt() * anorm.max(f64::MIN_POSITIVE);
            if alpha <= tiny {
                // G v_j lies in span(U): continue the basis with any orthogonal direction.
                u = random_orthogonal(&ub, j, &mut rng);
                alpha = 0.0;
            } else {
                u /= alpha;
            }
            b[[j, j]] = alpha;
            set_col(ub.column_mut(j), &u);
            f = apply_vec(op, &u, true)?;
            matvecs += 1;
            orthogonalize(&vb, j + 1, &mut f);
            beta = norm(&f);
            anorm = anorm.max(beta);
            if j + 1 < w {
                let next = if beta <= tiny {
                    random_orthogonal(&vb, j + 1, &mut rng)
                } else {
                    &f / beta
                };
                set_col(vb.column_mut(j + 1), &next);
            }
        }
        let svd = dense::thin_svd(b.view())?;
        let (p, sv, q) = (svd.u, svd.s, svd.v);
        let s1 = sv[0];
        let residual = if s1 > 0.0 {
            (0..rank).map(|i| beta * p[[w - 1, i]].abs() / s1).fold(0.0, f64::max)
        } else {
            0.0
        };
        restart += 1;
        progress(LanczosProgress {
            restart,
            matvecs,
            residual,
            tol: params.tol,
        });
        let converged = residual <= params.tol || w == kmax && beta <= f64::EPSILON * anorm;
        if converged || restart > params.max_restarts {
            if !converged && residual > params.tol {
                return Err(SolverError::NotConverged {
                    restarts: restart,
                    residual,
                    tol: params.tol,
                });
            }
            let u = ub.dot(&p.slice(s![.., ..rank]));
            let v = vb.dot(&q.slice(s![.., ..rank]));
            let mut out = SvdResult {
                u,
                s: sv.slice(s![..rank]).to_owned(),
                v,
            };
            out.normalize_signs();
            return Ok((
                out,
                LanczosStats {
                    restarts: restart,
                    matvecs,
                    residual,
                },
            ));
        }
        // Thick restart: keep the best `kept` Ritz vectors, continue with the residual direction.
        kept = (rank + (w - rank) / 2).min(w - 1).max(rank.min(w - 1));
        let new_v = vb.dot(&q.slice(s![.., ..kept]));
        let new_u = ub.dot(&p.slice(s![.., ..kept]));
        vb.slice_mut(s![.., ..kept]).assign(&new_v);
        ub.slice_mut(s![.., ..kept]).assign(&new_u);
        b.fill(0.0);
        for i in 0..kept {
            b[[i, i]] = sv[i];
        }
        let tiny = f64::EPSILON * (n.max(m) as f64).sqrt() * anorm.max(f64::MIN_POSITIVE);
        let next = if beta <= tiny {
            random_orthogonal(&vb, kept, &mut rng)
        } else {
            &f / beta
        };
        set_col(vb.column_mut(kept), &next);
    }
}
