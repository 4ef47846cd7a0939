//! The fair-share and cluster views (queue, labs, usage series and the
//! usage page, placements, backfill, maintenance) shared by the REST API
//! and the console.

use app::msg;
use std::sync::Arc;

use app::model::views::{
    BackfillInstanceView, BackfillView, LabUsageSeries, LabView, PlacementView, QueueView, UsagePage,
};
use app::model::{MaintenanceView, Role};

use crate::auth::Caller;
use crate::clock::{now_ms, rfc3339};
use crate::db;
use crate::services::{ServiceError, Services};

/// The waiting jobs as last read, with the write count they were read
/// at. A queue of 10,000 jobs takes tens of milliseconds to read, and it
/// only changes when something commits (a cycle, a submit, a cancel), so
/// requests in between share one read; concurrent misses wait for one
/// refresh instead of each reading.
#[derive(Default)]
pub struct QueueCache {
    rows: tokio::sync::Mutex<Option<(u64, Arc<Vec<db::views::QueueRow>>)>>,
}

impl QueueCache {
    async fn rows(&self, pool: &crate::db::Pool) -> Result<Arc<Vec<db::views::QueueRow>>, sqlx::Error> {
        let mut cached = self.rows.lock().await;
        let seen = db::commits_seen(pool).await?;
        if let Some((at, rows)) = cached.as_ref() {
            if *at == seen {
                return Ok(rows.clone());
            }
        }
        // read under the count seen before the query: a commit during the
        // read moves the count, so the next request reads again
        let rows = Arc::new(db::views::queue(&mut pool.acquire().await?).await?);
        *cached = Some((seen, rows.clone()));
        Ok(rows)
    }
}

/// The global queue in this cycle's order (at most `limit` of it, with
/// the total then) and the caller's personal queue. Everyone sees every
/// lab's place in line (that is what fair share is about), but only
/// admins and the lab itself see job names and users.
pub async fn queue(state: &Services, caller: &Caller, limit: Option<usize>) -> Result<QueueView, ServiceError> {
    let rows = state.queue_cache.rows(&state.db).await?;
    let now = now_ms();
    let forecast = state.forecast.get();
    let entry = |row: &db::views::QueueRow| {
        let mut entry = row.entry.clone();
        entry.lab_usage_tflop_s = crate::policy::usage::decayed(&row.lab_usage, now);
        entry.estimated_start = forecast.get(&entry.id).map(|&ms| rfc3339(ms));
        if caller.user.role != Role::Admin && entry.lab != caller.user.lab {
            entry.name = None;
            entry.user = None;
        }
        entry
    };
    let global = rows.iter().take_while(|r| r.global).count();
    let shown = limit.map_or(global, |l| l.min(global));
    Ok(QueueView {
        jobs: rows[..shown].iter().map(entry).collect(),
        user_queue: rows[global..].iter().filter(|r| r.owner == caller.user.id).map(entry).collect(),
        total_waiting: (shown < global).then_some(global as u32),
    })
}

pub async fn labs(state: &Services) -> Result<Vec<LabView>, ServiceError> {
    Ok(db::views::labs(&mut state.db.acquire().await?, now_ms()).await?)
}

pub const MAX_DAYS: u32 = 366;

pub async fn lab_usage(state: &Services, lab: &str, days: Option<i64>) -> Result<LabUsageSeries, ServiceError> {
    let days = days.unwrap_or(30);
    if !(1..=i64::from(MAX_DAYS)).contains(&days) {
        return Err(ServiceError::field("days", msg!("err-range", min = 1u32, max = MAX_DAYS, got = days)));
    }
    let mut conn = state.db.acquire().await?;
    let id = db::views::lab_id(&mut conn, lab)
        .await?
        .ok_or_else(|| ServiceError::NotFound(msg!("err-no-lab", name = lab)))?;
    let days = db::views::daily_usage(&mut conn, id, days as u32, now_ms()).await?;
    Ok(LabUsageSeries { lab: lab.to_string(), days })
}

/// The usage page: every lab's standing and `lab`'s last 30 days (the
/// caller's own lab's when `lab` is None or empty).
pub async fn usage_page(state: &Services, caller: &Caller, lab: Option<String>) -> Result<UsagePage, ServiceError> {
    let labs = labs(state).await?;
    let lab = lab.filter(|l| !l.is_empty()).unwrap_or_else(|| caller.user.lab.clone());
    let series = lab_usage(state, &lab, Some(30)).await?;
    Ok(UsagePage { labs, my_lab: caller.user.lab.clone(), series })
}

/// The maintenance phase, its message and since when.
pub async fn maintenance(state: &Services) -> Result<MaintenanceView, ServiceError> {
    let row = db::maintenance::get(&mut state.db.acquire().await?).await?;
    Ok(MaintenanceView { phase: row.phase, message: row.message, since: rfc3339(row.since_ms) })
}

pub async fn placements(state: &Services) -> Result<Vec<PlacementView>, ServiceError> {
    Ok(db::views::placements(&mut state.db.acquire().await?).await?)
}

/// Running instances and served GPU-hours; `show_command` for admins.
pub async fn backfill(state: &Services, show_command: bool) -> Result<BackfillView, ServiceError> {
    let rows = db::views::backfill_instances(&mut state.db.acquire().await?).await?;
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
    let config = state.backfill.get();
    Ok(BackfillView {
        enabled: config.policy().enabled,
        instances,
        served_gpu_hours: served_ms as f64 / 3_600_000.0,
        min_idle_seconds: config.min_idle_seconds,
        gpus_per_instance: config.gpus_per_instance,
        command: show_command.then_some(config.command),
    })
}
