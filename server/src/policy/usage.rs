//! Usage arithmetic (policy §2): cost of GPU holding and the one-week
//! half-life decay. Time that runs backwards (an NTP step) counts as zero
//! elapsed time, never as negative cost or negative decay.

use super::model::{Accrued, LabUsage, Millis, Reservation};

pub const HALF_LIFE_MS: f64 = 604_800_000.0;

/// Seconds from `from` to `to`, never negative.
pub fn elapsed_seconds(from: Millis, to: Millis) -> f64 {
    (to.saturating_sub(from)).max(0) as f64 / 1000.0
}

/// `gpus × seconds × tflops`, in TFLOP-seconds.
pub fn cost(gpus: u32, seconds: f64, tflops: f64) -> f64 {
    f64::from(gpus) * seconds.max(0.0) * tflops
}

/// The lab's usage decayed to `now` (not before its `as_of`).
pub fn decayed(usage: &LabUsage, now: Millis) -> f64 {
    let dt = now.saturating_sub(usage.as_of_ms).max(0) as f64;
    usage.value * 0.5f64.powf(dt / HALF_LIFE_MS)
}

/// Decays to `now`, then adds `amount`. `as_of` never moves backwards.
pub fn add(usage: &mut LabUsage, amount: f64, now: Millis) {
    usage.value = decayed(usage, now) + amount.max(0.0);
    usage.as_of_ms = usage.as_of_ms.max(now);
}

/// Adds the reservation's holding since its last accrual up to `now` and
/// moves the accrual mark (never backwards).
pub fn accrue(reservation: &mut Reservation, accrued: &mut Accrued, tflops: f64, now: Millis) {
    let seconds = elapsed_seconds(reservation.accrued_at_ms, now);
    let gpus = reservation.charged_gpus();
    accrued.gpu_seconds += f64::from(gpus) * seconds;
    accrued.cost += cost(gpus, seconds, tflops);
    reservation.accrued_at_ms = reservation.accrued_at_ms.max(now);
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOUR: Millis = 3_600_000;
    const MIN: Millis = 60_000;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-6 * b.abs().max(1.0)
    }

    #[test]
    fn the_policy_test_vectors() {
        // 1 × RTX 4090 for 1 hour
        assert!(close(cost(1, 3600.0, 82.6), 297_360.0));
        // 2 × 4090 for 30 min plus 1 × 4090 reserved for 10 min before
        assert!(close(cost(2, 1800.0, 82.6) + cost(1, 600.0, 82.6), 346_920.0));
        // 1 × 4090 reserved for 5 min, accrued the way the scheduler does
        let mut r =
            Reservation { node: "n".into(), tier: "rtx4090".into(), gpus: vec![0], drained: 0, accrued_at_ms: 0 };
        let mut acc = Accrued::default();
        accrue(&mut r, &mut acc, 82.6, 2 * MIN);
        accrue(&mut r, &mut acc, 82.6, 5 * MIN);
        assert!(close(acc.cost, 24_780.0), "{}", acc.cost);
        assert!(close(acc.gpu_seconds, 300.0));
    }

    #[test]
    fn decay_halves_every_week() {
        let u = LabUsage { lab: 1, value: 1000.0, as_of_ms: 0 };
        assert!(close(decayed(&u, 0), 1000.0));
        assert!(close(decayed(&u, 7 * 24 * HOUR), 500.0));
        assert!(close(decayed(&u, 14 * 24 * HOUR), 250.0));
    }

    #[test]
    fn adding_decays_first() {
        let mut u = LabUsage { lab: 1, value: 1000.0, as_of_ms: 0 };
        add(&mut u, 100.0, 7 * 24 * HOUR);
        assert!(close(u.value, 600.0));
        assert_eq!(u.as_of_ms, 7 * 24 * HOUR);
    }

    #[test]
    fn a_clock_going_backwards_never_makes_negative_cost_or_growth() {
        assert_eq!(elapsed_seconds(10_000, 5_000), 0.0);
        assert_eq!(cost(2, -5.0, 82.6), 0.0);
        let u = LabUsage { lab: 1, value: 1000.0, as_of_ms: 10 * HOUR };
        assert_eq!(decayed(&u, 0), 1000.0, "no negative decay (growth)");
        let mut u2 = u;
        add(&mut u2, -50.0, 0);
        assert_eq!((u2.value, u2.as_of_ms), (1000.0, 10 * HOUR), "as_of never moves back");
        let mut r =
            Reservation { node: "n".into(), tier: "t".into(), gpus: vec![0, 1], drained: 0, accrued_at_ms: 10 * HOUR };
        let mut acc = Accrued::default();
        accrue(&mut r, &mut acc, 82.6, 9 * HOUR);
        assert_eq!(acc, Accrued::default());
        assert_eq!(r.accrued_at_ms, 10 * HOUR, "the same interval is never counted twice");
    }
}

/// A finished stretch of running on one tier.
#[derive(Debug, Clone, Copy)]
pub struct RunSpan<'a> {
    pub tier: &'a str,
    pub tflops: f64,
    pub gpus: u32,
    pub started_ms: Millis,
    pub ended_ms: Millis,
}

/// What a job (or one attempt of it) is charged when it ends, whatever the
/// end (R4): its run, plus reservation time accrued and not yet charged.
pub fn end_charges(
    lab: super::model::LabId,
    job: super::model::JobId,
    run: Option<RunSpan<'_>>,
    accrued: Accrued,
    reservation_tier: &str,
) -> Vec<super::model::Charge> {
    use super::model::{Charge, ChargeKind};
    let mut charges = Vec::with_capacity(2);
    if let Some(run) = run {
        let seconds = elapsed_seconds(run.started_ms, run.ended_ms);
        charges.push(Charge {
            lab,
            job,
            tier: run.tier.to_string(),
            kind: ChargeKind::Run,
            gpu_seconds: f64::from(run.gpus) * seconds,
            amount: cost(run.gpus, seconds, run.tflops),
        });
    }
    if accrued.cost > 0.0 || accrued.gpu_seconds > 0.0 {
        charges.push(Charge {
            lab,
            job,
            tier: reservation_tier.to_string(),
            kind: ChargeKind::Reservation,
            gpu_seconds: accrued.gpu_seconds,
            amount: accrued.cost,
        });
    }
    charges
}
