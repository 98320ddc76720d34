//! The common result type and the dense reference solver.
use crate::error::{Result, SolverError};
use ksvd_linalg::{dense, materialize, LinearOperator, MemoryBudget};
use ndarray::{s, Array1, Array2, ArrayView1, ArrayView2};

/// Per-triplet residuals of a truncated SVD, relative to the largest singular value `s_1`
/// (absolute when `s_1 = 0`): `left[i] = ‖G v_i − s_i u_i‖ / s_1`,
/// `right[i] = ‖Gᵀ u_i − s_i v_i‖ / s_1`.
///
/// Residuals certify a result whatever the spectrum: when singular values repeat or cluster,
/// individual vectors are not determined but small residuals still prove that each `(s_i, u_i,
/// v_i)` is a singular triplet up to the stated accuracy (and, with orthonormal `U` and `V`,
/// that the spanned subspaces are invariant up to it).
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Residuals {
    /// `‖G v_i − s_i u_i‖ / s_1` for every triplet.
    pub left: Array1<f64>,
    /// `‖Gᵀ u_i − s_i v_i‖ / s_1` for every triplet.
    pub right: Array1<f64>,
}

impl Residuals {
    /// The largest residual of either side (0 for an empty result).
    pub fn max(&self) -> f64 {
        self.left.iter().chain(self.right.iter()).fold(0.0, |a, &b| a.max(b))
    }
}

/// A rank-`r` truncated SVD `G ≈ U diag(s) Vᵀ`.
///
/// `u` is `n × r` and `v` is `m × r`, with orthonormal columns (for the exact solvers; Nyström
/// approximations have unit-norm columns), `s` holds the singular values in descending order,
/// all non-negative. For a KSVD model, `u` gives `B_φ` and `v` gives `B_ψ`. `residuals` is set
/// by every solver of this crate (see [`Residuals`]); approximate methods elsewhere may leave
/// it unset and call [`SvdResult::certify`] when the cost of two products with `G` is affordable.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct SvdResult {
    /// Left singular vectors (`n × r`).
    pub u: Array2<f64>,
    /// Singular values, descending.
    pub s: Array1<f64>,
    /// Right singular vectors (`m × r`).
    pub v: Array2<f64>,
    /// Per-triplet residuals relative to `s_1`, when computed.
    pub residuals: Option<Residuals>,
}

impl SvdResult {
    /// A result without residuals.
    pub fn new(u: Array2<f64>, s: Array1<f64>, v: Array2<f64>) -> Self {
        SvdResult {
            u,
            s,
            v,
            residuals: None,
        }
    }

    /// The largest relative residual, if computed.
    pub fn max_residual(&self) -> Option<f64> {
        self.residuals.as_ref().map(Residuals::max)
    }

    /// Computes the residuals against `op` (two block products) and stores them.
    pub fn certify<O: LinearOperator + ?Sized>(mut self, op: &O) -> Result<Self> {
        self.residuals = Some(self.compute_residuals(op)?);
        Ok(self)
    }

    /// The rank `r`.
    pub fn rank(&self) -> usize {
        self.s.len()
    }
    /// The first `k` triplets (residuals, relative to the same `s_1`, kept).
    pub fn truncate(&self, k: usize) -> SvdResult {
        let k = k.min(self.rank());
        SvdResult {
            u: self.u.slice(s![.., ..k]).to_owned(),
            s: self.s.slice(s![..k]).to_owned(),
            v: self.v.slice(s![.., ..k]).to_owned(),
            residuals: self.residuals.as_ref().map(|r| Residuals {
                left: r.left.slice(s![..k]).to_owned(),
                right: r.right.slice(s![..k]).to_owned(),
            }),
        }
    }
    /// Residuals of every triplet against `op`, relative to `s_1` (see [`Residuals`]).
    pub fn compute_residuals<O: LinearOperator + ?Sized>(&self, op: &O) -> Result<Residuals> {
        let gv = op.apply(self.v.view())?;
        let gtu = op.apply_transpose(self.u.view())?;
        let r = residuals_from_products(self, &gv, &gtu);
        if r.left.iter().chain(r.right.iter()).any(|x| !x.is_finite()) {
            return Err(SolverError::NonFinite);
        }
        Ok(r)
    }

    /// Makes the sign of every pair deterministic: the largest-magnitude entry of each `u_i`
    /// is positive (flipping `v_i` with it); the rule of [`column_signs`].
    pub fn normalize_signs(&mut self) {
        let signs = column_signs(self.u.view());
        for (i, &sign) in signs.iter().enumerate() {
            if sign < 0.0 {
                self.u.column_mut(i).mapv_inplace(|x| -x);
                self.v.column_mut(i).mapv_inplace(|x| -x);
            }
        }
    }
}

/// The sign convention of every singular (and eigen) vector in the workspace: `±1` per column
/// of `u`, the sign that makes the column's largest-magnitude entry positive. On ties the first
/// such entry decides; a zero column (or one whose entries are all NaN) gets `+1`.
///
/// Multiplying a column and its partner (the right singular vector, or the normaliser of a
/// Nyström extension) by its sign fixes the pair without changing the product `u_i s_i v_iᵀ`;
/// the sign of a column does not change when it is scaled by a positive number, so it may be
/// taken before or after normalising (up to ties that the scaling's rounding creates).
pub fn column_signs(u: ArrayView2<'_, f64>) -> Array1<f64> {
    Array1::from_iter(u.columns().into_iter().map(|col| {
        let big = col.iter().fold(0.0f64, |a, &x| if x.abs() > a.abs() { x } else { a });
        if big < 0.0 {
            -1.0
        } else {
            1.0
        }
    }))
}

/// Residuals relative to `s_1` from the products `G V` and `Gᵀ U` of a result's vectors.
pub(crate) fn residuals_from_products(r: &SvdResult, gv: &Array2<f64>, gtu: &Array2<f64>) -> Residuals {
    let s1 = r.s.iter().cloned().fold(0.0, f64::max);
    let scale = if s1 > 0.0 { 1.0 / s1 } else { 1.0 };
    let col_res = |prod: &Array2<f64>, vecs: &Array2<f64>, i: usize| {
        residual_norm(prod.column(i), vecs.column(i), r.s[i]) * scale
    };
    let left = Array1::from_iter((0..r.rank()).map(|i| col_res(&gv, &r.u, i)));
    let right = Array1::from_iter((0..r.rank()).map(|i| col_res(&gtu, &r.v, i)));
    Residuals { left, right }
}

/// `‖p − s x‖` for a product `p` (`G v` or `Gᵀ u`) and the vector `x` it should equal `s` times.
pub(crate) fn residual_norm(p: ArrayView1<'_, f64>, x: ArrayView1<'_, f64>, s: f64) -> f64 {
    let mut acc = 0.0;
    for (p, x) in p.iter().zip(x) {
        let d = p - s * x;
        acc += d * d;
    }
    acc.sqrt()
}

/// Checks `1 <= rank <= min(n, m)` and a non-empty shape.
pub fn check_rank(nrows: usize, ncols: usize, rank: usize) -> Result<()> {
    if nrows == 0 || ncols == 0 {
        return Err(SolverError::Empty { nrows, ncols });
    }
    if rank == 0 || rank > nrows.min(ncols) {
        return Err(SolverError::InvalidRank { rank, nrows, ncols });
    }
    Ok(())
}

/// The top-`rank` SVD of a dense matrix (faer's thin SVD; the reference for every other solver).
pub fn dense_svd(a: ArrayView2<'_, f64>, rank: usize) -> Result<SvdResult> {
    check_rank(a.nrows(), a.ncols(), rank)?;
    let svd = dense::thin_svd(a)?;
    let mut r = SvdResult::new(svd.u, svd.s, svd.v).truncate(rank);
    r.normalize_signs();
    r.certify(&a)
}

/// Numbers (`f64`) a dense SVD of an `n × m` matrix holds: the matrix, its copy inside the
/// factorisation and the thin factors, `2 n m + (n + m) min(n, m)`. What [`crate::auto_svd`]
/// and `ksvd`'s exact solver check against their memory budget before choosing it.
pub fn dense_svd_numbers(n: usize, m: usize) -> usize {
    2usize
        .saturating_mul(n.saturating_mul(m))
        .saturating_add((n + m).saturating_mul(n.min(m)))
}

/// The top-`rank` SVD of an operator by materialising it ([`LinearOperator::to_dense`];
/// `O(n m)` memory).
///
/// # Errors
/// [`SolverError::InvalidParameter`] (`budget`) when the matrix and the SVD's workspace (about
/// four copies of it) do not fit [`MemoryBudget::auto`]: an allocation that size would abort.
pub fn dense_svd_operator<O: LinearOperator + ?Sized>(op: &O, rank: usize) -> Result<SvdResult> {
    check_rank(op.nrows(), op.ncols(), rank)?;
    let entries = op.nrows().saturating_mul(op.ncols()).saturating_mul(4);
    let a = materialize_within_budget(
        op,
        entries,
        "a dense SVD of the operator (matrix and workspace) does not fit the memory budget",
    )?;
    dense_svd(a.view(), rank)
}

/// The operator as a dense matrix of finite entries, once `numbers` `f64` of working memory fit
/// the automatic budget (`MemoryBudget::auto`; `reason` says what does not fit otherwise): the
/// opening of the routes that materialise an operator ([`dense_svd_operator`],
/// [`gram_svd_operator`]).
fn materialize_within_budget<O: LinearOperator + ?Sized>(
    op: &O,
    numbers: usize,
    reason: &'static str,
) -> Result<Array2<f64>> {
    if !MemoryBudget::auto().fits_f64(numbers) {
        return Err(SolverError::InvalidParameter {
            name: "budget",
            value: numbers as f64 * 8.0,
            reason,
        });
    }
    let a = materialize(op)?;
    if a.iter().any(|x| !x.is_finite()) {
        return Err(SolverError::NonFinite);
    }
    Ok(a)
}

/// Numbers (`f64`) the Gram route ([`gram_svd_operator`]) holds at its peak for an `n × m`
/// operator at rank `rank`, with `k = min(n, m)`: the matrix and its Gram matrix while the Gram
/// matrix is formed, then the Gram matrix and faer's symmetric eigendecomposition (its
/// eigenvectors, the tridiagonal working copy and the two matrices of the divide-and-conquer
/// step, all of order `k`), `max(n m + k², 5 k²)`, plus the rank-`rank` factors.
pub fn gram_svd_numbers(n: usize, m: usize, rank: usize) -> usize {
    let k2 = n.min(m).saturating_mul(n.min(m));
    n.saturating_mul(m)
        .saturating_add(k2)
        .max(k2.saturating_mul(5))
        .saturating_add((n + m).saturating_mul(rank))
}

/// The top-`rank` SVD of an operator from the eigendecomposition of its Gram matrix.
///
/// `G` is materialised, the Gram matrix of its shorter side formed (`Gᵀ G` when `m ≤ n`, else
/// `G Gᵀ`) and `G` freed. The leading `rank` eigenvectors `V` of `Gᵀ G` then give the thin QR
/// `G V = Q R` and the SVD `R = P Σ Yᵀ` of the small factor, so that `G (V Y) = (Q P) Σ`: one
/// Rayleigh–Ritz step, which returns `U = Q P`, `V Y` and `Σ` with both bases orthonormal to
/// working precision.
///
/// About `2 n m k + 12 k³` flops against the dense SVD's `4 n m k + 22 k³` (`k = min(n, m)`;
/// Table 1's BlogCatalog SNE kernel, order 10106: 149 s against 399 s on two cores), in five
/// matrices of order `k` at the peak ([`gram_svd_numbers`]). The eigenvectors of the Gram matrix
/// carry errors of about `ε σ₁² / σ_i` (its eigenvalues, of about `ε σ₁²`), and so do the
/// residuals of the side the Rayleigh–Ritz step does not project: working precision when
/// `σ_rank` is near `σ₁`, poor when it is near `√ε σ₁`. The Gram matrix is decomposed at unit
/// scale ([`dense::symmetric_eigen_top_owned`]: faer's eigensolver stops at absolute
/// tolerances). The result is certified (its residuals against `op`), and callers compare them
/// with their tolerance.
///
/// # Errors
/// [`SolverError::InvalidParameter`] (`budget`) when [`gram_svd_numbers`] do not fit
/// [`MemoryBudget::auto`]; [`SolverError::NonFinite`] for a matrix with NaN or infinite entries.
pub fn gram_svd_operator<O: LinearOperator + ?Sized>(op: &O, rank: usize) -> Result<SvdResult> {
    gram_svd_above(op, rank, None)
}

/// [`gram_svd_operator`], given up before its Rayleigh–Ritz step when a tolerance `tol` is given
/// and the Gram matrix's `rank`-th eigenvalue lies below [`gram_floor`]`(tol) · λ₁`: `σ_rank` too
/// far below `σ₁` for the route to meet `tol`. That is [`SolverError::NotConverged`] with the
/// forecast residual (`3 ε σ₁ / σ_rank`, relative to `σ₁`; none was computed).
pub(crate) fn gram_svd_above<O: LinearOperator + ?Sized>(op: &O, rank: usize, tol: Option<f64>) -> Result<SvdResult> {
    let (n, m) = (op.nrows(), op.ncols());
    check_rank(n, m, rank)?;
    // The short side's Gram matrix; `G` is freed before the eigendecomposition.
    let short_is_right = m <= n;
    let gram = {
        let a = materialize_within_budget(
            op,
            gram_svd_numbers(n, m, rank),
            "the Gram matrix of the operator and its eigendecomposition do not fit the memory budget",
        )?;
        if short_is_right {
            dense::matmul(a.t(), a.view())?
        } else {
            dense::matmul(a.view(), a.t())?
        }
    };
    let (values, basis) = dense::symmetric_eigen_top_owned(gram, rank)?;
    if let Some(tol) = tol.filter(|_| rank > 0) {
        if !(values[rank - 1] >= gram_floor(tol) * values[0]) {
            let ratio = values[rank - 1] / values[0];
            return Err(SolverError::NotConverged {
                solver: "Gram route (stopped before its Rayleigh–Ritz step: sigma_rank too far below sigma_1)",
                iterations: 0,
                residual: gram_forecast_residual(ratio),
                tol,
            });
        }
    }
    // `basis` spans the short side's singular subspace; its image spans the other side's.
    let image = if short_is_right {
        op.apply(basis.view())?
    } else {
        op.apply_transpose(basis.view())?
    };
    let (q, r) = dense::thin_qr(image.view())?;
    let small = dense::thin_svd(r.view())?;
    let image_side = dense::matmul(q.view(), small.u.view())?;
    let basis_side = dense::matmul(basis.view(), small.v.view())?;
    let (u, v) = if short_is_right {
        (image_side, basis_side)
    } else {
        (basis_side, image_side)
    };
    let mut result = SvdResult::new(u, small.s, v);
    result.normalize_signs();
    result.certify(op)
}

/// The Gram route's residual model: the residuals of the side its Rayleigh–Ritz step does not
/// project are about [`GRAM_RESIDUAL_FACTOR`]` · ε σ₁ / σ_rank` relative to `σ₁` (1.3e-12 and
/// 1.7e-12 on random kernel matrices of order 2708 and 3327 with `σ_rank / σ₁ = 5.5e-4`; 8.5e-14
/// on Table 1's Cora SNE kernel at 0.47).
const GRAM_RESIDUAL_FACTOR: f64 = 3.0;
/// How far below the tolerance [`gram_floor`] wants the forecast residual.
const GRAM_MARGIN: f64 = 10.0;

/// The residual (relative to `σ₁`) the Gram route is forecast to leave when the Gram matrix's
/// eigenvalues have `λ_rank / λ₁ = eigen_ratio`, i.e. `σ_rank / σ₁ = √eigen_ratio`.
fn gram_forecast_residual(eigen_ratio: f64) -> f64 {
    GRAM_RESIDUAL_FACTOR * f64::EPSILON / eigen_ratio.max(0.0).sqrt()
}

/// The smallest `λ_rank / λ₁` of the Gram matrix at which [`gram_svd_operator`] is expected to
/// meet the relative residual `tol`: where [`gram_forecast_residual`] is [`GRAM_MARGIN`] times
/// below `tol`, i.e. `σ_rank / σ₁ ≥ 30 ε / tol`.
pub(crate) fn gram_floor(tol: f64) -> f64 {
    // (10 · 3) is exactly 30: the floor is the same number as when it was written `30 ε / tol`.
    let ratio = GRAM_MARGIN * GRAM_RESIDUAL_FACTOR * f64::EPSILON / tol;
    ratio * ratio
}

/// The same SVD computed by LAPACK (`gesdd` through ndarray-linalg) to cross-check faer.
#[cfg(feature = "lapack")]
pub fn lapack_svd(a: ArrayView2<'_, f64>, rank: usize) -> Result<SvdResult> {
    check_rank(a.nrows(), a.ncols(), rank)?;
    let svd = dense::lapack::thin_svd(a)?;
    let mut r = SvdResult::new(svd.u, svd.s, svd.v).truncate(rank);
    r.normalize_signs();
    r.certify(&a)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // Test helpers panic on failure by design.
    use super::*;
    use ndarray::array;

    /// The Gram route gives up before its Rayleigh–Ritz step when `σ_rank / σ₁` lies below
    /// `30 ε / tol` (here `σ₂₀ / σ₁ = 1e-10`, below 6.7e-7 at tolerance 1e-8), with a typed error that forecasts a residual
    /// above the tolerance, and not without a tolerance.
    #[test]
    fn the_gram_route_gives_up_below_its_floor() {
        let n = 60;
        let u = dense::thin_q(
            Array2::from_shape_fn((n, n), |(i, j)| {
                ((i * 7 + j * 13) % 17) as f64 - 8.0 + if i == j { 30.0 } else { 0.0 }
            })
            .view(),
        )
        .unwrap();
        let s = Array1::from_shape_fn(n, |i| 10f64.powf(-10.0 * i as f64 / 19.0));
        let g = (&u * &s).dot(&u.t());
        let stopped = gram_svd_above(&g, 20, Some(1e-8));
        assert!(
            matches!(stopped, Err(SolverError::NotConverged { residual, tol, .. }) if residual > 1e-8 && tol == 1e-8),
            "{stopped:?}"
        );
        assert!(gram_svd_above(&g, 10, Some(1e-8)).is_ok());
        assert!(gram_svd_above(&g, 20, None).is_ok());
    }

    /// The floor is where the forecast residual lies the margin below the tolerance, and it is the
    /// same number as `(30 ε / tol)²`, the form in which Table 1's committed cells were decided.
    #[test]
    fn the_floor_is_the_forecast_with_its_margin() {
        for tol in [1e-4, 1e-6, 1e-8, 1e-10, 1e-12] {
            let forecast = gram_forecast_residual(gram_floor(tol));
            assert!(
                (forecast * GRAM_MARGIN / tol - 1.0).abs() < 8.0 * f64::EPSILON,
                "{tol}: {forecast}"
            );
            let written = 30.0 * f64::EPSILON / tol;
            assert_eq!(gram_floor(tol).to_bits(), (written * written).to_bits(), "{tol}");
        }
    }

    /// The largest magnitude decides, the first of equal magnitudes wins, a zero column is `+1`.
    #[test]
    fn column_signs_follow_the_largest_entry() {
        let u = array![[0.1, -3.0, 0.0, 2.0], [-0.5, 2.0, 0.0, -2.0], [0.2, 1.0, 0.0, 1.0]];
        assert_eq!(column_signs(u.view()), array![-1.0, -1.0, 1.0, 1.0]);
        // Scaling by a positive number keeps the signs.
        assert_eq!(column_signs((&u * 7.5).view()), column_signs(u.view()));
    }

    /// `normalize_signs` flips `u_i` and `v_i` together: `U S Vᵀ` is unchanged and every
    /// column of `U` ends with a positive largest entry.
    #[test]
    fn normalize_signs_keeps_the_product() {
        let u = array![[0.6, -0.8], [-0.8, -0.6]];
        let v = array![[-1.0, 0.0], [0.0, 1.0]];
        let s = array![2.0, 1.0];
        let mut r = SvdResult::new(u.clone(), s.clone(), v.clone());
        r.normalize_signs();
        let product = |u: &Array2<f64>, v: &Array2<f64>| (u * &s).dot(&v.t());
        assert_eq!(product(&r.u, &r.v), product(&u, &v));
        assert_eq!(column_signs(r.u.view()), array![1.0, 1.0]);
        assert_eq!(r.u.column(0).to_vec(), vec![-0.6, 0.8]);
    }
}
