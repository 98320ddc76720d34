//! Documents x terms matrices for biclustering (ACM, DBLP, Wiki, BCOT's PubMed), read from
//! MATLAB files with BCOT's key names `fea` (documents x terms) and `gnd` (document labels).
use std::collections::BTreeSet;
use std::path::Path;

use ksvd_linalg::CsrMatrix;

use crate::error::{DatasetError, Result};
use crate::mat::read_mat;

/// A documents x terms matrix with a ground-truth document clustering.
#[derive(Debug, Clone, PartialEq)]
pub struct DocumentTermData {
    /// Registry name or a user-chosen name.
    pub name: String,
    /// `documents x terms` matrix (rows index documents, columns terms); binary for ACM/DBLP,
    /// TF-IDF-like weights for Wiki.
    pub matrix: CsrMatrix,
    /// 0-based document cluster of every document.
    pub labels: Vec<usize>,
    /// Number of document clusters (`max(labels) + 1`).
    pub n_clusters: usize,
    /// The smallest label value in the file's `gnd`: `0` or `1`; 1 has been subtracted when it is `1`.
    pub label_base: usize,
    /// `true` when `fea` was stored as a MATLAB sparse array, `false` when dense.
    pub stored_sparse: bool,
}

/// Counts for the paper's biclustering table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DocumentTermStats {
    /// Number of documents (rows).
    pub documents: usize,
    /// Number of terms (columns).
    pub terms: usize,
    /// Stored non-zeros.
    pub nnz: usize,
    /// Document clusters.
    pub clusters: usize,
    /// Documents without any term.
    pub empty_documents: usize,
    /// Terms that occur in no document.
    pub empty_terms: usize,
}

impl DocumentTermData {
    /// Sizes and cluster counts.
    pub fn stats(&self) -> DocumentTermStats {
        let m = &self.matrix;
        let empty_documents = (0..m.nrows()).filter(|&i| m.row(i).0.is_empty()).count();
        let mut used = vec![false; m.ncols()];
        m.indices().iter().for_each(|&j| used[j] = true);
        DocumentTermStats {
            documents: m.nrows(),
            terms: m.ncols(),
            nnz: m.nnz(),
            clusters: self.n_clusters,
            empty_documents,
            empty_terms: used.iter().filter(|u| !**u).count(),
        }
    }

    /// Number of documents in every cluster.
    pub fn cluster_sizes(&self) -> Vec<usize> {
        let mut c = vec![0; self.n_clusters];
        for &l in &self.labels {
            if l >= c.len() {
                c.resize(l + 1, 0);
            }
            c[l] += 1;
        }
        c
    }
}

/// Loads a biclustering `.mat` file (or `.mat.bz2`): `fea` documents x terms (dense or sparse, any
/// numeric storage type) and `gnd` document labels (a column or row vector of non-negative
/// integers). Labels are made 0-based: if no label is 0 the file is taken as 1-based and 1 is
/// subtracted (DBLP, Wiki and BCOT's PubMed are 1-based, the AGCN `acm.mat` is 0-based). Other
/// variables (`W`, `X_pca`, ...) are ignored.
pub fn load_bicluster_mat(name: &str, path: &Path) -> Result<DocumentTermData> {
    let mat = read_mat(path)?;
    let missing = |key: &str| DatasetError::Inconsistent {
        path: path.to_path_buf(),
        message: format!(
            "no numeric variable `{key}` (found: {})",
            mat.variables
                .iter()
                .map(|v| v.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let fea = mat.get("fea").ok_or_else(|| missing("fea"))?;
    let gnd = mat.get("gnd").ok_or_else(|| missing("gnd"))?;
    let matrix = fea.to_csr(path)?;
    let (gr, gc) = gnd.shape(path)?;
    if gr.min(gc) != 1 || gr.max(gc) != matrix.nrows() {
        return Err(DatasetError::inconsistent(
            path,
            format!(
                "`gnd` is {gr} x {gc}, expected a vector of {} labels (one per row of `fea`)",
                matrix.nrows()
            ),
        ));
    }
    let raw = gnd.dense_values(path)?;
    let mut labels = Vec::with_capacity(raw.len());
    for (i, &x) in raw.iter().enumerate() {
        if !(x >= 0.0 && x.fract() == 0.0 && x < 1e9) {
            return Err(DatasetError::inconsistent(
                path,
                format!("`gnd[{i}]` = {x} is not a non-negative integer"),
            ));
        }
        labels.push(x as usize);
    }
    let label_base = usize::from(!labels.is_empty() && !labels.contains(&0));
    labels.iter_mut().for_each(|l| *l -= label_base);
    let distinct: BTreeSet<usize> = labels.iter().copied().collect();
    let n_clusters = labels.iter().max().map_or(0, |m| m + 1);
    if distinct.len() != n_clusters {
        return Err(DatasetError::inconsistent(
            path,
            format!(
                "labels use {} distinct values but range up to {}: some cluster is empty",
                distinct.len(),
                n_clusters
            ),
        ));
    }
    Ok(DocumentTermData {
        name: name.to_string(),
        matrix,
        labels,
        n_clusters,
        label_base,
        stored_sparse: matches!(fea.data, crate::mat::MatData::Sparse { .. }),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::mat::tests::{write_mat, TestVar};

    #[test]
    fn zero_and_one_based_labels_are_normalised() {
        let dir = tempfile::tempdir().unwrap();
        for (base, sparse) in [(0.0, false), (1.0, true)] {
            let fea = if sparse {
                TestVar::Sparse {
                    name: "fea",
                    rows: 3,
                    cols: 2,
                    ir: vec![0, 2, 1],
                    jc: vec![0, 2, 3],
                    pr: vec![1.0; 3],
                }
            } else {
                TestVar::Dense {
                    name: "fea",
                    rows: 3,
                    cols: 2,
                    values: vec![1.0, 0.0, 1.0, 0.0, 1.0, 0.0],
                    as_uint8: true,
                }
            };
            let gnd = TestVar::Dense {
                name: "gnd",
                rows: 3,
                cols: 1,
                values: vec![base, base + 1.0, base],
                as_uint8: true,
            };
            let p = dir.path().join(format!("t{base}.mat"));
            std::fs::write(&p, write_mat(&[fea, gnd], sparse)).unwrap();
            let d = load_bicluster_mat("toy", &p).unwrap();
            assert_eq!(d.labels, vec![0, 1, 0]);
            assert_eq!(d.label_base, base as usize);
            assert_eq!(d.stored_sparse, sparse);
            assert_eq!(d.n_clusters, 2);
            assert_eq!(d.matrix.to_dense(), ndarray::array![[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]]);
            assert_eq!(d.stats().empty_terms, 0);
        }
    }

    #[test]
    fn missing_variable_and_wrong_gnd_length_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("bad.mat");
        let fea = || TestVar::Dense {
            name: "fea",
            rows: 2,
            cols: 1,
            values: vec![1.0, 1.0],
            as_uint8: false,
        };
        std::fs::write(&p, write_mat(&[fea()], false)).unwrap();
        let e = load_bicluster_mat("bad", &p).unwrap_err();
        assert!(
            matches!(e, DatasetError::Inconsistent { .. }) && e.to_string().contains("`gnd`"),
            "{e}"
        );
        let gnd = TestVar::Dense {
            name: "gnd",
            rows: 3,
            cols: 1,
            values: vec![1.0; 3],
            as_uint8: false,
        };
        std::fs::write(&p, write_mat(&[fea(), gnd], false)).unwrap();
        assert!(matches!(
            load_bicluster_mat("bad", &p),
            Err(DatasetError::Inconsistent { .. })
        ));
        let e = load_bicluster_mat("bad", &dir.path().join("nope.mat")).unwrap_err();
        assert!(matches!(e, DatasetError::MissingFile { .. }));
    }
}
