//! The Lab usage page's monthly report: the month's rows by user, lab or
//! tier, raw from the charge ledger, and the same as a CSV download.

use crate::i18n::{t, t_with};
use crate::model::views::UsageReport;
use leptos::prelude::*;

/// The month's rows (raw usage from the charge ledger, not decayed) and
/// the same report as a CSV download.
#[component]
pub fn Report(report: UsageReport) -> impl IntoView {
    let month = report.from.get(..7).unwrap_or_default().to_string();
    let by = report.by.clone();
    let csv = format!("/v1/reports/usage?from={}&to={}&by={}&format=csv", report.from, report.to, report.by);
    let title = t_with(
        "report-title",
        &[("from", report.from.clone().into()), ("to", report.to.clone().into()), ("by", report.by.clone().into())],
    );
    let empty = report.rows.is_empty();
    view! {
        <form method="get" action="/usage" class="inline-form" data-testid="report-form">
            <label for="month">{t("report-month")}</label>
            <input id="month" name="month" type="month" value=month/>
            <label for="by">{t("report-by")}</label>
            <select id="by" name="by">
                {["user", "lab", "tier"].into_iter().map(|value| {
                    view! { <option value=value selected=by == value>{value}</option> }
                }).collect_view()}
            </select>
            <button type="submit">{t("report-show")}</button>
        </form>
        <p class="muted">{title}</p>
        <p><a href=csv download data-testid="report-csv">{t("report-csv")}</a></p>
        {if empty {
            view! { <p class="muted" data-testid="report">{t("report-none")}</p> }.into_any()
        } else {
            view! {
                <div class="scroll" tabindex="0">
                <table class="table" data-testid="report">
                    <thead><tr><th>{report.by.clone()}</th><th>{t("report-jobs")}</th><th>{t("report-gpu-hours")}</th><th>"TFLOP·s"</th></tr></thead>
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
