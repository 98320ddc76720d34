//! KPCA: the symmetric case of the model (`Z = X`, a symmetric kernel), solved by the same
//! [`Solver`]s as KSVD.
use crate::error::{KsvdError, Result};
use crate::fitted::{center_precomputed, kpca_model, kpca_precomputed_model, KsvdModel};
use crate::model::{
    check_bandwidth_rule, KsvdValidParams, Solver, DEFAULT_BANDWIDTH_RULE, DEFAULT_KERNEL, DEFAULT_RANK, DEFAULT_SOLVER,
};
use crate::projection::{Projector, Scaling};
use crate::user_kernel::ParamKernel;
use ksvd_kernels::{AnyKernel, Kernel, KernelFunction, KernelMatrix, Samples};
use ksvd_linalg::{LinearOperator, MatrixBlocks, MemoryBudget, Precision};
use ksvd_nystrom::{symmetric_nystrom, Gram, Sampling};
use linfa::dataset::DatasetBase;
use linfa::param_guard::ParamGuard;
use linfa::traits::Fit;
use ndarray::{Array1, Array2, ArrayView1, ArrayView2, Axis};
use std::sync::Arc;

/// Validated KPCA hyper-parameters (see [`KpcaParams`]). Serialised without the memory
/// budget (a run-time setting), as [`crate::KsvdValidParams`].
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct KpcaValidParams {
    /// As [`crate::KsvdValidParams`]'s: built-in, or a user's function recorded by name.
    pub(crate) kernel: ParamKernel,
    /// The `k` of the bandwidth rule (`None`: the kernel's own `γ`).
    #[cfg_attr(feature = "serde", serde(default))]
    pub(crate) bandwidth_rule: Option<f64>,
    pub(crate) rank: usize,
    pub(crate) solver: Solver,
    pub(crate) center: bool,
    pub(crate) seed: u64,
    /// Memory budget (`None`: [`MemoryBudget::auto`]); never serialised.
    #[cfg_attr(feature = "serde", serde(skip))]
    pub(crate) memory_budget: Option<MemoryBudget>,
    /// Precision of a stored `K` and of the products with it (model files without it: `f64`).
    #[cfg_attr(feature = "serde", serde(default))]
    pub(crate) precision: Precision,
}

/// KPCA hyper-parameters, linfa style: build with [`Kpca::params`], validated once by
/// [`ParamGuard::check`] (or implicitly by [`Fit::fit`]).
///
/// Defaults (the Rust column of `docs/conventions.md`, as [`crate::KsvdParams`] but centred):
/// rank 2; RBF with the bandwidth rule `γ = sqrt(M γ_x)`; the [`Solver::Auto`] solver at
/// tolerance 1e-8; centred (`K̃ = H K H`); seed 0; the memory budget [`MemoryBudget::auto`].
#[derive(Debug, Clone, PartialEq)]
pub struct KpcaParams(KpcaValidParams);

impl Default for KpcaParams {
    fn default() -> Self {
        KpcaParams(KpcaValidParams {
            kernel: ParamKernel::Builtin(DEFAULT_KERNEL),
            bandwidth_rule: DEFAULT_BANDWIDTH_RULE,
            rank: DEFAULT_RANK,
            solver: DEFAULT_SOLVER,
            center: true,
            seed: 0,
            memory_budget: None,
            precision: Precision::F64,
        })
    }
}

impl KpcaParams {
    kernel_setters! {
        /// Sets the kernel; it must be symmetric and positive semi-definite (linear, RBF,
        /// Laplacian; a polynomial kernel only where it is PSD). SNE is rejected: it is not
        /// symmetric. A bandwidth given here is used as given: this turns the bandwidth rule off
        /// (call [`KpcaParams::bandwidth_rule`] after it to turn it back on).
        kernel: Kernel;
        /// Sets a kernel function of yours (as [`crate::KsvdParams::kernel_fn`]); KPCA needs it
        /// symmetric and positive semi-definite, which is not checked (the eigensolvers assume it).
        /// Turns the bandwidth rule off.
        kernel_fn: Arc<dyn KernelFunction>;
    }
    setters! {
        /// The paper's bandwidth rule, as [`crate::KsvdParams::bandwidth_rule`]: at fit time the
        /// kernel's bandwidth becomes `γ = k sqrt(M γ_x)` over the samples (default `Some(1.0)`).
        bandwidth_rule: Option<f64>;
        /// Sets the rank `r` (number of components; default 2).
        rank: usize;
        /// Sets the solver (default [`Solver::Auto`] at tolerance 1e-8). [`Solver::Nystrom`] means
        /// the symmetric Nyström method ([`ksvd_nystrom::symmetric_nystrom`]) with `landmarks`
        /// uniformly sampled samples.
        solver: Solver;
        /// Centres `K` on both sides, `K̃ = H K H` (the default, as KPCA is usually defined).
        center: bool;
        /// Seed of every random choice (landmarks, starting vectors, random projections; default 0).
        seed: u64;
        /// Sets the memory budget for storing `K` and for the dense solver (as for KSVD: a run-time
        /// setting, not saved with a model).
        memory_budget: MemoryBudget => Some;
        /// Precision of `K`'s entries and of the products with them, as
        /// [`crate::KsvdParams::precision`] (default `f64`; `f32` needs a tolerance of at least
        /// `1e-6`).
        precision: Precision;
    }
}

impl ParamGuard for KpcaParams {
    type Checked = KpcaValidParams;
    type Error = KsvdError;

    fn check_ref(&self) -> Result<&KpcaValidParams> {
        let p = &self.0;
        p.kernel.validate()?;
        check_bandwidth_rule(p.bandwidth_rule)?;
        if matches!(p.kernel, ParamKernel::Builtin(Kernel::Sne { .. })) {
            return Err(KsvdError::InvalidParameter {
                name: "kernel",
                reason: "KPCA needs a symmetric kernel; SNE is asymmetric (use Ksvd)".into(),
            });
        }
        if p.rank == 0 {
            return Err(KsvdError::InvalidParameter {
                name: "rank",
                reason: "must be at least 1".into(),
            });
        }
        crate::model::check_precision(&p.solver, p.precision)?;
        if let Solver::Nystrom {
            landmarks,
            cols,
            sampling,
            ..
        } = p.solver
        {
            if landmarks < p.rank {
                return Err(KsvdError::InvalidParameter {
                    name: "landmarks",
                    reason: format!("{landmarks} landmarks cannot give rank {}", p.rank),
                });
            }
            if cols.is_some() || sampling != Sampling::Uniform {
                return Err(KsvdError::InvalidParameter {
                    name: "solver",
                    reason: "the symmetric Nyström method samples one set of landmarks uniformly: \
                             leave cols unset and sampling uniform"
                        .into(),
                });
            }
        }
        Ok(p)
    }
    fn check(self) -> Result<KpcaValidParams> {
        self.check_ref()?;
        Ok(self.0)
    }
}

impl KpcaValidParams {
    /// The built-in kernel (of a fitted model's [`Kpca::params_used`]: the kernel the fit
    /// used); `Kernel::Linear` stands in for a user's function
    /// ([`KpcaValidParams::kernel_function_name`]).
    pub fn kernel(&self) -> &Kernel {
        self.kernel.builtin()
    }
    /// The name of the user's kernel function, `None` for a built-in kernel.
    pub fn kernel_function_name(&self) -> Option<&str> {
        self.kernel.custom_name()
    }
    /// The user's kernel function, when one is set and attached.
    pub fn kernel_function(&self) -> Option<&Arc<dyn KernelFunction>> {
        self.kernel.function()
    }
    /// The `k` of the bandwidth rule, when the rule is on.
    pub fn bandwidth_rule(&self) -> Option<f64> {
        self.bandwidth_rule
    }
    /// The kernel a fit on the samples `x` uses: the rule's bandwidth over `x` when it is on
    /// (as [`crate::KsvdValidParams::kernel_for`]).
    pub fn kernel_for(&self, x: &Samples) -> Result<AnyKernel> {
        self.kernel.resolve(self.bandwidth_rule, x)
    }
    /// The rank `r`.
    pub fn rank(&self) -> usize {
        self.rank
    }
    /// The solver.
    pub fn solver(&self) -> &Solver {
        &self.solver
    }
    /// Whether `K` is centred on both sides.
    pub fn center(&self) -> bool {
        self.center
    }
    /// The seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }
    /// The memory budget for storing `K` and for the dense solver (a run-time setting, not
    /// serialised).
    pub fn memory_budget(&self) -> MemoryBudget {
        self.memory_budget.unwrap_or_else(MemoryBudget::auto)
    }
    /// The precision of `K`'s entries and products (a fitted model records the one its fit
    /// computed in).
    pub fn precision(&self) -> Precision {
        self.precision
    }

    /// These parameters in KSVD's form (no compatibility, no user landmarks): how a KPCA model
    /// records them.
    pub(crate) fn as_ksvd(&self) -> KsvdValidParams {
        KsvdValidParams {
            kernel: self.kernel.clone(),
            bandwidth_rule: self.bandwidth_rule,
            rank: self.rank,
            solver: self.solver.clone(),
            center: self.center,
            compat: None,
            seed: self.seed,
            landmark_indices: None,
            memory_budget: None,
            precision: self.precision,
        }
    }

    /// Fits KPCA on the samples `x` (`N` of them): the top-`r` eigenpairs of
    /// `K_ij = k(x_i, x_j)` (of `K̃ = H K H` when centred).
    pub fn fit_samples(&self, x: Samples) -> Result<Kpca> {
        self.fit_kernel_matrix(self.kernel_matrix(x)?)
    }

    /// The kernel matrix these parameters fit, `K_ij = k(x_i, x_j)` with the kernel
    /// [`KpcaValidParams::kernel_for`] `x`: stored when its `N²` values fit the memory budget,
    /// centred when [`KpcaParams::center`] is set (as [`crate::KsvdValidParams::kernel_matrix`]
    /// builds `G`).
    pub fn kernel_matrix(&self, x: Samples) -> Result<KernelMatrix> {
        let kernel = self.kernel_for(&x)?;
        let k = KernelMatrix::with_budget_in(x.clone(), x, kernel, self.memory_budget(), self.precision)?;
        Ok(if self.center { k.centered()? } else { k })
    }

    /// Fits KPCA on an already built kernel matrix `K` of the samples with themselves (from
    /// [`KpcaValidParams::kernel_matrix`], or built by the caller; centred or not, it is used as
    /// given, and its kernel is the one the fit records).
    ///
    /// # Errors
    /// [`KsvdError::InvalidParameter`] when `k` is not square, and the solver's errors.
    pub fn fit_kernel_matrix(&self, k: KernelMatrix) -> Result<Kpca> {
        crate::model::check_precision(&self.solver, k.precision())?;
        let pairs = self.eigenpairs(&k)?;
        // As for KSVD: the record names the kernel and the precision the fit used.
        let params = KpcaValidParams {
            kernel: ParamKernel::from(k.kernel().clone()),
            precision: k.precision(),
            ..self.clone()
        };
        Ok(Kpca {
            params,
            k,
            values: pairs.values,
            vectors: pairs.vectors,
            residuals: pairs.residuals,
            landmarks: pairs.landmarks,
        })
    }

    /// Fits KPCA on a precomputed kernel matrix `K` (`N × N`, `K_ij = k(x_i, x_j)` for a
    /// symmetric positive semi-definite kernel of yours), centred on both sides (`H K H`) when
    /// [`KpcaParams::center`] is set; the kernel parameter and the bandwidth rule are not used.
    /// The same solvers as [`KpcaValidParams::fit_samples`] (`Solver::Nystrom`: the symmetric
    /// Nyström method on `K`). The model (estimator `Kpca`) projects kernel values
    /// ([`KsvdModel::project_kernel_rows`]: `k̃(x', X) A Λ^-p`, the new rows centred with the
    /// training means, as scikit-learn's `KernelPCA(kernel="precomputed")`); it stores the
    /// centring means, not `K`.
    ///
    /// # Errors
    /// [`KsvdError::InvalidParameter`] when `k` is not square, a non-finite entry, and the
    /// solver's errors.
    pub fn fit_precomputed(&self, k: ArrayView2<'_, f64>) -> Result<KsvdModel> {
        ksvd_linalg::check_finite("precomputed kernel matrix", k)?;
        let mut kc = k.to_owned();
        let means = center_precomputed(&mut kc, self.center)?;
        let pairs = self.eigenpairs(&kc)?;
        kpca_precomputed_model(
            self.as_ksvd(),
            kc.nrows(),
            means,
            &pairs.values,
            &pairs.vectors,
            &pairs.residuals,
            pairs.landmarks.as_deref(),
        )
    }

    /// The top-`r` eigenpairs of the square `k` by the configured solver, and their residuals
    /// `‖K a_l − λ_l a_l‖ / λ_1` (one product with `k`).
    pub(crate) fn eigenpairs<K: MatrixBlocks + ?Sized>(&self, k: &K) -> Result<Eigenpairs> {
        if k.nrows() != k.ncols() {
            return Err(KsvdError::InvalidParameter {
                name: "kernel matrix",
                reason: format!(
                    "KPCA needs the square K of the samples with themselves, got {} x {}",
                    k.nrows(),
                    k.ncols()
                ),
            });
        }
        let n = k.nrows();
        let (values, vectors, landmarks) = match &self.solver {
            Solver::Nystrom { landmarks, .. } => {
                ksvd_solvers::check_rank(n, n, self.rank)?;
                let ny = symmetric_nystrom(k, Gram::Itself, self.rank, (*landmarks).min(n), self.seed)?;
                (ny.values, ny.vectors, Some(ny.landmarks))
            }
            // Every other solver is KSVD's on the square matrix K: for a symmetric PSD K the
            // singular triplets (u, s, v) are eigenpairs (u = v, λ = s).
            solver => {
                let svd = solver.solve_operator(k, self.rank, self.seed, self.memory_budget())?;
                (svd.s, svd.u, None)
            }
        };
        let ka = k.apply(vectors.view())?;
        let lambda1 = values.first().copied().unwrap_or(0.0).abs();
        let residuals = (&ka - &(&vectors * &values.view().insert_axis(Axis(0))))
            .axis_iter(Axis(1))
            .map(|c| {
                let r = c.dot(&c).sqrt();
                if lambda1 > 0.0 {
                    r / lambda1
                } else {
                    r
                }
            })
            .collect();
        Ok(Eigenpairs {
            values,
            vectors,
            residuals,
            landmarks,
        })
    }
}

/// The eigenpairs of a KPCA fit, their residuals and the Nyström landmarks.
pub(crate) struct Eigenpairs {
    pub(crate) values: Array1<f64>,
    pub(crate) vectors: Array2<f64>,
    pub(crate) residuals: Array1<f64>,
    pub(crate) landmarks: Option<Vec<usize>>,
}

/// Fits on a data matrix (records, `N × M`): the samples are its rows. Targets are ignored.
impl<T> Fit<Array2<f64>, T, KsvdError> for KpcaValidParams {
    type Object = Kpca;

    fn fit(&self, dataset: &DatasetBase<Array2<f64>, T>) -> Result<Kpca> {
        // `Samples::dense` rejects empty and non-finite data with a typed error.
        self.fit_samples(Samples::dense(dataset.records().to_owned())?)
    }
}

/// A fitted KPCA model: the top-`r` eigenpairs `K̃ a_l = λ_l a_l` of the (centred) kernel
/// matrix of the training samples, the symmetric case of [`crate::Ksvd`] (`Z = X`,
/// `U = V = A`, `S = Λ`).
///
/// New samples project like every fitted model ([`Kpca::project_rows`], [`crate::Scaling`]):
/// [`Kpca::transform`] is `k̃(x', X) A Λ^-½`, scikit-learn's `KernelPCA.transform` (`A Λ^½` at
/// the training samples), with `k̃` centred by the training means exactly as
/// [`crate::KsvdModel`] centres new rows ([`KernelMatrix::cross_rows`]); [`Kpca::extend_rows`]
/// gives `A` back at the training samples, `Scaling::Full` the scores `k̃(x', X) A` (`A Λ`).
/// With the Nyström solver, `A` and `Λ` approximate the eigenpairs (`Ã = K̃_{N,L} Q Λ_L⁻¹`
/// normalised, `λ̃ = (N/n) λ_L`; all samples as landmarks give the exact eigenpairs) and the
/// projections run over all training samples with them (so `transform(X) ≈ Ã Λ̃^½`).
/// [`Kpca::to_model`] gives the portable [`crate::KsvdModel`] (estimator `Kpca`).
///
/// ```
/// use ksvd::prelude::*;
/// use ndarray::Array2;
///
/// let x = Array2::from_shape_fn((40, 3), |(i, j)| ((i * 7 + j * 3) % 11) as f64 / 11.0);
/// let kpca = Kpca::params()
///     .kernel(Kernel::Rbf { gamma: 0.8 })
///     .rank(3)
///     .solver(Solver::Exact)
///     .check()?
///     .fit_samples(Samples::dense(x.clone())?)?;
/// assert_eq!(kpca.eigenvectors().dim(), (40, 3));
/// // The transform of the training samples is A Λ^½.
/// let t = kpca.transform(&Samples::dense(x)?)?;
/// let a = kpca.eigenvectors();
/// assert!((t[[0, 0]] - a[[0, 0]] * kpca.eigenvalues()[0].sqrt()).abs() < 1e-10);
/// # Ok::<(), ksvd::KsvdError>(())
/// ```
#[derive(Debug, Clone)]
pub struct Kpca {
    params: KpcaValidParams,
    k: KernelMatrix,
    values: Array1<f64>,
    vectors: Array2<f64>,
    residuals: Array1<f64>,
    landmarks: Option<Vec<usize>>,
}

impl Kpca {
    /// Default parameters (see [`KpcaParams`]: rank 2, RBF with the bandwidth rule, the `Auto`
    /// solver at tolerance 1e-8, centred, seed 0).
    pub fn params() -> KpcaParams {
        KpcaParams::default()
    }
    /// Eigenvalues `λ_1 ≥ … ≥ λ_r` of `K̃` (approximate for the Nyström solver).
    pub fn eigenvalues(&self) -> ArrayView1<'_, f64> {
        self.values.view()
    }
    /// Eigenvectors `A` (`N × r`, unit columns; orthonormal for every solver but Nyström).
    pub fn eigenvectors(&self) -> ArrayView2<'_, f64> {
        self.vectors.view()
    }
    /// Residuals `‖K̃ a_l − λ_l a_l‖ / λ_1` of every pair, computed at the fit.
    pub fn residuals(&self) -> ArrayView1<'_, f64> {
        self.residuals.view()
    }
    /// The kernel matrix `K̃` (centred when fitted centred).
    pub fn kernel_matrix(&self) -> &KernelMatrix {
        &self.k
    }
    /// The hyper-parameters, with the kernel the fit used (its bandwidth chosen by the rule
    /// when the rule was on).
    pub fn params_used(&self) -> &KpcaValidParams {
        &self.params
    }
    /// The bandwidth `γ` the fit used (`None` for kernels without one).
    pub fn bandwidth(&self) -> Option<f64> {
        self.params.kernel().gamma()
    }
    /// The Nyström landmarks (indices into the training samples), when that solver was used.
    pub fn landmarks(&self) -> Option<&[usize]> {
        self.landmarks.as_deref()
    }
    /// The centring means of `K` (`None` when not centred): row means (= column means, `K`
    /// being symmetric) and the grand mean.
    pub fn centering(&self) -> Option<ksvd_kernels::Centering> {
        self.k.stats().centering
    }

    /// Projections of new samples `x'` (`new × r`): `k̃(x', X) A Λ^-p` for the [`Scaling`] `p`
    /// (`A Λ^{1-p}` at the training samples), centred with the training means.
    pub fn project_rows(&self, new_x: &Samples, scaling: Scaling) -> Result<Array2<f64>> {
        self.with_projector(|p| p.rows(new_x, scaling))
    }
    /// [`Kpca::project_rows`] from the other side, `k̃(X, z')ᵀ A Λ^-p`: the same values for a
    /// symmetric kernel (`Z = X`); there for the uniform interface of every fitted model.
    pub fn project_cols(&self, new_z: &Samples, scaling: Scaling) -> Result<Array2<f64>> {
        self.with_projector(|p| p.cols(new_z, scaling))
    }
    /// [`Kpca::project_rows`] of the rows of a data matrix (the samples themselves).
    pub fn project_data_rows(&self, new_rows: ArrayView2<'_, f64>, scaling: Scaling) -> Result<Array2<f64>> {
        self.project_rows(&Samples::dense(new_rows.to_owned())?, scaling)
    }

    crate::projection::named_projections!();

    fn with_projector<T>(&self, f: impl FnOnce(&Projector<'_>) -> Result<T>) -> Result<T> {
        let all: Vec<usize> = (0..self.k.ncols()).collect();
        f(&Projector {
            g: Some(&self.k),
            row_ext: &all,
            col_ext: &all,
            s: self.values.view(),
            u: self.vectors.view(),
            v: self.vectors.view(),
            landmark_coef: None,
        })
    }

    /// The portable model ([`crate::KsvdModel`], estimator `Kpca`): the symmetric case of the
    /// KSVD model, `Z = X`, `U = V = A`, `s = λ`, with the same projections, file format and
    /// summary. The samples are stored once; no further pass over `K`.
    pub fn to_model(&self) -> Result<KsvdModel> {
        Ok(kpca_model(
            self.params.as_ksvd(),
            &self.k,
            &self.values,
            &self.vectors,
            &self.residuals,
            self.landmarks(),
        ))
    }
}

crate::projection::linfa_transformer!(Kpca);

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use ksvd_linalg::{dense, MatrixBlocks};
    use ksvd_solvers::{LanczosParams, RsvdParams};

    fn data(n: usize, d: usize, seed: u64) -> Array2<f64> {
        let mut s = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        Array2::from_shape_fn((n, d), |_| {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (s >> 11) as f64 / (1u64 << 53) as f64
        })
    }

    fn max_abs(a: &Array2<f64>) -> f64 {
        a.iter().fold(0.0f64, |m, v| m.max(v.abs()))
    }

    /// `K̃` formed densely by hand: `K_ij − r_i − r_j + g`.
    fn dense_centred(x: &Array2<f64>, gamma: f64, center: bool) -> Array2<f64> {
        let n = x.nrows();
        let mut k = Array2::from_shape_fn((n, n), |(i, j)| {
            let d = &x.row(i) - &x.row(j);
            (-d.dot(&d) / (gamma * gamma)).exp()
        });
        if center {
            let r = k.mean_axis(Axis(1)).unwrap();
            let g = r.mean().unwrap();
            for ((i, j), v) in k.indexed_iter_mut() {
                *v += g - r[i] - r[j];
            }
        }
        k
    }

    fn fit(x: &Array2<f64>, rank: usize, solver: Solver, center: bool) -> Kpca {
        Kpca::params()
            .kernel(Kernel::Rbf { gamma: 0.7 })
            .rank(rank)
            .solver(solver)
            .center(center)
            .seed(3)
            .check()
            .unwrap()
            .fit_samples(Samples::dense(x.clone()).unwrap())
            .unwrap()
    }

    /// Every solver agrees with a dense symmetric eigendecomposition of the (centred) kernel:
    /// eigenvalues, the projector on the eigenvectors, orthonormality and residuals.
    #[test]
    fn agrees_with_a_dense_eigendecomposition() {
        let (n, r) = (60, 4);
        let x = data(n, 3, 1);
        let eps_n = f64::EPSILON * (8.0 * n as f64).sqrt();
        for center in [true, false] {
            let k = dense_centred(&x, 0.7, center);
            let (w, q) = dense::symmetric_eigen(k.view()).unwrap();
            let qr = q.slice(ndarray::s![.., ..r]).to_owned();
            let lanczos = Solver::Lanczos(LanczosParams {
                tol: 1e-12,
                ..Default::default()
            });
            let rsvd = Solver::Rsvd(RsvdParams {
                power_iters: 12,
                ..Default::default()
            });
            for (solver, tol) in [
                (Solver::Exact, 1e3 * eps_n),
                (Solver::Auto { tol: 1e-12 }, 1e4 * eps_n),
                (lanczos, 1e4 * eps_n),
                (rsvd, 1e-6),
            ] {
                let m = fit(&x, r, solver.clone(), center);
                let a = m.eigenvectors().to_owned();
                for l in 0..r {
                    assert!((m.eigenvalues()[l] - w[l]).abs() <= tol * w[0], "{solver:?} λ_{l}");
                }
                let gap = max_abs(&(&a.dot(&a.t()) - &qr.dot(&qr.t())));
                assert!(gap <= tol * 1e2, "{solver:?} center={center}: projector gap {gap}");
                let ortho = max_abs(&(&a.t().dot(&a) - &Array2::<f64>::eye(r)));
                assert!(ortho <= 1e2 * eps_n, "{solver:?}: orthonormality {ortho}");
                // Residuals as reported and as recomputed from the dense K̃.
                let res = &k.dot(&a) - &(&a * &m.eigenvalues().insert_axis(Axis(0)));
                let worst = res.axis_iter(Axis(1)).map(|c| c.dot(&c).sqrt()).fold(0.0, f64::max) / w[0];
                let reported = m.residuals().iter().copied().fold(0.0, f64::max);
                assert!(
                    worst <= tol * 1e2 && reported <= tol * 1e2,
                    "{solver:?}: {worst} {reported}"
                );
                assert!((worst - reported).abs() <= 1e2 * eps_n);
            }
        }
    }

    #[test]
    fn nystrom_with_every_sample_as_landmark_is_exact() {
        let (n, r) = (50, 3);
        let x = data(n, 2, 7);
        let eps_n = f64::EPSILON * (8.0 * n as f64).sqrt();
        let exact = fit(&x, r, Solver::Exact, true);
        let ny = fit(
            &x,
            r,
            Solver::Nystrom {
                landmarks: n,
                cols: None,
                sampling: Sampling::Uniform,
                inner: Default::default(),
            },
            true,
        );
        assert_eq!(ny.landmarks().map(<[usize]>::len), Some(n));
        let l1 = exact.eigenvalues()[0];
        for l in 0..r {
            assert!((ny.eigenvalues()[l] - exact.eigenvalues()[l]).abs() <= 1e3 * eps_n * l1);
        }
        let (a, b) = (exact.eigenvectors(), ny.eigenvectors());
        let gap = max_abs(&(&a.dot(&a.t()) - &b.dot(&b.t())));
        // Eigenvector perturbation: eps-level error over the relative gap λ_r − λ_{r+1}.
        assert!(gap <= 1e5 * eps_n, "projector gap {gap}");
        assert!(ny.residuals().iter().all(|&v| v <= 1e5 * eps_n));
    }

    /// `transform` is scikit-learn's `KernelPCA.transform`: the dense reference
    /// `k̃(x', X) A Λ^-½` on training and new samples (a new sample centred with the training
    /// means), `A Λ^½` at the training samples; `Scaling::Full` is `k̃(x', X) A` (`A Λ`) and
    /// `extend_rows` gives `A` back.
    #[test]
    fn transform_is_the_dense_centred_reference_times_lambda_to_the_minus_half() {
        let (n, r) = (45, 3);
        let x = data(n, 3, 11);
        let eps_n = f64::EPSILON * (8.0 * n as f64).sqrt();
        let m = fit(&x, r, Solver::Exact, true);
        let a = m.eigenvectors().to_owned();
        let lam = m.eigenvalues().to_owned();
        let inv_sqrt = lam.mapv(|l| 1.0 / l.sqrt());
        // Training samples: K̃ A Λ^-½ = A Λ^½.
        let train = Samples::dense(x.clone()).unwrap();
        let k = dense_centred(&x, 0.7, true);
        let t = m.transform(&train).unwrap();
        let tol = 1e2 * eps_n * (n as f64) * lam[0].sqrt();
        assert!(max_abs(&(&t - &(k.dot(&a) * &inv_sqrt))) <= tol);
        assert!(max_abs(&(&t - &(&a * &lam.mapv(f64::sqrt)))) <= tol);
        let full = m.project_rows(&train, Scaling::Full).unwrap();
        assert!(max_abs(&(&full - &(&a * &lam))) <= 1e2 * eps_n * lam[0]);
        assert!(max_abs(&(&m.extend_rows(&train).unwrap() - &a)) <= 1e2 * eps_n * (n as f64));
        // New samples: k̃(x', x_i) = k(x', x_i) − mean_j k(x', x_j) − r_i + g.
        let new = data(5, 3, 99);
        let raw = Array2::from_shape_fn((5, n), |(p, i)| {
            let d = &new.row(p) - &x.row(i);
            (-d.dot(&d) / 0.49).exp()
        });
        let kraw = dense_centred(&x, 0.7, false);
        let rmean = kraw.mean_axis(Axis(1)).unwrap();
        let g = rmean.mean().unwrap();
        let mut kc = raw.clone();
        let own = raw.mean_axis(Axis(1)).unwrap();
        for ((p, i), v) in kc.indexed_iter_mut() {
            *v += g - own[p] - rmean[i];
        }
        let got = m.transform(&Samples::dense(new.clone()).unwrap()).unwrap();
        assert!(max_abs(&(&got - &(kc.dot(&a) * &inv_sqrt))) <= tol);
        // The other side gives the same values (K is symmetric), and so does linfa's transformer.
        let cols = m.transform_cols(&Samples::dense(new.clone()).unwrap()).unwrap();
        assert!(max_abs(&(&cols - &got)) <= tol);
        let via_linfa = linfa::traits::Transformer::transform(&m, &new).unwrap();
        assert_eq!(via_linfa, got);
        // The stored means are those of K.
        let c = m.centering().unwrap();
        assert!((c.grand_mean - g).abs() <= 1e2 * eps_n);
        let k = m.kernel_matrix();
        assert_eq!((k.nrows(), k.ncols()), (n, n));
        let blk = k.block(&[0, 1], &[0, 1]).unwrap();
        assert!((blk[[0, 1]] - blk[[1, 0]]).abs() <= 1e2 * eps_n);
    }

    #[test]
    fn bad_input_is_a_typed_error() {
        let x = data(10, 2, 0);
        let p = || Kpca::params().kernel(Kernel::Rbf { gamma: 1.0 }).solver(Solver::Exact);
        // Rank beyond the number of samples.
        let e = p()
            .rank(11)
            .check()
            .unwrap()
            .fit_samples(Samples::dense(x.clone()).unwrap());
        assert!(matches!(e, Err(KsvdError::Solver(_))), "{e:?}");
        assert!(matches!(
            p().rank(0).check(),
            Err(KsvdError::InvalidParameter { name: "rank", .. })
        ));
        assert!(matches!(
            p().kernel(Kernel::Sne { gamma: 1.0 }).check(),
            Err(KsvdError::InvalidParameter { name: "kernel", .. })
        ));
        let ny = Solver::Nystrom {
            landmarks: 2,
            cols: None,
            sampling: Sampling::Uniform,
            inner: Default::default(),
        };
        assert!(matches!(
            p().rank(3).solver(ny).check(),
            Err(KsvdError::InvalidParameter { name: "landmarks", .. })
        ));
        // NaN and empty samples.
        let mut bad = x.clone();
        bad[[3, 1]] = f64::NAN;
        let valid = p().rank(2).check().unwrap();
        assert!(matches!(valid.fit(&DatasetBase::from(bad)), Err(KsvdError::Kernel(_))));
        assert!(matches!(
            valid.fit(&DatasetBase::from(Array2::<f64>::zeros((0, 2)))),
            Err(KsvdError::Kernel(ksvd_kernels::KernelError::Empty { .. }))
        ));
        // The fitted model rejects new samples of another dimension.
        let m = valid.fit(&DatasetBase::from(x)).unwrap();
        assert!(m.transform(&Samples::dense(Array2::zeros((2, 5))).unwrap()).is_err());
    }
}
