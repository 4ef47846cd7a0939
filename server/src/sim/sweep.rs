//! A load sweep: the same trace and policies over several cluster sizes
//! and time-limit models in one command (`jpu-share sim --cluster A
//! --cluster B --time-limit x2 --time-limit user …`). A policy is judged
//! across loads, not on one (a setting tuned to one month's load is what
//! this exists to catch), so every point's full report is written to its
//! own folder and the trade-off — median wait, 8-GPU p95 and p99, max
//! wait, utilisation, fair-share distance per policy and load — to one
//! `sweep.json` and one `report.html`, with every policy judged at every
//! point on policy §11's four targets (`judge`).

use std::fmt::Write as _;

use super::engine::TimeLimitModel;
use super::judge;
use super::metrics::PolicyReport;
use super::sweep_page::{self, Point, Row};
use super::{SimArgs, SimError};

impl Row {
    fn of(r: &PolicyReport) -> Row {
        let eight = r.by_size.get("8");
        Row {
            policy: r.policy.clone(),
            utilisation: r.utilisation_in_window,
            median_wait_s: r.overall.wait_s.p50,
            gpu8_p95_s: eight.map_or(0.0, |g| g.wait_s.p95),
            gpu8_p99_s: eight.map_or(0.0, |g| g.wait_s.p99),
            max_wait_s: r.overall.wait_s.max,
            fair_share_distance: r.fair_share_distance,
            lab_p95_wait_s: r.by_lab.iter().map(|(lab, g)| (lab.clone(), g.wait_s.p95)).collect(),
        }
    }
}

/// `--time-limit` as typed: `user`, or `xF` with F ≥ 1.
pub fn parse_time_limit(text: &str) -> Option<TimeLimitModel> {
    match text {
        "user" => Some(TimeLimitModel::User),
        other => {
            other.strip_prefix('x').and_then(|f| f.parse::<f64>().ok()).filter(|f| *f >= 1.0).map(TimeLimitModel::Times)
        }
    }
}

/// Runs every cluster × time-limit point (`base`'s own cluster and limit
/// are ignored) and writes each point's report under `base.out`, then
/// `sweep.json` and `report.html` there.
pub fn run(base: &SimArgs, clusters: &[String], limits: &[String]) -> Result<Vec<Point>, SimError> {
    let file =
        std::fs::File::open(&base.trace).map_err(|source| SimError::Open { path: base.trace.clone(), source })?;
    let jobs = super::trace::read(std::io::BufReader::new(file))?;
    let demand_gpu_ms: f64 = jobs.iter().map(|j| j.duration_ms as f64 * f64::from(j.num_gpus)).sum();
    let window_ms = match (jobs.iter().map(|j| j.submit_ms).min(), jobs.iter().map(|j| j.submit_ms).max()) {
        (Some(first), Some(last)) if last > first => (last - first) as f64,
        _ => 1.0,
    };
    let mut todo = Vec::new();
    for limit in limits {
        let Some(model) = parse_time_limit(limit) else {
            return Err(SimError::TimeLimit(limit.clone()));
        };
        for cluster in clusters {
            let (_, placements) = super::cluster::parse(cluster)?;
            let gpus = placements.iter().map(|p| p.gpus.len() as u32).sum::<u32>();
            todo.push((cluster.clone(), limit.clone(), model, gpus));
        }
    }
    // the points are independent replays: one per core at a time (a
    // replay is single-threaded), the most loaded (slowest) first, so no
    // long replay is left running alone at the end (measured: 623 s for
    // the policy guide's sweep in the order given)
    let mut order: Vec<usize> = (0..todo.len()).collect();
    order.sort_by_key(|&k| (todo[k].3, k));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let done: std::sync::Mutex<Vec<Option<Result<Point, SimError>>>> =
        std::sync::Mutex::new((0..todo.len()).map(|_| None).collect());
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get()).min(todo.len()).max(1);
    let started = std::time::Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| loop {
                let Some(&k) = order.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed)) else { return };
                let (cluster, limit, model, gpus) = &todo[k];
                let args = SimArgs {
                    trace: base.trace.clone(),
                    cluster: cluster.clone(),
                    policies: base.policies.clone(),
                    out: base.out.join(folder(cluster, limit)),
                    options: super::engine::Options { time_limit: *model, ..base.options.clone() },
                    live_charge: base.live_charge,
                    overestimate: base.overestimate,
                    planned: base.planned,
                    forecast: base.forecast,
                };
                let point = super::run_with(&args, false).map(|reports| {
                    let rows: Vec<Row> = reports.iter().map(Row::of).collect();
                    let labs = judge::lab_demands(&jobs, *gpus, window_ms);
                    Point {
                        cluster: cluster.clone(),
                        time_limit: limit.clone(),
                        gpus: *gpus,
                        offered_load: demand_gpu_ms / (f64::from((*gpus).max(1)) * window_ms),
                        judged: judge::judge(&rows, &labs),
                        rows,
                        labs,
                    }
                });
                let mut done = done.lock().unwrap_or_else(|p| p.into_inner());
                done[k] = Some(point);
                let finished = done.iter().filter(|d| d.is_some()).count();
                eprintln!(
                    "[{finished}/{}] {cluster} --time-limit {limit} done ({:.0} s in all)",
                    todo.len(),
                    started.elapsed().as_secs_f64()
                );
            });
        }
    });
    let mut points = Vec::new();
    for point in done.into_inner().unwrap_or_else(|p| p.into_inner()).into_iter().flatten() {
        points.push(point?);
    }
    let json = serde_json::to_string_pretty(&points).unwrap_or_default();
    super::write(&base.out.join("sweep.json"), &json)?;
    let trace = base.trace.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
    super::write(&base.out.join("report.html"), &sweep_page::render(&format!("Load sweep: {trace}"), &points))?;
    Ok(points)
}

/// A point's folder: its cluster and limit, in characters safe anywhere.
fn folder(cluster: &str, limit: &str) -> String {
    format!("{cluster}_{limit}")
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '.' || c == '_' { c } else { '-' })
        .collect()
}

/// The sweep as a text table (what the command prints).
pub fn table(points: &[Point]) -> String {
    let mut out = format!(
        "{:<16} {:<6} {:>5} {:<18} {:>7} {:>10} {:>10} {:>10} {:>10} {:>9}\n",
        "cluster", "limit", "load", "policy", "util", "wait p50", "8-GPU p95", "8-GPU p99", "max wait", "fair-dist"
    );
    for p in points {
        for r in &p.rows {
            let _ = writeln!(
                out,
                "{:<16} {:<6} {:>5.2} {:<18} {:>6.1}% {:>9.0}s {:>9.1}d {:>9.1}d {:>9.1}d {:>9.3}",
                p.cluster,
                p.time_limit,
                p.offered_load,
                r.policy,
                r.utilisation * 100.0,
                r.median_wait_s,
                r.gpu8_p95_s / 86_400.0,
                r.gpu8_p99_s / 86_400.0,
                r.max_wait_s / 86_400.0,
                r.fair_share_distance
            );
        }
    }
    out.push_str(&verdicts(points));
    out
}

/// Policy §11's four targets per point and policy, as text.
fn verdicts(points: &[Point]) -> String {
    let mark = |met: bool| if met { "met" } else { "MISSED" };
    let mut out = String::from("\npolicy §11 (light labs, fairness, utilisation, 8-GPU p95):\n");
    for p in points {
        for j in &p.judged {
            let _ = writeln!(
                out,
                "{:<16} {:<6} {:>5.2} {:<18} light {} ({} of {} over, worst {:.2}×) · fairness {} · utilisation {} · 8-GPU {}{}",
                p.cluster,
                p.time_limit,
                p.offered_load,
                j.policy,
                mark(j.light_labs.met),
                j.light_labs.over.len(),
                j.light_labs.labs,
                j.light_labs.worst_ratio,
                mark(j.fairness.met),
                mark(j.utilisation.met),
                mark(j.large_jobs.met),
                if j.met { " — all met" } else { "" }
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_parse_as_typed() {
        assert_eq!(parse_time_limit("user"), Some(TimeLimitModel::User));
        assert_eq!(parse_time_limit("x2"), Some(TimeLimitModel::Times(2.0)));
        for bad in ["x0.5", "2", "xx", ""] {
            assert_eq!(parse_time_limit(bad), None, "{bad}");
        }
        assert_eq!(folder("64x8:v100,2x4:a100", "x1.5"), "64x8-v100-2x4-a100_x1.5");
    }

    #[test]
    fn a_sweep_runs_every_point_and_writes_one_table_and_chart() {
        let dir = tempfile::tempdir().unwrap();
        let trace = dir.path().join("t.csv");
        let mut csv = String::from("job_id,submit_time_s,duration_s,num_gpus,user,group,gpu_type\n");
        for i in 0..200 {
            let gpus = [1, 1, 2, 4, 1, 8][i % 6];
            csv.push_str(&format!("j-{i},{},{},{gpus},,lab{},\n", i * 37 % 5000, 60 + (i * 7919) % 3000, i % 4));
        }
        std::fs::write(&trace, csv).unwrap();
        let base = SimArgs {
            trace,
            cluster: String::new(),
            policies: vec!["jpu".into(), "easy".into()],
            out: dir.path().join("out"),
            options: crate::sim::engine::Options { forecast_margin: 0.1, ..Default::default() },
            live_charge: false,
            overestimate: 2.0,
            planned: crate::policy::PlannedParams {
                lift_percent: 100,
                ..crate::config::SchedulerSettings::default().planned_params()
            },
            forecast: false,
        };
        let clusters = ["2x8:v100".to_string(), "1x8:v100".to_string()];
        let points = run(&base, &clusters, &["x2".into(), "user".into()]).unwrap();
        let seen: Vec<(&str, &str, u32)> =
            points.iter().map(|p| (p.cluster.as_str(), p.time_limit.as_str(), p.gpus)).collect();
        assert_eq!(
            seen,
            [("2x8:v100", "x2", 16), ("1x8:v100", "x2", 8), ("2x8:v100", "user", 16), ("1x8:v100", "user", 8)]
        );
        assert!((points[1].offered_load - 2.0 * points[0].offered_load).abs() < 1e-9, "half the GPUs, twice the load");
        for p in &points {
            let names: Vec<&str> = p.rows.iter().map(|r| r.policy.as_str()).collect();
            assert_eq!(names, ["jpu", "easy"]);
            assert!(p.rows.iter().all(|r| r.utilisation > 0.0 && r.max_wait_s >= r.median_wait_s));
            assert!(base.out.join(folder(&p.cluster, &p.time_limit)).join("report.json").is_file());
        }
        let json: serde_json::Value =
            serde_json::from_slice(&std::fs::read(base.out.join("sweep.json")).unwrap()).unwrap();
        assert_eq!(json.as_array().unwrap().len(), 4);
        let html = std::fs::read_to_string(base.out.join("report.html")).unwrap();
        assert!(html.contains("Time limits x2") && html.contains("Time limits user"), "one table per limit model");
        assert_eq!(html.matches("<polyline").count(), 2 * (3 + 4) * 2, "limits × figures × policies");
        assert!(html.contains("light labs") && html.contains("8-GPU p95 ÷ half the seed"), "§11's targets");
        for p in &points {
            let judged: Vec<&str> = p.judged.iter().map(|j| j.policy.as_str()).collect();
            assert_eq!(judged, ["jpu", "easy"], "every policy judged at every point");
            assert_eq!(p.labs.len(), 4);
        }
        assert!(json[0]["judged"][0]["light_labs"]["met"].is_boolean() && json[0]["labs"][0]["light"].is_boolean());
        assert_eq!(table(&points).lines().count(), 1 + 4 * 2 + 2 + 4 * 2);
        let bad = run(&base, &clusters, &["x0.5".into()]);
        assert!(matches!(bad, Err(SimError::TimeLimit(_))));
    }
}
