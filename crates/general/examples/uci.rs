//! Runs Table 3 or the ablation and prints the tidy rows as TSV.
//!
//! `cargo run --release -p ksvd-general --example uci -- [quick|full|literal] [table3|ablation] [key=value ...]`
//! where `full` is the recommended protocol ([`Table3Config::full`]), `literal` the paper read
//! literally ([`Table3Config::literal`]: raw inputs, the paper's `γ²`, unscaled head inputs),
//! `quick` the recommended one with 200 steps; the optional `key=value` pairs are TOML overrides
//! of the config (e.g. `standardize=false`, `bandwidth="paper"`, `seeds=[0,1]`,
//! `datasets=["diabetes"]`).
use std::time::Instant;

use ksvd_datasets::DataRoot;
use ksvd_general::{run_ablation, run_table3, summarize, AblationConfig, Progress, ResultRow, Table3Config};

fn overrides<T: serde::Serialize + serde::de::DeserializeOwned>(
    base: T,
    args: &[String],
) -> Result<T, Box<dyn std::error::Error>> {
    let mut v = toml::Value::try_from(&base)?;
    for a in args {
        let patch: toml::Table = toml::from_str(a)?;
        if let toml::Value::Table(t) = &mut v {
            t.extend(patch);
        }
    }
    Ok(v.try_into()?)
}

fn print(rows: &[ResultRow]) {
    println!("dataset\tmethod\tmetric\tvalue\tstd\tseed\ttrials\tseconds\tstatus\tnote");
    for r in rows {
        println!(
            "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{:.2}\t{:?}\t{}",
            r.dataset,
            r.method_label,
            r.metric,
            r.value.map_or("-".into(), |v| format!("{v:.4}")),
            r.std.map_or("-".into(), |v| format!("{v:.4}")),
            r.seed.map_or("-".into(), |v| v.to_string()),
            r.trials,
            r.seconds,
            r.status,
            r.note.as_deref().unwrap_or("")
        );
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mode = args.first().map(String::as_str).unwrap_or("quick");
    let quick = mode == "quick";
    let literal = mode == "literal";
    let which = args.get(1).cloned().unwrap_or_else(|| "table3".into());
    let extra = args.get(2..).unwrap_or(&[]).to_vec();
    let root = DataRoot::committed()?;
    let start = Instant::now();
    let mut progress =
        |p: &Progress<'_>| eprintln!("[{}/{}] {} {} seed {}", p.done, p.total, p.dataset, p.method, p.seed);
    let rows = if which == "ablation" {
        let cfg = overrides(
            if quick {
                AblationConfig::quick()
            } else if literal {
                AblationConfig::literal()
            } else {
                AblationConfig::full()
            },
            &extra,
        )?;
        run_ablation(&cfg, &root, &mut progress)?
    } else {
        let cfg = overrides(
            if quick {
                Table3Config::quick()
            } else if literal {
                Table3Config::literal()
            } else {
                Table3Config::full()
            },
            &extra,
        )?;
        run_table3(&cfg, &root, &mut progress)?
    };
    print(&rows);
    if rows.iter().any(|r| r.seed.is_some()) {
        println!("# summary over seeds");
        print(&summarize(&rows));
    }
    eprintln!("total {:.1} s", start.elapsed().as_secs_f64());
    Ok(())
}
