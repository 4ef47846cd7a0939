//! `/admin/cluster`: tiers and nodes — list, create, change, drain,
//! delete. Every form posts one server function; its outcome (or the field
//! that was wrong) shows under it and the tables refresh.

use super::forms::{outcome, with_data};
use super::AdminNav;
use crate::api::admin::*;
use crate::i18n::{t, Words};
use crate::model::{NodeState, NodeView, TierView};
use crate::pages::components::Layout;
use leptos::prelude::*;

#[component]
pub fn AdminClusterPage() -> impl IntoView {
    view! { <Layout><h1>{t("admin-tiers-and-nodes")}</h1><AdminNav/><AdminClusterPageBody w=super::admin_words()/></Layout> }
}

/// The page's body: an island, run again in the browser (forms, refreshes).
#[island]
fn AdminClusterPageBody(w: Words) -> impl IntoView {
    let w = StoredValue::new(w);
    let create_tier = ServerAction::<AdminForm>::new();
    let update_tier = ServerAction::<AdminForm>::new();
    let tier_active = ServerAction::<AdminForm>::new();
    let create_node = ServerAction::<AdminForm>::new();
    let drain = ServerAction::<AdminForm>::new();
    let delete = ServerAction::<AdminForm>::new();
    let resume = ServerAction::<AdminForm>::new();
    let oom = ServerAction::<AdminForm>::new();
    let versions = move || {
        create_tier.version().get()
            + update_tier.version().get()
            + tier_active.version().get()
            + create_node.version().get()
            + drain.version().get()
            + delete.version().get()
            + resume.version().get()
            + oom.version().get()
    };
    view! {
        {outcome(tier_active.value())}
        {outcome(drain.value())}
        {outcome(delete.value())}
        {outcome(resume.value())}
        {with_data(w, versions, move |admin| {
            let tier_names: Vec<String> = admin.tiers.iter().map(|t| t.name.clone()).collect();
            let tier_options = tier_names.clone();
            view! {
                {tiers_table(w, admin.tiers, tier_active)}
                {nodes_section(w, admin.nodes, tier_options, NodeActions { drain, resume, delete, create_node })}
                {tier_forms(w, tier_names, update_tier, create_tier)}
                {oom_section(w, admin.oom_patterns, oom)}
            }
        })}
    }
}

fn tiers_table(w: StoredValue<Words>, tiers: Vec<TierView>, tier_active: ServerAction<AdminForm>) -> impl IntoView {
    let get = move |key: &str| w.with_value(|w| w.get(key));
    view! {
        <section aria-labelledby="tiers-h">
            <h2 id="tiers-h">{get("admin-tiers")}</h2>
            <div class="scroll" tabindex="0">
            <table class="table" data-testid="tiers">
                <thead><tr><th>{get("admin-tier")}</th><th>{get("admin-vram-gb")}</th><th>{get("admin-tflops")}</th><th>{get("admin-order")}</th><th>{get("admin-max-gpus")}</th><th>{get("admin-state")}</th><th></th></tr></thead>
                <tbody>
                    {tiers.into_iter().map(|t| view! {
                        <tr>
                            <td>{t.display_name.clone()} " " <code>{t.name.clone()}</code></td>
                            <td>{t.vram_gb}</td><td>{t.tflops}</td><td>{t.sort_order}</td><td>{t.max_gpus}</td>
                            <td>{if t.active { get("admin-active") } else { get("admin-inactive") }}</td>
                            <td>
                                <ActionForm action=tier_active>
                                    <input type="hidden" name="form" value="set_tier_active"/>
                                    <input type="hidden" name="name" value=t.name.clone()/>
                                    <input type="hidden" name="active" value=(!t.active).to_string()/>
                                    <button type="submit">{if t.active { get("admin-deactivate") } else { get("admin-activate") }}</button>
                                </ActionForm>
                            </td>
                        </tr>
                    }).collect_view()}
                </tbody>
            </table>
            </div>
        </section>
    }
}

/// What the nodes table's buttons post.
#[derive(Clone, Copy)]
struct NodeActions {
    drain: ServerAction<AdminForm>,
    resume: ServerAction<AdminForm>,
    delete: ServerAction<AdminForm>,
    create_node: ServerAction<AdminForm>,
}

fn nodes_section(
    w: StoredValue<Words>,
    nodes: Vec<NodeView>,
    tier_options: Vec<String>,
    actions: NodeActions,
) -> impl IntoView {
    let get = move |key: &str| w.with_value(|w| w.get(key));
    let NodeActions { drain, resume, delete, create_node } = actions;
    view! {
        <section aria-labelledby="nodes-h">
            <h2 id="nodes-h">{get("admin-nodes")}</h2>
            <div class="scroll" tabindex="0">
            <table class="table" data-testid="nodes">
                <thead><tr><th>{get("admin-node")}</th><th>{get("admin-state")}</th><th>{get("admin-gpus")}</th><th></th></tr></thead>
                <tbody>
                    {nodes.into_iter().map(|n| {
                        let gpus = n.gpus.iter().map(|g| format!("{}#{}", g.tier, g.index)).collect::<Vec<_>>().join(", ");
                        let (to_drain, to_remove) = (n.name.clone(), n.name.clone());
                        view! {
                            <tr>
                                <td>{n.name.clone()}</td><td>{n.state.as_str()}</td><td>{gpus}</td>
                                <td class="actions">
                                    {if n.state == NodeState::Up {
                                        view! {
                                            <ActionForm action=drain>
                                                <input type="hidden" name="form" value="drain_node"/>
                                                <input type="hidden" name="name" value=to_drain/>
                                                <button type="submit">{get("admin-drain")}</button>
                                            </ActionForm>
                                        }.into_any()
                                    } else {
                                        view! {
                                            <ActionForm action=resume>
                                                <input type="hidden" name="form" value="resume_node"/>
                                                <input type="hidden" name="name" value=to_drain/>
                                                <button type="submit">{get("admin-resume")}</button>
                                            </ActionForm>
                                        }.into_any()
                                    }}
                                    <ActionForm action=delete>
                                        <input type="hidden" name="form" value="delete_node"/>
                                        <input type="hidden" name="name" value=to_remove/>
                                        <button type="submit">{get("admin-remove")}</button>
                                    </ActionForm>
                                </td>
                            </tr>
                        }
                    }).collect_view()}
                </tbody>
            </table>
            </div>
            <h3>{get("admin-add-a-node")}</h3>
            <ActionForm action=create_node attr:class="card form" attr:data-testid="add-node">
                <input type="hidden" name="form" value="create_node"/>
                <label for="node-name">{get("admin-name")}</label>
                <input id="node-name" name="name" required maxlength="64" placeholder="node-a100"/>
                <label for="node-tier">{get("admin-gpu-tier")}</label>
                <select id="node-tier" name="tier">
                    {tier_options.into_iter().map(|t| view! { <option value=t.clone()>{t.clone()}</option> }).collect_view()}
                </select>
                <label for="node-count">{get("admin-number-of-gpus")}</label>
                <input id="node-count" name="count" type="number" min="1" max="64" value="2" required/>
                {outcome(create_node.value())}
                <button type="submit">{get("admin-add-node")}</button>
            </ActionForm>
        </section>
    }
}

fn tier_forms(
    w: StoredValue<Words>,
    tier_names: Vec<String>,
    update_tier: ServerAction<AdminForm>,
    create_tier: ServerAction<AdminForm>,
) -> impl IntoView {
    let get = move |key: &str| w.with_value(|w| w.get(key));
    use crate::model::admin::tier_bounds::{MAX_GPUS, SORT_ORDER, TFLOPS_MAX, VRAM_GB};
    view! {
        <section aria-labelledby="tier-forms-h">
            <h2 id="tier-forms-h">{get("admin-change-tiers")}</h2>
            <ActionForm action=update_tier attr:class="card form" attr:data-testid="edit-tier">
                <input type="hidden" name="form" value="update_tier"/>
                <h3>{get("admin-edit-a-tier-blank-unchanged")}</h3>
                <label for="edit-tier-name">{get("admin-tier")}</label>
                <select id="edit-tier-name" name="name">
                    {tier_names.into_iter().map(|t| view! { <option value=t.clone()>{t.clone()}</option> }).collect_view()}
                </select>
                <label for="edit-vram">{get("admin-vram-gb-field")}</label>
                <input id="edit-vram" name="vram_gb" type="number" min=VRAM_GB.min max=VRAM_GB.max/>
                <label for="edit-tflops">{get("admin-tflops-fp32")}</label>
                <input id="edit-tflops" name="tflops" type="number" step="0.1" min="0.1" max=TFLOPS_MAX/>
                <label for="edit-order">{get("admin-order-higher-better")}</label>
                <input id="edit-order" name="sort_order" type="number" min=SORT_ORDER.min max=SORT_ORDER.max/>
                <label for="edit-max">{get("admin-max-gpus-per-job")}</label>
                <input id="edit-max" name="max_gpus" type="number" min=MAX_GPUS.min max=MAX_GPUS.max/>
                {outcome(update_tier.value())}
                <button type="submit">{get("admin-save-tier")}</button>
            </ActionForm>
            <ActionForm action=create_tier attr:class="card form" attr:data-testid="add-tier">
                <input type="hidden" name="form" value="create_tier"/>
                <h3>{get("admin-add-a-tier")}</h3>
                <label for="tier-name">{get("admin-name-as-slurm-s-gpu-type")}</label>
                <input id="tier-name" name="name" required maxlength="64" placeholder="a100"/>
                <label for="tier-display">{get("admin-display-name")}</label>
                <input id="tier-display" name="display_name" maxlength="64" placeholder="A100 80GB"/>
                <label for="tier-vram">{get("admin-vram-gb-field")}</label>
                <input id="tier-vram" name="vram_gb" type="number" min=VRAM_GB.min max=VRAM_GB.max required/>
                <label for="tier-tflops">{get("admin-tflops-fp32")}</label>
                <input id="tier-tflops" name="tflops" type="number" step="0.1" min="0.1" max=TFLOPS_MAX required/>
                <label for="tier-order">{get("admin-order-higher-better")}</label>
                <input id="tier-order" name="sort_order" type="number" min=SORT_ORDER.min max=SORT_ORDER.max required/>
                <label for="tier-max">{get("admin-max-gpus-per-job")}</label>
                <input id="tier-max" name="max_gpus" type="number" min=MAX_GPUS.min max=MAX_GPUS.max value="2" required/>
                {outcome(create_tier.value())}
                <button type="submit">{get("admin-add-tier")}</button>
            </ActionForm>
        </section>
    }
}

/// Policy §6's GPU-OOM signatures: a failed attempt whose last 64 KiB of
/// output contains one (any case) is retried on a larger tier.
fn oom_section(w: StoredValue<Words>, patterns: Vec<String>, oom: ServerAction<AdminForm>) -> impl IntoView {
    let get = move |key: &str| w.with_value(|w| w.get(key));
    view! {
        <section aria-labelledby="oom-h">
            <h2 id="oom-h">{get("admin-gpu-out-of-memory-signatures")}</h2>
            <ActionForm action=oom attr:class="card form" attr:data-testid="oom-patterns">
                <input type="hidden" name="form" value="set_oom_patterns"/>
                <label for="oom-patterns">{get("admin-one-per-line-any-case-a-failed-job-whose")}</label>
                <textarea id="oom-patterns" name="patterns" rows="7">{patterns.join("\n")}</textarea>
                {outcome(oom.value())}
                <button type="submit">{get("admin-save-signatures")}</button>
            </ActionForm>
        </section>
    }
}
