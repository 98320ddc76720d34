//! Seeded synthetic LIBSVM files with a planted linear + quadratic signal, written in a stream
//! (up to 10⁷ rows and beyond; memory is one block of formatted rows): the inputs of the scaling
//! benchmark (moved here from `ksvd-streaming`, which is no experiment harness).
use std::io::Write;
use std::path::Path;
use std::time::Instant;

use anyhow::{ensure, Context as _, Result};
use ksvd_streaming::item_rng;
use rand::Rng;
use rand_distr::StandardNormal;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// Streams of [`item_rng`] (apart from `ksvd-streaming`'s own domains 1, 2 and 7): the same
/// numbers as when the generator lived there, so the files are the same bytes.
mod domain {
    /// Synthetic rows (train part).
    pub const SYNTH_TRAIN: u64 = 3;
    /// Synthetic rows (test part).
    pub const SYNTH_TEST: u64 = 4;
    /// Synthetic planted weights.
    pub const SYNTH_WEIGHTS: u64 = 5;
}

/// Rows formatted per parallel block.
const BLOCK: usize = 1 << 14;
/// Blocks formatted before they are written.
const BLOCKS_IN_FLIGHT: usize = 16;

/// A synthetic binary classification problem on sparse one-hot-like rows.
///
/// Row `i` has `nnz_per_row` distinct features of value 1, feature `k = ⌊M u^a⌋` for uniform
/// `u` (`a = popularity`: 1 is uniform, larger makes low indices frequent, like hashed
/// categorical data). The `S = signal_features` most frequent features (`k < S`) carry two
/// planted weights `w_k, v_k ~ N(0, 1)`, the others none; with `c = nnz · (S/M)^{1/a}` the
/// expected number of signal features in a row, `ℓ = Σ_{k∈x} w_k / √c` and
/// `t = Σ_{k∈x} v_k / √c`, the label is `sign(linear · ℓ + quadratic · (t² − 1) + noise · ε)`,
/// `ε ~ N(0, 1)`: a linear and a nonlinear (quadratic) signal in a few frequent features, so
/// that AUROC is meaningful and low-rank kernel embeddings can find it.
/// Rows are drawn from per-row streams of the seed, so a file of `N` rows is the prefix of a
/// file of `N' > N` rows, and train and test parts (different streams) share the planted weights.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SyntheticSpec {
    /// Number of features `M`.
    pub features: usize,
    /// Nonzeros per row.
    pub nnz_per_row: usize,
    /// Popularity exponent `a ≥ 1`.
    pub popularity: f64,
    /// Number `S` of (most frequent) features that carry the signal.
    pub signal_features: usize,
    /// Weight of the linear signal.
    pub linear: f64,
    /// Weight of the quadratic signal.
    pub quadratic: f64,
    /// Standard deviation of the label noise.
    pub noise: f64,
    /// Seed of the planted weights and the rows.
    pub seed: u64,
}

impl Default for SyntheticSpec {
    fn default() -> Self {
        SyntheticSpec {
            features: 2000,
            nnz_per_row: 16,
            popularity: 2.0,
            signal_features: 64,
            linear: 1.0,
            quadratic: 1.0,
            noise: 0.5,
            seed: 0,
        }
    }
}

/// Which part of a synthetic problem to write (independent rows, same planted weights).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SyntheticPart {
    /// Training rows.
    Train,
    /// Test rows.
    Test,
}

/// What [`write_synthetic`] wrote.
#[derive(Debug, Clone, PartialEq)]
pub struct SyntheticSummary {
    /// Rows written.
    pub rows: usize,
    /// Rows with label `+1`.
    pub positives: usize,
    /// Bytes written.
    pub bytes: u64,
    /// Wall seconds.
    pub seconds: f64,
}

impl SyntheticSpec {
    fn validate(&self) -> Result<()> {
        ensure!(
            self.features > 0 && self.nnz_per_row > 0 && self.nnz_per_row <= self.features / 2,
            "synthetic spec: nnz_per_row = {} needs 1 <= nnz_per_row <= features / 2 = {}",
            self.nnz_per_row,
            self.features / 2
        );
        ensure!(
            self.signal_features > 0,
            "synthetic spec: signal_features must be at least 1"
        );
        ensure!(
            self.popularity.is_finite() && self.popularity >= 1.0,
            "synthetic spec: popularity = {} must be at least 1",
            self.popularity
        );
        for (name, v) in [
            ("linear", self.linear),
            ("quadratic", self.quadratic),
            ("noise", self.noise),
        ] {
            ensure!(v.is_finite(), "synthetic spec: {name} = {v} must be finite");
        }
        Ok(())
    }

    /// The planted weights `(w, v)` of every feature (zero for `k ≥ signal_features`).
    pub fn planted_weights(&self) -> (Vec<f64>, Vec<f64>) {
        (0..self.features)
            .map(|k| {
                if k >= self.signal_features {
                    return (0.0, 0.0);
                }
                let mut rng = item_rng(self.seed, domain::SYNTH_WEIGHTS, k as u64);
                (
                    rng.sample::<f64, _>(StandardNormal),
                    rng.sample::<f64, _>(StandardNormal),
                )
            })
            .unzip()
    }

    /// Row `i` of `part`: its label (`±1`) and sorted 0-based feature indices (values are 1).
    pub fn row(&self, part: SyntheticPart, i: usize, w: &[f64], v: &[f64]) -> (f64, Vec<usize>) {
        let dom = match part {
            SyntheticPart::Train => domain::SYNTH_TRAIN,
            SyntheticPart::Test => domain::SYNTH_TEST,
        };
        let mut rng = item_rng(self.seed, dom, i as u64);
        let m = self.features;
        let mut feats: Vec<usize> = Vec::with_capacity(self.nnz_per_row);
        while feats.len() < self.nnz_per_row {
            let u: f64 = rng.gen();
            let k = ((m as f64 * u.powf(self.popularity)) as usize).min(m - 1);
            if !feats.contains(&k) {
                feats.push(k);
            }
        }
        feats.sort_unstable();
        let s = self.signal_features.clamp(1, m) as f64;
        let norm = (self.nnz_per_row as f64 * (s / m as f64).powf(1.0 / self.popularity)).sqrt();
        let lin: f64 = feats.iter().map(|&k| w[k]).sum::<f64>() / norm;
        let t: f64 = feats.iter().map(|&k| v[k]).sum::<f64>() / norm;
        let eps: f64 = rng.sample(StandardNormal);
        let score = self.linear * lin + self.quadratic * (t * t - 1.0) + self.noise * eps;
        (if score > 0.0 { 1.0 } else { -1.0 }, feats)
    }
}

/// Writes `rows` rows of `part` to `path` as plain LIBSVM text (1-based indices, `+1`/`-1`
/// labels), formatting blocks of rows in parallel and writing them in order. The content depends
/// only on the spec, the part and `rows`.
pub fn write_synthetic(
    path: &Path,
    spec: &SyntheticSpec,
    part: SyntheticPart,
    rows: usize,
) -> Result<SyntheticSummary> {
    spec.validate()?;
    let t0 = Instant::now();
    let (w, v) = spec.planted_weights();
    // Written atomically (temporary file beside `path`, fsync, rename) by the workspace's one helper.
    let (mut positives, mut bytes) = (0usize, 0u64);
    ksvd_datasets::write_atomic_with(path, |file| -> std::io::Result<()> {
        let mut out = std::io::BufWriter::with_capacity(1 << 20, file);
        let blocks = rows.div_ceil(BLOCK);
        for group in (0..blocks).collect::<Vec<_>>().chunks(BLOCKS_IN_FLIGHT) {
            let texts: Vec<(String, usize)> = group
                .par_iter()
                .map(|&b| {
                    use std::fmt::Write as _;
                    let (lo, hi) = (b * BLOCK, ((b + 1) * BLOCK).min(rows));
                    let mut s = String::with_capacity((hi - lo) * (4 + 7 * spec.nnz_per_row));
                    let mut pos = 0usize;
                    for i in lo..hi {
                        let (label, feats) = spec.row(part, i, &w, &v);
                        if label > 0.0 {
                            pos += 1;
                            s.push_str("+1");
                        } else {
                            s.push_str("-1");
                        }
                        for k in feats {
                            // Writing to a String cannot fail.
                            let _ = write!(s, " {}:1", k + 1);
                        }
                        s.push('\n');
                    }
                    (s, pos)
                })
                .collect();
            for (s, p) in texts {
                out.write_all(s.as_bytes())?;
                bytes += s.len() as u64;
                positives += p;
            }
        }
        out.flush()
    })
    .with_context(|| format!("writing {}", path.display()))?;
    Ok(SyntheticSummary {
        rows,
        positives,
        bytes,
        seconds: t0.elapsed().as_secs_f64(),
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn spec() -> SyntheticSpec {
        SyntheticSpec {
            features: 300,
            nnz_per_row: 10,
            ..SyntheticSpec::default()
        }
    }

    #[test]
    fn synthetic_files_are_reproducible_prefixes() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b, c) = (
            dir.path().join("a.svm"),
            dir.path().join("b.svm"),
            dir.path().join("c.svm"),
        );
        let sa = write_synthetic(&a, &spec(), SyntheticPart::Train, 5000).unwrap();
        write_synthetic(&b, &spec(), SyntheticPart::Train, 20_000).unwrap();
        write_synthetic(&c, &spec(), SyntheticPart::Test, 5000).unwrap();
        let (ta, tb, tc) = (
            std::fs::read_to_string(&a).unwrap(),
            std::fs::read_to_string(&b).unwrap(),
            std::fs::read_to_string(&c).unwrap(),
        );
        assert!(tb.starts_with(&ta), "a file of N rows is the prefix of a longer one");
        assert_ne!(ta, tc, "train and test rows differ");
        assert_eq!(ta.lines().count(), 5000);
        assert_eq!(sa.bytes as usize, ta.len());
        let pos = ta.lines().filter(|l| l.starts_with("+1")).count();
        assert_eq!(pos, sa.positives);
        assert!(pos > 500 && pos < 4500, "both classes present: {pos} positives");
        let bad = SyntheticSpec {
            nnz_per_row: 200,
            ..spec()
        };
        assert!(write_synthetic(&a, &bad, SyntheticPart::Train, 10).is_err());
    }
}
