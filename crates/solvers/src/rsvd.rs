//! Randomized SVD (Halko, Martinsson & Tropp, SIAM Review 53, 2011, Algorithms 4.4 and 5.1).
//!
//! `Y = G Ω` with a seeded Gaussian `Ω ∈ R^{m×(r+p)}`, `q` power iterations
//! `Y ← G (Gᵀ Q)` with QR re-orthonormalisation after every product, `Q = qr(Y)`,
//! `B = Qᵀ G` (computed as `(Gᵀ Q)ᵀ`), `B = Û S Vᵀ`, `U = Q Û`. Every product is a block
//! product with the operator, so an implicit kernel matrix is evaluated `2q + 2` times, plus
//! once more to compute the residuals the result reports (a fixed number of power iterations
//! does not guarantee any accuracy: see [`crate::block_krylov_svd`] for a stopping rule).
use crate::error::{Result, SolverError};
use crate::svd::{check_rank, SvdResult};
use ksvd_linalg::{dense, random, LinearOperator};
use ndarray::{s, Array1, Array2};

/// Parameters of [`randomized_svd`].
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
// Absent fields (in configs: usually `seed`, which callers replace) take the defaults.
#[cfg_attr(feature = "serde", serde(default))]
pub struct RsvdParams {
    /// Oversampling `p` (extra random directions).
    pub oversampling: usize,
    /// Number of power iterations `q`.
    pub power_iters: usize,
    /// Seed of the Gaussian test matrix.
    pub seed: u64,
}

impl Default for RsvdParams {
    fn default() -> Self {
        RsvdParams {
            oversampling: 10,
            power_iters: 2,
            seed: 0,
        }
    }
}

fn finite(a: Array2<f64>) -> Result<Array2<f64>> {
    if a.iter().any(|v| !v.is_finite()) {
        return Err(SolverError::NonFinite);
    }
    Ok(a)
}

/// The top-`rank` SVD of `op` by randomized range finding.
pub fn randomized_svd<O: LinearOperator + ?Sized>(op: &O, rank: usize, params: &RsvdParams) -> Result<SvdResult> {
    let (n, m) = (op.nrows(), op.ncols());
    check_rank(n, m, rank)?;
    let l = (rank + params.oversampling).min(n.min(m));
    let mut rng = random::rng_from_seed(params.seed);
    let omega = random::gaussian_matrix(&mut rng, m, l);
    let mut q = dense::thin_q(finite(op.apply(omega.view())?)?.view())?;
    for _ in 0..params.power_iters {
        let z = dense::thin_q(finite(op.apply_transpose(q.view())?)?.view())?;
        q = dense::thin_q(finite(op.apply(z.view())?)?.view())?;
    }
    let bt = finite(op.apply_transpose(q.view())?)?; // m x l = (Qᵀ G)ᵀ
    let svd = dense::thin_svd(bt.view())?; // Bᵀ = W S Zᵀ  =>  B = Z S Wᵀ
    let u = dense::matmul(q.view(), svd.v.slice(s![.., ..rank]))?;
    let mut out = SvdResult::new(
        u,
        svd.s.slice(s![..rank]).to_owned(),
        svd.u.slice(s![.., ..rank]).to_owned(),
    );
    out.normalize_signs();
    // Report, do not assume, the accuracy. `Gᵀ U = (Gᵀ Q) Ẑ` is known without touching `G`
    // again; `G V` costs one more product.
    let gtu = dense::matmul(bt.view(), svd.v.slice(s![.., ..rank]))?;
    let signs = Array1::from_iter((0..rank).map(|i| {
        // normalize_signs may have flipped u_i (and v_i): Gᵀ u_i flips with it.
        if out.u.column(i).dot(&q.dot(&svd.v.column(i))) < 0.0 {
            -1.0
        } else {
            1.0
        }
    }));
    let gtu = &gtu * &signs;
    let gv = finite(op.apply(out.v.view())?)?;
    out.residuals = Some(crate::svd::residuals_from_products(&out, &gv, &gtu));
    Ok(out)
}
