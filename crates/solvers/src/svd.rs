//! The common result type and the dense reference solver.
use crate::error::{Result, SolverError};
use ksvd_linalg::{dense, materialize, LinearOperator};
use ndarray::{s, Array1, Array2, ArrayView2};

/// A rank-`r` truncated SVD `G ≈ U diag(s) Vᵀ`.
///
/// `u` is `n × r` and `v` is `m × r`, with orthonormal columns (for the exact solvers; Nyström
/// approximations have unit-norm columns), `s` holds the singular values in descending order,
/// all non-negative. For a KSVD model, `u` gives `B_φ` and `v` gives `B_ψ`.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct SvdResult {
    /// Left singular vectors (`n × r`).
    pub u: Array2<f64>,
    /// Singular values, descending.
    pub s: Array1<f64>,
    /// Right singular vectors (`m × r`).
    pub v: Array2<f64>,
}

impl SvdResult {
    /// The rank `r`.
    pub fn rank(&self) -> usize {
        self.s.len()
    }
    /// The first `k` triplets.
    pub fn truncate(&self, k: usize) -> SvdResult {
        let k = k.min(self.rank());
        SvdResult {
            u: self.u.slice(s![.., ..k]).to_owned(),
            s: self.s.slice(s![..k]).to_owned(),
            v: self.v.slice(s![.., ..k]).to_owned(),
        }
    }
    /// Residual norms `(‖G v_i − s_i u_i‖, ‖Gᵀ u_i − s_i v_i‖)` of every triplet.
    pub fn residuals<O: LinearOperator + ?Sized>(&self, op: &O) -> Result<Vec<(f64, f64)>> {
        let gv = op.apply(self.v.view())?;
        let gtu = op.apply_transpose(self.u.view())?;
        Ok((0..self.rank())
            .map(|i| {
                let l = (&gv.column(i) - &(&self.u.column(i) * self.s[i]))
                    .mapv(|x| x * x)
                    .sum()
                    .sqrt();
                let r = (&gtu.column(i) - &(&self.v.column(i) * self.s[i]))
                    .mapv(|x| x * x)
                    .sum()
                    .sqrt();
                (l, r)
            })
            .collect())
    }
    /// Makes the sign of every pair deterministic: the largest-magnitude entry of each `u_i`
    /// is positive (flipping `v_i` with it).
    pub fn normalize_signs(&mut self) {
        for i in 0..self.rank() {
            let col = self.u.column(i);
            let (mut best, mut val) = (0.0f64, 0.0);
            for &x in col.iter() {
                if x.abs() > best {
                    best = x.abs();
                    val = x;
                }
            }
            if val < 0.0 {
                self.u.column_mut(i).mapv_inplace(|x| -x);
                self.v.column_mut(i).mapv_inplace(|x| -x);
            }
        }
    }
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
    let mut r = SvdResult {
        u: svd.u,
        s: svd.s,
        v: svd.v,
    }
    .truncate(rank);
    r.normalize_signs();
    Ok(r)
}

/// The top-`rank` SVD of an operator by materialising it (`O(n m)` memory: small operators only).
pub fn dense_svd_operator<O: LinearOperator + ?Sized>(op: &O, rank: usize) -> Result<SvdResult> {
    check_rank(op.nrows(), op.ncols(), rank)?;
    let a = materialize(op);
    if a.iter().any(|x| !x.is_finite()) {
        return Err(SolverError::NonFinite);
    }
    dense_svd(a.view(), rank)
}

/// The same SVD computed by LAPACK (`gesdd` through ndarray-linalg) to cross-check faer.
#[cfg(feature = "lapack")]
pub fn lapack_svd(a: ArrayView2<'_, f64>, rank: usize) -> Result<SvdResult> {
    check_rank(a.nrows(), a.ncols(), rank)?;
    let svd = dense::lapack::thin_svd(a)?;
    let mut r = SvdResult {
        u: svd.u,
        s: svd.s,
        v: svd.v,
    }
    .truncate(rank);
    r.normalize_signs();
    Ok(r)
}
