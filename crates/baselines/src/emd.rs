//! Exact optimal transport between `n` sources of mass `1/n` and `k` sinks of mass `1/k` (the
//! problem `ot.emd(1/n, 1/k, M)` that BCOT's default `algorithm='emd'` solves with POT's network
//! simplex), for few sinks.
//!
//! In units of `1/(nk)` every source supplies `k` units and every sink takes `n`, so flows are
//! integers. Sources are added one at a time and their supply is routed along shortest
//! augmenting paths (successive shortest paths, Busacker–Gowen), which keeps the flow optimal for
//! the supplies added so far. A path goes from the new source `i` to a first sink `c₀` (cost
//! `M[i, c₀]`) and then through transfers `c → c'`: some source `j` with flow at `c` moves units
//! to `c'` at cost `M[j, c'] − M[j, c]`; it ends at a sink with spare capacity. The cheapest
//! transfer for every ordered pair of sinks comes from a lazily cleaned heap, and shortest paths
//! over the `k` sinks from Bellman–Ford (transfer costs can be negative; an optimal flow has no
//! negative cycle). Cost: `O(augmentations · k³)` plus heap work; with BCOT's `k ≤ 23` this is
//! milliseconds to a second on the paper's datasets.
use ndarray::{Array2, ArrayView2};
use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

/// A heap entry: transfer cost and the source realising it.
#[derive(Debug, Clone, Copy)]
struct Entry(f64, u32);

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0).then(self.1.cmp(&other.1))
    }
}

struct Transfers {
    k: usize,
    /// `heaps[c * k + d]`: sources `j` (with flow at `c` when pushed) keyed by `M[j,d] − M[j,c]`.
    heaps: Vec<BinaryHeap<Reverse<Entry>>>,
}

impl Transfers {
    fn push_source(&mut self, m: ArrayView2<'_, f64>, j: usize, c: usize) {
        for d in 0..self.k {
            if d != c {
                self.heaps[c * self.k + d].push(Reverse(Entry(m[[j, d]] - m[[j, c]], j as u32)));
            }
        }
    }

    /// The cheapest transfer `c -> d` among sources that still have flow at `c`.
    fn best(&mut self, c: usize, d: usize, flow: &[u64]) -> Option<Entry> {
        let k = self.k;
        let heap = &mut self.heaps[c * k + d];
        while let Some(Reverse(e)) = heap.peek() {
            if flow[e.1 as usize * k + c] > 0 {
                return Some(*e);
            }
            heap.pop();
        }
        None
    }
}

/// The optimal plan of `min ⟨M, P⟩` over `P ≥ 0` with row sums `1/n` and column sums `1/k`
/// (`M` is `n x k`, finite). Exact up to floating-point comparisons of path costs.
pub(crate) fn emd_uniform(m: ArrayView2<'_, f64>) -> Array2<f64> {
    let (n, k) = m.dim();
    let (supply_each, capacity) = (k as u64, n as u64);
    let mut flow = vec![0u64; n * k];
    let mut load = vec![0u64; k];
    let mut transfers = Transfers {
        k,
        heaps: (0..k * k).map(|_| BinaryHeap::new()).collect(),
    };
    let mut dist = vec![0.0f64; k];
    // pred[d] = Some((c, j)): reach d from c by moving source j's units; None: straight from i.
    let mut pred: Vec<Option<(usize, usize)>> = vec![None; k];
    let mut arc: Vec<Option<Entry>> = vec![None; k * k];
    for i in 0..n {
        let mut supply = supply_each;
        while supply > 0 {
            for c in 0..k {
                for d in 0..k {
                    arc[c * k + d] = if c == d { None } else { transfers.best(c, d, &flow) };
                }
            }
            for c in 0..k {
                dist[c] = m[[i, c]];
                pred[c] = None;
            }
            // Bellman-Ford over the sinks, at most k - 1 rounds.
            for _ in 1..k {
                let mut changed = false;
                for c in 0..k {
                    for d in 0..k {
                        if let Some(Entry(cost, j)) = arc[c * k + d] {
                            let cand = dist[c] + cost;
                            // A relative margin keeps rounding from creating zero-cost cycles.
                            if cand < dist[d] - 1e-12 * (1.0 + dist[d].abs()) {
                                dist[d] = cand;
                                pred[d] = Some((c, j as usize));
                                changed = true;
                            }
                        }
                    }
                }
                if !changed {
                    break;
                }
            }
            // The cheapest sink with spare capacity (one exists: total capacity nk >= supply).
            let mut end = usize::MAX;
            for c in 0..k {
                if load[c] < capacity && (end == usize::MAX || dist[c] < dist[end]) {
                    end = c;
                }
            }
            // Walk back along the path; a cycle (only possible through rounding) falls back to
            // the direct arc.
            let mut path = Vec::new();
            let mut cur = end;
            let mut valid = true;
            while let Some((c, j)) = pred[cur] {
                path.push((c, cur, j));
                cur = c;
                if path.len() > k {
                    valid = false;
                    break;
                }
            }
            if !valid {
                path.clear();
                cur = end;
            }
            let first = cur;
            let mut delta = supply.min(capacity - load[end]);
            for &(c, _, j) in &path {
                delta = delta.min(flow[j * k + c]);
            }
            for &(c, d, j) in &path {
                flow[j * k + c] -= delta;
                if flow[j * k + d] == 0 {
                    transfers.push_source(m, j, d);
                }
                flow[j * k + d] += delta;
            }
            if flow[i * k + first] == 0 {
                transfers.push_source(m, i, first);
            }
            flow[i * k + first] += delta;
            load[end] += delta;
            supply -= delta;
        }
    }
    let unit = 1.0 / (n as f64 * k as f64);
    Array2::from_shape_fn((n, k), |(i, c)| flow[i * k + c] as f64 * unit)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bcot::sinkhorn;
    use crate::util::stream;
    use rand::Rng;

    fn cost(p: &Array2<f64>, m: &Array2<f64>) -> f64 {
        (p * m).sum()
    }

    /// No negative cycle among the sinks' transfers: the exact optimality condition of the
    /// transportation problem.
    fn assert_optimal(p: &Array2<f64>, m: &Array2<f64>) {
        let (n, k) = m.dim();
        let mut t = Array2::from_elem((k, k), f64::INFINITY);
        for c in 0..k {
            t[[c, c]] = 0.0;
            for j in 0..n {
                if p[[j, c]] > 0.0 {
                    for d in 0..k {
                        t[[c, d]] = t[[c, d]].min(m[[j, d]] - m[[j, c]]);
                    }
                }
            }
        }
        for via in 0..k {
            for a in 0..k {
                for b in 0..k {
                    let alt = t[[a, via]] + t[[via, b]];
                    if alt < t[[a, b]] {
                        t[[a, b]] = alt;
                    }
                }
            }
        }
        for c in 0..k {
            assert!(t[[c, c]] >= -1e-12, "negative cycle through sink {c}: {}", t[[c, c]]);
        }
    }

    #[test]
    fn plans_are_feasible_optimal_and_below_entropic_plans() {
        for (n, k, seed) in [(7, 3, 1), (30, 4, 2), (50, 7, 3), (12, 12, 4), (5, 1, 5), (64, 23, 6)] {
            let mut rng = stream(seed, 0, 0, 0);
            let m = Array2::from_shape_simple_fn((n, k), || rng.gen::<f64>());
            let p = emd_uniform(m.view());
            for i in 0..n {
                assert!((p.row(i).sum() - 1.0 / n as f64).abs() < 1e-15);
            }
            for c in 0..k {
                assert!((p.column(c).sum() - 1.0 / k as f64).abs() < 1e-14);
            }
            assert_optimal(&p, &m);
            // Entropic plans cost at most eps * log(nk) more (and never less).
            let eps = 1e-2;
            let (a, b) = (vec![1.0 / n as f64; n], vec![1.0 / k as f64; k]);
            let (s, its) = sinkhorn(&a, &b, m.view(), eps, 1_000_000, 1e-13);
            assert!(its < 1_000_000, "Sinkhorn did not converge");
            let gap = cost(&s, &m) - cost(&p, &m);
            assert!(
                gap >= -1e-9 && gap <= eps * ((n * k) as f64).ln() + 1e-9,
                "n={n} k={k}: gap {gap:e}"
            );
        }
    }

    #[test]
    fn balanced_assignment_is_found_when_rows_prefer_distinct_sinks() {
        // Rows 0,1 prefer sink 0, rows 2,3 prefer sink 1: the optimum is that hard assignment.
        let m = ndarray::array![[0.0, 1.0], [0.1, 1.0], [1.0, 0.0], [1.0, 0.2]];
        let p = emd_uniform(m.view());
        let expected = ndarray::array![[0.25, 0.0], [0.25, 0.0], [0.0, 0.25], [0.0, 0.25]];
        assert!((&p - &expected).iter().all(|d| d.abs() < 1e-15), "{p}");
        // All rows prefer sink 0: capacity forces the two cheapest switches.
        let m = ndarray::array![[0.0, 5.0], [0.0, 1.0], [0.0, 2.0], [0.0, 0.5]];
        let p = emd_uniform(m.view());
        assert!(
            p[[1, 1]] == 0.25 && p[[3, 1]] == 0.25 && p[[0, 0]] == 0.25 && p[[2, 0]] == 0.25,
            "{p}"
        );
    }
}
