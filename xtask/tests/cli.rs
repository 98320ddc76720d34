//! End-to-end tests of the `xtask` binary: `list`, and `reproduce --only datasets` into a temporary directory.
use std::path::Path;
use std::process::Command;

fn xtask(args: &[&str]) -> std::process::Output {
    let run = Command::new(env!("CARGO_BIN_EXE_xtask")).args(args).output();
    run.unwrap_or_else(|e| panic!("running the xtask binary failed: {e}"))
}

#[test]
fn list_names_every_spec() {
    let out = xtask(&["list"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    for name in [
        "ablation",
        "datasets",
        "large-scale",
        "nystrom-f1",
        "spectrum",
        "table1",
        "table2",
        "table3",
        "timing",
    ] {
        assert!(
            stdout.lines().any(|l| l.starts_with(name)),
            "`{name}` missing from:\n{stdout}"
        );
    }
}

#[test]
fn reproduce_datasets_writes_every_output() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let out = dir.path().to_str().expect("utf-8 path");
    let run = xtask(&["reproduce", "--only", "datasets", "--out", out, "--threads", "1"]);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "stderr: {stderr}");
    for f in [
        "datasets.csv",
        "datasets.parquet",
        "datasets.summary.csv",
        "datasets.md",
        "REPORT.md",
    ] {
        let p = Path::new(out).join(f);
        assert!(
            p.is_file() && std::fs::metadata(&p).map(|m| m.len()).unwrap_or(0) > 0,
            "{f} not written"
        );
    }
    let csv = std::fs::read_to_string(Path::new(out).join("datasets.csv")).expect("csv");
    let header = csv.lines().next().unwrap_or_default();
    for col in [
        "dataset", "method", "metric", "value", "std", "seed", "trials", "seconds", "threads", "paper", "diff",
    ] {
        assert!(
            header.split(',').any(|c| c == col),
            "column {col} missing from {header}"
        );
    }
    // The Cora row of the graph table matches the paper exactly.
    assert!(
        csv.lines()
            .any(|l| l.starts_with("cora,data,nodes,") && l.contains(",2708.0,")),
        "{csv}"
    );
    let page = std::fs::read_to_string(Path::new(out).join("datasets.md")).expect("md");
    assert!(
        page.contains("| Metric | Cora | Citeseer | Pubmed | TwitchPT | BlogCatalog |"),
        "{page}"
    );
    // BCOT's PubMed matrix is not available: listed as missing data, not skipped.
    let report = std::fs::read_to_string(Path::new(out).join("REPORT.md")).expect("report");
    assert!(
        report.contains("missing-data") && report.contains("bcot_pubmed"),
        "{report}"
    );
    assert!(report.contains("[datasets](datasets.md)"));
    // Specs not run are listed as such.
    assert!(
        report.contains("| table1 |") && report.contains("not run yet"),
        "{report}"
    );
    // Re-rendering writes nothing for specs that were never run, and still lists them as not run.
    let render = xtask(&["reproduce", "--render-only", "--out", out, "--threads", "1"]);
    assert!(
        render.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&render.stderr)
    );
    assert!(
        !Path::new(out).join("table1.csv").exists(),
        "a never-run spec got result files"
    );
    let report = std::fs::read_to_string(Path::new(out).join("REPORT.md")).expect("report");
    assert!(
        report.contains("| table1 |") && report.contains("not run yet") && report.contains("[datasets](datasets.md)"),
        "{report}"
    );
    // No temporary files are left behind.
    let leftovers: Vec<_> = std::fs::read_dir(out)
        .expect("read dir")
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
}

#[test]
fn unknown_spec_is_a_clear_error() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let out = dir.path().to_str().expect("utf-8 path");
    let run = xtask(&["reproduce", "--only", "tabel1", "--out", out]);
    assert!(!run.status.success());
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(stderr.contains("no such spec") && stderr.contains("table1"), "{stderr}");
}
