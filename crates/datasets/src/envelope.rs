//! The one envelope of every document the workspace writes for a program to read back (fitted
//! models, the partial states of distributed passes): a versioned JSON document whose payload
//! carries a SHA-256 checksum, verified before anything in it is used.
//!
//! ```text
//! {
//!   "format": "ksvd-model",         // what the payload is
//!   "format_version": 2,            // bumped on every incompatible change of the payload
//!   "writer": "ksvd 0.1.0",         // the crate that wrote it (informational)
//!   "sha256": "5f3c…",              // hex SHA-256 of the payload's bytes exactly as written
//!   "payload": { … }
//! }
//! ```
//!
//! The checksum covers the payload's bytes as they stand in the document, so a changed digit, a
//! truncated file or an edited value is refused ([`EnvelopeError::Checksum`]) instead of giving
//! wrong numbers; the payload is parsed only after it matched. A document of another format or
//! version is refused with the names of both, before the payload is read.
//!
//! ```
//! use ksvd_datasets::envelope::{self, EnvelopeError};
//!
//! let bytes = envelope::seal("demo", 1, "demo 0.1", &vec![1.5, 2.0])?;
//! let back: Vec<f64> = envelope::open(&bytes, "demo", 1)?;
//! assert_eq!(back, [1.5, 2.0]);
//!
//! // One changed digit in the payload.
//! let text = String::from_utf8(bytes.clone()).unwrap().replace("1.5", "1.6");
//! let err = envelope::open::<Vec<f64>>(text.as_bytes(), "demo", 1).unwrap_err();
//! assert!(matches!(err, EnvelopeError::Checksum { .. }));
//! # Ok::<(), EnvelopeError>(())
//! ```
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use sha2::{Digest, Sha256};

/// Why a document could not be sealed or opened.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EnvelopeError {
    /// The bytes are not an envelope (not JSON, or a field of the envelope is missing).
    #[error("not a ksvd document: {reason}")]
    NotADocument {
        /// What is wrong.
        reason: String,
    },
    /// The document holds another format.
    #[error("the document is a {found:?} document, expected {expected:?}")]
    Format {
        /// The format found.
        found: String,
        /// The format asked for.
        expected: String,
    },
    /// The document has a format version this build does not read.
    #[error("{format} format version {found} is not supported (this build reads version {supported})")]
    Version {
        /// The format.
        format: String,
        /// The version found.
        found: u64,
        /// The version this build reads.
        supported: u64,
    },
    /// The payload does not match its checksum: the document was changed or truncated.
    #[error("{format} document is corrupt: its payload's SHA-256 is {found}, the document says {expected} (changed or truncated after it was written)")]
    Checksum {
        /// The format.
        format: String,
        /// The checksum the document carries.
        expected: String,
        /// The checksum of the payload as found.
        found: String,
    },
    /// The payload matched its checksum but is not a valid payload of this format and version
    /// (written by an incompatible build), or could not be serialised.
    #[error("{format} payload: {reason}")]
    Payload {
        /// The format.
        format: String,
        /// What is wrong.
        reason: String,
    },
}

/// The fields of an envelope other than its payload.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Header {
    /// What the payload is, e.g. `"ksvd-model"`.
    pub format: String,
    /// The payload's version.
    pub format_version: u64,
    /// The crate (and version) that wrote the document.
    pub writer: String,
    /// Hex SHA-256 of the payload's bytes.
    pub sha256: String,
}

#[derive(Deserialize)]
struct Document<'a> {
    #[serde(flatten)]
    header: Header,
    #[serde(borrow)]
    payload: &'a RawValue,
}

fn hex_sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// Seals `payload` as a `format` document of version `version` written by `writer`.
pub fn seal<T: Serialize + ?Sized>(
    format: &str,
    version: u64,
    writer: &str,
    payload: &T,
) -> Result<Vec<u8>, EnvelopeError> {
    let body = serde_json::to_string(payload).map_err(|e| EnvelopeError::Payload {
        format: format.to_string(),
        reason: e.to_string(),
    })?;
    let header = Header {
        format: format.to_string(),
        format_version: version,
        writer: writer.to_string(),
        sha256: hex_sha256(body.as_bytes()),
    };
    // The header's own serialisation, with the payload appended as the last field.
    let mut out = serde_json::to_vec(&header).map_err(|e| EnvelopeError::Payload {
        format: format.to_string(),
        reason: e.to_string(),
    })?;
    out.pop(); // the closing brace
    out.extend_from_slice(b",\"payload\":");
    out.extend_from_slice(body.as_bytes());
    out.push(b'}');
    Ok(out)
}

/// The header of a document, its checksum verified (for callers that accept several formats,
/// e.g. a loader of any model file). The payload is not parsed.
pub fn peek(bytes: &[u8]) -> Result<Header, EnvelopeError> {
    verified(bytes).map(|(header, _)| header)
}

fn verified(bytes: &[u8]) -> Result<(Header, &RawValue), EnvelopeError> {
    let text = std::str::from_utf8(bytes).map_err(|e| EnvelopeError::NotADocument {
        reason: format!("not UTF-8 text ({e})"),
    })?;
    let doc: Document<'_> = serde_json::from_str(text).map_err(|e| EnvelopeError::NotADocument {
        reason: if e.is_eof() {
            format!("the document ends early, truncated? ({e})")
        } else {
            e.to_string()
        },
    })?;
    let found = hex_sha256(doc.payload.get().as_bytes());
    if found != doc.header.sha256 {
        return Err(EnvelopeError::Checksum {
            format: doc.header.format,
            expected: doc.header.sha256,
            found,
        });
    }
    Ok((doc.header, doc.payload))
}

/// Opens a `format` document of version `version`: checks the format, the version and the
/// checksum, then parses the payload.
pub fn open<T: DeserializeOwned>(bytes: &[u8], format: &str, version: u64) -> Result<T, EnvelopeError> {
    let (header, payload) = verified(bytes)?;
    if header.format != format {
        return Err(EnvelopeError::Format {
            found: header.format,
            expected: format.to_string(),
        });
    }
    if header.format_version != version {
        return Err(EnvelopeError::Version {
            format: header.format,
            found: header.format_version,
            supported: version,
        });
    }
    serde_json::from_str(payload.get()).map_err(|e| EnvelopeError::Payload {
        format: header.format,
        reason: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct State {
        name: String,
        values: Vec<f64>,
    }

    fn state() -> State {
        State {
            name: "x".into(),
            values: vec![0.1, -2.5e-300, 1.0 / 3.0],
        }
    }

    #[test]
    fn round_trip_is_exact() {
        let bytes = seal("t", 3, "test", &state()).unwrap();
        let back: State = open(&bytes, "t", 3).unwrap();
        assert_eq!(back, state());
        let h = peek(&bytes).unwrap();
        assert_eq!(
            (h.format.as_str(), h.format_version, h.writer.as_str()),
            ("t", 3, "test")
        );
    }

    #[test]
    fn a_changed_byte_anywhere_in_the_payload_is_refused() {
        let bytes = seal("t", 1, "test", &state()).unwrap();
        let start = std::str::from_utf8(&bytes).unwrap().find("\"payload\":").unwrap() + 10;
        for i in start..bytes.len() - 1 {
            let mut b = bytes.clone();
            // Digits and letters only, so the document stays JSON.
            b[i] = match b[i] {
                b'0'..=b'8' => b[i] + 1,
                b'9' => b'0',
                b'a'..=b'y' => b[i] + 1,
                _ => continue,
            };
            let err = open::<State>(&b, "t", 1).unwrap_err();
            assert!(
                matches!(err, EnvelopeError::Checksum { .. } | EnvelopeError::NotADocument { .. }),
                "byte {i}: {err}"
            );
        }
    }

    #[test]
    fn truncated_documents_are_refused() {
        let bytes = seal("t", 1, "test", &state()).unwrap();
        for len in [0, 1, bytes.len() / 2, bytes.len() - 1] {
            let err = open::<State>(&bytes[..len], "t", 1).unwrap_err();
            assert!(matches!(err, EnvelopeError::NotADocument { .. }), "{len}: {err}");
        }
    }

    #[test]
    fn other_formats_and_versions_are_named() {
        let bytes = seal("a", 2, "test", &state()).unwrap();
        let err = open::<State>(&bytes, "b", 2).unwrap_err();
        assert!(
            err.to_string().contains("\"a\"") && err.to_string().contains("\"b\""),
            "{err}"
        );
        let err = open::<State>(&bytes, "a", 1).unwrap_err();
        assert!(
            matches!(
                err,
                EnvelopeError::Version {
                    found: 2,
                    supported: 1,
                    ..
                }
            ),
            "{err}"
        );
    }

    #[test]
    fn a_payload_of_another_shape_is_a_payload_error() {
        let bytes = seal("t", 1, "test", &vec![1, 2]).unwrap();
        assert!(matches!(
            open::<State>(&bytes, "t", 1),
            Err(EnvelopeError::Payload { .. })
        ));
    }
}
