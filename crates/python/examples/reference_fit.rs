//! Reference values from the Rust API, for the Python package's test that the same fit from
//! Python and from Rust gives identical numbers (`tests/test_rust_reference.py`).
//!
//! ```text
//! cargo run --release -p ksvd-python --example reference_fit > reference.json
//! KSVD_RUST_REFERENCE=reference.json pytest crates/python
//! ```
//!
//! Prints one JSON object: for every case, the singular values (KPCA: eigenvalues), the
//! bandwidth used and `transform` of the first three training rows (`k̃(x, Z) V S^-½`, row by
//! row). Solvers are built as the front ends build them, by name with the conventions' options
//! (`SolverKind::solver`); the data are integer patterns divided by an integer, so Python builds
//! bit-identical inputs.
use ksvd::{Kernel, Kpca, Ksvd, KsvdModel, ParamGuard, Samples, SolverKind, SolverOptions};
use ndarray::{s, Array2};

/// `X[i, j] = ((7 i + 3 j) mod 11) / 11`, `30 × 3` (mirrored in the Python test).
fn x_data() -> Array2<f64> {
    Array2::from_shape_fn((30, 3), |(i, j)| ((i * 7 + j * 3) % 11) as f64 / 11.0)
}

/// `Z[i, j] = ((5 i + j) mod 13) / 13`, `25 × 3` (mirrored in the Python test).
fn z_data() -> Array2<f64> {
    Array2::from_shape_fn((25, 3), |(i, j)| ((i * 5 + j) % 13) as f64 / 13.0)
}

/// One line of the output: `"name": {"s": [..], "bandwidth": .., "t": [..]}`.
fn record(name: &str, model: &KsvdModel, x: &Array2<f64>) -> Result<String, Box<dyn std::error::Error>> {
    let list = |v: &mut dyn Iterator<Item = f64>| v.map(|v| format!("{v:?}")).collect::<Vec<_>>().join(", ");
    let t = model.transform(&Samples::dense(x.slice(s![..3, ..]).to_owned())?)?;
    let gamma = model.bandwidth().map_or("null".to_string(), |g| format!("{g:?}"));
    Ok(format!(
        "  \"{name}\": {{\"s\": [{}], \"bandwidth\": {gamma}, \"t\": [{}]}}",
        list(&mut model.singular_values().iter().copied()),
        list(&mut t.iter().copied())
    ))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (x, z) = (x_data(), z_data());
    let (xs, zs) = (Samples::dense(x.clone())?, Samples::dense(z.clone())?);
    let solver = |kind: SolverKind| {
        kind.solver(&SolverOptions {
            n_landmarks: Some(20),
            ..SolverOptions::default()
        })
    };
    // (name, kernel (None: the default RBF with the bandwidth rule), solver, center, seed): the
    // Python test fits the same KSVD cases by name.
    let ksvd_cases = [
        ("rbf_defaults", None, SolverKind::Auto, false, 0),
        (
            "sne_exact",
            Some(Kernel::Sne { gamma: 0.5 }),
            SolverKind::Exact,
            false,
            0,
        ),
        ("sne_auto", Some(Kernel::Sne { gamma: 0.5 }), SolverKind::Auto, false, 2),
        (
            "rbf_center_lanczos",
            Some(Kernel::Rbf { gamma: 0.8 }),
            SolverKind::Lanczos,
            true,
            3,
        ),
        (
            "laplacian_rsvd",
            Some(Kernel::Laplacian { gamma: 0.8 }),
            SolverKind::Rsvd,
            false,
            11,
        ),
        (
            "rbf_block_krylov",
            Some(Kernel::Rbf { gamma: 0.8 }),
            SolverKind::BlockKrylov,
            false,
            1,
        ),
        (
            "sne_nystrom",
            Some(Kernel::Sne { gamma: 0.5 }),
            SolverKind::Nystrom,
            false,
            5,
        ),
    ];
    let mut out = Vec::new();
    for (name, kernel, kind, center, seed) in ksvd_cases {
        let mut params = Ksvd::params();
        if let Some(k) = kernel {
            params = params.kernel(k);
        }
        let model = params
            .rank(3)
            .solver(solver(kind)?)
            .center(center)
            .seed(seed)
            .check()?
            .fit_samples(xs.clone(), zs.clone())?
            .to_model()?;
        out.push(record(name, &model, &x)?);
    }
    // KPCA: the default RBF with the rule, centred.
    for (name, kind, seed) in [
        ("kpca_auto", SolverKind::Auto, 0),
        ("kpca_nystrom", SolverKind::Nystrom, 4),
    ] {
        let model = Kpca::params()
            .rank(3)
            .solver(solver(kind)?)
            .seed(seed)
            .check()?
            .fit_samples(xs.clone())?
            .to_model()?;
        out.push(record(name, &model, &x)?);
    }
    println!("{{\n{}\n}}", out.join(",\n"));
    Ok(())
}
