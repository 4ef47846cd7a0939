//! Which instance schedules (api.md "High availability and PostgreSQL"):
//! the lease row names the holder, and its epoch moves on each time an
//! instance takes it; every write of the scheduler's loop checks the
//! epoch inside its transaction (`Scheduler::write`), so a loop that lost
//! the lease can never start or end a job. On SQLite one instance serves
//! and it is always the scheduler: it takes the lease when its loop
//! starts. On PostgreSQL every instance starts as a standby and takes the
//! lease once it lapsed (`ha.lease_seconds` without a renewal); the
//! holder renews it every `ha.renew_seconds` (`scheduler::lead`).
//! `/readyz` and `/metrics` say the role and the epoch.

use std::sync::{Arc, Mutex};

use crate::clock::now_ms;
use crate::db;
use crate::services::{ServiceResult, Services};

/// This instance's name in the lease, and the epoch it took (None: it
/// does not schedule).
#[derive(Clone)]
pub struct Lease {
    holder: String,
    held: Arc<Mutex<Option<i64>>>,
}

impl Default for Lease {
    fn default() -> Self {
        use rand::distributions::{Alphanumeric, DistString};
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default().trim().to_string();
        let tag = Alphanumeric.sample_string(&mut rand::thread_rng(), 8);
        Self { holder: format!("{host}:{}:{tag}", std::process::id()), held: Default::default() }
    }
}

impl Lease {
    /// The epoch this instance holds the lease at, if it does.
    pub fn held(&self) -> Option<i64> {
        *self.held.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// This instance's name in the lease row.
    pub fn holder(&self) -> &str {
        &self.holder
    }
}

/// Whether this instance does the scheduler's work beside its loop now
/// (deliveries, the session watchers' checks): always on SQLite, where
/// one instance serves; on PostgreSQL only while it holds the lease.
#[derive(Clone)]
pub struct Duty {
    several: bool,
    lease: Lease,
}

impl Duty {
    pub fn now(&self) -> bool {
        !self.several || self.lease.held().is_some()
    }
}

impl Services {
    pub fn duty(&self) -> Duty {
        Duty { several: self.db.is_postgres(), lease: self.lease.clone() }
    }
}

/// Passes this instance's wake-ups of the scheduler on to the others
/// (PostgreSQL): a submit or a cancel on a standby reaches the scheduler
/// in milliseconds, not at its next timed cycle. Wakes in a burst are
/// sent as one.
pub async fn announce_wakes(state: Services) {
    loop {
        state.remote_wake.notified().await;
        if let Err(e) = db::wakes::announce(&state.db, &state.lease.holder).await {
            tracing::warn!(error = %e, "cannot tell the scheduler about new work; it finds it at its next cycle");
        }
    }
}

/// Wakes this instance's loop when another instance announces work.
pub async fn hear_wakes(state: Services) {
    loop {
        match db::wakes::Wakes::listen(&state.db).await {
            Ok(None) => return,
            Ok(Some(mut wakes)) => loop {
                match wakes.next().await {
                    Ok(from) if from != state.lease.holder => state.wake.notify_one(),
                    Ok(_) => {}
                    Err(e) => {
                        tracing::warn!(error = %e, "lost the wake-ups of other instances; listening again");
                        break;
                    }
                }
            },
            Err(e) => tracing::warn!(error = %e, "cannot hear other instances' wake-ups; trying again"),
        }
        tokio::time::sleep(TRY_AGAIN).await;
    }
}

const TRY_AGAIN: std::time::Duration = std::time::Duration::from_secs(2);

/// Takes the lease for this instance if it lapsed (or nobody holds it):
/// the new epoch, or None.
pub async fn try_take(state: &Services) -> ServiceResult<Option<i64>> {
    let (lease, _) = state.settings.ha.periods().map_err(crate::services::ServiceError::Internal)?;
    let now = now_ms();
    let mut tx = db::write_tx(&state.db).await?;
    let epoch = db::lease::take_if_lapsed(&mut tx, &state.lease.holder, now, now - lease.as_millis() as i64).await?;
    tx.commit().await?;
    if let Some(epoch) = epoch {
        *state.lease.held.lock().unwrap_or_else(|p| p.into_inner()) = Some(epoch);
        tracing::info!(epoch, holder = %state.lease.holder, "this instance took the lapsed lease: it is the scheduler");
    }
    Ok(epoch)
}

/// Renews the lease taken at `epoch`: false once another instance holds it.
pub async fn renew(state: &Services, epoch: i64) -> ServiceResult<bool> {
    let mut tx = db::write_tx(&state.db).await?;
    let kept = db::lease::renew(&mut tx, &state.lease.holder, epoch, now_ms()).await?;
    tx.commit().await?;
    Ok(kept)
}

/// This instance no longer schedules; `release` also hands the lease on
/// at once (a graceful stop), rather than after it lapses.
pub async fn step_down(state: &Services, epoch: i64, release: bool) {
    *state.lease.held.lock().unwrap_or_else(|p| p.into_inner()) = None;
    if release {
        let released = async {
            let mut tx = db::write_tx(&state.db).await?;
            db::lease::release(&mut tx, &state.lease.holder, epoch).await?;
            tx.commit().await
        };
        if let Err(e) = released.await {
            tracing::warn!(error = %e, "could not hand the lease on: a standby takes it once it lapses");
        }
    }
    tracing::info!(epoch, "this instance stopped scheduling");
}

/// What `/readyz` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Readiness {
    pub scheduler: bool,
    pub epoch: i64,
}

/// Takes the lease for this instance's scheduler loop.
pub async fn take(state: &Services) -> ServiceResult<i64> {
    let mut tx = db::write_tx(&state.db).await?;
    let epoch = db::lease::take(&mut tx, &state.lease.holder, now_ms()).await?;
    tx.commit().await?;
    *state.lease.held.lock().unwrap_or_else(|p| p.into_inner()) = Some(epoch);
    tracing::info!(epoch, holder = %state.lease.holder, "this instance is the scheduler");
    Ok(epoch)
}

/// How long `/healthz` and `/readyz` wait for the database: a pool
/// retries connecting to a stopped database for its whole acquire
/// timeout, and a load balancer's check must not wait that long.
const ASK_DATABASE: std::time::Duration = std::time::Duration::from_secs(2);

/// Whether the database answers a query now (`/healthz`).
pub async fn database_answers(state: &Services) -> Result<(), sqlx::Error> {
    let ping = async { db::health::ping(&mut state.db.acquire().await?).await };
    tokio::time::timeout(ASK_DATABASE, ping).await.unwrap_or(Err(sqlx::Error::PoolTimedOut))
}

/// The role of this instance and the lease's epoch, as the database has
/// them (an error: the database cannot be reached).
pub async fn readiness(state: &Services) -> ServiceResult<Readiness> {
    let current = async { db::lease::current(&mut state.db.acquire().await?).await };
    let (epoch, holder) =
        tokio::time::timeout(ASK_DATABASE, current).await.unwrap_or(Err(sqlx::Error::PoolTimedOut))?;
    let held = *state.lease.held.lock().unwrap_or_else(|p| p.into_inner());
    Ok(Readiness { scheduler: holder == state.lease.holder && held == Some(epoch), epoch })
}
