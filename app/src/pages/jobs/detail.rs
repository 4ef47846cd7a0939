//! `/jobs/{id}`: one job — its timeline, attempts, live log, files and
//! the cancel button — refreshed while the page is open.

use super::session::session_panel;
use crate::api::{job_detail, job_log, job_log_tail, CancelJob};
use crate::model::views::JobDetail;
use crate::pages::components::{use_ticker, ConfirmButton, ErrorText, Layout, ReasonText, Time};
use leptos::prelude::*;
use leptos_router::hooks::use_params_map;

#[component]
pub fn JobPage() -> impl IntoView {
    let params = use_params_map();
    let id = params.with_untracked(|p| p.get("id").and_then(|id| id.parse::<i64>().ok()).unwrap_or(0));
    view! { <Layout><JobPageBody id/></Layout> }
}

/// The job, refreshed while the page is open (an island: the browser runs
/// it; the rest of the page is plain server-rendered HTML).
#[island]
fn JobPageBody(id: i64) -> impl IntoView {
    let tick = use_ticker(1500);
    let detail = Resource::new(move || tick.get(), move |_| job_detail(id));
    // The log opens at its end (a long one showed only its first 256 KiB,
    // never where the job is now) and grows from there; earlier output is
    // loaded a page at a time on request.
    let anchor = StoredValue::new(None::<u64>);
    let earlier = RwSignal::new(Vec::<String>::new());
    let earliest = RwSignal::new(None::<u64>);
    let log = Resource::new(
        move || tick.get(),
        move |_| async move {
            let chunk = match anchor.get_value() {
                None => job_log_tail(id, None).await?,
                Some(at) => job_log(id, at).await?,
            };
            if anchor.get_value().is_none() {
                anchor.set_value(Some(chunk.offset));
            }
            Ok::<_, crate::model::error::ConsoleError>(chunk)
        },
    );
    let load_earlier = move |before: u64| {
        leptos::task::spawn_local(async move {
            if let Ok(chunk) = job_log_tail(id, Some(before)).await {
                earliest.set(Some(chunk.offset));
                earlier.update(|pages| pages.insert(0, chunk.data));
            }
        });
    };
    view! {
        <Transition fallback=|| view! { <p>"Loading…"</p> }>
            {move || Suspend::new(async move {
                match detail.await {
                    Ok(d) => view! { <JobSummary detail=d/> }.into_any(),
                    Err(e) => view! { <h1>"Job"</h1> <ErrorText error=e/> }.into_any(),
                }
            })}
        </Transition>
        <section aria-labelledby="log-h">
            <h2 id="log-h">"Log"</h2>
            <Transition fallback=|| ()>
                {move || Suspend::new(async move {
                    match log.await {
                        Ok(chunk) if chunk.data.is_empty() && chunk.offset == 0 => view! { <p class="muted" data-testid="log">"No output yet."</p> }.into_any(),
                        Ok(chunk) => {
                            let start = move || earliest.get().unwrap_or(chunk.offset);
                            view! {
                                {move || (start() > 0).then(|| view! {
                                    <button type="button" class="link" data-testid="log-earlier" on:click=move |_| load_earlier(start())>
                                        {format!("Show earlier output ({} KiB before this)", start().div_ceil(1024))}
                                    </button>
                                })}
                                <pre class="log" data-testid="log">{move || earlier.get().concat()}{chunk.data}</pre>
                            }.into_any()
                        }
                        Err(e) => view! { <ErrorText error=e/> }.into_any(),
                    }
                })}
            </Transition>
        </section>
    }
}

#[component]
fn JobSummary(detail: JobDetail) -> impl IntoView {
    let session = session_panel(&detail);
    let job = detail.job;
    let id = job.id;
    let timeline = vec![
        ("Submitted", Some(job.submitted_at.clone())),
        ("Queued", job.queue_entered_at.clone()),
        ("Started", job.started_at.clone()),
        ("Ended", job.ended_at.clone()),
    ];
    let reservation = job.reservation.clone().map(|r| {
        view! { <p data-testid="reservation">{format!("Reserving {}/{} GPUs on {} ({})", r.gpus, job.num_gpus, r.node, r.tier)}</p> }
    });
    let files = detail.files.clone();
    let more_files = detail.files_total.saturating_sub(files.len());
    // the end reason only where it says more than the state
    let end_reason = job.end_reason.clone().filter(|r| r != job.state.as_str());
    let gpus = if job.num_gpus == 1 { "1 GPU".to_string() } else { format!("{} GPUs", job.num_gpus) };
    let place = match (&job.tier, &job.node) {
        (Some(tier), Some(node)) => format!("{gpus} · {tier} on {node}"),
        _ => gpus,
    };
    let attempt = if job.attempts.is_empty() {
        format!("not started yet (at most {} attempts)", detail.max_attempts)
    } else {
        format!("attempt {} of at most {}", job.attempt, detail.max_attempts)
    };
    let limit = match job.time_limit_minutes {
        m if m % 60 == 0 => format!("{} h", m / 60),
        m if m > 60 => format!("{} h {} min", m / 60, m % 60),
        m => format!("{m} min"),
    };
    view! {
        <h1>{format!("Job #{} {}", job.id, job.name)}</h1>
        <dl class="facts" data-testid="facts">
            <div><dt>"State"</dt><dd>
                <span class="state" data-testid="state" data-state=job.state.as_str()>{job.state.as_str()}</span>
                {end_reason.map(|r| view! { " — " <strong data-testid="end-reason"><ReasonText reason=r.clone() words=r/></strong> })}
                {job.exit_code.map(|c| format!(" (exit code {c})"))}
                {job.pending_reason.clone().map(|r| view! { " — " <span class="reason"><ReasonText reason=r/></span> })}
            </dd></div>
            <div><dt>"Owner"</dt><dd>{format!("{} ({})", job.user, job.lab)}</dd></div>
            <div><dt>"GPUs"</dt><dd>{place}</dd></div>
            <div><dt>"Attempt"</dt><dd data-testid="attempt">{attempt}</dd></div>
            <div><dt>"Time limit"</dt><dd>{limit}
                {detail.ends_by.clone().map(|at| view! { " — ends by " <Time at=at/> " at the latest" })}
            </dd></div>
        </dl>
        {session}
        {job.estimated_start.clone().map(|at| view! {
            <p class="estimate" data-testid="estimate">
                "Expected to start about " <Time at=at/> " — an estimate from the scheduler's forecast"
            </p>
        })}
        {job.array.map(|a| view! {
            <p data-testid="array">"Element " {a.index} " of " <a href=format!("/jobs?array={}", a.id)>{format!("array #{}", a.id)}</a></p>
        })}
        {(!job.dependencies.is_empty()).then(|| view! {
            <p data-testid="dependencies">"Runs after: "
                {job.dependencies.iter().enumerate().map(|(i, d)| view! {
                    {(i > 0).then_some(", ")}
                    <a href=format!("/jobs/{}", d.job)>{format!("#{}", d.job)}</a>
                    " (" {d.kind.trim_start_matches("after").to_string()} "; now "
                    <span class="state" data-state=d.state.as_str()>{d.state.as_str()}</span> ")"
                }).collect_view()}
            </p>
        })}
        {reservation}
        {job.last_error.clone().map(|e| view! { <p class="error">{format!("Last dispatch error: {e}")}</p> })}
        {detail.can_cancel.then(|| view! { <CancelButton id/> })}
        <ol class="timeline" aria-label="Timeline">
            {timeline.into_iter().map(|(label, at)| view! {
                <li class:done=at.is_some()><strong>{label}</strong> " " <Time at=at.clone()/></li>
            }).collect_view()}
        </ol>
        <h2>"Attempts"</h2>
        <div class="scroll" tabindex="0">
        <table class="table" data-testid="attempts">
            <thead><tr><th>"#"</th><th>"Tier"</th><th>"Node"</th><th>"Started"</th><th>"Ended"</th><th>"Exit"</th><th>"Reason"</th><th>"Usage (TFLOP·s)"</th><th>"of which reserved"</th></tr></thead>
            <tbody>
                {job.attempts.into_iter().map(|a| view! {
                    <tr>
                        <td>{a.attempt}</td><td>{a.tier}</td><td>{a.node}</td>
                        <td><Time at=a.started_at/></td><td><Time at=a.ended_at/></td>
                        <td>{a.exit_code.map(|c| c.to_string()).unwrap_or_default()}</td>
                        <td>{a.reason.unwrap_or_default()}</td>
                        <td>{format!("{:.0}", a.usage_tflop_s)}</td>
                        <td>{format!("{:.0}", a.reserved_usage_tflop_s)}</td>
                    </tr>
                }).collect_view()}
            </tbody>
        </table>
        </div>
        {detail.can_read_output.then(|| view! {
            <h2>"Output files"</h2>
            {if files.is_empty() {
                view! { <p class="muted">"None yet."</p> }.into_any()
            } else {
                view! {
                    <ul class="files" data-testid="files">
                        {files.into_iter().map(|f| view! {
                            <li><a href=crate::model::file_url(id, &f.path) download>{f.path.clone()}</a>
                                " " <span class="muted">{format!("{} bytes", f.size)}</span></li>
                        }).collect_view()}
                    </ul>
                    {(more_files > 0).then(|| view! {
                        <p class="muted" data-testid="more-files">
                            {format!("and {more_files} more files: list them all with GET /v1/jobs/{id}/files (a page at a time)")}
                        </p>
                    })}
                }.into_any()
            }}
        })}
    }
}

/// Cancel asks once more before it acts.
#[component]
fn CancelButton(id: i64) -> impl IntoView {
    let cancel = ServerAction::<CancelJob>::new();
    view! {
        <div class="cancel">
            <ConfirmButton
                label="Cancel job…"
                question="Cancel this job? A running job gets SIGTERM and its grace period to save its work."
                yes="Yes, cancel it"
                no="Keep it"
                on_yes=move |_| { cancel.dispatch(CancelJob { id }); }
            />
            {move || cancel.value().get().and_then(|r| r.err()).map(|e| view! { <ErrorText error=e/> })}
        </div>
    }
}
