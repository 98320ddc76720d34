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
//!
//! [`SharedEmbeddings`] is the other store: exact graph embeddings that one spec of a run
//! computes and a later spec of the same run needs again (nystrom-f1's exact references are
//! Table 1's KSVD (RBF) and KPCA embeddings), kept on disk for that run only.
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use anyhow::{Context as _, Result};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::fsx;
use crate::rows::Row;
use ksvd_graph_tasks::{embed, EmbeddingOutput, EmbeddingSpec, Embeddings};
use ksvd_linalg::CsrMatrix;
use ndarray::{Array1, Array2, ShapeBuilder};
use std::time::Instant;

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

/// Exact graph embeddings shared between the specs of one `reproduce` run.
///
/// A spec publishes the embeddings a later spec of the run computes again
/// ([`SharedEmbeddings::embed`] with `publish`): nystrom-f1's exact references (KSVD (RBF) and KPCA
/// on Cora, Citeseer and Pubmed at every bandwidth of the grid: 11 minutes of Table 1's full run) are
/// Table 1's embeddings of the same graphs with the same kernel, rank, solver and seed, and Table
/// 1 runs after it. Any spec reads what was published. The key is the adjacency's bytes and the
/// whole [`EmbeddingSpec`], so only the same computation is reused, and it gives the same bits.
/// Kept on disk (a Pubmed embedding is 79 MB; the large-scale specs measure this process's peak
/// memory), in a directory emptied when the store is opened and removed when it is dropped: nothing
/// outlives the run, so a changed solver can never be served an old embedding (the cell cache is
/// what persists between runs).
#[derive(Debug)]
pub struct SharedEmbeddings {
    /// `None`: nothing is published or read.
    dir: Option<PathBuf>,
    /// Embeddings computed, and read back, by this store's users.
    counts: [AtomicU64; 2],
}

/// What [`SharedEmbeddings::embed`] gives: the embedding and how long computing it took.
#[derive(Debug)]
pub struct SharedEmbedding {
    /// The solver's output.
    pub output: EmbeddingOutput,
    /// Seconds the computation took (where it was computed, if read back).
    pub seconds: f64,
    /// Whether it was read back from an earlier spec of the run.
    pub reused: bool,
}

/// The metadata file of a published embedding (written after its arrays: its presence means the
/// entry is complete).
#[derive(Serialize, Deserialize)]
struct SharedMeta {
    key: String,
    two_sided: bool,
    /// Per matrix: stored column-major (read back in that layout, since row dot products, and
    /// so the reconstruction's distances, sum in a layout-dependent order).
    column_major: [bool; 2],
    rank: usize,
    max_residual: Option<f64>,
    inner_residual: Option<f64>,
    seconds: f64,
}

impl SharedEmbeddings {
    /// A store that shares nothing (a run of one spec, `table1-config`, tests).
    pub fn off() -> SharedEmbeddings {
        SharedEmbeddings {
            dir: None,
            counts: Default::default(),
        }
    }

    /// A store in `dir`, emptied first (a killed run leaves its directory behind).
    pub fn in_dir(dir: PathBuf) -> Result<SharedEmbeddings> {
        if dir.exists() {
            std::fs::remove_dir_all(&dir).with_context(|| format!("emptying {}", dir.display()))?;
        }
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        Ok(SharedEmbeddings {
            dir: Some(dir),
            counts: Default::default(),
        })
    }

    /// Embeddings computed and read back so far.
    pub fn counts(&self) -> (u64, u64) {
        (
            self.counts[0].load(Ordering::Relaxed),
            self.counts[1].load(Ordering::Relaxed),
        )
    }

    /// The key of an embedding: the adjacency (shape, structure and values) and the spec.
    fn key(adjacency: &CsrMatrix, spec: &EmbeddingSpec) -> String {
        let mut h = Sha256::new();
        let (n, m) = adjacency.shape();
        h.update(format!("{n}x{m}\0").as_bytes());
        for &p in adjacency.indptr() {
            h.update((p as u64).to_le_bytes());
        }
        for &j in adjacency.indices() {
            h.update((j as u64).to_le_bytes());
        }
        for &v in adjacency.data() {
            h.update(v.to_le_bytes());
        }
        let graph: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
        // `Debug` prints every f64 with its shortest round-trip digits: equal specs, equal text.
        format!("{graph} {spec:?}")
    }

    fn stem(dir: &Path, key: &str) -> PathBuf {
        let hex: String = Sha256::digest(key.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        dir.join(hex)
    }

    /// `embed(adjacency, spec)` of `ksvd_graph_tasks`, read back if an earlier spec of the run
    /// published it; computed otherwise, and published for later specs when `publish` is set.
    /// An entry that cannot be read is computed again; one that cannot be written costs a
    /// warning (the later spec computes it again).
    pub fn embed(
        &self,
        adjacency: &CsrMatrix,
        spec: &EmbeddingSpec,
        publish: bool,
    ) -> ksvd_graph_tasks::Result<SharedEmbedding> {
        let Some(dir) = &self.dir else {
            return Self::compute(adjacency, spec);
        };
        let key = Self::key(adjacency, spec);
        let stem = Self::stem(dir, &key);
        if let Some(e) = Self::read(&stem, &key) {
            self.counts[1].fetch_add(1, Ordering::Relaxed);
            return Ok(e);
        }
        let e = Self::compute(adjacency, spec)?;
        self.counts[0].fetch_add(1, Ordering::Relaxed);
        if publish {
            if let Err(err) = Self::write(&stem, &key, &e) {
                eprintln!("warning: a shared embedding was not stored ({err:#}); later specs compute it again");
            }
        }
        Ok(e)
    }

    fn compute(adjacency: &CsrMatrix, spec: &EmbeddingSpec) -> ksvd_graph_tasks::Result<SharedEmbedding> {
        let t = Instant::now();
        let output = embed(adjacency, spec)?;
        Ok(SharedEmbedding {
            output,
            seconds: t.elapsed().as_secs_f64(),
            reused: false,
        })
    }

    fn write(stem: &Path, key: &str, e: &SharedEmbedding) -> Result<()> {
        let o = &e.output;
        let (a, b) = match &o.embeddings {
            Embeddings::Single(a) => (a, None),
            Embeddings::SourceTarget { source, target } => (source, Some(target)),
        };
        // Only what reads back as it was: contiguous matrices (in either order) and finite
        // residuals (JSON has no infinities).
        let layout = |m: &Array2<f64>| match (m.is_standard_layout(), m.t().is_standard_layout()) {
            (true, _) => Ok(false),
            (false, true) => Ok(true),
            _ => Err(anyhow::anyhow!("an embedding that is neither row- nor column-major")),
        };
        let column_major = [layout(a)?, b.map_or(Ok(false), layout)?];
        if [o.max_residual, o.inner_residual]
            .iter()
            .flatten()
            .any(|r| !r.is_finite())
        {
            anyhow::bail!("a non-finite residual");
        }
        fsx::write_atomic(&stem.with_extension("0.npy"), &ksvd_datasets::npy_bytes(a)?)?;
        if let Some(b) = b {
            fsx::write_atomic(&stem.with_extension("1.npy"), &ksvd_datasets::npy_bytes(b)?)?;
        }
        fsx::write_atomic(
            &stem.with_extension("s.npy"),
            &ksvd_datasets::npy_bytes(&o.singular_values)?,
        )?;
        let meta = SharedMeta {
            key: key.to_string(),
            two_sided: b.is_some(),
            column_major,
            rank: o.rank,
            max_residual: o.max_residual,
            inner_residual: o.inner_residual,
            seconds: e.seconds,
        };
        fsx::write_atomic(&stem.with_extension("json"), &serde_json::to_vec(&meta)?)?;
        Ok(())
    }

    fn read(stem: &Path, key: &str) -> Option<SharedEmbedding> {
        let meta: SharedMeta = serde_json::from_slice(&std::fs::read(stem.with_extension("json")).ok()?).ok()?;
        if meta.key != key {
            return None;
        }
        let matrix = |ext: &str, column_major: bool| {
            let (m, _) = ksvd_datasets::read_npy::<ndarray::Ix2>(&stem.with_extension(ext)).ok()?;
            Some(if column_major {
                let mut f = Array2::zeros(m.raw_dim().f());
                f.assign(&m);
                f
            } else {
                m
            })
        };
        let a: Array2<f64> = matrix("0.npy", meta.column_major[0])?;
        let embeddings = if meta.two_sided {
            let b = matrix("1.npy", meta.column_major[1])?;
            if b.dim() != a.dim() {
                return None;
            }
            Embeddings::SourceTarget { source: a, target: b }
        } else {
            Embeddings::Single(a)
        };
        let (singular_values, _): (Array1<f64>, _) = ksvd_datasets::read_npy(&stem.with_extension("s.npy")).ok()?;
        Some(SharedEmbedding {
            output: EmbeddingOutput {
                embeddings,
                singular_values,
                rank: meta.rank,
                max_residual: meta.max_residual,
                inner_residual: meta.inner_residual,
            },
            seconds: meta.seconds,
            reused: true,
        })
    }
}

impl Drop for SharedEmbeddings {
    fn drop(&mut self) {
        if let Some(dir) = &self.dir {
            let _ = std::fs::remove_dir_all(dir);
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

    /// A directed cycle with chords on `n` nodes.
    fn graph(n: usize, chord: usize) -> CsrMatrix {
        let arcs = (0..n).flat_map(|i| [(i, (i + 1) % n, 1.0), (i, (i * chord + 3) % n, 1.0)]);
        CsrMatrix::from_triplets(n, n, arcs).unwrap()
    }

    fn embedding_spec(method: ksvd_graph_tasks::Method, gamma: Option<f64>) -> EmbeddingSpec {
        EmbeddingSpec {
            method,
            rank: 3,
            transform: ksvd_graph_tasks::GraphInput::RowNormalizedSelfLoops,
            scaling: ksvd_graph_tasks::Scaling::Vectors,
            center_kernels: true,
            gamma,
            solver: ksvd::Solver::Exact,
            seed: 0,
            split_twins: false,
        }
    }

    /// What one spec publishes, a later one reads back bit for bit (with the time it took
    /// where it was computed); another graph or another spec is computed; unpublished
    /// embeddings are not kept; `off` shares nothing; dropping the store removes its files.
    #[test]
    fn shared_embeddings_are_the_same_computation_read_back() {
        use ksvd_graph_tasks::Method;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("shared");
        let store = SharedEmbeddings::in_dir(path.clone()).unwrap();
        let (a, b) = (graph(12, 5), graph(12, 7));
        let ksvd = embedding_spec(Method::KsvdRbf, Some(0.7));
        let first = store.embed(&a, &ksvd, true).unwrap();
        assert!(!first.reused);
        let again = store.embed(&a, &ksvd, false).unwrap();
        assert!(again.reused);
        assert_eq!(again.output.embeddings, first.output.embeddings);
        // In the same memory layout (ndarray's `==` ignores it; dot products of rows do not).
        let strides = |e: &Embeddings| match e {
            Embeddings::Single(a) => vec![a.strides().to_vec()],
            Embeddings::SourceTarget { source, target } => vec![source.strides().to_vec(), target.strides().to_vec()],
        };
        assert_eq!(strides(&again.output.embeddings), strides(&first.output.embeddings));
        assert_eq!(again.output.singular_values, first.output.singular_values);
        assert_eq!(
            (again.output.rank, again.output.max_residual),
            (first.output.rank, first.output.max_residual)
        );
        assert_eq!(again.seconds, first.seconds);
        // One-sided embeddings travel too.
        let kpca = embedding_spec(Method::Kpca, Some(0.7));
        let single = store.embed(&a, &kpca, true).unwrap().output.embeddings;
        let back = store.embed(&a, &kpca, false).unwrap().output.embeddings;
        assert_eq!(back, single);
        assert_eq!(strides(&back), strides(&single));
        // Both layouts travel: a column-major matrix is read back column-major.
        let column_major = Array2::from_shape_vec((4, 3).f(), (0..12).map(f64::from).collect()).unwrap();
        let stem = path.join("layout");
        let e = SharedEmbedding {
            output: EmbeddingOutput {
                embeddings: Embeddings::Single(column_major.clone()),
                singular_values: Array1::ones(3),
                rank: 3,
                max_residual: None,
                inner_residual: None,
            },
            seconds: 0.0,
            reused: false,
        };
        SharedEmbeddings::write(&stem, "layout", &e).unwrap();
        let Embeddings::Single(m) = SharedEmbeddings::read(&stem, "layout").unwrap().output.embeddings else {
            unreachable!("one-sided")
        };
        assert_eq!((m.strides(), &m), (column_major.strides(), &column_major));
        assert!(matches!(single, Embeddings::Single(_)));
        // Another graph, another bandwidth: computed, not read.
        assert!(!store.embed(&b, &ksvd, true).unwrap().reused);
        assert!(
            !store
                .embed(&a, &embedding_spec(Method::KsvdRbf, Some(0.8)), false)
                .unwrap()
                .reused
        );
        // Not published: computed again.
        assert!(
            !store
                .embed(&a, &embedding_spec(Method::KsvdRbf, Some(0.8)), false)
                .unwrap()
                .reused
        );
        assert_eq!(store.counts(), (5, 2));
        // A damaged entry is computed again.
        let stem = SharedEmbeddings::stem(&path, &SharedEmbeddings::key(&b, &ksvd));
        std::fs::write(stem.with_extension("0.npy"), b"not an npy file").unwrap();
        assert!(!store.embed(&b, &ksvd, false).unwrap().reused);
        // Off: nothing is read or written.
        let off = SharedEmbeddings::off();
        assert!(!off.embed(&a, &ksvd, true).unwrap().reused);
        assert!(!off.embed(&a, &ksvd, true).unwrap().reused);
        drop(store);
        assert!(!path.exists(), "the run's shared embeddings go with it");
        // A leftover of a killed run is emptied when a store opens there.
        std::fs::create_dir_all(&path).unwrap();
        std::fs::write(path.join("stale.json"), b"{}").unwrap();
        let store = SharedEmbeddings::in_dir(path.clone()).unwrap();
        assert!(!path.join("stale.json").exists());
        drop(store);
    }
}
