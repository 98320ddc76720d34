//! Command-line values parsed by the core types that own their names ([`Vocabulary`]): `--kernel` is
//! a `KernelKind`, `--solver` a `SolverKind`, `--graph-input` a `GraphInput`, `--sampling` a
//! `Sampling`, `--node-ids` a `NodeIds`. Parsing is the type's
//! `FromStr` (its error, listing the valid names, is clap's message) and `--help` lists the
//! type's canonical names; the other spellings are accepted as aliases.
use clap::builder::{PossibleValue, TypedValueParser};
use clap::error::ErrorKind;
use ksvd_linalg::Vocabulary;
use std::ffi::OsStr;
use std::marker::PhantomData;

/// The clap value parser of a [`Vocabulary`].
#[derive(Clone, Copy)]
pub(crate) struct Core<T>(PhantomData<fn() -> T>);

/// The clap value parser of `T`: `T::from_str`, with `T`'s names in `--help`.
pub(crate) fn core<T: Vocabulary + Send + Sync>() -> Core<T> {
    Core(PhantomData)
}

impl<T: Vocabulary + Send + Sync> TypedValueParser for Core<T> {
    type Value = T;

    fn parse_ref(&self, cmd: &clap::Command, arg: Option<&clap::Arg>, value: &OsStr) -> Result<T, clap::Error> {
        let Some(text) = value.to_str() else {
            return Err(clap::Error::new(ErrorKind::InvalidUtf8).with_cmd(cmd));
        };
        T::from_name(text).map_err(|why| {
            let arg = arg.map_or_else(|| "...".to_string(), ToString::to_string);
            clap::Error::raw(
                ErrorKind::InvalidValue,
                format!("invalid value '{text}' for '{arg}': {why}\n"),
            )
            .with_cmd(cmd)
        })
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(T::ALL.iter().map(|v| {
            let names = v.names();
            PossibleValue::new(names[0]).aliases(names[1..].iter().copied())
        })))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use ksvd::{KernelKind, Sampling, SolverKind};
    use ksvd_datasets::NodeIds;
    use ksvd_kernels::graph::GraphInput;

    /// Every spelling of every variant parses through the clap parser to that variant, and the
    /// help lists exactly the canonical names.
    fn check<T: Vocabulary + Send + Sync + std::fmt::Debug>() {
        let cmd = clap::Command::new("t");
        for &v in T::ALL {
            for name in v.names() {
                assert_eq!(core::<T>().parse_ref(&cmd, None, OsStr::new(name)).unwrap(), v);
            }
        }
        let shown: Vec<String> = core::<T>()
            .possible_values()
            .unwrap()
            .map(|p| p.get_name().to_string())
            .collect();
        let canonical: Vec<String> = T::ALL.iter().map(|v| v.names()[0].to_string()).collect();
        assert_eq!(shown, canonical);
        let err = core::<T>().parse_ref(&cmd, None, OsStr::new("sideways")).unwrap_err();
        assert!(err.to_string().contains(&canonical[1]), "{err}");
    }

    #[test]
    fn core_names_parse_on_the_command_line() {
        check::<GraphInput>();
        check::<Sampling>();
        check::<NodeIds>();
        check::<KernelKind>();
        check::<SolverKind>();
    }
}
