//! The `ksvd` binary: see the `ksvd_cli` library docs. An error is one line on stderr and the
//! exit status of `CliError::exit_status` (clap's own usage errors exit with 2).
use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = ksvd_cli::Cli::parse();
    match ksvd_cli::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ksvd: error: {e}");
            ExitCode::from(e.exit_status().code())
        }
    }
}
