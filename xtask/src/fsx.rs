//! File-system helpers: the workspace root and atomic writes.
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};

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

/// Writes `path` atomically: `fill` writes into a temporary file in the same directory, which is flushed,
/// fsynced and renamed over `path` only if `fill` succeeds. Readers see the old file or the new one, never a
/// partial one; on any error the temporary file is removed and the old file is left untouched.
pub fn write_atomic_with(path: &Path, fill: impl FnOnce(&mut std::fs::File) -> Result<()>) -> Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("out");
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tmp")
        .tempfile_in(dir)
        .with_context(|| format!("creating a temporary file in {}", dir.display()))?;
    fill(tmp.as_file_mut()).with_context(|| format!("writing {}", path.display()))?;
    tmp.as_file_mut().flush()?;
    tmp.as_file()
        .sync_all()
        .with_context(|| format!("fsync of the temporary file for {}", path.display()))?;
    tmp.persist(path)
        .with_context(|| format!("renaming the temporary file to {}", path.display()))?;
    sync_dir(dir);
    Ok(())
}

/// [`write_atomic_with`] for bytes already in memory.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomic_with(path, |f| Ok(f.write_all(bytes)?))
}

/// Makes the rename durable (best effort: not every platform can open a directory).
fn sync_dir(dir: &Path) {
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
}

/// Like [`write_atomic_with`] for writers that need a path (e.g. plotters' bitmap backend picks the image
/// format from the extension): `fill` gets a temporary path in the same directory ending in `path`'s
/// extension; after it returns the file is fsynced and renamed over `path`.
pub fn write_atomic_via_path(path: &Path, fill: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("out");
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(|e| format!(".{e}"))
        .unwrap_or_default();
    let tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(&format!(".tmp{ext}"))
        .tempfile_in(dir)
        .with_context(|| format!("creating a temporary file in {}", dir.display()))?;
    fill(tmp.path()).with_context(|| format!("writing {}", path.display()))?;
    std::fs::File::open(tmp.path())?.sync_all()?;
    tmp.persist(path)
        .with_context(|| format!("renaming the temporary file to {}", path.display()))?;
    sync_dir(dir);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

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

    #[test]
    fn replaces_content() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.csv");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        assert_eq!(entries(dir.path()), vec!["a.csv"]);
    }

    #[test]
    fn failed_write_leaves_old_file_and_no_partial_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.csv");
        write_atomic(&p, b"previous").unwrap();
        let err = write_atomic_with(&p, |f| {
            f.write_all(b"half a ta")?;
            anyhow::bail!("disk on fire")
        })
        .unwrap_err();
        assert!(format!("{err:#}").contains("disk on fire"));
        assert_eq!(std::fs::read(&p).unwrap(), b"previous");
        assert_eq!(entries(dir.path()), vec!["a.csv"], "temporary file removed");

        let fresh = dir.path().join("new.md");
        assert!(write_atomic_via_path(&fresh, |_| anyhow::bail!("no")).is_err());
        assert!(!fresh.exists());
        assert_eq!(entries(dir.path()), vec!["a.csv"]);
    }

    #[test]
    fn path_writer_keeps_extension() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("fig.png");
        write_atomic_via_path(&p, |tmp| {
            assert!(tmp.to_string_lossy().ends_with(".png"));
            Ok(std::fs::write(tmp, b"x")?)
        })
        .unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"x");
    }
}
