use ksvd_kernels::graph::{bandwidth_rule, graph_samples, GraphInput};
use ksvd_kernels::{Kernel, KernelMatrix};
use ksvd_linalg::CsrMatrix;
use ksvd_nystrom::*;
use ksvd_solvers::*;
use std::collections::HashMap;
use std::time::Instant;

fn main() {
    let path = std::env::args().nth(1).unwrap();
    let k: f64 = std::env::args().nth(2).map(|s| s.parse().unwrap()).unwrap_or(0.5);
    let text = std::fs::read_to_string(&path).unwrap();
    let mut ids: HashMap<String, usize> = HashMap::new();
    let mut edges = vec![];
    for line in text.lines().skip(2) {
        let t: Vec<&str> = line.split('\t').collect();
        let a = t[1].trim_start_matches("paper:").to_string();
        let b = t[3].trim_start_matches("paper:").to_string();
        let n = ids.len();
        let ia = *ids.entry(a).or_insert(n);
        let n = ids.len();
        let ib = *ids.entry(b).or_insert(n);
        edges.push((ia, ib, 1.0));
    }
    let n = ids.len();
    edges.sort_by_key(|e| (e.0, e.1));
    edges.dedup_by_key(|e| (e.0, e.1));
    let a = CsrMatrix::from_triplets(n, n, edges).unwrap();
    println!("n={n} nnz={}", a.nnz());
    for input in [GraphInput::Raw, GraphInput::RowNormalizedSelfLoops, GraphInput::SelfLoops] {
        let (x, z) = graph_samples(&a, input).unwrap();
        let gamma = bandwidth_rule(&x, k);
        let t = Instant::now();
        let g = KernelMatrix::new(x.clone(), z.clone(), Kernel::Sne { gamma }).unwrap();
        let tb = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let reference = match lanczos_svd(&g, 20, &LanczosParams { tol: 1e-10, max_restarts: 3000, ..Default::default() }) { Ok(r) => r, Err(e) => { println!("{input:?}: {e}"); continue; } };
        let tl = t.elapsed().as_secs_f64();
        println!("{input:?} gamma={gamma:.4} build={tb:.4}s lanczos={tl:.3}s s={:.4?}", reference.s.to_vec());
        for samp in [Sampling::Uniform, Sampling::SquaredNorm] {
        for m in [200, 500, 1000, 2000] {
            let t = Instant::now();
            let g2 = KernelMatrix::new(x.clone(), z.clone(), Kernel::Sne { gamma }).unwrap();
            let ny = match asymmetric_nystrom(&g2, &NystromParams::new(20, m).seed(1).sampling(samp)) { Ok(v) => v, Err(e) => { println!("  m={m}: {e}"); continue; } };
            let tn = t.elapsed().as_secs_f64();
            let e = eta_of(&reference, &ny.svd, EtaWeights::SingularValues).unwrap();
            let eu = eta_of(&reference, &ny.svd, EtaWeights::Uniform).unwrap();
            let sub = subspace_error(&reference, ny.svd.u.view(), ny.svd.v.view()).unwrap();
            println!("  nystrom {samp:?} m={m} t={tn:.4}s eta={e:.4} eta_unif={eu:.3} sub={sub:.3}");
        }
        }
        for p in [0, 10, 30] {
            let t = Instant::now();
            let r = randomized_svd(&g, 20, &RsvdParams { oversampling: p, power_iters: 2, seed: 1 }).unwrap();
            let tr = t.elapsed().as_secs_f64();
            let e = eta_of(&reference, &r, EtaWeights::SingularValues).unwrap();
            println!("  rsvd p={p} t={tr:.4}s eta={e:.4}");
        }
    }
}
