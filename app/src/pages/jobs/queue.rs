//! `/queue`: the global queue in this cycle's order and the viewer's own,
//! refreshing itself every few seconds.

use crate::api::queue_view;
use crate::model::views::QueueEntry;
use crate::pages::components::{use_ticker, ErrorText, Layout, ReasonText, Time};
use leptos::prelude::*;

#[component]
pub fn QueuePage() -> impl IntoView {
    view! { <Layout><QueuePageBody/></Layout> }
}

/// The page's body: an island, run again in the browser (forms, refreshes).
#[island]
fn QueuePageBody() -> impl IntoView {
    let tick = use_ticker(2000);
    let data = Resource::new(move || tick.get(), |_| queue_view());
    view! {
        <h1>"Queue"</h1>
        <p class="muted">"This cycle's order: the lab with the least recent usage goes first. Refreshes every 2 s."</p>
        <Transition fallback=|| view! { <p>"Loading…"</p> }>
            {move || Suspend::new(async move {
                match data.await {
                    Ok(q) => view! {
                        <section aria-labelledby="global-h">
                            <h2 id="global-h">"Global queue"</h2>
                            <QueueTable entries=q.jobs empty="Nothing is waiting." testid="global-queue" total=q.total_waiting/>
                        </section>
                        <section aria-labelledby="mine-h">
                            <h2 id="mine-h">"My personal queue"</h2>
                            <p class="muted">"Jobs over your concurrency limit wait here and enter the global queue as yours finish."</p>
                            <QueueTable entries=q.user_queue empty="Empty." testid="user-queue" total=None/>
                        </section>
                    }.into_any(),
                    Err(e) => view! { <ErrorText error=e/> }.into_any(),
                }
            })}
        </Transition>
    }
}

#[component]
fn QueueTable(
    entries: Vec<QueueEntry>,
    empty: &'static str,
    testid: &'static str,
    total: Option<u32>,
) -> impl IntoView {
    if entries.is_empty() {
        return view! { <p class="muted" data-testid=testid>{empty}</p> }.into_any();
    }
    let shown = entries.len();
    let more = total.map(|total| {
        view! { <p class="muted">{format!("Showing the first {shown} of {total} waiting jobs; the whole queue is at /v1/queue.")}</p> }
    });
    view! {
        {more}
        <div class="scroll" tabindex="0">
        <table class="table cards" data-testid=testid>
            <thead>
                <tr><th>"Rank"</th><th>"Job"</th><th>"Lab"</th><th>"User"</th><th>"GPUs"</th>
                    <th>"Lab usage (TFLOP·s)"</th><th>"Waiting since"</th><th>"Why it waits"</th><th>"Expected start"</th><th>"Reservation"</th></tr>
            </thead>
            <tbody>
                {entries.into_iter().map(|e| {
                    let job = match e.name.clone() {
                        Some(name) => view! { <a href=format!("/jobs/{}", e.id)>{format!("#{} {name}", e.id)}</a> }.into_any(),
                        None => view! { <span class="muted">{format!("#{} (other lab)", e.id)}</span> }.into_any(),
                    };
                    let reservation = e.reservation.clone().map(|r| {
                        let need = e.num_gpus;
                        view! {
                            <progress value=r.gpus max=need aria-label="reserved GPUs"></progress>
                            " " {format!("{}/{} on {} ({})", r.gpus, need, r.node, r.tier)}
                        }
                    });
                    view! {
                        <tr data-job=e.id>
                            <td data-label="Rank">{e.rank.map(|r| r.to_string()).unwrap_or_else(|| "—".into())}</td>
                            <td data-label="Job">{job}</td>
                            <td data-label="Lab">{e.lab.clone()}</td>
                            <td data-label="User">{e.user.clone().unwrap_or_default()}</td>
                            <td data-label="GPUs">{e.num_gpus}</td>
                            <td data-label="Lab usage">{format!("{:.0}", e.lab_usage_tflop_s)}</td>
                            <td data-label="Waiting since"><Time at=e.queue_entered_at.clone()/></td>
                            <td data-label="Why it waits" class="reason">{e.pending_reason.clone().map(|r| view! { <ReasonText reason=r/> })}</td>
                            <td data-label="Expected start" class="estimate">{e.estimated_start.clone().map(|at| view! { "about " <Time at=at/> " (estimate)" })}</td>
                            <td data-label="Reservation">{reservation}</td>
                        </tr>
                    }
                }).collect_view()}
            </tbody>
        </table>
        </div>
    }
    .into_any()
}
