//! The loop's timing: recover first (nothing may be dispatched before the
//! executor has said what ran while the server was away), then a cycle
//! every `scheduler.cycle_ms` — sooner when woken by a submit, an end or
//! an admin change, but never so soon that cycles crowd out submits.

use std::time::Duration;

use super::{LoopError, Scheduler, MAX_WOKEN_CYCLE_GAP};

impl Scheduler {
    /// Runs cycles until `shutdown` resolves.
    pub async fn run(self, shutdown: impl std::future::Future<Output = ()> + Send) {
        tokio::pin!(shutdown);
        // until the executor has been asked what ran while we were away,
        // nothing may be dispatched (it could start an attempt twice)
        loop {
            match self.recover().await {
                Ok(n) if n > 0 => tracing::info!(attempts = n, "recovered attempts from the executor"),
                Ok(_) => {}
                Err(e @ (LoopError::Fenced { .. } | LoopError::Lapsed)) => {
                    tracing::error!(error = %e, "this instance stops scheduling");
                    return;
                }
                Err(e) => {
                    tracing::error!(error = %e, "cannot reconcile with the executor; retrying");
                    self.health.set(Some(e.to_string()));
                    tokio::select! {
                        _ = &mut shutdown => return,
                        _ = tokio::time::sleep(self.cycle) => continue,
                    }
                }
            }
            self.health.set(None);
            break;
        }
        if let Err(e) = self.recover_backfill().await {
            tracing::error!(error = %e, "cannot reconcile backfill instances");
        }
        // a first cycle at once: a scheduler taking over finds jobs that
        // waited for it, which would otherwise wait for a wake or the next
        // timed cycle (`scheduler.cycle_ms`, 5 s)
        self.wake.notify_one();
        let mut last_end = tokio::time::Instant::now();
        let mut last_took = Duration::ZERO;
        let mut cycles: u64 = 0;
        // after a cycle the database cut short, what it took from the
        // executor (ends, start results) may not have been written: the
        // executor is asked again, as after a restart, before going on
        let mut reconcile = false;
        loop {
            // with backfill on, idle time must be noticed without a wake-up
            let tick = if self.backfill.get().policy().enabled {
                self.cycle.min(super::backfill::BACKFILL_TICK)
            } else {
                self.cycle
            };
            tokio::select! {
                _ = &mut shutdown => break,
                _ = tokio::time::sleep(tick) => {}
                _ = self.wake.notified() => {
                    // a stream of submits would otherwise run cycle after
                    // cycle, each taking CPU and write turns the submits
                    // need: a woken cycle waits twice as long as the last
                    // one took (so the loop takes at most a third of the
                    // time; with once, the submits' p99 was ~20 % higher),
                    // and wakes in between share it
                    tokio::select! {
                        _ = &mut shutdown => break,
                        _ = tokio::time::sleep_until(last_end + (last_took * 2).min(MAX_WOKEN_CYCLE_GAP)) => {}
                    }
                }
            }
            if reconcile {
                match self.recover().await {
                    Ok(_) => reconcile = false,
                    Err(e @ (LoopError::Fenced { .. } | LoopError::Lapsed)) => {
                        tracing::error!(error = %e, "this instance stops scheduling");
                        return;
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "cannot reconcile with the executor yet; no cycle until then");
                        continue;
                    }
                }
            }
            let began = tokio::time::Instant::now();
            let outcome = self.cycle_once().await;
            if cycles.is_multiple_of(super::forecast::FORECAST_EVERY) {
                if let Err(e) = self.refresh_forecast().await {
                    tracing::warn!(error = %e, "no forecast this time");
                }
            }
            cycles += 1;
            last_end = tokio::time::Instant::now();
            last_took = last_end - began;
            metrics::histogram!("scheduler_cycle_seconds").record(last_took.as_secs_f64());
            match outcome {
                Ok(report) => {
                    if !report.started.is_empty() || report.ended > 0 {
                        tracing::info!(started = ?report.started, ended = report.ended, waiting = report.waiting, "scheduler cycle");
                    }
                    self.health.set(report.executor_problem);
                }
                Err(LoopError::Executor(e)) => {
                    tracing::error!(error = %e, "scheduler cycle failed");
                    self.health.set(Some(e.to_string()));
                }
                Err(e @ (LoopError::Fenced { .. } | LoopError::Lapsed)) => {
                    // fenced: nothing more of this loop's may be written;
                    // the instance keeps serving the console and the API
                    tracing::error!(error = %e, "this instance stops scheduling");
                    return;
                }
                Err(e) => {
                    tracing::error!(error = %e, "scheduler cycle failed");
                    reconcile = true;
                }
            }
        }
    }
}
