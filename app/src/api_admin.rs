//! Server functions of the admin pages for tiers, nodes, labs, users and
//! backfill: one per form, each building an [`AdminAction`] and handing it
//! to the backend, which checks the role and every field.

#[cfg(feature = "ssr")]
use crate::admin_views::AdminAction;
use crate::admin_views::AdminClusterView;
use leptos::prelude::*;

#[cfg(feature = "ssr")]
async fn act(action: AdminAction) -> Result<String, ServerFnError> {
    use crate::backend::*;
    let viewer = current_viewer().await?.ok_or_else(|| to_server_error(ConsoleError::Unauthenticated))?;
    backend()?.0.admin_action(&viewer, action).await.map_err(to_server_error)
}

#[server]
pub async fn admin_cluster() -> Result<AdminClusterView, ServerFnError> {
    use crate::backend::*;
    let viewer = current_viewer().await?.ok_or_else(|| to_server_error(ConsoleError::Unauthenticated))?;
    backend()?.0.admin_cluster(&viewer).await.map_err(to_server_error)
}

#[server]
pub async fn admin_create_tier(
    name: String,
    display_name: String,
    vram_gb: String,
    tflops: String,
    sort_order: String,
    max_gpus: String,
) -> Result<String, ServerFnError> {
    act(AdminAction::CreateTier { name, display_name, vram_gb, tflops, sort_order, max_gpus }).await
}

#[server]
pub async fn admin_update_tier(
    name: String,
    vram_gb: String,
    tflops: String,
    sort_order: String,
    max_gpus: String,
) -> Result<String, ServerFnError> {
    act(AdminAction::UpdateTier { name, vram_gb, tflops, sort_order, max_gpus }).await
}

#[server]
pub async fn admin_set_tier_active(name: String, active: bool) -> Result<String, ServerFnError> {
    act(AdminAction::SetTierActive { name, active }).await
}

#[server]
pub async fn admin_create_node(name: String, tier: String, count: String) -> Result<String, ServerFnError> {
    act(AdminAction::CreateNode { name, tier, count }).await
}

#[server]
pub async fn admin_drain_node(name: String) -> Result<String, ServerFnError> {
    act(AdminAction::DrainNode { name }).await
}

#[server]
pub async fn admin_delete_node(name: String) -> Result<String, ServerFnError> {
    act(AdminAction::DeleteNode { name }).await
}

#[server]
pub async fn admin_create_lab(name: String) -> Result<String, ServerFnError> {
    act(AdminAction::CreateLab { name }).await
}

#[server]
pub async fn admin_create_user(
    username: String,
    password: String,
    lab: String,
    role: String,
    unix_uid: String,
    max_concurrent: String,
) -> Result<String, ServerFnError> {
    act(AdminAction::CreateUser { username, password, lab, role, unix_uid, max_concurrent }).await
}

#[server]
pub async fn admin_update_user(
    username: String,
    lab: String,
    role: String,
    unix_uid: String,
    max_concurrent: String,
    password: String,
    access: String,
) -> Result<String, ServerFnError> {
    act(AdminAction::UpdateUser { username, lab, role, unix_uid, max_concurrent, password, access }).await
}

/// `enabled` is a checkbox: present ("on") when ticked.
#[server]
pub async fn admin_set_backfill(
    enabled: Option<String>,
    command: String,
    min_idle_seconds: String,
    gpus_per_instance: String,
) -> Result<String, ServerFnError> {
    act(AdminAction::SetBackfill { enabled: enabled.is_some(), command, min_idle_seconds, gpus_per_instance }).await
}
