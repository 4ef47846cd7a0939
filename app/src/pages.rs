//! The console's routes: the HTML shell, the router and each page.

use crate::api::dashboard;
use crate::components::Layout;
use crate::model::{DashboardView, NodeView};
use crate::pages_account::AccountPage;
use crate::pages_admin::AdminPage;
use crate::pages_admin_cluster::{AdminBackfillPage, AdminClusterPage, AdminPeoplePage};
use crate::pages_jobs::{JobPage, JobsPage, QueuePage, SubmitPage};
use crate::pages_usage::UsagePageView;
use leptos::prelude::*;
use leptos_meta::{provide_meta_context, MetaTags, Stylesheet, Title};
use leptos_router::{
    components::{Route, Router, Routes},
    hooks::use_query_map,
    ParamSegment, StaticSegment,
};

/// The document around the app, rendered on the server.
pub fn shell(options: LeptosOptions) -> impl IntoView {
    view! {
        <!DOCTYPE html>
        <html lang="en">
            <head>
                <meta charset="utf-8"/>
                <meta name="viewport" content="width=device-width, initial-scale=1"/>
                <link rel="icon" type="image/svg+xml" href="/favicon.svg"/>
                <HydrationScripts options islands=true/>
                <MetaTags/>
            </head>
            <body>
                <App/>
            </body>
        </html>
    }
}

#[component]
pub fn App() -> impl IntoView {
    provide_meta_context();
    view! {
        <Stylesheet id="jpu" href="/pkg/jpu-share.css"/>
        <Title text="JPU-Share"/>
        <Router>
            <Routes fallback=|| view! { <Layout><p>"No such page."</p></Layout> }>
                <Route path=StaticSegment("") view=DashboardPage/>
                <Route path=StaticSegment("login") view=LoginPage/>
                <Route path=StaticSegment("queue") view=QueuePage/>
                <Route path=StaticSegment("jobs") view=JobsPage/>
                <Route path=(StaticSegment("jobs"), ParamSegment("id")) view=JobPage/>
                <Route path=StaticSegment("submit") view=SubmitPage/>
                <Route path=StaticSegment("usage") view=UsagePageView/>
                <Route path=StaticSegment("account") view=AccountPage/>
                <Route path=StaticSegment("admin") view=AdminPage/>
                <Route path=(StaticSegment("admin"), StaticSegment("cluster")) view=AdminClusterPage/>
                <Route path=(StaticSegment("admin"), StaticSegment("people")) view=AdminPeoplePage/>
                <Route path=(StaticSegment("admin"), StaticSegment("backfill")) view=AdminBackfillPage/>
            </Routes>
        </Router>
    }
}

/// A plain HTML form posted to `/login`: works without JavaScript.
#[component]
fn LoginPage() -> impl IntoView {
    let query = use_query_map();
    let error = move || {
        query.with(|q| match q.get("error").as_deref() {
            Some("throttled") => Some("Too many failed attempts. Wait a moment and try again."),
            Some("disabled") => Some("This account is disabled. Ask an admin."),
            Some("busy") => Some("The server is busy checking sign-ins. Try again in a second."),
            Some(_) => Some("Wrong username or password."),
            None => None,
        })
    };
    view! {
        <Title text="Sign in — JPU-Share"/>
        <main class="login">
            <h1>"JPU-Share"</h1>
            <p class="muted">"GPU sharing for research labs"</p>
            <form method="post" action="/login" class="card">
                {move || error().map(|e| view! { <p class="error" role="alert">{e}</p> })}
                <label for="username">"Username"</label>
                <input id="username" name="username" autocomplete="username" required/>
                <label for="password">"Password"</label>
                <input id="password" name="password" type="password" autocomplete="current-password" required/>
                <button type="submit">"Sign in"</button>
            </form>
        </main>
    }
}

#[component]
fn DashboardPage() -> impl IntoView {
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
                                " — " {j.state.as_str()}
                                {j.pending_reason.map(|r| format!(" ({})", crate::views::reason_in_words(&r)))}</li>
                        }).collect_view()}
                    </ul>
                }.into_any()
            }}
        </section>
        <section aria-labelledby="labs-h">
            <h2 id="labs-h">"Labs' standing"</h2>
            <p class="muted">"Lower recent usage goes first in the queue (usage halves every week)."</p>
            <table class="table" data-testid="labs">
                <thead><tr><th>"Lab"</th><th>"Usage (TFLOP·s, decayed)"</th><th>"GPUs running"</th><th>"Jobs waiting"</th></tr></thead>
                <tbody>
                    {data.labs.into_iter().map(|l| view! {
                        <tr><td>{l.name}</td><td>{format!("{:.0}", l.usage_tflop_s)}</td><td>{l.running_gpus}</td><td>{l.queued_jobs}</td></tr>
                    }).collect_view()}
                </tbody>
            </table>
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
