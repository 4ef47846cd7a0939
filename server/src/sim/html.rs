//! `report.html`: the report as one self-contained page (inline SVG, no
//! scripts, no external files) so it reads offline.

use std::fmt::Write;

use super::metrics::PolicyReport;
use super::Timing;

pub(super) const COLOURS: &[&str] = &["#2f5bd3", "#c27803", "#2f7d4f", "#b42318", "#6b4fc7"];

pub(super) fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

fn legend(reports: &[PolicyReport]) -> String {
    let mut out = String::from("<p class=legend>");
    for (i, r) in reports.iter().enumerate() {
        let _ = write!(out, "<span style=\"color:{}\">■</span> {} &nbsp; ", COLOURS[i % COLOURS.len()], esc(&r.policy));
    }
    out + "</p>"
}

/// Utilisation over the submission window, one line per policy.
fn utilisation_chart(reports: &[PolicyReport]) -> String {
    let (w, h) = (720.0, 240.0);
    let max_x = reports.iter().flat_map(|r| r.utilisation_series.last().map(|p| p.0)).fold(1.0, f64::max);
    let mut svg = format!("<svg viewBox=\"0 0 {w} {}\" role=img aria-label=\"Utilisation over time\">", h + 20.0);
    let _ = write!(svg, "<line x1=0 y1={h} x2={w} y2={h} stroke=#999 /><text x=0 y={} font-size=11>0 h</text><text x={} y={} font-size=11 text-anchor=end>{:.0} h</text><text x=2 y=12 font-size=11>100 %</text>", h + 14.0, w, h + 14.0, max_x);
    for (i, r) in reports.iter().enumerate() {
        let points: Vec<String> = r
            .utilisation_series
            .iter()
            .map(|(x, u)| format!("{:.1},{:.1}", x / max_x * w, h - u.clamp(0.0, 1.0) * h))
            .collect();
        let _ = write!(
            svg,
            "<polyline fill=none stroke-width=1.5 stroke=\"{}\" points=\"{}\" />",
            COLOURS[i % COLOURS.len()],
            points.join(" ")
        );
    }
    svg + "</svg>"
}

/// One wait CDF per job-size class, a line per policy; the wait axis is
/// logarithmic (1 s … the longest wait) since waits span six decades.
fn cdf_charts(reports: &[PolicyReport]) -> String {
    let classes: Vec<&String> = reports.first().map(|r| r.wait_cdf_s.keys().collect()).unwrap_or_default();
    let max = reports.iter().flat_map(|r| r.wait_cdf_s.values().flatten().map(|p| p.1)).fold(10.0, f64::max);
    let decades = max.log10().ceil().max(1.0);
    let (w, h) = (330.0, 160.0);
    let x_of = |wait: f64| 30.0 + (wait.max(1.0).log10() / decades).min(1.0) * (w - 40.0);
    let mut out = String::from("<div class=cdfs>");
    for class in classes {
        let label = if class == "all" { "all jobs".to_string() } else { format!("{class}-GPU jobs") };
        let _ = write!(
            out,
            "<figure><svg viewBox=\"0 0 {w} {}\" role=img aria-label=\"Wait CDF, {}\">",
            h + 34.0,
            esc(&label)
        );
        let _ = write!(
            out,
            "<line x1=30 y1={h} x2={} y2={h} stroke=#999 /><line x1=30 y1=0 x2=30 y2={h} stroke=#999 />",
            w - 10.0
        );
        for d in 0..=decades as i32 {
            let x = x_of(10f64.powi(d));
            let _ = write!(out, "<text x={x:.0} y={} font-size=9 text-anchor=middle>1e{d}</text>", h + 12.0);
        }
        let _ = write!(out, "<text x=0 y=10 font-size=9>100%</text><text x=0 y={h} font-size=9>0%</text><text x={} y={} font-size=10 text-anchor=middle>wait (s, log)</text>", w / 2.0, h + 28.0);
        for (i, r) in reports.iter().enumerate() {
            let Some(points) = r.wait_cdf_s.get(class) else { continue };
            let pts: Vec<String> =
                points.iter().map(|(q, wait)| format!("{:.1},{:.1}", x_of(*wait), h - q * h)).collect();
            let _ = write!(
                out,
                "<polyline fill=none stroke-width=1.5 stroke=\"{}\" points=\"{}\" />",
                COLOURS[i % COLOURS.len()],
                pts.join(" ")
            );
        }
        let _ = write!(out, "</svg><figcaption>{}</figcaption></figure>", esc(&label));
    }
    out + "</div>"
}

/// Mean wait per lab, grouped bars per policy.
fn lab_chart(reports: &[PolicyReport]) -> String {
    let labs: Vec<&String> = reports.first().map(|r| r.by_lab.keys().collect()).unwrap_or_default();
    let max = reports.iter().flat_map(|r| r.by_lab.values().map(|g| g.wait_s.mean)).fold(1.0, f64::max);
    let row = 14.0 * reports.len() as f64 + 8.0;
    let mut svg = format!(
        "<svg viewBox=\"0 0 720 {}\" role=img aria-label=\"Mean wait per lab\">",
        row * labs.len() as f64 + 4.0
    );
    for (l, lab) in labs.iter().enumerate() {
        let y0 = l as f64 * row;
        let _ = write!(svg, "<text x=0 y={:.0} font-size=11>{}</text>", y0 + 12.0, esc(lab));
        for (i, r) in reports.iter().enumerate() {
            let wait = r.by_lab.get(*lab).map_or(0.0, |g| g.wait_s.mean);
            let y = y0 + i as f64 * 14.0;
            let _ = write!(svg, "<rect x=110 y={y:.0} height=12 width={:.1} fill=\"{}\" /><text x={:.1} y={:.0} font-size=10>{:.0} s</text>",
                wait / max * 540.0, COLOURS[i % COLOURS.len()], 114.0 + wait / max * 540.0, y + 10.0, wait);
        }
    }
    svg + "</svg>"
}

/// The forecast's accuracy table (empty when it was not measured).
fn forecast_rows(reports: &[PolicyReport]) -> String {
    let mut rows = String::new();
    for r in reports {
        let Some(f) = &r.forecast else { continue };
        for (moment, groups) in [("at submission", &f.at_submission), ("1 h before start", &f.hour_before_start)] {
            for (size, a) in groups {
                let _ = write!(
                    rows,
                    "<tr><td>{}</td><td>{moment}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.0}</td><td>{:.1} %</td><td>{:.1} %</td><td>{:.1} %</td></tr>",
                    esc(&r.policy),
                    esc(size),
                    a.jobs,
                    a.no_estimate,
                    a.median_abs_error_s,
                    a.within_10_min * 100.0,
                    a.within_1_h * 100.0,
                    a.started_later * 100.0,
                );
            }
        }
    }
    if rows.is_empty() {
        return rows;
    }
    format!(
        "<h2>Start-time forecast against the actual start</h2><div class=wide><table><tr><th>policy</th><th>asked</th><th>GPUs</th><th>jobs waiting</th><th>no estimate</th><th>median |error| s</th><th>within ±10 min</th><th>within ±1 h</th><th>started later than estimated</th></tr>{rows}</table></div>"
    )
}

pub fn render(title: &str, reports: &[PolicyReport], timings: &[Timing]) -> String {
    let mut rows = String::new();
    for r in reports {
        let _ = write!(
            rows,
            "<tr><td>{}</td><td>{:.1} %</td><td>{:.0}</td><td>{:.0}</td><td>{:.0}</td><td>{:.0}</td><td>{:.2}</td><td>{:.3}</td><td>{:.3}</td><td>{:.0}</td><td>{:.0} / {:.0} / {:.0}</td><td>{:.0}</td><td>{}</td></tr>",
            esc(&r.policy),
            r.utilisation_in_window * 100.0,
            r.overall.wait_s.p50,
            r.overall.wait_s.p95,
            r.overall.wait_s.p99,
            r.overall.wait_s.max,
            r.overall.bounded_slowdown.mean,
            r.jain_labs_bounded_slowdown,
            r.fair_share_distance,
            r.reservation_gpu_h,
            r.idle_while_waiting.held_by_reservations_gpu_h,
            r.idle_while_waiting.fragmentation_gpu_h,
            r.idle_while_waiting.nothing_fit_gpu_h,
            r.backfill_gpu_h,
            r.rejected_no_fit,
        );
    }
    let mut sizes = String::new();
    for r in reports {
        for (size, g) in &r.by_size {
            let _ = write!(
                sizes,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{:.0}</td><td>{:.0}</td><td>{:.0}</td><td>{:.2}</td></tr>",
                esc(&r.policy),
                esc(size),
                g.jobs,
                g.wait_s.p50,
                g.wait_s.p95,
                g.wait_s.p99,
                g.bounded_slowdown.mean
            );
        }
    }
    let forecasts = forecast_rows(reports);
    let mut passes = String::new();
    for t in timings {
        let _ = write!(
            passes,
            "<tr><td>{}</td><td>{}</td><td>{:.0}</td><td>{:.0}</td><td>{:.1}</td><td>{}</td></tr>",
            esc(&t.policy),
            t.passes,
            t.pass_p50_us,
            t.pass_p99_us,
            t.wall_s,
            t.forecast_wall_s.map_or("–".to_string(), |s| format!("{s:.1}")),
        );
    }
    let body = format!(
        "
<h2>Summary</h2><div class=wide><table><tr><th>policy</th><th>utilisation (submission window)</th><th>wait p50 s</th><th>p95 s</th><th>p99 s</th><th>max s</th><th>mean bounded slowdown</th><th>Jain (labs, slowdown)</th><th>distance to max-min fair share</th><th>reservation GPU-h</th><th>idle while waiting GPU-h: reserved / fragmentation / nothing fit</th><th>backfill GPU-h</th><th>rejected (no fit)</th></tr>{rows}</table></div>
<h2>Utilisation over the submission window</h2>{legend}{util}
<h2>Wait CDF by job size</h2>{legend}{cdfs}
<h2>Wait by job size</h2><table><tr><th>policy</th><th>GPUs</th><th>jobs</th><th>wait p50 s</th><th>p95 s</th><th>p99 s</th><th>mean bounded slowdown</th></tr>{sizes}</table>
<h2>Mean wait per lab</h2>{legend}{labs}
{forecasts}
<h2>Decision time (wall clock, this run)</h2><table><tr><th>policy</th><th>passes</th><th>pass p50 µs</th><th>pass p99 µs</th><th>replay wall s</th><th>forecast-measuring replay wall s</th></tr>{passes}</table>
",
        rows = rows,
        legend = legend(reports),
        util = utilisation_chart(reports),
        sizes = sizes,
        cdfs = cdf_charts(reports),
        passes = passes,
        forecasts = forecasts,
        labs = lab_chart(reports),
    );
    page(title, &body)
}

/// A self-contained page: the reports' shared style, the title, `body`.
pub(super) fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html><html lang=en><head><meta charset=utf-8><title>{t}</title><style>
body{{font-family:system-ui,sans-serif;max-width:1000px;margin:1rem auto;padding:0 1rem;color:#1d2330}}
table{{border-collapse:collapse;margin:0.5rem 0 1.5rem}}td,th{{border-bottom:1px solid #ddd;padding:0.25rem 0.5rem;text-align:right}}
td:first-child,th:first-child{{text-align:left}}svg{{width:100%;height:auto;background:#fafbfc}}.legend{{font-size:0.9rem}}.wide{{overflow-x:auto}}
.cdfs{{display:grid;grid-template-columns:repeat(auto-fill,minmax(300px,1fr));gap:0.5rem}}figure{{margin:0}}figcaption{{font-size:0.85rem;text-align:center}}
</style></head><body><h1>{t}</h1>{body}</body></html>",
        t = esc(title),
    )
}
