//! Sufficient statistics of the primal linear LS-SVM: one pass, mergeable, subtractable.
//!
//! For features `f_i` (`d`) and targets `t_i` (`c` columns, one per one-vs-rest problem), the
//! primal linear LS-SVM (ridge regression with an unregularised bias)
//!
//! ```text
//! min_{W, b}  1/2 ‖W‖² + γ/2 Σ_i ‖t_i − Wᵀ f_i − b‖²
//! ```
//!
//! depends on the data only through `n`, `Σ g`, `Σ g gᵀ`, `Σ t` and `Σ g tᵀ`, with
//! `g = f − s` the features shifted by a fixed vector `s` (zero, or the mean of the first rows
//! seen, which keeps `Σ g gᵀ − n μ μᵀ` accurate when the means are large compared with the
//! spreads). Eliminating the bias leaves `(Σ g gᵀ − n μ μᵀ + I/γ) W = Σ g tᵀ − n μ t̄ᵀ`
//! (`μ = Σ g / n`, `t̄ = Σ t / n`) and `b = t̄ − Wᵀ (μ + s)`: the same system as
//! [`solve_primal`](crate::solve_primal), which forms it in memory from centred data.
//!
//! Statistics of disjoint row sets with the same shift add ([`PrimalStats::merge`]): partial
//! statistics of partitions, chunks or cross-validation folds combine exactly up to the order
//! of the floating-point additions, and [`PrimalStats::subtract`] removes a fold (`k`-fold
//! cross-validation from one pass over the folds).
use crate::error::{check_finite, check_gamma, LssvmError, Result};
use crate::solve::{check_target_rows, PrimalSolution};
use ksvd_linalg::dense::{cholesky_solve, gemm_into_seq, matmul};
use ndarray::{s, Array1, Array2, ArrayView2, Axis};
use rayon::prelude::*;

/// Rows per block of the parallel accumulation in [`PrimalStats::add`] (fixed, so the result
/// does not depend on the number of threads).
const REDUCE_ROWS: usize = 4096;

/// `n`, `Σ g`, `Σ g gᵀ`, `Σ t`, `Σ g tᵀ` of a set of rows, `g = f − shift` (see the module
/// docs).
#[derive(Debug, Clone, PartialEq)]
pub struct PrimalStats {
    count: usize,
    /// `None` only before the first rows when the shift is taken from them.
    shift: Option<Array1<f64>>,
    sum: Array1<f64>,
    gram: Array2<f64>,
    tsum: Array1<f64>,
    cross: Array2<f64>,
}

impl PrimalStats {
    /// Empty statistics for `dim` features and `targets` target columns, no shift.
    pub fn new(dim: usize, targets: usize) -> Self {
        Self::with_shift(Array1::zeros(dim), targets)
    }

    /// Empty statistics whose features are shifted by a fixed `shift` (the same for every
    /// partition of a distributed pass, so that partial statistics merge by plain addition).
    pub fn with_shift(shift: Array1<f64>, targets: usize) -> Self {
        let mut st = Self::shifted_by_first_rows(shift.len(), targets);
        st.shift = Some(shift);
        st
    }

    /// Empty statistics whose shift will be the column means of the first non-empty block of
    /// rows given to [`PrimalStats::add`].
    pub fn shifted_by_first_rows(dim: usize, targets: usize) -> Self {
        PrimalStats {
            count: 0,
            shift: None,
            sum: Array1::zeros(dim),
            gram: Array2::zeros((dim, dim)),
            tsum: Array1::zeros(targets),
            cross: Array2::zeros((dim, targets)),
        }
    }

    /// Statistics of the rows of `features` (`n × d`) with `targets` (`n × c`), no shift, by
    /// one GEMM each (`Fᵀ F`, `Fᵀ T`).
    pub fn of_rows(features: ArrayView2<'_, f64>, targets: ArrayView2<'_, f64>) -> Result<Self> {
        check_target_rows(targets, features.nrows())?;
        Ok(PrimalStats {
            count: features.nrows(),
            shift: Some(Array1::zeros(features.ncols())),
            sum: features.sum_axis(Axis(0)),
            gram: matmul(features.t(), features)?,
            tsum: targets.sum_axis(Axis(0)),
            cross: matmul(features.t(), targets)?,
        })
    }

    /// Adds the rows of `features` (`n × d`) with `targets` (`n × c`), in parallel over fixed
    /// blocks of rows. Non-finite values are a typed error.
    pub fn add(&mut self, features: ArrayView2<'_, f64>, targets: ArrayView2<'_, f64>) -> Result<()> {
        check_target_rows(targets, features.nrows())?;
        self.check_shape(features.ncols(), targets.ncols())?;
        let n = features.nrows();
        if n == 0 {
            return Ok(());
        }
        check_finite("features", features)?;
        check_finite("targets", targets)?;
        let d = features.ncols();
        let shift = self
            .shift
            .get_or_insert_with(|| features.mean_axis(Axis(0)).unwrap_or_else(|| Array1::zeros(d)))
            .clone();
        type Part = (Array1<f64>, Array2<f64>, Array1<f64>, Array2<f64>);
        let parts: Vec<Result<Part>> = (0..n.div_ceil(REDUCE_ROWS))
            .into_par_iter()
            .map(|b| {
                let lo = b * REDUCE_ROWS;
                let hi = (lo + REDUCE_ROWS).min(n);
                let g = &features.slice(s![lo..hi, ..]) - &shift;
                let tb = targets.slice(s![lo..hi, ..]);
                let mut gram = Array2::zeros((d, d));
                gemm_into_seq(gram.view_mut(), g.t(), g.view())?;
                let mut cross = Array2::zeros((d, tb.ncols()));
                gemm_into_seq(cross.view_mut(), g.t(), tb)?;
                Ok((g.sum_axis(Axis(0)), gram, tb.sum_axis(Axis(0)), cross))
            })
            .collect();
        for part in parts {
            let (sum, gram, tsum, cross) = part?;
            self.sum += &sum;
            self.gram += &gram;
            self.tsum += &tsum;
            self.cross += &cross;
        }
        self.count += n;
        Ok(())
    }

    /// Adds the statistics of `other`, accumulated on other rows with the same shift: the
    /// result is that of one pass over both sets of rows (up to the order of the floating-point
    /// additions). Associative and commutative up to rounding.
    pub fn merge(&mut self, other: &PrimalStats) -> Result<()> {
        self.combine(other, 1.0)
    }

    /// Removes the statistics of `other`, a subset of the rows accumulated here (with the same
    /// shift): e.g. the left-out fold of a cross-validation split.
    pub fn subtract(&mut self, other: &PrimalStats) -> Result<()> {
        self.combine(other, -1.0)
    }

    /// `self += sign · other` (`sign` is `1` or `−1`, exact in floating point).
    fn combine(&mut self, other: &PrimalStats, sign: f64) -> Result<()> {
        self.check_shape(other.dim(), other.n_targets())?;
        if self.count > 0 && other.count > 0 && other.shift != self.shift {
            return Err(LssvmError::ShiftMismatch);
        }
        if sign < 0.0 && other.count > self.count {
            return Err(LssvmError::LengthMismatch {
                what: "rows to subtract",
                expected: self.count,
                found: other.count,
            });
        }
        // An accumulator without a shift yet, or without rows, takes the other's.
        if self.shift.is_none() || (self.count == 0 && other.count > 0) {
            self.shift.clone_from(&other.shift);
        }
        self.count = if sign > 0.0 {
            self.count + other.count
        } else {
            self.count - other.count
        };
        self.sum.scaled_add(sign, &other.sum);
        self.gram.scaled_add(sign, &other.gram);
        self.tsum.scaled_add(sign, &other.tsum);
        self.cross.scaled_add(sign, &other.cross);
        Ok(())
    }

    fn check_shape(&self, dim: usize, targets: usize) -> Result<()> {
        if dim != self.dim() {
            return Err(LssvmError::FeatureMismatch {
                expected: self.dim(),
                found: dim,
            });
        }
        if targets != self.n_targets() {
            return Err(LssvmError::LengthMismatch {
                what: "target columns",
                expected: self.n_targets(),
                found: targets,
            });
        }
        Ok(())
    }

    /// Rows accumulated.
    pub fn count(&self) -> usize {
        self.count
    }
    /// Number of features `d`.
    pub fn dim(&self) -> usize {
        self.sum.len()
    }
    /// Number of target columns `c`.
    pub fn n_targets(&self) -> usize {
        self.tsum.len()
    }
    /// The shift `s` (`None` before the first rows when it is taken from them).
    pub fn shift(&self) -> Option<&Array1<f64>> {
        self.shift.as_ref()
    }
    /// `Σ g` (`d`).
    pub fn sum(&self) -> &Array1<f64> {
        &self.sum
    }
    /// `Σ g gᵀ` (`d × d`).
    pub fn gram(&self) -> &Array2<f64> {
        &self.gram
    }
    /// `Σ t` (`c`).
    pub fn target_sum(&self) -> &Array1<f64> {
        &self.tsum
    }
    /// `Σ g tᵀ` (`d × c`).
    pub fn cross(&self) -> &Array2<f64> {
        &self.cross
    }

    /// Statistics from their parts (e.g. a deserialised partial state); shapes are checked.
    pub fn from_parts(
        count: usize,
        shift: Option<Array1<f64>>,
        sum: Array1<f64>,
        gram: Array2<f64>,
        target_sum: Array1<f64>,
        cross: Array2<f64>,
    ) -> Result<Self> {
        let (d, c) = (sum.len(), target_sum.len());
        let bad =
            |what: &'static str, found: usize, expected: usize| LssvmError::LengthMismatch { what, expected, found };
        if gram.dim() != (d, d) {
            return Err(bad("rows of the Gram statistic", gram.nrows(), d));
        }
        if cross.dim() != (d, c) {
            return Err(bad("entries of the cross statistic", cross.len(), d * c));
        }
        if let Some(s) = &shift {
            if s.len() != d {
                return Err(bad("shift", s.len(), d));
            }
        }
        Ok(PrimalStats {
            count,
            shift,
            sum,
            gram,
            tsum: target_sum,
            cross,
        })
    }

    /// The shift, once rows have been seen (what a solve needs).
    fn solvable_shift(&self) -> Result<&Array1<f64>> {
        match &self.shift {
            Some(s) if self.count > 0 => Ok(s),
            _ => Err(LssvmError::EmptyInput {
                what: "training set",
                rows: 0,
                cols: self.dim(),
            }),
        }
    }

    /// The primal LS-SVM with regularisation `γ` on these rows: weights `W` (`d × c`) and biases
    /// (see the module docs). An error without rows or when the system is not positive definite.
    pub fn solve(&self, gamma: f64) -> Result<PrimalSolution> {
        check_gamma(gamma)?;
        let shift = self.solvable_shift()?;
        let nf = self.count as f64;
        let mu = &self.sum / nf;
        let tbar = &self.tsum / nf;
        // A = Σ g gᵀ − n μ μᵀ + I/γ ;  R = Σ g tᵀ − n μ t̄ᵀ.
        let mu_col = mu.view().insert_axis(Axis(1));
        let mut a = self.gram.clone();
        a.scaled_add(-nf, &mu_col.dot(&mu_col.t()));
        a.diag_mut().mapv_inplace(|v| v + 1.0 / gamma);
        let mut rhs = self.cross.clone();
        rhs.scaled_add(-nf, &mu_col.dot(&tbar.view().insert_axis(Axis(0))));
        let weights = cholesky_solve(a.view(), rhs.view())?;
        let bias = &tbar - &weights.t().dot(&(&mu + shift));
        Ok(PrimalSolution { weights, bias })
    }

    /// Population standard deviations of the features, `σ_a = sqrt(max(0, Σ g_a² / n − μ_a²))`
    /// (`μ = Σ g / n`; the shift cancels); zeros without rows.
    pub fn feature_std(&self) -> Array1<f64> {
        if self.count == 0 {
            return Array1::zeros(self.dim());
        }
        let nf = self.count as f64;
        Array1::from_iter((0..self.dim()).map(|a| {
            let mean = self.sum[a] / nf;
            (self.gram[[a, a]] / nf - mean * mean).max(0.0).sqrt()
        }))
    }

    /// The primal LS-SVM with regularisation `γ` on **standardised** features
    /// `z_a = (f_a − f̄_a) / σ_a` ([`PrimalStats::feature_std`]), i.e. ridge regression
    /// `min (1/n) Σ_i ‖t_i − Wᵀ z_i − b‖² + λ ‖W‖²` with `λ = 1 / (n γ)`: the solution does not
    /// change when a feature column is scaled. Columns with `σ_a ≤ 10³ ε max σ` (constant up to
    /// rounding) get weight 0. Weights and biases are returned for the original features
    /// (`f ↦ Wᵀ f + b`). The system is [`PrimalStats::solve`]'s, on the statistics of the kept
    /// columns scaled by `1/σ`.
    pub fn solve_standardized(&self, gamma: f64) -> Result<PrimalSolution> {
        check_gamma(gamma)?;
        let shift = self.solvable_shift()?;
        let sd = self.feature_std();
        let top = sd.iter().copied().fold(0.0, f64::max);
        let keep: Vec<usize> = (0..self.dim())
            .filter(|&a| sd[a] > 0.0 && sd[a] > 1e3 * f64::EPSILON * top)
            .collect();
        let mut weights = Array2::zeros((self.dim(), self.n_targets()));
        if !keep.is_empty() {
            let k = keep.len();
            let scaled = PrimalStats {
                count: self.count,
                shift: Some(Array1::from_iter(keep.iter().map(|&a| shift[a] / sd[a]))),
                sum: Array1::from_iter(keep.iter().map(|&a| self.sum[a] / sd[a])),
                gram: Array2::from_shape_fn((k, k), |(p, q)| {
                    self.gram[[keep[p], keep[q]]] / (sd[keep[p]] * sd[keep[q]])
                }),
                tsum: self.tsum.clone(),
                cross: Array2::from_shape_fn((k, self.n_targets()), |(p, c)| self.cross[[keep[p], c]] / sd[keep[p]]),
            };
            let sol = scaled.solve(gamma)?;
            for (p, &a) in keep.iter().enumerate() {
                weights.row_mut(a).assign(&(&sol.weights.row(p) / sd[a]));
            }
        }
        let nf = self.count as f64;
        let mean = &self.sum / nf + shift;
        let bias = &self.tsum / nf - weights.t().dot(&mean);
        Ok(PrimalSolution { weights, bias })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::solve::solve_primal;
    use ksvd_linalg::random::{gaussian_matrix, rng_from_seed};

    fn close(a: &Array2<f64>, b: &Array2<f64>, tol: f64) -> bool {
        let scale = b.iter().fold(1.0f64, |m, v| m.max(v.abs()));
        a.dim() == b.dim() && a.iter().zip(b).all(|(x, y)| (x - y).abs() <= tol * scale)
    }

    /// Offset features (mean 50, spread 1): the statistics' solution equals the in-memory primal
    /// solver's, with and without a shift, over one pass, merged chunks and a subtracted fold.
    #[test]
    fn one_pass_merged_and_subtracted_statistics_solve_the_primal_system() {
        let mut rng = rng_from_seed(4);
        let (n, d, c) = (9000, 7, 3);
        let f = gaussian_matrix(&mut rng, n, d) + 50.0;
        let t = gaussian_matrix(&mut rng, n, c);
        let gamma = 0.7;
        let want = solve_primal(f.view(), t.view(), gamma).unwrap();
        let tol = 1e4 * f64::EPSILON * (n * d) as f64;

        let mut first_rows = PrimalStats::shifted_by_first_rows(d, c);
        first_rows.add(f.view(), t.view()).unwrap();
        let mut merged = PrimalStats::with_shift(Array1::from_elem(d, 50.0), c);
        for lo in (0..n).step_by(2500) {
            let hi = (lo + 2500).min(n);
            let mut part = PrimalStats::with_shift(Array1::from_elem(d, 50.0), c);
            part.add(f.slice(s![lo..hi, ..]), t.slice(s![lo..hi, ..])).unwrap();
            merged.merge(&part).unwrap();
        }
        for st in [&first_rows, &merged] {
            assert_eq!(st.count(), n);
            let got = st.solve(gamma).unwrap();
            assert!(close(&got.weights, &want.weights, tol));
            let bias = got.bias.clone().insert_axis(Axis(0)).to_owned();
            assert!(close(&bias, &want.bias.clone().insert_axis(Axis(0)).to_owned(), tol));
        }

        // All rows minus the last 1000 = the first n - 1000 rows.
        let mut all = PrimalStats::of_rows(f.view(), t.view()).unwrap();
        let tail = PrimalStats::of_rows(f.slice(s![n - 1000.., ..]), t.slice(s![n - 1000.., ..])).unwrap();
        all.subtract(&tail).unwrap();
        let head = solve_primal(f.slice(s![..n - 1000, ..]), t.slice(s![..n - 1000, ..]), gamma).unwrap();
        let got = all.solve(gamma).unwrap();
        // Unshifted sums at offset 50 lose about 50² relative digits more than the centred solve.
        assert!(close(&got.weights, &head.weights, 2500.0 * tol));
    }

    /// Standardised solve = the in-memory primal solver on explicitly standardised columns (an
    /// independent route: centring and scaling of the data, not of the statistics), mapped back;
    /// scaling a column leaves the decision function unchanged; a constant column gets weight 0.
    #[test]
    fn standardized_solve_equals_the_primal_solve_on_standardized_columns() {
        let mut rng = rng_from_seed(9);
        let (n, d, c) = (3000, 5, 2);
        let mut f = gaussian_matrix(&mut rng, n, d);
        for (a, mut col) in f.axis_iter_mut(Axis(1)).enumerate() {
            col *= 10f64.powi(a as i32 - 2);
            col += 1e3 * a as f64;
        }
        f.column_mut(4).fill(7.0); // constant
        let t = gaussian_matrix(&mut rng, n, c);
        let gamma = 0.05;
        let mut st = PrimalStats::shifted_by_first_rows(d, c);
        for lo in (0..n).step_by(700) {
            let hi = (lo + 700).min(n);
            st.add(f.slice(s![lo..hi, ..]), t.slice(s![lo..hi, ..])).unwrap();
        }
        let got = st.solve_standardized(gamma).unwrap();
        // Reference: standardise the kept columns in memory and solve.
        let mean = f.mean_axis(Axis(0)).unwrap();
        let sd = f.std_axis(Axis(0), 0.0);
        let z = Array2::from_shape_fn((n, 4), |(i, a)| (f[[i, a]] - mean[a]) / sd[a]);
        let want = solve_primal(z.view(), t.view(), gamma).unwrap();
        let tol = 1e3 * f64::EPSILON * (n * d) as f64;
        for a in 0..4 {
            let scaled = (&got.weights.row(a) * sd[a]).to_owned().insert_axis(Axis(0));
            assert!(
                close(&scaled, &want.weights.slice(s![a..a + 1, ..]).to_owned(), tol),
                "column {a}"
            );
        }
        assert!(got.weights.row(4).iter().all(|&w| w == 0.0), "constant column");
        let scores = f.dot(&got.weights) + &got.bias;
        let reference = z.dot(&want.weights) + &want.bias;
        assert!(close(&scores, &reference, tol));
        // Scaling a column by 1e-3 changes nothing but its weight.
        let mut g = f.clone();
        g.column_mut(1).mapv_inplace(|v| v * 1e-3);
        let mut other = PrimalStats::shifted_by_first_rows(d, c);
        other.add(g.view(), t.view()).unwrap();
        let other = other.solve_standardized(gamma).unwrap();
        assert!(close(&(g.dot(&other.weights) + &other.bias), &scores, tol));
        assert!(matches!(
            PrimalStats::new(d, c).solve_standardized(gamma),
            Err(LssvmError::EmptyInput { .. })
        ));
    }

    #[test]
    fn bad_shapes_shifts_and_values_are_typed_errors() {
        let f = Array2::<f64>::ones((4, 3));
        let t = Array2::<f64>::ones((4, 1));
        let mut st = PrimalStats::new(3, 1);
        assert!(matches!(
            st.add(f.view(), Array2::<f64>::ones((3, 1)).view()),
            Err(LssvmError::LengthMismatch { .. })
        ));
        assert!(matches!(
            st.add(Array2::<f64>::ones((4, 2)).view(), t.view()),
            Err(LssvmError::FeatureMismatch { expected: 3, found: 2 })
        ));
        let mut nan = f.clone();
        nan[[2, 1]] = f64::NAN;
        assert!(matches!(
            st.add(nan.view(), t.view()),
            Err(LssvmError::NonFinite { row: 2, col: 1, .. })
        ));
        assert!(matches!(st.solve(1.0), Err(LssvmError::EmptyInput { .. })));
        st.add(f.view(), t.view()).unwrap();
        let mut other = PrimalStats::with_shift(Array1::ones(3), 1);
        other.add(f.view(), t.view()).unwrap();
        assert_eq!(st.merge(&other), Err(LssvmError::ShiftMismatch));
        let mut big = PrimalStats::new(3, 1);
        big.add(f.view(), t.view()).unwrap();
        big.add(f.view(), t.view()).unwrap();
        assert!(matches!(st.subtract(&big), Err(LssvmError::LengthMismatch { .. })));
        assert!(matches!(st.solve(0.0), Err(LssvmError::InvalidGamma { .. })));
    }
}
