//! DiGAE's own benchmark, directed link prediction (Kollias et al., AAAI 2022, "task 1"), on a
//! graph of the committed data: the arcs are split into training, validation and test arcs
//! (5 % / 10 % held out, as the reference code's `general_train_test_split_edges`), DiGAE is
//! trained on the training arcs only, and the held-out arcs are scored against as many sampled
//! non-arcs by `s_i · t_j` (the logit of DiGAE's `σ(s_i · t_j)`: the same ranking): AUC and average precision per run, then mean ± std.
//!
//! ```text
//! cargo run --release -p ksvd-baselines --example digae_link -- cora \
//!     [--runs 5] [--alpha 0.4] [--beta 0.2] [--learning-rate 0.005] [--hidden 32] [--dimension 16] \
//!     [--epochs 200] [--weight-decay 5e-4] [--splits DIR] [--validate] [--select]
//! ```
//!
//! `--splits DIR` reads the splits of another implementation instead of drawing them (so both
//! score the same held-out arcs): `DIR/<graph>-run<k>.txt`, lines `train i j`, `val_pos i j`,
//! `val_neg i j`, `test_pos i j`, `test_neg i j` (0-based node indices in the loader's order).
//! `--validate` scores the validation pairs instead of the test pairs (for choosing settings);
//! `--select` lets DiGAE choose among Table 1's candidate settings (`[params.baselines.digae]
//! select` of `experiments/table1.toml`) on arcs held out of the training arcs, and prints every
//! candidate's validation AUC.
//! Data from `DataRoot::committed` (`$KSVD_DATA_DIR` overrides it).
use std::error::Error;
use std::path::PathBuf;

use ksvd_baselines::{DigaeParams, DigaeSelection};
use ksvd_datasets::{DataRoot, DatasetName, GraphOptions};
use ksvd_graph_tasks::{auc_ap, link_scores, ArcSplit, Pairs};
use ksvd_linalg::CsrMatrix;
use ksvd_metrics::mean_std;

#[derive(Default)]
struct Split {
    train: Pairs,
    val_pos: Pairs,
    val_neg: Pairs,
    test_pos: Pairs,
    test_neg: Pairs,
}

fn read_split(path: &PathBuf) -> Result<Split, Box<dyn Error>> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut s = Split::default();
    for (k, line) in text.lines().enumerate() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.is_empty() {
            continue;
        }
        if f.len() != 3 {
            return Err(format!("{}:{}: expected `<part> i j`", path.display(), k + 1).into());
        }
        let p = (f[1].parse()?, f[2].parse()?);
        match f[0] {
            "train" => s.train.push(p),
            "val_pos" => s.val_pos.push(p),
            "val_neg" => s.val_neg.push(p),
            "test_pos" => s.test_pos.push(p),
            "test_neg" => s.test_neg.push(p),
            other => return Err(format!("{}:{}: unknown part {other}", path.display(), k + 1).into()),
        }
    }
    Ok(s)
}

/// Table 1's selection grid: `[params.baselines.digae] select` of the repository's
/// `experiments/table1.toml` (two levels above this crate).
fn table1_selection() -> Result<DigaeSelection, Box<dyn Error>> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments/table1.toml");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let doc: toml::Table = toml::from_str(&text)?;
    let select = ["params", "baselines", "digae", "select"]
        .iter()
        .try_fold(&toml::Value::Table(doc), |v, k| v.get(k))
        .cloned()
        .ok_or_else(|| format!("{} has no [params.baselines.digae] select", path.display()))?;
    Ok(select.try_into()?)
}

fn main() -> Result<(), Box<dyn Error>> {
    let mut args = std::env::args().skip(1);
    let name = args.next().ok_or("usage: digae_link <graph> [options]")?;
    let mut p = DigaeParams::default();
    let (mut runs, mut splits, mut validate) = (5usize, None::<PathBuf>, false);
    while let Some(flag) = args.next() {
        if flag == "--validate" {
            validate = true;
            continue;
        }
        if flag == "--select" {
            p.select = Some(table1_selection()?);
            continue;
        }
        let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--runs" => runs = value.parse()?,
            "--alpha" => p.alpha = value.parse()?,
            "--beta" => p.beta = value.parse()?,
            "--learning-rate" => p.learning_rate = value.parse()?,
            "--hidden" => p.hidden = value.parse()?,
            "--dimension" => p.dimension = value.parse()?,
            "--epochs" => p.epochs = value.parse()?,
            "--weight-decay" => p.weight_decay = value.parse()?,
            "--splits" => splits = Some(value.into()),
            other => return Err(format!("unknown option {other}").into()),
        }
    }
    let digae = p.check()?;
    let graph = DataRoot::committed()?.graph(name.parse::<DatasetName>()?, &GraphOptions::default())?;
    let a = &graph.adjacency;
    let n = a.nrows();
    let (mut aucs, mut aps) = (Vec::new(), Vec::new());
    for run in 0..runs {
        let split = match &splits {
            Some(dir) => read_split(&dir.join(format!("{name}-run{run}.txt")))?,
            None => {
                let s = ArcSplit::draw(a, 0.05, 0.10, run as u64)?;
                let arcs = |m: &CsrMatrix| -> Pairs { m.entries().map(|(i, j, _)| (i, j)).collect() };
                Split {
                    train: arcs(&s.train),
                    val_pos: s.val.0,
                    val_neg: s.val.1,
                    test_pos: s.test.0,
                    test_neg: s.test.1,
                }
            }
        };
        let train = CsrMatrix::from_triplets(n, n, split.train.iter().map(|&(i, j)| (i, j, 1.0)))?;
        let fit = digae.fit(&train, run as u64)?;
        let score = |pairs: &Pairs| link_scores(fit.source.view(), fit.target.view(), pairs);
        let (pos, neg) = if validate {
            (&split.val_pos, &split.val_neg)
        } else {
            (&split.test_pos, &split.test_neg)
        };
        let (auc, ap) = auc_ap(&score(pos)?, &score(neg)?)?;
        for (c, v_auc, v_ap) in &fit.validation {
            let mark = if *c == fit.params { " <- chosen" } else { "" };
            println!(
                "  candidate alpha {} beta {} weight decay {}: validation AUC {v_auc:.4} AP {v_ap:.4}{mark}",
                c.alpha, c.beta, c.weight_decay
            );
        }
        println!(
            "{name} run {run}: train arcs {}, {} pairs {}+{}: AUC {auc:.4} AP {ap:.4} (loss {:.4} -> {:.4})",
            split.train.len(),
            if validate { "validation" } else { "test" },
            pos.len(),
            neg.len(),
            fit.losses[0],
            fit.losses[fit.losses.len() - 1]
        );
        aucs.push(auc);
        aps.push(ap);
    }
    let (am, asd) = mean_std(&aucs).ok_or("no runs")?;
    let (pm, psd) = mean_std(&aps).ok_or("no runs")?;
    println!("{name} {p:?}\n  AUC {am:.4} ± {asd:.4}, AP {pm:.4} ± {psd:.4} over {runs} runs");
    Ok(())
}
