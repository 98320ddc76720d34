//! Criterion benchmarks on the SNE kernel of the real Cora and Pubmed citation graphs, r = 20.
//!
//! Inputs: the committed data (`data/`), `x_i` = out-row and `z_j` = in-column of the
//! adjacency (raw, and `D_out⁻¹(A + I)` as stored by AsK-LS), bandwidth from the paper's rule
//! `γ = k sqrt(M γ_x)` (k = 1 for Cora, 0.5 for Pubmed). Thread count: the rayon pool, set with
//! `RAYON_NUM_THREADS` (the README reports runs with 1 and 2 threads).
//!
//! `cargo bench -p ksvd-nystrom --bench real_graphs`
#![allow(clippy::expect_used)]
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use ksvd_datasets::{DataRoot, DatasetName, GraphOptions};
use ksvd_kernels::graph::{bandwidth_rule, graph_samples, GraphInput};
use ksvd_kernels::{Kernel, KernelMatrix, Samples};
use ksvd_linalg::{LinearOperator, MatrixBlocks};
use ksvd_nystrom::{asymmetric_nystrom, uniform_indices, NystromParams};
use ksvd_solvers::{lanczos_svd, randomized_svd, LanczosParams, RsvdParams};
use std::hint::black_box;
use std::time::Duration;

const RANK: usize = 20;

struct Problem {
    name: String,
    x: Samples,
    z: Samples,
    kernel: Kernel,
}

fn problems() -> Vec<Problem> {
    let root = DataRoot::committed().expect("committed data/ folder (run from the repository)");
    let mut out = Vec::new();
    for (name, k) in [(DatasetName::Cora, 1.0), (DatasetName::Pubmed, 0.5)] {
        let graph = root.graph(name, &GraphOptions::default()).expect("graph loads");
        for input in [GraphInput::Raw, GraphInput::RowNormalizedSelfLoops] {
            let (x, z) = graph_samples(&graph.adjacency, input).expect("graph samples");
            let gamma = bandwidth_rule(&x, k);
            out.push(Problem {
                name: format!("{name}/{input:?}"),
                x,
                z,
                kernel: Kernel::Sne { gamma },
            });
        }
    }
    out
}

fn bench(c: &mut Criterion) {
    let threads = rayon::current_num_threads();
    for p in problems() {
        let mut group = c.benchmark_group(format!("{}/threads={threads}", p.name));
        group
            .sample_size(10)
            .measurement_time(Duration::from_secs(3))
            .warm_up_time(Duration::from_millis(500));
        // Building G: squared norms, X Zᵀ and the exact SNE normalisers.
        group.bench_function("kernel_build", |b| {
            b.iter(|| black_box(KernelMatrix::new(p.x.clone(), p.z.clone(), p.kernel).expect("kernel")))
        });
        let g = KernelMatrix::new(p.x.clone(), p.z.clone(), p.kernel).expect("kernel");
        let n = g.nrows();
        let cols = uniform_indices(g.ncols(), 1000.min(g.ncols()), 1);
        let all: Vec<usize> = (0..n).collect();
        group.bench_function("block_N_x_1000", |b| {
            b.iter(|| black_box(g.block(&all, &cols).expect("block")))
        });
        let w = ndarray::Array2::<f64>::ones((cols.len(), RANK));
        group.bench_function("block_mul_N_x_1000_x_r", |b| {
            b.iter(|| black_box(g.block_mul(&all, &cols, w.view()).expect("block_mul")))
        });
        let v = ndarray::Array2::<f64>::ones((g.ncols(), RANK));
        group.bench_function("apply_G_times_r_vectors", |b| {
            b.iter(|| black_box(g.apply(v.view()).expect("apply")))
        });
        if !(p.name.contains("Pubmed") && p.name.contains("RowNormalized")) {
            // The D⁻¹(A+I) Pubmed spectrum has ~20 nearly equal values: Lanczos to 1e-10 takes tens
            // of seconds there, measured by the timing experiment rather than here.
            group.bench_function("lanczos_r20", |b| {
                b.iter(|| {
                    black_box(
                        lanczos_svd(
                            &g,
                            RANK,
                            &LanczosParams {
                                tol: 1e-10,
                                ..Default::default()
                            },
                        )
                        .expect("lanczos"),
                    )
                })
            });
        }
        group.bench_function("rsvd_r20_p10_q2", |b| {
            b.iter(|| {
                black_box(
                    randomized_svd(
                        &g,
                        RANK,
                        &RsvdParams {
                            oversampling: 10,
                            power_iters: 2,
                            seed: 0,
                        },
                    )
                    .expect("rsvd"),
                )
            })
        });
        for m in [500usize, 1000, 2000] {
            if m > n {
                continue;
            }
            group.bench_with_input(BenchmarkId::new("asym_nystrom_end_to_end", m), &m, |b, &m| {
                b.iter(|| {
                    let g = KernelMatrix::new(p.x.clone(), p.z.clone(), p.kernel).expect("kernel");
                    black_box(asymmetric_nystrom(&g, &NystromParams::new(RANK, m).seed(1)).ok())
                })
            });
        }
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
