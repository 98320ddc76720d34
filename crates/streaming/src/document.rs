//! Any model document of the workspace, read by the format its envelope names: a
//! [`ksvd::KsvdModel`] (`ksvd fit --out DIR`, `KsvdModel::save`, Python's `save`, a distributed
//! fit's `to_local`) or a trained model of the streaming fit ([`TrainedModel`]: `ksvd-stream
//! run --out DIR`, `ksvd.dask.fit(out_dir=)`). The one dispatcher of the CLI's `transform` and
//! `inspect` and of Python's `ksvd.load`.
use crate::error::StreamingError;
use crate::score::TrainedModel;
use ksvd::{KernelFunction, KsvdError, KsvdModel};
use ksvd_datasets::envelope;
use std::sync::Arc;
use thiserror::Error;

/// The envelope format names of this crate's documents start with this.
pub const FORMAT_PREFIX: &str = "ksvd-streaming-";

/// A model of either kind.
#[derive(Debug, Clone)]
pub enum ModelDocument {
    /// A model of `ksvd` (format [`ksvd::MODEL_FORMAT`]).
    Ksvd(Box<KsvdModel>),
    /// A trained model of the streaming fit (formats `ksvd-streaming-trained-*`).
    Trained(Box<TrainedModel>),
}

/// Why a document is not a model: the error of the loader its format names (a document that is
/// not a streaming document, or whose envelope cannot be read, goes to `KsvdModel`'s loader).
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum DocumentError {
    /// From [`KsvdModel::from_bytes`].
    #[error(transparent)]
    Ksvd(#[from] KsvdError),
    /// From [`TrainedModel::from_bytes`].
    #[error(transparent)]
    Trained(#[from] StreamingError),
}

impl ModelDocument {
    /// Reads either kind of model (the checksum is verified by its loader).
    ///
    /// # Errors
    /// [`DocumentError`]: the loader's typed error (another format, a changed byte, a truncated
    /// document, a model of a user's kernel function, which needs
    /// [`ModelDocument::from_bytes_with_kernel`]).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, DocumentError> {
        Self::from_bytes_with_kernel(bytes, None)
    }

    /// [`ModelDocument::from_bytes`], giving a `ksvd` model fitted with a user's kernel function
    /// its `function` back ([`KsvdModel::from_bytes_with_kernel`]).
    ///
    /// # Errors
    /// As [`ModelDocument::from_bytes`].
    pub fn from_bytes_with_kernel(
        bytes: &[u8],
        function: Option<Arc<dyn KernelFunction>>,
    ) -> Result<Self, DocumentError> {
        if Self::is_streaming(bytes) {
            return Ok(ModelDocument::Trained(Box::new(TrainedModel::from_bytes(bytes)?)));
        }
        let model = match function {
            Some(f) => KsvdModel::from_bytes_with_kernel(bytes, f)?,
            None => KsvdModel::from_bytes(bytes)?,
        };
        Ok(ModelDocument::Ksvd(Box::new(model)))
    }

    /// Whether the envelope names one of this crate's formats.
    fn is_streaming(bytes: &[u8]) -> bool {
        envelope::peek(bytes).is_ok_and(|h| h.format.starts_with(FORMAT_PREFIX))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use ksvd::prelude::*;

    /// A `ksvd` model and a partial state go to their own loaders; a changed byte is the loader's
    /// typed error.
    #[test]
    fn documents_go_to_the_loader_their_format_names() {
        let x = ndarray::Array2::from_shape_fn((12, 2), |(i, j)| ((i * 3 + j) % 5) as f64);
        let model = Ksvd::params()
            .kernel(Kernel::Rbf { gamma: 1.0 })
            .rank(2)
            .solver(Solver::Exact)
            .check()
            .unwrap()
            .fit_samples(Samples::dense(x.clone()).unwrap(), Samples::dense(x).unwrap())
            .unwrap()
            .to_model()
            .unwrap();
        let bytes = model.to_bytes().unwrap();
        assert!(matches!(ModelDocument::from_bytes(&bytes), Ok(ModelDocument::Ksvd(_))));
        let mut changed = bytes.clone();
        let last = changed.len() - 3;
        changed[last] ^= 1;
        assert!(matches!(
            ModelDocument::from_bytes(&changed),
            Err(DocumentError::Ksvd(_))
        ));
        let scan = envelope::seal("ksvd-streaming-scan", 1, "test", &1u8).unwrap();
        let err = ModelDocument::from_bytes(&scan).unwrap_err();
        assert!(matches!(err, DocumentError::Trained(_)));
        assert!(err.to_string().contains("not a trained model"), "{err}");
    }
}
