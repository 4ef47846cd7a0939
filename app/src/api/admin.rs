//! The admin pages' server functions: maintenance and the audit log, and
//! [`admin_form`], which every form of the tiers, nodes, labs, users and
//! backfill pages posts, building an [`AdminAction`] for the backend, which
//! checks the role and every field.

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

/// Every form of the tiers, nodes, labs, people and backfill pages posts
/// here: `form` (a hidden field) names which, and the fields that form
/// has come along (the others are absent). One server function instead of
/// one per form: each had its own form-encoding and answer code in the
/// browser's bundle.
#[server]
#[allow(clippy::too_many_arguments)]
pub async fn admin_form(
    form: String,
    name: Option<String>,
    display_name: Option<String>,
    vram_gb: Option<String>,
    tflops: Option<String>,
    sort_order: Option<String>,
    max_gpus: Option<String>,
    active: Option<String>,
    tier: Option<String>,
    count: Option<String>,
    patterns: Option<String>,
    username: Option<String>,
    password: Option<String>,
    lab: Option<String>,
    role: Option<String>,
    unix_uid: Option<String>,
    max_concurrent: Option<String>,
    // checkboxes: sent only when ticked
    local: Option<String>,
    access: Option<String>,
    enabled: Option<String>,
    command: Option<String>,
    min_idle_seconds: Option<String>,
    gpus_per_instance: Option<String>,
) -> Result<String, ConsoleError> {
    let text = |v: Option<String>| v.unwrap_or_default();
    let action = match form.as_str() {
        "create_tier" => AdminAction::CreateTier {
            name: text(name),
            display_name: text(display_name),
            vram_gb: text(vram_gb),
            tflops: text(tflops),
            sort_order: text(sort_order),
            max_gpus: text(max_gpus),
        },
        "update_tier" => AdminAction::UpdateTier {
            name: text(name),
            vram_gb: text(vram_gb),
            tflops: text(tflops),
            sort_order: text(sort_order),
            max_gpus: text(max_gpus),
        },
        "set_tier_active" => AdminAction::SetTierActive { name: text(name), active: active.as_deref() == Some("true") },
        "create_node" => AdminAction::CreateNode { name: text(name), tier: text(tier), count: text(count) },
        "drain_node" => AdminAction::DrainNode { name: text(name) },
        "resume_node" => AdminAction::ResumeNode { name: text(name) },
        "delete_node" => AdminAction::DeleteNode { name: text(name) },
        "set_oom_patterns" => AdminAction::SetOomPatterns { patterns: text(patterns) },
        "create_lab" => AdminAction::CreateLab { name: text(name) },
        "create_user" => AdminAction::CreateUser {
            username: text(username),
            password: text(password),
            lab: text(lab),
            role: text(role),
            unix_uid: text(unix_uid),
            max_concurrent: text(max_concurrent),
            local: local.is_some(),
        },
        "update_user" => AdminAction::UpdateUser {
            username: text(username),
            lab: text(lab),
            role: text(role),
            unix_uid: text(unix_uid),
            max_concurrent: text(max_concurrent),
            password: text(password),
            access: text(access),
        },
        "set_backfill" => AdminAction::SetBackfill {
            enabled: enabled.is_some(),
            command: text(command),
            min_idle_seconds: text(min_idle_seconds),
            gpus_per_instance: text(gpus_per_instance),
        },
        other => {
            return Err(crate::api::backend::answer(ConsoleError::new(
                crate::model::error::ErrorCode::BadRequest,
                format!("no such admin form: {other}"),
            )))
        }
    };
    act(action).await
}
