//! Top-`r` SVD of a square operator with twin indices: exactly repeated singular values split
//! off without a solver, the rest from the smaller reduced operator.
//!
//! Graph kernels have many exactly repeated singular values: every class of `c` twin nodes
//! (`ksvd_linalg::Twins`, e.g. the uncited papers cited by the same single paper) contributes
//! `c − 1` copies of `|M[i, i] − M[i, i']|`. A block Krylov method resolves such a value only as
//! many times as its block is wide (more copies appear only through rounding), so a flat
//! spectrum of large clusters stalls it. [`twin_split_svd`] takes those triplets from the
//! symmetry instead, solves `Qᵀ M Q` (one index per class) with any solver, merges both sets
//! and certifies the merged result against `M` itself.
use ksvd_linalg::{LinearOperator, TwinReduced, Twins};
use ndarray::{Array1, Array2};

use crate::error::{Result, SolverError};
use crate::svd::{check_rank, residual_norm, SvdResult};

/// Where a merged triplet comes from.
#[derive(Debug, Clone, Copy)]
enum Source {
    /// Triplet `i` of the reduced solve.
    Reduced(usize),
    /// Helmert vector `copy` of twin class `class`.
    Twin { class: usize, copy: usize },
}

/// Twin classes tested per block product.
const CHUNK: usize = 256;

/// What [`twin_split_svd`] did.
#[derive(Debug, Clone, PartialEq)]
pub struct TwinSplitInfo {
    /// Twin classes of the operator.
    pub classes: usize,
    /// Exactly known triplets (`Σ (|C| − 1)`).
    pub twin_triplets: usize,
    /// Dimension of the reduced operator.
    pub reduced_dim: usize,
    /// Rank asked of the reduced solve.
    pub reduced_rank: usize,
    /// Returned triplets that came from twin classes.
    pub twin_triplets_used: usize,
    /// Largest relative residual of the twin check, `max(‖M w − λ w‖, ‖Mᵀ w − λ w‖) / s_1`.
    pub twin_residual: f64,
    /// `true` when a singular value known beyond the rank (a twin value, or one of the reduced
    /// solve's) equals the last returned one within `tol · s_1`: the top-`r` subspace is then not
    /// unique, and the result holds one basis of it. (`false` does not exclude a value of the
    /// reduced operator beyond its own rank that ties.)
    pub split_cluster: bool,
}

/// The top-`rank` singular triplets of the square operator `op`, whose twins are `twins`.
///
/// 1. Each class's value `λ_C` is read from one product with a test vector `w` on the class
///    (entries summing to zero); `‖M w − λ_C w‖` and `‖Mᵀ w − λ_C w‖` above `tol · s_1` mean
///    the operator does not have these twins ([`SolverError::NotInvariant`]).
/// 2. `solve(Qᵀ M Q, k)` gives the triplets of the reduced operator, `k = min(rank,
///    reduced_dim)`; they map to `M`'s by `Q`.
/// 3. Both sets are merged by value and the top `rank` kept (twin vectors: Helmert's basis of
///    each class); ties keep the reduced triplets first. The residuals are computed against `op`.
///
/// # Errors
/// [`SolverError::InvalidRank`] / [`SolverError::Empty`], [`SolverError::InvalidParameter`]
/// for `tol` not positive and finite, [`SolverError::ShapeMismatch`] when `op` is not square of
/// the twins' size, [`SolverError::NotInvariant`], and `solve`'s errors.
pub fn twin_split_svd<O, F, E>(
    op: &O,
    twins: &Twins,
    rank: usize,
    tol: f64,
    solve: F,
) -> std::result::Result<(SvdResult, TwinSplitInfo), E>
where
    O: LinearOperator + ?Sized,
    F: FnOnce(&TwinReduced<'_, O>, usize) -> std::result::Result<SvdResult, E>,
    E: From<SolverError>,
{
    let (pre, reduced) = twin_values(op, twins, rank, tol)?;
    let red = solve(&reduced, rank.min(twins.reduced_dim()))?;
    Ok(merge(op, twins, rank, tol, pre, red)?)
}

/// The twin classes' values `λ_C` and test residuals (step 1), and the reduced operator.
struct TwinValues {
    lambda: Vec<f64>,
    residual: Vec<f64>,
}

fn twin_values<'a, O: LinearOperator + ?Sized>(
    op: &'a O,
    twins: &'a Twins,
    rank: usize,
    tol: f64,
) -> Result<(TwinValues, TwinReduced<'a, O>)> {
    let n = op.nrows();
    check_rank(n, op.ncols(), rank)?;
    crate::lanczos::check_tol(tol)?;
    if op.ncols() != n || twins.dim() != n {
        return Err(SolverError::ShapeMismatch {
            what: format!(
                "twins of a {d} x {d} matrix for a {n} x {m} operator",
                d = twins.dim(),
                m = op.ncols()
            ),
        });
    }
    let classes = twins.classes();
    // 1. One test vector per class: the Helmert columns weighted by 1/sqrt(j + 1), normalised,
    //    so that every direction of the class's zero-sum space is exercised. Classes go in
    //    chunks, so that the blocks stay small (`n × CHUNK`).
    let q = classes.len();
    let mut lambda = Vec::with_capacity(q);
    let mut twin_res = Vec::with_capacity(q);
    for start in (0..q).step_by(CHUNK) {
        let chunk = start..(start + CHUNK).min(q);
        let mut w = Array2::zeros((n, chunk.len()));
        for (col, c) in chunk.clone().enumerate() {
            let members = &classes[c];
            let b = twins.class_basis(c);
            let mut t = Array1::zeros(members.len());
            for j in 0..b.ncols() {
                t.scaled_add(1.0 / ((j + 1) as f64).sqrt(), &b.column(j));
            }
            let norm = t.dot(&t).sqrt();
            for (k, &i) in members.iter().enumerate() {
                w[[i, col]] = t[k] / norm;
            }
        }
        let mw = op.apply(w.view())?;
        let mtw = op.apply_transpose(w.view())?;
        for col in 0..chunk.len() {
            let wc = w.column(col);
            let l = wc.dot(&mw.column(col));
            let left = residual_norm(mw.column(col), wc, l);
            let right = residual_norm(mtw.column(col), wc, l);
            lambda.push(l);
            twin_res.push(left.max(right));
        }
    }

    let reduced = twins.reduced(op)?;
    Ok((
        TwinValues {
            lambda,
            residual: twin_res,
        },
        reduced,
    ))
}

/// Steps 2 (checked) and 3: the merged, certified result.
fn merge<O: LinearOperator + ?Sized>(
    op: &O,
    twins: &Twins,
    rank: usize,
    tol: f64,
    pre: TwinValues,
    red: SvdResult,
) -> Result<(SvdResult, TwinSplitInfo)> {
    let n = op.nrows();
    let classes = twins.classes();
    let q = classes.len();
    let reduced_rank = red.rank();
    let TwinValues {
        lambda,
        residual: twin_res,
    } = pre;
    if red.u.nrows() != twins.reduced_dim() || red.v.nrows() != twins.reduced_dim() {
        return Err(SolverError::ShapeMismatch {
            what: "the reduced solve returned vectors of the wrong length".into(),
        });
    }
    let s1 = red.s.iter().chain(lambda.iter()).fold(0.0f64, |a, &b| a.max(b.abs()));
    let scale = if s1 > 0.0 { 1.0 / s1 } else { 1.0 };
    let mut twin_residual = 0.0f64;
    for (c, &r) in twin_res.iter().enumerate() {
        let rel = r * scale;
        twin_residual = twin_residual.max(rel);
        if rel.is_nan() || rel > tol {
            return Err(SolverError::NotInvariant {
                first: classes[c][0],
                second: classes[c][1],
                residual: rel,
            });
        }
    }

    // 3. Merge by value.
    let mut all: Vec<(f64, Source)> = red
        .s
        .iter()
        .enumerate()
        .map(|(i, &v)| (v, Source::Reduced(i)))
        .collect();
    for (c, members) in classes.iter().enumerate() {
        for copy in 0..members.len() - 1 {
            all.push((lambda[c].abs(), Source::Twin { class: c, copy }));
        }
    }
    // Stable sort by value, descending: ties keep the reduced triplets first.
    all.sort_by(|a, b| b.0.total_cmp(&a.0));
    let split_cluster = all.len() > rank && (all[rank - 1].0 - all[rank].0).abs() <= tol * s1;
    all.truncate(rank);
    let twin_triplets_used = all.iter().filter(|(_, src)| matches!(src, Source::Twin { .. })).count();

    let ru = twins.expand(red.u.view())?;
    let rv = twins.expand(red.v.view())?;
    let mut u = Array2::zeros((n, rank));
    let mut v = Array2::zeros((n, rank));
    let mut values = Array1::zeros(rank);
    let mut bases: Vec<Option<Array2<f64>>> = vec![None; q];
    for (col, (value, src)) in all.iter().enumerate() {
        values[col] = *value;
        match *src {
            Source::Reduced(i) => {
                u.column_mut(col).assign(&ru.column(i));
                v.column_mut(col).assign(&rv.column(i));
            }
            Source::Twin { class: c, copy } => {
                let b = bases[c].get_or_insert_with(|| twins.class_basis(c));
                let sign = if lambda[c] < 0.0 { -1.0 } else { 1.0 };
                for (row, &i) in classes[c].iter().enumerate() {
                    v[[i, col]] = b[[row, copy]];
                    u[[i, col]] = sign * b[[row, copy]];
                }
            }
        }
    }
    let mut result = SvdResult::new(u, values, v);
    result.normalize_signs();
    let result = result.certify(op)?;
    let info = TwinSplitInfo {
        classes: q,
        twin_triplets: twins.n_twin_triplets(),
        reduced_dim: twins.reduced_dim(),
        reduced_rank,
        twin_triplets_used,
        twin_residual,
        split_cluster,
    };
    Ok((result, info))
}
