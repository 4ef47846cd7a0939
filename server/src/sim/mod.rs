//! `jpu-share sim`: replays a GPU-cluster trace through the same decision
//! function the server runs, in virtual time, next to the baselines
//! operators would otherwise use, and writes `report.json` (deterministic),
//! `report.html` (self-contained charts) and `timing.json` (wall-clock
//! decision times) to the output directory; [`sweep`] does that over
//! several cluster sizes and limit models at once.
//!
//! The guide below (rendered by `cargo doc`) is the reference: how it
//! works, the decisions it makes where the policy is silent, the measurements.
#![doc = include_str!("guide.md")]

pub mod baselines;
pub mod cluster;
pub mod engine;
pub mod forecast;
pub mod html;
pub mod judge;
pub mod metrics;
pub mod outcome;
pub mod sweep;
pub mod sweep_page;
pub mod trace;

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::Serialize;

use engine::{Options, Policy, Replay};

#[derive(Debug, thiserror::Error)]
pub enum SimError {
    #[error("cannot open the trace {path}: {source}")]
    Open { path: PathBuf, source: std::io::Error },
    #[error(transparent)]
    Trace(#[from] trace::TraceError),
    #[error(transparent)]
    Cluster(#[from] cluster::SpecError),
    #[error("unknown policy `{0}` (use jpu, planned, fifo, easy or fairshare-greedy; a design of planned as planned:k=2,x=100,c=true,p=0,d=100,w=36,l=10)")]
    Policy(String),
    #[error("--time-limit must be `user` or `xF` with F ≥ 1 (e.g. x2), not `{0}`")]
    TimeLimit(String),
    #[error("cannot write {path}: {source}")]
    Write { path: PathBuf, source: std::io::Error },
}

pub struct SimArgs {
    pub trace: PathBuf,
    pub cluster: String,
    pub policies: Vec<String>,
    pub out: PathBuf,
    pub options: Options,
    /// `--charge live` for jpu.
    pub live_charge: bool,
    /// EASY's time limit = real duration × this.
    pub overestimate: f64,
    /// `planned`'s settings (a policy `planned:k=…,x=…,c=…` changes its
    /// drains for itself).
    pub planned: crate::policy::PlannedParams,
    /// Measure the start-time forecast (a second replay of `jpu` and
    /// `planned` that asks it about every job).
    pub forecast: bool,
}

#[derive(Serialize)]
struct Report<'a> {
    trace: String,
    cluster: &'a str,
    cycle_ms: i64,
    events_only: bool,
    user_limit: Option<u32>,
    easy_overestimate: f64,
    /// `{min_idle_s, gpus_per_instance}` when backfill was simulated.
    backfill: Option<serde_json::Value>,
    policies: Vec<metrics::PolicyReport>,
}

/// Wall-clock figures of one replay (in `timing.json`, not the report:
/// they differ run to run).
#[derive(Serialize)]
pub struct Timing {
    pub policy: String,
    pub passes: usize,
    pub pass_p50_us: f64,
    pub pass_p99_us: f64,
    pub wall_s: f64,
    /// The measuring replay's wall time, when the forecast was measured.
    pub forecast_wall_s: Option<f64>,
}

fn parse_policy(name: &str, args: &SimArgs) -> Result<Policy, SimError> {
    Ok(match name {
        "jpu" => Policy::Jpu { live_charge: args.live_charge },
        "fifo" => Policy::Fifo,
        "easy" => Policy::Easy { overestimate: args.overestimate },
        "fairshare-greedy" => Policy::FairshareGreedy,
        "planned" => Policy::Planned(args.planned, None),
        other => match other.strip_prefix("planned:") {
            Some(design) => Policy::Planned(
                engine::planned_design(args.planned, design).ok_or_else(|| SimError::Policy(other.to_string()))?,
                Some(design.to_string()),
            ),
            None => return Err(SimError::Policy(other.to_string())),
        },
    })
}

fn write(path: &Path, text: &str) -> Result<(), SimError> {
    std::fs::write(path, text).map_err(|source| SimError::Write { path: path.to_path_buf(), source })
}

/// Runs every requested policy; returns the reports (also written to `out`).
pub fn run(args: &SimArgs) -> Result<Vec<metrics::PolicyReport>, SimError> {
    run_with(args, true)
}

/// [`run`], with progress bars or without (a sweep runs points side by
/// side and says when each ends instead).
pub fn run_with(args: &SimArgs, bars: bool) -> Result<Vec<metrics::PolicyReport>, SimError> {
    let file =
        std::fs::File::open(&args.trace).map_err(|source| SimError::Open { path: args.trace.clone(), source })?;
    let jobs = trace::read(std::io::BufReader::new(file))?;
    let (tiers, placements) = cluster::parse(&args.cluster)?;
    let policies: Vec<Policy> = args.policies.iter().map(|p| parse_policy(p, args)).collect::<Result<_, _>>()?;
    std::fs::create_dir_all(&args.out).map_err(|source| SimError::Write { path: args.out.clone(), source })?;

    let mut reports = Vec::new();
    let mut timings = Vec::new();
    for policy in policies {
        let bar = if bars { indicatif::ProgressBar::new(jobs.len() as u64) } else { indicatif::ProgressBar::hidden() };
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{prefix:>18} [{bar:40}] {pos}/{len} jobs {elapsed_precise} (eta {eta})",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        bar.set_prefix(policy.name());
        let started = Instant::now();
        let replay = engine::replay(&jobs, &tiers, &placements, policy.clone(), args.options.clone(), |done| {
            bar.set_position(done as u64)
        });
        let wall_s = started.elapsed().as_secs_f64();
        bar.finish();
        let measured = args.forecast && policy.is_product();
        let forecast_started = Instant::now();
        let replay = if measured {
            bar.reset();
            bar.set_prefix(format!("{} forecast", policy.name()));
            let second =
                engine::replay_forecasting(&jobs, &tiers, &placements, policy, args.options.clone(), &replay, |done| {
                    bar.set_position(done as u64)
                });
            bar.finish();
            Replay { pass_nanos: replay.pass_nanos, ..second }
        } else {
            replay
        };
        let forecast_wall_s = measured.then(|| forecast_started.elapsed().as_secs_f64());
        let mut nanos = replay.pass_nanos.clone();
        nanos.sort_unstable();
        let pick = |q: f64| {
            nanos.get(((q * nanos.len() as f64) as usize).min(nanos.len().saturating_sub(1))).copied().unwrap_or(0)
                as f64
                / 1e3
        };
        timings.push(Timing {
            policy: replay.policy.clone(),
            passes: nanos.len(),
            pass_p50_us: pick(0.5),
            pass_p99_us: pick(0.99),
            wall_s,
            forecast_wall_s,
        });
        reports.push(metrics::report(&replay));
    }
    let report =
        Report {
            trace: args.trace.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default(),
            cluster: &args.cluster,
            cycle_ms: args.options.cycle_ms,
            events_only: args.options.events_only,
            user_limit: args.options.user_limit,
            easy_overestimate: args.overestimate,
            backfill: args.options.backfill.as_ref().map(
                |b| serde_json::json!({"min_idle_s": b.min_idle_ms / 1000, "gpus_per_instance": b.gpus_per_instance}),
            ),
            policies: reports.clone(),
        };
    let json = serde_json::to_string_pretty(&report).unwrap_or_default();
    write(&args.out.join("report.json"), &json)?;
    write(&args.out.join("timing.json"), &serde_json::to_string_pretty(&timings).unwrap_or_default())?;
    let title = format!("JPU-Share policy comparison: {} on {}", report.trace, args.cluster);
    write(&args.out.join("report.html"), &html::render(&title, &reports, &timings))?;
    Ok(reports)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_trace_gives_a_byte_identical_report() {
        let dir = tempfile::tempdir().unwrap();
        let trace = dir.path().join("t.csv");
        let mut csv = String::from("job_id,submit_time_s,duration_s,num_gpus,user,group,gpu_type\n");
        for i in 0..300 {
            let gpus = [1, 1, 2, 4, 1, 8][i % 6];
            csv.push_str(&format!("j-{i},{},{},{gpus},,lab{},\n", i * 37 % 5000, 60 + (i * 7919) % 3000, i % 5));
        }
        std::fs::write(&trace, csv).unwrap();
        let run_to = |out: &str| {
            let args = SimArgs {
                trace: trace.clone(),
                cluster: "4x8:v100".into(),
                policies: vec!["jpu".into(), "planned".into(), "fifo".into(), "easy".into(), "fairshare-greedy".into()],
                out: dir.path().join(out),
                options: Options { forecast_margin: 0.1, ..Options::default() },
                live_charge: false,
                overestimate: 2.0,
                planned: crate::policy::PlannedParams {
                    max_wait_ms: 72 * 3_600_000,
                    lift_percent: 100,
                    ..crate::config::SchedulerSettings::default().planned_params()
                },
                forecast: true,
            };
            run(&args).unwrap();
            std::fs::read(dir.path().join(out).join("report.json")).unwrap()
        };
        let (a, b) = (run_to("a"), run_to("b"));
        assert!(!a.is_empty());
        assert_eq!(a, b);
        let report: serde_json::Value = serde_json::from_slice(&a).unwrap();
        assert_eq!(report["policies"].as_array().unwrap().len(), 5);
        assert_eq!(report["policies"][0]["policy"], "jpu");
        assert_eq!(report["policies"][1]["policy"], "planned");
        assert_eq!(report["policies"][0]["jobs"], 300);
        for policy in report["policies"].as_array().unwrap() {
            let cdf = policy["wait_cdf_s"]["all"].as_array().unwrap();
            assert_eq!(cdf.len(), 21, "0th to 100th percentile in steps of 5");
            let waits: Vec<f64> = cdf.iter().map(|p| p[1].as_f64().unwrap()).collect();
            assert!(waits.windows(2).all(|w| w[0] <= w[1]), "a CDF never falls: {waits:?}");
            assert_eq!(waits[20], policy["overall"]["wait_s"]["max"].as_f64().unwrap());
        }
        let measured: Vec<bool> =
            report["policies"].as_array().unwrap().iter().map(|p| p.get("forecast").is_some()).collect();
        assert_eq!(measured, [true, true, false, false, false], "only jpu and planned have a forecast");
        let at_submission = &report["policies"][1]["forecast"]["at_submission"]["all"];
        assert!(at_submission["jobs"].as_u64().unwrap() > 0, "{at_submission}");
        let html = std::fs::read_to_string(dir.path().join("a").join("report.html")).unwrap();
        assert!(
            html.contains("Wait CDF, 8-GPU jobs")
                && html.contains("Decision time")
                && html.contains("Start-time forecast"),
            "the CDF charts and pass times are in the page"
        );
    }

    #[test]
    fn unknown_policies_and_missing_traces_are_errors() {
        let args = SimArgs {
            trace: "/nonexistent/trace.csv".into(),
            cluster: "1x8:v100".into(),
            policies: vec!["jpu".into()],
            out: std::env::temp_dir(),
            options: Options { forecast_margin: 0.1, ..Options::default() },
            live_charge: false,
            overestimate: 2.0,
            planned: crate::policy::PlannedParams {
                max_wait_ms: 72 * 3_600_000,
                lift_percent: 100,
                ..crate::config::SchedulerSettings::default().planned_params()
            },
            forecast: false,
        };
        assert!(matches!(run(&args), Err(SimError::Open { .. })));
        assert!(matches!(parse_policy("lottery", &args), Err(SimError::Policy(_))));
    }
}
