//! Reference singular values from the Rust API, for the Python package's test that the same fit
//! from Python and from Rust gives identical singular values (`tests/test_rust_reference.py`).
//!
//! ```text
//! cargo run --release -p ksvd-python --example reference_fit > reference.json
//! KSVD_RUST_REFERENCE=reference.json pytest crates/python
//! ```
//!
//! Prints one JSON object: for every case, the singular values and the bandwidth used. The data
//! are integer patterns divided by an integer, so Python builds bit-identical inputs.
use ksvd::{InnerSolver, Ksvd, LanczosParams, RsvdParams, Sampling, Solver};
use ksvd_kernels::graph::bandwidth_rule;
use ksvd_kernels::{Kernel, Samples};
use linfa::param_guard::ParamGuard;
use ndarray::Array2;

/// `X[i, j] = ((7 i + 3 j) mod 11) / 11`, `30 × 3` (mirrored in the Python test).
fn x_data() -> Array2<f64> {
    Array2::from_shape_fn((30, 3), |(i, j)| ((i * 7 + j * 3) % 11) as f64 / 11.0)
}

/// `Z[i, j] = ((5 i + j) mod 13) / 13`, `25 × 3` (mirrored in the Python test).
fn z_data() -> Array2<f64> {
    Array2::from_shape_fn((25, 3), |(i, j)| ((i * 5 + j) % 13) as f64 / 13.0)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (x, z) = (x_data(), z_data());
    let rule = bandwidth_rule(&Samples::dense(x.clone())?, 1.0);
    let lanczos = Solver::Lanczos(LanczosParams::default());
    // (name, kernel, solver, center, seed): the Python test fits the same cases by name.
    let cases = [
        ("sne_exact", Kernel::Sne { gamma: 0.5 }, Solver::Exact, false, 0),
        (
            "sne_auto",
            Kernel::Sne { gamma: 0.5 },
            Solver::Auto { tol: 1e-10 },
            false,
            2,
        ),
        (
            "sne_rule_lanczos",
            Kernel::Sne { gamma: rule },
            lanczos.clone(),
            false,
            7,
        ),
        ("rbf_center_lanczos", Kernel::Rbf { gamma: 0.8 }, lanczos, true, 3),
        (
            "laplacian_rsvd",
            Kernel::Laplacian { gamma: 0.8 },
            Solver::Rsvd(RsvdParams::default()),
            false,
            11,
        ),
        (
            "sne_nystrom",
            Kernel::Sne { gamma: 0.5 },
            Solver::Nystrom {
                landmarks: 20,
                cols: None,
                sampling: Sampling::Uniform,
                inner: InnerSolver::default(),
            },
            false,
            5,
        ),
    ];
    let mut out = Vec::new();
    for (name, kernel, solver, center, seed) in cases {
        let model = Ksvd::params()
            .kernel(kernel)
            .rank(3)
            .solver(solver)
            .center(center)
            .seed(seed)
            .check()?
            .fit_samples(Samples::dense(x.clone())?, Samples::dense(z.clone())?)?;
        let s: Vec<String> = model.singular_values().iter().map(|v| format!("{v:?}")).collect();
        let gamma = kernel.gamma().map_or("null".to_string(), |g| format!("{g:?}"));
        out.push(format!(
            "  \"{name}\": {{\"s\": [{}], \"bandwidth\": {gamma}}}",
            s.join(", ")
        ));
    }
    println!("{{\n{}\n}}", out.join(",\n"));
    Ok(())
}
