//! The asymmetric Nyström method (section 4 of the paper, eqs. 10–11).
use crate::cross::{cross_approximation, cross_svd, Pivoting};
use crate::error::{require_rank, NystromError, Result};
use crate::extension::{col_coefficients, landmark_scales, row_coefficients, scale_block};
use crate::sampling::{sketched_leverage, uniform_indices, weighted_indices, Sampling};
use ksvd_kernels::{KernelMatrix, Samples};
use ksvd_linalg::{CsrMatrix, MatrixBlocks, Precision};
use ksvd_solvers::{auto_svd, column_signs, dense_svd, randomized_svd, AutoParams, RsvdParams, SolverError, SvdResult};
use ndarray::{Array1, Array2, ArrayView2, Axis};

/// Squared row and column norms of a matrix, for [`Sampling::SquaredNorm`].
///
/// Fallible because a kernel matrix evaluates its blocks to get them (a user's kernel
/// function may fail).
pub trait LandmarkWeights {
    /// `‖G_{i,:}‖²` for every row.
    fn row_weights(&self) -> Result<Vec<f64>>;
    /// `‖G_{:,j}‖²` for every column.
    fn col_weights(&self) -> Result<Vec<f64>>;
}

impl LandmarkWeights for KernelMatrix {
    fn row_weights(&self) -> Result<Vec<f64>> {
        Ok(self.row_sq_norms()?)
    }
    fn col_weights(&self) -> Result<Vec<f64>> {
        Ok(self.col_sq_norms()?)
    }
}

impl LandmarkWeights for Array2<f64> {
    fn row_weights(&self) -> Result<Vec<f64>> {
        Ok(self.outer_iter().map(|r| r.dot(&r)).collect())
    }
    fn col_weights(&self) -> Result<Vec<f64>> {
        Ok(self.axis_iter(Axis(1)).map(|c| c.dot(&c)).collect())
    }
}

impl LandmarkWeights for CsrMatrix {
    fn row_weights(&self) -> Result<Vec<f64>> {
        Ok(self.row_sq_norms())
    }
    fn col_weights(&self) -> Result<Vec<f64>> {
        let mut w = vec![0.0; self.ncols()];
        for (&j, &v) in self.indices().iter().zip(self.data()) {
            w[j] += v * v;
        }
        Ok(w)
    }
}

/// How the SVD of the sampled `n × m` block is computed.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum InnerSolver {
    /// Dense SVD (faer).
    Dense,
    /// The top-`r` SVD to working accuracy by the cheaper exact method, as
    /// [`ksvd_solvers::auto_svd`]'s cost model picks it: the dense SVD, or block Lanczos
    /// certified to `1e-12 · s₁` (`ε_f32 · s₁` for a block evaluated in `f32`) when `r` is small against the block (20 triplets of a
    /// 1000 × 1000 block in a fraction of the dense SVD's time); the dense SVD when that run does
    /// not certify.
    Exact,
    /// Randomized SVD at rank `r` (the paper's choice for the sub-problem).
    Rsvd {
        /// Oversampling.
        oversampling: usize,
        /// Power iterations.
        power_iters: usize,
    },
}

impl Default for InnerSolver {
    fn default() -> Self {
        InnerSolver::Rsvd {
            oversampling: 10,
            power_iters: 2,
        }
    }
}

/// Residual bound (relative to `s₁`) of [`InnerSolver::Exact`]'s Krylov path for a block of
/// `f64` entries.
const EXACT_INNER_TOL: f64 = 1e-12;

/// [`InnerSolver::Exact`]'s residual bound for a block evaluated in `precision`: `ε_f32` for
/// `f32` entries, which carry relative errors of `ε_f32 / 2` each (a smaller residual resolves
/// only their rounding; the race's 1000 × 1000 block: 0.04 s of a 0.5 s float32 fit).
fn exact_inner_tol(precision: Precision) -> f64 {
    match precision {
        Precision::F64 => EXACT_INNER_TOL,
        Precision::F32 => f64::from(f32::EPSILON),
    }
}

/// [`InnerSolver::Exact`]: `auto_svd` at `tol`, the dense SVD when it does not certify.
fn exact_svd(block: ArrayView2<'_, f64>, rank: usize, seed: u64, tol: f64) -> Result<SvdResult> {
    let params = AutoParams {
        tol,
        seed,
        ..AutoParams::default()
    };
    match auto_svd(&block, rank, &params, &mut |_| {}) {
        Ok((r, _)) => Ok(r),
        Err(SolverError::NotConverged { .. }) => Ok(dense_svd(block, rank)?),
        Err(e) => Err(e.into()),
    }
}

/// Parameters of [`asymmetric_nystrom`].
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct NystromParams {
    /// Target rank `r`.
    pub rank: usize,
    /// Number of sampled rows `n` (of `N`).
    pub rows: usize,
    /// Number of sampled columns `m` (of `M`).
    pub cols: usize,
    /// Sampling scheme.
    pub sampling: Sampling,
    /// Solver of the sampled block.
    pub inner: InnerSolver,
    /// Seed of the sampling and of the inner solver.
    pub seed: u64,
    /// For a square `G` with `rows == cols`: use the same indices for rows and columns
    /// (`J = I`), as the symmetric method does.
    pub shared_samples: bool,
}

impl NystromParams {
    /// Rank `r` with `n = m = landmarks` sampled rows and columns, uniform sampling.
    pub fn new(rank: usize, landmarks: usize) -> Self {
        NystromParams {
            rank,
            rows: landmarks,
            cols: landmarks,
            sampling: Sampling::Uniform,
            inner: InnerSolver::default(),
            seed: 0,
            shared_samples: false,
        }
    }
    /// Sets the seed.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }
    /// Sets the sampling scheme.
    pub fn sampling(mut self, sampling: Sampling) -> Self {
        self.sampling = sampling;
        self
    }
    /// Uses the same row and column indices (square `G`, `rows == cols`).
    pub fn shared_samples(mut self, shared: bool) -> Self {
        self.shared_samples = shared;
        self
    }
    /// Sets the inner solver.
    pub fn inner(mut self, inner: InnerSolver) -> Self {
        self.inner = inner;
        self
    }
}

/// The asymmetric Nyström approximation of the top-`r` SVD of `G ∈ R^{N×M}`.
#[derive(Debug, Clone)]
pub struct AsymmetricNystrom {
    /// `Ũ` (`N × r`, unit columns), `λ̃` (approximate singular values of `G`), `Ṽ` (`M × r`).
    pub svd: SvdResult,
    /// Sampled row indices `I` (sorted).
    pub rows: Vec<usize>,
    /// Sampled column indices `J` (sorted).
    pub cols: Vec<usize>,
    /// The small SVD the result comes from: of the (importance-scaled) sampled block
    /// `D_r G[I, J] D_c` for uniform and squared-norm sampling; of the `k × k` core `T_A T_Bᵀ`
    /// of the cross approximation `A Bᵀ = Q_A T_A T_Bᵀ Q_Bᵀ` for the adaptive schemes (same
    /// singular values as the result).
    pub sub: SvdResult,
    /// Wall-clock seconds spent choosing the landmarks (drawing indices; the norm pass of
    /// squared-norm sampling; the whole cross approximation of the adaptive schemes), the rest of
    /// the fit being the solve and the extension. A diagnostic for cost ablations.
    pub selection_seconds: f64,
    /// `m × r`, rows following `cols`: `Ũ = G[:, J] row_coef`.
    row_coef: Array2<f64>,
    /// `n × r`, rows following `rows`: `Ṽ = G[I, :]ᵀ col_coef`.
    col_coef: Array2<f64>,
}

fn check_sizes(name: &'static str, k: usize, total: usize, rank: usize) -> Result<()> {
    if k < rank || k > total {
        return Err(NystromError::InvalidParameter {
            name,
            value: k as f64,
            reason: format!("must lie in rank..=total = {rank}..={total}"),
        });
    }
    Ok(())
}

/// The asymmetric Nyström method: sample `n` rows `I` and `m` columns `J` of `G`, take the
/// rank-`r` SVD `G_{n,m} = U S Vᵀ` of the sampled block, and extend (eq. 11)
///
/// `ũ_s ∝ G_{N,m} v_s / λ_s`, `ṽ_s ∝ G_{n,M}ᵀ u_s / λ_s`, `λ̃_s = sqrt(NM/(nm)) λ_s`,
///
/// with `ũ_s`, `ṽ_s` scaled to unit norm ("the scaling through normalization" of the paper's
/// appendix). Only `G_{N,m}` and `G_{n,M}` are evaluated, in chunks of bounded size, so memory is
/// `O((N + M) r + chunk)` beyond the sampled block. With `n = N` and `m = M` the result is the
/// exact truncated SVD.
pub fn asymmetric_nystrom<G>(g: &G, params: &NystromParams) -> Result<AsymmetricNystrom>
where
    G: MatrixBlocks + LandmarkWeights + ?Sized,
{
    let (nn, mm) = (g.nrows(), g.ncols());
    let r = params.rank;
    ksvd_solvers::check_rank(nn, mm, r)?;
    check_sizes("rows", params.rows, nn, r)?;
    check_sizes("cols", params.cols, mm, r)?;
    if params.sampling.is_cross() {
        return cross_nystrom(g, params);
    }
    let started = std::time::Instant::now();
    let (rows, cols, rw, cw) = match params.sampling {
        Sampling::Uniform => (
            uniform_indices(nn, params.rows, params.seed),
            uniform_indices(mm, params.cols, params.seed.wrapping_add(0x9e37_79b9)),
            None,
            None,
        ),
        Sampling::SquaredNorm => {
            let (rw, cw) = (g.row_weights()?, g.col_weights()?);
            (
                weighted_indices(&rw, params.rows, params.seed),
                weighted_indices(&cw, params.cols, params.seed.wrapping_add(0x9e37_79b9)),
                Some(rw),
                Some(cw),
            )
        }
        Sampling::Leverage => {
            let (rl, cl) = sketched_leverage(g, r, params.seed ^ 0x5bd1_e995)?;
            // Half leverage, half uniform: bounded importance weights.
            let mix = |l: Vec<f64>| {
                let (total, n) = (l.iter().sum::<f64>().max(f64::MIN_POSITIVE), l.len() as f64);
                l.into_iter().map(|x| 0.5 * x / total + 0.5 / n).collect::<Vec<f64>>()
            };
            let (rw, cw) = (mix(rl), mix(cl));
            (
                weighted_indices(&rw, params.rows, params.seed),
                weighted_indices(&cw, params.cols, params.seed.wrapping_add(0x9e37_79b9)),
                Some(rw),
                Some(cw),
            )
        }
        Sampling::AdaptiveCross | Sampling::GreedyCross => unreachable!("handled by cross_nystrom"),
    };
    let (cols, cw) = if params.shared_samples && nn == mm && params.rows == params.cols {
        (rows.clone(), rw.clone())
    } else {
        (cols, cw)
    };
    let selection_seconds = started.elapsed().as_secs_f64();
    let row_scale = landmark_scales(nn, &rows, rw.as_deref())?;
    let col_scale = landmark_scales(mm, &cols, cw.as_deref())?;
    let mut block = g.block(&rows, &cols)?;
    scale_block(&mut block, row_scale.view(), col_scale.view())?;
    let sub = match params.inner {
        InnerSolver::Dense => dense_svd(block.view(), r)?,
        InnerSolver::Exact => exact_svd(block.view(), r, params.seed, exact_inner_tol(g.block_precision()))?,
        InnerSolver::Rsvd {
            oversampling,
            power_iters,
        } => randomized_svd(
            &block,
            r,
            &RsvdParams {
                oversampling,
                power_iters,
                seed: params.seed,
            },
        )?,
    };
    require_rank(
        &sub.s.to_vec(),
        params.rows.max(params.cols),
        params.rows,
        params.cols,
        r,
    )?;
    // Ũ = G[:, J] D_c V S⁻¹ ;  Ṽ = G[I, :]ᵀ D_r U S⁻¹.
    let right = row_coefficients(&sub, col_scale.view())?;
    let left = col_coefficients(&sub, row_scale.view())?;
    let all_rows: Vec<usize> = (0..nn).collect();
    let all_cols: Vec<usize> = (0..mm).collect();
    let mut u = g.block_mul(&all_rows, &cols, right.view())?;
    let mut v = g.block_t_mul(&rows, &all_cols, left.view())?;
    let u_norm = normalize_columns(&mut u);
    let v_norm = normalize_columns(&mut v);
    Ok(AsymmetricNystrom {
        svd: SvdResult::new(u, sub.s.clone(), v),
        rows,
        cols,
        sub,
        selection_seconds,
        row_coef: &right / &u_norm,
        col_coef: &left / &v_norm,
    }
    .with_column_signs())
}

/// The adaptive schemes: a pivoted cross approximation `Ĝ = C W⁺ R` on `min(rows, cols)`
/// landmark pairs and its exact truncated SVD (see [`Sampling::AdaptiveCross`]).
fn cross_nystrom<G>(g: &G, params: &NystromParams) -> Result<AsymmetricNystrom>
where
    G: MatrixBlocks + ?Sized,
{
    let pivoting = match params.sampling {
        Sampling::GreedyCross => Pivoting::Greedy,
        _ => Pivoting::Random,
    };
    let pivots = params.rows.min(params.cols);
    let started = std::time::Instant::now();
    let cross = cross_approximation(g, pivots, pivoting, params.seed)?;
    let selection_seconds = started.elapsed().as_secs_f64();
    let fit = cross_svd(&cross, params.rank, pivots)?;
    // Landmarks sorted, coefficient rows permuted alike.
    let sorted = |idx: &[usize], coef: &Array2<f64>| {
        let mut order: Vec<usize> = (0..idx.len()).collect();
        order.sort_by_key(|&p| idx[p]);
        let idx_sorted: Vec<usize> = order.iter().map(|&p| idx[p]).collect();
        (idx_sorted, coef.select(Axis(0), &order))
    };
    let (cols, row_coef) = sorted(&cross.cols, &fit.row_coef);
    let (rows, col_coef) = sorted(&cross.rows, &fit.col_coef);
    let core = fit.core;
    Ok(AsymmetricNystrom {
        svd: SvdResult::new(fit.u, fit.s, fit.v),
        rows,
        cols,
        sub: SvdResult::new(core.u, core.s, core.v),
        selection_seconds,
        row_coef,
        col_coef,
    }
    .with_column_signs())
}

/// Divides every column by its norm, returning the norms (zero columns are left as they are).
fn normalize_columns(a: &mut Array2<f64>) -> Array1<f64> {
    let norms = Array1::from_iter(a.axis_iter(Axis(1)).map(|c| c.dot(&c).sqrt()));
    for (mut c, &n) in a.axis_iter_mut(Axis(1)).zip(norms.iter()) {
        if n > 0.0 {
            c /= n;
        }
    }
    norms
}

impl AsymmetricNystrom {
    /// The fit in the workspace's sign convention (`ksvd_solvers::column_signs`): the
    /// largest-magnitude entry of every column `ũ_s` positive, `ṽ_s` and both extension
    /// coefficients flipped alike, so that out-of-sample extensions agree with `Ũ` and `Ṽ`.
    fn with_column_signs(mut self) -> Self {
        let signs = column_signs(self.svd.u.view());
        self.svd.u *= &signs;
        self.svd.v *= &signs;
        self.row_coef *= &signs;
        self.col_coef *= &signs;
        self
    }

    /// The out-of-sample extension (eq. 10) for new row samples `x'`:
    /// `ũ_s(x') ∝ Σ_{j∈J} κ(x', z_j) V_{js} / λ_s`, scaled exactly like the training `Ũ`, so that
    /// evaluating it at the training rows reproduces `Ũ`.
    pub fn extend_rows(&self, g: &KernelMatrix, new_x: &Samples) -> Result<Array2<f64>> {
        let k = g.cross_rows(new_x, &self.cols)?;
        Ok(g.precision().matmul(k.view(), self.row_coef.view())?)
    }

    /// The out-of-sample extension for new column samples `z'`:
    /// `ṽ_s(z') ∝ Σ_{i∈I} κ(x_i, z') U_{is} / λ_s`.
    pub fn extend_cols(&self, g: &KernelMatrix, new_z: &Samples) -> Result<Array2<f64>> {
        let k = g.cross_cols(&self.rows, new_z)?; // |I| x new
        Ok(g.precision().matmul(k.t(), self.col_coef.view())?)
    }
}

impl AsymmetricNystrom {
    /// The coefficients `R` (`m × r`) of the row extension: [`AsymmetricNystrom::extend_rows`]
    /// is `ũ(x') = k(x', Z_J) R`; rows follow the sampled columns `J` in order. For uniform and
    /// squared-norm sampling `R = D_c V S⁻¹` ([`crate::row_coefficients`]) divided column-wise
    /// by the (signed) normalisers of `Ũ`; for the adaptive schemes `R = X_A (Bᵀ Ṽ) S̃⁻¹` with `A = G[:, J] X_A`. Models that
    /// store only the landmarks (for example `ksvd`'s model files) extend with it.
    pub fn row_extension_coefficients(&self) -> Array2<f64> {
        self.row_coef.clone()
    }

    /// The coefficients `L` (`n × r`) of the column extension: `ṽ(z') = k(X_I, z')ᵀ L`; rows
    /// follow the sampled rows `I` in order.
    pub fn col_extension_coefficients(&self) -> Array2<f64> {
        self.col_coef.clone()
    }
}
