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
//! `σ_1`, slices of at most [`SliceParams::slice`] values are laid by bisection on the count
//! (each bisection steps on the rough count of one factorisation and certifies its answer). Where
//! a cluster denser than the count's error bound straddles the window, the window is widened
//! (the cut moves below the cluster, the slice grows).
//! Each slice is tightened around its values (bisection on the rough count) and split while its
//! centre would sit far from them; block Lanczos on `T = (τ I − H(G))⁻¹` at the centre (the
//! factor and Woodbury) then finds the eigenvalues of `H(G)` nearest it, and those inside the
//! slice must number exactly its count. A final Rayleigh–Ritz on `G` makes one orthonormal SVD
//! of all of them, whose residuals are computed explicitly, and the number of values above the
//! cut must equal the count there: the result is the top `r`, certified.
//!
//! [`crate::auto_svd`] takes it for such matrices at ranks above its shift-invert iteration's
//! when a first Krylov attempt stalls. Where a cluster is denser than the counts' error bound
//! (values closer than the factor's backward-error bound), no exact cut exists inside it and the call fails
//! with a typed error.
use crate::error::{Result, SolverError};
use crate::krylov::column_norms;
use crate::lanczos::{check_tol, lanczos_svd, LanczosParams};
use crate::shift_invert::{
    augmented_apply, low_rank_block, rayleigh_ritz_halves, shifted_augmented, shifted_pattern, Count, FactoredShift,
    ShiftFactor, ShiftedInverse,
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
    /// Values per slice, at most (up to about 9 times more where a cluster too dense to cut lies
    /// across a boundary).
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

    /// The count at `tau` from one factorisation: `neg(P)` only up to the factor's
    /// backward-error bound (`slack`). Guides the bisections; [`Shifts::certify`] makes it exact.
    fn rough(&self, tau: f64) -> Result<Count> {
        Ok(self.inverse(tau)?.count)
    }

    /// `c` (the rough count at its shift `τ`) with `neg(P)` certified: the counts of `S` at
    /// `τ ± 3e` (`e` the factor's backward-error bound) agree exactly when no value of `S` lies
    /// within `2e` of `τ`, and then `P + E` and `P` have the same inertia. Otherwise the range
    /// widens by the values in between.
    fn certify(&self, mut c: Count) -> Result<Count> {
        let (tau, e) = (c.shift, c.slack);
        let negatives = |t: f64| -> Result<usize> { Ok(self.factor(t)?.inertia().negative) };
        let (below, above) = (negatives(tau - 3.0 * e)?, negatives(tau + 3.0 * e)?);
        let spread = below.saturating_sub(above);
        c.min = c.min.saturating_sub(spread);
        c.max += spread;
        // Exact for P itself now; the compressed low-rank term moves G's values by at most delta.
        c.slack = self.delta;
        Ok(c)
    }

    /// The certified count at `tau`.
    fn count(&self, tau: f64) -> Result<Count> {
        self.certify(self.rough(tau)?)
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

/// A shift between `lo` and `hi` where the certified count is one value and lies in
/// `[want_min, want_max]`: bisection on the rough count (it falls as the shift rises), each
/// candidate certified before it is taken. Returns the shift and its count, or `None` when the
/// bisection closes on a point where the count jumps past the window (a cluster denser than the
/// count's error bound straddles it).
fn find_boundary(
    shifts: &Shifts<'_>,
    mut lo: f64,
    mut hi: f64,
    want_min: usize,
    want_max: usize,
) -> Result<Option<(f64, Count)>> {
    let wanted = |c: &Count| c.min == c.max && (want_min..=want_max).contains(&c.max);
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if hi - lo <= 4.0 * f64::EPSILON * hi.abs() {
            break;
        }
        let mut c = shifts.rough(mid)?;
        if wanted(&c) {
            c = shifts.certify(c)?;
            if wanted(&c) {
                return Ok(Some((mid, c)));
            }
        }
        // Too many values above `mid`: go up. Too few, or a range overlapping the target (a
        // value within the bound of `mid`): look below.
        if c.min > want_max {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(None)
}

/// [`find_boundary`] with the window `[want_min, want_max]` widened upwards (doubled, up to
/// [`WIDENINGS`] times) while no exact count lies in it: the boundary moves below a cluster too
/// dense to cut, and its slice grows.
fn find_boundary_widening(
    shifts: &Shifts<'_>,
    lo: f64,
    hi: f64,
    want_min: usize,
    want_max: usize,
) -> Result<(f64, Count)> {
    let width = want_max - want_min + 1;
    for widening in 0..=WIDENINGS {
        let max = want_min + (width << widening) - 1;
        if let Some(found) = find_boundary(shifts, lo, hi, want_min, max)? {
            return Ok(found);
        }
    }
    // No exact count in the window: a cluster denser than the count's error bound.
    Err(SolverError::NotConverged {
        solver: "slice boundary search (no exact count: a cluster denser than its error bound)",
        iterations: WIDENINGS + 1,
        residual: f64::INFINITY,
        tol: shifts.tol,
    })
}

/// Doublings of a boundary's window, at most (a slice of 100 values may grow to about 865).
const WIDENINGS: usize = 4;

/// Where the values of a slice `(a, b]` (counts `ca` at `a`, `cb` at `b`) lie: its largest
/// value is bracketed in `(p, q]` and its smallest in `(r, t]`, both narrowed by bisection on the
/// rough count (each midpoint narrows whichever bracket it falls in) until each is within 5% of
/// the span `q − r` or 1e-6 relative (a slice of one value). Returns `(r, q)`: shifts just below the smallest value
/// and just above the largest. The ends only place the Lanczos shift; a rough count that errs
/// moves them, not the result, which the certified boundaries and counts decide.
fn tighten(shifts: &Shifts<'_>, a: f64, b: f64, ca: usize, cb: usize) -> Result<(f64, f64)> {
    // Top: count(q) = cb (no slice value above q), count(p) > cb. Bottom: count(r) = ca (all
    // above r), count(t) < ca.
    let (mut p, mut q, mut r, mut t) = (a, b, a, b);
    for _ in 0..80 {
        let target = (0.05 * (q - r)).max(1e-6 * q.abs());
        let mid = if q - p > target {
            0.5 * (p + q)
        } else if t - r > target {
            0.5 * (r + t)
        } else {
            break;
        };
        let c = shifts.rough(mid)?;
        if c.min == cb && c.max == cb {
            q = q.min(mid);
        } else {
            p = p.max(mid);
        }
        if c.min == ca && c.max == ca {
            r = r.max(mid);
        } else {
            t = t.min(mid);
        }
    }
    Ok((r.min(q), q))
}

/// The eigenpairs of `H(G)` inside `(a, b]` by Lanczos on the inverse at `tau`, asking for the
/// `near` values nearest it (doubled while too few land inside): exactly `expected` of them, as
/// unit eigenvectors `y` of `H(G)` as columns.
///
/// Lanczos meets its tolerance relative to `T`'s largest value `1/δ` (`δ` the distance from `τ`
/// to the nearest value), which leaves `H(G)`'s residuals at about `tol Δ²/δ` for a value `Δ`
/// away: small unless a value sits very close to `τ` and others far. The residuals on `H(G)`
/// are therefore checked (one product with `G` and `Gᵀ`) against a quarter of the final
/// tolerance `tol · scale`, and the run repeated 100 and 10⁴ times tighter while they miss it.
#[allow(clippy::too_many_arguments)]
fn slice_eigenpairs<O: LinearOperator + ?Sized>(
    g: &O,
    shifts: &Shifts<'_>,
    (a, b): (f64, f64),
    tau: f64,
    expected: usize,
    near: usize,
    scale: f64,
    params: &SliceParams,
) -> Result<Array2<f64>> {
    let inverse = shifts.inverse(tau)?;
    let dim = shifts.w.nrows();
    let op = Inverse(&inverse, dim);
    // Values nearest the shift worth asking for: beyond this the slice is too wide for its
    // values (the split rule keeps slices from getting there).
    let cap = (4 * expected + 200).min(dim - 1);
    let mut p = near.min(cap);
    let mut residual = f64::INFINITY;
    for tighter in [1.0, 1e-2, 1e-4] {
        loop {
            let lp = LanczosParams {
                tol: params.tol * tighter,
                seed: params.seed,
                max_restarts: 300,
                work_dim: None,
                block_size: None,
            };
            let t = lanczos_svd(&op, p, &lp)?;
            // T = (τ I − H)⁻¹: μ = 1/(τ − λ), so λ = τ − sign(μ)/|μ|; sign(μ) = sign(u·v).
            let lambda = |i: usize| tau - t.u.column(i).dot(&t.v.column(i)).signum() / t.s[i];
            let inside: Vec<usize> = (0..p).filter(|&i| lambda(i) > a && lambda(i) <= b).collect();
            let found = inside.len();
            if found == expected {
                let y = t.v.select(Axis(1), &inside);
                // H(G) y − y Λ, column by column.
                let mut r = augmented_apply(g, y.view())?;
                for (j, &i) in inside.iter().enumerate() {
                    r.column_mut(j).scaled_add(-lambda(i), &y.column(j));
                }
                residual = column_norms(&r).into_iter().fold(0.0f64, f64::max);
                if residual <= 0.25 * params.tol * scale {
                    return Ok(y);
                }
                break;
            }
            if p == cap {
                return Err(SolverError::CountMismatch {
                    shift: a,
                    counted: expected,
                    returned: found,
                });
            }
            p = (2 * p).min(cap);
        }
    }
    Err(SolverError::NotConverged {
        solver: "spectrum slicing (shift-invert Lanczos of a slice)",
        iterations: 3,
        residual: residual / scale,
        tol: params.tol,
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
    let pattern = shifted_pattern(&st, n, params.budget)?;
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
    // Within a factor 2 of σ_1 by the rough count (the probe may stop early on a flat
    // spectrum), then certified.
    let mut top = 1.01 * probe.max(f64::MIN_POSITIVE);
    while shifts.rough(top)?.max > 0 {
        top *= 2.0;
    }
    for _ in 0..60 {
        if shifts.rough(0.5 * top)?.max > 0 {
            break;
        }
        top *= 0.5;
    }
    while shifts.count(top)?.max > 0 {
        top *= 2.0;
    }
    // The cut: at least `rank` values above it, at most `rank + slice / 2`.
    let (cut, cut_count) = find_boundary_widening(&shifts, 0.0, top, rank, rank + params.slice / 2)?;
    // Slices from the top down.
    let mut boundaries = vec![top];
    let mut counts = vec![0usize];
    let (mut hi, mut hi_count) = (top, 0usize);
    while cut_count.max - hi_count > params.slice {
        let (b, c) = find_boundary_widening(&shifts, cut, hi, hi_count + params.slice / 2, hi_count + params.slice)?;
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
        let (t_lo, t_hi) = tighten(&shifts, a, b, ca, cb)?;
        let tau = 0.5 * (t_lo + t_hi);
        let h = (0.5 * (t_hi - t_lo)).max(1e-12 * t_hi);
        let near = shifts
            .rough(tau - 2.0 * h)?
            .max
            .saturating_sub(shifts.rough(tau + 2.0 * h)?.min);
        if c > 1 && near > 3 * c + 10 {
            let (m, mc) = find_boundary_widening(&shifts, t_lo, t_hi, cb + 1, ca - 1)?;
            stack.push((a, ca, m, mc.max));
            stack.push((m, mc.max, b, cb));
            continue;
        }
        vectors.push(slice_eigenpairs(op, &shifts, (a, b), tau, c, near.max(c), top, params)?);
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
