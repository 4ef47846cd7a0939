//! Admin pages for the cluster and its people: tiers and nodes
//! (`/admin/cluster`), labs and users (`/admin/people`) and LLM backfill
//! (`/admin/backfill`). Every form posts one server function; the outcome
//! (or the field that was wrong) shows under it and the tables refresh.

use crate::admin_views::AdminClusterView;
use crate::api_admin::*;
use crate::components::{ErrorText, Layout};
use crate::pages_admin::AdminNav;
use leptos::prelude::*;

/// What a form's last submission did, in words, or why it was refused.
fn outcome(value: impl Get<Value = Option<Result<String, ServerFnError>>> + Send + Sync + 'static) -> impl IntoView {
    move || {
        value.get().map(|r| match r {
            Ok(done) => view! { <p role="status" class="done">{done}</p> }.into_any(),
            Err(e) => view! { <ErrorText error=e/> }.into_any(),
        })
    }
}

/// Loads the admin data again whenever `versions` changes, then renders
/// (or shows why it cannot, e.g. to a researcher).
fn with_data<V: IntoView + 'static>(
    versions: impl Fn() -> usize + Send + Sync + 'static,
    render: impl Fn(AdminClusterView) -> V + Send + Sync + Clone + 'static,
) -> impl IntoView {
    with_data_or(versions, render, true)
}

/// [`with_data`] for a second part of a page: its error would repeat the
/// first part's, so it shows none.
fn with_data_or<V: IntoView + 'static>(
    versions: impl Fn() -> usize + Send + Sync + 'static,
    render: impl Fn(AdminClusterView) -> V + Send + Sync + Clone + 'static,
    show_error: bool,
) -> impl IntoView {
    let data = Resource::new(versions, |_| admin_cluster());
    view! {
        <Transition fallback=|| view! { <p>"Loading…"</p> }>
            {move || {
                let render = render.clone();
                Suspend::new(async move {
                    match data.await {
                        Err(e) => show_error.then(|| view! { <ErrorText error=e/> }).into_any(),
                        Ok(admin) => render(admin).into_any(),
                    }
                })
            }}
        </Transition>
    }
}

#[component]
pub fn AdminClusterPage() -> impl IntoView {
    view! { <Layout><AdminClusterPageBody/></Layout> }
}

/// The page's body: an island, run again in the browser (forms, refreshes).
#[island]
fn AdminClusterPageBody() -> impl IntoView {
    let create_tier = ServerAction::<AdminCreateTier>::new();
    let update_tier = ServerAction::<AdminUpdateTier>::new();
    let tier_active = ServerAction::<AdminSetTierActive>::new();
    let create_node = ServerAction::<AdminCreateNode>::new();
    let drain = ServerAction::<AdminDrainNode>::new();
    let delete = ServerAction::<AdminDeleteNode>::new();
    let versions = move || {
        create_tier.version().get()
            + update_tier.version().get()
            + tier_active.version().get()
            + create_node.version().get()
            + drain.version().get()
            + delete.version().get()
    };
    view! {
        <h1>"Tiers and nodes"</h1>
        <AdminNav/>
        {outcome(tier_active.value())}
        {outcome(drain.value())}
        {outcome(delete.value())}
        {with_data(versions, move |admin| {
            let tier_names: Vec<String> = admin.tiers.iter().map(|t| t.name.clone()).collect();
            let tier_options = tier_names.clone();
            view! {
                <section aria-labelledby="tiers-h">
                    <h2 id="tiers-h">"Tiers"</h2>
                    <div class="scroll">
                    <table class="table" data-testid="tiers">
                        <thead><tr><th>"Tier"</th><th>"VRAM GB"</th><th>"TFLOPS"</th><th>"Order"</th><th>"Max GPUs"</th><th>"State"</th><th></th></tr></thead>
                        <tbody>
                            {admin.tiers.into_iter().map(|t| view! {
                                <tr>
                                    <td>{t.display_name.clone()} " " <code>{t.name.clone()}</code></td>
                                    <td>{t.vram_gb}</td><td>{t.tflops}</td><td>{t.sort_order}</td><td>{t.max_gpus}</td>
                                    <td>{if t.active { "active" } else { "inactive" }}</td>
                                    <td>
                                        <ActionForm action=tier_active>
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
                <section aria-labelledby="nodes-h">
                    <h2 id="nodes-h">"Nodes"</h2>
                    <div class="scroll">
                    <table class="table" data-testid="nodes">
                        <thead><tr><th>"Node"</th><th>"State"</th><th>"GPUs"</th><th></th></tr></thead>
                        <tbody>
                            {admin.nodes.into_iter().map(|n| {
                                let gpus = n.gpus.iter().map(|g| format!("{}#{}", g.tier, g.index)).collect::<Vec<_>>().join(", ");
                                let (to_drain, to_remove) = (n.name.clone(), n.name.clone());
                                view! {
                                    <tr>
                                        <td>{n.name.clone()}</td><td>{n.state.as_str()}</td><td>{gpus}</td>
                                        <td class="actions">
                                            <ActionForm action=drain>
                                                <input type="hidden" name="name" value=to_drain/>
                                                <button type="submit">"Drain"</button>
                                            </ActionForm>
                                            <ActionForm action=delete>
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
                <section aria-labelledby="tier-forms-h">
                    <h2 id="tier-forms-h">"Change tiers"</h2>
                    <ActionForm action=update_tier attr:class="card form" attr:data-testid="edit-tier">
                        <h3>"Edit a tier (blank = unchanged)"</h3>
                        <label for="edit-tier-name">"Tier"</label>
                        <select id="edit-tier-name" name="name">
                            {tier_names.into_iter().map(|t| view! { <option value=t.clone()>{t.clone()}</option> }).collect_view()}
                        </select>
                        <label for="edit-vram">"VRAM (GB)"</label>
                        <input id="edit-vram" name="vram_gb" type="number" min="1"/>
                        <label for="edit-tflops">"TFLOPS (FP32)"</label>
                        <input id="edit-tflops" name="tflops" type="number" step="0.1" min="0.1"/>
                        <label for="edit-order">"Order (higher = better)"</label>
                        <input id="edit-order" name="sort_order" type="number"/>
                        <label for="edit-max">"Max GPUs per job"</label>
                        <input id="edit-max" name="max_gpus" type="number" min="1" max="8"/>
                        {outcome(update_tier.value())}
                        <button type="submit">"Save tier"</button>
                    </ActionForm>
                    <ActionForm action=create_tier attr:class="card form" attr:data-testid="add-tier">
                        <h3>"Add a tier"</h3>
                        <label for="tier-name">"Name (as Slurm's GPU type)"</label>
                        <input id="tier-name" name="name" required maxlength="64" placeholder="a100"/>
                        <label for="tier-display">"Display name"</label>
                        <input id="tier-display" name="display_name" maxlength="64" placeholder="A100 80GB"/>
                        <label for="tier-vram">"VRAM (GB)"</label>
                        <input id="tier-vram" name="vram_gb" type="number" min="1" required/>
                        <label for="tier-tflops">"TFLOPS (FP32)"</label>
                        <input id="tier-tflops" name="tflops" type="number" step="0.1" min="0.1" required/>
                        <label for="tier-order">"Order (higher = better)"</label>
                        <input id="tier-order" name="sort_order" type="number" required/>
                        <label for="tier-max">"Max GPUs per job"</label>
                        <input id="tier-max" name="max_gpus" type="number" min="1" max="8" value="2" required/>
                        {outcome(create_tier.value())}
                        <button type="submit">"Add tier"</button>
                    </ActionForm>
                </section>
            }
        })}
    }
}

#[component]
pub fn AdminPeoplePage() -> impl IntoView {
    view! { <Layout><AdminPeoplePageBody/></Layout> }
}

/// The page's body: an island, run again in the browser (forms, refreshes).
#[island]
fn AdminPeoplePageBody() -> impl IntoView {
    let create_lab = ServerAction::<AdminCreateLab>::new();
    let create_user = ServerAction::<AdminCreateUser>::new();
    let update_user = ServerAction::<AdminUpdateUser>::new();
    let versions = move || create_lab.version().get() + create_user.version().get() + update_user.version().get();
    view! {
        <h1>"Labs and users"</h1>
        <AdminNav/>
        {with_data(versions, move |admin| {
            let labs_for_new = admin.labs.clone();
            let labs_for_edit = admin.labs.clone();
            let usernames: Vec<String> = admin.users.iter().map(|u| u.username.clone()).collect();
            view! {
                <section aria-labelledby="users-h">
                    <h2 id="users-h">"Users"</h2>
                    <div class="scroll">
                    <table class="table" data-testid="users">
                        <thead><tr><th>"User"</th><th>"Lab"</th><th>"Role"</th><th>"Unix uid"</th><th>"Concurrent jobs"</th></tr></thead>
                        <tbody>
                            {admin.users.into_iter().map(|u| view! {
                                <tr>
                                    <td>{u.username}{u.disabled.then_some(" (disabled)")}</td><td>{u.lab}</td><td>{u.role.as_str()}</td>
                                    <td>{match (u.unix_uid, u.allocated_uid) {
                                        (Some(uid), _) => uid.to_string(),
                                        (None, Some(uid)) => format!("{uid} (allocated)"),
                                        (None, None) => "none: jobs are refused".into(),
                                    }}</td>
                                    <td>{u.max_concurrent}</td>
                                </tr>
                            }).collect_view()}
                        </tbody>
                    </table>
                    </div>
                    <p class="muted">"Labs: " {admin.labs.join(", ")}</p>
                </section>
                <section aria-labelledby="people-forms-h">
                    <h2 id="people-forms-h">"Change labs and users"</h2>
                    <ActionForm action=create_lab attr:class="card form" attr:data-testid="add-lab">
                        <h3>"Add a lab"</h3>
                        <label for="lab-name">"Name"</label>
                        <input id="lab-name" name="name" required maxlength="64" placeholder="vision-lab"/>
                        {outcome(create_lab.value())}
                        <button type="submit">"Add lab"</button>
                    </ActionForm>
                    <ActionForm action=create_user attr:class="card form" attr:data-testid="add-user">
                        <h3>"Add a user"</h3>
                        <label for="new-username">"Username"</label>
                        <input id="new-username" name="username" required maxlength="64"/>
                        <label for="new-password">"Password (10 characters or more)"</label>
                        <input id="new-password" name="password" type="password" autocomplete="new-password" minlength="10" required/>
                        <label for="new-lab">"Lab"</label>
                        <select id="new-lab" name="lab">
                            {labs_for_new.into_iter().map(|l| view! { <option value=l.clone()>{l.clone()}</option> }).collect_view()}
                        </select>
                        <label for="new-role">"Role"</label>
                        <select id="new-role" name="role">
                            <option value="researcher">"researcher"</option>
                            <option value="admin">"admin"</option>
                        </select>
                        <label for="new-uid">"Unix uid (optional; jobs run as it)"</label>
                        <input id="new-uid" name="unix_uid" type="number" min="1000"/>
                        <label for="new-max">"Concurrent jobs (default 2)"</label>
                        <input id="new-max" name="max_concurrent" type="number" min="0" max="64"/>
                        {outcome(create_user.value())}
                        <button type="submit">"Add user"</button>
                    </ActionForm>
                    <ActionForm action=update_user attr:class="card form" attr:data-testid="edit-user">
                        <h3>"Edit a user (blank = unchanged)"</h3>
                        <label for="edit-username">"User"</label>
                        <select id="edit-username" name="username">
                            {usernames.into_iter().map(|u| view! { <option value=u.clone()>{u.clone()}</option> }).collect_view()}
                        </select>
                        <label for="edit-lab">"Lab"</label>
                        <select id="edit-lab" name="lab">
                            <option value="">"(unchanged)"</option>
                            {labs_for_edit.into_iter().map(|l| view! { <option value=l.clone()>{l.clone()}</option> }).collect_view()}
                        </select>
                        <label for="edit-role">"Role"</label>
                        <select id="edit-role" name="role">
                            <option value="">"(unchanged)"</option>
                            <option value="researcher">"researcher"</option>
                            <option value="admin">"admin"</option>
                        </select>
                        <label for="edit-uid">"Unix uid (\"none\" removes it)"</label>
                        <input id="edit-uid" name="unix_uid"/>
                        <label for="edit-max-c">"Concurrent jobs"</label>
                        <input id="edit-max-c" name="max_concurrent" type="number" min="0" max="64"/>
                        <label for="edit-password">"Reset password to"</label>
                        <input id="edit-password" name="password" type="password" autocomplete="new-password"/>
                        <label for="edit-access">"Sign-in"</label>
                        <select id="edit-access" name="access">
                            <option value="">"(unchanged)"</option>
                            <option value="disable">"disable: refuse sign-in, end sessions and tokens now"</option>
                            <option value="enable">"enable"</option>
                        </select>
                        {outcome(update_user.value())}
                        <button type="submit">"Save user"</button>
                    </ActionForm>
                </section>
            }
        })}
    }
}

#[component]
pub fn AdminBackfillPage() -> impl IntoView {
    view! { <Layout><AdminBackfillPageBody/></Layout> }
}

/// The page's body: an island, run again in the browser (forms, refreshes).
#[island]
fn AdminBackfillPageBody() -> impl IntoView {
    let tick = crate::components::use_ticker(2000);
    let change = ServerAction::<AdminSetBackfill>::new();
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
                    <div class="scroll">
                    <table class="table" data-testid="instances">
                        <thead><tr><th>"Node"</th><th>"Tier"</th><th>"GPUs"</th><th>"Endpoint"</th><th>"Since"</th></tr></thead>
                        <tbody>
                            {b.instances.into_iter().map(|i| view! {
                                <tr>
                                    <td>{i.node}</td><td>{i.tier}</td>
                                    <td>{i.gpu_indices.iter().map(u32::to_string).collect::<Vec<_>>().join(",")}</td>
                                    <td>{i.endpoint.unwrap_or_default()}</td><td>{i.started_at}</td>
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
