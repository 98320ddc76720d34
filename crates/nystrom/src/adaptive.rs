//! The paper's timing protocol: grow a size parameter (landmarks `m`, or RSVD's oversampling)
//! until the accuracy `η` against a reference solution reaches a tolerance `ε`.
use crate::error::{NystromError, Result};

/// A geometric schedule of sizes `start, ⌈start·factor⌉, …` (each at least `min_step` larger
/// than the previous), capped at `max` (which is always tried last).
#[derive(Debug, Clone, PartialEq)]
pub struct GrowthSchedule {
    /// First size tried.
    pub start: usize,
    /// Multiplicative growth factor (> 1).
    pub factor: f64,
    /// Smallest increment.
    pub min_step: usize,
    /// Largest size.
    pub max: usize,
}

impl GrowthSchedule {
    /// The sizes of the schedule, increasing.
    pub fn sizes(&self) -> Result<Vec<usize>> {
        if !(self.factor > 1.0 && self.factor.is_finite()) {
            return Err(NystromError::InvalidParameter {
                name: "factor",
                value: self.factor,
                reason: "must exceed 1".into(),
            });
        }
        if self.start == 0 || self.start > self.max {
            return Err(NystromError::InvalidParameter {
                name: "start",
                value: self.start as f64,
                reason: format!("must lie in 1..=max = {}", self.max),
            });
        }
        let mut out = vec![self.start];
        loop {
            let last = *out.last().unwrap_or(&self.start);
            if last >= self.max {
                break;
            }
            let next = ((last as f64 * self.factor).ceil() as usize)
                .max(last + self.min_step.max(1))
                .min(self.max);
            out.push(next);
        }
        Ok(out)
    }
}

/// Outcome of [`grow_until`].
#[derive(Debug, Clone)]
pub struct AdaptiveOutcome<T> {
    /// First size whose accuracy met the tolerance.
    pub size: usize,
    /// Its `η`.
    pub eta: f64,
    /// Its result.
    pub result: T,
    /// Every `(size, η)` tried, in order.
    pub history: Vec<(usize, f64)>,
}

/// Tries the sizes of `schedule` in order until `attempt(size)` returns an accuracy `≤ eps`.
/// `attempt` returns the result and its accuracy; a size that fails with
/// [`NystromError::RankDeficientSample`] counts as not accurate and the search goes on.
pub fn grow_until<T, F>(schedule: &GrowthSchedule, eps: f64, mut attempt: F) -> Result<AdaptiveOutcome<T>>
where
    F: FnMut(usize) -> Result<(T, f64)>,
{
    let mut history = Vec::new();
    let mut best = f64::INFINITY;
    for size in schedule.sizes()? {
        match attempt(size) {
            Ok((result, eta)) => {
                history.push((size, eta));
                best = best.min(eta);
                if eta <= eps {
                    return Ok(AdaptiveOutcome {
                        size,
                        eta,
                        result,
                        history,
                    });
                }
            }
            Err(NystromError::RankDeficientSample { .. }) => history.push((size, f64::INFINITY)),
            Err(e) => return Err(e),
        }
    }
    Err(NystromError::ToleranceNotReached {
        eps,
        best_eta: best,
        size: schedule.max,
    })
}
