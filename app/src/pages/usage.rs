//! The lab usage page: every lab's decayed usage (what orders the queue),
//! the viewer's lab's share, and a lab's last 30 days as a server-rendered
//! SVG bar chart split by tier.

use crate::api::{usage_page, usage_report};
use crate::model::views::{LabUsageSeries, UsagePage, UsageReport};
use crate::pages::components::{ErrorText, Layout};
use leptos::prelude::*;
use leptos_router::hooks::use_query_map;

/// Bar colours per tier, in the order tiers first appear.
const PALETTE: &[&str] = &["#2f5bd3", "#2f7d4f", "#c27803", "#6b4fc7", "#b42318"];

#[component]
pub fn UsagePageView() -> impl IntoView {
    let query = use_query_map();
    let lab = move || query.with(|q| q.get("lab"));
    let data = Resource::new(lab, usage_page);
    let month = move || query.with(|q| q.get("month").filter(|m| !m.is_empty()));
    let by = move || query.with(|q| q.get("by").filter(|b| ["lab", "user", "tier"].contains(&b.as_str())));
    let report =
        Resource::new(move || (month(), by()), |(month, by)| usage_report(month, by.unwrap_or_else(|| "user".into())));
    view! {
        <Layout>
            <h1>"Lab usage"</h1>
            <Transition fallback=|| view! { <p>"Loading…"</p> }>
                {move || Suspend::new(async move {
                    match data.await {
                        Ok(page) => view! { <Usage page/> }.into_any(),
                        Err(e) => view! { <ErrorText error=e/> }.into_any(),
                    }
                })}
            </Transition>
            <section aria-labelledby="report-h">
                <h2 id="report-h">"Monthly report"</h2>
                <form method="get" action="/usage" class="inline-form" data-testid="report-form">
                    <label for="month">"Month"</label>
                    <input id="month" name="month" type="month" value=move || month().unwrap_or_default()/>
                    <label for="by">"By"</label>
                    <select id="by" name="by">
                        {[("user", "user"), ("lab", "lab"), ("tier", "tier")].into_iter().map(|(value, label)| {
                            let chosen = move || by().as_deref().unwrap_or("user") == value;
                            view! { <option value=value selected=chosen>{label}</option> }
                        }).collect_view()}
                    </select>
                    <button type="submit">"Show"</button>
                </form>
                <Transition fallback=|| view! { <p>"Loading…"</p> }>
                    {move || Suspend::new(async move {
                        match report.await {
                            Ok(r) => view! { <Report report=r/> }.into_any(),
                            Err(e) => view! { <ErrorText error=e/> }.into_any(),
                        }
                    })}
                </Transition>
            </section>
        </Layout>
    }
}

/// The month's rows (raw usage from the charge ledger, not decayed) and
/// the same report as a CSV download.
#[component]
fn Report(report: UsageReport) -> impl IntoView {
    let csv = format!("/v1/reports/usage?from={}&to={}&by={}&format=csv", report.from, report.to, report.by);
    let title = format!(
        "{} to {}, by {} (raw usage, research and reservation charges, not decayed)",
        report.from, report.to, report.by
    );
    let empty = report.rows.is_empty();
    view! {
        <p class="muted">{title}</p>
        <p><a href=csv download data-testid="report-csv">"Download CSV"</a></p>
        {if empty {
            view! { <p class="muted" data-testid="report">"No usage in this month."</p> }.into_any()
        } else {
            view! {
                <div class="scroll">
                <table class="table" data-testid="report">
                    <thead><tr><th>{report.by.clone()}</th><th>"Jobs"</th><th>"GPU-hours"</th><th>"TFLOP·s"</th></tr></thead>
                    <tbody>
                        {report.rows.into_iter().map(|r| view! {
                            <tr><td>{r.group}</td><td>{r.jobs}</td><td>{format!("{:.2}", r.gpu_hours)}</td><td>{format!("{:.0}", r.tflop_s)}</td></tr>
                        }).collect_view()}
                    </tbody>
                </table>
                </div>
            }.into_any()
        }}
    }
}

#[component]
fn Usage(page: UsagePage) -> impl IntoView {
    let total: f64 = page.labs.iter().map(|l| l.usage_tflop_s).sum();
    let mine = page.labs.iter().find(|l| l.name == page.my_lab).map(|l| l.usage_tflop_s).unwrap_or(0.0);
    let mut order: Vec<_> = page.labs.iter().collect();
    order.sort_by(|a, b| a.usage_tflop_s.total_cmp(&b.usage_tflop_s));
    let position = order.iter().position(|l| l.name == page.my_lab).map(|p| p + 1).unwrap_or(0);
    let share = if total > 0.0 { 100.0 * mine / total } else { 0.0 };
    let summary = format!(
        "{} has {:.0}% of all labs' recent usage and is {} of {} by usage (lowest first): its waiting jobs go before those of the {} lab(s) that used more.",
        page.my_lab,
        share,
        position,
        page.labs.len(),
        page.labs.len().saturating_sub(position)
    );
    view! {
        <p data-testid="share">{summary}</p>
        <p class="muted">"Usage is GPU-seconds × the tier's TFLOPS, halved every week, so old usage fades."</p>
        <div class="scroll">
        <table class="table" data-testid="labs">
            <thead><tr><th>"Lab"</th><th>"Usage now (TFLOP·s)"</th><th>"Share"</th><th>"GPUs running"</th><th>"Jobs waiting"</th><th></th></tr></thead>
            <tbody>
                {page.labs.iter().map(|l| {
                    let pct = if total > 0.0 { 100.0 * l.usage_tflop_s / total } else { 0.0 };
                    view! {
                        <tr>
                            <td>{l.name.clone()}</td>
                            <td>{format!("{:.0}", l.usage_tflop_s)}</td>
                            <td>{format!("{pct:.0}%")}</td>
                            <td>{l.running_gpus}</td>
                            <td>{l.queued_jobs}</td>
                            <td><a href=format!("/usage?lab={}", l.name)>"30 days"</a></td>
                        </tr>
                    }
                }).collect_view()}
            </tbody>
        </table>
        </div>
        <h2>{format!("{}: the last 30 days", page.series.lab)}</h2>
        <Chart series=page.series/>
    }
}

/// Stacked daily bars by tier, with a text table for screen readers.
#[component]
fn Chart(series: LabUsageSeries) -> impl IntoView {
    let mut tiers: Vec<String> = Vec::new();
    for day in &series.days {
        for t in &day.by_tier {
            if !tiers.contains(&t.tier) {
                tiers.push(t.tier.clone());
            }
        }
    }
    let colour = |tier: &str| PALETTE[tiers.iter().position(|t| t == tier).unwrap_or(0) % PALETTE.len()];
    let max = series.days.iter().map(|d| d.usage_tflop_s).fold(0.0, f64::max);
    let (width, height, bar) = (620.0, 200.0, 620.0 / series.days.len().max(1) as f64);
    let mut rects = Vec::new();
    for (i, day) in series.days.iter().enumerate() {
        let mut y = height;
        for t in &day.by_tier {
            let h = if max > 0.0 { height * t.usage_tflop_s / max } else { 0.0 };
            y -= h;
            rects.push((
                i as f64 * bar + 1.0,
                y,
                (bar - 2.0).max(1.0),
                h,
                colour(&t.tier),
                format!("{} {}: {:.0}", day.date, t.tier, t.usage_tflop_s),
            ));
        }
    }
    let total: f64 = series.days.iter().map(|d| d.usage_tflop_s).sum();
    view! {
        <figure class="chart">
            <svg viewBox=format!("0 0 {width} {height}") role="img" aria-label=format!("Daily usage of {}, 30 days, {:.0} TFLOP·s in all", series.lab, total) data-testid="usage-chart">
                <line x1="0" y1=height x2=width y2=height stroke="#9aa3b2"/>
                {rects.into_iter().map(|(x, y, w, h, fill, title)| view! {
                    <rect x=x y=y width=w height=h fill=fill><title>{title}</title></rect>
                }).collect_view()}
            </svg>
            <figcaption>
                {format!("{} to {} · peak {:.0} TFLOP·s/day · ", series.days.first().map(|d| d.date.clone()).unwrap_or_default(), series.days.last().map(|d| d.date.clone()).unwrap_or_default(), max)}
                {tiers.iter().map(|t| view! { <span class="key"><span class="swatch" style=format!("background:{}", colour(t))></span>{t.clone()}" "</span> }).collect_view()}
            </figcaption>
        </figure>
    }
}
