//! `/admin/datasets`: register a folder or a URL as a dataset, open it to
//! labs, delete it, and approve or reject researchers' data requests
//! (policy §13).

use super::forms::outcome;
use super::AdminNav;
use crate::api::admin::AdminForm;
use crate::api::datasets_page;
use crate::i18n::{t, Words};
use crate::pages::components::{ErrorText, Layout};
use crate::pages::datasets::{DatasetTable, RequestTable};
use leptos::prelude::*;

#[component]
pub fn AdminDatasetsPage() -> impl IntoView {
    view! { <Layout><h1>{t("nav-datasets")}</h1><AdminNav/><AdminDatasetsBody w=super::admin_words()/></Layout> }
}

#[island]
fn AdminDatasetsBody(w: Words) -> impl IntoView {
    let w = StoredValue::new(w);
    let get = move |key: &str| w.with_value(|w| w.get(key));
    let register = ServerAction::<AdminForm>::new();
    let change = ServerAction::<AdminForm>::new();
    let decide = ServerAction::<AdminForm>::new();
    let data = Resource::new(
        move || register.version().get() + change.version().get() + decide.version().get(),
        |_| datasets_page(),
    );
    view! {
        <Transition fallback=move || view! { <p>{get("loading")}</p> }>
            {move || Suspend::new(async move {
                let page = match data.await {
                    Err(e) => return view! { <ErrorText error=e/> }.into_any(),
                    Ok(page) => page,
                };
                let names: Vec<String> = page.datasets.iter().map(|d| d.name.clone()).collect();
                let options = |names: &[String]| names.iter().map(|n| view! { <option value=n.clone()>{n.clone()}</option> }).collect_view();
                let (first, second) = (options(&names), options(&names));
                let open: Vec<_> = page.requests.iter().filter(|r| r.state == "OPEN").cloned().collect();
                let labs = page.labs.join(", ");
                view! {
                    <DatasetTable datasets=page.datasets get=get/>
                    <section aria-labelledby="decide-h">
                        <h2 id="decide-h">{get("admin-datasets-decide")}</h2>
                        {open.is_empty().then(|| view! { <p class="muted">{get("admin-datasets-no-open")}</p> })}
                        {open.into_iter().map(|r| view! {
                            <ActionForm action=decide attr:class="card form" attr:data-testid="decide">
                                <input type="hidden" name="form" value="decide_data_request"/>
                                <input type="hidden" name="id" value=r.id.to_string()/>
                                <p><strong>{format!("#{} {}", r.id, r.name)}</strong>" — "{format!("{} ({})", r.user, r.lab)}</p>
                                <p class="wrap"><code>{r.url.clone()}</code></p>
                                <p>{r.reason.clone()}</p>
                                <label for=format!("why-{}", r.id)>{get("admin-datasets-reject-reason")}</label>
                                <input id=format!("why-{}", r.id) name="reason" maxlength="2000"/>
                                <div class="actions">
                                    <button type="submit" name="decision" value="approve">{get("admin-datasets-approve")}</button>
                                    <button type="submit" name="decision" value="reject" class="danger">{get("admin-datasets-reject")}</button>
                                </div>
                            </ActionForm>
                        }).collect_view()}
                        {outcome(decide.value())}
                    </section>
                    <section aria-labelledby="all-req-h">
                        <h2 id="all-req-h">{get("datasets-requests")}</h2>
                        <RequestTable requests=page.requests get=get/>
                    </section>
                    <section aria-labelledby="change-h">
                        <h2 id="change-h">{get("admin-datasets-change")}</h2>
                        <ActionForm action=change attr:class="card form" attr:data-testid="dataset-labs">
                            <input type="hidden" name="form" value="set_dataset_labs"/>
                            <label for="ds-which">{get("admin-name")}</label>
                            <select id="ds-which" name="name">
                                {first}
                            </select>
                            <label for="ds-labs">{get("admin-datasets-open-to")}</label>
                            <input id="ds-labs" name="labs" placeholder=labs.clone()/>
                            <button type="submit">{get("admin-datasets-change")}</button>
                        </ActionForm>
                        <ActionForm action=change attr:class="card form" attr:data-testid="dataset-delete">
                            <input type="hidden" name="form" value="delete_dataset"/>
                            <label for="ds-gone">{get("admin-name")}</label>
                            <select id="ds-gone" name="name">
                                {second}
                            </select>
                            <button type="submit" class="danger">{get("admin-datasets-delete")}</button>
                        </ActionForm>
                        {outcome(change.value())}
                    </section>
                }.into_any()
            })}
        </Transition>
        <section aria-labelledby="register-h">
            <h2 id="register-h">{get("admin-datasets-register")}</h2>
            <ActionForm action=register attr:class="card form" attr:data-testid="register-dataset">
                <input type="hidden" name="form" value="register_dataset"/>
                <label for="reg-name">{get("admin-name")}</label>
                <input id="reg-name" name="name" required maxlength="64"/>
                <label for="reg-description">{get("admin-datasets-description")}</label>
                <input id="reg-description" name="description" maxlength="2000"/>
                <label for="reg-labs">{get("admin-datasets-labs")}</label>
                <input id="reg-labs" name="labs"/>
                <label for="reg-path">{get("admin-datasets-folder")}</label>
                <input id="reg-path" name="path" placeholder="/srv/datasets/…"/>
                <label for="reg-url">{get("admin-datasets-or-url")}</label>
                <input id="reg-url" name="url" type="url" placeholder="https://"/>
                <label for="reg-sha">{get("datasets-sha256")}</label>
                <input id="reg-sha" name="sha256" maxlength="64"/>
                {outcome(register.value())}
                <button type="submit">{get("admin-datasets-register")}</button>
            </ActionForm>
        </section>
    }
}
