//! Pieces every console page uses: the top bar with navigation and the
//! signed-in user, the maintenance banner, times, and the options both
//! job forms offer.

use crate::api::{cluster_problem, maintenance_status, my_workspaces, whoami};
use crate::model::error::ConsoleError;
use crate::model::{MaintenancePhase, MaintenanceView, Viewer};
use leptos::prelude::*;

/// The banner shown on every page while maintenance is in any phase but
/// NORMAL (policy §10). Renders nothing in NORMAL.
#[component]
pub fn MaintenanceBanner(status: MaintenanceView) -> impl IntoView {
    (status.phase != MaintenancePhase::Normal).then(|| {
        let what = match status.phase {
            MaintenancePhase::Draining => "Maintenance: draining — new jobs are not accepted; running jobs finish.",
            MaintenancePhase::BackfillRecovery => "Maintenance: reclaiming LLM backfill before operators start.",
            MaintenancePhase::Active => "Maintenance in progress — jobs are not dispatched.",
            MaintenancePhase::Normal => "",
        };
        view! {
            <div class="banner" role="status" data-phase=status.phase.as_str()>
                <strong>{status.phase.as_str()}</strong>
                " "
                <span>{what}</span>
                {status.message.map(|m| view! { " " <em class="banner-message">{m}</em> })}
                <span class="banner-since">" since " <Time at=status.since.clone()/></span>
            </div>
        }
    })
}

#[component]
fn Nav(viewer: Viewer) -> impl IntoView {
    let admin = viewer.is_admin();
    view! {
        <nav class="nav" aria-label="Main">
            <a href="/">"Dashboard"</a>
            <a href="/queue">"Queue"</a>
            <a href="/jobs">"Jobs"</a>
            <a href="/submit">"Submit"</a>
            <a href="/usage">"Lab usage"</a>
            <a href="/policy">"Policy"</a>
            <a href="/account">"Account"</a>
            {admin.then(|| view! { <a href="/admin">"Admin"</a> })}
        </nav>
        <div class="who">
            <span class="who-name" data-testid="who">{viewer.username.clone()}</span>
            <span class="who-lab">" (" {viewer.lab.clone()} ", " {viewer.role.as_str()} ")"</span>
            <form method="post" action="/logout" class="logout">
                <button type="submit">"Sign out"</button>
            </form>
        </div>
    }
}

/// Top bar + banner + page body.
#[component]
pub fn Layout(children: Children) -> impl IntoView {
    let viewer = Resource::new(|| (), |_| whoami());
    let maintenance = Resource::new(|| (), |_| maintenance_status());
    let cluster = Resource::new(|| (), |_| cluster_problem());
    view! {
        <header class="topbar">
            <a class="brand" href="/">"JPU-Share"</a>
            <Suspense fallback=|| ()>
                {move || Suspend::new(async move {
                    match viewer.await.ok().flatten() {
                        Some(v) => view! { <Nav viewer=v/> }.into_any(),
                        None => view! {
                            <nav class="nav" aria-label="Main">
                                <a href="/policy">"Policy"</a>
                                <a href="/login">"Sign in"</a>
                            </nav>
                        }.into_any(),
                    }
                })}
            </Suspense>
        </header>
        <Suspense fallback=|| ()>
            {move || Suspend::new(async move {
                maintenance.await.ok().map(|m| view! { <MaintenanceBanner status=m/> })
            })}
        </Suspense>
        <Suspense fallback=|| ()>
            {move || Suspend::new(async move {
                cluster.await.ok().flatten().map(|problem| view! {
                    <div class="banner" role="status" data-testid="cluster-down">
                        <strong>"Cluster unreachable"</strong>
                        " New jobs stay queued until it answers again. "
                        <span class="banner-since">{problem}</span>
                    </div>
                })
            })}
        </Suspense>
        <main class="content">{children()}</main>
    }
}

/// A counter that goes up every `ms` in the browser (never on the
/// server), for pages that refresh themselves without a reload.
pub fn use_ticker(ms: u64) -> ReadSignal<u32> {
    let (tick, set_tick) = signal(0u32);
    // (a build with both features is the server's: no timers there)
    #[cfg(all(feature = "hydrate", not(feature = "ssr")))]
    Effect::new(move |_| {
        let handle = leptos::leptos_dom::helpers::set_interval_with_handle(
            move || set_tick.update(|t| *t += 1),
            std::time::Duration::from_millis(ms),
        );
        on_cleanup(move || {
            if let Ok(h) = handle {
                h.clear();
            }
        });
    });
    #[cfg(not(all(feature = "hydrate", not(feature = "ssr"))))]
    let _ = (ms, set_tick);
    tick
}

/// A server function's error, shown to the user; its api.md code rides
/// along in `data-code` (tests and styles can tell QUEUE_LIMIT from
/// NO_FIT_PLACEMENT without parsing the words).
#[component]
pub fn ErrorText(error: ConsoleError) -> impl IntoView {
    view! { <p class="error" role="alert" data-code=error.code.as_str()>{error.message}</p> }
}

/// A button for something that cannot be undone (a cancel): it asks once
/// more, and acts only on "yes".
#[component]
pub fn ConfirmButton(
    label: &'static str,
    question: &'static str,
    yes: &'static str,
    no: &'static str,
    #[prop(into)] on_yes: Callback<()>,
) -> impl IntoView {
    let (confirming, set_confirming) = signal(false);
    // The server renders the button disabled: a click before the wasm has
    // hydrated it would do nothing, and the reader could not tell (seen on a
    // loaded CI machine). Effects run only in the browser, after hydration.
    let (ready, set_ready) = signal(false);
    Effect::new(move |_| set_ready.set(true));
    view! {
        <Show
            when=move || confirming.get()
            fallback=move || view! { <button type="button" disabled=move || !ready.get() on:click=move |_| set_confirming.set(true)>{label}</button> }
        >
            <span>{question}</span>
            " "
            <button type="button" class="danger" on:click=move |_| { on_yes.run(()); set_confirming.set(false); }>{yes}</button>
            " "
            <button type="button" on:click=move |_| set_confirming.set(false)>{no}</button>
        </Show>
    }
}

/// `2026-12-04T14:20:48.123Z` → (`2026-12-04 14:20 UTC`, `2026-12-04
/// 14:20:48.123 UTC`): what the server renders, and the exact time kept in
/// the title.
pub fn utc_texts(rfc3339: &str) -> (String, String) {
    let plain = rfc3339.trim_end_matches('Z').replacen('T', " ", 1);
    let minute = plain.get(..16).unwrap_or(&plain).to_string();
    (format!("{minute} UTC"), format!("{plain} UTC"))
}

/// A moment, the one way the console shows times: rendered in UTC on the
/// server, then refined in the browser to the reader's own zone with a
/// relative form beside it ("14:20 today · in 2 h 10 min") by
/// `public/pkg/local-time.js`, which rewrites only these elements' text; the
/// title keeps the exact UTC time. Renders nothing for no time.
#[component]
pub fn Time(#[prop(into)] at: Option<String>) -> impl IntoView {
    at.map(|at| {
        let (text, exact) = utc_texts(&at);
        view! { <time datetime=at title=exact data-local="">{text}</time> }
    })
}

#[cfg(test)]
mod time_tests {
    #[test]
    fn utc_texts_round_to_the_minute_and_keep_the_exact_time() {
        let (shown, exact) = super::utc_texts("2026-12-04T19:07:42.123Z");
        assert_eq!(shown, "2026-12-04 19:07 UTC");
        assert_eq!(exact, "2026-12-04 19:07:42.123 UTC");
    }
}

/// The caller's lab's READY workspaces as `<option>`s of a form's
/// workspace `<select>` (the submit form and "Start a notebook").
#[component]
pub fn ReadyWorkspaceOptions() -> impl IntoView {
    let workspaces = Resource::new(|| (), |_| my_workspaces());
    view! {
        <Suspense fallback=|| ()>
            {move || Suspend::new(async move {
                workspaces.await.unwrap_or_default().into_iter().filter(|w| w.status == "READY").map(|w| {
                    let label = format!("{} ({})", w.name, w.base_image);
                    view! { <option value=w.name>{label}</option> }
                }).collect_view()
            })}
        </Suspense>
    }
}

/// A pending or end reason in words, linked to the Policy page's section
/// that explains it (plain text for a reason it does not know).
#[component]
pub fn ReasonText(#[prop(into)] reason: String, #[prop(optional)] words: Option<String>) -> impl IntoView {
    let words = words.unwrap_or_else(|| crate::model::views::reason_in_words(&reason));
    match crate::model::policy::reason_link(&reason) {
        Some(href) => view! { <a class="reason-link" href=href title="How this works">{words}</a> }.into_any(),
        None => view! { <span>{words}</span> }.into_any(),
    }
}
