//! The forecast's runtime predictor (§11: "or at a predicted end where a
//! predictor exists"). Users ask for more time than their jobs use, so a
//! forecast that ends every job at its time limit starts everything too
//! late.
//!
//! The predictor keeps each user's last [`PREDICT_FROM_LAST`] ends (run
//! time and time limit) and predicts a job's run from those that are
//! still possible: longer than the job has already run. Among them it
//! prefers the user's ends with the same time limit (a user who types the
//! same limit is mostly running the same kind of job again); with none,
//! it scales the user's shares of their limits to this job's limit. Of
//! those candidates it takes the median for a job already running
//! ([`RUNNING_QUANTILE`]: its own elapsed time has narrowed them) and the
//! upper quartile for a job the forecast starts itself
//! ([`FUTURE_QUANTILE`]: errors compound down a chain of such starts, and
//! an estimate that turns out early is what lets a researcher down). A job
//! that has outrun every candidate runs to its limit.
//!
//! Why this and not a share of the last two ends (Tsafrir, Etsion and
//! Feitelson, IEEE TPDS 2007, our first predictor): measured on October
//! with limits as users type them (`--time-limit user`), sampling every job
//! at random moments of its run as the forecast sees it, the last two
//! shares erred by a median of 496 s (p75 1,740 s) with 29 % of ends
//! predicted early; the conditional upper quartile of the last 200 errs by
//! 314 s (p75 1,021 s) with 23 % early, the conditional median by 190 s
//! (p75 751 s) with 40 % early. In the forecast (`jpu-share sim --forecast`,
//! 64×8, margin 0.1) the upper quartile everywhere left the median error
//! an hour before the start at 1,128 s; the median everywhere brought it
//! to 682 s but 45 % of jobs started later than their estimate at
//! submission (the forecast's guide, `forecast.md`). With `--time-limit x2`
//! all are exact after a user's first end. `planned` with `predicted_ends`
//! plans with it too ([`predict_busy`]; EASY++, Tsafrir et al. 2007): a
//! running job is predicted at the median of its candidates, and one
//! that outruns that prediction at its limit (which stays its kill time).

use std::collections::{HashMap, VecDeque};

use super::model::{BusyGpu, Millis, UserId};

/// Ends per user the predictor remembers.
pub const PREDICT_FROM_LAST: usize = 200;

/// Which of the candidate runs is predicted for a job already running.
pub const RUNNING_QUANTILE: f64 = 0.5;

/// …and for a job the forecast starts in virtual time.
pub const FUTURE_QUANTILE: f64 = 0.75;

/// One user's remembered ends, sorted for lookups in O(log n).
#[derive(Debug, Clone, Default)]
struct UserEnds {
    /// (time limit, run time), most recent first: which one to forget.
    recent: VecDeque<(Millis, Millis)>,
    /// (time limit, run time), sorted.
    by_limit: Vec<(Millis, Millis)>,
    /// Run time / time limit, sorted.
    shares: Vec<f64>,
}

/// What the forecast knows of how long users' jobs run.
#[derive(Debug, Clone, Default)]
pub struct RuntimeHistory {
    users: HashMap<UserId, UserEnds>,
}

impl RuntimeHistory {
    /// From `(user, run time, time limit)` of ended jobs, most recent
    /// first; each user keeps their last [`PREDICT_FROM_LAST`]. Ends with
    /// no limit are ignored; a run past its limit counts as the limit.
    pub fn from_recent(recent_first: impl IntoIterator<Item = (UserId, Millis, Millis)>) -> Self {
        let ends: Vec<(UserId, Millis, Millis)> = recent_first.into_iter().collect();
        let mut history = RuntimeHistory::default();
        // oldest first, as they ended: each user's oldest are forgotten
        for &(user, run_ms, limit_ms) in ends.iter().rev() {
            history.record(user, run_ms, limit_ms);
        }
        history
    }

    /// Remembers a job of `user` that just ended, forgetting the user's
    /// oldest past [`PREDICT_FROM_LAST`]: a replay learns as it goes
    /// without sorting every user's ends again. Ends with no limit are
    /// ignored; a run past its limit counts as the limit.
    pub fn record(&mut self, user: UserId, run_ms: Millis, limit_ms: Millis) {
        if limit_ms <= 0 {
            return;
        }
        let run_ms = run_ms.clamp(0, limit_ms);
        let ends = self.users.entry(user).or_default();
        ends.recent.push_front((limit_ms, run_ms));
        let at = ends.by_limit.partition_point(|&e| e < (limit_ms, run_ms));
        ends.by_limit.insert(at, (limit_ms, run_ms));
        let share = run_ms as f64 / limit_ms as f64;
        let at = ends.shares.partition_point(|s| s.total_cmp(&share).is_lt());
        ends.shares.insert(at, share);
        if ends.recent.len() > PREDICT_FROM_LAST {
            if let Some((limit, run)) = ends.recent.pop_back() {
                if let Ok(at) = ends.by_limit.binary_search(&(limit, run)) {
                    ends.by_limit.remove(at);
                }
                let share = run as f64 / limit as f64;
                if let Ok(at) = ends.shares.binary_search_by(|s| s.total_cmp(&share)) {
                    ends.shares.remove(at);
                }
            }
        }
    }

    /// When a job of `user` started at `started_ms` with time limit
    /// `limit_ms` is predicted to end, as seen at `now_ms`: the
    /// `quantile` of its candidate runs ([`RUNNING_QUANTILE`],
    /// [`FUTURE_QUANTILE`]); never before now, never after its limit
    /// (unless that is already past).
    pub fn predicted_end(
        &self,
        user: UserId,
        started_ms: Millis,
        limit_ms: Millis,
        now_ms: Millis,
        quantile: f64,
    ) -> Millis {
        let limit_end = started_ms + limit_ms;
        let elapsed = (now_ms - started_ms).max(0);
        let run = self.users.get(&user).and_then(|ends| ends.predicted_run(limit_ms, elapsed, quantile));
        match run {
            Some(run) => (started_ms + run.max(1)).min(limit_end).max(now_ms),
            None => limit_end.max(now_ms),
        }
    }
}

/// Each busy GPU's predicted end, as seen at `now_ms` (a running job's:
/// [`RUNNING_QUANTILE`] of its user's runs); its limit stays `until_ms`.
/// A job that outran the prediction it started with is predicted at its
/// limit: raised step by step instead, a user could shape their history
/// so their job always seems about to end, and keep another job's GPUs
/// held next to it for hours.
pub fn predict_busy(busy: &mut [BusyGpu], history: &RuntimeHistory, now_ms: Millis) {
    for b in busy {
        let limit = b.until_ms - b.started_ms;
        let first = history.predicted_end(b.user, b.started_ms, limit, b.started_ms, RUNNING_QUANTILE);
        b.predicted_ms = if now_ms >= first { b.until_ms.max(now_ms) } else { first };
    }
}

impl UserEnds {
    /// The `quantile` of the runs still possible after `elapsed`: of this
    /// limit's ends, else of the shares scaled to it.
    fn predicted_run(&self, limit_ms: Millis, elapsed: Millis, quantile: f64) -> Option<Millis> {
        let same = {
            let lo = self.by_limit.partition_point(|&(l, r)| (l, r) <= (limit_ms, elapsed));
            let hi = self.by_limit.partition_point(|&(l, _)| l <= limit_ms);
            &self.by_limit[lo..hi]
        };
        if !same.is_empty() {
            return Some(at_quantile(same, quantile).1);
        }
        let from = self.shares.partition_point(|&s| s * limit_ms as f64 <= elapsed as f64);
        let shares = &self.shares[from..];
        (!shares.is_empty()).then(|| (at_quantile(shares, quantile) * limit_ms as f64).ceil() as Millis)
    }
}

fn at_quantile<T: Copy>(sorted: &[T], quantile: f64) -> T {
    let at = ((sorted.len() as f64 * quantile.clamp(0.0, 1.0)) as usize).min(sorted.len() - 1);
    sorted[at]
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIN: Millis = 60_000;
    const Q: f64 = FUTURE_QUANTILE;

    #[test]
    fn a_job_is_predicted_from_its_users_ends_with_the_same_limit() {
        // user 1 ran 10, 20, 30 and 40 min under a 60-min limit, and once
        // 5 min of a 600-min limit; user 2 has no history
        let ends = [10, 20, 30, 40].map(|r| (1, r * MIN, 60 * MIN));
        let history = RuntimeHistory::from_recent(ends.into_iter().chain([(1, 5 * MIN, 600 * MIN)]));
        // upper quartile of 10..40 is 40 (index 3 of 4)
        assert_eq!(history.predicted_end(1, 0, 60 * MIN, 0, Q), 40 * MIN);
        // past 35 min only 40 is left
        assert_eq!(history.predicted_end(1, 0, 60 * MIN, 35 * MIN, Q), 40 * MIN);
        // past every run of that limit: the limit
        assert_eq!(history.predicted_end(1, 0, 60 * MIN, 41 * MIN, Q), 60 * MIN);
        assert_eq!(history.predicted_end(2, 0, 60 * MIN, 0, Q), 60 * MIN, "no history: the limit");
        assert_eq!(history.predicted_end(2, 0, 60 * MIN, 70 * MIN, Q), 70 * MIN, "never before now");
    }

    #[test]
    fn a_running_job_is_predicted_at_the_median() {
        let ends = [10, 20, 30, 40].map(|r| (1, r * MIN, 60 * MIN));
        let history = RuntimeHistory::from_recent(ends);
        // of 10..40, index 2 of 4 at the median; past 25, of 30 and 40: 40
        assert_eq!(history.predicted_end(1, 0, 60 * MIN, 0, RUNNING_QUANTILE), 30 * MIN);
        assert_eq!(history.predicted_end(1, 0, 60 * MIN, 25 * MIN, RUNNING_QUANTILE), 40 * MIN);
    }

    #[test]
    fn a_new_limit_is_predicted_from_the_users_shares() {
        // shares 0.1, 0.5 and 1.0 (a run past its limit counts as the limit)
        let history =
            RuntimeHistory::from_recent([(1, 6 * MIN, 60 * MIN), (1, 30 * MIN, 60 * MIN), (1, 90 * MIN, 60 * MIN)]);
        // a 100-min job: upper quartile of 10, 50, 100 is 100
        assert_eq!(history.predicted_end(1, 0, 100 * MIN, 0, Q), 100 * MIN);
        let history = RuntimeHistory::from_recent([(1, 6 * MIN, 60 * MIN), (1, 30 * MIN, 60 * MIN)]);
        // of 10 and 50, index 1: 50; past 50, nothing left but the limit
        assert_eq!(history.predicted_end(1, 0, 100 * MIN, 0, Q), 50 * MIN);
        assert_eq!(history.predicted_end(1, 0, 100 * MIN, 50 * MIN, Q), 100 * MIN);
    }

    /// Learning one end at a time predicts as learning them all at once,
    /// forgetting the oldest past [`PREDICT_FROM_LAST`].
    #[test]
    fn recording_ends_one_by_one_predicts_as_reading_them_at_once() {
        // 300 ends of two users, limits of 60 and 120 min, runs that vary
        let ends: Vec<(UserId, Millis, Millis)> =
            (0..300).map(|k| (k % 2, (k * 37 % 130) * MIN, if k % 3 == 0 { 120 * MIN } else { 60 * MIN })).collect();
        let mut learnt = RuntimeHistory::default();
        for &(user, run, limit) in &ends {
            learnt.record(user, run, limit);
        }
        learnt.record(1, MIN, 0); // no limit: ignored
        let read = RuntimeHistory::from_recent(ends.iter().rev().copied());
        for user in 0..2 {
            for limit in [30, 60, 90, 120] {
                for elapsed in [0, 10, 45, 59, 119] {
                    for q in [RUNNING_QUANTILE, FUTURE_QUANTILE] {
                        let at = |h: &RuntimeHistory| h.predicted_end(user, 0, limit * MIN, elapsed * MIN, q);
                        assert_eq!(at(&learnt), at(&read), "user {user}, {limit} min, {elapsed} min in, q {q}");
                    }
                }
            }
        }
        // the oldest are forgotten: 200 ends of 50 min, then 200 of 10
        let mut learnt = RuntimeHistory::default();
        for run in [50, 10] {
            for _ in 0..PREDICT_FROM_LAST {
                learnt.record(0, run * MIN, 60 * MIN);
            }
        }
        assert_eq!(learnt.predicted_end(0, 0, 60 * MIN, 0, Q), 10 * MIN);
        assert_eq!(learnt.predicted_end(0, 0, 60 * MIN, 11 * MIN, Q), 60 * MIN, "no 50-min end is left");
    }

    /// A busy GPU is predicted to free at its job's median candidate; once
    /// the job outruns that, at its limit.
    #[test]
    fn a_busy_gpu_frees_at_its_prediction_raised_when_the_job_outruns_it() {
        let history = RuntimeHistory::from_recent([10, 20, 30, 40].map(|r| (1, r * MIN, 60 * MIN)));
        let gpu = |started: Millis| vec![BusyGpu::new(None, 0, (1, 1), started, started + 60 * MIN)];
        for (elapsed, predicted) in [(0, 30), (15, 30), (29, 30), (30, 60), (41, 60), (70, 70)] {
            let mut busy = gpu(0);
            predict_busy(&mut busy, &history, elapsed * MIN);
            assert_eq!(busy[0].predicted_ms, predicted * MIN, "{elapsed} min in");
            assert_eq!(busy[0].until_ms, 60 * MIN, "the limit is left as it is");
        }
        let mut stranger = vec![BusyGpu::new(None, 0, (1, 2), 0, 60 * MIN)];
        predict_busy(&mut stranger, &history, 0);
        assert_eq!(stranger[0].predicted_ms, 60 * MIN, "no history: its limit");
    }

    #[test]
    fn only_the_last_ends_are_remembered_and_nonsense_is_ignored() {
        // the most recent PREDICT_FROM_LAST ends ran 1 min; older ones 50
        let recent = (0..PREDICT_FROM_LAST).map(|_| (1, MIN, 60 * MIN));
        let old = (0..10).map(|_| (1, 50 * MIN, 60 * MIN));
        let history = RuntimeHistory::from_recent(recent.chain(old).chain([(1, 5 * MIN, 0)]));
        assert_eq!(history.predicted_end(1, 0, 60 * MIN, 0, Q), MIN);
        let zero = RuntimeHistory::from_recent([(1, 0, 60 * MIN)]);
        assert_eq!(zero.predicted_end(1, 0, 60 * MIN, 0, Q), 60 * MIN, "no run is shorter than nothing");
    }
}
