//! Normalised mutual information between two labelings, exactly as scikit-learn computes it.
//!
//! Source: scikit-learn `sklearn/metrics/cluster/_supervised.py` (functions
//! `normalized_mutual_info_score`, `mutual_info_score`, `entropy`, `_generalized_average`; read at
//! commit `0096089245f206bf949e5f1fc4aa1a6d4f3ba7b1`), with its default
//! `average_method="arithmetic"`.
use crate::error::{check_len, check_nonempty, Result};
use std::collections::BTreeMap;

/// Normalised mutual information `NMI(U, V) = I(U; V) / ((H(U) + H(V)) / 2)` (natural logs;
/// scikit-learn's `normalized_mutual_info_score` with `average_method="arithmetic"`), where `U`
/// and `V` are the partitions of `0..n` given by `labels_true` and `labels_pred`, `I` is
/// [`mutual_info`] and `H` is [`entropy`]. Label values are arbitrary identifiers: only the
/// partition matters, and the score is symmetric in its arguments.
///
/// Degenerate cases follow scikit-learn:
/// * both labelings have a single cluster: `1.0` (a perfect, unsplit match);
/// * otherwise, if `I(U; V) == 0` (in particular when exactly one labeling has a single
///   cluster): `0.0`.
///
/// Errors: empty inputs (scikit-learn returns `1.0` for two empty labelings; here that is a
/// [`MetricsError::Empty`](crate::MetricsError::Empty)) and inputs of different lengths.
///
/// ```
/// // scikit-learn docstring values: identical partitions score 1, whatever the label values.
/// assert_eq!(ksvd_metrics::nmi(&[0, 0, 1, 1], &[1, 1, 0, 0])?, 1.0);
/// assert_eq!(ksvd_metrics::nmi(&[0, 0, 0, 0], &[0, 1, 2, 3])?, 0.0);
/// # Ok::<(), ksvd_metrics::MetricsError>(())
/// ```
pub fn nmi(labels_true: &[usize], labels_pred: &[usize]) -> Result<f64> {
    let table = Contingency::new(labels_true, labels_pred)?;
    if table.row_sums.len() == 1 && table.col_sums.len() == 1 {
        return Ok(1.0);
    }
    let mi = table.mutual_info();
    if mi == 0.0 {
        return Ok(0.0);
    }
    let (h_true, h_pred) = (entropy_of_counts(&table.row_sums), entropy_of_counts(&table.col_sums));
    Ok(mi / ((h_true + h_pred) / 2.0))
}

/// Mutual information `I(U; V) = sum_ij (n_ij / N) ln(N n_ij / (a_i b_j))` in nats, where `n_ij`
/// counts the points with true label `i` and predicted label `j`, `a_i = sum_j n_ij`,
/// `b_j = sum_i n_ij` and `N` the number of points (scikit-learn's `mutual_info_score`).
///
/// As in scikit-learn: `0` if either labeling has a single cluster, each term is evaluated as
/// `(n_ij/N)(ln n_ij - ln N) + (n_ij/N)(ln(sum a) + ln(sum b) - ln(a_i b_j))`, terms with absolute
/// value below `f64::EPSILON` are dropped, and the sum is clipped at `0`.
///
/// Errors: empty inputs and inputs of different lengths.
pub fn mutual_info(labels_true: &[usize], labels_pred: &[usize]) -> Result<f64> {
    Ok(Contingency::new(labels_true, labels_pred)?.mutual_info())
}

/// Entropy `H(U) = -sum_i (a_i / N) ln(a_i / N)` of a labeling in nats, evaluated as
/// `-sum_i (a_i / N)(ln a_i - ln N)` (scikit-learn's `entropy`); `0` for a single cluster.
///
/// Errors: an empty labeling (scikit-learn returns `1.0` there).
pub fn entropy(labels: &[usize]) -> Result<f64> {
    check_nonempty("labels", labels.len())?;
    let mut counts: BTreeMap<usize, u64> = BTreeMap::new();
    for &l in labels {
        *counts.entry(l).or_insert(0) += 1;
    }
    Ok(entropy_of_counts(&counts.into_values().collect::<Vec<_>>()))
}

/// `-sum_i (c_i / S)(ln c_i - ln S)` over positive counts `c_i` with `S = sum_i c_i`.
fn entropy_of_counts(counts: &[u64]) -> f64 {
    if counts.len() <= 1 {
        return 0.0;
    }
    let total = counts.iter().sum::<u64>() as f64;
    let log_total = total.ln();
    -counts
        .iter()
        .map(|&c| (c as f64 / total) * ((c as f64).ln() - log_total))
        .sum::<f64>()
}

/// The sparse contingency table of two labelings, classes and clusters in increasing label order.
struct Contingency {
    /// Non-zero cells `((class index, cluster index), count)`, row-major.
    cells: Vec<((usize, usize), u64)>,
    /// Class sizes `a_i`.
    row_sums: Vec<u64>,
    /// Cluster sizes `b_j`.
    col_sums: Vec<u64>,
    /// Number of points `N`.
    n: u64,
}

impl Contingency {
    fn new(labels_true: &[usize], labels_pred: &[usize]) -> Result<Self> {
        check_len("labels_pred (vs labels_true)", labels_true.len(), labels_pred.len())?;
        check_nonempty("labels", labels_true.len())?;
        let index = |labels: &[usize]| -> BTreeMap<usize, usize> {
            let mut map: BTreeMap<usize, usize> = labels.iter().map(|&l| (l, 0)).collect();
            for (k, v) in map.values_mut().enumerate() {
                *v = k;
            }
            map
        };
        let (rows, cols) = (index(labels_true), index(labels_pred));
        let mut cells: BTreeMap<(usize, usize), u64> = BTreeMap::new();
        let (mut row_sums, mut col_sums) = (vec![0u64; rows.len()], vec![0u64; cols.len()]);
        for (t, p) in labels_true.iter().zip(labels_pred) {
            // Every label is a key of its map by construction.
            let (i, j) = (rows[t], cols[p]);
            *cells.entry((i, j)).or_insert(0) += 1;
            row_sums[i] += 1;
            col_sums[j] += 1;
        }
        Ok(Self {
            cells: cells.into_iter().collect(),
            row_sums,
            col_sums,
            n: labels_true.len() as u64,
        })
    }

    fn mutual_info(&self) -> f64 {
        if self.row_sums.len() == 1 || self.col_sums.len() == 1 {
            return 0.0;
        }
        let n = self.n as f64;
        let log_n = n.ln();
        // sum(a) = sum(b) = N, kept as two terms to mirror scikit-learn's evaluation order.
        let (log_sum_a, log_sum_b) = (log_n, log_n);
        let mi: f64 = self
            .cells
            .iter()
            .map(|&((i, j), c)| {
                let c_nm = c as f64 / n;
                let outer = (u128::from(self.row_sums[i]) * u128::from(self.col_sums[j])) as f64;
                let log_outer = -outer.ln() + log_sum_a + log_sum_b;
                let term = c_nm * ((c as f64).ln() - log_n) + c_nm * log_outer;
                if term.abs() < f64::EPSILON {
                    0.0
                } else {
                    term
                }
            })
            .sum();
        mi.max(0.0)
    }
}

#[cfg(test)]
mod tests {
    // A failed unwrap in a test is a test failure with a backtrace, which is what we want here.
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::MetricsError;
    use proptest::prelude::*;

    /// A tolerance of a few ulps per term for sums of `n` logarithms.
    fn tol(n: usize) -> f64 {
        8.0 * f64::EPSILON * (n as f64).max(1.0)
    }

    #[test]
    fn hand_computed_example_matches_sklearn_docstring() {
        // scikit-learn's `mutual_info_score` docstring: U = [0,1,1,0,1,0], V = [0,1,0,0,1,1]
        // gives 0.056... . Contingency: n_00 = |{0,3}| = 2, n_01 = |{5}| = 1, n_10 = |{2}| = 1,
        // n_11 = |{1,4}| = 2; a = b = (3, 3), N = 6.
        // I = 2 * (2/6) ln(6*2/9) + 2 * (1/6) ln(6*1/9) = (2/3) ln(4/3) + (1/3) ln(2/3)
        //   = (5/3) ln 2 - ln 3 = 0.0566330...
        // H(U) = H(V) = ln 2, so NMI = I / ln 2 = 5/3 - log2(3) = 0.0817041...
        let (u, v) = ([0, 1, 1, 0, 1, 0], [0, 1, 0, 0, 1, 1]);
        let mi = mutual_info(&u, &v).unwrap();
        let mi_exact = 5.0 / 3.0 * 2f64.ln() - 3f64.ln();
        assert!((mi - mi_exact).abs() <= tol(4), "{mi} vs {mi_exact}");
        assert!((mi - 0.056).abs() < 1e-3);
        let nmi_exact = 5.0 / 3.0 - 3f64.log2();
        assert!((nmi(&u, &v).unwrap() - nmi_exact).abs() <= tol(4));
    }

    #[test]
    fn unequal_entropies_use_the_arithmetic_mean() {
        // U = [0,0,0,1,1,1], V = [0,0,1,1,2,2]: n_00 = 2, n_01 = 1, n_11 = 1, n_12 = 2;
        // a = (3,3), b = (2,2,2). I = 2 * (2/6) ln(6*2/(3*2)) + 2 * (1/6) ln(6*1/(3*2)) = (2/3) ln 2.
        // H(U) = ln 2, H(V) = ln 3: NMI = (2/3) ln 2 / ((ln 2 + ln 3)/2) = (4/3) ln 2 / ln 6
        //      = 0.5158037...
        let (u, v) = ([0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 2, 2]);
        let expected = 4.0 / 3.0 * 2f64.ln() / 6f64.ln();
        assert!((nmi(&u, &v).unwrap() - expected).abs() <= tol(4));
        assert!((entropy(&v).unwrap() - 3f64.ln()).abs() <= tol(3));
        // Symmetric.
        assert!((nmi(&v, &u).unwrap() - expected).abs() <= tol(4));
    }

    #[test]
    fn matches_sklearn_reference_values() {
        // Reference: scikit-learn 1.9.1 (numpy 2.4.6), `normalized_mutual_info_score(a, b)` and
        // `mutual_info_score(a, b)` run on these exact lists (3 vs 4 clusters, 20 points; then
        // 2 vs 3 clusters of unequal sizes).
        let a = [0, 0, 0, 1, 1, 1, 2, 2, 2, 2, 0, 1, 2, 0, 1, 1, 2, 0, 0, 2];
        let b = [1, 1, 0, 0, 3, 3, 2, 2, 2, 1, 1, 3, 2, 0, 3, 0, 2, 1, 1, 2];
        assert!((nmi(&a, &b).unwrap() - 0.6679073902182513).abs() <= tol(12));
        assert!((mutual_info(&a, &b).unwrap() - 0.8222695296749745).abs() <= tol(12));
        let c = [5, 5, 5, 5, 9, 9, 9, 9, 9, 9, 9, 9];
        let d = [0, 1, 0, 1, 0, 1, 0, 1, 2, 2, 2, 2];
        assert!((nmi(&c, &d).unwrap() - 0.20104130995363315).abs() <= tol(6));
    }

    #[test]
    fn sklearn_degenerate_conventions() {
        // Both single-cluster: perfect match.
        assert_eq!(nmi(&[7, 7, 7], &[2, 2, 2]).unwrap(), 1.0);
        assert_eq!(nmi(&[0], &[5]).unwrap(), 1.0);
        // Exactly one single-cluster: zero mutual information, NMI 0.
        assert_eq!(nmi(&[0, 0, 0, 0], &[0, 1, 2, 3]).unwrap(), 0.0);
        assert_eq!(nmi(&[0, 1, 2, 3], &[1, 1, 1, 1]).unwrap(), 0.0);
        // Independent labelings: I = 0 exactly, NMI 0.
        assert_eq!(nmi(&[0, 0, 1, 1], &[0, 1, 0, 1]).unwrap(), 0.0);
        assert_eq!(entropy(&[3, 3]).unwrap(), 0.0);
    }

    proptest! {
        #[test]
        fn nmi_is_a_symmetric_partition_invariant_in_unit_interval(
            (a, b, perm_a) in (1usize..40).prop_flat_map(|n| (
                proptest::collection::vec(0usize..5, n),
                proptest::collection::vec(0usize..4, n),
                Just(vec![17usize, 3, 99, 0, 8]).prop_shuffle(),
            ))
        ) {
            let v = nmi(&a, &b).unwrap();
            prop_assert!((0.0..=1.0 + tol(a.len())).contains(&v), "NMI {v} outside [0, 1]");
            // Symmetric up to the summation order of the contingency cells.
            prop_assert!((nmi(&b, &a).unwrap() - v).abs() <= tol(a.len()));
            // Renaming the labels (an injective map) leaves the partition and the score unchanged.
            let renamed: Vec<usize> = a.iter().map(|&l| perm_a[l]).collect();
            prop_assert!((nmi(&renamed, &b).unwrap() - v).abs() <= tol(a.len()));
            // NMI(a, a) = 1: I(a; a) = H(a) (or both single-cluster).
            prop_assert!((nmi(&a, &a).unwrap() - 1.0).abs() <= tol(a.len()));
            prop_assert!((nmi(&a, &renamed).unwrap() - 1.0).abs() <= tol(a.len()));
            // mutual_info(a, a) = entropy(a).
            prop_assert!((mutual_info(&a, &a).unwrap() - entropy(&a).unwrap()).abs() <= tol(a.len()));
        }
    }

    #[test]
    fn invalid_inputs_are_typed_errors() {
        assert!(matches!(nmi(&[], &[]), Err(MetricsError::Empty { .. })));
        assert!(matches!(
            nmi(&[0, 1], &[0]),
            Err(MetricsError::LengthMismatch {
                expected: 2,
                found: 1,
                ..
            })
        ));
        assert!(matches!(entropy(&[]), Err(MetricsError::Empty { .. })));
    }
}
