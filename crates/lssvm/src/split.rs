//! Seeded train/test splits and k-fold cross-validation folds, as index vectors.
//!
//! All randomness comes from the explicit `u64` seed through
//! [`ksvd_linalg::random::rng_from_seed`]; the same seed gives the same split on every platform.
//! Index vectors are returned in increasing order.
use crate::error::{LssvmError, Result};
use ksvd_linalg::random::rng_from_seed;
use rand::seq::SliceRandom;

/// Disjoint training and test index sets whose union is `0..n`, each in increasing order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Split {
    /// Training indices.
    pub train: Vec<usize>,
    /// Test (or validation-fold) indices.
    pub test: Vec<usize>,
}

impl Split {
    fn from_test_mask(test_mask: &[bool]) -> Self {
        let (mut train, mut test) = (Vec::new(), Vec::new());
        for (i, &t) in test_mask.iter().enumerate() {
            if t {
                test.push(i);
            } else {
                train.push(i);
            }
        }
        Split { train, test }
    }
}

/// Test size `ceil(test_fraction * n)` (scikit-learn's rounding), checked to leave both parts
/// non-empty.
fn test_size(n: usize, test_fraction: f64) -> Result<usize> {
    if !(test_fraction > 0.0 && test_fraction < 1.0) {
        return Err(LssvmError::InvalidFraction {
            fraction: test_fraction,
        });
    }
    let n_test = ((test_fraction * n as f64).ceil() as usize).min(n);
    if n_test == 0 || n_test == n {
        return Err(LssvmError::DegenerateSplit {
            n,
            n_train: n - n_test,
            n_test,
        });
    }
    Ok(n_test)
}

/// A uniformly random split of `0..n` with `ceil(test_fraction * n)` test samples.
pub fn train_test_split(n: usize, test_fraction: f64, seed: u64) -> Result<Split> {
    let n_test = test_size(n, test_fraction)?;
    let mut perm: Vec<usize> = (0..n).collect();
    perm.shuffle(&mut rng_from_seed(seed));
    let mut mask = vec![false; n];
    for &i in &perm[..n_test] {
        mask[i] = true;
    }
    Ok(Split::from_test_mask(&mask))
}

/// A stratified split: the same total test size as [`train_test_split`], shared between the
/// classes in proportion to their sizes (floors of `n_c * n_test / n`, the leftover samples going
/// to the largest remainders, ties to the smaller class index), each class sampled uniformly.
pub fn stratified_train_test_split(labels: &[usize], test_fraction: f64, seed: u64) -> Result<Split> {
    let n = labels.len();
    let n_test = test_size(n, test_fraction)?;
    let groups = class_groups(labels);
    let mut quota: Vec<usize> = groups.iter().map(|g| g.len() * n_test / n).collect();
    let mut order: Vec<usize> = (0..groups.len()).collect();
    // Largest remainder first; `sort_by_key` is stable, so ties keep increasing class order.
    order.sort_by_key(|&c| std::cmp::Reverse(groups[c].len() * n_test % n));
    let left = n_test - quota.iter().sum::<usize>();
    for &c in order.iter().take(left) {
        quota[c] += 1;
    }
    let mut rng = rng_from_seed(seed);
    let mut mask = vec![false; n];
    for (mut g, q) in groups.into_iter().zip(quota) {
        g.shuffle(&mut rng);
        for &i in &g[..q] {
            mask[i] = true;
        }
    }
    Ok(Split::from_test_mask(&mask))
}

/// `k` folds of a random permutation of `0..n`: fold `f` is the test part of split `f`, fold
/// sizes differ by at most one (the first `n % k` folds are one larger, as in scikit-learn).
pub fn k_fold(n: usize, k: usize, seed: u64) -> Result<Vec<Split>> {
    check_folds(n, k)?;
    let mut perm: Vec<usize> = (0..n).collect();
    perm.shuffle(&mut rng_from_seed(seed));
    let mut fold_of = vec![0; n];
    let mut start = 0;
    for f in 0..k {
        let size = n / k + usize::from(f < n % k);
        for &i in &perm[start..start + size] {
            fold_of[i] = f;
        }
        start += size;
    }
    Ok(folds(&fold_of, k))
}

/// Stratified `k` folds: each class is shuffled and its samples are dealt to the folds in turn
/// (continuing across classes), so fold sizes and per-class counts per fold differ by at most one.
/// A class with fewer than `k` samples is simply absent from some folds.
pub fn stratified_k_fold(labels: &[usize], k: usize, seed: u64) -> Result<Vec<Split>> {
    let n = labels.len();
    check_folds(n, k)?;
    let mut rng = rng_from_seed(seed);
    let mut fold_of = vec![0; n];
    let mut next = 0;
    for mut g in class_groups(labels) {
        g.shuffle(&mut rng);
        for i in g {
            fold_of[i] = next % k;
            next += 1;
        }
    }
    Ok(folds(&fold_of, k))
}

fn check_folds(n: usize, k: usize) -> Result<()> {
    if k < 2 || k > n {
        return Err(LssvmError::InvalidFolds { k, n });
    }
    Ok(())
}

fn folds(fold_of: &[usize], k: usize) -> Vec<Split> {
    (0..k)
        .map(|f| Split::from_test_mask(&fold_of.iter().map(|&g| g == f).collect::<Vec<_>>()))
        .collect()
}

/// The indices of each class `0..=max(labels)` (empty for classes that do not occur).
fn class_groups(labels: &[usize]) -> Vec<Vec<usize>> {
    let n_classes = labels.iter().max().map_or(0, |&m| m + 1);
    let mut groups = vec![Vec::new(); n_classes];
    for (i, &c) in labels.iter().enumerate() {
        groups[c].push(i);
    }
    groups
}

#[cfg(test)]
// A failed unwrap in a test is a test failure with a backtrace, which is what we want here.
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn assert_partition(s: &Split, n: usize) {
        let mut all: Vec<usize> = s.train.iter().chain(&s.test).copied().collect();
        all.sort_unstable();
        assert_eq!(all, (0..n).collect::<Vec<_>>());
        assert!(s.train.windows(2).all(|w| w[0] < w[1]) && s.test.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn plain_split_is_a_seeded_partition() {
        let s = train_test_split(10, 0.25, 7).unwrap();
        assert_partition(&s, 10);
        assert_eq!(s.test.len(), 3); // ceil(0.25 * 10) = 3
        assert_eq!(s, train_test_split(10, 0.25, 7).unwrap());
        assert_ne!(s, train_test_split(10, 0.25, 8).unwrap());
    }

    #[test]
    fn stratified_split_keeps_proportions() {
        // 60 of class 0, 30 of class 1, 10 of class 2; test 20% = 20 -> quotas 12, 6, 2 exactly.
        let labels: Vec<usize> = (0..100)
            .map(|i| {
                if i < 60 {
                    0
                } else if i < 90 {
                    1
                } else {
                    2
                }
            })
            .collect();
        let s = stratified_train_test_split(&labels, 0.2, 3).unwrap();
        assert_partition(&s, 100);
        let count = |c| s.test.iter().filter(|&&i| labels[i] == c).count();
        assert_eq!((count(0), count(1), count(2)), (12, 6, 2));
        // 7 samples, classes of sizes 4 and 3, test ceil(0.4 * 7) = 3: floors 4*3/7 = 1 (rem 5),
        // 3*3/7 = 1 (rem 2);
        // the one leftover goes to class 0 (larger remainder).
        let labels = [0, 0, 0, 0, 1, 1, 1];
        let s = stratified_train_test_split(&labels, 0.4, 1).unwrap();
        assert_eq!(s.test.iter().filter(|&&i| labels[i] == 0).count(), 2);
        assert_eq!(s.test.len(), 3);
    }

    #[test]
    fn folds_cover_everything_once() {
        for folds in [
            k_fold(23, 10, 5).unwrap(),
            stratified_k_fold(&[0, 1, 2].repeat(8)[..23], 10, 5).unwrap(),
        ] {
            assert_eq!(folds.len(), 10);
            let mut seen = [0; 23];
            for f in &folds {
                assert_partition(f, 23);
                assert!(f.test.len() == 2 || f.test.len() == 3);
                for &i in &f.test {
                    seen[i] += 1;
                }
            }
            assert!(seen.iter().all(|&c| c == 1));
        }
    }

    #[test]
    fn bad_split_arguments() {
        assert!(matches!(
            train_test_split(10, 0.0, 0),
            Err(LssvmError::InvalidFraction { .. })
        ));
        assert!(matches!(
            train_test_split(10, f64::NAN, 0),
            Err(LssvmError::InvalidFraction { .. })
        ));
        assert!(matches!(
            train_test_split(1, 0.5, 0),
            Err(LssvmError::DegenerateSplit {
                n: 1,
                n_train: 0,
                n_test: 1
            })
        ));
        assert!(matches!(
            train_test_split(0, 0.5, 0),
            Err(LssvmError::DegenerateSplit { .. })
        ));
        assert!(matches!(k_fold(5, 1, 0), Err(LssvmError::InvalidFolds { k: 1, n: 5 })));
        assert!(matches!(
            stratified_k_fold(&[0, 1], 3, 0),
            Err(LssvmError::InvalidFolds { k: 3, n: 2 })
        ));
    }
}
