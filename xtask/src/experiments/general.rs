//! `kind = "uci"` (Table 3) and `kind = "ablation"` (the appendix ablation): the runners in [`runner`]
//! over the building blocks of [`ksvd_general`] (KPCA and KSVD embeddings with compatibility a0-a3,
//! SGD-trained linear heads).
//!
//! One cell per dataset x seed (all methods), run by the driver ([`Context::run_cells`]): the spec's
//! `datasets`, `methods` and `seeds` select what runs;
//! everything else is the spec's `[params]`, which deserialise into [`Table3Config`] /
//! [`AblationConfig`]: the values the paper states are required (the specs are their only
//! source), the open choices default as documented there.
use anyhow::Result;
use ksvd_datasets::DataRoot;
use runner::{run_ablation, run_table3, AblationConfig, MethodRows, Table3Config};

pub(super) mod runner;

use super::{Cell, Context, Experiment};
use crate::rows::Row;

/// The rows of a cell's methods: each method's rows, or the driver's failure rows for its error.
fn method_rows(cx: &Context<'_>, cell: &Cell, methods: Vec<MethodRows>) -> Vec<Row> {
    methods
        .into_iter()
        .flat_map(|(id, rows)| {
            rows.unwrap_or_else(|e| {
                let method = Cell {
                    method: Some(id),
                    ..cell.clone()
                };
                cx.failed_rows(&method, &e)
            })
        })
        .collect()
}

/// Table 3.
pub struct Table3;

impl Experiment for Table3 {
    type Params = Table3Config;
    const VERSION: u32 = 1;

    fn run(&self, cx: &Context<'_>, p: &Table3Config) -> Result<Vec<Row>> {
        let root = DataRoot::committed()?;
        // One cell per dataset and seed, every method of the run.
        let config = |c: &Cell| {
            let mut config = p.clone();
            config.datasets = vec![c.dataset.clone()];
            config.methods = cx.spec.run_methods.clone();
            config.seeds = vec![c.seed()];
            config
        };
        cx.run_cells(
            &cx.grid().all_methods().cells(),
            |c| ("table3", c.dataset.clone(), c.seed(), config(c)),
            |c, progress| {
                let methods = run_table3(&config(c), &root, &c.dataset, c.seed(), progress)?;
                Ok(method_rows(cx, c, methods))
            },
        )
    }
}

/// The ablation table.
pub struct Ablation;

impl Experiment for Ablation {
    type Params = AblationConfig;
    const VERSION: u32 = 1;

    fn run(&self, cx: &Context<'_>, p: &AblationConfig) -> Result<Vec<Row>> {
        let root = DataRoot::committed()?;
        // One cell per dataset and seed, both methods (the driver keeps the run's).
        let config = |c: &Cell| {
            let mut config = p.clone();
            config.datasets = vec![c.dataset.clone()];
            config.seeds = vec![c.seed()];
            config
        };
        cx.run_cells(
            &cx.grid().all_methods().cells(),
            |c| ("ablation", c.dataset.clone(), c.seed(), config(c)),
            |c, progress| {
                let methods = run_ablation(&config(c), &root, &c.dataset, c.seed(), progress)?;
                Ok(method_rows(cx, c, methods))
            },
        )
    }
}
