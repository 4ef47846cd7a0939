//! `/admin/backfill`: LLM backfill's settings in force and the instances
//! serving now; admins switch it on or off and change its command.

use super::forms::{outcome, with_data, with_data_or};
use super::AdminNav;
use crate::api::admin::*;
use crate::i18n::{t, Words};
use crate::pages::components::Layout;
use leptos::prelude::*;

#[component]
pub fn AdminBackfillPage() -> impl IntoView {
    view! { <Layout><h1>{t("admin-llm-backfill")}</h1><AdminNav/><AdminBackfillPageBody w=super::admin_words()/></Layout> }
}

/// The page's body: an island, run again in the browser (forms, refreshes).
#[island]
fn AdminBackfillPageBody(w: Words) -> impl IntoView {
    let w = StoredValue::new(w);
    let get = move |key: &str| w.with_value(|w| w.get(key));
    let tick = crate::pages::components::use_ticker(2000);
    let change = ServerAction::<AdminForm>::new();
    let status_versions = move || tick.get() as usize + change.version().get();
    // the form loads again only after a save, not on every refresh, so
    // what the admin is typing stays
    let form_versions = move || change.version().get();
    view! {
        <p class="muted">{get("admin-idle-gpus-serve-the-llm-service-until-re")}</p>
        {with_data(w, status_versions, move |admin| {
            let b = admin.backfill;
            view! {
                <section aria-labelledby="bf-h">
                    <h2 id="bf-h">{get("admin-now")}</h2>
                    <p data-testid="backfill-state">
                        <strong>{if b.enabled { get("admin-on") } else { get("admin-off") }}</strong>
                        {get("admin-instances").replace("{$n}", &b.instances.len().to_string()).replace("{$hours}", &format!("{:.2}", b.served_gpu_hours))}
                    </p>
                    <div class="scroll" tabindex="0">
                    <table class="table" data-testid="instances">
                        <thead><tr><th>{get("admin-node")}</th><th>{get("admin-tier")}</th><th>{get("admin-gpus")}</th><th>{get("admin-endpoint")}</th><th>{get("admin-since")}</th></tr></thead>
                        <tbody>
                            {b.instances.into_iter().map(|i| view! {
                                <tr>
                                    <td>{i.node}</td><td>{i.tier}</td>
                                    <td>{i.gpu_indices.iter().map(u32::to_string).collect::<Vec<_>>().join(",")}</td>
                                    <td>{i.endpoint.unwrap_or_default()}</td><td><crate::pages::components::Time at=i.started_at.clone()/></td>
                                </tr>
                            }).collect_view()}
                        </tbody>
                    </table>
                    </div>
                </section>
            }
        })}
        {with_data_or(w, form_versions, move |admin| {
            let b = admin.backfill;
            view! {
                <section aria-labelledby="bf-set-h">
                    <h2 id="bf-set-h">{get("admin-settings")}</h2>
                    <ActionForm action=change attr:class="card form" attr:data-testid="backfill-form">
                        <input type="hidden" name="form" value="set_backfill"/>
                        <label class="check"><input type="checkbox" name="enabled" checked=b.enabled/>{get("admin-serve-the-llm-on-idle-gpus")}</label>
                        <label for="bf-command">{get("admin-command-bash-serve-on-jpu-backfill-port")}</label>
                        <textarea id="bf-command" name="command" rows="3">{b.command.unwrap_or_default()}</textarea>
                        <label for="bf-idle">{get("admin-idle-seconds-before-deploying")}</label>
                        <input id="bf-idle" name="min_idle_seconds" type="number" min="0" max="86400" value=b.min_idle_seconds.to_string()/>
                        <label for="bf-gpus">{get("admin-gpus-per-instance")}</label>
                        <input id="bf-gpus" name="gpus_per_instance" type="number" min="1" max="8" value=b.gpus_per_instance.to_string()/>
                        <button type="submit">{get("admin-save-backfill-settings")}</button>
                    </ActionForm>
                </section>
            }
        }, false)}
        {outcome(change.value())}
    }
}
