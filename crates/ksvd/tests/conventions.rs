//! The Rust defaults that `docs/conventions.md` states, read from its parameter table and
//! checked against `Ksvd::params()` and `Kpca::params()`.
//!
//! Checked rows (the `default` column): `rank`, `kernel`, `bandwidth` (the rule is on),
//! `bandwidth rule` (its `k`), `centring` (per estimator), `compatibility`, `solver`,
//! `tolerance` (f64 and f32), `precision`, `sampling`, `RSVD oversampling`, `RSVD power iterations`, `seed`. Not checked,
//! because the Rust front door has no default for them: `degree` and `coef0` (fields of
//! `Kernel::Polynomial`, always given), `landmarks` and `column landmarks` (fields of
//! `Solver::Nystrom`), `your landmarks`, `scikit-learn's gamma` (Python only), `threads` (the
//! caller's rayon pool) and `memory budget` (`MemoryBudget::auto` reads the machine's available
//! memory at each call).
#![allow(clippy::unwrap_used)] // Tests panic on failure by design.
use ksvd::prelude::*;
use ksvd::{KpcaValidParams, KsvdValidParams};
use std::collections::HashMap;

#[path = "support/conventions_table.rs"]
mod conventions_table;
use conventions_table::table;

/// The `default` column of the parameter table, by parameter name, backticks removed.
fn defaults() -> HashMap<String, String> {
    let (header, rows) = table("| parameter |");
    let col = header.iter().position(|h| h == "default").expect("a `default` column");
    rows.into_iter()
        .map(|c| (c[0].clone(), c[col].replace('`', "")))
        .collect()
}

fn ksvd() -> KsvdValidParams {
    Ksvd::params().check().unwrap()
}

fn kpca() -> KpcaValidParams {
    Kpca::params().check().unwrap()
}

fn default_of(d: &HashMap<String, String>, name: &str) -> String {
    d.get(name)
        .unwrap_or_else(|| panic!("docs/conventions.md has no `{name}` row"))
        .clone()
}

#[test]
fn rank_kernel_and_bandwidth_rule() {
    let d = defaults();
    let rank: usize = default_of(&d, "rank").parse().unwrap();
    assert_eq!((ksvd().rank(), kpca().rank()), (rank, rank));
    assert_eq!(default_of(&d, "kernel"), "rbf");
    assert!(matches!(ksvd().kernel(), Kernel::Rbf { .. }));
    assert!(matches!(kpca().kernel(), Kernel::Rbf { .. }));
    // `rule`: the bandwidth is chosen by the rule unless given.
    assert_eq!(default_of(&d, "bandwidth"), "rule");
    let k: f64 = default_of(&d, "bandwidth rule").parse().unwrap();
    assert_eq!(ksvd().bandwidth_rule(), Some(k));
    assert_eq!(kpca().bandwidth_rule(), Some(k));
}

#[test]
fn centring_per_estimator_and_compatibility() {
    let d = defaults();
    let centring = default_of(&d, "centring");
    let of = |estimator: &str| -> bool {
        let i = centring
            .find(estimator)
            .unwrap_or_else(|| panic!("{centring}: no {estimator}"));
        let rest = centring[i + estimator.len()..].trim_start();
        rest.split([',', ' ']).next().unwrap().parse().unwrap()
    };
    assert_eq!(ksvd().center(), of("KSVD"));
    assert_eq!(kpca().center(), of("KPCA"));
    assert_eq!(default_of(&d, "compatibility"), "none");
    assert_eq!(ksvd().compat(), None);
}

#[test]
fn solver_tolerance_sampling_rsvd_and_seed() {
    let d = defaults();
    assert_eq!(default_of(&d, "solver"), "auto");
    // `1e-8 (1e-5 in f32)`: the f64 default, then the f32 one.
    let tols: Vec<f64> = default_of(&d, "tolerance")
        .replace(['(', ')'], " ")
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    assert_eq!(tols, [Precision::F64.default_tol(), Precision::F32.default_tol()]);
    for solver in [ksvd().solver().clone(), kpca().solver().clone()] {
        assert_eq!(solver, Solver::Auto { tol: tols[0] });
    }
    let precision: Precision = default_of(&d, "precision").parse().unwrap();
    assert_eq!((ksvd().precision(), kpca().precision()), (precision, precision));
    let sampling: Sampling = default_of(&d, "sampling").parse().unwrap();
    assert_eq!(sampling, Sampling::default());
    let rsvd = RsvdParams::default();
    assert_eq!(
        default_of(&d, "RSVD oversampling").parse::<usize>().unwrap(),
        rsvd.oversampling
    );
    assert_eq!(
        default_of(&d, "RSVD power iterations").parse::<usize>().unwrap(),
        rsvd.power_iters
    );
    let seed: u64 = default_of(&d, "seed").parse().unwrap();
    assert_eq!((ksvd().seed(), kpca().seed(), rsvd.seed), (seed, seed, seed));
}
