//! Small shared helpers: derived random streams and adjacency views.
use ksvd_linalg::random::{rng_from_seed, SeededRng};
use ksvd_linalg::CsrMatrix;
use serde::{Deserialize, Serialize};

/// SplitMix64 finaliser: a bijective mixer of 64-bit words.
pub(crate) fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The seed of an independent random stream identified by `(seed, tag, a, b)`.
///
/// Every parallel piece of work draws from its own stream, so results do not depend on which
/// thread runs it.
pub(crate) fn stream_seed(seed: u64, tag: u64, a: u64, b: u64) -> u64 {
    splitmix(splitmix(splitmix(seed ^ splitmix(tag)) ^ a) ^ b.wrapping_mul(0xD6E8_FEB8_6659_FD93))
}

/// A generator for the stream `(seed, tag, a, b)`.
pub(crate) fn stream(seed: u64, tag: u64, a: u64, b: u64) -> SeededRng {
    rng_from_seed(stream_seed(seed, tag, a, b))
}

/// Which arcs a random walk may follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GraphView {
    /// Follow out-arcs only (`A[i, j] != 0` lets a walk step `i -> j`). A walk that reaches a
    /// node without out-arcs (a sink) stops there, as in DeepWalk's `random_walk`.
    Directed,
    /// Follow arcs in both directions (the symmetrisation `A + A^T`); DeepWalk's default
    /// (`--undirected true`).
    #[default]
    Undirected,
}

/// Neighbour lists of every node under a view, self-loops dropped (DeepWalk's
/// `make_consistent` removes them), each list sorted and duplicate-free.
pub(crate) fn neighbour_lists(adjacency: &CsrMatrix, view: GraphView) -> Vec<Vec<u32>> {
    let n = adjacency.nrows();
    let mut lists: Vec<Vec<u32>> = vec![Vec::new(); n];
    for (i, list) in lists.iter_mut().enumerate() {
        let (idx, val) = adjacency.row(i);
        list.extend(
            idx.iter()
                .zip(val)
                .filter(|&(&j, &v)| j != i && v != 0.0)
                .map(|(&j, _)| j as u32),
        );
    }
    if view == GraphView::Undirected {
        for i in 0..n {
            let (idx, val) = adjacency.row(i);
            for (&j, &v) in idx.iter().zip(val) {
                if j != i && v != 0.0 {
                    lists[j].push(i as u32);
                }
            }
        }
        for list in &mut lists {
            list.sort_unstable();
            list.dedup();
        }
    }
    lists
}
