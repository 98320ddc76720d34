//! Runs the large-scale table on the committed stand-ins (and any user files present) and prints
//! the rows as tab-separated values.
//!
//! ```text
//! cargo run --release -p ksvd-streaming --example large_scale            # full config
//! cargo run --release -p ksvd-streaming --example large_scale -- quick   # a9a, 200 landmarks
//! cargo run --release -p ksvd-streaming --example large_scale -- config.toml
//! ```
use ksvd_datasets::DataRoot;
use ksvd_streaming::{run_large_scale, LargeScaleConfig};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let cfg = match std::env::args().nth(1).as_deref() {
        None => LargeScaleConfig::default(),
        Some("quick") => LargeScaleConfig::quick(),
        Some(path) => toml::from_str(&std::fs::read_to_string(path)?)?,
    };
    let root = DataRoot::committed()?;
    let mut last = String::new();
    let rows = run_large_scale(&cfg, &root, &mut |p| {
        if p.stage != last {
            eprintln!("[{}/{}] {}", p.done, p.total, p.stage);
            last = p.stage.clone();
        }
    })?;
    println!("dataset\tmethod\tmetric\tvalue\tseed\tseconds\tthreads\tstatus\tnote");
    for r in rows {
        println!(
            "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
            r.dataset,
            r.method,
            r.metric,
            r.value.map_or(String::new(), |v| format!("{v:.4}")),
            r.seed.map_or(String::new(), |s| s.to_string()),
            r.seconds.map_or(String::new(), |s| format!("{s:.2}")),
            r.threads.map_or(String::new(), |t| t.to_string()),
            r.status.as_str(),
            r.note.unwrap_or_default()
        );
    }
    Ok(())
}
