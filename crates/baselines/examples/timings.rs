//! Wall time of every baseline with its default configuration on the committed datasets.
//!
//! ```text
//! RAYON_NUM_THREADS=2 cargo run --release -p ksvd-baselines --example timings -- cora pubmed blogcatalog acm dblp wiki
//! ```
//!
//! Graphs run DeepWalk, HOPE and DiGAE (printing the embedding shape and HOPE's beta and rho);
//! document-term datasets run BCOT and EBC and print NMI and coherence. Besides the wall time it
//! prints the process CPU time (user + system, from `/proc/self/stat` on Linux), which is the
//! better measure on a shared machine.
use ksvd_baselines::{
    run_bicluster_baseline, run_graph_baseline, BiclusterBaseline, BiclusterBaselineConfig, GraphBaseline,
    GraphBaselineConfig, HopeParams,
};
use ksvd_datasets::{DataRoot, DatasetKind, DatasetName, GraphOptions};
use std::time::Instant;

/// User + system CPU seconds of this process so far (Linux; `NaN` elsewhere).
fn cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return f64::NAN;
    };
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
        return f64::NAN;
    };
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(f64::NAN);
    (ticks(11) + ticks(12)) / 100.0
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = DataRoot::committed()?;
    let threads = rayon::current_num_threads();
    for arg in std::env::args().skip(1) {
        let name: DatasetName = arg.parse()?;
        match name.kind() {
            DatasetKind::Graph => {
                let g = root.graph(name, &GraphOptions::default())?;
                let config = GraphBaselineConfig::default();
                let (beta, rho) = HopeParams::default().check()?.beta_for(&g.adjacency)?;
                println!(
                    "{arg}: n = {}, arcs = {}, HOPE beta = {beta:.4e}, rho = {rho:.4}",
                    g.n_nodes(),
                    g.n_arcs()
                );
                for method in GraphBaseline::ALL {
                    let (start, cpu) = (Instant::now(), cpu_seconds());
                    let emb = run_graph_baseline(method, &g, &config, 0)?;
                    let (secs, cpu) = (start.elapsed().as_secs_f64(), cpu_seconds() - cpu);
                    let dim = emb.features().into_owned().dim();
                    println!(
                        "  {:<9} wall {secs:>8.2} s  cpu {cpu:>8.2} s  ({threads} threads)  features {dim:?}",
                        method.id()
                    );
                }
            }
            DatasetKind::DocumentTerm => {
                let d = root.document_term(name)?;
                let k_docs = d.n_clusters;
                let k_terms = k_docs; // the spec (experiments/table2.toml) sets the paper's term-cluster counts
                println!(
                    "{arg}: {} x {}, k_docs = {k_docs}, k_terms = {k_terms}",
                    d.matrix.nrows(),
                    d.matrix.ncols()
                );
                for method in BiclusterBaseline::ALL {
                    let (start, cpu) = (Instant::now(), cpu_seconds());
                    let b =
                        run_bicluster_baseline(method, &d, k_docs, k_terms, &BiclusterBaselineConfig::default(), 0)?;
                    let (secs, cpu) = (start.elapsed().as_secs_f64(), cpu_seconds() - cpu);
                    let nmi = ksvd_bicluster::nmi(&d.labels, &b.doc_labels)?;
                    let coh = ksvd_bicluster::coherence(&d.matrix, &b.term_labels)?.score;
                    println!(
                        "  {:<5} wall {secs:>8.2} s  cpu {cpu:>8.2} s  ({threads} threads)  NMI {nmi:.3}  coherence {coh:.3}",
                        method.id()
                    );
                }
            }
            other => println!("{arg}: a {other} dataset, skipped"),
        }
    }
    Ok(())
}
