// A directed planted-partition graph for tests: the one generator that crates/graph-tasks/tests
// and xtask's graph runner tests `include!` (fully qualified paths, so it adds no imports).

/// A directed planted partition: `blocks` communities of `size` nodes, arc probability `p_in`
/// inside a community and `p_out` across (seeded); node `i` is in class `i / size`.
#[allow(clippy::unwrap_used)] // A test fixture: its triplets are valid by construction.
fn planted(blocks: usize, size: usize, p_in: f64, p_out: f64, seed: u64) -> ksvd_datasets::Graph {
    use rand::Rng as _;
    let n = blocks * size;
    let mut rng = ksvd_linalg::random::rng_from_seed(seed);
    let mut t = vec![];
    for i in 0..n {
        for j in 0..n {
            let p = if i / size == j / size { p_in } else { p_out };
            if i != j && rng.gen::<f64>() < p {
                t.push((i, j, 1.0));
            }
        }
    }
    ksvd_datasets::Graph {
        name: "planted".into(),
        adjacency: ksvd_linalg::CsrMatrix::from_triplets(n, n, t).unwrap(),
        node_ids: (0..n).map(|i| i.to_string()).collect(),
        labels: ksvd_datasets::Labels::Single {
            classes: (0..n).map(|i| Some(i / size)).collect(),
            class_names: (0..blocks).map(|b| b.to_string()).collect(),
        },
        directed: true,
        duplicate_records: 0,
    }
}
