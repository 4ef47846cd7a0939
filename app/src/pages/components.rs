//! Pieces every console page uses: the top bar with navigation and the
//! signed-in user, the maintenance banner, times, and the options both
//! job forms offer.

use crate::api::{cluster_problem, maintenance_status, my_workspaces, whoami};
use crate::i18n::{locale, t, Locale};
use crate::model::error::ConsoleError;
use crate::model::{MaintenancePhase, MaintenanceView, Viewer};
use leptos::prelude::*;

/// The banner shown on every page while maintenance is in any phase but
/// NORMAL (policy §10). Renders nothing in NORMAL.
#[component]
pub fn MaintenanceBanner(status: MaintenanceView) -> impl IntoView {
    (status.phase != MaintenancePhase::Normal).then(|| {
        let what = match status.phase {
            MaintenancePhase::Draining => t("banner-draining"),
            MaintenancePhase::BackfillRecovery => t("banner-recovery"),
            MaintenancePhase::Active => t("banner-active"),
            MaintenancePhase::Normal => String::new(),
        };
        view! {
            <div class="banner" role="status" data-phase=status.phase.as_str()>
                <strong>{status.phase.as_str()}</strong>
                " "
                <span>{what}</span>
                {status.message.map(|m| view! { " " <em class="banner-message">{m}</em> })}
                <span class="banner-since">" " {t("banner-since")} " " <Time at=status.since.clone()/></span>
            </div>
        }
    })
}

#[component]
fn Nav(viewer: Viewer) -> impl IntoView {
    let admin = viewer.is_admin();
    view! {
        <nav class="nav" aria-label=t("nav-main")>
            <a href="/">{t("nav-dashboard")}</a>
            <a href="/queue">{t("nav-queue")}</a>
            <a href="/jobs">{t("nav-jobs")}</a>
            <a href="/submit">{t("nav-submit")}</a>
            <a href="/usage">{t("nav-usage")}</a>
            <a href="/files">{t("nav-files")}</a>
            <a href="/datasets">{t("nav-datasets")}</a>
            <a href="/policy">{t("nav-policy")}</a>
            <a href="/account">{t("nav-account")}</a>
            {admin.then(|| view! { <a href="/admin">{t("nav-admin")}</a> })}
        </nav>
        <div class="who">
            <span class="who-name" data-testid="who">{viewer.username.clone()}</span>
            <span class="who-lab">" (" {viewer.lab.clone()} ", " {viewer.role.as_str()} ")"</span>
            <form method="post" action="/logout" class="logout">
                <button type="submit">{t("nav-sign-out")}</button>
            </form>
        </div>
    }
}

/// What the browser's tab (and a screen reader's list of them) calls the
/// page at `path`: the page's own name before the site's.
pub fn page_title(path: &str) -> String {
    let segments: Vec<&str> = path.trim_matches('/').split('/').filter(|s| !s.is_empty()).collect();
    let name = match segments.as_slice() {
        [] => t("nav-dashboard"),
        ["login"] => t("nav-sign-in"),
        ["queue"] => t("nav-queue"),
        ["jobs"] => t("nav-jobs"),
        ["jobs", id] => format!("#{id} — {}", t("nav-jobs")),
        ["submit"] => t("nav-submit"),
        ["usage"] => t("nav-usage"),
        ["policy"] => t("nav-policy"),
        ["account"] => t("nav-account"),
        ["files"] => t("nav-files"),
        ["datasets"] => t("nav-datasets"),
        ["admin", "datasets"] => format!("{} — {}", t("nav-datasets"), t("admin-admin")),
        ["admin"] => t("admin-admin"),
        ["admin", "cluster"] => t("admin-tiers-and-nodes"),
        ["admin", "people"] => t("admin-labs-and-users"),
        ["admin", "backfill"] => t("admin-llm-backfill"),
        _ => t("not-found"),
    };
    format!("{name} — JPU-Share")
}

/// Top bar + banner + page body.
#[component]
pub fn Layout(children: Children) -> impl IntoView {
    let viewer = Resource::new(|| (), |_| whoami());
    let maintenance = Resource::new(|| (), |_| maintenance_status());
    let cluster = Resource::new(|| (), |_| cluster_problem());
    let title = page_title(&leptos_router::hooks::use_location().pathname.get_untracked());
    view! {
        <leptos_meta::Title text=title/>
        <header class="topbar">
            <a class="brand" href="/">"JPU-Share"</a>
            <Suspense fallback=|| ()>
                {move || Suspend::new(async move {
                    match viewer.await.ok().flatten() {
                        Some(v) => view! { <Nav viewer=v/> }.into_any(),
                        None => view! {
                            <nav class="nav" aria-label=t("nav-main")>
                                <a href="/policy">{t("nav-policy")}</a>
                                <a href="/login">{t("nav-sign-in")}</a>
                            </nav>
                        }.into_any(),
                    }
                })}
            </Suspense>
            <LanguageSwitch/>
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
                        <strong>{t("cluster-down-title")}</strong>
                        " " {t("cluster-down-text")} " "
                        <span class="banner-since">{problem}</span>
                    </div>
                })
            })}
        </Suspense>
        <main class="content">{children()}</main>
        // the version an operator upgraded to, on every page (#44)
        <footer class="footer muted" data-testid="version">{concat!("JPU-Share ", env!("CARGO_PKG_VERSION"))}</footer>
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
    #[prop(into)] label: String,
    #[prop(into)] question: String,
    #[prop(into)] yes: String,
    #[prop(into)] no: String,
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
            fallback=move || view! { <button type="button" disabled=move || !ready.get() on:click=move |_| set_confirming.set(true)>{label.clone()}</button> }
        >
            <span>{question.clone()}</span>
            " "
            <button type="button" class="danger" on:click=move |_| { on_yes.run(()); set_confirming.set(false); }>{yes.clone()}</button>
            " "
            <button type="button" on:click=move |_| set_confirming.set(false)>{no.clone()}</button>
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
pub fn ReasonText(
    #[prop(into)] reason: String,
    #[prop(optional)] words: Option<String>,
    /// The link's title, in the reader's language.
    #[prop(optional)]
    how: Option<String>,
) -> impl IntoView {
    let words = words.unwrap_or_else(|| crate::model::reasons::reason_in_words(&reason));
    let how = how.unwrap_or_else(|| "How this works".to_string());
    match crate::model::policy::reason_link(&reason) {
        Some(href) => view! { <a class="reason-link" href=href title=how>{words}</a> }.into_any(),
        None => view! { <span>{words}</span> }.into_any(),
    }
}

/// The other languages, as links that switch and come back here
/// (`/lang/{tag}?back=…`; the server keeps the choice). Each link is
/// written in its own language, with `lang` and `hreflang` set so screen
/// readers read it right.
#[component]
fn LanguageSwitch() -> impl IntoView {
    let here = leptos_router::hooks::use_location();
    let back = move || {
        let path = here.pathname.get_untracked();
        let query = here.search.get_untracked();
        let full = if query.is_empty() { path } else { format!("{path}?{query}") };
        percent_encoding::utf8_percent_encode(&full, percent_encoding::NON_ALPHANUMERIC).to_string()
    };
    let current = locale();
    view! {
        <nav class="lang" aria-label=t("lang-switch") data-testid="lang-switch">
            {Locale::ALL.into_iter().filter(|l| *l != current).map(|l| view! {
                <a href=format!("/lang/{}?back={}", l.tag(), back()) lang=l.tag() hreflang=l.tag()>{l.own_name()}</a>
            }).collect_view()}
        </nav>
    }
}
