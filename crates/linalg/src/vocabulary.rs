//! Vocabularies: the names users type for the workspace's choices (graph inputs, sampling
//! schemes, kernels, solvers, ...), owned by the enum of each choice and parsed in one way by
//! every front end (the `ksvd` command, Python, experiment specs, model files).
//!
//! An enum lists its values and, for each, every spelling it is read from (the canonical name
//! first); [`vocabulary_traits!`](crate::vocabulary_traits) gives it `Display` (the canonical
//! name) and `FromStr` (any spelling, with an error listing the canonical names), and
//! [`vocabulary_serde!`](crate::vocabulary_serde) serde's string form.
//!
//! ```
//! use ksvd_linalg::Vocabulary;
//!
//! #[derive(Debug, Clone, Copy, PartialEq)]
//! enum Side { Rows, Cols }
//!
//! impl Vocabulary for Side {
//!     const WHAT: &'static str = "side";
//!     const ALL: &'static [Side] = &[Side::Rows, Side::Cols];
//!     fn names(self) -> &'static [&'static str] {
//!         match self {
//!             Side::Rows => &["rows", "row"],
//!             Side::Cols => &["cols", "columns"],
//!         }
//!     }
//! }
//! ksvd_linalg::vocabulary_traits!(Side);
//!
//! assert_eq!("columns".parse::<Side>().unwrap(), Side::Cols);
//! assert_eq!(Side::Rows.to_string(), "rows");
//! let err = "diagonal".parse::<Side>().unwrap_err().to_string();
//! assert_eq!(err, "unknown side `diagonal` (expected one of rows, cols)");
//! ```

/// A closed set of named choices: every value and every spelling it is read from.
pub trait Vocabulary: Sized + Copy + PartialEq + 'static {
    /// What the values are, for error messages (e.g. `"graph input"`).
    const WHAT: &'static str;
    /// Every value, in the order help texts list them.
    const ALL: &'static [Self];
    /// Every spelling of `self`, the canonical name first.
    fn names(self) -> &'static [&'static str];

    /// The canonical name: what `Display` and serde write.
    fn name(self) -> &'static str {
        self.names()[0]
    }

    /// The canonical names of every value, in [`Vocabulary::ALL`]'s order.
    fn canonical_names() -> Vec<&'static str> {
        Self::ALL.iter().map(|v| v.name()).collect()
    }

    /// The value one of whose spellings is `s`.
    fn from_name(s: &str) -> Result<Self, UnknownName> {
        Self::ALL
            .iter()
            .copied()
            .find(|v| v.names().contains(&s))
            .ok_or_else(|| UnknownName {
                what: Self::WHAT,
                given: s.to_string(),
                expected: Self::canonical_names(),
            })
    }
}

/// A name that is not in a vocabulary.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} `{given}` (expected one of {})", expected.join(", "))]
pub struct UnknownName {
    /// What was being named (`Vocabulary::WHAT`).
    pub what: &'static str,
    /// The name given.
    pub given: String,
    /// The canonical names.
    pub expected: Vec<&'static str>,
}

/// Implements `Display` (the canonical name) and `FromStr` (any spelling,
/// [`UnknownName`] otherwise) for a [`Vocabulary`].
#[macro_export]
macro_rules! vocabulary_traits {
    ($t:ty) => {
        impl ::std::fmt::Display for $t {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str($crate::Vocabulary::name(*self))
            }
        }

        impl ::std::str::FromStr for $t {
            type Err = $crate::UnknownName;

            fn from_str(s: &str) -> ::std::result::Result<Self, Self::Err> {
                <$t as $crate::Vocabulary>::from_name(s)
            }
        }
    };
}

/// Implements serde's string form for a [`Vocabulary`]: the canonical name is written, any
/// spelling is read. The calling crate needs `serde` as a dependency.
#[macro_export]
macro_rules! vocabulary_serde {
    ($t:ty) => {
        impl ::serde::Serialize for $t {
            fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> ::std::result::Result<S::Ok, S::Error> {
                serializer.serialize_str($crate::Vocabulary::name(*self))
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $t {
            fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> ::std::result::Result<Self, D::Error> {
                let name = <::std::string::String as ::serde::Deserialize>::deserialize(deserializer)?;
                <$t as $crate::Vocabulary>::from_name(&name).map_err(::serde::de::Error::custom)
            }
        }
    };
}
