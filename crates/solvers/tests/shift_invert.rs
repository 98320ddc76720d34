//! Shift-invert subspace iteration on sparse-plus-low-rank matrices: agreement with a dense SVD
//! on repeated singular values (the case Krylov blocks cannot certify), the exact count of values
//! above the shift, orthonormality, and bad input.
mod common;
use common::*;
use ksvd_linalg::random::{gaussian_matrix, rng_from_seed};
use ksvd_linalg::{CsrMatrix, LinearOperator, MemoryBudget, SparsePlusLowRank};
use ksvd_solvers::*;
use ndarray::{Array2, ArrayView2, ArrayViewMut2};

/// `G = S + L Rᵀ`, multiplied densely (the reference) and exposing its structure.
struct Structured {
    s: CsrMatrix,
    l: Array2<f64>,
    r: Array2<f64>,
    dense: Array2<f64>,
}

impl Structured {
    fn new(s: CsrMatrix, l: Array2<f64>, r: Array2<f64>) -> Self {
        let dense = s.to_dense() + l.dot(&r.t());
        Structured { s, l, r, dense }
    }
}

impl LinearOperator for Structured {
    fn nrows(&self) -> usize {
        self.dense.nrows()
    }
    fn ncols(&self) -> usize {
        self.dense.ncols()
    }
    fn apply_into(&self, x: ArrayView2<'_, f64>, mut out: ArrayViewMut2<'_, f64>) -> ksvd_linalg::Result<()> {
        out.assign(&self.dense.dot(&x));
        Ok(())
    }
    fn apply_transpose_into(&self, x: ArrayView2<'_, f64>, mut out: ArrayViewMut2<'_, f64>) -> ksvd_linalg::Result<()> {
        out.assign(&self.dense.t().dot(&x));
        Ok(())
    }
    fn sparse_plus_low_rank(&self) -> Option<SparsePlusLowRank<'_>> {
        Some(SparsePlusLowRank {
            sparse: &self.s,
            left: self.l.clone(),
            right: self.r.clone(),
        })
    }
}

/// The 3 × 3 block whose copies make the repeated (or, scaled, clustered) values.
const BLOCK: [[f64; 3]; 3] = [[2.0, 1.0, 0.0], [0.0, 1.5, 0.5], [0.3, 0.0, 1.0]];

/// Triplets of copies of [`BLOCK`] on the diagonal, copy `c` scaled by `factors[c]`.
fn scaled_copies(factors: &[f64]) -> Vec<(usize, usize, f64)> {
    let mut t = Vec::new();
    for (c, &f) in factors.iter().enumerate() {
        for (i, row) in BLOCK.iter().enumerate() {
            for (j, &v) in row.iter().enumerate() {
                if v != 0.0 {
                    t.push((3 * c + i, 3 * c + j, f * v));
                }
            }
        }
    }
    t
}

/// Block diagonal: `copies` identical 3 × 3 blocks (every singular value of the block repeated
/// `copies` times) followed by `others` random 3 × 3 blocks scaled by `scale` (distinct values,
/// below the repeated ones when `scale` is small).
fn block_diagonal(copies: usize, others: usize, scale: f64, seed: u64) -> CsrMatrix {
    let mut rng = rng_from_seed(seed);
    let random = gaussian_matrix(&mut rng, 3 * others.max(1), 3);
    let mut t = scaled_copies(&vec![1.0; copies]);
    for o in 0..others {
        for i in 0..3 {
            for j in 0..3 {
                let b = copies + o;
                t.push((3 * b + i, 3 * b + j, scale * random[[3 * o + i, j]]));
            }
        }
    }
    let n = 3 * (copies + others);
    CsrMatrix::from_triplets(n, n, t).unwrap()
}

/// Checks a shift-invert result against the dense SVD: values, residuals, orthonormality and the
/// count of values above the shift.
fn check_against_dense(g: &Structured, rank: usize, tol: f64) -> ShiftInvertInfo {
    let params = ShiftInvertParams {
        tol,
        ..ShiftInvertParams::default()
    };
    let (r, info) = shift_invert_svd(g, rank, &params).unwrap();
    let exact = dense_svd(g.dense.view(), g.dense.nrows().min(g.dense.ncols())).unwrap();
    let s1 = exact.s[0];
    for i in 0..rank {
        assert!(
            (r.s[i] - exact.s[i]).abs() <= 10.0 * tol * s1,
            "value {i}: {} vs dense {}",
            r.s[i],
            exact.s[i]
        );
    }
    assert!(explicit_residual(&g.dense, &r) <= tol);
    assert!(r.max_residual().unwrap() <= tol);
    assert!(orthonormality_error(&r.u) <= 1e-12);
    assert!(orthonormality_error(&r.v) <= 1e-12);
    let above = exact.s.iter().filter(|&&x| x > info.count_shift).count();
    assert_eq!(
        (info.above_shift, info.above_shift_max),
        (above, above),
        "inertia count against the dense spectrum"
    );
    info
}

/// Eight copies of the block's values and twelve random blocks (scaled by 0.3), plus a positive
/// rank-one term.
fn eight_copies_and_a_rank_one_term() -> Structured {
    let s = block_diagonal(8, 12, 0.3, 1);
    let n = s.nrows();
    let mut rng = rng_from_seed(7);
    let l = gaussian_matrix(&mut rng, n, 1).mapv(f64::abs);
    let r = gaussian_matrix(&mut rng, n, 1).mapv(f64::abs);
    Structured::new(s, l, r)
}

#[test]
fn a_value_repeated_beyond_the_rank_is_returned_in_full_with_a_rank_one_term() {
    // Eight copies of the block's values; the rank-one term adds one value above them all
    // and moves at most two copies of each (interlacing), so the top six are σ_1 of G and five
    // copies of the block's largest value.
    let g = eight_copies_and_a_rank_one_term();
    let info = check_against_dense(&g, 6, 1e-10);
    assert_eq!(info.above_shift, 1);
}

#[test]
fn a_sparse_matrix_alone_has_no_value_above_the_shift() {
    let s = block_diagonal(5, 10, 0.4, 3);
    let n = s.nrows();
    let g = Structured::new(s, Array2::zeros((n, 0)), Array2::zeros((n, 0)));
    let info = check_against_dense(&g, 4, 1e-10);
    assert_eq!(info.above_shift, 0);
    // CsrMatrix exposes the same structure itself (k = 0).
    let (r, _) = shift_invert_svd(&g.s, 4, &ShiftInvertParams::default()).unwrap();
    assert!(r.max_residual().unwrap() <= 1e-10);
}

#[test]
fn a_rank_three_term_like_a_centred_kernel_is_counted_exactly() {
    // Twelve copies: a rank-three term moves at most six of them, so at least six remain below
    // the shift beside the (at most three) values the term lifts above it.
    let s = block_diagonal(12, 8, 0.3, 5);
    let n = s.nrows();
    let mut rng = rng_from_seed(11);
    let l = gaussian_matrix(&mut rng, n, 3) * 0.8;
    let r = gaussian_matrix(&mut rng, n, 3) * 0.8;
    let g = Structured::new(s, l, r);
    let info = check_against_dense(&g, 8, 1e-9);
    assert!(info.above_shift <= 3);
}

#[test]
fn bad_input_is_a_typed_error() {
    let s = block_diagonal(3, 3, 0.3, 9);
    let n = s.nrows();
    let g = Structured::new(s, Array2::zeros((n, 0)), Array2::zeros((n, 0)));
    for tol in [0.0, -1.0, f64::NAN] {
        let p = ShiftInvertParams {
            tol,
            ..ShiftInvertParams::default()
        };
        assert!(matches!(
            shift_invert_svd(&g, 2, &p),
            Err(SolverError::InvalidParameter { name: "tol", .. })
        ));
    }
    let p = ShiftInvertParams::default();
    assert!(matches!(
        shift_invert_svd(&g, 0, &p),
        Err(SolverError::InvalidRank { .. })
    ));
    assert!(matches!(
        shift_invert_svd(&g, n + 1, &p),
        Err(SolverError::InvalidRank { .. })
    ));
    // A dense matrix has no sparse-plus-low-rank structure.
    assert!(matches!(
        shift_invert_svd(&g.dense, 2, &p),
        Err(SolverError::InvalidParameter { name: "operator", .. })
    ));
    // A factor that does not fit the budget (the smallest, 1 MiB): 2 · 90000 columns.
    let big = block_diagonal(30_000, 0, 0.0, 0);
    let tight = ShiftInvertParams {
        budget: MemoryBudget::bytes(1 << 20).unwrap(),
        ..ShiftInvertParams::default()
    };
    assert!(matches!(
        shift_invert_svd(&big, 2, &tight),
        Err(SolverError::InvalidParameter { name: "budget", .. })
    ));
}

/// `blocks` copies of [`BLOCK`], copy `j` scaled by `1 + spread · j / blocks`: a flat band of
/// distinct values (relative spacing `spread / blocks`), the case where Krylov stalls.
fn flat_band(blocks: usize, spread: f64) -> CsrMatrix {
    let factors: Vec<f64> = (0..blocks).map(|c| 1.0 + spread * c as f64 / blocks as f64).collect();
    CsrMatrix::from_triplets(3 * blocks, 3 * blocks, scaled_copies(&factors)).unwrap()
}

/// [`flat_band`]`(blocks, spread)` plus a random positive rank-one term.
fn flat_band_operator(blocks: usize, spread: f64, seed: u64) -> Structured {
    let s = flat_band(blocks, spread);
    let n = s.nrows();
    let mut rng = rng_from_seed(seed);
    let l = gaussian_matrix(&mut rng, n, 1).mapv(f64::abs) * 0.3;
    let r = gaussian_matrix(&mut rng, n, 1).mapv(f64::abs) * 0.3;
    Structured::new(s, l, r)
}

#[test]
fn the_default_solver_takes_shift_invert_when_krylov_stalls_on_a_flat_band() {
    // 600 x 600 under a 1 MiB budget (no dense SVD); the blocks' largest values form a band
    // of relative width 1e-6, which ten Krylov restarts do not resolve to 1e-10.
    let g = flat_band_operator(200, 1e-6, 23);
    assert_eq!(auto_certifies_without_dense(&g, 6, 3), AutoChoice::ShiftInvert);
}

/// The default solver at tolerance 1e-10 under a 1 MiB budget (no dense SVD) on `g`: its top
/// `rank` values agree with the dense SVD's ([`assert_top_values`]). Returns its choice.
fn auto_certifies_without_dense(g: &Structured, rank: usize, seed: u64) -> AutoChoice {
    let params = AutoParams {
        tol: 1e-10,
        seed,
        budget: MemoryBudget::bytes(1 << 20).unwrap(),
    };
    let (res, choice) = auto_svd(g, rank, &params, &mut |_| {}).unwrap();
    assert_top_values(g, &res, rank, 1e-10);
    choice
}

/// The top `rank` values of `res` agree with the dense SVD's to `10 tol s_1` (at most 1e-9
/// `s_1`), its residuals meet `tol` and its vectors are orthonormal.
fn assert_top_values(g: &Structured, res: &SvdResult, rank: usize, tol: f64) {
    let exact = dense_svd(g.dense.view(), rank).unwrap();
    for i in 0..rank {
        assert!(
            (res.s[i] - exact.s[i]).abs() <= (10.0 * tol).min(1e-9) * exact.s[0],
            "{i}: {} vs {}",
            res.s[i],
            exact.s[i]
        );
    }
    assert!(explicit_residual(&g.dense, res) <= tol);
    assert!(orthonormality_error(&res.u) <= 1e-12 && orthonormality_error(&res.v) <= 1e-12);
}

#[test]
fn an_iteration_limit_is_reported_as_shift_invert_s_own() {
    // The flat band above with too few iterations for 1e-12: the error names shift-invert and
    // counts its iterations (the limit, or fewer when the forecast stops it).
    let g = flat_band_operator(300, 1e-5, 29);
    let params = ShiftInvertParams {
        tol: 1e-12,
        max_iters: 2,
        ..ShiftInvertParams::default()
    };
    match shift_invert_svd(&g, 100, &params) {
        Err(SolverError::NotConverged {
            solver,
            iterations,
            residual,
            tol,
        }) => {
            assert_eq!(solver, "shift-invert");
            assert!((1..=2).contains(&iterations), "{iterations}");
            assert!(residual > tol && tol == 1e-12);
        }
        other => panic!("expected NotConverged, got {other:?}"),
    }
}

#[test]
fn a_rank_that_cuts_through_a_flat_band_is_certified() {
    // 900 x 900: the 300 blocks' largest values form a band of relative width 1e-5, and rank
    // 100 ends inside it, between two values 3.3e-8 apart (relative): one value above the
    // shift (the rank-one term), 99 iterated with 10 more.
    let g = flat_band_operator(300, 1e-5, 29);
    let info = check_against_dense(&g, 100, 1e-9);
    assert_eq!(
        info.block,
        99 + 10,
        "one value above the shift from Lanczos, 99 iterated"
    );
}

#[test]
fn a_value_just_above_a_repeated_one_is_returned_or_refused_never_skipped() {
    // Thirty copies of the block's values; a second, tiny rank-one term lifts one copy of the
    // largest by 5.8e-10 relative (a value just above σ_1(S), so above the shift) while the
    // first term adds a value far above. Either the result holds it (checked to the
    // tolerance, which a copy of σ_3 in its place would fail) or, when the iteration cannot
    // reach it, the count refuses the result with a typed error.
    let s = block_diagonal(30, 4, 0.3, 31);
    let n = s.nrows();
    let mut rng = rng_from_seed(37);
    let mut l = gaussian_matrix(&mut rng, n, 2).mapv(f64::abs);
    let mut r = gaussian_matrix(&mut rng, n, 2).mapv(f64::abs);
    l.column_mut(0).mapv_inplace(|x| 0.2 * x);
    r.column_mut(0).mapv_inplace(|x| 0.2 * x);
    l.column_mut(1).mapv_inplace(|x| 1e-5 * x);
    r.column_mut(1).mapv_inplace(|x| 1e-5 * x);
    let g = Structured::new(s, l, r);
    let exact = dense_svd(g.dense.view(), 5).unwrap();
    let p = ShiftInvertParams {
        tol: 1e-10,
        ..ShiftInvertParams::default()
    };
    match shift_invert_svd(&g, 4, &p) {
        Err(SolverError::CountMismatch { counted, returned, .. }) => {
            assert!(returned < counted)
        }
        Err(SolverError::CountUncertain {
            shift,
            min,
            max,
            returned,
        }) => {
            // The count is a range and the result holds its lower end only; the true count
            // (dense) must lie in the range.
            assert!(min <= returned && returned < max);
            let above = exact.s.iter().filter(|&&x| x > shift).count();
            assert!(min <= above && above <= max, "{above} outside {min}..={max}");
        }
        Ok((res, info)) => {
            // Returned only if it is the true top 4, to the tolerance (σ_2 − σ_3 = 1.4e-9 is
            // 2.5e-10 s_1: a copy of σ_3 in its place would fail this).
            for i in 0..4 {
                assert!(
                    (res.s[i] - exact.s[i]).abs() <= 1e-10 * exact.s[0],
                    "{i}: {} vs {}",
                    res.s[i],
                    exact.s[i]
                );
            }
            assert_eq!(
                info.above_shift,
                exact.s.iter().filter(|&&x| x > info.count_shift).count()
            );
        }
        Err(e) => panic!("unexpected error {e}"),
    }
}

#[test]
fn spectrum_slicing_certifies_a_rank_inside_a_flat_band() {
    // As above (900 x 900, a band of relative width 1e-5, rank 100 inside it), by shifts inside
    // the band: slices of at most 40 values.
    let g = flat_band_operator(300, 1e-5, 29);
    let params = SliceParams {
        tol: 1e-9,
        slice: 40,
        ..SliceParams::default()
    };
    let (r, info) = slice_svd(&g, 100, &params).unwrap();
    assert_top_values(&g, &r, 100, 1e-9);
    let exact = dense_svd(g.dense.view(), 120).unwrap();
    let above = exact.s.iter().filter(|&&x| x > info.cut).count();
    assert_eq!(above, info.above_cut, "{info:?}");
    assert!(info.boundaries.len() >= 4, "{info:?}");
}

#[test]
fn the_default_solver_takes_spectrum_slicing_above_the_shift_invert_ranks() {
    // The band of the test above at rank 100 (beyond shift-invert's ranks) under a 1 MiB budget
    // (no dense SVD): a band of 300 values 3e-8 apart, which 60 Krylov restarts do not resolve
    // to 1e-10.
    let g = flat_band_operator(300, 1e-5, 29);
    assert_eq!(auto_certifies_without_dense(&g, 100, 5), AutoChoice::Slicing);
}

#[test]
fn spectrum_slicing_returns_every_copy_of_a_value_repeated_at_the_rank() {
    // Eight copies of the block's values, the rank-one term on top: rank 4 ends inside the
    // copies of the block's largest value; the cut must lie below all copies, and the count
    // above it must hold every copy.
    let g = eight_copies_and_a_rank_one_term();
    let n = g.dense.nrows();
    let params = SliceParams {
        tol: 1e-10,
        slice: 20,
        ..SliceParams::default()
    };
    let (res, info) = slice_svd(&g, 4, &params).unwrap();
    assert_top_values(&g, &res, 4, 1e-10);
    let exact = dense_svd(g.dense.view(), n).unwrap();
    let above = exact.s.iter().filter(|&&x| x > info.cut).count();
    assert_eq!(above, info.above_cut);
    assert!(info.above_cut >= 7, "the copies above the cut: {info:?}");
}

#[test]
fn spectrum_slicing_bad_input_is_a_typed_error() {
    let g = flat_band_operator(20, 1e-5, 3);
    let invalid = |r: Result<(SvdResult, SliceInfo)>, what: &str| {
        assert!(
            matches!(&r, Err(SolverError::InvalidParameter { name, .. }) if *name == what),
            "{what}: {:?}",
            r.err()
        )
    };
    let one = SliceParams {
        slice: 1,
        ..SliceParams::default()
    };
    invalid(slice_svd(&g, 4, &one), "slice");
    invalid(slice_svd(&g.dense, 4, &SliceParams::default()), "operator");
    for tol in [0.0, f64::NAN] {
        let p = SliceParams {
            tol,
            ..SliceParams::default()
        };
        invalid(slice_svd(&g, 4, &p), "tol");
    }
    assert!(matches!(
        slice_svd(&g, 0, &SliceParams::default()),
        Err(SolverError::InvalidRank { .. })
    ));
    // A factor that does not fit the budget (the smallest, 1 MiB): 2 · 90000 columns.
    let big = block_diagonal(30_000, 0, 0.0, 0);
    let tight = SliceParams {
        budget: MemoryBudget::bytes(1 << 20).unwrap(),
        ..SliceParams::default()
    };
    invalid(slice_svd(&big, 2, &tight), "budget");
}
