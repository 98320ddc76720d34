//! The cell cache: each finished cell (dataset x method x setting x seed) is stored as
//! `results/.cache/<spec>/<sha256>.json`, so an interrupted run resumes where it stopped.
//!
//! The hash covers the spec file's bytes, the experiment kind and its `VERSION`, and the cell's key (any
//! serialisable value that names the cell's parameters). Editing the spec or bumping the experiment's
//! version therefore invalidates its cells. A file that cannot be read back, or whose stored key differs
//! from the requested one, is ignored and recomputed. Only finished cells are stored, whose rows are all
//! results (`ok`, `unmet`: a measured target not reached) or `not-run` (a deliberate,
//! configuration-determined skip, e.g. an in-memory path over its memory budget): `missing-data` /
//! `not-implemented` / `failed` are re-evaluated on every run ([`Status::is_final`]).
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use anyhow::{Context as _, Result};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::fsx;
use crate::rows::Row;

/// Cache of one spec's cells.
#[derive(Debug, Clone)]
pub struct Cache {
    dir: PathBuf,
    salt: Vec<u8>,
    /// Read cached cells.
    enabled: bool,
    /// Store finished cells.
    store: bool,
    /// Cells read back and cells computed so far (shared by clones).
    counts: Arc<[AtomicU64; 2]>,
}

#[derive(Serialize, Deserialize)]
struct Entry {
    key: serde_json::Value,
    rows: Vec<Row>,
}

/// Where a cell's rows came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// Read from the cache.
    Cached,
    /// Computed now.
    Computed,
}

impl Cache {
    /// A cache in `dir` whose keys are salted with the spec's bytes, the experiment kind and its version.
    /// `enabled = false` (`--no-cache`) never reads, but still writes fresh results.
    pub fn new(dir: PathBuf, spec_source: &str, kind: &str, version: u32, enabled: bool) -> Cache {
        let mut salt = Vec::new();
        salt.extend_from_slice(spec_source.as_bytes());
        salt.push(0);
        salt.extend_from_slice(format!("{kind}\0{version}\0").as_bytes());
        Cache {
            dir,
            salt,
            enabled,
            store: true,
            counts: Arc::default(),
        }
    }

    /// No cache: every cell is computed and nothing is stored (diagnosis runs outside the specs,
    /// such as `cargo xtask table1-config`).
    pub fn off() -> Cache {
        Cache {
            dir: PathBuf::new(),
            salt: Vec::new(),
            enabled: false,
            store: false,
            counts: Arc::default(),
        }
    }

    /// Cells read from the cache and cells computed by this cache's runs so far.
    pub fn counts(&self) -> (u64, u64) {
        (
            self.counts[0].load(Ordering::Relaxed),
            self.counts[1].load(Ordering::Relaxed),
        )
    }

    /// The file that holds the cell with this key.
    pub fn path_of(&self, key: &serde_json::Value) -> PathBuf {
        let mut h = Sha256::new();
        h.update(&self.salt);
        h.update(key.to_string().as_bytes());
        let hex: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
        self.dir.join(format!("{hex}.json"))
    }

    /// The cached rows of a cell, or the result of `compute` (stored when the cell is finished).
    pub fn get_or_compute<K: Serialize>(
        &self,
        key: &K,
        compute: impl FnOnce() -> Result<Vec<Row>>,
    ) -> Result<(Vec<Row>, Origin)> {
        let key = serde_json::to_value(key).context("serialising a cell key")?;
        let path = self.path_of(&key);
        if self.enabled {
            if let Some(rows) = read_entry(&path, &key) {
                self.counts[0].fetch_add(1, Ordering::Relaxed);
                return Ok((rows, Origin::Cached));
            }
        }
        let rows = compute()?;
        self.counts[1].fetch_add(1, Ordering::Relaxed);
        if self.store && rows.iter().all(|r| r.status.is_final()) {
            let bytes = serde_json::to_vec_pretty(&Entry {
                key,
                rows: rows.clone(),
            })?;
            fsx::write_atomic(&path, &bytes)?;
        }
        Ok((rows, Origin::Computed))
    }
}

fn read_entry(path: &Path, key: &serde_json::Value) -> Option<Vec<Row>> {
    let bytes = std::fs::read(path).ok()?;
    match serde_json::from_slice::<Entry>(&bytes) {
        Ok(e) if &e.key == key => Some(e.rows),
        Ok(_) => {
            eprintln!(
                "warning: cache file {} belongs to another cell; recomputing",
                path.display()
            );
            None
        }
        Err(err) => {
            eprintln!(
                "warning: ignoring unreadable cache file {} ({err}); recomputing",
                path.display()
            );
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rows::Status;
    use std::cell::Cell;

    fn rows(v: f64) -> Vec<Row> {
        vec![Row::ok("cora", "ksvd", "micro_f1", v).seed(1)]
    }

    #[test]
    fn computes_once_then_reads() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::new(dir.path().to_path_buf(), "spec", "kind", 1, true);
        let calls = Cell::new(0);
        let key = ("cora", "ksvd", 1u64);
        let compute = || {
            calls.set(calls.get() + 1);
            Ok(rows(0.5))
        };
        let (a, o1) = cache.get_or_compute(&key, compute).unwrap();
        let (b, o2) = cache.get_or_compute(&key, || unreachable!("cached")).unwrap();
        assert_eq!((a, o1), (b, Origin::Computed));
        assert_eq!((calls.get(), o2), (1, Origin::Cached));
    }

    #[test]
    fn corrupted_file_is_recomputed() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::new(dir.path().to_path_buf(), "spec", "kind", 1, true);
        let key = ("cora", 7u64);
        cache.get_or_compute(&key, || Ok(rows(0.5))).unwrap();
        let path = cache.path_of(&serde_json::to_value(key).unwrap());
        std::fs::write(&path, b"{\"key\": [\"cora\", 7], \"rows\": [{\"datas").unwrap();
        let (r, o) = cache.get_or_compute(&key, || Ok(rows(0.25))).unwrap();
        assert_eq!((r[0].value, o), (Some(0.25), Origin::Computed));
        let (r, o) = cache.get_or_compute(&key, || unreachable!("repaired")).unwrap();
        assert_eq!((r[0].value, o), (Some(0.25), Origin::Cached));
    }

    #[test]
    fn salt_and_flag_matter() {
        let dir = tempfile::tempdir().unwrap();
        let key = "cell";
        let v1 = Cache::new(dir.path().to_path_buf(), "spec", "kind", 1, true);
        v1.get_or_compute(&key, || Ok(rows(1.0))).unwrap();
        let edited = Cache::new(dir.path().to_path_buf(), "spec edited", "kind", 1, true);
        assert_eq!(
            edited.get_or_compute(&key, || Ok(rows(2.0))).unwrap().1,
            Origin::Computed
        );
        let bumped = Cache::new(dir.path().to_path_buf(), "spec", "kind", 2, true);
        assert_eq!(
            bumped.get_or_compute(&key, || Ok(rows(3.0))).unwrap().1,
            Origin::Computed
        );
        let disabled = Cache::new(dir.path().to_path_buf(), "spec", "kind", 1, false);
        assert_eq!(
            disabled.get_or_compute(&key, || Ok(rows(4.0))).unwrap().1,
            Origin::Computed
        );
    }

    #[test]
    fn non_ok_rows_are_not_stored() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::new(dir.path().to_path_buf(), "spec", "kind", 1, true);
        for status in [Status::MissingData, Status::NotImplemented, Status::Failed] {
            let missing = || Ok(vec![Row::status("x", "y", "z", status, None)]);
            cache.get_or_compute(&status, missing).unwrap();
            assert_eq!(cache.get_or_compute(&status, missing).unwrap().1, Origin::Computed);
        }
        // A target not reached is a result.
        let unmet = || {
            Ok(vec![Row::status(
                "x",
                "y",
                "z",
                Status::Unmet,
                Some("not reached".into()),
            )])
        };
        cache.get_or_compute(&"u", unmet).unwrap();
        assert_eq!(cache.get_or_compute(&"u", unmet).unwrap().1, Origin::Cached);
        // A deliberate skip beside a result is a finished cell.
        let skipped = || {
            let mut r = rows(0.5);
            r.push(Row::status(
                "cora",
                "dense",
                "seconds",
                Status::NotRun,
                Some("over budget".into()),
            ));
            Ok(r)
        };
        cache.get_or_compute(&"s", skipped).unwrap();
        assert_eq!(cache.get_or_compute(&"s", skipped).unwrap().1, Origin::Cached);
    }
}
