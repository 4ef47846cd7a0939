//! The sign-in page and the dashboard: the cluster's tiers and nodes,
//! every lab's standing and the viewer's unfinished jobs.

use crate::api::dashboard;
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
            Some("throttled") => Some("Too many failed attempts. Wait a moment and try again.".to_string()),
            Some("disabled") => Some("This account is disabled. Ask an admin.".into()),
            Some("busy") => Some("The server is busy checking sign-ins. Try again in a second.".into()),
            Some("passwords_off") => {
                Some(format!("Passwords here are only for local accounts. Sign in with “{}” instead.", button()))
            }
            Some(_) => Some("Wrong username or password.".into()),
            None => None,
        })
    };
    view! {
        <Title text="Sign in — JPU-Share"/>
        <main class="login">
            <h1>"JPU-Share"</h1>
            <p class="muted">"GPU sharing for research labs"</p>
            <Suspense fallback=|| ()>
                {move || error().map(|e| view! { <p class="error card" role="alert">{e}</p> })}
                {move || options.get().and_then(Result::ok).map(|o| {
                    let university = o.university.then(|| view! {
                        <a class="button primary" href="/auth/oidc/login" data-testid="university-sign-in">{o.button.clone()}</a>
                    });
                    let form = view! {
                        <form method="post" action="/login" class="card">
                            <label for="username">"Username"</label>
                            <input id="username" name="username" autocomplete="username" required/>
                            <label for="password">"Password"</label>
                            <input id="password" name="password" type="password" autocomplete="current-password" required/>
                            <button type="submit">"Sign in"</button>
                        </form>
                    };
                    // with passwords for local accounts only, the form
                    // stays for them (break-glass), folded away
                    let form = if o.passwords_for_everyone {
                        form.into_any()
                    } else {
                        view! { <details><summary>"Local account (administrators)"</summary>{form}</details> }.into_any()
                    };
                    view! { {university} {form} }
                })}
            </Suspense>
        </main>
    }
}

#[component]
pub fn DashboardPage() -> impl IntoView {
    let data = Resource::new(|| (), |_| dashboard());
    view! {
        <Layout>
            <h1>"Cluster"</h1>
            <Suspense fallback=|| view! { <p>"Loading…"</p> }>
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

#[component]
fn ClusterOverview(data: DashboardView) -> impl IntoView {
    let tiers = data.tiers.clone();
    view! {
        <section aria-labelledby="tiers-h">
            <h2 id="tiers-h">"GPU tiers"</h2>
            <div class="scroll" tabindex="0">
            <table class="table" data-testid="tiers">
                <thead>
                    <tr><th>"Tier"</th><th>"Name"</th><th>"VRAM"</th><th>"TFLOPS"</th><th>"Max GPUs / job"</th><th>"Active"</th></tr>
                </thead>
                <tbody>
                    {tiers.into_iter().map(|t| view! {
                        <tr>
                            <td>{t.display_name}</td>
                            <td><code>{t.name}</code></td>
                            <td>{format!("{} GB", t.vram_gb)}</td>
                            <td>{format!("{:.1}", t.tflops)}</td>
                            <td>{t.max_gpus}</td>
                            <td>{if t.active { "yes" } else { "no" }}</td>
                        </tr>
                    }).collect_view()}
                </tbody>
            </table>
            </div>
        </section>
        <section aria-labelledby="nodes-h">
            <h2 id="nodes-h">"Nodes"</h2>
            <ul class="legend" aria-label="Legend">
                <li class="gpu gpu-research">"research job"</li>
                <li class="gpu gpu-backfill">"LLM backfill"</li>
                <li class="gpu gpu-reserved">"reserved for the next job"</li>
                <li class="gpu gpu-idle">"idle"</li>
            </ul>
            <div class="nodes" data-testid="nodes">
                {data.nodes.into_iter().map(|n| view! { <NodeCard node=n/> }).collect_view()}
            </div>
        </section>
        <section aria-labelledby="mine-h">
            <h2 id="mine-h">"My running and waiting jobs"</h2>
            {if data.my_jobs.is_empty() {
                view! { <p class="muted">"None. " <a href="/submit">"Submit a job"</a></p> }.into_any()
            } else {
                view! {
                    <ul data-testid="my-jobs">
                        {data.my_jobs.into_iter().map(|j| view! {
                            <li><a href=format!("/jobs/{}", j.id)>{format!("#{} {}", j.id, j.name)}</a>
                                {(j.kind == crate::model::JobKind::Session).then(|| view! { <span class="badge">"notebook session"</span> })}
                                " — " {j.state.as_str()}
                                {j.pending_reason.map(|r| format!(" ({})", crate::model::views::reason_in_words(&r)))}</li>
                        }).collect_view()}
                    </ul>
                }.into_any()
            }}
        </section>
        <StartNotebook/>
        <section aria-labelledby="labs-h">
            <h2 id="labs-h">"Labs' standing"</h2>
            <p class="muted">"Lower recent usage goes first in the queue (usage halves every week)."</p>
            <div class="scroll" tabindex="0">
            <table class="table" data-testid="labs">
                <thead><tr><th>"Lab"</th><th>"Usage (TFLOP·s, decayed)"</th><th>"GPUs running"</th><th>"Jobs waiting"</th></tr></thead>
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
                        {format!("GPU {} · {} · {}", g.index, g.tier, g.used_by.as_str())}
                    </li>
                }).collect_view()}
            </ul>
        </article>
    }
}
