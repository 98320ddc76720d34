//! Shift-invert subspace iteration with an inertia certificate, for `G = S + L Rᵀ` (sparse plus
//! low rank: the exact form of graph SNE kernels, [`LinearOperator::sparse_plus_low_rank`]).
//!
//! Krylov methods separate singular values by polynomials in `GᵀG`; on flat spectra (Pubmed's
//! SNE kernel: a value of multiplicity 19 then others 1e-5 below it) the degree they need runs
//! into the thousands, and a block of `b` vectors sees at most `b` copies of a repeated value,
//! so residuals alone cannot tell a complete top `r` from one that skipped copies. A spectral
//! transformation removes both problems. With the augmented matrix `H(G) = [0 G; Gᵀ 0]`
//! (eigenvalues `±σ_i`, and zeros) and a shift `τ > σ_1(S)`:
//!
//! * `P = τ I − H(S)` is positive definite, so its sparse Cholesky factorisation exists, and
//!   its success *certifies* `σ_1(S) < τ`;
//! * `τ I − H(G) = P − W J Wᵀ` with `W = [[L; 0], [0; R]]` and `J = [[0, I], [I, 0]]`, so by
//!   Woodbury `T = (τ I − H(G))⁻¹ = P⁻¹ + Z K⁻¹ Zᵀ` with `Z = P⁻¹ W`, `K = J − Wᵀ Z` (`2k × 2k`);
//! * Haynsworth's inertia additivity gives the exact number of singular values of `G` above
//!   `τ`: `#{σ_i(G) > τ} = neg(K) − k` (`k = rank L Rᵀ`, at most `k` values by interlacing);
//! * the singular values just below `τ` become the dominant eigenvalues `1/(τ − σ)` of `T`, so
//!   subspace iteration on `T` converges at the rate `(τ − σ_r)/(τ − σ_{b+1})` — about 1e-4
//!   per step on Pubmed where Krylov crawls — and a block of `b` vectors holds every copy of a
//!   repeated value up to `b`.
//!
//! The values above `τ` (at most `k`) come from block Lanczos on `G`, the others from the
//! iteration; a final Rayleigh–Ritz on `G` makes both sets one orthonormal SVD, whose residuals
//! are computed explicitly. Together with the count, the residuals certify the *set*: there are
//! exactly `c` singular values above `τ` and (Kahan's theorem for the orthonormal Ritz vectors
//! of `H(G)`) `r − c` within the residual of the returned ones below it, so every returned value
//! is within `max(residual, τ − s_r)` of the true `σ_i` even when values repeat.
//!
//! The count is exact in exact arithmetic only. With `τ` within 1e-10 of `σ_1(S)`, `P` has a
//! condition number near 1e10, and the plain product `J − Wᵀ P⁻¹ W` carries the solve's error
//! amplified by `‖P⁻¹ W‖²`: on Pubmed's *centred* SNE kernel (`k = 3`) it once made the count 2
//! where the true number is 1 (the second value is a twin value, `ksvd_linalg::Twins`, confirmed
//! by a dense SVD of the reduced operator), and the solver refused a correct result. `K` is
//! therefore evaluated with the residual of the solve in compensated arithmetic, which removes
//! the first-order error, and comes with a bound on what remains (see `capacitance`): the
//! count is a range, `above_shift..=above_shift_max` in [`ShiftInvertInfo`], one value unless an
//! eigenvalue of `K` lies within the bound of zero. A result is returned only when it contains
//! the upper end; one below the lower end is [`SolverError::CountMismatch`] (a value was
//! missed), one in between [`SolverError::CountUncertain`].
use crate::error::{Result, SolverError};
use crate::krylov::{frob, out_of_reach};
use crate::lanczos::{check_tol, lanczos_svd, LanczosParams};
use crate::rsvd::{randomized_svd, RsvdParams};
use crate::svd::{check_rank, SvdResult};
use ksvd_linalg::random::{gaussian_matrix, rng_from_seed};
use ksvd_linalg::vecmath::CompensatedSum;
use ksvd_linalg::{
    dense, CholeskyPattern, CsrMatrix, LinalgError, LinearOperator, MemoryBudget, SparseCholesky, SparseLdlt,
};
use ndarray::{s, Array1, Array2, ArrayView2, Axis};

/// Parameters of [`shift_invert_svd`].
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ShiftInvertParams {
    /// Relative residual tolerance every returned triplet meets (see [`crate::Residuals`]).
    pub tol: f64,
    /// Seed of the start block (and of the Lanczos runs).
    pub seed: u64,
    /// Iterations of the subspace iteration, at most.
    pub max_iters: usize,
    /// Extra vectors in the block beyond the wanted ones (the block holds every copy of a
    /// repeated value up to its size).
    pub oversampling: usize,
    /// Memory the Cholesky factor may use.
    pub budget: MemoryBudget,
}

impl Default for ShiftInvertParams {
    fn default() -> Self {
        ShiftInvertParams {
            tol: 1e-10,
            seed: 0,
            max_iters: 60,
            oversampling: 10,
            budget: MemoryBudget::auto(),
        }
    }
}

/// What [`shift_invert_svd`] certified and how much work it took.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ShiftInvertInfo {
    /// The final shift `τ` of the iteration.
    pub shift: f64,
    /// The shift `τ_c` of the count: `τ`, or a little above it when the count at `τ` was a
    /// range (`P` too close to singular for its error bound).
    pub count_shift: f64,
    /// Number of singular values of `G` above `τ_c` (inertia of `τ_c I − H(G)`), at least: the
    /// count is a range `above_shift..=above_shift_max`, one value unless an eigenvalue of the
    /// capacitance matrix lies within its error bound of zero (the shift at a singular value,
    /// to rounding). A returned result always contains `above_shift_max` values above `τ_c`
    /// (or `rank` when fewer).
    pub above_shift: usize,
    /// Number of singular values of `G` above `τ_c`, at most.
    pub above_shift_max: usize,
    /// The bound on the error of the capacitance matrix's eigenvalues that the count range
    /// accounts for.
    pub capacitance_error: f64,
    /// Subspace iterations at the final shift and before it.
    pub iterations: usize,
    /// Numeric Cholesky factorisations (failed ones, i.e. shifts found below `σ_1(S)`,
    /// included).
    pub factorizations: usize,
    /// Stored entries of the Cholesky factor.
    pub factor_nnz: usize,
    /// Vectors in the iterated block.
    pub block: usize,
}

/// Relative steps above the estimate of `σ_1(S)` tried for the first shift.
const SHIFT_STEPS: [f64; 10] = [1e-9, 1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0];

/// Restarts of each Lanczos run for the values above the shift.
const TOP_RESTARTS: usize = 100;

/// Krylov basis of the Lanczos runs for the values above the shift.
const TOP_BASIS: usize = 64;

/// How close (relatively) the shift is brought to `σ_1(S)`: far above rounding (the
/// certificate needs `P` safely positive definite), close enough that the values just below
/// `τ` dominate `T` by orders of magnitude.
const SHIFT_PRECISION: f64 = 1e-10;

/// The lower triangle of `P = τ I − H(S) = [τ I, −S; −Sᵀ, τ I]` (order `n + m`), from `Sᵀ`.
pub(crate) fn shifted_augmented(st: &CsrMatrix, n: usize, tau: f64) -> Result<CsrMatrix> {
    let m = st.nrows();
    let mut indptr = Vec::with_capacity(n + m + 1);
    let mut indices = Vec::with_capacity(n + m + st.nnz());
    let mut data = Vec::with_capacity(n + m + st.nnz());
    indptr.push(0);
    for i in 0..n {
        indices.push(i);
        data.push(tau);
        indptr.push(indices.len());
    }
    for j in 0..m {
        let (cols, vals) = st.row(j);
        indices.extend_from_slice(cols);
        data.extend(vals.iter().map(|v| -v));
        indices.push(n + j);
        data.push(tau);
        indptr.push(indices.len());
    }
    Ok(CsrMatrix::try_new(n + m, n + m, indptr, indices, data)?)
}

/// A lower bound of `σ_1(S)`: the largest Ritz value of a randomized subspace iteration (8
/// vectors, 20 power iterations; only a starting point: the shift is raised until the
/// factorisation certifies it).
fn top_singular_value_estimate(sp: &CsrMatrix, seed: u64) -> Result<f64> {
    if sp.nnz() == 0 {
        return Ok(0.0);
    }
    let params = RsvdParams {
        oversampling: 7,
        power_iters: 20,
        seed: seed ^ 0x5449_4D41_5445,
    };
    Ok(randomized_svd(sp, 1, &params)?.s[0])
}

/// `P = τ I − H(S)` factorised, or `None` when it is not positive definite (`τ ≤ σ_1(S)`).
fn factor_shifted(pattern: &CholeskyPattern, st: &CsrMatrix, n: usize, tau: f64) -> Result<Option<SparseCholesky>> {
    match pattern.factor(&shifted_augmented(st, n, tau)?) {
        Ok(c) => Ok(Some(c)),
        Err(LinalgError::NotPositiveDefinite { .. }) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// The shift: just above `σ_1(S)`, found with the factorisation as the oracle (`P` is positive
/// definite exactly when `τ > σ_1(S)`). From the lower bound `estimate`, steps up by
/// [`SHIFT_STEPS`] until a factorisation succeeds, then bisects between the last failure and the
/// success until they agree to [`SHIFT_PRECISION`]: the closer `τ` lies to the top wanted value,
/// the faster the iteration converges. Returns `τ` and its factor; `None` when no step succeeds.
fn bracket_shift(
    pattern: &CholeskyPattern,
    st: &CsrMatrix,
    n: usize,
    estimate: f64,
    floor: f64,
    factorizations: &mut usize,
) -> Result<Option<(f64, SparseCholesky)>> {
    let mut lo = estimate;
    let mut hi = None;
    for step in SHIFT_STEPS {
        let tau = estimate * (1.0 + step) + floor;
        *factorizations += 1;
        match factor_shifted(pattern, st, n, tau)? {
            Some(chol) => {
                hi = Some((tau, chol));
                break;
            }
            None => lo = tau,
        }
    }
    let Some(mut hi) = hi else {
        return Ok(None);
    };
    while hi.0 - lo > SHIFT_PRECISION * hi.0 && hi.0 - lo > floor {
        let mid = 0.5 * (lo + hi.0);
        *factorizations += 1;
        match factor_shifted(pattern, st, n, mid)? {
            Some(chol) => hi = (mid, chol),
            None => lo = mid,
        }
    }
    Ok(Some(hi))
}

/// A factor of `P = τ I − H(S)`: Cholesky above `σ_1(S)` (positive definite, certified by the
/// factorisation's success), or an unpivoted `L D Lᵀ` at a shift inside the spectrum (its
/// negative pivots count `S`'s values above `τ`, up to its backward error).
pub(crate) enum ShiftFactor {
    Cholesky(SparseCholesky),
    Ldlt(SparseLdlt),
}

impl ShiftFactor {
    pub(crate) fn solve_in_place(&self, b: ndarray::ArrayViewMut2<'_, f64>) -> Result<()> {
        match self {
            ShiftFactor::Cholesky(c) => c.solve_in_place(b)?,
            ShiftFactor::Ldlt(l) => l.solve_in_place(b)?,
        }
        Ok(())
    }

    /// Negative eigenvalues of the factorised matrix `P + E`.
    fn negative(&self) -> usize {
        match self {
            ShiftFactor::Cholesky(_) => 0,
            ShiftFactor::Ldlt(l) => l.inertia().negative,
        }
    }

    /// A bound on `‖E‖₂` (Cholesky: 0, its success certifies definiteness, as before).
    fn backward_error(&self) -> f64 {
        match self {
            ShiftFactor::Cholesky(_) => 0.0,
            ShiftFactor::Ldlt(l) => l.inertia().error,
        }
    }
}

/// `P = τ I − H(S)` factorised, with the sparse halves `S` and `Sᵀ` it was built from.
pub(crate) struct FactoredShift<'a> {
    pub(crate) tau: f64,
    pub(crate) factor: ShiftFactor,
    pub(crate) sp: &'a CsrMatrix,
    pub(crate) st: &'a CsrMatrix,
}

/// The factorised shift with the Woodbury data of `τ I − H(G)`.
pub(crate) struct ShiftedInverse<'a> {
    pub(crate) shift: FactoredShift<'a>,
    /// `Z = P⁻¹ W` (`(n + m) × 2k`).
    z: Array2<f64>,
    /// `K = J − Wᵀ Z` (`2k × 2k`) from the computed `Z`: consistent with the factor, which the
    /// Woodbury formula needs (its two terms cancel along the near-null directions of `P`).
    /// The count takes a corrected `K` instead (see [`capacitance`]).
    k: Array2<f64>,
    /// `#{σ_i(G) > τ}`, a range when `K` has an eigenvalue within its error bound of zero.
    pub(crate) count: Count,
}

/// Entry `(i, j)` of `J = [[0, I], [I, 0]]` (`2 half × 2 half`).
fn j_entry(i: usize, j: usize, half: usize) -> f64 {
    if (i < half && j == i + half) || (i >= half && j + half == i) {
        1.0
    } else {
        0.0
    }
}

/// `r = W − P Z` for `P = [τ I, −S; −Sᵀ, τ I]`, in compensated arithmetic, with a bound on the
/// error of each entry.
fn shifted_residual(shift: &FactoredShift<'_>, w: &Array2<f64>, z: &Array2<f64>) -> (Array2<f64>, Array2<f64>) {
    let FactoredShift { tau, sp, st, .. } = *shift;
    let n = sp.nrows();
    let mut r = Array2::zeros(w.dim());
    let mut err = Array2::zeros(w.dim());
    for c in 0..w.ncols() {
        for i in 0..w.nrows() {
            // Row i of P: τ e_i minus row i of S (top) or of Sᵀ (bottom) on the other half.
            let (row, offset) = if i < n { (sp.row(i), n) } else { (st.row(i - n), 0) };
            let mut acc = CompensatedSum::new();
            acc.add(w[[i, c]]);
            acc.add_product(-tau, z[[i, c]]);
            for (&j, &v) in row.0.iter().zip(row.1) {
                acc.add_product(v, z[[offset + j, c]]);
            }
            r[[i, c]] = acc.value();
            err[[i, c]] = acc.error_bound();
        }
    }
    (r, err)
}

/// The capacitance matrix `K = J − Wᵀ P⁻¹ W` from the computed `Z ≈ P⁻¹ W`, and a bound on the
/// error of its eigenvalues.
///
/// With `P` within 1e-10 of singular (the shift sits that close to `σ_1(S)`), the plain
/// product `J − Wᵀ Z` carries the solve's error amplified by `‖Z‖²` and can flip the sign of a
/// small eigenvalue of `K`, so the inertia count comes out wrong. For the residual
/// `r = W − P Z`, exactly `Wᵀ P⁻¹ W = Wᵀ Z + Zᵀ r + rᵀ P⁻¹ r`. So `K` is evaluated as
/// `J − Wᵀ Z − Zᵀ r` with `r` and both products in compensated arithmetic
/// ([`CompensatedSum`]), and its remaining error is bounded by
/// * `rᵀ P⁻¹ r` (second order in the solve's error): `2 ‖r‖_F ‖P⁻¹ r‖_F`, with `P⁻¹ r` from
///   one more solve (the factor 2 covers that solve's own error while `κ(P) u < 1/2`);
/// * the error of the computed `r`: `‖Z‖_F ‖δr‖_F` with the entry-wise bounds of the
///   compensated sums;
/// * the compensated sums of `K` itself, entry by entry;
/// * the symmetric eigen-decomposition of the symmetrised `K`: `4 · 2k · ε ‖K‖_F` (backward
///   stable).
///
/// The bound covers `K`; `P`'s definiteness, which the count also needs, rests on the
/// factorisation's success as before (the factor is exact for a matrix within Cholesky's
/// backward error, about `ε ‖P‖`, of `P`).
fn capacitance(shift: &FactoredShift<'_>, w: &Array2<f64>, z: &Array2<f64>) -> Result<(Array2<f64>, f64)> {
    let k2 = w.ncols();
    let half = k2 / 2;
    let (r, r_err) = shifted_residual(shift, w, z);
    let mut pr = r.clone();
    shift.factor.solve_in_place(pr.view_mut())?;
    let mut k = Array2::zeros((k2, k2));
    let mut dot_err = 0.0f64;
    for i in 0..k2 {
        for j in 0..k2 {
            let mut acc = CompensatedSum::new();
            acc.add(j_entry(i, j, half));
            for t in 0..w.nrows() {
                acc.add_product(-w[[t, i]], z[[t, j]]);
                acc.add_product(-z[[t, i]], r[[t, j]]);
            }
            k[[i, j]] = acc.value();
            dot_err += acc.error_bound().powi(2);
        }
    }
    // K is symmetric; the asymmetry of the computed one is part of the error bounded here.
    let kt = k.t().to_owned();
    k = (&k + &kt) * 0.5;
    // K is that of the true P (r is against P); with an LDLᵀ factor the caller certifies that P
    // and P + E have the same inertia (no value of S within the factor's bound of τ).
    let error = 2.0 * frob(&r) * frob(&pr)
        + frob(z) * frob(&r_err)
        + dot_err.sqrt()
        + 4.0 * k2 as f64 * f64::EPSILON * frob(&k);
    Ok((k, error))
}

/// The number of singular values above `shift`: between `min` and `max`, from the inertia of
/// the capacitance matrix whose eigenvalues carry at most `error`.
///
/// `slack`: how far the shift the count belongs to may lie from `shift` (the range holds
/// `#{σ > shift + slack} ≤ max` and `min ≤ #{σ > shift − slack}`). Cholesky: 0. An `L D Lᵀ`
/// factor is exact for `P + E`: `Count::of` sets the factor's bound on `‖E‖`, which spectrum
/// slicing removes by certifying that `P` and `P + E` have the same inertia.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Count {
    pub(crate) shift: f64,
    pub(crate) min: usize,
    pub(crate) max: usize,
    pub(crate) error: f64,
    pub(crate) slack: f64,
}

/// Relative distances above the iteration's shift at which the count is retaken when it is a
/// range there (each step makes `P` about 100 times better conditioned).
const RECOUNT_STEPS: [f64; 3] = [1e-8, 1e-6, 1e-4];

impl Count {
    /// The count at the factorised shift's `τ` from `z = P⁻¹ W`: `neg(K) − k`, where
    /// eigenvalues of `K` within its error bound of zero may have either sign.
    fn of(shift: &FactoredShift<'_>, w: &Array2<f64>, z: &Array2<f64>) -> Result<Count> {
        let tau = shift.tau;
        let half = w.ncols() / 2;
        let (eigenvalues, error) = if w.ncols() == 0 {
            (Array1::zeros(0), 0.0)
        } else {
            let (corrected, error) = capacitance(shift, w, z)?;
            (dense::symmetric_eigen(corrected.view())?.0, error)
        };
        let p_negative = shift.factor.negative();
        let surely_negative = eigenvalues.iter().filter(|&&x| x < -error).count() + p_negative;
        let maybe_negative = eigenvalues.iter().filter(|&&x| x <= error).count() + p_negative;
        let max = maybe_negative.checked_sub(half).ok_or(SolverError::InvalidParameter {
            name: "shift",
            value: tau,
            reason: "inertia of the capacitance matrix is inconsistent (shift at a singular value)",
        })?;
        Ok(Count {
            shift: tau,
            min: surely_negative.saturating_sub(half),
            max,
            error,
            slack: shift.factor.backward_error(),
        })
    }
}

/// `P⁻¹ W` with the factor of `P`.
fn solve_block(factor: &ShiftFactor, w: &Array2<f64>) -> Result<Array2<f64>> {
    let mut z = w.clone();
    factor.solve_in_place(z.view_mut())?;
    Ok(z)
}

impl<'a> ShiftedInverse<'a> {
    /// The Woodbury data and the count for the factorised shift.
    pub(crate) fn new(shift: FactoredShift<'a>, w: &Array2<f64>) -> Result<Self> {
        let k2 = w.ncols();
        let half = k2 / 2;
        let z = solve_block(&shift.factor, w)?;
        let wz = dense::matmul(w.t(), z.view())?;
        let mut k = Array2::from_shape_fn((k2, k2), |(i, j)| j_entry(i, j, half) - wz[[i, j]]);
        let kt = k.t().to_owned();
        k = (&k + &kt) * 0.5;
        let count = Count::of(&shift, w, &z)?;
        Ok(ShiftedInverse { shift, z, k, count })
    }

    /// `T y = P⁻¹ y + Z K⁻¹ Zᵀ y` for a block `y`.
    pub(crate) fn apply(&self, y: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        let mut x = y.to_owned();
        self.shift.factor.solve_in_place(x.view_mut())?;
        if self.k.nrows() > 0 {
            let zy = dense::matmul(self.z.t(), y)?;
            let c = dense::lu_solve(self.k.view(), zy.view())?;
            x += &dense::matmul(self.z.view(), c.view())?;
        }
        Ok(x)
    }
}

/// `[a b]` (same number of rows).
fn cat<'a>(a: ArrayView2<'a, f64>, b: ArrayView2<'a, f64>) -> Result<Array2<f64>> {
    ndarray::concatenate(Axis(1), &[a, b]).map_err(|_| SolverError::ShapeMismatch {
        what: format!("[U_top U_shifted]: {:?} and {:?}", a.dim(), b.dim()),
    })
}

/// The eigenvectors `[u; v]/√2` of `H(G)` of a set of triplets.
fn augmented_vectors(t: &SvdResult) -> Array2<f64> {
    let (n, c) = t.u.dim();
    let mut y = Array2::zeros((n + t.v.nrows(), c));
    y.slice_mut(s![..n, ..])
        .assign(&(&t.u * std::f64::consts::FRAC_1_SQRT_2));
    y.slice_mut(s![n.., ..])
        .assign(&(&t.v * std::f64::consts::FRAC_1_SQRT_2));
    y
}

/// The symbolic analysis of `P = τ I − H(S)` (its pattern does not depend on the shift: one for
/// every shift), refused when its factor does not fit `budget`.
pub(crate) fn shifted_pattern(st: &CsrMatrix, n: usize, budget: MemoryBudget) -> Result<CholeskyPattern> {
    let pattern = CholeskyPattern::new(&shifted_augmented(st, n, 1.0)?)?;
    if !budget.fits_f64(pattern.factor_nnz()) {
        return Err(SolverError::InvalidParameter {
            name: "budget",
            value: pattern.factor_nnz() as f64 * 8.0,
            reason: "the factor of the shifted augmented matrix does not fit the memory budget",
        });
    }
    Ok(pattern)
}

/// `H(G) q` for a block `q = [q_u; q_v]`: `[G q_v; Gᵀ q_u]`.
pub(crate) fn augmented_apply<O: LinearOperator + ?Sized>(op: &O, q: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
    let n = op.nrows();
    let mut out = Array2::zeros(q.dim());
    op.apply_into(q.slice(s![n.., ..]), out.slice_mut(s![..n, ..]))?;
    op.apply_transpose_into(q.slice(s![..n, ..]), out.slice_mut(s![n.., ..]))?;
    Ok(out)
}

/// `W = [[L, 0], [0, R]]` (`(n + m) × 2k`): `H(L Rᵀ) = W J Wᵀ`.
pub(crate) fn low_rank_block(left: ArrayView2<'_, f64>, right: ArrayView2<'_, f64>) -> Array2<f64> {
    let (n, k) = left.dim();
    let mut w = Array2::zeros((n + right.nrows(), 2 * k));
    w.slice_mut(s![..n, ..k]).assign(&left);
    w.slice_mut(s![n.., k..]).assign(&right);
    w
}

/// One orthonormal SVD from left and right vectors (the halves of eigenvectors of `H(G)`):
/// Rayleigh–Ritz on `G` with their orthonormal bases, residuals computed explicitly.
pub(crate) fn rayleigh_ritz_halves<O: LinearOperator + ?Sized>(
    op: &O,
    left: ArrayView2<'_, f64>,
    right: ArrayView2<'_, f64>,
) -> Result<SvdResult> {
    let qu = dense::thin_q(left)?;
    let qv = dense::thin_q(right)?;
    let gqv = op.apply(qv.view())?;
    let small = dense::thin_svd(dense::matmul(qu.t(), gqv.view())?.view())?;
    let u = dense::matmul(qu.view(), small.u.view())?;
    let v = dense::matmul(qv.view(), small.v.view())?;
    SvdResult::new(u, small.s, v).certify(op)
}

/// Removes the components along the orthonormal columns of `basis` (twice, for stability).
fn project_out(x: &mut Array2<f64>, basis: &Array2<f64>) -> Result<()> {
    if basis.ncols() == 0 {
        return Ok(());
    }
    for _ in 0..2 {
        let c = dense::matmul(basis.t(), x.view())?;
        *x -= &dense::matmul(basis.view(), c.view())?;
    }
    Ok(())
}

/// The top-`rank` SVD of `G = S + L Rᵀ` by shift-invert subspace iteration, certified by a
/// count of the singular values above the shift (see the module documentation). Every returned
/// triplet has residuals at most `tol · s_1`, or the call fails.
///
/// # Errors
/// [`SolverError::InvalidParameter`] when `op` has no sparse-plus-low-rank structure or the
/// Cholesky factor would not fit the budget; [`SolverError::NotConverged`] when no shift gives a
/// positive definite `P` or the iteration does not reach the tolerance in `max_iters`;
/// [`SolverError::CountMismatch`] when a value above the shift was missed (Lanczos could not
/// separate it from a value repeated just below the shift): the result would not be the top
/// `rank`, so none is returned; [`SolverError::CountUncertain`] when the count is a range and
/// the result matches only its lower end.
pub fn shift_invert_svd<O: LinearOperator + ?Sized>(
    op: &O,
    rank: usize,
    params: &ShiftInvertParams,
) -> Result<(SvdResult, ShiftInvertInfo)> {
    let (n, m) = (op.nrows(), op.ncols());
    check_rank(n, m, rank)?;
    check_tol(params.tol)?;
    let structure = op.sparse_plus_low_rank().ok_or(SolverError::InvalidParameter {
        name: "operator",
        value: f64::NAN,
        reason: "shift-invert needs the sparse-plus-low-rank structure G = S + L R^T",
    })?;
    let (sp, left, right) = (structure.sparse, &structure.left, &structure.right);
    let st = sp.transpose();
    let dim = n + m;
    let w = low_rank_block(left.view(), right.view());

    let pattern = shifted_pattern(&st, n, params.budget)?;

    // A first shift just above σ_1(S): the estimate is a lower bound, so step up until the
    // factorisation succeeds (which certifies τ > σ_1(S)).
    let s1_sparse = top_singular_value_estimate(sp, params.seed)?;
    let floor = f64::EPSILON * (1.0 + s1_sparse);
    let mut factorizations = 0;
    let (tau, chol) =
        bracket_shift(&pattern, &st, n, s1_sparse, floor, &mut factorizations)?.ok_or(SolverError::NotConverged {
            solver: "shift search",
            iterations: factorizations,
            residual: f64::INFINITY,
            tol: params.tol,
        })?;
    let inverse = ShiftedInverse::new(
        FactoredShift {
            tau,
            factor: ShiftFactor::Cholesky(chol),
            sp,
            st: &st,
        },
        &w,
    )?;
    // The count certifies the result. Where it is a range at τ (P's condition number near
    // 1e10 widens the bound), retake it a little further from σ_1(S), where P is better
    // conditioned; the iteration keeps the shift τ.
    let mut count = inverse.count;
    for step in RECOUNT_STEPS {
        if count.min == count.max {
            break;
        }
        let t = inverse.shift.tau * (1.0 + step);
        factorizations += 1;
        let Some(chol) = factor_shifted(&pattern, &st, n, t)? else {
            break;
        };
        let other_shift = FactoredShift {
            tau: t,
            factor: ShiftFactor::Cholesky(chol),
            sp,
            st: &st,
        };
        let other = Count::of(&other_shift, &w, &solve_block(&other_shift.factor, &w)?)?;
        if other.max - other.min < count.max - count.min {
            count = other;
        }
    }

    // The values above the shift (at most k of them). Those well above it come from block
    // Lanczos on G; values just above the shift, which Lanczos cannot separate from the ones
    // below, are dominant eigenvalues of T (|1/(τ − σ)| large) and come with the iteration.
    // So try the top `above`, then fewer, until a Lanczos run converges.
    let mut top: Option<SvdResult> = None;
    for j in (1..=inverse.count.max.min(rank)).rev() {
        // A long basis: the values above the shift may sit on a flat spectrum.
        let lp = LanczosParams {
            // Tighter than the result's: these vectors stay fixed in the Rayleigh–Ritz basis.
            tol: 0.25 * params.tol,
            seed: params.seed,
            max_restarts: TOP_RESTARTS,
            work_dim: Some(TOP_BASIS.min(n.min(m).saturating_sub(1)).max(j + 1)),
            block_size: Some(j.max(2)),
        };
        match lanczos_svd(op, j, &lp) {
            Ok(t) => {
                top = Some(t);
                break;
            }
            Err(SolverError::NotConverged { .. }) => continue,
            Err(e) => return Err(e),
        }
    }
    let top = top.unwrap_or_else(|| SvdResult::new(Array2::zeros((n, 0)), Array1::zeros(0), Array2::zeros((m, 0))));
    // Keep the Lanczos triplets clearly above τ only: on a flat spectrum a run can converge to
    // a copy of a value just below τ in place of one just above it.
    let slack = params.tol * top.s.first().copied().unwrap_or(0.0);
    let keep = top.s.iter().take_while(|&&x| x > inverse.shift.tau + slack).count();
    let top = top.truncate(keep);
    let top_vectors = augmented_vectors(&top);
    let c = top.rank();
    let want = rank - c;

    let mut iterations = 0;
    let b = (want + params.oversampling).min(dim - c);
    let (u_all, v_all) = if want > 0 {
        let mut rng = rng_from_seed(params.seed ^ 0x5348_4946_5420_494E);
        let mut q = gaussian_matrix(&mut rng, dim, b);
        project_out(&mut q, &top_vectors)?;
        q = dense::thin_q(q.view())?;
        let mut converged = false;
        let mut last = f64::INFINITY;
        let mut history = Vec::new();
        let mut ritz = Array2::zeros((dim, rank));
        for _ in 0..params.max_iters {
            iterations += 1;
            let mut x = inverse.apply(q.view())?;
            project_out(&mut x, &top_vectors)?;
            q = dense::thin_q(x.view())?;
            // Rayleigh–Ritz of H(G) on [top vectors, iterate].
            let basis = cat(top_vectors.view(), q.view())?;
            let hq = augmented_apply(op, basis.view())?;
            let mut bmat = dense::matmul(basis.t(), hq.view())?;
            let bt = bmat.t().to_owned();
            bmat = (&bmat + &bt) * 0.5;
            let (theta, w_ritz) = dense::symmetric_eigen(bmat.view())?;
            let y = dense::matmul(basis.view(), w_ritz.view())?;
            let hy = dense::matmul(hq.view(), w_ritz.view())?;
            let s1 = theta[0].abs().max(f64::MIN_POSITIVE);
            // Residuals of the wanted Ritz pairs of H(G): ‖H y − θ y‖ (the triplet
            // residuals are about √2 times these; the final check is explicit).
            let worst = (0..rank)
                .map(|i| {
                    let r = &hy.column(i) - &(&y.column(i) * theta[i]);
                    r.dot(&r).sqrt()
                })
                .fold(0.0f64, f64::max);
            last = worst / s1;
            history.push((iterations, last));
            ritz.assign(&y.slice(s![.., ..rank]));
            // The next block: the Ritz vectors after the top ones.
            q = y.slice(s![.., c..c + b]).to_owned();
            if worst <= 0.5 * params.tol * s1 {
                converged = true;
                break;
            }
            // Stop early where the rate of the last iterations cannot reach the target within
            // the iterations left (slowly converging residuals of clustered values decrease
            // steadily, so the rate is a fair forecast).
            if out_of_reach(&history, 0.5 * params.tol, params.max_iters, 1) {
                break;
            }
        }
        if !converged {
            return Err(SolverError::NotConverged {
                solver: "shift-invert",
                iterations,
                residual: last,
                tol: params.tol,
            });
        }
        let mut u = ritz.slice(s![..n, ..]).to_owned();
        let mut v = ritz.slice(s![n.., ..]).to_owned();
        for mut col in u.axis_iter_mut(Axis(1)).chain(v.axis_iter_mut(Axis(1))) {
            let norm = col.dot(&col).sqrt();
            if norm > 0.0 {
                col /= norm;
            }
        }
        (u, v)
    } else {
        (top.u.clone(), top.v.clone())
    };

    let result = rayleigh_ritz_halves(op, u_all.view(), v_all.view())?;
    let residual = result.max_residual().unwrap_or(0.0);
    if residual > params.tol {
        return Err(SolverError::NotConverged {
            solver: "shift-invert",
            iterations,
            residual,
            tol: params.tol,
        });
    }
    // The certificate: `min..=max` values lie above the count's shift, and the returned ones
    // hold the upper end (or the rank).
    let slack = params.tol * result.s[0];
    let clearly_above = result.s.iter().filter(|&&x| x > count.shift + slack).count();
    let possibly_above = result.s.iter().filter(|&&x| x > count.shift - slack).count();
    if clearly_above > count.max || possibly_above < count.min.min(rank) {
        // A value above the shift is missing: Lanczos could not separate it from the values
        // below, and its eigenvalue 1/(τ − σ) of T, negative, did not enter the block.
        return Err(SolverError::CountMismatch {
            shift: count.shift,
            counted: count.min,
            returned: possibly_above,
        });
    }
    if possibly_above < count.max.min(rank) {
        // Consistent with the count's lower end but not its upper one: the set is not certified.
        return Err(SolverError::CountUncertain {
            shift: count.shift,
            min: count.min,
            max: count.max,
            returned: possibly_above,
        });
    }
    let info = ShiftInvertInfo {
        shift: inverse.shift.tau,
        count_shift: count.shift,
        above_shift: count.min,
        above_shift_max: count.max,
        capacitance_error: count.error,
        iterations,
        factorizations,
        factor_nnz: pattern.factor_nnz(),
        block: b,
    };
    Ok((result, info))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::krylov::STALL_WINDOW;

    #[test]
    fn the_iteration_stops_early_only_when_its_rate_cannot_reach_the_target() {
        // Residuals falling 2% per iteration from 1e-6: 5e-9 takes about 262 iterations.
        let steady: Vec<(usize, f64)> = (0..40).map(|i| (i as usize + 1, 1e-6 * 0.98f64.powi(i))).collect();
        let plateau: Vec<(usize, f64)> = (1..=30).map(|i| (i, 1e-6)).collect();
        assert!(!out_of_reach(&steady, 5e-9, 1000, 1));
        assert!(out_of_reach(&steady, 5e-9, 100, 1));
        // Too short a history to judge; a plateau never gets there; the target already met.
        assert!(!out_of_reach(&steady[..STALL_WINDOW], 5e-9, 30, 1));
        assert!(out_of_reach(&plateau, 5e-9, 1000, 1));
        assert!(!out_of_reach(&steady, 1e-5, 41, 1));
    }

    /// `S` (block diagonal, `n × n`), `W` for `L Rᵀ` (rank `k`) and the dense `G = S + L Rᵀ`.
    fn structured(seed: u64, blocks: usize, k: usize, scale: f64) -> (CsrMatrix, Array2<f64>, Array2<f64>) {
        let mut rng = rng_from_seed(seed);
        let n = 3 * blocks;
        let b = gaussian_matrix(&mut rng, n, 3);
        let mut t = Vec::new();
        for c in 0..blocks {
            for i in 0..3 {
                for j in 0..3 {
                    t.push((3 * c + i, 3 * c + j, b[[3 * c + i, j]]));
                }
            }
        }
        let sp = CsrMatrix::from_triplets(n, n, t).unwrap();
        let l = gaussian_matrix(&mut rng, n, k) * scale;
        let r = gaussian_matrix(&mut rng, n, k) * scale;
        let mut w = Array2::zeros((2 * n, 2 * k));
        w.slice_mut(s![..n, ..k]).assign(&l);
        w.slice_mut(s![n.., k..]).assign(&r);
        let g = sp.to_dense() + l.dot(&r.t());
        (sp, w, g)
    }

    /// The count at `tau` (with its error bound), as the iteration takes it.
    fn count_at(sp: &CsrMatrix, w: &Array2<f64>, tau: f64) -> Count {
        let st = sp.transpose();
        let p = shifted_augmented(&st, sp.nrows(), tau).unwrap();
        let chol = CholeskyPattern::new(&p).unwrap().factor(&p).unwrap();
        ShiftedInverse::new(
            FactoredShift {
                tau,
                factor: ShiftFactor::Cholesky(chol),
                sp,
                st: &st,
            },
            w,
        )
        .unwrap()
        .count
    }

    /// The count is exact where `P` is within 1e-11 of singular (condition number about 1e11):
    /// the shift just above `σ_1(S)`, values of `G` both above it and below it.
    #[test]
    fn the_count_is_exact_next_to_a_singular_shifted_matrix() {
        for (seed, scale) in [(1, 0.6), (2, 0.4), (3, 0.8)] {
            let (sp, w, g) = structured(seed, 20, 3, scale);
            let s1 = dense::thin_svd(sp.to_dense().view()).unwrap().s[0];
            let sg = dense::thin_svd(g.view()).unwrap().s;
            for rel in [1e-3, 1e-8, 1e-11] {
                let tau = s1 * (1.0 + rel);
                let gap = sg.iter().map(|&x| (x - tau).abs()).fold(f64::INFINITY, f64::min);
                assert!(gap > 1e-6 * tau, "seed {seed}: a value of G sits at the shift");
                let inv = count_at(&sp, &w, tau);
                let exact = sg.iter().filter(|&&x| x > tau).count();
                // The range always holds the count; it is one value while the bound is small
                // against K's eigenvalues (P's condition number up to about 1e9 here; at 1e11
                // the bound, normwise, may widen it).
                assert!(
                    inv.min <= exact && exact <= inv.max,
                    "seed {seed}, tau = s1 (1 + {rel}): {}..={} vs {exact}",
                    inv.min,
                    inv.max
                );
                if rel >= 1e-8 {
                    assert_eq!((inv.min, inv.max), (exact, exact), "seed {seed}, rel {rel}");
                }
            }
        }
    }

    /// With the shift on a singular value of `G` (to rounding), `K` is singular to rounding:
    /// the range must hold both counts, and never exclude the true one.
    #[test]
    fn a_shift_on_a_singular_value_gives_a_range_that_holds_the_count() {
        let (sp, w, g) = structured(4, 20, 3, 1.0);
        let s1 = dense::thin_svd(sp.to_dense().view()).unwrap().s[0];
        let sg = dense::thin_svd(g.view()).unwrap().s;
        // The smallest singular value of G clearly above σ_1(S) (P stays positive definite).
        let j = sg
            .iter()
            .rposition(|&x| x > s1 * (1.0 + 1e-3))
            .expect("a value of G above s1(S)");
        let tau = sg[j];
        let inv = count_at(&sp, &w, tau);
        // The true count is j (σ_j itself not above τ; 0-based) or j + 1 (τ rounded below it).
        assert!(inv.min <= j && inv.max >= j, "{}..={} vs {j}", inv.min, inv.max);
        assert!(inv.max <= j + 1);
        // Either side, just off the value, the count is exact again.
        for side in [1.0 + 1e-7, 1.0 - 1e-7] {
            let t = tau * side;
            let inv = count_at(&sp, &w, t);
            let exact = sg.iter().filter(|&&x| x > t).count();
            assert_eq!((inv.min, inv.max), (exact, exact));
        }
    }
}
