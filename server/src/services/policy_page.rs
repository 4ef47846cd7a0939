//! The Policy page's facts (`app::model::policy`): read from the settings
//! in force, the database (tiers, placements, OOM signatures, the default
//! concurrency, maintenance) and what the executor reported it enforces,
//! so the page can never say something the deployment does not do.

use std::sync::{Arc, RwLock};

use app::model::policy::{IsolationFacts, PolicyView};

use crate::auth::Caller;
use crate::db;
use crate::policy::oom::{MAX_ATTEMPTS, OOM_TAIL_BYTES};
use crate::policy::usage::HALF_LIFE_MS;
use crate::services::{views, ServiceResult, Services};

/// What the executor in use enforces, as it reported at start.
#[derive(Clone, Default)]
pub struct IsolationCell(Arc<RwLock<IsolationFacts>>);

impl IsolationCell {
    pub fn set(&self, facts: IsolationFacts) {
        *self.0.write().unwrap_or_else(|p| p.into_inner()) = facts;
    }

    pub fn get(&self) -> IsolationFacts {
        self.0.read().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

pub async fn facts(state: &Services, viewer: Option<&Caller>) -> ServiceResult<PolicyView> {
    let mut conn = state.db.acquire().await?;
    let tiers = db::cluster::list_tiers(&mut conn).await?;
    let oom_patterns = db::oom_patterns::in_force(&mut conn).await?;
    let placements = db::views::placements(&mut conn).await?;
    drop(conn);
    let maintenance = views::maintenance(state).await?;
    let settings = &state.settings;
    let scheduler = &settings.scheduler;
    let backfill = state.backfill.get();
    Ok(PolicyView {
        tiers,
        placements,
        cycle_ms: scheduler.cycle_ms,
        half_life_ms: HALF_LIFE_MS as u64,
        default_concurrency: crate::policy::personal::DEFAULT_CONCURRENCY,
        your_concurrency: viewer.map(|c| c.user.max_concurrent),
        max_unfinished: scheduler.max_unfinished_per_user,
        default_time_limit_minutes: scheduler.default_time_limit_minutes,
        oom_patterns,
        oom_tail_kib: (OOM_TAIL_BYTES / 1024) as u64,
        max_attempts: MAX_ATTEMPTS,
        policy: match scheduler.policy {
            crate::config::PolicyName::Seed => "seed".into(),
            crate::config::PolicyName::Planned => "planned".into(),
        },
        plan_depth: scheduler.plan_depth,
        max_wait_hours: scheduler.max_wait_hours,
        lift_percent: scheduler.max_wait_lift_percent,
        lift_ahead_of_light: scheduler.plan_lift_ahead_of_light,
        charge_drains: scheduler.plan_charge_drains,
        predicted_ends: scheduler.plan_predicted_ends,
        backfill_enabled: backfill.enabled,
        backfill_min_idle_seconds: backfill.min_idle_seconds,
        isolation: state.isolation.get(),
        cancel_grace_seconds: settings.cancel.grace_seconds,
        maintenance,
        session_apps: settings.sessions.apps.keys().cloned().collect(),
        session_idle_minutes: settings.sessions.idle_minutes,
        sessions_per_user: settings.sessions.max_per_user,
        home_quota_bytes: crate::config::storage::StorageSettings::bytes(settings.storage.home_quota_gb),
        lab_quota_bytes: crate::config::storage::StorageSettings::bytes(settings.storage.lab_quota_gb),
        max_upload_bytes: settings.storage.max_upload_mb.saturating_mul(1_000_000),
        max_dataset_bytes: crate::config::storage::StorageSettings::bytes(settings.storage.max_dataset_gb),
        scan_minutes: settings.storage.scan_minutes,
    })
}
