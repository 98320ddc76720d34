//! The CLI column of docs/conventions.md, read from its tables and checked against clap's own
//! command definition (`Cli::command()`): every flag of the parameter table exists on
//! `ksvd fit` with the aliases the table lists, and has the table's default where the table
//! gives one (and none where the default is computed: the bandwidth rule, the available memory,
//! all cores, none); the exit-status table is the one `ksvd --help` prints and
//! `CliError::exit_status` returns; and every flag in the examples of `ksvd --help` exists.
#![allow(clippy::unwrap_used)] // Tests panic on failure by design.
use clap::CommandFactory;
use ksvd_cli::{Cli, ExitStatus, AFTER_HELP};

#[path = "../../ksvd/tests/support/conventions_table.rs"]
mod conventions_table;
use conventions_table::table;

/// The `--flags` inside the backticks of `text`.
fn flags(text: &str) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .flat_map(str::split_whitespace)
        .filter(|t| t.starts_with("--"))
        .map(|t| t.trim_start_matches("--").to_string())
        .collect()
}

/// A built `ksvd` command (defaults of flags filled in) and its subcommand `name`.
fn subcommand(name: &str) -> clap::Command {
    let mut cmd = Cli::command();
    cmd.build();
    cmd.find_subcommand(name).unwrap().clone()
}

fn arg<'a>(cmd: &'a clap::Command, long: &str) -> &'a clap::Arg {
    cmd.get_arguments()
        .find(|a| a.get_long() == Some(long))
        .unwrap_or_else(|| panic!("`ksvd {}` has no --{long}", cmd.get_name()))
}

/// What the table's default cell asks of a flag's clap default: `Some(value)`, or `None` for no
/// default at all (a computed one, or none).
fn expected_default(cell: &str) -> Option<String> {
    let cell = cell.replace('`', "");
    if let Some(rest) = cell.strip_prefix("KSVD ") {
        // Per estimator: `ksvd fit` fits KSVD.
        return Some(rest.split([',', ' ']).next().unwrap().to_string());
    }
    let word = cell.trim();
    let is_name = !word.is_empty() && word.chars().all(|c| c.is_ascii_alphanumeric() || "-.".contains(c));
    (is_name && !["none", "None", "rule"].contains(&word)).then(|| word.to_string())
}

#[test]
fn every_flag_of_the_table_exists_with_its_aliases_and_default() {
    let (head, rows) = table("| parameter |");
    let cli = head.iter().position(|h| h.starts_with("CLI")).unwrap();
    let default = head.iter().position(|h| h == "default").unwrap();
    let fit = subcommand("fit");
    let mut checked = 0;
    for row in &rows {
        let cell = &row[cli];
        if cell == "—" {
            continue;
        }
        let (primary, aliases) = match cell.split_once("(alias") {
            Some((p, a)) => (flags(p), flags(a)),
            None => (flags(cell), Vec::new()),
        };
        assert!(!primary.is_empty(), "row `{}`: no flag in `{cell}`", row[0]);
        for flag in &primary {
            let a = arg(&fit, flag);
            let mut have: Vec<&str> = a.get_visible_aliases().unwrap_or_default();
            have.sort_unstable();
            let mut want: Vec<&str> = aliases.iter().map(String::as_str).collect();
            want.sort_unstable();
            assert_eq!(have, want, "--{flag}: aliases");
            let got: Vec<String> = a
                .get_default_values()
                .iter()
                .map(|v| v.to_string_lossy().to_string())
                .collect();
            match expected_default(&row[default]) {
                Some(want) => {
                    assert_eq!(
                        got.len(),
                        1,
                        "--{flag}: the table's default is {want}, clap has {got:?}"
                    );
                    match (want.parse::<f64>(), got[0].parse::<f64>()) {
                        (Ok(w), Ok(g)) => assert_eq!(w, g, "--{flag}: default"),
                        _ => assert_eq!(got[0], want, "--{flag}: default"),
                    }
                }
                None => assert!(got.is_empty(), "--{flag}: the table gives no default, clap has {got:?}"),
            }
            checked += 1;
        }
    }
    // rank, kernel, bandwidth, its rule, degree, coef0, centring, compatibility, solver,
    // tolerance, precision, landmarks (2), sampling, your landmarks (2), RSVD (2), seed, memory,
    // threads.
    assert_eq!(checked, 21, "flags checked");
}

#[test]
fn the_exit_statuses_are_the_tables() {
    let (_, rows) = table("| status |");
    let codes: Vec<u8> = rows.iter().map(|r| r[0].parse().unwrap()).collect();
    let ours: Vec<u8> = ExitStatus::ALL.iter().map(|s| s.code()).collect();
    assert_eq!(codes, ours, "docs/conventions.md and ExitStatus list the same statuses");
    let help = Cli::command().get_after_help().unwrap().to_string();
    assert_eq!(help, AFTER_HELP);
    for row in &rows {
        let line = help
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{} ", row[0])))
            .unwrap_or_else(|| panic!("`ksvd --help` does not list status {}", row[0]));
        let meaning = line.trim_start()[row[0].len()..].trim();
        assert!(
            meaning.starts_with(&row[1]),
            "status {}: `{meaning}` vs `{}`",
            row[0],
            row[1]
        );
    }
}

#[test]
fn the_examples_use_flags_that_exist() {
    let mut seen = 0;
    for line in AFTER_HELP.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        let Some(at) = words.iter().position(|w| *w == "ksvd") else {
            continue;
        };
        let Some(sub) = words.get(at + 1).filter(|w| !w.starts_with('-')) else {
            continue;
        };
        let cmd = subcommand(sub);
        for w in &words[at + 2..] {
            let Some(flag) = w.strip_prefix("--") else {
                continue;
            };
            let exists = cmd
                .get_arguments()
                .any(|a| a.get_long() == Some(flag) || a.get_all_aliases().unwrap_or_default().contains(&flag));
            assert!(exists, "`{line}`: `ksvd {sub}` has no --{flag}");
            seen += 1;
        }
    }
    assert!(seen > 20, "the examples were read ({seen} flags)");
}
