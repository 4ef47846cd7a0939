//! Which instance schedules (api.md "High availability and PostgreSQL"):
//! the lease row names the holder, and its epoch moves on each time an
//! instance takes it. On SQLite one instance serves and it is always the
//! scheduler: it takes the lease when its loop starts, and every write of
//! the loop checks the epoch inside its transaction (`Scheduler::write`),
//! so a second server started on the same file by mistake fences the
//! first rather than both dispatching. `/readyz` and `/metrics` say the
//! role and the epoch, the same on every instance. (Several instances on
//! PostgreSQL, renewals and standbys taking a lapsed lease are #45's, not
//! built yet.)

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

/// Whether the database answers a query now (`/healthz`).
pub async fn database_answers(state: &Services) -> Result<(), sqlx::Error> {
    db::health::ping(&mut state.db.acquire().await?).await
}

/// The role of this instance and the lease's epoch, as the database has
/// them (an error: the database cannot be reached).
pub async fn readiness(state: &Services) -> ServiceResult<Readiness> {
    let (epoch, holder) = db::lease::current(&mut state.db.acquire().await?).await?;
    let held = *state.lease.held.lock().unwrap_or_else(|p| p.into_inner());
    Ok(Readiness { scheduler: holder == state.lease.holder && held == Some(epoch), epoch })
}
