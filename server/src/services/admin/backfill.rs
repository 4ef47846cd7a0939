//! LLM backfill's settings as they are now (policy §7): the configuration
//! file's `backfill.*`, with what admins changed at runtime on top. The
//! changes are stored in the database (so they survive restarts) and in
//! the shared [`BackfillControl`] the scheduler loop reads every cycle, so
//! switching backfill on or off takes effect at the next cycle.

use app::msg;
use std::sync::{Arc, RwLock};

use serde::Deserialize;

use crate::auth::Caller;
use crate::clock::now_ms;
use crate::config::BackfillSettings;
use crate::db;
use crate::policy::backfill::BackfillPolicy;
use crate::services::ServiceError;
use crate::services::Services;

pub const MAX_COMMAND: usize = 4096;
pub const MAX_MIN_IDLE_SECONDS: u64 = 86_400;

#[derive(Debug, Clone, PartialEq)]
pub struct BackfillConfig {
    pub enabled: bool,
    pub command: String,
    pub min_idle_seconds: u64,
    pub gpus_per_instance: u32,
}

impl BackfillConfig {
    pub fn from_file(s: &BackfillSettings) -> Self {
        Self {
            enabled: s.enabled,
            command: s.command.clone(),
            min_idle_seconds: s.min_idle_seconds,
            gpus_per_instance: s.gpus_per_instance.max(1),
        }
    }

    fn with(mut self, o: &db::backfill::Overrides) -> Self {
        if let Some(v) = o.enabled {
            self.enabled = v;
        }
        if let Some(v) = &o.command {
            self.command = v.clone();
        }
        if let Some(v) = o.min_idle_seconds {
            self.min_idle_seconds = v.max(0) as u64;
        }
        if let Some(v) = o.gpus_per_instance {
            self.gpus_per_instance = v.clamp(1, 8) as u32;
        }
        self
    }

    /// What the planner gets: on only with a command to run.
    pub fn policy(&self) -> BackfillPolicy {
        BackfillPolicy {
            enabled: self.enabled && !self.command.trim().is_empty(),
            min_idle_ms: (self.min_idle_seconds * 1000) as i64,
            gpus_per_instance: self.gpus_per_instance.max(1),
        }
    }
}

/// The settings in force, shared by the loop and the admin actions.
#[derive(Clone, Debug)]
pub struct BackfillControl(Arc<RwLock<BackfillConfig>>);

impl BackfillControl {
    pub fn new(config: BackfillConfig) -> Self {
        Self(Arc::new(RwLock::new(config)))
    }

    pub fn get(&self) -> BackfillConfig {
        self.0.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn set(&self, config: BackfillConfig) {
        *self.0.write().unwrap_or_else(|p| p.into_inner()) = config;
    }
}

/// The file's settings with the stored admin changes applied.
pub async fn load(file: &BackfillSettings, conn: &mut impl crate::db::AsConn) -> Result<BackfillConfig, sqlx::Error> {
    Ok(BackfillConfig::from_file(file).with(&db::backfill::overrides(conn).await?))
}

/// `PATCH /v1/admin/backfill`: each field optional.
#[derive(Debug, Clone, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BackfillPatch {
    pub enabled: Option<bool>,
    /// Run with bash; serves the model on `JPU_BACKFILL_PORT`.
    #[schema(max_length = 4096)]
    pub command: Option<String>,
    #[schema(minimum = 0, maximum = 86400)]
    pub min_idle_seconds: Option<u64>,
    #[schema(minimum = 1, maximum = 8)]
    pub gpus_per_instance: Option<u32>,
}

fn check(patch: &BackfillPatch, merged: &BackfillConfig) -> Result<(), ServiceError> {
    if let Some(c) = &patch.command {
        if c.len() > MAX_COMMAND || c.contains('\0') {
            return Err(ServiceError::field("command", msg!("err-bytes-no-nul", max = MAX_COMMAND)));
        }
    }
    if patch.min_idle_seconds.is_some_and(|s| s > MAX_MIN_IDLE_SECONDS) {
        return Err(ServiceError::field(
            "min_idle_seconds",
            msg!("err-between", min = 0u32, max = MAX_MIN_IDLE_SECONDS),
        ));
    }
    if patch.gpus_per_instance.is_some_and(|g| !(1..=8).contains(&g)) {
        return Err(ServiceError::field("gpus_per_instance", msg!("err-between", min = 1u32, max = 8u32)));
    }
    if merged.enabled && merged.command.trim().is_empty() {
        return Err(ServiceError::field("command", msg!("err-backfill-command")));
    }
    Ok(())
}

/// Applies an admin's change: stored, audited, in force at the next cycle.
pub async fn update(state: &Services, admin: &Caller, patch: BackfillPatch) -> Result<BackfillConfig, ServiceError> {
    let now = now_ms();
    let mut tx = db::write_tx(&state.db).await?;
    let mut overrides = db::backfill::overrides(&mut tx).await?;
    if let Some(v) = patch.enabled {
        overrides.enabled = Some(v);
    }
    if let Some(v) = &patch.command {
        overrides.command = Some(v.trim().to_string());
    }
    if let Some(v) = patch.min_idle_seconds {
        overrides.min_idle_seconds = Some(v as i64);
    }
    if let Some(v) = patch.gpus_per_instance {
        overrides.gpus_per_instance = Some(i64::from(v));
    }
    let merged = BackfillConfig::from_file(&state.settings.backfill).with(&overrides);
    check(&patch, &merged)?;
    db::backfill::set_overrides(&mut tx, &overrides, &admin.user.username, now).await?;
    let detail = serde_json::json!({
        // the command itself: what will run on every idle GPU is what an
        // auditor needs to see
        "enabled": patch.enabled, "command": patch.command,
        "min_idle_seconds": patch.min_idle_seconds, "gpus_per_instance": patch.gpus_per_instance,
    });
    db::audit::record(&mut tx, &admin.user.username, "backfill.update", None, &detail, now).await?;
    tx.commit().await?;
    state.backfill.set(merged.clone());
    state.wake_scheduler();
    Ok(merged)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file() -> BackfillSettings {
        BackfillSettings { enabled: false, min_idle_seconds: 60, gpus_per_instance: 1, command: String::new() }
    }

    #[test]
    fn stored_changes_override_the_file_field_by_field() {
        let o = db::backfill::Overrides {
            enabled: Some(true),
            command: Some("vllm serve m".into()),
            min_idle_seconds: None,
            gpus_per_instance: Some(2),
        };
        let c = BackfillConfig::from_file(&file()).with(&o);
        assert_eq!(
            c,
            BackfillConfig {
                enabled: true,
                command: "vllm serve m".into(),
                min_idle_seconds: 60,
                gpus_per_instance: 2
            }
        );
        assert!(c.policy().enabled);
        assert_eq!(c.policy().min_idle_ms, 60_000);
    }

    #[test]
    fn enabled_without_a_command_plans_nothing_and_is_refused() {
        let c = BackfillConfig { enabled: true, command: "  ".into(), min_idle_seconds: 0, gpus_per_instance: 1 };
        assert!(!c.policy().enabled);
        let err = check(&BackfillPatch { enabled: Some(true), ..Default::default() }, &c).unwrap_err();
        assert!(matches!(err, ServiceError::Validation(m) if m.to_string().starts_with("command:")));
        let bad = BackfillPatch { gpus_per_instance: Some(9), ..Default::default() };
        assert!(matches!(
            check(&bad, &BackfillConfig::from_file(&file())),
            Err(ServiceError::Validation(m)) if m.to_string().starts_with("gpus_per_instance:")
        ));
    }
}
