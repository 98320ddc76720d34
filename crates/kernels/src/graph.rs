//! Graph inputs: a directed adjacency `A` (`A_ij ≠ 0` for an arc `i → j`) gives row samples
//! `x_i = A[i, :]` (out-links) and column samples `z_j = A[:, j]` (in-links), so that
//! `x_i . z_j = (A A)_ij` and `‖x_i − z_j‖² = outdeg_i + indeg_j − 2 (A A)_ij` for a 0/1 `A`.
use crate::error::Result;
use crate::samples::Samples;
use ksvd_linalg::CsrMatrix;

/// How the adjacency matrix is transformed before the kernel sees it. The paper does not say;
/// `RowNormalizedSelfLoops` (`D_out⁻¹ (A + I)`) is how AsK-LS stores Cora and the only choice
/// whose entry variance matches the paper's `γ_x = 0.0002` on Cora (REPRODUCTION-NOTES §1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
pub enum GraphInput {
    /// `A` as given.
    Raw,
    /// `D_out⁻¹ A`: rows sum to one where the out-degree is positive.
    RowNormalized,
    /// `A + I` (diagonal set to 1).
    SelfLoops,
    /// `D_out⁻¹ (A + I)`.
    RowNormalizedSelfLoops,
}

impl std::str::FromStr for GraphInput {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "raw" => Ok(GraphInput::Raw),
            "row-normalized" | "row_normalized" => Ok(GraphInput::RowNormalized),
            "self-loops" | "self_loops" => Ok(GraphInput::SelfLoops),
            "row-normalized-self-loops" | "row_normalized_self_loops" => Ok(GraphInput::RowNormalizedSelfLoops),
            other => Err(format!(
                "unknown graph input `{other}` (expected raw, row-normalized, self-loops, row-normalized-self-loops)"
            )),
        }
    }
}

/// The transformed adjacency.
pub fn transform_adjacency(adj: &CsrMatrix, input: GraphInput) -> Result<CsrMatrix> {
    let n = adj.nrows();
    let mut a = match input {
        GraphInput::SelfLoops | GraphInput::RowNormalizedSelfLoops => {
            let mut t: Vec<(usize, usize, f64)> = Vec::with_capacity(adj.nnz() + n);
            for i in 0..n {
                let (idx, val) = adj.row(i);
                t.extend(idx.iter().zip(val).filter(|(&j, _)| j != i).map(|(&j, &v)| (i, j, v)));
                if i < adj.ncols() {
                    t.push((i, i, 1.0));
                }
            }
            CsrMatrix::from_triplets(n, adj.ncols(), t)?
        }
        _ => adj.clone(),
    };
    if matches!(input, GraphInput::RowNormalized | GraphInput::RowNormalizedSelfLoops) {
        let s: Vec<f64> = a
            .row_sums()
            .into_iter()
            .map(|v| if v != 0.0 { 1.0 / v } else { 0.0 })
            .collect();
        a.scale_rows(&s)?;
    }
    Ok(a)
}

/// Row samples (`x_i` = row `i`) and column samples (`z_j` = column `j`) of a transformed
/// adjacency, both sparse.
pub fn graph_samples(adj: &CsrMatrix, input: GraphInput) -> Result<(Samples, Samples)> {
    let a = transform_adjacency(adj, input)?;
    let at = a.transpose();
    Ok((Samples::sparse(a)?, Samples::sparse(at)?))
}

/// The paper's bandwidth rule `γ = k sqrt(M γ_x)` with `γ_x` the variance of all `N × M`
/// entries of the data matrix (zeros included) and `M` its number of columns.
pub fn bandwidth_rule(data: &Samples, k: f64) -> f64 {
    let (n, m) = (data.len() as f64, data.dim() as f64);
    let (sum, sumsq) = match data {
        Samples::Dense(a) => (a.sum(), a.iter().map(|v| v * v).sum::<f64>()),
        Samples::Sparse(a) => (a.data().iter().sum(), a.data().iter().map(|v| v * v).sum::<f64>()),
    };
    let mean = sum / (n * m);
    let var = (sumsq / (n * m) - mean * mean).max(0.0);
    k * (m * var).sqrt()
}
