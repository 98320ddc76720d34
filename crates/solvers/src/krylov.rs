//! Block Golub–Kahan–Lanczos bidiagonalisation with thick restarts: the Krylov engine behind
//! [`lanczos_svd`](crate::lanczos_svd) and [`block_krylov_svd`](crate::block_krylov_svd).
//!
//! With orthonormal bases `V = [V_1 … V_k]` (`m × j`) and `U = [U_1 … U_k]` (`n × j`) built
//! block by block (`b` vectors at a time, fully re-orthogonalised, so every product is a GEMM
//! with the operator), the engine keeps the exact relations
//!
//! ```text
//! G V = U B,        Gᵀ U = V Bᵀ + V₊ R₊ E_kᵀ,
//! ```
//!
//! where `B = Uᵀ G V` (`j × j`) is accumulated from the orthogonalisation coefficients, `V₊` is
//! the next (orthonormal) block and `R₊` its coupling to the last block of `U`. If
//! `B = P S Qᵀ`, the Ritz triplet `(s_i, U p_i, V q_i)` satisfies `G v_i = s_i u_i` and
//! `‖Gᵀ u_i − s_i v_i‖ = ‖R₊ p_i^{(k)}‖` (`p_i^{(k)}` the last `b` entries of `p_i`), so
//! convergence is read off the small problem. A block of size `b` resolves clusters of up to
//! `b` (nearly) equal singular values, where one-vector Lanczos finds only one copy of a
//! repeated value.
//!
//! When the basis reaches its maximum size the iteration restarts thickly (Wu & Simon, SIAM J.
//! Matrix Anal. Appl. 22, 2000; Baglama & Reichel's augmented IRLBA is the one-vector case):
//! the best `k` Ritz pairs are kept (`B` becomes diagonal) and the iteration continues from
//! `V₊`. Without restarts and with `b = r + p` random start vectors, the basis spans the block
//! Krylov space of Musco & Musco (NeurIPS 2015), i.e. randomized block Krylov SVD with a
//! residual-based stopping rule.
//!
//! Every result is certified at the end by two block products: the returned residuals are
//! computed explicitly, not estimated.
use crate::error::{Result, SolverError};
use crate::svd::{dense_svd_operator, SvdResult};
use ksvd_linalg::{dense, random, LinearOperator, Progress, ProgressFn};
use ndarray::{s, Array1, Array2, ArrayView2, ShapeBuilder};

/// What the engine is asked to do (validated by the public wrappers).
#[derive(Debug, Clone)]
pub(crate) struct EngineConfig {
    pub rank: usize,
    pub block: usize,
    pub max_basis: usize,
    pub max_restarts: usize,
    pub tol: f64,
    pub seed: u64,
    /// Stop early, unconverged, when the measured rate of convergence forecasts the tolerance
    /// beyond this many products (see [`Stall`]); `None`: run up to `max_restarts`.
    pub stall: Option<Stall>,
}

/// A restarted run's stopping rule for slow convergence: after every restart the run stops
/// unconverged once [`out_of_reach`] forecasts its tolerance beyond `max_products`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Stall {
    /// Products (with `G` and `Gᵀ`) the caller is prepared to spend on this run.
    pub max_products: usize,
}

/// Steps (restarts, iterations) over which [`out_of_reach`] measures the rate of convergence.
pub(crate) const STALL_WINDOW: usize = 20;

/// Estimates averaged at each end of the window by [`Stall`]: restarted Krylov estimates move by
/// a factor 2 between restarts.
const STALL_SMOOTHING: usize = 3;

/// Whether the residuals after each step of an iteration, `(cost so far, residual)`, forecast
/// `tol` beyond twice the cost left of `max_cost`: at the geometric rate per unit of cost over
/// the last [`STALL_WINDOW`] steps, each end of the window the geometric mean of `smoothing`
/// consecutive residuals (a rate of 1 or worse never gets there). The one rule of the restarted
/// Krylov runs ([`Stall`]; cost in products, `smoothing` [`STALL_SMOOTHING`]) and of the
/// shift-invert iteration (cost in iterations, `smoothing` 1). Slowly converging iterations
/// (flat, clustered spectra) fall steadily, so the rate is a fair forecast; the factor 2 allows
/// for its noise.
pub(crate) fn out_of_reach(history: &[(usize, f64)], tol: f64, max_cost: usize, smoothing: usize) -> bool {
    let done = history.len();
    let smoothing = smoothing.max(1);
    if done < STALL_WINDOW + smoothing {
        return false;
    }
    let smoothed = |end: usize| -> (f64, f64) {
        let w = &history[end - smoothing..end];
        let k = smoothing as f64;
        let p = w.iter().map(|&(p, _)| p as f64).sum::<f64>() / k;
        let e = w.iter().map(|&(_, e)| e.max(f64::MIN_POSITIVE).ln()).sum::<f64>() / k;
        (p, e)
    };
    let (p1, e1) = smoothed(done);
    let (p0, e0) = smoothed(done - STALL_WINDOW);
    if e1 <= tol.ln() {
        return false;
    }
    let per_product = (e1 - e0) / (p1 - p0);
    // A rate of 1 or more (or NaN) never gets there.
    if per_product.is_nan() || per_product >= 0.0 {
        return true;
    }
    let needed = (tol.ln() - e1) / per_product;
    let now = history[done - 1].0;
    needed > 2.0 * max_cost.saturating_sub(now) as f64
}

/// Statistics of a finished Krylov run.
#[derive(Debug, Clone, Copy)]
pub struct LanczosStats {
    /// Restarts performed.
    pub restarts: usize,
    /// Vectors multiplied by `G` plus vectors multiplied by `Gᵀ` (the final certification
    /// included).
    pub matvecs: usize,
    /// Final largest relative residual (computed explicitly).
    pub residual: f64,
    /// Block size used.
    pub block: usize,
    /// Largest basis size used.
    pub basis: usize,
    /// Whether every wanted triplet met the tolerance.
    pub converged: bool,
    /// Whether the run stopped early because its rate of convergence forecast the tolerance
    /// beyond the products allowed (a stall).
    pub stalled: bool,
    /// Whether the operator was small enough that a dense SVD was computed instead.
    pub dense: bool,
    /// Loss of orthonormality of the returned vectors, `max(‖UᵀU − I‖_max, ‖VᵀV − I‖_max)`
    /// (part of the certificate: residuals alone would accept a vector returned twice).
    pub orthogonality: f64,
}

fn finite(a: Array2<f64>) -> Result<Array2<f64>> {
    if a.iter().any(|v| !v.is_finite()) {
        return Err(SolverError::NonFinite);
    }
    Ok(a)
}

/// Below this fraction of its norm before orthogonalisation, a direction of a new block is
/// orthogonalised a third time (rounding left by two passes is amplified by the inverse).
const AMPLIFICATION: f64 = 1e-3;

/// A column that keeps at least this fraction of its norm through one Gram–Schmidt pass is
/// orthogonal to the basis to working accuracy (Daniel, Gragg, Kaufman & Stewart, Math. Comp.
/// 30, 1976: "twice is enough", and once is enough without cancellation).
const DGKS: f64 = std::f64::consts::FRAC_1_SQRT_2;

/// `w -= B (Bᵀ w)` (block classical Gram–Schmidt), repeated once when some column lost more
/// than the [`DGKS`] fraction of its norm (cancellation); returns the accumulated coefficients
/// `Bᵀ w` (`j × b`).
fn block_cgs(basis: ArrayView2<'_, f64>, w: &mut Array2<f64>) -> Result<Array2<f64>> {
    if basis.ncols() == 0 {
        return Ok(Array2::zeros((0, w.ncols())));
    }
    let before = column_norms(w);
    let mut coef = dense::matmul(basis.t(), w.view())?;
    dense::gemm_into(w.view_mut(), basis, coef.view(), -1.0, true)?;
    let after = column_norms(w);
    let cancelled = before.iter().zip(&after).any(|(&b, &a)| a < DGKS * b);
    if cancelled {
        let c = dense::matmul(basis.t(), w.view())?;
        dense::gemm_into(w.view_mut(), basis, c.view(), -1.0, true)?;
        coef += &c;
    }
    Ok(coef)
}

/// The Euclidean norm of every column of `w`.
pub(crate) fn column_norms(w: &Array2<f64>) -> Vec<f64> {
    w.columns().into_iter().map(|c| c.dot(&c).sqrt()).collect()
}

/// An orthonormal `Q` (`rows × b`) orthogonal to `basis` with `w = Q R` (`R = Qᵀ w`), for `w`
/// already orthogonal to `basis` (by [`block_cgs`]; `before` is `‖w‖_F` before that).
/// Directions where `w` is (numerically) rank deficient are filled with random vectors
/// orthogonal to `basis` and to the rest of `Q`.
fn orth_block(
    w: &Array2<f64>,
    basis: ArrayView2<'_, f64>,
    before: f64,
    tiny: f64,
    rng: &mut random::SeededRng,
) -> Result<(Array2<f64>, Array2<f64>)> {
    let (rows, b) = w.dim();
    if b == 1 {
        // One vector: normalise (the SVD of a column), unless it vanished.
        let nrm = frob(w);
        if nrm > tiny {
            let q = w.mapv(|v| v / nrm);
            if nrm < AMPLIFICATION * before && basis.ncols() > 0 {
                let mut q = q;
                block_cgs(basis, &mut q)?;
                let nq = frob(&q);
                q.mapv_inplace(|v| v / nq);
                let r = dense::matmul(q.t(), w.view())?;
                return Ok((q, r));
            }
            return Ok((q, Array2::from_elem((1, 1), nrm)));
        }
    }
    let svd = dense::thin_svd(w.view())?;
    let good = svd.s.iter().take_while(|&&x| x > tiny).count();
    let mut q = Array2::<f64>::zeros((rows, b).f());
    q.slice_mut(s![.., ..good]).assign(&svd.u.slice(s![.., ..good]));
    if good < b {
        for attempt in 0..4 {
            let mut fill = random::gaussian_matrix(rng, rows, b - good);
            block_cgs(basis, &mut fill)?;
            block_cgs(q.slice(s![.., ..good]), &mut fill)?;
            let f = dense::thin_svd(fill.view())?;
            let ok = f.s.iter().all(|&x| x > 1e-8 * f.s[0].max(f64::MIN_POSITIVE)) && f.s[0] > 0.0;
            if ok || attempt == 3 {
                let mut fq = f.u;
                // One more projection keeps the fill orthogonal to the basis to working accuracy.
                block_cgs(basis, &mut fq)?;
                block_cgs(q.slice(s![.., ..good]), &mut fq)?;
                let fq = dense::thin_q(fq.view())?;
                q.slice_mut(s![.., good..]).assign(&fq);
                break;
            }
        }
    }
    // Directions of `w` with small singular values amplify the rounding left by the
    // orthogonalisation against `basis` (by ‖w‖ / s_w, ‖w‖ before it): when that factor is
    // large, orthogonalise once more and re-orthonormalise (the block form of the DGKS
    // correction). Otherwise two passes already leave Q orthogonal to working accuracy, and a
    // third would read the whole basis twice more for nothing.
    let amplified = good < b || svd.s[good - 1] < AMPLIFICATION * before;
    if basis.ncols() > 0 && amplified {
        block_cgs(basis, &mut q)?;
        q = dense::thin_q(q.view())?;
    }
    let r = dense::matmul(q.t(), w.view())?;
    Ok((q, r))
}

/// Runs the engine. `Ok((result, stats))` also when the tolerance was not met
/// (`stats.converged == false`); callers decide whether that is an error.
pub(crate) fn run<O: LinearOperator + ?Sized>(
    op: &O,
    cfg: &EngineConfig,
    progress: &mut ProgressFn<'_>,
) -> Result<(SvdResult, LanczosStats)> {
    let (n, m) = (op.nrows(), op.ncols());
    let kmax = n.min(m);
    let rank = cfg.rank;
    let b = cfg.block.clamp(1, kmax);
    // Whole blocks only: dropping part of V₊ would break `Gᵀ U = V Bᵀ + V₊ R₊ E_kᵀ`.
    let wmax = cfg.max_basis.max(rank + b).div_ceil(b) * b;
    if wmax + b > kmax {
        // The basis plus the next block would span (nearly) the whole space: a dense SVD is
        // exact and cheaper.
        let r = dense_svd_operator(op, rank)?;
        let residual = r.max_residual().unwrap_or(0.0);
        let orth = orthogonality(&r);
        return Ok((
            r,
            LanczosStats {
                restarts: 0,
                matvecs: 2 * kmax + 2 * rank,
                residual,
                block: b,
                basis: kmax,
                converged: residual <= cfg.tol,
                stalled: false,
                dense: true,
                orthogonality: orth,
            },
        ));
    }
    // Thick restarts keep `wmax − t b ≥ r` Ritz pairs and add `t` blocks per cycle.
    let t_blocks = ((wmax - rank) / b / 2).max(1);
    let keep = wmax - t_blocks * b;
    let mut rng = random::rng_from_seed(cfg.seed);
    let mut vbasis = Array2::<f64>::zeros((m, wmax).f());
    let mut ubasis = Array2::<f64>::zeros((n, wmax).f());
    let mut bmat = Array2::<f64>::zeros((wmax, wmax));
    let start = random::gaussian_matrix(&mut rng, m, b);
    let mut vnext = dense::thin_q(start.view())?;
    let mut rnext: Array2<f64>;
    let mut j = 0usize;
    let mut anorm = 0.0f64;
    let mut matvecs = 0usize;
    let mut restarts = 0usize;
    let scale_tiny = f64::EPSILON * (n.max(m) as f64).sqrt();
    // The last two convergence checks (products so far, estimate), for the forecast below.
    let mut checks: [Option<(usize, f64)>; 2] = [None, None];
    // The estimate at the end of every cycle, for the stall forecast.
    let mut history: Vec<(usize, f64)> = Vec::new();
    loop {
        // Extend the basis by blocks until it is full or the wanted triplets have converged.
        let mut ritz: Option<(Array2<f64>, Array1<f64>, Array2<f64>, f64)> = None;
        // After a restart, one extra check where the measured rate of convergence says the
        // tolerance will be met (none when that lies beyond this cycle).
        let mut forecast = if restarts > 0 {
            forecast_check(checks, cfg.tol, j, b)
        } else {
            None
        };
        while j < wmax {
            let bc = vnext.ncols();
            let vb = vnext.slice(s![.., ..bc]).to_owned();
            vbasis.slice_mut(s![.., j..j + bc]).assign(&vb);
            let mut w = finite(op.apply(vb.view())?)?;
            matvecs += bc;
            let before = frob(&w);
            let c = block_cgs(ubasis.slice(s![.., ..j]), &mut w)?;
            anorm = anorm.max(frob(&w)).max(frob(&c));
            let tiny = scale_tiny * anorm.max(f64::MIN_POSITIVE);
            let (q, r) = orth_block(&w, ubasis.slice(s![.., ..j]), before, tiny, &mut rng)?;
            ubasis.slice_mut(s![.., j..j + bc]).assign(&q);
            bmat.slice_mut(s![..j, j..j + bc]).assign(&c);
            bmat.slice_mut(s![j..j + bc, j..j + bc]).assign(&r);
            let mut f = finite(op.apply_transpose(q.view())?)?;
            matvecs += bc;
            let before = frob(&f);
            block_cgs(vbasis.slice(s![.., ..j + bc]), &mut f)?;
            anorm = anorm.max(frob(&f));
            let tiny = scale_tiny * anorm.max(f64::MIN_POSITIVE);
            let (vn, rn) = orth_block(&f, vbasis.slice(s![.., ..j + bc]), before, tiny, &mut rng)?;
            j += bc;
            vnext = vn;
            rnext = rn;
            // Check after every block of the first cycle while the small SVD is cheap (j ≤ 400),
            // so easy problems stop early; after a restart, once per cycle: on hard problems
            // (flat spectra, many restarts) the O(j³) checks would otherwise cost more than
            // the products, and a check per cycle wastes at most one cycle.
            let forecast_due = forecast.is_some_and(|f| j >= f);
            if j < rank || ((restarts > 0 || j > 400) && j < wmax && !forecast_due) {
                continue;
            }
            if forecast_due {
                forecast = None;
            }
            // Ritz values and residual estimates from the small problem.
            let small = dense::thin_svd(bmat.slice(s![..j, ..j]))?;
            let s1 = small.s[0];
            anorm = anorm.max(s1);
            let last = small.u.slice(s![j - bc..j, ..rank]);
            let coupling = dense::matmul(rnext.view(), last)?;
            let denom = if s1 > 0.0 { s1 } else { 1.0 };
            let est = (0..rank)
                .map(|i| coupling.column(i).dot(&coupling.column(i)).sqrt() / denom)
                .fold(0.0, f64::max);
            // Restarts done, of at most `max_restarts`; products with `G` and `Gᵀ` so far.
            progress(
                &Progress::new("block Lanczos restart", restarts, Some(cfg.max_restarts))
                    .with_products(matvecs)
                    .with_residual(est, cfg.tol),
            );
            let done = est <= cfg.tol;
            checks = [checks[1], Some((matvecs, est))];
            ritz = Some((small.u, small.s, small.v, est));
            if done {
                break;
            }
        }
        let Some((p, sv, qv, est)) = ritz else {
            // Only reachable when rank > wmax, excluded above.
            return Err(SolverError::InvalidParameter {
                name: "work_dim",
                value: wmax as f64,
                reason: "must exceed the rank",
            });
        };
        let converged_estimate = est <= cfg.tol;
        history.push((matvecs, est));
        let stalled = !converged_estimate
            && cfg
                .stall
                .is_some_and(|st| out_of_reach(&history, cfg.tol, st.max_products, STALL_SMOOTHING));
        if converged_estimate || stalled || restarts >= cfg.max_restarts {
            let u = dense::matmul(ubasis.slice(s![.., ..j]), p.slice(s![.., ..rank]))?;
            let v = dense::matmul(vbasis.slice(s![.., ..j]), qv.slice(s![.., ..rank]))?;
            let mut out = SvdResult::new(u, sv.slice(s![..rank]).to_owned(), v);
            out.normalize_signs();
            let out = out.certify(op)?;
            matvecs += 2 * rank;
            let residual = out.max_residual().unwrap_or(0.0);
            let orth = orthogonality(&out);
            let converged = residual <= cfg.tol && orth <= ORTHOGONALITY_TOL;
            // Rounding can leave the explicit residual slightly above the estimate: restart once
            // more from the Ritz vectors if any restarts remain.
            if converged || stalled || restarts >= cfg.max_restarts {
                return Ok((
                    out,
                    LanczosStats {
                        restarts,
                        matvecs,
                        residual,
                        block: b,
                        basis: wmax,
                        converged,
                        stalled: stalled && !converged,
                        dense: false,
                        orthogonality: orth,
                    },
                ));
            }
        }
        // Thick restart: keep the best `keep` Ritz pairs; continue from V₊.
        let new_v = dense::matmul(vbasis.slice(s![.., ..j]), qv.slice(s![.., ..keep]))?;
        let new_u = dense::matmul(ubasis.slice(s![.., ..j]), p.slice(s![.., ..keep]))?;
        vbasis.slice_mut(s![.., ..keep]).assign(&new_v);
        ubasis.slice_mut(s![.., ..keep]).assign(&new_u);
        bmat.fill(0.0);
        for i in 0..keep {
            bmat[[i, i]] = sv[i];
        }
        j = keep;
        restarts += 1;
    }
}

/// The basis size after a restart at `j` (block width `b`) at which the residual estimate is
/// forecast to reach `tol`, from the rate per product between the last two checks (products,
/// estimate); `None` without two decreasing positive estimates. On easy problems this stops a
/// cycle after the one block it needs (the dense race: 80 products fewer), while hard ones (a
/// flat spectrum, many restarts) forecast beyond the cycle and keep one check per cycle.
pub(crate) fn forecast_check(checks: [Option<(usize, f64)>; 2], tol: f64, j: usize, b: usize) -> Option<usize> {
    let [Some((p0, e0)), Some((p1, e1))] = checks else {
        return None;
    };
    if !(p1 > p0 && e0 > 0.0 && e1 > 0.0 && e1 < e0 && tol > 0.0) {
        return None;
    }
    if e1 <= tol {
        return Some(j + b);
    }
    // ln(estimate) falls linearly in the products: the products still needed.
    let per_product = (e1 / e0).ln() / (p1 - p0) as f64;
    let products = (tol / e1).ln() / per_product;
    // Each block costs 2b products (G and Gᵀ); at least one block.
    let blocks = (products / (2 * b) as f64).ceil().max(1.0);
    if !blocks.is_finite() || blocks > 1e6 {
        return None;
    }
    Some(j + blocks as usize * b)
}

/// Largest loss of orthonormality a certified result may show. Full re-orthogonalisation
/// keeps it near `1e-13`; duplicated ("ghost") vectors show `O(1)`.
pub(crate) const ORTHOGONALITY_TOL: f64 = 1e-8;

/// `max(‖UᵀU − I‖_max, ‖VᵀV − I‖_max)`.
pub(crate) fn orthogonality(r: &SvdResult) -> f64 {
    let dev = |a: &Array2<f64>| -> f64 {
        let g = a.t().dot(a);
        g.indexed_iter()
            .map(|((i, j), &x)| (x - if i == j { 1.0 } else { 0.0 }).abs())
            .fold(0.0, f64::max)
    };
    dev(&r.u).max(dev(&r.v))
}

/// Frobenius norm.
pub(crate) fn frob(a: &Array2<f64>) -> f64 {
    a.iter().map(|x| x * x).sum::<f64>().sqrt()
}

#[cfg(test)]
mod tests {
    use super::{forecast_check, out_of_reach, Stall, STALL_SMOOTHING, STALL_WINDOW};
    use crate::SolverError;

    /// Estimates after each of `restarts` restarts of `per` products, falling by `rate` per
    /// restart from 0.1, times `noise(i)`.
    fn history(restarts: usize, per: usize, rate: f64, noise: impl Fn(usize) -> f64) -> Vec<(usize, f64)> {
        (1..=restarts)
            .map(|i| (i * per, 0.1 * rate.powi(i as i32) * noise(i)))
            .collect()
    }

    #[test]
    fn stall_forecast_follows_the_measured_rate() {
        // A factor 10 per 10 restarts of 100 products: 1e-8 from 1e-4 (restart 30) takes 40
        // more restarts, 4000 products.
        let steady = history(30, 100, 0.1f64.powf(0.1), |_| 1.0);
        assert!(!out_of_reach(&steady, 1e-8, 3000 + 8000, STALL_SMOOTHING));
        assert!(out_of_reach(&steady, 1e-8, 3000 + 1000, STALL_SMOOTHING));
        // Too few restarts to measure a rate: never out of reach.
        assert!(!out_of_reach(&steady[..STALL_WINDOW + 2], 1e-8, 0, STALL_SMOOTHING));
        // Already below the tolerance.
        assert!(!out_of_reach(&steady, 1e-3, 0, STALL_SMOOTHING));
        // No decrease (a stall) or an increase: out of reach whatever the allowance.
        let flat = history(30, 100, 1.0, |_| 1.0);
        assert!(out_of_reach(&flat, 1e-8, usize::MAX, STALL_SMOOTHING));
        let rising = history(30, 100, 1.01, |_| 1.0);
        assert!(out_of_reach(&rising, 1e-8, usize::MAX, STALL_SMOOTHING));
    }

    /// A diagonal matrix with singular values `s` (square).
    fn diagonal(s: &[f64]) -> ndarray::Array2<f64> {
        ndarray::Array2::from_diag(&ndarray::Array1::from(s.to_vec()))
    }

    fn params(tol: f64, max_restarts: usize) -> crate::LanczosParams {
        crate::LanczosParams {
            tol,
            work_dim: Some(32),
            max_restarts,
            seed: 3,
            block_size: Some(4),
        }
    }

    #[test]
    fn a_slowly_converging_run_stops_once_the_forecast_exceeds_its_allowance() {
        use crate::lanczos::lanczos_with_stall;
        // A flat spectrum (relative gaps 1e-3): rank 10 to 1e-12 takes hundreds of restarts.
        let s: Vec<f64> = (0..300).map(|i| 1.0 / (1.0 + 1e-3 * i as f64)).collect();
        let g = diagonal(&s);
        let per_restart = 32 - 10;
        let stall = Stall {
            max_products: 30 * per_restart,
        };
        let err = lanczos_with_stall(&g.view(), 10, &params(1e-12, 500), Some(stall), &mut |_| {}).unwrap_err();
        let SolverError::NotConverged { iterations, .. } = err else {
            panic!("expected NotConverged, got {err:?}");
        };
        assert!(
            (STALL_WINDOW + 2..30).contains(&iterations),
            "stopped after {iterations} restarts"
        );
        // Without the rule the same run keeps going to its restart limit.
        let err = lanczos_with_stall(&g.view(), 10, &params(1e-12, 40), None, &mut |_| {}).unwrap_err();
        assert!(
            matches!(err, SolverError::NotConverged { iterations: 40, .. }),
            "{err:?}"
        );
    }

    #[test]
    fn the_stall_rule_leaves_a_converging_run_alone() {
        use crate::lanczos::lanczos_with_stall;
        // Relative gaps 3e-3: rank 10 to 1e-10 in about 30 restarts, past the rule's window,
        // within an allowance of 40 restarts' products.
        let s: Vec<f64> = (0..300).map(|i| 1.0 / (1.0 + 3e-3 * i as f64)).collect();
        let g = diagonal(&s);
        let stall = Stall {
            max_products: 40 * (32 - 10),
        };
        let (with, st) = lanczos_with_stall(&g.view(), 10, &params(1e-10, 500), Some(stall), &mut |_| {}).unwrap();
        let (without, _) = lanczos_with_stall(&g.view(), 10, &params(1e-10, 500), None, &mut |_| {}).unwrap();
        assert!(st.converged && !st.stalled);
        assert!(
            st.restarts > STALL_WINDOW + 3,
            "{} restarts: the rule never applied",
            st.restarts
        );
        assert_eq!(with.s, without.s);
        assert_eq!(with.u, without.u);
        for (x, y) in with.s.iter().zip(&s) {
            assert!((x - y).abs() <= 1e-10 * s[0], "{x} vs {y}");
        }
    }

    #[test]
    fn stall_forecast_smooths_estimates_that_jump_by_a_factor_two() {
        // The same steady rate with the estimate alternately doubled and halved (as restarted
        // runs on flat spectra show): the forecast stays within the allowance.
        let noisy = history(30, 100, 0.1f64.powf(0.1), |i| if i % 2 == 0 { 2.0 } else { 0.5 });
        assert!(!out_of_reach(&noisy, 1e-8, 3000 + 8000, STALL_SMOOTHING));
        // With 1-in-3 doubled: still in reach, and a flat noisy run still stalls.
        let noisy = history(30, 100, 0.1f64.powf(0.1), |i| if i % 3 == 0 { 2.0 } else { 1.0 });
        assert!(!out_of_reach(&noisy, 1e-8, 3000 + 8000, STALL_SMOOTHING));
        let flat = history(30, 100, 1.0, |i| if i % 2 == 0 { 2.0 } else { 0.5 });
        assert!(out_of_reach(&flat, 1e-8, usize::MAX, STALL_SMOOTHING));
    }

    #[test]
    fn forecast_follows_the_measured_rate() {
        // 1e-2 -> 1e-5 over 40 products: 1e-3 per 40 products, so 1e-8 needs 40 more, one block
        // of 20 (40 products).
        let checks = [Some((100, 1e-2)), Some((140, 1e-5))];
        assert_eq!(forecast_check(checks, 1e-8, 60, 20), Some(80));
        // 1e-20 needs 200 products: five blocks.
        assert_eq!(forecast_check(checks, 1e-20, 60, 20), Some(160));
        // Already below the tolerance: the next block.
        assert_eq!(forecast_check(checks, 1e-4, 60, 20), Some(80));
    }

    #[test]
    fn no_forecast_without_a_decreasing_pair() {
        assert_eq!(forecast_check([None, Some((40, 1e-3))], 1e-8, 60, 20), None);
        assert_eq!(forecast_check([Some((40, 1e-3)), Some((80, 1e-3))], 1e-8, 60, 20), None);
        assert_eq!(forecast_check([Some((40, 1e-3)), Some((80, 1e-2))], 1e-8, 60, 20), None);
        assert_eq!(forecast_check([Some((40, 0.0)), Some((80, 0.0))], 1e-8, 60, 20), None);
        // A rate so slow that the forecast is absurd.
        assert_eq!(
            forecast_check([Some((40, 1.0)), Some((80, 1.0 - 1e-15))], 1e-8, 60, 20),
            None
        );
    }
}
