//! Slows down password guessing for one username: after `max_failures`
//! consecutive failures, each further attempt must wait an exponentially
//! growing pause (1 s, 2 s, 4 s … up to `max_wait`) after the last failure,
//! and is refused without checking the password until then. A success
//! clears the count. State is in memory: a restart forgets it, which only
//! ever helps a legitimate user.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

#[derive(Debug)]
struct Failures {
    count: u32,
    last: Instant,
}

#[derive(Debug)]
pub struct LoginThrottle {
    max_failures: u32,
    max_wait: Duration,
    by_user: Mutex<HashMap<String, Failures>>,
}

/// Bound on remembered usernames, so guessing random names cannot grow
/// memory without limit.
const MAX_TRACKED: usize = 10_000;

impl LoginThrottle {
    pub fn new(max_failures: u32, max_wait: Duration) -> Self {
        Self { max_failures, max_wait, by_user: Mutex::new(HashMap::new()) }
    }

    fn wait_after(&self, count: u32) -> Duration {
        if count < self.max_failures {
            return Duration::ZERO;
        }
        let exp = (count - self.max_failures).min(20);
        Duration::from_secs(1u64 << exp).min(self.max_wait)
    }

    /// `Err(wait)` if `username` must wait before the next try.
    pub fn check(&self, username: &str, now: Instant) -> Result<(), Duration> {
        let map = self.by_user.lock().unwrap_or_else(|p| p.into_inner());
        match map.get(username) {
            Some(f) => {
                let until = f.last + self.wait_after(f.count);
                if now < until {
                    Err(until - now)
                } else {
                    Ok(())
                }
            }
            None => Ok(()),
        }
    }

    pub fn record_failure(&self, username: &str, now: Instant) {
        let mut map = self.by_user.lock().unwrap_or_else(|p| p.into_inner());
        if map.len() >= MAX_TRACKED && !map.contains_key(username) {
            let horizon = self.max_wait;
            map.retain(|_, f| now.duration_since(f.last) < horizon);
        }
        let entry = map.entry(username.to_string()).or_insert(Failures { count: 0, last: now });
        entry.count = entry.count.saturating_add(1);
        entry.last = now;
    }

    pub fn record_success(&self, username: &str) {
        self.by_user.lock().unwrap_or_else(|p| p.into_inner()).remove(username);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backs_off_exponentially_after_the_allowed_failures() {
        let t = LoginThrottle::new(3, Duration::from_secs(10));
        let t0 = Instant::now();
        for _ in 0..2 {
            t.record_failure("ann", t0);
            assert!(t.check("ann", t0).is_ok(), "below the limit, no wait");
        }
        t.record_failure("ann", t0);
        assert_eq!(t.check("ann", t0), Err(Duration::from_secs(1)));
        assert!(t.check("ann", t0 + Duration::from_secs(1)).is_ok());
        t.record_failure("ann", t0);
        assert_eq!(t.check("ann", t0), Err(Duration::from_secs(2)));
        for _ in 0..10 {
            t.record_failure("ann", t0);
        }
        assert_eq!(t.check("ann", t0), Err(Duration::from_secs(10)), "capped");
        assert!(t.check("bob", t0).is_ok(), "other users unaffected");
        t.record_success("ann");
        assert!(t.check("ann", t0).is_ok());
    }
}
