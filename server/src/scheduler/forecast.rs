//! The forecast step (policy §11): every [`FORECAST_EVERY`] cycles the
//! loop reads the live state and runs it forward through the pure
//! forecast (`crate::policy::forecast`) on a blocking thread, off the
//! cycle's path: a cycle never waits for it, and a new one starts only
//! when the last has finished. What users' jobs ran, read for it, is
//! what the cycles predict running jobs' ends from until the next.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use super::{LoopError, Scheduler};
use crate::clock::now_ms;
use crate::db;
pub use crate::policy::forecast::FORECAST_EVERY;
use crate::policy::forecast::{forecast, ForecastInput, ESTIMATE_MARGIN, FORECAST_DEPTH, FORECAST_EVENTS};
use crate::policy::predict::RuntimeHistory;

/// Clears the in-flight flag however the forecast ends.
struct Done(std::sync::Arc<std::sync::atomic::AtomicBool>);

impl Drop for Done {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

impl Scheduler {
    /// Starts a forecast unless one is running.
    pub(super) async fn refresh_forecast(&self) -> Result<(), LoopError> {
        if self.forecasting.swap(true, Ordering::AcqRel) {
            return Ok(());
        }
        let now = now_ms();
        let read = async {
            let mut read = self.db.begin().await?;
            let snapshot = db::scheduling::load_snapshot(&mut read, now, self.mode).await?;
            let running = db::scheduling::running_jobs(&mut read, now).await?;
            let history = db::scheduling::recent_runtimes(&mut read).await?;
            let array_of = db::gates::elements_holding(&mut read).await?;
            read.rollback().await?;
            Ok::<_, sqlx::Error>((snapshot, running, Arc::new(RuntimeHistory::from_recent(history)), array_of))
        };
        let (snapshot, running, history, array_of) = match read.await {
            Ok(inputs) => inputs,
            Err(e) => {
                self.forecasting.store(false, Ordering::Release);
                return Err(e.into());
            }
        };
        // the cycles plan with it until the next forecast reads it again
        *self.history.write().unwrap_or_else(std::sync::PoisonError::into_inner) = history.clone();
        let (cache, busy) = (self.forecast.clone(), self.forecasting.clone());
        tokio::task::spawn_blocking(move || {
            let _done = Done(busy);
            let began = Instant::now();
            let input = ForecastInput {
                snapshot: &snapshot,
                running: &running,
                depth: FORECAST_DEPTH,
                max_events: FORECAST_EVENTS,
                wanted: None,
                history: &history,
                margin: ESTIMATE_MARGIN,
                array_of: &array_of,
            };
            cache.set(forecast(&input));
            metrics::histogram!("scheduler_forecast_seconds").record(began.elapsed().as_secs_f64());
        });
        Ok(())
    }
}
