//! Dimensionality compatibility (Remark 3.2 and Algorithm 1 of the paper): the one vocabulary
//! of the alternatives a0–a3 ([`Compat`], with its names) and every map that puts the rows and
//! the columns of a data matrix in one space.
//!
//! A data matrix `X ∈ R^{N×M}` gives row samples `x_i ∈ R^M` and column samples
//! `z_j ∈ R^N` (the columns of `X`). A kernel needs both in one space, so:
//!
//! * `M > N`: `C_x ∈ R^{M×N}` maps the rows, `x'_i = C_xᵀ x_i`, i.e. `X' = X C_x` (N × N);
//! * `N > M`: `C_z ∈ R^{N×M}` maps the columns, `Z' = Xᵀ C_z` (M × M);
//! * `N = M`: `C = I`.
//!
//! With `C_x`: a0 `C_x = ((X Xᵀ)^† X)ᵀ`; a1 the top-N right singular vectors of `X`
//! (`argmin_C ‖X − X C Cᵀ‖_F`, uncentred as in Algorithm 1); a2 a seeded `randn(M, N)` matrix
//! (unscaled, as in Algorithm 1). `C_z` mirrors these with `Xᵀ` in place of `X`
//! ([`compat_matrix`], [`compatible_samples`]).
//!
//! a1 maps only the longer side, so the other side stays in its own basis. [`Compat::SharedAxes`]
//! (`a1-shared`) puts both sides on the principal axes of `X`, and [`inner_products`] gives its
//! `x'_i · z'_j` without an SVD. a3 ([`Compat::Learned`]) is learned by gradient descent on a
//! downstream loss: it is a name here, its training lives with the task (`ksvd-general`).
//!
//! | [`Compat`] | name (aliases) | map |
//! |---|---|---|
//! | `PseudoInverse` | `a0` (`pinv`, `pseudo-inverse`) | `C = ((X Xᵀ)^† X)ᵀ`, so `x'_i · z_j = X_ij` at full rank |
//! | `Pca` | `a1` (`pca`, `a1-literal`, `pca-literal`) | the longer side on its top principal axes |
//! | `SharedAxes` | `a1-shared` (`shared-axes`) | both sides on the shared principal axes |
//! | `Random { seed }` | `a2` (`random`) | seeded `randn` |
//! | `Learned` | `a3` (`learned`) | learned with the downstream task |
use crate::error::{KernelError, Result};
use crate::samples::Samples;
use ksvd_linalg::{dense, random, CsrMatrix, Vocabulary};
use ndarray::{Array2, ArrayView2, Axis};
use rayon::prelude::*;

/// A compatibility alternative of Remark 3.2, named as in the paper (`a0` … `a3`).
///
/// Parsing ([`FromStr`](std::str::FromStr)), [`Display`](std::fmt::Display) and serde use the
/// names of the module table: `"a1".parse()` is [`Compat::Pca`], `Compat::Pca.to_string()` is
/// `"a1"`, and every alias parses too. `a2` parses with seed 0; the seed is not part of the name
/// (set it with [`Compat::with_seed`]). Serde writes the name, or `{ "a2": { "seed": s } }` for a
/// non-zero seed, and also reads the variant names of earlier model files (`"PseudoInverse"`,
/// `"Pca"`, `{ "Random": { "seed": s } }`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Compat {
    /// a0: the pseudo-inverse of the data matrix.
    PseudoInverse,
    /// a1 as Algorithm 1 does it: the longer side projected on its top principal axes
    /// (uncentred PCA), the other side unchanged. The two sides are then in different bases, so
    /// the kernel depends on the order of the features of the shorter side.
    Pca,
    /// a1 with both sides on the shared principal axes. Write `X = U Σ Vᵀ` (thin SVD): the rows
    /// map to `x'_i = Vᵀ x_i = Σ u_i` and the columns to `z'_j = Uᵀ z_j = Σ v_j`, the `k`-th
    /// coordinate of both being the `k`-th singular direction (`X v_k = σ_k u_k` pairs the axes).
    /// Both maps are isometries on the data, so `‖x'_i‖ = ‖x_i‖`, `‖z'_j‖ = ‖z_j‖` and
    /// `x'_i · z'_j = (X (XᵀX)^{1/2})_ij = (U Σ² Vᵀ)_ij` (equivalently, the columns are mapped
    /// into row-sample space by the orthogonal polar factor of `X`, `V Uᵀ z_j = (XᵀX)^{1/2} e_j`):
    /// the linear kernel gives the singular vectors of `X`, and relabelling the rows or the
    /// columns only permutes `G`. It maps both sides, so there is no single `C`:
    /// [`inner_products`] computes it.
    SharedAxes,
    /// a2: seeded Gaussian projection of the longer side.
    Random {
        /// Seed of the Gaussian entries.
        seed: u64,
    },
    /// a3: `C` learned by gradient descent on the downstream loss (no closed form here).
    Learned,
}

impl Vocabulary for Compat {
    const WHAT: &'static str = "compatibility";
    /// Every alternative, in the order of the paper (`Random` with seed 0).
    const ALL: &'static [Compat] = &[
        Compat::PseudoInverse,
        Compat::Pca,
        Compat::SharedAxes,
        Compat::Random { seed: 0 },
        Compat::Learned,
    ];

    /// The name (`a0`, `a1`, `a1-shared`, `a2`, `a3`; the seed of `a2` is not part of it), then
    /// the other spellings.
    fn names(self) -> &'static [&'static str] {
        match self {
            Compat::PseudoInverse => &["a0", "pinv", "pseudo-inverse"],
            Compat::Pca => &["a1", "pca", "a1-literal", "pca-literal"],
            Compat::SharedAxes => &["a1-shared", "shared-axes"],
            Compat::Random { .. } => &["a2", "random"],
            Compat::Learned => &["a3", "learned"],
        }
    }
}

ksvd_linalg::vocabulary_traits!(Compat);

impl Compat {
    /// The same alternative with the seed of a2 set to `seed` (the others are returned
    /// unchanged): for callers that draw a2 from their own seed.
    pub fn with_seed(self, seed: u64) -> Compat {
        match self {
            Compat::Random { .. } => Compat::Random { seed },
            c => c,
        }
    }

    /// Whether the alternative is one matrix `C` of closed form ([`compat_matrix`]): a0, a1, a2.
    pub fn has_matrix(&self) -> bool {
        matches!(self, Compat::PseudoInverse | Compat::Pca | Compat::Random { .. })
    }
}

#[cfg(feature = "serde")]
mod serde_names {
    //! Serde by name (see [`Compat`]).
    use super::Compat;
    use ksvd_linalg::Vocabulary;
    use serde::de::{self, MapAccess, Visitor};
    use serde::ser::SerializeMap;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Seed {
        seed: u64,
    }

    impl Serialize for Compat {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            match *self {
                Compat::Random { seed } if seed != 0 => {
                    let mut map = s.serialize_map(Some(1))?;
                    map.serialize_entry(self.name(), &Seed { seed })?;
                    map.end()
                }
                _ => s.serialize_str(self.name()),
            }
        }
    }

    /// A name, or an earlier model file's variant name.
    fn parse<E: de::Error>(v: &str) -> Result<Compat, E> {
        match v {
            "PseudoInverse" => Ok(Compat::PseudoInverse),
            "Pca" => Ok(Compat::Pca),
            "Random" => Ok(Compat::Random { seed: 0 }),
            _ => v.parse().map_err(E::custom),
        }
    }

    struct CompatVisitor;

    impl<'de> Visitor<'de> for CompatVisitor {
        type Value = Compat;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(
                f,
                "a compatibility name, one of {}",
                Compat::canonical_names().join(", ")
            )
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<Compat, E> {
            parse(v)
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Compat, A::Error> {
            let Some(name) = map.next_key::<String>()? else {
                return Err(de::Error::custom("an empty table is not a compatibility"));
            };
            let c = parse::<A::Error>(&name)?;
            let Seed { seed } = map.next_value()?;
            if !matches!(c, Compat::Random { .. }) {
                return Err(de::Error::custom(format!("compatibility {c} takes no seed")));
            }
            if map.next_key::<String>()?.is_some() {
                return Err(de::Error::custom("a compatibility table has one entry"));
            }
            Ok(c.with_seed(seed))
        }
    }

    impl<'de> Deserialize<'de> for Compat {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Compat, D::Error> {
            d.deserialize_any(CompatVisitor)
        }
    }
}

/// Which side the compatibility matrix acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum CompatSide {
    /// `N = M`: nothing to do.
    None,
    /// `M > N`: rows are mapped, `X' = X C_x`.
    Rows,
    /// `N > M`: columns are mapped, `Z' = Xᵀ C_z`.
    Cols,
}

/// Row and column samples of a data matrix made dimension-compatible.
#[derive(Debug, Clone)]
pub struct CompatibleSamples {
    /// Row samples (`N` of them).
    pub x: Samples,
    /// Column samples (`M` of them).
    pub z: Samples,
    /// The compatibility matrix (`None` when square).
    pub c: Option<Array2<f64>>,
    /// Which side `c` maps.
    pub side: CompatSide,
}

/// The compatibility matrix `C` for `X` (`M × N` when `M > N`, mirrored otherwise).
///
/// # Errors
/// [`KernelError::NoCompatMatrix`] for [`Compat::SharedAxes`] and [`Compat::Learned`]
/// ([`Compat::has_matrix`]); empty or non-finite data.
pub fn compat_matrix(x: ArrayView2<'_, f64>, compat: Compat) -> Result<Array2<f64>> {
    let (n, m) = x.dim();
    if n == 0 || m == 0 {
        return Err(KernelError::Empty {
            what: "data matrix",
            rows: n,
            dim: m,
        });
    }
    ksvd_linalg::check_finite("data matrix", x)?;
    check_has_matrix(compat)?;
    // Work with `a` (rows mapped): a = X when M > N, a = Xᵀ when N > M; C maps a's rows.
    let a = if m >= n { x } else { x.reversed_axes() };
    let (p, q) = a.dim(); // p <= q, C is q x p
    Ok(match compat {
        Compat::PseudoInverse => {
            let aat = dense::matmul(a, a.t())?;
            let pinv = dense::pinv(aat.view(), 1e-12 * (p.max(q) as f64))?;
            dense::matmul(a.t(), pinv.view())?
        }
        Compat::Pca => {
            let svd = dense::thin_svd(a)?;
            svd.v.slice(ndarray::s![.., ..p]).to_owned()
        }
        Compat::Random { seed } => {
            let mut rng = random::rng_from_seed(seed);
            random::gaussian_matrix(&mut rng, q, p)
        }
        Compat::SharedAxes | Compat::Learned => return Err(no_matrix(compat)),
    })
}

/// Why `compat` has no closed-form matrix `C` (the alternatives other than a0, a1, a2).
fn no_matrix(compat: Compat) -> KernelError {
    match compat {
        Compat::SharedAxes => KernelError::NoCompatMatrix {
            compat,
            what: "single matrix C",
            reason: "it maps both sides (x' = Vᵀx, z' = Uᵀz); compat::inner_products gives x'·z'",
        },
        _ => KernelError::NoCompatMatrix {
            compat,
            what: "closed form",
            reason: "a3's C is learned with the downstream task (ksvd-general's LearnableKsvd)",
        },
    }
}

/// [`no_matrix`] unless `compat` has a closed-form `C` ([`Compat::has_matrix`]).
fn check_has_matrix(compat: Compat) -> Result<()> {
    if compat.has_matrix() {
        Ok(())
    } else {
        Err(no_matrix(compat))
    }
}

/// Row samples `x_i` (rows of `X`) and column samples `z_j` (columns of `X`) in a common space.
///
/// # Errors
/// [`KernelError::NoCompatMatrix`] for [`Compat::SharedAxes`] (see [`inner_products`]) and
/// [`Compat::Learned`], even for a square `X`; empty or non-finite data.
pub fn compatible_samples(x: ArrayView2<'_, f64>, compat: Compat) -> Result<CompatibleSamples> {
    check_has_matrix(compat)?;
    let (n, m) = x.dim();
    if n == m {
        return Ok(CompatibleSamples {
            x: Samples::dense(x.to_owned())?,
            z: Samples::dense(x.t().to_owned())?,
            c: None,
            side: CompatSide::None,
        });
    }
    let c = compat_matrix(x, compat)?;
    if m > n {
        let xp = dense::matmul(x, c.view())?;
        Ok(CompatibleSamples {
            x: Samples::dense(xp)?,
            z: Samples::dense(x.t().to_owned())?,
            c: Some(c),
            side: CompatSide::Rows,
        })
    } else {
        let zp = dense::matmul(x.t(), c.view())?;
        Ok(CompatibleSamples {
            x: Samples::dense(x.to_owned())?,
            z: Samples::dense(zp)?,
            c: Some(c),
            side: CompatSide::Cols,
        })
    }
}

/// Maps new row samples (rows of a matrix with the training `M` columns) with the fitted
/// compatibility, so they can be compared with the column samples.
pub fn map_new_rows(new_x: ArrayView2<'_, f64>, cs: &CompatibleSamples) -> Result<Array2<f64>> {
    match (&cs.side, &cs.c) {
        (CompatSide::Rows, Some(c)) => Ok(dense::matmul(new_x, c.view())?),
        _ => Ok(new_x.to_owned()),
    }
}

/// Column means helper used by tests and PCA-style callers.
pub fn column_means(x: ArrayView2<'_, f64>) -> Array2<f64> {
    x.mean_axis(Axis(0))
        .map(|m| m.insert_axis(Axis(0)))
        .unwrap_or_else(|| Array2::zeros((1, x.ncols())))
}

/// Inner products `p_ij = x'_i · z'_j` (`n × m`) of the compatible row samples `x'_i` and
/// column samples `z'_j` of a data matrix, and their squared norms `nx_i = ‖x'_i‖²`,
/// `nz_j = ‖z'_j‖²`: what [`crate::Kernel::values_from_inner_products`] turns into `G`.
#[derive(Debug, Clone, PartialEq)]
pub struct CompatibleInner {
    /// `p_ij = x'_i · z'_j`, rows = rows of `X`, columns = columns of `X`.
    pub p: Array2<f64>,
    /// `‖x'_i‖²`, one per row of `X`.
    pub nx: Vec<f64>,
    /// `‖z'_j‖²`, one per column of `X`.
    pub nz: Vec<f64>,
}

/// The inner products and squared norms of the rows and columns of the sparse `x` (`n × m`)
/// made compatible by `compat`, dense (`n × m`: the caller bounds the size).
///
/// * [`Compat::SharedAxes`]: `p = X (XᵀX)^{1/2}` for `n ≥ m`, `(XXᵀ)^{1/2} X` otherwise (equal:
///   both are `U Σ² Vᵀ`), from one eigendecomposition of the smaller Gram matrix (no SVD of
///   `X`); the norms are those of the raw rows and columns (both maps are isometries on the
///   data).
/// * a0, a1, a2: the explicit samples of [`compatible_samples`] and one GEMM.
///
/// # Errors
/// [`KernelError::NoCompatMatrix`] for [`Compat::Learned`]; empty or non-finite data; a failed
/// eigendecomposition.
pub fn inner_products(x: &CsrMatrix, compat: Compat) -> Result<CompatibleInner> {
    let (n, m) = x.shape();
    if n == 0 || m == 0 {
        return Err(KernelError::Empty {
            what: "data matrix",
            rows: n,
            dim: m,
        });
    }
    let xt = x.transpose();
    match compat {
        Compat::SharedAxes => {
            let xd = x.to_dense();
            let p = if n >= m {
                let root = psd_sqrt(&gram(&xt))?;
                dense::matmul(xd.view(), root.view())?
            } else {
                let root = psd_sqrt(&gram(x))?;
                dense::matmul(root.view(), xd.view())?
            };
            Ok(CompatibleInner {
                p,
                nx: x.row_sq_norms(),
                nz: xt.row_sq_norms(),
            })
        }
        _ => {
            let cs = compatible_samples(x.to_dense().view(), compat)?;
            let (xs, zs): (Array2<f64>, Array2<f64>) = (cs.x.to_dense(), cs.z.to_dense());
            let p = dense::matmul(xs.view(), zs.t())?;
            Ok(CompatibleInner {
                p,
                nx: cs.x.sq_norms(),
                nz: cs.z.sq_norms(),
            })
        }
    }
}

/// The dense Gram matrix `A Aᵀ` of the rows of a sparse `A` (`n × n`), accumulated over the
/// nonzeros of `A` (`Σ_k nnz(column k)²` multiply-adds) and parallel over rows. With sorted
/// column indices (as [`CsrMatrix`] keeps them) every entry `(i, j)` and `(j, i)` is the same sum
/// in the same order, so the result is exactly symmetric.
fn gram(a: &CsrMatrix) -> Array2<f64> {
    let n = a.nrows();
    let at = a.transpose();
    let mut out = Array2::<f64>::zeros((n, n));
    out.axis_iter_mut(Axis(0))
        .into_par_iter()
        .enumerate()
        .for_each(|(i, mut row)| {
            let (idx, val) = a.row(i);
            for (&k, &v) in idx.iter().zip(val) {
                let (jdx, wal) = at.row(k);
                for (&j, &w) in jdx.iter().zip(wal) {
                    row[j] += v * w;
                }
            }
        });
    out
}

/// `B^{1/2}` of a symmetric positive semi-definite `B` from its eigendecomposition
/// `B = W Λ Wᵀ`: `W Λ^{1/2} Wᵀ`, with eigenvalues below zero (rounding) taken as zero.
fn psd_sqrt(b: &Array2<f64>) -> Result<Array2<f64>> {
    let (vals, vecs) = dense::symmetric_eigen(b.view())?;
    let mut scaled = vecs.clone();
    for (mut col, &l) in scaled.axis_iter_mut(Axis(1)).zip(vals.iter()) {
        col *= l.max(0.0).sqrt();
    }
    Ok(dense::matmul(scaled.view(), vecs.t())?)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use ksvd_linalg::random::{gaussian_matrix, rng_from_seed};

    /// A sparse non-negative `n × m` matrix: the Gaussian entries above 0.4 (about a third).
    fn random_sparse(n: usize, m: usize, seed: u64) -> CsrMatrix {
        let d = gaussian_matrix(&mut rng_from_seed(seed), n, m).mapv(|v| if v > 0.4 { v } else { 0.0 });
        CsrMatrix::from_dense(d.view()).unwrap()
    }

    fn max_abs(a: &Array2<f64>) -> f64 {
        a.iter().fold(0.0f64, |m, v| m.max(v.abs()))
    }

    #[test]
    fn every_name_round_trips_and_unknown_names_list_the_valid_ones() {
        let names = ["a0", "a1", "a1-shared", "a2", "a3"];
        assert_eq!(Compat::canonical_names(), names);
        for (&c, name) in Compat::ALL.iter().zip(names) {
            assert_eq!(c.name(), name);
            assert_eq!(c.to_string(), name);
            for alias in c.names() {
                assert_eq!(alias.parse::<Compat>().unwrap(), c, "{alias}");
            }
        }
        // The names that specs, the CLI and earlier versions use.
        for (s, c) in [
            ("a0", Compat::PseudoInverse),
            ("pinv", Compat::PseudoInverse),
            ("a1", Compat::Pca),
            ("pca", Compat::Pca),
            ("a1-literal", Compat::Pca),
            ("a1-shared", Compat::SharedAxes),
            ("a2", Compat::Random { seed: 0 }),
            ("random", Compat::Random { seed: 0 }),
            ("a3", Compat::Learned),
        ] {
            assert_eq!(s.parse::<Compat>().unwrap(), c, "{s}");
        }
        let msg = "a9".parse::<Compat>().unwrap_err().to_string();
        assert_eq!(
            msg,
            "unknown compatibility `a9` (expected one of a0, a1, a1-shared, a2, a3)"
        );
        assert_eq!(Compat::Pca.with_seed(4), Compat::Pca);
        assert_eq!(Compat::Random { seed: 1 }.with_seed(4), Compat::Random { seed: 4 });
        assert_eq!(Compat::ALL.iter().filter(|c| c.has_matrix()).count(), 3, "a0, a1, a2");
    }

    /// Each closed-form map against its definition, computed densely here: a0 is
    /// `((X Xᵀ)^† X)ᵀ` (so `X C = I` at full row rank), a1 the top right singular vectors, a2
    /// the seeded Gaussian matrix; `compatible_samples` applies them to the longer side.
    #[test]
    fn closed_form_maps_match_their_definitions() {
        let wide = gaussian_matrix(&mut rng_from_seed(4), 4, 7);
        let (n, m) = wide.dim();
        let tol = 1e3 * f64::EPSILON * m as f64;
        let c0 = compat_matrix(wide.view(), Compat::PseudoInverse).unwrap();
        assert!(max_abs(&(&wide.dot(&c0) - &Array2::<f64>::eye(n))) < tol);
        let c1 = compat_matrix(wide.view(), Compat::Pca).unwrap();
        let svd = dense::thin_svd(wide.view()).unwrap();
        // Same subspace as the reference's top-n right singular vectors: C Cᵀ = V Vᵀ.
        let v = svd.v.slice(ndarray::s![.., ..n]).to_owned();
        assert!(max_abs(&(&c1.dot(&c1.t()) - &v.dot(&v.t()))) < tol);
        let c2 = compat_matrix(wide.view(), Compat::Random { seed: 8 }).unwrap();
        assert_eq!(c2, random::gaussian_matrix(&mut random::rng_from_seed(8), m, n));
        let cs = compatible_samples(wide.view(), Compat::Random { seed: 8 }).unwrap();
        assert_eq!(cs.side, CompatSide::Rows);
        assert!(max_abs(&(&cs.x.to_dense() - &wide.dot(&c2))) < tol);
        for c in [Compat::SharedAxes, Compat::Learned] {
            assert!(matches!(
                compat_matrix(wide.view(), c),
                Err(KernelError::NoCompatMatrix { .. })
            ));
            let square = Array2::<f64>::eye(3);
            assert!(matches!(
                compatible_samples(square.view(), c),
                Err(KernelError::NoCompatMatrix { .. })
            ));
        }
    }

    /// The shared-axes inner products equal those of the explicit coordinates `x' = U Σ`,
    /// `z' = V Σ` of a dense SVD, with the raw norms, for tall, wide and square `X`; the other
    /// alternatives equal the products of `compatible_samples`.
    #[test]
    fn inner_products_match_the_explicit_samples() {
        for (n, m) in [(14, 9), (8, 15), (10, 10)] {
            let x = random_sparse(n, m, (n * m) as u64);
            let d = x.to_dense();
            let svd = dense::thin_svd(d.view()).unwrap();
            let xs = &svd.u * &svd.s.view().insert_axis(Axis(0));
            let zs = &svd.v * &svd.s.view().insert_axis(Axis(0));
            let ci = inner_products(&x, Compat::SharedAxes).unwrap();
            let want = xs.dot(&zs.t());
            let tol = 1e3 * f64::EPSILON * (n.max(m) as f64) * max_abs(&want);
            assert!(max_abs(&(&ci.p - &want)) <= tol, "{n}x{m}");
            for (a, r) in ci.nx.iter().zip(xs.outer_iter()) {
                assert!((a - r.dot(&r)).abs() <= tol);
            }
            for (a, r) in ci.nz.iter().zip(zs.outer_iter()) {
                assert!((a - r.dot(&r)).abs() <= tol);
            }
            for c in [Compat::PseudoInverse, Compat::Pca, Compat::Random { seed: 2 }] {
                let ci = inner_products(&x, c).unwrap();
                let cs = compatible_samples(d.view(), c).unwrap();
                assert_eq!(
                    ci.p,
                    dense::matmul(cs.x.to_dense().view(), cs.z.to_dense().t()).unwrap()
                );
                assert_eq!((ci.nx, ci.nz), (cs.x.sq_norms(), cs.z.sq_norms()));
            }
        }
        assert!(inner_products(&random_sparse(4, 3, 1), Compat::Learned).is_err());
        let empty = CsrMatrix::from_triplets(0, 3, Vec::new()).unwrap();
        assert!(matches!(
            inner_products(&empty, Compat::SharedAxes),
            Err(KernelError::Empty { .. })
        ));
    }

    /// Relabelling the columns permutes the columns of the shared-axes products and nothing
    /// else; a1 (one side projected) is not equivariant.
    #[test]
    fn shared_axes_are_equivariant_under_column_permutations() {
        let (n, m) = (16, 9);
        let x = random_sparse(n, m, 11);
        let perm: Vec<usize> = (0..m).map(|j| (j * 4 + 3) % m).collect(); // 4 is coprime to 9
        let xp = CsrMatrix::from_dense(x.to_dense().select(Axis(1), &perm).view()).unwrap();
        let p = inner_products(&x, Compat::SharedAxes).unwrap().p;
        let pp = inner_products(&xp, Compat::SharedAxes).unwrap().p;
        let diff = max_abs(&(&pp - &p.select(Axis(1), &perm)));
        assert!(diff <= 1e4 * f64::EPSILON * max_abs(&p), "a1-shared: {diff}");
        let l = inner_products(&x, Compat::Pca).unwrap().p;
        let lp = inner_products(&xp, Compat::Pca).unwrap().p;
        let diff = max_abs(&(&lp - &l.select(Axis(1), &perm)));
        assert!(diff > 1e-3 * max_abs(&l), "a1 was expected to mix bases: {diff}");
    }

    #[test]
    fn gram_is_a_at_and_exactly_symmetric() {
        let a = random_sparse(13, 7, 3);
        let d = a.to_dense();
        let want = d.dot(&d.t());
        let got = gram(&a);
        assert!(max_abs(&(&got - &want)) <= 8.0 * f64::EPSILON * 7.0 * max_abs(&want));
        assert_eq!(got, got.t());
        let r = psd_sqrt(&got).unwrap();
        let diff = max_abs(&(&r.dot(&r) - &got));
        assert!(diff <= 1e3 * f64::EPSILON * 13.0 * max_abs(&got), "{diff}");
    }

    #[cfg(feature = "serde")]
    #[test]
    fn serde_uses_the_names_and_reads_earlier_model_files() {
        let to = |c: Compat| serde_json::to_string(&c).unwrap();
        let from = |s: &str| serde_json::from_str::<Compat>(s).unwrap();
        for c in Compat::ALL.iter().copied().chain([Compat::Random { seed: 7 }]) {
            assert_eq!(from(&to(c)), c, "{}", to(c));
        }
        assert_eq!(to(Compat::Pca), r#""a1""#);
        assert_eq!(to(Compat::Random { seed: 0 }), r#""a2""#);
        assert_eq!(to(Compat::Random { seed: 7 }), r#"{"a2":{"seed":7}}"#);
        assert_eq!(from(r#""Pca""#), Compat::Pca);
        assert_eq!(from(r#""PseudoInverse""#), Compat::PseudoInverse);
        assert_eq!(from(r#"{"Random":{"seed":3}}"#), Compat::Random { seed: 3 });
        assert_eq!(from(r#""pinv""#), Compat::PseudoInverse);
        for bad in [
            r#""a9""#,
            r#"{"a1":{"seed":3}}"#,
            r#"{}"#,
            r#"{"a2":{"seed":3},"a0":{"seed":1}}"#,
        ] {
            assert!(serde_json::from_str::<Compat>(bad).is_err(), "{bad}");
        }
        let e = serde_json::from_str::<Compat>(r#""a9""#).unwrap_err().to_string();
        assert!(e.contains("a1-shared"), "{e}");
    }
}
