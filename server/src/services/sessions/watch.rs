//! The sessions' watcher, beside the scheduler loop: every tick it
//!
//! 1. writes the proxy's traffic since the last tick to each session
//!    (one write per session, not per request);
//! 2. asks each STARTING session's app whether it answers → READY;
//! 3. asks each READY one whether a kernel is busy (counts as use);
//! 4. ends the ones nobody used for `sessions.idle_minutes`: `CANCELLED`
//!    with `end_reason` `IDLE`, through the same cancel as any job.
//!
//! With several instances (PostgreSQL), each writes its own proxy's
//! traffic (1) and only the scheduler does 2–4.
//!
//! What it knows is in the database, so a restarted server goes on where
//! this one stopped (a READY session stays reachable).

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use super::app;
use super::Activity;
use crate::clock::now_ms;
use crate::config::Settings;
use crate::db;
use crate::executor::layout::Layout;

/// How often: a session is READY within about this long of its app
/// answering.
pub const TICK: Duration = Duration::from_secs(1);
/// How often a READY session's kernels are asked about (every Nth tick).
const KERNEL_EVERY: u64 = 15;

/// Runs until `stop` resolves.
pub async fn run(
    pool: crate::db::Pool,
    settings: Arc<Settings>,
    activity: Arc<Activity>,
    wake: Arc<tokio::sync::Notify>,
    duty: crate::services::ha::Duty,
    stop: impl Future<Output = ()>,
) {
    let layout = Layout::new(&settings.executor.output_root);
    let mut ticks = 0u64;
    tokio::pin!(stop);
    loop {
        tokio::select! {
            _ = &mut stop => return,
            _ = tokio::time::sleep(TICK) => {}
        }
        ticks += 1;
        let checks = duty.now().then_some(ticks.is_multiple_of(KERNEL_EVERY));
        match tick(&pool, &settings, &activity, &layout, checks).await {
            // the loop stops the ones that ended now
            Ok(true) => wake.notify_one(),
            Ok(false) => {}
            Err(e) => tracing::warn!(error = %e, "sessions: a check failed; the next tick tries again"),
        }
    }
}

async fn tick(
    pool: &crate::db::Pool,
    settings: &Settings,
    activity: &Activity,
    layout: &Layout,
    checks: Option<bool>,
) -> Result<bool, sqlx::Error> {
    let mut ended = false;
    // 1. traffic through the proxy
    let seen = activity.take();
    if !seen.is_empty() {
        let mut tx = db::write_tx(pool).await?;
        for (id, at) in &seen {
            db::sessions::record_activity(&mut tx, *id, *at).await?;
        }
        tx.commit().await?;
    }
    // 2–4 are the scheduler's (api.md); traffic is written by every
    // instance, each for the browsers its own proxy served
    let Some(ask_kernels) = checks else {
        return Ok(false);
    };
    let running = {
        let mut conn = pool.acquire().await?;
        db::sessions::running(&mut conn).await?
    };
    let idle_ms = settings.sessions.idle_ms();
    for session in running {
        let Some(uid) = session.uid else { continue };
        let app = super::address(settings, layout, session.id, uid, session.node_addr.as_deref());
        let base = format!("/s/{}/", session.id);
        // 2. STARTING → READY
        if session.ready_at.is_none() {
            if app::answers(&app, &base).await {
                let mut tx = db::write_tx(pool).await?;
                db::sessions::mark_ready(&mut tx, session.id, now_ms()).await?;
                tx.commit().await?;
                tracing::info!(session = session.id, "session ready");
            }
            continue;
        }
        // 3. a busy kernel is use: asked every few ticks, and always
        // before an idle end (no false alarm for a long computation)
        let mut active_at = session.active_at.unwrap_or(0).max(seen.get(&session.id).copied().unwrap_or(0));
        let due = now_ms() - active_at >= idle_ms;
        if (ask_kernels || due) && app::kernel_busy(&app, &base).await == Some(true) {
            active_at = now_ms();
            let mut tx = db::write_tx(pool).await?;
            db::sessions::record_activity(&mut tx, session.id, active_at).await?;
            tx.commit().await?;
        }
        // 4. nobody used it: it ends
        if now_ms() - active_at >= idle_ms {
            let mut tx = db::write_tx(pool).await?;
            db::jobs::cancel_for(&mut tx, session.id, now_ms(), "IDLE").await?;
            tx.commit().await?;
            tracing::info!(session = session.id, "session ended: idle");
            ended = true;
        }
    }
    Ok(ended)
}
