//! File-system helpers: the workspace root, root-relative paths, and (re-exported from
//! `ksvd-datasets`) atomic writes.
use std::path::{Path, PathBuf};

/// The workspace root (the parent of `xtask/`).
pub fn project_root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().unwrap_or(manifest).to_path_buf()
}

/// `text` with the workspace root's absolute path removed, so that outputs do not depend on the checkout's
/// location (`/work/main/data/x` becomes `data/x`).
pub fn root_relative(text: &str) -> String {
    let root = project_root();
    let prefix = format!("{}/", root.display());
    text.replace(&prefix, "")
}

/// `text` with absolute paths into the committed data folder made relative to it
/// (`/work/main/data/x/y.mat` becomes `x/y.mat`) and any other path under the workspace made
/// relative to the workspace: committed results must not depend on where the checkout lives.
pub fn data_relative(text: &str) -> String {
    let data = format!("{}/", project_root().join("data").display());
    root_relative(&text.replace(&data, ""))
}

/// Atomic writes (temporary file in the same directory, fsync, rename): the workspace's one
/// implementation, in `ksvd-datasets`.
pub use ksvd_datasets::{write_atomic, write_atomic_via_path};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_become_relative_to_the_data_root() {
        let root = project_root();
        let note = format!(
            "missing file {}/data/bcot/pubmed.mat; see {}/README.md",
            root.display(),
            root.display()
        );
        assert_eq!(data_relative(&note), "missing file bcot/pubmed.mat; see README.md");
        assert_eq!(data_relative("no path here"), "no path here");
    }
}
