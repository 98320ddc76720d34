//! The `ksvd` binary: see the `ksvd_cli` library docs.
use clap::Parser;

fn main() {
    let cli = ksvd_cli::Cli::parse();
    if let Err(e) = ksvd_cli::run(cli) {
        eprintln!("ksvd: error: {e}");
        std::process::exit(1);
    }
}
