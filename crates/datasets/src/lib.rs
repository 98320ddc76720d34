//! # ksvd-datasets
//!
//! Every dataset of the paper's experiments (and a few stand-ins), read from its original file
//! format into typed values, plus checksummed compact copies committed under the repository's
//! `data/` folder so that a fresh clone needs nothing else.
//!
//! | kind | value | datasets |
//! |---|---|---|
//! | directed / undirected graph with node labels (§5.1, node classification) | [`Graph`] | `cora`, `citeseer`, `pubmed`, `twitch_pt`, `blogcatalog` |
//! | documents x terms with document clusters (§5.2, biclustering) | [`DocumentTermData`] | `acm`, `dblp`, `wiki`, `bcot_pubmed` (user-supplied) |
//! | dense table with a target (LS-SVM experiments) | [`TabularData`] | `diabetes`, `ionosphere`, `liver`, `cholesterol`, `yacht`, `protein` |
//! | sparse LIBSVM sample (large-scale stand-ins, streamed) | [`LibsvmData`], [`LibsvmChunks`] | `a9a`, `w8a`, `ijcnn1`, `reuters_lasvm`, `criteo_sample` |
//!
//! It also owns every reader of the files a user hands to the `ksvd` command: `.npy` matrices of any numeric dtype ([`read_npy_matrix`]),
//! CSV / whitespace text ([`read_text_matrix`]), LIBSVM ([`read_libsvm`]), scipy CSR `.npz`
//! ([`read_npz_csr`]), edge lists ([`read_edge_list`]) and index lists ([`read_index_list`]);
//! [`MatrixFormat::of_path`] tells them apart by extension ([`MatrixFormat::sniff`] by their first
//! bytes, for standard input and the `_from` readers that take any reader), and [`npy_bytes`] /
//! [`csv_bytes`] encode results.
//!
//! ## Conventions
//!
//! * **Edge direction.** `Graph::adjacency` is `n x n` with `A[src, dst] = 1` for an arc
//!   `src -> dst`: rows are sources. In the citation graphs the source is the *citing* paper and
//!   the target the *cited* one. The LINQS `.cites` files of Cora and CiteSeer write
//!   `<cited>\t<citing>` (right cites left), whereas Pubmed's `DIRECTED.cites.tab` writes
//!   `paper:<citing> | paper:<cited>` (left cites right); both end up as citing -> cited.
//! * **Undirected graphs** (Twitch PT, BlogCatalog) store both directions, so `A` is symmetric
//!   and the number of stored arcs is twice the number of pairs. Self-loops are an explicit
//!   option ([`SelfLoops`]): with [`SelfLoops::AddMissing`] Twitch PT has
//!   `2 * 31299 + 1912 = 64510` arcs, the paper's (PyTorch Geometric's) count.
//! * **Labels** are 0-based class indices. LINQS class strings are numbered in byte order
//!   (Cora: `Case_Based` = 0 ... `Theory` = 6); Pubmed's LINQS labels `1..=3` become `0..=2`;
//!   Twitch's `mature`: `False` = 0, `True` = 1; BlogCatalog is multi-label ([`Labels::Multi`]).
//!   CiteSeer keeps all 3327 ids of its cites file; the 15 without a content row have label `None`.
//! * **Biclustering `.mat` files** hold `fea` (documents x terms, dense or sparse) and `gnd`;
//!   `gnd` is normalised to 0-based (ACM's file is 0-based, DBLP's and Wiki's 1-based).
//! * **Tables** keep missing values as `NaN`; [`Imputer`] fills them from training rows only
//!   (mean or median; nominal columns by their mode). Liver's gender is `Female` = 0, `Male` = 1.
//!   Classification targets are class indices (`0.0`, `1.0`; e.g. ionosphere `b` = 0, `g` = 1,
//!   liver "patient" (selector 1) = 1).
//! * **LIBSVM** indices are 1-based in files and 0-based in the [`CsrMatrix`]; the registry
//!   fixes the published feature counts (a9a 123, w8a 300, ijcnn1 22, reuters 8315).
//!
//! ## What was derived or trimmed
//!
//! * Pubmed labels come from a **derived** PMID -> label table (the original
//!   `NODE.paper.tab` was unobtainable): built by exact graph matching to Planetoid; 937 PMIDs
//!   in twin groups may carry a twin's label. [`read_pubmed_node_paper`] reads the original if
//!   you have it.
//! * The committed `data/` copies drop what no experiment uses: the word-indicator columns of
//!   the LINQS `.content` files (ids and labels stay, same format), the `X_pca` extras of
//!   `acm.mat` / `DBLP.mat` (the `fea`/`gnd` elements are copied byte for byte), Pubmed's
//!   Planetoid/temporal helper files; large text files are bzip2-compressed. `data/MANIFEST.toml`
//!   records the sha256 of every committed file and of its original, and every load verifies it.
//! * BCOT's PubMed 19717 x 500 matrix is not available: `bcot_pubmed` loads only a user-supplied
//!   `pubmed.mat` and otherwise fails with [`DatasetError::MissingFile`] saying where to get it.
//!
//! ## Example
//!
//! ```
//! use ksvd_datasets::{DataRoot, DatasetName, GraphOptions, SelfLoops};
//!
//! let root = DataRoot::committed()?; // the repository's data/ folder, checksums verified
//! let cora = root.graph(DatasetName::Cora, &GraphOptions::default())?;
//! let s = cora.stats();
//! assert_eq!((s.nodes, s.arcs, s.classes), (2708, 5429, 7));
//!
//! // Names come from specs as strings.
//! let twitch: DatasetName = "twitch_pt".parse()?;
//! let g = root.graph(twitch, &GraphOptions::default().self_loops(SelfLoops::AddMissing))?;
//! assert_eq!(g.n_arcs(), 64510);
//! # Ok::<(), ksvd_datasets::DatasetError>(())
//! ```
//!
//! Originals in their own layout load the same way with `DataRoot::shared("/path/to/shared/data")`.
//! The committed copies are rebuilt from the originals by
//! `cargo run -p ksvd-datasets --example build_committed_data -- <shared/data> <repo>/data`.
//!
//! Where to go next: [`DataRoot`] (loading), [`DatasetName`] (the registry), the per-format
//! readers ([`load_linqs_graph`], [`load_bicluster_mat`], [`load_table`], [`read_libsvm`],
//! [`libsvm_chunks`], [`read_text_matrix`], [`read_npy_matrix`], [`read_npz_csr`],
//! [`read_edge_list`]). Writing files is atomic everywhere in the workspace through the one helper
//! here: [`write_atomic`] (temporary file in the same directory, fsync, rename; also
//! [`write_atomic_with`] and [`write_atomic_via_path`]), used by the CLI, streaming and `xtask`;
//! documents written for a program to read back (fitted models, partial states) are sealed in
//! the one versioned, checksummed [`envelope`].

mod atomic;
mod docterm;
mod edges;
pub mod envelope;
mod error;
mod graph;
mod io;
mod libsvm;
mod mat;
mod matrix;
mod registry;
mod root;
mod tabular;

pub use atomic::{write_atomic, write_atomic_via_path, write_atomic_with};
pub use docterm::{load_bicluster_mat, DocumentTermData, DocumentTermStats};
pub use edges::{read_edge_list, EdgeList, NodeIds};
pub use error::{DatasetError, Result};
pub use graph::{
    load_asu_graph, load_linqs_graph, load_musae_graph, load_pubmed_graph, read_linqs_cites, read_linqs_content,
    read_pubmed_cites, read_pubmed_derived_labels, read_pubmed_node_paper, AsuFiles, Graph, GraphOptions, GraphStats,
    Labels, LinqsContent, PubmedLabelFile, PubmedLabelRow, PubmedMatch, PubmedNodeTable, SelfLoops,
};
pub use io::{sha256_bytes, sha256_file};
pub use ksvd_linalg::CsrMatrix;
pub use libsvm::{
    libsvm_chunks, read_libffm, read_libsvm, FfmColumns, LibsvmChunk, LibsvmChunks, LibsvmData, LibsvmOptions,
    LibsvmStats,
};
pub use mat::{keep_mat_variables, parse_mat, read_mat, MatData, MatFile, MatVariable};
pub use matrix::{
    csv_bytes, npy_bytes, read_index_list, read_npy, read_npy_matrix, read_npy_matrix_from, read_npz_csr,
    read_npz_csr_from, read_text_matrix, read_text_matrix_from, MatrixFormat, NpyDtype, TextOptions,
};
pub use registry::{DatasetKind, DatasetName};
pub use root::{
    sparse_spec, DataRoot, Dataset, DatasetStats, ExternalFile, Manifest, ManifestFile, Part, SparseSpec, DATA_DIR_ENV,
};
pub use tabular::{
    load_table, table_spec, ColumnKind, ImputeStrategy, Imputer, TableFormat, TableSpec, TabularData, TabularStats,
    TargetPosition, TargetSpec, Task, DIABETES_ZERO_MEANS_MISSING,
};
