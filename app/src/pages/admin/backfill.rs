//! `/admin/backfill`: LLM backfill's settings in force and the instances
//! serving now; admins switch it on or off and change its command.

use super::forms::{outcome, with_data, with_data_or};
use super::AdminNav;
use crate::api::admin::*;
use crate::pages::components::Layout;
use leptos::prelude::*;

#[component]
pub fn AdminBackfillPage() -> impl IntoView {
    view! { <Layout><AdminBackfillPageBody/></Layout> }
}

/// The page's body: an island, run again in the browser (forms, refreshes).
#[island]
fn AdminBackfillPageBody() -> impl IntoView {
    let tick = crate::pages::components::use_ticker(2000);
    let change = ServerAction::<AdminForm>::new();
    let status_versions = move || tick.get() as usize + change.version().get();
    // the form loads again only after a save, not on every refresh, so
    // what the admin is typing stays
    let form_versions = move || change.version().get();
    view! {
            <h1>"LLM backfill"</h1>
            <AdminNav/>
            <p class="muted">"Idle GPUs serve the LLM service until research needs them: a dispatch reclaims them first (SIGTERM, grace, SIGKILL). Never charged to a lab."</p>
            {with_data(status_versions, move |admin| {
                let b = admin.backfill;
                view! {
                    <section aria-labelledby="bf-h">
                        <h2 id="bf-h">"Now"</h2>
                        <p data-testid="backfill-state">
                            <strong>{if b.enabled { "On" } else { "Off" }}</strong>
                            {format!(" — {} instance(s) running, {:.2} GPU-hours served", b.instances.len(), b.served_gpu_hours)}
                        </p>
                        <div class="scroll" tabindex="0">
                        <table class="table" data-testid="instances">
                            <thead><tr><th>"Node"</th><th>"Tier"</th><th>"GPUs"</th><th>"Endpoint"</th><th>"Since"</th></tr></thead>
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
            {with_data_or(form_versions, move |admin| {
                let b = admin.backfill;
                view! {
                    <section aria-labelledby="bf-set-h">
                        <h2 id="bf-set-h">"Settings"</h2>
                        <ActionForm action=change attr:class="card form" attr:data-testid="backfill-form">
                            <input type="hidden" name="form" value="set_backfill"/>
                            <label class="check"><input type="checkbox" name="enabled" checked=b.enabled/>" Serve the LLM on idle GPUs"</label>
                            <label for="bf-command">"Command (bash; serve on $JPU_BACKFILL_PORT)"</label>
                            <textarea id="bf-command" name="command" rows="3">{b.command.unwrap_or_default()}</textarea>
                            <label for="bf-idle">"Idle seconds before deploying"</label>
                            <input id="bf-idle" name="min_idle_seconds" type="number" min="0" max="86400" value=b.min_idle_seconds.to_string()/>
                            <label for="bf-gpus">"GPUs per instance"</label>
                            <input id="bf-gpus" name="gpus_per_instance" type="number" min="1" max="8" value=b.gpus_per_instance.to_string()/>
                            <button type="submit">"Save backfill settings"</button>
                        </ActionForm>
                    </section>
                }
            }, false)}
            {outcome(change.value())}
        }
}
