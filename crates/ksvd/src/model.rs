//! The KSVD model: parameters, fitting and projections.
use crate::error::{KsvdError, Result};
use ksvd_kernels::{compat, Compat, Kernel, KernelMatrix, Samples};
use ksvd_linalg::MemoryBudget;
use ksvd_linalg::{dense, LinearOperator, Twins};
use ksvd_nystrom::{asymmetric_nystrom, AsymmetricNystrom, InnerSolver, NystromParams, Sampling};
use ksvd_solvers::{
    auto_svd, block_krylov_svd, dense_svd_numbers, dense_svd_operator, lanczos_svd_with_progress, randomized_svd,
    twin_split_svd, AutoParams, BlockKrylovParams, LanczosParams, ProgressFn, RsvdParams, SvdResult, TwinSplitInfo,
};
use linfa::dataset::{DatasetBase, Records};
use linfa::param_guard::ParamGuard;
use linfa::traits::Fit;
use ndarray::{Array1, Array2, ArrayView1, ArrayView2};

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

impl Solver {
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
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct KsvdValidParams {
    kernel: Kernel,
    rank: usize,
    solver: Solver,
    center: bool,
    compat: Compat,
    seed: u64,
    /// User-chosen Nyström landmarks `(I, J)` (indices into X and Z); `None`: sampled.
    #[cfg_attr(feature = "serde", serde(default))]
    landmark_indices: Option<(Vec<usize>, Vec<usize>)>,
    /// Memory budget in bytes for storing `G` and the dense solver (`None`: the machine's
    /// default, [`MemoryBudget::auto`]).
    #[cfg_attr(feature = "serde", serde(default))]
    memory_budget: Option<u64>,
}

/// KSVD hyper-parameters, linfa style: build with [`Ksvd::params`], validated once by
/// [`ParamGuard::check`] (or implicitly by [`Fit::fit`]).
#[derive(Debug, Clone, PartialEq)]
pub struct KsvdParams(KsvdValidParams);

impl KsvdValidParams {
    /// The kernel.
    pub fn kernel(&self) -> &Kernel {
        &self.kernel
    }
    /// The rank `r`.
    pub fn rank(&self) -> usize {
        self.rank
    }
    /// The memory budget for storing `G` and for the dense solver.
    pub fn memory_budget(&self) -> MemoryBudget {
        self.memory_budget
            .and_then(|b| MemoryBudget::bytes(b).ok())
            .unwrap_or_else(MemoryBudget::auto)
    }
    /// The solver.
    pub fn solver(&self) -> &Solver {
        &self.solver
    }
    /// Whether `G` is centred on both sides.
    pub fn center(&self) -> bool {
        self.center
    }
    /// The compatibility alternative used by [`Fit`] on a data matrix.
    pub fn compat(&self) -> Compat {
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

impl Default for KsvdParams {
    fn default() -> Self {
        KsvdParams(KsvdValidParams {
            kernel: Kernel::Rbf { gamma: 1.0 },
            rank: 10,
            solver: Solver::Auto { tol: 1e-8 },
            center: false,
            compat: Compat::Pca,
            seed: 0,
            landmark_indices: None,
            memory_budget: None,
        })
    }
}

impl KsvdParams {
    /// Sets the kernel.
    pub fn kernel(mut self, kernel: Kernel) -> Self {
        self.0.kernel = kernel;
        self
    }
    /// Sets the rank `r` (number of directions).
    pub fn rank(mut self, rank: usize) -> Self {
        self.0.rank = rank;
        self
    }
    /// Sets the memory budget: `G` is stored (products become GEMMs) when it fits, and the
    /// `Auto` solver takes a dense SVD only within it. Default: [`MemoryBudget::auto`].
    pub fn memory_budget(mut self, budget: MemoryBudget) -> Self {
        self.0.memory_budget = Some(budget.as_bytes());
        self
    }
    /// Sets the solver.
    pub fn solver(mut self, solver: Solver) -> Self {
        self.0.solver = solver;
        self
    }
    /// Centres `G` on both sides (`H_n G H_m`, section 2.2).
    pub fn center(mut self, center: bool) -> Self {
        self.0.center = center;
        self
    }
    /// Compatibility alternative (a0, a1, a2) used when fitting on a non-square data matrix.
    pub fn compat(mut self, compat: Compat) -> Self {
        self.0.compat = compat;
        self
    }
    /// Seed of every random choice (sampling, random projections, starting vectors).
    pub fn seed(mut self, seed: u64) -> Self {
        self.0.seed = seed;
        self
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
        if self.0.rank == 0 {
            return Err(KsvdError::InvalidParameter {
                name: "rank",
                reason: "must be at least 1".into(),
            });
        }
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
/// `B_φ = U` (`n × r`) and `B_ψ = V` (`m × r`) parameterise the learned directions
/// `W_φ = Γ_φ* B_φ`, `W_ψ = Γ_ψ* B_ψ` (Proposition 3.4). The projected scores of new data are
/// `[⟨φ(x), w^ψ_l⟩]_l = Σ_j k(x, z_j) B_ψ[j, l]` and `[⟨ψ(z), w^φ_l⟩]_l = Σ_i k(x_i, z) B_φ[i, l]`
/// (up to the constant `1/sqrt(nm)` of Proposition 2.2, omitted); at the training points these
/// are `U diag(s)` and `V diag(s)`.
#[derive(Debug, Clone)]
pub struct Ksvd {
    params: KsvdValidParams,
    g: KernelMatrix,
    svd: SvdResult,
    nystrom: Option<AsymmetricNystrom>,
    compat: Option<compat::CompatibleSamples>,
}

impl Ksvd {
    /// Default parameters (RBF, γ = 1, rank 10, the `Auto` solver at tolerance 1e-8, no
    /// centring, a1 compatibility).
    pub fn params() -> KsvdParams {
        KsvdParams::default()
    }

    /// `B_φ`: left singular vectors, `n × r`.
    pub fn b_phi(&self) -> ArrayView2<'_, f64> {
        self.svd.u.view()
    }
    /// `B_ψ`: right singular vectors, `m × r`.
    pub fn b_psi(&self) -> ArrayView2<'_, f64> {
        self.svd.v.view()
    }
    /// Singular values `λ_1 ≥ … ≥ λ_r` (approximate for the Nyström solver).
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
    /// The hyper-parameters.
    pub fn params_used(&self) -> &KsvdValidParams {
        &self.params
    }
    /// The Nyström details when that solver was used.
    pub fn nystrom(&self) -> Option<&AsymmetricNystrom> {
        self.nystrom.as_ref()
    }
    /// The compatibility map of a model fitted on a data matrix.
    pub(crate) fn compat_map(&self) -> Option<crate::fitted::CompatMap> {
        self.compat.as_ref().map(|cs| crate::fitted::CompatMap {
            side: cs.side,
            c: cs.c.clone(),
        })
    }

    /// Projected scores of new row samples: `k(x', Z) B_ψ` (`new × r`).
    pub fn transform_x(&self, new_x: &Samples) -> Result<Array2<f64>> {
        let cols: Vec<usize> = (0..self.g.ncols()).collect();
        let k = self.g.cross_rows(new_x, &cols)?;
        Ok(dense::matmul(k.view(), self.svd.v.view())?)
    }
    /// Projected scores of new column samples: `k(X, z')ᵀ B_φ` (`new × r`).
    pub fn transform_z(&self, new_z: &Samples) -> Result<Array2<f64>> {
        let rows: Vec<usize> = (0..self.g.nrows()).collect();
        let k = self.g.cross_cols(&rows, new_z)?;
        Ok(dense::matmul(k.t(), self.svd.u.view())?)
    }
    /// Projected scores of new rows of a data matrix with the training number of columns: maps
    /// them with the fitted compatibility matrix first (models fitted with [`Fit`]).
    pub fn transform_rows(&self, new_rows: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        let mapped = match &self.compat {
            Some(cs) => compat::map_new_rows(new_rows, cs)?,
            None => new_rows.to_owned(),
        };
        self.transform_x(&Samples::dense(mapped)?)
    }
}

impl KsvdValidParams {
    /// Fits KSVD on row samples `x` (n) and column samples `z` (m) of equal dimension.
    pub fn fit_samples(&self, x: Samples, z: Samples) -> Result<Ksvd> {
        let g = self.kernel_matrix(x, z)?;
        self.fit_matrix(g, None)
    }

    /// The kernel matrix these parameters fit (centred when [`KsvdParams::center`] is set).
    ///
    /// The materialisation policy lives here: `G` is stored when it fits the memory budget and
    /// the solver makes repeated passes over it (the products become GEMMs); the Nyström solver
    /// reads only the landmark blocks (plus, for SNE, one pass for the exact normalisers), so it
    /// never stores `G`: storing would cost a full pass and `8 N M` bytes for nothing.
    pub fn kernel_matrix(&self, x: Samples, z: Samples) -> Result<KernelMatrix> {
        let mut g = match self.solver {
            Solver::Nystrom { .. } => KernelMatrix::matrix_free(x, z, self.kernel)?,
            _ => KernelMatrix::with_budget(x, z, self.kernel, self.memory_budget())?,
        };
        if self.center {
            g = g.centered()?;
        }
        Ok(g)
    }

    /// Fits KSVD on an already built kernel matrix.
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
        let (svd, nystrom) = self.solve(&g, progress)?;
        Ok(Ksvd {
            params: self.clone(),
            g,
            svd,
            nystrom,
            compat,
        })
    }

    /// The top-`rank` SVD of `g` by the configured solver (and the Nyström fit, for that
    /// solver), borrowing `g`: [`Ksvd`] stores it, `Kpca` keeps its own.
    pub(crate) fn solve(
        &self,
        g: &KernelMatrix,
        progress: &mut ProgressFn<'_>,
    ) -> Result<(SvdResult, Option<AsymmetricNystrom>)> {
        let (n, m) = (g.nrows(), g.ncols());
        ksvd_solvers::check_rank(n, m, self.rank)?;
        let mut nystrom = None;
        let svd = match &self.solver {
            Solver::Nystrom {
                landmarks,
                cols,
                sampling,
                inner,
            } => {
                let ny = match &self.landmark_indices {
                    Some((rows, cols)) => crate::landmarks::nystrom_at(g, rows, cols, self.rank, *inner, self.seed)?,
                    None => {
                        let p = NystromParams {
                            rank: self.rank,
                            rows: (*landmarks).min(n),
                            cols: cols.unwrap_or(*landmarks).min(m),
                            sampling: *sampling,
                            inner: *inner,
                            seed: self.seed,
                            shared_samples: false,
                        };
                        asymmetric_nystrom(g, &p)?
                    }
                };
                let svd = ny.svd.clone();
                nystrom = Some(ny);
                svd
            }
            solver => solver.solve_operator_with_progress(g, self.rank, self.seed, self.memory_budget(), progress)?,
        };
        Ok((svd, nystrom))
    }
}

/// Fits on a data matrix `A` (records, `N × M`): row samples are its rows, column samples its
/// columns, made dimension-compatible with the configured compatibility alternative when
/// `N ≠ M` (Algorithm 1). Targets are ignored.
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
        let compat_kind = match self.compat {
            Compat::Random { .. } => Compat::Random { seed: self.seed },
            c => c,
        };
        let cs = compat::compatible_samples(a.view(), compat_kind)?;
        let g = self.kernel_matrix(cs.x.clone(), cs.z.clone())?;
        self.fit_matrix(g, Some(cs))
    }
}

/// Concatenated `[U diag(s), V diag(s)]`-style embeddings are task code; this helper returns
/// `U diag(s)` (the training-row scores).
pub fn scores(svd: &SvdResult) -> Array2<f64> {
    &svd.u * &Array1::from(svd.s.to_vec())
}
