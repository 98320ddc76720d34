//! Quick start: fit KSVD on two sample sets and project new samples, with `ksvd` and `ndarray`
//! only (`cargo run --release -p ksvd --example quickstart`).
use ksvd::prelude::*;
use ndarray::Array2;

fn main() -> Result<(), KsvdError> {
    // Row samples X (200 in R^3) and column samples Z (150 in R^3), deterministic.
    let x = Array2::from_shape_fn((200, 3), |(i, j)| ((i * 7 + j * 3) % 23) as f64 / 23.0);
    let z = Array2::from_shape_fn((150, 3), |(i, j)| ((i * 5 + j * 11) % 19) as f64 / 19.0);
    // The defaults: rank 2, RBF with the paper's bandwidth rule, the Auto solver at 1e-8.
    let model = Ksvd::params()
        .rank(3)
        .check()?
        .fit_samples(Samples::dense(x)?, Samples::dense(z)?)?;
    println!(
        "bandwidth {:.4}, singular values {}",
        model.bandwidth().unwrap_or(0.0),
        model.singular_values()
    );
    // New rows: k(x', Z) V S^-1/2 (U S^1/2 at the training rows).
    let new = Array2::from_shape_fn((4, 3), |(i, j)| ((i + j) % 3) as f64 / 3.0);
    println!(
        "transform of 4 new rows:\n{:.4}",
        model.transform(&Samples::dense(new)?)?
    );
    Ok(())
}
