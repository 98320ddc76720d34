//! BCOT, optimal-transport biclustering (Fettal, Labiod & Nadif, NeurIPS 2022), as in its
//! reference code (chakib401/BCOT, `bcot/bcot.py`).
//!
//! With a data matrix `X` (`n` rows x `m` columns, non-negative), the cost `C = −λ X` (`λ` the
//! cost scale: BCOT's notebooks try `λ ∈ {1, n, m, k}`), uniform marginals `w = 1/n`, `v = 1/m`
//! on rows and columns and `r = c = 1/k` on the `k` co-clusters, BCOT alternates two optimal
//! transport problems:
//!
//! ```text
//! W ← OT(v, c, C^T Z)      (m x k column-to-cluster plan)
//! Z ← OT(w, r, C W)        (n x k row-to-cluster plan)
//! ```
//!
//! starting from `Z = OT(w, r, R)` with `R` an `n x k` matrix of random integers in `0..k` (the
//! code's `np.random.randint(k, size=(n, k))`), for at most `max_iter` rounds; every 10 rounds
//! the objective `⟨C, Z W^T⟩` is evaluated (on the non-zeros of `X`) and the loop stops when it
//! changed by less than `tol` (1e-7). Row `i` goes to co-cluster `argmax_c Z[i, c]`, column `j`
//! to `argmax_c W[j, c]` (first maximum on ties, like `numpy.argmax`).
//!
//! `OT` is one of the code's two solvers ([`OtAlgorithm`]):
//!
//! * `emd` (the code's default and the notebooks' first setting): exact optimal transport,
//!   POT's `ot.emd`; solved here by successive shortest paths over the `k` co-clusters (exact;
//!   the optimum can differ from POT's network simplex only where the optimum is not unique).
//! * `sinkhorn`: POT's `ot.sinkhorn(a, b, M, ε)` (Sinkhorn–Knopp), the plan
//!   `diag(u) exp(−M/ε) diag(v)` with marginals `a`, `b`, iterating `v = b / (K^T u)`,
//!   `u = a / (K v)` from `u = 1/len(a)`, checking `‖(plan^T 1) − b‖₂ < sinkhorn_tol` every 10
//!   iterations; computed with `K = exp(−(M − min M)/ε)` (the constant factor cancels), or in
//!   the log domain if that under- or overflows: POT's iterates without its numerical breakdowns.
//!
//! BCOT clusters rows and columns into the **same** number `k` of co-clusters. For different
//! document and term cluster counts, [`Bcot::bicluster`] runs it twice, as BCOT's notebooks do
//! (`document_clustering.ipynb` with the number of classes, `term_clustering.ipynb` with the
//! number of term clusters), and takes the document labels from the first run and the term labels
//! from the second.
use crate::emd::emd_uniform;
use crate::error::{check_nonnegative, ensure, ensure_nonnegative, ensure_positive, BaselineError, Result};
use crate::util::stream;
use ksvd_linalg::dense::row_argmax;
use ksvd_linalg::CsrMatrix;
use ndarray::{Array2, ArrayView2};
use rand::Rng;
use serde::{Deserialize, Serialize};

const TAG_INIT: u64 = 21;

/// The cost scale `λ` in `C = −λ X`.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CostScale {
    /// `λ = 1` (BCOT's first notebook setting). Default.
    #[default]
    One,
    /// `λ = n`, the number of rows (documents).
    Rows,
    /// `λ = m`, the number of columns (terms).
    Columns,
    /// `λ = k`, the number of co-clusters.
    Clusters,
    /// An explicit `λ > 0`.
    Value(f64),
}

/// The optimal-transport solver of every BCOT step (the code's `algorithm` argument).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OtAlgorithm {
    /// Exact optimal transport (`ot.emd`). Default, as in `BCOT(...)`.
    #[default]
    Emd,
    /// Entropic optimal transport (`ot.sinkhorn`) with regularisation `reg`.
    Sinkhorn,
}

/// Hyper-parameters of BCOT. Defaults follow `BCOT(...)`'s signature: exact transport
/// (`algorithm='emd'`), `n_iter = 100`, with the cost `−X` (`λ = 1`, the notebooks' first
/// setting). For `algorithm = sinkhorn`: POT's threshold `1e-9` and `ε = 1e-3`, the middle of the
/// grid `{1e-4, …, 1}` of BCOT's Sinkhorn notebooks (the signature default `reg = 1` is
/// degenerate with `λ = 1`: the cost differences are then far below `ε`, both plans drift to the
/// uniform fixed point `1/(nk)`, and every label is decided by rounding); the Sinkhorn iteration
/// cap is lowered from the code's `1e7` to `1e4` (Sinkhorn needs `O(1/ε)` iterations; at
/// `ε = 1e-4` the cap is reached and a run takes minutes).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BcotParams {
    /// Transport solver (default exact, `emd`).
    pub algorithm: OtAlgorithm,
    /// Entropic regularisation `ε` of every Sinkhorn problem (default 1e-3; unused by `emd`).
    pub reg: f64,
    /// Cost scale `λ` (default 1).
    pub cost_scale: CostScale,
    /// Maximum alternating rounds (default 100).
    pub max_iter: usize,
    /// Stop when the objective, checked every 10 rounds, changes by less than this (default 1e-7).
    pub tol: f64,
    /// Maximum Sinkhorn iterations per transport problem (default 10000).
    pub sinkhorn_max_iter: usize,
    /// Sinkhorn stopping threshold on the column-marginal error (default 1e-9, POT's).
    pub sinkhorn_tol: f64,
}

impl Default for BcotParams {
    fn default() -> Self {
        Self {
            algorithm: OtAlgorithm::Emd,
            reg: 1e-3,
            cost_scale: CostScale::One,
            max_iter: 100,
            tol: 1e-7,
            sinkhorn_max_iter: 10_000,
            sinkhorn_tol: 1e-9,
        }
    }
}

impl BcotParams {
    /// Validates the parameters once.
    pub fn check(&self) -> Result<Bcot> {
        ensure_positive("reg", self.reg)?;
        if let CostScale::Value(l) = self.cost_scale {
            ensure_positive("cost_scale", l)?;
        }
        ensure(self.max_iter >= 1, "max_iter", self.max_iter, "at least 1")?;
        ensure_nonnegative("tol", self.tol)?;
        ensure(
            self.sinkhorn_max_iter >= 1,
            "sinkhorn_max_iter",
            self.sinkhorn_max_iter,
            "at least 1",
        )?;
        ensure_positive("sinkhorn_tol", self.sinkhorn_tol)?;
        Ok(Bcot { params: self.clone() })
    }
}

/// BCOT with validated parameters (from [`BcotParams::check`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Bcot {
    params: BcotParams,
}

/// The result of [`Bcot::fit`]: one co-clustering into `k` co-clusters.
#[derive(Debug, Clone, PartialEq)]
pub struct BcotFit {
    /// `n x k` row transport plan `Z` (rows sum to `1/n`, columns to `1/k`).
    pub row_plan: Array2<f64>,
    /// `m x k` column transport plan `W` (rows sum to `1/m`, columns to `1/k`).
    pub col_plan: Array2<f64>,
    /// Co-cluster of every row, `argmax_c Z[i, c]`.
    pub row_labels: Vec<usize>,
    /// Co-cluster of every column, `argmax_c W[j, c]`.
    pub col_labels: Vec<usize>,
    /// The last evaluated objective `⟨C, Z W^T⟩`.
    pub objective: f64,
    /// Alternating rounds performed.
    pub iterations: usize,
    /// The largest number of iterations any of its Sinkhorn problems took (equal to
    /// `sinkhorn_max_iter` if one stopped at the cap rather than at `sinkhorn_tol`; 0 for `emd`).
    pub sinkhorn_iterations: usize,
}

/// Document and term clusters: the one type of `ksvd-bicluster` (ours and the baselines alike).
pub use ksvd_bicluster::Biclustering as Biclusters;

/// `log Σ exp(x)` of a slice, `−∞` for an empty or all-`−∞` slice.
fn log_sum_exp(x: impl Iterator<Item = f64> + Clone) -> f64 {
    let m = x.clone().fold(f64::NEG_INFINITY, f64::max);
    if m == f64::NEG_INFINITY {
        return m;
    }
    m + x.map(|v| (v - m).exp()).sum::<f64>().ln()
}

/// POT's `ot.sinkhorn(a, b, M, reg)` (Sinkhorn–Knopp): the plan `diag(u) exp(−M/reg) diag(v)`
/// with row sums `a` and column sums `b`, iterating `v = b / (K^T u)`, `u = a / (K v)` from
/// `u = 1/n` and stopping when `‖plan^T 1 − b‖₂ < tol` (checked every 10 iterations) or after
/// `max_iter` iterations. Returns the plan and the number of iterations.
///
/// The iterates are POT's: they are computed with `K = exp(−(M − min M)/reg)` (a constant factor
/// that cancels exactly), and if that underflows or overflows, in the log domain.
pub(crate) fn sinkhorn(
    a: &[f64],
    b: &[f64],
    m: ArrayView2<'_, f64>,
    reg: f64,
    max_iter: usize,
    tol: f64,
) -> (Array2<f64>, usize) {
    let problem = Sinkhorn {
        a,
        b,
        m,
        reg,
        max_iter,
        tol,
    };
    problem.scaling().unwrap_or_else(|| problem.log_domain())
}

/// The arguments of [`sinkhorn`], shared by its two iterations.
struct Sinkhorn<'a, 'm> {
    a: &'a [f64],
    b: &'a [f64],
    m: ArrayView2<'m, f64>,
    reg: f64,
    max_iter: usize,
    tol: f64,
}

/// `out = Kᵀ u`, accumulated row by row of `kern`.
fn kt_mul(kern: &Array2<f64>, u: &[f64], out: &mut [f64]) {
    out.iter_mut().for_each(|x| *x = 0.0);
    for (row, &ui) in kern.rows().into_iter().zip(u) {
        for (acc, &kij) in out.iter_mut().zip(row) {
            *acc += kij * ui;
        }
    }
}

impl Sinkhorn<'_, '_> {
    /// The scaling iteration on the shifted kernel; `None` when an iterate is not a finite
    /// positive number (the log domain then takes over).
    fn scaling(&self) -> Option<(Array2<f64>, usize)> {
        let (a, b, m) = (self.a, self.b, self.m);
        let (reg, max_iter, tol) = (self.reg, self.max_iter, self.tol);
        let (n, k) = m.dim();
        let shift = m.iter().fold(f64::INFINITY, |acc, &v| acc.min(v));
        let kern = m.mapv(|c| (-(c - shift) / reg).exp());
        let mut u = vec![1.0 / n as f64; n];
        let mut v = vec![0.0; k];
        let mut ktu = vec![0.0; k];
        let mut iterations = max_iter;
        for it in 0..max_iter {
            kt_mul(&kern, &u, &mut ktu);
            for j in 0..k {
                v[j] = b[j] / ktu[j];
            }
            for (ui, (row, &ai)) in u.iter_mut().zip(kern.rows().into_iter().zip(a)) {
                *ui = ai / row.iter().zip(&v).map(|(kij, vj)| kij * vj).sum::<f64>();
            }
            if !(v.iter().chain(&u).all(|x| x.is_finite() && *x > 0.0)) {
                return None;
            }
            if it % 10 == 0 {
                kt_mul(&kern, &u, &mut ktu);
                let err = (0..k).map(|j| (ktu[j] * v[j] - b[j]).powi(2)).sum::<f64>().sqrt();
                if err < tol {
                    iterations = it + 1;
                    break;
                }
            }
        }
        let plan = Array2::from_shape_fn((n, k), |(i, j)| u[i] * kern[[i, j]] * v[j]);
        plan.iter().all(|x| x.is_finite()).then_some((plan, iterations))
    }

    /// The same iteration on `log u`, `log v` (no underflow).
    fn log_domain(&self) -> (Array2<f64>, usize) {
        let (a, b, m) = (self.a, self.b, self.m);
        let (reg, max_iter, tol) = (self.reg, self.max_iter, self.tol);
        let (n, k) = m.dim();
        let log_k = m.mapv(|c| -c / reg);
        let log_a: Vec<f64> = a.iter().map(|x| x.ln()).collect();
        let log_b: Vec<f64> = b.iter().map(|x| x.ln()).collect();
        let mut lu = vec![-(n as f64).ln(); n];
        let mut lv = vec![-(k as f64).ln(); k];
        let mut iterations = max_iter;
        for it in 0..max_iter {
            for j in 0..k {
                lv[j] = log_b[j] - log_sum_exp((0..n).map(|i| lu[i] + log_k[[i, j]]));
            }
            for i in 0..n {
                let row = log_k.row(i);
                lu[i] = log_a[i] - log_sum_exp((0..k).map(|j| row[j] + lv[j]));
            }
            if it % 10 == 0 {
                let err: f64 = (0..k)
                    .map(|j| {
                        let s: f64 = (0..n).map(|i| (lu[i] + log_k[[i, j]] + lv[j]).exp()).sum();
                        (s - b[j]).powi(2)
                    })
                    .sum::<f64>()
                    .sqrt();
                if err < tol {
                    iterations = it + 1;
                    break;
                }
            }
        }
        (
            Array2::from_shape_fn((n, k), |(i, j)| (lu[i] + log_k[[i, j]] + lv[j]).exp()),
            iterations,
        )
    }
}

impl Bcot {
    /// The validated parameters.
    pub fn params(&self) -> &BcotParams {
        &self.params
    }

    /// Co-clusters the rows and columns of `x` (`n x m`, non-negative) into `k` co-clusters,
    /// the random initial plan from `seed`.
    ///
    /// Errors: empty or negative `x`, `k == 0` or `k > min(n, m)`, a non-finite plan (e.g. the
    /// cost overflows `exp(−M/ε)` even in the log domain).
    pub fn fit(&self, x: &CsrMatrix, k: usize, seed: u64) -> Result<BcotFit> {
        check_nonnegative("document-term matrix", x)?;
        let (n, m) = (x.nrows(), x.ncols());
        ensure(k >= 1, "k", k, "at least 1")?;
        if k > n.min(m) {
            return Err(BaselineError::TooMany {
                what: "BCOT co-clusters",
                k,
                n: n.min(m),
            });
        }
        let p = &self.params;
        let lambda = match p.cost_scale {
            CostScale::One => 1.0,
            CostScale::Rows => n as f64,
            CostScale::Columns => m as f64,
            CostScale::Clusters => k as f64,
            CostScale::Value(l) => l,
        };
        let xt = x.transpose();
        let (w, v, r) = (
            vec![1.0 / n as f64; n],
            vec![1.0 / m as f64; m],
            vec![1.0 / k as f64; k],
        );
        let mut rng = stream(seed, TAG_INIT, k as u64, 0);
        let init = Array2::from_shape_simple_fn((n, k), || rng.gen_range(0..k) as f64);
        let solve = |a: &[f64], cost: ArrayView2<'_, f64>| match p.algorithm {
            OtAlgorithm::Emd => (emd_uniform(cost), 0),
            OtAlgorithm::Sinkhorn => sinkhorn(a, &r, cost, p.reg, p.sinkhorn_max_iter, p.sinkhorn_tol),
        };
        let (mut z, mut sinkhorn_iterations) = solve(&w, init.view());
        let mut wplan = Array2::zeros((m, k));
        let mut objective = f64::INFINITY;
        let mut previous = f64::INFINITY;
        let mut iterations = 0;
        for it in 0..p.max_iter {
            iterations = it + 1;
            // C^T Z = -lambda X^T Z, then C W = -lambda X W.
            let ctz = xt.mul_dense(z.view())? * (-lambda);
            let (plan, its) = solve(&v, ctz.view());
            wplan = plan;
            sinkhorn_iterations = sinkhorn_iterations.max(its);
            let cw = x.mul_dense(wplan.view())? * (-lambda);
            let (plan, its) = solve(&w, cw.view());
            z = plan;
            sinkhorn_iterations = sinkhorn_iterations.max(its);
            if it % 10 == 0 {
                objective = self.objective(x, lambda, &z, &wplan);
                if (previous - objective).abs() < p.tol {
                    break;
                }
                previous = objective;
            }
        }
        if z.iter().chain(wplan.iter()).any(|v| !v.is_finite()) || !objective.is_finite() {
            return Err(BaselineError::NonFinite {
                what: "BCOT transport plans",
                hint: "; increase reg",
            });
        }
        Ok(BcotFit {
            row_labels: row_argmax(z.view()),
            col_labels: row_argmax(wplan.view()),
            row_plan: z,
            col_plan: wplan,
            objective,
            iterations,
            sinkhorn_iterations,
        })
    }

    /// `⟨C, Z W^T⟩ = −λ Σ_{(i,j) ∈ nnz(X)} X_ij Z_i · W_j`.
    fn objective(&self, x: &CsrMatrix, lambda: f64, z: &Array2<f64>, w: &Array2<f64>) -> f64 {
        let mut total = 0.0;
        for i in 0..x.nrows() {
            let (idx, val) = x.row(i);
            let zi = z.row(i);
            for (&j, &v) in idx.iter().zip(val) {
                total += v * zi.dot(&w.row(j));
            }
        }
        -lambda * total
    }

    /// Document clusters (`k_docs`) and term clusters (`k_terms`) of a documents x terms matrix:
    /// one BCOT run with `k_docs` co-clusters for the documents and, if `k_terms != k_docs`, a
    /// second run with `k_terms` co-clusters (its own random stream of `seed`) for the terms.
    pub fn bicluster(&self, x: &CsrMatrix, k_docs: usize, k_terms: usize, seed: u64) -> Result<Biclusters> {
        let docs = self.fit(x, k_docs, seed)?;
        let term_labels = if k_terms == k_docs {
            docs.col_labels
        } else {
            self.fit(x, k_terms, seed)?.col_labels
        };
        Ok(Biclusters {
            doc_labels: docs.row_labels,
            term_labels,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{Array1, Axis};

    fn plan_marginals(plan: &Array2<f64>) -> (Array1<f64>, Array1<f64>) {
        (plan.sum_axis(Axis(1)), plan.sum_axis(Axis(0)))
    }

    #[test]
    fn sinkhorn_matches_marginals_and_the_closed_form_for_one_row() {
        let m = ndarray::array![[0.0, 1.0, 2.0], [1.0, 0.0, 3.0], [2.0, 2.0, 0.0], [0.5, 0.1, 0.2]];
        let (a, b) = (vec![0.25; 4], vec![1.0 / 3.0; 3]);
        for reg in [10.0, 1.0, 0.05, 1e-3] {
            let (plan, _) = sinkhorn(&a, &b, m.view(), reg, 100_000, 1e-13);
            let (log_plan, _) = Sinkhorn {
                a: &a,
                b: &b,
                m: m.view(),
                reg,
                max_iter: 100_000,
                tol: 1e-13,
            }
            .log_domain();
            assert!((&plan - &log_plan).iter().all(|d| d.abs() < 1e-13));
            let (rows, cols) = plan_marginals(&plan);
            assert!(rows.iter().all(|&r| (r - 0.25).abs() < 1e-12), "{rows}");
            assert!(cols.iter().all(|&c| (c - 1.0 / 3.0).abs() < 1e-12), "{cols}");
            // Optimality: plan = diag(u) K diag(v), so log plan + M/reg has rank one in the
            // additive sense: (i, j) + (i', j') = (i, j') + (i', j).
            // (Checked where no entry underflows to 0.)
            if plan.iter().all(|&p| p > 0.0) {
                let g = plan.mapv(f64::ln) + &m / reg;
                assert!((g[[0, 0]] + g[[1, 2]] - g[[0, 2]] - g[[1, 0]]).abs() < 1e-9);
            }
        }
        // One source row: the plan is b itself.
        let (plan, _) = sinkhorn(&[1.0], &b, m.slice(ndarray::s![0..1, ..]), 1.0, 1000, 1e-14);
        assert!(plan.iter().all(|&p| (p - 1.0 / 3.0).abs() < 1e-14));
    }

    #[test]
    fn invalid_inputs_are_errors() {
        let x = CsrMatrix::from_triplets(3, 2, [(0, 0, 1.0), (1, 1, 1.0)]).unwrap();
        let bcot = BcotParams::default().check().unwrap();
        assert!(matches!(bcot.fit(&x, 3, 0), Err(BaselineError::TooMany { .. })));
        assert!(bcot.fit(&x, 0, 0).is_err());
        let neg = CsrMatrix::from_triplets(2, 2, [(0, 0, -1.0)]).unwrap();
        assert!(matches!(bcot.fit(&neg, 1, 0), Err(BaselineError::Negative { .. })));
        assert!(BcotParams {
            reg: 0.0,
            ..Default::default()
        }
        .check()
        .is_err());
    }
}
