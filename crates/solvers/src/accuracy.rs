//! Accuracy of an approximate SVD against a reference: the paper's `η` and subspace angles.
//!
//! The paper (section 5.4 and appendix) defines
//! `η = (1/r) Σ_i w_i (1 − |u_iᵀ ũ_i/‖ũ_i‖|) + (1/r) Σ_i w_i (1 − |v_iᵀ ṽ_i/‖ṽ_i‖|)` with
//! `w_i = λ_i`, the reference singular values. Because `w_i = λ_i` is not scale-free, a
//! row-stochastic (SNE) matrix with `λ_1 ≈ 1 ≫ λ_2..λ_r` makes `η` blind to every vector but
//! the first (REPRODUCTION-NOTES §2). [`EtaWeights`] therefore offers:
//!
//! * [`EtaWeights::SingularValues`]: the paper's form, `w_i = λ_i` with the `1/r` factor;
//! * [`EtaWeights::Normalized`]: `w_i = λ_i / Σ_j λ_j` and no `1/r` (a weighted mean, in `[0, 2]`);
//! * [`EtaWeights::Uniform`]: `w_i = 1` with the `1/r` factor (in `[0, 2]`).
//!
//! The timing experiments stop on the paper's form and report the others beside it, together
//! with the sine of the largest principal angle between the left (and right) subspaces, which
//! is insensitive to the ill-determined individual vectors inside clusters of nearly equal
//! singular values.
//!
//! [`low_rank_error`] measures an approximation as a whole, `‖G − Ũ S̃ Ṽᵀ‖_F`, and
//! [`optimal_low_rank_error`] the best any rank-`r` approximation can do, `‖G − G_r‖_F`
//! (Eckart–Young): their ratio is meaningful however the singular values cluster, because it
//! compares matrices, not individual vectors.
//!
//! [`Accuracy::of`] gathers every measure of one approximation against a [`Truth`] (the
//! reference SVD with `‖G‖_F²` and the optimal error it implies): the paper's `η`, the
//! unweighted `η`, the largest principal angle and the error ratio `‖G − Ũ S̃ Ṽᵀ‖_F / ‖G − G_r‖_F`.
use crate::error::{Result, SolverError};
use crate::svd::SvdResult;
use ksvd_linalg::{dense, LinearOperator};
use ndarray::{s, ArrayView1, ArrayView2};

/// Weights of the `η` accuracy measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum EtaWeights {
    /// The paper's `w_i = λ_i`, with the `1/r` factor.
    SingularValues,
    /// `w_i = λ_i / Σ λ_j`, no `1/r` factor.
    Normalized,
    /// `w_i = 1`, with the `1/r` factor.
    Uniform,
}

fn side(reference: ArrayView2<'_, f64>, approx: ArrayView2<'_, f64>, w: &[f64]) -> f64 {
    (0..w.len())
        .map(|i| {
            let a = approx.column(i);
            let na = a.dot(&a).sqrt();
            let c = if na > 0.0 {
                (reference.column(i).dot(&a) / na).abs()
            } else {
                0.0
            };
            w[i] * (1.0 - c.min(1.0))
        })
        .sum()
}

/// `η` of an approximation `(ũ, ṽ)` (columns in the reference's order) against the reference
/// rank-`r` SVD; `r` is the reference's rank, and the approximation needs at least `r` columns.
pub fn eta(
    reference: &SvdResult,
    approx_u: ArrayView2<'_, f64>,
    approx_v: ArrayView2<'_, f64>,
    weights: EtaWeights,
) -> Result<f64> {
    let r = reference.rank();
    if approx_u.nrows() != reference.u.nrows() || approx_v.nrows() != reference.v.nrows() {
        return Err(SolverError::ShapeMismatch {
            what: format!(
                "approximate vectors have {} and {} rows, reference {} and {}",
                approx_u.nrows(),
                approx_v.nrows(),
                reference.u.nrows(),
                reference.v.nrows()
            ),
        });
    }
    if approx_u.ncols() < r || approx_v.ncols() < r {
        return Err(SolverError::ShapeMismatch {
            what: format!(
                "approximation has {} columns, reference rank is {r}",
                approx_u.ncols().min(approx_v.ncols())
            ),
        });
    }
    let lam = reference.s.to_vec();
    let (w, scale): (Vec<f64>, f64) = match weights {
        EtaWeights::SingularValues => (lam, 1.0 / r as f64),
        EtaWeights::Uniform => (vec![1.0; r], 1.0 / r as f64),
        EtaWeights::Normalized => {
            let total: f64 = lam.iter().sum();
            if total > 0.0 {
                (lam.iter().map(|l| l / total).collect(), 1.0)
            } else {
                (vec![1.0 / r as f64; r], 1.0)
            }
        }
    };
    Ok(scale * (side(reference.u.view(), approx_u, &w) + side(reference.v.view(), approx_v, &w)))
}

/// `η` of one SVD result against another.
pub fn eta_of(reference: &SvdResult, approx: &SvdResult, weights: EtaWeights) -> Result<f64> {
    eta(reference, approx.u.view(), approx.v.view(), weights)
}

/// Sine of the largest principal angle between `span(a)` and `span(b)` (same number of rows;
/// the first `min(cols)` columns of each are compared). `0` means equal subspaces, `1` means
/// some direction of one is orthogonal to the other.
pub fn max_principal_angle_sin(a: ArrayView2<'_, f64>, b: ArrayView2<'_, f64>) -> Result<f64> {
    if a.nrows() != b.nrows() {
        return Err(SolverError::ShapeMismatch {
            what: format!("subspaces in R^{} and R^{}", a.nrows(), b.nrows()),
        });
    }
    let k = a.ncols().min(b.ncols());
    if k == 0 {
        return Ok(0.0);
    }
    let qa = dense::thin_q(a.slice(s![.., ..k]))?;
    let qb = dense::thin_q(b.slice(s![.., ..k]))?;
    // sin θ_max = ‖(I − Q_a Q_aᵀ) Q_b‖₂: accurate for small angles, unlike sqrt(1 − cos²).
    let proj = dense::matmul(qa.view(), dense::matmul(qa.t(), qb.view())?.view())?;
    let resid = &qb - &proj;
    let sv = dense::singular_values(resid.view())?;
    Ok(sv.iter().cloned().fold(0.0, f64::max).min(1.0))
}

/// The larger of the left and right largest-principal-angle sines.
pub fn subspace_error(
    reference: &SvdResult,
    approx_u: ArrayView2<'_, f64>,
    approx_v: ArrayView2<'_, f64>,
) -> Result<f64> {
    let l = max_principal_angle_sin(reference.u.view(), approx_u)?;
    let r = max_principal_angle_sin(reference.v.view(), approx_v)?;
    Ok(l.max(r))
}

/// `‖G − U diag(s) Vᵀ‖_F`, matrix-free, from `‖G‖_F²` and one product `G V`:
///
/// `‖G − U S Vᵀ‖_F² = ‖G‖_F² − 2 Σ_i s_i u_iᵀ G v_i + tr(S UᵀU S VᵀV)`.
///
/// `U` (`n × r`) and `V` (`m × r`) need not be orthonormal (the paper's Nyström vectors are
/// only unit-norm). The squared error is exact up to rounding of order `ε ‖G‖_F²`, so errors
/// below about `sqrt(ε) ‖G‖_F` are not resolved (they come out as that floor or as 0).
pub fn low_rank_error<O: LinearOperator + ?Sized>(
    op: &O,
    g_fro_sq: f64,
    u: ArrayView2<'_, f64>,
    s: ArrayView1<'_, f64>,
    v: ArrayView2<'_, f64>,
) -> Result<f64> {
    let r = s.len();
    if u.nrows() != op.nrows() || v.nrows() != op.ncols() || u.ncols() < r || v.ncols() < r {
        return Err(SolverError::ShapeMismatch {
            what: format!(
                "G is {} x {}, U is {} x {}, V is {} x {}, s has {r} values",
                op.nrows(),
                op.ncols(),
                u.nrows(),
                u.ncols(),
                v.nrows(),
                v.ncols()
            ),
        });
    }
    if !(g_fro_sq.is_finite() && g_fro_sq >= 0.0) {
        return Err(SolverError::InvalidParameter {
            name: "g_fro_sq",
            value: g_fro_sq,
            reason: "must be a finite, non-negative squared norm",
        });
    }
    let (u, v) = (u.slice(s![.., ..r]), v.slice(s![.., ..r]));
    let gv = op.apply(v)?;
    let cross: f64 = (0..r).map(|i| s[i] * u.column(i).dot(&gv.column(i))).sum();
    let utu = dense::matmul(u.t(), u)?;
    let vtv = dense::matmul(v.t(), v)?;
    let mut approx_sq = 0.0;
    for i in 0..r {
        for j in 0..r {
            approx_sq += s[i] * utu[[i, j]] * s[j] * vtv[[j, i]];
        }
    }
    Ok((g_fro_sq - 2.0 * cross + approx_sq).max(0.0).sqrt())
}

/// `‖G − G_r‖_F = sqrt(‖G‖_F² − Σ_{i≤r} σ_i²)`, the smallest error of any rank-`r`
/// approximation (Eckart–Young), from the top singular values `σ` of `G` (take them from a
/// certified solver: their error enters squared). Same rounding floor as [`low_rank_error`].
pub fn optimal_low_rank_error(g_fro_sq: f64, sigma: ArrayView1<'_, f64>) -> f64 {
    let top: f64 = sigma.iter().map(|x| x * x).sum();
    (g_fro_sq - top).max(0.0).sqrt()
}

/// What an approximation of one matrix `G` is measured against: the reference rank-`r` SVD,
/// `‖G‖_F²`, and the optimal rank-`r` error `‖G − G_r‖_F` they imply.
#[derive(Debug, Clone, Copy)]
pub struct Truth<'a> {
    /// The reference (certified) rank-`r` SVD.
    pub svd: &'a SvdResult,
    /// `‖G‖_F²`.
    pub fro_sq: f64,
    /// `‖G − G_r‖_F = sqrt(‖G‖_F² − Σ_{i≤r} σ_i²)` ([`optimal_low_rank_error`] of the reference's
    /// singular values).
    pub optimal_error: f64,
}

impl<'a> Truth<'a> {
    /// The truth of a matrix with squared Frobenius norm `fro_sq` and reference SVD `svd`.
    pub fn new(fro_sq: f64, svd: &'a SvdResult) -> Truth<'a> {
        Truth {
            svd,
            fro_sq,
            optimal_error: optimal_low_rank_error(fro_sq, svd.s.view()),
        }
    }
}

/// Every accuracy measure of one approximate rank-`r` SVD against a [`Truth`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Accuracy {
    /// The paper's `η` ([`EtaWeights::SingularValues`]).
    pub eta: f64,
    /// `η` with unit weights ([`EtaWeights::Uniform`], in `[0, 2]`).
    pub eta_unweighted: f64,
    /// The largest principal angle, in radians, between the left or the right subspaces
    /// (`asin` of [`subspace_error`], in `[0, π/2]`).
    pub max_angle: f64,
    /// `‖G − Ũ S̃ Ṽᵀ‖_F / ‖G − G_r‖_F` ([`low_rank_error`] over the truth's optimal error):
    /// 1 is optimal; NaN when the optimal error is 0 (`G` has rank `≤ r`).
    pub error_ratio: f64,
}

impl Accuracy {
    /// The accuracy of `approx`, an approximation of `op`, against `truth` (one product with
    /// `G` for the error ratio, two thin QRs for the angles).
    pub fn of<O: LinearOperator + ?Sized>(op: &O, truth: &Truth<'_>, approx: &SvdResult) -> Result<Accuracy> {
        let reference = truth.svd;
        let err = low_rank_error(op, truth.fro_sq, approx.u.view(), approx.s.view(), approx.v.view())?;
        Ok(Accuracy {
            eta: eta_of(reference, approx, EtaWeights::SingularValues)?,
            eta_unweighted: eta_of(reference, approx, EtaWeights::Uniform)?,
            max_angle: subspace_error(reference, approx.u.view(), approx.v.view())?
                .min(1.0)
                .asin(),
            error_ratio: if truth.optimal_error > 0.0 {
                err / truth.optimal_error
            } else {
                f64::NAN
            },
        })
    }

    /// Every measure NaN: an approximation that could not be computed.
    pub fn nan() -> Accuracy {
        Accuracy {
            eta: f64::NAN,
            eta_unweighted: f64::NAN,
            max_angle: f64::NAN,
            error_ratio: f64::NAN,
        }
    }

    /// The worse of two, measure by measure (the larger; NaN if either is NaN).
    pub fn worst(self, other: Accuracy) -> Accuracy {
        let max = |a: f64, b: f64| if a.is_nan() || b.is_nan() { f64::NAN } else { a.max(b) };
        Accuracy {
            eta: max(self.eta, other.eta),
            eta_unweighted: max(self.eta_unweighted, other.eta_unweighted),
            max_angle: max(self.max_angle, other.max_angle),
            error_ratio: max(self.error_ratio, other.error_ratio),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // Test helpers panic on failure by design.
    use super::*;
    use crate::svd::dense_svd;
    use ndarray::{array, Array2};

    /// `G = diag(3, 2, 1)` (padded to 4 x 3), rank 2: the exact SVD is `e_1, e_2`.
    fn diagonal() -> (Array2<f64>, SvdResult) {
        let mut g = Array2::zeros((4, 3));
        for (i, &d) in [3.0, 2.0, 1.0].iter().enumerate() {
            g[[i, i]] = d;
        }
        let svd = dense_svd(g.view(), 2).unwrap();
        (g, svd)
    }

    /// The reference against itself: `η` 0, angle 0, error ratio 1; the optimal error is the
    /// dropped singular value.
    #[test]
    fn the_reference_is_exact() {
        let (g, svd) = diagonal();
        let fro_sq = g.iter().map(|x| x * x).sum::<f64>();
        let truth = Truth::new(fro_sq, &svd);
        assert!((truth.optimal_error - 1.0).abs() <= 4.0 * f64::EPSILON);
        let a = Accuracy::of(&g, &truth, &svd).unwrap();
        assert_eq!((a.eta, a.eta_unweighted), (0.0, 0.0));
        assert!(a.max_angle <= 4.0 * f64::EPSILON, "{}", a.max_angle);
        assert!((a.error_ratio - 1.0).abs() <= 8.0 * f64::EPSILON, "{}", a.error_ratio);
    }

    /// Second pair replaced by `e_3` on both sides: pair 2 orthogonal to the reference, so
    /// `η = (1/r) (2 σ_2)` = 2 (weighted) and 1 (unweighted), the angle is π/2, and the error is
    /// `‖G − 3 e_1 e_1ᵀ − 2 e_3 e_3ᵀ‖_F = sqrt(2² + 1²)` against the optimal 1.
    #[test]
    fn an_orthogonal_pair_by_hand() {
        let (g, svd) = diagonal();
        let fro_sq = 14.0;
        let truth = Truth::new(fro_sq, &svd);
        let mut u = Array2::zeros((4, 2));
        let mut v = Array2::zeros((3, 2));
        u[[0, 0]] = 1.0;
        v[[0, 0]] = 1.0;
        u[[2, 1]] = 1.0;
        v[[2, 1]] = 1.0;
        let approx = SvdResult::new(u, array![3.0, 2.0], v);
        let a = Accuracy::of(&g, &truth, &approx).unwrap();
        assert!((a.eta - 2.0).abs() <= 8.0 * f64::EPSILON, "{}", a.eta);
        assert!((a.eta_unweighted - 1.0).abs() <= 8.0 * f64::EPSILON);
        assert!(
            (a.max_angle - std::f64::consts::FRAC_PI_2).abs() <= 1e-7,
            "{}",
            a.max_angle
        );
        assert!((a.error_ratio - 5f64.sqrt()).abs() <= 1e-14, "{}", a.error_ratio);
        // `worst` is componentwise and NaN wins.
        let exact = Accuracy::of(&g, &truth, &svd).unwrap();
        assert_eq!(exact.worst(a), a);
        assert!(a.worst(Accuracy::nan()).eta.is_nan());
    }
}
