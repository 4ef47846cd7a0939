//! How a policy is judged at one point of the sweep (policy §11), every
//! policy against the same two references at the same point:
//!
//! - **light labs keep the seed's waits**: a lab whose demand over the
//!   window fits its max-min share of the cluster's GPU-hours (water-
//!   filling over the labs that submitted) is *light*; its p95 wait must
//!   stay within max(2 × the seed's, 1 h);
//! - **fair share stays in charge**: fair-share distance at most the
//!   seed's + 0.02;
//! - **utilisation**: at least EASY backfill's − 1.5 points;
//! - **large jobs in bounded time**: the 8-GPU jobs' p95 wait at most
//!   half the seed's.
//!
//! Pure: a function of the points' figures, so the sweep's JSON and page
//! say the same and a test can check each edge.

use serde::Serialize;

use super::engine::max_min_shares;
use super::trace::TraceJob;

/// One policy at one point of the sweep.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    pub policy: String,
    pub utilisation: f64,
    pub median_wait_s: f64,
    pub gpu8_p95_s: f64,
    pub gpu8_p99_s: f64,
    pub max_wait_s: f64,
    pub fair_share_distance: f64,
    /// Each lab's p95 wait (s), for policy §11's light labs.
    pub lab_p95_wait_s: std::collections::BTreeMap<String, f64>,
}

/// The seed policy's and EASY's names in the sweep (the references).
pub const SEED: &str = "jpu";
pub const EASY: &str = "easy";
/// A light lab's p95 may grow to twice the seed's, or to this (s).
pub const LIGHT_FLOOR_S: f64 = 3_600.0;
pub const FAIRNESS_SLACK: f64 = 0.02;
pub const UTILISATION_SLACK: f64 = 0.015;

/// A lab's demand at one cluster size, against its max-min share.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LabDemand {
    pub lab: String,
    pub demand_gpu_h: f64,
    pub share_gpu_h: f64,
    /// Its demand fits its share.
    pub light: bool,
}

/// Each lab's demand (GPU-hours its jobs ask for) against its max-min
/// share of `gpus` over the submission window, heaviest first.
pub fn lab_demands(jobs: &[TraceJob], gpus: u32, window_ms: f64) -> Vec<LabDemand> {
    let mut demand: std::collections::BTreeMap<&str, f64> = Default::default();
    for j in jobs {
        *demand.entry(j.lab.as_str()).or_default() += j.duration_ms as f64 * f64::from(j.num_gpus) / 3.6e6;
    }
    let (labs, asks): (Vec<&str>, Vec<f64>) = demand.into_iter().unzip();
    let capacity = f64::from(gpus) * window_ms / 3.6e6;
    let shares = max_min_shares(capacity, &asks);
    let mut out: Vec<LabDemand> = labs
        .iter()
        .zip(asks.iter().zip(&shares))
        .map(|(lab, (&d, &s))| LabDemand {
            lab: lab.to_string(),
            demand_gpu_h: round1(d),
            share_gpu_h: round1(s),
            // water-filling gives a lab its whole demand exactly when it fits
            light: d <= s * (1.0 + 1e-9),
        })
        .collect();
    out.sort_by(|a, b| b.demand_gpu_h.total_cmp(&a.demand_gpu_h).then_with(|| a.lab.cmp(&b.lab)));
    out
}

fn round1(v: f64) -> f64 {
    (v * 10.0).round() / 10.0
}

/// One target: the policy's figure and the limit it is held to.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Target {
    pub value: f64,
    pub limit: f64,
    pub met: bool,
}

/// A light lab over its limit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LabOver {
    pub lab: String,
    pub p95_wait_s: f64,
    pub limit_s: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LightLabs {
    /// Light labs with jobs at this point.
    pub labs: usize,
    pub over: Vec<LabOver>,
    /// The largest p95 ÷ limit among them (≤ 1: all met).
    pub worst_ratio: f64,
    pub met: bool,
}

/// A policy at one point, on the four targets.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Judgement {
    pub policy: String,
    pub light_labs: LightLabs,
    pub fairness: Target,
    pub utilisation: Target,
    pub large_jobs: Target,
    pub met: bool,
}

/// Every policy of a point's rows, judged; empty when the seed or EASY
/// did not run there (nothing to judge against).
pub fn judge(rows: &[Row], labs: &[LabDemand]) -> Vec<Judgement> {
    let (Some(seed), Some(easy)) = (rows.iter().find(|r| r.policy == SEED), rows.iter().find(|r| r.policy == EASY))
    else {
        return Vec::new();
    };
    rows.iter().map(|r| judge_one(r, seed, easy, labs)).collect()
}

fn judge_one(row: &Row, seed: &Row, easy: &Row, labs: &[LabDemand]) -> Judgement {
    let mut over = Vec::new();
    let (mut light, mut worst) = (0, 0.0f64);
    for lab in labs.iter().filter(|l| l.light) {
        let Some(&p95) = row.lab_p95_wait_s.get(&lab.lab) else { continue };
        light += 1;
        let limit = (2.0 * seed.lab_p95_wait_s.get(&lab.lab).copied().unwrap_or(0.0)).max(LIGHT_FLOOR_S);
        worst = worst.max(p95 / limit);
        if p95 > limit {
            over.push(LabOver { lab: lab.lab.clone(), p95_wait_s: p95, limit_s: limit });
        }
    }
    let light_labs = LightLabs { labs: light, met: over.is_empty(), over, worst_ratio: round3(worst) };
    let fairness = at_most(row.fair_share_distance, seed.fair_share_distance + FAIRNESS_SLACK);
    let utilisation = {
        let limit = round3(easy.utilisation - UTILISATION_SLACK);
        Target { value: row.utilisation, limit, met: row.utilisation >= limit - 1e-9 }
    };
    let large_jobs = at_most(row.gpu8_p95_s, seed.gpu8_p95_s / 2.0);
    let met = light_labs.met && fairness.met && utilisation.met && large_jobs.met;
    Judgement { policy: row.policy.clone(), light_labs, fairness, utilisation, large_jobs, met }
}

fn at_most(value: f64, limit: f64) -> Target {
    let limit = round3(limit);
    Target { value, limit, met: value <= limit + 1e-9 }
}

fn round3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(policy: &str, util: f64, fsd: f64, gpu8: f64, labs: &[(&str, f64)]) -> Row {
        Row {
            policy: policy.into(),
            utilisation: util,
            median_wait_s: 0.0,
            gpu8_p95_s: gpu8,
            gpu8_p99_s: gpu8,
            max_wait_s: 0.0,
            fair_share_distance: fsd,
            lab_p95_wait_s: labs.iter().map(|(l, w)| (l.to_string(), *w)).collect(),
        }
    }

    fn job(lab: &str, hours: f64, gpus: u32) -> TraceJob {
        TraceJob {
            name: "j".into(),
            number: 0,
            submit_ms: 0,
            duration_ms: (hours * 3.6e6) as i64,
            num_gpus: gpus,
            lab: lab.into(),
            user: String::new(),
        }
    }

    #[test]
    fn a_lab_is_light_when_its_demand_fits_its_max_min_share() {
        // 10 GPUs for 10 h = 100 GPU-h over three labs: 10 and 20 fit, the
        // heavy one gets the 70 left of its 300
        let jobs = [job("a", 10.0, 1), job("b", 20.0, 1), job("c", 300.0, 1)];
        let labs = lab_demands(&jobs, 10, 10.0 * 3.6e6);
        let light: Vec<(&str, bool)> = labs.iter().map(|l| (l.lab.as_str(), l.light)).collect();
        assert_eq!(light, [("c", false), ("b", true), ("a", true)]);
        assert_eq!(labs[0].share_gpu_h, 70.0);
    }

    #[test]
    fn each_target_is_met_at_its_edge_and_missed_just_past_it() {
        let labs = [
            LabDemand { lab: "light".into(), demand_gpu_h: 1.0, share_gpu_h: 5.0, light: true },
            LabDemand { lab: "heavy".into(), demand_gpu_h: 50.0, share_gpu_h: 5.0, light: false },
        ];
        let seed = row(SEED, 0.90, 0.100, 20_000.0, &[("light", 7_200.0), ("heavy", 9e5)]);
        let easy = row(EASY, 0.95, 0.300, 5_000.0, &[("light", 9e5), ("heavy", 1.0)]);
        // exactly at every limit: 2 × 7,200 s, 0.12, 0.935, 10,000 s
        let edge = row("planned", 0.935, 0.120, 10_000.0, &[("light", 14_400.0), ("heavy", 9e9)]);
        let past = row("planned-b", 0.934, 0.121, 10_001.0, &[("light", 14_401.0)]);
        let judged = judge(&[seed, easy, edge, past], &labs);
        let edge = &judged[2];
        assert!(edge.met, "{edge:?}");
        assert_eq!(edge.light_labs.labs, 1, "the heavy lab's waits are fair: not judged");
        let past = &judged[3];
        assert_eq!(
            (past.light_labs.met, past.fairness.met, past.utilisation.met, past.large_jobs.met, past.met),
            (false, false, false, false, false)
        );
        assert_eq!(past.light_labs.over[0].limit_s, 14_400.0);
        // EASY buys large jobs with the light lab's waits
        assert!(!judged[1].light_labs.met && judged[1].large_jobs.met);
    }

    #[test]
    fn a_light_lab_the_seed_serves_at_once_may_wait_an_hour() {
        let labs = [LabDemand { lab: "l".into(), demand_gpu_h: 1.0, share_gpu_h: 5.0, light: true }];
        let seed = row(SEED, 0.9, 0.1, 0.0, &[("l", 0.0)]);
        let easy = row(EASY, 0.9, 0.1, 0.0, &[("l", 0.0)]);
        let hour = row("p", 0.9, 0.1, 0.0, &[("l", 3_600.0)]);
        let more = row("q", 0.9, 0.1, 0.0, &[("l", 3_601.0)]);
        let judged = judge(&[seed, easy, hour, more], &labs);
        assert_eq!((judged[2].met, judged[3].met), (true, false));
    }

    #[test]
    fn without_both_references_nothing_is_judged() {
        assert!(judge(&[row(SEED, 0.9, 0.1, 0.0, &[])], &[]).is_empty());
    }
}
