//! Solvers by name, and the flat solver options of the front ends (docs/conventions.md): the one
//! place where `--solver nystrom --n-landmarks 500` or `solver="rsvd"` becomes a [`Solver`].
use crate::error::{KsvdError, Result};
use crate::model::Solver;
use ksvd_linalg::Vocabulary;
use ksvd_nystrom::{InnerSolver, Sampling};
use ksvd_solvers::{BlockKrylovParams, LanczosParams, RsvdParams};

/// A solver by name: the vocabulary of the `ksvd` command's `--solver` and Python's `solver=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum SolverKind {
    /// [`Solver::Auto`], the certified default.
    #[default]
    Auto,
    /// [`Solver::Exact`].
    Exact,
    /// [`Solver::Lanczos`].
    Lanczos,
    /// [`Solver::Rsvd`].
    Rsvd,
    /// [`Solver::BlockKrylov`].
    BlockKrylov,
    /// [`Solver::Nystrom`].
    Nystrom,
}

impl Vocabulary for SolverKind {
    const WHAT: &'static str = "solver";
    const ALL: &'static [SolverKind] = &[
        SolverKind::Auto,
        SolverKind::Exact,
        SolverKind::Lanczos,
        SolverKind::Rsvd,
        SolverKind::BlockKrylov,
        SolverKind::Nystrom,
    ];

    fn names(self) -> &'static [&'static str] {
        match self {
            SolverKind::Auto => &["auto"],
            SolverKind::Exact => &["exact", "dense"],
            SolverKind::Lanczos => &["lanczos"],
            SolverKind::Rsvd => &["rsvd"],
            SolverKind::BlockKrylov => &["block-krylov", "block_krylov"],
            SolverKind::Nystrom => &["nystrom"],
        }
    }
}

ksvd_linalg::vocabulary_traits!(SolverKind);
#[cfg(feature = "serde")]
ksvd_linalg::vocabulary_serde!(SolverKind);

/// The solver options the front ends take as flat parameters, with the defaults of
/// docs/conventions.md. Each solver reads the options it has and ignores the others.
#[derive(Debug, Clone, PartialEq)]
pub struct SolverOptions {
    /// Relative residual tolerance of `auto`, `lanczos` and `block-krylov` (default 1e-8).
    pub tol: f64,
    /// Oversampling of `rsvd` and `block-krylov`, and of the randomized SVD of a large Nyström
    /// block (default 10).
    pub oversampling: usize,
    /// Power iterations of `rsvd` and of a large Nyström block's randomized SVD (default 2).
    pub power_iters: usize,
    /// Nyström: sampled rows, and columns unless `n_col_landmarks` is set (required).
    pub n_landmarks: Option<usize>,
    /// Nyström: sampled columns, when different.
    pub n_col_landmarks: Option<usize>,
    /// Nyström: how landmarks are chosen (default uniform).
    pub sampling: Sampling,
}

impl Default for SolverOptions {
    fn default() -> Self {
        SolverOptions {
            tol: 1e-8,
            oversampling: 10,
            power_iters: 2,
            n_landmarks: None,
            n_col_landmarks: None,
            sampling: Sampling::Uniform,
        }
    }
}

/// The sampled block of a Nyström fit above which its SVD is randomized (`rows × cols` entries).
const DENSE_INNER_MAX_ENTRIES: usize = 4_000_000;

impl SolverOptions {
    /// The solver of the sampled `rows × cols` Nyström block: exact up to 4·10⁶ entries
    /// ([`InnerSolver::Exact`]: the dense SVD, or certified block Lanczos when the rank is small
    /// against the block), the randomized SVD with these options' oversampling and power
    /// iterations beyond.
    pub fn inner(&self, rows: usize, cols: usize) -> InnerSolver {
        if rows.saturating_mul(cols) <= DENSE_INNER_MAX_ENTRIES {
            InnerSolver::Exact
        } else {
            InnerSolver::Rsvd {
                oversampling: self.oversampling,
                power_iters: self.power_iters,
            }
        }
    }
}

impl SolverKind {
    /// The solver of this name with `options`. `nystrom` needs `n_landmarks` (a typed error
    /// otherwise); user-chosen landmarks (`KsvdParams::landmark_indices`) replace the counts.
    pub fn solver(self, options: &SolverOptions) -> Result<Solver> {
        let o = options;
        Ok(match self {
            SolverKind::Auto => Solver::Auto { tol: o.tol },
            SolverKind::Exact => Solver::Exact,
            SolverKind::Lanczos => Solver::Lanczos(LanczosParams {
                tol: o.tol,
                ..LanczosParams::default()
            }),
            SolverKind::Rsvd => Solver::Rsvd(RsvdParams {
                oversampling: o.oversampling,
                power_iters: o.power_iters,
                ..RsvdParams::default()
            }),
            SolverKind::BlockKrylov => Solver::BlockKrylov(BlockKrylovParams {
                tol: o.tol,
                oversampling: o.oversampling,
                ..BlockKrylovParams::default()
            }),
            SolverKind::Nystrom => {
                let Some(landmarks) = o.n_landmarks else {
                    return Err(KsvdError::InvalidParameter {
                        name: "n_landmarks",
                        reason: "the nystrom solver needs the number of landmarks (sampled rows and columns)".into(),
                    });
                };
                // `cols` stays `None` unless the columns differ: KPCA's symmetric Nyström method
                // samples one set and refuses a column count.
                Solver::Nystrom {
                    landmarks,
                    cols: o.n_col_landmarks,
                    sampling: o.sampling,
                    inner: o.inner(landmarks, o.n_col_landmarks.unwrap_or(landmarks)),
                }
            }
        })
    }
}

impl Solver {
    /// The solver's name.
    pub fn kind(&self) -> SolverKind {
        match self {
            Solver::Auto { .. } => SolverKind::Auto,
            Solver::Exact => SolverKind::Exact,
            Solver::Lanczos(_) => SolverKind::Lanczos,
            Solver::Rsvd(_) => SolverKind::Rsvd,
            Solver::BlockKrylov(_) => SolverKind::BlockKrylov,
            Solver::Nystrom { .. } => SolverKind::Nystrom,
        }
    }

    /// The flat options this solver carries, the others at their defaults: the inverse of
    /// [`SolverKind::solver`] (`s.kind().solver(&s.options())` gives back a solver it built), for
    /// front ends that report a model's parameters by their flat names.
    pub fn options(&self) -> SolverOptions {
        let mut o = SolverOptions::default();
        match self {
            Solver::Auto { tol } => o.tol = *tol,
            Solver::Exact => {}
            Solver::Lanczos(l) => o.tol = l.tol,
            Solver::Rsvd(r) => {
                o.oversampling = r.oversampling;
                o.power_iters = r.power_iters;
            }
            Solver::BlockKrylov(b) => {
                o.tol = b.tol;
                o.oversampling = b.oversampling;
            }
            Solver::Nystrom {
                landmarks,
                cols,
                sampling,
                inner,
            } => {
                o.n_landmarks = Some(*landmarks);
                o.n_col_landmarks = *cols;
                o.sampling = *sampling;
                if let InnerSolver::Rsvd {
                    oversampling,
                    power_iters,
                } = *inner
                {
                    o.oversampling = oversampling;
                    o.power_iters = power_iters;
                }
            }
        }
        o
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use linfa::param_guard::ParamGuard;

    #[test]
    fn every_name_gives_its_solver_and_back() {
        let options = SolverOptions {
            n_landmarks: Some(50),
            ..SolverOptions::default()
        };
        for &k in SolverKind::ALL {
            for name in k.names() {
                assert_eq!(name.parse::<SolverKind>().unwrap(), k);
            }
            let solver = k.solver(&options).unwrap();
            assert_eq!(solver.kind(), k);
            solver.validate().unwrap();
        }
        assert!(SolverKind::Nystrom.solver(&SolverOptions::default()).is_err());
        // Without a column count the Nyström solver samples one set: KPCA takes it.
        let ny = SolverKind::Nystrom.solver(&options).unwrap();
        assert!(matches!(
            ny,
            Solver::Nystrom {
                landmarks: 50,
                cols: None,
                ..
            }
        ));
        crate::Kpca::params().solver(ny).check().unwrap();
        let two = SolverOptions {
            n_col_landmarks: Some(40),
            ..options
        };
        assert!(matches!(
            SolverKind::Nystrom.solver(&two).unwrap(),
            Solver::Nystrom {
                landmarks: 50,
                cols: Some(40),
                ..
            }
        ));
        assert!("arpack"
            .parse::<SolverKind>()
            .unwrap_err()
            .to_string()
            .contains("block-krylov"));
    }

    #[test]
    fn options_invert_solver() {
        let options = SolverOptions {
            tol: 1e-6,
            oversampling: 7,
            power_iters: 3,
            n_landmarks: Some(3000),
            n_col_landmarks: Some(2000),
            sampling: Sampling::Leverage,
        };
        let d = SolverOptions::default();
        fn pick<T>(carried: bool, given: T, default: T) -> T {
            if carried {
                given
            } else {
                default
            }
        }
        for &k in SolverKind::ALL {
            let solver = k.solver(&options).unwrap();
            let back = solver.options();
            assert_eq!(k.solver(&back).unwrap(), solver, "{k}");
            // Each solver carries exactly its own options; the others are the defaults.
            let carries = |name: &str| match k {
                SolverKind::Auto | SolverKind::Lanczos => name == "tol",
                SolverKind::Exact => false,
                SolverKind::Rsvd => name == "oversampling" || name == "power_iters",
                SolverKind::BlockKrylov => name == "tol" || name == "oversampling",
                // 3000 x 2000 landmarks: a randomized inner SVD with the options' values.
                SolverKind::Nystrom => name != "tol",
            };
            assert_eq!(back.tol, pick(carries("tol"), options.tol, d.tol), "{k}");
            assert_eq!(
                back.oversampling,
                pick(carries("oversampling"), options.oversampling, d.oversampling),
                "{k}"
            );
            assert_eq!(
                back.power_iters,
                pick(carries("power_iters"), options.power_iters, d.power_iters),
                "{k}"
            );
            let nystrom = k == SolverKind::Nystrom;
            assert_eq!(
                back.n_landmarks,
                pick(nystrom, options.n_landmarks, d.n_landmarks),
                "{k}"
            );
            assert_eq!(
                back.n_col_landmarks,
                pick(nystrom, options.n_col_landmarks, d.n_col_landmarks),
                "{k}"
            );
            assert_eq!(back.sampling, pick(nystrom, options.sampling, d.sampling), "{k}");
        }
    }

    #[test]
    fn large_nystrom_blocks_get_a_randomized_svd() {
        let o = SolverOptions::default();
        assert_eq!(o.inner(2000, 2000), InnerSolver::Exact);
        assert!(matches!(
            o.inner(2001, 2000),
            InnerSolver::Rsvd {
                oversampling: 10,
                power_iters: 2
            }
        ));
    }
}
