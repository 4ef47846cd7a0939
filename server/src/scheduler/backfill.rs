//! The loop's backfill steps (policy §7), around the pure
//! [`plan_backfill`](crate::policy::backfill::plan_backfill): instances that ended
//! by themselves, reclaiming before research starts, deploying after it,
//! and finding running instances again after a restart.

use std::time::Duration;

use super::{LoopError, Scheduler};
use crate::clock::now_ms;
use crate::db;
use crate::executor::BackfillRequest;
use crate::policy::backfill::{self, BackfillPlan};
use crate::policy::model::{Plan, Snapshot};

impl Scheduler {
    /// Records instances that ended on their own.
    pub(super) async fn backfill_ended(&self) -> Result<(), LoopError> {
        let ended = self.executor.take_backfill_ended().await?;
        if ended.is_empty() {
            return Ok(());
        }
        let mut tx = self.write().await?;
        for id in ended {
            tracing::warn!(instance = id, "backfill instance exited by itself");
            db::backfill::end(&mut tx, id, now_ms()).await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// The backfill decision for this cycle (inside the plan's transaction).
    pub(super) async fn plan_backfill(
        &self,
        conn: &mut impl crate::db::AsConn,
        snapshot: &Snapshot,
        plan: &Plan,
    ) -> Result<(BackfillPlan, Vec<(i64, String)>), LoopError> {
        let live = db::backfill::live(conn).await?;
        let mut idle_since = self.idle_since.lock().unwrap_or_else(|p| p.into_inner());
        backfill::track_idle(&mut idle_since, snapshot, plan);
        let instances: Vec<_> = live.iter().map(|(i, _)| i.clone()).collect();
        let decided = backfill::plan_backfill(snapshot, plan, &instances, &idle_since, &self.backfill.get().policy());
        let refs = live.into_iter().map(|(i, r)| (i.id, r.unwrap_or_default())).collect();
        Ok((decided, refs))
    }

    /// Stops the instances research needs, all at once, and returns when
    /// they are gone (at most the grace, then SIGKILL).
    pub(super) async fn reclaim(&self, ids: &[i64], refs: &[(i64, String)]) -> Result<(), LoopError> {
        if ids.is_empty() {
            return Ok(());
        }
        self.may_act()?;
        let grace = self.grace;
        let stops = ids.iter().map(|id| {
            let executor_ref = refs.iter().find(|(i, _)| i == id).map(|(_, r)| r.clone()).unwrap_or_default();
            let executor = self.executor.clone();
            let id = *id;
            async move { (id, executor.reclaim_backfill(id, &executor_ref, grace).await) }
        });
        let results = futures_util::future::join_all(stops).await;
        let mut tx = self.write().await?;
        for (id, result) in results {
            match result {
                Ok(()) => db::backfill::end(&mut tx, id, now_ms()).await?,
                Err(e) => tracing::error!(instance = id, error = %e, "cannot reclaim a backfill instance"),
            }
        }
        tx.commit().await?;
        Ok(())
    }

    /// Starts new instances; each is recorded before the executor call.
    pub(super) async fn deploy(&self, deploy: Vec<(String, String, Vec<u32>)>) -> Result<(), LoopError> {
        for (node, tier, gpus) in deploy {
            let mut tx = self.write().await?;
            let id = db::backfill::insert(&mut tx, &node, &tier, &gpus, now_ms()).await?;
            tx.commit().await?;
            let request = BackfillRequest { id, node, tier, gpus, command: self.backfill.get().command };
            // an instance recorded but never started is ended at recovery
            self.may_act()?;
            let result = self.executor.deploy_backfill(request).await;
            let mut tx = self.write().await?;
            match result {
                Ok(started) => {
                    db::backfill::set_started(&mut tx, id, &started.executor_ref, started.endpoint.as_deref()).await?
                }
                Err(e) => {
                    tracing::warn!(error = %e, "backfill instance not started");
                    db::backfill::end(&mut tx, id, now_ms()).await?;
                }
            }
            tx.commit().await?;
        }
        Ok(())
    }

    /// After a restart: instances still running are watched again, the
    /// others are ended.
    pub(super) async fn recover_backfill(&self) -> Result<(), LoopError> {
        let live = db::backfill::live(&mut self.db.acquire().await?).await?;
        for (instance, executor_ref) in live {
            let alive = match executor_ref.as_deref() {
                Some(r) => self.executor.adopt_backfill(instance.id, r).await?,
                None => false,
            };
            if !alive {
                let mut tx = self.write().await?;
                db::backfill::end(&mut tx, instance.id, now_ms()).await?;
                tx.commit().await?;
            }
        }
        Ok(())
    }
}

/// Idle GPUs are polled no slower than this while backfill is on, so
/// `min_idle_seconds` is honoured even when nothing wakes the loop.
pub const BACKFILL_TICK: Duration = Duration::from_secs(1);
