//! Slows down password guessing. Failures are counted per (username,
//! client address) — so guesses from one address cannot lock the same user
//! out at another — and per address across usernames (one address trying
//! many users). Past `max_failures` for a pair (or `max_per_address` for an
//! address), each further attempt must wait an exponentially growing pause
//! (1 s, 2 s, 4 s … up to `max_wait`) after the last failure and is refused
//! without checking the password.
//!
//! An attempt is counted when it begins, before its password is checked
//! ([`LoginThrottle::begin`]), under one lock: of many guesses sent at
//! once, only the first `max_failures` are ever checked. A success takes
//! its own count back and clears the pair. An attempt the server was too
//! busy to check takes its own count back and nothing more: busy is not
//! success (clearing the pair there let a flood from other addresses
//! admit an attacker's guesses in rounds, 23 in 60 s instead of 10).
//! Failures are also remembered per username, so the sign-ins of users
//! nobody is guessing at can be given hashing capacity of their own
//! ([`LoginThrottle::is_clean`]). State is in memory: a restart forgets
//! it, which only ever helps a legitimate user.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy)]
struct Failures {
    count: u32,
    last: Instant,
}

#[derive(Debug, Default)]
struct Counts {
    by_pair: HashMap<(String, IpAddr), Failures>,
    by_address: HashMap<IpAddr, Failures>,
    /// The last failed sign-in per username, from any address.
    by_user: HashMap<String, Failures>,
    /// Where each user last signed in successfully, and when.
    known: HashMap<(String, IpAddr), Instant>,
}

#[derive(Debug)]
pub struct LoginThrottle {
    max_failures: u32,
    max_per_address: u32,
    max_wait: Duration,
    counts: Mutex<Counts>,
}

/// A sign-in attempt that was let through (and counted).
#[derive(Debug)]
#[must_use = "report how the attempt ended"]
pub struct Attempt {
    username: String,
    address: IpAddr,
}

/// Bound on remembered pairs and addresses, so guessing random names from
/// many addresses cannot grow memory without limit.
const MAX_TRACKED: usize = 10_000;

/// How long a user's successful sign-in from an address keeps that
/// address theirs for the reserved lane.
const KNOWN_FOR: Duration = Duration::from_secs(30 * 24 * 3600);

fn wait_after(failures: Option<&Failures>, allowed: u32, max_wait: Duration) -> Option<Instant> {
    let f = failures?;
    if f.count < allowed {
        return None;
    }
    let exp = (f.count - allowed).min(20);
    Some(f.last + Duration::from_secs(1u64 << exp).min(max_wait))
}

fn bump<K: std::hash::Hash + Eq>(map: &mut HashMap<K, Failures>, key: K, now: Instant, horizon: Duration) {
    if map.len() >= MAX_TRACKED {
        map.retain(|_, f| now.duration_since(f.last) < horizon);
    }
    let entry = map.entry(key).or_insert(Failures { count: 0, last: now });
    entry.count = entry.count.saturating_add(1);
    entry.last = now;
}

impl LoginThrottle {
    pub fn new(max_failures: u32, max_per_address: u32, max_wait: Duration) -> Self {
        Self { max_failures, max_per_address, max_wait, counts: Mutex::new(Counts::default()) }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Counts> {
        self.counts.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Lets an attempt through and counts it as a failure until it
    /// succeeds, or says how long to wait.
    pub fn begin(&self, username: &str, address: IpAddr, now: Instant) -> Result<Attempt, Duration> {
        let mut counts = self.lock();
        let pair = (username.to_string(), address);
        let until = [
            wait_after(counts.by_pair.get(&pair), self.max_failures, self.max_wait),
            wait_after(counts.by_address.get(&address), self.max_per_address, self.max_wait),
        ]
        .into_iter()
        .flatten()
        .max();
        if let Some(until) = until.filter(|u| now < *u) {
            return Err(until - now);
        }
        // entries older than the longest wait can no longer slow anyone
        let horizon = self.horizon();
        bump(&mut counts.by_pair, pair, now, horizon);
        bump(&mut counts.by_address, address, now, horizon);
        Ok(Attempt { username: username.to_string(), address })
    }

    /// The attempt's password was right: its pair starts afresh, and its
    /// address gets its count back.
    pub fn succeeded(&self, attempt: Attempt) {
        let now = Instant::now();
        let mut counts = self.lock();
        if counts.known.len() >= MAX_TRACKED {
            counts.known.retain(|_, at| now.duration_since(*at) < KNOWN_FOR);
            if counts.known.len() >= MAX_TRACKED {
                counts.known.clear();
            }
        }
        counts.known.insert((attempt.username.clone(), attempt.address), now);
        counts.by_pair.remove(&(attempt.username, attempt.address));
        if let Some(f) = counts.by_address.get_mut(&attempt.address) {
            f.count = f.count.saturating_sub(1);
        }
    }

    /// The attempt failed: it was counted when it began; its username is
    /// marked as one somebody gets wrong.
    pub fn failed(&self, attempt: Attempt) {
        let now = Instant::now();
        let horizon = self.horizon();
        bump(&mut self.lock().by_user, attempt.username, now, horizon);
    }

    /// The attempt was never checked (no hashing slot in time): it takes
    /// back its own count, and nothing else changes.
    pub fn not_checked(&self, attempt: Attempt) {
        let mut counts = self.lock();
        let pair = (attempt.username, attempt.address);
        if let Some(f) = counts.by_pair.get_mut(&pair) {
            f.count = f.count.saturating_sub(1);
        }
        if let Some(f) = counts.by_address.get_mut(&attempt.address) {
            f.count = f.count.saturating_sub(1);
        }
    }

    /// Whether `username` signing in from `address` gets the lane kept
    /// for people nobody is guessing at: no sign-in as them failed within
    /// the horizon, from anywhere — or they signed in from this address
    /// before (within [`KNOWN_FOR`]), so one wrong guess by someone else
    /// does not cost them their lane (#42 N12).
    pub fn is_clean(&self, username: &str, address: IpAddr, now: Instant) -> bool {
        let horizon = self.horizon();
        let counts = self.lock();
        counts.by_user.get(username).is_none_or(|f| now.duration_since(f.last) >= horizon)
            || counts
                .known
                .get(&(username.to_string(), address))
                .is_some_and(|at| now.saturating_duration_since(*at) < KNOWN_FOR)
    }

    /// How long a failure is remembered.
    fn horizon(&self) -> Duration {
        self.max_wait.max(Duration::from_secs(60))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(last: u8) -> IpAddr {
        IpAddr::from([127, 0, 0, last])
    }

    #[test]
    fn backs_off_exponentially_after_the_allowed_failures() {
        let t = LoginThrottle::new(3, 100, Duration::from_secs(10));
        let t0 = Instant::now();
        for _ in 0..3 {
            t.failed(t.begin("ann", ip(1), t0).expect("below the limit, no wait"));
        }
        assert_eq!(t.begin("ann", ip(1), t0).unwrap_err(), Duration::from_secs(1));
        t.failed(t.begin("ann", ip(1), t0 + Duration::from_secs(1)).unwrap());
        assert_eq!(t.begin("ann", ip(1), t0 + Duration::from_secs(1)).unwrap_err(), Duration::from_secs(2));
        for i in 0..10 {
            let at = t0 + Duration::from_secs(100 * (i + 1));
            t.failed(t.begin("ann", ip(1), at).unwrap());
        }
        let at = t0 + Duration::from_secs(1000);
        assert_eq!(t.begin("ann", ip(1), at).unwrap_err(), Duration::from_secs(10), "capped");
        assert!(t.begin("bob", ip(1), at).is_ok(), "other users unaffected");
        assert!(t.begin("ann", ip(2), at).is_ok(), "the same user from elsewhere is unaffected");
    }

    #[test]
    fn attempts_are_counted_before_they_are_checked() {
        let t = LoginThrottle::new(5, 100, Duration::from_secs(300));
        let t0 = Instant::now();
        // forty guesses at once: five get through, none has ended yet
        let through: Vec<Attempt> = (0..40).filter_map(|_| t.begin("admin", ip(9), t0).ok()).collect();
        assert_eq!(through.len(), 5);
        for a in through {
            t.failed(a);
        }
    }

    #[test]
    fn a_success_clears_its_pair() {
        let t = LoginThrottle::new(2, 100, Duration::from_secs(300));
        let t0 = Instant::now();
        t.failed(t.begin("ann", ip(1), t0).unwrap());
        t.succeeded(t.begin("ann", ip(1), t0).unwrap());
        t.failed(t.begin("ann", ip(1), t0).unwrap());
        assert!(t.begin("ann", ip(1), t0).is_ok(), "the count started again after the success");
    }

    #[test]
    fn an_attempt_never_checked_clears_nothing() {
        let t = LoginThrottle::new(3, 100, Duration::from_secs(300));
        let t0 = Instant::now();
        for _ in 0..3 {
            t.failed(t.begin("admin", ip(1), t0).unwrap());
        }
        // the server was busy, but at the edge: the pair is still spent
        assert!(t.begin("admin", ip(1), t0).is_err());
        let t1 = t0 + Duration::from_secs(1);
        t.not_checked(t.begin("admin", ip(1), t1).expect("the first pause is over"));
        assert!(t.begin("admin", ip(1), t1).is_err(), "busy is not success: still throttled");
        assert!(!t.is_clean("admin", ip(1), t1), "admin is being guessed at");
        assert!(t.is_clean("ann", ip(1), t1), "nobody guessed at ann");
        assert!(t.is_clean("admin", ip(1), t1 + Duration::from_secs(300)), "forgotten after the horizon");
    }

    /// N12: one wrong guess at ann from elsewhere does not take her lane
    /// from the address she signs in from; it does from a new one.
    #[test]
    fn a_guess_at_someone_leaves_them_their_lane_where_they_signed_in_before() {
        let t = LoginThrottle::new(3, 100, Duration::from_secs(300));
        t.succeeded(t.begin("ann", ip(1), Instant::now()).unwrap());
        t.failed(t.begin("ann", ip(9), Instant::now()).unwrap());
        let now = Instant::now();
        assert!(t.is_clean("ann", ip(1), now), "her own address");
        assert!(!t.is_clean("ann", ip(9), now), "the guesser's");
        assert!(!t.is_clean("ann", ip(2), now), "an address she never signed in from");
    }

    #[test]
    fn one_address_trying_many_users_is_slowed_down() {
        let t = LoginThrottle::new(5, 10, Duration::from_secs(300));
        let t0 = Instant::now();
        for i in 0..10 {
            t.failed(t.begin(&format!("user{i}"), ip(7), t0).unwrap());
        }
        assert!(t.begin("user-new", ip(7), t0).is_err(), "the address's budget is spent");
        assert!(t.begin("user-new", ip(8), t0).is_ok(), "another address is not");
    }
}
