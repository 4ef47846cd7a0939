//! A lab's last 30 days as a server-rendered SVG: stacked daily bars by
//! tier on labelled axes, each day's values on hover and on keyboard focus
//! (a day is focusable), and the same numbers as a table — TFLOP·s and
//! GPU-hours — for screen readers and anyone who wants them.

use crate::i18n::{t, t_with};
use crate::model::views::LabUsageSeries;
use leptos::prelude::*;

/// Bar colours per tier, in the order tiers first appear.
const PALETTE: &[&str] = &["#2f5bd3", "#2f7d4f", "#c27803", "#6b4fc7", "#b42318"];
/// The plot inside the SVG: left margin for the value axis, bottom for days.
const W: f64 = 660.0;
const H: f64 = 240.0;
const LEFT: f64 = 56.0;
const BOTTOM: f64 = 34.0;
const TOP: f64 = 14.0;

/// 1234 → "1.2k", 2500000 → "2.5M".
fn compact(v: f64) -> String {
    match v {
        v if v >= 1e6 => format!("{:.1}M", v / 1e6),
        v if v >= 1e3 => format!("{:.1}k", v / 1e3),
        v if v < 10.0 && v.fract() != 0.0 => format!("{v:.1}"),
        v => format!("{v:.0}"),
    }
}

/// A round top for the value axis at or above `max` (1, 2 or 5 × 10ⁿ).
fn nice_top(max: f64) -> f64 {
    if max <= 0.0 {
        return 1.0;
    }
    let step = 10f64.powf(max.log10().floor());
    [1.0, 2.0, 5.0, 10.0].iter().map(|m| m * step).find(|t| *t >= max).unwrap_or(10.0 * step)
}

/// `2026-12-04` → `Dec 4`.
fn short_day(date: &str) -> String {
    const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    let month: usize = date.get(5..7).and_then(|m| m.parse().ok()).unwrap_or(1);
    let day: u32 = date.get(8..10).and_then(|d| d.parse().ok()).unwrap_or(1);
    format!("{} {day}", MONTHS[month.clamp(1, 12) - 1])
}

#[component]
pub fn Chart(series: LabUsageSeries) -> impl IntoView {
    let mut tiers: Vec<String> = Vec::new();
    for t in series.days.iter().flat_map(|d| &d.by_tier) {
        if !tiers.contains(&t.tier) {
            tiers.push(t.tier.clone());
        }
    }
    let colour = |tier: &str| PALETTE[tiers.iter().position(|t| t == tier).unwrap_or(0) % PALETTE.len()];
    let top = nice_top(series.days.iter().map(|d| d.usage_tflop_s).fold(0.0, f64::max));
    let (plot_w, plot_h) = (W - LEFT - 8.0, H - BOTTOM - TOP);
    let slot = plot_w / series.days.len().max(1) as f64;
    let y_of = |v: f64| TOP + plot_h - plot_h * v / top;
    let ticks: Vec<f64> = (0..=4).map(|i| top * f64::from(i) / 4.0).collect();
    let days = series.days.clone();
    let last = days.len().saturating_sub(1);
    let total: f64 = days.iter().map(|d| d.usage_tflop_s).sum();
    let total_hours: f64 = days.iter().map(|d| d.gpu_hours).sum();
    let label = t_with(
        "chart-label",
        &[
            ("lab", series.lab.clone().into()),
            ("total", compact(total).into()),
            ("hours", format!("{total_hours:.1}").into()),
        ],
    );
    view! {
        <figure class="chart">
            <svg viewBox=format!("0 0 {W} {H}") role="group" aria-label=label data-testid="usage-chart">
                // value axis: gridlines with their values, and its title
                {ticks.iter().map(|v| view! {
                    <line x1=LEFT x2=W - 8.0 y1=y_of(*v) y2=y_of(*v) class="grid"/>
                    <text x=LEFT - 6.0 y=y_of(*v) + 4.0 text-anchor="end" class="tick">{compact(*v)}</text>
                }).collect_view()}
                <text x="12" y=TOP + plot_h / 2.0 class="axis-title" text-anchor="middle"
                    transform=format!("rotate(-90 12 {})", TOP + plot_h / 2.0)>{t("chart-axis")}</text>
                <line x1=LEFT x2=W - 8.0 y1=TOP + plot_h y2=TOP + plot_h class="axis"/>
                // one focusable group per day: its bars, its day tick every
                // 5 days, and its values shown on hover or focus
                {days.iter().enumerate().map(|(i, day)| {
                    let x = LEFT + i as f64 * slot;
                    let mut y = TOP + plot_h;
                    let bars = day.by_tier.iter().map(|t| {
                        let h = plot_h * t.usage_tflop_s / top;
                        y -= h;
                        view! { <rect x=x + 1.0 y=y width=(slot - 2.0).max(1.0) height=h fill=colour(&t.tier)/> }
                    }).collect_view();
                    let value = format!("{}: {} TFLOP·s, {:.2} GPU-hours", short_day(&day.date), compact(day.usage_tflop_s), day.gpu_hours);
                    let tick = (i % 5 == 0 || i == last).then(|| view! {
                        <text x=x + slot / 2.0 y=H - BOTTOM + 16.0 text-anchor="middle" class="tick">{short_day(&day.date)}</text>
                    });
                    let anchor = if i > days.len() / 2 { "end" } else { "start" };
                    let (label, title) = (value.clone(), value.clone());
                    view! {
                        <g class="day" tabindex="0" role="img" aria-label=label>
                            <title>{title}</title>
                            <rect x=x y=TOP width=slot height=plot_h class="hit"/>
                            {bars}
                            {tick}
                            <text x=x + slot / 2.0 y=TOP + 10.0 text-anchor=anchor class="value">{value}</text>
                        </g>
                    }
                }).collect_view()}
                <text x=LEFT + plot_w / 2.0 y=H - 2.0 text-anchor="middle" class="axis-title">{t("chart-day-axis")}</text>
            </svg>
            <figcaption>
                {tiers.iter().map(|t| view! { <span class="key"><span class="swatch" style=format!("background:{}", colour(t))></span>{t.clone()}" "</span> }).collect_view()}
                {t("chart-hint")}
            </figcaption>
        </figure>
        <details class="chart-table">
            <summary>{t("chart-table")}</summary>
            <div class="scroll" tabindex="0">
            <table class="table" data-testid="usage-table">
                <thead><tr><th>{t("chart-col-day")}</th><th>"TFLOP·s"</th><th>{t("report-gpu-hours")}</th><th>{t("chart-col-tier")}</th></tr></thead>
                <tbody>
                    {days.iter().rev().filter(|d| d.usage_tflop_s > 0.0).map(|d| view! {
                        <tr>
                            <td>{d.date.clone()}</td>
                            <td>{format!("{:.0}", d.usage_tflop_s)}</td>
                            <td>{format!("{:.2}", d.gpu_hours)}</td>
                            <td>{d.by_tier.iter().map(|t| format!("{} {:.0} TFLOP·s / {:.2} h", t.tier, t.usage_tflop_s, t.gpu_hours)).collect::<Vec<_>>().join("; ")}</td>
                        </tr>
                    }).collect_view()}
                </tbody>
            </table>
            </div>
        </details>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axis_values_are_round_and_short() {
        assert_eq!(nice_top(777.0), 1000.0);
        assert_eq!(nice_top(120.0), 200.0);
        assert_eq!(nice_top(0.0), 1.0);
        assert_eq!(compact(1234.0), "1.2k");
        assert_eq!(compact(2_500_000.0), "2.5M");
        assert_eq!(compact(0.5), "0.5", "small ticks keep a decimal");
        assert_eq!(short_day("2026-12-04"), "Dec 4");
    }
}
