//! Twin indices of a square matrix: index pairs whose transposition leaves it unchanged.
//!
//! Let `X` be square (a transformed adjacency matrix: row `i` and column `i` belong to the same
//! node). Indices `i ≠ i'` are *twins* when the permutation `P` swapping them satisfies
//! `P X Pᵀ = X`. [`Twins::of_square`] finds the twins whose rows agree outside their own two
//! columns, whose columns agree outside their own two rows, with equal diagonal entries and no
//! entry between them (`X[i, i'] = X[i', i] = 0`). Those are classes of an equivalence: for
//! directed graphs, the nodes with the same in-neighbours and the same out-neighbours (for
//! example the uncited papers cited by the same single paper).
//!
//! Every matrix `M` built from `X` by a rule that commutes with permutations (`X` itself, a
//! column-centred `X`, a kernel `M_ab = k(x_a, z_b)` of the rows `x_a` and columns `z_b` of
//! `X` with a permutation-invariant kernel, any centring of `M`) satisfies `P M Pᵀ = M` for the
//! same `P`. For a class `C` of `c` twins that splits `M` exactly:
//!
//! * every vector supported on `C` whose entries sum to zero satisfies `M w = λ_C w` and
//!   `Mᵀ w = λ_C w` with `λ_C = M[i, i] − M[i, i']`: `c − 1` singular triplets
//!   `(|λ_C|, sign(λ_C) w, w)` known without a solver;
//! * the vectors constant on every class form an invariant subspace, with orthonormal basis
//!   `Q` ([`Twins::expand`] applies `Q`, [`Twins::reduce`] applies `Qᵀ`), and the remaining
//!   triplets are those of the smaller matrix `Qᵀ M Q` ([`TwinReduced`]) mapped by `Q`.
//!
//! Solvers use this to remove exactly repeated singular values, which block Krylov methods
//! resolve only slowly, before they start (`ksvd_solvers::twin_split_svd`).
use std::collections::HashMap;

use ndarray::{Array2, ArrayView2, ArrayViewMut2, Axis};

use crate::csr::CsrMatrix;
use crate::error::{LinalgError, Result};
use crate::operator::{LinearOperator, SparsePlusLowRank};

/// The twin classes of a square matrix and the reduction they define (see the module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct Twins {
    n: usize,
    /// Classes of at least two twins, each sorted; classes sorted by their first index.
    classes: Vec<Vec<usize>>,
    /// Reduced index of every original index.
    reduced_of: Vec<usize>,
    /// `1 / sqrt(size of the class)` of every reduced index (1 for an index without twin).
    weight: Vec<f64>,
}

impl Twins {
    /// The twin classes of the square matrix `x` (exact equality of values).
    ///
    /// # Errors
    /// [`LinalgError::ShapeMismatch`] when `x` is not square.
    pub fn of_square(x: &CsrMatrix) -> Result<Twins> {
        let n = x.nrows();
        if x.ncols() != n {
            return Err(LinalgError::ShapeMismatch {
                op: "twins of a square matrix",
                left: x.shape(),
                right: x.shape(),
            });
        }
        let xt = x.transpose();
        // Row i outside column i, column i outside row i, and the diagonal: equal signatures
        // mean twins. Neither signature of i' can hold index i', so equal signatures also
        // exclude entries between the two.
        type Entries = Vec<(usize, u64)>;
        let off = |m: &CsrMatrix, i: usize| -> Entries {
            let (idx, val) = m.row(i);
            idx.iter()
                .zip(val)
                .filter(|&(&j, &v)| j != i && v != 0.0)
                .map(|(&j, &v)| (j, v.to_bits()))
                .collect()
        };
        let mut groups: HashMap<(Entries, Entries, u64), Vec<usize>> = HashMap::new();
        for i in 0..n {
            let diag = x.get(i, i).unwrap_or(0.0);
            // -0.0 and 0.0 are the same entry.
            let diag = if diag == 0.0 { 0u64 } else { diag.to_bits() };
            groups.entry((off(x, i), off(&xt, i), diag)).or_default().push(i);
        }
        let mut classes: Vec<Vec<usize>> = groups.into_values().filter(|c| c.len() > 1).collect();
        for c in &mut classes {
            c.sort_unstable();
        }
        classes.sort_unstable_by_key(|c| c[0]);
        Ok(Twins::from_classes_unchecked(n, classes))
    }

    /// Twins given as classes (each of at least two distinct indices below `n`, no index in
    /// two classes). The classes are not checked against a matrix: solvers verify the
    /// symmetry on the operator itself.
    ///
    /// # Errors
    /// [`LinalgError::IndexOutOfBounds`] for an index `≥ n`, [`LinalgError::OperatorFailed`]
    /// for a class of fewer than two indices or an index in two classes.
    pub fn from_classes(n: usize, classes: Vec<Vec<usize>>) -> Result<Twins> {
        let mut seen = vec![false; n];
        for c in &classes {
            crate::operator::check_indices("twin", c, n)?;
            if c.len() < 2 {
                return Err(invalid(format!("a twin class needs at least two indices, got {c:?}")));
            }
            for &i in c {
                if std::mem::replace(&mut seen[i], true) {
                    return Err(invalid(format!("index {i} is in two twin classes")));
                }
            }
        }
        let mut classes = classes;
        for c in &mut classes {
            c.sort_unstable();
        }
        classes.sort_unstable_by_key(|c| c[0]);
        Ok(Twins::from_classes_unchecked(n, classes))
    }

    fn from_classes_unchecked(n: usize, classes: Vec<Vec<usize>>) -> Twins {
        let mut class_of = vec![None; n];
        for (c, members) in classes.iter().enumerate() {
            for &i in members {
                class_of[i] = Some(c);
            }
        }
        // A class gets its reduced index at its first (smallest) member, met first in this order.
        let mut reduced_of = vec![0; n];
        let mut weight = Vec::new();
        let mut class_index = vec![0; classes.len()];
        for i in 0..n {
            reduced_of[i] = match class_of[i] {
                None => {
                    weight.push(1.0);
                    weight.len() - 1
                }
                Some(c) if classes[c][0] == i => {
                    weight.push(1.0 / (classes[c].len() as f64).sqrt());
                    class_index[c] = weight.len() - 1;
                    class_index[c]
                }
                Some(c) => class_index[c],
            };
        }
        Twins {
            n,
            classes,
            reduced_of,
            weight,
        }
    }

    /// Size `n` of the matrix.
    pub fn dim(&self) -> usize {
        self.n
    }
    /// The classes (at least two indices each, sorted).
    pub fn classes(&self) -> &[Vec<usize>] {
        &self.classes
    }
    /// Number of exactly known singular triplets, `Σ (|C| − 1)`.
    pub fn n_twin_triplets(&self) -> usize {
        self.classes.iter().map(|c| c.len() - 1).sum()
    }
    /// Dimension of the reduced matrix, `n − Σ (|C| − 1)`.
    pub fn reduced_dim(&self) -> usize {
        self.weight.len()
    }
    /// `true` when there is no class.
    pub fn is_empty(&self) -> bool {
        self.classes.is_empty()
    }

    /// `Qᵀ x` (`n × k` to `reduced_dim × k`): sums over each class, scaled by `1/sqrt(|C|)`.
    ///
    /// # Errors
    /// [`LinalgError::ShapeMismatch`] when `x` has not `n` rows.
    pub fn reduce(&self, x: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        self.check_rows("Qᵀ x", x.nrows(), self.n)?;
        let mut out = Array2::zeros((self.reduced_dim(), x.ncols()));
        self.reduce_into(x, out.view_mut());
        Ok(out)
    }

    /// `Q y` (`reduced_dim × k` to `n × k`): every member of a class gets its value scaled by
    /// `1/sqrt(|C|)`.
    ///
    /// # Errors
    /// [`LinalgError::ShapeMismatch`] when `y` has not `reduced_dim` rows.
    pub fn expand(&self, y: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        self.check_rows("Q y", y.nrows(), self.reduced_dim())?;
        let mut out = Array2::zeros((self.n, y.ncols()));
        self.expand_into(y, out.view_mut());
        Ok(out)
    }

    fn reduce_into(&self, x: ArrayView2<'_, f64>, mut out: ArrayViewMut2<'_, f64>) {
        out.fill(0.0);
        for (i, row) in x.axis_iter(Axis(0)).enumerate() {
            let r = self.reduced_of[i];
            let w = self.weight[r];
            out.row_mut(r).scaled_add(w, &row);
        }
    }

    fn expand_into(&self, y: ArrayView2<'_, f64>, mut out: ArrayViewMut2<'_, f64>) {
        for (i, mut row) in out.axis_iter_mut(Axis(0)).enumerate() {
            let r = self.reduced_of[i];
            row.assign(&y.row(r));
            row *= self.weight[r];
        }
    }

    fn check_rows(&self, op: &'static str, rows: usize, want: usize) -> Result<()> {
        if rows == want {
            Ok(())
        } else {
            Err(LinalgError::ShapeMismatch {
                op,
                left: (want, want),
                right: (rows, 0),
            })
        }
    }

    /// An orthonormal basis (`|C| × (|C| − 1)`, Helmert's) of the vectors on class `c` whose
    /// entries sum to zero: column `j` is `(1, …, 1, −(j + 1), 0, …) / sqrt((j + 1)(j + 2))`.
    ///
    /// # Panics
    /// When `c` is not a class index (`c < classes().len()`).
    pub fn class_basis(&self, c: usize) -> Array2<f64> {
        let size = self.classes[c].len();
        let mut b = Array2::zeros((size, size - 1));
        for j in 0..size - 1 {
            let k = (j + 1) as f64;
            let s = 1.0 / (k * (k + 1.0)).sqrt();
            for i in 0..=j {
                b[[i, j]] = s;
            }
            b[[j + 1, j]] = -k * s;
        }
        b
    }

    /// The reduced operator `Qᵀ M Q` of a square operator `M` with these twins. When `M` is
    /// sparse plus low rank (`S + L Rᵀ`, [`LinearOperator::sparse_plus_low_rank`]), so is the
    /// reduced operator, `Qᵀ S Q + (Qᵀ L)(Qᵀ R)ᵀ`, built here in one pass over `S`.
    ///
    /// # Errors
    /// [`LinalgError::ShapeMismatch`] when `M` is not `n × n`.
    pub fn reduced<'a, O: LinearOperator + ?Sized>(&'a self, op: &'a O) -> Result<TwinReduced<'a, O>> {
        if op.nrows() != self.n || op.ncols() != self.n {
            return Err(LinalgError::ShapeMismatch {
                op: "Qᵀ M Q",
                left: (op.nrows(), op.ncols()),
                right: (self.n, self.n),
            });
        }
        let structure = match op.sparse_plus_low_rank() {
            Some(spl) => Some(ReducedStructure {
                sparse: self.reduce_sparse(spl.sparse)?,
                left: self.reduce(spl.left.view())?,
                right: self.reduce(spl.right.view())?,
            }),
            None => None,
        };
        Ok(TwinReduced {
            twins: self,
            op,
            structure,
        })
    }

    /// `Qᵀ S Q` of a sparse `n × n` matrix: entries summed over pairs of classes, scaled by
    /// `1/sqrt(|C| |C'|)` (sparse again: `Q`'s columns are unit vectors and scaled class
    /// indicators).
    fn reduce_sparse(&self, s: &CsrMatrix) -> Result<CsrMatrix> {
        let d = self.reduced_dim();
        let mut triplets = Vec::with_capacity(s.nnz());
        for i in 0..s.nrows() {
            let ri = self.reduced_of[i];
            let (cols, vals) = s.row(i);
            for (&j, &v) in cols.iter().zip(vals) {
                let rj = self.reduced_of[j];
                triplets.push((ri, rj, v * self.weight[ri] * self.weight[rj]));
            }
        }
        CsrMatrix::from_triplets(d, d, triplets)
    }
}

fn invalid(reason: String) -> LinalgError {
    LinalgError::OperatorFailed {
        operator: "twin classes",
        reason,
    }
}

/// `Qᵀ M Q`: a square operator restricted to the vectors constant on every twin class (see
/// the module docs), `reduced_dim × reduced_dim`.
#[derive(Debug, Clone)]
pub struct TwinReduced<'a, O: ?Sized> {
    twins: &'a Twins,
    op: &'a O,
    /// `Qᵀ S Q + (Qᵀ L)(Qᵀ R)ᵀ` when `M = S + L Rᵀ` (sparse plus low rank again).
    structure: Option<ReducedStructure>,
}

/// The reduced sparse-plus-low-rank form of a [`TwinReduced`].
#[derive(Debug, Clone)]
struct ReducedStructure {
    sparse: CsrMatrix,
    left: Array2<f64>,
    right: Array2<f64>,
}

impl<O: LinearOperator + ?Sized> TwinReduced<'_, O> {
    fn product(&self, x: ArrayView2<'_, f64>, out: ArrayViewMut2<'_, f64>, transpose: bool) -> Result<()> {
        let n = self.twins.n;
        let mut wide = Array2::zeros((n, x.ncols()));
        self.twins.expand_into(x, wide.view_mut());
        let mut image = Array2::zeros((n, x.ncols()));
        if transpose {
            self.op.apply_transpose_into(wide.view(), image.view_mut())?;
        } else {
            self.op.apply_into(wide.view(), image.view_mut())?;
        }
        self.twins.reduce_into(image.view(), out);
        Ok(())
    }
}

impl<O: LinearOperator + ?Sized> LinearOperator for TwinReduced<'_, O> {
    fn nrows(&self) -> usize {
        self.twins.reduced_dim()
    }
    fn ncols(&self) -> usize {
        self.twins.reduced_dim()
    }
    fn apply_into(&self, x: ArrayView2<'_, f64>, out: ArrayViewMut2<'_, f64>) -> Result<()> {
        self.product(x, out, false)
    }
    fn apply_transpose_into(&self, x: ArrayView2<'_, f64>, out: ArrayViewMut2<'_, f64>) -> Result<()> {
        self.product(x, out, true)
    }
    /// `Qᵀ S Q + (Qᵀ L)(Qᵀ R)ᵀ` when the operator is `S + L Rᵀ`.
    fn sparse_plus_low_rank(&self) -> Option<SparsePlusLowRank<'_>> {
        self.structure.as_ref().map(|s| SparsePlusLowRank {
            sparse: &s.sparse,
            left: s.left.clone(),
            right: s.right.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    /// Node 0 cites 1, 2, 3 (uncited otherwise) and 4; node 5 cites 4; self-loops everywhere.
    fn graph() -> CsrMatrix {
        let mut t = vec![(0, 1, 0.25), (0, 2, 0.25), (0, 3, 0.25), (0, 4, 0.25), (5, 4, 0.5)];
        for i in 0..6 {
            t.push((
                i,
                i,
                if i == 0 {
                    0.25
                } else if i == 5 {
                    0.5
                } else {
                    1.0
                },
            ));
        }
        CsrMatrix::from_triplets(6, 6, t).unwrap()
    }

    #[test]
    fn finds_the_uncited_papers_with_one_common_citer() {
        let t = Twins::of_square(&graph()).unwrap();
        assert_eq!(t.classes(), &[vec![1, 2, 3]]);
        assert_eq!((t.reduced_dim(), t.n_twin_triplets()), (4, 2));
        // Node 4 has a different citer set, node 0 and 5 different rows.
        let q = t.expand(Array2::eye(4).view()).unwrap();
        let qtq = q.t().dot(&q);
        assert!((qtq - Array2::<f64>::eye(4)).iter().all(|d| d.abs() < 1e-15));
        let b = t.class_basis(0);
        let btb = b.t().dot(&b);
        assert!((btb - Array2::<f64>::eye(2)).iter().all(|d| d.abs() < 1e-15));
        assert!(b.sum_axis(Axis(0)).iter().all(|s| s.abs() < 1e-15));
    }

    #[test]
    fn twins_leave_the_matrix_unchanged_and_reduce_it_exactly() {
        let x = graph();
        let dense = x.to_dense();
        let t = Twins::of_square(&x).unwrap();
        for c in t.classes() {
            for w in c.windows(2) {
                let mut p: Vec<usize> = (0..6).collect();
                p.swap(w[0], w[1]);
                let swapped = Array2::from_shape_fn((6, 6), |(a, b)| dense[[p[a], p[b]]]);
                assert_eq!(swapped, dense);
            }
        }
        // Qᵀ M Q against the dense product, both ways.
        let q = t.expand(Array2::eye(4).view()).unwrap();
        let want = q.t().dot(&dense).dot(&q);
        let red = t.reduced(&x).unwrap();
        let got = red.to_dense().unwrap();
        assert!((&got - &want).iter().all(|d| d.abs() < 1e-15));
        let got_t = red.apply_transpose(Array2::eye(4).view()).unwrap();
        assert!((&got_t - &want.t()).iter().all(|d| d.abs() < 1e-15));
        // A sparse matrix reduces to a sparse one (no low-rank term).
        let structure = red.sparse_plus_low_rank().unwrap();
        assert_eq!(structure.left.ncols(), 0);
        assert!((&structure.sparse.to_dense() - &want).iter().all(|d| d.abs() < 1e-15));
    }

    #[test]
    fn entries_between_twins_or_different_values_break_the_symmetry() {
        // 1 -> 2 (and back) links two uncited papers: the swap of 1 and 2 still leaves the
        // matrix unchanged, but linked twins are not searched for, and 3 now differs from both.
        let mut t = graph().to_dense();
        t[[1, 2]] = 1.0;
        t[[2, 1]] = 1.0;
        let twins = Twins::of_square(&CsrMatrix::from_dense(t.view()).unwrap()).unwrap();
        assert!(twins.is_empty());
        // A different diagonal value separates 3.
        let mut d = graph().to_dense();
        d[[3, 3]] = 0.5;
        let twins = Twins::of_square(&CsrMatrix::from_dense(d.view()).unwrap()).unwrap();
        assert_eq!(twins.classes(), &[vec![1, 2]]);
    }

    #[test]
    fn bad_input_is_a_typed_error() {
        let rect = CsrMatrix::from_dense(array![[1.0, 0.0]].view()).unwrap();
        assert!(matches!(
            Twins::of_square(&rect),
            Err(LinalgError::ShapeMismatch { .. })
        ));
        assert!(matches!(
            Twins::from_classes(3, vec![vec![0, 3]]),
            Err(LinalgError::IndexOutOfBounds { .. })
        ));
        assert!(Twins::from_classes(3, vec![vec![0]]).is_err());
        assert!(Twins::from_classes(4, vec![vec![0, 1], vec![1, 2]]).is_err());
        let t = Twins::from_classes(4, vec![vec![2, 0]]).unwrap();
        assert_eq!(t.classes(), &[vec![0, 2]]);
        assert!(t.reduce(Array2::zeros((3, 1)).view()).is_err());
        assert!(t.expand(Array2::zeros((4, 1)).view()).is_err());
        assert!(t.reduced(&rect).is_err());
    }
}
