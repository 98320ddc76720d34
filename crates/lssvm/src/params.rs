//! Hyper-parameters: [`LssvmParams`] (builder) checked once into [`ValidLssvmParams`].
use crate::error::{check_gamma, LssvmError, Result};
use crate::kernel::Kernel;
use crate::solve::CgOptions;

/// How the LS-SVM system is solved.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum Solver {
    /// Pick by size and kernel (see [`ValidLssvmParams::resolve_solver`]).
    Auto,
    /// Dense Cholesky of `H = K + I/gamma` (`N x N`) with the bias eliminated by its Schur
    /// complement. `O(N^2 d + N^3 / 3)` time, `O(N^2)` memory.
    Direct,
    /// The `d x d` primal normal equations (linear kernel only). `O(N d^2 + d^3 / 3)` time,
    /// `O(d^2)` memory.
    Primal,
    /// Conjugate gradient on `H`, optionally matrix-free (see [`CgOptions`]).
    ConjugateGradient(CgOptions),
}

/// Largest `N` for which [`Solver::Auto`] factors the dense `N x N` kernel matrix.
pub const AUTO_DIRECT_MAX_N: usize = 5_000;

/// Largest `N` for which [`Solver::Auto`]'s conjugate gradient stores the kernel matrix
/// (`12_000^2` doubles are 1.15 GB); above it the kernel is evaluated on the fly.
pub const AUTO_DENSE_KERNEL_MAX_N: usize = 12_000;

/// LS-SVM hyper-parameters (unchecked). Defaults: `gamma = 1` (the paper's setting),
/// [`Kernel::Linear`], [`Solver::Auto`].
///
/// `gamma` weights the squared errors: the primal objective is
/// `1/2 ||w||^2 + gamma/2 sum_i e_i^2`, so larger `gamma` means less regularisation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LssvmParams {
    gamma: f64,
    kernel: Kernel,
    solver: Solver,
}

impl Default for LssvmParams {
    fn default() -> Self {
        Self {
            gamma: 1.0,
            kernel: Kernel::Linear,
            solver: Solver::Auto,
        }
    }
}

impl LssvmParams {
    /// The defaults (`gamma = 1`, linear kernel, automatic solver).
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the regularisation `gamma` (finite, `> 0`).
    pub fn gamma(mut self, gamma: f64) -> Self {
        self.gamma = gamma;
        self
    }

    /// Sets the kernel.
    pub fn kernel(mut self, kernel: Kernel) -> Self {
        self.kernel = kernel;
        self
    }

    /// Sets the solver.
    pub fn solver(mut self, solver: Solver) -> Self {
        self.solver = solver;
        self
    }

    /// Validates everything once: `gamma` finite and positive, the kernel's parameters, the CG
    /// options, and that [`Solver::Primal`] comes with [`Kernel::Linear`].
    pub fn check(&self) -> Result<ValidLssvmParams> {
        check_gamma(self.gamma)?;
        crate::kernel::check_kernel(&self.kernel)?;
        match self.solver {
            Solver::ConjugateGradient(opts) => opts.check()?,
            Solver::Primal if self.kernel != Kernel::Linear => {
                return Err(LssvmError::PrimalNeedsLinearKernel { kernel: self.kernel })
            }
            _ => {}
        }
        Ok(ValidLssvmParams {
            gamma: self.gamma,
            kernel: self.kernel,
            solver: self.solver,
        })
    }
}

/// Checked LS-SVM hyper-parameters; the `fit_*` methods live here.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ValidLssvmParams {
    gamma: f64,
    kernel: Kernel,
    solver: Solver,
}

impl ValidLssvmParams {
    /// The regularisation `gamma`.
    pub fn gamma(&self) -> f64 {
        self.gamma
    }

    /// The kernel.
    pub fn kernel(&self) -> Kernel {
        self.kernel
    }

    /// The configured solver (possibly [`Solver::Auto`]).
    pub fn solver(&self) -> Solver {
        self.solver
    }

    /// The solver used for `n_samples x n_features` training data; never [`Solver::Auto`].
    ///
    /// `Auto` resolves to
    /// 1. [`Solver::Primal`] for the linear kernel when `d <= N` (node classification:
    ///    `N` up to 20 000, `d = 1000`);
    /// 2. else [`Solver::Direct`] when `N <= AUTO_DIRECT_MAX_N`;
    /// 3. else conjugate gradient with default [`CgOptions`], storing the kernel matrix when
    ///    `N <= AUTO_DENSE_KERNEL_MAX_N` and the kernel is not linear (the linear kernel is
    ///    always applied as `X (X^T v)`, which is cheaper than storing it).
    pub fn resolve_solver(&self, n_samples: usize, n_features: usize) -> Solver {
        match self.solver {
            Solver::Auto => {
                let linear = self.kernel == Kernel::Linear;
                if linear && n_features <= n_samples {
                    Solver::Primal
                } else if n_samples <= AUTO_DIRECT_MAX_N {
                    Solver::Direct
                } else {
                    let matrix_free = linear || n_samples > AUTO_DENSE_KERNEL_MAX_N;
                    Solver::ConjugateGradient(CgOptions {
                        matrix_free,
                        ..CgOptions::default()
                    })
                }
            }
            other => other,
        }
    }
}

#[cfg(test)]
// A failed unwrap in a test is a test failure with a backtrace, which is what we want here.
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn check_rejects_bad_values() {
        for g in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert!(matches!(
                LssvmParams::new().gamma(g).check(),
                Err(LssvmError::InvalidGamma { .. })
            ));
        }
        let p = LssvmParams::new()
            .kernel(Kernel::Rbf { gamma: 1.0 })
            .solver(Solver::Primal);
        assert!(matches!(p.check(), Err(LssvmError::PrimalNeedsLinearKernel { .. })));
        let bad_tol = Solver::ConjugateGradient(CgOptions {
            tol: 0.0,
            ..CgOptions::default()
        });
        assert!(matches!(
            LssvmParams::new().solver(bad_tol).check(),
            Err(LssvmError::InvalidTolerance { .. })
        ));
        let bad_iter = Solver::ConjugateGradient(CgOptions {
            max_iter: 0,
            ..CgOptions::default()
        });
        assert!(matches!(
            LssvmParams::new().solver(bad_iter).check(),
            Err(LssvmError::InvalidMaxIter { max_iter: 0 })
        ));
    }

    #[test]
    fn auto_rules() {
        let lin = LssvmParams::new().check().unwrap();
        assert_eq!(lin.resolve_solver(20_000, 1000), Solver::Primal);
        assert_eq!(lin.resolve_solver(100, 1000), Solver::Direct);
        assert!(matches!(
            lin.resolve_solver(10_000, 20_000),
            Solver::ConjugateGradient(CgOptions { matrix_free: true, .. })
        ));
        let rbf = LssvmParams::new().kernel(Kernel::Rbf { gamma: 1.0 }).check().unwrap();
        assert_eq!(rbf.resolve_solver(AUTO_DIRECT_MAX_N, 10), Solver::Direct);
        assert!(matches!(
            rbf.resolve_solver(AUTO_DIRECT_MAX_N + 1, 10),
            Solver::ConjugateGradient(CgOptions { matrix_free: false, .. })
        ));
        assert!(matches!(
            rbf.resolve_solver(AUTO_DENSE_KERNEL_MAX_N + 1, 10),
            Solver::ConjugateGradient(CgOptions { matrix_free: true, .. })
        ));
    }
}
