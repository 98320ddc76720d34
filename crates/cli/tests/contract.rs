//! The surfaces of the one contract (docs/conventions.md) end to end: Z = X by default and the
//! columns of X with `--compat`, `-` for standard input and output, `--json`, `transform` and
//! `--extension` on KSVD and KPCA models, `inspect`, `completions`, and the exit statuses.
#![allow(clippy::unwrap_used)]
mod common;

use common::{csv, files_in, ok, p, parse_csv, rel, run, x_data, z_data};
use ksvd::prelude::*;
use ndarray::{Array1, Array2};
use ndarray_npy::read_npy;
use std::path::Path;

/// A tolerance for a projection at the training samples: the SVD's backward error
/// (`ε ‖G‖ sqrt(n)`) amplified by `s_1 / s_r`, with room for a factor 100.
fn tol(s: &Array1<f64>, n: usize) -> f64 {
    100.0 * f64::EPSILON * (n as f64).sqrt() * s[0] / s[s.len() - 1]
}

/// `ksvd fit` into `out` with `extra` flags (exact solver unless `extra` says otherwise).
fn fit(rows: &Path, extra: &[&str], out: &Path) {
    let mut args = vec!["fit", "--rows", p(rows), "--out", p(out)];
    args.extend_from_slice(extra);
    ok(&args);
}

fn npy(path: &Path) -> Array2<f64> {
    read_npy(path).unwrap()
}

fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap()
}

/// Asserts that the first `k` singular values in `a/s.npy` and `b/s.npy` agree within `rel * s_1`.
fn singular_values_agree(a: &Path, b: &Path, k: usize, rel: f64) {
    let (a, b): (Array1<f64>, Array1<f64>) = (read_npy(a.join("s.npy")).unwrap(), read_npy(b.join("s.npy")).unwrap());
    for i in 0..k {
        assert!((a[i] - b[i]).abs() <= rel * a[0], "s_{i}: {} vs {}", a[i], b[i]);
    }
}

#[test]
fn z_is_x_unless_compat_takes_the_columns() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let xp = d.join("x.csv");
    std::fs::write(&xp, csv(&x_data())).unwrap();
    // The defaults: rbf with the bandwidth rule, rank 2, Z = X.
    fit(&xp, &[], &d.join("self"));
    fit(&xp, &["--cols", p(&xp)], &d.join("both"));
    let summary = json(&std::fs::read_to_string(d.join("self/summary.json")).unwrap());
    assert_eq!(summary["rank"], 2);
    assert_eq!(
        (summary["n_rows"].as_u64(), summary["n_cols"].as_u64()),
        (Some(30), Some(30))
    );
    assert!(summary["kernel"]["Rbf"]["gamma"].as_f64().unwrap() > 0.0);
    assert_eq!(summary["bandwidth_rule"].as_f64(), Some(1.0));
    assert_eq!(summary["compat"], serde_json::Value::Null);
    let (s_self, s_both): (Array1<f64>, Array1<f64>) = (
        read_npy(d.join("self/s.npy")).unwrap(),
        read_npy(d.join("both/s.npy")).unwrap(),
    );
    assert_eq!(s_self, s_both, "no --cols is --cols X");
    // --compat: Z = the 4 columns of X (Algorithm 1).
    fit(&xp, &["--compat", "a1"], &d.join("compat"));
    assert_eq!(npy(&d.join("compat/v.npy")).dim(), (4, 2));
    let summary = json(&std::fs::read_to_string(d.join("compat/summary.json")).unwrap());
    assert_eq!(summary["compat"], "a1");
    // Both: a usage error (clap's, status 2), nothing written.
    let out = d.join("conflict");
    let r = run(
        &[
            "fit",
            "--rows",
            p(&xp),
            "--cols",
            p(&xp),
            "--compat",
            "a1",
            "--out",
            p(&out),
        ],
        None,
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("--compat"), "{}", r.stderr);
    assert!(files_in(&out).is_empty());
}

#[test]
fn standard_input_and_output_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (x, z) = (x_data(), z_data());
    let (xp, zp) = (d.join("x.csv"), d.join("z.csv"));
    std::fs::write(&xp, csv(&x)).unwrap();
    std::fs::write(&zp, csv(&z)).unwrap();
    let flags = [
        "--kernel",
        "sne",
        "--bandwidth",
        "4",
        "--n-components",
        "3",
        "--solver",
        "exact",
    ];
    let from_file = d.join("file");
    fit(&xp, &[&flags[..], &["--cols", p(&zp)]].concat(), &from_file);
    // X as CSV on standard input; --json: the summary, and only it, on standard output.
    let from_stdin = d.join("stdin");
    let mut args = vec![
        "fit",
        "--rows",
        "-",
        "--cols",
        p(&zp),
        "--json",
        "--out",
        p(&from_stdin),
    ];
    args.extend_from_slice(&flags);
    let r = run(&args, Some(csv(&x).as_bytes()));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let printed = json(&r.stdout_text());
    let written = json(&std::fs::read_to_string(from_stdin.join("summary.json")).unwrap());
    assert_eq!(printed, written);
    assert_eq!(printed["inputs"]["rows"], "-");
    let u = npy(&from_file.join("u.npy"));
    assert_eq!(npy(&from_stdin.join("u.npy")), u, "the same X, the same fit");
    // X as .npy bytes on standard input (told apart by their magic bytes).
    let npy_in = d.join("npy");
    let mut args = vec!["fit", "--rows", "-", "--cols", p(&zp), "--quiet", "--out", p(&npy_in)];
    args.extend_from_slice(&flags);
    let r = run(&args, Some(&ksvd_datasets::npy_bytes(&x).unwrap()));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(npy(&npy_in.join("u.npy")), u);

    // transform: new rows from standard input, the projections on standard output as CSV.
    let s: Array1<f64> = read_npy(from_file.join("s.npy")).unwrap();
    let t = tol(&s, x.nrows());
    let model = from_file.to_str().unwrap();
    let r = run(
        &["transform", "--model", model, "--rows", "-", "--out", "-", "--quiet"],
        Some(csv(&x).as_bytes()),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let us = &u * &s.mapv(f64::sqrt);
    assert!(rel(&parse_csv(&r.stdout_text()), &us) < t, "transform = U S^1/2");
    let r = run(
        &[
            "transform",
            "--model",
            model,
            "--rows",
            p(&xp),
            "--extension",
            "--out",
            "-",
        ],
        None,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(rel(&parse_csv(&r.stdout_text()), &u) < t, "--extension = U");
    assert!(r.stderr.contains("extended 30 new rows"), "{}", r.stderr);
    // --format npy: .npy bytes on standard output.
    let r = run(
        &[
            "transform",
            "--model",
            model,
            "--cols",
            p(&zp),
            "--format",
            "npy",
            "--out",
            "-",
        ],
        None,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let back = ksvd_datasets::read_npy_matrix_from(&r.stdout[..], Path::new("<stdout>"))
        .unwrap()
        .0;
    let vs = &npy(&from_file.join("v.npy")) * &s.mapv(f64::sqrt);
    assert!(rel(&back, &vs) < tol(&s, z.nrows()), "transform_cols = V S^1/2");
    // The model itself from standard input.
    let bytes = std::fs::read(from_file.join("model.json")).unwrap();
    let r = run(
        &["transform", "--model", "-", "--rows", p(&xp), "--out", "-", "--quiet"],
        Some(&bytes),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(rel(&parse_csv(&r.stdout_text()), &us) < t);
    // Standard input is read once: two `-` inputs are a usage error.
    let r = run(
        &["fit", "--rows", "-", "--cols", "-", "--out", p(&d.join("twice"))],
        Some(b"1,2\n"),
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("--rows and --cols"), "{}", r.stderr);
    // A bad line on standard input names it.
    let r = run(&["fit", "--rows", "-", "--out", p(&d.join("bad"))], Some(b"1,2\n3,x\n"));
    assert_eq!(r.code, 65, "{}", r.stderr);
    assert!(r.stderr.contains("<stdin>:2: `x` is not a number"), "{}", r.stderr);
    assert!(files_in(&d.join("bad")).is_empty());
}

#[test]
fn inspect_prints_the_summary_of_summary_json() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (xp, zp) = (d.join("x.csv"), d.join("z.csv"));
    std::fs::write(&xp, csv(&x_data())).unwrap();
    std::fs::write(&zp, csv(&z_data())).unwrap();
    let out = d.join("fit");
    fit(
        &xp,
        &[
            "--cols",
            p(&zp),
            "--kernel",
            "laplacian",
            "--n-components",
            "3",
            "--solver",
            "nystrom",
            "--n-landmarks",
            "12",
        ],
        &out,
    );
    let r = run(&["inspect", p(&out)], None);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let text = r.stdout_text();
    let first = text.lines().next().unwrap();
    assert!(first.starts_with("KSVD of a 30 x 20 laplacian(gamma="), "{text}");
    assert!(
        first.contains("rank 3") && first.contains("(12 x 12 landmarks)"),
        "{text}"
    );
    assert!(text.contains("rule gamma = k sqrt(M gamma_x), k = 1"), "{text}");
    // One line per triplet: its index, singular value and residuals ("-": Nyström certifies none).
    let triplets: Vec<Vec<&str>> = text
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|w| w.first().is_some_and(|i| i.parse::<usize>().is_ok()))
        .collect();
    assert_eq!(triplets.len(), 3, "{text}");
    assert!(
        triplets.iter().all(|w| w[1].parse::<f64>().is_ok() && w[2] == "-"),
        "{text}"
    );
    // --json: every field, each as summary.json has it (one source).
    let r = run(&["inspect", "--json", p(&out.join("model.json"))], None);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let inspected = json(&r.stdout_text());
    let summary = json(&std::fs::read_to_string(out.join("summary.json")).unwrap());
    let fields = inspected.as_object().unwrap();
    for key in [
        "estimator",
        "kernel",
        "bandwidth",
        "bandwidth_rule",
        "n_rows",
        "n_cols",
        "dim",
        "rank",
        "solver",
        "center",
        "precision",
        "compat",
        "seed",
        "singular_values",
        "residuals",
        "landmarks",
        "format_version",
    ] {
        assert!(fields.contains_key(key), "inspect --json lacks {key}");
    }
    for (key, value) in fields {
        assert_eq!(&summary[key], value, "summary.json and inspect disagree on {key}");
    }
    assert_eq!(inspected["estimator"], "ksvd");
    assert_eq!(inspected["landmarks"], serde_json::json!({"rows": 12, "cols": 12}));
    assert_eq!(
        inspected["residuals"],
        serde_json::Value::Null,
        "a Nyström fit certifies none"
    );
    let s: Array1<f64> = read_npy(out.join("s.npy")).unwrap();
    assert_eq!(inspected["singular_values"], serde_json::json!(s.to_vec()));
}

/// A KPCA model saved from Rust: the command reads it like a KSVD model, and its transform is
/// the model's own (scikit-learn's `KernelPCA.transform`: `A Λ^½` at the training samples).
#[test]
fn kpca_models_inspect_and_transform() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let x = x_data();
    let xp = d.join("x.csv");
    std::fs::write(&xp, csv(&x)).unwrap();
    let kpca = Kpca::params()
        .kernel(Kernel::Rbf { gamma: 6.0 })
        .rank(3)
        .fit(&DatasetBase::from(x.clone()))
        .unwrap();
    let model = kpca.to_model().unwrap();
    let path = d.join("kpca.json");
    model.save(&path).unwrap();
    let r = run(&["inspect", p(&path)], None);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout_text().starts_with("KPCA of a 30 x 30"), "{}", r.stdout_text());
    let samples = Samples::dense(x.clone()).unwrap();
    let lam = model.singular_values().to_owned();
    for (flag, want) in [
        (None, model.transform(&samples).unwrap()),
        (Some("--extension"), model.extend_rows(&samples).unwrap()),
    ] {
        let mut args = vec![
            "transform",
            "--model",
            p(&path),
            "--rows",
            p(&xp),
            "--out",
            "-",
            "--quiet",
        ];
        args.extend(flag);
        let r = run(&args, None);
        assert_eq!(r.code, 0, "{}", r.stderr);
        let got = parse_csv(&r.stdout_text());
        assert!(rel(&got, &want) < 16.0 * f64::EPSILON * 30f64.sqrt(), "{flag:?}");
        // At the training samples: A Λ^½ (transform) and A (extension).
        let a = model.u().to_owned();
        let at_training = if flag.is_some() { a } else { &a * &lam.mapv(f64::sqrt) };
        assert!(rel(&got, &at_training) < tol(&lam, 30), "{flag:?}");
    }
}

#[test]
fn exit_statuses_of_the_conventions() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let xp = d.join("x.csv");
    std::fs::write(&xp, csv(&x_data())).unwrap();
    let good = d.join("fit");
    fit(&xp, &["--bandwidth", "6", "--n-components", "3"], &good);
    let json_text = std::fs::read_to_string(good.join("model.json")).unwrap();
    // A tampered model: one changed value in the payload (its checksum no longer matches).
    let tampered = d.join("tampered.json");
    assert!(json_text.contains("\"n_rows\":30"));
    std::fs::write(&tampered, json_text.replacen("\"n_rows\":30", "\"n_rows\":31", 1)).unwrap();
    // A document of another format, sealed in the same envelope; and one of the streaming crate's
    // formats that is not a model (a partial state of its passes).
    let other = d.join("other.json");
    let bytes = ksvd_datasets::envelope::seal("another-tool", 1, "test", &vec![1.0, 2.0]).unwrap();
    std::fs::write(&other, bytes).unwrap();
    let partial = d.join("partial.json");
    let bytes = ksvd_datasets::envelope::seal("ksvd-streaming-scan", 2, "test", &vec![1.0, 2.0]).unwrap();
    std::fs::write(&partial, bytes).unwrap();
    for (model, want) in [
        (&tampered, "SHA-256"),
        (&other, "\"another-tool\" document"),
        (&partial, "is not a trained model"),
    ] {
        let out = d.join("out");
        let r = run(
            &["transform", "--model", p(model), "--rows", p(&xp), "--out", p(&out)],
            None,
        );
        assert_eq!(r.code, 65, "{}", r.stderr);
        assert!(
            r.stderr.contains("model file refused") && r.stderr.contains(want),
            "{}",
            r.stderr
        );
        assert!(files_in(&out).is_empty(), "nothing written");
        let r = run(&["inspect", p(model)], None);
        assert_eq!(r.code, 65, "{}", r.stderr);
        assert!(r.stdout.is_empty());
    }
    let cases: [(&[&str], i32, &str); 5] = [
        (
            &["fit", "--rows", "missing.csv", "--out"],
            74,
            "missing file missing.csv",
        ),
        (
            &["fit", "--rows", p(&xp), "--no-such-flag", "--out"],
            2,
            "--no-such-flag",
        ),
        (
            &["fit", "--rows", p(&xp), "--kernel", "gaussian", "--out"],
            2,
            "unknown kernel `gaussian`",
        ),
        (&["fit", "--rows", p(&xp), "--tol", "2", "--out"], 2, "(0, 1)"),
        // No solver meets a tolerance below the rounding error: the computation failed.
        (
            &["fit", "--rows", p(&xp), "--tol", "1e-300", "--out"],
            70,
            "did not converge",
        ),
    ];
    for (args, status, want) in cases {
        let out = d.join("failed");
        let mut all = args.to_vec();
        all.push(p(&out));
        let r = run(&all, None);
        assert_eq!(r.code, status, "{all:?}: {}", r.stderr);
        assert!(r.stderr.contains(want), "{all:?}: {}", r.stderr);
        assert!(files_in(&out).is_empty(), "{all:?} wrote files");
    }
    let r = run(&["inspect", p(&d.join("missing-dir"))], None);
    assert_eq!(r.code, 74, "{}", r.stderr);
    assert!(r.stderr.contains("model file not found"), "{}", r.stderr);
    // An output that cannot be written (a directory below a file): I/O, 74.
    let r = run(&["fit", "--rows", p(&xp), "--out", p(&xp.join("sub"))], None);
    assert_eq!(r.code, 74, "{}", r.stderr);
    assert!(r.stderr.starts_with("ksvd: error: cannot write"), "{}", r.stderr);
}

#[test]
fn completions_for_every_shell() {
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let r = run(&["completions", shell], None);
        assert_eq!(r.code, 0, "{shell}: {}", r.stderr);
        let script = r.stdout_text();
        assert!(script.contains("ksvd") && script.contains("n-components"), "{shell}");
        assert!(script.contains("inspect") && script.contains("extension"), "{shell}");
    }
    assert_eq!(run(&["completions", "tcsh"], None).code, 2);
}

/// LIBSVM lines of `n` rows with 6 features; the label is the sign of the first feature.
fn libsvm_rows(n: usize, shift: usize) -> String {
    let mut s = String::new();
    for i in 0..n {
        let v: Vec<f64> = (0..6)
            .map(|j| (((i + shift) * 7 + j * 13) % 17) as f64 / 17.0 - 0.5)
            .collect();
        let label = if v[0] > 0.0 { 1 } else { -1 };
        s.push_str(&label.to_string());
        for (j, x) in v.iter().enumerate() {
            s.push_str(&format!(" {}:{x}", j + 1));
        }
        s.push('\n');
    }
    s
}

#[test]
fn streaming_models_transform_and_inspect() {
    use ksvd_streaming::{run_pipeline, LibsvmSource, Method, PipelineParams, StreamingParams};
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (train, test) = (d.join("train.svm"), d.join("test.svm"));
    std::fs::write(&train, libsvm_rows(400, 0)).unwrap();
    std::fs::write(&test, libsvm_rows(60, 1000)).unwrap();
    let params = PipelineParams {
        model: StreamingParams::new(3, 40).seed(5),
        ridge: 1e-3,
        positive_label: None,
    };
    for method in [Method::Ksvd, Method::Kpca] {
        let out = run_pipeline(
            method,
            &[LibsvmSource::new(&train)],
            &[LibsvmSource::new(&test)],
            &params,
            &mut |_| {},
        )
        .unwrap();
        let model = d.join(format!("model.{}", method.name()));
        out.model.save(&model).unwrap();
        // transform: the model's embedding of the new rows, to the bit (the same code).
        let r = run(
            &[
                "transform",
                "--model",
                p(&model),
                "--rows",
                p(&test),
                "--out",
                "-",
                "--quiet",
            ],
            None,
        );
        assert_eq!(r.code, 0, "{}", r.stderr);
        let got = parse_csv(&r.stdout_text());
        let x = ksvd_datasets::read_libsvm(&test, &Default::default()).unwrap().features;
        let want = out.model.embed(&x).unwrap();
        assert_eq!(got.dim(), (60, 3));
        assert!(rel(&got, &want) <= 1e-15, "{}", rel(&got, &want));
        // inspect, and --json.
        let r = run(&["inspect", p(&model)], None);
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert!(r.stdout_text().contains("streaming fit"), "{}", r.stdout_text());
        let r = run(&["inspect", p(&model), "--json"], None);
        let j = json(&r.stdout_text());
        assert_eq!(j["method"], method.name());
        assert_eq!((j["rank"].as_u64(), j["n_features"].as_u64()), (Some(3), Some(6)));
        // Columns and --extension are usage errors for a streaming model.
        let r = run(
            &["transform", "--model", p(&model), "--cols", p(&test), "--out", "-"],
            None,
        );
        assert_eq!(r.code, 2, "{}", r.stderr);
        // A changed digit: refused (bad input data, 65), nothing written.
        let text = std::fs::read_to_string(&model).unwrap();
        let at = text.rfind(|c: char| c.is_ascii_digit() && c != '0').unwrap();
        let mut bytes = text.into_bytes();
        bytes[at] = if bytes[at] == b'1' { b'2' } else { b'1' };
        let bad = d.join("bad.model");
        std::fs::write(&bad, bytes).unwrap();
        let outdir = d.join("never");
        let r = run(
            &["transform", "--model", p(&bad), "--rows", p(&test), "--out", p(&outdir)],
            None,
        );
        assert_eq!(r.code, 65, "{}", r.stderr);
        assert!(!outdir.exists());
    }
}

#[test]
fn dtype_f32_stores_g_in_single_precision_with_its_own_default_tolerance() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let xp = d.join("x.csv");
    std::fs::write(&xp, csv(&x_data())).unwrap();
    let common = [
        "--kernel",
        "rbf",
        "--bandwidth",
        "3",
        "--n-components",
        "3",
        "--solver",
        "lanczos",
    ];
    fit(&xp, &common, &d.join("f64"));
    let mut args = common.to_vec();
    args.extend(["--dtype", "f32"]);
    fit(&xp, &args, &d.join("f32"));
    let summary = |k: &str| json(&std::fs::read_to_string(d.join(k).join("summary.json")).unwrap());
    let (s64, s32) = (summary("f64"), summary("f32"));
    assert_eq!(s64["solver"]["Lanczos"]["tol"].as_f64(), Some(1e-8));
    assert_eq!(
        s32["solver"]["Lanczos"]["tol"].as_f64(),
        Some(1e-5),
        "f32's default tolerance"
    );
    assert_eq!(
        (s64["precision"].as_str(), s32["precision"].as_str()),
        (Some("f64"), Some("f32"))
    );
    assert!(s32["residuals"]["max_relative_to_s1"].as_f64().unwrap() <= 1e-5);
    singular_values_agree(&d.join("f64"), &d.join("f32"), 3, 1e-5);
    // A tolerance f32 cannot certify is a parameter error (status 2) naming it.
    args.extend(["--tol", "1e-8"]);
    let out = d.join("bad");
    let mut all = vec!["fit", "--rows", p(&xp), "--out", p(&out)];
    all.extend_from_slice(&args);
    let r = run(&all, None);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("tol") && r.stderr.contains("f32"), "{}", r.stderr);
    assert!(!out.exists(), "nothing is written");
    // An unknown precision names the choices.
    let r = run(&["fit", "--rows", p(&xp), "--out", p(&out), "--dtype", "f16"], None);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("f64") && r.stderr.contains("f32"), "{}", r.stderr);
}

/// A graph fit (rank one plus sparse) runs in f64 whatever `--dtype` says, and says so: its
/// summary records the precision it computed in (`f64`), with the tolerance `--dtype f32` asked
/// for (float32's default, 1e-5), and its singular values are the f64 fit's within it.
#[test]
fn dtype_f32_on_a_graph_computes_and_records_f64() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // A directed graph on 40 nodes: a cycle with chords, so that the spectrum is not flat.
    let edges: String = (0..40)
        .flat_map(|i| [format!("{i} {}\n", (i + 1) % 40), format!("{i} {}\n", (3 * i + 7) % 40)])
        .collect();
    let gp = d.join("edges.txt");
    std::fs::write(&gp, edges).unwrap();
    let fit_graph = |dtype: &str, out: &str| {
        let o = d.join(out);
        ok(&[
            "fit",
            "--graph",
            p(&gp),
            "--graph-input",
            "row-normalized-self-loops",
            "--kernel",
            "sne",
            "--n-components",
            "4",
            "--solver",
            "lanczos",
            "--dtype",
            dtype,
            "--out",
            p(&o),
        ]);
        o
    };
    let (o64, o32) = (fit_graph("f64", "g64"), fit_graph("f32", "g32"));
    let summary = |o: &Path| json(&std::fs::read_to_string(o.join("summary.json")).unwrap());
    let (s64, s32) = (summary(&o64), summary(&o32));
    assert_eq!(
        (s64["precision"].as_str(), s32["precision"].as_str()),
        (Some("f64"), Some("f64")),
        "a graph fit computes in f64"
    );
    assert_eq!(s32["solver"]["Lanczos"]["tol"].as_f64(), Some(1e-5));
    assert!(s32["residuals"]["max_relative_to_s1"].as_f64().unwrap() <= 1e-5);
    singular_values_agree(&o64, &o32, 4, 1e-5);
}
