//! No code: this crate only unifies the features of third-party dependencies across the
//! workspace's builds (see its Cargo.toml).
