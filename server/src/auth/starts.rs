//! How many university sign-ins one address may start. Each start keeps
//! a pending sign-in (state, nonce, PKCE verifier) in a session row until
//! its callback or its expiry; anonymous `GET /auth/oidc/login` once
//! stored 469 rows a second from one client, for 8 hours each (#42 O1).
//! Now a pending sign-in expires with its own 10 minutes, and an address
//! starts at most [`PER_MINUTE`] a minute that it does not finish (a
//! finished sign-in gives its start back: a lab behind one NAT address
//! signing in together is not held back).

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Sign-ins one address may start in a minute.
pub const PER_MINUTE: u32 = 30;
/// Addresses remembered at most; past it, windows that ended are dropped,
/// and under a flood from more addresses than this the lightest half: an
/// address over its limit stays refused (clearing the table, as before,
/// let a flood of fresh addresses give every address its minute back).
const MAX_TRACKED: usize = 10_000;
const WINDOW: Duration = Duration::from_secs(60);

#[derive(Debug, Default)]
pub struct SignInStarts(Mutex<HashMap<IpAddr, (Instant, u32)>>);

impl SignInStarts {
    /// Counts a start from `address`; false once it has had its minute's.
    pub fn allow(&self, address: IpAddr, now: Instant) -> bool {
        let address = network_of(address);
        let mut counts = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if counts.len() >= MAX_TRACKED && !counts.contains_key(&address) {
            counts.retain(|_, (since, _)| now.duration_since(*since) < WINDOW);
            if counts.len() >= MAX_TRACKED {
                let mut lightest: Vec<(IpAddr, u32)> = counts.iter().map(|(a, (_, c))| (*a, *c)).collect();
                lightest.sort_unstable_by_key(|(_, count)| *count);
                for (address, _) in lightest.iter().take(MAX_TRACKED / 2) {
                    counts.remove(address);
                }
            }
        }
        let (since, count) = counts.entry(address).or_insert((now, 0));
        if now.duration_since(*since) >= WINDOW {
            (*since, *count) = (now, 0);
        }
        *count += 1;
        *count <= PER_MINUTE
    }

    /// A sign-in from `address` was finished: its start no longer counts
    /// (a lab behind one address signing in together is not held back;
    /// only starts nobody finishes add up).
    pub fn finished(&self, address: IpAddr) {
        let address = network_of(address);
        let mut counts = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, count)) = counts.get_mut(&address) {
            *count = count.saturating_sub(1);
        }
    }
}

/// An IPv6 client is counted by its /64: one host is given a whole one
/// and can pick a fresh address for every request.
fn network_of(address: IpAddr) -> IpAddr {
    match address {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(std::net::Ipv6Addr::from(v6.to_bits() & (u128::MAX << 64))),
        },
        v4 => v4,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_starts_its_minutes_worth_and_no_more() {
        let starts = SignInStarts::default();
        let (one, other) = (IpAddr::from([192, 0, 2, 1]), IpAddr::from([192, 0, 2, 2]));
        let t0 = Instant::now();
        for i in 0..PER_MINUTE {
            assert!(starts.allow(one, t0), "start {}", i + 1);
        }
        assert!(!starts.allow(one, t0), "one past the limit");
        assert!(starts.allow(other, t0), "another address has its own");
        assert!(!starts.allow(one, t0 + WINDOW - Duration::from_millis(1)), "still the same minute");
        assert!(starts.allow(one, t0 + WINDOW), "the next minute");
        // finished sign-ins give their starts back
        let lab = IpAddr::from([192, 0, 2, 9]);
        for i in 0..(3 * PER_MINUTE) {
            assert!(starts.allow(lab, t0), "sign-in {} of a lab behind one address", i + 1);
            starts.finished(lab);
        }
    }

    #[test]
    fn an_ipv6_host_is_counted_by_its_slash_64() {
        let starts = SignInStarts::default();
        let t0 = Instant::now();
        let host = |last: u16| IpAddr::from([0x2001, 0xdb8, 0, 1, 0, 0, 0, last]);
        for i in 0..PER_MINUTE {
            assert!(starts.allow(host(i as u16), t0), "fresh address {i}");
        }
        assert!(!starts.allow(host(999), t0), "another address of the same /64");
        assert!(starts.allow(IpAddr::from([0x2001, 0xdb8, 0, 2, 0, 0, 0, 1]), t0), "another /64");
    }

    #[test]
    fn memory_stays_bounded_under_a_flood_of_addresses() {
        let starts = SignInStarts::default();
        let t0 = Instant::now();
        let greedy = IpAddr::from([198, 51, 100, 7]);
        for _ in 0..=PER_MINUTE {
            starts.allow(greedy, t0);
        }
        for i in 0..(3 * MAX_TRACKED as u32) {
            starts.allow(IpAddr::from((i + 1).to_be_bytes()), t0);
        }
        assert!(starts.0.lock().unwrap().len() <= MAX_TRACKED);
        assert!(!starts.allow(greedy, t0), "a flood of fresh addresses does not give its minute back");
    }
}
