//! The tables of docs/conventions.md, as cells: the one reader the Rust and CLI conventions
//! tests share (`#[path]`-included by crates/ksvd/tests/conventions.rs and
//! crates/cli/tests/conventions.rs).

/// docs/conventions.md, at compile time.
pub const CONVENTIONS: &str = include_str!("../../../../docs/conventions.md");

/// The cells of one table line (`| a | b |`), trimmed.
pub fn cells(line: &str) -> Vec<String> {
    line.trim()
        .trim_matches('|')
        .split(" | ")
        .map(|c| c.trim().to_string())
        .collect()
}

/// The header and the rows of the table whose header line starts with `header`, as cells.
pub fn table(header: &str) -> (Vec<String>, Vec<Vec<String>>) {
    let mut lines = CONVENTIONS.lines().skip_while(|l| !l.starts_with(header));
    let head = cells(
        lines
            .next()
            .unwrap_or_else(|| panic!("docs/conventions.md has no `{header}` table")),
    );
    let rows = lines.skip(1).take_while(|l| l.starts_with('|')).map(cells).collect();
    (head, rows)
}
