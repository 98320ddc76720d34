//! User-supplied LIBSVM datasets of the large-scale table (`tab:large:scale`): the paper's three
//! (AmazonCat-13K, Avazu, Criteo) are listed in the spec's `[params] datasets`
//! (`experiments/large-scale.toml`, their one home, which `crates/python/examples/large_scale_dask.py`
//! reads too), at conventional places under `<data root>/external/`.
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// The LIBSVM binary datasets page (where Avazu and Criteo come from): named by the note of a
/// `missing-data` row when a dataset gives no origin.
pub const LIBSVM_BINARY_PAGE: &str = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/binary.html";

/// A user-supplied LIBSVM dataset (e.g. one of the paper's: AmazonCat-13K, Avazu, Criteo).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UserDataset {
    /// Dataset id of the rows.
    pub name: String,
    /// Training file (plain or `.bz2`); a relative path is resolved against the data root's folder.
    pub train_path: PathBuf,
    /// Test file; `None`: a seeded split of the training file (`test_fraction`).
    #[serde(default)]
    pub test_path: Option<PathBuf>,
    /// Number of features `M`; `None`: the largest index of the training file (one extra scan).
    #[serde(default)]
    pub n_features: Option<usize>,
    /// The positive label; `None`: the larger of exactly two labels.
    #[serde(default)]
    pub positive_label: Option<f64>,
    /// Where to get the files (goes into the note of a `missing-data` row).
    #[serde(default)]
    pub origin: String,
}
