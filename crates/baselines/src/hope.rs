//! HOPE (Ou, Cui, Pei, Zhang & Zhu, KDD 2016) with the Katz proximity.
//!
//! The Katz matrix of a directed graph with adjacency `A` (`A[src, dst]`) and decay `β` is
//!
//! ```text
//! S = (I − βA)^{-1} βA = Σ_{l ≥ 1} (βA)^l,        defined when β ρ(A) < 1,
//! ```
//!
//! and HOPE embeds node `i` as the pair `(U_s[i], U_t[i])` with `U_s = U √Σ`, `U_t = V √Σ` from
//! the rank-`r` truncated SVD `S ≈ U Σ V^T`, so that `U_s U_t^T` is the best rank-`r`
//! approximation of `S`. Source embeddings describe a node's outgoing (citing) role, target
//! embeddings its incoming (cited) role.
//!
//! HOPE's own code (ZW-ZHANG/HOPE, `embed_main.m`) obtains the SVD from a generalised SVD of the
//! pair `(βA, I − βA)` (JDGSVD). Here `S` is never formed: [`KatzOperator`] implements
//! [`LinearOperator`] with `S X = Σ_{l ≥ 1} (βA)^l X` and `S^T Y = Σ_{l ≥ 1} (βA^T)^l Y`, summed
//! as a Neumann series of sparse products until the newest term is below `katz_tol` relative to
//! the partial sum (the series converges geometrically at rate about `βρ(A)`), and the truncated
//! SVD comes from [`ksvd_solvers::randomized_svd`] or [`ksvd_solvers::lanczos_svd`].
//!
//! The default decay is HOPE's: `β = 0.5 / ρ(A)` with `ρ(A)` estimated by the same power
//! iteration as HOPE's `getRadius.m` (start `1/√n`, at most 1000 steps, stop when the normalised
//! iterate changes by less than 1e-5 up to sign).
use crate::error::{check_adjacency, ensure, ensure_positive, BaselineError, Result};
use ksvd_linalg::{CsrMatrix, LinearOperator};
use ksvd_solvers::{lanczos_svd, randomized_svd, LanczosParams, RsvdParams, SolverError};
use ndarray::{Array1, Array2, ArrayView2, ArrayViewMut2, Axis};
use serde::{Deserialize, Serialize};
use std::sync::Mutex;

/// The truncated-SVD solver HOPE uses on the Katz operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HopeSolver {
    /// Randomized SVD (Halko et al.) with `oversampling` and `power_iters` of [`HopeParams`].
    #[default]
    Rsvd,
    /// Restarted Lanczos bidiagonalisation to relative residual `lanczos_tol`.
    Lanczos,
}

/// Hyper-parameters of HOPE (Katz proximity).
///
/// Defaults: HOPE's decay rule `β = 0.5 / ρ(A)`, rank 64 per side (a 128-dimensional
/// concatenation `[U_s, U_t]`, the size of DeepWalk's default embedding); the paper's Table 1
/// uses 1000 components, set `rank` accordingly in the experiment spec.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HopeParams {
    /// Number `r` of singular triplets kept; each of `U_s`, `U_t` has `r` columns (default 64).
    pub rank: usize,
    /// Explicit Katz decay `β`; when `None` (default), `β = beta_radius_fraction / ρ(A)`.
    pub beta: Option<f64>,
    /// Fraction of `1/ρ(A)` used when `beta` is `None` (default 0.5, HOPE's `embed_main.m`).
    pub beta_radius_fraction: f64,
    /// Maximum power iterations of the spectral-radius estimate (default 1000, as `getRadius.m`).
    pub radius_max_iter: usize,
    /// Stopping threshold of the spectral-radius power iteration (default 1e-5, as `getRadius.m`).
    pub radius_tol: f64,
    /// Relative size of the last Neumann term at which the Katz series stops (default 1e-12).
    pub katz_tol: f64,
    /// Maximum number of terms of the Katz series (default 2000).
    pub katz_max_terms: usize,
    /// Truncated-SVD solver (default randomized SVD).
    pub solver: HopeSolver,
    /// RSVD oversampling (default 10).
    pub oversampling: usize,
    /// RSVD power iterations (default 4).
    pub power_iters: usize,
    /// Lanczos relative residual tolerance (default 1e-8).
    pub lanczos_tol: f64,
}

impl Default for HopeParams {
    fn default() -> Self {
        Self {
            rank: 64,
            beta: None,
            beta_radius_fraction: 0.5,
            radius_max_iter: 1000,
            radius_tol: 1e-5,
            katz_tol: 1e-12,
            katz_max_terms: 2000,
            solver: HopeSolver::Rsvd,
            oversampling: 10,
            power_iters: 4,
            lanczos_tol: 1e-8,
        }
    }
}

impl HopeParams {
    /// Validates the parameters once.
    pub fn check(&self) -> Result<Hope> {
        ensure(self.rank >= 1, "rank", self.rank, "at least 1")?;
        if let Some(b) = self.beta {
            ensure_positive("beta", b)?;
        }
        ensure(
            self.beta_radius_fraction.is_finite() && self.beta_radius_fraction > 0.0 && self.beta_radius_fraction < 1.0,
            "beta_radius_fraction",
            self.beta_radius_fraction,
            "a number in (0, 1)",
        )?;
        ensure(
            self.radius_max_iter >= 1,
            "radius_max_iter",
            self.radius_max_iter,
            "at least 1",
        )?;
        ensure_positive("radius_tol", self.radius_tol)?;
        ensure_positive("katz_tol", self.katz_tol)?;
        ensure(
            self.katz_max_terms >= 1,
            "katz_max_terms",
            self.katz_max_terms,
            "at least 1",
        )?;
        ensure_positive("lanczos_tol", self.lanczos_tol)?;
        Ok(Hope { params: self.clone() })
    }
}

/// HOPE with validated parameters (from [`HopeParams::check`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Hope {
    params: HopeParams,
}

/// The result of [`Hope::fit`].
#[derive(Debug, Clone, PartialEq)]
pub struct HopeFit {
    /// `n x r` source embeddings `U_s = U √Σ`.
    pub source: Array2<f64>,
    /// `n x r` target embeddings `U_t = V √Σ`; `source · target^T` approximates the Katz matrix.
    pub target: Array2<f64>,
    /// The `r` leading singular values of the Katz matrix, descending.
    pub singular_values: Array1<f64>,
    /// The decay `β` used.
    pub beta: f64,
    /// The power-iteration estimate of `ρ(A)`.
    pub spectral_radius: f64,
}

/// HOPE's `getRadius.m`: power iteration on `A` from `1/√n`, returning `‖A v‖` for the last
/// normalised iterate `v`. Stops when `min(‖v − v_prev‖, ‖v + v_prev‖) < tol` or after
/// `max_iter` steps; returns 0 if the iterate vanishes (nilpotent `A`, e.g. an acyclic graph).
/// For matrices whose dominant eigenvalues are complex the iteration need not settle and the
/// value is an estimate of `ρ(A)` only.
pub fn spectral_radius_estimate(adjacency: &CsrMatrix, max_iter: usize, tol: f64) -> Result<f64> {
    check_adjacency(adjacency)?;
    let n = adjacency.nrows();
    let mut v = Array2::from_elem((n, 1), 1.0 / (n as f64).sqrt());
    let mut radius = 0.0;
    for _ in 0..max_iter {
        let w = adjacency.mul_dense(v.view())?;
        radius = w.iter().map(|x| x * x).sum::<f64>().sqrt();
        if !(radius > 0.0 && radius.is_finite()) {
            return Ok(if radius.is_finite() { 0.0 } else { radius });
        }
        let w = w / radius;
        let diff = (&w - &v).iter().map(|x| x * x).sum::<f64>().sqrt();
        let sum = (&w + &v).iter().map(|x| x * x).sum::<f64>().sqrt();
        v = w;
        if diff.min(sum) < tol {
            break;
        }
    }
    Ok(radius)
}

/// The Katz matrix `S = (I − βA)^{-1} βA = Σ_{l ≥ 1} (βA)^l` as an implicit operator.
///
/// Every product sums the Neumann series term by term with sparse products until the newest
/// term's Frobenius norm is at most `tol` times the partial sum's (or `max_terms` terms). A
/// product that does not converge is a typed error
/// ([`ksvd_linalg::LinalgError::OperatorFailed`], which the solvers pass on), and the failure is
/// recorded: [`KatzOperator::check_converged`] reports it as [`BaselineError::KatzDiverged`].
#[derive(Debug)]
pub struct KatzOperator {
    beta_a: CsrMatrix,
    beta_at: CsrMatrix,
    beta: f64,
    tol: f64,
    max_terms: usize,
    failure: Mutex<Option<(usize, f64)>>,
}

impl KatzOperator {
    /// The Katz operator of `adjacency` with decay `beta`.
    ///
    /// Errors: non-square, empty or negative adjacency; `beta`, `tol` not finite and positive;
    /// `max_terms == 0`.
    pub fn new(adjacency: &CsrMatrix, beta: f64, tol: f64, max_terms: usize) -> Result<Self> {
        check_adjacency(adjacency)?;
        ensure_positive("beta", beta)?;
        ensure_positive("katz_tol", tol)?;
        ensure(max_terms >= 1, "katz_max_terms", max_terms, "at least 1")?;
        let beta_a = adjacency.map_values(|v| beta * v);
        let beta_at = beta_a.transpose();
        Ok(Self {
            beta_a,
            beta_at,
            beta,
            tol,
            max_terms,
            failure: Mutex::new(None),
        })
    }

    /// The decay `β`.
    pub fn beta(&self) -> f64 {
        self.beta
    }

    /// `Err(KatzDiverged)` if any product so far failed to converge.
    pub fn check_converged(&self) -> Result<()> {
        let failure = match self.failure.lock() {
            Ok(g) => *g,
            Err(poisoned) => *poisoned.into_inner(),
        };
        match failure {
            None => Ok(()),
            Some((terms, relative_term)) => Err(BaselineError::KatzDiverged {
                beta: self.beta,
                terms,
                relative_term,
                tol: self.tol,
            }),
        }
    }

    fn record_failure(&self, terms: usize, relative_term: f64) {
        let mut guard = match self.failure.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        if guard.is_none() {
            *guard = Some((terms, relative_term));
        }
    }

    fn series(
        &self,
        m: &CsrMatrix,
        x: ArrayView2<'_, f64>,
        mut out: ArrayViewMut2<'_, f64>,
    ) -> ksvd_linalg::Result<()> {
        let norm = |a: &Array2<f64>| a.iter().map(|v| v * v).sum::<f64>().sqrt();
        let mut term = m.mul_dense(x)?;
        let mut sum = term.clone();
        let mut terms = 1;
        loop {
            let (t, s) = (norm(&term), norm(&sum));
            if !(t.is_finite() && s.is_finite()) {
                self.record_failure(terms, f64::INFINITY);
                return Err(self.diverged(terms, f64::INFINITY));
            }
            if t <= self.tol * s || t == 0.0 {
                break;
            }
            if terms >= self.max_terms {
                self.record_failure(terms, t / s);
                return Err(self.diverged(terms, t / s));
            }
            term = m.mul_dense(term.view())?;
            sum += &term;
            terms += 1;
        }
        out.assign(&sum);
        Ok(())
    }

    fn diverged(&self, terms: usize, relative_term: f64) -> ksvd_linalg::LinalgError {
        ksvd_linalg::LinalgError::OperatorFailed {
            operator: "the Katz operator",
            reason: format!(
                "its series did not converge after {terms} terms (last term / sum = {relative_term:.3e} > tol {:e}); \
                 beta * rho(A) must be < 1 (beta = {})",
                self.tol, self.beta
            ),
        }
    }
}

impl LinearOperator for KatzOperator {
    fn nrows(&self) -> usize {
        self.beta_a.nrows()
    }
    fn ncols(&self) -> usize {
        self.beta_a.ncols()
    }
    fn apply_into(&self, x: ArrayView2<'_, f64>, out: ArrayViewMut2<'_, f64>) -> ksvd_linalg::Result<()> {
        self.series(&self.beta_a, x, out)
    }
    fn apply_transpose_into(&self, x: ArrayView2<'_, f64>, out: ArrayViewMut2<'_, f64>) -> ksvd_linalg::Result<()> {
        // S^T = Σ_l (βA^T)^l.
        self.series(&self.beta_at, x, out)
    }
}

impl Hope {
    /// The validated parameters.
    pub fn params(&self) -> &HopeParams {
        &self.params
    }

    /// The decay `β` this configuration uses on `adjacency`, with the spectral-radius estimate.
    pub fn beta_for(&self, adjacency: &CsrMatrix) -> Result<(f64, f64)> {
        let p = &self.params;
        let radius = spectral_radius_estimate(adjacency, p.radius_max_iter, p.radius_tol)?;
        let beta = match p.beta {
            Some(b) => b,
            None => {
                if !(radius > 0.0 && radius.is_finite()) {
                    return Err(BaselineError::ZeroSpectralRadius { radius });
                }
                p.beta_radius_fraction / radius
            }
        };
        Ok((beta, radius))
    }

    /// HOPE embeddings of the graph with adjacency `adjacency` (`A[src, dst]`, weights allowed),
    /// randomness (the solver's start) from `seed`.
    ///
    /// Errors: invalid adjacency, `rank > n`, a zero spectral-radius estimate with the default
    /// decay rule, a diverging Katz series, solver failures.
    pub fn fit(&self, adjacency: &CsrMatrix, seed: u64) -> Result<HopeFit> {
        let p = &self.params;
        check_adjacency(adjacency)?;
        let n = adjacency.nrows();
        if p.rank > n {
            return Err(BaselineError::TooMany {
                what: "HOPE rank",
                k: p.rank,
                n,
            });
        }
        let (beta, spectral_radius) = self.beta_for(adjacency)?;
        let op = KatzOperator::new(adjacency, beta, p.katz_tol, p.katz_max_terms)?;
        let svd = match p.solver {
            HopeSolver::Rsvd => randomized_svd(
                &op,
                p.rank,
                &RsvdParams {
                    oversampling: p.oversampling,
                    power_iters: p.power_iters,
                    seed,
                },
            ),
            HopeSolver::Lanczos => lanczos_svd(
                &op,
                p.rank,
                &LanczosParams {
                    tol: p.lanczos_tol,
                    seed,
                    ..LanczosParams::default()
                },
            ),
        };
        op.check_converged()?;
        let svd = svd.map_err(|e| match e {
            SolverError::NonFinite => BaselineError::NonFinite {
                what: "the Katz operator",
                hint: "; beta * rho(A) must be < 1",
            },
            other => BaselineError::Solver(other),
        })?;
        let root = svd.s.mapv(|s| s.max(0.0).sqrt());
        let source = &svd.u * &root.view().insert_axis(Axis(0));
        let target = &svd.v * &root.view().insert_axis(Axis(0));
        Ok(HopeFit {
            source,
            target,
            singular_values: svd.s,
            beta,
            spectral_radius,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ksvd_linalg::materialize;

    #[test]
    fn radius_of_a_cycle_is_one_and_of_a_dag_is_zero() {
        let n = 6;
        let cycle = CsrMatrix::from_triplets(n, n, (0..n).map(|i| (i, (i + 1) % n, 1.0))).unwrap();
        let r = spectral_radius_estimate(&cycle, 1000, 1e-10).unwrap();
        assert!((r - 1.0).abs() < 1e-12, "{r}");
        let path = CsrMatrix::from_triplets(n, n, (0..n - 1).map(|i| (i, i + 1, 1.0))).unwrap();
        assert_eq!(spectral_radius_estimate(&path, 1000, 1e-10).unwrap(), 0.0);
        let err = HopeParams::default().check().unwrap().beta_for(&path).unwrap_err();
        assert!(matches!(err, BaselineError::ZeroSpectralRadius { .. }));
    }

    #[test]
    fn katz_operator_matches_the_series_and_detects_divergence() {
        let n = 5;
        let a =
            CsrMatrix::from_triplets(n, n, [(0, 1, 1.0), (1, 2, 1.0), (2, 0, 1.0), (3, 4, 2.0), (4, 3, 1.0)]).unwrap();
        let op = KatzOperator::new(&a, 0.3, 1e-14, 500).unwrap();
        let s = materialize(&op).unwrap();
        // Dense reference: S = (I - beta A)^{-1} beta A.
        let ba = a.to_dense() * 0.3;
        let m = Array2::<f64>::eye(n) - &ba;
        let reference = ksvd_linalg::dense::lu_solve(m.view(), ba.view()).unwrap();
        let err = (&s - &reference).iter().fold(0.0f64, |m, v| m.max(v.abs()));
        assert!(err < 1e-12, "{err}");
        op.check_converged().unwrap();
        let st = op.apply_transpose(Array2::<f64>::eye(n).view()).unwrap();
        assert!((&st - &reference.t()).iter().all(|v| v.abs() < 1e-12));
        // beta * rho(A) = 0.8 * sqrt(2) > 1: the series diverges.
        let bad = KatzOperator::new(&a, 0.8, 1e-14, 200).unwrap();
        let err = bad.apply(Array2::<f64>::eye(n).view()).unwrap_err();
        assert!(
            matches!(&err, ksvd_linalg::LinalgError::OperatorFailed { reason, .. } if reason.contains("did not converge")),
            "{err}"
        );
        assert!(matches!(bad.check_converged(), Err(BaselineError::KatzDiverged { .. })));
    }
}
