//! Builds the repository's `data/` folder from the original files in `shared/data`: copies,
//! trims and compresses what the experiments need, writes each folder's SOURCE.md (the original
//! provenance plus what was changed) and `data/MANIFEST.toml` with the sha256 of every file.
//!
//! Usage: `cargo run -p ksvd-datasets --example build_committed_data -- [SHARED_DATA] [OUT_DIR]`
//! (defaults: `../shared/data` and `data` relative to the repository root). Deterministic: running
//! it twice gives byte-identical output.
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use ksvd_datasets::{keep_mat_variables, sha256_bytes, DatasetName, ExternalFile, Manifest, ManifestFile};

/// How a committed file is made from its original.
#[derive(Clone, Copy)]
enum Transform {
    Copy,
    Bzip2,
    TrimLinqsFeatures,
    MatKeepFeaGnd,
}

impl Transform {
    fn tag(self) -> &'static str {
        match self {
            Self::Copy => "copy",
            Self::Bzip2 => "bzip2",
            Self::TrimLinqsFeatures => "trim-linqs-features",
            Self::MatKeepFeaGnd => "mat-keep fea,gnd",
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Self::Copy => "byte-identical copy",
            Self::Bzip2 => "the original compressed with bzip2 -9 (decompresses to the identical bytes)",
            Self::TrimLinqsFeatures => {
                "word-indicator columns removed: each line is `<paper id>\\t<class label>` (the LINQS layout with zero feature columns; ids, labels and row order unchanged)"
            }
            Self::MatKeepFeaGnd => {
                "only the `fea` and `gnd` variables kept: the 128-byte header and their compressed data elements are copied byte for byte; the AGCN extras (`X_pca`, `sorted_*`) are dropped"
            }
        }
    }

    fn output_name(self, name: &str) -> String {
        match self {
            Self::Bzip2 => format!("{name}.bz2"),
            _ => name.to_string(),
        }
    }
}

struct Folder {
    dataset: DatasetName,
    files: &'static [(&'static str, Transform)],
    note: &'static str,
}

fn plan() -> Vec<Folder> {
    use Transform::*;
    let f = |dataset, files, note| Folder { dataset, files, note };
    vec![
        f(DatasetName::Cora, &[("cora.cites", Copy), ("cora.content", TrimLinqsFeatures), ("README", Copy)], ""),
        f(
            DatasetName::Citeseer,
            &[("citeseer.cites", Copy), ("citeseer.content", TrimLinqsFeatures), ("README", Copy)],
            "The 24.6 MB of word features are dropped; the 15 cited ids without a content row stay absent from `citeseer.content` (the loader gives them label `None`).",
        ),
        f(
            DatasetName::Pubmed,
            &[
                ("Pubmed-Diabetes.DIRECTED.cites.tab", Bzip2),
                ("Pubmed-Diabetes.GRAPH.pubmed.tab", Copy),
                ("README", Copy),
                ("pubmed_pmid_labels.derived.tsv", Bzip2),
            ],
            "Not copied: `planetoid/` and `pubmed_temporal/`, which were only needed to derive the label table (see below). The labels are DERIVED, not original.",
        ),
        f(
            DatasetName::TwitchPt,
            &[
                ("musae_PTBR_edges.csv", Bzip2),
                ("musae_PTBR_target.csv", Copy),
                ("README.txt", Copy),
                ("citing.txt", Copy),
            ],
            "",
        ),
        f(
            DatasetName::BlogCatalog,
            &[
                ("edges.csv", Bzip2),
                ("group-edges.csv", Bzip2),
                ("groups.csv", Copy),
                ("nodes.csv", Copy),
                ("readme.txt", Copy),
            ],
            "",
        ),
        f(DatasetName::Acm, &[("acm.mat", MatKeepFeaGnd)], ""),
        f(DatasetName::Dblp, &[("DBLP.mat", MatKeepFeaGnd)], ""),
        f(DatasetName::Wiki, &[("wiki.mat", Copy)], "Kept whole (it is exactly BCOT's file; the unused `W` is only 47 kB)."),
        f(
            DatasetName::BcotPubmed,
            &[],
            "No data file: BCOT's `pubmed.mat` could not be obtained. Place a copy at `data/bcot_pubmed/pubmed.mat` (listed as `[[external]]` in MANIFEST.toml, not checksummed) or load it with `ksvd_datasets::load_bicluster_mat`.",
        ),
        f(DatasetName::Diabetes, &[("pima-indians-diabetes.csv", Copy), ("pima-indians-diabetes.names", Copy)], ""),
        f(DatasetName::Ionosphere, &[("ionosphere.csv", Copy), ("ionosphere.names", Copy)], ""),
        f(DatasetName::Liver, &[("Indian Liver Patient Dataset (ILPD).csv", Copy)], ""),
        f(DatasetName::Cholesterol, &[("cholesterol.arff", Copy)], ""),
        f(DatasetName::Yacht, &[("data.txt", Copy)], ""),
        f(DatasetName::Protein, &[("CASP.csv", Bzip2)], ""),
        f(DatasetName::A9a, &[("a9a", Bzip2), ("a9a.t", Bzip2)], ""),
        f(DatasetName::W8a, &[("w8a", Bzip2)], ""),
        f(DatasetName::Ijcnn1, &[("ijcnn1.trn.bz2", Copy), ("ijcnn1.tst.bz2", Copy)], ""),
        f(DatasetName::ReutersLasvm, &[("reuters.trn.bz2", Copy), ("reuters.tst.bz2", Copy)], ""),
        f(DatasetName::CriteoSample, &[("small_train.txt", Copy), ("small_test.txt", Copy)], ""),
    ]
}

fn trim_linqs(bytes: &[u8]) -> Result<Vec<u8>, String> {
    let text = std::str::from_utf8(bytes).map_err(|e| e.to_string())?;
    let mut out = String::with_capacity(text.len() / 50);
    for line in text.lines() {
        if line.is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split('\t').collect();
        let (Some(id), Some(label)) = (fields.first(), fields.last()) else {
            continue;
        };
        out.push_str(id);
        out.push('\t');
        out.push_str(label);
        out.push('\n');
    }
    Ok(out.into_bytes())
}

fn bzip2(bytes: &[u8]) -> Result<Vec<u8>, String> {
    let mut enc = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::best());
    enc.write_all(bytes).map_err(|e| e.to_string())?;
    enc.finish().map_err(|e| e.to_string())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let repo = manifest_dir.parent().and_then(Path::parent).unwrap_or(manifest_dir);
    let mut args = std::env::args().skip(1);
    let shared = args
        .next()
        .map(PathBuf::from)
        .unwrap_or_else(|| repo.join("../shared/data"));
    let out = args.next().map(PathBuf::from).unwrap_or_else(|| repo.join("data"));
    let mut manifest = Manifest {
        version: 1,
        files: Vec::new(),
        external: Vec::new(),
    };
    let mut readme_rows = String::new();
    for folder in plan() {
        let name = folder.dataset.folder();
        let (src_dir, dst_dir) = (shared.join(name), out.join(name));
        std::fs::create_dir_all(&dst_dir)?;
        let mut table = String::new();
        for &(file, transform) in folder.files {
            let original =
                std::fs::read(src_dir.join(file)).map_err(|e| format!("{}: {e}", src_dir.join(file).display()))?;
            let bytes = match transform {
                Transform::Copy => original.clone(),
                Transform::Bzip2 => bzip2(&original)?,
                Transform::TrimLinqsFeatures => trim_linqs(&original)?,
                Transform::MatKeepFeaGnd => keep_mat_variables(&original, &["fea", "gnd"], &src_dir.join(file))?,
            };
            let out_name = transform.output_name(file);
            std::fs::write(dst_dir.join(&out_name), &bytes)?;
            writeln!(table, "| `{out_name}` | `{file}` | {} |", transform.describe())?;
            manifest.files.push(ManifestFile {
                path: format!("{name}/{out_name}"),
                sha256: sha256_bytes(&bytes),
                bytes: bytes.len() as u64,
                source: format!("shared/data/{name}/{file}"),
                source_sha256: sha256_bytes(&original),
                transform: transform.tag().to_string(),
            });
        }
        let original_source = std::fs::read(src_dir.join("SOURCE.md"))?;
        let mut md = format!(
            "# Committed copy: `data/{name}/` ({dataset})\n\n{desc}.\n\n\
             Made from `shared/data/{name}/` by `cargo run -p ksvd-datasets --example build_committed_data`; \
             `data/MANIFEST.toml` lists the sha256 of every file here and of the original it was made from, and \
             the loaders of `ksvd-datasets` verify it on every load.\n\n",
            dataset = folder.dataset,
            desc = folder.dataset.description(),
        );
        if !table.is_empty() {
            md.push_str("| committed file | made from | how |\n|---|---|---|\n");
            md.push_str(&table);
            md.push('\n');
        }
        if !folder.note.is_empty() {
            md.push_str(folder.note);
            md.push_str("\n\n");
        }
        md.push_str(
            "---\n\nThe original provenance record follows unchanged; its file tables, sizes and checksums describe the \
             ORIGINAL files in `shared/data`, not the copies above.\n\n",
        );
        md.push_str(std::str::from_utf8(&original_source)?);
        std::fs::write(dst_dir.join("SOURCE.md"), md.as_bytes())?;
        manifest.files.push(ManifestFile {
            path: format!("{name}/SOURCE.md"),
            sha256: sha256_bytes(md.as_bytes()),
            bytes: md.len() as u64,
            source: format!("shared/data/{name}/SOURCE.md"),
            source_sha256: sha256_bytes(&original_source),
            transform: "generated".to_string(),
        });
        if folder.dataset == DatasetName::BcotPubmed {
            manifest.external.push(ExternalFile {
                path: format!("{name}/pubmed.mat"),
                origin: folder.dataset.origin().to_string(),
            });
        }
        writeln!(
            readme_rows,
            "| `{}` | `{name}/` | {} |",
            folder.dataset,
            folder.dataset.description()
        )?;
    }
    let readme = format!(
        "# data/ — compact, checksummed copies of the datasets\n\n\
         Generated by `cargo run -p ksvd-datasets --example build_committed_data` from the originals in \
         `shared/data`; do not edit by hand. Each folder's `SOURCE.md` gives the provenance and says what was \
         trimmed or compressed; `MANIFEST.toml` lists every file with its sha256 and the sha256 of its original. \
         Load with `ksvd_datasets::DataRoot::committed()` (set `KSVD_DATA_DIR` to use another copy).\n\n\
         | name | folder | content |\n|---|---|---|\n{readme_rows}"
    );
    std::fs::write(out.join("README.md"), readme.as_bytes())?;
    manifest.files.push(ManifestFile {
        path: "README.md".into(),
        sha256: sha256_bytes(readme.as_bytes()),
        bytes: readme.len() as u64,
        source: "generated".into(),
        source_sha256: String::new(),
        transform: "generated".into(),
    });
    let header = "# Every committed file under data/ with its sha256 and the original it was made from.\n\
                  # Generated by `cargo run -p ksvd-datasets --example build_committed_data`; do not edit by hand.\n\n";
    std::fs::write(
        out.join("MANIFEST.toml"),
        format!("{header}{}", toml::to_string(&manifest)?),
    )?;
    let total: u64 = manifest.files.iter().map(|f| f.bytes).sum();
    println!(
        "wrote {} files, {:.1} MB, to {}",
        manifest.files.len(),
        total as f64 / 1e6,
        out.display()
    );
    Ok(())
}
