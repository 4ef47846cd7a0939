//! The admin pages (researchers are refused): `/admin` — maintenance
//! (start with a message, watch the phases advance, end) and the audit
//! log — is here with the pages' own navigation; tiers and nodes, labs and
//! users, and LLM backfill have a file each.

mod backfill;
mod cluster;
mod forms;
mod people;

pub use backfill::AdminBackfillPage;
pub use cluster::AdminClusterPage;
pub use people::AdminPeoplePage;

use crate::api::{admin_view, SetMaintenance};
use crate::model::MaintenancePhase;
use crate::pages::components::{use_ticker, ErrorText, Layout};
use leptos::prelude::*;

/// The admin pages' own navigation.
#[component]
pub fn AdminNav() -> impl IntoView {
    view! {
        <nav class="subnav" aria-label="Admin">
            <a href="/admin">"Maintenance & audit"</a>
            <a href="/admin/cluster">"Tiers & nodes"</a>
            <a href="/admin/people">"Labs & users"</a>
            <a href="/admin/backfill">"LLM backfill"</a>
        </nav>
    }
}

#[component]
pub fn AdminPage() -> impl IntoView {
    view! { <Layout><AdminPageBody/></Layout> }
}

/// The page's body: an island, run again in the browser (forms, refreshes).
#[island]
fn AdminPageBody() -> impl IntoView {
    let tick = use_ticker(2000);
    let change = ServerAction::<SetMaintenance>::new();
    let data = Resource::new(move || (tick.get(), change.version().get()), |_| admin_view());
    view! {
        <h1>"Admin"</h1>
        <AdminNav/>
        <Transition fallback=|| view! { <p>"Loading…"</p> }>
            {move || Suspend::new(async move {
                match data.await {
                    Err(e) => view! { <ErrorText error=e/> }.into_any(),
                    Ok(admin) => {
                        let phase = admin.maintenance.phase;
                        view! {
                            <section aria-labelledby="maint-h">
                                <h2 id="maint-h">"Maintenance"</h2>
                                <p>"Phase: " <strong data-testid="phase">{phase.as_str()}</strong>
                                    " since " <crate::pages::components::Time at=admin.maintenance.since.clone()/></p>
                                <p class="muted">"NORMAL → DRAINING (no new submissions; running jobs finish) → BACKFILL_RECOVERY (LLM backfill reclaimed) → ACTIVE (operators may work) → NORMAL."</p>
                                {if phase == MaintenancePhase::Normal {
                                    view! {
                                        <ActionForm action=change attr:class="card form">
                                            <input type="hidden" name="action" value="start"/>
                                            <label for="message">"Message shown to users"</label>
                                            <input id="message" name="message" maxlength="500" placeholder="GPU driver upgrade until 14:00"/>
                                            <button type="submit">"Start maintenance"</button>
                                        </ActionForm>
                                    }.into_any()
                                } else {
                                    view! {
                                        <ActionForm action=change attr:class="card form">
                                            <input type="hidden" name="action" value="end"/>
                                            <input type="hidden" name="message" value=""/>
                                            <button type="submit">"End maintenance"</button>
                                        </ActionForm>
                                    }.into_any()
                                }}
                            </section>
                            <section aria-labelledby="audit-h">
                                <h2 id="audit-h">"Audit log"</h2>
                                <div class="scroll" tabindex="0">
                                <table class="table" data-testid="audit">
                                    <thead><tr><th>"When"</th><th>"Who"</th><th>"Action"</th><th>"Target"</th><th>"Detail"</th></tr></thead>
                                    <tbody>
                                        {admin.audit.into_iter().map(|a| view! {
                                            <tr><td><crate::pages::components::Time at=a.at.clone()/></td><td>{a.actor}</td><td>{a.action}</td><td>{a.target.unwrap_or_default()}</td><td><code>{a.detail}</code></td></tr>
                                        }).collect_view()}
                                    </tbody>
                                </table>
                                </div>
                            </section>
                        }.into_any()
                    }
                }
            })}
        </Transition>
        {move || change.value().get().and_then(|r| r.err()).map(|e| view! { <ErrorText error=e/> })}
    }
}
