//! `DataRoot` on hand-made folders: checksum verification, `.bz2` lookup, missing and unlisted
//! files, user-supplied (external) files.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use std::io::Write;
use std::path::Path;

use ksvd_datasets::{
    sha256_bytes, DataRoot, DatasetError, DatasetName, ExternalFile, GraphOptions, Manifest, ManifestFile, Part,
};

const CITES: &str = "a\tb\na\tc\n";
const CONTENT: &str = "a\tX\nb\tY\nc\tX\n";

fn entry(path: &str, bytes: &[u8]) -> ManifestFile {
    ManifestFile {
        path: path.into(),
        sha256: sha256_bytes(bytes),
        bytes: bytes.len() as u64,
        source: "test".into(),
        source_sha256: String::new(),
        transform: "copy".into(),
    }
}

fn bz2(text: &str) -> Vec<u8> {
    let mut enc = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::best());
    enc.write_all(text.as_bytes()).unwrap();
    enc.finish().unwrap()
}

/// A committed-style folder with a toy `cora` (cites compressed) and a toy `a9a`.
fn make_root(dir: &Path) -> Manifest {
    std::fs::create_dir_all(dir.join("cora")).unwrap();
    std::fs::create_dir_all(dir.join("a9a")).unwrap();
    let cites = bz2(CITES);
    std::fs::write(dir.join("cora/cora.cites.bz2"), &cites).unwrap();
    std::fs::write(dir.join("cora/cora.content"), CONTENT).unwrap();
    let a9a = bz2("+1 1:1 3:1\n-1 2:1\n");
    std::fs::write(dir.join("a9a/a9a.bz2"), &a9a).unwrap();
    let manifest = Manifest {
        version: 1,
        files: vec![
            entry("cora/cora.cites.bz2", &cites),
            entry("cora/cora.content", CONTENT.as_bytes()),
            entry("a9a/a9a.bz2", &a9a),
        ],
        external: vec![ExternalFile {
            path: "bcot_pubmed/pubmed.mat".into(),
            origin: "get it from BCOT".into(),
        }],
    };
    std::fs::write(dir.join("MANIFEST.toml"), toml::to_string(&manifest).unwrap()).unwrap();
    manifest
}

#[test]
fn verified_loads_with_bz2_lookup() {
    let dir = tempfile::tempdir().unwrap();
    make_root(dir.path());
    let root = DataRoot::committed_at(dir.path()).unwrap();
    assert_eq!(root.verify_all().unwrap(), 3);
    let g = root.graph(DatasetName::Cora, &GraphOptions::default()).unwrap();
    assert_eq!((g.n_nodes(), g.n_arcs()), (3, 2));
    // b cites a: row of b has a.
    assert_eq!(g.adjacency.get(1, 0), Some(1.0));
    let d = root.libsvm(DatasetName::A9a, Part::Train).unwrap();
    assert_eq!(d.features.shape(), (2, 123));
    // The same folder read as an original-layout root (no checksums) gives the same graph.
    let shared = DataRoot::shared(dir.path());
    assert_eq!(shared.graph(DatasetName::Cora, &GraphOptions::default()).unwrap(), g);
}

#[test]
fn checksum_mismatch_names_file_and_both_hashes() {
    let dir = tempfile::tempdir().unwrap();
    let m = make_root(dir.path());
    std::fs::write(dir.path().join("cora/cora.content"), "a\tX\nb\tX\nc\tX\n").unwrap();
    let root = DataRoot::committed_at(dir.path()).unwrap();
    let e = root.graph(DatasetName::Cora, &GraphOptions::default()).unwrap_err();
    match &e {
        DatasetError::ChecksumMismatch { path, expected, actual } => {
            assert!(path.ends_with("cora/cora.content"));
            assert_eq!(expected, &m.files[1].sha256);
            assert_eq!(actual, &sha256_bytes(b"a\tX\nb\tX\nc\tX\n"));
        }
        other => panic!("{other:?}"),
    }
    assert!(e.to_string().contains("checksum mismatch"));
    assert!(matches!(root.verify_all(), Err(DatasetError::ChecksumMismatch { .. })));
}

#[test]
fn missing_unlisted_and_external_files() {
    let dir = tempfile::tempdir().unwrap();
    make_root(dir.path());
    let root = DataRoot::committed_at(dir.path()).unwrap();
    // Listed but deleted.
    std::fs::remove_file(dir.path().join("a9a/a9a.bz2")).unwrap();
    assert!(matches!(
        root.libsvm(DatasetName::A9a, Part::Train),
        Err(DatasetError::MissingFile { .. })
    ));
    // Not listed and absent: missing, with the dataset's origin.
    match root.libsvm(DatasetName::A9a, Part::Test).unwrap_err() {
        DatasetError::MissingFile { origin, .. } => assert!(origin.contains("LIBSVM"), "{origin}"),
        other => panic!("{other:?}"),
    }
    // Present on disk but not listed: the manifest is stale.
    std::fs::write(dir.path().join("a9a/a9a.t"), "+1 1:1\n").unwrap();
    assert!(matches!(
        root.libsvm(DatasetName::A9a, Part::Test),
        Err(DatasetError::NotInManifest { .. })
    ));
    // External: missing gives its origin; present is read without a checksum.
    match root.document_term(DatasetName::BcotPubmed).unwrap_err() {
        DatasetError::MissingFile { origin, .. } => assert_eq!(origin, "get it from BCOT"),
        other => panic!("{other:?}"),
    }
    // A shared root reports the registry's origin for missing files.
    let e = DataRoot::shared(dir.path())
        .document_term(DatasetName::BcotPubmed)
        .unwrap_err();
    assert!(
        matches!(e, DatasetError::MissingFile { ref origin, .. } if origin.contains("chakib401/BCOT")),
        "{e}"
    );
}

#[test]
fn bad_manifest_and_folder_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    assert!(matches!(
        DataRoot::committed_at(dir.path()),
        Err(DatasetError::DataDir { .. })
    ));
    std::fs::write(dir.path().join("MANIFEST.toml"), "version = \"one\"").unwrap();
    assert!(matches!(
        DataRoot::committed_at(dir.path()),
        Err(DatasetError::DataDir { .. })
    ));
}

#[test]
fn corrupt_committed_file_is_a_parse_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let mut m = make_root(dir.path());
    let bad = "a\tX\nb\n";
    std::fs::write(dir.path().join("cora/cora.content"), bad).unwrap();
    m.files[1] = entry("cora/cora.content", bad.as_bytes());
    std::fs::write(dir.path().join("MANIFEST.toml"), toml::to_string(&m).unwrap()).unwrap();
    let root = DataRoot::committed_at(dir.path()).unwrap();
    match root.graph(DatasetName::Cora, &GraphOptions::default()).unwrap_err() {
        DatasetError::Parse { path, line, .. } => {
            assert!(path.ends_with("cora/cora.content"));
            assert_eq!(line, 2);
        }
        other => panic!("{other:?}"),
    }
}
