//! DeepWalk (Perozzi, Al-Rfou & Skiena, KDD 2014): truncated random walks fed to skip-gram.
//!
//! **Walks.** For each of `walks_per_node` rounds the nodes are shuffled and one walk of at most
//! `walk_length` nodes starts from every node; each step moves to a uniformly chosen neighbour
//! under the [`GraphView`]. A walk that reaches a node without usable arcs (a sink of the
//! directed view, or an isolated node) stops there, exactly like DeepWalk's `random_walk`
//! (`else: break`). Self-loops are ignored (DeepWalk's `make_consistent` removes them).
//!
//! **Skip-gram with negative sampling (SGNS)**, word2vec/gensim style: frequent nodes are
//! down-sampled (gensim's `sample`), every position uses a window reduced by a uniform
//! `b ∈ [0, window)`, and every (centre `w`, context `c`) pair takes one SGD step on
//! `log σ(v_c · v'_w) + Σ_{k=1}^{negative} log σ(−v_c · v'_{n_k})` with noise nodes
//! `n_k ~ count^{0.75}`, learning rate decaying linearly from `learning_rate` to
//! `min_learning_rate` over the whole run. Input vectors start at `U(−0.5, 0.5) / dimension`,
//! output vectors at zero; the input vectors `v` are the embedding.
//!
//! **Determinism.** Walks are generated from one random stream per walk. Training proceeds in
//! blocks of `batch_walks` consecutive walks: the walks of a block are trained in parallel, each
//! against the parameters at the start of the block plus its own updates (a private overlay of
//! the rows it touched), and the per-walk updates are then added in walk order. The result is
//! bit-for-bit identical for a fixed seed whatever the number of threads; the only difference
//! from sequential SGD is that walks of the same block do not see each other's updates (the
//! bounded staleness of Hogwild-style word2vec with `batch_walks` workers).
//!
//! Differences from the reference code (phanein/deepwalk with gensim): negative sampling instead
//! of hierarchical softmax (`hs=1`), an exact logistic function instead of gensim's clipped table,
//! and the block-synchronous parallel schedule above.
use crate::error::{check_adjacency, ensure, ensure_nonnegative, ensure_positive, BaselineError, Result};
use crate::util::{neighbour_lists, stream, GraphView};
use ksvd_linalg::CsrMatrix;
use ndarray::Array2;
use rand::seq::SliceRandom;
use rand::Rng;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

const TAG_ORDER: u64 = 1;
const TAG_WALK: u64 = 2;
const TAG_INIT: u64 = 3;
const TAG_TRAIN: u64 = 4;

/// Hyper-parameters of DeepWalk. Defaults: the "usual" DeepWalk setting of the node-embedding
/// literature (walk length 80, 10 walks per node, window 10, 128 dimensions; node2vec's
/// defaults, also those of DeepWalk's paper except its 40-node walks) with word2vec/gensim's SGNS
/// defaults (5 negative samples, learning rate 0.025 → 0.0001, down-sampling 1e-3) and one epoch
/// over the walks (gensim's and word2vec's default is 5 epochs; on Cora and CiteSeer gensim with 5
/// epochs and DeepWalk's own call, `hs = 1` with 5 negatives, moves micro-F1 by at most 0.007,
/// `scripts/deepwalk_check.py`).
///
/// The paper's Table 1 extracts 1000 components; set `dimension = 1000` to match it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DeepWalkParams {
    /// Embedding dimension `d` (default 128).
    pub dimension: usize,
    /// Maximum number of nodes of a walk, start included (default 80).
    pub walk_length: usize,
    /// Walks started from every node (default 10).
    pub walks_per_node: usize,
    /// Skip-gram window: context positions up to `window` steps before and after (default 10).
    pub window: usize,
    /// Negative samples per positive pair (default 5).
    pub negative: usize,
    /// Passes over the walk corpus (default 1).
    pub epochs: usize,
    /// Initial SGD learning rate (default 0.025).
    pub learning_rate: f64,
    /// Final learning rate of the linear decay (default 0.0001).
    pub min_learning_rate: f64,
    /// Down-sampling threshold of frequent nodes, gensim's `sample` (default 1e-3; 0 disables):
    /// a node with corpus frequency `f` is kept with probability `min(1, (sqrt(f / t) + 1) t / f)`,
    /// `t = sample * corpus size`.
    pub subsample: f64,
    /// Arcs the walks follow (default: both directions, DeepWalk's `--undirected true`).
    pub view: GraphView,
    /// Walks trained in parallel against the same parameter snapshot (default 16); see the
    /// module docs. Results do not depend on the thread count, but they do depend on this value.
    pub batch_walks: usize,
}

impl Default for DeepWalkParams {
    fn default() -> Self {
        Self {
            dimension: 128,
            walk_length: 80,
            walks_per_node: 10,
            window: 10,
            negative: 5,
            epochs: 1,
            learning_rate: 0.025,
            min_learning_rate: 0.0001,
            subsample: 1e-3,
            view: GraphView::Undirected,
            batch_walks: 16,
        }
    }
}

impl DeepWalkParams {
    /// Validates the parameters once.
    pub fn check(&self) -> Result<DeepWalk> {
        ensure(self.dimension >= 1, "dimension", self.dimension, "at least 1")?;
        ensure(self.walk_length >= 2, "walk_length", self.walk_length, "at least 2")?;
        ensure(
            self.walks_per_node >= 1,
            "walks_per_node",
            self.walks_per_node,
            "at least 1",
        )?;
        ensure(self.window >= 1, "window", self.window, "at least 1")?;
        ensure(self.epochs >= 1, "epochs", self.epochs, "at least 1")?;
        ensure_positive("learning_rate", self.learning_rate)?;
        ensure(
            self.min_learning_rate.is_finite() && (0.0..=self.learning_rate).contains(&self.min_learning_rate),
            "min_learning_rate",
            self.min_learning_rate,
            "a number in [0, learning_rate]",
        )?;
        ensure_nonnegative("subsample", self.subsample)?;
        ensure(self.batch_walks >= 1, "batch_walks", self.batch_walks, "at least 1")?;
        Ok(DeepWalk { params: self.clone() })
    }
}

/// DeepWalk with validated parameters (from [`DeepWalkParams::check`]).
#[derive(Debug, Clone, PartialEq)]
pub struct DeepWalk {
    params: DeepWalkParams,
}

/// The result of [`DeepWalk::fit`].
#[derive(Debug, Clone, PartialEq)]
pub struct DeepWalkFit {
    /// `n x dimension` node embeddings (skip-gram input vectors), row `i` for node `i`.
    pub embedding: Array2<f64>,
    /// Number of walks in the corpus.
    pub walks: usize,
    /// Number of nodes in the corpus (sum of walk lengths).
    pub tokens: usize,
}

/// Truncated random walks: `walks_per_node` rounds, each over a seeded shuffle of the nodes,
/// one walk of at most `walk_length` nodes per start node. Walk `p` of round `r` is
/// `walks[r * n + p]` and uses its own random stream, so the corpus does not depend on the
/// thread count.
pub fn random_walks(
    adjacency: &CsrMatrix,
    view: GraphView,
    walks_per_node: usize,
    walk_length: usize,
    seed: u64,
) -> Result<Vec<Vec<u32>>> {
    check_adjacency(adjacency)?;
    ensure(walk_length >= 1, "walk_length", walk_length, "at least 1")?;
    ensure(
        adjacency.nrows() <= u32::MAX as usize,
        "nodes",
        adjacency.nrows(),
        "at most 2^32 - 1",
    )?;
    let lists = neighbour_lists(adjacency, view);
    Ok(walks_from_lists(&lists, walks_per_node, walk_length, seed))
}

fn walks_from_lists(lists: &[Vec<u32>], walks_per_node: usize, walk_length: usize, seed: u64) -> Vec<Vec<u32>> {
    let n = lists.len();
    let orders: Vec<Vec<u32>> = (0..walks_per_node)
        .map(|r| {
            let mut order: Vec<u32> = (0..n as u32).collect();
            order.shuffle(&mut stream(seed, TAG_ORDER, r as u64, 0));
            order
        })
        .collect();
    (0..walks_per_node * n)
        .into_par_iter()
        .map(|w| {
            let (r, p) = (w / n, w % n);
            let mut rng = stream(seed, TAG_WALK, r as u64, p as u64);
            let mut walk = Vec::with_capacity(walk_length);
            let mut cur = orders[r][p];
            walk.push(cur);
            while walk.len() < walk_length {
                let nb = &lists[cur as usize];
                if nb.is_empty() {
                    break;
                }
                cur = nb[rng.gen_range(0..nb.len())];
                walk.push(cur);
            }
            walk
        })
        .collect()
}

impl DeepWalk {
    /// The validated parameters.
    pub fn params(&self) -> &DeepWalkParams {
        &self.params
    }

    /// Node embeddings of the graph with adjacency `adjacency` (`A[src, dst] != 0` for an arc;
    /// only the pattern is used), all randomness from `seed`.
    ///
    /// Errors: non-square, empty or negative adjacency; more than `2^32 - 1` nodes.
    pub fn fit(&self, adjacency: &CsrMatrix, seed: u64) -> Result<DeepWalkFit> {
        let p = &self.params;
        let walks = random_walks(adjacency, p.view, p.walks_per_node, p.walk_length, seed)?;
        let tokens = walks.iter().map(Vec::len).sum();
        let embedding = train_sgns(&walks, adjacency.nrows(), p, seed)?;
        Ok(DeepWalkFit {
            embedding,
            walks: walks.len(),
            tokens,
        })
    }
}

/// Walker's alias table (Vose's construction): O(1) draws from a discrete distribution.
struct AliasTable {
    prob: Vec<f64>,
    alias: Vec<u32>,
}

impl AliasTable {
    /// The table of the distribution proportional to `weights` (non-negative, positive sum).
    fn new(weights: &[f64]) -> Self {
        let n = weights.len();
        let total: f64 = weights.iter().sum();
        let mut prob: Vec<f64> = weights.iter().map(|w| w * n as f64 / total).collect();
        let mut alias: Vec<u32> = (0..n as u32).collect();
        let (mut small, mut large): (Vec<usize>, Vec<usize>) = (0..n).partition(|&i| prob[i] < 1.0);
        while let (Some(s), Some(&l)) = (small.pop(), large.last()) {
            alias[s] = l as u32;
            prob[l] -= 1.0 - prob[s];
            if prob[l] < 1.0 {
                large.pop();
                small.push(l);
            }
        }
        // Left-overs are 1 up to rounding.
        for i in small.into_iter().chain(large) {
            prob[i] = 1.0;
        }
        Self { prob, alias }
    }

    fn sample(&self, rng: &mut impl Rng) -> u32 {
        let i = rng.gen_range(0..self.prob.len());
        if rng.gen::<f64>() < self.prob[i] {
            i as u32
        } else {
            self.alias[i]
        }
    }
}

/// Rows of a parameter matrix touched by one walk: full copies (then deltas) of those rows.
struct Overlay {
    slot: Vec<u32>,
    rows: Vec<u32>,
    buf: Vec<f32>,
    d: usize,
}

const ABSENT: u32 = u32::MAX;

impl Overlay {
    fn new(n: usize, d: usize) -> Self {
        Self {
            slot: vec![ABSENT; n],
            rows: Vec::new(),
            buf: Vec::new(),
            d,
        }
    }

    /// Offset in `buf` of `row`, copying it from `global` on first touch.
    fn offset(&mut self, row: u32, global: &[f32]) -> usize {
        let s = self.slot[row as usize];
        if s != ABSENT {
            return s as usize * self.d;
        }
        let k = self.rows.len();
        self.slot[row as usize] = k as u32;
        self.rows.push(row);
        let start = row as usize * self.d;
        self.buf.extend_from_slice(&global[start..start + self.d]);
        k * self.d
    }

    /// Turns the copies into deltas against `global` (which has not changed since the copies).
    fn make_deltas(&mut self, global: &[f32]) {
        let d = self.d;
        for (k, &row) in self.rows.iter().enumerate() {
            let g = &global[row as usize * d..(row as usize + 1) * d];
            for (b, &x) in self.buf[k * d..(k + 1) * d].iter_mut().zip(g) {
                *b -= x;
            }
        }
    }

    /// Adds the deltas to `global` and clears the overlay.
    fn apply(&mut self, global: &mut [f32]) {
        let d = self.d;
        for (k, &row) in self.rows.iter().enumerate() {
            let g = &mut global[row as usize * d..(row as usize + 1) * d];
            for (x, &b) in g.iter_mut().zip(&self.buf[k * d..(k + 1) * d]) {
                *x += b;
            }
            self.slot[row as usize] = ABSENT;
        }
        self.rows.clear();
        self.buf.clear();
    }
}

struct Workspace {
    input: Overlay,
    output: Overlay,
    sentence: Vec<u32>,
    neu1e: Vec<f32>,
}

/// What a walk needs to train: the corpus statistics and the parameter snapshot.
struct Shared<'a> {
    syn0: &'a [f32],
    syn1: &'a [f32],
    keep: &'a [f32],
    noise: &'a AliasTable,
    window: usize,
    negative: usize,
}

fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

/// `a · b` with eight independent partial sums (vectorisable; fixed summation order).
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = ca.remainder().iter().zip(cb.remainder()).map(|(x, y)| x * y).sum();
    let mut acc = [0.0f32; 8];
    for (x, y) in ca.zip(cb) {
        for k in 0..8 {
            acc[k] += x[k] * y[k];
        }
    }
    acc.iter().sum::<f32>() + tail
}

impl Workspace {
    fn train_walk(&mut self, walk: &[u32], lr: f32, sh: &Shared<'_>, rng: &mut impl Rng) {
        self.sentence.clear();
        for &v in walk {
            let k = sh.keep[v as usize];
            if k >= 1.0 || rng.gen::<f32>() < k {
                self.sentence.push(v);
            }
        }
        let len = self.sentence.len();
        for pos in 0..len {
            let b = rng.gen_range(0..sh.window);
            let reach = sh.window - b;
            let start = pos.saturating_sub(reach);
            let end = (pos + reach + 1).min(len);
            for pos2 in start..end {
                if pos2 != pos {
                    let (word, context) = (self.sentence[pos], self.sentence[pos2]);
                    self.train_pair(word, context, lr, sh, rng);
                }
            }
        }
    }

    /// One SGNS step for (centre `word`, context `context`), gensim's `train_sg_pair`: the
    /// context's input vector predicts the centre's output vector against noise.
    fn train_pair(&mut self, word: u32, context: u32, lr: f32, sh: &Shared<'_>, rng: &mut impl Rng) {
        let d = self.input.d;
        let l1_off = self.input.offset(context, sh.syn0);
        self.neu1e.iter_mut().for_each(|x| *x = 0.0);
        for k in 0..=sh.negative {
            let (target, label) = if k == 0 {
                (word, 1.0f32)
            } else {
                let t = sh.noise.sample(rng);
                if t == word {
                    continue;
                }
                (t, 0.0f32)
            };
            let l2_off = self.output.offset(target, sh.syn1);
            let l1 = &self.input.buf[l1_off..l1_off + d];
            let l2 = &mut self.output.buf[l2_off..l2_off + d];
            let f = dot(l1, l2);
            let g = (label - sigmoid(f)) * lr;
            for ((e, y), &x) in self.neu1e.iter_mut().zip(l2.iter_mut()).zip(l1) {
                *e += g * *y;
                *y += g * x;
            }
        }
        let l1 = &mut self.input.buf[l1_off..l1_off + d];
        for (x, &e) in l1.iter_mut().zip(&self.neu1e) {
            *x += e;
        }
    }
}

fn train_sgns(walks: &[Vec<u32>], n: usize, p: &DeepWalkParams, seed: u64) -> Result<Array2<f64>> {
    let d = p.dimension;
    let mut counts = vec![0u64; n];
    walks.iter().flatten().for_each(|&v| counts[v as usize] += 1);
    let total: u64 = counts.iter().sum();
    // Noise distribution count^0.75 (word2vec's unigram table).
    let weights: Vec<f64> = counts.iter().map(|&c| (c as f64).powf(0.75)).collect();
    if weights.iter().sum::<f64>() <= 0.0 {
        return Err(BaselineError::Empty {
            what: "walk corpus",
            rows: walks.len(),
            cols: 0,
            nnz: 0,
        });
    }
    let noise = AliasTable::new(&weights);
    let threshold = p.subsample * total as f64;
    let keep: Vec<f32> = counts
        .iter()
        .map(|&c| {
            if p.subsample == 0.0 || c == 0 {
                1.0
            } else {
                let c = c as f64;
                (((c / threshold).sqrt() + 1.0) * threshold / c).min(1.0) as f32
            }
        })
        .collect();

    // gensim: input vectors uniform in [-0.5, 0.5) / d, output vectors zero.
    let mut syn0: Vec<f32> = (0..n)
        .into_par_iter()
        .flat_map_iter(|i| {
            let mut rng = stream(seed, TAG_INIT, i as u64, 0);
            (0..d)
                .map(move |_| (rng.gen::<f32>() - 0.5) / d as f32)
                .collect::<Vec<_>>()
        })
        .collect();
    let mut syn1: Vec<f32> = vec![0.0; n * d];

    // Tokens before every walk, for the learning-rate schedule.
    let mut before = Vec::with_capacity(walks.len());
    let mut run = 0u64;
    for w in walks {
        before.push(run);
        run += w.len() as u64;
    }
    let schedule_len = (p.epochs as f64) * (total as f64);
    let lr_at = |epoch: usize, w: usize| -> f32 {
        let progress = (epoch as f64 * total as f64 + before[w] as f64) / schedule_len;
        (p.learning_rate - (p.learning_rate - p.min_learning_rate) * progress).max(p.min_learning_rate) as f32
    };

    let b = p.batch_walks.min(walks.len().max(1));
    let mut workspaces: Vec<Workspace> = (0..b)
        .map(|_| Workspace {
            input: Overlay::new(n, d),
            output: Overlay::new(n, d),
            sentence: Vec::with_capacity(p.walk_length),
            neu1e: vec![0.0; d],
        })
        .collect();
    for epoch in 0..p.epochs {
        for block in (0..walks.len()).step_by(b) {
            let len = b.min(walks.len() - block);
            {
                let sh = Shared {
                    syn0: &syn0,
                    syn1: &syn1,
                    keep: &keep,
                    noise: &noise,
                    window: p.window,
                    negative: p.negative,
                };
                workspaces[..len].par_iter_mut().enumerate().for_each(|(s, ws)| {
                    let w = block + s;
                    let mut rng = stream(seed, TAG_TRAIN, epoch as u64, w as u64);
                    ws.train_walk(&walks[w], lr_at(epoch, w), &sh, &mut rng);
                    ws.input.make_deltas(sh.syn0);
                    ws.output.make_deltas(sh.syn1);
                });
            }
            for ws in &mut workspaces[..len] {
                ws.input.apply(&mut syn0);
                ws.output.apply(&mut syn1);
            }
        }
    }
    if syn0.iter().any(|v| !v.is_finite()) {
        return Err(BaselineError::NonFinite {
            what: "DeepWalk training",
            hint: "; lower learning_rate",
        });
    }
    Ok(Array2::from_shape_fn((n, d), |(i, j)| f64::from(syn0[i * d + j])))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cycle(n: usize) -> CsrMatrix {
        CsrMatrix::from_triplets(n, n, (0..n).map(|i| (i, (i + 1) % n, 1.0))).unwrap()
    }

    #[test]
    fn directed_walks_follow_out_arcs_and_stop_at_sinks() {
        // 0 -> 1 -> 2 (sink); 3 isolated.
        let a = CsrMatrix::from_triplets(4, 4, [(0, 1, 1.0), (1, 2, 1.0)]).unwrap();
        let walks = random_walks(&a, GraphView::Directed, 3, 10, 7).unwrap();
        assert_eq!(walks.len(), 12);
        for w in &walks {
            for pair in w.windows(2) {
                assert!(a.get(pair[0] as usize, pair[1] as usize).is_some());
            }
            let last = *w.last().unwrap() as usize;
            assert!(last == 2 || last == 3, "walks end at the sink or the isolated node");
        }
        // Every node starts exactly one walk per round.
        for r in 0..3 {
            let mut starts: Vec<u32> = walks[r * 4..(r + 1) * 4].iter().map(|w| w[0]).collect();
            starts.sort_unstable();
            assert_eq!(starts, vec![0, 1, 2, 3]);
        }
    }

    #[test]
    fn undirected_walks_use_both_directions_and_have_full_length() {
        let a = cycle(5);
        let walks = random_walks(&a, GraphView::Undirected, 2, 30, 1).unwrap();
        let mut backwards = 0;
        for w in &walks {
            assert_eq!(w.len(), 30);
            for pair in w.windows(2) {
                let (x, y) = (pair[0] as usize, pair[1] as usize);
                assert!(y == (x + 1) % 5 || x == (y + 1) % 5);
                backwards += usize::from(x == (y + 1) % 5);
            }
        }
        assert!(backwards > 0);
    }

    #[test]
    fn same_seed_same_embedding_regardless_of_threads() {
        let a = cycle(30);
        let params = DeepWalkParams {
            dimension: 8,
            walk_length: 20,
            walks_per_node: 2,
            window: 3,
            ..Default::default()
        };
        let dw = params.check().unwrap();
        let one = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap()
            .install(|| dw.fit(&a, 5).unwrap());
        let two = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap()
            .install(|| dw.fit(&a, 5).unwrap());
        assert_eq!(one, two);
        let other = dw.fit(&a, 6).unwrap();
        assert_ne!(one.embedding, other.embedding);
    }

    #[test]
    fn alias_table_samples_the_noise_distribution() {
        let weights = [0.0, 1.0, 3.0, 0.5, 0.0, 5.5];
        let table = AliasTable::new(&weights);
        // The table's implied probabilities are exact: P(i) = (prob_i + sum_{alias_j = i} (1 - prob_j)) / n.
        let n = weights.len();
        let mut implied = vec![0.0; n];
        for j in 0..n {
            implied[j] += table.prob[j] / n as f64;
            implied[table.alias[j] as usize] += (1.0 - table.prob[j]) / n as f64;
        }
        for (p, w) in implied.iter().zip(weights) {
            assert!((p - w / 10.0).abs() < 1e-15, "{p} vs {}", w / 10.0);
        }
        let mut rng = stream(1, 0, 0, 0);
        let mut hits = vec![0usize; n];
        for _ in 0..100_000 {
            hits[table.sample(&mut rng) as usize] += 1;
        }
        assert_eq!((hits[0], hits[4]), (0, 0));
        assert!((hits[5] as f64 / 100_000.0 - 0.55).abs() < 0.01);
    }

    #[test]
    fn invalid_parameters_are_rejected() {
        let bad = DeepWalkParams {
            window: 0,
            ..Default::default()
        };
        assert!(matches!(
            bad.check(),
            Err(BaselineError::InvalidParameter { name: "window", .. })
        ));
        let bad = DeepWalkParams {
            min_learning_rate: 1.0,
            ..Default::default()
        };
        assert!(bad.check().is_err());
        let rect = CsrMatrix::from_triplets(2, 3, [(0, 1, 1.0)]).unwrap();
        assert!(matches!(
            DeepWalkParams::default().check().unwrap().fit(&rect, 0),
            Err(BaselineError::NotSquare { .. })
        ));
    }
}
