//! The embeddings fed to the linear head: KSVD with a fixed or learnable compatibility matrix,
//! KPCA (exact or Nyström, with an optional learnable `C`), and the two ablation embeddings.
//!
//! # Shapes
//!
//! `X ∈ R^{N×M}` is the training part (rows `x_i ∈ R^M`, `N > M` for every UCI set here). The
//! compatibility matrix maps the **columns**: `C ∈ R^{N×M}` and `Z := XᵀC ∈ R^{M×M}`, whose rows
//! `z_j = Cᵀ X[:, j] ∈ R^M` live in the space of the `x_i` (Algorithm 1 with `N > M`: `C_z`).
//! So `G = [k(x_i, z_j)] ∈ R^{N×M}`: `N × 9` for protein, never `N × N`.
//!
//! With the SVD `G = U Σ Vᵀ` and `V_r = V[:, :r]` (top-`r` **right** singular vectors,
//! `B_ψ` of the paper), the sample embeddings are the projections of section 3,
//! `⟨φ(x), w^ψ_l⟩ = Σ_j k(x, z_j) V_jl`: `G V_r = U_r Σ_r` for the training rows and
//! `k(x, Z) V_r` for a new `x`. This is how the appendix's "right singular vectors" and the
//! `N × r` features `G V[:, :4]` fit together: `V` holds the coefficients, the embedding of
//! sample `i` is row `i` of `G V`.
//!
//! KPCA uses the symmetric kernel on the samples, centred: `K̃ = H K H`, `K = [k(x_i, x_j)]`,
//! top-`r` eigenpairs `K̃ A = A Λ`; embeddings `K̃ A = A Λ` (training, the analogue of `G V`)
//! and `(k(x, X) − k̄) A` for a new `x`, with `k̄_j = mean_i K_ij` (the other centring terms
//! vanish because `Aᵀ 1 = 0`). For large `N` (protein) a Nyström approximation with `m`
//! landmarks replaces `K` (see [`KpcaPlan`]).
use ksvd::{Ksvd, LanczosParams, MemoryBudget, Scaling, Solver};
use ksvd_kernels::compat::{compat_matrix, Compat};
use ksvd_kernels::{Kernel, Samples};
use ksvd_linalg::{dense, random::rng_from_seed, random::sample_indices};
use linfa::ParamGuard;
use ndarray::{s, Array1, Array2, ArrayView2, Axis};

use crate::error::{GeneralError, Result};
use crate::kernel::DiffKernel;

/// The compatibility matrix `C ∈ R^{N×M}` of alternative a0, a1 or a2 for the training matrix
/// `x` (`N × M`, `N > M`), from [`ksvd_kernels::compat`]: a0 `C = X (XᵀX)^†` (so `Z = XᵀC` is the
/// projector on the row space of `X`, `I_M` at full rank), a1 the top-`M` left singular vectors
/// of `X` (`Z = V_X Σ_X`), a2 a seeded `randn(N, M)` (the seed of [`Compat::Random`]). The other
/// alternatives have no closed-form `C` (a typed error): a3 is [`LearnableKsvd`].
pub fn compatibility_matrix(x: ArrayView2<'_, f64>, alternative: Compat) -> Result<Array2<f64>> {
    let (n, m) = x.dim();
    if n <= m {
        return Err(GeneralError::NotTall { rows: n, cols: m });
    }
    Ok(compat_matrix(x, alternative)?)
}

/// How singular vectors become embeddings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EmbeddingScale {
    /// `G V_r = U_r Σ_r` for training rows, `k(x, Z) V_r` for new ones (Table 3, appendix C.3).
    Projection,
    /// `U_r` (`B_φ`) for training rows, `k(x, Z) V_r Σ_r⁻¹` for new ones (the ablation table).
    LeftSingular,
}

/// `G = 0` (every kernel value underflowed, e.g. the RBF with the paper's `γ² = 1e6` on raw
/// protein rows, squared distances ~1e12) gives all-zero features: an error, not a row.
fn check_not_zero(s: &Array1<f64>, kernel: Kernel) -> Result<()> {
    if s.first().is_some_and(|&s1| s1 > 0.0) {
        return Ok(());
    }
    Err(GeneralError::DegenerateKernel {
        detail: format!("G = 0 for {kernel}: every entry underflowed"),
    })
}

/// Embeddings computed once (no learnable parameter): training and test features.
#[derive(Debug, Clone)]
pub struct FixedEmbedding {
    /// Training features, `N × r`.
    pub train: Array2<f64>,
    /// Test features, `N_test × r`.
    pub test: Array2<f64>,
    /// The top-`r` singular values (or eigenvalues for KPCA) behind the embedding.
    pub spectrum: Array1<f64>,
}

fn check_rank(rank: usize, max: usize) -> Result<()> {
    if rank == 0 || rank > max {
        return Err(GeneralError::invalid(
            "components",
            rank,
            format!("an embedding dimension in 1..={max}"),
        ));
    }
    Ok(())
}

fn divide_columns(a: &mut Array2<f64>, s: &Array1<f64>) -> Result<()> {
    let tiny = s.iter().cloned().fold(0.0, f64::max) * f64::EPSILON * a.nrows().max(1) as f64;
    if let Some(k) = s.iter().position(|&v| v <= tiny) {
        return Err(GeneralError::NonFinite {
            what: "embedding scale",
            detail: format!("singular value {k} is {} (numerically zero)", s[k]),
        });
    }
    for (mut col, &v) in a.axis_iter_mut(Axis(1)).zip(s) {
        col /= v;
    }
    Ok(())
}

/// KSVD embeddings with a fixed compatibility matrix `c` (`N × M`): `G = [k(x_i, z_j)]`,
/// `Z = XᵀC`, fitted by [`ksvd::Ksvd`] with the exact solver; test rows are
/// [`ksvd::Ksvd::project_rows`] with [`Scaling::Full`], `k(x, Z) V` (SNE normalises each test row
/// over the training Z set).
pub fn ksvd_fixed(
    x_train: ArrayView2<'_, f64>,
    x_test: ArrayView2<'_, f64>,
    c: ArrayView2<'_, f64>,
    kernel: Kernel,
    rank: usize,
    scale: EmbeddingScale,
) -> Result<FixedEmbedding> {
    kernel.validate()?;
    let (n, m) = x_train.dim();
    if c.dim() != (n, m) {
        return Err(GeneralError::ShapeMismatch {
            what: "compatibility matrix",
            expected: format!("({n}, {m})"),
            got: format!("{:?}", c.dim()),
        });
    }
    check_rank(rank, m.min(n))?;
    let z = dense::matmul(x_train.t(), c)?;
    // G is N x M (M <= 34 here): the exact solver materialises N M entries, never N^2.
    let model = Ksvd::params()
        .kernel(kernel)
        .rank(rank)
        .solver(Solver::Exact)
        .memory_budget(MemoryBudget::fixed())
        .check()?
        .fit_samples(Samples::dense(x_train.to_owned())?, Samples::dense(z)?)?;
    let svd = model.svd();
    check_not_zero(&svd.s, kernel)?;
    let mut test = model.project_rows(&Samples::dense(x_test.to_owned())?, Scaling::Full)?;
    let train = match scale {
        EmbeddingScale::Projection => &svd.u * &svd.s,
        EmbeddingScale::LeftSingular => {
            divide_columns(&mut test, &svd.s)?;
            svd.u.clone()
        }
    };
    Ok(FixedEmbedding {
        train,
        test,
        spectrum: svd.s.clone(),
    })
}

/// The monomials of degree `0..=degree` of `x ∈ R^M` in scikit-learn's `PolynomialFeatures`
/// order: `1, x_1, …, x_M, x_1², x_1 x_2, …, x_M²` (each as a sorted multiset of indices).
fn monomials(m: usize, degree: u32) -> Vec<Vec<usize>> {
    let mut out: Vec<Vec<usize>> = vec![vec![]];
    let mut last: Vec<Vec<usize>> = vec![vec![]];
    for _ in 0..degree {
        let mut next = Vec::new();
        for mono in &last {
            let start = mono.last().copied().unwrap_or(0);
            for k in start..m {
                let mut t = mono.clone();
                t.push(k);
                next.push(t);
            }
        }
        out.extend(next.iter().cloned());
        last = next;
    }
    out
}

/// Polynomial features `φ(x)` of every row: all monomials of degree `0..=degree` (with the
/// constant 1), `C(M + degree, degree)` columns, scikit-learn's order.
pub fn polynomial_features(x: ArrayView2<'_, f64>, degree: u32) -> Array2<f64> {
    let monos = monomials(x.ncols(), degree);
    let mut out = Array2::zeros((x.nrows(), monos.len()));
    for (mut o, xi) in out.outer_iter_mut().zip(x.outer_iter()) {
        for (v, mono) in o.iter_mut().zip(&monos) {
            *v = mono.iter().map(|&k| xi[k]).product();
        }
    }
    out
}

/// The ablation's "Nonlinear+SVD": `φ(A) = U_A Σ_A V_Aᵀ` for degree-`degree` polynomial
/// features of the training rows; embeddings `U_A[:, :r]` (training) and `φ(x) V_A Σ_A⁻¹`
/// (test, the same out-of-sample projection as KSVD's [`EmbeddingScale::LeftSingular`]).
pub fn nonlinear_svd(
    x_train: ArrayView2<'_, f64>,
    x_test: ArrayView2<'_, f64>,
    degree: u32,
    rank: usize,
) -> Result<FixedEmbedding> {
    if degree == 0 {
        return Err(GeneralError::invalid("degree", degree, "a degree >= 1"));
    }
    let phi = polynomial_features(x_train, degree);
    check_rank(rank, phi.nrows().min(phi.ncols()))?;
    let svd = ksvd_solvers::dense_svd(phi.view(), rank)?;
    let mut test = dense::matmul(polynomial_features(x_test, degree).view(), svd.v.view())?;
    divide_columns(&mut test, &svd.s)?;
    Ok(FixedEmbedding {
        train: svd.u,
        test,
        spectrum: svd.s,
    })
}

/// Flips columns of `new` whose inner product with the matching column of `old` is negative, so
/// a head trained on the previous vectors keeps its meaning after a re-computation.
fn align_signs(new: &mut Array2<f64>, old: &Array2<f64>) {
    if new.dim() != old.dim() {
        return;
    }
    for (mut n, o) in new.axis_iter_mut(Axis(1)).zip(old.axis_iter(Axis(1))) {
        if n.dot(&o) < 0.0 {
            n.mapv_inplace(|v| -v);
        }
    }
}

/// The top-`rank` singular values `σ`, right singular vectors `V_r` and projections `G V_r` of a
/// tall `g` (`N × M`, `N ≥ M`) through a Householder QR: `G = Q R` and `R = U_R Σ V_Rᵀ` give
/// `G = (Q U_R) Σ V_Rᵀ`, so only the `M × M` factor `R` is decomposed and neither `Q` nor `U`
/// is formed: `O(N M²)` (backward stable, unlike the Gram matrix `GᵀG`, which would square the
/// condition number). Signs follow `ksvd_solvers`' convention for `U = G V Σ⁻¹`: the entry of
/// largest magnitude of every column of `G V_r` is positive.
pub(crate) fn tall_svd_right(g: ArrayView2<'_, f64>, rank: usize) -> Result<(Array1<f64>, Array2<f64>, Array2<f64>)> {
    let (n, m) = g.dim();
    check_rank(rank, n.min(m))?;
    if n < m {
        return Err(GeneralError::ShapeMismatch {
            what: "tall SVD input",
            expected: format!("at least {m} rows"),
            got: format!("{n} rows"),
        });
    }
    if let Some(((i, j), v)) = g.indexed_iter().find(|(_, v)| !v.is_finite()) {
        return Err(GeneralError::NonFinite {
            what: "kernel block",
            detail: format!("G[{i}, {j}] = {v}"),
        });
    }
    let r = dense::to_ndarray(dense::as_faer(g).qr().thin_R());
    let svd = dense::thin_svd(r.view())?;
    let s = svd.s.slice(s![..rank]).to_owned();
    let mut v = svd.v.slice(s![.., ..rank]).to_owned();
    let mut f = dense::matmul(g, v.view())?;
    for (mut fc, mut vc) in f.axis_iter_mut(Axis(1)).zip(v.axis_iter_mut(Axis(1))) {
        let lead = fc.iter().fold(0.0f64, |b, &x| if x.abs() > b.abs() { x } else { b });
        if lead < 0.0 {
            fc.mapv_inplace(|x| -x);
            vc.mapv_inplace(|x| -x);
        }
    }
    Ok((s, v, f))
}

/// Forward quantities of one mini-batch, kept for the backward pass.
#[derive(Debug, Clone)]
pub struct BatchCache {
    /// Training rows of the batch.
    pub rows: Vec<usize>,
    /// The batch's features (`B × r`).
    pub features: Array2<f64>,
    /// Kernel-row inputs of the batch (mapped when `C` acts on them).
    x_in: Array2<f64>,
    /// Kernel-column inputs (`Z`, or the mapped KPCA basis).
    z_in: Array2<f64>,
    /// The kernel block `k(x_in, z_in)`.
    g: Array2<f64>,
}

/// An embedding with a learnable compatibility matrix, trained through the kernel with the
/// singular/eigen-vectors detached (the appendix's alternating scheme).
pub trait LearnableEmbedding {
    /// Embedding dimension `r`.
    fn dim(&self) -> usize;
    /// Number of training rows `N`.
    fn n_train(&self) -> usize;
    /// Re-computes the detached quantities (`V`, or KPCA's `A` and `k̄`) from the current `C` and
    /// returns the features of every training row (`N × r`).
    fn refresh(&mut self) -> Result<Array2<f64>>;
    /// Features of the training rows `rows` under the current `C` and detached quantities.
    fn forward(&self, rows: &[usize]) -> Result<BatchCache>;
    /// Back-propagates `∂L/∂F` (`B × r`) of a batch to `C` and takes an SGD step of size `lr`.
    /// Returns the Frobenius norm of `∂L/∂C`.
    fn sgd_step(&mut self, cache: &BatchCache, d_features: ArrayView2<'_, f64>, lr: f64) -> Result<f64>;
    /// Features of new samples (`n × r`), with the current `C` and detached quantities.
    fn transform(&self, x: ArrayView2<'_, f64>) -> Result<Array2<f64>>;
    /// The current top-`r` spectrum (singular values or eigenvalues).
    fn spectrum(&self) -> Array1<f64>;
    /// The current compatibility matrix.
    fn c(&self) -> &Array2<f64>;
    /// Replaces the compatibility matrix (same shape), keeping the detached quantities.
    fn set_c(&mut self, c: Array2<f64>) -> Result<()>;
}

fn check_same_shape(what: &'static str, new: &Array2<f64>, old: &Array2<f64>) -> Result<()> {
    if new.dim() != old.dim() {
        return Err(GeneralError::ShapeMismatch {
            what,
            expected: format!("{:?}", old.dim()),
            got: format!("{:?}", new.dim()),
        });
    }
    Ok(())
}

/// KSVD with a learnable compatibility matrix (a3): parameters `C ∈ R^{N×M}`,
/// `Z = XᵀC`, `G_B = k(X_B, Z)`, features `F = G_B V` with `V` (`M × r`) detached.
///
/// Backward: `Ḡ = F̄ Vᵀ`, `Z̄` from [`DiffKernel::backward`], and since
/// `Z_jk = Σ_n X_nj C_nk`, `C̄ = X Z̄` (`N × M`).
#[derive(Debug, Clone)]
pub struct LearnableKsvd {
    kernel: DiffKernel,
    x: Array2<f64>,
    c: Array2<f64>,
    z: Array2<f64>,
    v: Array2<f64>,
    s: Array1<f64>,
    rank: usize,
}

impl LearnableKsvd {
    /// Starts from the compatibility matrix `c0` (`N × M`) with a differentiable `kernel`
    /// ([`DiffKernel::new`]: linear, polynomial, RBF or SNE); call
    /// [`LearnableEmbedding::refresh`] before the first forward pass.
    pub fn new(x_train: Array2<f64>, c0: Array2<f64>, kernel: Kernel, rank: usize) -> Result<Self> {
        let kernel = DiffKernel::new(kernel)?;
        let (n, m) = x_train.dim();
        if n <= m {
            return Err(GeneralError::NotTall { rows: n, cols: m });
        }
        if c0.dim() != (n, m) {
            return Err(GeneralError::ShapeMismatch {
                what: "compatibility matrix",
                expected: format!("({n}, {m})"),
                got: format!("{:?}", c0.dim()),
            });
        }
        check_rank(rank, m)?;
        let z = dense::matmul(x_train.t(), c0.view())?;
        Ok(LearnableKsvd {
            kernel,
            x: x_train,
            c: c0,
            z,
            v: Array2::zeros((m, rank)),
            s: Array1::zeros(rank),
            rank,
        })
    }

    /// `Z = XᵀC` (`M × M`, rows are the column samples).
    pub fn z(&self) -> &Array2<f64> {
        &self.z
    }
    /// The detached right singular vectors `V_r` (`M × r`).
    pub fn v(&self) -> &Array2<f64> {
        &self.v
    }
}

impl LearnableEmbedding for LearnableKsvd {
    fn dim(&self) -> usize {
        self.rank
    }
    fn n_train(&self) -> usize {
        self.x.nrows()
    }
    fn refresh(&mut self) -> Result<Array2<f64>> {
        let g = self.kernel.block(self.x.view(), self.z.view())?; // N x M
        let (s, mut v, mut f) = tall_svd_right(g.view(), self.rank)?;
        check_not_zero(&s, self.kernel.kernel())?;
        if self.v.iter().any(|&x| x != 0.0) {
            // Keep the head's meaning: flip towards the previous V (the first refresh keeps the
            // U-sign convention of `tall_svd_right`).
            for ((mut vc, mut fc), old) in v
                .axis_iter_mut(Axis(1))
                .zip(f.axis_iter_mut(Axis(1)))
                .zip(self.v.axis_iter(Axis(1)))
            {
                if vc.dot(&old) < 0.0 {
                    vc.mapv_inplace(|x| -x);
                    fc.mapv_inplace(|x| -x);
                }
            }
        }
        self.v = v;
        self.s = s;
        Ok(f)
    }
    fn forward(&self, rows: &[usize]) -> Result<BatchCache> {
        let x_in = self.x.select(Axis(0), rows);
        let g = self.kernel.block(x_in.view(), self.z.view())?;
        let features = dense::matmul(g.view(), self.v.view())?;
        Ok(BatchCache {
            rows: rows.to_vec(),
            features,
            x_in,
            z_in: self.z.clone(),
            g,
        })
    }
    fn sgd_step(&mut self, cache: &BatchCache, d_features: ArrayView2<'_, f64>, lr: f64) -> Result<f64> {
        let dg = dense::matmul(d_features, self.v.t())?;
        let (_, dz) = self
            .kernel
            .backward_owned(cache.x_in.view(), cache.z_in.view(), cache.g.view(), dg)?;
        let dc = dense::matmul(self.x.view(), dz.view())?;
        let norm = dc.iter().map(|v| v * v).sum::<f64>().sqrt();
        self.c.scaled_add(-lr, &dc);
        self.z = dense::matmul(self.x.t(), self.c.view())?;
        Ok(norm)
    }
    fn transform(&self, x: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        let g = self.kernel.block(x, self.z.view())?;
        Ok(dense::matmul(g.view(), self.v.view())?)
    }
    fn spectrum(&self) -> Array1<f64> {
        self.s.clone()
    }
    fn c(&self) -> &Array2<f64> {
        &self.c
    }
    fn set_c(&mut self, c: Array2<f64>) -> Result<()> {
        check_same_shape("compatibility matrix", &c, &self.c)?;
        self.z = dense::matmul(self.x.t(), c.view())?;
        self.c = c;
        Ok(())
    }
}

/// How KPCA handles the `N × N` kernel on the samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KpcaPlan {
    /// The exact centred kernel `K̃ = H K H` (`N × N`, only for `N ≤ exact_max`).
    Exact,
    /// A Nyström approximation with `landmarks` uniformly sampled training rows: only `m × m`
    /// and `block_rows × m` kernel blocks are ever formed.
    Nystrom {
        /// Number of landmarks `m`.
        landmarks: usize,
    },
}

/// Rows per kernel block in the Nyström passes over the training set.
pub const NYSTROM_BLOCK_ROWS: usize = 4096;

impl KpcaPlan {
    /// `Exact` when `n_train ≤ exact_max`, otherwise `Nystrom` with `min(landmarks, n_train)`.
    pub fn choose(n_train: usize, exact_max: usize, landmarks: usize) -> Self {
        if n_train <= exact_max {
            KpcaPlan::Exact
        } else {
            KpcaPlan::Nystrom {
                landmarks: landmarks.min(n_train),
            }
        }
    }

    /// Entries of the largest kernel matrix the plan forms for `n_train` rows and mini-batches of
    /// `batch` rows: `N²` for `Exact`, `max(m, block_rows, batch) · m` for `Nystrom`.
    pub fn largest_kernel_block(&self, n_train: usize, batch: usize) -> usize {
        match *self {
            KpcaPlan::Exact => n_train * n_train,
            KpcaPlan::Nystrom { landmarks } => landmarks.max(NYSTROM_BLOCK_ROWS.min(n_train)).max(batch) * landmarks,
        }
    }
}

/// KPCA with the RBF kernel `κ(Cᵀx, Cᵀx')` on the samples, `C ∈ R^{M×M}` (identity for plain
/// KPCA, learnable for "KPCA (RBF, learnable C)"), centred, top-`r` components.
///
/// Features are `F(x) = (k(Cᵀx, Cᵀb) − k̄) A` for the basis `b` (all training rows for
/// [`KpcaPlan::Exact`], the landmarks for [`KpcaPlan::Nystrom`]) with `A` and `k̄` detached:
///
/// * Exact: `K̃ = H K H = Q Λ Qᵀ`, `A = Q_r` (top-`r` eigenvectors, [`ksvd::Kpca`] with Lanczos
///   at `1e-10`), `k̄ = K 1 / N`,
///   so training features are `K̃ Q_r = Q_r Λ_r`.
/// * Nyström (landmarks `L`, `m` rows): `K_LL = U_m Λ_m U_mᵀ`, feature map
///   `Φ(x) = k(x, L) T` with `T = U_m Λ_m^{-1/2}` (so `Φ Φᵀ = K_NL K_LL⁻¹ K_LN`), centred
///   `Φ_c = Φ − 1 k̄ᵀT`, `Φ_cᵀΦ_c = P μ Pᵀ`; with `Φ_c = Q S Pᵀ`, `K̃ ≈ Q S² Qᵀ` and the features
///   `K̃ Q_r = Φ_c P_r S_r`, i.e. `A = T P_r diag(√μ_r)`. With `L` = all rows this is the exact plan.
///
/// Backward: `Ḡ = F̄ Aᵀ`, `(X̄', B̄')` from [`DiffKernel::backward`] on the mapped inputs
/// `X' = X_B C`, `B' = B C`, and `C̄ = X_Bᵀ X̄' + Bᵀ B̄'`.
#[derive(Debug, Clone)]
pub struct Kpca {
    kernel: DiffKernel,
    x: Array2<f64>,
    basis_rows: Option<Vec<usize>>,
    c: Array2<f64>,
    a: Array2<f64>,
    kbar: Array1<f64>,
    eig: Array1<f64>,
    rank: usize,
    plan: KpcaPlan,
    seed: u64,
}

impl Kpca {
    /// KPCA with the RBF kernel of bandwidth `gamma` (`exp(−‖x − x'‖²/γ²)`) on `x_train`,
    /// starting from `C = c0` (`M × M`; pass the identity for plain KPCA). `seed` draws the
    /// Nyström landmarks and the Lanczos start.
    pub fn new(
        x_train: Array2<f64>,
        c0: Array2<f64>,
        gamma: f64,
        rank: usize,
        plan: KpcaPlan,
        seed: u64,
    ) -> Result<Self> {
        let kernel = DiffKernel::new(Kernel::Rbf { gamma })?;
        let (n, m) = x_train.dim();
        if c0.nrows() != m || c0.ncols() == 0 {
            return Err(GeneralError::ShapeMismatch {
                what: "KPCA C",
                expected: format!("({m}, d)"),
                got: format!("{:?}", c0.dim()),
            });
        }
        let basis_rows = match plan {
            KpcaPlan::Exact => None,
            KpcaPlan::Nystrom { landmarks } => {
                if landmarks < rank || landmarks > n {
                    return Err(GeneralError::invalid(
                        "kpca_landmarks",
                        landmarks,
                        format!("between the rank {rank} and N = {n}"),
                    ));
                }
                Some(sample_indices(&mut rng_from_seed(seed), n, landmarks))
            }
        };
        let nb = basis_rows.as_ref().map_or(n, Vec::len);
        check_rank(rank, nb.saturating_sub(1).max(1))?;
        Ok(Kpca {
            kernel,
            x: x_train,
            basis_rows,
            c: c0,
            a: Array2::zeros((nb, rank)),
            kbar: Array1::zeros(nb),
            eig: Array1::zeros(rank),
            rank,
            plan,
            seed,
        })
    }

    /// The plan in use.
    pub fn plan(&self) -> KpcaPlan {
        self.plan
    }

    fn basis(&self) -> Array2<f64> {
        match &self.basis_rows {
            None => self.x.clone(),
            Some(rows) => self.x.select(Axis(0), rows),
        }
    }

    fn mapped(&self, x: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        Ok(dense::matmul(x, self.c.view())?)
    }

    fn refresh_exact(&mut self, xc: &Array2<f64>) -> Result<Array2<f64>> {
        // K̃ = H K H is positive semi-definite (centred RBF): ksvd::Kpca's restarted Lanczos
        // costs O(N²) per iteration instead of the O(N³) of a full eigendecomposition.
        let kpca = ksvd::Kpca::params()
            .kernel(self.kernel.kernel())
            .rank(self.rank)
            .solver(Solver::Lanczos(LanczosParams {
                tol: 1e-10,
                ..LanczosParams::default()
            }))
            .center(true)
            .seed(self.seed)
            .memory_budget(MemoryBudget::fixed())
            .check()?
            .fit_samples(Samples::dense(xc.clone())?)?;
        let mut a = kpca.eigenvectors().to_owned();
        align_signs(&mut a, &self.a);
        self.a = a;
        self.eig = kpca.eigenvalues().to_owned();
        // k̄_j = mean_i K_ij (K is symmetric: its row means).
        let n = xc.nrows();
        self.kbar = kpca
            .centering()
            .map_or_else(|| Array1::zeros(n), |c| Array1::from(c.col_means));
        // Training features (K − 1 k̄ᵀ) A through the same kernel block as `forward` and
        // `transform` (the batch and test features of the head).
        let mut kc = self.kernel.block(xc.view(), xc.view())?;
        kc -= &self.kbar;
        Ok(dense::matmul(kc.view(), self.a.view())?)
    }

    fn refresh_nystrom(&mut self, xc: &Array2<f64>, bc: &Array2<f64>) -> Result<Array2<f64>> {
        let (n, m) = (xc.nrows(), bc.nrows());
        let kmm = self.kernel.block(bc.view(), bc.view())?;
        let (w, u) = dense::symmetric_eigen(kmm.view())?;
        let tiny = w[0].abs() * f64::EPSILON * m as f64;
        let q = w.iter().take_while(|&&l| l > tiny).count();
        if q < self.rank {
            return Err(GeneralError::invalid(
                "kpca_landmarks",
                m,
                format!(
                    "landmark kernel has numerical rank {q} < {}; increase γ or the landmarks",
                    self.rank
                ),
            ));
        }
        let mut t = u.slice(s![.., ..q]).to_owned();
        for (mut col, &l) in t.axis_iter_mut(Axis(1)).zip(w.iter()) {
            col /= l.sqrt();
        }
        // One blocked pass: s = Σ_i k(x_i, L), S = Σ_i k(x_i, L)ᵀ k(x_i, L).
        let mut ssum = Array1::<f64>::zeros(m);
        let mut sprod = Array2::<f64>::zeros((m, m));
        for start in (0..n).step_by(NYSTROM_BLOCK_ROWS) {
            let blk = self
                .kernel
                .block(xc.slice(s![start..(start + NYSTROM_BLOCK_ROWS).min(n), ..]), bc.view())?;
            ssum += &blk.sum_axis(Axis(0));
            dense::gemm_into(sprod.view_mut(), blk.t(), blk.view(), 1.0, true)?;
        }
        let kbar = ssum / n as f64;
        // S − N k̄ k̄ᵀ, then Tᵀ (…) T.
        let kk = kbar.view().insert_axis(Axis(1));
        dense::gemm_into(sprod.view_mut(), kk, kk.t(), -(n as f64), true)?;
        let cov = dense::matmul(dense::matmul(t.t(), sprod.view())?.view(), t.view())?;
        let cov = (&cov + &cov.t()) * 0.5;
        let (mu, p) = dense::symmetric_eigen(cov.view())?;
        let mut pr = p.slice(s![.., ..self.rank]).to_owned();
        for (mut col, &l) in pr.axis_iter_mut(Axis(1)).zip(mu.iter()) {
            col *= l.max(0.0).sqrt();
        }
        let mut a = dense::matmul(t.view(), pr.view())?;
        align_signs(&mut a, &self.a);
        self.a = a;
        self.eig = mu.slice(s![..self.rank]).to_owned();
        self.kbar = kbar;
        let mut feats = Array2::zeros((n, self.rank));
        for start in (0..n).step_by(NYSTROM_BLOCK_ROWS) {
            let end = (start + NYSTROM_BLOCK_ROWS).min(n);
            let mut blk = self.kernel.block(xc.slice(s![start..end, ..]), bc.view())?;
            blk -= &self.kbar;
            dense::gemm_into(
                feats.slice_mut(s![start..end, ..]),
                blk.view(),
                self.a.view(),
                1.0,
                false,
            )?;
        }
        Ok(feats)
    }

    /// The eigenvalues `λ_1 ≥ … ≥ λ_r` of the (approximate) centred kernel.
    pub fn eigenvalues(&self) -> &Array1<f64> {
        &self.eig
    }
}

impl LearnableEmbedding for Kpca {
    fn dim(&self) -> usize {
        self.rank
    }
    fn n_train(&self) -> usize {
        self.x.nrows()
    }
    fn refresh(&mut self) -> Result<Array2<f64>> {
        let xc = self.mapped(self.x.view())?;
        match &self.basis_rows {
            None => self.refresh_exact(&xc),
            Some(rows) => {
                let bc = xc.select(Axis(0), rows);
                self.refresh_nystrom(&xc, &bc)
            }
        }
    }
    fn forward(&self, rows: &[usize]) -> Result<BatchCache> {
        let x_in = self.mapped(self.x.select(Axis(0), rows).view())?;
        let z_in = self.mapped(self.basis().view())?;
        let g = self.kernel.block(x_in.view(), z_in.view())?;
        // (G − 1 k̄ᵀ) A = G A − 1 (k̄ᵀ A): no centred copy of the block.
        let mut features = dense::matmul(g.view(), self.a.view())?;
        features -= &self.kbar.dot(&self.a);
        Ok(BatchCache {
            rows: rows.to_vec(),
            features,
            x_in,
            z_in,
            g,
        })
    }
    fn sgd_step(&mut self, cache: &BatchCache, d_features: ArrayView2<'_, f64>, lr: f64) -> Result<f64> {
        let dg = dense::matmul(d_features, self.a.t())?;
        let (dx, db) = self
            .kernel
            .backward_owned(cache.x_in.view(), cache.z_in.view(), cache.g.view(), dg)?;
        let xb = self.x.select(Axis(0), &cache.rows);
        let mut dc = dense::matmul(xb.t(), dx.view())?;
        dense::gemm_into(dc.view_mut(), self.basis().t(), db.view(), 1.0, true)?;
        let norm = dc.iter().map(|v| v * v).sum::<f64>().sqrt();
        self.c.scaled_add(-lr, &dc);
        Ok(norm)
    }
    fn transform(&self, x: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        let bc = self.mapped(self.basis().view())?;
        let mut out = Array2::zeros((x.nrows(), self.rank));
        for start in (0..x.nrows()).step_by(NYSTROM_BLOCK_ROWS) {
            let end = (start + NYSTROM_BLOCK_ROWS).min(x.nrows());
            let xc = self.mapped(x.slice(s![start..end, ..]))?;
            let mut g = self.kernel.block(xc.view(), bc.view())?;
            g -= &self.kbar;
            dense::gemm_into(out.slice_mut(s![start..end, ..]), g.view(), self.a.view(), 1.0, false)?;
        }
        Ok(out)
    }
    fn spectrum(&self) -> Array1<f64> {
        self.eig.clone()
    }
    fn c(&self) -> &Array2<f64> {
        &self.c
    }
    fn set_c(&mut self, c: Array2<f64>) -> Result<()> {
        check_same_shape("KPCA C", &c, &self.c)?;
        self.c = c;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::head::{LinearHead, Loss};
    use ksvd_kernels::KernelMatrix;
    use ksvd_linalg::random::gaussian_matrix;
    use ksvd_linalg::{materialize, LinearOperator};
    use ndarray::{array, Array1};

    fn tol(n: usize) -> f64 {
        f64::EPSILON * (8.0 * n as f64).sqrt() * 64.0
    }

    fn max_abs_diff(a: &Array2<f64>, b: &Array2<f64>) -> f64 {
        assert_eq!(a.dim(), b.dim());
        (a - b).iter().fold(0.0, |m, v| m.max(v.abs()))
    }

    /// Column signs are arbitrary for singular/eigen-vectors: compare after aligning them.
    fn same_up_to_signs(a: &Array2<f64>, b: &Array2<f64>, t: f64) -> bool {
        let mut a = a.clone();
        align_signs(&mut a, b);
        max_abs_diff(&a, b) <= t
    }

    fn data(n: usize, m: usize, seed: u64) -> Array2<f64> {
        gaussian_matrix(&mut rng_from_seed(seed), n, m)
    }

    #[test]
    fn compatibility_shapes_and_identities() {
        let x = data(20, 4, 1);
        for alt in [Compat::PseudoInverse, Compat::Pca, Compat::Random { seed: 3 }] {
            let c = compatibility_matrix(x.view(), alt).unwrap();
            assert_eq!(c.dim(), (20, 4), "{alt:?}: C is N x M");
            let z = dense::matmul(x.t(), c.view()).unwrap();
            assert_eq!(z.dim(), (4, 4), "{alt:?}: Z = XᵀC is M x M");
        }
        // a0: Z = XᵀX (XᵀX)^† = I_M for a full-rank X.
        let c0 = compatibility_matrix(x.view(), Compat::PseudoInverse).unwrap();
        let z0 = dense::matmul(x.t(), c0.view()).unwrap();
        assert!(max_abs_diff(&z0, &Array2::eye(4)) < 1e3 * tol(20));
        // a1: orthonormal columns (left singular vectors), Z = V Σ so ZᵀZ... ZZᵀ = XᵀX.
        let c1 = compatibility_matrix(x.view(), Compat::Pca).unwrap();
        assert!(max_abs_diff(&dense::matmul(c1.t(), c1.view()).unwrap(), &Array2::eye(4)) < tol(20));
        let z1 = dense::matmul(x.t(), c1.view()).unwrap();
        let xtx = dense::matmul(x.t(), x.view()).unwrap();
        assert!(
            max_abs_diff(&dense::matmul(z1.view(), z1.t()).unwrap(), &xtx) < 1e2 * tol(20) * xtx[[0, 0]].abs().max(1.0)
        );
        // a2 is seeded.
        let a = compatibility_matrix(x.view(), Compat::Random { seed: 9 }).unwrap();
        let b = compatibility_matrix(x.view(), Compat::Random { seed: 9 }).unwrap();
        assert_eq!(a, b);
        // Z := XᵀC needs N > M.
        assert!(matches!(
            compatibility_matrix(data(4, 4, 2).view(), Compat::Pca),
            Err(GeneralError::NotTall { rows: 4, cols: 4 })
        ));
    }

    #[test]
    fn fixed_ksvd_features_are_g_v_and_extend_to_new_samples() {
        let x = data(30, 5, 4);
        let c = compatibility_matrix(x.view(), Compat::Pca).unwrap();
        let z = dense::matmul(x.t(), c.view()).unwrap();
        for kernel in [Kernel::Rbf { gamma: 40f64.sqrt() }, Kernel::Sne { gamma: 40f64.sqrt() }] {
            // Test rows = the first 3 training rows: their test features must equal the training ones.
            let x_test = x.slice(s![..3, ..]).to_owned();
            let emb = ksvd_fixed(x.view(), x_test.view(), c.view(), kernel, 3, EmbeddingScale::Projection).unwrap();
            let g = kernel.dense_block(x.view(), z.view()).unwrap();
            let svd = ksvd_solvers::dense_svd(g.view(), 3).unwrap();
            let gv = dense::matmul(g.view(), svd.v.view()).unwrap();
            let scale = emb.spectrum[0];
            assert!(same_up_to_signs(&emb.train, &gv, tol(30) * scale), "{kernel:?}");
            assert!(max_abs_diff(&emb.test, &emb.train.slice(s![..3, ..]).to_owned()) < tol(30) * scale);
            // LeftSingular: U_r with orthonormal columns, and k(x, Z) V Σ⁻¹ reproduces it.
            let emb = ksvd_fixed(
                x.view(),
                x_test.view(),
                c.view(),
                kernel,
                3,
                EmbeddingScale::LeftSingular,
            )
            .unwrap();
            assert!(
                max_abs_diff(
                    &dense::matmul(emb.train.t(), emb.train.view()).unwrap(),
                    &Array2::eye(3)
                ) < tol(30)
            );
            assert!(max_abs_diff(&emb.test, &emb.train.slice(s![..3, ..]).to_owned()) < 1e2 * tol(30));
        }
    }

    #[test]
    fn tall_svd_through_qr_matches_the_dense_svd() {
        // Singular values spread over 8 decades, as in the a3 kernels.
        let q = dense::thin_q(data(300, 6, 50).view()).unwrap();
        let w = dense::thin_q(data(6, 6, 51).view()).unwrap();
        let sv = array![1e2, 3e0, 1e-1, 2e-3, 1e-5, 1e-6];
        let g = dense::matmul((&q * &sv).view(), w.t()).unwrap();
        let reference = ksvd_solvers::dense_svd(g.view(), 4).unwrap();
        let (s, v, f) = tall_svd_right(g.view(), 4).unwrap();
        for k in 0..4 {
            assert!(
                (s[k] - sv[k]).abs() < 64.0 * f64::EPSILON * sv[0],
                "{k}: {} vs {}",
                s[k],
                sv[k]
            );
        }
        // Same signs as ksvd_solvers (U convention), vectors to eps σ₁/gap.
        for k in 0..4 {
            let gap = (sv[k] - sv[k + 1]).min(if k > 0 { sv[k - 1] - sv[k] } else { f64::INFINITY });
            let err = (&v.column(k) - &reference.v.column(k)).mapv(f64::abs).sum();
            assert!(err < 1e3 * f64::EPSILON * sv[0] / gap, "{k}: {err}");
        }
        let gv = dense::matmul(g.view(), v.view()).unwrap();
        assert_eq!(f, gv);
        assert!(tall_svd_right(g.t(), 2).is_err());
    }

    #[test]
    fn underflowing_rbf_is_a_typed_error() {
        // Rows ~1e6 apart with γ² = 1: exp(−1e12) = 0 in every entry of G.
        let x = data(12, 3, 8) * 1e6;
        let c = compatibility_matrix(x.view(), Compat::Random { seed: 1 }).unwrap();
        let k = Kernel::Rbf { gamma: 1.0 };
        assert!(k
            .dense_block(x.view(), dense::matmul(x.t(), c.view()).unwrap().view())
            .unwrap()
            .iter()
            .all(|&g| g == 0.0));
        let e = ksvd_fixed(x.view(), x.view(), c.view(), k, 2, EmbeddingScale::Projection);
        assert!(matches!(e, Err(GeneralError::DegenerateKernel { .. })), "{e:?}");
        let mut l = LearnableKsvd::new(x.clone(), c, k, 2).unwrap();
        assert!(matches!(l.refresh(), Err(GeneralError::DegenerateKernel { .. })));
    }

    #[test]
    fn learnable_ksvd_starts_at_the_fixed_embedding() {
        let x = data(25, 4, 6);
        let x_test = data(5, 4, 7);
        let c = compatibility_matrix(x.view(), Compat::Random { seed: 1 }).unwrap();
        for kernel in [Kernel::Rbf { gamma: 60f64.sqrt() }, Kernel::Sne { gamma: 60f64.sqrt() }] {
            let fixed = ksvd_fixed(x.view(), x_test.view(), c.view(), kernel, 3, EmbeddingScale::Projection).unwrap();
            let mut emb = LearnableKsvd::new(x.clone(), c.clone(), kernel, 3).unwrap();
            let f = emb.refresh().unwrap();
            let scale = fixed.spectrum[0];
            assert!(same_up_to_signs(&f, &fixed.train, tol(25) * scale * 10.0), "{kernel:?}");
            let t = emb.transform(x_test.view()).unwrap();
            assert!(same_up_to_signs(&t, &fixed.test, tol(25) * scale * 10.0), "{kernel:?}");
            assert_eq!(emb.z().dim(), (4, 4));
            assert_eq!(emb.v().dim(), (4, 3));
        }
    }

    /// The full composite `C ↦ L(head(G(C) V))` with `V` (or `A`, `k̄`) detached: the analytic
    /// gradient, read off one SGD step with `lr = 1`, against central differences.
    fn check_composite_gradient(emb: &mut dyn LearnableEmbedding, y: &Array1<f64>, loss: Loss, rows: &[usize]) {
        emb.refresh().unwrap();
        let head = LinearHead::init(emb.dim(), loss.outputs(), &mut rng_from_seed(2));
        let yb = y.select(Axis(0), rows);
        let batch_loss = |e: &dyn LearnableEmbedding| {
            let cache = e.forward(rows).unwrap();
            head.loss_and_grad(cache.features.view(), yb.view(), loss).unwrap()
        };
        let c0 = emb.c().clone();
        let cache = emb.forward(rows).unwrap();
        let g = head.loss_and_grad(cache.features.view(), yb.view(), loss).unwrap();
        emb.sgd_step(&cache, g.features.view(), 1.0).unwrap();
        let grad = &c0 - emb.c();
        let h = 1e-6 * c0.iter().fold(1.0f64, |m, v| m.max(v.abs()));
        let gscale = grad.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        assert!(gscale > 0.0);
        for idx in ndarray::indices(c0.dim()) {
            let mut c = c0.clone();
            c[idx] += h;
            emb.set_c(c.clone()).unwrap();
            let lp = batch_loss(&*emb).loss;
            c[idx] -= 2.0 * h;
            emb.set_c(c).unwrap();
            let lm = batch_loss(&*emb).loss;
            let fd = (lp - lm) / (2.0 * h);
            assert!(
                (fd - grad[idx]).abs() <= 1e-6 * gscale,
                "{idx:?}: fd {fd} vs analytic {}",
                grad[idx]
            );
        }
    }

    #[test]
    fn ksvd_a3_composite_gradients_match_finite_differences() {
        let x = data(14, 3, 10);
        let c = compatibility_matrix(x.view(), Compat::Random { seed: 2 }).unwrap() * 0.3;
        let y_cls = Array1::from_iter((0..14).map(|i| (i % 2) as f64));
        let y_reg = x.column(0).mapv(|v| 2.0 * v + 0.5);
        for kernel in [Kernel::Rbf { gamma: 5f64.sqrt() }, Kernel::Sne { gamma: 5f64.sqrt() }] {
            for (loss, y) in [(Loss::CrossEntropy { classes: 2 }, &y_cls), (Loss::Mse, &y_reg)] {
                let mut emb = LearnableKsvd::new(x.clone(), c.clone(), kernel, 2).unwrap();
                check_composite_gradient(&mut emb, y, loss, &[0, 3, 4, 9, 13]);
            }
        }
    }

    #[test]
    fn kpca_learnable_c_composite_gradients_match_finite_differences() {
        let x = data(16, 3, 12);
        let c0 = Array2::eye(3) + data(3, 3, 13) * 0.2;
        let y_cls = Array1::from_iter((0..16).map(|i| (i % 2) as f64));
        let y_reg = x.column(1).to_owned();
        for plan in [KpcaPlan::Exact, KpcaPlan::Nystrom { landmarks: 8 }] {
            for (loss, y) in [(Loss::CrossEntropy { classes: 2 }, &y_cls), (Loss::Mse, &y_reg)] {
                let mut emb = Kpca::new(x.clone(), c0.clone(), 2.0, 2, plan, 5).unwrap();
                check_composite_gradient(&mut emb, y, loss, &[1, 2, 7, 15]);
            }
        }
    }

    #[test]
    fn exact_kpca_matches_ksvd_kernels_centred_matrix() {
        let x = data(40, 3, 20);
        let x_test = x.slice(s![..4, ..]).to_owned();
        let gamma = 3f64.sqrt();
        let mut kpca = Kpca::new(x.clone(), Array2::eye(3), gamma, 3, KpcaPlan::Exact, 0).unwrap();
        let f = kpca.refresh().unwrap();
        // Reference: the centred implicit kernel matrix of ksvd-kernels, materialised, eigen-decomposed.
        let g = KernelMatrix::new(
            Samples::dense(x.clone()).unwrap(),
            Samples::dense(x.clone()).unwrap(),
            Kernel::Rbf { gamma },
        )
        .unwrap()
        .centered()
        .unwrap();
        let kt = materialize(&g).unwrap();
        let (w, q) = dense::symmetric_eigen(kt.view()).unwrap();
        let reference = &q.slice(s![.., ..3]) * &w.slice(s![..3]);
        assert!(same_up_to_signs(&f, &reference, 1e-8 * w[0]));
        assert!(
            max_abs_diff(
                &(kpca.eigenvalues() - &w.slice(s![..3])).insert_axis(Axis(0)),
                &Array2::zeros((1, 3))
            ) < 1e-10 * w[0]
        );
        // Out-of-sample: training rows as new samples reproduce their features.
        let t = kpca.transform(x_test.view()).unwrap();
        assert!(max_abs_diff(&t, &f.slice(s![..4, ..]).to_owned()) < 1e-10 * w[0]);
        // And K̃ A = A Λ: the features are eigenvector times eigenvalue.
        let a = dense::matmul(kt.view(), q.slice(s![.., ..3])).unwrap();
        assert!(same_up_to_signs(&a, &reference, 1e3 * tol(40) * w[0]));
        assert!(g.nrows() == 40);
    }

    #[test]
    fn nystrom_kpca_with_every_row_as_landmark_is_exact() {
        let x = data(30, 3, 21);
        let mut exact = Kpca::new(x.clone(), Array2::eye(3), 6f64.sqrt(), 3, KpcaPlan::Exact, 0).unwrap();
        let mut nys = Kpca::new(
            x.clone(),
            Array2::eye(3),
            6f64.sqrt(),
            3,
            KpcaPlan::Nystrom { landmarks: 30 },
            0,
        )
        .unwrap();
        let fe = exact.refresh().unwrap();
        let fnys = nys.refresh().unwrap();
        let scale = exact.eigenvalues()[0];
        assert!(same_up_to_signs(&fnys, &fe, 1e-7 * scale));
        let x_new = data(5, 3, 22);
        assert!(same_up_to_signs(
            &nys.transform(x_new.view()).unwrap(),
            &exact.transform(x_new.view()).unwrap(),
            1e-7 * scale
        ));
    }

    #[test]
    fn protein_sized_kpca_takes_the_bounded_memory_path() {
        // The full Table 3 config on protein: 45 730 rows, 80% for training.
        // `kpca_exact_max` and `kpca_landmarks` of experiments/table3.toml's [params].
        let (kpca_exact_max, kpca_landmarks) = (3000, 500);
        let n_train = 45_730 - (0.2f64 * 45_730.0).round() as usize;
        let plan = KpcaPlan::choose(n_train, kpca_exact_max, kpca_landmarks);
        assert_eq!(
            plan,
            KpcaPlan::Nystrom {
                landmarks: kpca_landmarks
            }
        );
        let largest = plan.largest_kernel_block(n_train, 500);
        assert!(largest <= NYSTROM_BLOCK_ROWS * kpca_landmarks, "{largest}");
        assert!(largest * 100 < n_train * n_train);
        // The small datasets stay exact.
        assert_eq!(KpcaPlan::choose(614, kpca_exact_max, kpca_landmarks), KpcaPlan::Exact);
        // The Nyström path runs on more rows than its block size and returns N x r features.
        let x = data(NYSTROM_BLOCK_ROWS + 300, 2, 30);
        let mut k = Kpca::new(
            x.clone(),
            Array2::eye(2),
            2f64.sqrt(),
            2,
            KpcaPlan::choose(x.nrows(), 1000, 50),
            1,
        )
        .unwrap();
        assert_eq!(k.plan(), KpcaPlan::Nystrom { landmarks: 50 });
        let f = k.refresh().unwrap();
        assert_eq!(f.dim(), (x.nrows(), 2));
        // Centred: training features have zero mean.
        let mean = f.mean_axis(Axis(0)).unwrap();
        assert!(mean.iter().all(|m| m.abs() < 1e-10 * k.eigenvalues()[0]));
    }

    #[test]
    fn ksvd_side_never_forms_an_n_by_n_matrix() {
        // G is N x M (here 5000 x 3): the learnable embedding's refresh returns N x r features and
        // keeps only M x M and M x r state.
        let x = data(5000, 3, 31);
        let c = compatibility_matrix(x.view(), Compat::Pca).unwrap();
        let mut emb = LearnableKsvd::new(x, c, Kernel::Rbf { gamma: 10f64.sqrt() }, 2).unwrap();
        assert_eq!(emb.refresh().unwrap().dim(), (5000, 2));
        assert_eq!(emb.z().dim(), (3, 3));
    }

    #[test]
    fn polynomial_features_by_hand() {
        let x = array![[2.0, 3.0]];
        // sklearn PolynomialFeatures(2): [1, a, b, a², ab, b²].
        assert_eq!(polynomial_features(x.view(), 2), array![[1.0, 2.0, 3.0, 4.0, 6.0, 9.0]]);
        assert_eq!(polynomial_features(data(2, 9, 1).view(), 2).ncols(), 55);
        assert_eq!(polynomial_features(data(2, 34, 1).view(), 2).ncols(), 630);
        assert_eq!(polynomial_features(data(2, 3, 1).view(), 3).ncols(), 20);
    }

    #[test]
    fn nonlinear_svd_embeddings() {
        let x = data(25, 3, 40);
        let x_test = x.slice(s![..5, ..]).to_owned();
        let e = nonlinear_svd(x.view(), x_test.view(), 2, 4).unwrap();
        assert_eq!(e.train.dim(), (25, 4));
        assert!(max_abs_diff(&dense::matmul(e.train.t(), e.train.view()).unwrap(), &Array2::eye(4)) < tol(25));
        assert!(max_abs_diff(&e.test, &e.train.slice(s![..5, ..]).to_owned()) < 1e2 * tol(25));
    }
}
