//! The KSVD model: parameters, fitting and projections.
use crate::error::{KsvdError, Result};
use crate::fitted::CompatMap;
use crate::projection::{Projector, Scaling};
use crate::user_kernel::ParamKernel;
use ksvd_kernels::compat::{self, CompatSide};
use ksvd_kernels::graph::bandwidth_rule;
use ksvd_kernels::{AnyKernel, Compat, Kernel, KernelFunction, KernelMatrix, Samples};
use ksvd_linalg::{LinearOperator, MatrixBlocks, Twins};
use ksvd_linalg::{MemoryBudget, Precision};
use ksvd_nystrom::{asymmetric_nystrom, AsymmetricNystrom, InnerSolver, LandmarkWeights, NystromParams, Sampling};
use ksvd_solvers::{
    auto_svd, block_krylov_svd, dense_svd_numbers, dense_svd_operator, lanczos_svd_with_progress, randomized_svd,
    twin_split_svd, AutoParams, BlockKrylovParams, LanczosParams, ProgressFn, RsvdParams, SvdResult, TwinSplitInfo,
};
use linfa::dataset::{DatasetBase, Records};
use linfa::param_guard::ParamGuard;
use linfa::traits::Fit;
use ndarray::{Array2, ArrayView1, ArrayView2};
use std::sync::Arc;

/// How the SVD of `G` is computed.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Solver {
    /// The default: a dense SVD when that is cheapest and fits the memory budget, restarted
    /// block Lanczos otherwise, shift-invert (rank <= 64) or spectrum slicing with certified
    /// inertia counts for sparse graph kernels whose flat spectra stall Krylov (see
    /// `ksvd_solvers::auto_svd`). Every triplet meets `tol`
    /// (residuals relative to `s_1`) or the fit fails.
    Auto {
        /// Relative residual tolerance.
        tol: f64,
    },
    /// Dense SVD of the materialised `G` (`O(nm)` memory): small problems and reference runs.
    Exact,
    /// Restarted Lanczos bidiagonalisation (matrix-free; the TSVD of the paper).
    Lanczos(LanczosParams),
    /// Randomized SVD with a fixed number of power iterations (the paper's RSVD; its residuals
    /// are reported, not guaranteed).
    Rsvd(RsvdParams),
    /// Randomized block Krylov SVD with a residual stopping rule (reports whether it met `tol`).
    /// Its depth is capped by the memory budget (the bases grow by one block per step).
    BlockKrylov(BlockKrylovParams),
    /// The asymmetric Nyström method with `landmarks` sampled rows and columns (each capped at
    /// the matrix size). With all rows and columns it is exact.
    Nystrom {
        /// Sampled rows `n` (and columns `m`, unless `cols` is set).
        landmarks: usize,
        /// Sampled columns `m` when different from `landmarks`.
        cols: Option<usize>,
        /// Sampling scheme.
        sampling: Sampling,
        /// Solver of the sampled block.
        inner: InnerSolver,
    },
}

/// A tolerance the precision can certify: a solver's `tol` must be at least
/// [`Precision::min_tol`] (f32: rounding in the products keeps residuals near `1e-6 · s₁`).
pub(crate) fn check_precision(solver: &Solver, precision: Precision) -> Result<()> {
    match solver.tol() {
        Some(tol) if tol < precision.min_tol() => Err(KsvdError::InvalidParameter {
            name: "tol",
            reason: format!(
                "{tol:e} is below what a {precision} kernel matrix can certify (at least {:e}; its default is {:e})",
                precision.min_tol(),
                precision.default_tol()
            ),
        }),
        _ => Ok(()),
    }
}

impl Solver {
    /// The residual tolerance of the certified solvers (`Auto`, `Lanczos`, `BlockKrylov`);
    /// `None` for the others.
    pub fn tol(&self) -> Option<f64> {
        match self {
            Solver::Auto { tol } => Some(*tol),
            Solver::Lanczos(p) => Some(p.tol),
            Solver::BlockKrylov(p) => Some(p.tol),
            _ => None,
        }
    }

    /// The asymmetric Nyström method's parameters of a [`Solver::Nystrom`] at rank `rank` on an
    /// `n × m` matrix (landmark counts capped by the sizes; `None` for the other solvers).
    pub(crate) fn nystrom_params(&self, rank: usize, (n, m): (usize, usize), seed: u64) -> Option<NystromParams> {
        match *self {
            Solver::Nystrom {
                landmarks,
                cols,
                sampling,
                inner,
            } => Some(NystromParams {
                rank,
                rows: landmarks.min(n),
                cols: cols.unwrap_or(landmarks).min(m),
                sampling,
                inner,
                seed,
                shared_samples: false,
            }),
            _ => None,
        }
    }

    /// Checks the solver's own parameters: tolerances in `(0, 1)`, at least one restart (Lanczos),
    /// one Krylov block (block Krylov) and one landmark (Nyström). Ranks are checked against the
    /// matrix when solving.
    pub fn validate(&self) -> Result<()> {
        let bad = |name: &'static str, reason: String| Err(KsvdError::InvalidParameter { name, reason });
        let tol_ok = |tol: f64| tol > 0.0 && tol < 1.0;
        match self {
            Solver::Auto { tol }
            | Solver::Lanczos(LanczosParams { tol, .. })
            | Solver::BlockKrylov(BlockKrylovParams { tol, .. })
                if !tol_ok(*tol) =>
            {
                bad("solver.tol", format!("{tol} must lie in (0, 1)"))
            }
            Solver::Lanczos(p) if p.max_restarts == 0 => bad("solver.max_restarts", "must be at least 1".into()),
            Solver::BlockKrylov(p) if p.max_depth == 0 => bad("solver.max_depth", "must be at least 1".into()),
            Solver::Nystrom { landmarks, cols, .. } if *landmarks == 0 || *cols == Some(0) => {
                bad("solver.landmarks", "sample at least one row and one column".into())
            }
            _ => Ok(()),
        }
    }

    /// The top-`rank` SVD of any operator `op` by this solver: singular values descending,
    /// `U` (`nrows × rank`), `V` (`ncols × rank`). `seed` replaces the seed inside the solver's
    /// parameters; `budget` bounds the dense paths (`Auto` takes a dense SVD only within it,
    /// `Exact` refuses beyond it with a typed error).
    ///
    /// This is the one dispatch from a solver choice to `ksvd-solvers`: [`Ksvd`] and [`crate::Kpca`]
    /// call it on their kernel matrices, task crates on their own operators (a column-centred
    /// sparse data matrix, a stored kernel matrix). [`Solver::Nystrom`] samples kernel blocks
    /// rather than multiplying with an operator and is an error here: fit [`Ksvd`] or
    /// [`crate::Kpca`] with it.
    ///
    /// ```
    /// use ksvd::{MemoryBudget, Solver};
    /// use ndarray::array;
    ///
    /// let g = array![[3.0, 0.0], [0.0, 2.0], [0.0, 0.0]];
    /// let svd = Solver::Exact.solve_operator(&g, 1, 0, MemoryBudget::bytes(1 << 20)?)?;
    /// assert!((svd.s[0] - 3.0).abs() < 1e-12);
    /// # Ok::<(), ksvd::KsvdError>(())
    /// ```
    pub fn solve_operator<O: LinearOperator + ?Sized>(
        &self,
        op: &O,
        rank: usize,
        seed: u64,
        budget: MemoryBudget,
    ) -> Result<SvdResult> {
        self.solve_operator_with_progress(op, rank, seed, budget, &mut |_| {})
    }

    /// [`Solver::solve_operator`] reporting the progress of the Lanczos iterations (`Auto` and
    /// `Lanczos`; other solvers do not report).
    pub fn solve_operator_with_progress<O: LinearOperator + ?Sized>(
        &self,
        op: &O,
        rank: usize,
        seed: u64,
        budget: MemoryBudget,
        progress: &mut ProgressFn<'_>,
    ) -> Result<SvdResult> {
        let (n, m) = (op.nrows(), op.ncols());
        ksvd_solvers::check_rank(n, m, rank)?;
        Ok(match self {
            Solver::Auto { tol } => {
                let p = AutoParams {
                    tol: *tol,
                    seed,
                    budget,
                };
                auto_svd(op, rank, &p, progress)?.0
            }
            Solver::BlockKrylov(p) => {
                let max_depth = block_krylov_depth(n, m, rank, p, budget)?;
                block_krylov_svd(
                    op,
                    rank,
                    &BlockKrylovParams {
                        seed,
                        max_depth,
                        ..p.clone()
                    },
                )?
                .0
            }
            Solver::Exact => {
                check_dense_fits(n, m, budget)?;
                dense_svd_operator(op, rank)?
            }
            Solver::Lanczos(p) => {
                lanczos_svd_with_progress(op, rank, &LanczosParams { seed, ..p.clone() }, progress)?.0
            }
            Solver::Rsvd(p) => randomized_svd(op, rank, &RsvdParams { seed, ..p.clone() })?,
            Solver::Nystrom { .. } => {
                return Err(KsvdError::InvalidParameter {
                    name: "solver",
                    reason: "the Nystrom solver samples blocks of a kernel matrix, not products with an operator: \
                             fit Ksvd or Kpca with it"
                        .into(),
                })
            }
        })
    }

    /// The top-`rank` SVD of a square operator `op` with twin indices `twins` (graph nodes with
    /// the same in- and out-neighbours, `ksvd_linalg::Twins::of_square` of the matrix `op` is
    /// built from): the exactly repeated singular values of the twin classes are taken without a
    /// solver, the rest by this solver on the reduced operator `Qᵀ M Q`
    /// ([`ksvd_solvers::twin_split_svd`]); the merged result is certified against `op`.
    ///
    /// The twin check uses the solver's tolerance (`Auto`, `Lanczos`, `BlockKrylov`), 1e-10
    /// otherwise.
    ///
    /// # Errors
    /// As [`Solver::solve_operator`], and `ksvd_solvers::SolverError::NotInvariant` when `op`
    /// does not have these twins.
    pub fn solve_twins<O: LinearOperator + ?Sized>(
        &self,
        op: &O,
        twins: &Twins,
        rank: usize,
        seed: u64,
        budget: MemoryBudget,
    ) -> Result<(SvdResult, TwinSplitInfo)> {
        let tol = match self {
            Solver::Auto { tol }
            | Solver::Lanczos(LanczosParams { tol, .. })
            | Solver::BlockKrylov(BlockKrylovParams { tol, .. }) => *tol,
            _ => 1e-10,
        };
        twin_split_svd(op, twins, rank, tol, |reduced, k| {
            self.solve_operator(reduced, k, seed, budget)
        })
    }
}

/// The block Krylov depth the memory budget allows: its bases hold `(q + 1)` blocks of
/// `r + p` vectors on each side, `(q + 1)(r + p)(n + m)` numbers, so `q` is `p.max_depth` or
/// less. A budget below two blocks (depth 1) is a typed error.
fn block_krylov_depth(n: usize, m: usize, rank: usize, p: &BlockKrylovParams, budget: MemoryBudget) -> Result<usize> {
    let block = (rank + p.oversampling).saturating_mul(n + m);
    let fits = |depth: usize| budget.fits_f64(block.saturating_mul(depth + 1));
    if !fits(1) {
        return Err(KsvdError::InvalidParameter {
            name: "solver",
            reason: format!(
                "block Krylov needs at least two blocks of {} vectors of length {n} + {m}, over the memory \
                 budget of {budget}: lower the rank or the oversampling, or raise the budget",
                rank + p.oversampling
            ),
        });
    }
    Ok((1..=p.max_depth.max(1)).rev().find(|&d| fits(d)).unwrap_or(1))
}

/// The dense solver stores `G`, its copy inside the factorisation and the thin factors
/// ([`dense_svd_numbers`]): refuse (typed error) beyond `budget` rather than fail to allocate.
fn check_dense_fits(n: usize, m: usize, budget: MemoryBudget) -> Result<()> {
    let need = dense_svd_numbers(n, m);
    if !budget.fits_f64(need) {
        return Err(KsvdError::InvalidParameter {
            name: "solver",
            reason: format!(
                "the exact solver needs {:.1} GiB for a {n} x {m} kernel matrix and its factors, over the \
                 memory budget of {budget}: use the auto or lanczos solver, or a larger budget",
                need as f64 * 8.0 / (1u64 << 30) as f64
            ),
        });
    }
    Ok(())
}

/// Validated KSVD hyper-parameters (see [`KsvdParams`]).
///
/// Serialised (feature `serde`, inside model files) without the memory budget: the budget is
/// a setting of the machine that runs a fit, not a parameter of the model, so a deserialised
/// value has the default budget ([`MemoryBudget::auto`]) until [`KsvdParams::memory_budget`]
/// sets another.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct KsvdValidParams {
    /// A built-in kernel (its serde form), or a user's function recorded by name
    /// (`{"Custom": {"name": …}}`).
    pub(crate) kernel: ParamKernel,
    /// The `k` of the bandwidth rule `γ = k sqrt(M γ_x)`, applied at fit time; `None`: the
    /// kernel's own `γ`.
    #[cfg_attr(feature = "serde", serde(default))]
    pub(crate) bandwidth_rule: Option<f64>,
    pub(crate) rank: usize,
    pub(crate) solver: Solver,
    pub(crate) center: bool,
    /// The compatibility of [`Fit`] on a data matrix (`None`: `Z = X`).
    #[cfg_attr(feature = "serde", serde(default))]
    pub(crate) compat: Option<Compat>,
    pub(crate) seed: u64,
    /// User-chosen Nyström landmarks `(I, J)` (indices into X and Z); `None`: sampled.
    #[cfg_attr(feature = "serde", serde(default))]
    pub(crate) landmark_indices: Option<(Vec<usize>, Vec<usize>)>,
    /// Memory budget for storing `G` and the dense solver (`None`: [`MemoryBudget::auto`]). A
    /// run-time setting: never serialised.
    #[cfg_attr(feature = "serde", serde(skip))]
    pub(crate) memory_budget: Option<MemoryBudget>,
    /// Precision of `G`'s entries and of the products with them (model files without it: `f64`).
    #[cfg_attr(feature = "serde", serde(default))]
    pub(crate) precision: Precision,
}

/// KSVD hyper-parameters, linfa style: build with [`Ksvd::params`], validated once by
/// [`ParamGuard::check`] (or implicitly by [`Fit::fit`]).
///
/// Defaults (the Rust column of the workspace's conventions table, `docs/conventions.md`):
/// rank 2; the RBF kernel with the paper's bandwidth rule `γ = sqrt(M γ_x)`
/// ([`KsvdParams::bandwidth_rule`] `Some(1.0)`); the [`Solver::Auto`] solver at tolerance
/// 1e-8; no centring; no compatibility (`Fit::fit` on a data matrix `A` takes `Z = X` = the
/// rows of `A`); seed 0; the memory budget [`MemoryBudget::auto`].
#[derive(Debug, Clone, PartialEq)]
pub struct KsvdParams(KsvdValidParams);

impl KsvdValidParams {
    /// The built-in kernel. Of a fitted model ([`Ksvd::params_used`],
    /// [`crate::KsvdModel::params`]): the kernel the fit used, its bandwidth the one the rule
    /// chose. With a user's kernel function ([`KsvdParams::kernel_fn`]) it is not used and
    /// `Kernel::Linear` stands in: see [`KsvdValidParams::kernel_function_name`].
    pub fn kernel(&self) -> &Kernel {
        self.kernel.builtin()
    }
    /// The name of the user's kernel function ([`KsvdParams::kernel_fn`]), `None` for a
    /// built-in kernel.
    pub fn kernel_function_name(&self) -> Option<&str> {
        self.kernel.custom_name()
    }
    /// The user's kernel function, when one is set and attached (`None` for a built-in kernel,
    /// and for parameters read from a model file without it).
    pub fn kernel_function(&self) -> Option<&Arc<dyn KernelFunction>> {
        self.kernel.function()
    }
    /// The `k` of the bandwidth rule, when the rule is on (see [`KsvdParams::bandwidth_rule`]).
    pub fn bandwidth_rule(&self) -> Option<f64> {
        self.bandwidth_rule
    }
    /// The kernel a fit on the row samples (or data matrix) `data` uses: [`Self::kernel`], its
    /// bandwidth replaced by the rule's `γ = k sqrt(M γ_x)` over `data` when the rule is on and
    /// the kernel has a bandwidth (RBF, Laplacian, SNE).
    ///
    /// # Errors
    /// [`KsvdError::InvalidParameter`] (`bandwidth_rule`) when the rule gives no usable `γ`
    /// (all entries of `data` equal).
    ///
    /// A user's kernel function is returned as it is ([`KsvdError::KernelFunctionNeeded`] when
    /// the parameters were read from a model file without it).
    pub fn kernel_for(&self, data: &Samples) -> Result<AnyKernel> {
        self.kernel.resolve(self.bandwidth_rule, data)
    }
    /// The rank `r`.
    pub fn rank(&self) -> usize {
        self.rank
    }
    /// The memory budget for storing `G` and for the dense solver (a run-time setting, not
    /// serialised).
    pub fn memory_budget(&self) -> MemoryBudget {
        self.memory_budget.unwrap_or_else(MemoryBudget::auto)
    }
    /// The precision of `G`'s entries and products (see [`KsvdParams::precision`]; a fitted
    /// model records the one its fit computed in: `f64` for sparse-graph fits).
    pub fn precision(&self) -> Precision {
        self.precision
    }
    /// The solver.
    pub fn solver(&self) -> &Solver {
        &self.solver
    }
    /// Whether `G` is centred on both sides.
    pub fn center(&self) -> bool {
        self.center
    }
    /// The compatibility alternative used by [`Fit`] on a data matrix (`None`: `Z = X`).
    pub fn compat(&self) -> Option<Compat> {
        self.compat
    }
    /// The seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }
    /// User-chosen Nyström landmarks `(I, J)`, when given.
    pub fn landmark_indices(&self) -> Option<(&[usize], &[usize])> {
        self.landmark_indices
            .as_ref()
            .map(|(i, j)| (i.as_slice(), j.as_slice()))
    }
}

/// The default rank of both estimators (the conventions table's `rank` row).
pub(crate) const DEFAULT_RANK: usize = 2;
/// The default bandwidth rule factor `k` (the conventions table's `bandwidth rule` row).
pub(crate) const DEFAULT_BANDWIDTH_RULE: Option<f64> = Some(1.0);
/// The default kernel: RBF, its `γ` replaced by the default bandwidth rule at fit time.
pub(crate) const DEFAULT_KERNEL: Kernel = Kernel::Rbf { gamma: 1.0 };
/// The default solver: [`Solver::Auto`] at the conventions' tolerance 1e-8.
pub(crate) const DEFAULT_SOLVER: Solver = Solver::Auto { tol: 1e-8 };

impl Default for KsvdParams {
    fn default() -> Self {
        KsvdParams(KsvdValidParams {
            kernel: ParamKernel::Builtin(DEFAULT_KERNEL),
            bandwidth_rule: DEFAULT_BANDWIDTH_RULE,
            rank: DEFAULT_RANK,
            solver: DEFAULT_SOLVER,
            center: false,
            compat: None,
            seed: 0,
            landmark_indices: None,
            memory_budget: None,
            precision: Precision::F64,
        })
    }
}

/// `kernel` with its bandwidth replaced by `gamma` (kernels without one are returned as they are).
pub(crate) fn with_bandwidth(kernel: Kernel, gamma: f64) -> Kernel {
    match kernel {
        Kernel::Rbf { .. } => Kernel::Rbf { gamma },
        Kernel::Laplacian { .. } => Kernel::Laplacian { gamma },
        Kernel::Sne { .. } => Kernel::Sne { gamma },
        other => other,
    }
}

/// The kernel a fit uses: `kernel`, with the bandwidth rule `γ = k sqrt(M γ_x)` over `data`
/// (`ksvd_kernels::graph::bandwidth_rule`) when `rule = Some(k)` and the kernel has a bandwidth.
pub(crate) fn resolve_bandwidth(kernel: Kernel, rule: Option<f64>, data: &Samples) -> Result<Kernel> {
    let (Some(k), Some(_)) = (rule, kernel.gamma()) else {
        return Ok(kernel);
    };
    let gamma = bandwidth_rule(data, k);
    if !(gamma.is_finite() && gamma > 0.0) {
        return Err(KsvdError::InvalidParameter {
            name: "bandwidth_rule",
            reason: format!(
                "the rule gamma = k sqrt(M gamma_x) gives {gamma} on these samples (k = {k}; are all their \
                 entries equal?): give the kernel a bandwidth"
            ),
        });
    }
    Ok(with_bandwidth(kernel, gamma))
}

/// Checks a bandwidth rule factor: positive and finite.
pub(crate) fn check_bandwidth_rule(rule: Option<f64>) -> Result<()> {
    match rule {
        Some(k) if !(k.is_finite() && k > 0.0) => Err(KsvdError::InvalidParameter {
            name: "bandwidth_rule",
            reason: format!("the factor k = {k} must be positive and finite"),
        }),
        _ => Ok(()),
    }
}

impl KsvdParams {
    kernel_setters! {
        /// Sets the kernel. A kernel with a bandwidth (`γ`) given here is used as given: this turns
        /// the bandwidth rule off (call [`KsvdParams::bandwidth_rule`] after it to turn it back on).
        kernel: Kernel;
        /// Sets a kernel function of yours ([`KernelFunction`]: `G[I, J]` from blocks of dense
        /// samples), used wherever a built-in kernel is: every solver, the Nyström method, centring,
        /// projections of new rows and columns. Turns the bandwidth rule off (the function has no
        /// bandwidth the rule could set). A saved model records the function's name only:
        /// [`crate::KsvdModel::load_with_kernel`] gives it back. [`KsvdParams::kernel`] replaces it.
        ///
        /// ```
        /// use ksvd::prelude::*;
        /// use ksvd::KsvdParams;
        /// use ndarray::{ArrayView2, ArrayViewMut2};
        /// use std::sync::Arc;
        ///
        /// /// `exp(-‖x − z‖²)`, the RBF kernel with γ = 1, written by hand.
        /// #[derive(Debug)]
        /// struct MyRbf;
        /// impl KernelFunction for MyRbf {
        ///     fn name(&self) -> &str {
        ///         "my-rbf"
        ///     }
        ///     fn block(&self, x: ArrayView2<'_, f64>, z: ArrayView2<'_, f64>, mut out: ArrayViewMut2<'_, f64>)
        ///         -> Result<(), KernelFnError> {
        ///         for ((i, j), o) in out.indexed_iter_mut() {
        ///             *o = (-(&x.row(i) - &z.row(j)).mapv(|d| d * d).sum()).exp();
        ///         }
        ///         Ok(())
        ///     }
        /// }
        ///
        /// let x = ndarray::Array2::from_shape_fn((12, 2), |(i, j)| ((i * 5 + j) % 7) as f64 / 7.0);
        /// let fit = |p: KsvdParams| p.rank(2).solver(Solver::Exact).fit(&DatasetBase::from(x.clone()));
        /// let mine = fit(Ksvd::params().kernel_fn(Arc::new(MyRbf)))?;
        /// let builtin = fit(Ksvd::params().kernel(Kernel::Rbf { gamma: 1.0 }))?;
        /// let (a, b) = (mine.singular_values(), builtin.singular_values());
        /// assert!((a[0] - b[0]).abs() < 1e-12 * b[0]);
        /// # Ok::<(), ksvd::KsvdError>(())
        /// ```
        kernel_fn: Arc<dyn KernelFunction>;
    }
    setters! {
        /// The paper's bandwidth rule: at fit time the kernel's bandwidth becomes
        /// `γ = k sqrt(M γ_x)`, `γ_x` the variance of all entries of the row samples X (of the data
        /// matrix for [`Fit::fit`]) and `M` their number of features
        /// (`ksvd_kernels::graph::bandwidth_rule`). `Some(k)` turns it on (the default, `k = 1`),
        /// `None` off. Kernels without a bandwidth ignore it. The fitted model reports the `γ` used.
        bandwidth_rule: Option<f64>;
        /// Sets the rank `r` (number of directions; default 2).
        rank: usize;
        /// Sets the memory budget: `G` is stored (products become GEMMs) when it fits, and the
        /// `Auto` solver takes a dense SVD only within it. Default: [`MemoryBudget::auto`]. A
        /// run-time setting of the machine that fits: it changes how a fit is computed, and is not
        /// saved with a model.
        memory_budget: MemoryBudget => Some;
        /// Sets the solver (default [`Solver::Auto`] at tolerance 1e-8).
        solver: Solver;
        /// Centres `G` on both sides (`H_n G H_m`, section 2.2; default off).
        center: bool;
        /// The compatibility alternative (a0, a1, a2; Algorithm 1) of [`Fit::fit`] on a data
        /// matrix `A` (`N × M`): with `Some(c)`, the row samples are the rows of `A` and the column
        /// samples its columns, made comparable by `c`; with `None` (the default), `Z = X` = the
        /// rows of `A`. `fit_samples` takes both sets and ignores it.
        compat: Option<Compat>;
        /// Seed of every random choice (sampling, random projections, starting vectors; default 0).
        seed: u64;
        /// Precision of `G`'s entries and of the products with them (default [`Precision::F64`];
        /// [`KernelMatrix::precision`]). [`Precision::F32`] halves the memory of a stored `G` (so
        /// twice the entries fit the budget) and about halves the time of its products; a
        /// matrix-free `G`, the Nyström method's cross blocks `G[:, J]`, `G[I, :]` and the
        /// projections of new samples evaluate and multiply their blocks in `f32` alike. Inner
        /// products and exponents are computed in `f64` and `exp` in `f32`; the solvers' bases,
        /// the SVD of the Nyström method's sampled block (of `f32` entries), and residual norms
        /// stay `f64`, and residuals are those of the rounded matrix. Its solvers need a
        /// tolerance of at least [`Precision::min_tol`] (`1e-6`; the default solver's `1e-8` is
        /// for `f64`, so set e.g. `Solver::Auto { tol: Precision::F32.default_tol() }`, `1e-5`).
        /// Sparse-graph fits (rank one plus sparse) run in `f64` either way.
        precision: Precision;
    }
    /// User-chosen Nyström landmarks: row indices `I` into X and column indices `J` into Z
    /// (each distinct; any order, sorted before use). Requires [`Solver::Nystrom`], whose
    /// `landmarks`/`cols` counts and `sampling` are then ignored; the sampled block is scaled
    /// like uniform sampling, `sqrt(NM/(nm))`.
    pub fn landmark_indices(mut self, rows: Vec<usize>, cols: Vec<usize>) -> Self {
        self.0.landmark_indices = Some((rows, cols));
        self
    }
}

/// Checks that user landmark indices are distinct and at least `rank` many.
fn check_landmark_list(name: &'static str, idx: &[usize], rank: usize) -> Result<()> {
    if idx.len() < rank {
        return Err(KsvdError::InvalidParameter {
            name,
            reason: format!("{} landmarks cannot give rank {rank}", idx.len()),
        });
    }
    let mut seen = std::collections::HashSet::with_capacity(idx.len());
    if let Some(&dup) = idx.iter().find(|&&i| !seen.insert(i)) {
        return Err(KsvdError::InvalidParameter {
            name,
            reason: format!("index {dup} is repeated"),
        });
    }
    Ok(())
}

impl ParamGuard for KsvdParams {
    type Checked = KsvdValidParams;
    type Error = KsvdError;

    fn check_ref(&self) -> Result<&KsvdValidParams> {
        self.0.kernel.validate()?;
        check_bandwidth_rule(self.0.bandwidth_rule)?;
        if self.0.rank == 0 {
            return Err(KsvdError::InvalidParameter {
                name: "rank",
                reason: "must be at least 1".into(),
            });
        }
        check_precision(&self.0.solver, self.0.precision)?;
        if let Some((rows, cols)) = &self.0.landmark_indices {
            if !matches!(self.0.solver, Solver::Nystrom { .. }) {
                return Err(KsvdError::InvalidParameter {
                    name: "landmark_indices",
                    reason: "user landmarks need the Nystrom solver".into(),
                });
            }
            check_landmark_list("landmark rows", rows, self.0.rank)?;
            check_landmark_list("landmark cols", cols, self.0.rank)?;
        } else if let Solver::Nystrom { landmarks, cols, .. } = self.0.solver {
            if landmarks < self.0.rank || cols.is_some_and(|c| c < self.0.rank) {
                return Err(KsvdError::InvalidParameter {
                    name: "landmarks",
                    reason: format!("{landmarks} landmarks cannot give rank {}", self.0.rank),
                });
            }
        }
        Ok(&self.0)
    }
    fn check(self) -> Result<KsvdValidParams> {
        self.check_ref()?;
        Ok(self.0)
    }
}

/// A fitted KSVD model: the top-`r` singular triplets of `G_ij = k(x_i, z_j)`.
///
/// `B_φ = U` (`n × r`, [`Ksvd::u`]) and `B_ψ = V` (`m × r`, [`Ksvd::v`]) parameterise the learned
/// directions `W_φ = Γ_φ* B_φ`, `W_ψ = Γ_ψ* B_ψ` (Proposition 3.4). New samples are projected
/// by [`Ksvd::project_rows`] / [`Ksvd::project_cols`] under one of three [`Scaling`]s, and by
/// the named conventions built on them: [`Ksvd::transform`] (`U S^½` at the training rows),
/// [`Ksvd::extend_rows`] (eq. 10, `U`), and `Scaling::Full` for the projection scores of
/// Proposition 2.2 (`[⟨φ(x), w^ψ_l⟩]_l = k(x, Z) V`, `U S` at the training rows; the constant
/// `1/sqrt(nm)` omitted). A Nyström fit projects through its landmarks, as its
/// [`crate::KsvdModel`] does.
#[derive(Debug, Clone)]
pub struct Ksvd {
    params: KsvdValidParams,
    g: KernelMatrix,
    svd: SvdResult,
    nystrom: Option<AsymmetricNystrom>,
    compat: Option<compat::CompatibleSamples>,
}

impl Ksvd {
    /// Default parameters (see [`KsvdParams`]: rank 2, RBF with the bandwidth rule, the `Auto`
    /// solver at tolerance 1e-8, no centring, no compatibility, seed 0).
    pub fn params() -> KsvdParams {
        KsvdParams::default()
    }

    /// `U` (`B_φ`): left singular vectors, `n × r`.
    pub fn u(&self) -> ArrayView2<'_, f64> {
        self.svd.u.view()
    }
    /// `V` (`B_ψ`): right singular vectors, `m × r`.
    pub fn v(&self) -> ArrayView2<'_, f64> {
        self.svd.v.view()
    }
    /// Singular values `s_1 ≥ … ≥ s_r` (approximate for the Nyström solver).
    pub fn singular_values(&self) -> ArrayView1<'_, f64> {
        self.svd.s.view()
    }
    /// The full result.
    pub fn svd(&self) -> &SvdResult {
        &self.svd
    }
    /// The kernel matrix (implicit).
    pub fn kernel_matrix(&self) -> &KernelMatrix {
        &self.g
    }
    /// The hyper-parameters, with the kernel the fit used (its bandwidth chosen by the rule when
    /// the rule was on).
    pub fn params_used(&self) -> &KsvdValidParams {
        &self.params
    }
    /// The bandwidth `γ` the fit used (`None` for kernels without one).
    pub fn bandwidth(&self) -> Option<f64> {
        self.params.kernel().gamma()
    }
    /// The Nyström details when that solver was used.
    pub fn nystrom(&self) -> Option<&AsymmetricNystrom> {
        self.nystrom.as_ref()
    }
    /// The compatibility map of a model fitted on a data matrix with a compatibility.
    pub(crate) fn compat_map(&self) -> Option<CompatMap> {
        self.compat.as_ref().map(|cs| CompatMap {
            side: cs.side,
            c: cs.c.clone(),
        })
    }

    /// Projections of new row samples `x'` (`new × r`): `k̃(x', Z) V S^-p` for the
    /// [`Scaling`] `p` (`U S^{1-p}` at the training rows; see [`crate::KsvdModel::project_rows`]).
    /// `Scaling::Full` is `k(x', Z) V`, the projection scores of Proposition 2.2. A Nyström fit
    /// projects through its landmarks (eq. 11).
    pub fn project_rows(&self, new_x: &Samples, scaling: Scaling) -> Result<Array2<f64>> {
        self.with_projector(|p| p.rows(new_x, scaling))
    }

    /// Projections of new column samples `z'` (`new × r`): `k̃(X, z')ᵀ U S^-p` (`V S^{1-p}` at the
    /// training columns).
    pub fn project_cols(&self, new_z: &Samples, scaling: Scaling) -> Result<Array2<f64>> {
        self.with_projector(|p| p.cols(new_z, scaling))
    }

    crate::projection::data_projections!();

    crate::projection::named_projections!();

    fn compat_parts(&self) -> (CompatSide, Option<&Array2<f64>>) {
        match &self.compat {
            Some(cs) => (cs.side, cs.c.as_ref()),
            None => (CompatSide::None, None),
        }
    }

    /// Runs `f` on the projector of this fit: all of Z and X with `V`, `U`, or the Nyström
    /// landmarks with their extension coefficients.
    fn with_projector<T>(&self, f: impl FnOnce(&Projector<'_>) -> Result<T>) -> Result<T> {
        let s = self.svd.s.view();
        let (u, v) = (self.svd.u.view(), self.svd.v.view());
        match &self.nystrom {
            None => {
                let all_cols: Vec<usize> = (0..self.g.ncols()).collect();
                let all_rows: Vec<usize> = (0..self.g.nrows()).collect();
                f(&Projector {
                    g: Some(&self.g),
                    row_ext: &all_cols,
                    col_ext: &all_rows,
                    s,
                    u,
                    v,
                    landmark_coef: None,
                })
            }
            Some(ny) => {
                let (rc, cc) = (ny.row_extension_coefficients(), ny.col_extension_coefficients());
                f(&Projector {
                    g: Some(&self.g),
                    row_ext: &ny.cols,
                    col_ext: &ny.rows,
                    s,
                    u,
                    v,
                    landmark_coef: Some((rc.view(), cc.view())),
                })
            }
        }
    }
}

crate::projection::linfa_transformer!(Ksvd);

impl KsvdValidParams {
    /// Fits KSVD on row samples `x` (n) and column samples `z` (m) of equal dimension.
    pub fn fit_samples(&self, x: Samples, z: Samples) -> Result<Ksvd> {
        let g = self.kernel_matrix(x, z)?;
        self.fit_matrix(g, None)
    }

    /// The kernel matrix these parameters fit (centred when [`KsvdParams::center`] is set), with
    /// the kernel [`KsvdValidParams::kernel_for`] the row samples `x`.
    ///
    /// The materialisation policy lives here: `G` is stored when it fits the memory budget and
    /// the solver makes repeated passes over it (the products become GEMMs); the Nyström solver
    /// reads only the landmark blocks (plus, for SNE, one pass for the exact normalisers), so it
    /// never stores `G`: storing would cost a full pass and `8 N M` bytes for nothing.
    pub fn kernel_matrix(&self, x: Samples, z: Samples) -> Result<KernelMatrix> {
        let kernel = self.kernel_for(&x)?;
        self.kernel_matrix_of(kernel, x, z)
    }

    fn kernel_matrix_of(&self, kernel: AnyKernel, x: Samples, z: Samples) -> Result<KernelMatrix> {
        let mut g = match self.solver {
            Solver::Nystrom { .. } => KernelMatrix::matrix_free_in(x, z, kernel, self.precision)?,
            _ => KernelMatrix::with_budget_in(x, z, kernel, self.memory_budget(), self.precision)?,
        };
        if self.center {
            g = g.centered()?;
        }
        Ok(g)
    }

    /// Fits KSVD on an already built kernel matrix (its kernel is the one the model records).
    pub fn fit_kernel_matrix(&self, g: KernelMatrix) -> Result<Ksvd> {
        self.fit_matrix(g, None)
    }

    /// [`KsvdValidParams::fit_kernel_matrix`] reporting the progress of the Lanczos solver after
    /// every restart (other solvers do not report).
    pub fn fit_kernel_matrix_with_progress(&self, g: KernelMatrix, progress: &mut ProgressFn<'_>) -> Result<Ksvd> {
        self.fit_matrix_with_progress(g, None, progress)
    }

    fn fit_matrix(&self, g: KernelMatrix, compat: Option<compat::CompatibleSamples>) -> Result<Ksvd> {
        self.fit_matrix_with_progress(g, compat, &mut |_| {})
    }

    fn fit_matrix_with_progress(
        &self,
        g: KernelMatrix,
        compat: Option<compat::CompatibleSamples>,
        progress: &mut ProgressFn<'_>,
    ) -> Result<Ksvd> {
        // A matrix given in another precision than the parameters' needs a tolerance it can
        // certify too.
        check_precision(&self.solver, g.precision())?;
        let (svd, nystrom) = self.solve(&g, progress)?;
        // The record of the fit names the kernel it used (the bandwidth the rule chose) and the
        // precision it computed in (`f64` for the rank-one-plus-sparse form of sparse inputs, or
        // a matrix of another precision given to `fit_kernel_matrix`), which a saved model's
        // projections then use.
        let params = KsvdValidParams {
            kernel: ParamKernel::from(g.kernel().clone()),
            precision: g.precision(),
            ..self.clone()
        };
        Ok(Ksvd {
            params,
            g,
            svd,
            nystrom,
            compat,
        })
    }

    /// The top-`rank` SVD of `g` by the configured solver (and the Nyström fit, for that
    /// solver), borrowing `g`: [`Ksvd`] stores its kernel matrix, `fit_precomputed` solves a
    /// dense one.
    pub(crate) fn solve<G: MatrixBlocks + LandmarkWeights + ?Sized>(
        &self,
        g: &G,
        progress: &mut ProgressFn<'_>,
    ) -> Result<(SvdResult, Option<AsymmetricNystrom>)> {
        let (n, m) = (g.nrows(), g.ncols());
        ksvd_solvers::check_rank(n, m, self.rank)?;
        let Some(p) = self.solver.nystrom_params(self.rank, (n, m), self.seed) else {
            let svd =
                self.solver
                    .solve_operator_with_progress(g, self.rank, self.seed, self.memory_budget(), progress)?;
            return Ok((svd, None));
        };
        let ny = match &self.landmark_indices {
            Some((rows, cols)) => crate::landmarks::nystrom_at(g, rows, cols, self.rank, p.inner, self.seed)?,
            None => asymmetric_nystrom(g, &p)?,
        };
        Ok((ny.svd.clone(), Some(ny)))
    }
}

/// Fits on a data matrix `A` (records, `N × M`; targets are ignored). Without a compatibility
/// ([`KsvdParams::compat`] `None`, the default) the row and column samples are both the rows of
/// `A` (`Z = X`). With one, the row samples are the rows of `A` and the column samples its
/// columns, made dimension-compatible by it when `N ≠ M` (Algorithm 1). The bandwidth rule runs
/// over `A`.
impl<T> Fit<Array2<f64>, T, KsvdError> for KsvdValidParams {
    type Object = Ksvd;

    fn fit(&self, dataset: &DatasetBase<Array2<f64>, T>) -> Result<Ksvd> {
        let a = dataset.records();
        if a.nsamples() == 0 || a.ncols() == 0 {
            return Err(KsvdError::Kernel(ksvd_kernels::KernelError::Empty {
                what: "data matrix",
                rows: a.nrows(),
                dim: a.ncols(),
            }));
        }
        let Some(compat) = self.compat else {
            // `Samples::dense` rejects non-finite data with a typed error.
            let x = Samples::dense(a.to_owned())?;
            let g = self.kernel_matrix(x.clone(), x)?;
            return self.fit_matrix(g, None);
        };
        let compat_kind = match compat {
            Compat::Random { .. } => Compat::Random { seed: self.seed },
            c => c,
        };
        let cs = compat::compatible_samples(a.view(), compat_kind)?;
        let kernel = match self.bandwidth_rule {
            Some(_) => self.kernel_for(&Samples::dense(a.to_owned())?)?,
            None => self.kernel.any()?,
        };
        let g = self.kernel_matrix_of(kernel, cs.x.clone(), cs.z.clone())?;
        self.fit_matrix(g, Some(cs))
    }
}
