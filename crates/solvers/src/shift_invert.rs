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
//! condition number near 1e10 and the computed `K` carries that error: on Pubmed's *centred* SNE
//! kernel (`k = 3`) its smallest eigenvalue is below the error, the count came out 2 where the
//! true number is 1 (the second value is a twin value, `ksvd_linalg::Twins`, confirmed by a dense
//! SVD of the reduced operator), and the solver refuses with [`SolverError::CountMismatch`]. A
//! refusal is therefore not proof of a missed value; a bound on the error of `K`, turning the
//! count into a range, is open work.
use crate::error::{Result, SolverError};
use crate::lanczos::{check_tol, lanczos_svd, LanczosParams};
use crate::rsvd::{randomized_svd, RsvdParams};
use crate::svd::{check_rank, SvdResult};
use ksvd_linalg::random::{gaussian_matrix, rng_from_seed};
use ksvd_linalg::{dense, CholeskyPattern, CsrMatrix, LinalgError, LinearOperator, MemoryBudget, SparseCholesky};
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
    /// The final shift `τ`.
    pub shift: f64,
    /// Exact number of singular values of `G` above `τ` (inertia of `τ I − H(G)`).
    pub above_shift: usize,
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
fn shifted_augmented(st: &CsrMatrix, n: usize, tau: f64) -> Result<CsrMatrix> {
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

/// `P = τ I − H(S)` factorised, with the Woodbury data of `τ I − H(G)`.
struct ShiftedInverse {
    tau: f64,
    chol: SparseCholesky,
    /// `Z = P⁻¹ W` (`(n + m) × 2k`).
    z: Array2<f64>,
    /// `K = J − Wᵀ Z` (`2k × 2k`).
    k: Array2<f64>,
    /// `#{σ_i(G) > τ}`.
    above: usize,
}

impl ShiftedInverse {
    /// The Woodbury data and the count for the factor `chol` of `P = τ I − H(S)`.
    fn new(tau: f64, chol: SparseCholesky, w: &Array2<f64>) -> Result<Self> {
        let k2 = w.ncols();
        let half = k2 / 2;
        let mut z = w.clone();
        chol.solve_in_place(z.view_mut())?;
        let wz = dense::matmul(w.t(), z.view())?;
        let mut k = Array2::from_shape_fn((k2, k2), |(i, j)| {
            let jij = if (i < half && j == i + half) || (i >= half && j + half == i) {
                1.0
            } else {
                0.0
            };
            jij - wz[[i, j]]
        });
        // Symmetrise the rounding of Wᵀ Z before reading the inertia.
        let kt = k.t().to_owned();
        k = (&k + &kt) * 0.5;
        let negative = if k2 == 0 {
            0
        } else {
            dense::symmetric_eigen(k.view())?.0.iter().filter(|&&x| x < 0.0).count()
        };
        let above = negative.checked_sub(half).ok_or(SolverError::InvalidParameter {
            name: "shift",
            value: tau,
            reason: "inertia of the capacitance matrix is inconsistent (shift at a singular value)",
        })?;
        Ok(ShiftedInverse { tau, chol, z, k, above })
    }

    /// `T y = P⁻¹ y + Z K⁻¹ Zᵀ y` for a block `y`.
    fn apply(&self, y: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        let mut x = y.to_owned();
        self.chol.solve_in_place(x.view_mut())?;
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

/// `H(G) q` for a block `q = [q_u; q_v]`: `[G q_v; Gᵀ q_u]`.
fn augmented_apply<O: LinearOperator + ?Sized>(op: &O, q: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
    let n = op.nrows();
    let mut out = Array2::zeros(q.dim());
    op.apply_into(q.slice(s![n.., ..]), out.slice_mut(s![..n, ..]))?;
    op.apply_transpose_into(q.slice(s![..n, ..]), out.slice_mut(s![n.., ..]))?;
    Ok(out)
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
/// `rank`, so none is returned.
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
    let k = left.ncols();
    let st = sp.transpose();
    let dim = n + m;
    // W = [[L, 0], [0, R]].
    let mut w = Array2::zeros((dim, 2 * k));
    w.slice_mut(s![..n, ..k]).assign(left);
    w.slice_mut(s![n.., k..]).assign(right);

    // The pattern does not depend on the shift: one symbolic analysis.
    let pattern = CholeskyPattern::new(&shifted_augmented(&st, n, 1.0)?)?;
    if !params.budget.fits_f64(pattern.factor_nnz()) {
        return Err(SolverError::InvalidParameter {
            name: "budget",
            value: pattern.factor_nnz() as f64 * 8.0,
            reason: "the Cholesky factor of the shifted augmented matrix does not fit the memory budget",
        });
    }

    // A first shift just above σ_1(S): the estimate is a lower bound, so step up until the
    // factorisation succeeds (which certifies τ > σ_1(S)).
    let s1_sparse = top_singular_value_estimate(sp, params.seed)?;
    let floor = f64::EPSILON * (1.0 + s1_sparse);
    let mut factorizations = 0;
    let (tau, chol) =
        bracket_shift(&pattern, &st, n, s1_sparse, floor, &mut factorizations)?.ok_or(SolverError::NotConverged {
            restarts: factorizations,
            residual: f64::INFINITY,
            tol: params.tol,
        })?;
    let inverse = ShiftedInverse::new(tau, chol, &w)?;

    // The values above the shift (at most k of them). Those well above it come from block
    // Lanczos on G; values just above the shift, which Lanczos cannot separate from the ones
    // below, are dominant eigenvalues of T (|1/(τ − σ)| large) and come with the iteration.
    // So try the top `above`, then fewer, until a Lanczos run converges.
    let mut top: Option<SvdResult> = None;
    for j in (1..=inverse.above.min(rank)).rev() {
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
    let keep = top.s.iter().take_while(|&&x| x > inverse.tau + slack).count();
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
            ritz.assign(&y.slice(s![.., ..rank]));
            // The next block: the Ritz vectors after the top ones.
            q = y.slice(s![.., c..c + b]).to_owned();
            if worst <= 0.5 * params.tol * s1 {
                converged = true;
                break;
            }
        }
        if !converged {
            return Err(SolverError::NotConverged {
                restarts: iterations,
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

    // One orthonormal SVD: Rayleigh–Ritz on G with the left and right halves.
    let qu = dense::thin_q(u_all.view())?;
    let qv = dense::thin_q(v_all.view())?;
    let gqv = op.apply(qv.view())?;
    let small = dense::thin_svd(dense::matmul(qu.t(), gqv.view())?.view())?;
    let u = dense::matmul(qu.view(), small.u.view())?;
    let v = dense::matmul(qv.view(), small.v.view())?;
    let result = SvdResult::new(u, small.s, v).certify(op)?;
    let residual = result.max_residual().unwrap_or(0.0);
    if residual > params.tol {
        return Err(SolverError::NotConverged {
            restarts: iterations,
            residual,
            tol: params.tol,
        });
    }
    // The certificate: exactly `above` values lie above τ, and the returned ones agree.
    let slack = params.tol * result.s[0];
    let clearly_above = result.s.iter().filter(|&&x| x > inverse.tau + slack).count();
    let possibly_above = result.s.iter().filter(|&&x| x > inverse.tau - slack).count();
    if clearly_above > inverse.above || possibly_above < inverse.above.min(rank) {
        // A value above τ is missing: Lanczos could not separate it from the values below
        // τ, and its eigenvalue 1/(τ − σ) of T, negative, did not enter the block.
        return Err(SolverError::CountMismatch {
            shift: inverse.tau,
            counted: inverse.above,
            returned: possibly_above,
        });
    }
    let info = ShiftInvertInfo {
        shift: inverse.tau,
        above_shift: inverse.above,
        iterations,
        factorizations,
        factor_nnz: pattern.factor_nnz(),
        block: b,
    };
    Ok((result, info))
}
