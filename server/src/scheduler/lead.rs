//! The scheduler role among several instances on one PostgreSQL database
//! (api.md "High availability"): an instance is a standby that tries to
//! take the lease every [`TRY_EVERY`]; once it holds it, it runs the loop
//! (which first adopts what runs, as after a restart) and renews the
//! lease every `ha.renew_seconds`. It stops dispatching when the lease
//! moved on, and when it could not renew for `lease − renew` (before the
//! lease ends, so another never takes it while this one still starts
//! jobs); either way it is a standby again. Every write of the loop also
//! checks the epoch (`Scheduler::write`): a paused process that wakes
//! after another took over is refused at its first write.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::Scheduler;
use crate::services::{ha, Services};

/// How often a standby tries to take a lapsed lease (api.md: 2 s).
pub const TRY_EVERY: Duration = Duration::from_secs(2);

impl Scheduler {
    /// Leads while it holds the lease, stands by otherwise, until `shutdown`.
    pub async fn lead(self, services: Services, shutdown: impl std::future::Future<Output = ()> + Send) {
        let (lease, renew_every) = match services.settings.ha.periods() {
            Ok(periods) => periods,
            Err(e) => return tracing::error!(error = %e, "this instance never schedules"),
        };
        tokio::pin!(shutdown);
        loop {
            let epoch = loop {
                match ha::try_take(&services).await {
                    Ok(Some(epoch)) => break epoch,
                    Ok(None) => {}
                    Err(e) => tracing::warn!(error = %e, "cannot ask for the scheduler's lease; trying again"),
                }
                tokio::select! {
                    _ = &mut shutdown => return,
                    _ = tokio::time::sleep(TRY_EVERY) => {}
                }
            };
            let mut term = self.clone();
            term.epoch = Some(epoch);
            term.act_until = Some(services.lease.act_until().clone());
            let (lost, lost_said) = tokio::sync::oneshot::channel::<()>();
            let renewer = tokio::spawn(keep(services.clone(), epoch, lease, renew_every, lost));
            let stopping = Arc::new(AtomicBool::new(false));
            let stop = {
                let stopping = stopping.clone();
                let shutdown = &mut shutdown;
                async move {
                    tokio::select! {
                        _ = shutdown => stopping.store(true, Ordering::SeqCst),
                        _ = lost_said => {}
                    }
                }
            };
            // renewed meanwhile: the wait may be longer than the lease
            term.settle(renew_every).await;
            term.run(stop).await;
            renewer.abort();
            let stopping = stopping.load(Ordering::SeqCst);
            ha::step_down(&services, epoch, stopping).await;
            if stopping {
                return;
            }
        }
    }
}

impl Scheduler {
    /// Before adopting what the last holder left: if it left dispatches
    /// unconfirmed, one of its starts may still be under way (it stops
    /// beginning starts `renew` before its lease lapses, but one begun
    /// just before may take the executor's longest start). Waiting that
    /// out keeps recovery from putting back a job that is about to run.
    async fn settle(&self, renew_every: Duration) {
        let wait = self.executor.longest_start().saturating_sub(renew_every);
        if wait.is_zero() {
            return;
        }
        let unconfirmed = async {
            let live = crate::db::jobs::live_attempts(&mut self.db.acquire().await?).await?;
            Ok::<_, sqlx::Error>(live.iter().any(|(_, _, dispatching)| *dispatching))
        };
        if unconfirmed.await.unwrap_or(true) {
            tracing::info!(?wait, "the last scheduler left starts unconfirmed: waiting for any still under way");
            tokio::time::sleep(wait).await;
        }
    }
}

/// Renews the lease taken at `epoch` until it is lost or cannot be
/// renewed in time; then says so on `lost`.
async fn keep(
    services: Services,
    epoch: i64,
    lease: Duration,
    renew_every: Duration,
    lost: tokio::sync::oneshot::Sender<()>,
) {
    let mut renewed = Instant::now();
    loop {
        tokio::time::sleep(renew_every).await;
        let asked = Instant::now();
        match ha::renew(&services, epoch).await {
            // (the renewal also moved the loop's deadline on)
            Ok(true) => renewed = asked,
            Ok(false) => {
                tracing::warn!(epoch, "another instance holds the scheduler's lease now");
                break;
            }
            Err(e) if renewed.elapsed() + renew_every >= lease => {
                tracing::error!(error = %e, epoch, "the lease could not be renewed in time: this instance stops dispatching");
                break;
            }
            Err(e) => tracing::warn!(error = %e, epoch, "the lease was not renewed; trying again"),
        }
    }
    let _ = lost.send(());
}
