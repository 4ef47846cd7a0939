//! Interactive sessions in the console (policy §12): "Start a notebook"
//! (on the submit page and the dashboard) and the part of a session's
//! job page that says where it stands — its place in the queue and the
//! estimated start while it waits, then "Open JupyterLab", the time left
//! and, in its last ten idle minutes, the warning.

use crate::api::{session_apps, StartSession};
use crate::i18n::{locale, t, t_with, Words};
use crate::model::reasons::reason_text;
use crate::model::views::JobDetail;
use crate::model::SessionState;
use crate::pages::components::{ReadyWorkspaceOptions, Time};
use leptos::prelude::*;

/// The form: app, GPUs, time limit, workspace. On success the browser
/// goes to the session's page.
/// The words of [`StartNotebook`], looked up on the server.
pub const NOTEBOOK_KEYS: &[&str] = &[
    "notebook-title",
    "notebook-intro",
    "notebook-app",
    "notebook-gpus",
    "notebook-limit",
    "notebook-workspace",
    "notebook-workspace-none",
    "notebook-start",
];

#[island]
pub fn StartNotebook(w: Words) -> impl IntoView {
    let w = StoredValue::new(w);
    let get = move |key: &str| w.with_value(|w| w.get(key));
    let start = ServerAction::<StartSession>::new();
    let apps = Resource::new(|| (), |_| session_apps());
    let error = move || start.value().get().and_then(|r| r.err()).map(|e| e.message);
    view! {
        <ActionForm action=start attr:class="card form" attr:data-testid="start-notebook">
            <h2 id="notebook-h">{get("notebook-title")}</h2>
            <p class="muted">{get("notebook-intro")}</p>
            {move || error().map(|e| view! { <p class="error" role="alert" data-testid="notebook-error">{e}</p> })}
            <label for="session-app">{get("notebook-app")}</label>
            <select id="session-app" name="app">
                <Suspense fallback=|| view! { <option value="jupyterlab">"jupyterlab"</option> }>
                    {move || Suspend::new(async move {
                        apps.await.unwrap_or_default().into_iter().map(|a| {
                            let label = if a == "jupyterlab" { "JupyterLab".to_string() } else { a.clone() };
                            view! { <option value=a>{label}</option> }
                        }).collect_view()
                    })}
                </Suspense>
            </select>
            <label for="session-gpus">{get("notebook-gpus")}</label>
            <input id="session-gpus" name="num_gpus" type="number" min="1" max="8" value="1" required/>
            <label for="session-time">{get("notebook-limit")}</label>
            <input id="session-time" name="time_limit_minutes" type="number" min="1"/>
            <label for="session-workspace">{get("notebook-workspace")}</label>
            <select id="session-workspace" name="workspace">
                <option value="">{get("notebook-workspace-none")}</option>
                <ReadyWorkspaceOptions/>
            </select>
            <button type="submit" disabled=move || start.pending().get()>{get("notebook-start")}</button>
        </ActionForm>
    }
}

/// Where a session stands, on its job page (rendered on the server with
/// the rest of the job's summary, in the reader's language); nothing for a
/// batch job.
pub fn session_panel(detail: &JobDetail) -> Option<AnyView> {
    let job = &detail.job;
    let session = job.session.clone()?;
    let app = if session.app == "jupyterlab" { "JupyterLab".to_string() } else { session.app.clone() };
    let body = match session.state {
        SessionState::Waiting => view! {
            <p data-testid="session-waiting">
                {match job.rank {
                    Some(rank) => t_with("session-waiting-at", &[("rank", rank.to_string().into())]),
                    None => t("session-waiting"),
                }}
                {job.pending_reason.clone().map(|r| format!(" — {}", reason_text(locale(), &r)))}
                "."
                {job.estimated_start.clone().map(|at| view! {
                    " " {t("job-estimate")} <Time at=at/> "."
                })}
            </p>
        }
        .into_any(),
        SessionState::Starting => {
            view! { <p data-testid="session-starting">{t_with("session-starting", &[("app", app.clone().into())])}</p> }.into_any()
        }
        SessionState::Ready => view! {
            {detail.can_open.then(|| view! {
                <p><a class="button primary" href=session.url.clone() target="_blank" rel="noopener" data-testid="open-session">
                    {t_with("session-open", &[("app", app.clone().into())])}
                </a></p>
            })}
            {detail.minutes_left.map(|m| view! { <p data-testid="session-time-left">{t_with("session-time-left", &[("left", minutes_in_words(m).into())])}</p> })}
            {detail.idle_minutes_left.map(|m| view! {
                <p class="error" role="alert" data-testid="idle-warning">
                    {t_with("session-idle", &[("left", minutes_in_words(m).into())])}
                </p>
            })}
        }
        .into_any(),
        SessionState::Ended => view! { <p class="muted" data-testid="session-ended">{t("session-ended")}</p> }.into_any(),
    };
    Some(view! {
        <section class="card" aria-labelledby="session-h" data-testid="session" data-session-state=format!("{:?}", session.state).to_uppercase()>
            <h2 id="session-h">{t_with("session-title", &[("app", app.into())])}</h2>
            {body}
        </section>
    }
    .into_any())
}

/// Minutes as a person would say them, in the reader's language.
fn minutes_in_words(m: i64) -> String {
    match m {
        0 => t("session-less-than-minute"),
        m if m < 120 => t_with("session-minutes", &[("n", m.into())]),
        m => t_with("job-hours-minutes", &[("h", (m / 60).to_string().into()), ("m", (m % 60).to_string().into())]),
    }
}

#[cfg(all(test, feature = "ssr"))]
mod tests {
    #[test]
    fn minutes_read_as_a_person_would_say_them() {
        // outside a request the words are English
        assert_eq!(super::minutes_in_words(0), "less than a minute");
        assert_eq!(super::minutes_in_words(1), "1 minute");
        assert_eq!(super::minutes_in_words(9), "9 minutes");
        assert_eq!(super::minutes_in_words(239), "3 h 59 min");
    }
}
