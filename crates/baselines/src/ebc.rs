//! EBC's co-clustering step: information-theoretic co-clustering (ITCC; Dhillon, Mallela &
//! Modha, KDD 2003) as implemented by Percha & Altman's EBC code (blpercha/ebc, `ebc.py`,
//! `EBC(matrix, n_clusters, max_iterations, jitter_max, objective_tolerance).run()`).
//!
//! The non-negative data matrix is normalised to a joint distribution `p(x, y)` (rows `x`,
//! columns `y`). Given row clusters `x̂ = C_X(x)` and column clusters `ŷ = C_Y(y)`, the
//! approximation is
//!
//! ```text
//! q(x, y) = p(x̂, ŷ) · p(x)/p(x̂) · p(y)/p(ŷ),     p(x̂, ŷ) = Σ_{x ∈ x̂, y ∈ ŷ} p(x, y),
//! ```
//!
//! and ITCC minimises the loss in mutual information `D(p ‖ q) = Σ_{p(x,y) > 0} p log(p/q)` by
//! alternating: every row moves to `argmin_x̂ Σ_{y: p(x,y) > 0} p(x,y) log(p(x,y) / q(y | x̂) p(x))`
//! with `q(y | x̂) = p(x̂, ŷ(y))/p(x̂) · p(y)/p(ŷ(y))` (a row cluster with `p(x̂, ŷ(y)) = 0` for one of
//! the row's non-zeros costs `1e10`, as in the code); then the distributions are recomputed and
//! the columns move likewise. Scores get a uniform jitter in `[0, jitter)` to break ties; a
//! cluster that ends up empty receives a random member (the code's
//! `ensure_correct_number_clusters`). The loop stops when `D(p ‖ q)` changed by less than
//! `tolerance` after a full row+column sweep, or after `max_iterations` sweeps.
//!
//! **Initialisation** (the vectorised `ebc2d.py`): `k` distinct random rows are centres and
//! every row joins the centre with the largest projection `⟨p(x, ·), c⟩ / ‖c‖` (jittered); the
//! same for the columns. (`ebc.py` normalises by norms restricted to overlapping entries, an
//! implementation detail that `ebc2d.py` does not share.) Each restart draws its own centres;
//! the run with the smallest `D(p ‖ q)` is kept.
//!
//! The paper runs the official code with the objective threshold `1e-4` (the `tolerance`
//! default here; the code's own default is 0.01) and the code's default of 10 iterations.
use crate::bcot::Biclusters;
use crate::error::{check_nonnegative, ensure, ensure_nonnegative, BaselineError, Result};
use crate::util::stream;
use ksvd_linalg::random::sample_indices;
use ksvd_linalg::CsrMatrix;
use ndarray::Array2;
use rand::Rng;
use serde::{Deserialize, Serialize};

const TAG_RESTART: u64 = 31;
const PENALTY: f64 = 1e10;

/// Hyper-parameters of EBC's co-clustering (ITCC).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EbcParams {
    /// Maximum row+column sweeps per run (default 10, the code's `max_iterations`).
    pub max_iterations: usize,
    /// Stop when `D(p ‖ q)` changes by less than this between sweeps (default 1e-4, the paper's
    /// threshold).
    pub tolerance: f64,
    /// Upper bound of the tie-breaking jitter added to every score (default 1e-10, the code's).
    pub jitter: f64,
    /// Independent runs from different random centres; the smallest `D(p ‖ q)` wins (default 1).
    pub restarts: usize,
}

impl Default for EbcParams {
    fn default() -> Self {
        Self {
            max_iterations: 10,
            tolerance: 1e-4,
            jitter: 1e-10,
            restarts: 1,
        }
    }
}

impl EbcParams {
    /// Validates the parameters once.
    pub fn check(&self) -> Result<Ebc> {
        ensure(
            self.max_iterations >= 1,
            "max_iterations",
            self.max_iterations,
            "at least 1",
        )?;
        ensure_nonnegative("tolerance", self.tolerance)?;
        ensure_nonnegative("jitter", self.jitter)?;
        ensure(self.restarts >= 1, "restarts", self.restarts, "at least 1")?;
        Ok(Ebc { params: self.clone() })
    }
}

/// EBC/ITCC with validated parameters (from [`EbcParams::check`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Ebc {
    params: EbcParams,
}

/// The result of [`Ebc::fit`].
#[derive(Debug, Clone, PartialEq)]
pub struct EbcFit {
    /// Cluster of every row, in `0..k_rows`.
    pub row_labels: Vec<usize>,
    /// Cluster of every column, in `0..k_cols`.
    pub col_labels: Vec<usize>,
    /// Final `D(p ‖ q)` (nats) of the kept run.
    pub objective: f64,
    /// Sweeps performed by the kept run.
    pub iterations: usize,
    /// Index of the kept restart.
    pub restart: usize,
}

/// `p(x, y)` in both orientations with the marginals.
struct Joint {
    rows: CsrMatrix,
    cols: CsrMatrix,
    p_row: Vec<f64>,
    p_col: Vec<f64>,
}

impl Joint {
    /// The joint `rows` (documents x terms, summing to 1) with its transpose and marginals.
    fn new(rows: CsrMatrix) -> Self {
        Joint {
            p_row: rows.row_sums(),
            p_col: rows.col_sums(),
            cols: rows.transpose(),
            rows,
        }
    }
}

/// Cluster-level distributions for given labels.
struct Clustered {
    /// `k_rows x k_cols` joint `p(x̂, ŷ)`.
    q: Array2<f64>,
    q_row: Vec<f64>,
    q_col: Vec<f64>,
}

fn clustered(j: &Joint, rl: &[usize], cl: &[usize], kr: usize, kc: usize) -> Clustered {
    let mut q = Array2::zeros((kr, kc));
    for x in 0..j.rows.nrows() {
        let (idx, val) = j.rows.row(x);
        for (&y, &v) in idx.iter().zip(val) {
            q[[rl[x], cl[y]]] += v;
        }
    }
    let q_row = (0..kr).map(|a| q.row(a).sum()).collect();
    let q_col = (0..kc).map(|b| q.column(b).sum()).collect();
    Clustered { q, q_row, q_col }
}

/// `D(p ‖ q)` over the non-zeros of `p`.
fn objective(j: &Joint, c: &Clustered, rl: &[usize], cl: &[usize]) -> f64 {
    let mut total = 0.0;
    for x in 0..j.rows.nrows() {
        let (idx, val) = j.rows.row(x);
        for (&y, &p) in idx.iter().zip(val) {
            let (a, b) = (rl[x], cl[y]);
            let q = c.q[[a, b]] * j.p_row[x] / c.q_row[a] * j.p_col[y] / c.q_col[b];
            total += p * (p / q).ln();
        }
    }
    total
}

/// New clusters of the rows of `m` (`m` is `p` or `p^T`), given the other axis' labels `other`:
/// `score[x, a] = Σ_{y} m(x,y) log(m(x,y) / (q(a, ŷ(y)) / q_this(a) · p_other(y) / q_other(ŷ(y))))`.
#[allow(clippy::too_many_arguments)]
fn reassign(
    m: &CsrMatrix,
    q: &Array2<f64>,
    q_this: &[f64],
    p_other: &[f64],
    q_other: &[f64],
    other: &[usize],
    jitter: f64,
    rng: &mut impl Rng,
) -> Vec<usize> {
    let k = q.nrows();
    // log(q(a, b) / q_this(a)) with -inf for empty blocks.
    let log_cond = Array2::from_shape_fn(q.dim(), |(a, b)| {
        if q[[a, b]] > 0.0 && q_this[a] > 0.0 {
            (q[[a, b]] / q_this[a]).ln()
        } else {
            f64::NEG_INFINITY
        }
    });
    let mut agg = vec![0.0; q.ncols()];
    let mut labels = Vec::with_capacity(m.nrows());
    for x in 0..m.nrows() {
        let (idx, val) = m.row(x);
        // Part of the score that does not depend on the cluster.
        let mut base = 0.0;
        agg.iter_mut().for_each(|v| *v = 0.0);
        for (&y, &p) in idx.iter().zip(val) {
            let b = other[y];
            base += p * (p / (p_other[y] / q_other[b])).ln();
            agg[b] += p;
        }
        let mut best = (f64::INFINITY, 0usize);
        for a in 0..k {
            let mut score = base;
            let mut penalised = false;
            for (b, &mass) in agg.iter().enumerate() {
                if mass > 0.0 {
                    let l = log_cond[[a, b]];
                    if l == f64::NEG_INFINITY {
                        penalised = true;
                    } else {
                        score -= mass * l;
                    }
                }
            }
            if penalised {
                score += PENALTY;
            }
            score += jitter * rng.gen::<f64>();
            if score < best.0 {
                best = (score, a);
            }
        }
        labels.push(best.1);
    }
    labels
}

/// Gives every empty cluster one random member (repeatedly, as the code's
/// `ensure_correct_number_clusters`).
fn ensure_all_clusters(labels: &mut [usize], k: usize, rng: &mut impl Rng) {
    loop {
        let mut present = vec![false; k];
        labels.iter().for_each(|&l| present[l] = true);
        if present.iter().all(|&p| p) {
            return;
        }
        for (c, &p) in present.iter().enumerate() {
            if !p {
                let i = rng.gen_range(0..labels.len());
                labels[i] = c;
            }
        }
    }
}

/// `ebc2d.py`'s initialisation of one axis: `k` random rows of `m` as centres, every row to the
/// centre with the largest `⟨row, centre⟩ / ‖centre‖` (jittered).
fn init_axis(m: &CsrMatrix, k: usize, jitter: f64, rng: &mut impl Rng) -> Vec<usize> {
    let n = m.nrows();
    let mut centres = sample_indices(rng, n, k);
    // sample_indices sorts; shuffle the cluster ids so that they carry no order.
    for i in (1..centres.len()).rev() {
        let j = rng.gen_range(0..=i);
        centres.swap(i, j);
    }
    let dim = m.ncols();
    let mut dense_centres = Array2::<f64>::zeros((k, dim));
    let mut norms = vec![0.0; k];
    for (c, &row) in centres.iter().enumerate() {
        let (idx, val) = m.row(row);
        for (&y, &v) in idx.iter().zip(val) {
            dense_centres[[c, y]] = v;
        }
        norms[c] = val.iter().map(|v| v * v).sum::<f64>().sqrt();
    }
    let mut labels = Vec::with_capacity(n);
    for x in 0..n {
        let (idx, val) = m.row(x);
        let mut best = (f64::NEG_INFINITY, 0usize);
        for c in 0..k {
            let dot: f64 = idx.iter().zip(val).map(|(&y, &v)| v * dense_centres[[c, y]]).sum();
            // A zero centre (an empty row) gives NaN in numpy; treat it as score 0.
            let score = if norms[c] > 0.0 { dot / norms[c] } else { 0.0 } + jitter * rng.gen::<f64>();
            if score > best.0 {
                best = (score, c);
            }
        }
        labels.push(best.1);
    }
    ensure_all_clusters(&mut labels, k, rng);
    labels
}

impl Ebc {
    /// The validated parameters.
    pub fn params(&self) -> &EbcParams {
        &self.params
    }

    /// Co-clusters the rows of `x` (`n x m`, non-negative, normalised internally to sum 1) into
    /// `k_rows` clusters and its columns into `k_cols` clusters; every random choice from `seed`.
    ///
    /// Errors: empty, all-zero or negative `x`; a cluster count of 0 or above the axis length.
    pub fn fit(&self, x: &CsrMatrix, k_rows: usize, k_cols: usize, seed: u64) -> Result<EbcFit> {
        check_nonnegative("document-term matrix", x)?;
        let (n, m) = (x.nrows(), x.ncols());
        ensure(k_rows >= 1, "k_rows", k_rows, "at least 1")?;
        ensure(k_cols >= 1, "k_cols", k_cols, "at least 1")?;
        if k_rows > n {
            return Err(BaselineError::TooMany {
                what: "EBC row clusters",
                k: k_rows,
                n,
            });
        }
        if k_cols > m {
            return Err(BaselineError::TooMany {
                what: "EBC column clusters",
                k: k_cols,
                n: m,
            });
        }
        let total: f64 = x.data().iter().sum();
        if total <= 0.0 {
            return Err(BaselineError::Empty {
                what: "document-term matrix (all zero)",
                rows: n,
                cols: m,
                nnz: x.nnz(),
            });
        }
        // Explicit zeros would give 0 log 0 terms: drop them.
        let triplets = (0..n).flat_map(|i| {
            let (idx, val) = x.row(i);
            idx.iter()
                .zip(val)
                .filter(|(_, &v)| v > 0.0)
                .map(move |(&j, &v)| (i, j, v / total))
        });
        let rows = CsrMatrix::from_triplets(n, m, triplets)?;
        let joint = Joint::new(rows);
        let mut best: Option<EbcFit> = None;
        for restart in 0..self.params.restarts {
            let fit = self.run(&joint, k_rows, k_cols, seed, restart);
            if best.as_ref().is_none_or(|b| fit.objective < b.objective) {
                best = Some(fit);
            }
        }
        best.ok_or(BaselineError::InvalidParameter {
            name: "restarts",
            value: "0".into(),
            expected: "at least 1",
        })
    }

    fn run(&self, j: &Joint, kr: usize, kc: usize, seed: u64, restart: usize) -> EbcFit {
        let p = &self.params;
        let mut rng = stream(seed, TAG_RESTART, restart as u64, 0);
        let mut rl = init_axis(&j.rows, kr, p.jitter, &mut rng);
        let mut cl = init_axis(&j.cols, kc, p.jitter, &mut rng);
        let mut c = clustered(j, &rl, &cl, kr, kc);
        let mut last = 1e10;
        let mut obj = objective(j, &c, &rl, &cl);
        let mut iterations = p.max_iterations;
        for it in 0..p.max_iterations {
            rl = reassign(&j.rows, &c.q, &c.q_row, &j.p_col, &c.q_col, &cl, p.jitter, &mut rng);
            ensure_all_clusters(&mut rl, kr, &mut rng);
            c = clustered(j, &rl, &cl, kr, kc);
            let qt = c.q.t().to_owned();
            cl = reassign(&j.cols, &qt, &c.q_col, &j.p_row, &c.q_row, &rl, p.jitter, &mut rng);
            ensure_all_clusters(&mut cl, kc, &mut rng);
            c = clustered(j, &rl, &cl, kr, kc);
            obj = objective(j, &c, &rl, &cl);
            if (obj - last).abs() < p.tolerance {
                iterations = it + 1;
                break;
            }
            last = obj;
        }
        EbcFit {
            row_labels: rl,
            col_labels: cl,
            objective: obj,
            iterations,
            restart,
        }
    }

    /// [`Ebc::fit`] returning only the labels, documents as rows and terms as columns.
    pub fn bicluster(&self, x: &CsrMatrix, k_docs: usize, k_terms: usize, seed: u64) -> Result<Biclusters> {
        let fit = self.fit(x, k_docs, k_terms, seed)?;
        Ok(Biclusters {
            doc_labels: fit.row_labels,
            term_labels: fit.col_labels,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reassignment_decreases_the_objective_on_a_small_matrix() {
        // Rows are sweeps that minimise D(p || q) exactly (no penalties here), so the objective
        // after a full sweep is at most the one before (Dhillon et al. 2003, Lemma 4/Theorem 1).
        let dense = ndarray::array![
            [5.0, 4.0, 0.0, 1.0, 0.0],
            [4.0, 6.0, 1.0, 0.0, 0.0],
            [0.0, 1.0, 7.0, 5.0, 1.0],
            [1.0, 0.0, 6.0, 6.0, 2.0],
            [0.0, 0.0, 1.0, 2.0, 8.0],
            [2.0, 1.0, 0.0, 0.0, 6.0],
        ];
        let x = CsrMatrix::from_dense(dense.view()).unwrap();
        let total: f64 = x.data().iter().sum();
        let rows = x.map_values(|v| v / total);
        let j = Joint::new(rows);
        let mut rng = stream(9, 0, 0, 0);
        let (mut rl, mut cl) = (vec![0, 1, 0, 1, 2, 2], vec![1, 0, 0, 1, 1]);
        let mut c = clustered(&j, &rl, &cl, 3, 2);
        let mut obj = objective(&j, &c, &rl, &cl);
        for _ in 0..5 {
            rl = reassign(&j.rows, &c.q, &c.q_row, &j.p_col, &c.q_col, &cl, 0.0, &mut rng);
            c = clustered(&j, &rl, &cl, 3, 2);
            let after_rows = objective(&j, &c, &rl, &cl);
            assert!(after_rows <= obj + 1e-12, "{after_rows} > {obj}");
            let qt = c.q.t().to_owned();
            cl = reassign(&j.cols, &qt, &c.q_col, &j.p_row, &c.q_row, &rl, 0.0, &mut rng);
            c = clustered(&j, &rl, &cl, 3, 2);
            let after_cols = objective(&j, &c, &rl, &cl);
            assert!(after_cols <= after_rows + 1e-12, "{after_cols} > {after_rows}");
            obj = after_cols;
        }
        assert!(obj >= -1e-15);
    }

    #[test]
    fn objective_is_zero_when_q_equals_p() {
        // Every row and column in its own cluster: q = p exactly.
        let dense = ndarray::array![[1.0, 2.0], [3.0, 0.0]];
        let x = CsrMatrix::from_dense(dense.view()).unwrap();
        let rows = x.map_values(|v| v / 6.0);
        let j = Joint::new(rows);
        let c = clustered(&j, &[0, 1], &[0, 1], 2, 2);
        assert!(objective(&j, &c, &[0, 1], &[0, 1]).abs() < 1e-15);
    }
}
