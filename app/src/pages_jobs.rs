//! The researcher's job pages: the queue (refreshing itself), the job
//! list, one job (timeline, attempts, live log, files, cancel) and the
//! submit form.

use crate::api::{
    job_detail, job_log, job_log_tail, jobs_page, maintenance_status, my_workspaces, queue_view, CancelJob, SubmitJob,
};
use crate::components::{use_ticker, ErrorText, Layout};
use crate::model::{JobView, MaintenancePhase};
use crate::views::{reason_in_words, JobDetail, QueueEntry};
use leptos::prelude::*;
use leptos_router::hooks::{use_params_map, use_query_map};

/// `2026-12-02T11:34:48.123Z` → `2026-12-02 11:34:48`
fn short_time(t: &Option<String>) -> String {
    t.as_deref().map(|t| t.get(..19).unwrap_or(t).replace('T', " ")).unwrap_or_default()
}

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
        <div class="scroll">
        <table class="table" data-testid=testid>
            <thead>
                <tr><th>"Rank"</th><th>"Job"</th><th>"Lab"</th><th>"User"</th><th>"GPUs"</th>
                    <th>"Lab usage (TFLOP·s)"</th><th>"Waiting since"</th><th>"Why it waits"</th><th>"Reservation"</th></tr>
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
                            <td>{e.rank.map(|r| r.to_string()).unwrap_or_else(|| "—".into())}</td>
                            <td>{job}</td>
                            <td>{e.lab.clone()}</td>
                            <td>{e.user.clone().unwrap_or_default()}</td>
                            <td>{e.num_gpus}</td>
                            <td>{format!("{:.0}", e.lab_usage_tflop_s)}</td>
                            <td>{short_time(&e.queue_entered_at)}</td>
                            <td class="reason">{e.pending_reason.as_deref().map(reason_in_words).unwrap_or_default()}</td>
                            <td>{reservation}</td>
                        </tr>
                    }
                }).collect_view()}
            </tbody>
        </table>
        </div>
    }
    .into_any()
}

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
            Ok::<_, ServerFnError>(chunk)
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
    view! {
        <h1>{format!("Job #{} {}", job.id, job.name)}</h1>
        <p>
            <span class="state" data-testid="state" data-state=job.state.as_str()>{job.state.as_str()}</span>
            " · " {job.user.clone()} " (" {job.lab.clone()} ") · " {job.num_gpus} " GPU(s)"
            {job.end_reason.clone().map(|r| view! { " · " <strong>{r}</strong> })}
            {job.pending_reason.clone().map(|r| view! { " · " <span class="reason">{reason_in_words(&r)}</span> })}
        </p>
        {reservation}
        {job.last_error.clone().map(|e| view! { <p class="error">{format!("Last dispatch error: {e}")}</p> })}
        {detail.can_cancel.then(|| view! { <CancelButton id/> })}
        <ol class="timeline" aria-label="Timeline">
            {timeline.into_iter().map(|(label, at)| view! {
                <li class:done=at.is_some()><strong>{label}</strong> " " {short_time(&at)}</li>
            }).collect_view()}
        </ol>
        <h2>"Attempts"</h2>
        <div class="scroll">
        <table class="table" data-testid="attempts">
            <thead><tr><th>"#"</th><th>"Tier"</th><th>"Node"</th><th>"Started"</th><th>"Ended"</th><th>"Exit"</th><th>"Reason"</th><th>"Usage (TFLOP·s)"</th></tr></thead>
            <tbody>
                {job.attempts.into_iter().map(|a| view! {
                    <tr>
                        <td>{a.attempt}</td><td>{a.tier}</td><td>{a.node}</td>
                        <td>{short_time(&a.started_at)}</td><td>{short_time(&a.ended_at)}</td>
                        <td>{a.exit_code.map(|c| c.to_string()).unwrap_or_default()}</td>
                        <td>{a.reason.unwrap_or_default()}</td>
                        <td>{format!("{:.0}", a.usage_tflop_s)}</td>
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
    let (confirming, set_confirming) = signal(false);
    view! {
        <div class="cancel">
            <Show
                when=move || confirming.get()
                fallback=move || view! { <button type="button" on:click=move |_| set_confirming.set(true)>"Cancel job…"</button> }
            >
                <span>"Cancel this job? A running job gets SIGTERM and its grace period to save its work."</span>
                " "
                <button type="button" class="danger" on:click=move |_| { cancel.dispatch(CancelJob { id }); set_confirming.set(false); }>"Yes, cancel it"</button>
                " "
                <button type="button" on:click=move |_| set_confirming.set(false)>"Keep it"</button>
            </Show>
            {move || cancel.value().get().and_then(|r| r.err()).map(|e| view! { <ErrorText error=e/> })}
        </div>
    }
}

#[component]
pub fn SubmitPage() -> impl IntoView {
    view! { <Layout><SubmitPageBody/></Layout> }
}

/// The page's body: an island, run again in the browser (forms, refreshes).
#[island]
fn SubmitPageBody() -> impl IntoView {
    let submit = ServerAction::<SubmitJob>::new();
    let maintenance = Resource::new(|| (), |_| maintenance_status());
    let workspaces = Resource::new(|| (), |_| my_workspaces());
    let script = NodeRef::<leptos::html::Textarea>::new();
    let error = move || submit.value().get().and_then(|r| r.err()).map(|e| crate::api::error_text(&e));
    // a field's own error goes under it; anything else above the form
    let field_error = move |field: &'static str| {
        move || error().filter(|e| e.starts_with(&format!("{field}:")) || e.starts_with(&format!("{field} ")))
    };
    let general_error = move || {
        error().filter(|e| {
            !["name", "command", "num_gpus", "time_limit_minutes", "env", "workspace"]
                .iter()
                .any(|f| e.starts_with(&format!("{f}:")) || e.starts_with(&format!("{f} ")))
        })
    };
    view! {
        <h1>"Submit a job"</h1>
        <Suspense fallback=|| ()>
            {move || Suspend::new(async move {
                maintenance.await.ok().filter(|m| m.phase != MaintenancePhase::Normal).map(|m| view! {
                    <p class="error" role="alert" data-testid="submit-paused">
                        {format!("Submissions are paused for maintenance ({}). Running jobs finish; try again when it ends.", m.phase)}
                    </p>
                })
            })}
        </Suspense>
        <ActionForm action=submit attr:class="card form" attr:data-testid="submit-form">
            {move || general_error().map(|e| view! { <p class="error" role="alert" data-testid="submit-error">{e}</p> })}
            <label for="name">"Name"</label>
            <input id="name" name="name" required maxlength="128" placeholder="resnet50-lr0.1"/>
            {move || field_error("name")().map(|e| view! { <p class="error field-error">{e}</p> })}
            <label for="command">"Script (run with bash)"</label>
            <textarea id="command" name="command" rows="8" required placeholder="python train.py --epochs 10" node_ref=script></textarea>
            <label for="script_file">"…or load it from a file"</label>
            <input id="script_file" type="file" accept=".sh,.bash,.py,text/*" on:change=move |ev| load_script_file(ev, script)/>
            {move || field_error("command")().map(|e| view! { <p class="error field-error">{e}</p> })}
            <label for="num_gpus">"GPUs"</label>
            <input id="num_gpus" name="num_gpus" type="number" min="1" max="8" value="1" required/>
            {move || field_error("num_gpus")().map(|e| view! { <p class="error field-error" data-testid="num-gpus-error">{e}</p> })}
            <label for="time_limit_minutes">"Time limit (minutes, empty = default)"</label>
            <input id="time_limit_minutes" name="time_limit_minutes" type="number" min="1"/>
            {move || field_error("time_limit_minutes")().map(|e| view! { <p class="error field-error">{e}</p> })}
            <label for="workspace">"Workspace (container image)"</label>
            <select id="workspace" name="workspace">
                <option value="">"none (run on the node)"</option>
                <Suspense fallback=|| ()>
                    {move || Suspend::new(async move {
                        workspaces.await.unwrap_or_default().into_iter().filter(|w| w.status == "READY").map(|w| {
                            let label = format!("{} ({})", w.name, w.base_image);
                            view! { <option value=w.name>{label}</option> }
                        }).collect_view()
                    })}
                </Suspense>
            </select>
            {move || field_error("workspace")().map(|e| view! { <p class="error field-error">{e}</p> })}
            <label for="env">"Environment (KEY=value per line)"</label>
            <textarea id="env" name="env" rows="3"></textarea>
            {move || field_error("env")().map(|e| view! { <p class="error field-error">{e}</p> })}
            <button type="submit" disabled=move || submit.pending().get()>"Submit"</button>
        </ActionForm>
    }
}

/// Puts the chosen file's text into the script box (in the browser; the
/// form still posts the script as text).
fn load_script_file(ev: leptos::ev::Event, script: NodeRef<leptos::html::Textarea>) {
    #[cfg(all(feature = "hydrate", not(feature = "ssr")))]
    {
        use leptos::wasm_bindgen::JsCast;
        let Some(input) = ev.target().and_then(|t| t.dyn_into::<leptos::web_sys::HtmlInputElement>().ok()) else {
            return;
        };
        let Some(file) = input.files().and_then(|files| files.get(0)) else { return };
        leptos::task::spawn_local(async move {
            if let Ok(text) = wasm_bindgen_futures::JsFuture::from(file.text()).await {
                if let (Some(text), Some(area)) = (text.as_string(), script.get_untracked()) {
                    area.set_value(&text);
                }
            }
        });
    }
    #[cfg(not(all(feature = "hydrate", not(feature = "ssr"))))]
    let _ = (ev, script);
}
