//! The Rust side of the Python per-call overhead measurement (`examples/overhead.py` runs the
//! same fits through the `ksvd` package and prints both): fit + transform timed from the Rust API
//! on the same deterministic data.
//!
//! ```text
//! cargo run --release -p ksvd-python --example overhead > rust-times.json
//! python crates/python/examples/overhead.py rust-times.json
//! ```
//!
//! Data: `X[i, j] = ((7 i + 3 j) mod 101) / 101`, `Z[i, j] = ((5 i + j) mod 103) / 103`, `d = 8`,
//! mirrored in the Python script. Times are medians over repeats, in seconds.
use ksvd::{Kernel, Ksvd, ParamGuard, Samples, Solver};
use ndarray::Array2;
use std::time::Instant;

/// `(name, n, m, rank, solver, repeats)`; the Python script runs the same names.
fn cases() -> Vec<(&'static str, usize, usize, usize, Solver, usize)> {
    vec![
        ("tiny_exact", 30, 25, 3, Solver::Exact, 400),
        ("small_exact", 300, 250, 5, Solver::Exact, 40),
        ("medium_auto", 3000, 2500, 10, Solver::Auto { tol: 1e-10 }, 7),
    ]
}

fn data(n: usize, m: usize) -> (Array2<f64>, Array2<f64>, Array2<f64>) {
    let x = Array2::from_shape_fn((n, 8), |(i, j)| ((i * 7 + j * 3) % 101) as f64 / 101.0);
    let z = Array2::from_shape_fn((m, 8), |(i, j)| ((i * 5 + j) % 103) as f64 / 103.0);
    let new = x.slice(ndarray::s![..10.min(n), ..]).to_owned();
    (x, z, new)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut out = Vec::new();
    for (name, n, m, rank, solver, repeats) in cases() {
        let (x, z, new) = data(n, m);
        let params = Ksvd::params()
            .kernel(Kernel::Sne { gamma: 0.5 })
            .rank(rank)
            .solver(solver)
            .seed(0)
            .check()?;
        let (mut fit, mut transform) = (Vec::new(), Vec::new());
        for _ in 0..repeats {
            let t = Instant::now();
            // As the Python package does: fit, then the portable model it keeps.
            let model = params
                .fit_samples(Samples::dense(x.clone())?, Samples::dense(z.clone())?)?
                .to_model()?;
            fit.push(t.elapsed().as_secs_f64());
            let t = Instant::now();
            let p = model.transform(&Samples::dense(new.clone())?)?;
            transform.push(t.elapsed().as_secs_f64());
            assert_eq!(p.ncols(), rank);
        }
        out.push(format!(
            "  \"{name}\": {{\"fit\": {:e}, \"transform\": {:e}}}",
            ksvd_metrics::median(&fit).unwrap_or(f64::NAN),
            ksvd_metrics::median(&transform).unwrap_or(f64::NAN)
        ));
    }
    println!("{{\n{}\n}}", out.join(",\n"));
    Ok(())
}
