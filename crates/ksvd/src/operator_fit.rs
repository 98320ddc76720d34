//! Fits whose kernel matrix lives elsewhere: KSVD and KPCA run by their own solvers on any
//! operator that gives products and blocks of `G` (a distributed engine's row partitions, a
//! matrix on disk), then made into the same portable model as a fit on samples.
//!
//! The solver dispatch is the estimators' own ([`KsvdValidParams`]'s `solve`, KPCA's
//! `eigenpairs`): the same starting vectors for the same seed, the same restarts, the same
//! certified residuals, the same Nyström arithmetic and sign convention. Only where the
//! products come from differs, so an operator whose products equal `G`'s to rounding gives the
//! fit on samples to rounding. [`OperatorFit::to_model`] then needs the samples (all of them,
//! or for a Nyström fit whatever [`crate::KsvdModel`] keeps) and the kernel's statistics
//! ([`KernelStats`]: SNE normalisers, centring means), which the caller gathers once.
use crate::error::{KsvdError, Result};
use crate::fitted::{kpca_model, ksvd_model, Estimator, KsvdModel};
use crate::kpca::KpcaValidParams;
use crate::model::KsvdValidParams;
use crate::user_kernel::ParamKernel;
use ksvd_kernels::{KernelMatrix, KernelStats, Samples};
use ksvd_linalg::MatrixBlocks;
use ksvd_nystrom::{AsymmetricNystrom, LandmarkWeights};
use ksvd_solvers::{Residuals, SvdResult};
use ndarray::Array1;

/// What a fit on an operator found: KSVD's triplets (and its Nyström fit) or KPCA's eigenpairs
/// (`U = V = A`, `s = λ`), with the parameters it ran with.
#[derive(Debug, Clone)]
pub struct OperatorFit {
    svd: SvdResult,
    of: Of,
}

/// The estimator that ran and what only it has.
#[derive(Debug, Clone)]
enum Of {
    Ksvd {
        params: KsvdValidParams,
        nystrom: Option<Box<AsymmetricNystrom>>,
    },
    Kpca {
        params: KpcaValidParams,
        /// `‖K a − λ a‖ / λ_1` of every pair.
        residuals: Array1<f64>,
        /// The symmetric Nyström method's landmarks.
        landmarks: Option<Vec<usize>>,
    },
}

impl KsvdValidParams {
    /// KSVD's top-`r` triplets of the operator `g` (`N × M`) by the configured solver, with
    /// certified residuals for the Krylov solvers (computed by two more products for the others,
    /// none for the Nyström solver). The kernel must be given (a bandwidth, not the rule): the
    /// operator's entries were evaluated with it.
    ///
    /// # Errors
    /// [`KsvdError::InvalidParameter`] when the bandwidth rule is set, and the solver's errors
    /// (a failed product of the operator among them).
    pub fn fit_operator<G: MatrixBlocks + LandmarkWeights + ?Sized>(&self, g: &G) -> Result<OperatorFit> {
        if self.bandwidth_rule().is_some() {
            return Err(rule_set());
        }
        let (mut svd, nystrom) = self.solve(g, &mut |_| {})?;
        if nystrom.is_none() && svd.residuals.is_none() {
            svd.residuals = Some(svd.compute_residuals(g)?);
        }
        Ok(OperatorFit {
            svd,
            of: Of::Ksvd {
                params: self.clone(),
                nystrom: nystrom.map(Box::new),
            },
        })
    }
}

impl KpcaValidParams {
    /// KPCA's top-`r` eigenpairs of the square operator `k` (`N × N`, centred by the caller
    /// when [`crate::KpcaParams::center`] is set) by the configured solver, and their residuals.
    ///
    /// # Errors
    /// As [`KsvdValidParams::fit_operator`]; a non-square operator is
    /// [`KsvdError::InvalidParameter`].
    pub fn fit_operator<K: MatrixBlocks + ?Sized>(&self, k: &K) -> Result<OperatorFit> {
        if self.bandwidth_rule().is_some() {
            return Err(rule_set());
        }
        let pairs = self.eigenpairs(k)?;
        Ok(OperatorFit {
            svd: SvdResult::new(pairs.vectors.clone(), pairs.values, pairs.vectors),
            of: Of::Kpca {
                params: self.clone(),
                residuals: pairs.residuals,
                landmarks: pairs.landmarks,
            },
        })
    }
}

fn rule_set() -> KsvdError {
    KsvdError::InvalidParameter {
        name: "bandwidth",
        reason: "a fit on an operator takes the bandwidth its entries were evaluated with, not the rule".into(),
    }
}

impl OperatorFit {
    /// Which estimator ran.
    pub fn estimator(&self) -> Estimator {
        match self.of {
            Of::Ksvd { .. } => Estimator::Ksvd,
            Of::Kpca { .. } => Estimator::Kpca,
        }
    }

    /// `s` (KSVD) or `λ` (KPCA), descending.
    pub fn singular_values(&self) -> &Array1<f64> {
        &self.svd.s
    }

    /// `U` (`N × r`), `S` and `V` (`M × r`; `V = U = A` for KPCA) and the residuals.
    pub fn svd(&self) -> &SvdResult {
        &self.svd
    }

    /// Residuals relative to `s_1` of every triplet (KPCA: of every pair, on both sides);
    /// `None` for a KSVD Nyström fit.
    pub fn residuals(&self) -> Option<Residuals> {
        match &self.of {
            Of::Kpca { residuals, .. } => Some(Residuals {
                left: residuals.clone(),
                right: residuals.clone(),
            }),
            Of::Ksvd { .. } => self.svd.residuals.clone(),
        }
    }

    /// The Nyström landmarks `(I, J)` (KPCA: `J = I`).
    pub fn landmarks(&self) -> Option<(Vec<usize>, Vec<usize>)> {
        match &self.of {
            Of::Ksvd { nystrom, .. } => nystrom.as_ref().map(|ny| (ny.rows.clone(), ny.cols.clone())),
            Of::Kpca { landmarks, .. } => landmarks.as_ref().map(|l| (l.clone(), l.clone())),
        }
    }

    /// The portable model, given the samples the operator's entries came from: the row samples
    /// `x` (all `N`), the column samples `z` (all `M`; `None` for KPCA, `Z = X`) and the
    /// statistics of the whole `G` (`stats`: the SNE normalisers of every row, the centring
    /// means when centred). The model is the one a fit on the samples would give: it keeps what
    /// its projections need (a Nyström model only the landmark samples unless SNE or centring
    /// need all).
    ///
    /// # Errors
    /// [`KsvdError::InvalidParameter`] when the sample counts are not the operator's, and
    /// the kernel's errors for statistics that do not fit the samples.
    pub fn to_model(&self, x: Samples, z: Option<Samples>, stats: KernelStats) -> Result<KsvdModel> {
        let (n, m) = (self.svd.u.nrows(), self.svd.v.nrows());
        let counts = |what: &'static str, got: usize, want: usize| {
            if got == want {
                Ok(())
            } else {
                Err(KsvdError::InvalidParameter {
                    name: what,
                    reason: format!("{got} samples given, the fit's operator has {want}"),
                })
            }
        };
        counts("x", x.len(), n)?;
        match &self.of {
            Of::Ksvd { params, nystrom } => {
                let Some(z) = z else {
                    return Err(KsvdError::InvalidParameter {
                        name: "z",
                        reason: "a KSVD model needs its column samples".into(),
                    });
                };
                counts("z", z.len(), m)?;
                let kernel = params.kernel_for(&x)?;
                // Projections evaluate in the fit's precision, as the model file's do.
                let g =
                    KernelMatrix::matrix_free_with_stats(x, z, kernel.clone(), stats)?.into_precision(params.precision);
                let params = KsvdValidParams {
                    kernel: ParamKernel::from(kernel),
                    precision: g.precision(),
                    ..params.clone()
                };
                ksvd_model(
                    params,
                    &g,
                    &self.svd,
                    nystrom.as_deref(),
                    self.svd.residuals.clone(),
                    None,
                )
            }
            Of::Kpca {
                params,
                residuals,
                landmarks,
            } => {
                if z.is_some() {
                    return Err(KsvdError::InvalidParameter {
                        name: "z",
                        reason: "KPCA has Z = X".into(),
                    });
                }
                let kernel = params.kernel_for(&x)?;
                let k = KernelMatrix::matrix_free_with_stats(x.clone(), x, kernel.clone(), stats)?
                    .into_precision(params.precision);
                let params = KpcaValidParams {
                    kernel: ParamKernel::from(kernel),
                    precision: k.precision(),
                    ..params.clone()
                };
                Ok(kpca_model(
                    params.as_ksvd(),
                    &k,
                    &self.svd.s,
                    &self.svd.u,
                    residuals,
                    landmarks.as_deref(),
                ))
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::prelude::*;
    use ndarray::Array2;

    fn data(n: usize, d: usize, seed: u64) -> Array2<f64> {
        let mut rng = ksvd_linalg::random::rng_from_seed(seed);
        ksvd_linalg::random::gaussian_matrix(&mut rng, n, d)
    }

    fn max_abs(a: &Array2<f64>) -> f64 {
        a.iter().fold(0.0f64, |m, v| m.max(v.abs()))
    }

    /// A fit on the kernel matrix as an operator is the fit on the samples (the same solver on
    /// the same products), and its model projects new rows as the fitted one does: Lanczos
    /// (certified residuals), Nyström (the same landmarks), centred SNE; KPCA likewise.
    #[test]
    fn a_fit_on_the_operator_is_the_fit_on_the_samples() {
        let (x, z, new) = (data(60, 3, 1), data(45, 3, 2), data(7, 3, 3));
        let solvers = [
            Solver::Lanczos(LanczosParams::default()),
            SolverKind::Nystrom
                .solver(&SolverOptions {
                    n_landmarks: Some(20),
                    ..SolverOptions::default()
                })
                .unwrap(),
        ];
        for solver in solvers {
            for (kernel, center) in [(Kernel::Rbf { gamma: 1.4 }, false), (Kernel::Sne { gamma: 1.1 }, true)] {
                let p = Ksvd::params()
                    .kernel(kernel)
                    .rank(3)
                    .solver(solver.clone())
                    .center(center)
                    .check()
                    .unwrap();
                let (xs, zs) = (Samples::dense(x.clone()).unwrap(), Samples::dense(z.clone()).unwrap());
                let fitted = p.fit_samples(xs.clone(), zs.clone()).unwrap();
                let g = p.kernel_matrix(xs.clone(), zs.clone()).unwrap();
                let fit = p.fit_operator(&g).unwrap();
                let s_ref = fitted.svd().s.clone();
                assert!((fit.singular_values() - &s_ref)
                    .iter()
                    .all(|d| d.abs() <= 1e-12 * s_ref[0]));
                assert!(
                    max_abs(&(&fit.svd().u - &fitted.svd().u)) < 1e-10,
                    "{kernel:?} {solver:?}"
                );
                assert_eq!(fit.landmarks().is_some(), matches!(solver, Solver::Nystrom { .. }));
                if let Some(r) = fit.residuals() {
                    assert!(r.left.iter().chain(r.right.iter()).all(|&v| v <= 1e-8));
                }
                let model = fit.to_model(xs, Some(zs), g.stats()).unwrap();
                let want = fitted
                    .to_model()
                    .unwrap()
                    .transform(&Samples::dense(new.clone()).unwrap())
                    .unwrap();
                let got = model.transform(&Samples::dense(new.clone()).unwrap()).unwrap();
                assert!(max_abs(&(&got - &want)) < 1e-10 * max_abs(&want));
            }
        }
        let p = Kpca::params()
            .kernel(Kernel::Rbf { gamma: 1.2 })
            .rank(3)
            .check()
            .unwrap();
        let xs = Samples::dense(x.clone()).unwrap();
        let k = p.kernel_matrix(xs.clone()).unwrap();
        let fit = p.fit_operator(&k).unwrap();
        let fitted = p.fit_samples(xs.clone()).unwrap();
        assert!(max_abs(&(&fit.svd().u - &fitted.eigenvectors())) < 1e-10);
        let model = fit.to_model(xs.clone(), None, k.stats()).unwrap();
        let want = fitted
            .to_model()
            .unwrap()
            .transform(&Samples::dense(new.clone()).unwrap())
            .unwrap();
        assert!(max_abs(&(&model.transform(&Samples::dense(new).unwrap()).unwrap() - &want)) < 1e-10);
        // Wrong sample counts, a missing Z, the bandwidth rule: typed errors.
        assert!(matches!(
            fit.to_model(Samples::dense(data(5, 3, 4)).unwrap(), None, k.stats()),
            Err(KsvdError::InvalidParameter { name: "x", .. })
        ));
        let ruled = Ksvd::params().rank(2).check().unwrap();
        let g = ruled.kernel_matrix(xs.clone(), xs).unwrap();
        assert!(matches!(
            ruled.fit_operator(&g),
            Err(KsvdError::InvalidParameter { name: "bandwidth", .. })
        ));
    }
}
