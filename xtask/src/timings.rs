//! `<out>/timings.csv`: the wall time of each spec's latest run, one row per spec and mode,
//! `spec,mode,wall_seconds,computed_cells,cached_cells,threads,load_at_start,date,cpu`.
//!
//! A run updates the rows of the specs it ran and keeps the others, so `--only` runs add up to
//! the time of the whole reproduction (its sum over the `full` rows). `computed_cells` and
//! `cached_cells` count the spec's cells computed and read back from `results/.cache` (with cached
//! cells the wall time is not the computation's; both are 0 for a spec that does not cache
//! cells, such as `datasets`); `load_at_start` is the one-minute load average when the spec started
//! (`/proc/loadavg`; empty where there is none), `date` the UTC time it finished (RFC 3339), `cpu`
//! the processor it ran on and the widest vector instructions the engine uses there
//! (`AMD EPYC (avx2)`; empty in rows written before the column existed): machines of one kind
//! have differed by a factor of two. A spec that fails keeps its previous row. Runs that finish at once take turns: the
//! read-modify-write holds `timings.csv.lock` (created exclusively; one older than a minute is
//! left over from a killed run and is removed).
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context as _, Result};

use crate::fsx;

/// One spec's run.
#[derive(Debug, Clone, PartialEq)]
pub struct Timing {
    /// Spec name.
    pub spec: String,
    /// `full` or `quick`.
    pub mode: String,
    /// Wall time of the spec (its cells, result files and page), seconds.
    pub wall_seconds: f64,
    /// Cells computed.
    pub computed_cells: u64,
    /// Cells read from the cache instead of computed.
    pub cached_cells: u64,
    /// Worker threads of the run.
    pub threads: usize,
    /// One-minute load average when the spec started.
    pub load_at_start: Option<f64>,
    /// When the spec finished (UTC, RFC 3339).
    pub date: String,
    /// The processor and its vector instructions ([`cpu`]); empty where unknown.
    pub cpu: String,
}

const HEADER: &str = "spec,mode,wall_seconds,computed_cells,cached_cells,threads,load_at_start,date,cpu";

/// The header of files written before the `cpu` column, read as rows with an empty `cpu`.
const HEADER_WITHOUT_CPU: &str = "spec,mode,wall_seconds,computed_cells,cached_cells,threads,load_at_start,date";

impl Timing {
    fn line(&self) -> String {
        format!(
            "{},{},{:.1},{},{},{},{},{},{}",
            self.spec,
            self.mode,
            self.wall_seconds,
            self.computed_cells,
            self.cached_cells,
            self.threads,
            self.load_at_start.map(|l| format!("{l:.2}")).unwrap_or_default(),
            self.date,
            self.cpu.replace([',', '\n', '\r'], " ")
        )
    }

    /// A row of `fields` fields (9, or 8 in a file without the `cpu` column).
    fn parse(line: &str, fields: usize) -> Result<Timing> {
        let f: Vec<&str> = line.split(',').collect();
        if f.len() != fields {
            bail!("expected {fields} fields, found {}", f.len());
        }
        Ok(Timing {
            spec: f[0].to_string(),
            mode: f[1].to_string(),
            wall_seconds: f[2].parse()?,
            computed_cells: f[3].parse()?,
            cached_cells: f[4].parse()?,
            threads: f[5].parse()?,
            load_at_start: if f[6].is_empty() { None } else { Some(f[6].parse()?) },
            date: f[7].to_string(),
            cpu: f.get(8).map_or_else(String::new, |c| c.to_string()),
        })
    }
}

/// The processor's model name (`/proc/cpuinfo`) and the widest vector instructions the engine
/// dispatches to on it (`avx512`, `avx2`, else the build's baseline `sse2`): `AMD EPYC (avx2)`.
/// Empty where neither is known.
pub fn cpu() -> String {
    let model = std::fs::read_to_string("/proc/cpuinfo").ok().and_then(|text| {
        text.lines()
            .find(|l| l.starts_with("model name"))
            .and_then(|l| l.split_once(':'))
            .map(|(_, name)| name.split_whitespace().collect::<Vec<_>>().join(" "))
    });
    let simd = simd_level();
    match (model, simd) {
        (Some(m), Some(v)) => format!("{m} ({v})"),
        (Some(m), None) => m,
        (None, Some(v)) => format!("({v})"),
        (None, None) => String::new(),
    }
}

#[cfg(target_arch = "x86_64")]
fn simd_level() -> Option<&'static str> {
    Some(if std::arch::is_x86_feature_detected!("avx512f") {
        "avx512"
    } else if std::arch::is_x86_feature_detected!("avx2") {
        "avx2"
    } else {
        "sse2"
    })
}

#[cfg(not(target_arch = "x86_64"))]
fn simd_level() -> Option<&'static str> {
    None
}

/// The rows of `path` (none when it does not exist).
pub fn read(path: &Path) -> Result<Vec<Timing>> {
    if !path.exists() {
        return Ok(Vec::new());
    }
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let mut lines = text.lines();
    let fields = match lines.next() {
        Some(HEADER) => 9,
        Some(HEADER_WITHOUT_CPU) => 8,
        _ => bail!(
            "{}: not a timings file (expected the header `{HEADER}`)",
            path.display()
        ),
    };
    lines
        .enumerate()
        .filter(|(_, l)| !l.is_empty())
        .map(|(k, l)| Timing::parse(l, fields).with_context(|| format!("{}:{}", path.display(), k + 2)))
        .collect()
}

/// The lock of a timings file: `<path>.lock` exists while this lives.
struct Lock(PathBuf);

/// A lock older than this was left by a killed run (holding it takes milliseconds).
const STALE_LOCK: Duration = Duration::from_secs(60);

impl Lock {
    /// Waits (up to a few minutes) until this process creates `<path>.lock`.
    fn take(path: &Path) -> Result<Lock> {
        let mut name = path.as_os_str().to_owned();
        name.push(".lock");
        let lock = PathBuf::from(name);
        for _ in 0..6000 {
            match std::fs::OpenOptions::new().write(true).create_new(true).open(&lock) {
                Ok(_) => return Ok(Lock(lock)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let age = std::fs::metadata(&lock)
                        .and_then(|m| m.modified())
                        .ok()
                        .and_then(|t| t.elapsed().ok());
                    if age.is_some_and(|a| a > STALE_LOCK) {
                        let _ = std::fs::remove_file(&lock);
                    } else {
                        std::thread::sleep(Duration::from_millis(20));
                    }
                }
                Err(e) => return Err(e).with_context(|| format!("creating {}", lock.display())),
            }
        }
        bail!("{} is held by another run", lock.display())
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Replaces the rows of `new`'s (spec, mode) pairs in `path` and writes it atomically, sorted by
/// mode and spec, holding the file's lock. An unreadable old file is replaced (with a warning),
/// never a reason to fail a run.
pub fn record(path: &Path, new: &[Timing]) -> Result<()> {
    let _lock = Lock::take(path)?;
    let old = read(path).unwrap_or_else(|e| {
        eprintln!("warning: {e:#}; starting a new timings file");
        Vec::new()
    });
    let mut rows: BTreeMap<(String, String), Timing> =
        old.into_iter().map(|t| ((t.mode.clone(), t.spec.clone()), t)).collect();
    for t in new {
        rows.insert((t.mode.clone(), t.spec.clone()), t.clone());
    }
    let mut text = String::from(HEADER);
    text.push('\n');
    for t in rows.values() {
        text.push_str(&t.line());
        text.push('\n');
    }
    Ok(fsx::write_atomic(path, text.as_bytes())?)
}

/// The one-minute load average (`/proc/loadavg`), where the system has one.
pub fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// The current UTC time as RFC 3339 (`2026-11-27T14:56:30Z`).
pub fn utc_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    rfc3339(secs)
}

/// Seconds since the Unix epoch as RFC 3339 UTC (days to a civil date by Hinnant's algorithm).
fn rfc3339(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_rfc3339_utc() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        // 2000-02-29 (a leap day of a century leap year) and the day after.
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(951_868_799), "2000-02-29T23:59:59Z");
        assert_eq!(rfc3339(951_868_800), "2000-03-01T00:00:00Z");
        assert_eq!(rfc3339(1_795_791_600), "2026-11-27T15:00:00Z");
    }

    fn timing(spec: &str, mode: &str, wall: f64) -> Timing {
        Timing {
            spec: spec.into(),
            mode: mode.into(),
            wall_seconds: wall,
            computed_cells: 3,
            cached_cells: 1,
            threads: 2,
            load_at_start: Some(0.5),
            date: "2026-11-27T15:00:00Z".into(),
            cpu: "Some CPU (avx2)".into(),
        }
    }

    /// A file written before the `cpu` column reads with empty CPUs and is rewritten with it.
    #[test]
    fn files_without_the_cpu_column_read_and_gain_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("timings.csv");
        let old = format!("{HEADER_WITHOUT_CPU}\ntable1,full,5267.8,45,0,2,1.87,2026-11-27T18:30:53Z\n");
        std::fs::write(&path, old).unwrap();
        let rows = read(&path).unwrap();
        assert_eq!(
            (rows.len(), rows[0].wall_seconds, rows[0].cpu.as_str()),
            (1, 5267.8, "")
        );
        record(&path, &[timing("timing", "full", 5.0)]).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            text,
            format!(
                "{HEADER}\ntable1,full,5267.8,45,0,2,1.87,2026-11-27T18:30:53Z,\n\
                 timing,full,5.0,3,1,2,0.50,2026-11-27T15:00:00Z,Some CPU (avx2)\n"
            )
        );
        // A row of the wrong width names its line; commas in a CPU name cannot shift the columns.
        std::fs::write(&path, format!("{HEADER}\nx,full,1.0,0,0,2,,2026-11-27T15:00:00Z\n")).unwrap();
        let err = format!("{:#}", read(&path).unwrap_err());
        assert!(
            err.contains("timings.csv:2") && err.contains("expected 9 fields"),
            "{err}"
        );
        let mut odd = timing("y", "full", 1.0);
        odd.cpu = "Vendor, Inc. CPU".into();
        record(&path, &[odd]).unwrap();
        assert_eq!(read(&path).unwrap()[0].cpu, "Vendor  Inc. CPU");
    }

    /// The machine's CPU string is never multi-line and names its vector instructions on x86-64.
    #[test]
    fn the_cpu_string_is_one_line() {
        let c = cpu();
        assert!(!c.contains('\n'));
        if cfg!(target_arch = "x86_64") {
            assert!(["(avx512)", "(avx2)", "(sse2)"].iter().any(|v| c.ends_with(v)), "{c}");
        }
    }

    /// A run replaces its specs' rows of its mode and keeps every other row; the file reads back.
    #[test]
    fn runs_update_their_own_rows() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("timings.csv");
        record(&path, &[timing("table1", "full", 10.0), timing("timing", "full", 5.0)]).unwrap();
        record(&path, &[timing("table1", "full", 12.0), timing("table1", "quick", 1.0)]).unwrap();
        let mut rows = read(&path).unwrap();
        rows.sort_by(|a, b| (&a.mode, &a.spec).cmp(&(&b.mode, &b.spec)));
        assert_eq!(
            rows,
            vec![
                timing("table1", "full", 12.0),
                timing("timing", "full", 5.0),
                timing("table1", "quick", 1.0)
            ]
        );
        // A file that is not a timings file is an error to read and is replaced by a record.
        std::fs::write(&path, "a,b\n1,2\n").unwrap();
        assert!(read(&path).is_err());
        record(&path, &[timing("x", "full", 1.0)]).unwrap();
        assert_eq!(read(&path).unwrap(), vec![timing("x", "full", 1.0)]);
    }

    /// Runs recording at once keep every row, and leave no lock behind; a stale lock is taken over.
    #[test]
    fn concurrent_records_keep_every_row() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("timings.csv");
        std::thread::scope(|s| {
            for t in 0..4 {
                let path = &path;
                s.spawn(move || {
                    for k in 0..25 {
                        record(path, &[timing(&format!("s{t}-{k}"), "full", 1.0)]).unwrap();
                    }
                });
            }
        });
        assert_eq!(read(&path).unwrap().len(), 100);
        let lock = dir.path().join("timings.csv.lock");
        assert!(!lock.exists());
        let old = std::fs::File::create(&lock).unwrap();
        old.set_modified(std::time::SystemTime::now() - 2 * STALE_LOCK).unwrap();
        record(&path, &[timing("late", "full", 1.0)]).unwrap();
        assert_eq!(read(&path).unwrap().len(), 101);
    }
}
