//! `KSVD_DATA_DIR` overrides where `DataRoot::committed` looks (own test binary: it sets a
//! process-wide variable).
#![allow(clippy::unwrap_used, clippy::expect_used)]
use ksvd_datasets::{DataRoot, DatasetError, DATA_DIR_ENV};

#[test]
fn env_var_overrides_the_committed_folder() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("MANIFEST.toml"), "version = 1\n").unwrap();
    std::env::set_var(DATA_DIR_ENV, dir.path());
    let root = DataRoot::committed().unwrap();
    assert_eq!(root.dir(), dir.path());
    assert_eq!(root.verify_all().unwrap(), 0);
    std::env::set_var(DATA_DIR_ENV, dir.path().join("nowhere"));
    assert!(matches!(DataRoot::committed(), Err(DatasetError::DataDir { .. })));
    std::env::remove_var(DATA_DIR_ENV);
    assert!(DataRoot::committed().unwrap().manifest().unwrap().files.len() > 50);
}
