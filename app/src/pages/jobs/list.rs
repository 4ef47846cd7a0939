//! `/jobs`: the viewer's jobs (every job for admins), filtered by state,
//! newest first, a page at a time. An array's elements show as one row
//! with counts by state and one Cancel; `/jobs?array=ID` lists them.

use crate::api::{jobs_page, CancelArray};
use crate::i18n::{t, t_with, words, Words};
use crate::model::views::ArraySummary;
use crate::model::JobView;
use crate::pages::components::{ConfirmButton, ErrorText, Layout, Time};
use leptos::prelude::*;
use leptos_router::hooks::use_query_map;

/// Filters of the job list: the label's message key and the `state`
/// parameter.
const FILTERS: &[(&str, &str)] = &[
    ("jobs-filter-all", ""),
    ("jobs-filter-waiting", "USER_QUEUE_WAIT,GLOBAL_QUEUE_WAIT"),
    ("jobs-filter-running", "DISPATCHING,RUNNING,CANCELLING"),
    ("jobs-filter-completed", "COMPLETED"),
    ("jobs-filter-failed", "FAILED"),
    ("jobs-filter-cancelled", "CANCELLED"),
];

/// The table's columns (`jobs-col-{column}`).
const COLUMNS: &[&str] = &["job", "user", "state", "gpus", "where", "submitted", "ended"];

/// The words of [`CancelArrayButton`].
const CANCEL_KEYS: &[&str] = &[
    "jobs-cancel-array",
    "jobs-cancel-array-question",
    "jobs-cancel-array-yes",
    "jobs-cancel-array-no",
    "jobs-array-cancelled",
];

#[component]
pub fn JobsPage() -> impl IntoView {
    let query = use_query_map();
    let state = move || query.with(|q| q.get("state").filter(|s| !s.is_empty()));
    let before = move || query.with(|q| q.get("before").and_then(|b| b.parse::<i64>().ok()));
    let array = move || query.with(|q| q.get("array").and_then(|b| b.parse::<i64>().ok()));
    let data =
        Resource::new(move || (state(), before(), array()), |(state, before, array)| jobs_page(state, before, array));
    let href_with = move |state: Option<String>, before: Option<i64>| {
        let mut params: Vec<String> = Vec::new();
        params.extend(array().map(|a| format!("array={a}")));
        params.extend(state.map(|s| format!("state={s}")));
        params.extend(before.map(|b| format!("before={b}")));
        if params.is_empty() {
            "/jobs".to_string()
        } else {
            format!("/jobs?{}", params.join("&"))
        }
    };
    view! {
        <Layout>
            <h1>{move || match array() { Some(a) => t_with("jobs-array-title", &[("id", a.into())]), None => t("nav-jobs") }}</h1>
            <p class="muted">{move || match array() {
                Some(_) => format!("{} ← ", t("jobs-array-intro")),
                None => t("jobs-intro"),
            }}{move || array().map(|_| view! { <a href="/jobs">{t("jobs-all")}</a> })}</p>
            <nav class="filters" aria-label=t("jobs-filter")>
                {FILTERS.iter().map(|(label, value)| {
                    let href = move || href_with(Some(value.to_string()).filter(|v| !v.is_empty()), None);
                    let current = move || state().unwrap_or_default() == *value;
                    view! { <a href=href aria-current=move || current().then_some("page")>{t(label)}</a> }
                }).collect_view()}
            </nav>
            <Transition fallback=|| view! { <p>{t("loading")}</p> }>
                {move || Suspend::new(async move {
                    match data.await {
                        Ok(page) => {
                            let next = page.next.map(|n| href_with(state(), Some(n)));
                            let grouped = array().is_none();
                            view! {
                                {(!grouped).then(|| page.arrays.first().cloned().map(|a| view! { <ArrayHeader array=a/> }))}
                                <JobTable jobs=page.jobs arrays=page.arrays grouped/>
                                {next.map(|href| view! { <p><a href=href rel="next">{t("jobs-older")}</a></p> })}
                            }.into_any()
                        }
                        Err(e) => view! { <ErrorText error=e/> }.into_any(),
                    }
                })}
            </Transition>
        </Layout>
    }
}

/// "3 RUNNING · 12 USER_QUEUE_WAIT", fixed state order.
fn counts_text(a: &ArraySummary) -> String {
    crate::model::JobState::ALL
        .iter()
        .filter_map(|s| a.counts.get(s.as_str()).map(|n| format!("{n} {}", s.as_str())))
        .collect::<Vec<_>>()
        .join(" · ")
}

fn unfinished(a: &ArraySummary) -> bool {
    a.counts.iter().any(|(s, n)| *n > 0 && !matches!(s.as_str(), "COMPLETED" | "FAILED" | "CANCELLED"))
}

#[component]
fn ArrayHeader(array: ArraySummary) -> impl IntoView {
    let limit = array.max_running.map(|n| t_with("jobs-array-limit", &[("n", n.into())])).unwrap_or_default();
    let summary = t_with(
        "jobs-array-summary",
        &[
            ("total", array.total.into()),
            ("spec", array.spec.clone().into()),
            ("limit", limit.into()),
            ("counts", counts_text(&array).into()),
        ],
    );
    view! {
        <p data-testid="array-summary">{summary}</p>
        {unfinished(&array).then(|| view! { <CancelArrayButton id=array.id w=cancel_words()/> })}
    }
}

#[component]
fn JobTable(jobs: Vec<JobView>, arrays: Vec<ArraySummary>, grouped: bool) -> impl IntoView {
    if jobs.is_empty() {
        return view! { <p class="muted" data-testid="jobs">{t("jobs-none")}</p> }.into_any();
    }
    // an array shows once, where its newest element on this page is
    let mut seen = std::collections::HashSet::new();
    let rows = jobs
        .into_iter()
        .filter_map(|j| match j.array.filter(|_| grouped) {
            None => Some(view! { <JobRow j/> }.into_any()),
            Some(a) if seen.insert(a.id) => {
                let summary = arrays.iter().find(|s| s.id == a.id).cloned();
                Some(view! { <ArrayRow j summary/> }.into_any())
            }
            Some(_) => None,
        })
        .collect_view();
    view! {
        <div class="scroll" tabindex="0">
        <table class="table" data-testid="jobs">
            <thead><tr>{COLUMNS.iter().map(|c| view! { <th>{t(&format!("jobs-col-{c}"))}</th> }).collect_view()}</tr></thead>
            <tbody>{rows}</tbody>
        </table>
        </div>
    }
    .into_any()
}

#[component]
fn JobRow(j: JobView) -> impl IntoView {
    let label = match j.array {
        Some(a) => format!("#{} {} [{}]", j.id, j.name, a.index),
        None => format!("#{} {}", j.id, j.name),
    };
    view! {
        <tr data-job=j.id>
            <td><a href=format!("/jobs/{}", j.id)>{label}</a>
                {(j.kind == crate::model::JobKind::Session).then(|| view! { <span class="badge" data-testid="session-badge">{t("jobs-session-badge")}</span> })}</td>
            <td>{j.user.clone()}</td>
            <td><span class="state" data-state=j.state.as_str()>{j.state.as_str()}</span></td>
            <td>{j.num_gpus}</td>
            <td>{match (&j.node, &j.tier) { (Some(n), Some(t)) => format!("{n} ({t})"), _ => String::new() }}</td>
            <td><Time at=j.submitted_at.clone()/></td>
            <td><Time at=j.ended_at.clone()/></td>
        </tr>
    }
}

/// One row for a whole array: its counts by state and one Cancel.
#[component]
fn ArrayRow(j: JobView, summary: Option<ArraySummary>) -> impl IntoView {
    let id = j.array.map(|a| a.id).unwrap_or_default();
    let (counts, total, open) = summary.as_ref().map(|s| (counts_text(s), s.total, unfinished(s))).unwrap_or_default();
    view! {
        <tr data-array=id>
            <td><a href=format!("/jobs?array={id}")>{t_with("jobs-array-row", &[("id", id.into()), ("name", j.name.clone().into()), ("total", total.into())])}</a></td>
            <td>{j.user.clone()}</td>
            <td><span data-testid="array-counts">{counts}</span> {open.then(|| view! { <CancelArrayButton id w=cancel_words()/> })}</td>
            <td>{j.num_gpus}</td>
            <td></td>
            <td><Time at=j.submitted_at.clone()/></td>
            <td></td>
        </tr>
    }
}

/// The words of [`CancelArrayButton`], looked up on the server.
fn cancel_words() -> Words {
    words(CANCEL_KEYS)
}

/// Cancels every unfinished element, after asking once more.
#[island]
fn CancelArrayButton(id: i64, w: Words) -> impl IntoView {
    let cancel = ServerAction::<CancelArray>::new();
    let done = format!(" {}", w.get("jobs-array-cancelled"));
    view! {
        <span class="cancel">
            <ConfirmButton
                label=w.get("jobs-cancel-array")
                question=w.get("jobs-cancel-array-question")
                yes=w.get("jobs-cancel-array-yes")
                no=w.get("jobs-cancel-array-no")
                on_yes=move |_| { cancel.dispatch(CancelArray { id }); }
            />
            {move || cancel.value().get().map(|r| match r {
                Ok(_) => view! { <span role="status" data-testid="array-cancelled">{done.clone()}</span> }.into_any(),
                Err(e) => view! { <ErrorText error=e/> }.into_any(),
            })}
        </span>
    }
}

#[cfg(all(test, feature = "ssr"))]
mod tests {
    use super::*;

    /// The keys this page composes at run time exist in both languages.
    #[test]
    fn every_composed_key_exists() {
        let mut keys: Vec<String> = COLUMNS.iter().map(|c| format!("jobs-col-{c}")).collect();
        keys.extend(FILTERS.iter().map(|(key, _)| key.to_string()));
        keys.extend(CANCEL_KEYS.iter().map(|k| k.to_string()));
        let missing = crate::i18n::missing_keys(keys.iter());
        assert!(missing.is_empty(), "missing: {missing:?}");
    }
}
