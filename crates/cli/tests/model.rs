//! `ksvd fit` → `ksvd transform` round trips, every input format, and bad inputs (one-line
//! errors, nothing written).
// Test helpers unwrap: a failure is a test failure.
#![allow(clippy::unwrap_used)]
mod common;

use common::{csv, files_in, ksvd, ok, p, rbf_fit_args, rel, x_data, z_data};
use ndarray::{Array1, Array2};
use ndarray_npy::{read_npy, write_npy};
use std::path::{Path, PathBuf};
use std::process::Command;

#[test]
fn transform_of_training_samples_reproduces_u_and_v() {
    let dir = tempfile::tempdir().unwrap();
    let (xp, zp) = (dir.path().join("x.npy"), dir.path().join("z.npy"));
    write_npy(&xp, &x_data()).unwrap();
    write_npy(&zp, &z_data()).unwrap();
    let solvers: [&[&str]; 4] = [
        &["--solver", "exact"],
        &["--solver", "lanczos", "--tol", "1e-14"],
        &["--solver", "nystrom", "--n-landmarks", "20", "--n-col-landmarks", "15"],
        &["--solver", "nystrom", "--landmarks", "12", "--sampling", "adaptive"],
    ];
    for kernel in [
        &["--kernel", "linear"][..],
        &["--kernel", "poly"],
        &["--kernel", "rbf", "--gamma", "6"],
        &["--kernel", "laplacian", "--gamma", "6"],
        &["--kernel", "sne", "--gamma", "4"],
    ] {
        for solver in solvers {
            let fit = dir.path().join("fit");
            let mut args = vec![
                "fit",
                "--rows",
                p(&xp),
                "--cols",
                p(&zp),
                "--rank",
                "3",
                "--format",
                "npy",
            ];
            args.extend_from_slice(kernel);
            args.extend_from_slice(solver);
            args.extend_from_slice(&["--out", p(&fit)]);
            ok(&args);
            assert!(fit.join("model.json").exists() && fit.join("summary.json").exists());
            assert!(!fit.join("u.csv").exists(), "--format npy writes no CSV");
            let (out, ext) = (dir.path().join("t"), dir.path().join("e"));
            for (o, extension) in [(&out, &[][..]), (&ext, &["--extension"][..])] {
                for side in [["--rows", p(&xp)], ["--cols", p(&zp)]] {
                    let mut args = vec!["transform", "--model", p(&fit), side[0], side[1], "--out", p(o)];
                    args.extend_from_slice(extension);
                    ok(&args);
                }
            }
            let u: Array2<f64> = read_npy(fit.join("u.npy")).unwrap();
            let v: Array2<f64> = read_npy(fit.join("v.npy")).unwrap();
            let s: Array1<f64> = read_npy(fit.join("s.npy")).unwrap();
            // --extension (eq. 10) gives back U and V; transform U S^1/2 and V S^1/2.
            let (eu, ev): (Array2<f64>, Array2<f64>) = (
                read_npy(ext.join("rows.npy")).unwrap(),
                read_npy(ext.join("cols.npy")).unwrap(),
            );
            assert!(rel(&eu, &u) < 1e-10, "{kernel:?} {solver:?}: rows {:e}", rel(&eu, &u));
            assert!(rel(&ev, &v) < 1e-10, "{kernel:?} {solver:?}: cols {:e}", rel(&ev, &v));
            let sqrt_s = s.mapv(f64::sqrt);
            let (tu, tv): (Array2<f64>, Array2<f64>) = (
                read_npy(out.join("rows.npy")).unwrap(),
                read_npy(out.join("cols.npy")).unwrap(),
            );
            assert!(
                rel(&tu, &(&u * &sqrt_s)) < 1e-10,
                "{kernel:?} {solver:?}: transform rows"
            );
            assert!(
                rel(&tv, &(&v * &sqrt_s)) < 1e-10,
                "{kernel:?} {solver:?}: transform cols"
            );
            assert!(out.join("rows.csv").exists());
            for d in [&fit, &out, &ext] {
                std::fs::remove_dir_all(d).unwrap();
            }
        }
    }
}

#[test]
fn summary_reports_sizes_kernel_gamma_solver_and_residuals() {
    let dir = tempfile::tempdir().unwrap();
    let xp = dir.path().join("x.csv");
    std::fs::write(&xp, csv(&x_data())).unwrap();
    let fit = dir.path().join("fit");
    ok(&[
        "fit",
        "--rows",
        p(&xp),
        "--cols",
        p(&xp),
        "--kernel",
        "rbf",
        "--rank",
        "2",
        "--out",
        p(&fit),
    ]);
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fit.join("summary.json")).unwrap()).unwrap();
    assert_eq!(s["n_rows"], 30);
    assert_eq!(s["n_cols"], 30);
    assert_eq!(s["rank"], 2);
    assert!(s["bandwidth"].as_f64().unwrap() > 0.0);
    assert_eq!(s["bandwidth_rule"].as_f64(), Some(1.0));
    assert!(s["bandwidth_source"].as_str().unwrap().starts_with("rule"));
    assert_eq!(s["inputs"]["rows"].as_str(), Some(p(&xp)));
    assert_eq!(s["solver"]["Auto"]["tol"].as_f64(), Some(1e-8), "the default solver");
    assert_eq!(s["singular_values"].as_array().unwrap().len(), 2);
    assert!(s["residuals"]["max_relative_to_s1"].as_f64().unwrap() < 1e-8);
}

/// A zip archive of `(name, bytes)` entries, stored (`deflate = false`) or deflated, as
/// `numpy.savez` / `numpy.savez_compressed` write them.
fn zip(entries: &[(&str, Vec<u8>)], deflate: bool) -> Vec<u8> {
    use std::io::Write;
    let method = if deflate {
        zip::CompressionMethod::Deflated
    } else {
        zip::CompressionMethod::Stored
    };
    let options = zip::write::SimpleFileOptions::default().compression_method(method);
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for (name, data) in entries {
        w.start_file(*name, options).unwrap();
        w.write_all(data).unwrap();
    }
    w.finish().unwrap().into_inner()
}

fn npy<A: ndarray_npy::WritableElement, D: ndarray::Dimension>(a: &ndarray::Array<A, D>) -> Vec<u8> {
    let mut b = Vec::new();
    ndarray_npy::WriteNpyExt::write_npy(a, &mut b).unwrap();
    b
}

/// scipy.sparse.save_npz's layout for a CSR matrix (int32 indices, `|S3` format); `format`
/// other than `csr` mislabels it.
fn npz(a: &Array2<f64>, format: &[u8; 3], deflate: bool) -> Vec<u8> {
    let (mut indptr, mut indices, mut data) = (vec![0i32], Vec::new(), Vec::new());
    for r in a.outer_iter() {
        for (j, &v) in r.iter().enumerate() {
            if v != 0.0 {
                indices.push(j as i32);
                data.push(v);
            }
        }
        indptr.push(indices.len() as i32);
    }
    // A 0-d `|S3` array holding `format`.
    let header = "{'descr': '|S3', 'fortran_order': False, 'shape': (), }";
    let mut h = header.to_string();
    while (10 + h.len() + 1) % 64 != 0 {
        h.push(' ');
    }
    h.push('\n');
    let mut format_npy = b"\x93NUMPY\x01\x00".to_vec();
    format_npy.extend_from_slice(&(h.len() as u16).to_le_bytes());
    format_npy.extend_from_slice(h.as_bytes());
    format_npy.extend_from_slice(format);
    zip(
        &[
            ("indices.npy", npy(&Array1::from(indices))),
            ("indptr.npy", npy(&Array1::from(indptr))),
            ("format.npy", format_npy),
            (
                "shape.npy",
                npy(&Array1::from(vec![a.nrows() as i64, a.ncols() as i64])),
            ),
            ("data.npy", npy(&Array1::from(data))),
        ],
        deflate,
    )
}

fn libsvm(a: &Array2<f64>) -> String {
    a.outer_iter()
        .map(|r| {
            let feats: Vec<String> = r
                .iter()
                .enumerate()
                .filter(|(_, v)| **v != 0.0)
                .map(|(j, v)| format!("{}:{v}", j + 1))
                .collect();
            format!("0 {}\n", feats.join(" "))
        })
        .collect()
}

#[test]
fn every_input_format_gives_the_same_fit() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (x, z) = (x_data(), z_data());
    std::fs::write(d.join("z.csv"), csv(&z)).unwrap();
    std::fs::write(d.join("x.csv"), csv(&x)).unwrap();
    std::fs::write(d.join("xh.csv"), "a,b,c,d\n".to_string() + &csv(&x)).unwrap();
    std::fs::write(d.join("zh.csv"), "# a comment\na,b,c,d\n".to_string() + &csv(&z)).unwrap();
    write_npy(d.join("x32.npy"), &x.mapv(|v| v as f32)).unwrap();
    write_npy(d.join("xi.npy"), &x.mapv(|v| v as i64)).unwrap();
    std::fs::write(d.join("x.libsvm"), libsvm(&x)).unwrap();
    std::fs::write(d.join("x.npz"), npz(&x, b"csr", false)).unwrap();
    std::fs::write(d.join("xd.npz"), npz(&x, b"csr", true)).unwrap();
    let fit = |name: &str, extra: &[&str]| -> Array1<f64> {
        let out = d.join(format!("fit-{name}"));
        let xp = d.join(name);
        // --header applies to every CSV input.
        let zp = d.join(if extra.contains(&"--header") { "zh.csv" } else { "z.csv" });
        let mut args = rbf_fit_args(&xp, &zp, &out);
        args.extend_from_slice(&["--solver", "exact"]);
        args.extend_from_slice(extra);
        ok(&args);
        read_npy(out.join("s.npy")).unwrap()
    };
    let want = fit("x.csv", &[]);
    for (name, extra) in [
        ("xh.csv", &["--header"][..]),
        ("x32.npy", &[]),
        ("xi.npy", &[]),
        ("x.libsvm", &[]),
        ("x.npz", &[]),
        ("xd.npz", &[]),
    ] {
        let s = fit(name, extra);
        let err = (&s - &want).iter().fold(0.0f64, |a, b| a.max(b.abs())) / want[0];
        assert!(err < 1e-12, "{name}: {err:e}");
    }
    // A header without --header: the error says what to do.
    let (ok, err) = ksvd(&[
        "fit",
        "--rows",
        p(&d.join("xh.csv")),
        "--kernel",
        "rbf",
        "--rank",
        "2",
        "--out",
        p(&d.join("o")),
    ]);
    assert!(!ok && err.contains("--header"), "{err}");
}

#[test]
fn user_landmarks_are_used_and_bad_lists_are_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("x.csv"), csv(&x_data())).unwrap();
    std::fs::write(d.join("z.csv"), csv(&z_data())).unwrap();
    std::fs::write(d.join("rows.txt"), "3\n1\n17\n8\n25\n").unwrap();
    std::fs::write(d.join("cols.txt"), "0, 19, 4, 8\n").unwrap();
    std::fs::write(d.join("far.txt"), "0 1 2 99\n").unwrap();
    std::fs::write(d.join("dup.txt"), "0 1 2 2\n").unwrap();
    write_npy(d.join("cols.npy"), &Array1::from(vec![0i64, 19, 4, 8])).unwrap();
    let (xp, zp) = (d.join("x.csv"), d.join("z.csv"));
    let fit_with = |rows: &str, cols: &str, out: &Path| {
        let (rows, cols) = (d.join(rows), d.join(cols));
        let mut args = rbf_fit_args(&xp, &zp, out);
        args.extend_from_slice(&["--solver", "nystrom", "--landmark-rows", p(&rows)]);
        args.extend_from_slice(&["--landmark-cols", p(&cols), "--quiet"]);
        common::run(&args, None)
    };
    let fit = d.join("fit");
    let r = fit_with("rows.txt", "cols.npy", &fit);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let model: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fit.join("model.json")).unwrap()).unwrap();
    assert_eq!(model["payload"]["row_landmarks"], serde_json::json!([1, 3, 8, 17, 25]));
    assert_eq!(model["payload"]["col_landmarks"], serde_json::json!([0, 4, 8, 19]));
    for (cols, want) in [
        ("far.txt", "index 99 is out of range for 20"),
        ("dup.txt", "index 2 is repeated"),
    ] {
        let out = d.join(format!("bad-{cols}"));
        let r = fit_with("rows.txt", cols, &out);
        let err = r.stderr;
        // A landmark list is input data: status 65.
        assert!(r.code == 65 && err.contains(want), "{cols}: {} {err}", r.code);
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(files_in(&out).is_empty(), "nothing written for {cols}");
    }
}

#[test]
fn bad_inputs_fail_with_one_line_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("x.csv"), csv(&x_data())).unwrap();
    std::fs::write(d.join("z.csv"), csv(&z_data())).unwrap();
    let fit = d.join("fit");
    ok(&rbf_fit_args(&d.join("x.csv"), &d.join("z.csv"), &fit));
    let json = std::fs::read_to_string(fit.join("model.json")).unwrap();
    let model_dir = |name: &str, text: &str| -> PathBuf {
        let m = d.join(name);
        std::fs::create_dir_all(&m).unwrap();
        std::fs::write(m.join("model.json"), text).unwrap();
        m
    };
    let truncated = model_dir("truncated", &json[..json.len() / 3]);
    let future = model_dir(
        "future",
        &json.replacen(
            &format!("\"format_version\":{}", ksvd::MODEL_FORMAT_VERSION),
            "\"format_version\":9",
            1,
        ),
    );
    let garbage = model_dir("garbage", "hello");
    std::fs::write(d.join("wide.csv"), "1,2,3,4,5\n").unwrap();
    std::fs::write(d.join("nan.csv"), "1,2,3,4\nnan,1,2,3\n").unwrap();
    std::fs::write(d.join("bad.npz"), b"PK\x03\x04 not really a zip").unwrap();
    write_npy(d.join("x3d.npy"), &ndarray::Array3::<f64>::zeros((2, 2, 2))).unwrap();
    write_npy(d.join("nan.npy"), &Array2::from_elem((2, 4), f64::NAN)).unwrap();
    std::fs::write(d.join("zero.libsvm"), "1 0:1.5 2:1\n").unwrap();
    std::fs::write(d.join("nan.libsvm"), "1 1:nan\n").unwrap();
    std::fs::write(d.join("csc.npz"), npz(&x_data(), b"csc", false)).unwrap();
    let (x, nan, wide) = (d.join("x.csv"), d.join("nan.csv"), d.join("wide.csv"));
    let (zero, nanl, cscp) = (d.join("zero.libsvm"), d.join("nan.libsvm"), d.join("csc.npz"));
    let (missing, badnpz, x3d, nannpy) = (
        d.join("missing"),
        d.join("bad.npz"),
        d.join("x3d.npy"),
        d.join("nan.npy"),
    );
    // Every case is bad input data (status 65), but a missing model file (I/O, 74).
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--model", p(&missing), "--rows", p(&x)], "model file not found"),
        (vec!["--model", p(&truncated), "--rows", p(&x)], "model file refused"),
        (
            vec!["--model", p(&future), "--rows", p(&x)],
            "format version 9 is not supported",
        ),
        (vec!["--model", p(&garbage), "--rows", p(&x)], "model file refused"),
        (
            vec!["--model", p(&fit), "--rows", p(&wide)],
            "5 features per sample, but the model expects 4",
        ),
        (vec!["--model", p(&fit), "--cols", p(&nan)], "non-finite"),
        (vec!["--model", p(&fit), "--rows", p(&badnpz)], "not a valid .npz"),
        (vec!["--model", p(&fit), "--rows", p(&x3d)], "not a 2-D .npy"),
        (
            vec!["--model", p(&fit), "--rows", p(&nannpy)],
            "non-finite value NaN at row 0",
        ),
        (
            vec!["--model", p(&fit), "--rows", p(&zero)],
            ":1: feature index 0: LIBSVM indices start at 1",
        ),
        (vec!["--model", p(&fit), "--rows", p(&nanl)], ":1: non-finite value NaN"),
        (
            vec!["--model", p(&fit), "--rows", p(&cscp)],
            "only CSR matrices are supported",
        ),
    ];
    for (args, want) in cases {
        let out = d.join("out");
        let mut all = vec!["transform"];
        all.extend(args.iter().copied());
        all.extend(["--out", p(&out), "--quiet"]);
        let r = common::run(&all, None);
        let err = r.stderr;
        let want_code = if args[1] == p(&missing) { 74 } else { 65 };
        assert_eq!(r.code, want_code, "{all:?}: {err}");
        assert!(err.contains(want), "{all:?}: `{err}` lacks `{want}`");
        assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
        assert!(err.starts_with("ksvd: error:"), "{err}");
        assert!(files_in(&out).is_empty(), "{all:?} wrote files");
    }
}

#[test]
fn help_shows_examples() {
    let out = Command::new(env!("CARGO_BIN_EXE_ksvd")).arg("--help").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("Examples:") && text.contains("ksvd transform --model"),
        "{text}"
    );
}

#[test]
fn the_readme_example_round_trips() {
    let ex = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let dir = tempfile::tempdir().unwrap();
    let (fit, back, new) = (dir.path().join("fit"), dir.path().join("back"), dir.path().join("new"));
    let (rows, cols, new_rows) = (ex.join("rows.csv"), ex.join("cols.csv"), ex.join("new_rows.csv"));
    ok(&[
        "fit",
        "--rows",
        p(&rows),
        "--cols",
        p(&cols),
        "--header",
        "--kernel",
        "rbf",
        "--gamma",
        "2",
        "--rank",
        "3",
        "--solver",
        "exact",
        "--out",
        p(&fit),
    ]);
    ok(&[
        "transform",
        "--model",
        p(&fit),
        "--rows",
        p(&rows),
        "--header",
        "--extension",
        "--out",
        p(&back),
    ]);
    ok(&[
        "transform",
        "--model",
        p(&fit),
        "--rows",
        p(&new_rows),
        "--header",
        "--out",
        p(&new),
    ]);
    let u: Array2<f64> = read_npy(fit.join("u.npy")).unwrap();
    let b: Array2<f64> = read_npy(back.join("rows.npy")).unwrap();
    assert_eq!(u.dim(), (24, 3));
    assert!(rel(&b, &u) < 1e-12, "{:e}", rel(&b, &u));
    let n: Array2<f64> = read_npy(new.join("rows.npy")).unwrap();
    assert_eq!(n.dim(), (4, 3));
}

#[test]
fn precomputed_kernel_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (x, z) = (x_data(), z_data());
    // RBF, γ = 6: exp(-‖x − z‖² / 36).
    let g = Array2::from_shape_fn((x.nrows(), z.nrows()), |(i, j)| {
        (-(&x.row(i) - &z.row(j)).mapv(|v| v * v).sum() / 36.0).exp()
    });
    write_npy(d.join("g.npy"), &g).unwrap();
    write_npy(d.join("gt.npy"), &g.t().to_owned()).unwrap();
    write_npy(d.join("x.npy"), &x).unwrap();
    write_npy(d.join("z.npy"), &z).unwrap();
    let (gp, xp, zp) = (d.join("g.npy"), d.join("x.npy"), d.join("z.npy"));
    for center in [false, true] {
        let (fit, ref_fit, out) = (d.join("fit"), d.join("ref"), d.join("out"));
        let c: &[&str] = if center { &["--center"] } else { &[] };
        let mut args = vec!["fit", "--kernel", "precomputed", "--matrix", p(&gp), "--rank", "3"];
        args.extend_from_slice(&["--solver", "exact", "--out", p(&fit)]);
        args.extend_from_slice(c);
        ok(&args);
        let mut args = rbf_fit_args(&xp, &zp, &ref_fit);
        args.extend_from_slice(&["--solver", "exact"]);
        args.extend_from_slice(c);
        ok(&args);
        let s: Array1<f64> = read_npy(fit.join("s.npy")).unwrap();
        let s_ref: Array1<f64> = read_npy(ref_fit.join("s.npy")).unwrap();
        assert!(
            (&s - &s_ref).iter().all(|e| e.abs() < 1e-12 * s_ref[0]),
            "center={center}"
        );
        ok(&[
            "transform",
            "--model",
            p(&fit),
            "--rows",
            p(&d.join("g.npy")),
            "--extension",
            "--out",
            p(&out),
        ]);
        ok(&[
            "transform",
            "--model",
            p(&fit),
            "--cols",
            p(&d.join("gt.npy")),
            "--extension",
            "--out",
            p(&out),
        ]);
        let u: Array2<f64> = read_npy(fit.join("u.npy")).unwrap();
        let v: Array2<f64> = read_npy(fit.join("v.npy")).unwrap();
        let tu: Array2<f64> = read_npy(out.join("rows.npy")).unwrap();
        let tv: Array2<f64> = read_npy(out.join("cols.npy")).unwrap();
        assert!(rel(&tu, &u) < 1e-10 && rel(&tv, &v) < 1e-10, "center={center}");
        // Kernel values of the wrong width: one line, nothing written.
        let bad = d.join("bad");
        let (ok, err) = ksvd(&[
            "transform",
            "--model",
            p(&fit),
            "--rows",
            p(&d.join("gt.npy")),
            "--out",
            p(&bad),
        ]);
        assert!(
            !ok && err.contains("30 kernel values per new sample, but the precomputed model has 20"),
            "{err}"
        );
        assert_eq!(err.trim().lines().count(), 1);
        assert!(files_in(&bad).is_empty());
        for dir in [fit, ref_fit, out] {
            std::fs::remove_dir_all(dir).unwrap();
        }
    }
    let (ok, err) = ksvd(&[
        "fit",
        "--kernel",
        "precomputed",
        "--rank",
        "2",
        "--out",
        p(&d.join("o")),
    ]);
    assert!(!ok && err.contains("--matrix"), "{err}");
}
