//! Serde on the core parameter types (feature `serde`, on by default here): round trips, the
//! names configuration files use, and validation of deserialised values.
#![cfg(feature = "serde")]
#![allow(clippy::unwrap_used)] // Tests panic on failure by design.
use ksvd::{AutoParams, MemoryBudget};
use ksvd_kernels::graph::GraphInput;
use ksvd_nystrom::{InnerSolver, NystromParams, Sampling};

#[test]
fn memory_budgets_round_trip_as_bytes_and_are_validated() {
    let b = MemoryBudget::bytes(64 << 20).unwrap();
    let text = serde_json::to_string(&b).unwrap();
    assert_eq!(text, (64u64 << 20).to_string());
    assert_eq!(serde_json::from_str::<MemoryBudget>(&text).unwrap(), b);
    // Below 1 MiB: the same typed check as MemoryBudget::bytes, not a silently invalid budget.
    let err = serde_json::from_str::<MemoryBudget>("0").unwrap_err();
    assert!(err.to_string().contains("1 MiB"), "{err}");
}

#[test]
fn graph_inputs_use_their_command_line_names() {
    for (g, name) in [
        (GraphInput::Raw, "raw"),
        (GraphInput::RowNormalized, "row-normalized"),
        (GraphInput::SelfLoops, "self-loops"),
        (GraphInput::RowNormalizedSelfLoops, "row-normalized-self-loops"),
    ] {
        assert_eq!(serde_json::to_string(&g).unwrap(), format!("\"{name}\""));
        assert_eq!(name.parse::<GraphInput>().unwrap(), g);
        assert_eq!(serde_json::from_str::<GraphInput>(&format!("\"{name}\"")).unwrap(), g);
    }
    assert!(serde_json::from_str::<GraphInput>("\"transposed\"").is_err());
}

#[test]
fn solver_parameters_round_trip() {
    let a = AutoParams {
        tol: 1e-10,
        seed: 7,
        budget: MemoryBudget::bytes(1 << 30).unwrap(),
    };
    let back: AutoParams = serde_json::from_str(&serde_json::to_string(&a).unwrap()).unwrap();
    assert_eq!(back, a);
    let n = NystromParams {
        sampling: Sampling::AdaptiveCross,
        inner: InnerSolver::Dense,
        ..NystromParams::new(20, 200)
    };
    let back: NystromParams = serde_json::from_str(&serde_json::to_string(&n).unwrap()).unwrap();
    assert_eq!(back, n);
}

/// Configs name the solver in `ksvd::Solver`'s serde form (externally tagged); absent fields of
/// the solver parameters (typically `seed`, which the caller replaces) take their defaults.
#[test]
fn solver_choices_read_from_config_form() {
    use ksvd::{LanczosParams, RsvdParams, Solver};
    let rsvd: Solver = serde_json::from_str(r#"{"Rsvd": {"oversampling": 10, "power_iters": 2}}"#).unwrap();
    assert_eq!(rsvd, Solver::Rsvd(RsvdParams::default()));
    let lanczos: Solver = serde_json::from_str(r#"{"Lanczos": {"tol": 1e-8, "max_restarts": 50}}"#).unwrap();
    assert_eq!(
        lanczos,
        Solver::Lanczos(LanczosParams {
            tol: 1e-8,
            max_restarts: 50,
            ..LanczosParams::default()
        })
    );
    let auto: Solver = serde_json::from_str(r#"{"Auto": {"tol": 1e-8}}"#).unwrap();
    assert_eq!(auto, Solver::Auto { tol: 1e-8 });
    assert_eq!(serde_json::from_str::<Solver>(r#""Exact""#).unwrap(), Solver::Exact);
    assert_eq!(
        serde_json::from_str::<InnerSolver>(r#""Dense""#).unwrap(),
        InnerSolver::Dense
    );
    assert_eq!(
        serde_json::from_str::<InnerSolver>(r#"{"Rsvd": {"oversampling": 10, "power_iters": 2}}"#).unwrap(),
        InnerSolver::default()
    );
    // Every variant round trips.
    for s in [
        Solver::Exact,
        auto,
        lanczos,
        rsvd,
        Solver::BlockKrylov(ksvd::BlockKrylovParams::default()),
        Solver::Nystrom {
            landmarks: 100,
            cols: Some(80),
            sampling: Sampling::Uniform,
            inner: InnerSolver::Dense,
        },
    ] {
        let back: Solver = serde_json::from_str(&serde_json::to_string(&s).unwrap()).unwrap();
        assert_eq!(back, s);
    }
}
