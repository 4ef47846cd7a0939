//! `/admin/cluster`: tiers and nodes — list, create, change, drain,
//! delete. Every form posts one server function; its outcome (or the field
//! that was wrong) shows under it and the tables refresh.

use super::forms::{outcome, with_data};
use super::AdminNav;
use crate::api::admin::*;
use crate::model::{NodeState, NodeView, TierView};
use crate::pages::components::Layout;
use leptos::prelude::*;

#[component]
pub fn AdminClusterPage() -> impl IntoView {
    view! { <Layout><AdminClusterPageBody/></Layout> }
}

/// The page's body: an island, run again in the browser (forms, refreshes).
#[island]
fn AdminClusterPageBody() -> impl IntoView {
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
        <h1>"Tiers and nodes"</h1>
        <AdminNav/>
        {outcome(tier_active.value())}
        {outcome(drain.value())}
        {outcome(delete.value())}
        {outcome(resume.value())}
        {with_data(versions, move |admin| {
            let tier_names: Vec<String> = admin.tiers.iter().map(|t| t.name.clone()).collect();
            let tier_options = tier_names.clone();
            view! {
                {tiers_table(admin.tiers, tier_active)}
                {nodes_section(admin.nodes, tier_options, NodeActions { drain, resume, delete, create_node })}
                {tier_forms(tier_names, update_tier, create_tier)}
                {oom_section(admin.oom_patterns, oom)}
            }
        })}
    }
}

fn tiers_table(tiers: Vec<TierView>, tier_active: ServerAction<AdminForm>) -> impl IntoView {
    view! {
            <section aria-labelledby="tiers-h">
                <h2 id="tiers-h">"Tiers"</h2>
                <div class="scroll" tabindex="0">
                <table class="table" data-testid="tiers">
                    <thead><tr><th>"Tier"</th><th>"VRAM GB"</th><th>"TFLOPS"</th><th>"Order"</th><th>"Max GPUs"</th><th>"State"</th><th></th></tr></thead>
                    <tbody>
                        {tiers.into_iter().map(|t| view! {
                            <tr>
                                <td>{t.display_name.clone()} " " <code>{t.name.clone()}</code></td>
                                <td>{t.vram_gb}</td><td>{t.tflops}</td><td>{t.sort_order}</td><td>{t.max_gpus}</td>
                                <td>{if t.active { "active" } else { "inactive" }}</td>
                                <td>
                                    <ActionForm action=tier_active>
                                        <input type="hidden" name="form" value="set_tier_active"/>
                                        <input type="hidden" name="name" value=t.name.clone()/>
                                        <input type="hidden" name="active" value=(!t.active).to_string()/>
                                        <button type="submit">{if t.active { "Deactivate" } else { "Activate" }}</button>
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

fn nodes_section(nodes: Vec<NodeView>, tier_options: Vec<String>, actions: NodeActions) -> impl IntoView {
    let NodeActions { drain, resume, delete, create_node } = actions;
    view! {
            <section aria-labelledby="nodes-h">
                <h2 id="nodes-h">"Nodes"</h2>
                <div class="scroll" tabindex="0">
                <table class="table" data-testid="nodes">
                    <thead><tr><th>"Node"</th><th>"State"</th><th>"GPUs"</th><th></th></tr></thead>
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
                                                    <button type="submit">"Drain"</button>
                                                </ActionForm>
                                            }.into_any()
                                        } else {
                                            view! {
                                                <ActionForm action=resume>
                                                    <input type="hidden" name="form" value="resume_node"/>
                                                    <input type="hidden" name="name" value=to_drain/>
                                                    <button type="submit">"Resume"</button>
                                                </ActionForm>
                                            }.into_any()
                                        }}
                                        <ActionForm action=delete>
                                            <input type="hidden" name="form" value="delete_node"/>
                                            <input type="hidden" name="name" value=to_remove/>
                                            <button type="submit">"Remove"</button>
                                        </ActionForm>
                                    </td>
                                </tr>
                            }
                        }).collect_view()}
                    </tbody>
                </table>
                </div>
                <h3>"Add a node"</h3>
                <ActionForm action=create_node attr:class="card form" attr:data-testid="add-node">
                    <input type="hidden" name="form" value="create_node"/>
                    <label for="node-name">"Name"</label>
                    <input id="node-name" name="name" required maxlength="64" placeholder="node-a100"/>
                    <label for="node-tier">"GPU tier"</label>
                    <select id="node-tier" name="tier">
                        {tier_options.into_iter().map(|t| view! { <option value=t.clone()>{t.clone()}</option> }).collect_view()}
                    </select>
                    <label for="node-count">"Number of GPUs"</label>
                    <input id="node-count" name="count" type="number" min="1" max="64" value="2" required/>
                    {outcome(create_node.value())}
                    <button type="submit">"Add node"</button>
                </ActionForm>
            </section>
        }
}

fn tier_forms(
    tier_names: Vec<String>,
    update_tier: ServerAction<AdminForm>,
    create_tier: ServerAction<AdminForm>,
) -> impl IntoView {
    use crate::model::admin::tier_bounds::{MAX_GPUS, SORT_ORDER, TFLOPS_MAX, VRAM_GB};
    view! {
            <section aria-labelledby="tier-forms-h">
                <h2 id="tier-forms-h">"Change tiers"</h2>
                <ActionForm action=update_tier attr:class="card form" attr:data-testid="edit-tier">
                    <input type="hidden" name="form" value="update_tier"/>
                    <h3>"Edit a tier (blank = unchanged)"</h3>
                    <label for="edit-tier-name">"Tier"</label>
                    <select id="edit-tier-name" name="name">
                        {tier_names.into_iter().map(|t| view! { <option value=t.clone()>{t.clone()}</option> }).collect_view()}
                    </select>
                    <label for="edit-vram">"VRAM (GB)"</label>
                    <input id="edit-vram" name="vram_gb" type="number" min=VRAM_GB.min max=VRAM_GB.max/>
                    <label for="edit-tflops">"TFLOPS (FP32)"</label>
                    <input id="edit-tflops" name="tflops" type="number" step="0.1" min="0.1" max=TFLOPS_MAX/>
                    <label for="edit-order">"Order (higher = better)"</label>
                    <input id="edit-order" name="sort_order" type="number" min=SORT_ORDER.min max=SORT_ORDER.max/>
                    <label for="edit-max">"Max GPUs per job"</label>
                    <input id="edit-max" name="max_gpus" type="number" min=MAX_GPUS.min max=MAX_GPUS.max/>
                    {outcome(update_tier.value())}
                    <button type="submit">"Save tier"</button>
                </ActionForm>
                <ActionForm action=create_tier attr:class="card form" attr:data-testid="add-tier">
                    <input type="hidden" name="form" value="create_tier"/>
                    <h3>"Add a tier"</h3>
                    <label for="tier-name">"Name (as Slurm's GPU type)"</label>
                    <input id="tier-name" name="name" required maxlength="64" placeholder="a100"/>
                    <label for="tier-display">"Display name"</label>
                    <input id="tier-display" name="display_name" maxlength="64" placeholder="A100 80GB"/>
                    <label for="tier-vram">"VRAM (GB)"</label>
                    <input id="tier-vram" name="vram_gb" type="number" min=VRAM_GB.min max=VRAM_GB.max required/>
                    <label for="tier-tflops">"TFLOPS (FP32)"</label>
                    <input id="tier-tflops" name="tflops" type="number" step="0.1" min="0.1" max=TFLOPS_MAX required/>
                    <label for="tier-order">"Order (higher = better)"</label>
                    <input id="tier-order" name="sort_order" type="number" min=SORT_ORDER.min max=SORT_ORDER.max required/>
                    <label for="tier-max">"Max GPUs per job"</label>
                    <input id="tier-max" name="max_gpus" type="number" min=MAX_GPUS.min max=MAX_GPUS.max value="2" required/>
                    {outcome(create_tier.value())}
                    <button type="submit">"Add tier"</button>
                </ActionForm>
            </section>
        }
}

/// Policy §6's GPU-OOM signatures: a failed attempt whose last 64 KiB of
/// output contains one (any case) is retried on a larger tier.
fn oom_section(patterns: Vec<String>, oom: ServerAction<AdminForm>) -> impl IntoView {
    view! {
            <section aria-labelledby="oom-h">
                <h2 id="oom-h">"GPU out-of-memory signatures"</h2>
                <ActionForm action=oom attr:class="card form" attr:data-testid="oom-patterns">
                    <input type="hidden" name="form" value="set_oom_patterns"/>
                    <label for="oom-patterns">"One per line, any case: a failed job whose output ends with one is retried on a larger tier"</label>
                    <textarea id="oom-patterns" name="patterns" rows="7">{patterns.join("\n")}</textarea>
                    {outcome(oom.value())}
                    <button type="submit">"Save signatures"</button>
                </ActionForm>
            </section>
        }
}
