//! `/jobs/{id}`: one job — its timeline, attempts, live log, files and
//! the cancel button — refreshed while the page is open.

use super::session::session_panel;
use crate::api::{job_detail, job_log, job_log_tail, CancelJob};
use crate::i18n::{t, t_with, words, Words};
use crate::model::log_text::visible;
use crate::model::views::JobDetail;
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
                        Ok(detail) => {
                            let can_cancel = detail.can_cancel;
                            view! {
                                <div id=LIVE_ID>
                                    <JobSummary detail/>
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
    let detail = job_detail(id).await?;
    Ok(view! { <JobSummary detail/> }.to_html())
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

/// `text` with each `{$name}` replaced (an island formats its words
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
                                <pre class="log" data-testid="log">{move || visible(&earlier.get().concat()).into_owned()}{visible(&chunk.data).into_owned()}</pre>
                            }.into_any()
                        }
                        Err(e) => view! { <ErrorText error=e/> }.into_any(),
                    }
                })}
            </Transition>
        </section>
    }
}

/// The job's facts, timeline, attempts and files, rendered on the server
/// in the reader's language (first with the page, then by [`job_panel`]).
#[component]
fn JobSummary(detail: JobDetail) -> impl IntoView {
    let in_words = |r: &str| crate::model::reasons::reason_text(crate::i18n::locale(), r);
    let session = session_panel(&detail);
    let job = detail.job;
    let id = job.id;
    let timeline = vec![
        (t("job-submitted"), Some(job.submitted_at.clone())),
        (t("job-queued"), job.queue_entered_at.clone()),
        (t("job-started"), job.started_at.clone()),
        (t("job-ended"), job.ended_at.clone()),
    ];
    let reservation = job.reservation.clone().map(|r| {
        let text = t_with(
            "job-reserving",
            &[
                ("have", r.gpus.to_string().into()),
                ("need", job.num_gpus.to_string().into()),
                ("node", r.node.into()),
                ("tier", r.tier.into()),
            ],
        );
        view! { <p data-testid="reservation">{text}</p> }
    });
    let files = detail.files.clone();
    let more_files = detail.files_total.saturating_sub(files.len());
    // the end reason only where it says more than the state
    let end_reason = job.end_reason.clone().filter(|r| r != job.state.as_str());
    let gpus = if job.num_gpus == 1 {
        t("job-gpu-one")
    } else {
        t_with("job-gpu-many", &[("n", job.num_gpus.to_string().into())])
    };
    let place = match (&job.tier, &job.node) {
        (Some(tier), Some(node)) => {
            t_with("job-place", &[("gpus", gpus.into()), ("tier", tier.clone().into()), ("node", node.clone().into())])
        }
        _ => gpus,
    };
    let most = detail.max_attempts.to_string();
    let attempt = if job.attempts.is_empty() {
        t_with("job-not-started", &[("most", most.into())])
    } else {
        t_with("job-attempt-of", &[("n", job.attempt.to_string().into()), ("most", most.into())])
    };
    let (h, m) = (job.time_limit_minutes / 60, job.time_limit_minutes % 60);
    let limit = match job.time_limit_minutes {
        t if t % 60 == 0 => t_with("job-hours", &[("h", h.to_string().into())]),
        t if t > 60 => t_with("job-hours-minutes", &[("h", h.to_string().into()), ("m", m.to_string().into())]),
        t => t_with("job-minutes", &[("m", t.to_string().into())]),
    };
    let how = t("reason-how");
    view! {
        <h1>{t_with("job-title-of", &[("id", job.id.to_string().into()), ("name", job.name.clone().into())])}</h1>
        <dl class="facts" data-testid="facts">
            <div><dt>{t("job-state")}</dt><dd>
                <span class="state" data-testid="state" data-state=job.state.as_str()>{job.state.as_str()}</span>
                {end_reason.map(|r| {
                    let words = in_words(&r);
                    view! { " — " <strong data-testid="end-reason"><ReasonText reason=r words how=how.clone()/></strong> }
                })}
                {job.exit_code.map(|c| t_with("job-exit-code", &[("code", c.to_string().into())]))}
                {job.pending_reason.clone().map(|r| {
                    let words = in_words(&r);
                    view! { " — " <span class="reason"><ReasonText reason=r words how=how.clone()/></span> }
                })}
            </dd></div>
            <div><dt>{t("job-owner")}</dt><dd>{format!("{} ({})", job.user, job.lab)}</dd></div>
            <div><dt>{t("job-gpus")}</dt><dd>{place}</dd></div>
            <div><dt>{t("job-attempt")}</dt><dd data-testid="attempt">{attempt}</dd></div>
            <div><dt>{t("job-time-limit")}</dt><dd>{limit}
                {detail.ends_by.clone().map(|at| view! { {t("job-ends-by")} <Time at=at/> {t("job-ends-by-after")} })}
            </dd></div>
        </dl>
        {session}
        {job.estimated_start.clone().map(|at| view! {
            <p class="estimate" data-testid="estimate">
                {t("job-estimate")} <Time at=at/> {t("job-estimate-after")}
            </p>
        })}
        {job.array.map(|a| view! {
            <p data-testid="array">{t("job-element")} {a.index} {t("job-of")} <a href=format!("/jobs?array={}", a.id)>{t_with("job-array", &[("id", a.id.to_string().into())])}</a></p>
        })}
        {(!job.dependencies.is_empty()).then(|| view! {
            <p data-testid="dependencies">{t("job-runs-after")}
                {job.dependencies.iter().enumerate().map(|(i, d)| view! {
                    {(i > 0).then_some(", ")}
                    <a href=format!("/jobs/{}", d.job)>{format!("#{}", d.job)}</a>
                    " (" {d.kind.trim_start_matches("after").to_string()} "; " {t("job-now")} " "
                    <span class="state" data-state=d.state.as_str()>{d.state.as_str()}</span> ")"
                }).collect_view()}
            </p>
        })}
        {reservation}
        {job.last_error.clone().map(|e| view! { <p class="error">{t_with("job-last-error", &[("error", e.into())])}</p> })}
        <ol class="timeline" aria-label=t("job-timeline")>
            {timeline.into_iter().map(|(label, at)| view! {
                <li class:done=at.is_some()><strong>{label}</strong> " " <Time at=at.clone()/></li>
            }).collect_view()}
        </ol>
        <h2>{t("job-attempts")}</h2>
        <div class="scroll" tabindex="0">
        <table class="table" data-testid="attempts">
            <thead><tr><th>"#"</th>{["tier", "node", "started", "ended", "exit", "reason", "usage", "reserved"]
                .map(|c| view! { <th>{t(&format!("job-col-{c}"))}</th> })
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
            <h2>{t("job-files")}</h2>
            {if files.is_empty() {
                view! { <p class="muted">{t("job-files-none")}</p> }.into_any()
            } else {
                view! {
                    <ul class="files" data-testid="files">
                        {files.into_iter().map(|f| view! {
                            <li><a href=crate::model::file_url(id, &f.path) download>{f.path.clone()}</a>
                                " " <span class="muted">{t_with("job-bytes", &[("n", f.size.to_string().into())])}</span></li>
                        }).collect_view()}
                    </ul>
                    {(more_files > 0).then(|| view! {
                        <p class="muted" data-testid="more-files">
                            {t_with("job-more-files", &[("n", more_files.to_string().into()), ("id", id.to_string().into())])}
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

    /// The keys the summary composes exist in both languages; its
    /// messages take their arguments (in either language); the log's
    /// island fills its own.
    #[test]
    fn the_summarys_words_exist_and_take_their_arguments() {
        let keys =
            ["tier", "node", "started", "ended", "exit", "reason", "usage", "reserved"].map(|c| format!("job-col-{c}"));
        let missing = crate::i18n::missing_keys(
            keys.iter().chain(LOG_KEYS.iter().map(|k| k.to_string()).collect::<Vec<_>>().iter()),
        );
        assert!(missing.is_empty(), "missing: {missing:?}");
        assert_eq!(tr(Locale::En, "job-gpu-many", &[("n", "4".into())]), "4 GPUs");
        let place = tr(
            Locale::Ko,
            "job-place",
            &[("gpus", "GPU 2개".into()), ("tier", "rtx4090".into()), ("node", "node-a".into())],
        );
        assert_eq!(place, "GPU 2개 · node-a의 rtx4090");
        assert_eq!(tr(Locale::En, "job-exit-code", &[("code", "1".into())]), " (exit code 1)");
        assert_eq!(
            fill(tr(Locale::En, "job-earlier", &[]), &[("kib", "3".into())]),
            "Show earlier output (3 KiB before this)"
        );
    }
}
