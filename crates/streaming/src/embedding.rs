//! What the fitted streaming models share: chunk-wise embeddings, the column normalisation of
//! the Nyström vectors, and the blocked, thread-count-independent evaluation.
use ksvd_linalg::{dense, CsrMatrix};
use ndarray::{s, Array1, Array2, ArrayView2, ArrayViewMut2, Axis};
use rayon::prelude::*;

use crate::error::{Result, StreamingError};

/// Rows per parallel block. Fixed, so that every entry is computed by the same sequence of
/// floating-point operations whatever the number of threads.
pub(crate) const BLOCK_ROWS: usize = 256;

/// The column scaling that turns raw Nyström extensions into unit-norm vectors over the
/// training rows, with the sign convention of `ksvd_nystrom` (the largest-magnitude entry of
/// every column is positive; ties go to the first row).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ColumnNormalization {
    /// Euclidean norm of every raw column over the training rows.
    pub norms: Array1<f64>,
    /// `±1` per column.
    pub signs: Array1<f64>,
}

impl ColumnNormalization {
    /// The factor `sign / norm` of every column (`sign` for a zero column).
    pub fn factors(&self) -> Array1<f64> {
        Array1::from_iter(
            self.norms
                .iter()
                .zip(self.signs.iter())
                .map(|(&n, &s)| if n > 0.0 { s / n } else { s }),
        )
    }

    /// Scales raw embeddings in place.
    pub fn apply(&self, raw: &mut Array2<f64>) {
        let f = self.factors();
        *raw *= &f;
    }
}

/// Accumulates [`ColumnNormalization`] over chunks. Rows carry their global row id so that
/// accumulators of disjoint row sets merge ([`NormAccumulator::merge`]) to the same signs as one
/// pass in row order: the sign of a column is that of its largest-magnitude entry, the one of
/// the smallest row id among ties.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct NormAccumulator {
    sumsq: Array1<f64>,
    best: Array1<f64>,
    /// Row id of `best` (`usize::MAX` while the column is all zeros).
    best_row: Vec<usize>,
}

impl NormAccumulator {
    pub(crate) fn new(rank: usize) -> Self {
        NormAccumulator {
            sumsq: Array1::zeros(rank),
            best: Array1::zeros(rank),
            best_row: vec![usize::MAX; rank],
        }
    }

    /// Adds rows whose first one has the global row id `first`.
    pub(crate) fn add_from(&mut self, e: ArrayView2<'_, f64>, first: usize) {
        for (a, row) in e.outer_iter().enumerate() {
            for (k, &x) in row.iter().enumerate() {
                self.sumsq[k] += x * x;
                self.offer(k, x, first + a);
            }
        }
    }

    fn offer(&mut self, k: usize, x: f64, row: usize) {
        let (b, r) = (self.best[k].abs(), self.best_row[k]);
        if x.abs() > b || (x.abs() == b && x != 0.0 && row < r) {
            self.best[k] = x;
            self.best_row[k] = row;
        }
    }

    /// The rank `r` (number of columns).
    pub(crate) fn rank(&self) -> usize {
        self.sumsq.len()
    }

    /// Adds an accumulator of a disjoint set of rows (sums up to rounding, signs exactly).
    pub(crate) fn merge(&mut self, other: &NormAccumulator) -> Result<()> {
        if other.rank() != self.rank() {
            return Err(StreamingError::invalid(
                "column norms",
                other.rank(),
                format!("cannot merge with rank {}", self.rank()),
            ));
        }
        self.sumsq += &other.sumsq;
        for k in 0..self.rank() {
            if other.best_row[k] != usize::MAX {
                self.offer(k, other.best[k], other.best_row[k]);
            }
        }
        Ok(())
    }

    pub(crate) fn finish(&self) -> ColumnNormalization {
        ColumnNormalization {
            norms: self.sumsq.mapv(f64::sqrt),
            signs: self.best.mapv(|b| if b < 0.0 { -1.0 } else { 1.0 }),
        }
    }
}

/// A fitted streaming Nyström model that embeds rows of a LIBSVM file chunk by chunk.
pub trait Embedding: Sync {
    /// Embedding dimension `r` (the rank actually used).
    fn rank(&self) -> usize;
    /// Number of feature columns `M` the model was fitted with.
    fn n_features(&self) -> usize;
    /// The raw Nyström extension of the rows of `x` (`rows × r`), before the column
    /// normalisation: `k(x, landmarks) W` for the model's weight matrix `W`.
    fn embed_raw(&self, x: &CsrMatrix) -> Result<Array2<f64>>;
    /// The column normalisation over the training rows, once computed.
    fn normalization(&self) -> Option<&ColumnNormalization>;
    /// Stores the column normalisation (computed by the training pass, [`crate::Fitted::finish`]).
    fn set_normalization(&mut self, normalization: ColumnNormalization);
    /// Normalised embeddings (`rows × r`): unit-norm columns over the training rows, equal to the
    /// in-memory Nyström vectors at the training rows and their out-of-sample extension elsewhere.
    fn embed(&self, x: &CsrMatrix) -> Result<Array2<f64>> {
        let norm = self.normalization().ok_or(StreamingError::NotNormalized)?;
        let mut e = self.embed_raw(x)?;
        norm.apply(&mut e);
        Ok(e)
    }
}

/// `out = K(x) W` over fixed blocks of rows in parallel: `fill(block_rows, kernel_block, ws)`
/// writes the kernel values of the rows `lo..hi` of `x` into a zeroed `(hi − lo) × w.nrows()`
/// block; the product with `w` is sequential per block.
pub(crate) fn blocked_embed<W, F>(
    x: &CsrMatrix,
    w: ArrayView2<'_, f64>,
    init: impl Fn() -> W + Sync + Send,
    fill: F,
) -> Result<Array2<f64>>
where
    F: Fn(std::ops::Range<usize>, ArrayViewMut2<'_, f64>, &mut W) -> Result<()> + Sync + Send,
{
    let n = x.nrows();
    let (m, r) = w.dim();
    let mut out = Array2::<f64>::zeros((n, r));
    out.axis_chunks_iter_mut(Axis(0), BLOCK_ROWS)
        .into_par_iter()
        .enumerate()
        .try_for_each_init(
            || (init(), Array2::<f64>::zeros((BLOCK_ROWS, m))),
            |(ws, g), (b, mut ob)| -> Result<()> {
                let lo = b * BLOCK_ROWS;
                let hi = lo + ob.nrows();
                let mut gb = g.slice_mut(s![..hi - lo, ..]);
                gb.fill(0.0);
                fill(lo..hi, gb.view_mut(), ws)?;
                dense::gemm_into_seq(ob.view_mut(), gb.view(), w)?;
                Ok(())
            },
        )?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalization_matches_first_largest_entry() {
        let e = ndarray::array![[1.0, -2.0], [-3.0, 2.0], [3.0, 0.0]];
        let mut acc = NormAccumulator::new(2);
        acc.add_from(e.slice(s![..1, ..]), 0);
        acc.add_from(e.slice(s![1.., ..]), 1);
        let n = acc.finish();
        // Column 0: first entry of magnitude 3 is -3 -> sign -1; column 1: first |2| is -2.
        assert_eq!(n.signs, ndarray::array![-1.0, -1.0]);
        assert!((n.norms[0] - 19f64.sqrt()).abs() < 1e-15);
    }
}
