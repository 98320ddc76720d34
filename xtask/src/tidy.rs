//! Workspace hygiene checks run by `cargo test -p xtask` (after rust-analyzer's `xtask/src/tidy.rs`):
//! every crate's root file starts with `//!` docs, no Rust file has an ignored test or a stray `dbg!`, and
//! progress is reported with the one type, `ksvd_linalg::Progress`.
use std::path::{Path, PathBuf};

use crate::fsx::project_root;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        let name = e.file_name();
        let name = name.to_string_lossy();
        if p.is_dir() {
            if !name.starts_with('.') && name != "target" && !name.starts_with("target-") {
                rust_files(&p, out);
            }
        } else if name.ends_with(".rs") {
            out.push(p);
        }
    }
}

fn workspace_rust_files() -> Vec<PathBuf> {
    let root = project_root();
    let mut files = Vec::new();
    rust_files(&root.join("crates"), &mut files);
    rust_files(&root.join("xtask"), &mut files);
    files.sort();
    files
}

fn starts_with_module_docs(text: &str) -> bool {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .is_some_and(|l| l.starts_with("//!"))
}

#[test]
fn crate_roots_have_module_docs() {
    let root = project_root();
    let mut roots = vec![root.join("xtask/src/main.rs"), root.join("xtask/src/lib.rs")];
    if let Ok(dirs) = std::fs::read_dir(root.join("crates")) {
        for d in dirs.flatten() {
            for file in ["src/lib.rs", "src/main.rs"] {
                let p = d.path().join(file);
                if p.exists() {
                    roots.push(p);
                }
            }
        }
    }
    let missing: Vec<String> = roots
        .iter()
        .filter(|p| !std::fs::read_to_string(p).is_ok_and(|t| starts_with_module_docs(&t)))
        .map(|p| p.display().to_string())
        .collect();
    assert!(
        missing.is_empty(),
        "crate roots without `//!` docs at the top:\n{}",
        missing.join("\n")
    );
}

#[test]
fn no_ignored_tests_or_dbg() {
    // Built by concatenation so that this file does not match itself.
    let banned = [concat!("#[", "ignore"), concat!("dbg", "!(")];
    let mut hits = Vec::new();
    for path in workspace_rust_files() {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        for (i, line) in text.lines().enumerate() {
            for b in banned {
                if line.contains(b) && !line.trim_start().starts_with("//") {
                    hits.push(format!("{}:{}: {}", path.display(), i + 1, line.trim()));
                }
            }
        }
    }
    assert!(
        hits.is_empty(),
        "remove ignored tests / dbg! calls:\n{}",
        hits.join("\n")
    );
}

/// One progress report for the workspace (`ksvd_linalg::Progress`): no crate, runner included, defines
/// its own.
#[test]
fn one_progress_type() {
    let owner = project_root().join("crates/linalg/src/progress.rs");
    // Built by concatenation so that this file does not match itself.
    let defines = [concat!("struct ", "Progress"), concat!("enum ", "Progress")];
    let mut hits = Vec::new();
    for path in workspace_rust_files().into_iter().filter(|p| *p != owner) {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        for (i, line) in text.lines().enumerate() {
            let defined = defines.iter().any(|d| {
                line.split(d)
                    .nth(1)
                    .is_some_and(|rest| !rest.starts_with(|c: char| c.is_alphanumeric() || c == '_'))
            });
            if defined && !line.trim_start().starts_with("//") {
                hits.push(format!("{}:{}: {}", path.display(), i + 1, line.trim()));
            }
        }
    }
    assert!(
        hits.is_empty(),
        "report progress with ksvd_linalg::Progress instead of:\n{}",
        hits.join("\n")
    );
}

#[test]
fn module_docs_check_works() {
    assert!(starts_with_module_docs("\n//! Docs.\nfn f() {}"));
    assert!(!starts_with_module_docs("use x;\n//! late"));
}
