//! Wall-clock timing of the node-classification workload: a linear one-vs-rest LS-SVM
//! (`gamma = 1`) on `N x d` embeddings with `C` classes, fitted by the automatic (primal) solver.
//!
//! ```text
//! cargo run --release -p ksvd-lssvm --example node_classification_timing -- [N] [d] [C] [threads] [rbf_n]
//! ```
//!
//! With `rbf_n > 0` it also times an RBF LS-SVM on the first `rbf_n` samples with each dual
//! solver (direct, CG on the stored kernel, matrix-free CG).
//!
//! Data: Gaussian features with class-dependent means (seed 0); timings are single runs after one
//! warm-up fit, with the rayon pool pinned to `threads` (default 2).
use ksvd_linalg::random::{gaussian_matrix, rng_from_seed};
use ksvd_lssvm::{f1_multiclass, stratified_train_test_split, CgOptions, Kernel, LssvmParams, Solver, ZeroDivision};
use ndarray::Axis;
use std::time::Instant;

/// Process CPU time (user + system, all threads) in seconds, from `/proc/self/stat` (Linux);
/// 0 elsewhere. On a shared machine CPU time divided by the thread count bounds the
/// uncontended wall time from below.
fn cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    let rest = stat.rsplit(')').next().unwrap_or("");
    let f: Vec<f64> = rest
        .split_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|v| v.parse().ok())
        .collect();
    f.iter().sum::<f64>() / 100.0 // clock ticks; USER_HZ is 100 on Linux
}

/// Runs `f`, printing wall and CPU seconds.
fn timed<T>(what: &str, f: impl FnOnce() -> T) -> T {
    let (t, c) = (Instant::now(), cpu_seconds());
    let out = f();
    println!(
        "{what}: wall {:.3} s, cpu {:.2} s",
        t.elapsed().as_secs_f64(),
        cpu_seconds() - c
    );
    out
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<usize> = std::env::args().skip(1).map(|a| a.parse()).collect::<Result<_, _>>()?;
    let get = |i: usize, default: usize| args.get(i).copied().unwrap_or(default);
    let (n, d, c, threads, rbf_n) = (get(0, 20_000), get(1, 1000), get(2, 7), get(3, 2), get(4, 0));
    rayon::ThreadPoolBuilder::new().num_threads(threads).build_global()?;

    let mut rng = rng_from_seed(0);
    let labels: Vec<usize> = (0..n).map(|i| i % c).collect();
    let means = gaussian_matrix(&mut rng, c, d) * 0.1;
    let mut x = gaussian_matrix(&mut rng, n, d);
    for (mut row, &l) in x.axis_iter_mut(Axis(0)).zip(&labels) {
        row += &means.row(l);
    }
    let params = LssvmParams::new().gamma(1.0).check()?;
    println!(
        "N = {n}, d = {d}, C = {c}, threads = {threads}, solver = {:?}",
        params.resolve_solver(n, d)
    );

    let _warm_up = params.fit_multiclass(x.view(), &labels)?;
    // Reference floor: one full GEMM X^T X (2 N d^2 flops; the primal solver needs about half).
    timed("reference full GEMM X^T X", || {
        ksvd_linalg::dense::matmul(x.t(), x.view())
    })?;
    let model = timed("fit (all N)", || params.fit_multiclass(x.view(), &labels))?;
    let pred = timed("predict (all N)", || model.predict(x.view()))?;
    let f1 = f1_multiclass(&labels, &pred, c, ZeroDivision::Zero)?;
    println!("training micro-F1 {:.3}", f1.micro_f1);

    // The experiment's shape: a stratified 50/50 split, fit on train, score on test.
    let split = stratified_train_test_split(&labels, 0.5, 0)?;
    let (xtr, xte) = (x.select(Axis(0), &split.train), x.select(Axis(0), &split.test));
    let ytr: Vec<usize> = split.train.iter().map(|&i| labels[i]).collect();
    let yte: Vec<usize> = split.test.iter().map(|&i| labels[i]).collect();
    let t = Instant::now();
    let model = params.fit_multiclass(xtr.view(), &ytr)?;
    let f1 = f1_multiclass(&yte, &model.predict(xte.view())?, c, ZeroDivision::Zero)?;
    println!(
        "50/50 split: fit + predict {:.3} s, test micro-F1 {:.3}, macro-F1 {:.3}",
        t.elapsed().as_secs_f64(),
        f1.micro_f1,
        f1.macro_f1
    );

    if rbf_n > 0 {
        let m = rbf_n.min(n);
        let (xs, ys) = (x.slice(ndarray::s![..m, ..]), &labels[..m]);
        // sigma^2 = 2d: the typical squared distance between two rows, so K is far from I and 11^T.
        let kernel = Kernel::Rbf {
            gamma: (2.0 * d as f64).sqrt(),
        };
        let cg = CgOptions {
            tol: 1e-8,
            max_iter: 1000,
            matrix_free: false,
        };
        for solver in [
            Solver::Direct,
            Solver::ConjugateGradient(cg),
            Solver::ConjugateGradient(CgOptions {
                matrix_free: true,
                ..cg
            }),
        ] {
            let p = LssvmParams::new().kernel(kernel).solver(solver).check()?;
            let model = timed(&format!("RBF fit N = {m}, {solver:?}"), || p.fit_multiclass(xs, ys))?;
            println!("  CG iterations: {:?}", model.model().cg_iterations());
        }
    }
    Ok(())
}
