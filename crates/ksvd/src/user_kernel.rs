//! The kernel the parameters record: a built-in [`Kernel`] or a user's [`KernelFunction`],
//! which a model file records by name only.
use crate::error::{KsvdError, Result};
use ksvd_kernels::{AnyKernel, Kernel, KernelFunction, Samples};
use std::sync::Arc;

/// What `kernel()` accessors return for a user's kernel, which is not a [`Kernel`].
pub(crate) static NOT_BUILTIN: Kernel = Kernel::Linear;

/// The kernel of [`crate::KsvdValidParams`] and [`crate::KpcaValidParams`].
///
/// Serialised (inside model files) as the [`Kernel`]'s own form for a built-in kernel, and as
/// `{"Custom": {"name": "…"}}` for a user's function (the function itself is not stored: a
/// deserialised value holds its name only, and fitting or projecting with it is
/// [`KsvdError::KernelFunctionNeeded`] until [`ParamKernel::attach`] gives the function back).
#[derive(Debug, Clone)]
pub(crate) enum ParamKernel {
    Builtin(Kernel),
    Custom {
        name: String,
        function: Option<Arc<dyn KernelFunction>>,
    },
}

impl ParamKernel {
    /// The built-in kernel; [`NOT_BUILTIN`] (`Kernel::Linear`) stands in for a user's function.
    pub(crate) fn builtin(&self) -> &Kernel {
        match self {
            ParamKernel::Builtin(k) => k,
            ParamKernel::Custom { .. } => &NOT_BUILTIN,
        }
    }

    /// The name of a user's function, `None` for a built-in kernel.
    pub(crate) fn custom_name(&self) -> Option<&str> {
        match self {
            ParamKernel::Custom { name, .. } => Some(name),
            ParamKernel::Builtin(_) => None,
        }
    }

    /// The user's function, when it is attached.
    pub(crate) fn function(&self) -> Option<&Arc<dyn KernelFunction>> {
        match self {
            ParamKernel::Custom { function, .. } => function.as_ref(),
            ParamKernel::Builtin(_) => None,
        }
    }

    /// The kernel to evaluate.
    ///
    /// # Errors
    /// [`KsvdError::KernelFunctionNeeded`] for a user's function recorded by name only.
    pub(crate) fn any(&self) -> Result<AnyKernel> {
        match self {
            ParamKernel::Builtin(k) => Ok(AnyKernel::Builtin(*k)),
            ParamKernel::Custom { function: Some(f), .. } => Ok(AnyKernel::Custom(f.clone())),
            ParamKernel::Custom { name, function: None } => Err(KsvdError::KernelFunctionNeeded { name: name.clone() }),
        }
    }

    /// The kernel a fit on `data` uses: a built-in kernel with the bandwidth rule applied
    /// ([`crate::model::resolve_bandwidth`]), a user's function as it is.
    pub(crate) fn resolve(&self, rule: Option<f64>, data: &Samples) -> Result<AnyKernel> {
        match self {
            ParamKernel::Builtin(k) => Ok(AnyKernel::Builtin(crate::model::resolve_bandwidth(*k, rule, data)?)),
            custom => custom.any(),
        }
    }

    /// Checks a built-in kernel's parameters, and that a user's function has a name and is
    /// attached.
    pub(crate) fn validate(&self) -> Result<()> {
        match self {
            ParamKernel::Builtin(k) => Ok(k.validate()?),
            ParamKernel::Custom { name, .. } if name.trim().is_empty() => Err(KsvdError::InvalidParameter {
                name: "kernel",
                reason: "a user kernel needs a non-empty name (KernelFunction::name), which models record".into(),
            }),
            ParamKernel::Custom { .. } => self.any().map(|_| ()),
        }
    }

    /// Gives a user's function back to a kernel recorded by name (a loaded model).
    ///
    /// # Errors
    /// [`KsvdError::KernelFunctionMismatch`] when the record is a built-in kernel or another
    /// name.
    pub(crate) fn attach(&mut self, f: Arc<dyn KernelFunction>) -> Result<()> {
        match self {
            ParamKernel::Custom { name, function } if name.as_str() == f.name() => {
                *function = Some(f);
                Ok(())
            }
            ParamKernel::Custom { name, .. } => Err(KsvdError::KernelFunctionMismatch {
                expected: format!("user kernel `{name}`"),
                given: f.name().to_string(),
            }),
            ParamKernel::Builtin(k) => Err(KsvdError::KernelFunctionMismatch {
                expected: format!("the built-in kernel {k}"),
                given: f.name().to_string(),
            }),
        }
    }
}

impl From<AnyKernel> for ParamKernel {
    fn from(k: AnyKernel) -> Self {
        match k {
            AnyKernel::Custom(f) => ParamKernel::from(f),
            AnyKernel::Builtin(k) => ParamKernel::Builtin(k),
            // `AnyKernel` is non-exhaustive; every variant it has is above.
            #[allow(unreachable_patterns)]
            _ => unreachable!("unknown kernel variant"),
        }
    }
}

impl From<Kernel> for ParamKernel {
    fn from(k: Kernel) -> Self {
        ParamKernel::Builtin(k)
    }
}

impl From<Arc<dyn KernelFunction>> for ParamKernel {
    fn from(f: Arc<dyn KernelFunction>) -> Self {
        ParamKernel::Custom {
            name: f.name().to_string(),
            function: Some(f),
        }
    }
}

/// Built-in kernels by value; user kernels by name and function identity.
impl PartialEq for ParamKernel {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (ParamKernel::Builtin(a), ParamKernel::Builtin(b)) => a == b,
            (ParamKernel::Custom { name: a, function: fa }, ParamKernel::Custom { name: b, function: fb }) => {
                a == b
                    && match (fa, fb) {
                        (Some(fa), Some(fb)) => std::ptr::addr_eq(Arc::as_ptr(fa), Arc::as_ptr(fb)),
                        (None, None) => true,
                        _ => false,
                    }
            }
            _ => false,
        }
    }
}

#[cfg(feature = "serde")]
mod serde_impl {
    use super::*;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    /// `{"Custom": {"name": …}}`.
    #[derive(Serialize, Deserialize)]
    enum CustomRecord {
        Custom { name: String },
    }

    impl Serialize for ParamKernel {
        fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
            match self {
                ParamKernel::Builtin(k) => k.serialize(s),
                ParamKernel::Custom { name, .. } => CustomRecord::Custom { name: name.clone() }.serialize(s),
            }
        }
    }

    /// A user's function (`{"Custom": …}`) or a built-in kernel; anything else is an error
    /// naming what was found and the built-in kernels this build knows (the [`Kernel`]'s own).
    impl<'de> Deserialize<'de> for ParamKernel {
        fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
            use serde::de::Error;
            let value = serde_json::Value::deserialize(d)?;
            if value.get("Custom").is_some() {
                let CustomRecord::Custom { name } = serde_json::from_value(value).map_err(D::Error::custom)?;
                return Ok(ParamKernel::Custom { name, function: None });
            }
            serde_json::from_value::<Kernel>(value.clone())
                .map(ParamKernel::Builtin)
                .map_err(|e| D::Error::custom(format!("kernel {value}: {e}")))
        }
    }
}
