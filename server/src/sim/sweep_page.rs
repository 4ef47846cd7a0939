//! The load sweep's points and their page: per time-limit model, a table
//! and a chart per figure against the offered load, one line per policy
//! (in the style of the policy reports, `html`). The sweep (`sweep`)
//! makes the points; apart from it so that the page and the sweep do not
//! need each other.

use std::fmt::Write;

use serde::Serialize;

use super::html::{esc, page, COLOURS};

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
}

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
            body.push_str(&sweep_chart(label, log, &here, &policies, value));
        }
        body.push_str("</div>");
    }
    page(title, &format!("<p>Each point's full report is in its own folder beside this page.</p>{body}"))
}

/// One figure against the offered load, a line per policy.
fn sweep_chart(label: &str, log: bool, points: &[&Point], policies: &[String], value: fn(&Row) -> f64) -> String {
    let (w, h) = (330.0, 160.0);
    let loads: Vec<f64> = points.iter().map(|p| p.offered_load).collect();
    let (lo, hi) = (loads.first().copied().unwrap_or(0.0), loads.last().copied().unwrap_or(1.0));
    let x_of = |load: f64| 30.0 + if hi > lo { (load - lo) / (hi - lo) } else { 0.5 } * (w - 40.0);
    let all = points.iter().flat_map(|p| p.rows.iter().map(value));
    let top = all.fold(if log { 10.0 } else { 0.01 }, f64::max);
    let y_of = |v: f64| {
        let share = if log { v.max(1.0).log10() / top.log10().ceil().max(1.0) } else { v / top };
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
    for (i, policy) in policies.iter().enumerate() {
        let pts: Vec<String> = points
            .iter()
            .filter_map(|p| p.rows.iter().find(|r| &r.policy == policy).map(|r| (p.offered_load, value(r))))
            .map(|(load, v)| format!("{:.1},{:.1}", x_of(load), y_of(v)))
            .collect();
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
