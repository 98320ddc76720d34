//! Sparse Cholesky factorisation (faer's supernodal/simplicial `LLᵀ` with an AMD ordering) of a
//! symmetric matrix given by its lower triangle in CSR form. Its success is itself a
//! certificate: the matrix is (numerically) positive definite, which spectral transformations
//! use to count eigenvalues above a shift.
//!
//! For indefinite matrices (a shift inside the spectrum), [`CholeskyPattern::factor_ldlt`] gives
//! an unpivoted `L D Lᵀ` and its [`Inertia`]: the signs of `D` count the eigenvalues below zero of
//! a matrix within a computed backward-error bound of the input.
use crate::csr::CsrMatrix;
use crate::dense::{as_faer_mut, parallelism};
use crate::error::{LinalgError, Result};
use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::linalg::cholesky::ldlt::factor::LdltRegularization;
use faer::linalg::cholesky::llt::factor::LltRegularization;
use faer::linalg::solvers::LltError;
use faer::sparse::linalg::cholesky::{
    factorize_symbolic_cholesky, LdltRef, LltRef, SymbolicCholesky, SymbolicCholeskyRaw,
};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use faer::{Conj, Par, Side};
use ndarray::{Array2, ArrayViewMut2, ShapeBuilder};
use std::sync::Arc;

/// The symbolic analysis (fill-reducing ordering, elimination tree, the factor's structure) of
/// a sparsity pattern, reusable for every matrix with that lower triangle (one shift after
/// another, say).
#[derive(Debug, Clone)]
pub struct CholeskyPattern {
    symbolic: Arc<SymbolicCholesky<usize>>,
    n: usize,
    indptr: Vec<usize>,
    indices: Vec<usize>,
}

/// `A = L Lᵀ` of a sparse symmetric positive definite `A`.
#[derive(Debug, Clone)]
pub struct SparseCholesky {
    symbolic: Arc<SymbolicCholesky<usize>>,
    values: Vec<f64>,
    n: usize,
}

/// `A = L D Lᵀ` (`L` unit lower triangular, `D` diagonal, no pivoting beyond the fill-reducing
/// ordering) of a sparse symmetric matrix, with the inertia of `D`.
#[derive(Debug, Clone)]
pub struct SparseLdlt {
    symbolic: Arc<SymbolicCholesky<usize>>,
    values: Vec<f64>,
    n: usize,
    inertia: Inertia,
}

/// The signs of the pivots of an `L D Lᵀ` factorisation of a symmetric `A`, with a bound on its
/// backward error.
///
/// The computed factors are exact for some `A + E` with `|E| ≤ γ_m |L| |D| |Lᵀ|` entry-wise
/// (`γ_m = m u / (1 − m u)`, `m` the longest column of `L` plus one; any summation order, so
/// blocked and supernodal updates included), and by Sylvester's law of inertia `D` has as many
/// negative entries as `A + E` has negative eigenvalues. With `‖E‖₂ ≤ γ_m ‖ |L| |D| |Lᵀ| ‖₂`,
/// bounded by the smaller of that matrix's largest row sum and its trace
/// `Σ_j |d_j| ‖L_{:,j}‖²` (=: `error`), Weyl's inequality gives
/// `#{λ(A) < −error} ≤ negative ≤ #{λ(A) < error}`: the count is exact for every eigenvalue
/// farther than `error` from zero. Without pivoting the factorisation is not backward stable in
/// general; the bound, computed from the factors themselves, says how far it is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Inertia {
    /// Negative entries of `D`.
    pub negative: usize,
    /// Positive entries of `D` (the others: the factorisation fails on a zero pivot).
    pub positive: usize,
    /// The bound on `‖E‖₂` above.
    pub error: f64,
}

/// Visits the columns of a computed `L D Lᵀ` factor (unit `L`): `f(j, d_j, rows and values of
/// L's entries below the diagonal)`, in either of faer's layouts.
fn ldlt_columns(
    symbolic: &SymbolicCholesky<usize>,
    values: &[f64],
    mut f: impl FnMut(usize, f64, &mut dyn Iterator<Item = (usize, f64)>),
) -> Result<()> {
    match symbolic.raw() {
        SymbolicCholeskyRaw::Simplicial(s) => {
            let (ptr, rows) = (s.col_ptr(), s.row_idx());
            for j in 0..symbolic.nrows() {
                let (a, b) = (ptr[j], ptr[j + 1]);
                if a == b || rows[a] != j {
                    return Err(faer_error(
                        "sparse LDLT",
                        "a factor column does not start at its diagonal",
                    ));
                }
                let below = rows[a + 1..b].iter().copied().zip(values[a + 1..b].iter().copied());
                f(j, values[a], &mut below.into_iter());
            }
        }
        SymbolicCholeskyRaw::Supernodal(s) => {
            let (begin, end) = (s.supernode_begin(), s.supernode_end());
            let (val_ptr, row_ptr, row_idx) = (s.col_ptr_for_val(), s.col_ptr_for_row_idx(), s.row_idx());
            for k in 0..s.n_supernodes() {
                let ncols = end[k] - begin[k];
                let below_rows = &row_idx[row_ptr[k]..row_ptr[k + 1]];
                let nrows = ncols + below_rows.len();
                // Column-major nrows × ncols block: the supernode's columns of L, D on its
                // diagonal; its rows are the supernode's own columns, then `below_rows`.
                let block = &values[val_ptr[k]..val_ptr[k + 1]];
                if block.len() != nrows * ncols {
                    return Err(faer_error("sparse LDLT", "a supernode's block has an unexpected size"));
                }
                for j in 0..ncols {
                    let col = &block[j * nrows..(j + 1) * nrows];
                    let rows = (begin[k] + j + 1..end[k]).chain(below_rows.iter().copied());
                    f(begin[k] + j, col[j], &mut rows.zip(col[j + 1..].iter().copied()));
                }
            }
        }
    }
    Ok(())
}

/// The inertia of `D` and the backward-error bound from a computed `L D Lᵀ` factor.
///
/// `‖E‖₂ ≤ γ_m ‖M‖₂` with `M = |L| |D| |Lᵀ|`, symmetric and entry-wise nonnegative, so
/// `‖M‖₂ ≤ min(‖M‖_∞, trace M)`: the largest row sum `max_i (|L| (|D| (|Lᵀ| 1)))_i` (two passes
/// over the factor) and `Σ_j |d_j| ‖L_{:,j}‖²`. The row sum is the sharper one on sparse
/// factors (it grows with a row's neighbourhood, the trace with the order).
fn ldlt_inertia(symbolic: &SymbolicCholesky<usize>, values: &[f64]) -> Result<Inertia> {
    let n = symbolic.nrows();
    let mut negative = 0;
    let mut positive = 0;
    let mut trace = 0.0f64;
    let mut longest = 0usize;
    // z_j = |d_j| Σ_i |l_ij| (|D| |Lᵀ| 1, unit diagonal included).
    let mut z = vec![0.0f64; n];
    ldlt_columns(symbolic, values, |j, d, below| {
        if d < 0.0 {
            negative += 1;
        } else if d > 0.0 {
            positive += 1;
        }
        let (mut len, mut sum, mut norm2) = (1usize, 1.0f64, 1.0f64);
        for (_, l) in below {
            len += 1;
            sum += l.abs();
            norm2 += l * l;
        }
        trace += d.abs() * norm2;
        z[j] = d.abs() * sum;
        longest = longest.max(len);
    })?;
    // Row sums of M: (|L| z)_i.
    let mut rows = z.clone();
    ldlt_columns(symbolic, values, |j, _, below| {
        for (i, l) in below {
            rows[i] += l.abs() * z[j];
        }
    })?;
    let row_sum = rows.iter().copied().fold(0.0f64, f64::max);
    let m = (longest + 1) as f64 * f64::EPSILON;
    Ok(Inertia {
        negative,
        positive,
        error: m / (1.0 - m) * row_sum.min(trace),
    })
}

/// `b ← A⁻¹ b` with a factor's own solve (`solve(columns, workspace)`), sequential, on
/// contiguous columns.
///
/// A solve is one pass over the factor, bound by memory. faer's parallel supernodal solve took
/// 0.33 s per call on Pubmed's shifted augmented matrix (order 39434, 3.9e6 factor entries, 2
/// threads) against 0.01 s sequentially, so it runs sequentially.
fn solve_columns(
    symbolic: &SymbolicCholesky<usize>,
    op: &'static str,
    mut b: ArrayViewMut2<'_, f64>,
    solve: impl FnOnce(faer::MatMut<'_, f64>, Par, &mut MemStack),
) -> Result<()> {
    let n = symbolic.nrows();
    if b.nrows() != n {
        return Err(LinalgError::ShapeMismatch {
            op,
            left: (n, n),
            right: b.dim(),
        });
    }
    let par = Par::Seq;
    let mut buffer =
        MemBuffer::try_new(symbolic.solve_in_place_scratch::<f64>(b.ncols(), par)).map_err(|e| faer_error(op, e))?;
    let stack = MemStack::new(&mut buffer);
    // The supernodal solve walks columns of the right-hand side: give it contiguous ones.
    if b.ncols() <= 1 || b.t().is_standard_layout() {
        solve(as_faer_mut(b), par, stack);
    } else {
        let mut cols = Array2::zeros(b.raw_dim().f());
        cols.assign(&b);
        solve(as_faer_mut(cols.view_mut()), par, stack);
        b.assign(&cols);
    }
    Ok(())
}

/// The lower triangle as faer's column view of the upper triangle (CSR of the lower triangle is
/// CSC of the upper one).
fn upper_view(lower: &CsrMatrix) -> SparseColMatRef<'_, usize, f64> {
    let n = lower.nrows();
    let symbolic = SymbolicSparseColMatRef::new_checked(n, n, lower.indptr(), None, lower.indices());
    SparseColMatRef::new(symbolic, lower.data())
}

fn check_lower(lower: &CsrMatrix) -> Result<()> {
    let (n, m) = lower.shape();
    if n != m {
        return Err(LinalgError::ShapeMismatch {
            op: "sparse Cholesky (needs a square matrix)",
            left: (n, m),
            right: (n, m),
        });
    }
    if n == 0 {
        return Err(LinalgError::Empty {
            what: "sparse Cholesky input",
            rows: n,
            cols: m,
        });
    }
    for i in 0..n {
        if let Some(&j) = lower.row(i).0.last() {
            if j > i {
                return Err(LinalgError::InvalidCsr(format!(
                    "sparse Cholesky reads the lower triangle, but row {i} holds column {j}"
                )));
            }
        }
    }
    Ok(())
}

fn faer_error(op: &'static str, e: impl std::fmt::Debug) -> LinalgError {
    LinalgError::Factorization {
        op,
        reason: format!("{e:?}"),
    }
}

impl CholeskyPattern {
    /// Symbolic analysis (AMD ordering) of the lower triangle `lower` (rows hold columns `≤`
    /// their index).
    pub fn new(lower: &CsrMatrix) -> Result<Self> {
        check_lower(lower)?;
        let symbolic = factorize_symbolic_cholesky(
            upper_view(lower).symbolic(),
            Side::Upper,
            Default::default(),
            Default::default(),
        )
        .map_err(|e| faer_error("sparse Cholesky (symbolic)", e))?;
        Ok(CholeskyPattern {
            symbolic: Arc::new(symbolic),
            n: lower.nrows(),
            indptr: lower.indptr().to_vec(),
            indices: lower.indices().to_vec(),
        })
    }

    /// Stored entries of the factor `L` (its memory is 8 bytes each).
    pub fn factor_nnz(&self) -> usize {
        self.symbolic.len_val()
    }

    /// Numeric factorisation of a matrix with this pattern. A matrix that is not numerically
    /// positive definite is [`LinalgError::NotPositiveDefinite`].
    pub fn factor(&self, lower: &CsrMatrix) -> Result<SparseCholesky> {
        let par = parallelism();
        let (mut values, mut buffer) = self.storage(
            lower,
            "sparse Cholesky",
            self.symbolic
                .factorize_numeric_llt_scratch::<f64>(par, Default::default()),
        )?;
        let outcome = self.symbolic.factorize_numeric_llt::<f64>(
            &mut values,
            upper_view(lower),
            Side::Upper,
            LltRegularization::default(),
            par,
            MemStack::new(&mut buffer),
            Default::default(),
        );
        match outcome {
            Ok(_) => Ok(SparseCholesky {
                symbolic: self.symbolic.clone(),
                values,
                n: self.n,
            }),
            Err(LltError::NonPositivePivot { index }) => Err(LinalgError::NotPositiveDefinite { index }),
        }
    }
}

impl CholeskyPattern {
    /// The factor's values (zeroed) and the numeric factorisation's workspace (`scratch`), after
    /// checking that `lower` has the pattern of the symbolic analysis.
    fn storage(&self, lower: &CsrMatrix, op: &'static str, scratch: StackReq) -> Result<(Vec<f64>, MemBuffer)> {
        if lower.nrows() != self.n || lower.indptr() != self.indptr || lower.indices() != self.indices {
            return Err(LinalgError::InvalidCsr(
                "the matrix does not have the sparsity pattern of the symbolic analysis".into(),
            ));
        }
        let mut values = Vec::new();
        values
            .try_reserve_exact(self.symbolic.len_val())
            .map_err(|_| faer_error(op, "out of memory for the factor"))?;
        values.resize(self.symbolic.len_val(), 0.0);
        let buffer = MemBuffer::try_new(scratch).map_err(|e| faer_error(op, e))?;
        Ok((values, buffer))
    }

    /// Unpivoted `L D Lᵀ` of a symmetric (possibly indefinite) matrix with this pattern, with its
    /// [`Inertia`]. A zero pivot is [`LinalgError::Factorization`]; no other check is made, so
    /// read [`Inertia::error`] before trusting the count.
    pub fn factor_ldlt(&self, lower: &CsrMatrix) -> Result<SparseLdlt> {
        let par = parallelism();
        let (mut values, mut buffer) = self.storage(
            lower,
            "sparse LDLT",
            self.symbolic
                .factorize_numeric_ldlt_scratch::<f64>(par, Default::default()),
        )?;
        self.symbolic
            .factorize_numeric_ldlt::<f64>(
                &mut values,
                upper_view(lower),
                Side::Upper,
                LdltRegularization::default(),
                par,
                MemStack::new(&mut buffer),
                Default::default(),
            )
            .map_err(|e| faer_error("sparse LDLT (a zero pivot: the matrix is singular to rounding)", e))?;
        let inertia = ldlt_inertia(&self.symbolic, &values)?;
        Ok(SparseLdlt {
            symbolic: self.symbolic.clone(),
            values,
            n: self.n,
            inertia,
        })
    }
}

impl SparseLdlt {
    /// Symbolic and numeric factorisation of the lower triangle `lower`.
    pub fn new(lower: &CsrMatrix) -> Result<Self> {
        CholeskyPattern::new(lower)?.factor_ldlt(lower)
    }

    /// Order of the matrix.
    pub fn n(&self) -> usize {
        self.n
    }

    /// The pivots' signs and the backward-error bound.
    pub fn inertia(&self) -> Inertia {
        self.inertia
    }

    /// Overwrites the block `b` (`n × k`) with `A⁻¹ b`.
    pub fn solve_in_place(&self, b: ArrayViewMut2<'_, f64>) -> Result<()> {
        let ldlt = LdltRef::new(&self.symbolic, &self.values);
        solve_columns(&self.symbolic, "A^-1 b (sparse LDLT)", b, |x, par, stack| {
            ldlt.solve_in_place_with_conj(Conj::No, x, par, stack)
        })
    }
}

impl SparseCholesky {
    /// Symbolic and numeric factorisation of the lower triangle `lower`.
    pub fn new(lower: &CsrMatrix) -> Result<Self> {
        CholeskyPattern::new(lower)?.factor(lower)
    }

    /// Order of the matrix.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Overwrites the block `b` (`n × k`) with `A⁻¹ b`.
    pub fn solve_in_place(&self, b: ArrayViewMut2<'_, f64>) -> Result<()> {
        let llt = LltRef::new(&self.symbolic, &self.values);
        solve_columns(&self.symbolic, "A^-1 b (sparse Cholesky)", b, |x, par, stack| {
            llt.solve_in_place_with_conj(Conj::No, x, par, stack)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::Array2;

    /// Lower triangle of a dense symmetric matrix as CSR.
    fn lower(a: &Array2<f64>) -> CsrMatrix {
        let n = a.nrows();
        let t = (0..n).flat_map(|i| {
            (0..=i)
                .filter(move |&j| a[[i, j]] != 0.0)
                .map(move |j| (i, j, a[[i, j]]))
        });
        CsrMatrix::from_triplets(n, n, t.collect::<Vec<_>>()).unwrap()
    }

    /// A sparse SPD matrix: the path graph's Laplacian plus a shift, and a few long-range links.
    fn spd(n: usize, shift: f64) -> Array2<f64> {
        let mut a = Array2::zeros((n, n));
        for i in 0..n {
            a[[i, i]] += 2.0 + shift;
            if i + 1 < n {
                a[[i, i + 1]] = -1.0;
                a[[i + 1, i]] = -1.0;
            }
            if i + 7 < n && i % 3 == 0 {
                a[[i, i + 7]] = 0.5;
                a[[i + 7, i]] = 0.5;
                a[[i, i]] += 0.5;
                a[[i + 7, i + 7]] += 0.5;
            }
        }
        a
    }

    #[test]
    fn solves_match_the_dense_cholesky_to_rounding() {
        let n = 60;
        let a = spd(n, 0.1);
        let b = Array2::from_shape_fn((n, 3), |(i, j)| ((i * 7 + j * 3) % 11) as f64 - 5.0);
        let mut x = b.clone();
        SparseCholesky::new(&lower(&a))
            .unwrap()
            .solve_in_place(x.view_mut())
            .unwrap();
        let r = a.dot(&x) - &b;
        let rel = r.iter().map(|v| v * v).sum::<f64>().sqrt() / b.iter().map(|v| v * v).sum::<f64>().sqrt();
        assert!(rel <= 1e3 * f64::EPSILON, "relative residual {rel}");
        let reference = crate::dense::cholesky_solve(a.view(), b.view()).unwrap();
        let diff = (&x - &reference).iter().fold(0.0f64, |m, v| m.max(v.abs()));
        assert!(diff <= 1e-10 * reference.iter().fold(0.0f64, |m, v| m.max(v.abs())));
    }

    /// Eigenvalues of a dense symmetric matrix below zero, and the smallest distance of one to it.
    fn dense_negatives(a: &Array2<f64>) -> (usize, f64) {
        let (values, _) = crate::dense::symmetric_eigen(a.view()).unwrap();
        let gap = values.iter().fold(f64::INFINITY, |m, v| m.min(v.abs()));
        (values.iter().filter(|&&v| v < 0.0).count(), gap)
    }

    #[test]
    fn ldlt_counts_the_negative_eigenvalues_of_an_indefinite_matrix_and_solves() {
        let n = 80;
        for shift in [0.3, -0.0537, -0.4123, -1.0171, -2.5139, -5.0311] {
            let a = spd(n, shift);
            let f = SparseLdlt::new(&lower(&a)).unwrap_or_else(|e| panic!("shift {shift}: {e}"));
            let inertia = f.inertia();
            let (negatives, gap) = dense_negatives(&a);
            // The bound is tiny against ‖A‖ (about 5) and every eigenvalue is farther from
            // zero than it, so the count must be exact.
            assert!(inertia.error <= 1e-12, "shift {shift}: bound {}", inertia.error);
            assert!(gap > inertia.error, "shift {shift}: an eigenvalue within the bound");
            assert_eq!(inertia.negative, negatives, "shift {shift}");
            assert_eq!(inertia.negative + inertia.positive, n);
            let b = Array2::from_shape_fn((n, 2), |(i, j)| ((i * 5 + j) % 7) as f64 - 3.0);
            let mut x = b.clone();
            f.solve_in_place(x.view_mut()).unwrap();
            let r = a.dot(&x) - &b;
            let rel = r.iter().map(|v| v * v).sum::<f64>().sqrt() / b.iter().map(|v| v * v).sum::<f64>().sqrt();
            // κ(A) grows as the shift nears an eigenvalue; the residual stays at rounding.
            assert!(rel <= 1e-10, "shift {shift}: relative residual {rel}");
        }
    }

    /// `[τ I, −S; −Sᵀ, τ I]` has eigenvalues `τ ± σ_i(S)` (and `τ` for the extra rows), so its
    /// negative count is the number of singular values of `S` above `τ`.
    #[test]
    fn ldlt_of_a_shifted_augmented_matrix_counts_singular_values_above_the_shift() {
        let (n, m) = (50, 35);
        let mut rng = crate::random::rng_from_seed(11);
        let dense = crate::random::gaussian_matrix(&mut rng, n, m).mapv(|v| if v.abs() > 1.0 { v } else { 0.0 });
        let sigma = crate::dense::thin_svd(dense.view()).unwrap().s;
        let mut aug = Array2::zeros((n + m, n + m));
        aug.slice_mut(ndarray::s![..n, n..]).assign(&dense.mapv(|v| -v));
        aug.slice_mut(ndarray::s![n.., ..n]).assign(&dense.t().mapv(|v| -v));
        let pattern = {
            let mut p = aug.clone();
            p.diag_mut().fill(1.0);
            CholeskyPattern::new(&lower(&p)).unwrap()
        };
        let top = sigma[0];
        for frac in [1.01, 0.9, 0.6, 0.35, 0.1] {
            let tau = frac * top;
            let mut a = aug.clone();
            a.diag_mut().fill(tau);
            let inertia = pattern.factor_ldlt(&lower(&a)).unwrap().inertia();
            let above = sigma.iter().filter(|&&s| s > tau).count();
            let gap = sigma.iter().fold(f64::INFINITY, |g, s| g.min((s - tau).abs()));
            assert!(gap > inertia.error, "tau {tau}: a singular value within the bound");
            assert_eq!(inertia.negative, above, "tau = {frac} sigma_1");
        }
    }

    /// A diagonal matrix is its own factor: `L = I`, the bound is exactly `γ_2 max |a_ii|`
    /// (not the sum), and the signs are counted.
    #[test]
    fn ldlt_bound_of_a_diagonal_matrix_is_its_largest_entry() {
        let d = [3.0, -7.5, 0.25, -1.0, 2.0];
        let a = Array2::from_diag(&ndarray::arr1(&d));
        let inertia = SparseLdlt::new(&lower(&a)).unwrap().inertia();
        assert_eq!((inertia.negative, inertia.positive), (2, 3));
        let gamma2 = 2.0 * f64::EPSILON / (1.0 - 2.0 * f64::EPSILON);
        assert_eq!(inertia.error, gamma2 * 7.5);
    }

    /// On a sparse factor the bound does not grow with the order: a tridiagonal `[-1, 4, -1]` of
    /// order 20000 (trace 80000, row sums 6) gets a bound of a few ulps times 6.
    #[test]
    fn ldlt_bound_of_a_sparse_factor_follows_its_row_sums() {
        let n = 20000;
        let mut triplets = vec![];
        for i in 0..n {
            triplets.push((i, i, 4.0));
            if i > 0 {
                triplets.push((i, i - 1, -1.0));
            }
        }
        let lower = CsrMatrix::from_triplets(n, n, triplets).unwrap();
        let inertia = SparseLdlt::new(&lower).unwrap().inertia();
        assert_eq!((inertia.negative, inertia.positive), (0, n));
        assert!(inertia.error <= 100.0 * f64::EPSILON * 6.0, "bound {}", inertia.error);
    }

    /// For a positive definite `A = L D Lᵀ`, `|A| ≤ |L| |D| |Lᵀ| =: M` entry-wise and
    /// `trace M = trace A`, so the bound `γ_m min(‖M‖_∞, trace M)` lies between `γ_2 ‖A‖_∞` and
    /// `γ_{n+1} trace A`; on a dense matrix the row sum is far below the trace. Both layouts.
    #[test]
    fn ldlt_bound_lies_between_the_row_sums_and_the_trace() {
        let gamma = |m: usize| m as f64 * f64::EPSILON / (1.0 - m as f64 * f64::EPSILON);
        // A dense positive definite matrix B Bᵀ + I: faer factors it supernodally.
        let b = crate::random::gaussian_matrix(&mut crate::random::rng_from_seed(3), 300, 300);
        let dense = b.dot(&b.t()) + Array2::<f64>::eye(300);
        let mut layouts = vec![];
        for a in [spd(5, 0.2), spd(60, 0.2), spd(400, 0.2), dense] {
            let n = a.nrows();
            let f = SparseLdlt::new(&lower(&a)).unwrap();
            layouts.push(matches!(f.symbolic.raw(), SymbolicCholeskyRaw::Supernodal(_)));
            let inertia = f.inertia();
            assert_eq!((inertia.negative, inertia.positive), (0, n));
            let rows = a
                .rows()
                .into_iter()
                .map(|r| r.mapv(f64::abs).sum())
                .fold(0.0f64, f64::max);
            let trace = a.diag().sum();
            assert!(
                inertia.error >= gamma(2) * rows * (1.0 - 1e-12) && inertia.error <= gamma(n + 1) * trace,
                "n = {n}: bound {} outside [{}, {}]",
                inertia.error,
                gamma(2) * rows,
                gamma(n + 1) * trace
            );
        }
        assert!(
            layouts.contains(&true) && layouts.contains(&false),
            "both layouts: {layouts:?}"
        );
    }

    #[test]
    fn a_zero_pivot_and_a_foreign_pattern_are_typed_errors() {
        // [[0, 1], [1, 0]] is nonsingular, but its first pivot is zero without pivoting.
        let swap = CsrMatrix::from_triplets(2, 2, vec![(0, 0, 0.0), (1, 0, 1.0), (1, 1, 0.0)]).unwrap();
        assert!(matches!(SparseLdlt::new(&swap), Err(LinalgError::Factorization { .. })));
        let pattern = CholeskyPattern::new(&lower(&spd(10, 0.0))).unwrap();
        assert!(matches!(
            pattern.factor_ldlt(&lower(&spd(11, 0.0))),
            Err(LinalgError::InvalidCsr(_))
        ));
    }

    #[test]
    fn an_indefinite_matrix_is_a_typed_error_and_the_pattern_is_reused() {
        let n = 40;
        // The path Laplacian's smallest eigenvalue is 2 - 2 cos(pi/(n+1)) > 0: shifting by -1
        // makes it indefinite.
        let good = spd(n, 0.0);
        let bad = spd(n, -1.0);
        let pattern = CholeskyPattern::new(&lower(&good)).unwrap();
        assert!(pattern.factor(&lower(&good)).is_ok());
        assert!(matches!(
            pattern.factor(&lower(&bad)),
            Err(LinalgError::NotPositiveDefinite { .. })
        ));
        let mut other = spd(n, 0.0);
        other[[5, 0]] = 0.1;
        other[[0, 5]] = 0.1;
        assert!(matches!(
            pattern.factor(&lower(&other)),
            Err(LinalgError::InvalidCsr(_))
        ));
        let upper = lower(&good).transpose();
        assert!(matches!(CholeskyPattern::new(&upper), Err(LinalgError::InvalidCsr(_))));
    }
}
