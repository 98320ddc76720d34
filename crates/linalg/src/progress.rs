//! Progress reports: the one type every long computation of the workspace hands to a caller's
//! callback (Krylov restarts, streaming passes, experiment cells), so that a front end (the
//! `ksvd` command's progress bar, Python, `cargo xtask`) displays them all alike.

/// A progress report: `done` of `total` units of `stage`, and for iterative solvers how far the
/// residual is from its tolerance.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    /// What is running, e.g. `"block Lanczos restart"` or `"pass 3/4 (embed + train)"`.
    pub stage: String,
    /// Units done (restarts, rows, cells).
    pub done: usize,
    /// Units in total; `None` when unknown.
    pub total: Option<usize>,
    /// Iterative solvers: the largest relative residual estimate of the wanted triplets and the
    /// tolerance aimed at, `(estimate, tol)`.
    pub residual: Option<(f64, f64)>,
    /// Vectors multiplied by the operator (and its transpose) so far, when counted.
    pub products: Option<usize>,
}

impl Progress {
    /// `done` of `total` units of `stage` (`total = None`: unknown).
    pub fn new(stage: impl Into<String>, done: usize, total: Option<usize>) -> Progress {
        Progress {
            stage: stage.into(),
            done,
            total,
            residual: None,
            products: None,
        }
    }

    /// The report with an iterative solver's residual estimate and tolerance.
    pub fn with_residual(mut self, estimate: f64, tol: f64) -> Progress {
        self.residual = Some((estimate, tol));
        self
    }

    /// The report with the number of operator products so far.
    pub fn with_products(mut self, products: usize) -> Progress {
        self.products = Some(products);
        self
    }
}

impl std::fmt::Display for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.stage, self.done)?;
        if let Some(total) = self.total {
            write!(f, "/{total}")?;
        }
        if let Some(products) = self.products {
            write!(f, ", {products} vector products")?;
        }
        if let Some((estimate, tol)) = self.residual {
            write!(f, ", residual {estimate:.2e} (tol {tol:.0e})")?;
        }
        Ok(())
    }
}

/// A callback receiving [`Progress`] reports (`&mut |p: &Progress| ...`; `&mut |_| {}` ignores them).
pub type ProgressFn<'a> = dyn FnMut(&Progress) + 'a;

#[cfg(test)]
mod tests {
    use super::Progress;

    #[test]
    fn display_names_every_part_that_is_set() {
        assert_eq!(
            Progress::new("pass 1/4 (scan)", 10, None).to_string(),
            "pass 1/4 (scan) 10"
        );
        let p = Progress::new("block Lanczos restart", 3, Some(200))
            .with_products(120)
            .with_residual(2.5e-6, 1e-8);
        assert_eq!(
            p.to_string(),
            "block Lanczos restart 3/200, 120 vector products, residual 2.50e-6 (tol 1e-8)"
        );
    }
}
