//! The admin pages (researchers are refused): `/admin` — maintenance
//! (start with a message, watch the phases advance, end) and the audit
//! log — is here with the pages' own navigation; tiers and nodes, labs and
//! users, and LLM backfill have a file each.

mod backfill;
mod cluster;
mod datasets;
mod forms;
mod people;

pub use backfill::AdminBackfillPage;
pub use cluster::AdminClusterPage;
pub use datasets::AdminDatasetsPage;
pub use people::AdminPeoplePage;

use crate::api::{admin_view, SetMaintenance};
use crate::i18n::{t, words, Words};
use crate::model::MaintenancePhase;
use crate::pages::components::{use_ticker, ErrorText, Layout};
use leptos::prelude::*;

/// The admin pages' own navigation.
#[component]
pub fn AdminNav() -> impl IntoView {
    view! {
        <nav class="subnav" aria-label=t("admin-admin")>
            <a href="/admin">{t("admin-maintenance-audit")}</a>
            <a href="/admin/cluster">{t("admin-tiers-nodes")}</a>
            <a href="/admin/people">{t("admin-labs-users")}</a>
            <a href="/admin/backfill">{t("admin-llm-backfill")}</a>
            <a href="/admin/datasets">{t("nav-datasets")}</a>
        </nav>
    }
}

#[component]
pub fn AdminPage() -> impl IntoView {
    view! { <Layout><h1>{t("admin-admin")}</h1><AdminNav/><AdminPageBody w=admin_words()/></Layout> }
}

/// The words of the admin pages' islands, looked up on the server (one
/// list for the four pages: their HTML, not the bundle, carries them).
pub(super) fn admin_words() -> Words {
    words(ADMIN_KEYS)
}

const ADMIN_KEYS: &[&str] = &[
    "admin-phase",
    "admin-since-lower",
    "admin-active",
    "admin-inactive",
    "admin-deactivate",
    "admin-activate",
    "admin-on",
    "admin-off",
    "admin-instances",
    "admin-labs",
    "admin-local",
    "admin-university",
    "admin-disabled",
    "admin-allocated",
    "admin-no-uid",
    "admin-uid-none",
    "admin-action",
    "admin-add-a-lab",
    "admin-add-a-node",
    "admin-add-a-tier",
    "admin-add-a-user",
    "admin-add-lab",
    "admin-add-node",
    "admin-add-tier",
    "admin-add-user",
    "admin-admin",
    "admin-audit-log",
    "admin-change-labs-and-users",
    "admin-change-tiers",
    "admin-command-bash-serve-on-jpu-backfill-port",
    "admin-concurrent-jobs",
    "admin-concurrent-jobs-default-2",
    "admin-detail",
    "admin-disable-refuse-sign-in-end-sessions-and",
    "admin-display-name",
    "admin-drain",
    "admin-edit-a-tier-blank-unchanged",
    "admin-edit-a-user-blank-unchanged",
    "admin-enable",
    "admin-end-maintenance",
    "admin-endpoint",
    "admin-gpu-out-of-memory-signatures",
    "admin-gpu-tier",
    "admin-gpus",
    "admin-gpus-per-instance",
    "admin-idle-gpus-serve-the-llm-service-until-re",
    "admin-idle-seconds-before-deploying",
    "admin-lab",
    "admin-labs-and-users",
    "admin-labs-users",
    "admin-llm-backfill",
    "admin-loading",
    "admin-local-may-use-a-password-when-sign-in-go",
    "admin-maintenance",
    "admin-maintenance-audit",
    "admin-max-gpus",
    "admin-max-gpus-per-job",
    "admin-message-shown-to-users",
    "admin-name",
    "admin-name-as-slurm-s-gpu-type",
    "admin-node",
    "admin-nodes",
    "admin-normal-draining-no-new-submissions-runni",
    "admin-now",
    "admin-number-of-gpus",
    "admin-one-per-line-any-case-a-failed-job-whose",
    "admin-order",
    "admin-order-higher-better",
    "admin-password-10-characters-or-more",
    "admin-remove",
    "admin-reset-password-to",
    "admin-resume",
    "admin-role",
    "admin-role-admin",
    "admin-role-researcher",
    "admin-save-backfill-settings",
    "admin-save-signatures",
    "admin-save-tier",
    "admin-save-user",
    "admin-serve-the-llm-on-idle-gpus",
    "admin-settings",
    "admin-sign-in",
    "admin-since",
    "admin-start-maintenance",
    "admin-state",
    "admin-target",
    "admin-tflops",
    "admin-tflops-fp32",
    "admin-tier",
    "admin-tiers",
    "admin-tiers-and-nodes",
    "admin-tiers-nodes",
    "admin-unchanged",
    "admin-unix-uid",
    "admin-unix-uid-optional-jobs-run-as-it",
    "admin-user",
    "admin-username",
    "admin-users",
    "admin-users-marked-university-sign-in-through",
    "admin-vram-gb",
    "admin-vram-gb-field",
    "admin-when",
    "admin-who",
];

/// The page's body: an island, run again in the browser (forms, refreshes).
#[island]
fn AdminPageBody(w: Words) -> impl IntoView {
    let w = StoredValue::new(w);
    let get = move |key: &str| w.with_value(|w| w.get(key));
    let tick = use_ticker(2000);
    let change = ServerAction::<SetMaintenance>::new();
    let data = Resource::new(move || (tick.get(), change.version().get()), |_| admin_view());
    view! {
        <Transition fallback=move || view! { <p>{get("admin-loading")}</p> }>
            {move || Suspend::new(async move {
                match data.await {
                    Err(e) => view! { <ErrorText error=e/> }.into_any(),
                    Ok(admin) => {
                        let phase = admin.maintenance.phase;
                        view! {
                            <section aria-labelledby="maint-h">
                                <h2 id="maint-h">{get("admin-maintenance")}</h2>
                                <p>{get("admin-phase")} " " <strong data-testid="phase">{phase.as_str()}</strong>
                                    " " {get("admin-since-lower")} " " <crate::pages::components::Time at=admin.maintenance.since.clone()/></p>
                                <p class="muted">{get("admin-normal-draining-no-new-submissions-runni")}</p>
                                {if phase == MaintenancePhase::Normal {
                                    view! {
                                        <ActionForm action=change attr:class="card form">
                                            <input type="hidden" name="action" value="start"/>
                                            <label for="message">{get("admin-message-shown-to-users")}</label>
                                            <input id="message" name="message" maxlength="500" placeholder="GPU driver upgrade until 14:00"/>
                                            <button type="submit">{get("admin-start-maintenance")}</button>
                                        </ActionForm>
                                    }.into_any()
                                } else {
                                    view! {
                                        <ActionForm action=change attr:class="card form">
                                            <input type="hidden" name="action" value="end"/>
                                            <input type="hidden" name="message" value=""/>
                                            <button type="submit">{get("admin-end-maintenance")}</button>
                                        </ActionForm>
                                    }.into_any()
                                }}
                            </section>
                            <section aria-labelledby="audit-h">
                                <h2 id="audit-h">{get("admin-audit-log")}</h2>
                                <div class="scroll" tabindex="0">
                                <table class="table" data-testid="audit">
                                    <thead><tr><th>{get("admin-when")}</th><th>{get("admin-who")}</th><th>{get("admin-action")}</th><th>{get("admin-target")}</th><th>{get("admin-detail")}</th></tr></thead>
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

#[cfg(all(test, feature = "ssr"))]
mod tests {

    /// Every word the admin islands ask for is handed to them, and exists
    /// in both languages (a missing one would show as its key).
    #[test]
    fn the_admin_islands_words_are_handed_over_and_exist() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src/pages/admin");
        let mut asked = Vec::new();
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let text = std::fs::read_to_string(entry.path()).unwrap();
            for part in text.split("get(\"").skip(1) {
                asked.push(part.split('"').next().unwrap_or_default().to_string());
            }
        }
        assert!(asked.len() > 50, "the scan finds the words: {asked:?}");
        let missing: Vec<_> = asked.iter().filter(|k| !super::ADMIN_KEYS.contains(&k.as_str())).collect();
        assert!(missing.is_empty(), "asked for but not handed over: {missing:?}");
        let missing = crate::i18n::missing_keys(super::ADMIN_KEYS.iter());
        assert!(missing.is_empty(), "missing: {missing:?}");
    }
}
