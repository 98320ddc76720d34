//! The input files of the large-scale table (`tab:large:scale`): user-supplied LIBSVM datasets and
//! the paper's three, at conventional places under `<data root>/external/`. One owner for this
//! data knowledge: the experiment runner (`xtask`) and the Python bindings both read it from here.
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// The LIBSVM binary datasets page (where Avazu and Criteo come from).
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

/// The paper's three datasets at conventional places under `<data root>/external/` (paths
/// relative to the data root's folder). They are not distributed with the repository
/// (gigabytes); download them as the `origin` notes say.
pub fn paper_datasets() -> Vec<UserDataset> {
    vec![
        UserDataset {
            name: "amazoncat_13k".into(),
            train_path: "external/amazoncat_13k/train.svm".into(),
            test_path: Some("external/amazoncat_13k/test.svm".into()),
            n_features: Some(203_882),
            positive_label: None,
            origin: "AmazonCat-13K (1,186,239 x 203,882, multi-label) from the Extreme Classification Repository \
                     (http://manikvarma.org/downloads/XC/XMLRepository.html); convert it to single-label LIBSVM \
                     lines (e.g. one-vs-rest for one label, set positive_label) first: the reader rejects \
                     comma-separated label lists"
                .into(),
        },
        UserDataset {
            name: "avazu".into(),
            train_path: "external/avazu/avazu-app.bz2".into(),
            test_path: Some("external/avazu/avazu-app.t.bz2".into()),
            n_features: Some(1_000_000),
            positive_label: None,
            origin: format!(
                "Avazu (avazu-app: 14,596,137 x 1,000,000) from the LIBSVM binary datasets page {LIBSVM_BINARY_PAGE}"
            ),
        },
        UserDataset {
            name: "criteo_kaggle".into(),
            train_path: "external/criteo/criteo.kaggle2014.train.svm".into(),
            test_path: None,
            n_features: Some(1_000_000),
            positive_label: None,
            origin: format!(
                "Criteo (Kaggle 2014: 45,840,617 x 1,000,000) from the LIBSVM binary datasets page {LIBSVM_BINARY_PAGE}; \
                 the test part is a seeded split of the training file"
            ),
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paper_datasets_are_relative_and_sized_as_in_the_paper() {
        let ds = paper_datasets();
        let names: Vec<&str> = ds.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["amazoncat_13k", "avazu", "criteo_kaggle"]);
        for d in &ds {
            assert!(d.train_path.is_relative() && d.train_path.starts_with("external"));
            assert!(d.test_path.as_ref().is_none_or(|p| p.is_relative()));
            assert!(!d.origin.is_empty());
        }
        // M of tab:large:scale.
        let m: Vec<_> = ds.iter().map(|d| d.n_features).collect();
        assert_eq!(m, [Some(203_882), Some(1_000_000), Some(1_000_000)]);
    }
}
