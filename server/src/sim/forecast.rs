//! How good the start-time forecast is (policy §11), measured on a trace.
//!
//! For every job the replay records what the product's own forecast
//! (`policy::forecast`, at the server's depth and horizon) said at two
//! moments — right after its submission, and one hour before it actually
//! started — and compares both with the start it got. The second moment
//! needs the actual start, so the measuring replay runs after a first one
//! (the replay is deterministic: both start every job at the same time).

use std::collections::BTreeMap;

use serde::Serialize;

use super::outcome::Estimate;
use super::outcome::{round, size_class, Outcome};

const HOUR_MS: i64 = 3_600_000;

/// Which of a job's estimates an ask fills in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Moment {
    Submission,
    HourBefore,
}

/// When to ask the forecast about whom: `(time, job, moment)` by time.
/// Production forecasts every `tick_ms` (30 s), so a user first sees an
/// estimate at the first tick after submitting, and one hour before the
/// start sees the last tick's. A job that started before its first tick
/// never saw an estimate; one that waited under an hour (from that tick)
/// has no "hour before". `first` is a replay's outcomes (it gives the
/// starts); the measuring replay starts every job at the same time.
pub fn schedule(first: &[Outcome], tick_ms: i64) -> Vec<(i64, usize, Moment)> {
    let tick_ms = tick_ms.max(1);
    let mut asks = Vec::new();
    for (i, o) in first.iter().enumerate() {
        if o.rejected {
            continue;
        }
        let seen = (o.submit_ms + tick_ms - 1).div_euclid(tick_ms) * tick_ms;
        if o.start_ms.is_some_and(|s| s <= seen) {
            continue;
        }
        asks.push((seen, i, Moment::Submission));
        if let Some(start) = o.start_ms {
            let before = (start - HOUR_MS).div_euclid(tick_ms) * tick_ms;
            if before >= seen {
                asks.push((before, i, Moment::HourBefore));
            }
        }
    }
    asks.sort_unstable();
    asks
}

/// The forecast's accuracy over one group of jobs.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Accuracy {
    /// Jobs measured at this moment (waiting then).
    pub jobs: usize,
    /// Of them, jobs the forecast gave no estimate (beyond its depth or horizon).
    pub no_estimate: usize,
    /// Median |actual − estimated start|, over jobs with an estimate.
    pub median_abs_error_s: f64,
    /// Shares of jobs with an estimate.
    pub within_10_min: f64,
    pub within_1_h: f64,
    /// Started after the estimate (the case a user is let down by).
    pub started_later: f64,
    /// Mean signed error (actual − estimate): negative = estimates too late.
    pub mean_error_s: f64,
}

/// Accuracy at submission and one hour before the start, per job size
/// ("1", "2", "4", "8", "other") and "all".
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ForecastReport {
    pub at_submission: BTreeMap<String, Accuracy>,
    pub hour_before_start: BTreeMap<String, Accuracy>,
}

/// None when nothing was measured (a baseline, or the forecast off).
pub fn report(outcomes: &[Outcome]) -> Option<ForecastReport> {
    let asked = |e: &Estimate| *e != Estimate::NotAsked;
    if !outcomes.iter().any(|o| asked(&o.estimate_at_submit) || asked(&o.estimate_hour_before)) {
        return None;
    }
    Some(ForecastReport {
        at_submission: by_size(outcomes, |o| o.estimate_at_submit),
        hour_before_start: by_size(outcomes, |o| o.estimate_hour_before),
    })
}

fn by_size(outcomes: &[Outcome], pick: impl Fn(&Outcome) -> Estimate) -> BTreeMap<String, Accuracy> {
    let mut groups: BTreeMap<String, Vec<(Estimate, i64)>> = BTreeMap::new();
    for o in outcomes {
        let (Some(start), estimate) = (o.start_ms, pick(o)) else { continue };
        if estimate == Estimate::NotAsked {
            continue;
        }
        groups.entry(size_class(o.num_gpus)).or_default().push((estimate, start));
        groups.entry("all".to_string()).or_default().push((estimate, start));
    }
    groups.into_iter().map(|(k, v)| (k, accuracy(&v))).collect()
}

fn accuracy(samples: &[(Estimate, i64)]) -> Accuracy {
    let errors: Vec<i64> = samples
        .iter()
        .filter_map(|(e, start)| match e {
            Estimate::At(at) => Some(start - at),
            _ => None,
        })
        .collect();
    let n = errors.len().max(1) as f64;
    let share = |f: &dyn Fn(i64) -> bool| round(errors.iter().filter(|&&e| f(e)).count() as f64 / n);
    let mut abs: Vec<i64> = errors.iter().map(|e| e.abs()).collect();
    abs.sort_unstable();
    let median = if abs.is_empty() { 0 } else { abs[(abs.len() - 1) / 2] };
    Accuracy {
        jobs: samples.len(),
        no_estimate: samples.len() - errors.len(),
        median_abs_error_s: round(median as f64 / 1000.0),
        within_10_min: share(&|e| e.abs() <= 10 * 60_000),
        within_1_h: share(&|e| e.abs() <= HOUR_MS),
        started_later: share(&|e| e > 0),
        mean_error_s: round(errors.iter().sum::<i64>() as f64 / n / 1000.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(gpus: u32, submit_s: i64, start_s: Option<i64>, at_submit: Estimate, before: Estimate) -> Outcome {
        Outcome {
            lab: "a".into(),
            num_gpus: gpus,
            submit_ms: submit_s * 1000,
            run_ms: 1000,
            start_ms: start_s.map(|s| s * 1000),
            rejected: false,
            estimate_at_submit: at_submit,
            estimate_hour_before: before,
        }
    }

    #[test]
    fn jobs_are_asked_at_the_ticks_a_user_would_see() {
        let n = Estimate::NotAsked;
        let first = [
            // started before the first tick after its submission: never asked
            outcome(1, 5, Some(20), n, n),
            // waited exactly an hour from its first tick
            outcome(1, 100, Some(120 + 3600), n, n),
            outcome(8, 0, Some(9000), n, n),
            // waited under an hour after its first tick
            outcome(1, 61, Some(3650), n, n),
            // never started: asked at submission only
            outcome(2, 0, None, n, n),
        ];
        let s = |t: i64, i: usize, m: Moment| (t * 1000, i, m);
        assert_eq!(
            schedule(&first, 30_000),
            vec![
                s(0, 2, Moment::Submission),
                s(0, 4, Moment::Submission),
                s(90, 3, Moment::Submission),
                s(120, 1, Moment::Submission),
                s(120, 1, Moment::HourBefore),
                s(5400, 2, Moment::HourBefore),
            ]
        );
    }

    #[test]
    fn errors_are_split_by_size_and_missing_estimates_counted_apart() {
        let at = |s: i64| Estimate::At(s * 1000);
        let outcomes = [
            // 5 min late, 30 min early, 2 h late; one never estimated
            outcome(1, 0, Some(1000), at(700), Estimate::NotAsked),
            outcome(1, 0, Some(1000), at(2800), Estimate::NotAsked),
            outcome(8, 0, Some(9000), at(1800), at(9000)),
            outcome(8, 0, Some(9000), Estimate::Missing, Estimate::NotAsked),
            outcome(2, 0, Some(5), Estimate::NotAsked, Estimate::NotAsked),
        ];
        let r = report(&outcomes).unwrap();
        let all = &r.at_submission["all"];
        assert_eq!((all.jobs, all.no_estimate), (4, 1));
        assert_eq!(all.median_abs_error_s, 1800.0, "300, 1800, 7200: the middle one");
        assert_eq!(all.within_10_min, round(1.0 / 3.0));
        assert_eq!(all.within_1_h, round(2.0 / 3.0));
        assert_eq!(all.started_later, round(2.0 / 3.0));
        assert!(!r.at_submission.contains_key("2"), "a job that never waited is not measured");
        let eight = &r.hour_before_start["8"];
        assert_eq!((eight.jobs, eight.median_abs_error_s, eight.started_later), (1, 0.0, 0.0));
        let none = [outcome(1, 0, Some(5), Estimate::NotAsked, Estimate::NotAsked)];
        assert_eq!(report(&none), None);
    }
}
