//! `petgraph` graphs as input: any graph whose edges can be listed and whose nodes have dense
//! indices (`Graph`, `StableGraph`, `GraphMap`, `Csr`, or a reference to one) becomes the
//! adjacency matrix the embeddings and the reconstruction take.
use ksvd_linalg::CsrMatrix;
use petgraph::visit::{EdgeRef, GraphProp, IntoEdgeReferences, NodeIndexable};

use crate::error::{GraphTaskError, Result};

/// The adjacency matrix of `graph` with every arc of weight one (`A[src, dst] = 1`, repeated
/// arcs summed). See [`weighted_adjacency_from_petgraph`].
pub fn adjacency_from_petgraph<G>(graph: G) -> Result<CsrMatrix>
where
    G: IntoEdgeReferences + NodeIndexable + GraphProp,
{
    weighted_adjacency_from_petgraph(graph, |_| 1.0)
}

/// The adjacency matrix of `graph`, `A[src, dst] = weight(edge)` (repeated arcs summed).
///
/// Node `v` is row and column `graph.to_index(v)`, so there are `graph.node_bound()` rows: the
/// holes a `StableGraph` leaves after removals become isolated nodes. An undirected graph
/// gives a symmetric `A` (each edge in both directions, a self-loop once).
///
/// # Errors
/// [`GraphTaskError::InvalidConfig`] when a weight is NaN or infinite (naming the edge's node
/// indices), or when the graph has no nodes.
pub fn weighted_adjacency_from_petgraph<G, F>(graph: G, mut weight: F) -> Result<CsrMatrix>
where
    G: IntoEdgeReferences + NodeIndexable + GraphProp,
    F: FnMut(G::EdgeRef) -> f64,
{
    let n = graph.node_bound();
    if n == 0 {
        return Err(GraphTaskError::InvalidConfig {
            field: "graph",
            value: "0 nodes".into(),
            reason: "a graph with at least one node is required".into(),
        });
    }
    let directed = graph.is_directed();
    let mut arcs = Vec::new();
    for e in graph.edge_references() {
        let (i, j) = (graph.to_index(e.source()), graph.to_index(e.target()));
        let w = weight(e);
        if !w.is_finite() {
            return Err(GraphTaskError::InvalidConfig {
                field: "edge weight",
                value: format!("{w} on the edge {i} -> {j}"),
                reason: "edge weights must be finite".into(),
            });
        }
        arcs.push((i, j, w));
        if !directed && i != j {
            arcs.push((j, i, w));
        }
    }
    Ok(CsrMatrix::from_triplets(n, n, arcs)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use petgraph::graph::{DiGraph, UnGraph};
    use petgraph::stable_graph::StableDiGraph;

    fn dense(a: &CsrMatrix) -> Vec<Vec<f64>> {
        let mut d = vec![vec![0.0; a.ncols()]; a.nrows()];
        for (i, row) in d.iter_mut().enumerate() {
            let (idx, val) = a.row(i);
            for (&j, &v) in idx.iter().zip(val) {
                row[j] += v;
            }
        }
        d
    }

    #[test]
    fn directed_weighted_and_repeated_arcs() {
        let mut g = DiGraph::<(), f64>::new();
        let v: Vec<_> = (0..3).map(|_| g.add_node(())).collect();
        g.add_edge(v[0], v[1], 2.0);
        g.add_edge(v[0], v[1], 0.5);
        g.add_edge(v[2], v[0], 1.0);
        let a = weighted_adjacency_from_petgraph(&g, |e| *e.weight()).unwrap();
        assert_eq!(dense(&a), vec![vec![0.0, 2.5, 0.0], vec![0.0; 3], vec![1.0, 0.0, 0.0]]);
        let u = adjacency_from_petgraph(&g).unwrap();
        assert_eq!(dense(&u)[0][1], 2.0);
    }

    #[test]
    fn undirected_edges_go_both_ways_and_self_loops_once() {
        let g = UnGraph::<(), ()>::from_edges([(0u32, 1u32), (2, 2)]);
        let a = adjacency_from_petgraph(&g).unwrap();
        assert_eq!(
            dense(&a),
            vec![vec![0.0, 1.0, 0.0], vec![1.0, 0.0, 0.0], vec![0.0, 0.0, 1.0]]
        );
    }

    #[test]
    fn removed_nodes_leave_isolated_rows() {
        let mut g = StableDiGraph::<(), ()>::new();
        let v: Vec<_> = (0..3).map(|_| g.add_node(())).collect();
        g.add_edge(v[0], v[2], ());
        g.remove_node(v[1]);
        let a = adjacency_from_petgraph(&g).unwrap();
        assert_eq!((a.nrows(), a.ncols(), a.nnz()), (3, 3, 1));
        assert_eq!(dense(&a)[0][2], 1.0);
    }

    #[test]
    fn bad_weights_and_empty_graphs_are_typed_errors() {
        let g = DiGraph::<(), f64>::from_edges([(0u32, 1u32, f64::NAN)]);
        let err = weighted_adjacency_from_petgraph(&g, |e| *e.weight()).unwrap_err();
        assert!(err.to_string().contains("0 -> 1"), "{err}");
        let empty = DiGraph::<(), ()>::new();
        assert!(matches!(
            adjacency_from_petgraph(&empty),
            Err(GraphTaskError::InvalidConfig { .. })
        ));
    }
}
