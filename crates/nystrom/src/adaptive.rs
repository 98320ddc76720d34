//! The paper's timing protocol: grow a size parameter (landmarks `m`, or RSVD's oversampling)
//! until the accuracy `η` against a reference solution reaches a tolerance `ε` ("increase `m`
//! until `η ≤ ε`", section 5.4).
//!
//! `η` is not monotone in the size, so the sizes are tried in order rather than bisected.
use std::time::Instant;

use ksvd_solvers::Accuracy;

use crate::error::{NystromError, Result};

/// A geometric schedule of sizes `start, ⌈start·factor⌉, …` (each at least `min_step` larger
/// than the previous), capped at `max` (which is always tried last): one way to make the sizes
/// of [`grow_until`].
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

/// One size tried by [`grow_until`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Attempt {
    /// The size (`m`, or an oversampling).
    pub size: usize,
    /// The output's accuracy against the reference; `None` when the sample was numerically rank
    /// deficient ([`NystromError::RankDeficientSample`]: no `r` pairs to measure).
    pub accuracy: Option<Accuracy>,
    /// Wall-clock seconds of the solve (the accuracy measurement excluded), the time the
    /// budget counts.
    pub seconds: f64,
}

/// Why [`grow_until`] stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GrowthStop {
    /// A size met the tolerance.
    Reached,
    /// Every size was tried without meeting it.
    GridEnd,
    /// The solves used the time budget before a size met it.
    Budget,
}

/// What [`grow_until`] tried and found.
#[derive(Debug, Clone)]
pub struct Growth<T> {
    /// Every size tried, in order.
    pub attempts: Vec<Attempt>,
    /// Why the search stopped.
    pub stop: GrowthStop,
    /// The largest size it could have tried (the last of the sizes given; 0 for none).
    pub largest: usize,
    /// The output at the size that met the tolerance (`Some` exactly when `stop` is
    /// [`GrowthStop::Reached`]).
    pub result: Option<T>,
}

impl<T> Growth<T> {
    /// The first attempt whose `η` (the paper's, [`Accuracy::eta`]) is at most `eps`: for a
    /// larger `eps` than the search's, the size that would have met it.
    pub fn first_reaching(&self, eps: f64) -> Option<&Attempt> {
        self.attempts.iter().find(|a| a.accuracy.is_some_and(|x| x.eta <= eps))
    }

    /// The attempt with the smallest finite `η` (the first of equal ones), if any.
    pub fn best(&self) -> Option<&Attempt> {
        self.attempts
            .iter()
            .filter(|a| a.accuracy.is_some_and(|x| x.eta.is_finite()))
            .min_by(|a, b| {
                let eta = |a: &Attempt| a.accuracy.map_or(f64::INFINITY, |x| x.eta);
                eta(a).total_cmp(&eta(b))
            })
    }
}

/// Tries `sizes` in order until the output of `solve(size)`, measured by `measure`, has the
/// paper's `η` ([`Accuracy::eta`]) at most `eps`; stops early, before the next size, once the
/// solves have used `budget_seconds` (`f64::INFINITY`: no budget). Only `solve` is timed.
///
/// A size whose `solve` fails with [`NystromError::RankDeficientSample`] is recorded without
/// an accuracy and the search goes on; any other error is returned. Not meeting `eps` is an
/// outcome, not an error: the [`Growth`] says how far the search got ([`Growth::best`]) and why
/// it stopped.
pub fn grow_until<T>(
    sizes: &[usize],
    eps: f64,
    budget_seconds: f64,
    mut solve: impl FnMut(usize) -> Result<T>,
    mut measure: impl FnMut(&T) -> Result<Accuracy>,
) -> Result<Growth<T>> {
    let mut growth = Growth {
        attempts: Vec::new(),
        stop: GrowthStop::GridEnd,
        largest: sizes.last().copied().unwrap_or(0),
        result: None,
    };
    let mut used = 0.0;
    for &size in sizes {
        if used >= budget_seconds {
            growth.stop = GrowthStop::Budget;
            break;
        }
        let t = Instant::now();
        let out = solve(size);
        let seconds = t.elapsed().as_secs_f64();
        used += seconds;
        let out = match out {
            Ok(out) => Some(out),
            Err(NystromError::RankDeficientSample { .. }) => None,
            Err(e) => return Err(e),
        };
        let accuracy = out.as_ref().map(&mut measure).transpose()?;
        growth.attempts.push(Attempt {
            size,
            accuracy,
            seconds,
        });
        if accuracy.is_some_and(|a| a.eta <= eps) {
            growth.stop = GrowthStop::Reached;
            growth.result = out;
            break;
        }
    }
    Ok(growth)
}
