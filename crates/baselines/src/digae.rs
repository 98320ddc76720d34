//! DiGAE, the directed graph auto-encoder of Kollias, Kalantzis, Idé, Lozano & Abe (AAAI 2022),
//! as in its reference code (gidiko/DiGAE, model `digae`), with hand-derived gradients.
//!
//! **Propagation.** With `Ã = A + I` (pattern of `A`; an existing self-loop counts twice, as
//! PyTorch Geometric's `add_self_loops`), out-degrees `D_out = diag(Ã 1)` and in-degrees
//! `D_in = diag(Ã^T 1)`, a layer that sends messages along the arcs (aggregating at targets) uses
//! `P_→ = D_in^{-α} Ã^T D_out^{-β}` and one that sends them against the arcs (aggregating at
//! sources) uses `P_← = D_out^{-α} Ã D_in^{-β}`: the receiving node's degree is raised to `−α`,
//! the sending node's to `−β` (the code's `DirectedGCNConv`). For `α = β` these are `Â^T` and `Â`
//! with the paper's `Â = D_out^{-α} Ã D_in^{-α}`.
//!
//! **Encoders** (two layers each, separate weights; `X` the node features):
//!
//! ```text
//! S = P_← (relu(P_→ (X W₁ˢ + b₁ˢ)) W₂ˢ + b₂ˢ)        source embeddings (n x d)
//! T = P_→ (relu(P_← (X W₁ᵗ + b₁ᵗ)) W₂ᵗ + b₂ᵗ)        target embeddings (n x d)
//! ```
//!
//! **Decoder and loss.** `σ(s_i · t_j)` scores the arc `i → j`; the loss is the binary cross
//! entropy `mean_{(i,j) ∈ E} −log σ(s_i·t_j) + mean_{(i,j) ∈ N} −log(1 − σ(s_i·t_j))` over the arcs
//! `E` of `A` and a fresh uniform sample `N` of non-arcs (no self-pairs), `|N| = |E without
//! self-loops| + n`, each epoch (PyG's `negative_sampling` after `add_self_loops`). The code adds
//! `1e-15` inside the logarithms; here they are computed exactly as softplus functions.
//!
//! **Training.** Adam (`β₁ = 0.9`, `β₂ = 0.999`, `ε = 1e-8`) with PyTorch's coupled weight decay
//! (`g ← g + λθ`) on all parameters, full-batch, `epochs` steps; weights and biases start as
//! PyTorch's `nn.Linear` (`U(−1/√fan_in, 1/√fan_in)`).
//!
//! **Node features.** The paper's comparison uses only the adjacency matrix, so the default is
//! one-hot features `X = I` (DiGAE's `identity` feature type; then `X W₁` is simply `W₁`, an
//! `n x hidden` table); [`DigaeFeatures::Gaussian`] draws i.i.d. standard normal features
//! (DiGAE's `normal` type) from the seed instead. All arcs train the returned model (the
//! paper's embeddings are unsupervised).
//!
//! **Settings from the graph alone** ([`DigaeSelection`]). DiGAE's authors choose their settings
//! by link prediction on held-out arcs (their grid search, `scripts/citation_grid_search.sh`):
//! with `select`, a fraction of the arcs (and as many sampled non-arcs) is held out
//! ([`ksvd_graph_tasks::ArcSplit`]), every candidate setting is trained on the rest and scored by
//! AUC on the held-out pairs, and the best one is trained on all arcs. No node label is seen.
//! With one-hot features this matters: the coupled weight decay `5e-4` of the reference code
//! shrinks the `n x hidden` first-layer table towards a few directions (on Cora the centred
//! embedding's singular values fall below 1% of the largest after 10), and the validation AUC
//! prefers no decay (on Cora's link-prediction splits the selection gives test AUC 0.79 against
//! 0.72 for the reference's defaults; on CiteSeer it does not help, 0.75 against 0.76).
use crate::error::{check_adjacency, ensure, ensure_nonnegative, ensure_positive, BaselineError, Result};
use crate::util::{stream, stream_seed};
use ksvd_graph_tasks::{auc_ap, link_scores, ArcSplit};
use ksvd_linalg::random::gaussian_matrix;
use ksvd_linalg::{dense, vecmath, CsrMatrix};
use ndarray::{Array2, ArrayView2, Axis, Zip};
use rand::Rng;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

const TAG_INIT: u64 = 11;
const TAG_NEG: u64 = 12;
const TAG_FEAT: u64 = 13;
const TAG_SELECT: u64 = 14;

/// Node features fed to DiGAE's encoders.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DigaeFeatures {
    /// One-hot node features `X = I` (no attributes; DiGAE's `identity` type). Default.
    #[default]
    Identity,
    /// `n x dimension` i.i.d. standard normal features drawn from the seed (DiGAE's `normal`).
    Gaussian {
        /// Number of feature columns.
        dimension: usize,
    },
}

/// Hyper-parameters of DiGAE. Defaults are the argument defaults of the reference `train.py`
/// (hidden 64, dimension 32, `α = 1`, `β = 0`, learning rate 0.01, 200 epochs, weight decay
/// 5e-4, self-loops on); its tuned Cora-ML setting is hidden 32, dimension 16, `α = 0.4`,
/// `β = 0.2`, learning rate 0.005 (`scripts/citation_run.sh`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DigaeParams {
    /// Width of the hidden layer (default 64).
    pub hidden: usize,
    /// Embedding dimension `d` of each of `S` and `T` (default 32).
    pub dimension: usize,
    /// Exponent of the receiving node's degree (default 1.0).
    pub alpha: f64,
    /// Exponent of the sending node's degree (default 0.0).
    pub beta: f64,
    /// Adam learning rate (default 0.01).
    pub learning_rate: f64,
    /// Full-batch training steps (default 200).
    pub epochs: usize,
    /// Coupled L2 weight decay of Adam (default 5e-4).
    pub weight_decay: f64,
    /// Node features (default one-hot).
    pub features: DigaeFeatures,
    /// Add `I` to the adjacency before normalising (default true).
    pub self_loops: bool,
    /// Choose some of the settings above by link prediction on held-out arcs (default: none,
    /// the settings as given).
    pub select: Option<DigaeSelection>,
}

/// Candidate settings of DiGAE chosen by validation AUC on held-out arcs (DiGAE's own protocol;
/// no node labels). Every combination of the non-empty lists is tried, in list order, each
/// varying the base [`DigaeParams`]; ties go to the earlier candidate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DigaeSelection {
    /// Fraction of the arcs held out, with as many sampled non-arcs (default 0.05, the
    /// reference's `prop_val`).
    pub val_fraction: f64,
    /// Candidate `(alpha, beta)` exponent pairs (empty: the base setting's).
    pub exponents: Vec<(f64, f64)>,
    /// Candidate weight decays (empty: the base setting's).
    pub weight_decay: Vec<f64>,
    /// Candidate learning rates (empty: the base setting's).
    pub learning_rate: Vec<f64>,
}

impl Default for DigaeSelection {
    fn default() -> Self {
        Self {
            val_fraction: 0.05,
            exponents: Vec::new(),
            weight_decay: Vec::new(),
            learning_rate: Vec::new(),
        }
    }
}

impl DigaeSelection {
    /// The candidate settings around `base` (without `select`), in the documented order.
    fn candidates(&self, base: &DigaeParams) -> Vec<DigaeParams> {
        let base = DigaeParams {
            select: None,
            ..base.clone()
        };
        let mut out = Vec::new();
        for &(alpha, beta) in &or_base(&self.exponents, (base.alpha, base.beta)) {
            for &weight_decay in &or_base(&self.weight_decay, base.weight_decay) {
                for &learning_rate in &or_base(&self.learning_rate, base.learning_rate) {
                    out.push(DigaeParams {
                        alpha,
                        beta,
                        weight_decay,
                        learning_rate,
                        ..base.clone()
                    });
                }
            }
        }
        out
    }
}

/// The candidates `v`, or the base setting `b` alone when there are none.
fn or_base<T: Copy>(v: &[T], b: T) -> Vec<T> {
    if v.is_empty() {
        vec![b]
    } else {
        v.to_vec()
    }
}

impl Default for DigaeParams {
    fn default() -> Self {
        Self {
            hidden: 64,
            dimension: 32,
            alpha: 1.0,
            beta: 0.0,
            learning_rate: 0.01,
            epochs: 200,
            weight_decay: 5e-4,
            features: DigaeFeatures::Identity,
            self_loops: true,
            select: None,
        }
    }
}

impl DigaeParams {
    /// Validates the parameters once.
    pub fn check(&self) -> Result<Digae> {
        ensure(self.hidden >= 1, "hidden", self.hidden, "at least 1")?;
        ensure(self.dimension >= 1, "dimension", self.dimension, "at least 1")?;
        ensure_nonnegative("alpha", self.alpha)?;
        ensure_nonnegative("beta", self.beta)?;
        ensure_positive("learning_rate", self.learning_rate)?;
        ensure(self.epochs >= 1, "epochs", self.epochs, "at least 1")?;
        ensure_nonnegative("weight_decay", self.weight_decay)?;
        if let DigaeFeatures::Gaussian { dimension } = self.features {
            ensure(dimension >= 1, "features.gaussian.dimension", dimension, "at least 1")?;
        }
        if let Some(sel) = &self.select {
            ensure(
                sel.val_fraction > 0.0 && sel.val_fraction < 1.0,
                "select.val_fraction",
                sel.val_fraction,
                "in (0, 1)",
            )?;
            for c in sel.candidates(self) {
                c.check()?;
            }
        }
        Ok(Digae { params: self.clone() })
    }
}

/// DiGAE with validated parameters (from [`DigaeParams::check`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Digae {
    params: DigaeParams,
}

/// The result of [`Digae::fit`].
#[derive(Debug, Clone, PartialEq)]
pub struct DigaeFit {
    /// `n x d` source embeddings `S` of the trained model.
    pub source: Array2<f64>,
    /// `n x d` target embeddings `T`; `σ(S T^T)` is the decoded adjacency.
    pub target: Array2<f64>,
    /// Training loss (binary cross entropy, without the weight-decay term) before each step.
    pub losses: Vec<f64>,
    /// The settings the embeddings were trained with (the chosen candidate with `select`).
    pub params: DigaeParams,
    /// With `select`: every candidate with its validation AUC and average precision, in order.
    pub validation: Vec<(DigaeParams, f64, f64)>,
}

/// Index of each parameter in the flat list (weights `fan_in x fan_out`, biases `1 x fan_out`).
const W1S: usize = 0;
const B1S: usize = 1;
const W2S: usize = 2;
const B2S: usize = 3;
const W1T: usize = 4;
const B1T: usize = 5;
const W2T: usize = 6;
const B2T: usize = 7;

/// The graph-dependent, parameter-free part of the model.
struct Graph {
    n: usize,
    /// `P_→` and its transpose.
    fwd: CsrMatrix,
    fwd_t: CsrMatrix,
    /// `P_←` and its transpose.
    bwd: CsrMatrix,
    bwd_t: CsrMatrix,
    /// `None` for one-hot features.
    features: Option<Array2<f64>>,
    /// The arcs of `A` (positive pairs) and the pattern for negative sampling.
    arcs: Vec<(u32, u32)>,
    pattern: CsrMatrix,
    negatives: usize,
}

struct Forward {
    z1s: Array2<f64>,
    a1s: Array2<f64>,
    s: Array2<f64>,
    z1t: Array2<f64>,
    a1t: Array2<f64>,
    t: Array2<f64>,
}

fn softplus(x: f64) -> f64 {
    if x > 0.0 {
        x + (-x).exp().ln_1p()
    } else {
        x.exp().ln_1p()
    }
}

fn sigmoid(x: f64) -> f64 {
    if x >= 0.0 {
        1.0 / (1.0 + (-x).exp())
    } else {
        let e = x.exp();
        e / (1.0 + e)
    }
}

fn add_bias(mut a: Array2<f64>, b: &Array2<f64>) -> Array2<f64> {
    a += &b.row(0);
    a
}

fn col_sums(a: &Array2<f64>) -> Array2<f64> {
    a.sum_axis(Axis(0)).insert_axis(Axis(0))
}

/// The rows of `sum_j c_j from[other_j]`, one per key: for every `(key, other, c)` of `pairs`
/// (each `key < rows`), row `key` of the result adds `c` times row `other` of `from`, its pairs in
/// the order of `pairs` (rows in parallel), so every row is the sequential loop's to the bit.
/// The pairs are first moved to their row's group by a stable counting sort that carries
/// `(other, c)` along: the parallel rows then read their pairs contiguously instead of through
/// an index into `pairs` (a cache miss per pair on BlogCatalog's 1.1 million pairs).
fn scatter_rows(
    rows: usize,
    pairs: impl Iterator<Item = (usize, u32, f64)> + Clone,
    from: ArrayView2<'_, f64>,
) -> Array2<f64> {
    let mut offsets = vec![0usize; rows + 1];
    for (k, _, _) in pairs.clone() {
        offsets[k + 1] += 1;
    }
    for r in 0..rows {
        offsets[r + 1] += offsets[r];
    }
    let mut next = offsets.clone();
    let mut grouped = vec![(0u32, 0.0f64); offsets[rows]];
    for (k, other, c) in pairs {
        grouped[next[k]] = (other, c);
        next[k] += 1;
    }
    let mut g = Array2::zeros((rows, from.ncols()));
    g.axis_iter_mut(Axis(0))
        .into_par_iter()
        .enumerate()
        .for_each(|(r, mut row)| {
            for &(other, c) in &grouped[offsets[r]..offsets[r + 1]] {
                vecmath::add_scaled(row.view_mut(), c, from.row(other as usize));
            }
        });
    g
}

impl Graph {
    fn new(adjacency: &CsrMatrix, p: &DigaeParams, seed: u64) -> Result<Self> {
        let n = adjacency.nrows();
        let pattern = adjacency.map_values(|v| if v != 0.0 { 1.0 } else { 0.0 });
        let arcs: Vec<(u32, u32)> = adjacency
            .entries()
            .filter(|&(_, _, v)| v != 0.0)
            .map(|(i, j, _)| (i as u32, j as u32))
            .collect();
        if arcs.is_empty() {
            return Err(BaselineError::Empty {
                what: "adjacency matrix (DiGAE)",
                rows: n,
                cols: n,
                nnz: 0,
            });
        }
        let loops = arcs.iter().filter(|(i, j)| i == j).count();
        let mut triplets: Vec<(usize, usize, f64)> = arcs.iter().map(|&(i, j)| (i as usize, j as usize, 1.0)).collect();
        if p.self_loops {
            triplets.extend((0..n).map(|i| (i, i, 1.0)));
        }
        let tilde = CsrMatrix::from_triplets(n, n, triplets)?;
        let d_out = tilde.row_sums();
        let d_in = tilde.col_sums();
        let pow = |d: f64, e: f64| if e == 0.0 { 1.0 } else { d.powf(-e) };
        let mut fwd_t = Vec::with_capacity(tilde.nnz());
        let mut bwd_t = Vec::with_capacity(tilde.nnz());
        for i in 0..n {
            let (idx, val) = tilde.row(i);
            for (&j, &v) in idx.iter().zip(val) {
                // Arc i -> j. Along the arc: j receives from i. Against it: i receives from j.
                fwd_t.push((i, j, pow(d_in[j], p.alpha) * v * pow(d_out[i], p.beta)));
                bwd_t.push((j, i, pow(d_out[i], p.alpha) * v * pow(d_in[j], p.beta)));
            }
        }
        let fwd_t = CsrMatrix::from_triplets(n, n, fwd_t)?;
        let bwd_t = CsrMatrix::from_triplets(n, n, bwd_t)?;
        let features = match p.features {
            DigaeFeatures::Identity => None,
            DigaeFeatures::Gaussian { dimension } => {
                Some(gaussian_matrix(&mut stream(seed, TAG_FEAT, 0, 0), n, dimension))
            }
        };
        Ok(Self {
            n,
            fwd: fwd_t.transpose(),
            fwd_t,
            bwd: bwd_t.transpose(),
            bwd_t,
            features,
            negatives: arcs.len() - loops + n,
            arcs,
            pattern,
        })
    }

    fn fan_in(&self) -> usize {
        self.features.as_ref().map_or(self.n, |x| x.ncols())
    }

    /// `X W`.
    fn features_times(&self, w: &Array2<f64>) -> Result<Array2<f64>> {
        match &self.features {
            None => Ok(w.clone()),
            Some(x) => Ok(dense::matmul(x.view(), w.view())?),
        }
    }

    /// `X^T G`.
    fn features_t_times(&self, g: &Array2<f64>) -> Result<Array2<f64>> {
        match &self.features {
            None => Ok(g.clone()),
            Some(x) => Ok(dense::matmul(x.t(), g.view())?),
        }
    }

    /// A fresh uniform sample of non-arcs `(i, j)`, `i != j`: rejection sampling from the
    /// epoch's stream, with the candidates drawn in the stream's order and tested for arcs in
    /// parallel, a batch at a time; the accepted ones are taken in order, so the sample is the
    /// one-at-a-time loop's ([`Self::sample_negatives_one_by_one`]) whatever the thread count.
    fn sample_negatives(&self, seed: u64, epoch: usize) -> Vec<(u32, u32)> {
        let mut rng = stream(seed, TAG_NEG, epoch as u64, 0);
        let n = self.n;
        let mut out = Vec::with_capacity(self.negatives);
        // The cap only matters for nearly complete graphs.
        let cap = 100 * self.negatives + 1000;
        let mut attempts = 0usize;
        while out.len() < self.negatives && attempts < cap {
            let short = self.negatives - out.len();
            let batch = (short + short / 16 + 64).min(cap - attempts);
            attempts += batch;
            let candidates: Vec<(usize, usize)> =
                (0..batch).map(|_| (rng.gen_range(0..n), rng.gen_range(0..n))).collect();
            let free: Vec<bool> = candidates
                .par_iter()
                .map(|&(i, j)| i != j && self.pattern.get(i, j).unwrap_or(0.0) == 0.0)
                .collect();
            for (&(i, j), free) in candidates.iter().zip(free) {
                if free {
                    out.push((i as u32, j as u32));
                    if out.len() == self.negatives {
                        break;
                    }
                }
            }
        }
        out
    }

    /// The sampling loop [`Self::sample_negatives`] reproduces: one candidate at a time.
    #[cfg(test)]
    fn sample_negatives_one_by_one(&self, seed: u64, epoch: usize) -> Vec<(u32, u32)> {
        let mut rng = stream(seed, TAG_NEG, epoch as u64, 0);
        let n = self.n;
        let mut out = Vec::with_capacity(self.negatives);
        let mut attempts = 0usize;
        while out.len() < self.negatives && attempts < 100 * self.negatives + 1000 {
            attempts += 1;
            let (i, j) = (rng.gen_range(0..n), rng.gen_range(0..n));
            if i != j && self.pattern.get(i, j).unwrap_or(0.0) == 0.0 {
                out.push((i as u32, j as u32));
            }
        }
        out
    }

    fn forward(&self, params: &[Array2<f64>]) -> Result<Forward> {
        let lin1s = add_bias(self.features_times(&params[W1S])?, &params[B1S]);
        let z1s = self.fwd.mul_dense(lin1s.view())?;
        let a1s = z1s.mapv(|v| v.max(0.0));
        let lin2s = add_bias(dense::matmul(a1s.view(), params[W2S].view())?, &params[B2S]);
        let s = self.bwd.mul_dense(lin2s.view())?;
        let lin1t = add_bias(self.features_times(&params[W1T])?, &params[B1T]);
        let z1t = self.bwd.mul_dense(lin1t.view())?;
        let a1t = z1t.mapv(|v| v.max(0.0));
        let lin2t = add_bias(dense::matmul(a1t.view(), params[W2T].view())?, &params[B2T]);
        let t = self.fwd.mul_dense(lin2t.view())?;
        Ok(Forward {
            z1s,
            a1s,
            s,
            z1t,
            a1t,
            t,
        })
    }

    /// The loss and `(dL/dS, dL/dT)` for positive pairs `pos` and negative pairs `neg`. Each
    /// pair's logit `s_i · t_j`, loss term and gradient weight are computed in parallel; the loss
    /// terms are summed in pair order, and each row of `dL/dS` (`dL/dT`) adds its pairs' terms in
    /// pair order (rows in parallel), so the result is the sequential loop's
    /// ([`Self::loss_and_output_grads_in_order`]) to the bit, whatever the thread count.
    fn loss_and_output_grads(
        s: ArrayView2<'_, f64>,
        t: ArrayView2<'_, f64>,
        pos: &[(u32, u32)],
        neg: &[(u32, u32)],
    ) -> (f64, Array2<f64>, Array2<f64>) {
        // (pair, gradient weight) of every pair, positives first.
        let mut weighted: Vec<((u32, u32), f64)> = Vec::with_capacity(pos.len() + neg.len());
        let mut loss = 0.0;
        for (pairs, label) in [(pos, 1.0), (neg, 0.0)] {
            if pairs.is_empty() {
                continue;
            }
            let w = 1.0 / pairs.len() as f64;
            let terms: Vec<(f64, f64)> = pairs
                .par_iter()
                .map(|&(i, j)| {
                    let z = s.row(i as usize).dot(&t.row(j as usize));
                    let term = if label == 1.0 { softplus(-z) } else { softplus(z) };
                    (term, w * (sigmoid(z) - label))
                })
                .collect();
            let mut part = 0.0;
            for &(term, _) in &terms {
                part += term;
            }
            loss += w * part;
            weighted.extend(pairs.iter().zip(&terms).map(|(&p, &(_, c))| (p, c)));
        }
        // dL/dS row i: sum over its pairs (i, j) of c t_j; dL/dT row j: over (i, j) of c s_i.
        let gs = scatter_rows(s.nrows(), weighted.iter().map(|&((i, j), c)| (i as usize, j, c)), t);
        let gt = scatter_rows(t.nrows(), weighted.iter().map(|&((i, j), c)| (j as usize, i, c)), s);
        (loss, gs, gt)
    }

    /// The sequential loop [`Self::loss_and_output_grads`] reproduces.
    #[cfg(test)]
    fn loss_and_output_grads_in_order(
        s: ArrayView2<'_, f64>,
        t: ArrayView2<'_, f64>,
        pos: &[(u32, u32)],
        neg: &[(u32, u32)],
    ) -> (f64, Array2<f64>, Array2<f64>) {
        let mut gs = Array2::zeros(s.dim());
        let mut gt = Array2::zeros(t.dim());
        let mut loss = 0.0;
        for (pairs, label) in [(pos, 1.0), (neg, 0.0)] {
            if pairs.is_empty() {
                continue;
            }
            let w = 1.0 / pairs.len() as f64;
            let mut part = 0.0;
            for &(i, j) in pairs {
                let (i, j) = (i as usize, j as usize);
                let z = s.row(i).dot(&t.row(j));
                part += if label == 1.0 { softplus(-z) } else { softplus(z) };
                let c = w * (sigmoid(z) - label);
                gs.row_mut(i).scaled_add(c, &t.row(j));
                gt.row_mut(j).scaled_add(c, &s.row(i));
            }
            loss += w * part;
        }
        (loss, gs, gt)
    }

    /// Loss and gradient with respect to every parameter.
    fn loss_and_grad(
        &self,
        params: &[Array2<f64>],
        pos: &[(u32, u32)],
        neg: &[(u32, u32)],
    ) -> Result<(f64, Vec<Array2<f64>>)> {
        let f = self.forward(params)?;
        let (loss, gs, gt) = Self::loss_and_output_grads(f.s.view(), f.t.view(), pos, neg);
        let mut grads = vec![Array2::zeros((0, 0)); 8];
        // Source path: S = P_← (A1s W2s + b2s), A1s = relu(Z1s), Z1s = P_→ (X W1s + b1s).
        let d_lin2s = self.bwd_t.mul_dense(gs.view())?;
        grads[W2S] = dense::matmul(f.a1s.t(), d_lin2s.view())?;
        grads[B2S] = col_sums(&d_lin2s);
        let mut d_z1s = dense::matmul(d_lin2s.view(), params[W2S].t())?;
        Zip::from(&mut d_z1s).and(&f.z1s).for_each(|g, &z| {
            if z <= 0.0 {
                *g = 0.0
            }
        });
        let d_lin1s = self.fwd_t.mul_dense(d_z1s.view())?;
        grads[W1S] = self.features_t_times(&d_lin1s)?;
        grads[B1S] = col_sums(&d_lin1s);
        // Target path: T = P_→ (A1t W2t + b2t), A1t = relu(Z1t), Z1t = P_← (X W1t + b1t).
        let d_lin2t = self.fwd_t.mul_dense(gt.view())?;
        grads[W2T] = dense::matmul(f.a1t.t(), d_lin2t.view())?;
        grads[B2T] = col_sums(&d_lin2t);
        let mut d_z1t = dense::matmul(d_lin2t.view(), params[W2T].t())?;
        Zip::from(&mut d_z1t).and(&f.z1t).for_each(|g, &z| {
            if z <= 0.0 {
                *g = 0.0
            }
        });
        let d_lin1t = self.bwd_t.mul_dense(d_z1t.view())?;
        grads[W1T] = self.features_t_times(&d_lin1t)?;
        grads[B1T] = col_sums(&d_lin1t);
        Ok((loss, grads))
    }
}

/// PyTorch `nn.Linear` initialisation: weight `fan_in x fan_out` and bias `1 x fan_out`, both
/// `U(-1/sqrt(fan_in), 1/sqrt(fan_in))`.
fn linear_init(rng: &mut impl Rng, fan_in: usize, fan_out: usize) -> (Array2<f64>, Array2<f64>) {
    let bound = 1.0 / (fan_in as f64).sqrt();
    let w = Array2::from_shape_simple_fn((fan_in, fan_out), || rng.gen_range(-bound..bound));
    let b = Array2::from_shape_simple_fn((1, fan_out), || rng.gen_range(-bound..bound));
    (w, b)
}

fn init_params(fan_in: usize, p: &DigaeParams, seed: u64) -> Vec<Array2<f64>> {
    let mut rng = stream(seed, TAG_INIT, 0, 0);
    let (w1s, b1s) = linear_init(&mut rng, fan_in, p.hidden);
    let (w2s, b2s) = linear_init(&mut rng, p.hidden, p.dimension);
    let (w1t, b1t) = linear_init(&mut rng, fan_in, p.hidden);
    let (w2t, b2t) = linear_init(&mut rng, p.hidden, p.dimension);
    vec![w1s, b1s, w2s, b2s, w1t, b1t, w2t, b2t]
}

impl Digae {
    /// The validated parameters.
    pub fn params(&self) -> &DigaeParams {
        &self.params
    }

    /// Trains DiGAE on the graph with adjacency `adjacency` (`A[src, dst] != 0` for an arc; only
    /// the pattern is used) and returns the source and target embeddings; all randomness
    /// (initialisation, features, negative samples) from `seed`.
    ///
    /// Errors: non-square, empty or negative adjacency, a graph without arcs, a diverging run.
    pub fn fit(&self, adjacency: &CsrMatrix, seed: u64) -> Result<DigaeFit> {
        check_adjacency(adjacency)?;
        let Some(sel) = &self.params.select else {
            return train(&self.params, adjacency, seed);
        };
        let split = ArcSplit::draw(adjacency, sel.val_fraction, 0.0, stream_seed(seed, TAG_SELECT, 0, 0))?;
        let (pos, neg) = &split.val;
        // The candidates train side by side: a fit is the same whatever runs beside it (its
        // values do not depend on the threads), and the parts of an epoch that run on one core
        // (drawing the negatives, grouping the pairs, Adam) leave the other core to the next
        // candidate (selection on CiteSeer 19-20 s -> 12 s, BlogCatalog at 30 epochs 75 -> 64 s,
        // two threads). Results come back in the candidates' order, and so does the first error.
        let scored: Vec<Result<(DigaeParams, f64, f64)>> = sel
            .candidates(&self.params)
            .into_par_iter()
            .map(|candidate| {
                let fit = train(&candidate, &split.train, seed)?;
                let score = |pairs: &[(usize, usize)]| link_scores(fit.source.view(), fit.target.view(), pairs);
                let (auc, ap) = auc_ap(&score(pos)?, &score(neg)?)?;
                Ok((candidate, auc, ap))
            })
            .collect();
        let validation = scored.into_iter().collect::<Result<Vec<_>>>()?;
        let best = first_best(validation.iter().map(|c| c.1));
        let mut fit = train(&validation[best].0, adjacency, seed)?;
        fit.validation = validation;
        Ok(fit)
    }
}

/// Index of the first largest value (ties go to the earlier candidate; NaN never wins unless
/// every value is NaN, then 0).
fn first_best(values: impl Iterator<Item = f64>) -> usize {
    let mut best: Option<(usize, f64)> = None;
    for (k, v) in values.enumerate() {
        if !v.is_nan() && best.is_none_or(|(_, b)| v > b) {
            best = Some((k, v));
        }
    }
    best.map_or(0, |(k, _)| k)
}

/// Trains DiGAE with the settings `p` (no selection) on all arcs of `adjacency`.
fn train(p: &DigaeParams, adjacency: &CsrMatrix, seed: u64) -> Result<DigaeFit> {
    let g = Graph::new(adjacency, p, seed)?;
    let mut params = init_params(g.fan_in(), p, seed);
    let (b1, b2, eps) = (0.9f64, 0.999f64, 1e-8);
    let mut m: Vec<Array2<f64>> = params.iter().map(|a| Array2::zeros(a.dim())).collect();
    let mut v: Vec<Array2<f64>> = m.clone();
    let mut losses = Vec::with_capacity(p.epochs);
    for epoch in 0..p.epochs {
        let neg = g.sample_negatives(seed, epoch);
        let (loss, grads) = g.loss_and_grad(&params, &g.arcs, &neg)?;
        if !loss.is_finite() {
            return Err(BaselineError::NonFinite {
                what: "DiGAE training",
                hint: "; lower learning_rate",
            });
        }
        losses.push(loss);
        let step = (epoch + 1) as i32;
        let (c1, c2) = (1.0 - b1.powi(step), 1.0 - b2.powi(step));
        for (((theta, grad), m), v) in params.iter_mut().zip(grads).zip(&mut m).zip(&mut v) {
            Zip::from(theta).and(&grad).and(m).and(v).for_each(|th, &gr, mk, vk| {
                let gr = gr + p.weight_decay * *th;
                *mk = b1 * *mk + (1.0 - b1) * gr;
                *vk = b2 * *vk + (1.0 - b2) * gr * gr;
                *th -= p.learning_rate * (*mk / c1) / ((*vk / c2).sqrt() + eps);
            });
        }
    }
    let f = g.forward(&params)?;
    if f.s.iter().chain(f.t.iter()).any(|x| !x.is_finite()) {
        return Err(BaselineError::NonFinite {
            what: "DiGAE embeddings",
            hint: "; lower learning_rate",
        });
    }
    Ok(DigaeFit {
        source: f.s,
        target: f.t,
        losses,
        params: p.clone(),
        validation: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small_graph() -> CsrMatrix {
        // Two directed 4-cycles with chords, a reciprocal pair, a self-loop and one bridge.
        let arcs = [
            (0, 1),
            (1, 2),
            (2, 3),
            (3, 0),
            (0, 2),
            (4, 5),
            (5, 6),
            (6, 7),
            (7, 4),
            (5, 4),
            (3, 4),
            (6, 6),
        ];
        CsrMatrix::from_triplets(8, 8, arcs.iter().map(|&(i, j)| (i, j, 1.0))).unwrap()
    }

    /// Central finite differences of the loss agree with the hand-derived gradient for every
    /// parameter entry, for one-hot and Gaussian features and asymmetric exponents.
    #[test]
    fn gradients_pass_a_finite_difference_check() {
        for features in [DigaeFeatures::Identity, DigaeFeatures::Gaussian { dimension: 5 }] {
            let p = DigaeParams {
                hidden: 4,
                dimension: 3,
                alpha: 0.7,
                beta: 0.3,
                features,
                ..Default::default()
            };
            let g = Graph::new(&small_graph(), &p, 3).unwrap();
            let params = init_params(g.fan_in(), &p, 3);
            let neg = g.sample_negatives(3, 0);
            let (_, grads) = g.loss_and_grad(&params, &g.arcs, &neg).unwrap();
            let h = 1e-5;
            let mut worst = 0.0f64;
            for k in 0..params.len() {
                for idx in 0..params[k].len() {
                    let (r, c) = (idx / params[k].ncols(), idx % params[k].ncols());
                    let mut plus = params.clone();
                    plus[k][[r, c]] += h;
                    let mut minus = params.clone();
                    minus[k][[r, c]] -= h;
                    let lp = g.loss_and_grad(&plus, &g.arcs, &neg).unwrap().0;
                    let lm = g.loss_and_grad(&minus, &g.arcs, &neg).unwrap().0;
                    let fd = (lp - lm) / (2.0 * h);
                    let an = grads[k][[r, c]];
                    // Central differences are accurate to O(h^2) plus rounding eps*|L|/h.
                    let err = (fd - an).abs() / (1e-3 + an.abs().max(fd.abs()));
                    worst = worst.max(err);
                }
            }
            assert!(worst < 1e-5, "{features:?}: worst relative gradient error {worst:e}");
        }
    }

    /// The parallel loss and output gradients are the sequential loop's to the bit, with one
    /// thread or two: pairs repeat rows on both sides (hubs), every row has zero to many pairs,
    /// and one list may be empty.
    #[test]
    fn parallel_loss_and_gradients_equal_the_sequential_loop_bit_for_bit() {
        let (n, d) = (37, 5);
        let mut rng = stream(11, TAG_NEG, 0, 0);
        let s = gaussian_matrix(&mut rng, n, d);
        let t = gaussian_matrix(&mut rng, n, d);
        // Skewed pairs: a third of them touch node 0 (a hub), node n - 1 appears in none.
        let draw = |rng: &mut _, k: usize| -> Vec<(u32, u32)> {
            (0..k)
                .map(|q| {
                    let i = if q % 3 == 0 { 0 } else { Rng::gen_range(rng, 0..n - 1) };
                    (i as u32, Rng::gen_range(rng, 0..n - 1) as u32)
                })
                .collect()
        };
        let (pos, neg) = (draw(&mut rng, 400), draw(&mut rng, 530));
        for (p, q) in [(&pos[..], &neg[..]), (&pos[..], &[][..]), (&[][..], &neg[..])] {
            let want = Graph::loss_and_output_grads_in_order(s.view(), t.view(), p, q);
            for threads in [1, 2] {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                let got = pool.install(|| Graph::loss_and_output_grads(s.view(), t.view(), p, q));
                assert_eq!(got.0.to_bits(), want.0.to_bits(), "loss, {threads} threads");
                let bits = |a: &Array2<f64>| a.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&got.1), bits(&want.1), "dL/dS, {threads} threads");
                assert_eq!(bits(&got.2), bits(&want.2), "dL/dT, {threads} threads");
            }
        }
    }

    /// The batched, parallel negative sampling draws the one-at-a-time loop's sample, on a
    /// sparse graph and on a nearly complete one (where the attempt cap ends the sampling).
    #[test]
    fn batched_negative_sampling_equals_the_one_at_a_time_loop() {
        // One non-arc among 144 pairs: the cap (100 attempts per wanted pair) ends the sampling.
        let n = 12;
        let nearly_complete: Vec<(usize, usize, f64)> = (0..n)
            .flat_map(|i| (0..n).map(move |j| (i, j, 1.0)))
            .filter(|&(i, j, _)| !(i == 2 && j == 5))
            .collect();
        let dense = CsrMatrix::from_triplets(n, n, nearly_complete).unwrap();
        // Half the pairs are arcs: the first batch falls short, a later one fills the sample.
        let half: Vec<(usize, usize, f64)> = (0..n)
            .flat_map(|i| (0..n).map(move |j| (i, j, 1.0)))
            .filter(|&(i, j, _)| (i + 2 * j) % 4 < 2)
            .collect();
        let half = CsrMatrix::from_triplets(n, n, half).unwrap();
        for graph in [small_graph(), dense, half] {
            let g = Graph::new(&graph, &DigaeParams::default(), 0).unwrap();
            for (seed, epoch) in [(0, 0), (3, 1), (7, 19)] {
                let want = g.sample_negatives_one_by_one(seed, epoch);
                assert_eq!(want.len() < g.negatives, graph.nnz() == n * n - 1);
                if graph.nnz() == n * n / 2 {
                    // The first batch's candidates (the stream's first draws) fall short.
                    let first_batch = g.negatives + g.negatives / 16 + 64;
                    let mut rng = stream(seed, TAG_NEG, epoch as u64, 0);
                    let free = (0..first_batch)
                        .filter(|_| {
                            let (i, j) = (rng.gen_range(0..n), rng.gen_range(0..n));
                            i != j && graph.get(i, j).is_none()
                        })
                        .count();
                    assert!(
                        free < g.negatives && want.len() == g.negatives,
                        "{free} of {}",
                        g.negatives
                    );
                }
                for threads in [1, 2] {
                    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                    assert_eq!(pool.install(|| g.sample_negatives(seed, epoch)), want);
                }
            }
        }
    }

    #[test]
    fn training_is_deterministic_in_the_seed_whatever_the_thread_count() {
        let p = DigaeParams {
            hidden: 8,
            dimension: 4,
            epochs: 5,
            ..Default::default()
        };
        let digae = p.check().unwrap();
        let run = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| digae.fit(&small_graph(), 4).unwrap())
        };
        let one = run(1);
        assert_eq!(one, run(2));
        assert_eq!(one.losses.len(), 5);
        assert_ne!(one, digae.fit(&small_graph(), 5).unwrap());
    }

    /// The selection's ranking: the first best validation AUC, never a NaN.
    #[test]
    fn ties_go_to_the_earlier_candidate() {
        assert_eq!(first_best([0.7, 0.9, 0.9, 0.8].into_iter()), 1);
        assert_eq!(first_best([f64::NAN, 0.6, 0.6].into_iter()), 1);
        assert_eq!(first_best([0.5].into_iter()), 0);
        assert_eq!(first_best([f64::NAN, f64::NAN].into_iter()), 0);
    }

    /// With `select`, every candidate is scored on the same held-out arcs, the returned model is
    /// the best one trained on all arcs, and a candidate list of one is that setting's plain fit.
    #[test]
    fn selection_keeps_the_best_validation_auc() {
        // Two dense directed communities with a few bridges: enough arcs to hold some out.
        let mut arcs = Vec::new();
        for c in 0..2 {
            for i in 0..12 {
                for j in 0..12 {
                    if i != j && (i * 7 + j * 3 + c) % 4 == 0 {
                        arcs.push((12 * c + i, 12 * c + j, 1.0));
                    }
                }
            }
        }
        arcs.extend([(0, 12, 1.0), (13, 1, 1.0)]);
        let a = CsrMatrix::from_triplets(24, 24, arcs).unwrap();
        let base = DigaeParams {
            hidden: 8,
            dimension: 4,
            epochs: 30,
            ..Default::default()
        };
        let sel = DigaeSelection {
            val_fraction: 0.1,
            exponents: vec![(1.0, 0.0), (0.5, 0.5)],
            weight_decay: vec![5e-4, 0.0],
            ..Default::default()
        };
        let p = DigaeParams {
            select: Some(sel),
            ..base.clone()
        };
        let fit = p.check().unwrap().fit(&a, 3).unwrap();
        assert_eq!(fit.validation.len(), 4);
        let best = fit.validation.iter().map(|c| c.1).fold(f64::MIN, f64::max);
        let chosen = fit.validation.iter().find(|c| c.1 == best).unwrap();
        assert_eq!(fit.params, chosen.0);
        assert!(fit
            .validation
            .iter()
            .all(|c| (0.0..=1.0).contains(&c.1) && c.0.select.is_none()));
        // The candidates, trained side by side, score what each scores trained alone, in order.
        let split = ArcSplit::draw(&a, 0.1, 0.0, stream_seed(3, TAG_SELECT, 0, 0)).unwrap();
        for (c, auc, ap) in &fit.validation {
            let alone = train(c, &split.train, 3).unwrap();
            let score =
                |pairs: &[(usize, usize)]| link_scores(alone.source.view(), alone.target.view(), pairs).unwrap();
            assert_eq!(auc_ap(&score(&split.val.0), &score(&split.val.1)).unwrap(), (*auc, *ap));
        }
        let order: Vec<_> = p.select.as_ref().unwrap().candidates(&base);
        assert_eq!(fit.validation.iter().map(|c| c.0.clone()).collect::<Vec<_>>(), order);
        let plain = fit.params.check().unwrap().fit(&a, 3).unwrap();
        assert_eq!((&plain.source, &plain.target), (&fit.source, &fit.target));
        assert_eq!(fit, p.check().unwrap().fit(&a, 3).unwrap());
        // A bad candidate or fraction is refused at check time.
        let bad = DigaeParams {
            select: Some(DigaeSelection {
                learning_rate: vec![-1.0],
                ..Default::default()
            }),
            ..base.clone()
        };
        assert!(matches!(bad.check(), Err(BaselineError::InvalidParameter { .. })));
        let bad = DigaeParams {
            select: Some(DigaeSelection {
                val_fraction: 1.0,
                ..Default::default()
            }),
            ..base
        };
        assert!(bad.check().is_err());
    }

    #[test]
    fn propagation_matrices_follow_the_degree_convention() {
        let a = small_graph();
        let p = DigaeParams {
            alpha: 0.5,
            beta: 0.25,
            ..Default::default()
        };
        let g = Graph::new(&a, &p, 0).unwrap();
        let tilde = &a.to_dense() + &Array2::<f64>::eye(8);
        let d_out = tilde.sum_axis(Axis(1));
        let d_in = tilde.sum_axis(Axis(0));
        let (fwd, bwd) = (g.fwd.to_dense(), g.bwd.to_dense());
        for i in 0..8 {
            for j in 0..8 {
                let f = d_in[i].powf(-0.5) * tilde[[j, i]] * d_out[j].powf(-0.25);
                let b = d_out[i].powf(-0.5) * tilde[[i, j]] * d_in[j].powf(-0.25);
                assert!((fwd[[i, j]] - f).abs() < 1e-15 && (bwd[[i, j]] - b).abs() < 1e-15);
            }
        }
        assert_eq!(tilde[[6, 6]], 2.0, "an existing self-loop counts twice, as in PyG");
        assert_eq!(g.negatives, 11 + 8);
        for (i, j) in g.sample_negatives(0, 1) {
            assert!(i != j && a.get(i as usize, j as usize) == Some(0.0));
        }
    }
}
