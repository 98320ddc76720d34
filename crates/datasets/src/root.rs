//! Where the files are: the repository's committed, checksummed `data/` folder or a user-given
//! folder with the original layout (such as `shared/data`), and the high-level loaders on top.
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::docterm::{load_bicluster_mat, DocumentTermData, DocumentTermStats};
use crate::error::{DatasetError, Result};
use crate::graph::{
    load_asu_graph, load_linqs_graph, load_musae_graph, load_pubmed_graph, AsuFiles, Graph, GraphOptions, GraphStats,
    PubmedLabelFile,
};
use crate::io::sha256_file;
use crate::libsvm::{
    libsvm_chunks, read_libffm, read_libsvm, FfmColumns, LibsvmChunks, LibsvmData, LibsvmOptions, LibsvmStats,
};
use crate::registry::{DatasetKind, DatasetName};
use crate::tabular::{load_table, table_spec, TabularData, TabularStats};

/// The manifest `data/MANIFEST.toml`: every committed file with its checksum and provenance.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// Format version (1).
    pub version: u32,
    /// Committed files.
    #[serde(default, rename = "file")]
    pub files: Vec<ManifestFile>,
    /// Files the loaders know but that are not committed (user-supplied).
    #[serde(default, rename = "external")]
    pub external: Vec<ExternalFile>,
}

/// One committed file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestFile {
    /// Path relative to the data folder, `/`-separated.
    pub path: String,
    /// Hex sha256 of the committed bytes.
    pub sha256: String,
    /// Size in bytes.
    pub bytes: u64,
    /// The original it was made from (path relative to `shared/data`, or "generated").
    pub source: String,
    /// Hex sha256 of that original (empty for generated files).
    pub source_sha256: String,
    /// How it was made: `copy`, `bzip2`, `trim-linqs-features`, `mat-keep fea,gnd`, `generated`.
    pub transform: String,
}

impl ManifestFile {
    /// Checks that the sha256 of the file at `path` (this entry's file below its data root) is
    /// this entry's; errors: [`DatasetError::ChecksumMismatch`], or the read error.
    fn verify(&self, path: &Path) -> Result<()> {
        let actual = sha256_file(path)?;
        if actual.eq_ignore_ascii_case(&self.sha256) {
            Ok(())
        } else {
            Err(DatasetError::ChecksumMismatch {
                path: path.to_path_buf(),
                expected: self.sha256.clone(),
                actual,
            })
        }
    }
}

/// A file that is known but not committed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExternalFile {
    /// Path relative to the data folder where a user may place it.
    pub path: String,
    /// Where to get it.
    pub origin: String,
}

/// Which part of a LIBSVM dataset to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Part {
    /// The training file.
    #[default]
    Train,
    /// The test file (a9a.t, ijcnn1.tst, reuters.tst, criteo small_test; w8a has none here).
    Test,
}

/// File names, width and format of a registry LIBSVM dataset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SparseSpec {
    /// Training file name inside the dataset folder.
    pub train: &'static str,
    /// Test file name inside the dataset folder.
    pub test: &'static str,
    /// Number of feature columns (as published by LIBSVM; fixes a9a.t's missing feature 123).
    pub n_features: usize,
    /// `None` for LIBSVM text, `Some` for LIBFFM with this column mapping.
    pub ffm: Option<FfmColumns>,
}

/// Files and width of a registry sparse dataset.
pub fn sparse_spec(name: DatasetName) -> Option<SparseSpec> {
    let s = |train, test, n_features| SparseSpec {
        train,
        test,
        n_features,
        ffm: None,
    };
    Some(match name {
        DatasetName::A9a => s("a9a", "a9a.t", 123),
        DatasetName::W8a => s("w8a", "w8a.t", 300),
        DatasetName::Ijcnn1 => s("ijcnn1.trn.bz2", "ijcnn1.tst.bz2", 22),
        DatasetName::ReutersLasvm => s("reuters.trn.bz2", "reuters.tst.bz2", 8315),
        DatasetName::CriteoSample => SparseSpec {
            train: "small_train.txt",
            test: "small_test.txt",
            n_features: 18 * 10_000,
            ffm: Some(FfmColumns::FieldOffset {
                stride: 10_000,
                n_fields: 18,
            }),
        },
        _ => return None,
    })
}

/// Any loaded dataset.
#[derive(Debug, Clone, PartialEq)]
pub enum Dataset {
    /// A labelled graph.
    Graph(Graph),
    /// A documents x terms matrix.
    DocumentTerm(DocumentTermData),
    /// A dense table.
    Tabular(TabularData),
    /// A sparse LIBSVM sample.
    Libsvm(LibsvmData),
}

/// The statistics of any dataset (what the paper's dataset tables report).
#[derive(Debug, Clone, PartialEq)]
pub enum DatasetStats {
    /// Nodes, arcs, classes.
    Graph(GraphStats),
    /// Documents, terms, clusters.
    DocumentTerm(DocumentTermStats),
    /// Samples, features, classes.
    Tabular(TabularStats),
    /// Rows, features, non-zeros.
    Libsvm(LibsvmStats),
}

impl Dataset {
    /// The kind of the value.
    pub fn kind(&self) -> DatasetKind {
        match self {
            Self::Graph(_) => DatasetKind::Graph,
            Self::DocumentTerm(_) => DatasetKind::DocumentTerm,
            Self::Tabular(_) => DatasetKind::Tabular,
            Self::Libsvm(_) => DatasetKind::Libsvm,
        }
    }

    /// Statistics for the dataset tables.
    pub fn stats(&self) -> DatasetStats {
        match self {
            Self::Graph(g) => DatasetStats::Graph(g.stats()),
            Self::DocumentTerm(d) => DatasetStats::DocumentTerm(d.stats()),
            Self::Tabular(t) => DatasetStats::Tabular(t.stats()),
            Self::Libsvm(l) => DatasetStats::Libsvm(l.stats()),
        }
    }
}

/// A folder of datasets, one sub-folder per dataset ([`DatasetName::folder`]).
///
/// * [`DataRoot::committed`]: the repository's `data/` folder; every file is checked against the
///   sha256 in `data/MANIFEST.toml` before it is parsed.
/// * [`DataRoot::shared`]: any folder with the original layout (e.g. `shared/data`); no checksums.
///
/// In both, a file `name` is looked up as `name` and then `name.bz2` (read through a bzip2 decoder).
#[derive(Debug, Clone)]
pub struct DataRoot {
    dir: PathBuf,
    manifest: Option<(PathBuf, Manifest)>,
}

/// Environment variable that overrides where [`DataRoot::committed`] looks.
pub const DATA_DIR_ENV: &str = "KSVD_DATA_DIR";

impl DataRoot {
    /// The committed `data/` folder: `$KSVD_DATA_DIR` if set, else the first `data/MANIFEST.toml`
    /// found walking up from this crate's source directory, then from the current directory.
    pub fn committed() -> Result<Self> {
        if let Some(dir) = std::env::var_os(DATA_DIR_ENV) {
            return Self::committed_at(PathBuf::from(dir));
        }
        let mut starts = vec![PathBuf::from(env!("CARGO_MANIFEST_DIR"))];
        if let Ok(cwd) = std::env::current_dir() {
            starts.push(cwd);
        }
        for start in &starts {
            for dir in start.ancestors() {
                let candidate = dir.join("data");
                if candidate.join("MANIFEST.toml").is_file() {
                    return Self::committed_at(candidate);
                }
            }
        }
        Err(DatasetError::DataDir {
            message: format!(
                "no data/MANIFEST.toml above {}; set {DATA_DIR_ENV} to the repository's data folder",
                starts
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(" or ")
            ),
        })
    }

    /// A committed-style folder at `dir` (must contain `MANIFEST.toml`).
    pub fn committed_at(dir: impl Into<PathBuf>) -> Result<Self> {
        let dir = dir.into();
        let mpath = dir.join("MANIFEST.toml");
        let text = std::fs::read_to_string(&mpath).map_err(|e| DatasetError::DataDir {
            message: format!("cannot read {}: {e}", mpath.display()),
        })?;
        let manifest: Manifest = toml::from_str(&text).map_err(|e| DatasetError::DataDir {
            message: format!("{} is not a valid manifest: {e}", mpath.display()),
        })?;
        Ok(Self {
            dir,
            manifest: Some((mpath, manifest)),
        })
    }

    /// A folder with the original file layout (e.g. `/work/shared/data`), read without checksums.
    pub fn shared(dir: impl Into<PathBuf>) -> Self {
        Self {
            dir: dir.into(),
            manifest: None,
        }
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The manifest, for committed roots.
    pub fn manifest(&self) -> Option<&Manifest> {
        self.manifest.as_ref().map(|(_, m)| m)
    }

    /// Path of the file `name` of `dataset` (or of `name.bz2`), checksum-verified for committed
    /// roots. Errors: [`DatasetError::MissingFile`] naming where the file comes from,
    /// [`DatasetError::ChecksumMismatch`], or [`DatasetError::NotInManifest`] for an unlisted file
    /// found on disk.
    pub fn file(&self, dataset: DatasetName, name: &str) -> Result<PathBuf> {
        let rel = format!("{}/{}", dataset.folder(), name);
        let candidates = [rel.clone(), format!("{rel}.bz2")];
        let Some((mpath, manifest)) = &self.manifest else {
            return candidates
                .iter()
                .map(|c| self.dir.join(c))
                .find(|p| p.is_file())
                .ok_or_else(|| DatasetError::MissingFile {
                    path: self.dir.join(&rel),
                    origin: dataset.origin().to_string(),
                });
        };
        if let Some(entry) = manifest.files.iter().find(|f| candidates.contains(&f.path)) {
            let path = self.dir.join(&entry.path);
            if !path.is_file() {
                return Err(DatasetError::MissingFile {
                    path,
                    origin: format!("listed in {} but absent; {}", mpath.display(), dataset.origin()),
                });
            }
            entry.verify(&path)?;
            return Ok(path);
        }
        if let Some(ext) = manifest.external.iter().find(|f| candidates.contains(&f.path)) {
            let path = self.dir.join(&ext.path);
            return if path.is_file() {
                Ok(path)
            } else {
                Err(DatasetError::MissingFile {
                    path,
                    origin: ext.origin.clone(),
                })
            };
        }
        if candidates.iter().any(|c| self.dir.join(c).is_file()) {
            return Err(DatasetError::NotInManifest {
                path: rel,
                manifest: mpath.clone(),
            });
        }
        Err(DatasetError::MissingFile {
            path: self.dir.join(&rel),
            origin: format!("not part of the committed data; {}", dataset.origin()),
        })
    }

    /// Checks the sha256 of every committed file; returns how many were checked.
    pub fn verify_all(&self) -> Result<usize> {
        let Some((_, manifest)) = &self.manifest else {
            return Ok(0);
        };
        for entry in &manifest.files {
            entry.verify(&self.dir.join(&entry.path))?;
        }
        Ok(manifest.files.len())
    }

    fn expect_kind(name: DatasetName, requested: DatasetKind) -> Result<()> {
        if name.kind() == requested {
            Ok(())
        } else {
            Err(DatasetError::WrongKind {
                dataset: name.as_str().to_string(),
                requested: requested.as_str(),
                actual: name.kind().as_str(),
            })
        }
    }

    /// Loads any dataset with default options (graphs: self-loops as in the file; LIBSVM: the
    /// training part).
    pub fn load(&self, name: DatasetName) -> Result<Dataset> {
        Ok(match name.kind() {
            DatasetKind::Graph => Dataset::Graph(self.graph(name, &GraphOptions::default())?),
            DatasetKind::DocumentTerm => Dataset::DocumentTerm(self.document_term(name)?),
            DatasetKind::Tabular => Dataset::Tabular(self.tabular(name)?),
            DatasetKind::Libsvm => Dataset::Libsvm(self.libsvm(name, Part::Train)?),
        })
    }

    /// Loads a graph dataset (`cora`, `citeseer`, `pubmed`, `twitch_pt`, `blogcatalog`).
    pub fn graph(&self, name: DatasetName, options: &GraphOptions) -> Result<Graph> {
        Self::expect_kind(name, DatasetKind::Graph)?;
        let f = |n: &str| self.file(name, n);
        match name {
            DatasetName::Cora => load_linqs_graph("cora", &f("cora.cites")?, &f("cora.content")?, options),
            DatasetName::Citeseer => {
                load_linqs_graph("citeseer", &f("citeseer.cites")?, &f("citeseer.content")?, options)
            }
            DatasetName::Pubmed => load_pubmed_graph(
                &f("Pubmed-Diabetes.DIRECTED.cites.tab")?,
                PubmedLabelFile::Derived(&f("pubmed_pmid_labels.derived.tsv")?),
                options,
            ),
            DatasetName::TwitchPt => load_musae_graph(
                "twitch_pt",
                &f("musae_PTBR_edges.csv")?,
                &f("musae_PTBR_target.csv")?,
                options,
            ),
            _ => {
                let (edges, nodes, groups, group_edges) = (
                    f("edges.csv")?,
                    f("nodes.csv")?,
                    f("groups.csv")?,
                    f("group-edges.csv")?,
                );
                let files = AsuFiles {
                    edges: &edges,
                    nodes: &nodes,
                    groups: &groups,
                    group_edges: &group_edges,
                };
                load_asu_graph("blogcatalog", files, options)
            }
        }
    }

    /// Loads a document-term dataset (`acm`, `dblp`, `wiki`, `bcot_pubmed`).
    pub fn document_term(&self, name: DatasetName) -> Result<DocumentTermData> {
        Self::expect_kind(name, DatasetKind::DocumentTerm)?;
        let file = match name {
            DatasetName::Acm => "acm.mat",
            DatasetName::Dblp => "DBLP.mat",
            DatasetName::Wiki => "wiki.mat",
            _ => "pubmed.mat",
        };
        load_bicluster_mat(name.as_str(), &self.file(name, file)?)
    }

    /// Loads a tabular dataset (`diabetes`, `ionosphere`, `liver`, `cholesterol`, `yacht`, `protein`).
    pub fn tabular(&self, name: DatasetName) -> Result<TabularData> {
        Self::expect_kind(name, DatasetKind::Tabular)?;
        let Some((file, spec)) = table_spec(name) else {
            return Err(DatasetError::WrongKind {
                dataset: name.to_string(),
                requested: "tabular",
                actual: "other",
            });
        };
        load_table(name.as_str(), &self.file(name, file)?, &spec)
    }

    fn sparse(&self, name: DatasetName, part: Part) -> Result<(PathBuf, SparseSpec)> {
        Self::expect_kind(name, DatasetKind::Libsvm)?;
        let Some(spec) = sparse_spec(name) else {
            return Err(DatasetError::WrongKind {
                dataset: name.to_string(),
                requested: "LIBSVM",
                actual: "other",
            });
        };
        let file = match part {
            Part::Train => spec.train,
            Part::Test => spec.test,
        };
        Ok((self.file(name, file)?, spec))
    }

    /// Loads a part of a LIBSVM dataset with the published feature count (criteo_sample: LIBFFM
    /// with columns `field * 10000 + feature`).
    pub fn libsvm(&self, name: DatasetName, part: Part) -> Result<LibsvmData> {
        let (path, spec) = self.sparse(name, part)?;
        let mut d = match spec.ffm {
            Some(cols) => read_libffm(&path, cols)?,
            None => read_libsvm(&path, &LibsvmOptions::default().n_features(spec.n_features))?,
        };
        d.name = name.to_string();
        Ok(d)
    }

    /// Streams a part of a LIBSVM dataset in chunks of at most `chunk_rows` rows (not available
    /// for the LIBFFM `criteo_sample`).
    pub fn libsvm_chunks(&self, name: DatasetName, part: Part, chunk_rows: usize) -> Result<LibsvmChunks> {
        let (path, spec) = self.sparse(name, part)?;
        if spec.ffm.is_some() {
            return Err(DatasetError::UnsupportedFormat {
                path,
                message: "streaming reads LIBSVM text; this file is LIBFFM (load it whole with `libsvm`)".into(),
            });
        }
        libsvm_chunks(&path, chunk_rows, &LibsvmOptions::default().n_features(spec.n_features))
    }
}
