//! Graph reconstruction with petgraph end to end: Cora (from the committed `data/`) as a
//! `petgraph::DiGraph`, its adjacency through `adjacency_from_petgraph`, KSVD and SVD
//! embeddings, and the paper's reconstruction norms (Table 1's ℓ1 and ℓ2) with the
//! inner-product decoder `⟨source_v, target_w⟩`.
//!
//! `cargo run --release -p ksvd-graph-tasks --example reconstruction [rank]` (default rank 64).
use ksvd::Solver;
use ksvd_datasets::{DataRoot, DatasetName, GraphOptions};
use ksvd_graph_tasks::{
    adjacency_from_petgraph, bandwidth, embed, evaluate_reconstruction, Distance, EmbeddingSpec, GraphInput, Method,
    Scaling,
};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let rank: usize = match std::env::args().nth(1) {
        Some(r) => r.parse().map_err(|e| format!("rank `{r}`: {e}"))?,
        None => 64,
    };
    let cora = DataRoot::committed()?.graph(DatasetName::Cora, &GraphOptions::default())?;
    let graph = cora.to_petgraph();
    println!(
        "Cora as a petgraph DiGraph: {} nodes, {} arcs",
        graph.node_count(),
        graph.edge_count()
    );
    let a = adjacency_from_petgraph(&graph)?;
    let transform = GraphInput::RowNormalizedSelfLoops;
    // The paper's bandwidth rule at k = 2 (Table 1's cross-validation picks k = 2 on Cora).
    let gamma = bandwidth(&a, transform, 2.0)?;
    for method in [Method::Svd, Method::KsvdSne] {
        let spec = EmbeddingSpec {
            method,
            rank,
            transform,
            scaling: Scaling::Scores,
            center_kernels: false,
            gamma: (method == Method::KsvdSne).then_some(gamma),
            solver: Solver::Auto { tol: 1e-8 },
            seed: 0,
            split_twins: true,
        };
        let out = embed(&a, &spec)?;
        let norms = evaluate_reconstruction(&a, &out.embeddings, Distance::InnerProduct, true)?;
        println!(
            "{method:?}, rank {rank}: l1 = {}, l2 = {:.2}, wrong entries = {}",
            norms.l1, norms.l2, norms.wrong_entries
        );
    }
    Ok(())
}
