//! The dense path: building a stored SNE kernel matrix and solving it with every solver.
//!
//! `cargo bench -p ksvd-solvers --bench dense_kernel` (pin `RAYON_NUM_THREADS`; the README's
//! ratios against numpy/SciPy/scikit-learn come from `scripts/race_dense.py` on real data).
//! Data: `N` Gaussian samples in 9 dimensions (the shape of the CASP features) for X and for
//! Z, SNE kernel with γ = 3, rank 20.
use criterion::{criterion_group, criterion_main, Criterion};
use ksvd_kernels::{Kernel, KernelMatrix, Samples};
use ksvd_linalg::random::{gaussian_matrix, rng_from_seed};
use ksvd_solvers::{
    auto_svd, block_krylov_svd, lanczos_svd, randomized_svd, AutoParams, BlockKrylovParams, LanczosParams, RsvdParams,
};
use std::hint::black_box;

const N: usize = 4000;
const RANK: usize = 20;

fn samples(seed: u64) -> Samples {
    Samples::dense(gaussian_matrix(&mut rng_from_seed(seed), N, 9)).expect("finite samples")
}

fn bench(c: &mut Criterion) {
    let kernel = Kernel::Sne { gamma: 3.0 };
    let (x, z) = (samples(1), samples(2));
    let mut group = c.benchmark_group(format!("sne {N}x{N}"));
    group.sample_size(10);
    group.bench_function("build stored G", |b| {
        b.iter(|| black_box(KernelMatrix::new(x.clone(), z.clone(), kernel).expect("kernel")))
    });
    group.bench_function("build matrix-free G (normalisers only)", |b| {
        b.iter(|| black_box(KernelMatrix::matrix_free(x.clone(), z.clone(), kernel).expect("kernel")))
    });
    let g = KernelMatrix::new(x.clone(), z.clone(), kernel).expect("kernel");
    group.bench_function("lanczos tol 1e-8", |b| {
        let p = LanczosParams {
            tol: 1e-8,
            ..Default::default()
        };
        b.iter(|| black_box(lanczos_svd(&g, RANK, &p).expect("lanczos")))
    });
    group.bench_function("block krylov tol 1e-8", |b| {
        b.iter(|| black_box(block_krylov_svd(&g, RANK, &BlockKrylovParams::default()).expect("krylov")))
    });
    group.bench_function("rsvd p=10 q=2", |b| {
        b.iter(|| black_box(randomized_svd(&g, RANK, &RsvdParams::default()).expect("rsvd")))
    });
    group.bench_function("auto tol 1e-8", |b| {
        b.iter(|| black_box(auto_svd(&g, RANK, &AutoParams::default(), &mut |_| {}).expect("auto")))
    });
    let free = KernelMatrix::matrix_free(x, z, kernel).expect("kernel");
    group.bench_function("lanczos tol 1e-8, matrix-free G", |b| {
        let p = LanczosParams {
            tol: 1e-8,
            block_size: Some(48),
            ..Default::default()
        };
        b.iter(|| black_box(lanczos_svd(&free, RANK, &p).expect("lanczos")))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
