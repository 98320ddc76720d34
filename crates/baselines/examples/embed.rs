//! One baseline embedding of a Table 1 graph, written as `.npy` files for cross-checks in Python.
//!
//! ```text
//! RAYON_NUM_THREADS=1 cargo run --release -p ksvd-baselines --example embed -- \
//!     <dataset> <deepwalk|hope|digae> <out-dir> [--seed S] [--spec FILE] [--param KEY=VALUE]...
//! ```
//!
//! The graph is loaded exactly as the Table 1 runner loads it (`xtask`'s `graph::runner::load`):
//! the committed `data/` folder (`DataRoot::committed`, checksummed; `$KSVD_DATA_DIR` overrides
//! it), self-loops as in the file, `A[src, dst] = 1` for an arc `src -> dst` (citing -> cited).
//! The baselines get this raw adjacency (no row normalisation: `graph_input` applies only to
//! ours). The hyper-parameters are the `[params.baselines]` section of the spec (default
//! `experiments/table1.toml` of the repository), deserialised into `GraphBaselineConfig` as the
//! runner does; `--param` overrides one key of that section first, e.g. `--param hope.rank=500`
//! or `--param 'hope.solver="lanczos"'` (the value is TOML). The seed defaults to 0, the
//! spec's `seeds = [0]`, which the runner passes to the baseline unchanged.
//!
//! Files written to `<out-dir>` (created if missing), all little-endian, C order:
//!
//! * `features.npy`: `n x d` float64, the node features Table 1 classifies
//!   (`Embeddings::features`: DeepWalk's one matrix, or `[source, target]` concatenated for HOPE
//!   and DiGAE, source first);
//! * `labels.npy`: single-label graphs an `n` int64 vector of class indices, `-1` for a node
//!   without a label (CiteSeer's dangling ids); multi-label graphs (BlogCatalog) an
//!   `n x classes` int64 0/1 indicator matrix;
//! * `arcs.npy`: `m x 2` int64, one row `(src, dst)` per stored non-zero of `A` (row-major order;
//!   self-loops included, every weight is 1), so that Python builds the identical graph;
//! * `singular_values.npy` (HOPE only): the `r` Katz singular values, descending;
//! * `meta.json`: dataset, method, seed, `n`, arcs, feature width, wall seconds, rayon threads,
//!   the parameters used (TOML, as a string) and, for HOPE, `beta` and the `rho(A)` estimate.
use ksvd_baselines::{Embeddings, GraphBaseline, GraphBaselineConfig, GraphEmbedder};
use ksvd_datasets::{DataRoot, DatasetName, GraphOptions, Labels, SelfLoops};
use std::path::{Path, PathBuf};
use std::time::Instant;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

/// Writes `a` as `.npy` (float64 or int64, C order), atomically.
fn write_npy<A: ndarray_npy::WritableElement + Clone, D: ndarray::Dimension>(
    path: &Path,
    a: &ndarray::Array<A, D>,
) -> Res<()> {
    Ok(ksvd_datasets::write_atomic(path, &ksvd_datasets::npy_bytes(a)?)?)
}

/// The repository's `experiments/table1.toml` (two levels above this crate).
fn default_spec() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments/table1.toml")
}

/// The spec's `[params.baselines]` with the `--param` overrides applied.
fn baseline_config(spec: &Path, overrides: &[String]) -> Res<(GraphBaselineConfig, String)> {
    let text = std::fs::read_to_string(spec).map_err(|e| format!("cannot read {}: {e}", spec.display()))?;
    let doc: toml::Table = toml::from_str(&text)?;
    let mut section = doc
        .get("params")
        .and_then(|p| p.get("baselines"))
        .cloned()
        .unwrap_or_else(|| toml::Value::Table(toml::Table::new()));
    for o in overrides {
        let (key, value) = o
            .split_once('=')
            .ok_or_else(|| format!("--param {o}: expected KEY=VALUE"))?;
        let value: toml::Table = toml::from_str(&format!("v = {value}"))?;
        let path: Vec<&str> = key.trim().split('.').collect();
        let (last, parents) = path.split_last().ok_or("--param: empty key")?;
        let mut t = section.as_table_mut().ok_or("[params.baselines] is not a table")?;
        for p in parents {
            t = t
                .entry(p.to_string())
                .or_insert_with(|| toml::Value::Table(toml::Table::new()))
                .as_table_mut()
                .ok_or_else(|| format!("--param {o}: {p} is not a table"))?;
        }
        t.insert(last.to_string(), value["v"].clone());
    }
    let shown = toml::to_string(&section)?;
    Ok((section.try_into()?, shown))
}

fn json_str(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn main() -> Res<()> {
    let usage =
        "usage: embed <dataset> <deepwalk|hope|digae> <out-dir> [--seed S] [--spec FILE] [--param KEY=VALUE]...";
    let mut positional = vec![];
    let (mut seed, mut spec, mut overrides) = (0u64, default_spec(), vec![]);
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--seed" => seed = args.next().ok_or(usage)?.parse()?,
            "--spec" => spec = PathBuf::from(args.next().ok_or(usage)?),
            "--param" => overrides.push(args.next().ok_or(usage)?),
            "-h" | "--help" => {
                println!("{usage}");
                return Ok(());
            }
            _ => positional.push(a),
        }
    }
    let [dataset, method, out] = positional.as_slice() else {
        return Err(usage.into());
    };
    let method = GraphBaseline::ALL
        .into_iter()
        .find(|m| m.id() == method)
        .ok_or_else(|| format!("unknown method {method}; {usage}"))?;
    let (config, shown) = baseline_config(&spec, &overrides)?;
    let out = PathBuf::from(out);
    std::fs::create_dir_all(&out)?;

    let root = DataRoot::committed()?;
    let name: DatasetName = dataset.parse()?;
    let graph = root.graph(name, &GraphOptions::default().self_loops(SelfLoops::AsInFile))?;
    let a = &graph.adjacency;
    let n = graph.n_nodes();

    let start = Instant::now();
    // HOPE through its own `fit` (what the runner's trait call returns, plus the singular values,
    // beta and rho); the others through the trait the runner calls.
    let (emb, hope) = if method == GraphBaseline::Hope {
        let fit = config.hope.check()?.fit(a, seed)?;
        let emb = Embeddings::SourceTarget {
            source: fit.source.clone(),
            target: fit.target.clone(),
        };
        (emb, Some(fit))
    } else {
        (method.with(&config).embed_graph(a, seed)?, None)
    };
    let seconds = start.elapsed().as_secs_f64();
    let features = emb.features();
    let d = features.ncols();
    write_npy(&out.join("features.npy"), &features.to_owned())?;

    match &graph.labels {
        Labels::Single { classes, .. } => write_npy(
            &out.join("labels.npy"),
            &classes
                .iter()
                .map(|c| c.map_or(-1, |c| c as i64))
                .collect::<ndarray::Array1<i64>>(),
        )?,
        Labels::Multi { sets, class_names } => {
            let k = class_names.len();
            let mut ind = vec![0i64; n * k];
            for (i, s) in sets.iter().enumerate() {
                for &c in s {
                    ind[i * k + c] = 1;
                }
            }
            write_npy(&out.join("labels.npy"), &ndarray::Array2::from_shape_vec((n, k), ind)?)?;
        }
    }
    let arcs: Vec<i64> = a.entries().flat_map(|(i, j, _)| [i as i64, j as i64]).collect();
    write_npy(
        &out.join("arcs.npy"),
        &ndarray::Array2::from_shape_vec((arcs.len() / 2, 2), arcs)?,
    )?;

    let mut extra = String::new();
    if let Some(fit) = hope {
        write_npy(&out.join("singular_values.npy"), &fit.singular_values.to_owned())?;
        extra = format!(
            ", \"beta\": {:e}, \"spectral_radius\": {:e}",
            fit.beta, fit.spectral_radius
        );
    }
    let meta = format!(
        "{{\"dataset\": {}, \"method\": {}, \"seed\": {seed}, \"n\": {n}, \"arcs\": {}, \"dim\": {d}, \
         \"seconds\": {seconds:.3}, \"rayon_threads\": {}, \"params\": {}{extra}}}\n",
        json_str(name.as_str()),
        json_str(method.id()),
        a.nnz(),
        rayon::current_num_threads(),
        json_str(&shown),
    );
    ksvd_datasets::write_atomic(&out.join("meta.json"), meta.as_bytes())?;
    println!(
        "{} {} seed {seed}: n = {n}, arcs = {}, features {n} x {d}, {seconds:.2} s ({} rayon threads) -> {}",
        name.as_str(),
        method.id(),
        a.nnz(),
        rayon::current_num_threads(),
        out.display()
    );
    Ok(())
}
