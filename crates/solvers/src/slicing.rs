//! Spectrum slicing: the top-`r` singular triplets of a sparse-plus-low-rank `G = S + L Rᵀ`
//! whose rank cuts through a band of nearly equal values, where Krylov methods on `G` stall and
//! shift-invert from above `σ_1(S)` ([`crate::shift_invert_svd`]) converges too slowly
//! (Pubmed's centred SNE kernel at rank 250: thousands of values within 1e-6 relative).
//!
//! Shifts *inside* the spectrum. `P = τ I − H(S)` is indefinite there; an unpivoted `L D Lᵀ`
//! ([`ksvd_linalg::SparseLdlt`]) counts its negative eigenvalues up to its backward-error bound
//! `e`, and equal counts at `τ ± 3e` certify that none lies within `2e` of zero, so the count at
//! `τ` is exact. With the capacitance term of the low-rank part (Haynsworth, as in
//! `shift_invert`: `#{σ(G) > τ} = neg(P) + neg(K) − k`, `K` with its rounding-error bound) this
//! counts `G`'s singular values above any shift. The low-rank term is first compressed to its
//! numerical rank (`K`'s eigenvalues along a null direction of `L Rᵀ` would sit at zero); what is
//! dropped (below 1e-10 of its norm) widens the counts' shift by its norm (Weyl).
//!
//! From a cut `τ_low` with between `r` and `r + slice/2` values above it, up to a bound above
//! `σ_1`, slices of at most [`SliceParams::slice`] values are laid by bisection on the count.
//! Each slice is tightened around its values (bisection on the count again) and split while its
//! centre would sit far from them; block Lanczos on `T = (τ I − H(G))⁻¹` at the centre (the
//! factor and Woodbury) then finds the eigenvalues of `H(G)` nearest it, and those inside the
//! slice must number exactly its count. A final Rayleigh–Ritz on `G` makes one orthonormal SVD
//! of all of them, whose residuals are computed explicitly, and the number of values above the
//! cut must equal the count there: the result is the top `r`, certified.
//!
//! Not chosen by [`crate::auto_svd`] yet. Where a cluster is denser than the counts' error bound
//! (values closer than about 1e-8 relative), no exact cut exists inside it and the call fails
//! with a typed error.
use crate::error::{Result, SolverError};
use crate::lanczos::{check_tol, lanczos_svd, LanczosParams};
use crate::shift_invert::{
    low_rank_block, rayleigh_ritz_halves, shifted_augmented, Count, FactoredShift, ShiftFactor, ShiftedInverse,
};
use crate::svd::{check_rank, SvdResult};
use ksvd_linalg::{dense, CholeskyPattern, CsrMatrix, LinearOperator, MemoryBudget, SparseLdlt};
use ndarray::{s, Array2, ArrayView2, ArrayViewMut2, Axis};

/// Parameters of [`slice_svd`].
#[derive(Debug, Clone, PartialEq)]
pub struct SliceParams {
    /// Relative residual tolerance every returned triplet meets.
    pub tol: f64,
    /// Seed of the Lanczos runs.
    pub seed: u64,
    /// Values per slice, at most.
    pub slice: usize,
    /// Memory the factor may use.
    pub budget: MemoryBudget,
}

impl Default for SliceParams {
    fn default() -> Self {
        SliceParams {
            tol: 1e-10,
            seed: 0,
            slice: 100,
            budget: MemoryBudget::auto(),
        }
    }
}

/// What [`slice_svd`] did.
#[derive(Debug, Clone, PartialEq)]
pub struct SliceInfo {
    /// The cut: `above_cut` values of `G` lie above it.
    pub cut: f64,
    /// Values above the cut (the returned set before truncation to the rank).
    pub above_cut: usize,
    /// The slices' boundaries, from the cut up.
    pub boundaries: Vec<f64>,
    /// Numeric factorisations.
    pub factorizations: usize,
}

/// The shifted structure: `S`, `Sᵀ`, `W` (of the compressed low-rank term, whose dropped part
/// has norm `delta`) and the symbolic analysis of `P`.
struct Shifts<'a> {
    sp: &'a CsrMatrix,
    st: CsrMatrix,
    w: Array2<f64>,
    delta: f64,
    pattern: CholeskyPattern,
    n: usize,
    tol: f64,
    factorizations: std::cell::Cell<usize>,
}

impl<'a> Shifts<'a> {
    /// `L D Lᵀ` of `P = τ I − H(S)` (counted).
    fn factor(&self, tau: f64) -> Result<SparseLdlt> {
        self.factorizations.set(self.factorizations.get() + 1);
        Ok(self.pattern.factor_ldlt(&shifted_augmented(&self.st, self.n, tau)?)?)
    }

    fn inverse(&self, tau: f64) -> Result<ShiftedInverse<'_>> {
        ShiftedInverse::new(
            FactoredShift {
                tau,
                factor: ShiftFactor::Ldlt(self.factor(tau)?),
                sp: self.sp,
                st: &self.st,
            },
            &self.w,
        )
    }

    /// The count at `tau`, with `neg(P)` certified: the counts of `S` at `τ ± 3e` (`e` the
    /// factor's backward-error bound) agree exactly when no value of `S` lies within `2e` of `τ`,
    /// and then `P + E` and `P` have the same inertia. Otherwise the range widens by the values
    /// in between.
    fn count(&self, tau: f64) -> Result<Count> {
        let mut c = self.inverse(tau)?.count;
        let e = c.slack;
        let negatives = |t: f64| -> Result<usize> { Ok(self.factor(t)?.inertia().negative) };
        let (below, above) = (negatives(tau - 3.0 * e)?, negatives(tau + 3.0 * e)?);
        let spread = below.saturating_sub(above);
        c.min = c.min.saturating_sub(spread);
        c.max += spread;
        // Exact for P itself now; the compressed low-rank term moves G's values by at most delta.
        c.slack = self.delta;
        Ok(c)
    }
}

/// `T = (τ I − H(G))⁻¹` as a (symmetric) operator.
struct Inverse<'a, 'b>(&'b ShiftedInverse<'a>, usize);

impl LinearOperator for Inverse<'_, '_> {
    fn nrows(&self) -> usize {
        self.1
    }
    fn ncols(&self) -> usize {
        self.1
    }
    fn apply_into(&self, x: ArrayView2<'_, f64>, mut out: ArrayViewMut2<'_, f64>) -> ksvd_linalg::Result<()> {
        let y = self.0.apply(x).map_err(|e| ksvd_linalg::LinalgError::OperatorFailed {
            operator: "shift-invert",
            reason: e.to_string(),
        })?;
        out.assign(&y);
        Ok(())
    }
    fn apply_transpose_into(&self, x: ArrayView2<'_, f64>, out: ArrayViewMut2<'_, f64>) -> ksvd_linalg::Result<()> {
        self.apply_into(x, out)
    }
}

/// A shift between `lo` and `hi` where the count is one value and lies in `[want_min, want_max]`:
/// bisection on the count (it falls as the shift rises). Returns the shift and its count.
fn find_boundary(
    shifts: &Shifts<'_>,
    mut lo: f64,
    mut hi: f64,
    want_min: usize,
    want_max: usize,
) -> Result<(f64, Count)> {
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        let c = shifts.count(mid)?;
        if c.min == c.max && (want_min..=want_max).contains(&c.max) {
            return Ok((mid, c));
        }
        // Too many values above `mid`: go up. Too few, or a range overlapping the target (a
        // value within the bound of `mid`): look below.
        if c.min > want_max {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    // No exact count in the window: a cluster denser than the count's error bound.
    Err(SolverError::NotConverged {
        solver: "slice boundary search (no exact count: a cluster denser than its error bound)",
        iterations: 60,
        residual: f64::INFINITY,
        tol: shifts.tol,
    })
}

/// Where the values of a slice `(a, b]` end: with `top`, the smallest shift in it whose count is
/// still `count` (the count at `b`), just above the slice's largest value; otherwise the largest
/// shift whose count is `count` (the count at `a`), just below its smallest value. Bisection on
/// the count (30 halvings).
fn tighten(shifts: &Shifts<'_>, a: f64, b: f64, count: usize, top: bool) -> Result<f64> {
    let (mut lo, mut hi) = (a, b);
    for _ in 0..30 {
        let mid = 0.5 * (lo + hi);
        let c = shifts.count(mid)?;
        let same = c.min == count && c.max == count;
        // `mid` lies above the end sought when, for the top end, the count there is still
        // `count`, and, for the bottom end, it no longer is.
        if same == top {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Ok(if top { hi } else { lo })
}

/// The eigenpairs of `H(G)` inside `(a, b]` by Lanczos on the inverse at `tau`, asking for the
/// `near` values nearest it (doubled while too few land inside): exactly `expected` of them, as
/// unit eigenvectors `y` of `H(G)` as columns.
fn slice_eigenpairs(
    shifts: &Shifts<'_>,
    a: f64,
    b: f64,
    tau: f64,
    expected: usize,
    near: usize,
    params: &SliceParams,
) -> Result<Array2<f64>> {
    let inverse = shifts.inverse(tau)?;
    let dim = shifts.w.nrows();
    let op = Inverse(&inverse, dim);
    let mut p = near.min(dim - 1);
    let mut found = 0;
    for _ in 0..4 {
        let lp = LanczosParams {
            tol: params.tol,
            seed: params.seed,
            max_restarts: 300,
            work_dim: None,
            block_size: None,
        };
        let t = lanczos_svd(&op, p, &lp)?;
        // T = (τ I − H)⁻¹: μ = 1/(τ − λ), so λ = τ − sign(μ)/|μ|; sign(μ) = sign(u·v).
        let inside: Vec<usize> = (0..p)
            .filter(|&i| {
                let lambda = tau - t.u.column(i).dot(&t.v.column(i)).signum() / t.s[i];
                lambda > a && lambda <= b
            })
            .collect();
        found = inside.len();
        if found == expected {
            return Ok(t.v.select(Axis(1), &inside));
        }
        if p == dim - 1 {
            break;
        }
        p = (2 * p).min(dim - 1);
    }
    Err(SolverError::CountMismatch {
        shift: a,
        counted: expected,
        returned: found,
    })
}

/// The top-`rank` SVD of `G = S + L Rᵀ` by spectrum slicing (module documentation). Every
/// returned triplet has residuals at most `tol · s_1`.
///
/// # Errors
/// [`SolverError::InvalidParameter`] when `op` has no sparse-plus-low-rank structure or the
/// factor does not fit the budget; [`SolverError::NotConverged`] when no exact count exists near
/// a slice boundary (a cluster denser than the count's error bound) or the residuals miss the
/// tolerance; [`SolverError::CountMismatch`] when a slice's Lanczos run does not find as many
/// values as it holds, or the result disagrees with the count above the cut.
pub fn slice_svd<O: LinearOperator + ?Sized>(
    op: &O,
    rank: usize,
    params: &SliceParams,
) -> Result<(SvdResult, SliceInfo)> {
    let (n, m) = (op.nrows(), op.ncols());
    check_rank(n, m, rank)?;
    check_tol(params.tol)?;
    if params.slice < 2 {
        return Err(SolverError::InvalidParameter {
            name: "slice",
            value: params.slice as f64,
            reason: "a slice holds at least 2 values",
        });
    }
    let structure = op.sparse_plus_low_rank().ok_or(SolverError::InvalidParameter {
        name: "operator",
        value: f64::NAN,
        reason: "spectrum slicing needs the sparse-plus-low-rank structure G = S + L R^T",
    })?;
    let (sp, left, right) = (structure.sparse, &structure.left, &structure.right);
    // The low-rank term at its numerical rank: L Rᵀ = Qₗ (Rₗ Rᵣᵀ) Qᵣᵀ, the core's SVD, and the
    // components below 1e-10 of the largest dropped; their norm (delta) joins the counts' slack.
    let (ql, rl) = dense::thin_qr(left.view())?;
    let (qr, rr) = dense::thin_qr(right.view())?;
    let core = dense::thin_svd(dense::matmul(rl.view(), rr.t())?.view())?;
    let keep = core.s.iter().filter(|&&x| x > 1e-10 * core.s[0]).count();
    let delta = core.s.iter().skip(keep).copied().fold(0.0f64, f64::max);
    let scale = core.s.slice(s![..keep]).mapv(f64::sqrt);
    let left_c = dense::matmul(ql.view(), core.u.slice(s![.., ..keep]))? * &scale;
    let right_c = dense::matmul(qr.view(), core.v.slice(s![.., ..keep]))? * &scale;
    let st = sp.transpose();
    let w = low_rank_block(left_c.view(), right_c.view());
    let pattern = CholeskyPattern::new(&shifted_augmented(&st, n, 1.0)?)?;
    if !params.budget.fits_f64(pattern.factor_nnz()) {
        return Err(SolverError::InvalidParameter {
            name: "budget",
            value: pattern.factor_nnz() as f64 * 8.0,
            reason: "the factor of the shifted augmented matrix does not fit the memory budget",
        });
    }
    let shifts = Shifts {
        sp,
        st,
        w,
        delta,
        pattern,
        n,
        tol: params.tol,
        factorizations: std::cell::Cell::new(0),
    };
    // A bound above σ_1: a rough Lanczos estimate, doubled until the count above it is 0.
    let probe = lanczos_svd(
        op,
        1,
        &LanczosParams {
            tol: 1e-6,
            seed: params.seed,
            max_restarts: 50,
            work_dim: None,
            block_size: None,
        },
    )
    .map(|r| r.s[0])
    .unwrap_or(1.0);
    let mut top = 1.01 * probe.max(f64::MIN_POSITIVE);
    while shifts.count(top)?.max > 0 {
        top *= 2.0;
    }
    // The cut: at least `rank` values above it, at most `rank + slice / 2`.
    let (cut, cut_count) = find_boundary(&shifts, 0.0, top, rank, rank + params.slice / 2)?;
    // Slices from the top down.
    let mut boundaries = vec![top];
    let mut counts = vec![0usize];
    let (mut hi, mut hi_count) = (top, 0usize);
    while cut_count.max - hi_count > params.slice {
        let (b, c) = find_boundary(&shifts, cut, hi, hi_count + params.slice / 2, hi_count + params.slice)?;
        boundaries.push(b);
        counts.push(c.max);
        (hi, hi_count) = (b, c.max);
    }
    boundaries.push(cut);
    counts.push(cut_count.max);
    // Each slice (a, b] with its values: tightened around them, split while the values within
    // twice its half-width of its centre outnumber its own by more than 3 to 1 (the shift would
    // sit in a gap, far from its values, where Lanczos on T cannot separate them).
    let mut vectors = vec![];
    let mut stack: Vec<(f64, usize, f64, usize)> = (0..boundaries.len() - 1)
        .map(|j| (boundaries[j + 1], counts[j + 1], boundaries[j], counts[j]))
        .collect();
    while let Some((a, ca, b, cb)) = stack.pop() {
        let c = ca - cb;
        if c == 0 {
            continue;
        }
        let t_hi = tighten(&shifts, a, b, cb, true)?;
        let t_lo = tighten(&shifts, a, t_hi, ca, false)?;
        let tau = 0.5 * (t_lo + t_hi);
        let h = (0.5 * (t_hi - t_lo)).max(1e-12 * t_hi);
        let near = shifts
            .count(tau - 2.0 * h)?
            .max
            .saturating_sub(shifts.count(tau + 2.0 * h)?.min);
        if c > 1 && near > 3 * c + 10 {
            let (m, mc) = find_boundary(&shifts, t_lo, t_hi, cb + 1, ca - 1)?;
            stack.push((a, ca, m, mc.max));
            stack.push((m, mc.max, b, cb));
            continue;
        }
        vectors.push(slice_eigenpairs(&shifts, a, b, tau, c, near.max(c), params)?);
    }
    let views: Vec<_> = vectors.iter().map(|v| v.view()).collect();
    let y = ndarray::concatenate(Axis(1), &views).map_err(|_| SolverError::ShapeMismatch {
        what: "slice eigenvectors".into(),
    })?;
    let all = rayleigh_ritz_halves(op, y.slice(s![..n, ..]), y.slice(s![n.., ..]))?;
    let residual = all.max_residual().unwrap_or(0.0);
    if residual > params.tol {
        return Err(SolverError::NotConverged {
            solver: "spectrum slicing",
            iterations: boundaries.len() - 1,
            residual,
            tol: params.tol,
        });
    }
    let slack = params.tol * all.s[0] + cut_count.slack;
    let clearly_above = all.s.iter().filter(|&&x| x > cut + slack).count();
    let possibly_above = all.s.iter().filter(|&&x| x > cut - slack).count();
    // Exactly `count` values lie above the cut: the result must hold that many there, and its
    // top `rank` must lie clearly above it.
    if clearly_above > cut_count.max || possibly_above < cut_count.max || all.s[rank - 1] <= cut + slack {
        return Err(SolverError::CountMismatch {
            shift: cut,
            counted: cut_count.max,
            returned: possibly_above,
        });
    }
    let info = SliceInfo {
        cut,
        above_cut: cut_count.max,
        boundaries,
        factorizations: shifts.factorizations.get(),
    };
    Ok((all.truncate(rank), info))
}
