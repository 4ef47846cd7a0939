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
use std::time::{Duration, Instant};

use crate::db;
use crate::services::{ServiceResult, Services};

/// This instance's name in the lease, the epoch it took (None: it does
/// not schedule) and until when it may act under it.
#[derive(Clone)]
pub struct Lease {
    holder: String,
    held: Arc<Mutex<Option<i64>>>,
    until: ActUntil,
    probe: Arc<tokio::sync::Mutex<Option<(Instant, Seen)>>>,
}

/// The lease row as a probe saw it: (epoch, holder), None if the database
/// did not answer.
type Seen = Option<(i64, String)>;

impl Default for Lease {
    fn default() -> Self {
        use rand::distributions::{Alphanumeric, DistString};
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default().trim().to_string();
        let tag = Alphanumeric.sample_string(&mut rand::thread_rng(), 8);
        Self {
            holder: format!("{host}:{}:{tag}", std::process::id()),
            held: Default::default(),
            until: Default::default(),
            probe: Default::default(),
        }
    }
}

impl Lease {
    /// The epoch this instance holds the lease at, if it does.
    pub fn held(&self) -> Option<i64> {
        *self.held.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Until when the scheduler under this lease may act (PostgreSQL).
    pub fn act_until(&self) -> &ActUntil {
        &self.until
    }

    fn set_held(&self, epoch: Option<i64>) {
        *self.held.lock().unwrap_or_else(|p| p.into_inner()) = epoch;
    }
}

/// Until when the holder may act on the executor: the start of its last
/// successful renewal (or of the take) plus `lease − renew`, on the
/// monotonic clock, which goes on while the process is stopped. The
/// lease's row lapses no earlier than `lease` after that start (its time
/// is the database's, written after the request left), so the holder
/// stops `renew` seconds before any standby can take over.
#[derive(Clone, Default)]
pub struct ActUntil(Arc<Mutex<Option<Instant>>>);

impl ActUntil {
    pub fn still(&self) -> bool {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).is_some_and(|until| Instant::now() < until)
    }

    /// Moves the deadline on to `to` (never back).
    pub fn extend(&self, to: Instant) {
        let mut until = self.0.lock().unwrap_or_else(|p| p.into_inner());
        *until = Some(until.map_or(to, |u| u.max(to)));
    }

    pub fn clear(&self) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = None;
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
        !self.several || (self.lease.held().is_some() && self.lease.until.still())
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
    let (lease, renew) = state.settings.ha.periods().map_err(crate::services::ServiceError::Internal)?;
    let asked = Instant::now();
    let mut tx = db::write_tx_outside_plans(&state.db).await?;
    let epoch = db::lease::take_if_lapsed(&mut tx, &state.lease.holder, lease.as_millis() as i64).await?;
    tx.commit().await?;
    if let Some(epoch) = epoch {
        state.lease.until.extend(asked + lease.saturating_sub(renew));
        state.lease.set_held(Some(epoch));
        tracing::info!(epoch, holder = %state.lease.holder, "this instance took the lapsed lease: it is the scheduler");
    }
    Ok(epoch)
}

/// Renews the lease taken at `epoch`: false once another instance holds it.
pub async fn renew(state: &Services, epoch: i64) -> ServiceResult<bool> {
    let (lease, renew) = state.settings.ha.periods().map_err(crate::services::ServiceError::Internal)?;
    let asked = Instant::now();
    let mut tx = db::write_tx_outside_plans(&state.db).await?;
    let kept = db::lease::renew(&mut tx, &state.lease.holder, epoch).await?;
    tx.commit().await?;
    if kept {
        state.lease.until.extend(asked + lease.saturating_sub(renew));
    }
    Ok(kept)
}

/// This instance no longer schedules; `release` also hands the lease on
/// at once (a graceful stop), rather than after it lapses.
pub async fn step_down(state: &Services, epoch: i64, release: bool) {
    state.lease.set_held(None);
    state.lease.until.clear();
    if release {
        let released = async {
            let mut tx = db::write_tx_outside_plans(&state.db).await?;
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
    let mut tx = db::write_tx_outside_plans(&state.db).await?;
    let epoch = db::lease::take(&mut tx, &state.lease.holder).await?;
    tx.commit().await?;
    state.lease.set_held(Some(epoch));
    tracing::info!(epoch, holder = %state.lease.holder, "this instance is the scheduler");
    Ok(epoch)
}

/// How long `/healthz` and `/readyz` wait for the database: a pool
/// retries connecting to a stopped database for its whole acquire
/// timeout, and a load balancer's check must not wait that long.
const ASK_DATABASE: Duration = Duration::from_secs(2);
/// How long one answer serves every probe: anonymous checks arriving in a
/// flood share one query a second, and never crowd out the connections
/// the lease's renewals and the requests need.
const PROBE_FOR: Duration = Duration::from_secs(1);

/// The lease row as the database had it at most [`PROBE_FOR`] ago (None:
/// the database did not answer within [`ASK_DATABASE`]).
async fn probe(state: &Services) -> Seen {
    let mut last = state.lease.probe.lock().await;
    if let Some((at, seen)) = last.as_ref() {
        if at.elapsed() < PROBE_FOR {
            return seen.clone();
        }
    }
    let current = async { db::lease::current(&mut state.db.acquire().await?).await };
    let seen = match tokio::time::timeout(ASK_DATABASE, current).await {
        Ok(Ok(row)) => Some(row),
        Ok(Err(e)) => {
            tracing::error!(error = %e, "the database cannot be reached");
            None
        }
        Err(_) => {
            tracing::error!("the database did not answer within {ASK_DATABASE:?}");
            None
        }
    };
    *last = Some((Instant::now(), seen.clone()));
    seen
}

/// Whether the database answered lately (`/healthz`).
pub async fn database_answers(state: &Services) -> bool {
    probe(state).await.is_some()
}

/// The role of this instance and the lease's epoch, as the database has
/// them; None while the database cannot be reached (`/readyz`).
pub async fn readiness(state: &Services) -> Option<Readiness> {
    let (epoch, holder) = probe(state).await?;
    Some(Readiness { scheduler: holder == state.lease.holder && state.lease.held() == Some(epoch), epoch })
}
