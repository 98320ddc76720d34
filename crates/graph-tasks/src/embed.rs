//! Unsupervised node embeddings from the adjacency matrix alone: PCA, KPCA, SVD and KSVD
//! (exact truncated solvers, matrix-free), and their Nyström approximations.
use crate::error::{ensure, GraphTaskError, Result};
use ksvd::{InnerSolver, Kpca, Ksvd, KsvdError, MemoryBudget, Sampling, Solver, SvdResult};
use ksvd_kernels::graph::{bandwidth_rule, transform_adjacency, GraphInput};
use ksvd_kernels::{Kernel, Samples};
use ksvd_linalg::{CsrMatrix, LinearOperator, Twins};
use ksvd_nystrom::NystromError;
use linfa::param_guard::ParamGuard;
use ndarray::{concatenate, Array1, Array2, ArrayView2, ArrayViewMut2, Axis};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// Node embeddings: one row per node.
///
/// Single-sided methods (PCA, KPCA, DeepWalk) give one matrix; two-sided methods (SVD, KSVD,
/// HOPE, DiGAE) give a *source* embedding (a node's role as the tail of its out-arcs: left
/// singular vectors, `B_φ`) and a *target* embedding (its role as the head of in-arcs: right
/// singular vectors, `B_ψ`). As in the paper, the features of a node are the concatenation
/// `[source, target]` of its two rows.
#[derive(Debug, Clone, PartialEq)]
pub enum Embeddings {
    /// One `n × d` matrix.
    Single(Array2<f64>),
    /// Source and target embeddings, both `n × d`.
    SourceTarget {
        /// Source (out-arc, left) embedding.
        source: Array2<f64>,
        /// Target (in-arc, right) embedding.
        target: Array2<f64>,
    },
}

impl Embeddings {
    /// Number of nodes (rows).
    pub fn n_nodes(&self) -> usize {
        match self {
            Embeddings::Single(e) => e.nrows(),
            Embeddings::SourceTarget { source, .. } => source.nrows(),
        }
    }

    /// Width of the node features (twice the side width for two-sided embeddings).
    pub fn dim(&self) -> usize {
        match self {
            Embeddings::Single(e) => e.ncols(),
            Embeddings::SourceTarget { source, target } => source.ncols() + target.ncols(),
        }
    }

    /// The node features: the matrix itself, or `[source, target]` concatenated column-wise.
    pub fn features(&self) -> Cow<'_, Array2<f64>> {
        match self {
            Embeddings::Single(e) => Cow::Borrowed(e),
            Embeddings::SourceTarget { source, target } => {
                // Shapes are checked by `validate`; an inconsistent pair yields an empty matrix.
                Cow::Owned(
                    concatenate(Axis(1), &[source.view(), target.view()]).unwrap_or_else(|_| Array2::zeros((0, 0))),
                )
            }
        }
    }

    /// Checks shapes (`n_nodes` rows, equal side widths, at least one column) and finiteness.
    pub fn validate(&self, n_nodes: usize) -> Result<()> {
        let check = |what: &'static str, e: &Array2<f64>| -> Result<()> {
            if e.nrows() != n_nodes {
                return Err(GraphTaskError::NodeCountMismatch {
                    what,
                    expected: n_nodes,
                    found: e.nrows(),
                });
            }
            if e.ncols() == 0 {
                return Err(GraphTaskError::EmptyEmbedding { what });
            }
            if let Some(((row, col), _)) = e.indexed_iter().find(|(_, v)| !v.is_finite()) {
                return Err(GraphTaskError::NonFinite { what, row, col });
            }
            Ok(())
        };
        match self {
            Embeddings::Single(e) => check("embedding", e),
            Embeddings::SourceTarget { source, target } => {
                check("source embedding", source)?;
                check("target embedding", target)?;
                if source.ncols() != target.ncols() {
                    return Err(GraphTaskError::SideMismatch {
                        source_dim: source.ncols(),
                        target_dim: target.ncols(),
                    });
                }
                Ok(())
            }
        }
    }
}

/// The embedding methods of Table 1 computed by this crate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// PCA: top left singular vectors of the column-centred data `H X` (= eigenvectors of the
    /// centred linear kernel `H X Xᵀ H` on the rows `x_i`). One-sided.
    Pca,
    /// KPCA: top eigenvectors of the (centred) RBF kernel matrix `k(x_i, x_j)` of the rows with
    /// themselves. One-sided.
    Kpca,
    /// SVD of `X` itself (not centred): left and right singular vectors. Two-sided.
    Svd,
    /// KSVD with the RBF kernel: SVD of `G_ij = exp(-‖x_i − z_j‖²/γ²)` between the rows
    /// `x_i` and the columns `z_j` of `X` (asymmetric because `X ≠ Xᵀ`). Two-sided.
    KsvdRbf,
    /// KSVD with the SNE kernel (RBF normalised over all columns `z'`): the paper's "KSVD". Two-sided.
    KsvdSne,
}

impl Method {
    /// All five methods, in the paper's column order.
    pub const ALL: [Method; 5] = [Method::Pca, Method::Kpca, Method::Svd, Method::KsvdRbf, Method::KsvdSne];

    /// The identifier used in result rows and configs (`pca`, `kpca`, `svd`, `ksvd_rbf`, `ksvd_sne`).
    pub fn id(self) -> &'static str {
        match self {
            Method::Pca => "pca",
            Method::Kpca => "kpca",
            Method::Svd => "svd",
            Method::KsvdRbf => "ksvd_rbf",
            Method::KsvdSne => "ksvd_sne",
        }
    }

    /// Whether the method has a kernel bandwidth (tuned by cross-validation).
    pub fn has_bandwidth(self) -> bool {
        matches!(self, Method::Kpca | Method::KsvdRbf | Method::KsvdSne)
    }

    /// Whether the method gives source and target embeddings.
    pub fn is_two_sided(self) -> bool {
        matches!(self, Method::Svd | Method::KsvdRbf | Method::KsvdSne)
    }
}

/// Whether node features are the singular/eigen-vectors themselves or the projection scores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scaling {
    /// Unit-norm vectors: `U` (PCA, KPCA) or `[U, V]` (SVD, KSVD), i.e. `B_φ`, `B_ψ`. The paper:
    /// "its top 1000 eigenvectors are taken as the extracted features".
    Vectors,
    /// Projection scores onto the principal directions: `U Σ` for PCA (`Σ` the singular values of
    /// `H X`), `U Λ^{1/2}` for KPCA, `[U Σ, V Σ]` for SVD and KSVD (`G B_ψ = U Σ`, the paper's
    /// projected feature scores `⟨φ(x_i), w_l^ψ⟩`).
    Scores,
}

/// Everything an exact embedding depends on besides the graph.
#[derive(Debug, Clone, PartialEq)]
pub struct EmbeddingSpec {
    /// The method.
    pub method: Method,
    /// Number of components per side `r` (capped at the number of nodes).
    pub rank: usize,
    /// How the adjacency `A` becomes the data matrix `X` whose rows are the samples `x_i` and
    /// whose columns are the samples `z_j` (REPRODUCTION-NOTES §1); configs name it by any of
    /// [`ksvd_linalg::Vocabulary::names`] (`row-normalized-self-loops`, `row-normalised-self-loops`, ...).
    pub transform: GraphInput,
    /// Vectors or projection scores.
    pub scaling: Scaling,
    /// Centre the kernel matrices on both sides (`H G H`; KPCA: `H K H`). PCA is always centred
    /// and SVD never (that is what distinguishes them).
    pub center_kernels: bool,
    /// Kernel bandwidth `γ` (RBF and SNE: `exp(-‖x − z‖²/γ²)`); ignored by PCA and SVD.
    pub gamma: Option<f64>,
    /// Solver of the exact embeddings (`ksvd::Solver`; all but `Exact` matrix-free). The
    /// Nyström embeddings are [`nystrom_embed`]'s.
    pub solver: Solver,
    /// Seed of the solver.
    pub seed: u64,
    /// Split off the exactly repeated singular values of twin nodes (same in- and
    /// out-neighbours in `X`) before solving (`ksvd::Solver::solve_twins`): they are known
    /// exactly, and the solver sees a smaller operator without them. The values are the same;
    /// where the rank cuts through a repeated value, the basis of its space is a different one
    /// (Helmert's on each class).
    pub split_twins: bool,
}

/// An embedding and what produced it.
#[derive(Debug, Clone)]
pub struct EmbeddingOutput {
    /// The node embeddings.
    pub embeddings: Embeddings,
    /// Singular values (PCA: of `H X`; KPCA: eigenvalues of `K`; SVD/KSVD: of `X` / `G`), descending.
    pub singular_values: Array1<f64>,
    /// Number of components actually used (the requested rank, possibly capped).
    pub rank: usize,
    /// Largest relative residual `max_i max(‖G v_i − s_i u_i‖, ‖Gᵀ u_i − s_i v_i‖) / s_1` of the
    /// solve, when the solver computed it (certified solvers always do; a fixed-iteration RSVD
    /// reports it rather than claim accuracy). Nyström KPCA ([`ksvd::Kpca`]) reports the model's
    /// eigenpair residual `max_l ‖K a_l − λ_l a_l‖ / λ_1`.
    pub max_residual: Option<f64>,
    /// Nyström embeddings only: the largest relative residual of the inner solve (the SVD of the
    /// sampled block, against that block), when the inner solver computed it. `max_residual` is
    /// then the Nyström triplets' residual against the full kernel matrix.
    pub inner_residual: Option<f64>,
}

/// The bandwidth of the paper's rule `γ = k sqrt(M γ_x)`, `γ_x` the variance of all entries of
/// the transformed adjacency `X` (`M` its number of columns).
pub fn bandwidth(adjacency: &CsrMatrix, transform: GraphInput, k: f64) -> Result<f64> {
    let x = transform_adjacency(adjacency, transform)?;
    Ok(bandwidth_rule(&Samples::sparse(x)?, k))
}

/// `X − 1 μᵀ` for a sparse `X` (columns centred), as an operator: never stored densely.
struct ColumnCentered<'a> {
    x: &'a CsrMatrix,
    mean: Array1<f64>,
}

impl<'a> ColumnCentered<'a> {
    fn new(x: &'a CsrMatrix) -> Self {
        let n = x.nrows().max(1) as f64;
        let mean = Array1::from(x.col_sums()) / n;
        ColumnCentered { x, mean }
    }
}

impl LinearOperator for ColumnCentered<'_> {
    fn nrows(&self) -> usize {
        self.x.nrows()
    }
    fn ncols(&self) -> usize {
        self.x.ncols()
    }
    fn apply_into(&self, v: ArrayView2<'_, f64>, mut out: ArrayViewMut2<'_, f64>) -> ksvd_linalg::Result<()> {
        self.x.apply_into(v, out.view_mut())?;
        let mv = self.mean.dot(&v); // 1 x k
        out -= &mv;
        Ok(())
    }
    fn apply_transpose_into(&self, u: ArrayView2<'_, f64>, mut out: ArrayViewMut2<'_, f64>) -> ksvd_linalg::Result<()> {
        self.x.apply_transpose_into(u, out.view_mut())?;
        let su = u.sum_axis(Axis(0));
        for (mut row, &m) in out.outer_iter_mut().zip(self.mean.iter()) {
            row.scaled_add(-m, &su);
        }
        Ok(())
    }
}

fn square(adjacency: &CsrMatrix) -> Result<usize> {
    if adjacency.nrows() != adjacency.ncols() {
        return Err(GraphTaskError::NotSquare {
            nrows: adjacency.nrows(),
            ncols: adjacency.ncols(),
        });
    }
    Ok(adjacency.nrows())
}

fn kernel_of(method: Method, gamma: f64) -> Kernel {
    match method {
        Method::KsvdSne => Kernel::Sne { gamma },
        _ => Kernel::Rbf { gamma },
    }
}

fn gamma_of(spec_gamma: Option<f64>, method: Method) -> Result<f64> {
    let g = spec_gamma.ok_or_else(|| GraphTaskError::InvalidConfig {
        field: "gamma",
        value: "none".into(),
        reason: format!("method {} needs a kernel bandwidth", method.id()),
    })?;
    ensure(
        g.is_finite() && g > 0.0,
        "gamma",
        g,
        "bandwidth must be positive and finite",
    )?;
    Ok(g)
}

/// The sample sets of a kernel method on the transformed adjacency `X`: the rows `x_i` of `X`
/// twice (KPCA's `K_ij = k(x_i, x_j)`), or the rows `x_i` and the columns `z_j` (KSVD's
/// `G_ij = k(x_i, z_j)`).
fn kernel_samples(x: CsrMatrix, method: Method) -> Result<(Samples, Samples)> {
    match method {
        Method::Kpca => {
            let xs = Samples::sparse(x)?;
            Ok((xs.clone(), xs))
        }
        Method::KsvdRbf | Method::KsvdSne => {
            let z = x.transpose();
            Ok((Samples::sparse(x)?, Samples::sparse(z)?))
        }
        Method::Pca | Method::Svd => Err(GraphTaskError::InvalidConfig {
            field: "method",
            value: method.id().into(),
            reason: "has no kernel matrix".into(),
        }),
    }
}

/// The storage budget of every embedding, [`MemoryBudget::fixed`] (1 GiB): it decides which
/// kernel matrices are stored (what a solve may hold is [`solver_budget`]); fixed rather than
/// [`MemoryBudget::auto`], so that a table does not depend on the machine that computes it.
pub fn embedding_budget() -> Result<MemoryBudget> {
    Ok(MemoryBudget::fixed())
}

/// The memory a solve of an embedding may hold (`Solver::Auto`'s dense SVD, Gram route and
/// factorisations): 4.5 GiB, fixed for the reason [`embedding_budget`] is. It is larger than the
/// storage budget so that a stored matrix on which block Lanczos stalls may take the Gram route
/// ([`ksvd_solvers::gram_svd_operator`]; BlogCatalog's SNE kernel at k = 0.25, order 10106,
/// rank 250: five matrices of that order, 4.1 GB, for a few minutes where narrower Krylov blocks
/// took ten). It admits the dense SVD of no more matrices of the specs than 1 GiB did at the
/// costs the default solver accepts (BlogCatalog's cost 10.6-20 Krylov estimates, where it takes
/// at most 4 first and 10 after a stall; Pubmed's, order 13025, does not fit), and the Gram route
/// to no matrix of the specs but BlogCatalog's (the other stored ones take the dense SVD first,
/// the implicit sparse-plus-low-rank ones never take the Gram route); of BlogCatalog's, only the
/// SNE kernel at k = 0.25 stalls (2026-11-28).
pub fn solver_budget() -> Result<MemoryBudget> {
    Ok(MemoryBudget::bytes(SOLVER_BUDGET_BYTES)?)
}

/// [`solver_budget`] in bytes (4.5 GiB).
const SOLVER_BUDGET_BYTES: u64 = 9 << 29;

/// The settings every embedding gives its model, on either parameter builder (`KsvdParams`,
/// `KpcaParams`: they share no trait), validated: kernel, rank, solver, centring, seed and the
/// fixed [`embedding_budget`].
macro_rules! model_params {
    ($builder:expr, $kernel:expr, $rank:expr, $solver:expr, $center:expr, $seed:expr) => {
        $builder
            .kernel($kernel)
            .rank($rank)
            .solver($solver)
            .center($center)
            .seed($seed)
            .memory_budget(embedding_budget()?)
            .check()
    };
}

/// KSVD parameters of an embedding at `rank` (RBF or SNE on `(X, Z)`; RBF on `(X, X)` for exact
/// KPCA).
fn ksvd_params(kernel: Kernel, rank: usize, solver: Solver, center: bool, seed: u64) -> Result<ksvd::KsvdValidParams> {
    Ok(model_params!(Ksvd::params(), kernel, rank, solver, center, seed)?)
}

/// KPCA (RBF) parameters of a Nyström embedding at `rank`.
fn kpca_params(gamma: f64, rank: usize, solver: Solver, center: bool, seed: u64) -> Result<ksvd::KpcaValidParams> {
    Ok(model_params!(
        Kpca::params(),
        Kernel::Rbf { gamma },
        rank,
        solver,
        center,
        seed
    )?)
}

/// Scales the columns of `u` by `w`.
fn scale_columns(mut u: Array2<f64>, w: &Array1<f64>) -> Array2<f64> {
    for (mut c, &s) in u.axis_iter_mut(Axis(1)).zip(w.iter()) {
        c *= s;
    }
    u
}

fn assemble(method: Method, svd: SvdResult, max_residual: Option<f64>, scaling: Scaling) -> EmbeddingOutput {
    let rank = svd.rank();
    let SvdResult { u, s, v, .. } = svd;
    let embeddings = match (method.is_two_sided(), scaling) {
        (false, Scaling::Vectors) => Embeddings::Single(u),
        (false, Scaling::Scores) => {
            // PCA: scores U Σ. KPCA: K = U Λ Uᵀ, scores U Λ^{1/2}.
            let w = if method == Method::Kpca {
                s.mapv(|l| l.max(0.0).sqrt())
            } else {
                s.clone()
            };
            Embeddings::Single(scale_columns(u, &w))
        }
        (true, Scaling::Vectors) => Embeddings::SourceTarget { source: u, target: v },
        (true, Scaling::Scores) => Embeddings::SourceTarget {
            source: scale_columns(u, &s),
            target: scale_columns(v, &s),
        },
    };
    EmbeddingOutput {
        embeddings,
        singular_values: s,
        rank,
        max_residual,
        inner_residual: None,
    }
}

/// The exact (up to the solver's accuracy) embedding of a graph by one of the five methods.
///
/// `X` is the transformed adjacency; PCA takes the SVD of `X − 1 μᵀ`, SVD of `X`, KPCA of the
/// `n × n` RBF kernel `K_ij = k(x_i, x_j)` and KSVD of `G_ij = k(x_i, z_j)`, all through
/// operators (sparse inputs keep `K` and `G` in their exact rank-one-plus-sparse form, so nothing
/// of size `n × n` is stored unless `A A` is dense).
pub fn embed(adjacency: &CsrMatrix, spec: &EmbeddingSpec) -> Result<EmbeddingOutput> {
    let n = square(adjacency)?;
    ensure(spec.rank >= 1, "components", spec.rank, "must be at least 1")?;
    spec.solver.validate()?;
    if let Solver::Nystrom { .. } = spec.solver {
        return Err(GraphTaskError::InvalidConfig {
            field: "solver",
            value: "Nystrom".into(),
            reason: "exact embeddings take an operator solver; Nystrom embeddings are nystrom_embed's".into(),
        });
    }
    let rank = spec.rank.min(n);
    let budget = solver_budget()?;
    let x = transform_adjacency(adjacency, spec.transform)?;
    // Every matrix below is built from `X` by a permutation-invariant rule, so the twin nodes of
    // `X` (same in- and out-neighbours, e.g. uncited papers with the same single citer) split
    // off exactly repeated singular values, which stall Krylov solvers on graph kernels
    // (Pubmed: 6692 of them).
    let twins = if spec.split_twins {
        Some(Twins::of_square(&x)?).filter(|t| !t.is_empty())
    } else {
        None
    };
    let solve = |op: &dyn LinearOperator| -> Result<(SvdResult, Option<f64>)> {
        let svd = match &twins {
            Some(t) => spec.solver.solve_twins(op, t, rank, spec.seed, budget)?.0,
            None => spec.solver.solve_operator(op, rank, spec.seed, budget)?,
        };
        let worst = svd.max_residual();
        Ok((svd, worst))
    };
    let (svd, max_residual) = match spec.method {
        Method::Pca => solve(&ColumnCentered::new(&x))?,
        Method::Svd => solve(&x)?,
        m => {
            let gamma = gamma_of(spec.gamma, m)?;
            let (xs, zs) = kernel_samples(x.clone(), m)?;
            // KPCA is the KSVD of `K = k(X, X)` (what `ksvd::Kpca` runs for every solver but
            // Nyström); solved as an operator, it keeps the solver's two-sided certificate.
            // The model's policy builds `G`: stored (products become GEMMs) when it has at most
            // ksvd_linalg::FIXED_DENSE_ENTRIES entries and is not rank one plus sparse (dense
            // `A A`: Twitch PT, BlogCatalog), centred once in place; implicit otherwise.
            let params = ksvd_params(
                kernel_of(m, gamma),
                rank,
                spec.solver.clone(),
                spec.center_kernels,
                spec.seed,
            )?;
            solve(&params.kernel_matrix(xs, zs)?)?
        }
    };
    Ok(assemble(spec.method, svd, max_residual, spec.scaling))
}

/// The Nyström variants of the Nyström F1 figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NystromMethod {
    /// KSVD (RBF) by the asymmetric Nyström method (eqs. 10–11): `m` rows and `m` columns of `G`.
    Ksvd,
    /// KPCA (RBF) by the symmetric Nyström method (Williams & Seeger) on `K` itself, `m` landmarks.
    Kpca,
}

impl NystromMethod {
    /// Identifier in result rows (`ksvd`, `kpca`).
    pub fn id(self) -> &'static str {
        match self {
            NystromMethod::Ksvd => "ksvd",
            NystromMethod::Kpca => "kpca",
        }
    }
    /// The exact method it approximates.
    pub fn exact(self) -> Method {
        match self {
            NystromMethod::Ksvd => Method::KsvdRbf,
            NystromMethod::Kpca => Method::Kpca,
        }
    }
}

/// A Nyström embedding with `landmarks` sampled rows/columns, rank `min(spec.rank, landmarks)`;
/// if the sampled block is numerically rank-deficient the rank drops to its numerical rank
/// (reported in [`EmbeddingOutput::rank`]). `spec.method` and `spec.solver` are ignored.
///
/// Both are fits of the `ksvd` models with `Solver::Nystrom` (uniform landmarks): KSVD the
/// asymmetric method with `inner` solving the sampled block, KPCA [`ksvd::Kpca`]'s symmetric one.
///
/// The result reports, rather than claims, its accuracy: `max_residual` is the largest residual
/// of the Nyström triplets against the full (centred) kernel matrix (KSVD: both sides, two
/// products with `G`, the cost of one power iteration; KPCA: the model's `‖K a − λ a‖ / λ_1`, one
/// product), `inner_residual` that of the inner solve (KSVD only; the symmetric method's `m × m`
/// eigendecomposition is dense).
pub fn nystrom_embed(
    adjacency: &CsrMatrix,
    method: NystromMethod,
    spec: &EmbeddingSpec,
    landmarks: usize,
    inner: InnerSolver,
) -> Result<EmbeddingOutput> {
    let n = square(adjacency)?;
    ensure(
        landmarks >= 1 && landmarks <= n,
        "m",
        landmarks,
        &format!("landmarks must lie in 1..={n}"),
    )?;
    ensure(spec.rank >= 1, "components", spec.rank, "must be at least 1")?;
    let gamma = gamma_of(spec.gamma, method.exact())?;
    let (x, z) = kernel_samples(transform_adjacency(adjacency, spec.transform)?, method.exact())?;
    let solver = Solver::Nystrom {
        landmarks,
        cols: None,
        sampling: Sampling::Uniform,
        inner,
    };
    let (center, seed) = (spec.center_kernels, spec.seed);
    let mut rank = spec.rank.min(landmarks);
    // The (centred) kernel matrix, built once for every rank tried.
    let g = match method {
        NystromMethod::Ksvd => {
            ksvd_params(Kernel::Rbf { gamma }, rank, solver.clone(), center, seed)?.kernel_matrix(x, z)?
        }
        NystromMethod::Kpca => kpca_params(gamma, rank, solver.clone(), center, seed)?.kernel_matrix(x)?,
    };
    loop {
        let attempt = match method {
            NystromMethod::Ksvd => ksvd_params(Kernel::Rbf { gamma }, rank, solver.clone(), center, seed)?
                .fit_kernel_matrix(g.clone())
                .and_then(|model| {
                    let inner_residual = model.nystrom().and_then(|ny| ny.sub.max_residual());
                    let svd = model.svd().clone().certify(model.kernel_matrix())?;
                    let worst = svd.max_residual();
                    Ok((svd, worst, inner_residual))
                }),
            NystromMethod::Kpca => kpca_params(gamma, rank, solver.clone(), center, seed)?
                .fit_kernel_matrix(g.clone())
                .map(|kpca| {
                    // The eigenpairs (A, Λ) as the triplets (A, Λ, A) of the symmetric K, with the
                    // model's largest relative residual max_l ‖K a_l − λ_l a_l‖ / λ_1.
                    let a = kpca.eigenvectors().to_owned();
                    let worst = kpca.residuals().iter().copied().reduce(f64::max);
                    (SvdResult::new(a.clone(), kpca.eigenvalues().to_owned(), a), worst, None)
                }),
        };
        match attempt {
            Ok((svd, max_residual, inner_residual)) => {
                let mut out = assemble(method.exact(), svd, max_residual, spec.scaling);
                out.inner_residual = inner_residual;
                return Ok(out);
            }
            Err(KsvdError::Nystrom(NystromError::RankDeficientSample { numerical_rank, .. }))
                if numerical_rank >= 1 && numerical_rank < rank =>
            {
                rank = numerical_rank;
            }
            Err(e) => return Err(e.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ksvd_kernels::{Centering, KernelMatrix};
    use ksvd_linalg::{materialize, Vocabulary};

    /// A graph whose `A A` is dense: its kernel matrices are not rank one plus sparse.
    fn dense_graph(n: usize) -> CsrMatrix {
        let arcs: Vec<(usize, usize, f64)> = (0..n)
            .flat_map(|i| {
                (0..n)
                    .filter(move |j| (i * 7 + j * 3) % 5 < 3)
                    .map(move |j| (i, j, 1.0))
            })
            .collect();
        CsrMatrix::from_triplets(n, n, arcs).unwrap()
    }

    /// The solve budget changes no first choice of the default solver for the orders and ranks
    /// of the specs' embeddings (the twin-reduced orders and the full ones), admits the Gram
    /// route for BlogCatalog's orders, and refuses it and the dense SVD for Pubmed's: the claims
    /// of [`solver_budget`]'s documentation.
    #[test]
    fn the_solve_budget_admits_the_gram_route_for_blogcatalog_only() {
        use ksvd_solvers::{auto_choice, dense_svd_numbers, gram_svd_numbers, AutoChoice};
        let (store, solve) = (embedding_budget().unwrap(), solver_budget().unwrap());
        // (order, ranks): Cora, CiteSeer, TwitchPT at 500 per side and 1000 (KPCA); BlogCatalog
        // and Pubmed at 250 per side and 500 (KPCA).
        let cases = [
            (2708, &[500, 1000][..]),
            (3327, &[500, 1000]),
            (1912, &[500, 1000]),
            (10106, &[250, 500]),
            (10312, &[250, 500]),
            (13025, &[250, 500]),
            (19717, &[250, 500]),
        ];
        for (n, ranks) in cases {
            for &r in ranks {
                let first = auto_choice(n, n, r, &solve);
                assert_eq!(first, auto_choice(n, n, r, &store), "order {n}, rank {r}");
                let gram_fits = solve.fits_f64(gram_svd_numbers(n, n, r));
                match n {
                    // The dense SVD first: no Krylov attempt, so no stall and no Gram route.
                    1912 | 2708 | 3327 => assert_eq!(first, AutoChoice::Dense, "order {n}, rank {r}"),
                    10106 | 10312 => assert!(gram_fits && first == AutoChoice::Lanczos, "order {n}, rank {r}"),
                    _ => assert!(!gram_fits, "order {n}, rank {r}"),
                }
            }
            let dense_fits = solve.fits_f64(dense_svd_numbers(n, n));
            assert_eq!(dense_fits, n <= 10312, "order {n}");
        }
    }

    /// Configs name the input transform by any of its names (the specs use the British
    /// `row-normalised-self-loops` and the American `row-normalized-self-loops`); it is written
    /// back by its canonical name.
    #[test]
    fn configs_read_every_name_of_a_graph_input() {
        #[derive(Debug, Serialize, Deserialize)]
        struct Config {
            graph_input: GraphInput,
        }
        for &g in GraphInput::ALL {
            for name in g.names() {
                let c: Config = toml::from_str(&format!("graph_input = \"{name}\"")).unwrap();
                assert_eq!(c.graph_input, g, "{name}");
            }
            let text = toml::to_string(&Config { graph_input: g }).unwrap();
            assert_eq!(text.trim(), format!("graph_input = \"{}\"", g.name()));
        }
        let err = toml::from_str::<Config>("graph_input = \"row-normalized-selfloops\"").unwrap_err();
        assert!(err.to_string().contains("row-normalized-self-loops"), "{err}");
    }

    /// A dense graph's kernel matrix is stored and centred once in place, exactly as
    /// `Centering::center_dense` centres the stored entries; the matrix-free copy, which applies
    /// the centring in every product, agrees to rounding.
    #[test]
    fn materialised_path_matches_the_implicit_matrix() {
        let n = 30;
        let a = dense_graph(n);
        for method in [Method::Kpca, Method::KsvdRbf, Method::KsvdSne] {
            let xa = transform_adjacency(&a, GraphInput::RowNormalizedSelfLoops).unwrap();
            let (x, z) = kernel_samples(xa, method).unwrap();
            let g = KernelMatrix::with_budget(x, z, kernel_of(method, 0.8), embedding_budget().unwrap()).unwrap();
            assert!(g.is_stored(), "{method:?}");
            let mut dense = g.to_dense().unwrap();
            Centering::center_dense(&mut dense).unwrap();
            let centred = g.centered().unwrap();
            assert_eq!(materialize(&centred).unwrap(), dense, "{method:?}");
            let implicit = materialize(&centred.to_matrix_free()).unwrap();
            let scale = implicit.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            assert!(
                (&dense - &implicit)
                    .iter()
                    .all(|v| v.abs() <= 1e3 * f64::EPSILON * scale * n as f64),
                "{method:?}"
            );
        }
    }

    /// On a dense graph, Krylov (`Auto` at 1e-12) and the dense SVD (`Exact`) of the stored,
    /// centred kernel matrix give the same singular values, each certified.
    #[test]
    fn auto_and_exact_agree_on_the_stored_centred_kernel() {
        let n = 40;
        let a = dense_graph(n);
        let eps_n = f64::EPSILON * (8.0 * n as f64).sqrt();
        for method in [Method::Kpca, Method::KsvdRbf, Method::KsvdSne] {
            let spec = |solver: Solver| EmbeddingSpec {
                method,
                rank: 4,
                transform: GraphInput::RowNormalizedSelfLoops,
                scaling: Scaling::Vectors,
                center_kernels: true,
                gamma: Some(0.8),
                solver,
                seed: 1,
                split_twins: false,
            };
            let stored = embed(&a, &spec(Solver::Auto { tol: 1e-12 })).unwrap();
            let exact = embed(&a, &spec(Solver::Exact)).unwrap();
            let s1 = exact.singular_values[0];
            for (p, q) in stored.singular_values.iter().zip(exact.singular_values.iter()) {
                assert!((p - q).abs() <= 1e3 * eps_n * s1, "{method:?}: {p} vs {q}");
            }
            assert!(stored.max_residual.is_some_and(|r| r <= 1e-12), "{method:?}");
            assert!(exact.max_residual.is_some_and(|r| r <= 1e3 * eps_n), "{method:?}");
        }
    }
}
