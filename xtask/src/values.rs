//! `cargo xtask check-values`: the quick run's values against the committed reference
//! `results/quick-values.csv`, so that a change which moves a value the code fixes is seen by the
//! CI run of that change, not by a full run days later (commit f1e0ebf moved Table 3's kernel PCA
//! rows unnoticed for a day; a quick table3 run shows it in seconds).
//!
//! Every row of a spec's quick result (`<dir>/<spec>.parquet`, written by `cargo xtask reproduce
//! --quick`) is keyed by spec, dataset, method, metric, setting and seed, and compared with the
//! reference: its status, and its value bit for bit. Not compared: metrics a spec marks
//! `measured` (wall times, memory, speed-ups: measurements of the machine). The specs with time
//! budgets (`timing`, `spectrum`: how many repeats or scan steps fit) are compared too: their
//! quick runs gave the same 651 values on a quiet machine and on one slowed to about half speed
//! (2026-11-29). A key missing on either side is a difference. Every spec with a result in the
//! directory is compared, however old: run the whole quick reproduction first (after an `--only`
//! run the other specs' older results are compared, and `--bless` would write them), with no
//! cached cells (the cell cache's keys do not cover the library code) and with 2 threads, as CI
//! does (`--no-cache --threads 2`).
//!
//! `--bless` writes the reference from the current quick run instead (atomically): after a change
//! meant to move values, with the affected full specs re-run and the move recorded in their
//! `changes`.
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use anyhow::{bail, Context as _, Result};

use crate::rows::{self, Status};
use crate::spec::Spec;

/// The reference's header.
const HEADER: &str = "spec,dataset,method,metric,setting,seed,occurrence,status,value,threads";

/// Where a value lives: spec, dataset, method, metric, setting, seed, and the occurrence of that
/// key among the spec's rows (0 for the first; a few experiments write several rows per key, such
/// as the repeats of a measurement).
type Key = (String, String, String, String, String, String, usize);

/// What is compared: the status and the value (`None` for rows without one); the threads it ran
/// on are shown with a difference, not compared (faer's parallel matrix-vector products sum in an
/// order that depends on the thread count; CI and the committed results use 2).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Checked {
    status: Status,
    value: Option<f64>,
    threads: Option<u32>,
}

impl Checked {
    /// Bit-for-bit equality, except that every NaN equals every NaN (the reference writes them
    /// all as `NaN`); `0.0` differs from `-0.0`.
    fn same(&self, other: &Checked) -> bool {
        let bits = |v: Option<f64>| v.map(|v| if v.is_nan() { f64::NAN.to_bits() } else { v.to_bits() });
        self.status == other.status && bits(self.value) == bits(other.value)
    }

    fn show(&self) -> String {
        let threads = self.threads.map(|t| format!(", {t} threads")).unwrap_or_default();
        match self.value {
            Some(v) => format!("{v:?} ({}{threads})", self.status.as_str()),
            None => format!("({}{threads})", self.status.as_str()),
        }
    }
}

/// The checked rows of `spec`'s result in `dir`, or `None` when it has none.
fn spec_values(spec: &Spec, dir: &Path) -> Result<Option<BTreeMap<Key, Checked>>> {
    let path = crate::reproduce::stored_path(spec, dir);
    if !path.exists() {
        return Ok(None);
    }
    let mut out = BTreeMap::new();
    let tidy = rows::from_frame(&rows::read_parquet(&path)?).with_context(|| format!("reading {}", path.display()))?;
    for t in tidy {
        let r = t.row;
        if spec.metric(&r.metric).is_some_and(|m| m.measured) {
            continue;
        }
        let mut key = (
            spec.name().to_string(),
            r.dataset,
            r.method,
            r.metric,
            r.setting,
            r.seed.map(|s| s.to_string()).unwrap_or_default(),
            0,
        );
        if [&key.1, &key.2, &key.3, &key.4]
            .iter()
            .any(|f| f.contains(['\n', '\r']))
        {
            bail!("{}: a line break in the key {key:?}", path.display());
        }
        while out.contains_key(&key) {
            key.6 += 1;
        }
        out.insert(
            key,
            Checked {
                status: r.status,
                value: r.value,
                threads: r.threads,
            },
        );
    }
    Ok(Some(out))
}

/// A CSV field, quoted when it holds a comma or a quote (keys hold no line breaks:
/// [`spec_values`] refuses them).
fn field(s: &str) -> String {
    if s.contains([',', '"']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The fields of one CSV line (quotes as [`field`] writes them).
fn split(line: &str) -> Result<Vec<String>> {
    let mut fields = Vec::new();
    let mut cur = String::new();
    let mut chars = line.chars().peekable();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            (true, '"') => quoted = false,
            (false, '"') if cur.is_empty() => quoted = true,
            (false, ',') => fields.push(std::mem::take(&mut cur)),
            (_, c) => cur.push(c),
        }
    }
    if quoted {
        bail!("an unterminated quote");
    }
    fields.push(cur);
    Ok(fields)
}

/// The reference file's text for `values` (sorted by key; values in Rust's shortest form that
/// reads back to the same bits).
fn render(values: &BTreeMap<Key, Checked>) -> String {
    let mut text = format!("{HEADER}\n");
    for ((spec, dataset, method, metric, setting, seed, occurrence), c) in values {
        let value = c.value.map(|v| format!("{v:?}")).unwrap_or_default();
        let occurrence = occurrence.to_string();
        let threads = c.threads.map(|t| t.to_string()).unwrap_or_default();
        let fields = [
            spec.as_str(),
            dataset,
            method,
            metric,
            setting,
            seed,
            &occurrence,
            c.status.as_str(),
            &value,
            &threads,
        ];
        let line: Vec<String> = fields.iter().map(|f| field(f)).collect();
        let _ = writeln!(text, "{}", line.join(","));
    }
    text
}

/// An empty field as `None`, any other parsed as `T` (`what` names it in the error).
fn optional<T: std::str::FromStr>(field: &str, what: &str) -> Result<Option<T>> {
    if field.is_empty() {
        return Ok(None);
    }
    match field.parse::<T>() {
        Ok(v) => Ok(Some(v)),
        Err(_) => bail!("`{field}` is not {what}"),
    }
}

/// Parses a reference file's text.
fn parse(text: &str, what: &str) -> Result<BTreeMap<Key, Checked>> {
    let mut lines = text.lines();
    if lines.next() != Some(HEADER) {
        bail!("{what}: not a values reference (expected the header `{HEADER}`)");
    }
    let mut out = BTreeMap::new();
    for (k, line) in lines.enumerate().filter(|(_, l)| !l.is_empty()) {
        let at = || format!("{what}:{}", k + 2);
        let f = split(line).with_context(at)?;
        let [spec, dataset, method, metric, setting, seed, occurrence, status, value, threads] =
            <[String; 10]>::try_from(f)
                .map_err(|f| anyhow::anyhow!("{}: expected 10 fields, found {}", at(), f.len()))?;
        let threads = optional::<u32>(&threads, "a thread count").with_context(at)?;
        let occurrence = optional::<usize>(&occurrence, "an occurrence")
            .with_context(at)?
            .context("an empty occurrence")
            .with_context(at)?;
        let status = Status::parse(&status).with_context(|| format!("{}: unknown status `{status}`", at()))?;
        let value = optional::<f64>(&value, "a number").with_context(at)?;
        let key = (spec, dataset, method, metric, setting, seed, occurrence);
        if out.insert(key.clone(), Checked { status, value, threads }).is_some() {
            bail!("{}: the key {key:?} again", at());
        }
    }
    Ok(out)
}

/// The differences between `reference` and `current` for the specs in `ran`, one line each.
fn differences(reference: &BTreeMap<Key, Checked>, current: &BTreeMap<Key, Checked>, ran: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for (key, old) in reference.iter().filter(|(k, _)| ran.contains(&k.0)) {
        match current.get(key) {
            None => out.push(format!("{key:?}: {} in the reference, no row now", old.show())),
            Some(new) if !old.same(new) => out.push(format!("{key:?}: {} -> {}", old.show(), new.show())),
            Some(_) => {}
        }
    }
    for (key, new) in current {
        if !reference.contains_key(key) {
            out.push(format!("{key:?}: {} now, no row in the reference", new.show()));
        }
    }
    out
}

/// Checks the quick results in `dir` against `reference` (or, with `bless`, writes it). Returns
/// whether every compared value is the same.
pub fn check(specs: &[Spec], dir: &Path, reference: &Path, bless: bool) -> Result<bool> {
    let mut current = BTreeMap::new();
    let mut ran = Vec::new();
    for spec in specs {
        if let Some(values) = spec_values(spec, dir)? {
            ran.push(spec.name().to_string());
            current.extend(values);
        }
    }
    if ran.is_empty() {
        bail!(
            "no quick results in {} (run `cargo xtask reproduce --quick` first)",
            dir.display()
        );
    }
    if bless {
        let mut values = if reference.exists() {
            parse(&std::fs::read_to_string(reference)?, &reference.display().to_string())?
        } else {
            BTreeMap::new()
        };
        values.retain(|k, _| !ran.contains(&k.0));
        values.extend(current);
        crate::fsx::write_atomic(reference, render(&values).as_bytes())?;
        println!(
            "wrote {} ({} values of {})",
            reference.display(),
            values.len(),
            ran.join(", ")
        );
        return Ok(true);
    }
    let text = std::fs::read_to_string(reference).with_context(|| format!("reading {}", reference.display()))?;
    let reference_values = parse(&text, &reference.display().to_string())?;
    let diffs = differences(&reference_values, &current, &ran);
    if diffs.is_empty() {
        println!(
            "quick values: all {} compared values of {} are those of {}",
            current.len(),
            ran.join(", "),
            reference.display()
        );
        return Ok(true);
    }
    let compared = reference_values
        .keys()
        .filter(|k| ran.contains(&k.0))
        .chain(current.keys())
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    println!(
        "quick values: {} of {compared} differ from {}:",
        diffs.len(),
        reference.display()
    );
    for d in diffs.iter().take(40) {
        println!("  {d}");
    }
    if diffs.len() > 40 {
        println!("  ... and {} more", diffs.len() - 40);
    }
    println!(
        "If the change is meant to move them: re-run the affected full specs, record the move in their \
         `changes`, and write the new reference with `cargo xtask check-values --bless`."
    );
    Ok(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(metric: &str, setting: &str) -> Key {
        (
            "table3".into(),
            "yacht".into(),
            "kpca_rbf".into(),
            metric.into(),
            setting.into(),
            "0".into(),
            0,
        )
    }

    fn ok(v: f64) -> Checked {
        Checked {
            status: Status::Ok,
            value: Some(v),
            threads: Some(2),
        }
    }

    #[test]
    fn the_reference_reads_back_bit_for_bit() {
        let mut values = BTreeMap::new();
        values.insert(key("rmse", ""), ok(15.754325277668052));
        values.insert(key("acc", "a, \"quoted\" setting"), ok(0.1 + 0.2));
        values.insert(key("auroc", "m=5"), ok(f64::MIN_POSITIVE / 3.0));
        values.insert(
            key("seconds", ""),
            Checked {
                status: Status::Failed,
                value: None,
                threads: None,
            },
        );
        let back = parse(&render(&values), "test").unwrap();
        assert_eq!(back.len(), values.len());
        for (k, v) in &values {
            assert!(back[k].same(v), "{k:?}: {v:?} read back as {:?}", back[k]);
        }
    }

    #[test]
    fn one_unit_in_the_last_place_is_a_difference() {
        let ran = vec!["table3".to_string()];
        let mut reference = BTreeMap::new();
        reference.insert(key("rmse", ""), ok(15.75432527766805));
        let mut current = reference.clone();
        assert!(differences(&reference, &current, &ran).is_empty());
        current.insert(key("rmse", ""), ok(15.754325277668052));
        let d = differences(&reference, &current, &ran);
        assert_eq!(d.len(), 1);
        assert!(
            d[0].contains("15.75432527766805 (ok, 2 threads) -> 15.754325277668052 (ok, 2 threads)"),
            "{}",
            d[0]
        );
    }

    #[test]
    fn missing_extra_and_status_changes_are_differences_and_other_specs_are_not_compared() {
        let ran = vec!["table3".to_string()];
        let mut reference = BTreeMap::new();
        reference.insert(key("rmse", ""), ok(1.0));
        reference.insert(key("acc", ""), ok(0.5));
        let mut elsewhere = key("nmi", "");
        elsewhere.0 = "table2".into();
        reference.insert(elsewhere, ok(0.3));
        let mut current = BTreeMap::new();
        current.insert(
            key("rmse", ""),
            Checked {
                status: Status::Unmet,
                value: Some(1.0),
                threads: Some(8),
            },
        );
        current.insert(key("auroc", ""), ok(0.9));
        let d = differences(&reference, &current, &ran);
        assert_eq!(d.len(), 3, "{d:?}");
        assert!(d.iter().any(|l| l.contains("\"acc\"") && l.contains("no row now")));
        assert!(d
            .iter()
            .any(|l| l.contains("\"auroc\"") && l.contains("no row in the reference")));
        assert!(d
            .iter()
            .any(|l| l.contains("(ok, 2 threads) -> 1.0 (unmet, 8 threads)")));
    }

    #[test]
    fn every_time_and_memory_metric_of_the_specs_is_marked_measured() {
        let dir = crate::fsx::project_root().join("experiments");
        let specs = crate::reproduce::load_specs(&dir, true, &crate::experiments::registry()).unwrap();
        let mut seen = 0;
        for spec in &specs {
            for m in &spec.file.metrics {
                if ["seconds", "speedup", "rss"].iter().any(|w| m.id.contains(w)) {
                    assert!(
                        m.measured,
                        "{}: metric `{}` is a measurement; mark it `measured = true`",
                        spec.name(),
                        m.id
                    );
                    seen += 1;
                }
            }
        }
        assert!(seen >= 10, "only {seen} time and memory metrics found");
    }

    #[test]
    fn every_nan_equals_every_nan_and_signed_zeros_differ() {
        let negative_nan = f64::from_bits(f64::NAN.to_bits() | (1 << 63));
        assert!(ok(negative_nan).same(&ok(f64::NAN)));
        let mut values = BTreeMap::new();
        values.insert(key("rmse", ""), ok(negative_nan));
        let back = parse(&render(&values), "test").unwrap();
        assert!(back[&key("rmse", "")].same(&ok(negative_nan)));
        assert!(!ok(0.0).same(&ok(-0.0)));
        assert!(!ok(f64::NAN).same(&ok(1.0)));
    }

    #[test]
    fn malformed_references_are_refused_with_the_line() {
        let twice =
            format!("{HEADER}\ntable3,yacht,kpca_rbf,rmse,,0,0,ok,1,2\ntable3,yacht,kpca_rbf,rmse,,0,0,ok,1,2\n");
        let e = format!("{:#}", parse(&twice, "r").unwrap_err());
        assert!(e.contains("r:3") && e.contains("again"), "{e}");
        assert!(parse("spec,value\n", "r")
            .unwrap_err()
            .to_string()
            .contains("not a values reference"));
        let short = format!("{HEADER}\ntable3,yacht,kpca_rbf,rmse,,0,0,ok,1\n");
        let e = format!("{:#}", parse(&short, "r").unwrap_err());
        assert!(e.contains("r:2") && e.contains("expected 10 fields"), "{e}");
        let bad = format!("{HEADER}\ntable3,yacht,kpca_rbf,rmse,,0,0,ok,abc,2\n");
        let e = format!("{:#}", parse(&bad, "r").unwrap_err());
        assert!(e.contains("r:2") && e.contains("not a number"), "{e}");
        let status = format!("{HEADER}\ntable3,yacht,kpca_rbf,rmse,,0,0,fine,1,2\n");
        assert!(format!("{:#}", parse(&status, "r").unwrap_err()).contains("unknown status"));
    }
}
