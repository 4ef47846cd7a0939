//! `/datasets`: the datasets open to the viewer's lab (browse them on the
//! Files page), the form that asks the admins for data by URL, and the
//! lab's requests with their state (policy §13). `/admin/datasets` (in
//! `admin::datasets`) is where admins register, open and decide.

use crate::api::{datasets_page, RequestData};
use crate::i18n::{words, Words};
use crate::model::datasets::{DataRequestView, DatasetView};
use crate::pages::components::{ErrorText, Layout, Time};
use leptos::prelude::*;

pub(crate) const KEYS: &[&str] = &[
    "datasets-title",
    "datasets-intro",
    "datasets-none",
    "datasets-col-name",
    "datasets-col-state",
    "datasets-col-size",
    "datasets-col-source",
    "datasets-col-labs",
    "datasets-every-lab",
    "datasets-browse",
    "datasets-request",
    "datasets-request-intro",
    "datasets-name",
    "datasets-url",
    "datasets-sha256",
    "datasets-reason",
    "datasets-send",
    "datasets-sent",
    "datasets-requests",
    "datasets-no-requests",
    "datasets-col-by",
    "datasets-col-when",
    "datasets-col-decision",
    "loading",
];

#[component]
pub fn DatasetsPage() -> impl IntoView {
    view! { <Layout><DatasetsPageBody w=words(KEYS)/></Layout> }
}

/// The page's body: an island (the request form, the lists refreshed).
#[island]
fn DatasetsPageBody(w: Words) -> impl IntoView {
    let w = StoredValue::new(w);
    let get = move |key: &str| w.with_value(|w| w.get(key));
    let ask = ServerAction::<RequestData>::new();
    let data = Resource::new(move || ask.version().get(), |_| datasets_page());
    view! {
        <h1>{get("datasets-title")}</h1>
        <p class="muted">{get("datasets-intro")}</p>
        <Transition fallback=move || view! { <p>{get("loading")}</p> }>
            {move || Suspend::new(async move {
                match data.await {
                    Err(e) => view! { <ErrorText error=e/> }.into_any(),
                    Ok(page) => view! {
                        <DatasetTable datasets=page.datasets get=get/>
                        <section aria-labelledby="req-list-h">
                            <h2 id="req-list-h">{get("datasets-requests")}</h2>
                            <RequestTable requests=page.requests get=get/>
                        </section>
                    }.into_any(),
                }
            })}
        </Transition>
        <section aria-labelledby="req-h">
            <h2 id="req-h">{get("datasets-request")}</h2>
            <p class="muted">{get("datasets-request-intro")}</p>
            <ActionForm action=ask attr:class="card form" attr:data-testid="data-request">
                <label for="req-name">{get("datasets-name")}</label>
                <input id="req-name" name="name" required maxlength="64" pattern="[A-Za-z0-9_\\-][A-Za-z0-9._\\-]*" placeholder="imagenet-mini"/>
                <label for="req-url">{get("datasets-url")}</label>
                <input id="req-url" name="url" type="url" required maxlength="2048" placeholder="https://"/>
                <label for="req-sha">{get("datasets-sha256")}</label>
                <input id="req-sha" name="sha256" maxlength="64"/>
                <label for="req-reason">{get("datasets-reason")}</label>
                <textarea id="req-reason" name="reason" required maxlength="2000" rows="3"></textarea>
                {move || ask.value().get().map(|r| match r {
                    Ok(_) => view! { <p role="status" class="done">{get("datasets-sent")}</p> }.into_any(),
                    Err(e) => view! { <ErrorText error=e/> }.into_any(),
                })}
                <button type="submit">{get("datasets-send")}</button>
            </ActionForm>
        </section>
    }
}

fn gb(bytes: u64) -> String {
    format!("{:.2} GB", bytes as f64 / 1e9)
}

/// The datasets; each links to its files.
#[component]
pub(crate) fn DatasetTable(
    datasets: Vec<DatasetView>,
    get: impl Fn(&str) -> String + Copy + Send + Sync + 'static,
) -> impl IntoView {
    if datasets.is_empty() {
        return view! { <p class="muted" data-testid="datasets">{get("datasets-none")}</p> }.into_any();
    }
    view! {
        <div class="scroll" tabindex="0">
        <table class="table" data-testid="datasets">
            <thead><tr><th>{get("datasets-col-name")}</th><th>{get("datasets-col-state")}</th><th>{get("datasets-col-size")}</th><th>{get("datasets-col-labs")}</th><th>{get("datasets-col-source")}</th></tr></thead>
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
                            <td>{d.labs.map_or_else(|| get("datasets-every-lab"), |l| l.join(", "))}</td>
                            <td class="wrap"><code>{d.source}</code></td>
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
pub(crate) fn RequestTable(
    requests: Vec<DataRequestView>,
    get: impl Fn(&str) -> String + Copy + Send + Sync + 'static,
) -> impl IntoView {
    if requests.is_empty() {
        return view! { <p class="muted" data-testid="requests">{get("datasets-no-requests")}</p> }.into_any();
    }
    view! {
        <div class="scroll" tabindex="0">
        <table class="table" data-testid="requests">
            <thead><tr><th>"#"</th><th>{get("datasets-col-name")}</th><th>{get("datasets-col-state")}</th><th>{get("datasets-col-by")}</th><th>{get("datasets-col-when")}</th><th>{get("datasets-col-decision")}</th></tr></thead>
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

#[cfg(all(test, feature = "ssr"))]
mod tests {
    #[test]
    fn the_islands_words_exist() {
        let missing = crate::i18n::missing_keys(super::KEYS.iter());
        assert!(missing.is_empty(), "missing: {missing:?}");
    }
}
