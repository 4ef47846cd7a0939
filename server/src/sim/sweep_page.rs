//! The load sweep's points and their page: per time-limit model, a table
//! and a chart per figure against the offered load, one line per policy
//! (in the style of the policy reports, `html`). The sweep (`sweep`)
//! makes the points; apart from it so that the page and the sweep do not
//! need each other.

use std::fmt::Write;

use serde::Serialize;

use super::html::{esc, page, COLOURS};

pub use super::judge::Row;

/// One cluster size under one time-limit model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Point {
    pub cluster: String,
    pub time_limit: String,
    pub gpus: u32,
    /// GPU-time the trace asks for over the GPU-time the cluster has in
    /// the submission window: above 1, the queue can only grow.
    pub offered_load: f64,
    pub rows: Vec<Row>,
    /// Each lab's demand against its max-min share at this size.
    pub labs: Vec<super::judge::LabDemand>,
    /// Every policy on policy §11's four targets (empty without the
    /// seed and EASY to judge against).
    pub judged: Vec<super::judge::Judgement>,
}

/// One figure of a sweep's row, charted against the load.
type Figure = fn(&Row) -> f64;

/// The load sweep's page: per time-limit model, one table and one chart
/// per figure (median wait, 8-GPU p95, fair-share distance) against the
/// offered load, one line per policy.
pub fn render(title: &str, points: &[Point]) -> String {
    let mut limits: Vec<&str> = points.iter().map(|p| p.time_limit.as_str()).collect();
    limits.dedup();
    let policies: Vec<String> =
        points.first().map(|p| p.rows.iter().map(|r| r.policy.clone()).collect()).unwrap_or_default();
    let mut legend = String::from("<p class=legend>");
    for (i, p) in policies.iter().enumerate() {
        let _ = write!(legend, "<span style=\"color:{}\">■</span> {} &nbsp; ", COLOURS[i % COLOURS.len()], esc(p));
    }
    legend.push_str("</p>");
    let mut body = String::new();
    for limit in limits {
        let mut here: Vec<&Point> = points.iter().filter(|p| p.time_limit == limit).collect();
        here.sort_by(|a, b| a.offered_load.total_cmp(&b.offered_load));
        let _ = write!(body, "<h2>Time limits {}</h2><div class=wide><table><tr><th>cluster</th><th>offered load</th><th>policy</th><th>utilisation</th><th>median wait s</th><th>8-GPU p95 d</th><th>8-GPU p99 d</th><th>max wait d</th><th>fair-share distance</th></tr>", esc(limit));
        for p in &here {
            for r in &p.rows {
                let _ = write!(
                    body,
                    "<tr><td>{}</td><td>{:.2}</td><td>{}</td><td>{:.1} %</td><td>{:.0}</td><td>{:.2}</td><td>{:.2}</td><td>{:.2}</td><td>{:.3}</td></tr>",
                    esc(&p.cluster), p.offered_load, esc(&r.policy), r.utilisation * 100.0, r.median_wait_s,
                    r.gpu8_p95_s / 86_400.0, r.gpu8_p99_s / 86_400.0, r.max_wait_s / 86_400.0, r.fair_share_distance
                );
            }
        }
        body.push_str("</table></div>");
        body.push_str(&legend);
        body.push_str("<div class=cdfs>");
        let figures: [(&str, bool, Figure); 3] = [
            ("median wait (s, log)", true, |r| r.median_wait_s),
            ("8-GPU wait p95 (s, log)", true, |r| r.gpu8_p95_s),
            ("distance to max-min fair share", false, |r| r.fair_share_distance),
        ];
        for (label, log, value) in figures {
            let series = policies
                .iter()
                .map(|policy| {
                    let pts = here
                        .iter()
                        .filter_map(|p| p.rows.iter().find(|r| &r.policy == policy).map(|r| (p.offered_load, value(r))))
                        .collect();
                    (policy.clone(), pts)
                })
                .collect::<Vec<_>>();
            body.push_str(&sweep_chart(label, log, &here, &series));
        }
        body.push_str("</div>");
        body.push_str(&targets(&here, &policies, &legend));
    }
    page(title, &format!("<p>Each point's full report is in its own folder beside this page.</p>{body}"))
}

/// Policy §11's targets: a table (each policy at each point, ✓ or ✗ with
/// the figure and its limit) and a chart per target (the figure over its
/// limit, so 1 — or 0 for the differences — is the edge).
fn targets(here: &[&Point], policies: &[String], legend: &str) -> String {
    let mut out = String::from("<h3>Policy §11's targets</h3><div class=wide><table><tr><th>cluster</th><th>offered load</th><th>policy</th><th>light labs: p95 within max(2× the seed's, 1 h)</th><th>fair-share distance ≤ the seed's + 0.02</th><th>utilisation ≥ EASY's − 1.5 pp</th><th>8-GPU p95 ≤ half the seed's</th><th>all</th></tr>");
    let mark = |met: bool| if met { "✓" } else { "✗" };
    for p in here {
        for j in &p.judged {
            let over: Vec<String> = j
                .light_labs
                .over
                .iter()
                .map(|o| format!("{} {:.1} h &gt; {:.1} h", esc(&o.lab), o.p95_wait_s / 3600.0, o.limit_s / 3600.0))
                .collect();
            let _ = write!(
                out,
                "<tr><td>{}</td><td>{:.2}</td><td>{}</td><td>{} {} of {} over (worst {:.2}×) {}</td><td>{} {:.3} / {:.3}</td><td>{} {:.1} / {:.1} %</td><td>{} {:.2} / {:.2} d</td><td>{}</td></tr>",
                esc(&p.cluster), p.offered_load, esc(&j.policy),
                mark(j.light_labs.met), j.light_labs.over.len(), j.light_labs.labs, j.light_labs.worst_ratio, over.join(", "),
                mark(j.fairness.met), j.fairness.value, j.fairness.limit,
                mark(j.utilisation.met), j.utilisation.value * 100.0, j.utilisation.limit * 100.0,
                mark(j.large_jobs.met), j.large_jobs.value / 86_400.0, j.large_jobs.limit / 86_400.0,
                mark(j.met)
            );
        }
    }
    out.push_str("</table></div>");
    out.push_str(legend);
    out.push_str("<div class=cdfs>");
    type Measure = fn(&super::judge::Judgement) -> f64;
    let charts: [(&str, Measure); 4] = [
        ("light labs: worst p95 ÷ its limit (≤ 1 met)", |j| j.light_labs.worst_ratio),
        ("fair-share distance − its limit (≤ 0 met)", |j| j.fairness.value - j.fairness.limit),
        ("EASY's utilisation − 1.5 pp − this (≤ 0 met)", |j| j.utilisation.limit - j.utilisation.value),
        ("8-GPU p95 ÷ half the seed's (≤ 1 met)", |j| {
            if j.large_jobs.limit > 0.0 {
                j.large_jobs.value / j.large_jobs.limit
            } else {
                0.0
            }
        }),
    ];
    for (label, measure) in charts {
        let series = policies
            .iter()
            .map(|policy| {
                let pts = here
                    .iter()
                    .filter_map(|p| p.judged.iter().find(|j| &j.policy == policy).map(|j| (p.offered_load, measure(j))))
                    .collect();
                (policy.clone(), pts)
            })
            .collect::<Vec<_>>();
        out.push_str(&sweep_chart(label, false, here, &series));
    }
    out.push_str("</div>");
    out
}

/// One figure against the offered load, a line per series.
fn sweep_chart(label: &str, log: bool, points: &[&Point], series: &[(String, Vec<(f64, f64)>)]) -> String {
    let (w, h) = (330.0, 160.0);
    let loads: Vec<f64> = points.iter().map(|p| p.offered_load).collect();
    let (lo, hi) = (loads.first().copied().unwrap_or(0.0), loads.last().copied().unwrap_or(1.0));
    let x_of = |load: f64| 30.0 + if hi > lo { (load - lo) / (hi - lo) } else { 0.5 } * (w - 40.0);
    let all = series.iter().flat_map(|(_, pts)| pts.iter().map(|p| p.1));
    let top = all.clone().fold(if log { 10.0 } else { 0.01 }, f64::max);
    // differences may be below 0: the axis then starts there
    let bottom = if log { 0.0 } else { all.fold(0.0, f64::min) };
    let y_of = |v: f64| {
        let share = if log { v.max(1.0).log10() / top.log10().ceil().max(1.0) } else { (v - bottom) / (top - bottom) };
        h - share.clamp(0.0, 1.0) * h
    };
    let mut out = format!("<figure><svg viewBox=\"0 0 {w} {}\" role=img aria-label=\"{}\">", h + 34.0, esc(label));
    let _ = write!(
        out,
        "<line x1=30 y1={h} x2={} y2={h} stroke=#999 /><line x1=30 y1=0 x2=30 y2={h} stroke=#999 />",
        w - 10.0
    );
    for load in &loads {
        let _ =
            write!(out, "<text x={:.0} y={} font-size=9 text-anchor=middle>{load:.2}</text>", x_of(*load), h + 12.0);
    }
    let _ = write!(out, "<text x={} y={} font-size=10 text-anchor=middle>offered load</text>", w / 2.0, h + 28.0);
    for (i, (_, values)) in series.iter().enumerate() {
        let pts: Vec<String> = values.iter().map(|&(load, v)| format!("{:.1},{:.1}", x_of(load), y_of(v))).collect();
        let _ = write!(
            out,
            "<polyline fill=none stroke-width=1.5 stroke=\"{}\" points=\"{}\" />",
            COLOURS[i % COLOURS.len()],
            pts.join(" ")
        );
    }
    let _ = write!(out, "</svg><figcaption>{}</figcaption></figure>", esc(label));
    out
}
