//! User-chosen Nyström landmarks (a temporary hook until `ksvd-nystrom`'s `Sampling` takes
//! index lists): the asymmetric Nyström method run on given row and column indices.
//!
//! The hook drives [`asymmetric_nystrom`] with [`Sampling::SquaredNorm`] over indicator
//! weights (1 on the chosen indices, 0 elsewhere): weighted sampling without replacement then
//! draws exactly the chosen indices, and the importance scales `1/sqrt(k p_i)` are all 1. The
//! singular values are rescaled afterwards by `sqrt(NM/(nm))`, the scale uniform sampling
//! applies to the sampled block, so that `λ̃` estimates the singular values of `G`.
use crate::error::{KsvdError, Result};
use ksvd_linalg::{LinearOperator, MatrixBlocks};
use ksvd_nystrom::{asymmetric_nystrom, AsymmetricNystrom, InnerSolver, LandmarkWeights, NystromParams, Sampling};
use ndarray::{Array2, ArrayView2, ArrayViewMut2};

/// `G` with indicator landmark weights.
struct Chosen<'a, G: ?Sized> {
    g: &'a G,
    row_w: Vec<f64>,
    col_w: Vec<f64>,
}

impl<G: MatrixBlocks + ?Sized> LinearOperator for Chosen<'_, G> {
    fn nrows(&self) -> usize {
        self.g.nrows()
    }
    fn ncols(&self) -> usize {
        self.g.ncols()
    }
    fn apply_into(&self, x: ArrayView2<'_, f64>, out: ArrayViewMut2<'_, f64>) -> ksvd_linalg::Result<()> {
        self.g.apply_into(x, out)
    }
    fn apply_transpose_into(&self, x: ArrayView2<'_, f64>, out: ArrayViewMut2<'_, f64>) -> ksvd_linalg::Result<()> {
        self.g.apply_transpose_into(x, out)
    }
}

impl<G: MatrixBlocks + ?Sized> MatrixBlocks for Chosen<'_, G> {
    fn block(&self, rows: &[usize], cols: &[usize]) -> ksvd_linalg::Result<Array2<f64>> {
        self.g.block(rows, cols)
    }
    fn block_mul(&self, rows: &[usize], cols: &[usize], w: ArrayView2<'_, f64>) -> ksvd_linalg::Result<Array2<f64>> {
        self.g.block_mul(rows, cols, w)
    }
    fn block_t_mul(&self, rows: &[usize], cols: &[usize], w: ArrayView2<'_, f64>) -> ksvd_linalg::Result<Array2<f64>> {
        self.g.block_t_mul(rows, cols, w)
    }
}

impl<G: ?Sized> LandmarkWeights for Chosen<'_, G> {
    fn row_weights(&self) -> ksvd_nystrom::Result<Vec<f64>> {
        Ok(self.row_w.clone())
    }
    fn col_weights(&self) -> ksvd_nystrom::Result<Vec<f64>> {
        Ok(self.col_w.clone())
    }
}

fn indicator(name: &'static str, idx: &[usize], len: usize) -> Result<Vec<f64>> {
    let mut w = vec![0.0; len];
    for &i in idx {
        if i >= len {
            return Err(KsvdError::InvalidParameter {
                name,
                reason: format!("index {i} is out of range for {len} samples"),
            });
        }
        if w[i] != 0.0 {
            return Err(KsvdError::InvalidParameter {
                name,
                reason: format!("index {i} is repeated"),
            });
        }
        w[i] = 1.0;
    }
    Ok(w)
}

/// The asymmetric Nyström method on the landmark rows `rows` and columns `cols` of `g`.
pub(crate) fn nystrom_at<G: MatrixBlocks + ?Sized>(
    g: &G,
    rows: &[usize],
    cols: &[usize],
    rank: usize,
    inner: InnerSolver,
    seed: u64,
) -> Result<AsymmetricNystrom> {
    let (nn, mm) = (g.nrows(), g.ncols());
    let chosen = Chosen {
        g,
        row_w: indicator("landmark rows", rows, nn)?,
        col_w: indicator("landmark cols", cols, mm)?,
    };
    let p = NystromParams {
        rank,
        rows: rows.len(),
        cols: cols.len(),
        sampling: Sampling::SquaredNorm,
        inner,
        seed,
        shared_samples: false,
    };
    let mut ny = asymmetric_nystrom(&chosen, &p)?;
    let scale = ((nn * mm) as f64 / (rows.len() * cols.len()) as f64).sqrt();
    ny.svd.s *= scale;
    Ok(ny)
}
