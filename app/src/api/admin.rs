//! The admin pages' server functions: maintenance and the audit log, and
//! one per form of the tiers, nodes, labs, users and backfill pages, each
//! building an [`AdminAction`] for the backend, which checks the role and
//! every field.

#[cfg(feature = "ssr")]
use crate::model::admin::AdminAction;
use crate::model::admin::AdminClusterView;
use crate::model::error::ConsoleError;
use crate::model::views;
use crate::model::MaintenanceView;
use leptos::prelude::*;

#[cfg(feature = "ssr")]
async fn act(action: AdminAction) -> Result<String, ConsoleError> {
    use crate::api::backend::*;
    let (backend, who) = signed_in().await?;
    backend.admin_action(&who, action).await.map_err(answer)
}

#[server]
pub async fn admin_view() -> Result<views::AdminView, ConsoleError> {
    use crate::api::backend::*;
    let (backend, who) = signed_in().await?;
    backend.admin_view(&who).await.map_err(answer)
}

#[server]
pub async fn set_maintenance(action: String, message: String) -> Result<MaintenanceView, ConsoleError> {
    use crate::api::backend::*;
    let (backend, who) = signed_in().await?;
    backend.set_maintenance(&who, action, message).await.map_err(answer)
}

#[server]
pub async fn admin_cluster() -> Result<AdminClusterView, ConsoleError> {
    use crate::api::backend::*;
    let (backend, who) = signed_in().await?;
    backend.admin_cluster(&who).await.map_err(answer)
}

#[server]
pub async fn admin_create_tier(
    name: String,
    display_name: String,
    vram_gb: String,
    tflops: String,
    sort_order: String,
    max_gpus: String,
) -> Result<String, ConsoleError> {
    act(AdminAction::CreateTier { name, display_name, vram_gb, tflops, sort_order, max_gpus }).await
}

#[server]
pub async fn admin_update_tier(
    name: String,
    vram_gb: String,
    tflops: String,
    sort_order: String,
    max_gpus: String,
) -> Result<String, ConsoleError> {
    act(AdminAction::UpdateTier { name, vram_gb, tflops, sort_order, max_gpus }).await
}

#[server]
pub async fn admin_set_tier_active(name: String, active: bool) -> Result<String, ConsoleError> {
    act(AdminAction::SetTierActive { name, active }).await
}

#[server]
pub async fn admin_create_node(name: String, tier: String, count: String) -> Result<String, ConsoleError> {
    act(AdminAction::CreateNode { name, tier, count }).await
}

#[server]
pub async fn admin_drain_node(name: String) -> Result<String, ConsoleError> {
    act(AdminAction::DrainNode { name }).await
}

#[server]
pub async fn admin_resume_node(name: String) -> Result<String, ConsoleError> {
    act(AdminAction::ResumeNode { name }).await
}

/// One pattern per line.
#[server]
pub async fn admin_set_oom_patterns(patterns: String) -> Result<String, ConsoleError> {
    act(AdminAction::SetOomPatterns { patterns }).await
}

#[server]
pub async fn admin_delete_node(name: String) -> Result<String, ConsoleError> {
    act(AdminAction::DeleteNode { name }).await
}

#[server]
pub async fn admin_create_lab(name: String) -> Result<String, ConsoleError> {
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
    // a checkbox: sent only when ticked
    local: Option<String>,
) -> Result<String, ConsoleError> {
    let local = local.is_some();
    act(AdminAction::CreateUser { username, password, lab, role, unix_uid, max_concurrent, local }).await
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
) -> Result<String, ConsoleError> {
    act(AdminAction::UpdateUser { username, lab, role, unix_uid, max_concurrent, password, access }).await
}

/// `enabled` is a checkbox: present ("on") when ticked.
#[server]
pub async fn admin_set_backfill(
    enabled: Option<String>,
    command: String,
    min_idle_seconds: String,
    gpus_per_instance: String,
) -> Result<String, ConsoleError> {
    act(AdminAction::SetBackfill { enabled: enabled.is_some(), command, min_idle_seconds, gpus_per_instance }).await
}
