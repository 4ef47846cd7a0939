//! `/jobs`: the viewer's jobs (every job for admins), filtered by state,
//! newest first, a page at a time.

use super::short_time;
use crate::api::jobs_page;
use crate::model::JobView;
use crate::pages::components::{ErrorText, Layout};
use leptos::prelude::*;
use leptos_router::hooks::use_query_map;

/// Filters of the job list: label and the `state` parameter.
const FILTERS: &[(&str, &str)] = &[
    ("All", ""),
    ("Waiting", "USER_QUEUE_WAIT,GLOBAL_QUEUE_WAIT"),
    ("Running", "DISPATCHING,RUNNING,CANCELLING"),
    ("Completed", "COMPLETED"),
    ("Failed", "FAILED"),
    ("Cancelled", "CANCELLED"),
];

#[component]
pub fn JobsPage() -> impl IntoView {
    let query = use_query_map();
    let state = move || query.with(|q| q.get("state").filter(|s| !s.is_empty()));
    let before = move || query.with(|q| q.get("before").and_then(|b| b.parse::<i64>().ok()));
    let data = Resource::new(move || (state(), before()), |(state, before)| jobs_page(state, before));
    view! {
        <Layout>
            <h1>"Jobs"</h1>
            <p class="muted">"Your lab's jobs, newest first."</p>
            <nav class="filters" aria-label="Filter by state">
                {FILTERS.iter().map(|(label, value)| {
                    let href = if value.is_empty() { "/jobs".to_string() } else { format!("/jobs?state={value}") };
                    let current = move || state().unwrap_or_default() == *value;
                    view! { <a href=href aria-current=move || current().then_some("page")>{*label}</a> }
                }).collect_view()}
            </nav>
            <Transition fallback=|| view! { <p>"Loading…"</p> }>
                {move || Suspend::new(async move {
                    match data.await {
                        Ok(page) => {
                            let next = page.next.map(|n| match state() {
                                Some(s) => format!("/jobs?state={s}&before={n}"),
                                None => format!("/jobs?before={n}"),
                            });
                            view! {
                                <JobTable jobs=page.jobs/>
                                {next.map(|href| view! { <p><a href=href rel="next">"Older jobs →"</a></p> })}
                            }.into_any()
                        }
                        Err(e) => view! { <ErrorText error=e/> }.into_any(),
                    }
                })}
            </Transition>
        </Layout>
    }
}

#[component]
fn JobTable(jobs: Vec<JobView>) -> impl IntoView {
    if jobs.is_empty() {
        return view! { <p class="muted" data-testid="jobs">"No jobs."</p> }.into_any();
    }
    view! {
        <div class="scroll">
        <table class="table" data-testid="jobs">
            <thead><tr><th>"Job"</th><th>"User"</th><th>"State"</th><th>"GPUs"</th><th>"Where"</th><th>"Submitted"</th><th>"Ended"</th></tr></thead>
            <tbody>
                {jobs.into_iter().map(|j| view! {
                    <tr data-job=j.id>
                        <td><a href=format!("/jobs/{}", j.id)>{format!("#{} {}", j.id, j.name)}</a></td>
                        <td>{j.user.clone()}</td>
                        <td><span class="state" data-state=j.state.as_str()>{j.state.as_str()}</span></td>
                        <td>{j.num_gpus}</td>
                        <td>{match (&j.node, &j.tier) { (Some(n), Some(t)) => format!("{n} ({t})"), _ => String::new() }}</td>
                        <td>{short_time(&Some(j.submitted_at.clone()))}</td>
                        <td>{short_time(&j.ended_at)}</td>
                    </tr>
                }).collect_view()}
            </tbody>
        </table>
        </div>
    }
    .into_any()
}
