//! Mathematical properties of the baselines on small synthetic inputs: HOPE reproduces the Katz
//! matrix up to exactly the tail of its spectrum, DeepWalk and DiGAE separate planted
//! communities, BCOT and EBC recover planted biclusters.
#![allow(clippy::unwrap_used)] // Test helpers panic on failure by design.
use ksvd_baselines::{
    BcotParams, DeepWalkParams, DigaeParams, EbcParams, GraphView, HopeParams, HopeSolver, OtAlgorithm,
};
use ksvd_bicluster::{kmeans, nmi, KMeansParams};
use ksvd_linalg::random::rng_from_seed;
use ksvd_linalg::{dense, CsrMatrix};
use ndarray::{concatenate, Array2, Axis};
use proptest::prelude::*;
use rand::Rng;

/// A random directed graph: arc `i -> j` (`i != j`) with probability `p_in` inside a block of
/// `block` consecutive nodes, `p_out` across blocks.
fn sbm(n: usize, block: usize, p_in: f64, p_out: f64, symmetric: bool, seed: u64) -> CsrMatrix {
    let mut rng = rng_from_seed(seed);
    let mut t = Vec::new();
    for i in 0..n {
        for j in 0..n {
            if i == j || (symmetric && j < i) {
                continue;
            }
            let p = if i / block == j / block { p_in } else { p_out };
            if rng.gen::<f64>() < p {
                t.push((i, j, 1.0));
                if symmetric {
                    t.push((j, i, 1.0));
                }
            }
        }
    }
    CsrMatrix::from_triplets(n, n, t).unwrap()
}

fn blocks(n: usize, block: usize) -> Vec<usize> {
    (0..n).map(|i| i / block).collect()
}

/// `‖S − U_s U_t^T‖_F²` against the dense Katz matrix and its spectrum.
fn katz_check(a: &CsrMatrix, params: &HopeParams, seed: u64) -> (f64, f64, f64) {
    let fit = params.check().unwrap().fit(a, seed).unwrap();
    let n = a.nrows();
    let ba = a.to_dense() * fit.beta;
    let s = dense::lu_solve((Array2::<f64>::eye(n) - &ba).view(), ba.view()).unwrap();
    let sv = dense::singular_values(s.view()).unwrap();
    let r = params.rank;
    let tail: f64 = sv.iter().skip(r).map(|x| x * x).sum();
    let total: f64 = sv.iter().map(|x| x * x).sum();
    let approx = dense::matmul(fit.source.view(), fit.target.t()).unwrap();
    let err: f64 = (&s - &approx).iter().map(|x| x * x).sum();
    for i in 0..r {
        assert!(
            (fit.singular_values[i] - sv[i]).abs() <= 1e-9 * sv[0],
            "sigma_{i}: {} vs {}",
            fit.singular_values[i],
            sv[i]
        );
    }
    (err, tail, total)
}

#[test]
fn hope_reproduces_katz_up_to_the_tail_of_its_spectrum() {
    let a = sbm(40, 10, 0.3, 0.05, false, 1);
    for (solver, oversampling) in [(HopeSolver::Lanczos, 0), (HopeSolver::Rsvd, 40)] {
        for rank in [1, 4, 12] {
            let params = HopeParams {
                rank,
                solver,
                oversampling,
                // The Katz operator is a Neumann series truncated at katz_tol = 1e-12, so certified
                // residuals (computed explicitly) cannot go below about that.
                lanczos_tol: 1e-10,
                ..Default::default()
            };
            let (err, tail, total) = katz_check(&a, &params, 3);
            // Eckart-Young: the rank-r truncation error is exactly the tail.
            let tol = 1e-9 * total + 40.0 * f64::EPSILON * total;
            assert!(
                (err - tail).abs() <= tol,
                "{solver:?} r={rank}: {err:e} vs tail {tail:e}"
            );
        }
    }
}

#[test]
fn hope_default_beta_is_half_the_inverse_spectral_radius() {
    // Symmetric graph: the power iteration converges to the true spectral radius.
    let a = sbm(30, 15, 0.4, 0.1, true, 2);
    let fit = HopeParams {
        rank: 3,
        ..Default::default()
    }
    .check()
    .unwrap()
    .fit(&a, 0)
    .unwrap();
    let (eig, _) = dense::symmetric_eigen(a.to_dense().view()).unwrap();
    let rho = eig.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    assert!(
        (fit.spectral_radius - rho).abs() < 1e-4 * rho,
        "{} vs {rho}",
        fit.spectral_radius
    );
    assert!((fit.beta * fit.spectral_radius - 0.5).abs() < 1e-12);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    /// Over random graphs and ranks (including rank n, where the error is zero): with a range
    /// finder covering every column, RSVD's HOPE error equals the spectral tail.
    #[test]
    fn hope_error_is_the_tail_for_random_graphs(n in 3usize..20, density in 0.05f64..0.6, frac in 0.0f64..1.0, seed in 0u64..1000) {
        let a = sbm(n, n, density, density, false, seed);
        prop_assume!(a.nnz() > 0);
        let rank = 1 + ((n - 1) as f64 * frac) as usize;
        let params = HopeParams { rank, beta: Some(0.5 / n as f64), oversampling: n, ..Default::default() };
        let (err, tail, total) = katz_check(&a, &params, seed);
        prop_assert!((err - tail).abs() <= 1e-10 * total + f64::EPSILON, "{} vs {}", err, tail);
    }
}

#[test]
fn deepwalk_separates_two_planted_communities() {
    let (n, block) = (120, 60);
    let truth = blocks(n, block);
    for (view, symmetric) in [(GraphView::Undirected, true), (GraphView::Directed, false)] {
        let a = sbm(n, block, 0.15, 0.01, symmetric, 4);
        let params = DeepWalkParams {
            dimension: 16,
            walk_length: 40,
            window: 5,
            view,
            ..Default::default()
        };
        let emb = params.check().unwrap().fit(&a, 11).unwrap().embedding;
        let labels = kmeans(emb.view(), 2, 0, &KMeansParams::new()).unwrap().labels;
        let score = nmi(&truth, &labels).unwrap();
        assert!(score > 0.9, "{view:?}: NMI {score}");
    }
}

#[test]
fn digae_loss_falls_and_embeddings_separate_communities() {
    let (n, block) = (100, 50);
    let a = sbm(n, block, 0.15, 0.01, false, 5);
    let params = DigaeParams {
        hidden: 32,
        dimension: 16,
        epochs: 150,
        ..Default::default()
    };
    let fit = params.check().unwrap().fit(&a, 2).unwrap();
    let (first, last) = (fit.losses[0], *fit.losses.last().unwrap());
    // Initially s_i . t_j is near 0, so the loss is near 2 ln 2.
    assert!((first - 2.0 * 2f64.ln()).abs() < 0.2, "initial loss {first}");
    assert!(last < 0.75 * first, "loss {first} -> {last}");
    let emb = concatenate(Axis(1), &[fit.source.view(), fit.target.view()]).unwrap();
    let labels = kmeans(emb.view(), 2, 0, &KMeansParams::new()).unwrap().labels;
    let score = nmi(&blocks(n, block), &labels).unwrap();
    assert!(score > 0.9, "NMI {score}");
}

/// A noisy block matrix: `docs` x `terms`, document `i` in cluster `i % kd`, term `j` in cluster
/// `j % kt`; the mean count is `strong` in the blocks of `pattern` and `weak` elsewhere.
fn planted(docs: usize, terms: usize, kd: usize, kt: usize, pattern: &[(usize, usize)], seed: u64) -> CsrMatrix {
    let mut rng = rng_from_seed(seed);
    let mut t = Vec::new();
    for i in 0..docs {
        for j in 0..terms {
            let on = pattern.contains(&(i % kd, j % kt));
            let p = if on { 0.5 } else { 0.05 };
            if rng.gen::<f64>() < p {
                t.push((i, j, rng.gen_range(1..4) as f64));
            }
        }
    }
    CsrMatrix::from_triplets(docs, terms, t).unwrap()
}

fn truth(len: usize, k: usize) -> Vec<usize> {
    (0..len).map(|i| i % k).collect()
}

#[test]
fn bcot_recovers_planted_diagonal_biclusters() {
    let x = planted(150, 90, 3, 3, &[(0, 0), (1, 1), (2, 2)], 6);
    let sinkhorn = |reg| BcotParams {
        algorithm: OtAlgorithm::Sinkhorn,
        reg,
        ..Default::default()
    };
    // Exact transport (the default) and Sinkhorn, from different random starts.
    for (params, seeds) in [(BcotParams::default(), 0..3), (sinkhorn(0.1), 0..2)] {
        let bcot = params.check().unwrap();
        for seed in seeds {
            let fit = bcot.fit(&x, 3, seed).unwrap();
            let (d, t) = (
                nmi(&truth(150, 3), &fit.row_labels).unwrap(),
                nmi(&truth(90, 3), &fit.col_labels).unwrap(),
            );
            assert!(
                d > 0.99 && t > 0.99,
                "{:?} reg {}, seed {seed}: NMI docs {d}, terms {t}",
                params.algorithm,
                params.reg
            );
            // Plans keep their marginals.
            let rows = fit.row_plan.sum_axis(Axis(1));
            assert!(rows.iter().all(|&r| (r - 1.0 / 150.0).abs() < 1e-9));
        }
    }
}

#[test]
fn ebc_recovers_planted_biclusters() {
    // Diagonal blocks, and a non-diagonal pattern with more term than document clusters.
    type Case = (usize, usize, Vec<(usize, usize)>);
    let cases: [Case; 2] = [
        (3, 3, vec![(0, 0), (1, 1), (2, 2)]),
        (2, 3, vec![(0, 0), (0, 1), (1, 1), (1, 2)]),
    ];
    for (kd, kt, pattern) in cases {
        let x = planted(120, 90, kd, kt, &pattern, 7);
        let ebc = EbcParams {
            restarts: 5,
            max_iterations: 30,
            ..Default::default()
        }
        .check()
        .unwrap();
        let fit = ebc.fit(&x, kd, kt, 1).unwrap();
        let (d, t) = (
            nmi(&truth(120, kd), &fit.row_labels).unwrap(),
            nmi(&truth(90, kt), &fit.col_labels).unwrap(),
        );
        assert!(d > 0.99 && t > 0.99, "{kd}x{kt}: NMI docs {d}, terms {t}");
        assert!(fit.objective >= 0.0);
    }
}

#[test]
fn bicluster_runs_are_deterministic_in_the_seed() {
    let x = planted(60, 40, 2, 2, &[(0, 0), (1, 1)], 8);
    let ebc = EbcParams::default().check().unwrap();
    assert_eq!(ebc.fit(&x, 2, 2, 5).unwrap(), ebc.fit(&x, 2, 2, 5).unwrap());
    let bcot = BcotParams::default().check().unwrap();
    assert_eq!(bcot.fit(&x, 2, 5).unwrap(), bcot.fit(&x, 2, 5).unwrap());
}
