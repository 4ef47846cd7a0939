//! The fair-share and cluster views (queue, labs, usage series,
//! placements, backfill) shared by the REST API and the console.

use app::model::Role;
use app::views::{BackfillInstanceView, BackfillView, LabUsageSeries, LabView, PlacementView, QueueView};

use crate::auth::Caller;
use crate::clock::{now_ms, rfc3339};
use crate::db;
use crate::state::AppState;

#[derive(Debug, thiserror::Error)]
pub enum ViewError {
    #[error("no such lab")]
    NoSuchLab,
    #[error("{field}: {message}")]
    Field { field: &'static str, message: String },
    #[error(transparent)]
    Db(#[from] sqlx::Error),
}

/// The global queue in this cycle's order and the caller's personal
/// queue. Everyone sees every lab's place in line (that is what fair
/// share is about), but only admins and the lab itself see job names
/// and users.
pub async fn queue(state: &AppState, caller: &Caller) -> Result<QueueView, ViewError> {
    let rows = db::views::queue(&mut *state.db.acquire().await?, caller.user.id, now_ms()).await?;
    let mut view = QueueView { jobs: Vec::new(), user_queue: Vec::new(), total_waiting: None };
    for (mut entry, _owner, global) in rows {
        if caller.user.role != Role::Admin && entry.lab != caller.user.lab {
            entry.name = None;
            entry.user = None;
        }
        if global {
            view.jobs.push(entry);
        } else {
            view.user_queue.push(entry);
        }
    }
    Ok(view)
}

pub async fn labs(state: &AppState) -> Result<Vec<LabView>, ViewError> {
    Ok(db::views::labs(&mut *state.db.acquire().await?, now_ms()).await?)
}

pub const MAX_DAYS: u32 = 366;

pub async fn lab_usage(state: &AppState, lab: &str, days: Option<i64>) -> Result<LabUsageSeries, ViewError> {
    let days = days.unwrap_or(30);
    if !(1..=i64::from(MAX_DAYS)).contains(&days) {
        return Err(ViewError::Field { field: "days", message: format!("must be between 1 and {MAX_DAYS}, got {days}") });
    }
    let mut conn = state.db.acquire().await?;
    let id = db::views::lab_id(&mut conn, lab).await?.ok_or(ViewError::NoSuchLab)?;
    let days = db::views::daily_usage(&mut conn, id, days as u32, now_ms()).await?;
    Ok(LabUsageSeries { lab: lab.to_string(), days })
}

pub async fn placements(state: &AppState) -> Result<Vec<PlacementView>, ViewError> {
    Ok(db::views::placements(&mut *state.db.acquire().await?).await?)
}

pub async fn backfill(state: &AppState) -> Result<BackfillView, ViewError> {
    let rows = db::views::backfill_instances(&mut *state.db.acquire().await?).await?;
    let now = now_ms();
    let mut served_ms = 0i64;
    let mut instances = Vec::new();
    for r in rows {
        served_ms += (r.ended_at.unwrap_or(now) - r.started_at).max(0) * r.gpu_indices.len() as i64;
        if r.ended_at.is_none() {
            instances.push(BackfillInstanceView {
                id: r.id,
                node: r.node,
                tier: r.tier,
                gpu_indices: r.gpu_indices,
                endpoint: r.endpoint,
                started_at: rfc3339(r.started_at),
            });
        }
    }
    Ok(BackfillView { enabled: state.settings.backfill.enabled, instances, served_gpu_hours: served_ms as f64 / 3_600_000.0 })
}
