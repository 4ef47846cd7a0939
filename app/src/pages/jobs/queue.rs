//! `/queue`: the global queue in this cycle's order and the viewer's own,
//! refreshing itself every few seconds. The island gets its words as a
//! prop and each reason in words from the server function, both in the
//! reader's language.

use crate::api::queue_view;
use crate::i18n::{words, Words};
use crate::model::views::QueueEntry;
use crate::pages::components::{use_ticker, ErrorText, Layout, ReasonText, Time};
use leptos::prelude::*;

/// The messages the queue island shows.
const KEYS: &[&str] = &[
    "reason-how",
    "queue-title",
    "queue-intro",
    "queue-global",
    "queue-mine",
    "queue-mine-intro",
    "queue-nothing",
    "queue-empty",
    "queue-showing",
    "queue-col-rank",
    "queue-col-job",
    "queue-col-lab",
    "queue-col-user",
    "queue-col-gpus",
    "queue-col-usage",
    "queue-col-since",
    "queue-col-why",
    "queue-col-start",
    "queue-col-reservation",
    "queue-other-lab",
    "queue-about",
    "queue-estimate",
    "queue-reserved",
    "queue-on",
    "loading",
];

#[component]
pub fn QueuePage() -> impl IntoView {
    view! { <Layout><QueuePageBody w=words(KEYS)/></Layout> }
}

/// The page's body: an island, run again in the browser (forms, refreshes).
#[island]
fn QueuePageBody(w: Words) -> impl IntoView {
    let tick = use_ticker(2000);
    let data = Resource::new(move || tick.get(), |_| queue_view());
    let w = StoredValue::new(w);
    let get = move |key: &str| w.with_value(|w| w.get(key));
    view! {
        <h1>{get("queue-title")}</h1>
        <p class="muted">{get("queue-intro")}</p>
        <Transition fallback=move || view! { <p>{get("loading")}</p> }>
            {move || Suspend::new(async move {
                match data.await {
                    Ok(screen) => {
                        let q = screen.queue;
                        let reasons = screen.reasons;
                        view! {
                            <section aria-labelledby="global-h">
                                <h2 id="global-h">{get("queue-global")}</h2>
                                <QueueTable entries=q.jobs empty=get("queue-nothing") testid="global-queue" total=q.total_waiting
                                    w=w.get_value() reasons=reasons.clone()/>
                            </section>
                            <section aria-labelledby="mine-h">
                                <h2 id="mine-h">{get("queue-mine")}</h2>
                                <p class="muted">{get("queue-mine-intro")}</p>
                                <QueueTable entries=q.user_queue empty=get("queue-empty") testid="user-queue" total=None
                                    w=w.get_value() reasons/>
                            </section>
                        }.into_any()
                    }
                    Err(e) => view! { <ErrorText error=e/> }.into_any(),
                }
            })}
        </Transition>
    }
}

#[component]
fn QueueTable(
    entries: Vec<QueueEntry>,
    empty: String,
    testid: &'static str,
    total: Option<u32>,
    w: Words,
    reasons: Vec<(String, String)>,
) -> impl IntoView {
    if entries.is_empty() {
        return view! { <p class="muted" data-testid=testid>{empty}</p> }.into_any();
    }
    let shown = entries.len();
    let more = total.map(|total| {
        // the message's arguments are filled here: the island has no Fluent
        let text =
            w.get("queue-showing").replace("{$shown}", &shown.to_string()).replace("{$total}", &total.to_string());
        view! { <p class="muted">{text}</p> }
    });
    let cols: Vec<String> = ["rank", "job", "lab", "user", "gpus", "usage", "since", "why", "start", "reservation"]
        .iter()
        .map(|c| w.get(&format!("queue-col-{c}")))
        .collect();
    let (other_lab, about, estimate, reserved, on, how) = (
        w.get("queue-other-lab"),
        w.get("queue-about"),
        w.get("queue-estimate"),
        w.get("queue-reserved"),
        w.get("queue-on"),
        w.get("reason-how"),
    );
    view! {
        {more}
        <div class="scroll" tabindex="0">
        <table class="table cards" data-testid=testid>
            <thead>
                <tr>{cols.iter().map(|c| view! { <th>{c.clone()}</th> }).collect_view()}</tr>
            </thead>
            <tbody>
                {entries.into_iter().map(|e| {
                    let job = match e.name.clone() {
                        Some(name) => view! { <a href=format!("/jobs/{}", e.id)>{format!("#{} {name}", e.id)}</a> }.into_any(),
                        None => view! { <span class="muted">{format!("#{} {other_lab}", e.id)}</span> }.into_any(),
                    };
                    let reservation = e.reservation.clone().map(|r| {
                        let need = e.num_gpus;
                        view! {
                            <progress value=r.gpus max=need aria-label=reserved.clone()></progress>
                            " " {format!("{}/{} {on} {} ({})", r.gpus, need, r.node, r.tier)}
                        }
                    });
                    let reason = e.pending_reason.clone().map(|r| {
                        let words = reasons.iter().find(|(k, _)| *k == r).map(|(_, v)| v.clone()).unwrap_or_else(|| crate::model::reasons::reason_in_words(&r));
                        view! { <ReasonText reason=r words how=how.clone()/> }
                    });
                    let start = e.estimated_start.clone().map(|at| view! { {about.clone()} " " <Time at=at/> " " {estimate.clone()} });
                    view! {
                        <tr data-job=e.id>
                            <td data-label=cols[0].clone()>{e.rank.map(|r| r.to_string()).unwrap_or_else(|| "—".into())}</td>
                            <td data-label=cols[1].clone()>{job}</td>
                            <td data-label=cols[2].clone()>{e.lab.clone()}</td>
                            <td data-label=cols[3].clone()>{e.user.clone().unwrap_or_default()}</td>
                            <td data-label=cols[4].clone()>{e.num_gpus}</td>
                            <td data-label=cols[5].clone()>{format!("{:.0}", e.lab_usage_tflop_s)}</td>
                            <td data-label=cols[6].clone()><Time at=e.queue_entered_at.clone()/></td>
                            <td data-label=cols[7].clone() class="reason">{reason}</td>
                            <td data-label=cols[8].clone() class="estimate">{start}</td>
                            <td data-label=cols[9].clone()>{reservation}</td>
                        </tr>
                    }
                }).collect_view()}
            </tbody>
        </table>
        </div>
    }
    .into_any()
}
