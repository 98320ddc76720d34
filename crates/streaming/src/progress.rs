//! Progress reports of the passes: `ksvd_linalg::Progress` (the workspace's one progress type),
//! `done` of `total` rows of a pass (`total = 0`: unknown).
pub use ksvd_linalg::{Progress, ProgressFn};

pub(crate) fn report(progress: &mut ProgressFn<'_>, stage: &str, done: usize, total: usize) {
    progress(&Progress::new(stage, done, (total > 0).then_some(total)));
}
