//! Adaptive landmarks: a pivoted block cross approximation of `G`.
//!
//! The approximation `Ĝ = A Bᵀ` (`A` is `N × k`, `B` is `M × k`) is built a block of pivots at a
//! time. With the residual `R = G − A Bᵀ`, a step chooses rows `I'`, evaluates the residual rows
//! `R[I', :]`, chooses columns `J'` among them by column-pivoted QR, evaluates the residual
//! columns `R[:, J']`, and adds the cross term `R[:, J'] W⁺ R[I', :]` with `W = R[I', J']`
//! (truncated pseudo-inverse, in balanced factors). Residual rows and columns are evaluated from
//! rows and columns of `G` and the current factors, so the work is `O((N + M) m²)` and `G` is
//! never formed. In exact arithmetic `Ĝ = G[:, J] G[I, J]⁻¹ G[I, :]`, the cross (skeleton)
//! approximation on the chosen landmarks, which interpolates every chosen row and column; with
//! `rank(G)` successful pivots it equals `G`.
//!
//! The pivots matter for stability. Columns are the pivots (column-pivoted QR) of the residual
//! rows, which keeps the multipliers `W⁻¹ R[I', :]` bounded; then the rows are refined to the
//! pivots of the residual columns (one rook step), which keeps `R[:, J'] W⁻¹` bounded. Columns
//! drawn at random in proportion to the residual rows' entries bound neither, and on Pubmed's SNE
//! kernel such a variant amplified the residual until the error was thousands of times the
//! optimum at `m = 1000`; without the rook step, rows whose residual is rounding noise (exact
//! duplicates of chosen rows, common in graph kernels) made the error grow tenfold at `m ≥ 500`.
//!
//! Row rules:
//! * randomly pivoted ([`Sampling::AdaptiveCross`](crate::Sampling::AdaptiveCross)): rows are
//!   drawn in proportion to the squared norms of the residual's rows, estimated for all rows at
//!   once from a Gaussian sketch `Y = R Ω` (`p` columns) that is formed once as `G Ω` (one
//!   product with `G`) and then updated through the factors (`Y ← Y − A' (B'ᵀ Ω)`), so rows
//!   anywhere in `G` can be found, not only those coupled to the landmarks so far;
//! * greedy ([`Sampling::GreedyCross`](crate::Sampling::GreedyCross)): rows are the pivots of the
//!   last residual columns (column-pivoted QR of `R[:, J']ᵀ`), the rook walk of adaptive cross
//!   approximation with partial pivoting (Bebendorf 2000); the first block of rows is a seeded
//!   uniform draw. No product with `G`, but the walk only reaches rows coupled to its landmarks.
//!
//! A safety net covers what pivoting cannot rule out (pivot growth late in the process, which
//! was seen on Pubmed's raw SNE kernel at `m = 2000`): when an update makes the sketched residual
//! grow, or residual entries exceed the entries of `G` by a wide margin, the factors before it are
//! kept and the pivoting stops, so more landmarks never make the approximation worse than fewer.
//!
//! Both also track the coefficients `X_A`, `X_B` with `A = G[:, J] X_A` and `B = G[I, :]ᵀ X_B`,
//! so that the truncated SVD `Ĝ ≈ U S Vᵀ` extends to new samples through landmark kernel values
//! only: `U = G[:, J] X_A (Bᵀ V) S⁻¹` (eq. 10's form, with other coefficients).
use crate::error::{require_rank, NystromError, Result};
use ksvd_linalg::random::{gaussian_matrix, rng_from_seed, sample_indices, SeededRng};
use ksvd_linalg::{dense, MatrixBlocks};
use ndarray::{s, Array1, Array2, ArrayView2, Axis};
use rand::Rng;

/// How the next rows and columns are chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pivoting {
    /// In proportion to (sketched) squared residual norms.
    Random,
    /// Largest residual (partial pivoting).
    Greedy,
}

/// Columns of the Gaussian sketch that estimates residual row norms.
const SKETCH: usize = 10;

/// Growth of the residual that counts as breakdown: an update that multiplies the sketched
/// residual norm by more than this (a cross update is a Schur complement and may enlarge the
/// residual a little, not by this much), or residual entries above `GROWTH` times the largest
/// entry of `G` seen so far, is undone (the factors before it are kept) and the pivoting stops.
const GROWTH: f64 = 4.0;

/// A cross approximation `G ≈ A Bᵀ` on landmark rows `I` and columns `J`.
#[derive(Debug, Clone)]
pub(crate) struct Cross {
    /// `N × k`.
    pub a: Array2<f64>,
    /// `M × k`.
    pub b: Array2<f64>,
    /// Landmark rows `I`, in the order they were chosen.
    pub rows: Vec<usize>,
    /// Landmark columns `J`, in the order they were chosen.
    pub cols: Vec<usize>,
    /// `|J| × k`: `A = G[:, J] X_A`.
    pub xa: Array2<f64>,
    /// `|I| × k`: `B = G[I, :]ᵀ X_B`.
    pub xb: Array2<f64>,
    /// Randomly pivoted: the sketch `Ω` and its final residual image `(G − A Bᵀ) Ω`.
    #[cfg_attr(not(test), allow(dead_code))]
    pub sketch: Option<(Array2<f64>, Array2<f64>)>,
}

/// The block size used for `m` pivots: one pivot at a time for small `m`, at most 32.
pub(crate) fn block_size(m: usize) -> usize {
    (m / 16).clamp(1, 32)
}

/// `k` distinct indices with positive score, excluding `taken`, drawn in proportion to the
/// scores (Efraimidis–Spirakis keys), in draw order.
fn choose(scores: &[f64], taken: &[bool], k: usize, rng: &mut SeededRng) -> Vec<usize> {
    let mut keyed: Vec<(f64, usize)> = scores
        .iter()
        .enumerate()
        .filter(|&(i, &w)| !taken[i] && w > 0.0 && w.is_finite())
        .map(|(i, &w)| {
            let u: f64 = rng.gen::<f64>().max(f64::MIN_POSITIVE);
            (u.ln() / w, i)
        })
        .collect();
    let k = k.min(keyed.len());
    if k == 0 {
        return Vec::new();
    }
    keyed.select_nth_unstable_by(k - 1, |a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    keyed.truncate(k);
    keyed.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    keyed.into_iter().map(|(_, i)| i).collect()
}

/// Up to `k` pivot columns of `a` (column-pivoted QR) among those not yet `taken` and with a
/// nonzero column (taken columns are zeroed first, so they are never pivots of value).
fn pivot_untaken(a: ArrayView2<'_, f64>, taken: &[bool], k: usize) -> Result<Vec<usize>> {
    let mut a = a.to_owned();
    for (mut c, &t) in a.axis_iter_mut(Axis(1)).zip(taken) {
        if t {
            c.fill(0.0);
        }
    }
    let nonzero: Vec<bool> = a.axis_iter(Axis(1)).map(|c| c.iter().any(|&x| x != 0.0)).collect();
    Ok(dense::pivot_columns(a.view(), k)?
        .into_iter()
        .filter(|&j| !taken[j] && nonzero[j])
        .collect())
}

/// `k` indices drawn uniformly among those not yet `taken`.
fn uniform_untaken(taken: &[bool], k: usize, rng: &mut SeededRng) -> Vec<usize> {
    let free: Vec<usize> = (0..taken.len()).filter(|&i| !taken[i]).collect();
    let pick = sample_indices(rng, free.len(), k.min(free.len()));
    pick.into_iter().map(|p| free[p]).collect()
}

/// `Q Y` for the thin QR `A = Q T`, as `A (T⁻¹ Y)` without forming `Q` when that is accurate:
/// `A T⁻¹` loses orthogonality in proportion to `cond(T)` (and fails for a singular `T`, as
/// when `G` has exactly repeated rows), so the explicit `Q` is formed then.
fn basis_times(a: ArrayView2<'_, f64>, t: ArrayView2<'_, f64>, y: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
    if let Ok(ty) = dense::solve_upper_triangular(t, y) {
        let q = dense::matmul(a, ty.view())?;
        if orthonormality_loss(&q)? <= 1e-10 {
            return Ok(q);
        }
    }
    Ok(dense::matmul(dense::thin_qr(a)?.0.view(), y)?)
}

/// `max |QᵀQ − I|` of a basis.
fn orthonormality_loss(q: &Array2<f64>) -> Result<f64> {
    let g = dense::matmul(q.t(), q.view())?;
    Ok(g.indexed_iter()
        .map(|((i, j), x)| (x - if i == j { 1.0 } else { 0.0 }).abs())
        .fold(0.0, f64::max))
}

/// `‖a‖_F²`.
fn fro_sq(a: ArrayView2<'_, f64>) -> f64 {
    a.iter().map(|v| v * v).sum()
}

fn row_sq_norms(a: ArrayView2<'_, f64>) -> Vec<f64> {
    a.outer_iter().map(|r| r.dot(&r)).collect()
}

/// Builds the cross approximation with `pivots` landmark rows and columns (fewer when the
/// residual vanishes first: `G` then has rank below `pivots` and is reproduced exactly).
pub(crate) fn cross_approximation<G>(g: &G, pivots: usize, pivoting: Pivoting, seed: u64) -> Result<Cross>
where
    G: MatrixBlocks + ?Sized,
{
    let (nn, mm) = (g.nrows(), g.ncols());
    let target = pivots.min(nn).min(mm);
    let bsize = block_size(target);
    let mut rng = rng_from_seed(seed);
    let all_rows: Vec<usize> = (0..nn).collect();
    let all_cols: Vec<usize> = (0..mm).collect();

    let mut a = Array2::<f64>::zeros((nn, target));
    let mut b = Array2::<f64>::zeros((mm, target));
    let mut xa = Array2::<f64>::zeros((target, target));
    let mut xb = Array2::<f64>::zeros((target, target));
    let (mut rows, mut cols) = (Vec::with_capacity(target), Vec::with_capacity(target));
    let (mut row_taken, mut col_taken) = (vec![false; nn], vec![false; mm]);
    let mut k = 0usize;

    // Randomly pivoted: the sketch Y = R Ω of the residual (R = G at the start).
    let mut sketch = match pivoting {
        Pivoting::Random => {
            let omega = gaussian_matrix(&mut rng, mm, SKETCH);
            let y = g.apply(omega.view())?;
            Some((omega, y))
        }
        Pivoting::Greedy => None,
    };
    let sketch_norm0: f64 = sketch.as_ref().map_or(0.0, |(_, y)| fro_sq(y.view()));
    let vanished = (64.0 * f64::EPSILON * ((nn + mm) as f64).sqrt()).powi(2) * sketch_norm0;
    // Greedy: the last residual columns, whose pivot rows come next (none yet: a uniform block).
    let mut greedy_rows: Option<Array2<f64>> = None;
    // Largest pivot-block singular value seen: pivot values below ~eps times it are noise.
    let mut scale = 0.0f64;
    // Largest |G| entry evaluated so far, and the rank before the last update (rollback).
    let (mut gmax, mut k_prev) = (0.0f64, 0usize);
    let largest = |x: &Array2<f64>| x.iter().fold(0.0f64, |m, v| m.max(v.abs()));

    while rows.len() < target {
        let want = bsize.min(target - rows.len());
        // 1. Rows.
        let mut new_rows = match (&sketch, &greedy_rows) {
            (Some((_, y)), _) => {
                let sc = row_sq_norms(y.view());
                if k > 0 && sc.iter().sum::<f64>() <= vanished {
                    // The residual is rounding noise: G has numerical rank k.
                    break;
                }
                choose(&sc, &row_taken, want, &mut rng)
            }
            (None, Some(c)) => pivot_untaken(c.t(), &row_taken, want)?,
            (None, None) => Vec::new(),
        };
        if new_rows.is_empty() {
            if sketch.is_some() && k > 0 {
                // The sketched residual vanished: G has rank k (with probability one).
                break;
            }
            new_rows = uniform_untaken(&row_taken, want, &mut rng);
        }
        if new_rows.is_empty() {
            break;
        }
        let ak = a.slice(s![.., ..k]);
        let bk = b.slice(s![.., ..k]);
        // 2. Residual rows R[I', :] = G[I', :] − A[I', :] Bᵀ (and A[I', :]); also notes the
        //    largest |G| entry evaluated.
        let residual_rows = |rows: &[usize], gmax: &mut f64| -> Result<(Array2<f64>, Array2<f64>)> {
            let mut rres = g.block(rows, &all_cols)?;
            *gmax = gmax.max(largest(&rres));
            let a_i = ak.select(Axis(0), rows);
            dense::gemm_into(rres.view_mut(), a_i.view(), bk.t(), -1.0, true)?;
            Ok((rres, a_i))
        };
        let (mut rres, a_i) = residual_rows(&new_rows, &mut gmax)?;
        // 3. Columns from the residual rows by column-pivoted QR (bounded multipliers
        //    W⁻¹ R[I', :]: without them the cross term amplifies the residual elsewhere).
        let mut new_cols = pivot_untaken(rres.view(), &col_taken, new_rows.len())?;
        if new_cols.len() < new_rows.len() {
            // The residual rows vanish outside the chosen columns: fill up uniformly.
            let mut taken = col_taken.clone();
            for &j in &new_cols {
                taken[j] = true;
            }
            new_cols.extend(uniform_untaken(&taken, new_rows.len() - new_cols.len(), &mut rng));
        }
        if new_cols.len() < new_rows.len() {
            new_rows.truncate(new_cols.len());
            rres = rres.slice(s![..new_rows.len(), ..]).to_owned();
        }
        if new_rows.is_empty() {
            break;
        }
        let a_i = a_i.slice(s![..new_rows.len(), ..]).to_owned();
        // 4. Residual columns R[:, J'] = G[:, J'] − A B[J', :]ᵀ.
        let mut cres = g.block(&all_rows, &new_cols)?;
        gmax = gmax.max(largest(&cres));
        let b_j = bk.select(Axis(0), &new_cols);
        dense::gemm_into(cres.view_mut(), ak, b_j.t(), -1.0, true)?;
        // Safety net: residual entries far above the entries of G mean the last update grew
        // the residual (pivot growth); fall back to the factors before it.
        if k > 0 && largest(&rres).max(largest(&cres)) > GROWTH * gmax {
            k = k_prev;
            break;
        }
        // 4b. Rook refinement: the rows become the pivots of these residual columns, which bounds
        //     the multipliers R[:, J'] W⁻¹ as step 3 bounds W⁻¹ R[I', :]. Without it a drawn row
        //     whose residual is rounding noise (a duplicate of a chosen row) makes W noise and
        //     the cross term garbage of the size of R[:, J'].
        let refined = pivot_untaken(cres.t(), &row_taken, new_rows.len())?;
        let same = {
            let (mut x, mut y) = (refined.clone(), new_rows.clone());
            x.sort_unstable();
            y.sort_unstable();
            x == y
        };
        let (rres, a_i) = if refined.len() == new_rows.len() && !same {
            new_rows = refined;
            residual_rows(&new_rows, &mut gmax)?
        } else {
            (rres, a_i)
        };
        // 5. The pivot block W = R[I', J'] and its truncated pseudo-inverse in balanced factors.
        let w = rres.select(Axis(1), &new_cols);
        let svd = dense::thin_svd(w.view())?;
        scale = scale.max(svd.s.first().copied().unwrap_or(0.0));
        let floor = scale * f64::EPSILON * 64.0 * ((nn + mm) as f64).sqrt();
        let s0 = svd.s.first().copied().unwrap_or(0.0);
        // The residual is G − A Bᵀ evaluated in floating point: its entries carry rounding of
        // order ε (|G| + |A||B|ᵀ), which grows with the factors. Pivot values below that level
        // are noise, and dividing by them injects garbage of the size of R[:, J'].
        let fro = |x: ArrayView2<'_, f64>| fro_sq(x).sqrt();
        let noise = 16.0 * f64::EPSILON * ((k + 1) as f64).sqrt() * (fro(w.view()) + fro(a_i.view()) * fro(b_j.view()));
        let t = svd
            .s
            .iter()
            .take_while(|&&x| x > floor && x > noise && x > 1e-10 * s0)
            .count();
        // Greedy: the next rows are the pivots of these residual columns (before the update).
        if pivoting == Pivoting::Greedy {
            greedy_rows = Some(cres.clone());
        }
        let (ib, jb) = (rows.len(), cols.len());
        for &i in &new_rows {
            row_taken[i] = true;
        }
        for &j in &new_cols {
            col_taken[j] = true;
        }
        rows.extend_from_slice(&new_rows);
        cols.extend_from_slice(&new_cols);
        if t == 0 {
            if s0 > 0.0 && s0 <= noise {
                // The best pivots this rule finds are rounding noise: the approximation is as
                // accurate as the arithmetic allows.
                break;
            }
            continue;
        }
        let inv_sqrt = svd.s.slice(s![..t]).mapv(|x| 1.0 / x.sqrt());
        // A' = R[:, J'] Q Σ^{-1/2},  B' = R[I', :]ᵀ P Σ^{-1/2}  (W = P Σ Qᵀ).
        let qs = &svd.v.slice(s![.., ..t]) * &inv_sqrt;
        let ps = &svd.u.slice(s![.., ..t]) * &inv_sqrt;
        let a_new = dense::matmul(cres.view(), qs.view())?;
        let b_new = dense::matmul(rres.t(), ps.view())?;
        // Coefficients: R[:, J'] = G[:, J ∪ J'] [−X_A B[J', :]ᵀ; I], likewise for the rows.
        {
            let xa_old = xa.slice(s![..jb, ..k]).to_owned();
            let bq = dense::matmul(b_j.t(), qs.view())?; // k × t
            let top = dense::matmul(xa_old.view(), bq.view())?;
            let mut blk = xa.slice_mut(s![..jb + new_cols.len(), k..k + t]);
            blk.slice_mut(s![..jb, ..]).assign(&(-&top));
            blk.slice_mut(s![jb.., ..]).assign(&qs);
            let xb_old = xb.slice(s![..ib, ..k]).to_owned();
            let ap = dense::matmul(a_i.t(), ps.view())?; // k × t
            let top = dense::matmul(xb_old.view(), ap.view())?;
            let mut blk = xb.slice_mut(s![..ib + new_rows.len(), k..k + t]);
            blk.slice_mut(s![..ib, ..]).assign(&(-&top));
            blk.slice_mut(s![ib.., ..]).assign(&ps);
        }
        if let Some((omega, y)) = sketch.as_mut() {
            // Y ← Y − A' (B'ᵀ Ω).
            let before = fro_sq(y.view());
            let bo = dense::matmul(b_new.t(), omega.view())?;
            dense::gemm_into(y.view_mut(), a_new.view(), bo.view(), -1.0, true)?;
            let after = fro_sq(y.view());
            if after > GROWTH * GROWTH * before {
                // The update made the (sketched) residual grow: keep the factors before it.
                break;
            }
        }
        a.slice_mut(s![.., k..k + t]).assign(&a_new);
        b.slice_mut(s![.., k..k + t]).assign(&b_new);
        k_prev = k;
        k += t;
    }
    let (ni, nj) = (rows.len(), cols.len());
    Ok(Cross {
        a: a.slice(s![.., ..k]).to_owned(),
        b: b.slice(s![.., ..k]).to_owned(),
        xa: xa.slice(s![..nj, ..k]).to_owned(),
        xb: xb.slice(s![..ni, ..k]).to_owned(),
        rows,
        cols,
        sketch,
    })
}

/// The rank-`r` truncated SVD of a cross approximation `A Bᵀ`: `A = Q_A T_A`, `B = Q_B T_B`,
/// `T_A T_Bᵀ = Y Σ Zᵀ`, `U = Q_A Y`, `V = Q_B Z`. Also returns the extension coefficients
/// `X_A (Bᵀ V) S⁻¹` (rows follow `cross.cols`) and `X_B (Aᵀ U) S⁻¹` (rows follow `cross.rows`).
pub(crate) struct CrossSvd {
    pub u: Array2<f64>,
    pub s: Array1<f64>,
    pub v: Array2<f64>,
    pub core: dense::DenseSvd,
    pub row_coef: Array2<f64>,
    pub col_coef: Array2<f64>,
}

pub(crate) fn cross_svd(cross: &Cross, rank: usize, pivots: usize) -> Result<CrossSvd> {
    let k = cross.a.ncols();
    if k < rank {
        return Err(NystromError::RankDeficientSample {
            rows: pivots,
            cols: pivots,
            numerical_rank: k,
            rank,
        });
    }
    // Only the triangular factors: U = Q_A Y = A T_A⁻¹ Y without forming Q_A (half the work).
    let ta = dense::thin_r(cross.a.view())?;
    let tb = dense::thin_r(cross.b.view())?;
    let core = dense::matmul(ta.view(), tb.t())?;
    let svd = dense::thin_svd(core.view())?;
    require_rank(&svd.s.to_vec(), k, pivots, pivots, rank)?;
    let y = svd.u.slice(s![.., ..rank]);
    let z = svd.v.slice(s![.., ..rank]);
    let u = basis_times(cross.a.view(), ta.view(), y)?;
    let v = basis_times(cross.b.view(), tb.view(), z)?;
    let sr = svd.s.slice(s![..rank]).to_owned();
    let inv_s = sr.mapv(|x| 1.0 / x);
    let btv = dense::matmul(cross.b.t(), v.view())?;
    let atu = dense::matmul(cross.a.t(), u.view())?;
    let row_coef = dense::matmul(cross.xa.view(), btv.view())? * &inv_s;
    let col_coef = dense::matmul(cross.xb.view(), atu.view())? * &inv_s;
    Ok(CrossSvd {
        u,
        s: sr,
        v,
        core: svd,
        row_coef,
        col_coef,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ksvd_linalg::random::{gaussian_matrix, rng_from_seed};

    fn max_abs(a: &Array2<f64>) -> f64 {
        a.iter().fold(0.0f64, |m, x| m.max(x.abs()))
    }

    /// A rank-`k` matrix plus a small full-rank perturbation.
    fn test_matrix(n: usize, m: usize, k: usize, noise: f64, seed: u64) -> Array2<f64> {
        let mut rng = rng_from_seed(seed);
        let l = gaussian_matrix(&mut rng, n, k);
        let r = gaussian_matrix(&mut rng, k, m);
        dense::matmul(l.view(), r.view()).unwrap() + gaussian_matrix(&mut rng, n, m) * noise
    }

    #[test]
    fn implicit_updates_equal_explicit_residuals() {
        let g = test_matrix(60, 45, 8, 1e-2, 3);
        for pivoting in [Pivoting::Random, Pivoting::Greedy] {
            check_against_explicit(&g, 24, pivoting, 5);
        }
    }

    /// The same over shapes: tall, wide, square at full size (every row and column a pivot), and
    /// pivot counts that are not a multiple of the block size.
    #[test]
    fn implicit_updates_equal_explicit_residuals_over_shapes() {
        for (n, m, k, pivots) in [(90, 30, 10, 21), (30, 90, 10, 21), (36, 36, 36, 36), (50, 64, 7, 13)] {
            let g = test_matrix(n, m, k, 1e-2, (n * m) as u64);
            for pivoting in [Pivoting::Random, Pivoting::Greedy] {
                for seed in [1, 2] {
                    check_against_explicit(&g, pivots, pivoting, seed);
                }
            }
        }
    }

    /// The factors and the sketch, updated implicitly through chosen rows and columns, against
    /// quantities formed explicitly from `G`: the residual `G − A Bᵀ` vanishes on the chosen rows
    /// and columns, `A Bᵀ` is the skeleton `G[:, J] G[I, J]⁻¹ G[I, :]`, and the sketch is
    /// `(G − A Bᵀ) Ω`. Tolerances: `ε max|G|` times the size, widened for the elimination.
    fn check_against_explicit(g: &Array2<f64>, pivots: usize, pivoting: Pivoting, seed: u64) {
        let (n, m) = g.dim();
        let what = format!("{n} x {m}, {pivots} pivots, {pivoting:?}, seed {seed}");
        let c = cross_approximation(g, pivots, pivoting, seed).unwrap();
        assert_eq!(c.rows.len(), c.cols.len(), "{what}");
        let approx = dense::matmul(c.a.view(), c.b.t()).unwrap();
        let resid = g - &approx;
        let tol = 1e3 * f64::EPSILON * max_abs(g) * n.max(m) as f64;
        // The factors are the tracked combinations of landmark columns and rows.
        let gj = g.select(Axis(1), &c.cols);
        let gi = g.select(Axis(0), &c.rows);
        let a2 = dense::matmul(gj.view(), c.xa.view()).unwrap();
        let b2 = dense::matmul(gi.t(), c.xb.view()).unwrap();
        assert!(
            max_abs(&(&a2 - &c.a)) < tol * max_abs(&c.a).max(1.0),
            "{what}: A = G[:, J] X_A"
        );
        assert!(
            max_abs(&(&b2 - &c.b)) < tol * max_abs(&c.b).max(1.0),
            "{what}: B = G[I, :]ᵀ X_B"
        );
        // Ĝ interpolates every chosen row and column.
        assert!(max_abs(&resid.select(Axis(0), &c.rows)) < tol, "{what}: rows");
        assert!(max_abs(&resid.select(Axis(1), &c.cols)) < tol, "{what}: cols");
        // Ĝ is the skeleton G[:, J] G[I, J]⁻¹ G[I, :] (W is well conditioned here).
        let w = gi.select(Axis(1), &c.cols);
        let skel = dense::matmul(gj.view(), dense::lu_solve(w.view(), gi.view()).unwrap().view()).unwrap();
        assert!(max_abs(&(&skel - &approx)) < 1e3 * tol, "{what}: skeleton");
        // With every row or every column a pivot, the skeleton is G itself.
        if c.rows.len() == n.min(m) {
            assert!(max_abs(&resid) < 1e3 * tol, "{what}: full size is exact");
        }
        // The updated sketch is the explicit residual times Ω.
        if let Some((omega, y)) = &c.sketch {
            let y2 = dense::matmul(resid.view(), omega.view()).unwrap();
            assert!(max_abs(&(&y2 - y)) < tol * 10.0, "{what}: sketch");
        }
    }

    #[test]
    fn exact_low_rank_is_reproduced_with_early_stop() {
        let g = test_matrix(40, 30, 5, 0.0, 9);
        for pivoting in [Pivoting::Random, Pivoting::Greedy] {
            let c = cross_approximation(&g, 20, pivoting, 1).unwrap();
            assert_eq!(c.a.ncols(), 5, "{pivoting:?}: numerical rank 5");
            let err = max_abs(&(&g - &dense::matmul(c.a.view(), c.b.t()).unwrap()));
            assert!(err < 1e4 * f64::EPSILON * max_abs(&g), "{pivoting:?}: {err:e}");
        }
    }
}
