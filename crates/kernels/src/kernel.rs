//! Kernel functions `k(x, z)`: the one definition of every kernel and of its bandwidth unit `γ`
//! (dense evaluation in [`crate::values`], implicit matrices in [`crate::KernelMatrix`]).
use crate::error::{KernelError, Result};

/// An (asymmetric) kernel `k(x, z)` between a sample `x` of the row set X and a sample `z` of
/// the column set Z. Conventions follow the paper (Tao, Tonin et al., ICML 2024):
///
/// | variant | `k(x, z)` |
/// |---|---|
/// | `Linear` | `x . z` |
/// | `Polynomial { degree: d, offset: c }` | `(x . z + c)^d` |
/// | `Rbf { gamma }` | `exp(-‖x − z‖² / γ²)` |
/// | `Laplacian { gamma }` | `exp(-‖x − z‖ / γ)` (Euclidean norm) |
/// | `Sne { gamma }` | `exp(-‖x − z‖² / γ²) / Σ_{z' ∈ Z} exp(-‖x − z'‖² / γ²)` |
///
/// The SNE kernel is asymmetric by construction: every row of `G` (one `x`, all of Z) sums to 1.
/// Even the symmetric functions give an asymmetric `G` when X and Z differ.
///
/// The bandwidth is always the paper's `γ` (never `γ²`): where a source quotes `γ²` (the paper's
/// appendix, the median heuristic [`crate::bandwidth::median_sq_distance`]), the caller converts
/// once, `γ = sqrt(γ²)`, where it reads the value.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Kernel {
    /// `x . z`.
    Linear,
    /// `(x . z + offset)^degree`.
    Polynomial {
        /// Degree, at least 1.
        degree: u32,
        /// Additive offset `c` (finite).
        offset: f64,
    },
    /// `exp(-‖x − z‖² / gamma²)`.
    Rbf {
        /// Bandwidth `γ > 0`.
        gamma: f64,
    },
    /// `exp(-‖x − z‖ / gamma)`.
    Laplacian {
        /// Bandwidth `γ > 0`.
        gamma: f64,
    },
    /// RBF normalised over the whole Z set (stochastic neighbour embedding kernel).
    Sne {
        /// Bandwidth `γ > 0`.
        gamma: f64,
    },
}

impl Kernel {
    /// Checks the hyper-parameters.
    pub fn validate(&self) -> Result<()> {
        match *self {
            Kernel::Linear => Ok(()),
            Kernel::Polynomial { degree, offset } => {
                if degree == 0 {
                    return Err(KernelError::InvalidParameter {
                        name: "degree",
                        value: 0.0,
                        reason: "must be >= 1",
                    });
                }
                if !offset.is_finite() {
                    return Err(KernelError::InvalidParameter {
                        name: "offset",
                        value: offset,
                        reason: "must be finite",
                    });
                }
                Ok(())
            }
            Kernel::Rbf { gamma } | Kernel::Laplacian { gamma } | Kernel::Sne { gamma } => {
                if !(gamma.is_finite() && gamma > 0.0) {
                    return Err(KernelError::InvalidParameter {
                        name: "gamma",
                        value: gamma,
                        reason: "bandwidth must be positive and finite",
                    });
                }
                Ok(())
            }
        }
    }

    /// The bandwidth `γ`, for kernels that have one (RBF, Laplacian, SNE).
    pub fn gamma(&self) -> Option<f64> {
        match *self {
            Kernel::Rbf { gamma } | Kernel::Laplacian { gamma } | Kernel::Sne { gamma } => Some(gamma),
            _ => None,
        }
    }

    /// The same kernel with bandwidth `gamma` (the paper's `γ`, as in `exp(−‖x − z‖²/γ²)`):
    /// for a bandwidth chosen by a rule after the kernel (e.g.
    /// [`crate::graph::bandwidth_rule`]). Kernels without a bandwidth are returned unchanged.
    /// Not validated here (see [`Kernel::validate`]).
    pub fn with_gamma(self, gamma: f64) -> Kernel {
        match self {
            Kernel::Rbf { .. } => Kernel::Rbf { gamma },
            Kernel::Laplacian { .. } => Kernel::Laplacian { gamma },
            Kernel::Sne { .. } => Kernel::Sne { gamma },
            k => k,
        }
    }

    /// Whether the kernel needs the squared norms of the samples.
    pub(crate) fn needs_norms(&self) -> bool {
        matches!(self, Kernel::Rbf { .. } | Kernel::Laplacian { .. } | Kernel::Sne { .. })
    }

    /// `log k` for the RBF numerator (used by SNE normalisation in the log domain).
    #[inline]
    pub(crate) fn log_rbf(gamma: f64, p: f64, nx: f64, nz: f64) -> f64 {
        -((nx + nz - 2.0 * p).max(0.0)) / (gamma * gamma)
    }

    /// Evaluates `k(x, z)` for two dense vectors of equal length (reference implementation;
    /// the SNE kernel needs the whole Z set and is evaluated by [`crate::KernelMatrix`]).
    pub fn eval_pair(&self, x: &[f64], z: &[f64]) -> Result<f64> {
        self.validate()?;
        if x.len() != z.len() {
            return Err(KernelError::DimensionMismatch {
                x_dim: x.len(),
                z_dim: z.len(),
            });
        }
        let p: f64 = x.iter().zip(z).map(|(a, b)| a * b).sum();
        let d2: f64 = x.iter().zip(z).map(|(a, b)| (a - b) * (a - b)).sum();
        Ok(match *self {
            Kernel::Linear => p,
            Kernel::Polynomial { degree, offset } => (p + offset).powi(degree as i32),
            Kernel::Rbf { gamma } | Kernel::Sne { gamma } => (-d2 / (gamma * gamma)).exp(),
            Kernel::Laplacian { gamma } => (-d2.sqrt() / gamma).exp(),
        })
    }
}

impl std::fmt::Display for Kernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Kernel::Linear => write!(f, "linear"),
            Kernel::Polynomial { degree, offset } => write!(f, "poly(d={degree}, c={offset})"),
            Kernel::Rbf { gamma } => write!(f, "rbf(gamma={gamma})"),
            Kernel::Laplacian { gamma } => write!(f, "laplacian(gamma={gamma})"),
            Kernel::Sne { gamma } => write!(f, "sne(gamma={gamma})"),
        }
    }
}
