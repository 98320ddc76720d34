//! Directed link prediction: held-out arcs against sampled non-arcs, scored by AUC and average
//! precision (DiGAE's benchmark, Kollias et al., AAAI 2022, "task 1"; also how a link-prediction
//! model's settings are chosen from the graph alone, without node labels).
//!
//! [`ArcSplit::draw`] follows the reference code's `general_train_test_split_edges`: a random
//! permutation of the arcs, the first `⌊val · |E|⌋` for validation, the next `⌊test · |E|⌋` for
//! testing, the rest for training; as many ordered pairs `(i, j)` that are not arcs of the whole
//! graph (self-pairs allowed, as there), drawn uniformly without repetition, as validation and
//! test negatives. [`link_scores`] scores pairs of two-sided embeddings by `⟨s_i, t_j⟩`.
use std::collections::HashSet;

use ksvd_linalg::random::rng_from_seed;
use ksvd_linalg::CsrMatrix;
use ndarray::ArrayView2;
use rand::seq::SliceRandom;
use rand::Rng;

use crate::error::{ensure, GraphTaskError, Result};

/// Ordered node pairs `(source, target)`.
pub type Pairs = Vec<(usize, usize)>;

/// The arcs of a graph split for link prediction ([`ArcSplit::draw`]).
#[derive(Debug, Clone, PartialEq)]
pub struct ArcSplit {
    /// The training graph: the arcs neither held out for validation nor for testing.
    pub train: CsrMatrix,
    /// Validation arcs and as many validation non-arcs.
    pub val: (Pairs, Pairs),
    /// Test arcs and as many test non-arcs.
    pub test: (Pairs, Pairs),
}

impl ArcSplit {
    /// Holds out `val_fraction` and `test_fraction` of the arcs of `adjacency` (`A[src, dst]
    /// != 0`), with as many sampled non-arcs each, all from `seed`.
    ///
    /// Errors: a non-square adjacency, fractions outside `[0, 1)` or summing to 1 or more, no
    /// arc held out where a fraction asks for some, fewer non-arcs than needed.
    pub fn draw(adjacency: &CsrMatrix, val_fraction: f64, test_fraction: f64, seed: u64) -> Result<ArcSplit> {
        let n = adjacency.nrows();
        if adjacency.ncols() != n {
            return Err(GraphTaskError::NotSquare {
                nrows: n,
                ncols: adjacency.ncols(),
            });
        }
        for (field, f) in [("val_fraction", val_fraction), ("test_fraction", test_fraction)] {
            ensure((0.0..1.0).contains(&f), field, f, "must lie in [0, 1)")?;
        }
        ensure(
            val_fraction + test_fraction < 1.0,
            "val_fraction + test_fraction",
            val_fraction + test_fraction,
            "must be below 1 (arcs must remain to train on)",
        )?;
        let mut arcs: Pairs = adjacency
            .entries()
            .filter(|&(_, _, v)| v != 0.0)
            .map(|(i, j, _)| (i, j))
            .collect();
        let m = arcs.len();
        let n_v = (val_fraction * m as f64).floor() as usize;
        let n_t = (test_fraction * m as f64).floor() as usize;
        for (field, f, k) in [
            ("val_fraction", val_fraction, n_v),
            ("test_fraction", test_fraction, n_t),
        ] {
            ensure(
                f == 0.0 || k > 0,
                field,
                f,
                &format!("holds out no arc of the {m} arcs"),
            )?;
        }
        let free = (n * n).saturating_sub(m);
        if free < n_v + n_t {
            return Err(GraphTaskError::TooFewSamples {
                what: "non-arcs to sample as negatives",
                found: free,
                needed: n_v + n_t,
            });
        }
        let mut rng = rng_from_seed(seed);
        arcs.shuffle(&mut rng);
        let present: HashSet<(usize, usize)> = arcs.iter().copied().collect();
        let mut drawn = HashSet::with_capacity(n_v + n_t);
        let mut negatives = Vec::with_capacity(n_v + n_t);
        while negatives.len() < n_v + n_t {
            let p = (rng.gen_range(0..n), rng.gen_range(0..n));
            if !present.contains(&p) && drawn.insert(p) {
                negatives.push(p);
            }
        }
        let train = CsrMatrix::from_triplets(n, n, arcs[n_v + n_t..].iter().map(|&(i, j)| (i, j, 1.0)))?;
        Ok(ArcSplit {
            train,
            val: (arcs[..n_v].to_vec(), negatives[..n_v].to_vec()),
            test: (arcs[n_v..n_v + n_t].to_vec(), negatives[n_v..].to_vec()),
        })
    }
}

/// `⟨source_i, target_j⟩` of every pair (the inner-product decoder of HOPE and DiGAE).
///
/// Errors: embeddings of different shapes, a node index beyond them.
pub fn link_scores(
    source: ArrayView2<'_, f64>,
    target: ArrayView2<'_, f64>,
    pairs: &[(usize, usize)],
) -> Result<Vec<f64>> {
    if source.ncols() != target.ncols() {
        return Err(GraphTaskError::SideMismatch {
            source_dim: source.ncols(),
            target_dim: target.ncols(),
        });
    }
    let n = source.nrows().min(target.nrows());
    if let Some(&(i, j)) = pairs.iter().find(|&&(i, j)| i >= n || j >= n) {
        return Err(GraphTaskError::NodeCountMismatch {
            what: "a scored pair's node",
            expected: i.max(j) + 1,
            found: n,
        });
    }
    Ok(pairs.iter().map(|&(i, j)| source.row(i).dot(&target.row(j))).collect())
}

/// AUC and average precision of the scores of positive and negative pairs
/// ([`ksvd_metrics::auroc`], [`ksvd_metrics::average_precision`]).
///
/// Errors: no positives or no negatives, a non-finite score.
pub fn auc_ap(positive: &[f64], negative: &[f64]) -> Result<(f64, f64)> {
    let scores: Vec<f64> = positive.iter().chain(negative).copied().collect();
    let labels: Vec<bool> = (0..scores.len()).map(|k| k < positive.len()).collect();
    Ok((
        ksvd_metrics::auroc(&scores, &labels)?,
        ksvd_metrics::average_precision(&scores, &labels)?,
    ))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use ndarray::array;

    fn ring(n: usize) -> CsrMatrix {
        CsrMatrix::from_triplets(
            n,
            n,
            (0..n).flat_map(|i| [(i, (i + 1) % n, 1.0), (i, (i + 3) % n, 1.0)]),
        )
        .unwrap()
    }

    /// Every arc lands in exactly one part; negatives are non-arcs, distinct, as many as the
    /// held-out arcs; the same seed gives the same split.
    #[test]
    fn the_split_partitions_the_arcs() {
        let a = ring(50);
        let s = ArcSplit::draw(&a, 0.05, 0.1, 7).unwrap();
        assert_eq!((s.val.0.len(), s.test.0.len()), (5, 10));
        assert_eq!(s.train.nnz(), 100 - 15);
        let mut all: Vec<(usize, usize)> = s
            .train
            .entries()
            .map(|(i, j, _)| (i, j))
            .chain(s.val.0.iter().copied())
            .chain(s.test.0.iter().copied())
            .collect();
        all.sort_unstable();
        let mut want: Vec<(usize, usize)> = (0..50).flat_map(|i| [(i, (i + 1) % 50), (i, (i + 3) % 50)]).collect();
        want.sort_unstable();
        assert_eq!(all, want);
        let negs: HashSet<_> = s.val.1.iter().chain(&s.test.1).copied().collect();
        assert_eq!(negs.len(), 15);
        assert!(negs.iter().all(|&(i, j)| a.get(i, j).unwrap_or(0.0) == 0.0));
        assert_eq!(s, ArcSplit::draw(&a, 0.05, 0.1, 7).unwrap());
        assert_ne!(s, ArcSplit::draw(&a, 0.05, 0.1, 8).unwrap());
        // Validation only (DiGAE's selection): no test pairs, the rest trains.
        let v = ArcSplit::draw(&a, 0.1, 0.0, 3).unwrap();
        assert_eq!(
            (v.val.0.len(), v.val.1.len(), v.test.0.len(), v.train.nnz()),
            (10, 10, 0, 90)
        );
        // Explicitly stored zeros are not arcs: never held out, never in the training graph.
        let mut t: Vec<(usize, usize, f64)> = (0..20).map(|i| (i, (i + 1) % 20, 1.0)).collect();
        t.extend((0..20).map(|i| (i, (i + 5) % 20, 0.0)));
        let z = CsrMatrix::from_triplets(20, 20, t).unwrap();
        let zs = ArcSplit::draw(&z, 0.1, 0.1, 1).unwrap();
        assert_eq!((zs.val.0.len() + zs.test.0.len(), zs.train.nnz()), (4, 16));
        assert!(zs.val.0.iter().chain(&zs.test.0).all(|&(i, j)| j == (i + 1) % 20));
    }

    #[test]
    fn bad_splits_are_typed_errors() {
        let a = ring(10);
        for (v, t) in [(-0.1, 0.1), (0.5, 0.5), (f64::NAN, 0.1), (0.01, 0.1)] {
            assert!(
                matches!(ArcSplit::draw(&a, v, t, 0), Err(GraphTaskError::InvalidConfig { .. })),
                "{v} {t}"
            );
        }
        // A complete graph has no non-arcs to sample.
        let full = CsrMatrix::from_triplets(3, 3, (0..9).map(|k| (k / 3, k % 3, 1.0))).unwrap();
        assert!(matches!(
            ArcSplit::draw(&full, 0.2, 0.2, 0),
            Err(GraphTaskError::TooFewSamples { .. })
        ));
    }

    /// Scores are the inner products; AUC and AP of a perfect and a reversed ranking.
    #[test]
    fn scores_and_metrics() {
        let s = array![[1.0, 0.0], [0.0, 1.0]];
        let t = array![[2.0, 0.0], [0.0, 3.0]];
        assert_eq!(
            link_scores(s.view(), t.view(), &[(0, 0), (1, 1), (0, 1)]).unwrap(),
            vec![2.0, 3.0, 0.0]
        );
        assert!(link_scores(s.view(), t.view(), &[(2, 0)]).is_err());
        let wide = array![[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]];
        assert!(matches!(
            link_scores(s.view(), wide.view(), &[(0, 0)]),
            Err(GraphTaskError::SideMismatch { .. })
        ));
        assert_eq!(auc_ap(&[3.0, 2.0], &[1.0, 0.0]).unwrap(), (1.0, 1.0));
        let (auc, ap) = auc_ap(&[0.0, 1.0], &[2.0, 3.0]).unwrap();
        assert_eq!(auc, 0.0);
        assert!((ap - (0.5 / 3.0 + 0.5 * 0.5)).abs() < 1e-15);
        assert!(auc_ap(&[], &[1.0]).is_err());
    }
}
