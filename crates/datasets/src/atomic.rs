//! Atomic file writes, the one implementation every crate and `xtask` calls: write a temporary
//! file in the target's directory, flush and fsync it, then rename it over the target (and fsync
//! the directory, best effort). Readers see the old file or the new one, never a partial one; on
//! any error the temporary file is removed and the old file is left untouched.
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Writes `path` atomically: `fill` writes into a temporary file in the same directory (created
/// with the parent directories if needed), which is flushed, fsynced and renamed over `path`
/// only if `fill` succeeds. Any error type that I/O errors convert into works (`io::Error`,
/// `anyhow::Error`, a crate's error enum); the I/O errors name the path.
pub fn write_atomic_with<E: From<io::Error>>(
    path: &Path,
    fill: impl FnOnce(&mut File) -> Result<(), E>,
) -> Result<(), E> {
    let mut tmp = TempFile::create(path, "")?;
    fill(tmp.file_mut()?)?;
    tmp.commit()?;
    Ok(())
}

/// [`write_atomic_with`] for bytes already in memory.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_atomic_with(path, |f| f.write_all(bytes))
}

/// Like [`write_atomic_with`] for writers that need a path (e.g. an image backend that picks the
/// format from the extension): `fill` gets a temporary path in the same directory ending in
/// `path`'s extension; after it returns the file is fsynced and renamed over `path`.
pub fn write_atomic_via_path<E: From<io::Error>>(
    path: &Path,
    fill: impl FnOnce(&Path) -> Result<(), E>,
) -> Result<(), E> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(|e| format!(".{e}"))
        .unwrap_or_default();
    let mut tmp = TempFile::create(path, &ext)?;
    // Close our handle: `fill` opens the path itself.
    tmp.file = None;
    fill(&tmp.path)?;
    tmp.commit()?;
    Ok(())
}

/// An I/O error that names the file and what was being done.
fn named(what: &str, path: &Path, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{what} {}: {e}", path.display()))
}

/// A temporary file beside the target, removed on drop unless committed.
struct TempFile {
    target: PathBuf,
    path: PathBuf,
    dir: PathBuf,
    file: Option<File>,
    committed: bool,
}

impl TempFile {
    /// Creates `.<name>.<pid>.<counter>.tmp<ext>` beside `target` (never an existing file).
    fn create(target: &Path, ext: &str) -> io::Result<Self> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let dir = target
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf();
        std::fs::create_dir_all(&dir).map_err(|e| named("creating", &dir, e))?;
        let name = target.file_name().and_then(|n| n.to_str()).unwrap_or("out");
        loop {
            let k = COUNTER.fetch_add(1, Ordering::Relaxed);
            let path = dir.join(format!(".{name}.{}.{k}.tmp{ext}", std::process::id()));
            match OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(file) => {
                    return Ok(Self {
                        target: target.to_path_buf(),
                        path,
                        dir,
                        file: Some(file),
                        committed: false,
                    })
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(named("creating a temporary file in", &dir, e)),
            }
        }
    }

    fn file_mut(&mut self) -> io::Result<&mut File> {
        self.file
            .as_mut()
            .ok_or_else(|| io::Error::other(format!("temporary file for {} is closed", self.target.display())))
    }

    /// Flush, fsync, rename over the target, fsync the directory (best effort).
    fn commit(&mut self) -> io::Result<()> {
        let file = match self.file.take() {
            Some(mut f) => {
                f.flush().map_err(|e| named("writing", &self.target, e))?;
                f
            }
            None => File::open(&self.path).map_err(|e| named("reopening the temporary file for", &self.target, e))?,
        };
        file.sync_all()
            .map_err(|e| named("fsync of the temporary file for", &self.target, e))?;
        drop(file);
        std::fs::rename(&self.path, &self.target)
            .map_err(|e| named("renaming the temporary file to", &self.target, e))?;
        self.committed = true;
        // Makes the rename durable (not every platform can open a directory).
        if let Ok(d) = File::open(&self.dir) {
            let _ = d.sync_all();
        }
        Ok(())
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if !self.committed {
            self.file = None;
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    // A failed unwrap in a test is a test failure with a backtrace, which is what we want here.
    #![allow(clippy::unwrap_used)]
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
    fn replaces_content_and_creates_directories() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("sub").join("a.csv");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        assert_eq!(entries(&dir.path().join("sub")), vec!["a.csv"]);
    }

    #[test]
    fn failed_write_leaves_old_file_and_no_partial_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.csv");
        write_atomic(&p, b"previous").unwrap();
        let err = write_atomic_with(&p, |f| {
            f.write_all(b"half a ta")?;
            Err(io::Error::other("disk on fire"))
        })
        .unwrap_err();
        assert!(err.to_string().contains("disk on fire"));
        assert_eq!(std::fs::read(&p).unwrap(), b"previous");
        assert_eq!(entries(dir.path()), vec!["a.csv"], "temporary file removed");

        let fresh = dir.path().join("new.md");
        assert!(write_atomic_via_path(&fresh, |_| Err(io::Error::other("no"))).is_err());
        assert!(!fresh.exists());
        assert_eq!(entries(dir.path()), vec!["a.csv"]);
    }

    #[test]
    fn path_writer_keeps_extension() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("fig.png");
        write_atomic_via_path(&p, |tmp| {
            assert!(tmp.to_string_lossy().ends_with(".png"));
            std::fs::write(tmp, b"x")
        })
        .unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"x");
        assert_eq!(entries(dir.path()), vec!["fig.png"]);
    }

    #[test]
    fn io_errors_name_the_path() {
        let dir = tempfile::tempdir().unwrap();
        // A directory in the way of the target: the rename fails and names the target.
        let p = dir.path().join("taken");
        std::fs::create_dir_all(p.join("inner")).unwrap();
        let err = write_atomic(&p, b"x").unwrap_err();
        assert!(err.to_string().contains("taken"), "{err}");
        assert_eq!(entries(dir.path()), vec!["taken"]);
    }
}
