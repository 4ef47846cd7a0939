//! Figures per policy from a replay. Everything here is a function of the
//! replay alone, so the same trace and options give the same report.

use std::collections::BTreeMap;

use serde::Serialize;

use super::engine::Replay;
use super::outcome::{round, size_class};

/// Bounded slowdown's floor on run time (a common choice: 10 s).
const BSLD_TAU_MS: f64 = 10_000.0;
const SERIES_POINTS: usize = 100;
/// Points of each wait CDF: the 0th, 5th, … 100th percentile.
const CDF_STEPS: usize = 20;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Spread {
    pub mean: f64,
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
    pub max: f64,
}

fn spread(mut values: Vec<f64>) -> Spread {
    if values.is_empty() {
        return Spread { mean: 0.0, p50: 0.0, p95: 0.0, p99: 0.0, max: 0.0 };
    }
    values.sort_by(f64::total_cmp);
    let rank = |q: f64| values[((q * values.len() as f64).ceil() as usize).clamp(1, values.len()) - 1];
    Spread {
        mean: values.iter().sum::<f64>() / values.len() as f64,
        p50: rank(0.50),
        p95: rank(0.95),
        p99: rank(0.99),
        max: values[values.len() - 1],
    }
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Group {
    pub jobs: usize,
    pub wait_s: Spread,
    pub bounded_slowdown: Spread,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct IdleWhileWaiting {
    pub held_by_reservations_gpu_h: f64,
    pub fragmentation_gpu_h: f64,
    pub nothing_fit_gpu_h: f64,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PolicyReport {
    pub policy: String,
    pub jobs: usize,
    pub rejected_no_fit: usize,
    pub never_started: usize,
    pub total_gpus: u32,
    /// First to last submission, hours since the first.
    pub window_h: f64,
    pub utilisation_in_window: f64,
    /// (hours since first submit, utilisation) over the window.
    pub utilisation_series: Vec<(f64, f64)>,
    pub idle_while_waiting: IdleWhileWaiting,
    pub reservation_gpu_h: f64,
    /// GPU-hours served by LLM backfill within the submission window.
    pub backfill_gpu_h: f64,
    pub overall: Group,
    /// Wait CDF per GPU-count class and "all": (fraction of jobs, wait s).
    pub wait_cdf_s: BTreeMap<String, Vec<(f64, f64)>>,
    /// By GPUs per job: "1", "2", "4", "8", "other".
    pub by_size: BTreeMap<String, Group>,
    pub by_lab: BTreeMap<String, Group>,
    /// Jain's index over labs of mean bounded slowdown (1 = equal).
    pub jain_labs_bounded_slowdown: f64,
    /// Time-averaged (submission window) distance of labs' running GPUs
    /// from their max-min fair share given demand; 0 = perfectly fair.
    pub fair_share_distance: f64,
    /// The start-time forecast's accuracy, when it was measured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub forecast: Option<super::forecast::ForecastReport>,
}

/// The wait at every `1/CDF_STEPS` fraction of the jobs (nearest rank).
fn cdf(samples: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut waits: Vec<f64> = samples.iter().map(|s| s.0).collect();
    if waits.is_empty() {
        return Vec::new();
    }
    waits.sort_by(f64::total_cmp);
    (0..=CDF_STEPS)
        .map(|k| {
            let q = k as f64 / CDF_STEPS as f64;
            let i = ((q * waits.len() as f64).ceil() as usize).clamp(1, waits.len()) - 1;
            (round(q), round(waits[i]))
        })
        .collect()
}

fn group(samples: &[(f64, f64)]) -> Group {
    Group {
        jobs: samples.len(),
        wait_s: spread(samples.iter().map(|s| s.0).collect()),
        bounded_slowdown: spread(samples.iter().map(|s| s.1).collect()),
    }
}

pub fn report(r: &Replay) -> PolicyReport {
    let submits = r.outcomes.iter().map(|o| o.submit_ms);
    let first = submits.clone().min().unwrap_or(0);
    let last = submits.max().unwrap_or(0);
    let window = (last - first).max(1) as f64;

    let mut all = Vec::new();
    let mut by_size: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    let mut by_lab: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    let (mut rejected, mut never) = (0, 0);
    for o in &r.outcomes {
        let Some(start) = o.start_ms else {
            if o.rejected {
                rejected += 1;
            } else {
                never += 1;
            }
            continue;
        };
        let wait = (start - o.submit_ms) as f64;
        let run = o.run_ms as f64;
        let bsld = ((wait + run) / run.max(BSLD_TAU_MS)).max(1.0);
        let sample = (wait / 1000.0, bsld);
        all.push(sample);
        by_size.entry(size_class(o.num_gpus)).or_default().push(sample);
        by_lab.entry(o.lab.clone()).or_default().push(sample);
    }

    let total = f64::from(r.total_gpus.max(1));
    let mut busy_in_window = 0.0;
    let mut series = vec![0.0; SERIES_POINTS];
    let bucket = window / SERIES_POINTS as f64;
    let mut idle =
        IdleWhileWaiting { held_by_reservations_gpu_h: 0.0, fragmentation_gpu_h: 0.0, nothing_fit_gpu_h: 0.0 };
    let mut reserved_h = 0.0;
    let mut backfill_h = 0.0;
    let mut unfair_in_window = 0.0;
    for iv in &r.intervals {
        let hours = (iv.to_ms - iv.from_ms) as f64 / 3.6e6;
        reserved_h += f64::from(iv.reserved_gpus) * hours;
        if iv.waiting {
            idle.held_by_reservations_gpu_h += f64::from(iv.reserved_gpus) * hours;
            if iv.fragmented {
                idle.fragmentation_gpu_h += f64::from(iv.idle_gpus) * hours;
            } else {
                idle.nothing_fit_gpu_h += f64::from(iv.idle_gpus) * hours;
            }
        }
        // utilisation inside the window, and per series bucket
        let (a, b) = (iv.from_ms.max(first), iv.to_ms.min(last));
        if b > a {
            busy_in_window += f64::from(iv.running_gpus) * (b - a) as f64;
            backfill_h += f64::from(iv.backfill_gpus) * (b - a) as f64 / 3.6e6;
            unfair_in_window += iv.unfairness * (b - a) as f64;
            let mut t = a as f64;
            while t < b as f64 {
                let k = (((t - first as f64) / bucket) as usize).min(SERIES_POINTS - 1);
                let edge = (first as f64 + (k + 1) as f64 * bucket).min(b as f64);
                series[k] += f64::from(iv.running_gpus) * (edge - t);
                t = if edge > t { edge } else { b as f64 };
            }
        }
    }
    let utilisation_series = series
        .iter()
        .enumerate()
        .map(|(k, busy)| (round((k as f64 + 0.5) * bucket / 3.6e6), round(busy / (total * bucket))))
        .collect();

    let lab_means: Vec<f64> = by_lab.values().map(|s| s.iter().map(|x| x.1).sum::<f64>() / s.len() as f64).collect();
    let jain = if lab_means.is_empty() {
        1.0
    } else {
        let sum: f64 = lab_means.iter().sum();
        let sq: f64 = lab_means.iter().map(|x| x * x).sum();
        sum * sum / (lab_means.len() as f64 * sq)
    };

    PolicyReport {
        policy: r.policy.clone(),
        jobs: r.outcomes.len(),
        rejected_no_fit: rejected,
        never_started: never,
        total_gpus: r.total_gpus,
        window_h: round(window / 3.6e6),
        utilisation_in_window: round(busy_in_window / (total * window)),
        utilisation_series,
        idle_while_waiting: IdleWhileWaiting {
            held_by_reservations_gpu_h: round(idle.held_by_reservations_gpu_h),
            fragmentation_gpu_h: round(idle.fragmentation_gpu_h),
            nothing_fit_gpu_h: round(idle.nothing_fit_gpu_h),
        },
        reservation_gpu_h: round(reserved_h),
        backfill_gpu_h: round(backfill_h),
        overall: rounded(group(&all)),
        wait_cdf_s: by_size.iter().map(|(k, v)| (k.clone(), cdf(v))).chain([("all".to_string(), cdf(&all))]).collect(),
        by_size: by_size.iter().map(|(k, v)| (k.clone(), rounded(group(v)))).collect(),
        by_lab: by_lab.iter().map(|(k, v)| (k.clone(), rounded(group(v)))).collect(),
        jain_labs_bounded_slowdown: round(jain),
        fair_share_distance: round(unfair_in_window / window),
        forecast: super::forecast::report(&r.outcomes),
    }
}

fn rounded(g: Group) -> Group {
    let r = |s: Spread| Spread {
        mean: round(s.mean),
        p50: round(s.p50),
        p95: round(s.p95),
        p99: round(s.p99),
        max: round(s.max),
    };
    Group { jobs: g.jobs, wait_s: r(g.wait_s), bounded_slowdown: r(g.bounded_slowdown) }
}
