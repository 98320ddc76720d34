//! PMI coherence of term clusters, exactly as BCOT (Fettal, Labiod & Nadif, 2022) computes it.
//!
//! Source: github.com/chakib401/BCOT, `bcot/metrics.py`, functions `pmi` and
//! `average_pmi_per_cluster` (commit `2acc1f7e3ce4bab18dd00dbc63097b54fc2c7198`), called in
//! `term_clustering.ipynb` as `average_pmi_per_cluster(features.T, W)` with `features` the raw
//! `fea` document x term matrix of the dataset's `.mat` file and `W` the term labels.
use crate::error::{BiclusterError, Result};
use ksvd_linalg::CsrMatrix;
use std::collections::BTreeMap;

/// Rows of `C = X^T X` materialised at once: bounds the memory of a block to
/// `BLOCK_ENTRIES` (i.e. 64 MiB of values) even when the co-occurrence matrix is dense.
const BLOCK_ENTRIES: usize = 1 << 23;

/// Coherence of one term cluster (see [`coherence`]).
#[derive(Debug, Clone, PartialEq)]
pub struct ClusterCoherence {
    /// The cluster's label, as given.
    pub label: usize,
    /// Number of terms in the cluster, `|c|`.
    pub size: usize,
    /// Mean PMI over the `|c|^2` ordered pairs of terms of the cluster (diagonal included).
    pub intra: f64,
    /// Mean PMI over the `|c| (m - |c|)` pairs (term in the cluster, term outside it).
    pub inter: f64,
}

/// The BCOT coherence of a term clustering and its per-cluster parts.
#[derive(Debug, Clone, PartialEq)]
pub struct Coherence {
    /// `sum_c (|c| / m) (intra_c - inter_c)`.
    pub score: f64,
    /// One entry per non-empty cluster, in increasing label order.
    pub clusters: Vec<ClusterCoherence>,
}

/// Coherence of the term clusters `term_labels` (one label per column of `doc_term`), as BCOT
/// computes it.
///
/// With `X = doc_term` (`n` documents x `m` terms, values used as given) BCOT defines
///
/// * the co-occurrence matrix `C = X^T X` (`m x m`, `C_ij = sum_d X_di X_dj`, diagonal included);
/// * its margins `r_i = sum_j C_ij` (row sums; column sums are equal since `C` is symmetric) and
///   total `T = sum_i r_i`;
/// * `PMI_ij = ln(C_ij / (r_i r_j / T))`, set to `0` wherever this is not finite — in particular
///   `PMI_ij = 0` for every pair that never co-occurs (`C_ij = 0`), not `-inf`. Negative values
///   are kept (BCOT calls `pmi(..., positive=False)`);
/// * for every non-empty cluster `c` (size `|c|`): `intra_c` = mean of `PMI_ij` over all
///   `i, j in c` (`|c|^2` entries, including `i = j`), `inter_c` = mean of `PMI_ij` over
///   `i in c, j not in c` (`|c| (m - |c|)` entries);
/// * `coherence = sum_c (|c| / m) (intra_c - inter_c)`.
///
/// So the description "mean intra-cluster PMI minus mean inter-cluster PMI, weighted by cluster
/// size" is right, with these precisions: the weights `|c| / m` sum to one; the PMI is that of
/// the (weighted) co-occurrence matrix `X^T X` with its own margins — not document-frequency PMI
/// `ln(N n_ij / (n_i n_j))` unless one thinks of `X` as binary and accepts `r_i` in place of
/// document frequencies; zero co-occurrences enter the means as 0; self-pairs `(i, i)` are part
/// of `intra_c`; there is no top-N term selection (all terms of a cluster count).
///
/// To reproduce BCOT, pass the same matrix it passes (the dataset's raw `fea`, no TF-IDF or
/// binarisation; for binary co-occurrence use `doc_term.map_values(|v| (v != 0.0) as u8 as f64)`).
/// `X` is expected non-negative; with negative entries BCOT's NaN-to-zero rule is reproduced.
///
/// Computation: `C` is formed block by block of term rows with sparse products
/// (`X^T[rows, :] X`), each block holding at most `2^23` values, and never as a dense `m x m`
/// matrix; only its non-zero entries contribute. The margins are computed as `r = X^T (X 1)`
/// without forming `C`. Results agree with BCOT's numpy code evaluated densely (as the scipy of
/// 2022 did for `C / expected`) up to floating-point summation order. (With scipy 1.17 that
/// division returns a sparse `coo_matrix` and BCOT's `np.log` step raises a `TypeError`, so its
/// code no longer runs as written on sparse input; the definition is unaffected.)
///
/// Errors: an empty matrix, `term_labels.len() != m`, or a single term cluster (BCOT's
/// `inter_c` would be a mean over no pairs, i.e. NaN).
pub fn coherence(doc_term: &CsrMatrix, term_labels: &[usize]) -> Result<Coherence> {
    let block_rows = (BLOCK_ENTRIES / doc_term.ncols().max(1)).max(1);
    coherence_blocked(doc_term, term_labels, block_rows)
}

/// [`coherence`] with an explicit number of term rows of `C` per block (tests use small blocks).
pub(crate) fn coherence_blocked(doc_term: &CsrMatrix, term_labels: &[usize], block_rows: usize) -> Result<Coherence> {
    let (n, m) = doc_term.shape();
    if n == 0 || m == 0 {
        return Err(BiclusterError::Empty {
            what: "document-term matrix",
            rows: n,
            cols: m,
        });
    }
    if term_labels.len() != m {
        return Err(BiclusterError::LengthMismatch {
            what: "term labels vs document-term columns",
            left: term_labels.len(),
            right: m,
        });
    }
    // Dense cluster indices in increasing label order (numpy's `np.unique`).
    let mut index: BTreeMap<usize, usize> = term_labels.iter().map(|&l| (l, 0)).collect();
    for (k, v) in index.values_mut().enumerate() {
        *v = k;
    }
    if index.len() < 2 {
        return Err(BiclusterError::Undefined {
            what: "coherence",
            reason: format!("all {m} terms are in one cluster, so there are no inter-cluster pairs"),
        });
    }
    let cluster: Vec<usize> = term_labels.iter().map(|l| index[l]).collect();
    let mut sizes = vec![0usize; index.len()];
    for &c in &cluster {
        sizes[c] += 1;
    }

    // Margins of C without forming it: r = X^T (X 1).
    let doc_sums = doc_term.row_sums();
    let mut r = vec![0.0f64; m];
    for (d, &s) in doc_sums.iter().enumerate() {
        let (idx, val) = doc_term.row(d);
        for (&j, &v) in idx.iter().zip(val) {
            r[j] += v * s;
        }
    }
    let total: f64 = r.iter().sum();

    // Sums of PMI over (i in c, j in c) and (i in c, j not in c), over the non-zeros of C.
    let (mut intra, mut inter) = (vec![0.0f64; sizes.len()], vec![0.0f64; sizes.len()]);
    let xt = doc_term.transpose();
    let mut start = 0;
    while start < m {
        let end = (start + block_rows).min(m);
        let rows: Vec<usize> = (start..end).collect();
        let block = xt.select_rows(&rows)?.matmul_sparse(doc_term)?;
        for (local, i) in (start..end).enumerate() {
            let ci = cluster[i];
            let (idx, val) = block.row(local);
            for (&j, &c_ij) in idx.iter().zip(val) {
                let p = pmi_entry(c_ij, r[i], r[j], total);
                if cluster[j] == ci {
                    intra[ci] += p;
                } else {
                    inter[ci] += p;
                }
            }
        }
        start = end;
    }

    let mut clusters = Vec::with_capacity(sizes.len());
    let mut score = 0.0;
    for ((&label, &k), &size) in index.iter().zip(&sizes) {
        let s = size as f64;
        let intra_mean = intra[k] / (s * s);
        let inter_mean = inter[k] / (s * (m - size) as f64);
        score += (intra_mean - inter_mean) * s / m as f64;
        clusters.push(ClusterCoherence {
            label,
            size,
            intra: intra_mean,
            inter: inter_mean,
        });
    }
    Ok(Coherence { score, clusters })
}

/// BCOT's `pmi(df, positive=False)` for one entry: `expected = r_i * r_j / T`,
/// `ln(C_ij / expected)`, and 0 where that is NaN or infinite (same order of operations as numpy).
fn pmi_entry(c_ij: f64, r_i: f64, r_j: f64, total: f64) -> f64 {
    let expected = r_i * r_j / total;
    let v = (c_ij / expected).ln();
    if v.is_finite() {
        v
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;
    use proptest::prelude::*;

    fn eps_tol(terms: usize) -> f64 {
        // A handful of ulps per summed PMI term (values are O(1)).
        16.0 * f64::EPSILON * (terms as f64).max(1.0)
    }

    #[test]
    fn hand_computed_binary_example() {
        // X (3 documents x 3 terms):      C = X^T X:       r = (4, 4, 1), T = 9
        //   d0: 1 1 0                       2 2 0
        //   d1: 1 1 0                       2 2 0
        //   d2: 0 0 1                       0 0 1
        // PMI_ij = ln(C_ij T / (r_i r_j)): the four entries of the {t0, t1} block are
        // ln(2*9/16) = ln(9/8); PMI_22 = ln(1*9/1) = ln 9; every other entry has C_ij = 0 -> 0.
        let x = CsrMatrix::from_dense(array![[1.0, 1.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 1.0]].view()).unwrap();
        let (a, b) = ((9.0f64 / 8.0).ln(), 9f64.ln());

        // Planted labels {t0, t1}, {t2}: intra = (ln 9/8, ln 9), inter = (0, 0).
        // Coherence = (2/3) ln(9/8) + (1/3) ln 9 = 0.8109302...
        let good = coherence(&x, &[0, 0, 1]).unwrap();
        let expected = 2.0 / 3.0 * a + b / 3.0;
        assert!(
            (good.score - expected).abs() <= eps_tol(9),
            "{} vs {expected}",
            good.score
        );
        assert!((good.clusters[0].intra - a).abs() <= eps_tol(4));
        assert_eq!((good.clusters[0].inter, good.clusters[1].inter), (0.0, 0.0));
        assert_eq!((good.clusters[0].size, good.clusters[1].size), (2, 1));

        // Mixed labels {t0, t2}, {t1}: cluster {t0,t2} has intra = (a + 0 + 0 + b)/4 and
        // inter = (PMI_01 + PMI_21)/2 = a/2; cluster {t1} has intra = a, inter = (a + 0)/2.
        // Coherence = (2/3)((a + b)/4 - a/2) + (1/3)(a - a/2) = b/6 = 0.3662040...
        let mixed = coherence(&x, &[5, 9, 5]).unwrap();
        assert!(
            (mixed.score - b / 6.0).abs() <= eps_tol(9),
            "{} vs {}",
            mixed.score,
            b / 6.0
        );
        assert_eq!(mixed.clusters.iter().map(|c| c.label).collect::<Vec<_>>(), vec![5, 9]);
        assert!(good.score > mixed.score);
    }

    #[test]
    fn hand_computed_weighted_example() {
        // X = [[2, 0], [1, 1]]: C = [[5, 1], [1, 1]], r = (6, 2), T = 8.
        // PMI_00 = ln(5*8/36) = ln(10/9), PMI_01 = PMI_10 = ln(1*8/12) = ln(2/3) (negative, kept),
        // PMI_11 = ln(1*8/4) = ln 2. Labels {t0}, {t1}:
        // coherence = (1/2)(ln(10/9) - ln(2/3)) + (1/2)(ln 2 - ln(2/3))
        //           = (1/2)(ln(5/3) + ln 3) = (1/2) ln 5 = 0.8047189...
        let x = CsrMatrix::from_dense(array![[2.0, 0.0], [1.0, 1.0]].view()).unwrap();
        let c = coherence(&x, &[0, 1]).unwrap();
        assert!((c.score - 0.5 * 5f64.ln()).abs() <= eps_tol(4), "{}", c.score);
        assert!((c.clusters[0].inter - (2.0f64 / 3.0).ln()).abs() <= eps_tol(1));
    }

    #[test]
    fn matches_bcot_numpy_reference() {
        // Reference: BCOT's `average_pmi_per_cluster(X.T, labels)` (bcot/metrics.py at 2acc1f7)
        // evaluated with dense numpy 2.4.6 arrays on this 5 x 6 TF-IDF-like matrix:
        // 1.2102966644843003.
        let x = array![
            [0.5, 0.0, 1.2, 0.0, 0.0, 0.3],
            [0.7, 0.2, 0.9, 0.0, 0.0, 0.0],
            [0.0, 0.0, 0.0, 1.1, 0.4, 0.0],
            [0.0, 0.0, 0.1, 0.8, 0.6, 0.0],
            [0.3, 0.0, 0.0, 0.0, 0.9, 0.2],
        ];
        let c = coherence(&CsrMatrix::from_dense(x.view()).unwrap(), &[0, 0, 0, 1, 1, 2]).unwrap();
        assert!((c.score - 1.2102966644843003).abs() <= eps_tol(36), "{}", c.score);
        assert!((bcot_dense_reference(&x, &[0, 0, 0, 1, 1, 2]) - 1.2102966644843003).abs() <= eps_tol(36));
    }

    #[test]
    fn unused_terms_and_empty_documents_contribute_zero() {
        // Term 2 never occurs (r_2 = 0, so 0/0 -> NaN -> 0); document 2 is empty.
        // Non-zero C: C_00 = 1, C_01 = C_10 = 1, C_11 = 2 (docs 0, 1 = [1,1,0], [0,1,0]).
        // r = (2, 3, 0), T = 5. Labels {t0}, {t1, t2}:
        //   cluster 0: intra = PMI_00 = ln(1*5/4); inter = (PMI_01 + PMI_02)/2 = ln(5/6)/2.
        //   cluster 1: intra = (PMI_11 + 0 + 0 + 0)/4 = ln(2*5/9)/4; inter = (PMI_10 + 0)/2.
        let x = CsrMatrix::from_dense(array![[1.0, 1.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 0.0]].view()).unwrap();
        let c = coherence(&x, &[0, 1, 1]).unwrap();
        let (p00, p01, p11) = ((5.0f64 / 4.0).ln(), (5.0f64 / 6.0).ln(), (10.0f64 / 9.0).ln());
        let expected = (p00 - p01 / 2.0) / 3.0 + (p11 / 4.0 - p01 / 2.0) * 2.0 / 3.0;
        assert!((c.score - expected).abs() <= eps_tol(9), "{} vs {expected}", c.score);
    }

    /// A line-by-line transcription of BCOT's numpy code on a dense `C` (the oracle).
    fn bcot_dense_reference(x: &ndarray::Array2<f64>, labels: &[usize]) -> f64 {
        let c = x.t().dot(x);
        let m = c.nrows();
        let col_totals = c.sum_axis(ndarray::Axis(0));
        let total = col_totals.sum();
        let row_totals = c.sum_axis(ndarray::Axis(1));
        let pmi = ndarray::Array2::from_shape_fn((m, m), |(i, j)| {
            let v = (c[[i, j]] / (row_totals[i] * col_totals[j] / total)).ln();
            if v.is_finite() {
                v
            } else {
                0.0
            }
        });
        let mut uniq: Vec<usize> = labels.to_vec();
        uniq.sort_unstable();
        uniq.dedup();
        let mut values = 0.0;
        for &l in &uniq {
            let inside: Vec<usize> = (0..m).filter(|&i| labels[i] == l).collect();
            let outside: Vec<usize> = (0..m).filter(|&i| labels[i] != l).collect();
            let mean = |rows: &[usize], cols: &[usize]| {
                rows.iter()
                    .flat_map(|&i| cols.iter().map(move |&j| (i, j)))
                    .map(|(i, j)| pmi[[i, j]])
                    .sum::<f64>()
                    / (rows.len() * cols.len()) as f64
            };
            values += (mean(&inside, &inside) - mean(&inside, &outside)) * inside.len() as f64 / m as f64;
        }
        values
    }

    proptest! {
        #[test]
        fn blocked_sparse_matches_dense_bcot(
            (n, m, cells, labels, block) in (1usize..7, 2usize..9).prop_flat_map(|(n, m)| (
                Just(n),
                Just(m),
                proptest::collection::vec(prop_oneof![
                    3 => Just(0.0),
                    1 => Just(1.0),
                    1 => 0.1f64..3.0,
                ], n * m),
                proptest::collection::vec(0usize..3, m),
                1usize..m + 1,
            ))
        ) {
            let mut uniq = labels.clone();
            uniq.sort_unstable();
            uniq.dedup();
            prop_assume!(uniq.len() >= 2);
            let x = ndarray::Array2::from_shape_vec((n, m), cells).unwrap();
            let sparse = CsrMatrix::from_dense(x.view()).unwrap();
            let got = coherence_blocked(&sparse, &labels, block).unwrap();
            let want = bcot_dense_reference(&x, &labels);
            // |PMI| <= ln of the largest ratio; sums run over m^2 terms.
            let scale = 1.0 + got.clusters.iter().map(|c| c.intra.abs() + c.inter.abs()).sum::<f64>();
            prop_assert!((got.score - want).abs() <= 64.0 * f64::EPSILON * (m * m) as f64 * scale,
                "blocked {} vs dense {}", got.score, want);
            // The weights |c|/m sum to one and the per-cluster parts reproduce the score.
            let recomposed: f64 = got.clusters.iter().map(|c| (c.intra - c.inter) * c.size as f64 / m as f64).sum();
            prop_assert!((recomposed - got.score).abs() <= 8.0 * f64::EPSILON * scale);
            prop_assert_eq!(got.clusters.iter().map(|c| c.size).sum::<usize>(), m);
        }
    }

    #[test]
    fn invalid_inputs_are_typed_errors() {
        let x = CsrMatrix::from_dense(array![[1.0, 0.0], [0.0, 1.0]].view()).unwrap();
        assert!(matches!(
            coherence(&x, &[0]),
            Err(BiclusterError::LengthMismatch { left: 1, right: 2, .. })
        ));
        assert!(matches!(coherence(&x, &[3, 3]), Err(BiclusterError::Undefined { .. })));
        let empty = CsrMatrix::from_triplets(0, 2, Vec::new()).unwrap();
        assert!(matches!(coherence(&empty, &[0, 1]), Err(BiclusterError::Empty { .. })));
    }
}
