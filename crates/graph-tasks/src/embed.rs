//! Unsupervised node embeddings from the adjacency matrix alone: PCA, KPCA, SVD and KSVD
//! (exact truncated solvers, matrix-free), and their Nyström approximations.
use crate::error::{ensure, GraphTaskError, Result};
use ksvd_kernels::graph::{bandwidth_rule, transform_adjacency, GraphInput};
use ksvd_kernels::{Kernel, KernelMatrix, Samples};
use ksvd_linalg::{CsrMatrix, LinearOperator, MatrixBlocks};
use ksvd_nystrom::{asymmetric_nystrom, symmetric_nystrom, Gram, InnerSolver, NystromError, NystromParams};
use ksvd_solvers::{
    auto_svd, dense_svd_operator, lanczos_svd, randomized_svd, AutoParams, LanczosParams, RsvdParams, SvdResult,
};
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

/// How the adjacency matrix `A` (`A[src, dst] = 1`) becomes the data matrix `X` whose rows are
/// the samples `x_i` and whose columns are the samples `z_j` (REPRODUCTION-NOTES §1). Accepts
/// both spellings (`row-normalized` / `row-normalised`) in configs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GraphTransform {
    /// `X = A`.
    Raw,
    /// `X = D_out⁻¹ A` (rows of zero out-degree stay zero).
    #[serde(alias = "row-normalised", alias = "row_normalized", alias = "row_normalised")]
    RowNormalized,
    /// `X = A + I`.
    #[serde(alias = "self_loops")]
    SelfLoops,
    /// `X = D_out⁻¹ (A + I)`: how AsK-LS (He et al. 2022) stores the graphs, and the only transform
    /// whose entry variance matches the paper's `γ_x = 0.0002` on Cora.
    #[serde(
        alias = "row-normalised-self-loops",
        alias = "row_normalized_self_loops",
        alias = "row_normalised_self_loops"
    )]
    RowNormalizedSelfLoops,
}

impl GraphTransform {
    /// The kernels crate's equivalent.
    pub fn input(self) -> GraphInput {
        match self {
            GraphTransform::Raw => GraphInput::Raw,
            GraphTransform::RowNormalized => GraphInput::RowNormalized,
            GraphTransform::SelfLoops => GraphInput::SelfLoops,
            GraphTransform::RowNormalizedSelfLoops => GraphInput::RowNormalizedSelfLoops,
        }
    }
    /// Name used in notes.
    pub fn id(self) -> &'static str {
        match self {
            GraphTransform::Raw => "raw",
            GraphTransform::RowNormalized => "row-normalized",
            GraphTransform::SelfLoops => "self-loops",
            GraphTransform::RowNormalizedSelfLoops => "row-normalized-self-loops",
        }
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

/// Truncated-SVD solver of the exact embeddings (all matrix-free except `dense`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum SvdSolver {
    /// The certified default (`ksvd_solvers::auto_svd`): a dense SVD when that is cheapest and
    /// fits the memory budget, restarted block Lanczos otherwise; every triplet's residual is
    /// at most `tol · s_1`.
    Auto {
        /// Relative residual tolerance.
        tol: f64,
    },
    /// Randomized SVD (Halko et al.) with `rank + oversampling` directions and `power_iters`
    /// power iterations.
    Rsvd {
        /// Extra random directions `p`.
        oversampling: usize,
        /// Power iterations `q`.
        power_iters: usize,
    },
    /// Restarted Lanczos bidiagonalisation to relative residual `tol`.
    Lanczos {
        /// Relative residual tolerance.
        tol: f64,
        /// Maximum number of restarts.
        max_restarts: usize,
    },
    /// Materialise the matrix and take its dense SVD (small graphs and tests only).
    Dense,
}

impl Default for SvdSolver {
    fn default() -> Self {
        SvdSolver::Rsvd {
            oversampling: 10,
            power_iters: 2,
        }
    }
}

impl SvdSolver {
    /// Checks the solver's parameters (tolerances, restart counts).
    pub fn validate(&self) -> Result<()> {
        if let SvdSolver::Auto { tol } = *self {
            ensure(tol > 0.0 && tol < 1.0, "solver.tol", tol, "must lie in (0, 1)")?;
        }
        if let SvdSolver::Lanczos { tol, max_restarts } = *self {
            ensure(tol > 0.0 && tol < 1.0, "solver.tol", tol, "must lie in (0, 1)")?;
            ensure(
                max_restarts >= 1,
                "solver.max_restarts",
                max_restarts,
                "must be at least 1",
            )?;
        }
        Ok(())
    }

    /// The top-`rank` SVD of `op`.
    pub fn solve<O: LinearOperator + ?Sized>(&self, op: &O, rank: usize, seed: u64) -> Result<SvdResult> {
        Ok(match *self {
            SvdSolver::Auto { tol } => {
                let p = AutoParams {
                    tol,
                    seed,
                    ..AutoParams::default()
                };
                auto_svd(op, rank, &p, &mut |_| {})?.0
            }
            SvdSolver::Rsvd {
                oversampling,
                power_iters,
            } => randomized_svd(
                op,
                rank,
                &RsvdParams {
                    oversampling,
                    power_iters,
                    seed,
                },
            )?,
            SvdSolver::Lanczos { tol, max_restarts } => lanczos_svd(
                op,
                rank,
                &LanczosParams {
                    tol,
                    max_restarts,
                    seed,
                    ..LanczosParams::default()
                },
            )?,
            SvdSolver::Dense => dense_svd_operator(op, rank)?,
        })
    }

    /// Short description for notes.
    pub fn describe(&self) -> String {
        match self {
            SvdSolver::Rsvd {
                oversampling,
                power_iters,
            } => format!("rsvd(p={oversampling},q={power_iters})"),
            SvdSolver::Lanczos { tol, .. } => format!("lanczos(tol={tol:e})"),
            SvdSolver::Auto { tol } => format!("auto(tol={tol:e})"),
            SvdSolver::Dense => "dense".into(),
        }
    }
}

/// Everything an exact embedding depends on besides the graph.
#[derive(Debug, Clone, PartialEq)]
pub struct EmbeddingSpec {
    /// The method.
    pub method: Method,
    /// Number of components per side `r` (capped at the number of nodes).
    pub rank: usize,
    /// Graph input transform.
    pub transform: GraphTransform,
    /// Vectors or projection scores.
    pub scaling: Scaling,
    /// Centre the kernel matrices on both sides (`H G H`; KPCA: `H K H`). PCA is always centred
    /// and SVD never (that is what distinguishes them).
    pub center_kernels: bool,
    /// Kernel bandwidth `γ` (RBF and SNE: `exp(-‖x − z‖²/γ²)`); ignored by PCA and SVD.
    pub gamma: Option<f64>,
    /// Solver.
    pub solver: SvdSolver,
    /// Seed of the solver.
    pub seed: u64,
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
    /// reports it rather than claim accuracy).
    pub max_residual: Option<f64>,
    /// Nyström embeddings only: the largest relative residual of the inner solve (the SVD of the
    /// sampled block, against that block), when the inner solver computed it. `max_residual` is
    /// then the Nyström triplets' residual against the full kernel matrix.
    pub inner_residual: Option<f64>,
}

/// The bandwidth of the paper's rule `γ = k sqrt(M γ_x)`, `γ_x` the variance of all entries of
/// the transformed adjacency `X` (`M` its number of columns).
pub fn bandwidth(adjacency: &CsrMatrix, transform: GraphTransform, k: f64) -> Result<f64> {
    let x = transform_adjacency(adjacency, transform.input())?;
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

/// The kernel matrix of a kernel method: `k(x_i, x_j)` (KPCA) or `k(x_i, z_j)` (KSVD), centred
/// if asked.
pub(crate) fn kernel_matrix(
    adjacency: &CsrMatrix,
    method: Method,
    transform: GraphTransform,
    gamma: f64,
    center: bool,
) -> Result<KernelMatrix> {
    let x = transform_adjacency(adjacency, transform.input())?;
    let xs = Samples::sparse(x.clone())?;
    let g = match method {
        Method::Kpca => KernelMatrix::new(xs.clone(), xs, Kernel::Rbf { gamma })?,
        Method::KsvdRbf | Method::KsvdSne => {
            KernelMatrix::new(xs, Samples::sparse(x.transpose())?, kernel_of(method, gamma))?
        }
        Method::Pca | Method::Svd => {
            return Err(GraphTaskError::InvalidConfig {
                field: "method",
                value: method.id().into(),
                reason: "has no kernel matrix".into(),
            })
        }
    };
    Ok(if center { g.centered()? } else { g })
}

/// Scales the columns of `u` by `w`.
fn scale_columns(mut u: Array2<f64>, w: &Array1<f64>) -> Array2<f64> {
    for (mut c, &s) in u.axis_iter_mut(Axis(1)).zip(w.iter()) {
        c *= s;
    }
    u
}

fn assemble(method: Method, svd: SvdResult, scaling: Scaling) -> EmbeddingOutput {
    let rank = svd.rank();
    let max_residual = svd.max_residual();
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
    let rank = spec.rank.min(n);
    let svd = match spec.method {
        Method::Pca => {
            let x = transform_adjacency(adjacency, spec.transform.input())?;
            spec.solver.solve(&ColumnCentered::new(&x), rank, spec.seed)?
        }
        Method::Svd => {
            let x = transform_adjacency(adjacency, spec.transform.input())?;
            spec.solver.solve(&x, rank, spec.seed)?
        }
        m => {
            let gamma = gamma_of(spec.gamma, m)?;
            let g = kernel_matrix(adjacency, m, spec.transform, gamma, false)?;
            if !g.is_rank_one_plus_sparse() && n * n <= MATERIALIZE_MAX_ENTRIES && spec.solver != SvdSolver::Dense {
                // Dense `A A` (Twitch PT, BlogCatalog): every product with the implicit matrix would
                // re-evaluate all n² kernel entries, so evaluate them once (and centre in place).
                let all: Vec<usize> = (0..n).collect();
                let mut dense = g.block(&all, &all)?;
                if spec.center_kernels {
                    center_in_place(&mut dense);
                }
                spec.solver.solve(&dense, rank, spec.seed)?
            } else {
                let g = if spec.center_kernels { g.centered()? } else { g };
                spec.solver.solve(&g, rank, spec.seed)?
            }
        }
    };
    Ok(assemble(spec.method, svd, spec.scaling))
}

/// `H G H`: subtracts row and column means and adds back the grand mean.
fn center_in_place(g: &mut Array2<f64>) {
    let rows = g.mean_axis(Axis(1)).unwrap_or_else(|| Array1::zeros(g.nrows()));
    let cols = g.mean_axis(Axis(0)).unwrap_or_else(|| Array1::zeros(g.ncols()));
    let grand = rows.mean().unwrap_or(0.0);
    for (mut row, &r) in g.outer_iter_mut().zip(rows.iter()) {
        row -= &cols;
        row += grand - r;
    }
}

/// Kernel matrices that cannot be held as rank one plus sparse (their `X Zᵀ` is dense) are
/// materialised once when they have at most this many entries (the workspace's fixed rule,
/// [`ksvd_linalg::FIXED_DENSE_ENTRIES`]); larger ones stay implicit and are re-evaluated block by
/// block in every product.
pub const MATERIALIZE_MAX_ENTRIES: usize = ksvd_linalg::FIXED_DENSE_ENTRIES;

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

/// Solver of the sampled block in the asymmetric Nyström method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NystromInner {
    /// Dense SVD.
    Dense,
    /// Randomized SVD with oversampling 10 and 2 power iterations (the paper's choice).
    Rsvd,
}

/// A Nyström embedding with `landmarks` sampled rows/columns, rank `min(spec.rank, landmarks)`;
/// if the sampled block is numerically rank-deficient the rank drops to its numerical rank
/// (reported in [`EmbeddingOutput::rank`]). `spec.method` and `spec.solver` are ignored.
///
/// The result reports, rather than claims, its accuracy: `max_residual` is the largest residual
/// of the Nyström triplets against the full (centred) kernel matrix (two block products with it,
/// the cost of one power iteration), `inner_residual` that of the inner solve (KSVD only; the
/// symmetric method's `m × m` eigendecomposition is dense).
pub fn nystrom_embed(
    adjacency: &CsrMatrix,
    method: NystromMethod,
    spec: &EmbeddingSpec,
    landmarks: usize,
    inner: NystromInner,
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
    let g = kernel_matrix(adjacency, method.exact(), spec.transform, gamma, spec.center_kernels)?;
    let mut rank = spec.rank.min(landmarks);
    loop {
        let attempt = match method {
            NystromMethod::Ksvd => {
                let inner = match inner {
                    NystromInner::Dense => InnerSolver::Dense,
                    NystromInner::Rsvd => InnerSolver::Rsvd {
                        oversampling: 10,
                        power_iters: 2,
                    },
                };
                asymmetric_nystrom(&g, &NystromParams::new(rank, landmarks).seed(spec.seed).inner(inner))
                    .map(|a| (a.svd, a.sub.max_residual()))
            }
            NystromMethod::Kpca => symmetric_nystrom(&g, Gram::Itself, rank, landmarks, spec.seed)
                .map(|s| (SvdResult::new(s.vectors.clone(), s.values, s.vectors), None)),
        };
        match attempt {
            Ok((svd, inner_residual)) => {
                let mut out = assemble(method.exact(), svd.certify(&g)?, spec.scaling);
                out.inner_residual = inner_residual;
                return Ok(out);
            }
            Err(NystromError::RankDeficientSample { numerical_rank, .. })
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
    use ksvd_linalg::random::{gaussian_matrix, rng_from_seed};
    use ksvd_linalg::{materialize, MatrixBlocks};

    #[test]
    fn dense_centering_equals_the_implicit_one() {
        let mut rng = rng_from_seed(2);
        let mut g = gaussian_matrix(&mut rng, 7, 5);
        let (n, m) = (7.0, 5.0);
        let hn = Array2::<f64>::eye(7) - Array2::from_elem((7, 7), 1.0 / n);
        let hm = Array2::<f64>::eye(5) - Array2::from_elem((5, 5), 1.0 / m);
        let want = hn.dot(&g).dot(&hm);
        center_in_place(&mut g);
        assert!((&g - &want).iter().all(|v| v.abs() < 1e2 * f64::EPSILON));
    }

    /// A dense graph (its `A A` is dense, so kernel matrices are evaluated blockwise) takes the
    /// materialise-then-centre path; it must agree with the implicit centred kernel matrix.
    #[test]
    fn materialised_path_matches_the_implicit_matrix() {
        let n = 30;
        let arcs: Vec<(usize, usize, f64)> = (0..n)
            .flat_map(|i| {
                (0..n)
                    .filter(move |j| (i * 7 + j * 3) % 5 < 3)
                    .map(move |j| (i, j, 1.0))
            })
            .collect();
        let a = CsrMatrix::from_triplets(n, n, arcs).unwrap();
        for method in [Method::Kpca, Method::KsvdRbf, Method::KsvdSne] {
            let g = kernel_matrix(&a, method, GraphTransform::RowNormalizedSelfLoops, 0.8, true).unwrap();
            assert!(!g.is_rank_one_plus_sparse());
            let all: Vec<usize> = (0..n).collect();
            let mut dense = kernel_matrix(&a, method, GraphTransform::RowNormalizedSelfLoops, 0.8, false)
                .unwrap()
                .block(&all, &all)
                .unwrap();
            center_in_place(&mut dense);
            let implicit = materialize(&g).unwrap();
            let scale = implicit.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            assert!(
                (&dense - &implicit)
                    .iter()
                    .all(|v| v.abs() <= 1e3 * f64::EPSILON * scale * n as f64),
                "{method:?}"
            );
        }
    }
}
