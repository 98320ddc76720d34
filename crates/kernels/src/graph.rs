//! Graph inputs: a directed adjacency `A` (`A_ij ≠ 0` for an arc `i → j`) gives row samples
//! `x_i = A[i, :]` (out-links) and column samples `z_j = A[:, j]` (in-links), so that
//! `x_i . z_j = (A A)_ij` and `‖x_i − z_j‖² = outdeg_i + indeg_j − 2 (A A)_ij` for a 0/1 `A`.
use crate::error::Result;
use crate::samples::Samples;
use ksvd_linalg::{CsrMatrix, Vocabulary};

/// How the adjacency matrix is transformed before the kernel sees it. The paper does not say;
/// `RowNormalizedSelfLoops` (`D_out⁻¹ (A + I)`) is how AsK-LS stores Cora and the only choice
/// whose entry variance matches the paper's `γ_x = 0.0002` on Cora (REPRODUCTION-NOTES §1).
///
/// Names: this type owns them for every front end (the `ksvd` command's `--graph-input`,
/// Python's `graph_input=`, the experiment specs). [`Vocabulary::name`] is the canonical
/// kebab-case name ([`Display`](std::fmt::Display) and serde write it); [`FromStr`](std::str::FromStr) and serde
/// also read the snake_case and British (`normalised`) spellings of [`Vocabulary::names`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
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

impl Vocabulary for GraphInput {
    const WHAT: &'static str = "graph input";
    const ALL: &'static [GraphInput] = &[
        GraphInput::Raw,
        GraphInput::RowNormalized,
        GraphInput::SelfLoops,
        GraphInput::RowNormalizedSelfLoops,
    ];

    /// The canonical kebab-case name first, then snake_case and the British `normalised`
    /// spellings.
    fn names(self) -> &'static [&'static str] {
        match self {
            GraphInput::Raw => &["raw"],
            GraphInput::RowNormalized => &["row-normalized", "row_normalized", "row-normalised", "row_normalised"],
            GraphInput::SelfLoops => &["self-loops", "self_loops"],
            GraphInput::RowNormalizedSelfLoops => &[
                "row-normalized-self-loops",
                "row_normalized_self_loops",
                "row-normalised-self-loops",
                "row_normalised_self_loops",
            ],
        }
    }
}

ksvd_linalg::vocabulary_traits!(GraphInput);
#[cfg(feature = "serde")]
ksvd_linalg::vocabulary_serde!(GraphInput);

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
    bandwidth_rule_from_sums(sum, sumsq, n, m, k)
}

/// [`bandwidth_rule`] from the sum and the sum of squares of the entries of an `n × m` data
/// matrix: what row partitions add up (their sums merge exactly as the whole matrix's).
pub fn bandwidth_rule_from_sums(sum: f64, sumsq: f64, n: f64, m: f64, k: f64) -> f64 {
    let mean = sum / (n * m);
    let var = (sumsq / (n * m) - mean * mean).max(0.0);
    k * (m * var).sqrt()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::GraphInput;
    use ksvd_linalg::Vocabulary;

    #[test]
    fn every_name_parses_to_its_input_and_display_gives_the_canonical_one() {
        let mut seen = std::collections::HashSet::new();
        for &g in GraphInput::ALL {
            assert_eq!(g.to_string(), g.name());
            assert_eq!(g.name().parse::<GraphInput>().unwrap(), g);
            for name in g.names() {
                assert_eq!(name.parse::<GraphInput>().unwrap(), g, "{name}");
                assert!(seen.insert(*name), "{name} names two inputs");
            }
        }
        // The spellings the experiment specs use.
        assert_eq!(
            "row-normalised-self-loops".parse::<GraphInput>().unwrap(),
            GraphInput::RowNormalizedSelfLoops
        );
        assert_eq!(
            "row_normalised".parse::<GraphInput>().unwrap(),
            GraphInput::RowNormalized
        );
    }

    #[test]
    fn unknown_names_are_rejected_with_the_valid_ones() {
        for bad in ["", "Raw", "row normalized", "transposed", "row-normalized "] {
            let err = bad.parse::<GraphInput>().unwrap_err().to_string();
            assert!(err.contains(&format!("`{bad}`")), "{err}");
            for &g in GraphInput::ALL {
                assert!(err.contains(g.name()), "{err}");
            }
        }
    }

    #[cfg(feature = "serde")]
    #[test]
    fn serde_reads_every_name() {
        use serde::de::{value, Deserialize, IntoDeserializer};
        for &g in GraphInput::ALL {
            for name in g.names() {
                let de: value::StrDeserializer<'_, value::Error> = name.into_deserializer();
                assert_eq!(GraphInput::deserialize(de).unwrap(), g, "{name}");
            }
        }
        let de: value::StrDeserializer<'_, value::Error> = "transposed".into_deserializer();
        let err = GraphInput::deserialize(de).unwrap_err().to_string();
        assert!(err.contains("row-normalized-self-loops"), "{err}");
    }
}
