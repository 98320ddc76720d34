//! The portable model: the out-of-sample extension (eq. 10) reproduces U and V at the training
//! samples for every kernel and solver, agrees with a direct dense computation on new samples,
//! survives a save/load round trip bit for bit, and rejects corrupt files with typed errors.
// Test helpers unwrap: a failure is a test failure.
#![allow(clippy::unwrap_used)]
mod common;
use common::solvers;
use ksvd::{
    InnerSolver, Ksvd, KsvdError, KsvdModel, MemoryBudget, Sampling, Scaling, Solver, MODEL_FORMAT,
    MODEL_FORMAT_VERSION,
};
use ksvd_datasets::envelope::{self, EnvelopeError};
use ksvd_kernels::{Kernel, KernelKind, Samples};
use ksvd_linalg::random::{gaussian_matrix, rng_from_seed};
use ksvd_linalg::CsrMatrix;
use ksvd_linalg::Vocabulary;
use linfa::prelude::*;
use ndarray::{Array1, Array2, Axis};
use serde_json::value::RawValue;

const N: usize = 40;
const M: usize = 30;
const D: usize = 5;
const R: usize = 3;

fn sets(seed: u64) -> (Array2<f64>, Array2<f64>, Array2<f64>) {
    let mut rng = rng_from_seed(seed);
    (
        gaussian_matrix(&mut rng, N, D),
        gaussian_matrix(&mut rng, M, D) * 0.8 + 0.3,
        gaussian_matrix(&mut rng, 7, D),
    )
}

/// One kernel of every built-in kind (the vocabulary's), polynomial of degree 2.
fn kernels() -> Vec<Kernel> {
    KernelKind::ALL.iter().filter_map(|k| k.kernel(2.0, 2, 1.0)).collect()
}

fn fit(kernel: Kernel, solver: Solver, center: bool, x: &Array2<f64>, z: &Array2<f64>) -> Ksvd {
    Ksvd::params()
        .kernel(kernel)
        .rank(R)
        .solver(solver)
        .center(center)
        .seed(5)
        .check()
        .unwrap()
        .fit_samples(Samples::dense(x.clone()).unwrap(), Samples::dense(z.clone()).unwrap())
        .unwrap()
}

/// `‖a − b‖_F / ‖b‖_F`.
fn rel(a: &Array2<f64>, b: &Array2<f64>) -> f64 {
    assert_eq!(a.dim(), b.dim());
    (a - b).mapv(|v| v * v).sum().sqrt() / b.mapv(|v| v * v).sum().sqrt()
}

#[test]
fn training_samples_reproduce_u_and_v_for_every_kernel_and_solver() {
    let (x, z, _) = sets(1);
    for kernel in kernels() {
        for (name, solver) in solvers() {
            for center in [false, true] {
                let f = fit(kernel, solver.clone(), center, &x, &z);
                let model = f.to_model().unwrap();
                let u = model.extend_rows(&Samples::dense(x.clone()).unwrap()).unwrap();
                let v = model.extend_cols(&Samples::dense(z.clone()).unwrap()).unwrap();
                let (eu, ev) = (rel(&u, &f.u().to_owned()), rel(&v, &f.v().to_owned()));
                assert!(
                    eu < 1e-10 && ev < 1e-10,
                    "{kernel} {name} center={center}: {eu:e} {ev:e}"
                );
                assert_eq!(model.u(), f.u());
                assert_eq!(model.singular_values(), f.singular_values());
            }
        }
    }
}

/// Kernel values of `k̃(a_i, z_j)` computed directly, densely, for new rows `a` against the
/// training `(x, z)` (training means for centring; SNE normalised over Z).
fn direct_rows(kernel: Kernel, center: bool, x: &Array2<f64>, z: &Array2<f64>, a: &Array2<f64>) -> Array2<f64> {
    let k = |p: &Array2<f64>| -> Array2<f64> {
        let raw = Array2::from_shape_fn((p.nrows(), z.nrows()), |(i, j)| {
            let base = match kernel {
                Kernel::Sne { gamma } => Kernel::Rbf { gamma },
                k => k,
            };
            base.eval_pair(p.row(i).as_slice().unwrap(), z.row(j).as_slice().unwrap())
                .unwrap()
        });
        match kernel {
            Kernel::Sne { .. } => {
                let sums = raw.sum_axis(Axis(1));
                &raw / &sums.insert_axis(Axis(1))
            }
            _ => raw,
        }
    };
    let mut out = k(a);
    if center {
        let g = k(x);
        let col_means = g.mean_axis(Axis(0)).unwrap();
        let grand = g.mean().unwrap();
        let row_means: Array1<f64> = out.mean_axis(Axis(1)).unwrap();
        out = &out - &row_means.insert_axis(Axis(1)) - &col_means + grand;
    }
    out
}

#[test]
fn new_row_projections_match_a_direct_dense_computation() {
    let (x, z, new) = sets(2);
    for kernel in kernels() {
        for center in [false, true] {
            let f = fit(kernel, Solver::Exact, center, &x, &z);
            let model = f.to_model().unwrap();
            let got = model.extend_rows(&Samples::dense(new.clone()).unwrap()).unwrap();
            let k = direct_rows(kernel, center, &x, &z, &new);
            let inv_s = f.singular_values().mapv(|s| 1.0 / s);
            let want = k.dot(&f.v()) * &inv_s;
            let tol = f64::EPSILON * ((N * M) as f64).sqrt() * 1e3;
            assert!(
                rel(&got, &want) < tol,
                "{kernel} center={center}: {:e}",
                rel(&got, &want)
            );
        }
    }
}

#[test]
fn new_column_projections_match_a_direct_dense_computation() {
    let (x, z, new) = sets(3);
    for kernel in kernels().into_iter().filter(|k| !matches!(k, Kernel::Sne { .. })) {
        let f = fit(kernel, Solver::Exact, false, &x, &z);
        let model = f.to_model().unwrap();
        let got = model.extend_cols(&Samples::dense(new.clone()).unwrap()).unwrap();
        // k(X, z')ᵀ U S⁻¹ by pairs.
        let k = Array2::from_shape_fn((new.nrows(), N), |(b, i)| {
            kernel
                .eval_pair(x.row(i).as_slice().unwrap(), new.row(b).as_slice().unwrap())
                .unwrap()
        });
        let inv_s = f.singular_values().mapv(|s| 1.0 / s);
        let want = k.dot(&f.u()) * &inv_s;
        let tol = f64::EPSILON * ((N * M) as f64).sqrt() * 1e3;
        assert!(rel(&got, &want) < tol, "{kernel}: {:e}", rel(&got, &want));
    }
}

#[test]
fn saved_and_reloaded_models_give_bit_identical_transforms() {
    let (x, z, new) = sets(4);
    for kernel in kernels() {
        for (name, solver) in solvers() {
            for center in [false, true] {
                let model = fit(kernel, solver.clone(), center, &x, &z).to_model().unwrap();
                let bytes = model.to_bytes().unwrap();
                let back = KsvdModel::from_bytes(&bytes).unwrap();
                let s = Samples::dense(new.clone()).unwrap();
                assert_eq!(
                    model.extend_rows(&s).unwrap(),
                    back.extend_rows(&s).unwrap(),
                    "{kernel} {name}"
                );
                assert_eq!(
                    model.extend_cols(&s).unwrap(),
                    back.extend_cols(&s).unwrap(),
                    "{kernel} {name}"
                );
                assert_eq!(
                    back.to_bytes().unwrap(),
                    bytes,
                    "{kernel} {name}: re-serialisation differs"
                );
            }
        }
    }
}

#[test]
fn nystrom_models_store_only_their_landmarks_when_the_kernel_allows() {
    let (x, z, _) = sets(5);
    let ny = solvers().remove(2).1;
    let m = fit(Kernel::Rbf { gamma: 2.0 }, ny.clone(), false, &x, &z)
        .to_model()
        .unwrap();
    let (sx, sz) = m.stored_samples().unwrap();
    assert_eq!((sx.len(), sz.len()), (25, 20));
    // SNE needs all of Z for the normaliser of a new row; centring needs both sets.
    let m = fit(Kernel::Sne { gamma: 1.5 }, ny.clone(), false, &x, &z)
        .to_model()
        .unwrap();
    let (sx, sz) = m.stored_samples().unwrap();
    assert_eq!((sx.len(), sz.len()), (25, M));
    let m = fit(Kernel::Rbf { gamma: 2.0 }, ny, true, &x, &z).to_model().unwrap();
    let (sx, sz) = m.stored_samples().unwrap();
    assert_eq!((sx.len(), sz.len()), (N, M));
}

#[test]
fn sparse_models_round_trip() {
    let (x, z, _) = sets(6);
    let sparsify = |a: &Array2<f64>| a.mapv(|v| if v.abs() < 0.7 { 0.0 } else { v });
    let (xs, zs) = (sparsify(&x), sparsify(&z));
    for kernel in [Kernel::Linear, Kernel::Rbf { gamma: 2.0 }, Kernel::Sne { gamma: 2.0 }] {
        let f = Ksvd::params()
            .kernel(kernel)
            .rank(R)
            .solver(Solver::Exact)
            .check()
            .unwrap()
            .fit_samples(
                Samples::sparse(CsrMatrix::from_dense(xs.view()).unwrap()).unwrap(),
                Samples::sparse(CsrMatrix::from_dense(zs.view()).unwrap()).unwrap(),
            )
            .unwrap();
        let back = KsvdModel::from_bytes(&f.to_model().unwrap().to_bytes().unwrap()).unwrap();
        let u = back
            .extend_rows(&Samples::sparse(CsrMatrix::from_dense(xs.view()).unwrap()).unwrap())
            .unwrap();
        assert!(rel(&u, &f.u().to_owned()) < 1e-10, "{kernel}");
    }
}

#[test]
fn data_matrix_models_map_new_rows_with_the_compatibility_matrix() {
    let mut rng = rng_from_seed(7);
    let a = gaussian_matrix(&mut rng, 12, 20);
    let f = Ksvd::params()
        .kernel(Kernel::Rbf { gamma: 4.0 })
        .rank(R)
        .compat(Some(ksvd::Compat::Pca))
        .solver(Solver::Exact)
        .fit(&DatasetBase::from(a.clone()))
        .unwrap();
    let back = KsvdModel::from_bytes(&f.to_model().unwrap().to_bytes().unwrap()).unwrap();
    let u = back.extend_data_rows(a.view()).unwrap();
    assert!(rel(&u, &f.u().to_owned()) < 1e-10);
    let v = back.extend_data_cols(a.t()).unwrap();
    assert!(rel(&v, &f.v().to_owned()) < 1e-10);
}

#[test]
fn user_landmarks_are_used_and_checked() {
    let (x, z, _) = sets(8);
    let ny = Solver::Nystrom {
        landmarks: 0,
        cols: None,
        sampling: Sampling::Uniform,
        inner: InnerSolver::Dense,
    };
    let params = |rows: Vec<usize>, cols: Vec<usize>| {
        Ksvd::params()
            .kernel(Kernel::Rbf { gamma: 2.0 })
            .rank(R)
            .solver(ny.clone())
            .landmark_indices(rows, cols)
    };
    // All rows and columns: the exact SVD.
    let all = params((0..N).rev().collect(), (0..M).collect())
        .check()
        .unwrap()
        .fit_samples(Samples::dense(x.clone()).unwrap(), Samples::dense(z.clone()).unwrap())
        .unwrap();
    let exact = fit(Kernel::Rbf { gamma: 2.0 }, Solver::Exact, false, &x, &z);
    let s_tol = f64::EPSILON * (N as f64) * 1e2 * exact.singular_values()[0];
    for i in 0..R {
        assert!((all.singular_values()[i] - exact.singular_values()[i]).abs() < s_tol);
    }
    // A subset: exactly those landmarks, and the model extends through them.
    let (ri, cj) = (vec![3, 1, 30, 7, 12], vec![0, 29, 4, 8]);
    let sub = params(ri.clone(), cj.clone())
        .check()
        .unwrap()
        .fit_samples(Samples::dense(x.clone()).unwrap(), Samples::dense(z.clone()).unwrap())
        .unwrap();
    let ny = sub.nystrom().unwrap();
    let mut sorted = ri.clone();
    sorted.sort_unstable();
    assert_eq!(ny.rows, sorted);
    let model = sub.to_model().unwrap();
    assert_eq!(model.stored_samples().unwrap().0.len(), 5);
    let u = model.extend_rows(&Samples::dense(x.clone()).unwrap()).unwrap();
    assert!(rel(&u, &sub.u().to_owned()) < 1e-10);
    // Bad lists: repeated, out of range, too few.
    let err = params(vec![1, 2, 2, 5], cj.clone()).check().unwrap_err();
    assert!(err.to_string().contains("index 2 is repeated"), "{err}");
    let err = params(ri.clone(), vec![0, 1, 2, 99])
        .check()
        .unwrap()
        .fit_samples(Samples::dense(x.clone()).unwrap(), Samples::dense(z.clone()).unwrap())
        .unwrap_err();
    assert!(err.to_string().contains("index 99 is out of range for 30"), "{err}");
    assert!(params(vec![1, 2], cj).check().is_err());
}

fn model_bytes() -> Vec<u8> {
    let (x, z, _) = sets(9);
    fit(Kernel::Rbf { gamma: 2.0 }, Solver::Exact, false, &x, &z)
        .to_model()
        .unwrap()
        .to_bytes()
        .unwrap()
}

/// The payload of a model document, as text.
fn payload(bytes: &[u8]) -> String {
    let text = std::str::from_utf8(bytes).unwrap();
    let i = text.find("\"payload\":").unwrap() + "\"payload\":".len();
    text[i..text.len() - 1].to_string()
}

/// A model document around an edited payload, with a valid checksum: what an incompatible
/// writer could produce, so that the payload's own invariants are what the loader checks.
fn reseal(payload: &str) -> Vec<u8> {
    let raw = RawValue::from_string(payload.to_string()).unwrap();
    envelope::seal(MODEL_FORMAT, MODEL_FORMAT_VERSION, "test", &raw).unwrap()
}

/// One changed digit of one coefficient, a truncated file, an unknown version, another format
/// and bytes that are no document at all are refused with typed errors naming the problem.
#[test]
fn tampered_and_foreign_model_files_are_refused() {
    let bytes = model_bytes();
    let text = String::from_utf8(bytes.clone()).unwrap();
    // One digit of one entry of V (the coefficients of every projection).
    let i = text.find("\"v\":{").unwrap();
    let j = i + text[i..].find("\"data\":[").unwrap() + "\"data\":[".len();
    let k = j + text[j..].find(|c: char| c.is_ascii_digit() && c != '0').unwrap();
    let digit = text.as_bytes()[k];
    let mut changed = bytes.clone();
    changed[k] = if digit == b'9' { b'8' } else { digit + 1 };
    let err = KsvdModel::from_bytes(&changed).unwrap_err();
    assert!(
        matches!(err, KsvdError::ModelFile(EnvelopeError::Checksum { .. })),
        "{err}"
    );
    assert!(err.to_string().contains("changed or truncated"), "{err}");
    // Truncated anywhere.
    for len in [0, 10, bytes.len() / 2, bytes.len() - 1] {
        let err = KsvdModel::from_bytes(&bytes[..len]).unwrap_err();
        assert!(
            matches!(err, KsvdError::ModelFile(EnvelopeError::NotADocument { .. })),
            "{len}: {err}"
        );
    }
    // A version this build does not read (the previous one, and a future one).
    for v in [1, 3] {
        let other = text.replacen(
            &format!("\"format_version\":{MODEL_FORMAT_VERSION}"),
            &format!("\"format_version\":{v}"),
            1,
        );
        let err = KsvdModel::from_bytes(other.as_bytes()).unwrap_err();
        assert!(
            matches!(err, KsvdError::ModelFile(EnvelopeError::Version { found, supported: 2, .. }) if found == v),
            "{err}"
        );
    }
    // Another format, and no envelope at all.
    let other = envelope::seal("ksvd-partial", 2, "test", &vec![1.0]).unwrap();
    let err = KsvdModel::from_bytes(&other).unwrap_err();
    assert!(
        matches!(err, KsvdError::ModelFile(EnvelopeError::Format { .. })),
        "{err}"
    );
    for junk in [&b"{\"a\": 1}"[..], b"\x00\x01", payload(&bytes).as_bytes()] {
        let err = KsvdModel::from_bytes(junk).unwrap_err();
        assert!(
            matches!(err, KsvdError::ModelFile(EnvelopeError::NotADocument { .. })),
            "{err}"
        );
    }
}

/// Saving is atomic and loading gives the same model; a file changed on disk is refused.
#[test]
fn models_save_and_load_through_files() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("model.json");
    let (x, z, new) = sets(12);
    let model = fit(Kernel::Sne { gamma: 1.5 }, Solver::Exact, true, &x, &z)
        .to_model()
        .unwrap();
    model.save(&path).unwrap();
    let back = KsvdModel::load(&path).unwrap();
    let s = Samples::dense(new).unwrap();
    assert_eq!(back.transform(&s).unwrap(), model.transform(&s).unwrap());
    // Only the model file is left in the directory (no temporary file).
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    let mut bytes = std::fs::read(&path).unwrap();
    let n = bytes.len();
    bytes.truncate(n - 20);
    std::fs::write(&path, &bytes).unwrap();
    assert!(matches!(KsvdModel::load(&path), Err(KsvdError::ModelFile(_))));
    assert!(matches!(
        KsvdModel::load(&dir.path().join("missing.json")),
        Err(KsvdError::ModelIo { .. })
    ));
}

/// The memory budget is a setting of the fitting machine: it is not written into a model, and
/// the same fit under two budgets gives the same file.
#[test]
fn the_memory_budget_is_not_part_of_a_model() {
    let (x, z, _) = sets(13);
    let file = |budget: u64| {
        Ksvd::params()
            .kernel(Kernel::Rbf { gamma: 2.0 })
            .rank(R)
            .solver(Solver::Exact)
            .memory_budget(MemoryBudget::bytes(budget).unwrap())
            .check()
            .unwrap()
            .fit_samples(Samples::dense(x.clone()).unwrap(), Samples::dense(z.clone()).unwrap())
            .unwrap()
            .to_model()
            .unwrap()
            .to_bytes()
            .unwrap()
    };
    let (small, large) = (file(1 << 20), file(1 << 30));
    assert_eq!(small, large);
    let text = String::from_utf8(small).unwrap();
    assert!(!text.contains("budget"), "{text}");
    let back = KsvdModel::from_bytes(text.as_bytes()).unwrap();
    assert_eq!(back.params().memory_budget(), MemoryBudget::auto());
}

#[test]
fn corrupt_payloads_give_typed_errors() {
    let json = payload(&model_bytes());
    assert!(KsvdModel::from_bytes(&reseal(&json)).is_ok());
    // A NaN (written as null by JSON writers) in the singular values.
    let i = json.find("\"s\":{").unwrap();
    let j = i + json[i..].find("\"data\":[").unwrap() + 8;
    let nan = format!("{}null{}", &json[..j], &json[j + json[j..].find(',').unwrap()..]);
    assert!(matches!(
        KsvdModel::from_bytes(&reseal(&nan)),
        Err(KsvdError::ModelFile(EnvelopeError::Payload { .. }) | KsvdError::CorruptModel { .. })
    ));
    // A wrong shape: the rank no longer matches.
    let bad = json.replacen("\"rank\":3", "\"rank\":2", 1);
    let err = KsvdModel::from_bytes(&reseal(&bad)).unwrap_err();
    assert!(err.to_string().contains("3 singular values for rank 2"), "{err}");
    // A bad kernel parameter.
    let bad = json.replacen("\"gamma\":2.0", "\"gamma\":-2.0", 1);
    let err = KsvdModel::from_bytes(&reseal(&bad)).unwrap_err();
    assert!(matches!(err, KsvdError::CorruptModel { .. }), "{err}");
    assert!(err.to_string().contains("gamma"), "{err}");
    // A KSVD model relabelled as KPCA is not symmetric.
    let bad = json.replacen("\"estimator\":\"ksvd\"", "\"estimator\":\"kpca\"", 1);
    let err = KsvdModel::from_bytes(&reseal(&bad)).unwrap_err();
    assert!(err.to_string().contains("KPCA model is symmetric"), "{err}");
}

#[test]
fn corrupt_landmarks_in_a_model_file_are_rejected() {
    let (x, z, _) = sets(10);
    let ny = solvers().remove(2).1;
    let m = fit(Kernel::Rbf { gamma: 2.0 }, ny, false, &x, &z).to_model().unwrap();
    let json = payload(&m.to_bytes().unwrap());
    let i = json.find("\"row_landmarks\":[").unwrap() + "\"row_landmarks\":[".len();
    let end = i + json[i..].find(',').unwrap();
    let bad = format!("{}999{}", &json[..i], &json[end..]);
    let err = KsvdModel::from_bytes(&reseal(&bad)).unwrap_err();
    assert!(err.to_string().contains("row_landmarks index 999"), "{err}");
}

#[test]
fn precomputed_kernel_models_extend_kernel_values() {
    let (x, z, _) = sets(11);
    for (name, solver) in solvers() {
        for center in [false, true] {
            let kernel = Kernel::Rbf { gamma: 2.0 };
            // The uncentred G, materialised.
            let raw = fit(kernel, Solver::Exact, false, &x, &z);
            let g = ksvd_linalg::materialize(raw.kernel_matrix()).unwrap();
            let params = Ksvd::params()
                .rank(R)
                .solver(solver.clone())
                .center(center)
                .seed(5)
                .check()
                .unwrap();
            let model = params.fit_precomputed(g.view()).unwrap();
            assert!(model.is_precomputed() && model.stored_samples().is_none());
            // Same spectrum as the fit on samples.
            let on_samples = fit(kernel, solver.clone(), center, &x, &z);
            let s_err = (&model.singular_values() - &on_samples.singular_values())
                .iter()
                .fold(0.0f64, |a, b| a.max(b.abs()));
            assert!(
                s_err < 1e-10 * on_samples.singular_values()[0],
                "{name} center={center}: {s_err:e}"
            );
            // Round trips: the training rows (rows of G) give U, the training columns (rows of Gᵀ) V.
            let u = model.extend_kernel_rows(g.view()).unwrap();
            let v = model.extend_kernel_cols(g.t()).unwrap();
            assert!(rel(&u, &model.u().to_owned()) < 1e-10, "{name} center={center}");
            assert!(rel(&v, &model.v().to_owned()) < 1e-10, "{name} center={center}");
            let back = KsvdModel::from_bytes(&model.to_bytes().unwrap()).unwrap();
            assert_eq!(back.extend_kernel_rows(g.view()).unwrap(), u);
            assert_eq!(back.extend_kernel_cols(g.t()).unwrap(), v);
            // Bad input.
            let err = model.extend_kernel_rows(g.t()).unwrap_err();
            assert!(
                err.to_string().contains("40 values per new sample, expected 30"),
                "{err}"
            );
            let mut nan = g.clone();
            nan[[1, 2]] = f64::NAN;
            assert!(model.extend_kernel_rows(nan.view()).is_err());
            assert!(model.extend_rows(&Samples::dense(x.clone()).unwrap()).is_err());
        }
    }
}

#[test]
fn saved_kernel_statistics_are_checked_and_optional() {
    let (x, z, new) = sets(10);
    let model = fit(Kernel::Sne { gamma: 1.5 }, Solver::Exact, true, &x, &z)
        .to_model()
        .unwrap();
    let json = payload(&model.to_bytes().unwrap());
    let i = json.find("\"kernel_stats\":").unwrap();
    let end = i + json[i..].find(",\"precomputed\"").unwrap();
    // Without the statistics the loader recomputes them from the samples: same transforms up
    // to the summation order of the passes over G.
    let without = format!("{}\"kernel_stats\":null{}", &json[..i], &json[end..]);
    let back = KsvdModel::from_bytes(&reseal(&without)).unwrap();
    let s = Samples::dense(new).unwrap();
    let (a, b) = (model.extend_rows(&s).unwrap(), back.extend_rows(&s).unwrap());
    assert!(rel(&a, &b) < f64::EPSILON * 1e3, "{:e}", rel(&a, &b));
    // Statistics that do not fit the samples are a corrupt file.
    let stats = &json[i..end];
    let k = stats.find("\"col_means\":[").unwrap() + 13;
    let comma = k + stats[k..].find(',').unwrap();
    let short = format!("{}{}{}", &json[..i + k], &stats[comma + 1..], &json[end..]);
    let err = KsvdModel::from_bytes(&reseal(&short)).unwrap_err();
    assert!(matches!(err, KsvdError::CorruptModel { .. }), "{err}");
    assert!(err.to_string().contains("centring means"), "{err}");
    // Normalisers for a kernel that has none.
    let rbf = json.replacen("\"Sne\"", "\"Rbf\"", 1);
    let err = KsvdModel::from_bytes(&reseal(&rbf)).unwrap_err();
    assert!(err.to_string().contains("only SNE"), "{err}");
}

/// `project_input_rows` / `_cols` take what the fit took: samples, rows (columns) of the data
/// matrix of a fit with a compatibility, kernel values of a precomputed fit.
#[test]
fn project_input_dispatches_on_what_the_fit_took() {
    let (x, z, new) = sets(13);
    let (xs, news) = (Samples::dense(x.clone()).unwrap(), Samples::dense(new.clone()).unwrap());
    let on_samples = fit(Kernel::Rbf { gamma: 2.0 }, Solver::Exact, true, &x, &z)
        .to_model()
        .unwrap();
    assert_eq!(on_samples.input_dims(), (D, D));
    for scaling in [Scaling::Unit, Scaling::Sqrt, Scaling::Full] {
        assert_eq!(
            on_samples.project_input_rows(&news, scaling).unwrap(),
            on_samples.project_rows(&news, scaling).unwrap()
        );
        assert_eq!(
            on_samples.project_input_cols(&news, scaling).unwrap(),
            on_samples.project_cols(&news, scaling).unwrap()
        );
    }
    let g = ksvd_linalg::materialize(fit(Kernel::Rbf { gamma: 2.0 }, Solver::Exact, false, &x, &z).kernel_matrix())
        .unwrap();
    let pre = Ksvd::params()
        .rank(R)
        .solver(Solver::Exact)
        .check()
        .unwrap()
        .fit_precomputed(g.view())
        .unwrap();
    assert_eq!(pre.input_dims(), (M, N));
    let g_rows = Samples::dense(g.clone()).unwrap();
    let g_cols = Samples::dense(g.t().to_owned()).unwrap();
    assert_eq!(
        pre.project_input_rows(&g_rows, Scaling::Sqrt).unwrap(),
        pre.project_kernel_rows(g.view(), Scaling::Sqrt).unwrap()
    );
    assert_eq!(
        pre.project_input_cols(&g_cols, Scaling::Unit).unwrap(),
        pre.project_kernel_cols(g.t(), Scaling::Unit).unwrap()
    );
    let mut rng = rng_from_seed(7);
    let a = gaussian_matrix(&mut rng, 12, 20);
    let data = Ksvd::params()
        .kernel(Kernel::Rbf { gamma: 4.0 })
        .rank(R)
        .compat(Some(ksvd::Compat::Pca))
        .solver(Solver::Exact)
        .fit(&DatasetBase::from(a.clone()))
        .unwrap()
        .to_model()
        .unwrap();
    // A 12 x 20 data matrix: new rows have 20 entries, new columns 12.
    assert_eq!(data.input_dims(), (20, 12));
    let rows = Samples::dense(a.clone()).unwrap();
    let cols = Samples::dense(a.t().to_owned()).unwrap();
    assert_eq!(
        data.project_input_rows(&rows, Scaling::Unit).unwrap(),
        data.extend_data_rows(a.view()).unwrap()
    );
    assert_eq!(
        data.project_input_cols(&cols, Scaling::Unit).unwrap(),
        data.extend_data_cols(a.t()).unwrap()
    );
    // Samples given to a model of kernel values are refused with the reason (40 x 5 samples,
    // not 30 kernel values per row).
    let err = pre.project_input_rows(&xs, Scaling::Sqrt).unwrap_err();
    assert!(
        err.to_string().contains("5 values per new sample, expected 30"),
        "{err}"
    );
}
