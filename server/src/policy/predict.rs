//! The forecast's runtime predictor (§11: "or at a predicted end where a
//! predictor exists"). Users ask for more time than their jobs use, so a
//! forecast that ends every job at its time limit starts everything too
//! late. The predictor learns, per user, what share of its limit a job
//! used, from the user's last [`PREDICT_FROM_LAST`] ends (Tsafrir, Etsion
//! and Feitelson, "Backfilling Using System-Generated Predictions Rather
//! than User Runtime Estimates", IEEE TPDS 2007: a user's last two jobs
//! predict the next best). We take the longer of the two, not their mean:
//! on five busy days of October with users' round-number limits, the mean
//! left 40 % of jobs starting later than their estimate, the longer 29 %,
//! for 1 more minute of median error. Only the forecast uses it: the plan
//! keeps planning with time limits, the only ends that are guaranteed.

use std::collections::HashMap;

use super::model::{Millis, UserId};

/// Ends per user the prediction averages.
pub const PREDICT_FROM_LAST: usize = 2;

/// Per user, the share of its time limit a job is predicted to use (the
/// longest of its last ends), from
/// `(user, runtime / limit)` of ended jobs, most recent first. Users with
/// no history are absent (their jobs run to their limits).
pub fn runtime_shares(recent_first: impl IntoIterator<Item = (UserId, f64)>) -> HashMap<UserId, f64> {
    let mut seen: HashMap<UserId, (usize, f64)> = HashMap::new();
    for (user, share) in recent_first {
        if !share.is_finite() {
            continue;
        }
        let entry = seen.entry(user).or_default();
        if entry.0 < PREDICT_FROM_LAST {
            *entry = (entry.0 + 1, entry.1.max(share.clamp(0.0, 1.0)));
        }
    }
    seen.into_iter().map(|(user, (_, longest))| (user, longest)).collect()
}

/// When a job started at `started_ms` with time limit `limit_ms` is
/// predicted to end, as seen at `now_ms`: its predicted run, or — once it
/// has run past that — its limit (the prediction was wrong; the limit is
/// the only end still certain).
pub fn predicted_end(share: Option<f64>, started_ms: Millis, limit_ms: Millis, now_ms: Millis) -> Millis {
    let limit_end = started_ms + limit_ms;
    match share {
        Some(share) => {
            let end = started_ms + ((limit_ms as f64 * share).ceil() as Millis).max(1);
            if end > now_ms {
                end.min(limit_end)
            } else {
                limit_end.max(now_ms)
            }
        }
        None => limit_end.max(now_ms),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_users_share_is_the_longer_of_their_last_two_ends() {
        // user 1: 0.2 and 0.4 most recently (0.9 before is forgotten);
        // user 2: one end; a nonsense share is ignored and one past its
        // limit counts as the whole limit
        let shares = runtime_shares([(1, 0.2), (2, 1.7), (1, 0.4), (1, 0.9), (3, f64::NAN)]);
        assert_eq!(shares[&1], 0.4);
        assert_eq!(shares[&2], 1.0);
        assert!(!shares.contains_key(&3));
    }

    #[test]
    fn a_prediction_run_past_falls_back_to_the_limit() {
        // a 60-min limit, half of it predicted
        assert_eq!(predicted_end(Some(0.5), 0, 60, 10), 30);
        assert_eq!(predicted_end(Some(0.5), 0, 60, 30), 60, "still running at its prediction");
        assert_eq!(predicted_end(None, 0, 60, 10), 60);
        assert_eq!(predicted_end(None, 0, 60, 70), 70, "never before now");
        assert_eq!(predicted_end(Some(0.0), 0, 60, 0), 1, "a job runs at least a millisecond");
    }
}
