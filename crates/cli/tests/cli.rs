//! End-to-end runs of the `ksvd` binary.
#![allow(clippy::unwrap_used)]
mod common;

use common::ksvd;
use std::path::Path;

fn read_csv(p: &Path) -> Vec<Vec<f64>> {
    std::fs::read_to_string(p)
        .unwrap()
        .lines()
        .map(|l| l.split(',').map(|t| t.parse().unwrap()).collect())
        .collect()
}

fn write_data(dir: &Path) -> (String, String) {
    let x: String = (0..30)
        .map(|i| {
            (0..4)
                .map(|j| format!("{}", ((i * 7 + j * 3) % 11) as f64 / 5.0))
                .collect::<Vec<_>>()
                .join(",")
                + "\n"
        })
        .collect();
    let z: String = (0..20)
        .map(|i| {
            (0..4)
                .map(|j| format!("{}", ((i * 5 + j) % 13) as f64 / 6.0))
                .collect::<Vec<_>>()
                .join(" ")
                + "\n"
        })
        .collect();
    let (xp, zp) = (dir.join("x.csv"), dir.join("z.csv"));
    std::fs::write(&xp, x).unwrap();
    std::fs::write(&zp, z).unwrap();
    (xp.to_string_lossy().into(), zp.to_string_lossy().into())
}

#[test]
fn full_landmark_nystrom_reproduces_the_exact_solution() {
    let dir = tempfile::tempdir().unwrap();
    let (x, z) = write_data(dir.path());
    let exact = dir.path().join("exact");
    let ny = dir.path().join("ny");
    let base = [
        "fit", "--rows", &x, "--cols", &z, "--kernel", "sne", "--gamma", "1.5", "--rank", "4",
    ];
    let (ok, err) = ksvd(&[&base[..], &["--solver", "exact", "--out", exact.to_str().unwrap()]].concat());
    assert!(ok, "{err}");
    let (ok, err) = ksvd(
        &[
            &base[..],
            &[
                "--solver",
                "nystrom",
                "--landmarks",
                "30",
                "--out",
                ny.to_str().unwrap(),
            ],
        ]
        .concat(),
    );
    assert!(ok, "{err}");
    for f in ["u.csv", "s.csv", "v.csv", "u.npy", "s.npy", "v.npy"] {
        assert!(exact.join(f).exists() && ny.join(f).exists(), "{f}");
    }
    let (se, sn) = (read_csv(&exact.join("s.csv")), read_csv(&ny.join("s.csv")));
    assert_eq!(se.len(), 4);
    for (a, b) in se.iter().zip(&sn) {
        assert!((a[0] - b[0]).abs() < 1e-12 * se[0][0], "{a:?} {b:?}");
    }
    let (ue, un) = (read_csv(&exact.join("u.csv")), read_csv(&ny.join("u.csv")));
    assert_eq!((ue.len(), ue[0].len()), (30, 4));
    let ve = read_csv(&exact.join("v.csv"));
    assert_eq!((ve.len(), ve[0].len()), (20, 4));
    for (a, b) in ue.iter().flatten().zip(un.iter().flatten()) {
        assert!((a - b).abs() < 1e-9);
    }
    // Adaptive landmarks: with min(N, M) = 20 pivots the cross approximation is G itself.
    let ad = dir.path().join("adaptive");
    let args = [
        "--solver",
        "nystrom",
        "--landmarks",
        "30",
        "--sampling",
        "adaptive",
        "--out",
    ];
    let (ok, err) = ksvd(&[&base[..], &args[..], &[ad.to_str().unwrap()]].concat());
    assert!(ok, "{err}");
    let sa = read_csv(&ad.join("s.csv"));
    for (a, b) in se.iter().zip(&sa) {
        assert!((a[0] - b[0]).abs() < 1e-10 * se[0][0], "adaptive {a:?} {b:?}");
    }
    let (_, err) = ksvd(
        &[
            &base[..],
            &["--solver", "nystrom", "--landmarks", "5", "--sampling", "sideways"],
        ]
        .concat(),
    );
    assert!(err.contains("sideways"), "{err}");
    // Lanczos and RSVD paths run too.
    for solver in ["lanczos", "rsvd"] {
        let out = dir.path().join(solver);
        let (ok, err) = ksvd(&[&base[..], &["--solver", solver, "--out", out.to_str().unwrap()]].concat());
        assert!(ok, "{solver}: {err}");
        let s = read_csv(&out.join("s.csv"));
        assert!((s[0][0] - se[0][0]).abs() < 1e-8);
    }
}

#[test]
fn data_matrix_with_compat_and_graph_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let (x, _) = write_data(dir.path());
    let out = dir.path().join("compat");
    let (ok, err) = ksvd(&[
        "fit",
        "--rows",
        &x,
        "--compat",
        "a2",
        "--kernel",
        "rbf",
        "--rank",
        "3",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(ok, "{err}");
    assert_eq!(read_csv(&out.join("v.csv")).len(), 4); // Z = the 4 columns of X
    let edges = dir.path().join("edges.txt");
    std::fs::write(&edges, "# arcs\na b\nb c\nc a\na c\nd a\n").unwrap();
    let gout = dir.path().join("graph");
    let (ok, err) = ksvd(&[
        "fit",
        "--graph",
        edges.to_str().unwrap(),
        "--graph-input",
        "row-normalized-self-loops",
        "--kernel",
        "sne",
        "--rank",
        "2",
        "--solver",
        "exact",
        "--out",
        gout.to_str().unwrap(),
    ]);
    assert!(ok, "{err}");
    assert_eq!(std::fs::read_to_string(gout.join("nodes.csv")).unwrap(), "a\nb\nc\nd\n");
    assert_eq!(read_csv(&gout.join("u.csv")).len(), 4);
}

/// Integer ids with gaps (paper ids) are names under `auto`: no node is invented; `index` keeps
/// them as indices (isolated nodes included); a name under `index` is a one-line error. The
/// same graph numbered either way has the same spectrum (isolated nodes add zero rows of `A`).
#[test]
fn graph_node_ids_auto_index_and_name() {
    let dir = tempfile::tempdir().unwrap();
    let fit = |edges: &str, mode: &str, out: &str| {
        let path = dir.path().join(format!("{out}.txt"));
        std::fs::write(&path, edges).unwrap();
        let o = dir.path().join(out);
        let (ok, err) = ksvd(&[
            "fit",
            "--graph",
            path.to_str().unwrap(),
            "--node-ids",
            mode,
            "--kernel",
            "linear",
            "--rank",
            "2",
            "--solver",
            "exact",
            "--out",
            o.to_str().unwrap(),
        ]);
        (ok, err, o)
    };
    let gappy = "7 20\n20 1033\n1033 7\n7 1033\n";
    let (ok, err, auto) = fit(gappy, "auto", "auto");
    assert!(ok, "{err}");
    assert_eq!(
        std::fs::read_to_string(auto.join("nodes.csv")).unwrap(),
        "7\n20\n1033\n"
    );
    assert_eq!(read_csv(&auto.join("u.csv")).len(), 3);
    let (ok, err, index) = fit(gappy, "index", "index");
    assert!(ok, "{err}");
    assert!(!index.join("nodes.csv").exists());
    assert_eq!(read_csv(&index.join("u.csv")).len(), 1034);
    let (sa, si) = (read_csv(&auto.join("s.csv")), read_csv(&index.join("s.csv")));
    for (a, b) in sa.iter().zip(&si) {
        assert!((a[0] - b[0]).abs() <= 1e-12 * sa[0][0], "{sa:?} vs {si:?}");
    }
    // Ids covering 0..=max: indices under auto, no nodes.csv.
    let (ok, err, dense) = fit("0 1\n1 2\n2 0\n0 2\n", "auto", "dense");
    assert!(ok, "{err}");
    assert!(!dense.join("nodes.csv").exists());
    assert_eq!(read_csv(&dense.join("u.csv")).len(), 3);
    let (ok, err, named) = fit("0 1\n1 2\n", "name", "named");
    assert!(ok, "{err}");
    assert_eq!(std::fs::read_to_string(named.join("nodes.csv")).unwrap(), "0\n1\n2\n");
    let (ok, err, _) = fit("0 1\n# comment\n1 b\n", "index", "bad");
    assert!(!ok);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains(".txt:3:") && err.contains("`b`"), "{err}");
}

#[test]
fn bad_inputs_fail_with_one_clear_line() {
    let dir = tempfile::tempdir().unwrap();
    let (x, z) = write_data(dir.path());
    let out = dir.path().join("o");
    let o = out.to_str().unwrap();
    let bad = dir.path().join("bad.csv");
    std::fs::write(&bad, "1,2\n3,x\n").unwrap();
    let ragged = dir.path().join("ragged.csv");
    std::fs::write(&ragged, "1,2\n3\n").unwrap();
    let nan = dir.path().join("nan.csv");
    std::fs::write(&nan, "1,2\nNaN,1\n").unwrap();
    let empty = dir.path().join("empty.csv");
    std::fs::write(&empty, "").unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec![
                "fit",
                "--rows",
                "/nonexistent.csv",
                "--kernel",
                "rbf",
                "--rank",
                "2",
                "--out",
                o,
            ],
            "missing file /nonexistent.csv",
        ),
        (
            vec![
                "fit",
                "--rows",
                bad.to_str().unwrap(),
                "--kernel",
                "rbf",
                "--rank",
                "1",
                "--out",
                o,
            ],
            ":2: `x` is not a number",
        ),
        (
            vec![
                "fit",
                "--rows",
                ragged.to_str().unwrap(),
                "--kernel",
                "rbf",
                "--rank",
                "1",
                "--out",
                o,
            ],
            ":2: 1 values",
        ),
        (
            vec![
                "fit",
                "--rows",
                nan.to_str().unwrap(),
                "--kernel",
                "rbf",
                "--rank",
                "1",
                "--out",
                o,
            ],
            "non-finite",
        ),
        (
            vec![
                "fit",
                "--rows",
                empty.to_str().unwrap(),
                "--kernel",
                "rbf",
                "--rank",
                "1",
                "--out",
                o,
            ],
            "no data rows",
        ),
        (
            vec![
                "fit", "--rows", &x, "--cols", &z, "--kernel", "rbf", "--rank", "50", "--out", o,
            ],
            "rank 50 is invalid",
        ),
        (
            vec![
                "fit",
                "--rows",
                &x,
                "--cols",
                &z,
                "--kernel",
                "rbf",
                "--gamma=-1",
                "--rank",
                "2",
                "--out",
                o,
            ],
            "gamma",
        ),
        (
            vec![
                "fit", "--rows", &x, "--cols", &z, "--kernel", "rbf", "--rank", "2", "--solver", "nystrom", "--out", o,
            ],
            "--n-landmarks",
        ),
    ];
    // Exit statuses: a missing file is I/O (74), a bad value in a file or a rank beyond the
    // matrix bad data (65), an option out of range or missing a usage error (2).
    let statuses = [74, 65, 65, 65, 65, 65, 2, 2];
    for ((args, want), status) in cases.into_iter().zip(statuses) {
        let mut all = args.clone();
        all.push("--quiet");
        let r = common::run(&all, None);
        let (ok, err) = (r.code == 0, r.stderr);
        assert_eq!(r.code, status, "{args:?}: {err}");
        assert!(!ok, "{args:?} should fail");
        assert!(err.contains(want), "{args:?}: stderr `{err}` lacks `{want}`");
        assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
        assert!(err.starts_with("ksvd: error:"));
    }
}
