//! `/jobs/{id}`: one job — its timeline, attempts, live log, files and
//! the cancel button — refreshed while the page is open.

use super::session::session_panel;
use crate::api::{job_detail, job_log, job_log_tail, CancelJob, JobScreen};
use crate::i18n::{t, words, Words};
use crate::pages::components::{use_ticker, ConfirmButton, ErrorText, Layout, ReasonText, Time};
use leptos::prelude::*;
use leptos_router::hooks::use_params_map;

#[component]
pub fn JobPage() -> impl IntoView {
    let params = use_params_map();
    let id = params.with_untracked(|p| p.get("id").and_then(|id| id.parse::<i64>().ok()).unwrap_or(0));
    let detail = Resource::new(|| (), move |_| job_detail(id));
    view! {
        <Layout>
            <Suspense fallback=|| view! { <p>{t("loading")}</p> }>
                {move || Suspend::new(async move {
                    match detail.await {
                        Ok(screen) => {
                            let can_cancel = screen.detail.can_cancel;
                            view! {
                                <div id=LIVE_ID>
                                    <JobSummary screen w=words(KEYS)/>
                                </div>
                                {can_cancel.then(|| view! { <CancelButton id w=words(CANCEL_KEYS)/> })}
                                <JobLive id/>
                            }.into_any()
                        }
                        Err(e) => view! { <h1>{t("job-title")}</h1> <ErrorText error=e/> }.into_any(),
                    }
                })}
            </Suspense>
            <JobLog id w=words(LOG_KEYS)/>
        </Layout>
    }
}

/// The element whose content [`JobLive`] replaces.
const LIVE_ID: &str = "job-live";

/// The job's summary as HTML, rendered on the server in the reader's
/// language, for [`JobLive`] to put in place: the page's summary changes
/// without its code (the view, the job's types and their decoding) in
/// the browser's bundle, where it cost 38 KB of the first load.
#[server]
pub async fn job_panel(id: i64) -> Result<String, crate::model::error::ConsoleError> {
    use leptos::tachys::view::RenderHtml;
    let screen = job_detail(id).await?;
    Ok(view! { <JobSummary screen w=words(KEYS)/> }.to_html())
}

/// Refreshes the summary while the page is open: asks for it again every
/// 1.5 s and replaces it when it changed (times are refined by
/// `local-time.js`, which watches the page). Renders nothing itself.
#[island]
fn JobLive(id: i64) -> impl IntoView {
    let tick = use_ticker(1500);
    let last = StoredValue::new(String::new());
    Effect::new(move |_| {
        if tick.get() == 0 {
            return;
        }
        leptos::task::spawn_local(async move {
            if let Ok(html) = job_panel(id).await {
                if last.with_value(|l| *l != html) {
                    replace_inner_html(LIVE_ID, &html);
                    last.set_value(html);
                }
            }
        });
    });
}

/// Puts `html` (rendered by this server, its text escaped) inside the
/// element `id`.
fn replace_inner_html(id: &str, html: &str) {
    #[cfg(all(feature = "hydrate", not(feature = "ssr")))]
    if let Some(el) = leptos::prelude::document().get_element_by_id(id) {
        el.set_inner_html(html);
    }
    #[cfg(not(all(feature = "hydrate", not(feature = "ssr"))))]
    let _ = (id, html);
}

/// The words of the log's island.
const LOG_KEYS: &[&str] = &["job-log", "job-no-output", "job-earlier"];

/// The words of the cancel button's island.
const CANCEL_KEYS: &[&str] = &["job-cancel", "job-cancel-question", "job-cancel-yes", "job-cancel-no"];

/// The words of the page's island, looked up on the server.
const KEYS: &[&str] = &[
    "loading",
    "job-title",
    "job-title-of",
    "job-log",
    "job-no-output",
    "job-earlier",
    "job-submitted",
    "job-queued",
    "job-started",
    "job-ended",
    "job-reserving",
    "job-gpu-one",
    "job-gpu-many",
    "job-place",
    "job-not-started",
    "job-attempt-of",
    "job-hours",
    "job-hours-minutes",
    "job-minutes",
    "job-state",
    "job-exit-code",
    "job-owner",
    "job-gpus",
    "job-attempt",
    "job-time-limit",
    "job-ends-by",
    "job-ends-by-after",
    "job-estimate",
    "job-estimate-after",
    "job-element",
    "job-of",
    "job-array",
    "job-runs-after",
    "job-now",
    "job-last-error",
    "job-timeline",
    "job-attempts",
    "job-col-tier",
    "job-col-node",
    "job-col-started",
    "job-col-ended",
    "job-col-exit",
    "job-col-reason",
    "job-col-usage",
    "job-col-reserved",
    "job-files",
    "job-files-none",
    "job-bytes",
    "job-more-files",
    "job-cancel",
    "job-cancel-question",
    "job-cancel-yes",
    "job-cancel-no",
    "reason-how",
    "session-title",
    "session-waiting",
    "session-waiting-at",
    "session-starting",
    "session-open",
    "session-time-left",
    "session-idle",
    "session-ended",
    "session-less-than-minute",
    "session-minutes",
];

/// `text` with each `{ $name }` replaced (an island formats its words
/// itself: the Fluent bundles stay on the server).
fn fill(text: String, args: &[(&str, String)]) -> String {
    args.iter().fold(text, |t, (k, v)| t.replace(&format!("{{${k}}}"), v))
}

/// The job's log, growing while the page is open (an island: the browser
/// runs it).
#[island]
fn JobLog(id: i64, w: Words) -> impl IntoView {
    let tick = use_ticker(1500);
    let w = StoredValue::new(w);
    let get = move |key: &str| w.with_value(|w| w.get(key));
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
        <section aria-labelledby="log-h">
            <h2 id="log-h">{get("job-log")}</h2>
            <Transition fallback=|| ()>
                {move || Suspend::new(async move {
                    match log.await {
                        Ok(chunk) if chunk.data.is_empty() && chunk.offset == 0 => view! { <p class="muted" data-testid="log">{get("job-no-output")}</p> }.into_any(),
                        Ok(chunk) => {
                            let start = move || earliest.get().unwrap_or(chunk.offset);
                            view! {
                                {move || (start() > 0).then(|| view! {
                                    <button type="button" class="link" data-testid="log-earlier" on:click=move |_| load_earlier(start())>
                                        {fill(get("job-earlier"), &[("kib", start().div_ceil(1024).to_string())])}
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
fn JobSummary(screen: JobScreen, w: Words) -> impl IntoView {
    let JobScreen { detail, reasons } = screen;
    let get = |key: &str| w.get(key);
    let words_of = |r: &str| reasons.iter().find(|(k, _)| k == r).map(|(_, v)| v.clone());
    let session = session_panel(&detail, &w);
    let job = detail.job;
    let id = job.id;
    let timeline = vec![
        (get("job-submitted"), Some(job.submitted_at.clone())),
        (get("job-queued"), job.queue_entered_at.clone()),
        (get("job-started"), job.started_at.clone()),
        (get("job-ended"), job.ended_at.clone()),
    ];
    let reservation = job.reservation.clone().map(|r| {
        let text = fill(
            get("job-reserving"),
            &[("have", r.gpus.to_string()), ("need", job.num_gpus.to_string()), ("node", r.node), ("tier", r.tier)],
        );
        view! { <p data-testid="reservation">{text}</p> }
    });
    let files = detail.files.clone();
    let more_files = detail.files_total.saturating_sub(files.len());
    // the end reason only where it says more than the state
    let end_reason = job.end_reason.clone().filter(|r| r != job.state.as_str());
    let gpus = if job.num_gpus == 1 {
        get("job-gpu-one")
    } else {
        fill(get("job-gpu-many"), &[("n", job.num_gpus.to_string())])
    };
    let place = match (&job.tier, &job.node) {
        (Some(tier), Some(node)) => {
            fill(get("job-place"), &[("gpus", gpus), ("tier", tier.clone()), ("node", node.clone())])
        }
        _ => gpus,
    };
    let most = detail.max_attempts.to_string();
    let attempt = if job.attempts.is_empty() {
        fill(get("job-not-started"), &[("most", most)])
    } else {
        fill(get("job-attempt-of"), &[("n", job.attempt.to_string()), ("most", most)])
    };
    let (h, m) = (job.time_limit_minutes / 60, job.time_limit_minutes % 60);
    let limit = match job.time_limit_minutes {
        t if t % 60 == 0 => fill(get("job-hours"), &[("h", h.to_string())]),
        t if t > 60 => fill(get("job-hours-minutes"), &[("h", h.to_string()), ("m", m.to_string())]),
        t => fill(get("job-minutes"), &[("m", t.to_string())]),
    };
    let how = get("reason-how");
    view! {
        <h1>{fill(get("job-title-of"), &[("id", job.id.to_string()), ("name", job.name.clone())])}</h1>
        <dl class="facts" data-testid="facts">
            <div><dt>{get("job-state")}</dt><dd>
                <span class="state" data-testid="state" data-state=job.state.as_str()>{job.state.as_str()}</span>
                {end_reason.map(|r| {
                    let words = words_of(&r).unwrap_or_else(|| r.clone());
                    view! { " — " <strong data-testid="end-reason"><ReasonText reason=r words how=how.clone()/></strong> }
                })}
                {job.exit_code.map(|c| fill(get("job-exit-code"), &[("code", c.to_string())]))}
                {job.pending_reason.clone().map(|r| {
                    let words = words_of(&r).unwrap_or_else(|| crate::model::views::reason_in_words(&r));
                    view! { " — " <span class="reason"><ReasonText reason=r words how=how.clone()/></span> }
                })}
            </dd></div>
            <div><dt>{get("job-owner")}</dt><dd>{format!("{} ({})", job.user, job.lab)}</dd></div>
            <div><dt>{get("job-gpus")}</dt><dd>{place}</dd></div>
            <div><dt>{get("job-attempt")}</dt><dd data-testid="attempt">{attempt}</dd></div>
            <div><dt>{get("job-time-limit")}</dt><dd>{limit}
                {detail.ends_by.clone().map(|at| view! { {get("job-ends-by")} <Time at=at/> {get("job-ends-by-after")} })}
            </dd></div>
        </dl>
        {session}
        {job.estimated_start.clone().map(|at| view! {
            <p class="estimate" data-testid="estimate">
                {get("job-estimate")} <Time at=at/> {get("job-estimate-after")}
            </p>
        })}
        {job.array.map(|a| view! {
            <p data-testid="array">{get("job-element")} {a.index} {get("job-of")} <a href=format!("/jobs?array={}", a.id)>{fill(get("job-array"), &[("id", a.id.to_string())])}</a></p>
        })}
        {(!job.dependencies.is_empty()).then(|| view! {
            <p data-testid="dependencies">{get("job-runs-after")}
                {job.dependencies.iter().enumerate().map(|(i, d)| view! {
                    {(i > 0).then_some(", ")}
                    <a href=format!("/jobs/{}", d.job)>{format!("#{}", d.job)}</a>
                    " (" {d.kind.trim_start_matches("after").to_string()} "; " {get("job-now")} " "
                    <span class="state" data-state=d.state.as_str()>{d.state.as_str()}</span> ")"
                }).collect_view()}
            </p>
        })}
        {reservation}
        {job.last_error.clone().map(|e| view! { <p class="error">{fill(get("job-last-error"), &[("error", e)])}</p> })}
        <ol class="timeline" aria-label=get("job-timeline")>
            {timeline.into_iter().map(|(label, at)| view! {
                <li class:done=at.is_some()><strong>{label}</strong> " " <Time at=at.clone()/></li>
            }).collect_view()}
        </ol>
        <h2>{get("job-attempts")}</h2>
        <div class="scroll" tabindex="0">
        <table class="table" data-testid="attempts">
            <thead><tr><th>"#"</th>{["tier", "node", "started", "ended", "exit", "reason", "usage", "reserved"]
                .map(|c| view! { <th>{get(&format!("job-col-{c}"))}</th> })
                .collect_view()}</tr></thead>
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
            <h2>{get("job-files")}</h2>
            {if files.is_empty() {
                view! { <p class="muted">{get("job-files-none")}</p> }.into_any()
            } else {
                view! {
                    <ul class="files" data-testid="files">
                        {files.into_iter().map(|f| view! {
                            <li><a href=crate::model::file_url(id, &f.path) download>{f.path.clone()}</a>
                                " " <span class="muted">{fill(get("job-bytes"), &[("n", f.size.to_string())])}</span></li>
                        }).collect_view()}
                    </ul>
                    {(more_files > 0).then(|| view! {
                        <p class="muted" data-testid="more-files">
                            {fill(get("job-more-files"), &[("n", more_files.to_string()), ("id", id.to_string())])}
                        </p>
                    })}
                }.into_any()
            }}
        })}
    }
}

/// Cancel asks once more before it acts; once the job is cancelled the
/// button goes.
#[island]
fn CancelButton(id: i64, w: Words) -> impl IntoView {
    let cancel = ServerAction::<CancelJob>::new();
    let done = move || cancel.value().get().is_some_and(|r| r.is_ok());
    view! {
        <div class="cancel" hidden=done>
            <ConfirmButton
                label=w.get("job-cancel")
                question=w.get("job-cancel-question")
                yes=w.get("job-cancel-yes")
                no=w.get("job-cancel-no")
                on_yes=move |_| { cancel.dispatch(CancelJob { id }); }
            />
            {move || cancel.value().get().and_then(|r| r.err()).map(|e| view! { <ErrorText error=e/> })}
        </div>
    }
}

#[cfg(all(test, feature = "ssr"))]
mod tests {
    use super::*;
    use crate::i18n::{tr, Locale};

    /// Every word the island is handed exists in both languages, and an
    /// argument left for the island to fill comes through as `{$name}`.
    #[test]
    fn the_islands_words_exist_and_leave_their_arguments_to_fill() {
        let mut keys: Vec<String> = KEYS.iter().map(|k| k.to_string()).collect();
        keys.extend(
            ["tier", "node", "started", "ended", "exit", "reason", "usage", "reserved"].map(|c| format!("job-col-{c}")),
        );
        let missing = crate::i18n::missing_keys(keys.iter());
        assert!(missing.is_empty(), "missing: {missing:?}");
        let many = tr(Locale::En, "job-gpu-many", &[]);
        assert_eq!(fill(many, &[("n", "4".into())]), "4 GPUs");
        let place = tr(Locale::Ko, "job-place", &[]);
        let filled = fill(place, &[("gpus", "GPU 2개".into()), ("tier", "rtx4090".into()), ("node", "node-a".into())]);
        assert_eq!(filled, "GPU 2개 · node-a의 rtx4090");
        assert_eq!(tr(Locale::En, "job-exit-code", &[]).replace("{$code}", "1"), " (exit code 1)");
    }
}
