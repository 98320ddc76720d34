//! Links the system LAPACK (Debian's `libopenblas-dev`) when the optional `lapack` feature is on.
//! ndarray-linalg's own `openblas-static`/`openblas-system` features download or probe at build
//! time and fail offline; linking the installed library directly needs nothing but the package.
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if std::env::var_os("CARGO_FEATURE_LAPACK").is_some() {
        println!("cargo:rustc-link-lib=openblas");
    }
}
