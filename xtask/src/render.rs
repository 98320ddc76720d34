//! Markdown: one page per spec laid out like the paper's table, and `REPORT.md` over all specs.
//! Both are rendered from the tidy rows (as written to the CSV/Parquet files), never from live state.
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use crate::rows::{Status, Summary, Verdict};
use crate::spec::{setting_sort_key, Better, Comparison, Key, SettingSortKey, Spec, TableLayout};

/// Files written for a spec, relative to the output directory (for links).
#[derive(Debug, Clone, Default)]
pub struct Outputs {
    /// Data files (CSV, Parquet, summary).
    pub data: Vec<String>,
    /// Figures: (SVG, PNG) pairs.
    pub figures: Vec<(String, String)>,
    /// Figures that could not be drawn, and why.
    pub skipped_figures: Vec<String>,
}

/// Our value with its spread, `decimals` digits.
fn fmt_num(v: f64, decimals: usize) -> String {
    format!("{v:.decimals$}")
}

fn fmt_signed(v: f64, decimals: usize) -> String {
    format!("{v:+.decimals$}")
}

fn decimals(spec: &Spec, metric: &str) -> usize {
    spec.metric(metric).map_or(3, |m| m.decimals)
}

/// The text of one cell: `ours ± std / paper (diff) mark`.
pub fn cell(spec: &Spec, s: &Summary) -> String {
    let d = decimals(spec, &s.metric);
    let ours = match (s.value, s.status) {
        (Some(v), _) => match s.std {
            Some(sd) if s.seeds > 1 || sd > 0.0 => format!("{}±{}", fmt_num(v, d), fmt_num(sd, d)),
            _ => fmt_num(v, d),
        },
        (None, Status::MissingData) => "no data".to_string(),
        (None, Status::NotImplemented) => "n/i".to_string(),
        (None, Status::Unmet) => "unmet".to_string(),
        (None, Status::Failed) => "failed".to_string(),
        (None, _) => "—".to_string(),
    };
    match s.paper {
        None => ours,
        Some(p) => {
            let diff = s.diff.map(|x| format!(" ({})", fmt_signed(x, d))).unwrap_or_default();
            let mark = match s.verdict {
                Verdict::Match => " ✓",
                Verdict::Differs => " ✗",
                _ => "",
            };
            format!("{ours} / {}{diff}{mark}", fmt_num(p, d))
        }
    }
}

fn key_of(s: &Summary, k: Key) -> &str {
    match k {
        Key::Dataset => &s.dataset,
        Key::Method => &s.method,
        Key::Metric => &s.metric,
        Key::Setting => &s.setting,
    }
}

fn selected(filter: &Option<Vec<String>>, id: &str) -> bool {
    filter.as_ref().is_none_or(|f| f.iter().any(|x| x == id))
}

type Tuple = Vec<String>;

/// Renders one pivot table: rows and columns are the distinct key tuples present, in the spec's order.
pub fn pivot(spec: &Spec, layout: &TableLayout, summary: &[Summary]) -> String {
    let rows: Vec<&Summary> = summary
        .iter()
        .filter(|s| {
            selected(&layout.datasets, &s.dataset)
                && selected(&layout.methods, &s.method)
                && selected(&layout.metrics, &s.metric)
                && selected(&layout.settings, &s.setting)
        })
        .collect();
    let tuple = |s: &Summary, keys: &[Key]| -> Tuple { keys.iter().map(|k| key_of(s, *k).to_string()).collect() };
    let order = |t: &Tuple, keys: &[Key]| -> Vec<(usize, SettingSortKey)> {
        keys.iter()
            .zip(t)
            .map(|(k, v)| (spec.order(*k, v), setting_sort_key(v)))
            .collect()
    };
    let mut row_keys: Vec<Tuple> = rows.iter().map(|s| tuple(s, &layout.rows)).collect();
    row_keys.sort_by_key(|t| order(t, &layout.rows));
    row_keys.dedup();
    let mut col_keys: Vec<Tuple> = rows.iter().map(|s| tuple(s, &layout.columns)).collect();
    col_keys.sort_by_key(|t| order(t, &layout.columns));
    col_keys.dedup();
    let cells: BTreeMap<(Tuple, Tuple), &Summary> = rows
        .iter()
        .map(|s| ((tuple(s, &layout.rows), tuple(s, &layout.columns)), *s))
        .collect();

    let mut out = String::new();
    let _ = writeln!(out, "### {}\n", layout.title);
    if rows.is_empty() {
        out.push_str("_No rows._\n");
        return out;
    }
    let header: Vec<String> = layout
        .rows
        .iter()
        .map(|k| k.to_string())
        .chain(col_keys.iter().map(|c| {
            let mut parts: Vec<String> = layout
                .columns
                .iter()
                .zip(c)
                .filter(|(_, v)| !v.is_empty())
                .map(|(k, v)| spec.label(*k, v))
                .collect();
            parts.dedup();
            parts.join(" · ")
        }))
        .collect();
    let _ = writeln!(out, "| {} |", header.join(" | "));
    let align: Vec<&str> = layout
        .rows
        .iter()
        .map(|_| "---")
        .chain(col_keys.iter().map(|_| "---:"))
        .collect();
    let _ = writeln!(out, "|{}|", align.join("|"));
    let mut previous: Option<&Tuple> = None;
    for r in &row_keys {
        // Like the paper's \multirow: an outer key is printed only when it changes.
        let labels: Vec<String> = layout
            .rows
            .iter()
            .enumerate()
            .map(|(i, k)| {
                let same_prefix = previous.is_some_and(|p| p[..=i] == r[..=i]);
                if same_prefix && i + 1 < layout.rows.len() {
                    String::new()
                } else {
                    spec.label(*k, &r[i])
                }
            })
            .collect();
        let values: Vec<String> = col_keys
            .iter()
            .map(|c| {
                cells
                    .get(&(r.clone(), c.clone()))
                    .map_or(String::new(), |s| cell(spec, s))
            })
            .collect();
        let _ = writeln!(out, "| {} | {} |", labels.join(" | "), values.join(" | "));
        previous = Some(r);
    }
    out
}

/// Counts of verdicts.
#[derive(Debug, Clone, Default)]
pub struct Counts {
    /// Per verdict label.
    pub by_verdict: BTreeMap<&'static str, usize>,
}

impl Counts {
    /// Counts a summary.
    pub fn of(summary: &[Summary]) -> Counts {
        let mut c = Counts::default();
        for s in summary {
            *c.by_verdict.entry(s.verdict.label()).or_default() += 1;
        }
        c
    }
    fn get(&self, label: &str) -> usize {
        self.by_verdict.get(label).copied().unwrap_or(0)
    }
}

const LEGEND: &str = "Cells: `ours / paper (ours − paper)`; ✓ within the spec's tolerance, ✗ outside it. \
`±` is the standard deviation over seeds or trials. `unmet` = a measured target (tolerance, rank, error ratio) \
not reached (the note says which and what was reached), `failed` = the computation stopped with an error, \
`n/i` = not implemented, `no data` = input data missing, `—` = not run.";

/// The spec's `changes` as a bulleted paragraph, then its `findings` each under its heading
/// (empty when there are neither).
fn changes(f: &crate::spec::SpecFile) -> String {
    let mut out = String::new();
    if !f.changes.is_empty() {
        out.push_str("**Changes since earlier runs:**\n\n");
        for c in &f.changes {
            let _ = writeln!(out, "- {c}");
        }
        out.push('\n');
    }
    for finding in &f.findings {
        let _ = writeln!(out, "### {}\n", finding.title);
        if let Some(script) = &finding.script {
            let _ = writeln!(out, "Measured by `{script}` (not part of `cargo xtask reproduce`).\n");
        }
        for line in &finding.lines {
            let _ = writeln!(out, "- {line}");
        }
        out.push('\n');
    }
    out
}

/// The page `results/<spec>.md`.
pub fn spec_page(spec: &Spec, summary: &[Summary], outputs: &Outputs) -> String {
    let f = &spec.file;
    let mut out = String::new();
    let _ = writeln!(out, "# {}: {}\n", f.name, f.description);
    let mode = if summary.iter().any(|s| s.quick) {
        "quick (`--quick`, reduced grid)"
    } else {
        "full"
    };
    let _ = writeln!(
        out,
        "Paper: {}. Spec: `experiments/{}.toml`, kind `{}`. Mode: {mode}.\n",
        f.paper_ref, f.name, f.kind
    );
    if spec.quick {
        if let Some(note) = f.quick.as_ref().and_then(|q| q.note.as_deref()) {
            let _ = writeln!(out, "Quick variant: {note}\n");
        }
    }
    out.push_str(&changes(f));
    let _ = writeln!(out, "{LEGEND}\n");
    let _ = writeln!(out, "{}\n", tolerance_line(spec));
    if f.tables.is_empty() && f.figures.is_empty() {
        let fallback = TableLayout {
            title: f.paper_ref.clone(),
            rows: vec![Key::Dataset, Key::Metric],
            columns: vec![Key::Method, Key::Setting],
            datasets: None,
            methods: None,
            metrics: None,
            settings: None,
        };
        out.push_str(&pivot(spec, &fallback, summary));
        out.push('\n');
    }
    for t in &f.tables {
        out.push_str(&pivot(spec, t, summary));
        out.push('\n');
    }
    for (svg, png) in &outputs.figures {
        let _ = writeln!(out, "![{png}]({png})\n\n([SVG]({svg}))\n");
    }
    for why in &outputs.skipped_figures {
        let _ = writeln!(out, "_Figure not drawn: {why}_\n");
    }
    if !f.claims.is_empty() {
        let _ = writeln!(out, "## The paper's claims\n");
        for c in &f.claims {
            let _ = writeln!(out, "- {c}");
        }
        out.push('\n');
    }
    comparisons_section(spec, summary, &mut out);
    protocol_section(spec, &mut out);
    notes_section(spec, summary, &mut out);
    if !outputs.data.is_empty() {
        let links: Vec<String> = outputs.data.iter().map(|d| format!("[{d}]({d})")).collect();
        let _ = writeln!(out, "Data: {}.", links.join(", "));
    }
    out
}

/// `method − other` in the metric's direction (positive: `method` is better), from `value`.
fn margin(spec: &Spec, metric: &str, method: Option<f64>, other: Option<f64>) -> Option<f64> {
    let (a, b) = (method?, other?);
    match spec.metric(metric)?.better {
        Better::Higher => Some(a - b),
        Better::Lower => Some(b - a),
        Better::None => None,
    }
}

fn margin_cell(spec: &Spec, metric: &str, m: Option<f64>) -> String {
    match m {
        None => "—".to_string(),
        Some(x) => {
            let d = decimals(spec, metric);
            let word = if x > 0.0 {
                "yes"
            } else if x < 0.0 {
                "no"
            } else {
                "tie"
            };
            format!("{word} ({})", fmt_signed(x, d))
        }
    }
}

/// The table of one ranking claim: per dataset and metric, whether `c.method` beats each of
/// `c.than` in the paper and in our rows, with the margin.
fn comparison_table(spec: &Spec, c: &Comparison, summary: &[Summary]) -> String {
    let paper = spec.paper_index();
    let ours = |d: &str, m: &str, metric: &str| -> Option<f64> {
        summary
            .iter()
            .find(|s| s.dataset == d && s.method == m && s.metric == metric && s.setting == c.setting)
            .and_then(|s| s.value)
    };
    let theirs = |d: &str, m: &str, metric: &str| -> Option<f64> {
        paper
            .get(&(d.to_string(), m.to_string(), metric.to_string(), String::new()))
            .map(|p| p.value)
    };
    let label = |m: &str| spec.label(Key::Method, m);
    let mut out = String::new();
    let others: Vec<String> = c.than.iter().map(|o| label(o)).collect();
    let setting = if c.setting.is_empty() {
        String::new()
    } else {
        format!(" (our setting `{}`)", c.setting)
    };
    let _ = writeln!(
        out,
        "### Does {} beat {}?{setting}
",
        label(&c.method),
        others.join(" and ")
    );
    let mut header = "| dataset | metric |".to_string();
    let mut rule = "|---|---|".to_string();
    for o in &others {
        let _ = write!(header, " vs {o}: paper | vs {o}: ours |");
        rule.push_str("---|---|");
    }
    let _ = writeln!(
        out,
        "{header}
{rule}"
    );
    // (comparisons in the paper, of which won; in ours, of which won; both known, of which agree)
    let (mut np, mut wp, mut no, mut wo, mut nb, mut agree) = (0, 0, 0, 0, 0, 0);
    for d in spec.file.datasets.iter().filter(|d| selected(&c.datasets, &d.id)) {
        for metric in &c.metrics {
            let mut line = format!("| {} | {} |", d.label, spec.label(Key::Metric, metric));
            let mut any = false;
            for o in &c.than {
                let p = margin(spec, metric, theirs(&d.id, &c.method, metric), theirs(&d.id, o, metric));
                let q = margin(spec, metric, ours(&d.id, &c.method, metric), ours(&d.id, o, metric));
                any |= p.is_some() || q.is_some();
                if let Some(p) = p {
                    np += 1;
                    wp += usize::from(p > 0.0);
                }
                if let Some(q) = q {
                    no += 1;
                    wo += usize::from(q > 0.0);
                }
                if let (Some(p), Some(q)) = (p, q) {
                    nb += 1;
                    agree += usize::from((p > 0.0) == (q > 0.0));
                }
                let _ = write!(
                    line,
                    " {} | {} |",
                    margin_cell(spec, metric, p),
                    margin_cell(spec, metric, q)
                );
            }
            if any {
                let _ = writeln!(out, "{line}");
            }
        }
    }
    let _ = writeln!(
        out,
        "\n{} is better in {wp} of {np} paper comparisons and in {wo} of {no} of ours; where both exist, \
         the verdicts agree in {agree} of {nb}.\n",
        label(&c.method)
    );
    out
}

fn comparisons_section(spec: &Spec, summary: &[Summary], out: &mut String) {
    if spec.file.comparisons.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "## The paper's rankings, checked\n\nMargins are signed so that a positive value favours the first \
         method (higher F1, lower norm); `—` where a number is missing.\n"
    );
    for c in &spec.file.comparisons {
        out.push_str(&comparison_table(spec, c, summary));
    }
}

fn tolerance_line(spec: &Spec) -> String {
    let mut parts = vec![format!("default ±{}", spec.file.tolerance)];
    for m in &spec.file.metrics {
        if m.tolerance.is_some() || m.relative {
            let (t, rel) = spec.tolerance(&m.id);
            parts.push(if rel {
                format!("{} ±{}%", m.label, t * 100.0)
            } else {
                format!("{} ±{t}", m.label)
            });
        }
    }
    format!("Tolerance for ✓: {}.", parts.join(", "))
}

fn protocol_section(spec: &Spec, out: &mut String) {
    let p = &spec.file.protocol;
    if !p.stated.is_empty() {
        let _ = writeln!(out, "## Protocol stated by the paper\n");
        for s in &p.stated {
            let _ = writeln!(out, "- {s}");
        }
        out.push('\n');
    }
    if !p.open.is_empty() {
        let _ = writeln!(out, "## Choices the paper leaves open (ours, in `[params]`)\n");
        for s in &p.open {
            let _ = writeln!(out, "- {s}");
        }
        out.push('\n');
    }
    let notes: Vec<String> = spec
        .file
        .datasets
        .iter()
        .chain(&spec.file.methods)
        .filter_map(|i| {
            let unavailable = i.unavailable.as_deref().map(|u| format!("**unavailable**: {u}."));
            let text: Vec<&str> = i.note.as_deref().into_iter().chain(unavailable.as_deref()).collect();
            (!text.is_empty()).then(|| format!("- **{}**: {}", i.label, text.join(" ")))
        })
        .collect();
    if !notes.is_empty() {
        let _ = writeln!(out, "## Datasets and methods\n\n{}\n", notes.join("\n"));
    }
    let hidden: Vec<&str> = spec
        .file
        .paper
        .iter()
        .filter(|p| p.hidden)
        .map(|p| p.method.as_str())
        .collect();
    if !hidden.is_empty() {
        let methods: BTreeSet<String> = hidden.iter().map(|m| spec.label(Key::Method, m)).collect();
        let list: Vec<String> = methods.into_iter().collect();
        let _ = writeln!(
            out,
            "Paper values of {} come from columns hidden (`H`) in the published table; they are in the .tex.\n",
            list.join(", ")
        );
    }
}

fn key_label(spec: &Spec, s: &Summary) -> String {
    let mut k = format!(
        "{} / {} / {}",
        spec.label(Key::Dataset, &s.dataset),
        spec.label(Key::Method, &s.method),
        spec.label(Key::Metric, &s.metric)
    );
    if !s.setting.is_empty() {
        let _ = write!(k, " / {}", s.setting);
    }
    k
}

/// Distinct notes with the cells they apply to.
fn notes_section(spec: &Spec, summary: &[Summary], out: &mut String) {
    let mut by_note: BTreeMap<(&str, &str), Vec<String>> = BTreeMap::new();
    for s in summary {
        if let Some(n) = &s.note {
            by_note
                .entry((s.verdict.label(), n.as_str()))
                .or_default()
                .push(key_label(spec, s));
        }
    }
    if by_note.is_empty() {
        return;
    }
    let _ = writeln!(out, "## Notes and likely causes\n");
    for ((verdict, note), cells) in by_note {
        let shown: Vec<&String> = cells.iter().take(6).collect();
        let more = if cells.len() > 6 {
            format!(" and {} more", cells.len() - 6)
        } else {
            String::new()
        };
        let list: Vec<&str> = shown.iter().map(|s| s.as_str()).collect();
        let _ = writeln!(out, "- [{verdict}] {note} — {}{more}", list.join("; "));
    }
    out.push('\n');
}

/// What `REPORT.md` needs about one spec.
pub struct ReportEntry<'a> {
    /// The spec.
    pub spec: &'a Spec,
    /// Its summary, read back from its data files (`None` when it has never been run).
    pub summary: Option<Vec<Summary>>,
    /// Its files.
    pub outputs: Outputs,
    /// Whether its kind is implemented.
    pub implemented: bool,
    /// Set when the experiment aborted with an error in this run.
    pub error: Option<String>,
}

fn table_row(spec: &Spec, s: &Summary) -> String {
    let d = decimals(spec, &s.metric);
    let v = s.value.map(|v| fmt_num(v, d)).unwrap_or_else(|| "—".into());
    let p = s.paper.map(|v| fmt_num(v, d)).unwrap_or_else(|| "—".into());
    let diff = s.diff.map(|v| fmt_signed(v, d)).unwrap_or_default();
    let note = s.note.as_deref().unwrap_or("").replace('|', "\\|");
    format!("| {} | {v} | {p} | {diff} | {note} |", key_label(spec, s))
}

/// `results/REPORT.md`.
pub fn report(entries: &[ReportEntry<'_>]) -> String {
    let mut out = String::new();
    out.push_str("# Reproduction report\n\n");
    out.push_str(
        "Generated by `cargo xtask reproduce` from the specs in `experiments/` and the result files beside this \
         report. A value *matches* when |ours − paper| is within the spec's tolerance (per metric, stated on each \
         page). Rows without a number of ours are listed with their status: `unmet` (a measured target, such as \
         a tolerance, was not reached: a result, the note says what was reached), `missing-data` (input not \
         available), `not-implemented`, `failed` (an error), `not-run` (outside the `--quick` subset or not \
         produced).\n\n",
    );
    out.push_str(
        "| spec | paper | mode | match | differs | no paper value | unmet | missing data | not implemented | failed | not run |\n",
    );
    out.push_str("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for e in entries {
        let f = &e.spec.file;
        let link = format!("[{}]({}.md)", f.name, f.name);
        match &e.summary {
            None => {
                let _ = writeln!(out, "| {} | {} | not run yet | | | | | | | | |", f.name, f.paper_ref);
            }
            Some(summary) => {
                let c = Counts::of(summary);
                let mode = if summary.iter().any(|s| s.quick) {
                    "quick"
                } else {
                    "full"
                };
                let _ = writeln!(
                    out,
                    "| {link} | {} | {mode} | {} | {} | {} | {} | {} | {} | {} | {} |",
                    f.paper_ref,
                    c.get("match"),
                    c.get("differs"),
                    c.get("no paper value"),
                    c.get("unmet"),
                    c.get("missing-data"),
                    c.get("not-implemented"),
                    c.get("failed"),
                    c.get("not-run"),
                );
            }
        }
    }
    out.push('\n');
    for e in entries {
        let f = &e.spec.file;
        let _ = writeln!(out, "## {} — {}\n", f.name, f.description);
        let _ = writeln!(
            out,
            "{} · kind `{}`{}\n",
            f.paper_ref,
            f.kind,
            if e.implemented { "" } else { " (not implemented yet)" }
        );
        out.push_str(&changes(f));
        if let Some(err) = &e.error {
            let _ = writeln!(
                out,
                "**The experiment failed in this run:** `{}`\n",
                err.replace('`', "'")
            );
        }
        let Some(summary) = &e.summary else {
            out.push_str("Not run yet: no result files.\n\n");
            continue;
        };
        let mut files: Vec<String> = vec![format!("[page]({}.md)", f.name)];
        files.extend(e.outputs.data.iter().map(|d| format!("[{d}]({d})")));
        for (svg, png) in &e.outputs.figures {
            files.push(format!("[{png}]({png})"));
            files.push(format!("[{svg}]({svg})"));
        }
        let _ = writeln!(out, "Files: {}\n", files.join(", "));
        for (_, png) in &e.outputs.figures {
            let _ = writeln!(out, "![{png}]({png})\n");
        }
        for why in &e.outputs.skipped_figures {
            let _ = writeln!(out, "_Figure not drawn: {why}_\n");
        }
        let (tol_line, header) = (
            tolerance_line(e.spec),
            "| cell | ours | paper | diff | likely cause / note |\n|---|---:|---:|---:|---|\n",
        );
        let _ = writeln!(out, "{tol_line}\n");
        for c in &f.comparisons {
            out.push_str(&comparison_table(e.spec, c, summary));
        }
        let pick = |v: &dyn Fn(&Summary) -> bool| -> Vec<&Summary> { summary.iter().filter(|s| v(s)).collect() };
        let matches = pick(&|s| s.verdict == Verdict::Match);
        let differs = pick(&|s| s.verdict == Verdict::Differs);
        let unmatched = pick(&|s| s.verdict == Verdict::NoPaperValue);
        if !differs.is_empty() {
            let _ = write!(out, "**Differs from the paper ({}):**\n\n{header}", differs.len());
            for s in &differs {
                let _ = writeln!(out, "{}", table_row(e.spec, s));
            }
            out.push('\n');
        }
        if !matches.is_empty() {
            let _ = write!(out, "**Matches the paper ({}):**\n\n{header}", matches.len());
            for s in &matches {
                let _ = writeln!(out, "{}", table_row(e.spec, s));
            }
            out.push('\n');
        }
        if !unmatched.is_empty() {
            let _ = writeln!(
                out,
                "Values of ours without a paper value: {} (see the page).\n",
                unmatched.len()
            );
        }
        // Rows without a number: grouped by status and note, so the list stays readable.
        let mut missing: BTreeMap<(Status, String), Vec<String>> = BTreeMap::new();
        for s in summary.iter().filter(|s| s.value.is_none()) {
            let note = s.note.clone().unwrap_or_default();
            missing.entry((s.status, note)).or_default().push(key_label(e.spec, s));
        }
        if !missing.is_empty() {
            let _ = writeln!(out, "**Without a result of ours:**\n");
            for ((status, note), cells) in &missing {
                let shown: Vec<&str> = cells.iter().take(8).map(|s| s.as_str()).collect();
                let more = if cells.len() > 8 {
                    format!(" and {} more", cells.len() - 8)
                } else {
                    String::new()
                };
                let note = if note.is_empty() {
                    String::new()
                } else {
                    format!(" ({note})")
                };
                let _ = writeln!(
                    out,
                    "- `{status}`{note}: {} cells — {}{more}",
                    cells.len(),
                    shown.join("; ")
                );
            }
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rows::{summarize, tidy, Row};
    use crate::spec::test_spec;

    /// The methods of the tests' specs (after the fixture's header).
    const METHODS: &str = r#"
methods = [{ id = "k", label = "K" }, { id = "s", label = "S" }]
"#;

    /// Paper: K beats S on F1 (+0.10) and on the norm (10 < 20). Ours: K loses on F1 (−0.05),
    /// wins on the norm (5 < 8). The second dataset has no number of ours for S.
    #[test]
    fn comparison_table_signs_margins_by_direction() {
        let src = METHODS.to_string()
            + r#"
datasets = [{ id = "a", label = "A" }, { id = "b", label = "B" }]
metrics = [{ id = "f1", label = "F1", better = "higher" }, { id = "l1", label = "L1", better = "lower", decimals = 1 }]
paper = [
  { dataset = "a", method = "k", metric = "f1", value = 0.80 },
  { dataset = "a", method = "s", metric = "f1", value = 0.70 },
  { dataset = "a", method = "k", metric = "l1", value = 10.0 },
  { dataset = "a", method = "s", metric = "l1", value = 20.0 },
]
[[comparisons]]
method = "k"
than = ["s"]
metrics = ["f1", "l1"]
"#;
        let spec = test_spec(&src).unwrap();
        let rows = vec![
            Row::ok("a", "k", "f1", 0.60),
            Row::ok("a", "s", "f1", 0.65),
            Row::ok("a", "k", "l1", 5.0),
            Row::ok("a", "s", "l1", 8.0),
            Row::ok("b", "k", "f1", 0.5),
        ];
        let summary = summarize(&spec, &tidy(&spec, rows));
        let t = comparison_table(&spec, &spec.file.comparisons[0], &summary);
        assert!(t.contains("| A | F1 | yes (+0.100) | no (-0.050) |"), "{t}");
        assert!(t.contains("| A | L1 | yes (+10.0) | yes (+3.0) |"), "{t}");
        assert!(!t.contains("| B | L1 |"), "no number on either side: no line\n{t}");
        assert!(
            t.contains("better in 2 of 2 paper comparisons and in 1 of 2 of ours; where both exist, the verdicts agree in 1 of 2"),
            "{t}"
        );
    }

    /// Findings render under their titles after the changes, each naming its script; a spec
    /// with findings but no changes still shows them; an unknown key in a finding is refused.
    #[test]
    fn findings_render_under_their_titles() {
        let src = METHODS.to_string()
            + r#"
datasets = [{ id = "a", label = "A" }]
metrics = [{ id = "f1", label = "F1", better = "higher" }]
[[findings]]
title = "Baselines"
script = "scripts/check.py"
lines = ["first", "second"]
"#;
        let spec = test_spec(&src).unwrap();
        let text = changes(&spec.file);
        assert!(!text.contains("Changes since"), "{text}");
        assert!(
            text.contains("### Baselines\n\nMeasured by `scripts/check.py`") && text.contains("- first\n- second\n"),
            "{text}"
        );
        assert!(test_spec(&format!("{src}typo = 1\n")).is_err());
    }

    #[test]
    fn comparison_needs_directed_metrics_and_declared_methods() {
        let base = METHODS.to_string()
            + r#"
datasets = [{ id = "a", label = "A" }]
metrics = [{ id = "n", label = "N" }, { id = "f1", label = "F1", better = "higher" }]
"#;
        let bad_metric = format!("{base}[[comparisons]]\nmethod = \"k\"\nthan = [\"s\"]\nmetrics = [\"n\"]\n");
        let bad_method = format!("{base}[[comparisons]]\nmethod = \"k\"\nthan = [\"x\"]\nmetrics = [\"f1\"]\n");
        for src in [bad_metric, bad_method] {
            assert!(test_spec(&src).is_err(), "{src}");
        }
    }
}
