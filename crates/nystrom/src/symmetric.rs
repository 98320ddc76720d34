//! The symmetric Nyström method (Williams & Seeger, NIPS 2000), the paper's "Sym. Nys."
//! baseline: applied to `G Gᵀ` for the left and to `Gᵀ G` for the right singular vectors.
use crate::error::{require_rank, NystromError, Result};
use crate::extension::{eigen_coefficients, landmark_eigen};
use crate::sampling::uniform_indices;
use ksvd_linalg::{dense, MatrixBlocks};
use ksvd_solvers::SvdResult;
use ndarray::{Array1, Array2, Axis};

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
    let mut vecs = dense::matmul(c.view(), eigen_coefficients(q.view(), w.view(), rank)?.view())?;
    for mut col in vecs.axis_iter_mut(Axis(1)) {
        let n = col.dot(&col).sqrt();
        let big = col.iter().fold(0.0f64, |a, &x| if x.abs() > a.abs() { x } else { a });
        if n > 0.0 {
            col /= if big < 0.0 { -n } else { n };
        }
    }
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
