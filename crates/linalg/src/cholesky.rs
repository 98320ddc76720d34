//! Sparse Cholesky factorisation (faer's supernodal/simplicial `LLᵀ` with an AMD ordering) of a
//! symmetric matrix given by its lower triangle in CSR form. Its success is itself a
//! certificate: the matrix is (numerically) positive definite, which spectral transformations
//! use to count eigenvalues above a shift.
use crate::csr::CsrMatrix;
use crate::dense::{as_faer_mut, parallelism};
use crate::error::{LinalgError, Result};
use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::cholesky::llt::factor::LltRegularization;
use faer::linalg::solvers::LltError;
use faer::sparse::linalg::cholesky::{factorize_symbolic_cholesky, LltRef, SymbolicCholesky};
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
        if lower.nrows() != self.n || lower.indptr() != self.indptr || lower.indices() != self.indices {
            return Err(LinalgError::InvalidCsr(
                "the matrix does not have the sparsity pattern of the symbolic analysis".into(),
            ));
        }
        let par = parallelism();
        let mut values = Vec::new();
        values
            .try_reserve_exact(self.symbolic.len_val())
            .map_err(|_| faer_error("sparse Cholesky", "out of memory for the factor"))?;
        values.resize(self.symbolic.len_val(), 0.0);
        let mut buffer = MemBuffer::try_new(
            self.symbolic
                .factorize_numeric_llt_scratch::<f64>(par, Default::default()),
        )
        .map_err(|e| faer_error("sparse Cholesky", e))?;
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
    pub fn solve_in_place(&self, mut b: ArrayViewMut2<'_, f64>) -> Result<()> {
        if b.nrows() != self.n {
            return Err(LinalgError::ShapeMismatch {
                op: "A^-1 b (sparse Cholesky)",
                left: (self.n, self.n),
                right: b.dim(),
            });
        }
        // A solve is one pass over the factor, bound by memory. faer's parallel supernodal solve
        // took 0.33 s per call on Pubmed's shifted augmented matrix (order 39434, 3.9e6 factor
        // entries, 2 threads) against 0.01 s sequentially, so it runs sequentially.
        let par = Par::Seq;
        let mut buffer = MemBuffer::try_new(self.symbolic.solve_in_place_scratch::<f64>(b.ncols(), par))
            .map_err(|e| faer_error("sparse Cholesky solve", e))?;
        let llt = LltRef::new(&self.symbolic, &self.values);
        // The supernodal solve walks columns of the right-hand side: give it contiguous ones.
        if b.ncols() <= 1 || b.t().is_standard_layout() {
            llt.solve_in_place_with_conj(Conj::No, as_faer_mut(b), par, MemStack::new(&mut buffer));
        } else {
            let mut cols = Array2::zeros(b.raw_dim().f());
            cols.assign(&b);
            llt.solve_in_place_with_conj(Conj::No, as_faer_mut(cols.view_mut()), par, MemStack::new(&mut buffer));
            b.assign(&cols);
        }
        Ok(())
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
