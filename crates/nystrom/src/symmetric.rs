//! The symmetric Nyström method (Williams & Seeger, NIPS 2000), the paper's "Sym. Nys."
//! baseline: applied to `G Gᵀ` for the left and to `Gᵀ G` for the right singular vectors.
use crate::error::{require_rank, NystromError, Result};
use crate::extension::{eigen_coefficients, landmark_eigen};
use crate::sampling::uniform_indices;
use ksvd_linalg::{dense, LinearOperator, MatrixBlocks};
use ksvd_solvers::{column_signs, lanczos_svd, LanczosParams, SvdResult};
use ndarray::{Array1, Array2, ArrayView2, ArrayViewMut2, Axis};

/// Which symmetric matrix `K` the method approximates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Gram {
    /// `K = G Gᵀ` (`N × N`): its eigenvectors are the left singular vectors of `G`.
    Left,
    /// `K = Gᵀ G` (`M × M`): the right singular vectors.
    Right,
    /// `K = G` itself, which must be square and symmetric positive semi-definite.
    Itself,
}

/// Result of the symmetric Nyström method on `K`.
#[derive(Debug, Clone)]
pub struct SymmetricNystrom {
    /// Approximate top-`r` eigenvectors of `K` (unit columns).
    pub vectors: Array2<f64>,
    /// Approximate eigenvalues of `K`: `(N/n) λ_s^{(n)}`.
    pub values: Array1<f64>,
    /// Sampled indices.
    pub landmarks: Vec<usize>,
}

/// `K[:, idx]` for the chosen Gram matrix, matrix-free in `G`.
fn gram_columns<G: MatrixBlocks + ?Sized>(g: &G, gram: Gram, idx: &[usize]) -> Result<Array2<f64>> {
    Ok(match gram {
        // G Gᵀ[:, I] = G (G[I, :])ᵀ
        Gram::Left => g.apply(g.row_block(idx)?.t())?,
        // Gᵀ G[:, J] = Gᵀ G[:, J]
        Gram::Right => g.apply_transpose(g.col_block(idx)?.view())?,
        Gram::Itself => g.col_block(idx)?,
    })
}

/// The symmetric Nyström approximation of the top-`rank` eigenpairs of `K` from `landmarks`
/// uniformly sampled columns: `K_{n,n} = U Λ Uᵀ`, `ũ_s ∝ K_{N,n} u_s / λ_s`,
/// `λ̃_s = (N/n) λ_s` (eq. 15 of the appendix), vectors scaled to unit norm.
pub fn symmetric_nystrom<G: MatrixBlocks + ?Sized>(
    g: &G,
    gram: Gram,
    rank: usize,
    landmarks: usize,
    seed: u64,
) -> Result<SymmetricNystrom> {
    let dim = match gram {
        Gram::Left => g.nrows(),
        Gram::Right => g.ncols(),
        Gram::Itself => {
            if g.nrows() != g.ncols() {
                return Err(NystromError::InvalidParameter {
                    name: "gram",
                    value: g.ncols() as f64,
                    reason: format!("K = G needs a square G, got {} x {}", g.nrows(), g.ncols()),
                });
            }
            g.nrows()
        }
    };
    ksvd_solvers::check_rank(dim, dim, rank)?;
    if landmarks < rank || landmarks > dim {
        return Err(NystromError::InvalidParameter {
            name: "landmarks",
            value: landmarks as f64,
            reason: format!("must lie in rank..=dim = {rank}..={dim}"),
        });
    }
    let idx = uniform_indices(dim, landmarks, seed);
    let c = gram_columns(g, gram, &idx)?; // dim x n
    let (w, q) = landmark_eigen(c.select(Axis(0), &idx).view())?;
    require_rank(&w.to_vec(), landmarks, landmarks, landmarks, rank)?;
    let vecs = unit_columns(dense::matmul(
        c.view(),
        eigen_coefficients(q.view(), w.view(), rank)?.view(),
    )?);
    let values = w.slice(ndarray::s![..rank]).mapv(|l| l * dim as f64 / landmarks as f64);
    Ok(SymmetricNystrom {
        vectors: vecs,
        values,
        landmarks: idx,
    })
}

/// The paper's symmetric-Nyström SVD baseline: `U` from `K = G Gᵀ` with `row_landmarks`,
/// `V` from `K = Gᵀ G` with `col_landmarks`, singular values `sqrt(λ̃)` of the left problem.
pub fn symmetric_nystrom_svd<G: MatrixBlocks + ?Sized>(
    g: &G,
    rank: usize,
    row_landmarks: usize,
    col_landmarks: usize,
    seed: u64,
) -> Result<SvdResult> {
    let left = symmetric_nystrom(g, Gram::Left, rank, row_landmarks, seed)?;
    let right = symmetric_nystrom(g, Gram::Right, rank, col_landmarks, seed.wrapping_add(0x9e37_79b9))?;
    Ok(SvdResult::new(
        left.vectors,
        left.values.mapv(|l| l.max(0.0).sqrt()),
        right.vectors,
    ))
}

/// Scales every column of `a` to unit norm with the workspace's sign convention
/// ([`column_signs`]: largest-magnitude entry positive); zero columns are left as they are.
fn unit_columns(mut a: Array2<f64>) -> Array2<f64> {
    let signs = column_signs(a.view());
    for (mut col, &sign) in a.axis_iter_mut(Axis(1)).zip(signs.iter()) {
        let n = col.dot(&col).sqrt();
        if n > 0.0 {
            col /= sign * n;
        }
    }
    a
}

/// The paper's symmetric-Nyström SVD baseline ([`symmetric_nystrom_svd`]: Williams & Seeger on
/// `K = G Gᵀ` for `U` and on `K = Gᵀ G` for `V`) with a Lanczos sub-problem, in a form that
/// never builds `K`'s landmark columns.
///
/// With landmarks `I` and `B = G[I, :]`: `K[I, I] = B Bᵀ`, so its top eigenpairs are
/// `(σ_s², p_s)` from the SVD `B = P Σ Qᵀ`, and the Nyström extension is
/// `ũ_s ∝ K[:, I] p_s / σ_s² = G Bᵀ p_s / σ_s² = G q_s / σ_s`. The top-`rank` SVD of `B` is
/// computed by restarted Lanczos on the matrix-free `B` (products through
/// [`MatrixBlocks::block_mul`], `O(N + nnz)` for sparse-plus-low-rank kernels; nothing of size
/// `m × N` is formed), `U` by one product with `G`; likewise `V` from `B' = G[:, J]`:
/// `ṽ_s ∝ Gᵀ p'_s`. The singular values are `sqrt(N/m) σ_s` of the left problem (eq. 15 of the
/// appendix). In exact arithmetic this is [`symmetric_nystrom_svd`] with the same landmarks
/// (`uniform_indices(N, m, seed)` for `I`, seed `seed + 0x9e3779b9` for `J`); it costs
/// `O(r (N + nnz))` per Lanczos step instead of an `m × m` eigenproblem and `N × m` Gram
/// columns (infeasible at `m ~ 20000`). Vectors have unit norm and the workspace's signs
/// ([`column_signs`]).
///
/// `lanczos` configures both sub-problems (tolerance, Krylov dimension, block size); its seed
/// is replaced by the landmark seed of each side.
///
/// # Errors
/// [`NystromError::InvalidParameter`] unless `rank ≤ landmarks ≤ min(N, M)`;
/// [`NystromError::RankDeficientSample`] when a landmark block has fewer than `rank` singular
/// values `σ` with `σ² > ε m σ_1²` (the test of [`symmetric_nystrom`] on the eigenvalues
/// `σ²` of `K[I, I]`); the Lanczos solver's errors.
pub fn symmetric_nystrom_lanczos<G: MatrixBlocks + ?Sized>(
    g: &G,
    rank: usize,
    landmarks: usize,
    seed: u64,
    lanczos: &LanczosParams,
) -> Result<SvdResult> {
    let (n, m) = (g.nrows(), g.ncols());
    ksvd_solvers::check_rank(n, m, rank)?;
    if landmarks < rank || landmarks > n.min(m) {
        return Err(NystromError::InvalidParameter {
            name: "landmarks",
            value: landmarks as f64,
            reason: format!("must lie in rank..=min(N, M) = {rank}..={}", n.min(m)),
        });
    }
    // The top-`rank` SVD of the landmark block of one side, checked for numerical rank on the
    // eigenvalues σ² of K[I, I].
    let side = |block: &Slice<'_, G>, seed: u64| -> Result<SvdResult> {
        let params = LanczosParams {
            seed,
            ..lanczos.clone()
        };
        let b = lanczos_svd(block, rank, &params)?;
        let eigenvalues: Vec<f64> = b.s.iter().map(|x| x * x).collect();
        require_rank(&eigenvalues, landmarks, block.nrows(), block.ncols(), rank)?;
        Ok(b)
    };
    // Left: K = G Gᵀ, landmarks I (the indices of the dense version).
    let rows = uniform_indices(n, landmarks, seed);
    let b = side(&Slice::rows(g, &rows), seed)?;
    let u = unit_columns(g.apply((&b.v / &b.s).view())?);
    // Right: K = Gᵀ G, landmarks J.
    let right_seed = seed.wrapping_add(0x9e37_79b9);
    let cols = uniform_indices(m, landmarks, right_seed);
    let b2 = side(&Slice::cols(g, &cols), right_seed)?;
    let v = unit_columns(g.apply_transpose((&b2.u / &b2.s).view())?);
    let s = b.s.mapv(|x| x * (n as f64 / landmarks as f64).sqrt());
    Ok(SvdResult::new(u, s, v))
}

/// `G[I, :]` (the landmark rows) or `G[:, J]` (the landmark columns) of a matrix as a
/// matrix-free operator: products go through [`MatrixBlocks::block_mul`] and
/// [`MatrixBlocks::block_t_mul`].
struct Slice<'a, G: ?Sized> {
    g: &'a G,
    idx: &'a [usize],
    all: Vec<usize>,
    rows: bool,
}

impl<'a, G: MatrixBlocks + ?Sized> Slice<'a, G> {
    fn rows(g: &'a G, idx: &'a [usize]) -> Self {
        let all = (0..g.ncols()).collect();
        Slice {
            g,
            idx,
            all,
            rows: true,
        }
    }
    fn cols(g: &'a G, idx: &'a [usize]) -> Self {
        let all = (0..g.nrows()).collect();
        Slice {
            g,
            idx,
            all,
            rows: false,
        }
    }
    /// The row and column indices of the slice in `G`.
    fn index_sets(&self) -> (&[usize], &[usize]) {
        if self.rows {
            (self.idx, &self.all)
        } else {
            (&self.all, self.idx)
        }
    }
}

impl<G: MatrixBlocks + ?Sized> LinearOperator for Slice<'_, G> {
    fn nrows(&self) -> usize {
        self.index_sets().0.len()
    }
    fn ncols(&self) -> usize {
        self.index_sets().1.len()
    }
    fn apply_into(&self, x: ArrayView2<'_, f64>, mut out: ArrayViewMut2<'_, f64>) -> ksvd_linalg::Result<()> {
        let (i, j) = self.index_sets();
        out.assign(&self.g.block_mul(i, j, x)?);
        Ok(())
    }
    fn apply_transpose_into(&self, x: ArrayView2<'_, f64>, mut out: ArrayViewMut2<'_, f64>) -> ksvd_linalg::Result<()> {
        let (i, j) = self.index_sets();
        out.assign(&self.g.block_t_mul(i, j, x)?);
        Ok(())
    }
}
