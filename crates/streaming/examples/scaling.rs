//! Runs the scaling benchmark and prints the rows as tab-separated values. Each measurement runs
//! in a `ksvd-stream bench` child process: build it first.
//!
//! ```text
//! cargo build --release -p ksvd-streaming --bin ksvd-stream --example scaling
//! target/release/examples/scaling                       # N = 1e4, 1e5, 1e6, 1e7
//! target/release/examples/scaling 10000 100000          # chosen sizes
//! target/release/examples/scaling config.toml           # a ScalingConfig
//! ```
use ksvd_streaming::{run_scaling, ScalingConfig};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let cfg = match args.first() {
        Some(p) if p.ends_with(".toml") => toml::from_str(&std::fs::read_to_string(p)?)?,
        Some(_) => ScalingConfig {
            sizes: args.iter().map(|a| a.parse()).collect::<Result<_, _>>()?,
            ..ScalingConfig::default()
        },
        None => ScalingConfig::default(),
    };
    let t0 = std::time::Instant::now();
    let rows = run_scaling(&cfg, &mut |p| {
        eprintln!(
            "[{}/{} {:.0} s] {}",
            p.done,
            p.total,
            t0.elapsed().as_secs_f64(),
            p.stage
        )
    })?;
    println!("method\tsetting\tmetric\tvalue\tthreads\tstatus\tnote");
    for r in rows {
        println!(
            "{}\t{}\t{}\t{}\t{}\t{}\t{}",
            r.method,
            r.setting,
            r.metric,
            r.value.map_or(String::new(), |v| format!("{v:.4}")),
            r.threads.map_or(String::new(), |t| t.to_string()),
            r.status.as_str(),
            r.note.unwrap_or_default()
        );
    }
    Ok(())
}
