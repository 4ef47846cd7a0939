//! `/datasets`: the datasets open to the viewer's lab (browse them on the
//! Files page), the form that asks the admins for data by URL, and the
//! lab's requests with their state (policy §13). `/admin/datasets` (in
//! `admin::datasets`) is where admins register, open and decide.
//!
//! Rendered on the server: the forms post to `/v1` from
//! `public/pkg/forms.js` (each says what was done or why not, and the
//! page reloads), so these pages add nothing to the browser's bundle.

use crate::api::datasets_page;
use crate::i18n::t;
use crate::model::datasets::{DataRequestView, DatasetView};
use crate::pages::components::{ErrorText, Layout, Time};
use leptos::prelude::*;

#[component]
pub fn DatasetsPage() -> impl IntoView {
    let data = Resource::new(|| (), |_| datasets_page());
    view! {
        <Layout>
            <h1>{t("datasets-title")}</h1>
            <p class="muted">{t("datasets-intro")}</p>
            <Suspense fallback=|| view! { <p>{t("loading")}</p> }>
                {move || Suspend::new(async move {
                    match data.await {
                        Err(e) => view! { <ErrorText error=e/> }.into_any(),
                        Ok(page) => view! {
                            <DatasetTable datasets=page.datasets/>
                            <section aria-labelledby="req-list-h">
                                <h2 id="req-list-h">{t("datasets-requests")}</h2>
                                <RequestTable requests=page.requests/>
                            </section>
                        }.into_any(),
                    }
                })}
            </Suspense>
            <section aria-labelledby="req-h">
                <h2 id="req-h">{t("datasets-request")}</h2>
                <p class="muted">{t("datasets-request-intro")}</p>
                <form class="card form" data-testid="data-request" data-api="POST /v1/data-requests" data-shape="request"
                    data-done=t("datasets-sent")>
                    <label for="req-name">{t("datasets-name")}</label>
                    <input id="req-name" name="name" required maxlength="64" pattern="[A-Za-z0-9_\\-][A-Za-z0-9._\\-]*" placeholder="imagenet-mini"/>
                    <label for="req-url">{t("datasets-url")}</label>
                    <input id="req-url" name="url" type="url" required maxlength="2048" placeholder="https://"/>
                    <label for="req-sha">{t("datasets-sha256")}</label>
                    <input id="req-sha" name="sha256" maxlength="64"/>
                    <label for="req-reason">{t("datasets-reason")}</label>
                    <textarea id="req-reason" name="reason" required maxlength="2000" rows="3"></textarea>
                    <p role="status" class="form-status"></p>
                    <button type="submit">{t("datasets-send")}</button>
                </form>
            </section>
            <script src="/pkg/forms.js" defer></script>
        </Layout>
    }
}

fn gb(bytes: u64) -> String {
    format!("{:.2} GB", bytes as f64 / 1e9)
}

/// The datasets; each links to its files.
#[component]
pub(crate) fn DatasetTable(datasets: Vec<DatasetView>) -> impl IntoView {
    if datasets.is_empty() {
        return view! { <p class="muted" data-testid="datasets">{t("datasets-none")}</p> }.into_any();
    }
    view! {
        <div class="scroll" tabindex="0">
        <table class="table" data-testid="datasets">
            <thead><tr><th>{t("datasets-col-name")}</th><th>{t("datasets-col-state")}</th><th>{t("datasets-col-size")}</th><th>{t("datasets-col-labs")}</th><th>{t("datasets-col-source")}</th></tr></thead>
            <tbody>
                {datasets.into_iter().map(|d| {
                    let browse = (d.state == "READY").then(|| format!("/files?place=datasets&path={}", d.name));
                    view! {
                        <tr>
                            <td>{match browse {
                                Some(href) => view! { <a href=href>{d.name.clone()}</a> }.into_any(),
                                None => d.name.clone().into_any(),
                            }}<br/><span class="muted">{d.description}</span></td>
                            <td><span class="state" data-state=d.state.clone()>{d.state.clone()}</span></td>
                            <td>{gb(d.size_bytes)}</td>
                            <td>{d.labs.map_or_else(|| t("datasets-every-lab"), |l| l.join(", "))}</td>
                            <td class="wrap"><code>{d.source}</code>{d.fetch_log.filter(|l| !l.is_empty()).map(|l| view! {
                                <details><summary>{t("datasets-log")}</summary><pre class="wrap">{l}</pre></details>
                            })}</td>
                        </tr>
                    }
                }).collect_view()}
            </tbody>
        </table>
        </div>
    }
    .into_any()
}

#[component]
pub(crate) fn RequestTable(requests: Vec<DataRequestView>) -> impl IntoView {
    if requests.is_empty() {
        return view! { <p class="muted" data-testid="requests">{t("datasets-no-requests")}</p> }.into_any();
    }
    view! {
        <div class="scroll" tabindex="0">
        <table class="table" data-testid="requests">
            <thead><tr><th>"#"</th><th>{t("datasets-col-name")}</th><th>{t("datasets-col-state")}</th><th>{t("datasets-col-by")}</th><th>{t("datasets-col-when")}</th><th>{t("datasets-col-decision")}</th></tr></thead>
            <tbody>
                {requests.into_iter().map(|r| view! {
                    <tr>
                        <td>{r.id}</td>
                        <td>{r.name}<br/><code class="wrap">{r.url}</code></td>
                        <td><span class="state" data-state=r.state.clone()>{r.state.clone()}</span></td>
                        <td>{format!("{} ({})", r.user, r.lab)}</td>
                        <td><Time at=Some(r.created_at)/></td>
                        <td>{[r.decided_by, r.decision_reason, r.message].into_iter().flatten().collect::<Vec<_>>().join(" — ")}</td>
                    </tr>
                }).collect_view()}
            </tbody>
        </table>
        </div>
    }
    .into_any()
}
