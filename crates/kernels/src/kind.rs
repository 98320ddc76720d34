//! Kernel names: what users type for a kernel (`--kernel rbf`, `kernel="rbf"`), before its
//! parameters are known.
use crate::kernel::Kernel;
use ksvd_linalg::Vocabulary;

/// A kernel by name, without its parameters: the vocabulary of every front end (the `ksvd`
/// command's `--kernel`, Python's `kernel=`). [`KernelKind::kernel`] makes the [`Kernel`] once the
/// bandwidth, degree and offset are known.
///
/// `Precomputed` names no function: the user gives the kernel matrix itself (the models then
/// extend kernel values, not samples).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KernelKind {
    /// `x · z`.
    Linear,
    /// `(x · z + coef0)^degree`.
    Polynomial,
    /// `exp(-‖x − z‖² / γ²)`.
    Rbf,
    /// `exp(-‖x − z‖ / γ)`.
    Laplacian,
    /// The RBF normalised over the column samples.
    Sne,
    /// A kernel matrix computed by the user.
    Precomputed,
}

impl Vocabulary for KernelKind {
    const WHAT: &'static str = "kernel";
    const ALL: &'static [KernelKind] = &[
        KernelKind::Linear,
        KernelKind::Polynomial,
        KernelKind::Rbf,
        KernelKind::Laplacian,
        KernelKind::Sne,
        KernelKind::Precomputed,
    ];

    fn names(self) -> &'static [&'static str] {
        match self {
            KernelKind::Linear => &["linear"],
            KernelKind::Polynomial => &["poly", "polynomial"],
            KernelKind::Rbf => &["rbf"],
            KernelKind::Laplacian => &["laplacian"],
            KernelKind::Sne => &["sne"],
            KernelKind::Precomputed => &["precomputed"],
        }
    }
}

ksvd_linalg::vocabulary_traits!(KernelKind);
#[cfg(feature = "serde")]
ksvd_linalg::vocabulary_serde!(KernelKind);

impl KernelKind {
    /// Whether the kernel has a bandwidth γ (RBF, Laplacian, SNE).
    pub fn has_bandwidth(self) -> bool {
        matches!(self, KernelKind::Rbf | KernelKind::Laplacian | KernelKind::Sne)
    }

    /// The kernel with these parameters (`gamma` is used by the kernels with a bandwidth,
    /// `degree` and `coef0` by the polynomial one); `None` for [`KernelKind::Precomputed`].
    /// The parameters are checked by [`Kernel::validate`].
    pub fn kernel(self, gamma: f64, degree: u32, coef0: f64) -> Option<Kernel> {
        Some(match self {
            KernelKind::Linear => Kernel::Linear,
            KernelKind::Polynomial => Kernel::Polynomial { degree, offset: coef0 },
            KernelKind::Rbf => Kernel::Rbf { gamma },
            KernelKind::Laplacian => Kernel::Laplacian { gamma },
            KernelKind::Sne => Kernel::Sne { gamma },
            KernelKind::Precomputed => return None,
        })
    }
}

impl Kernel {
    /// The kernel's name.
    pub fn kind(&self) -> KernelKind {
        match self {
            Kernel::Linear => KernelKind::Linear,
            Kernel::Polynomial { .. } => KernelKind::Polynomial,
            Kernel::Rbf { .. } => KernelKind::Rbf,
            Kernel::Laplacian { .. } => KernelKind::Laplacian,
            Kernel::Sne { .. } => KernelKind::Sne,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn every_kernel_round_trips_through_its_name() {
        for &k in KernelKind::ALL {
            for name in k.names() {
                assert_eq!(name.parse::<KernelKind>().unwrap(), k);
            }
            match k.kernel(0.5, 3, 1.0) {
                Some(kernel) => {
                    assert_eq!(kernel.kind(), k);
                    assert_eq!(kernel.gamma().is_some(), k.has_bandwidth());
                    kernel.validate().unwrap();
                }
                None => assert_eq!(k, KernelKind::Precomputed),
            }
        }
        let err = "gaussian".parse::<KernelKind>().unwrap_err().to_string();
        assert_eq!(
            err,
            "unknown kernel `gaussian` (expected one of linear, poly, rbf, laplacian, sne, precomputed)"
        );
    }
}
