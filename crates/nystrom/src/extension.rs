//! The building blocks every Nyström fit is made of, public so that fits which gather their
//! landmark blocks elsewhere (out of core, in several passes) run the same arithmetic:
//!
//! * [`landmark_scales`]: the importance normalisers `D_r`, `D_c` of the sampled rows and columns;
//! * [`scale_block`]: the scaled landmark block `D_r G[I, J] D_c`;
//! * [`numerical_rank`]: how many singular values or eigenvalues lie above rounding;
//! * [`row_coefficients`], [`col_coefficients`]: from the block's SVD `D_r G[I, J] D_c = U S Vᵀ`
//!   to the extension coefficients `D_c V S⁻¹` and `D_r U S⁻¹` of eq. 11
//!   (`Ũ ∝ G[:, J] D_c V S⁻¹`, `Ṽ ∝ G[I, :]ᵀ D_r U S⁻¹`);
//! * [`landmark_eigen`]: the eigendecomposition `K[L, L] = Q Λ Qᵀ` of a symmetric landmark block;
//! * [`eigen_coefficients`]: from it to the symmetric extension coefficients `Q_r Λ_r⁻¹`
//!   (`Ũ ∝ K[:, L] Q_r Λ_r⁻¹`).
use ksvd_linalg::{dense, LinalgError, Result};
use ksvd_solvers::SvdResult;
use ndarray::{s, Array1, Array2, ArrayView1, ArrayView2, Axis};

/// The importance normalisers `d_a = 1 / sqrt(k p_{idx[a]})` of `k = idx.len()` landmarks drawn
/// out of `total` with probabilities `p_i = w_i / Σ w` (`weights`, one per candidate; a zero
/// probability gives `0`), or `d_a = sqrt(total / k)` for uniform sampling (`weights = None`):
/// the diagonal of `D_r` (rows, `total = N`) or `D_c` (columns, `total = M`), one entry per
/// landmark in the order of `idx`. Errors if `weights` does not have `total` entries or an index
/// is not below `total`.
pub fn landmark_scales(total: usize, idx: &[usize], weights: Option<&[f64]>) -> Result<Array1<f64>> {
    if let Some(&index) = idx.iter().find(|&&i| i >= total) {
        return Err(LinalgError::IndexOutOfBounds {
            what: "landmark",
            index,
            len: total,
        });
    }
    let k = idx.len() as f64;
    Ok(match weights {
        None => Array1::from_elem(idx.len(), (total as f64 / k).sqrt()),
        Some(w) => {
            if w.len() != total {
                return Err(LinalgError::ShapeMismatch {
                    op: "landmark normalisers (one weight per candidate)",
                    left: (w.len(), 1),
                    right: (total, 1),
                });
            }
            let sum: f64 = w.iter().sum();
            Array1::from_iter(idx.iter().map(|&i| {
                let p = w[i] / sum;
                if p > 0.0 {
                    1.0 / (k * p).sqrt()
                } else {
                    0.0
                }
            }))
        }
    })
}

/// Scales the landmark block `G[I, J]` (`n × m`) in place to `D_r G[I, J] D_c`: row `a` by
/// `row_scale[a]`, then column `b` by `col_scale[b]` (the normalisers of [`landmark_scales`]).
/// Its SVD gives the approximate singular values of `G` directly. Errors unless `row_scale` has
/// `n` entries and `col_scale` has `m`.
pub fn scale_block(
    block: &mut Array2<f64>,
    row_scale: ArrayView1<'_, f64>,
    col_scale: ArrayView1<'_, f64>,
) -> Result<()> {
    if (row_scale.len(), col_scale.len()) != block.dim() {
        return Err(LinalgError::ShapeMismatch {
            op: "scale_block (normalisers against the block)",
            left: (row_scale.len(), col_scale.len()),
            right: block.dim(),
        });
    }
    for (mut row, &d) in block.outer_iter_mut().zip(row_scale.iter()) {
        row *= d;
    }
    *block *= &col_scale;
    Ok(())
}

/// The numerical rank of `values` (singular values or eigenvalues, descending, the first the
/// largest in magnitude) of a problem of dimension `size`: how many are positive and above the
/// rounding level `ε · size · |values[0]|` (`ε` = `f64::EPSILON`). `size` is `max(n, m)` for
/// the SVD of an `n × m` block and `n` for the eigendecomposition of an `n × n` one. Values at or
/// below that level are rounding noise: dividing by them in the extension would only amplify it.
pub fn numerical_rank(values: &[f64], size: usize) -> usize {
    let tiny = f64::EPSILON * size as f64 * values.first().map_or(0.0, |v| v.abs());
    values.iter().filter(|&&v| v > tiny && v > 0.0).count()
}

/// The row-extension coefficients `D_c V S⁻¹` (`m × r`, rows following the landmark columns
/// `J`) of the SVD `sub` of the scaled block `D_r G[I, J] D_c = U S Vᵀ`, with `col_scale` the
/// diagonal of `D_c`: eq. 11 is `ũ(x) ∝ k(x, Z_J) D_c V S⁻¹` for any row sample `x`, a training
/// row or a new one (eq. 10). All of `sub.s` must be positive (truncate at [`numerical_rank`]).
/// Errors unless `col_scale` has one entry per row of `sub.v`.
pub fn row_coefficients(sub: &SvdResult, col_scale: ArrayView1<'_, f64>) -> Result<Array2<f64>> {
    extension(sub.v.view(), col_scale, sub.s.view())
}

/// The column-extension coefficients `D_r U S⁻¹` (`n × r`, rows following the landmark rows
/// `I`): `ṽ(z) ∝ k(X_I, z)ᵀ D_r U S⁻¹`, the transpose of [`row_coefficients`], with `row_scale`
/// the diagonal of `D_r`. Errors unless `row_scale` has one entry per row of `sub.u`.
pub fn col_coefficients(sub: &SvdResult, row_scale: ArrayView1<'_, f64>) -> Result<Array2<f64>> {
    extension(sub.u.view(), row_scale, sub.s.view())
}

/// The extension coefficients of an exact SVD `G = U S Vᵀ` (every row and column a landmark,
/// no normalisers): `(V S⁺, U S⁺)`, for new rows `k(x', Z) V S⁺` and new columns
/// `k(X, z')ᵀ U S⁺` (eq. 10). `S⁺` is the pseudo-inverse: a zero singular value gives a zero
/// column instead of an infinite one.
pub fn exact_coefficients(svd: &SvdResult) -> (Array2<f64>, Array2<f64>) {
    let inv = pseudo_inverse(svd.s.view());
    (&svd.v * &inv, &svd.u * &inv)
}

/// `1 / s` where `s > 0`, else 0.
fn pseudo_inverse(s: ArrayView1<'_, f64>) -> Array1<f64> {
    s.mapv(|v| if v > 0.0 { 1.0 / v } else { 0.0 })
}

/// `diag(scale) F diag(s)⁻¹`, entry by entry `(F_as · scale_a) · (1 / s_s)`.
fn extension(factor: ArrayView2<'_, f64>, scale: ArrayView1<'_, f64>, s: ArrayView1<'_, f64>) -> Result<Array2<f64>> {
    if (scale.len(), s.len()) != factor.dim() {
        return Err(LinalgError::ShapeMismatch {
            op: "extension coefficients (normalisers and values against the singular vectors)",
            left: (scale.len(), s.len()),
            right: factor.dim(),
        });
    }
    let inv_s = s.mapv(|s| 1.0 / s);
    Ok(&(&factor * &scale.insert_axis(Axis(1))) * &inv_s)
}

/// The eigendecomposition `K[L, L] = Q Λ Qᵀ` of a symmetric landmark block (`n × n`),
/// eigenvalues descending: the block is first symmetrised, `(K + Kᵀ) / 2`, so that rounding in
/// its two triangles cannot matter (the decomposition reads one triangle only).
pub fn landmark_eigen(block: ArrayView2<'_, f64>) -> Result<(Array1<f64>, Array2<f64>)> {
    if block.nrows() != block.ncols() {
        return Err(LinalgError::ShapeMismatch {
            op: "landmark_eigen (needs a square block)",
            left: block.dim(),
            right: block.t().dim(),
        });
    }
    let sym = (&block + &block.t()) * 0.5;
    dense::symmetric_eigen(sym.view())
}

/// The symmetric (Williams–Seeger) extension coefficients `Q_r Λ_r⁻¹` (`n × r`) of the
/// eigendecomposition `K[L, L] = Q Λ Qᵀ` (eigenvalues descending, [`landmark_eigen`]):
/// `ũ(x) ∝ k(x, X_L) Q_r Λ_r⁻¹`, at the training rows the Nyström eigenvectors of `K`. The top
/// `rank` eigenvalues must be positive (cap `rank` at [`numerical_rank`]). Errors unless there
/// are at least `rank` eigenpairs, one value per column of `vectors`.
pub fn eigen_coefficients(
    vectors: ArrayView2<'_, f64>,
    values: ArrayView1<'_, f64>,
    rank: usize,
) -> Result<Array2<f64>> {
    if values.len() != vectors.ncols() || rank > values.len() {
        return Err(LinalgError::ShapeMismatch {
            op: "eigen_coefficients (rank and eigenvalues against the eigenvectors)",
            left: (rank, values.len()),
            right: vectors.dim(),
        });
    }
    let inv = values.slice(s![..rank]).mapv(|l| 1.0 / l);
    Ok(&vectors.slice(s![.., ..rank]) * &inv)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ksvd_linalg::random::{gaussian_matrix, rng_from_seed};
    use ksvd_solvers::dense_svd;

    /// Largest entry-wise difference.
    fn max_diff(a: &Array2<f64>, b: &Array2<f64>) -> f64 {
        (a - b).iter().fold(0.0f64, |m, x| m.max(x.abs()))
    }

    #[test]
    fn numerical_rank_drops_values_at_rounding_level() {
        // A rank-3 7 × 5 matrix: its SVD has 3 singular values of order one and 2 of order
        // ε s_1, which the rule must drop.
        let mut rng = rng_from_seed(3);
        let a = gaussian_matrix(&mut rng, 7, 3);
        let b = gaussian_matrix(&mut rng, 3, 5);
        let g = dense::matmul(a.view(), b.view()).unwrap();
        let svd = dense_svd(g.view(), 5).unwrap();
        assert_eq!(svd.s.len(), 5);
        assert_eq!(numerical_rank(svd.s.as_slice().unwrap(), 7), 3);
        // The threshold is ε · size · |values[0]|, exclusive; zero and negative values never count.
        let s1 = 2.0;
        let tiny = f64::EPSILON * 10.0 * s1;
        assert_eq!(numerical_rank(&[s1, 2.0 * tiny, tiny, 0.0], 10), 2);
        assert_eq!(numerical_rank(&[-s1, 1.0, -0.5], 3), 1);
        assert_eq!(numerical_rank(&[0.0, 0.0], 2), 0);
        assert_eq!(numerical_rank(&[], 4), 0);
    }

    #[test]
    fn exact_coefficients_extend_to_u_and_v_and_zero_values_to_zero() {
        // A rank-3 7 × 5 matrix with all 5 triplets: G V S⁺ = U on the 3 nonzero values, and
        // the exactly-zero values (set to 0 here) give zero columns rather than infinities.
        let mut rng = rng_from_seed(5);
        let a = gaussian_matrix(&mut rng, 7, 3);
        let b = gaussian_matrix(&mut rng, 3, 5);
        let g = dense::matmul(a.view(), b.view()).unwrap();
        let mut svd = dense_svd(g.view(), 5).unwrap();
        svd.s[3] = 0.0;
        svd.s[4] = 0.0;
        let (rc, cc) = exact_coefficients(&svd);
        assert!(rc.iter().chain(cc.iter()).all(|v| v.is_finite()));
        assert!(rc
            .slice(s![.., 3..])
            .iter()
            .chain(cc.slice(s![.., 3..]).iter())
            .all(|&v| v == 0.0));
        let u = dense::matmul(g.view(), rc.view()).unwrap();
        let v = dense::matmul(g.t(), cc.view()).unwrap();
        let tol = 64.0 * f64::EPSILON * 7f64.sqrt() * svd.s[0] / svd.s[2];
        assert!(max_diff(&u.slice(s![.., ..3]).to_owned(), &svd.u.slice(s![.., ..3]).to_owned()) <= tol);
        assert!(max_diff(&v.slice(s![.., ..3]).to_owned(), &svd.v.slice(s![.., ..3]).to_owned()) <= tol);
    }

    #[test]
    fn all_landmarks_reproduce_the_exact_svd() {
        // n = N, m = M: D_r = D_c = I and G[:, J] D_c V S⁻¹ = G V S⁻¹ = U exactly (in exact
        // arithmetic), G[I, :]ᵀ D_r U S⁻¹ = V.
        for &(nn, mm) in &[(9usize, 6usize), (6, 9), (8, 8)] {
            let mut rng = rng_from_seed(nn as u64 * 31 + mm as u64);
            let g = gaussian_matrix(&mut rng, nn, mm);
            let rows: Vec<usize> = (0..nn).collect();
            let cols: Vec<usize> = (0..mm).collect();
            let (dr, dc) = (
                landmark_scales(nn, &rows, None).unwrap(),
                landmark_scales(mm, &cols, None).unwrap(),
            );
            assert!(dr.iter().chain(dc.iter()).all(|&d| d == 1.0));
            let mut block = g.clone();
            scale_block(&mut block, dr.view(), dc.view()).unwrap();
            let r = nn.min(mm);
            let sub = dense_svd(block.view(), r).unwrap();
            assert_eq!(numerical_rank(sub.s.as_slice().unwrap(), nn.max(mm)), r);
            let u = dense::matmul(g.view(), row_coefficients(&sub, dc.view()).unwrap().view()).unwrap();
            let v = dense::matmul(g.t(), col_coefficients(&sub, dr.view()).unwrap().view()).unwrap();
            // Conditioning: the extension divides by s_r, so errors grow like s_1 / s_r.
            let tol = 64.0 * f64::EPSILON * ((nn.max(mm)) as f64).sqrt() * sub.s[0] / sub.s[r - 1];
            assert!(
                max_diff(&u, &sub.u) <= tol,
                "{nn}x{mm}: U {:e} > {tol:e}",
                max_diff(&u, &sub.u)
            );
            assert!(
                max_diff(&v, &sub.v) <= tol,
                "{nn}x{mm}: V {:e} > {tol:e}",
                max_diff(&v, &sub.v)
            );
        }
    }

    #[test]
    fn scaled_block_extension_reproduces_its_svd_on_the_landmarks() {
        // Landmarks a subset, importance weights: at the landmark rows the row extension of the
        // *scaled* block, D_r G[I, J] D_c V S⁻¹, is U; so G[I, J] D_c V S⁻¹ = D_r⁻¹ U.
        let mut rng = rng_from_seed(11);
        let g = gaussian_matrix(&mut rng, 12, 10);
        let (rows, cols) = (vec![1usize, 4, 5, 8, 11], vec![0usize, 2, 3, 7]);
        let rw: Vec<f64> = (0..12).map(|i| 1.0 + i as f64).collect();
        let dr = landmark_scales(12, &rows, Some(&rw)).unwrap();
        let dc = landmark_scales(10, &cols, None).unwrap();
        assert!((dc[0] - (10.0f64 / 4.0).sqrt()).abs() == 0.0);
        let total: f64 = rw.iter().sum();
        for (a, &i) in rows.iter().enumerate() {
            let want = 1.0 / (5.0 * rw[i] / total).sqrt();
            assert!((dr[a] - want).abs() <= 4.0 * f64::EPSILON * want);
        }
        let raw = g.select(Axis(0), &rows).select(Axis(1), &cols);
        let mut block = raw.clone();
        scale_block(&mut block, dr.view(), dc.view()).unwrap();
        for a in 0..rows.len() {
            for b in 0..cols.len() {
                let want = dr[a] * raw[[a, b]] * dc[b];
                assert!((block[[a, b]] - want).abs() <= 4.0 * f64::EPSILON * want.abs());
            }
        }
        let sub = dense_svd(block.view(), 4).unwrap();
        let u_land = dense::matmul(raw.view(), row_coefficients(&sub, dc.view()).unwrap().view()).unwrap();
        let u_want = &sub.u / &dr.view().insert_axis(Axis(1));
        let tol =
            64.0 * f64::EPSILON * 5f64.sqrt() * sub.s[0] / sub.s[3] * dr.iter().fold(0.0f64, |m, &d| m.max(1.0 / d));
        assert!(max_diff(&u_land, &u_want) <= tol);
    }

    #[test]
    fn eigen_extension_reproduces_the_eigenvectors_on_all_landmarks() {
        // L = all rows of a positive definite K: K Q_r Λ_r⁻¹ = Q_r (no sign to choose).
        let mut rng = rng_from_seed(5);
        let a = gaussian_matrix(&mut rng, 8, 8);
        let k = dense::matmul(a.view(), a.t()).unwrap();
        let (w, q) = landmark_eigen(k.view()).unwrap();
        let r = numerical_rank(w.as_slice().unwrap(), 8);
        assert_eq!(r, 8);
        let coef = eigen_coefficients(q.view(), w.view(), 5).unwrap();
        assert_eq!(coef.dim(), (8, 5));
        let u = dense::matmul(k.view(), coef.view()).unwrap();
        let q5 = q.slice(s![.., ..5]).to_owned();
        let tol = 64.0 * f64::EPSILON * 8f64.sqrt() * w[0] / w[4];
        assert!(max_diff(&u, &q5) <= tol);
    }
}
