//! The lab usage page: every lab's decayed usage (what orders the queue),
//! the viewer's lab's standing in words, a lab's last 30 days as a chart
//! ([`chart`]) and a monthly report with its CSV ([`report`]).

mod chart;
mod report;

use chart::Chart;
use report::Report;

use crate::api::{usage_page, usage_report};
use crate::i18n::{t, t_with};
use crate::model::views::UsagePage;
use crate::pages::components::{ErrorText, Layout};
use leptos::prelude::*;
use leptos_router::hooks::use_query_map;

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
            <h1>{t("usage-title")}</h1>
            <Transition fallback=|| view! { <p>{t("loading")}</p> }>
                {move || Suspend::new(async move {
                    match data.await {
                        Ok(page) => view! { <Usage page/> }.into_any(),
                        Err(e) => view! { <ErrorText error=e/> }.into_any(),
                    }
                })}
            </Transition>
            <section aria-labelledby="report-h">
                <h2 id="report-h">{t("usage-report")}</h2>
                <Transition fallback=|| view! { <p>{t("loading")}</p> }>
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

#[component]
fn Usage(page: UsagePage) -> impl IntoView {
    let total: f64 = page.labs.iter().map(|l| l.usage_tflop_s).sum();
    let mine = page.labs.iter().find(|l| l.name == page.my_lab).map(|l| l.usage_tflop_s).unwrap_or(0.0);
    let share = if total > 0.0 { 100.0 * mine / total } else { 0.0 };
    let summary = standing(&page.my_lab, share, page.labs.iter().map(|l| l.usage_tflop_s), mine);
    view! {
        <p data-testid="share">{summary}</p>
        <p class="muted">{t("usage-explain")}</p>
        <div class="scroll" tabindex="0">
        <table class="table" data-testid="labs">
            <thead><tr><th>{t("usage-col-lab")}</th><th>{t("usage-col-usage")}</th><th>{t("usage-col-share")}</th><th>{t("usage-col-running")}</th><th>{t("usage-col-waiting")}</th><th></th></tr></thead>
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
                            <td><a href=format!("/usage?lab={}", l.name)>{t("usage-30-days")}</a></td>
                        </tr>
                    }
                }).collect_view()}
            </tbody>
        </table>
        </div>
        <h2>{t_with("usage-last-30", &[("lab", page.series.lab.clone().into())])}</h2>
        <Chart series=page.series/>
    }
}

/// The viewer's lab's standing, for people: "Your lab (demo-lab) used 80 %
/// of all labs' recent GPU time; 1 lab used less and goes ahead of you."
fn standing(lab: &str, share: f64, usages: impl Iterator<Item = f64>, mine: f64) -> String {
    let (mut less, mut more) = (0u32, 0u32);
    for u in usages {
        if u < mine {
            less += 1;
        } else if u > mine {
            more += 1;
        }
    }
    t_with(
        "usage-standing",
        &[("lab", lab.into()), ("share", format!("{share:.0}").into()), ("less", less.into()), ("more", more.into())],
    )
}

#[cfg(all(test, feature = "ssr"))]
mod tests {
    #[test]
    fn the_standing_reads_as_a_sentence() {
        let s = super::standing("demo-lab", 80.0, [800.0, 200.0].into_iter(), 800.0);
        assert_eq!(
            s,
            "Your lab (demo-lab) used 80 % of all labs' recent GPU time; 1 lab used less and goes ahead of you."
        );
        let s = super::standing("a", 10.0, [10.0, 50.0, 40.0].into_iter(), 10.0);
        assert_eq!(s, "Your lab (a) used 10 % of all labs' recent GPU time; no lab used less, so your waiting jobs are first in line; 2 labs used more and wait behind you.");
    }
}
