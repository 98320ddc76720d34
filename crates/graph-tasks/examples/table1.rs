//! Runs Table 1 (or the Nyström F1 figure) and prints the rows: a measurement driver.
//!
//! `cargo run --release -p ksvd-graph-tasks --example table1 -- <quick|full|nystrom-quick|nystrom|config.toml> [dataset ...]`
use ksvd_datasets::DataRoot;
use ksvd_graph_tasks::{run_nystrom_f1, run_table1, NystromF1Config, Progress, ResultRow, Table1Config};
use std::time::Instant;

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let which = args.first().map(String::as_str).unwrap_or("quick");
    let datasets: Vec<String> = args.iter().skip(1).filter(|a| !a.contains('=')).cloned().collect();
    let methods: Vec<String> = args
        .iter()
        .skip(1)
        .filter_map(|a| a.strip_prefix("methods="))
        .flat_map(|m| m.split(',').map(String::from))
        .collect();
    let root = DataRoot::committed()?;
    let start = Instant::now();
    let progress = |p: &Progress<'_>| {
        eprintln!(
            "[{:7.1}s wall {:7.1}s cpu] {}/{} {} {} {}",
            start.elapsed().as_secs_f64(),
            cpu_seconds(),
            p.done,
            p.total,
            p.dataset,
            p.method,
            p.message
        )
    };
    let rows: Vec<ResultRow> = match which {
        "quick" | "full" => {
            let mut c = if which == "quick" {
                Table1Config::quick()
            } else {
                Table1Config::default()
            };
            if !datasets.is_empty() {
                c.datasets = datasets;
            }
            if !methods.is_empty() {
                c.methods = methods
                    .iter()
                    .map(|m| toml::Value::String(m.clone()).try_into())
                    .collect::<Result<_, _>>()?;
            }
            run_table1(&c, &root, progress)?
        }
        "nystrom-quick" | "nystrom" => {
            let mut c = if which == "nystrom-quick" {
                NystromF1Config::quick()
            } else {
                NystromF1Config::default()
            };
            if !datasets.is_empty() {
                c.datasets = datasets;
            }
            run_nystrom_f1(&c, &root, progress)?
        }
        path if path.ends_with("nystrom.toml") => {
            let c: NystromF1Config = toml::from_str(&std::fs::read_to_string(path)?)?;
            run_nystrom_f1(&c, &root, progress)?
        }
        path => {
            let c: Table1Config = toml::from_str(&std::fs::read_to_string(path)?)?;
            run_table1(&c, &root, progress)?
        }
    };
    println!("dataset\tmethod\tmetric\tsetting\tvalue\tstd\ttrials\tseconds\tstatus\tnote");
    for r in &rows {
        println!(
            "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{:.1}\t{:?}\t{}",
            r.dataset,
            r.method,
            r.metric,
            r.setting,
            r.value.map_or("-".into(), |v| format!("{v:.4}")),
            r.std.map_or("-".into(), |v| format!("{v:.4}")),
            r.trials,
            r.seconds,
            r.status,
            r.note.clone().unwrap_or_default()
        );
    }
    eprintln!(
        "total {:.1}s wall, {:.1}s CPU (user + system)",
        start.elapsed().as_secs_f64(),
        cpu_seconds()
    );
    Ok(())
}

/// CPU time of this process from /proc/self/stat (Linux; clock ticks of 1/100 s), 0 elsewhere.
fn cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    let rest = stat.rsplit(')').next().unwrap_or("");
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) / 100.0
}
