//! KSVD by the asymmetric Nyström method, out of core (paper §4, eqs. 10–11; compatibility a2
//! of Algorithm 1 with a very sparse random projection): the fitted model and the driver's
//! landmark solve. The passes that feed it are [`crate::ScanPartial`] and
//! [`crate::LandmarksPartial`]; [`crate::fit_ksvd`] runs them in one process.
use std::cmp::Ordering;

use ksvd_kernels::Kernel;
use ksvd_linalg::random::{rng_from_seed, sample_indices};
use ksvd_linalg::CsrMatrix;
use ksvd_solvers::{dense_svd, SvdResult};
use ndarray::{Array1, Array2, ArrayViewMut2, Axis};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::embedding::{blocked_embed, ColumnNormalization, Embedding};
use crate::error::{Result, StreamingError};
use crate::params::{ColLandmarks, ValidStreamingParams};
use crate::projection::{ProjectionWorkspace, SparseProjection};
use crate::scan::ScanSummary;
use ksvd_nystrom::{landmark_scales, numerical_rank, row_coefficients, scale_block};

/// Which side of the data matrix `X ∈ R^{N×M}` the compatibility matrix maps (Algorithm 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CompatSide {
    /// `N > M` (more rows than features, the large-scale case): the columns `z_j ∈ R^N` are
    /// mapped to `z'_j = C_zᵀ z_j ∈ R^M` with `C_z ∈ R^{N×M}`; the rows `x_i ∈ R^M` stay.
    Cols,
    /// `M > N`: the rows are mapped to `x'_i = C_xᵀ x_i ∈ R^N` with `C_x ∈ R^{M×N}`; the
    /// columns `z_j ∈ R^N` stay.
    Rows,
    /// `N = M`: `C = I`.
    Square,
}

impl std::fmt::Display for CompatSide {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            CompatSide::Cols => "columns mapped (N > M)",
            CompatSide::Rows => "rows mapped (M > N)",
            CompatSide::Square => "square (C = I)",
        })
    }
}

/// The asymmetric Nyström KSVD of LIBSVM training data: the landmark solve of
/// [`crate::LandmarkPlan::solve_ksvd`] (after passes 1 and 2).
///
/// With `a(x)` the row sample (`x`, or `C_xᵀ x` when rows are mapped) and `b_j` the landmark
/// column samples (`C_zᵀ X[:, j]`, or `X[:, j]`), every row is embedded as
/// `ũ(x) = k(a(x), b_J) D_c V S⁻¹ ⊙ f`, `k(a, b) = exp(-‖a − b‖²/γ²)`, where
/// `D_r G[I, J] D_c = U S Vᵀ` is the rank-`r` SVD of the landmark block (`D_r = √(N/n)`,
/// `D_c = √(M/m)`, as in `ksvd_nystrom`) and `f` the [`ColumnNormalization`].
/// The inner products `a(x) · b_j` are `xᵀ P[:, j]` with `P ∈ R^{M×m}` held in memory (see the
/// crate docs for the shapes); kernel values come from them and the squared norms through
/// `ksvd_kernels::Kernel::Rbf`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StreamingKsvd {
    side: CompatSide,
    summary: ScanSummary,
    projection: Option<SparseProjection>,
    row_landmarks: Vec<usize>,
    col_landmarks: Vec<usize>,
    /// `P ∈ R^{M×m}`: `a(x)·b_j = xᵀ P[:, j]`.
    p: Array2<f64>,
    /// `‖b_j‖²`.
    b_sq: Array1<f64>,
    gamma: f64,
    sub: SvdResult,
    /// `D_c V S⁻¹` (`m × r`).
    right: Array2<f64>,
    normalization: Option<ColumnNormalization>,
}

/// Columns of `P` per cache slab in [`Geometry::products`].
const SLAB: usize = 32;

/// The inner products `a(x_i) · b_j = x_iᵀ P[:, j]` and the squared norms `‖a(x_i)‖²` of rows of
/// a chunk.
struct Geometry<'a> {
    side: CompatSide,
    projection: Option<&'a SparseProjection>,
    p: &'a Array2<f64>,
}

impl Geometry<'_> {
    /// Writes `x_iᵀ P` for the rows `rows` of `x` into the zeroed `out` and returns `‖a(x_i)‖²`.
    fn products(
        &self,
        x: &CsrMatrix,
        rows: std::ops::Range<usize>,
        mut out: ArrayViewMut2<'_, f64>,
        ws: &mut ProjectionWorkspace,
    ) -> Vec<f64> {
        let m = self.p.ncols();
        // Over column slabs of P so that the slab of every feature row stays in cache across the
        // rows of the block. Every entry sums over the row's nonzeros in the same order whatever
        // the slab, so the result does not depend on SLAB.
        match (self.p.as_slice(), out.as_slice_mut()) {
            (Some(p), Some(o)) => {
                for c0 in (0..m).step_by(SLAB) {
                    let c1 = (c0 + SLAB).min(m);
                    for (a, i) in rows.clone().enumerate() {
                        let (idx, val) = x.row(i);
                        let orow = &mut o[a * m + c0..a * m + c1];
                        for (&k, &v) in idx.iter().zip(val) {
                            for (t, &q) in orow.iter_mut().zip(&p[k * m + c0..k * m + c1]) {
                                *t += v * q;
                            }
                        }
                    }
                }
            }
            _ => {
                for (a, i) in rows.clone().enumerate() {
                    let (idx, val) = x.row(i);
                    let mut orow = out.row_mut(a);
                    for (&k, &v) in idx.iter().zip(val) {
                        orow.scaled_add(v, &self.p.row(k));
                    }
                }
            }
        }
        rows.map(|i| {
            let (idx, val) = x.row(i);
            match (self.side, self.projection) {
                (CompatSide::Rows, Some(pr)) => pr.project_sq_norm(idx, val, ws),
                _ => val.iter().map(|v| v * v).sum(),
            }
        })
        .collect()
    }
}

impl CompatSide {
    /// The side Algorithm 1 maps for an `N × M` data matrix.
    pub fn of(rows: usize, features: usize) -> CompatSide {
        match rows.cmp(&features) {
            Ordering::Greater => CompatSide::Cols,
            Ordering::Less => CompatSide::Rows,
            Ordering::Equal => CompatSide::Square,
        }
    }
}

/// The streaming fits' uniform landmark columns: `min(m, features)` distinct columns of
/// `0..features` drawn from `seed`, increasing.
pub fn uniform_cols(seed: u64, features: usize, m: usize) -> Vec<usize> {
    sample_indices(
        &mut rng_from_seed(seed.wrapping_add(0x9e37_79b9)),
        features,
        m.min(features),
    )
}

/// The landmark columns `J` of an `N × M` fit (uniform from the seed, or explicit and checked).
pub(crate) fn choose_cols(params: &ValidStreamingParams, mm: usize) -> Result<Vec<usize>> {
    match &params.cols {
        ColLandmarks::Uniform => Ok(uniform_cols(params.seed, mm, params.col_landmarks)),
        ColLandmarks::Explicit(v) => {
            if let Some(&bad) = v.iter().find(|&&j| j >= mm) {
                return Err(StreamingError::LandmarkOutOfRange {
                    what: "column",
                    index: bad,
                    len: mm,
                });
            }
            Ok(v.clone())
        }
    }
}

/// The sparse projection of the a2 compatibility for `side` (`None` when `N = M`).
pub(crate) fn make_projection(
    side: CompatSide,
    nn: usize,
    mm: usize,
    params: &ValidStreamingParams,
) -> Result<Option<SparseProjection>> {
    let (density, scaling, seed) = (params.projection_density, params.projection_scaling, params.seed);
    Ok(match side {
        CompatSide::Cols => Some(SparseProjection::new(nn, mm, density, scaling, seed)?),
        CompatSide::Rows => Some(SparseProjection::new(mm, nn, density, scaling, seed)?),
        CompatSide::Square => None,
    })
}

/// Rows mapped: `P = C_x X[:, J]` (`M × m`) from the gathered `X[:, J]` (`N × m`, columns by
/// their position in `J`), added into `p`. Rows of `P` are independent (computed in parallel),
/// each summed over `i` in increasing order, so the result does not depend on the thread count.
pub(crate) fn project_gathered(pr: &SparseProjection, xj: &CsrMatrix, p: &mut Array2<f64>) {
    // P[k, :] = Σ_i C_x[k, i] X[i, J].
    p.axis_iter_mut(Axis(0)).into_par_iter().enumerate().for_each_init(
        || (Vec::new(), Vec::new()),
        |(rc, rv), (k, mut prow)| {
            pr.row_into(k, rc, rv);
            for (&i, &c) in rc.iter().zip(rv.iter()) {
                let (js, vs) = xj.row(i);
                for (&b, &x) in js.iter().zip(vs) {
                    prow[b] += c * x;
                }
            }
        },
    );
}

/// One part's share of the mapped landmark columns of the a2 compatibility when the columns
/// are mapped (`N > M`): `Σ_t C_z[offset + t, :]ᵀ X[t, J]` (`M × m`) over the part's rows `x`
/// (`c × M`, global row ids `offset..offset + c`), with `C_z` = `projection` (`N × M`). The sum
/// of the parts' shares is `P = C_zᵀ X[:, J]`, whose column `b` is the mapped column sample
/// `z'_{J[b]}` (rows of `x` are added in order, through the same arithmetic as the streaming
/// landmark pass).
pub fn mapped_columns(
    projection: &SparseProjection,
    offset: usize,
    x: &CsrMatrix,
    cols: &[usize],
) -> Result<Array2<f64>> {
    let mm = x.ncols();
    if projection.output_dim() != mm || offset + x.nrows() > projection.input_dim() {
        return Err(StreamingError::invalid(
            "rows",
            format!("{} x {mm} at row {offset}", x.nrows()),
            format!(
                "the projection maps {} rows to {} features",
                projection.input_dim(),
                projection.output_dim()
            ),
        ));
    }
    if let Some(&bad) = cols.iter().find(|&&j| j >= mm) {
        return Err(StreamingError::LandmarkOutOfRange {
            what: "column",
            index: bad,
            len: mm,
        });
    }
    let acc = ColumnAccumulator::new(cols, mm);
    let mut p = Array2::zeros((mm, cols.len()));
    let mut buf = (Vec::new(), Vec::new());
    for t in 0..x.nrows() {
        let (idx, val) = x.row(t);
        acc.add_row(&mut p, Some(projection), offset + t, idx, val, &mut buf);
    }
    Ok(p)
}

/// Accumulates `P = C_zᵀ X[:, J]` (columns mapped) or `P = X[:, J]` (square) row by row, or
/// (rows mapped) gathers the entries of `X[:, J]`.
pub(crate) struct ColumnAccumulator {
    /// Position of feature `k` in `J`, or `u32::MAX`.
    pos: Vec<u32>,
}

impl ColumnAccumulator {
    pub(crate) fn new(cols: &[usize], mm: usize) -> Self {
        let mut pos = vec![u32::MAX; mm];
        for (b, &j) in cols.iter().enumerate() {
            pos[j] = b as u32;
        }
        ColumnAccumulator { pos }
    }

    /// Appends the entries of a row in the landmark columns `J` (as positions in `J`, in the
    /// row's order) to `cols`, `vals`: the row's part of `X[:, J]`.
    pub(crate) fn gather_row(&self, idx: &[usize], val: &[f64], cols: &mut Vec<usize>, vals: &mut Vec<f64>) {
        for (&k, &v) in idx.iter().zip(val) {
            if self.pos[k] != u32::MAX {
                cols.push(self.pos[k] as usize);
                vals.push(v);
            }
        }
    }

    /// Adds training row `i` (entries `idx`, `val`) to `P` (`M × m`): for every landmark
    /// feature `j = J[b]` of the row, `P[:, b] += X[i, j] · C_z[i, :]` (square: `P[i, b] += X[i, j]`).
    pub(crate) fn add_row(
        &self,
        p: &mut Array2<f64>,
        projection: Option<&SparseProjection>,
        i: usize,
        idx: &[usize],
        val: &[f64],
        buf: &mut (Vec<usize>, Vec<f64>),
    ) {
        let mut generated = false;
        for (&k, &v) in idx.iter().zip(val) {
            let b = self.pos[k];
            if b == u32::MAX {
                continue;
            }
            match projection {
                // Square: P = X[:, J], row i of P is row i of X.
                None => p[[i, b as usize]] += v,
                Some(pr) => {
                    if !generated {
                        pr.row_into(i, &mut buf.0, &mut buf.1);
                        generated = true;
                    }
                    for (&l, &r) in buf.0.iter().zip(&buf.1) {
                        p[[l, b as usize]] += v * r;
                    }
                }
            }
        }
    }
}

/// What the landmark solve needs once `P` is complete.
pub(crate) struct LandmarkInputs<'a> {
    pub side: CompatSide,
    pub summary: ScanSummary,
    pub projection: Option<SparseProjection>,
    pub row_landmarks: Vec<usize>,
    pub landmark_x: &'a CsrMatrix,
    pub col_landmarks: Vec<usize>,
    pub p: Array2<f64>,
    pub col_sq_norms: &'a [f64],
}

/// The landmark solve: `‖b_j‖²`, the `n × m` block, `γ`, its rank-`r` SVD (`r` capped at the
/// numerical rank) and `D_c V S⁻¹`, with `ksvd_nystrom`'s normalisers, rank rule and
/// extension coefficients.
pub(crate) fn solve_landmarks(inputs: LandmarkInputs<'_>, params: &ValidStreamingParams) -> Result<StreamingKsvd> {
    let LandmarkInputs {
        side,
        summary,
        projection,
        row_landmarks,
        landmark_x,
        col_landmarks: cols,
        p,
        col_sq_norms,
    } = inputs;
    let (nn, mm) = (summary.rows, summary.features);
    let m = cols.len();
    let b_sq: Array1<f64> = match side {
        CompatSide::Cols | CompatSide::Square => p.axis_iter(Axis(1)).map(|c| c.dot(&c)).collect(),
        CompatSide::Rows => cols.iter().map(|&j| col_sq_norms[j]).collect(),
    };
    // The landmark block: inner products, γ from their distances, then the kernel values.
    let n = row_landmarks.len();
    let geo = Geometry {
        side,
        projection: projection.as_ref(),
        p: &p,
    };
    let mut block = Array2::<f64>::zeros((n, m));
    let a_sq = geo.products(landmark_x, 0..n, block.view_mut(), &mut ProjectionWorkspace::default());
    let b_sq_slice = b_sq.as_slice().unwrap_or(&[]);
    let gamma = params
        .bandwidth
        .gamma_from_inner_products(block.view(), &a_sq, b_sq_slice, false)?;
    Kernel::Rbf { gamma }.values_from_inner_products(block.view_mut(), &a_sq, b_sq_slice)?;
    let row_scale = landmark_scales(nn, &row_landmarks, None)?;
    let col_scale = landmark_scales(mm, &cols, None)?;
    scale_block(&mut block, row_scale.view(), col_scale.view())?;
    let r_max = params.rank.min(n).min(m);
    let sub = dense_svd(block.view(), r_max)?;
    let r = numerical_rank(&sub.s.to_vec(), n.max(m));
    if r == 0 {
        return Err(StreamingError::RankZero {
            rows: n,
            cols: m,
            largest: sub.s.first().copied().unwrap_or(0.0),
        });
    }
    let sub = sub.truncate(r);
    let right = row_coefficients(&sub, col_scale.view())?;
    Ok(StreamingKsvd {
        side,
        summary,
        projection,
        row_landmarks,
        col_landmarks: cols,
        p,
        b_sq,
        gamma,
        sub,
        right,
        normalization: None,
    })
}

impl StreamingKsvd {
    /// Which side the compatibility maps.
    pub fn side(&self) -> CompatSide {
        self.side
    }
    /// What the first pass found (rows `N`, features `M`, labels).
    pub fn summary(&self) -> &ScanSummary {
        &self.summary
    }
    /// The sparse projection of the a2 compatibility (`None` when `N = M`). Columns mapped:
    /// `C_z` is `N × M` with row `i` for training row `i`; rows mapped: `C_x` is `M × N` with row
    /// `k` for feature `k`.
    pub fn projection(&self) -> Option<&SparseProjection> {
        self.projection.as_ref()
    }
    /// Landmark rows `I` (indices among the training rows, increasing).
    pub fn row_landmarks(&self) -> &[usize] {
        &self.row_landmarks
    }
    /// Landmark columns `J` (feature indices, increasing).
    pub fn col_landmarks(&self) -> &[usize] {
        &self.col_landmarks
    }
    /// The RBF bandwidth `γ` used.
    pub fn gamma(&self) -> f64 {
        self.gamma
    }
    /// Approximate singular values `λ̃_s` of `G` (those of `D_r G[I, J] D_c`), descending.
    pub fn singular_values(&self) -> &Array1<f64> {
        &self.sub.s
    }
    /// The SVD of the scaled landmark block (`U`: `n × r`, `V`: `m × r`).
    pub fn landmark_svd(&self) -> &SvdResult {
        &self.sub
    }
    /// Bytes held by the model's dense arrays (`P`, the landmark SVD, the weights).
    pub fn heap_bytes(&self) -> usize {
        8 * (self.p.len() + self.b_sq.len() + self.sub.u.len() + self.sub.v.len() + self.right.len())
    }
}

impl Embedding for StreamingKsvd {
    fn rank(&self) -> usize {
        self.sub.s.len()
    }

    fn n_features(&self) -> usize {
        self.summary.features
    }

    fn embed_raw(&self, x: &CsrMatrix) -> Result<Array2<f64>> {
        self.summary.check_features(x)?;
        let geo = Geometry {
            side: self.side,
            projection: self.projection.as_ref(),
            p: &self.p,
        };
        let kernel = Kernel::Rbf { gamma: self.gamma };
        let b_sq = self.b_sq.as_slice().unwrap_or(&[]);
        blocked_embed(
            x,
            self.right.view(),
            ProjectionWorkspace::default,
            |rows, mut out, ws| {
                let a_sq = geo.products(x, rows, out.view_mut(), ws);
                Ok(kernel.values_from_inner_products(out, &a_sq, b_sq)?)
            },
        )
    }

    fn normalization(&self) -> Option<&ColumnNormalization> {
        self.normalization.as_ref()
    }

    fn set_normalization(&mut self, normalization: ColumnNormalization) {
        self.normalization = Some(normalization);
    }
}
