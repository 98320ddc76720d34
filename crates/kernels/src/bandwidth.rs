//! Squared distances and the median-heuristic bandwidth: the one home of `γ² = median ‖x − z‖²`
//! (the paper's rule `γ = k sqrt(M γ_x)` for graph inputs is [`crate::graph::bandwidth_rule`]).
use crate::error::{KernelError, Result};
use ksvd_linalg::dense;
use ksvd_linalg::random::{rng_from_seed, sample_indices};
use ndarray::{Array1, Array2, ArrayView2, ArrayViewMut1, ArrayViewMut2, Axis, Zip};

/// `D_ij = ‖x_i − z_j‖²` (`n × m`, rows of `x` against rows of `z`) by the GEMM identity
/// `‖x'‖² + ‖z'‖² − 2 x'·z'` on inputs shifted by the mean of the `z` rows (distances are
/// shift-invariant; the shift removes the cancellation that large raw feature values, e.g. ~1e6,
/// would otherwise cause), clamped at 0.
pub fn sq_distances(x: ArrayView2<'_, f64>, z: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
    if x.ncols() != z.ncols() {
        return Err(KernelError::DimensionMismatch {
            x_dim: x.ncols(),
            z_dim: z.ncols(),
        });
    }
    let mu = z.mean_axis(Axis(0)).unwrap_or_else(|| Array1::zeros(z.ncols()));
    let xs = &x - &mu;
    let zs = &z - &mu;
    let nx: Array1<f64> = xs.outer_iter().map(|r| r.dot(&r)).collect();
    let nz: Array1<f64> = zs.outer_iter().map(|r| r.dot(&r)).collect();
    let mut d = dense::matmul(xs.view(), zs.t())?;
    sq_distances_from_inner_products(d.view_mut(), nx.as_slice().unwrap_or(&[]), nz.as_slice().unwrap_or(&[]))?;
    Ok(d)
}

/// Squared distances from inner products, in place: `p_ij = x_i·z_j` becomes
/// `‖x_i − z_j‖² = max(0, ‖x_i‖² + ‖z_j‖² − 2 x_i·z_j)`, given `nx_i = ‖x_i‖²` and
/// `nz_j = ‖z_j‖²` (the one place of this identity; rows in parallel).
///
/// # Errors
/// Norms whose lengths do not match `p`.
pub fn sq_distances_from_inner_products(mut p: ArrayViewMut2<'_, f64>, nx: &[f64], nz: &[f64]) -> Result<()> {
    check_norms(&p, nx, nz)?;
    Zip::from(p.outer_iter_mut())
        .and(nx)
        .par_for_each(|row, &a| sq_distance_row(row, a, nz));
    Ok(())
}

/// `p` is `nx.len() × nz.len()` (the squared norms of the rows of X and of Z).
pub(crate) fn check_norms(p: &ArrayViewMut2<'_, f64>, nx: &[f64], nz: &[f64]) -> Result<()> {
    if (nx.len(), nz.len()) != p.dim() {
        return Err(KernelError::Linalg(ksvd_linalg::LinalgError::ShapeMismatch {
            op: "squared distances from inner products (p against the squared norms nx, nz)",
            left: p.dim(),
            right: (nx.len(), nz.len()),
        }));
    }
    Ok(())
}

/// One row of [`sq_distances_from_inner_products`]: `row_j = x·z_j` becomes
/// `max(0, a + nz_j − 2 row_j)`, `a = ‖x‖²` (callers fuse it with their own per-row work).
pub(crate) fn sq_distance_row(mut row: ArrayViewMut1<'_, f64>, a: f64, nz: &[f64]) {
    row.iter_mut()
        .zip(nz)
        .for_each(|(v, &b)| *v = (a + b - 2.0 * *v).max(0.0));
}

/// The median heuristic bandwidth `γ²`: the median of the squared distances `‖x_i − z_j‖²`
/// ([`sq_distances`]) over all pairs of a seeded subsample of at most `max_rows` rows of `x` and
/// all rows of `z`, excluding exact zeros (e.g. a sample paired with itself). For an even count
/// the upper of the two middle values. An error when no pair of distinct samples exists.
pub fn median_sq_distance(x: ArrayView2<'_, f64>, z: ArrayView2<'_, f64>, max_rows: usize, seed: u64) -> Result<f64> {
    let rows = sample_indices(&mut rng_from_seed(seed), x.nrows(), max_rows.max(1));
    let xs = x.select(Axis(0), &rows);
    median_positive(sq_distances(xs.view(), z)?)
}

/// The statistic of the median heuristic on squared distances computed elsewhere (e.g. the
/// landmark pairs of the out-of-core method): the median of the positive values, exact zeros
/// (a sample paired with itself) excluded, the upper of the two middle values for an even
/// count. An error when no value is positive.
pub fn median_positive(values: impl IntoIterator<Item = f64>) -> Result<f64> {
    let mut d: Vec<f64> = values.into_iter().filter(|&v| v > 0.0).collect();
    if d.is_empty() {
        return Err(KernelError::InvalidParameter {
            name: "bandwidth",
            value: 0.0,
            reason: "the median heuristic needs at least one pair of distinct samples",
        });
    }
    let mid = d.len() / 2;
    d.select_nth_unstable_by(mid, f64::total_cmp);
    Ok(d[mid])
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use ksvd_linalg::random::gaussian_matrix;
    use ndarray::array;

    #[test]
    fn shifted_gemm_distances_match_the_direct_sum() {
        // Raw-scale inputs (offset 1e6, spread 1e2): without the shift the identity would lose
        // about eps * 1e12 in absolute terms; with it the error is eps * (spread² d).
        let mut rng = rng_from_seed(8);
        let x = gaussian_matrix(&mut rng, 9, 5) * 100.0 + 1e6;
        let z = gaussian_matrix(&mut rng, 6, 5) * 100.0 + 1e6;
        let a = sq_distances(x.view(), z.view()).unwrap();
        let b = Array2::from_shape_fn((9, 6), |(i, j)| {
            let e = &x.row(i) - &z.row(j);
            e.dot(&e)
        });
        let scale = b.iter().fold(0.0f64, |m, v| m.max(*v));
        assert!((&a - &b).iter().all(|d| d.abs() <= 64.0 * f64::EPSILON * scale));
        assert!(matches!(
            sq_distances(x.view(), z.slice(ndarray::s![.., ..4])),
            Err(KernelError::DimensionMismatch { .. })
        ));
    }

    #[test]
    fn median_of_positive_values_by_hand() {
        assert_eq!(median_positive([3.0, 0.0, 1.0, 2.0]).unwrap(), 2.0);
        assert_eq!(median_positive([4.0, 1.0, 3.0, 2.0, 0.0, 0.0]).unwrap(), 3.0);
        assert!(matches!(
            median_positive([0.0, 0.0]),
            Err(KernelError::InvalidParameter { name: "bandwidth", .. })
        ));
        assert!(median_positive(std::iter::empty()).is_err());
    }

    #[test]
    fn median_heuristic_by_hand() {
        let x = array![[0.0], [1.0], [3.0]];
        // Distances² to z = {0}: 0 (dropped), 1, 9 -> the upper median of [1, 9] is 9.
        assert_eq!(median_sq_distance(x.view(), array![[0.0]].view(), 10, 0).unwrap(), 9.0);
        // Pairs of x with itself: 1, 9, 4 (each twice) -> sorted [1,1,4,4,9,9], element 3 -> 4.
        assert_eq!(median_sq_distance(x.view(), x.view(), 10, 0).unwrap(), 4.0);
        // One distinct point only: no bandwidth.
        let same = array![[2.0], [2.0]];
        assert!(matches!(
            median_sq_distance(same.view(), same.view(), 10, 0),
            Err(KernelError::InvalidParameter { name: "bandwidth", .. })
        ));
    }
}
