//! Admin changes to the inventory the scheduler places jobs on: tiers
//! (policy §1) and nodes with their GPUs. Like every admin action, each is
//! audited in the transaction that makes it and wakes the scheduler.

use app::model::admin::{tier_bounds, Bound};
use app::model::{GpuUse, NodeState, NodeView, TierView};
use app::{i18n::Msg, msg};
use serde::Deserialize;

use crate::auth::Caller;
use crate::clock::now_ms;
use crate::db;
use crate::services::admin::check_name;
use crate::services::ServiceError;
use crate::services::Services;

fn field(field: &'static str, message: Msg) -> ServiceError {
    ServiceError::field(field, message)
}

fn in_range(name: &'static str, value: i64, bound: Bound) -> Result<i64, ServiceError> {
    if bound.contains(value) {
        Ok(value)
    } else {
        Err(field(name, msg!("err-range", min = bound.min, max = bound.max, got = value)))
    }
}

/// The OpenAPI schemas of the tier's numbers, from the same bounds the
/// checks use (utoipa's `minimum`/`maximum` take only literals).
mod bounds_schema {
    use app::model::admin::{tier_bounds, Bound};
    use utoipa::openapi::schema::{KnownFormat, ObjectBuilder, SchemaFormat, SchemaType, Type};
    use utoipa::openapi::Object;

    fn integer(bound: Bound, nullable: bool) -> Object {
        let kind = if nullable { SchemaType::from_iter([Type::Integer, Type::Null]) } else { Type::Integer.into() };
        ObjectBuilder::new()
            .schema_type(kind)
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::Int64)))
            .minimum(Some(bound.min as f64))
            .maximum(Some(bound.max as f64))
            .build()
    }

    fn number(nullable: bool) -> Object {
        let kind = if nullable { SchemaType::from_iter([Type::Number, Type::Null]) } else { Type::Number.into() };
        ObjectBuilder::new()
            .schema_type(kind)
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::Double)))
            .exclusive_minimum(Some(0.0))
            .maximum(Some(tier_bounds::TFLOPS_MAX))
            .build()
    }

    pub fn tflops() -> Object {
        number(false)
    }
    pub fn tflops_or_null() -> Object {
        number(true)
    }
    pub fn vram_gb() -> Object {
        integer(tier_bounds::VRAM_GB, false)
    }
    pub fn vram_gb_or_null() -> Object {
        integer(tier_bounds::VRAM_GB, true)
    }
    pub fn sort_order() -> Object {
        integer(tier_bounds::SORT_ORDER, false)
    }
    pub fn sort_order_or_null() -> Object {
        integer(tier_bounds::SORT_ORDER, true)
    }
    pub fn max_gpus() -> Object {
        integer(tier_bounds::MAX_GPUS, false)
    }
    pub fn max_gpus_or_null() -> Object {
        integer(tier_bounds::MAX_GPUS, true)
    }
    pub fn max_time_limit_minutes_or_null() -> Object {
        integer(tier_bounds::MAX_TIME_LIMIT_MINUTES, true)
    }
    pub fn cpus_per_gpu_or_null() -> Object {
        integer(tier_bounds::CPUS_PER_GPU, true)
    }
    pub fn mem_gb_per_gpu_or_null() -> Object {
        integer(tier_bounds::MEM_GB_PER_GPU, true)
    }
}

fn label(name: &'static str, value: &str) -> Result<String, ServiceError> {
    let v = value.trim();
    if v.is_empty() || v.chars().count() > 64 || v.chars().any(char::is_control) {
        return Err(field(name, msg!("err-name-printable")));
    }
    Ok(v.to_string())
}

#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewTierBody {
    #[schema(pattern = r"^[A-Za-z0-9._-]{1,64}$")]
    pub name: String,
    #[schema(min_length = 1, max_length = 64, pattern = r"^[^\x00-\x1f\x7f]*\S[^\x00-\x1f\x7f]*$")]
    pub display_name: Option<String>,
    #[schema(schema_with = bounds_schema::vram_gb)]
    pub vram_gb: i64,
    #[schema(schema_with = bounds_schema::tflops)]
    pub tflops: f64,
    #[schema(schema_with = bounds_schema::sort_order)]
    pub sort_order: i64,
    #[schema(schema_with = bounds_schema::max_gpus)]
    pub max_gpus: i64,
    #[schema(schema_with = bounds_schema::max_time_limit_minutes_or_null)]
    pub max_time_limit_minutes: Option<i64>,
    #[schema(pattern = r"^[A-Za-z0-9._-]{1,64}$")]
    pub slurm_partition: Option<String>,
    #[schema(schema_with = bounds_schema::cpus_per_gpu_or_null)]
    pub cpus_per_gpu: Option<i64>,
    #[schema(schema_with = bounds_schema::mem_gb_per_gpu_or_null)]
    pub mem_gb_per_gpu: Option<i64>,
}

/// Every field of `PATCH /v1/admin/tiers/{name}` is optional; the name
/// stays (jobs and attempts refer to it).
#[derive(Debug, Clone, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TierPatch {
    #[schema(min_length = 1, max_length = 64, pattern = r"^[^\x00-\x1f\x7f]*\S[^\x00-\x1f\x7f]*$")]
    pub display_name: Option<String>,
    #[schema(schema_with = bounds_schema::vram_gb_or_null)]
    pub vram_gb: Option<i64>,
    #[schema(schema_with = bounds_schema::tflops_or_null)]
    pub tflops: Option<f64>,
    #[schema(schema_with = bounds_schema::sort_order_or_null)]
    pub sort_order: Option<i64>,
    #[schema(schema_with = bounds_schema::max_gpus_or_null)]
    pub max_gpus: Option<i64>,
    #[schema(schema_with = bounds_schema::max_time_limit_minutes_or_null)]
    pub max_time_limit_minutes: Option<i64>,
    #[schema(pattern = r"^[A-Za-z0-9._-]{1,64}$")]
    pub slurm_partition: Option<String>,
    #[schema(schema_with = bounds_schema::cpus_per_gpu_or_null)]
    pub cpus_per_gpu: Option<i64>,
    #[schema(schema_with = bounds_schema::mem_gb_per_gpu_or_null)]
    pub mem_gb_per_gpu: Option<i64>,
    pub active: Option<bool>,
}

/// Applies `patch` to `tier`, checking every value it sets.
fn patched(mut tier: TierView, patch: &TierPatch) -> Result<TierView, ServiceError> {
    if let Some(v) = &patch.display_name {
        tier.display_name = label("display_name", v)?;
    }
    if let Some(v) = patch.vram_gb {
        tier.vram_gb = in_range("vram_gb", v, tier_bounds::VRAM_GB)?;
    }
    if let Some(v) = patch.tflops {
        if !(v.is_finite() && v > 0.0 && v <= tier_bounds::TFLOPS_MAX) {
            return Err(field("tflops", msg!("err-tflops", max = tier_bounds::TFLOPS_MAX, got = v)));
        }
        tier.tflops = v;
    }
    if let Some(v) = patch.sort_order {
        tier.sort_order = in_range("sort_order", v, tier_bounds::SORT_ORDER)?;
    }
    if let Some(v) = patch.max_gpus {
        tier.max_gpus = in_range("max_gpus", v, tier_bounds::MAX_GPUS)?;
    }
    if let Some(v) = patch.max_time_limit_minutes {
        tier.max_time_limit_minutes = in_range("max_time_limit_minutes", v, tier_bounds::MAX_TIME_LIMIT_MINUTES)?;
    }
    if let Some(v) = &patch.slurm_partition {
        check_name("slurm_partition", v)?;
        tier.slurm_partition = v.clone();
    }
    if let Some(v) = patch.cpus_per_gpu {
        tier.cpus_per_gpu = in_range("cpus_per_gpu", v, tier_bounds::CPUS_PER_GPU)?;
    }
    if let Some(v) = patch.mem_gb_per_gpu {
        tier.mem_gb_per_gpu = in_range("mem_gb_per_gpu", v, tier_bounds::MEM_GB_PER_GPU)?;
    }
    if let Some(v) = patch.active {
        tier.active = v;
    }
    Ok(tier)
}

async fn tier_by_name(conn: &mut impl crate::db::AsConn, name: &str) -> Result<Option<TierView>, sqlx::Error> {
    Ok(db::cluster::list_tiers(conn).await?.into_iter().find(|t| t.name == name))
}

pub async fn create_tier(state: &Services, admin: &Caller, body: NewTierBody) -> Result<TierView, ServiceError> {
    check_name("name", &body.name)?;
    let defaults = TierView {
        name: body.name.clone(),
        display_name: body.name.clone(),
        vram_gb: 1,
        tflops: 1.0,
        sort_order: 0,
        max_gpus: 1,
        max_time_limit_minutes: 4320,
        slurm_partition: body.name.clone(),
        cpus_per_gpu: 4,
        mem_gb_per_gpu: 16,
        active: true,
    };
    let patch = TierPatch {
        display_name: body.display_name,
        vram_gb: Some(body.vram_gb),
        tflops: Some(body.tflops),
        sort_order: Some(body.sort_order),
        max_gpus: Some(body.max_gpus),
        max_time_limit_minutes: body.max_time_limit_minutes,
        slurm_partition: body.slurm_partition,
        cpus_per_gpu: body.cpus_per_gpu,
        mem_gb_per_gpu: body.mem_gb_per_gpu,
        active: None,
    };
    let tier = patched(defaults, &patch)?;
    let now = now_ms();
    let mut tx = db::write_tx(&state.db).await?;
    let new = db::cluster::NewTier {
        name: &tier.name,
        display_name: &tier.display_name,
        vram_gb: tier.vram_gb,
        tflops: tier.tflops,
        sort_order: tier.sort_order,
        max_gpus: tier.max_gpus,
        slurm_partition: &tier.slurm_partition,
        cpus_per_gpu: tier.cpus_per_gpu,
        mem_gb_per_gpu: tier.mem_gb_per_gpu,
    };
    db::cluster::insert_tier(&mut tx, new)
        .await
        .map_err(|e| ServiceError::unique(e, msg!("err-tier-exists", name = &tier.name)))?;
    // the insert leaves the time limit at its default
    db::cluster::update_tier(&mut tx, &tier).await?;
    db::audit::record(
        &mut tx,
        &admin.user.username,
        "tier.create",
        Some(&tier.name),
        &serde_json::to_value(&tier).unwrap_or_default(),
        now,
    )
    .await?;
    tx.commit().await?;
    state.wake_scheduler();
    Ok(tier)
}

pub async fn update_tier(
    state: &Services,
    admin: &Caller,
    name: &str,
    patch: TierPatch,
) -> Result<TierView, ServiceError> {
    let now = now_ms();
    let mut tx = db::write_tx(&state.db).await?;
    let current =
        tier_by_name(&mut tx, name).await?.ok_or_else(|| ServiceError::NotFound(msg!("err-no-tier", name = name)))?;
    let tier = patched(current.clone(), &patch)?;
    db::cluster::update_tier(&mut tx, &tier).await?;
    let detail = serde_json::json!({"from": current, "to": tier});
    db::audit::record(&mut tx, &admin.user.username, "tier.update", Some(name), &detail, now).await?;
    tx.commit().await?;
    state.wake_scheduler();
    Ok(tier)
}

#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NodeGpus {
    pub tier: String,
    #[schema(minimum = 1, maximum = 64)]
    pub count: i64,
}

#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewNodeBody {
    #[schema(pattern = r"^[A-Za-z0-9._-]{1,64}$")]
    pub name: String,
    /// At most 64 GPUs in all.
    #[schema(min_items = 1)]
    pub gpus: Vec<NodeGpus>,
}

const MAX_GPUS_PER_NODE: i64 = 64;

async fn node_view(conn: &mut impl crate::db::AsConn, name: &str) -> Result<Option<NodeView>, sqlx::Error> {
    Ok(nodes_in_use(conn).await?.into_iter().find(|n| n.name == name))
}

/// Every node with what each GPU is doing now; a draining node with no
/// research or backfill left on it is `DRAINED` (safe to work on).
pub async fn nodes_in_use(conn: &mut impl crate::db::AsConn) -> Result<Vec<NodeView>, sqlx::Error> {
    let mut nodes = db::cluster::list_nodes(conn).await?;
    let uses = db::views::gpu_uses(conn).await?;
    for node in &mut nodes {
        for gpu in &mut node.gpus {
            if let Some(used) = uses.get(&(node.name.clone(), gpu.tier.clone(), gpu.index as u32)) {
                gpu.used_by = *used;
            }
        }
        let busy = node.gpus.iter().any(|g| matches!(g.used_by, GpuUse::Research | GpuUse::Backfill));
        if node.state == NodeState::Draining && !busy {
            node.state = NodeState::Drained;
        }
    }
    Ok(nodes)
}

/// Adds a node; its GPUs are numbered from 0 in the order given.
pub async fn create_node(state: &Services, admin: &Caller, body: NewNodeBody) -> Result<NodeView, ServiceError> {
    check_name("name", &body.name)?;
    if body.gpus.is_empty() {
        return Err(field("gpus", msg!("err-node-no-gpus")));
    }
    let total: i64 = body.gpus.iter().map(|g| g.count.max(0)).sum();
    for g in &body.gpus {
        in_range("gpus.count", g.count, Bound { min: 1, max: MAX_GPUS_PER_NODE })?;
    }
    if total > MAX_GPUS_PER_NODE {
        return Err(field("gpus", msg!("err-node-gpus-max", max = MAX_GPUS_PER_NODE, got = total)));
    }
    let now = now_ms();
    let mut tx = db::write_tx(&state.db).await?;
    let mut gpus = Vec::with_capacity(body.gpus.len());
    for g in &body.gpus {
        let id = db::cluster::tier_id(&mut tx, &g.tier)
            .await?
            .ok_or_else(|| field("gpus.tier", msg!("err-no-tier", name = &g.tier)))?;
        gpus.push((id, g.count as u32));
    }
    db::cluster::insert_node(&mut tx, &body.name, &gpus, "admin", now)
        .await
        .map_err(|e| ServiceError::unique(e, msg!("err-node-exists", name = &body.name)))?;
    let detail = serde_json::json!({"gpus": body.gpus.iter().map(|g| serde_json::json!({"tier": g.tier, "count": g.count})).collect::<Vec<_>>()});
    db::audit::record(&mut tx, &admin.user.username, "node.create", Some(&body.name), &detail, now).await?;
    let view = node_view(&mut tx, &body.name)
        .await?
        .ok_or_else(|| ServiceError::Internal("the new node is missing".into()))?;
    tx.commit().await?;
    state.wake_scheduler();
    Ok(view)
}

/// Stops new dispatches to a node; what runs there finishes.
pub async fn drain_node(state: &Services, admin: &Caller, name: &str) -> Result<NodeView, ServiceError> {
    change_node_state(state, admin, name, "DRAINING", "node.drain", |node| match node.state {
        NodeState::Draining | NodeState::Drained => Some(msg!("err-node-draining", name = name)),
        NodeState::Up | NodeState::Down => None,
    })
    .await
}

/// The way back from a drain: the node takes new work again.
pub async fn resume_node(state: &Services, admin: &Caller, name: &str) -> Result<NodeView, ServiceError> {
    change_node_state(state, admin, name, "UP", "node.resume", |node| match node.state {
        NodeState::Up => Some(msg!("err-node-up", name = name)),
        // Slurm says when a node is down; only Slurm can bring it back
        NodeState::Down => Some(msg!("err-node-down", name = name)),
        NodeState::Draining | NodeState::Drained => None,
    })
    .await
}

/// Sets a node's stored state unless `refuse` names a conflict, audits it
/// as `action` in the same transaction, and answers with the node as it is
/// now (what still runs on it).
async fn change_node_state(
    state: &Services,
    admin: &Caller,
    name: &str,
    to: &str,
    action: &str,
    refuse: impl FnOnce(&NodeView) -> Option<Msg>,
) -> Result<NodeView, ServiceError> {
    let now = now_ms();
    let mut tx = db::write_tx(&state.db).await?;
    let node =
        node_view(&mut tx, name).await?.ok_or_else(|| ServiceError::NotFound(msg!("err-no-node", name = name)))?;
    if let Some(conflict) = refuse(&node) {
        return Err(ServiceError::Conflict(conflict));
    }
    db::cluster::set_node_state(&mut tx, name, to).await?;
    let detail = serde_json::json!({"from": node.state.as_str()});
    db::audit::record(&mut tx, &admin.user.username, action, Some(name), &detail, now).await?;
    let node = node_view(&mut tx, name).await?.ok_or_else(|| ServiceError::Internal("the node vanished".into()))?;
    tx.commit().await?;
    state.wake_scheduler();
    Ok(node)
}

/// Removes a node nothing runs on (drain it first).
pub async fn delete_node(state: &Services, admin: &Caller, name: &str) -> Result<(), ServiceError> {
    let now = now_ms();
    let mut tx = db::write_tx(&state.db).await?;
    if node_view(&mut tx, name).await?.is_none() {
        return Err(ServiceError::NotFound(msg!("err-no-node", name = name)));
    }
    let busy = db::cluster::node_in_use(&mut tx, name).await?;
    if busy > 0 {
        return Err(ServiceError::Conflict(msg!("err-node-busy", name = name, busy = busy)));
    }
    db::cluster::delete_node(&mut tx, name).await?;
    db::audit::record(&mut tx, &admin.user.username, "node.delete", Some(name), &serde_json::json!({}), now).await?;
    tx.commit().await?;
    state.wake_scheduler();
    Ok(())
}

/// Every tier, in display order.
pub async fn tiers(state: &Services) -> Result<Vec<TierView>, ServiceError> {
    Ok(db::cluster::list_tiers(&mut state.db.acquire().await?).await?)
}

/// Every node with its GPUs.
pub async fn nodes(state: &Services) -> Result<Vec<NodeView>, ServiceError> {
    Ok(nodes_in_use(&mut state.db.acquire().await?).await?)
}
