//! What several test files of this crate share.
use ksvd::{InnerSolver, LanczosParams, Sampling, Solver};

/// One solver of each kind the models support: exact, Lanczos at tolerance 1e-14, and Nyström
/// with 25 row and 20 column landmarks (uniform sampling, dense inner SVD).
pub fn solvers() -> Vec<(&'static str, Solver)> {
    vec![
        ("exact", Solver::Exact),
        (
            "lanczos",
            Solver::Lanczos(LanczosParams {
                tol: 1e-14,
                ..Default::default()
            }),
        ),
        (
            "nystrom",
            Solver::Nystrom {
                landmarks: 25,
                cols: Some(20),
                sampling: Sampling::Uniform,
                inner: InnerSolver::Dense,
            },
        ),
    ]
}
