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
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::Scheduler;
use crate::services::{ha, Services};

/// Until when the loop under a lease may act on the executor: the start
/// of its last successful renewal (or of the take) plus `lease − renew`,
/// on the monotonic clock, which goes on while the process is stopped.
#[derive(Clone)]
pub struct ActUntil(Arc<Mutex<Instant>>);

impl ActUntil {
    pub fn still(&self) -> bool {
        Instant::now() < *self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn extend(&self, to: Instant) {
        let mut until = self.0.lock().unwrap_or_else(|p| p.into_inner());
        *until = (*until).max(to);
    }
}

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
        let margin = lease.saturating_sub(renew_every);
        loop {
            let (epoch, asked) = loop {
                let asked = Instant::now();
                match ha::try_take(&services).await {
                    Ok(Some(epoch)) => break (epoch, asked),
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
            let until = ActUntil(Arc::new(Mutex::new(asked + margin)));
            term.act_until = Some(until.clone());
            let (lost, lost_said) = tokio::sync::oneshot::channel::<()>();
            let renewer = tokio::spawn(keep(services.clone(), epoch, lease, renew_every, until, lost));
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

/// Renews the lease taken at `epoch` until it is lost or cannot be
/// renewed in time; then says so on `lost`.
async fn keep(
    services: Services,
    epoch: i64,
    lease: Duration,
    renew_every: Duration,
    until: ActUntil,
    lost: tokio::sync::oneshot::Sender<()>,
) {
    let mut renewed = Instant::now();
    loop {
        tokio::time::sleep(renew_every).await;
        let asked = Instant::now();
        match ha::renew(&services, epoch).await {
            Ok(true) => {
                // the row says it was renewed no earlier than `asked`
                renewed = asked;
                until.extend(asked + lease.saturating_sub(renew_every));
            }
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
