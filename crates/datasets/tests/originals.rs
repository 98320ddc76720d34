//! The committed copies load into exactly the same values as the originals in `shared/data`
//! (located via `KSVD_SHARED_DATA` or `<repo>/../shared/data`), and the MANIFEST's
//! `source_sha256` values match the originals. Skipped with a note when the originals are absent.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use std::path::PathBuf;

use ksvd_datasets::{sha256_file, DataRoot, DatasetKind, DatasetName, GraphOptions, Part};

fn shared_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("KSVD_SHARED_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data"));
    dir.join("cora/cora.cites").is_file().then_some(dir)
}

#[test]
fn committed_copies_equal_the_originals() {
    let Some(dir) = shared_dir() else {
        eprintln!("shared/data not found: comparison with the originals skipped");
        return;
    };
    let (committed, shared) = (DataRoot::committed().unwrap(), DataRoot::shared(&dir));
    for f in &committed.manifest().unwrap().files {
        if let Some(rel) = f.source.strip_prefix("shared/data/") {
            assert_eq!(sha256_file(&dir.join(rel)).unwrap(), f.source_sha256, "{rel}");
        }
    }
    for name in DatasetName::ALL {
        if name == DatasetName::BcotPubmed {
            continue;
        }
        match name.kind() {
            DatasetKind::Graph => {
                let o = GraphOptions::default();
                assert_eq!(
                    committed.graph(name, &o).unwrap(),
                    shared.graph(name, &o).unwrap(),
                    "{name}"
                );
            }
            DatasetKind::DocumentTerm => {
                assert_eq!(
                    committed.document_term(name).unwrap(),
                    shared.document_term(name).unwrap(),
                    "{name}"
                )
            }
            DatasetKind::Tabular => {
                let (a, b) = (committed.tabular(name).unwrap(), shared.tabular(name).unwrap());
                // NaN != NaN: compare bit patterns.
                assert_eq!(a.features.mapv(f64::to_bits), b.features.mapv(f64::to_bits), "{name}");
                assert_eq!((a.target, a.feature_names), (b.target, b.feature_names), "{name}");
            }
            DatasetKind::Libsvm => {
                // The large bzip2 sets are compared byte for byte through the manifest above.
                if matches!(name, DatasetName::A9a | DatasetName::W8a | DatasetName::CriteoSample) {
                    assert_eq!(
                        committed.libsvm(name, Part::Train).unwrap(),
                        shared.libsvm(name, Part::Train).unwrap(),
                        "{name}"
                    );
                }
            }
        }
    }
}

/// The dense `fea` of ACM read by this crate's MAT reader equals what the `matfile` crate reads.
#[test]
fn mat_reader_agrees_with_the_matfile_crate() {
    let root = DataRoot::committed().unwrap();
    let path = root.file(DatasetName::Acm, "acm.mat").unwrap();
    let other = matfile::MatFile::parse(std::fs::File::open(&path).unwrap()).unwrap();
    let fea = other.find_by_name("fea").unwrap();
    assert_eq!(fea.size(), &vec![3025, 1870]);
    let values: Vec<f64> = match fea.data() {
        matfile::NumericData::Double { real, .. } => real.clone(),
        matfile::NumericData::UInt8 { real, .. } => real.iter().map(|&v| f64::from(v)).collect(),
        other => panic!("unexpected storage {other:?}"),
    };
    let ours = root.document_term(DatasetName::Acm).unwrap().matrix.to_dense();
    for j in 0..1870 {
        for i in 0..3025 {
            assert_eq!(ours[[i, j]], values[j * 3025 + i]);
        }
    }
}
