//! `/admin/datasets`: register a folder or a URL as a dataset, open it to
//! labs, delete it, and approve or reject researchers' data requests
//! (policy §13). Rendered on the server; the forms post to `/v1/admin`
//! from `public/pkg/forms.js` (what was done, or why not, then a reload).

use super::AdminNav;
use crate::api::datasets_page;
use crate::i18n::t;
use crate::pages::components::{ErrorText, Layout};
use crate::pages::datasets::{DatasetTable, RequestTable};
use leptos::prelude::*;

#[component]
pub fn AdminDatasetsPage() -> impl IntoView {
    let data = Resource::new(|| (), |_| datasets_page());
    view! {
        <Layout>
            <h1>{t("nav-datasets")}</h1>
            <AdminNav/>
            <Suspense fallback=|| view! { <p>{t("loading")}</p> }>
                {move || Suspend::new(async move {
                    match data.await {
                        Err(e) => view! { <ErrorText error=e/> }.into_any(),
                        Ok(page) => view! { <Body page/> }.into_any(),
                    }
                })}
            </Suspense>
            <script src="/pkg/forms.js" defer></script>
        </Layout>
    }
}

#[component]
fn Body(page: crate::model::datasets::DatasetsView) -> impl IntoView {
    let names: Vec<String> = page.datasets.iter().map(|d| d.name.clone()).collect();
    let options =
        |names: &[String]| names.iter().map(|n| view! { <option value=n.clone()>{n.clone()}</option> }).collect_view();
    let (first, second) = (options(&names), options(&names));
    let open: Vec<_> = page.requests.iter().filter(|r| r.state == "OPEN").cloned().collect();
    let labs = page.labs.join(", ");
    view! {
        <DatasetTable datasets=page.datasets/>
        <section aria-labelledby="decide-h">
            <h2 id="decide-h">{t("admin-datasets-decide")}</h2>
            {open.is_empty().then(|| view! { <p class="muted">{t("admin-datasets-no-open")}</p> })}
            {open.into_iter().map(|r| view! {
                <form class="card form" data-testid="decide" data-api=format!("POST /v1/admin/data-requests/{}/", r.id) data-shape="decide">
                    <p><strong>{format!("#{} {}", r.id, r.name)}</strong>" — "{format!("{} ({})", r.user, r.lab)}</p>
                    <p class="wrap"><code>{r.url.clone()}</code></p>
                    <p>{r.reason.clone()}</p>
                    <label for=format!("why-{}", r.id)>{t("admin-datasets-reject-reason")}</label>
                    <input id=format!("why-{}", r.id) name="reason" maxlength="2000"/>
                    <p role="status" class="form-status"></p>
                    <div class="actions">
                        <button type="submit" name="decision" value="approve">{t("admin-datasets-approve")}</button>
                        <button type="submit" name="decision" value="reject" class="danger">{t("admin-datasets-reject")}</button>
                    </div>
                </form>
            }).collect_view()}
        </section>
        <section aria-labelledby="all-req-h">
            <h2 id="all-req-h">{t("datasets-requests")}</h2>
            <RequestTable requests=page.requests/>
        </section>
        <section aria-labelledby="change-h">
            <h2 id="change-h">{t("admin-datasets-change")}</h2>
            <form class="card form" data-testid="dataset-labs" data-api="PATCH /v1/admin/datasets/" data-shape="labs">
                <label for="ds-which">{t("admin-name")}</label>
                <select id="ds-which" name="name">{first}</select>
                <label for="ds-labs">{t("admin-datasets-open-to")}</label>
                <input id="ds-labs" name="labs" placeholder=labs/>
                <p role="status" class="form-status"></p>
                <button type="submit">{t("admin-datasets-change")}</button>
            </form>
            <form class="card form" data-testid="dataset-delete" data-api="DELETE /v1/admin/datasets/" data-shape="delete">
                <label for="ds-gone">{t("admin-name")}</label>
                <select id="ds-gone" name="name">{second}</select>
                <p role="status" class="form-status"></p>
                <button type="submit" class="danger">{t("admin-datasets-delete")}</button>
            </form>
        </section>
        <section aria-labelledby="register-h">
            <h2 id="register-h">{t("admin-datasets-register")}</h2>
            <form class="card form" data-testid="register-dataset" data-api="POST /v1/admin/datasets" data-shape="register">
                <label for="reg-name">{t("admin-name")}</label>
                <input id="reg-name" name="name" required maxlength="64"/>
                <label for="reg-description">{t("admin-datasets-description")}</label>
                <input id="reg-description" name="description" maxlength="2000"/>
                <label for="reg-labs">{t("admin-datasets-labs")}</label>
                <input id="reg-labs" name="labs"/>
                <label for="reg-path">{t("admin-datasets-folder")}</label>
                <input id="reg-path" name="path" placeholder="/srv/datasets/…"/>
                <label for="reg-url">{t("admin-datasets-or-url")}</label>
                <input id="reg-url" name="url" type="url" placeholder="https://"/>
                <label for="reg-sha">{t("datasets-sha256")}</label>
                <input id="reg-sha" name="sha256" maxlength="64"/>
                <p role="status" class="form-status"></p>
                <button type="submit">{t("admin-datasets-register")}</button>
            </form>
        </section>
    }
}
