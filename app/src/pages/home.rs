//! The sign-in page and the dashboard: the cluster's tiers and nodes,
//! every lab's standing and the viewer's unfinished jobs.

use crate::api::dashboard;
use crate::i18n::{t, t_with};
use crate::model::views::DashboardView;
use crate::model::NodeView;
use crate::pages::components::Layout;
use crate::pages::jobs::StartNotebook;
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;

/// A plain HTML form posted to `/login`: works without JavaScript.
#[component]
pub fn LoginPage() -> impl IntoView {
    let query = use_query_map();
    let options = Resource::new(|| (), |_| crate::api::sign_in_options());
    let button = move || options.get().and_then(Result::ok).map(|o| o.button).unwrap_or_default();
    let error = move || {
        query.with(|q| match q.get("error").as_deref() {
            Some("throttled") => Some(t("login-throttled")),
            Some("disabled") => Some(t("login-disabled")),
            Some("busy") => Some(t("login-busy")),
            Some("refused") => Some(t("login-refused")),
            Some("directory") => Some(t("login-directory")),
            Some("passwords_off") => Some(t_with("login-passwords-off", &[("button", button().into())])),
            Some(_) => Some(t("login-wrong")),
            None => None,
        })
    };
    view! {
        <Title text=format!("{} — JPU-Share", t("nav-sign-in"))/>
        <main class="login">
            <h1>"JPU-Share"</h1>
            <p class="muted">{t("login-tagline")}</p>
            <Suspense fallback=|| ()>
                {move || error().map(|e| view! { <p class="error card" role="alert">{e}</p> })}
                {move || options.get().and_then(Result::ok).map(|o| {
                    let university = o.university.then(|| view! {
                        <a class="button primary" href="/auth/oidc/login" data-testid="university-sign-in">{o.button.clone()}</a>
                    });
                    let form = view! {
                        <form method="post" action="/login" class="card">
                            <label for="username">{t("login-username")}</label>
                            <input id="username" name="username" autocomplete="username" required/>
                            <label for="password">{t("login-password")}</label>
                            <input id="password" name="password" type="password" autocomplete="current-password" required/>
                            <button type="submit">{t("nav-sign-in")}</button>
                        </form>
                    };
                    // with passwords for local accounts only, the form
                    // stays for them (break-glass), folded away
                    let form = if o.passwords_for_everyone {
                        form.into_any()
                    } else {
                        view! { <details><summary>{t("login-local")}</summary>{form}</details> }.into_any()
                    };
                    view! { {university} {form} }
                })}
            </Suspense>
            <p class="login-links"><a href="/policy">{t("policy-title")}</a></p>
        </main>
    }
}

#[component]
pub fn DashboardPage() -> impl IntoView {
    let data = Resource::new(|| (), |_| dashboard());
    let storage = Resource::new(|| (), |_| crate::api::my_storage());
    view! {
        <Layout>
            <h1>{t("dash-title")}</h1>
            <Suspense fallback=|| ()>
                {move || Suspend::new(async move { storage.await.ok().map(|s| view! { <StorageLine storage=s/> }) })}
            </Suspense>
            <Suspense fallback=|| view! { <p>{t("loading")}</p> }>
                {move || Suspend::new(async move {
                    match data.await {
                        Ok(d) => view! { <ClusterOverview data=d/> }.into_any(),
                        Err(e) => view! { <p class="error">{e.to_string()}</p> }.into_any(),
                    }
                })}
            </Suspense>
        </Layout>
    }
}

/// The viewer's home and lab share against their quotas, one line, with
/// the way to the Files page (policy §13).
#[component]
fn StorageLine(storage: crate::model::storage::StorageView) -> impl IntoView {
    let gb = |bytes: u64| format!("{:.2} GB", bytes as f64 / 1e9);
    let place = |key: &str, p: &crate::model::storage::PlaceUsage| {
        let over = p.used_bytes > p.quota_bytes;
        view! {
            <span class:over=over>{t(key)}": "{gb(p.used_bytes)}" / "{gb(p.quota_bytes)}
                {over.then(|| view! { " " <strong>{t("storage-over")}</strong> })}</span>
        }
    };
    view! {
        <p class="muted" data-testid="dashboard-storage">
            {place("storage-home", &storage.home)}" · "{place("storage-lab", &storage.lab)}" · "
            <a href="/files">{t("nav-files")}</a>
        </p>
    }
}

#[component]
fn ClusterOverview(data: DashboardView) -> impl IntoView {
    let tiers = data.tiers.clone();
    let (yes, no) = (t("tiers-active-yes"), t("dash-no"));
    view! {
        <section aria-labelledby="tiers-h">
            <h2 id="tiers-h">{t("sec-tiers")}</h2>
            <div class="scroll" tabindex="0">
            <table class="table" data-testid="tiers">
                <thead>
                    <tr><th>{t("tiers-col-tier")}</th><th>{t("dash-name")}</th><th>"VRAM"</th><th>"TFLOPS"</th><th>{t("tiers-col-max")}</th><th>{t("tiers-col-active")}</th></tr>
                </thead>
                <tbody>
                    {tiers.into_iter().map(|t| view! {
                        <tr>
                            <td>{t.display_name}</td>
                            <td><code>{t.name}</code></td>
                            <td>{format!("{} GB", t.vram_gb)}</td>
                            <td>{format!("{:.1}", t.tflops)}</td>
                            <td>{t.max_gpus}</td>
                            <td>{if t.active { yes.clone() } else { no.clone() }}</td>
                        </tr>
                    }).collect_view()}
                </tbody>
            </table>
            </div>
        </section>
        <section aria-labelledby="nodes-h">
            <h2 id="nodes-h">{t("dash-nodes")}</h2>
            <ul class="legend" aria-label=t("dash-legend")>
                <li class="gpu gpu-research">{t("dash-use-research")}</li>
                <li class="gpu gpu-backfill">{t("dash-use-backfill")}</li>
                <li class="gpu gpu-reserved">{t("dash-use-reserved")}</li>
                <li class="gpu gpu-idle">{t("dash-use-idle")}</li>
            </ul>
            <div class="nodes" data-testid="nodes">
                {data.nodes.into_iter().map(|n| view! { <NodeCard node=n/> }).collect_view()}
            </div>
        </section>
        <section aria-labelledby="mine-h">
            <h2 id="mine-h">{t("dash-mine")}</h2>
            {if data.my_jobs.is_empty() {
                view! { <p class="muted">{t("dash-none")} " " <a href="/submit">{t("dash-submit")}</a></p> }.into_any()
            } else {
                view! {
                    <ul data-testid="my-jobs">
                        {data.my_jobs.into_iter().map(|j| view! {
                            <li><a href=format!("/jobs/{}", j.id)>{format!("#{} {}", j.id, j.name)}</a>
                                {(j.kind == crate::model::JobKind::Session).then(|| view! { <span class="badge">{t("dash-notebook")}</span> })}
                                " — " {j.state.as_str()}
                                {j.pending_reason.map(|r| format!(" ({})", crate::model::reasons::reason_in_words(&r)))}</li>
                        }).collect_view()}
                    </ul>
                }.into_any()
            }}
        </section>
        <StartNotebook w=crate::i18n::words(crate::pages::jobs::NOTEBOOK_KEYS)/>
        <section aria-labelledby="labs-h">
            <h2 id="labs-h">{t("dash-labs")}</h2>
            <p class="muted">{t("dash-labs-note")} " " <a href="/policy#fair-share">{t("sec-fair-share")}</a></p>
            <div class="scroll" tabindex="0">
            <table class="table" data-testid="labs">
                <thead><tr><th>{t("dash-lab")}</th><th>{t("dash-usage")}</th><th>{t("dash-running")}</th><th>{t("dash-waiting")}</th></tr></thead>
                <tbody>
                    {data.labs.into_iter().map(|l| view! {
                        <tr><td>{l.name}</td><td>{format!("{:.0}", l.usage_tflop_s)}</td><td>{l.running_gpus}</td><td>{l.queued_jobs}</td></tr>
                    }).collect_view()}
                </tbody>
            </table>
            </div>
        </section>
    }
}

#[component]
fn NodeCard(node: NodeView) -> impl IntoView {
    view! {
        <article class="node">
            <h3>{node.name.clone()} " " <small class="muted">{node.state.as_str()}</small></h3>
            <ul class="gpus">
                {node.gpus.into_iter().map(|g| view! {
                    <li class=format!("gpu gpu-{}", g.used_by.as_str()) data-use=g.used_by.as_str()>
                        {format!("GPU {} · {} · {}", g.index, g.tier, crate::i18n::t(&format!("dash-use-{}", g.used_by.as_str())))}
                    </li>
                }).collect_view()}
            </ul>
        </article>
    }
}
