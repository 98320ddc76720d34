//! Progress reports passed to a caller-supplied callback.

/// A progress report: `done` of `total` units of `stage` (rows of a pass, or cells of a runner;
/// `total = 0` when unknown).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Progress {
    /// What is running, e.g. `"a9a/ksvd: pass 3/4 (embed + train)"`.
    pub stage: String,
    /// Units done.
    pub done: usize,
    /// Units in total (0 when unknown).
    pub total: usize,
}

/// A callback receiving [`Progress`] reports.
pub type ProgressFn<'a> = dyn FnMut(&Progress) + 'a;

pub(crate) fn report(progress: &mut ProgressFn<'_>, stage: &str, done: usize, total: usize) {
    progress(&Progress {
        stage: stage.to_string(),
        done,
        total,
    });
}
