//! How the in-memory [`World`] is seen by `decide`: the [`Snapshot`] the
//! server would read from its database, built from the world's jobs and
//! placements. The simulator builds one per event (tens of thousands a
//! month), so it is built in one walk of the jobs.

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;

use app::model::JobState;

use super::model::*;
use super::world::{Running, World, WorldJob};

impl World {
    fn queued(j: &WorldJob) -> QueuedJob {
        QueuedJob {
            id: j.id,
            lab: j.lab,
            user: j.user,
            num_gpus: j.num_gpus,
            queue_entered_at_ms: j.queue_entered_ms,
            min_vram_gb: j.min_vram_gb,
            reservation: j.reservation.clone(),
            accrued: j.accrued,
            time_limit_ms: j.time_limit_ms,
        }
    }

    /// The limits of arrays with elements in a personal queue, with how
    /// many of their elements hold slots.
    fn array_limits(&self) -> Vec<ArrayLimit> {
        if self.arrays.is_empty() {
            return Vec::new();
        }
        let mut limits: BTreeMap<ArrayId, ArrayLimit> = BTreeMap::new();
        for j in self.jobs.values() {
            let Some((array, &max_running)) = j.array.and_then(|a| Some((a, self.arrays.get(&a)?))) else { continue };
            let limit = limits.entry(array).or_insert(ArrayLimit { array, max_running, holding: 0 });
            limit.holding += u32::from(j.state.holds_slot());
        }
        limits.into_values().collect()
    }

    /// Whether any job waits in the global or a personal queue: with none,
    /// a cycle decides nothing (the property test in `proptests_snap`).
    pub fn anyone_waiting(&self) -> bool {
        self.jobs.values().any(|j| matches!(j.state, JobState::GlobalQueueWait | JobState::UserQueueWait))
    }

    pub fn snapshot(&self) -> Snapshot {
        let mut busy: Vec<Vec<u32>> = vec![Vec::new(); self.placements.len()];
        // one walk of the jobs for all that is counted from them (six
        // walks were a tenth of a planned replay under overload)
        let mut users: FxHashMap<UserId, u32> = FxHashMap::default();
        let mut queue = Vec::with_capacity(self.jobs.len());
        let mut personal = Vec::new();
        let mut research_active = 0;
        // only `planned` reads them (the server's snapshot has them in
        // that mode only, too)
        let planned = matches!(self.mode, PolicyMode::Planned(_));
        let mut busy_until = Vec::new();
        for j in self.jobs.values() {
            if let Some(r) = &j.running {
                research_active += 1;
                if let Some(i) = r.slot {
                    busy[i].extend(&r.gpus);
                }
                if planned {
                    Self::busy_until(&mut busy_until, j, r);
                }
            }
            // users without jobs decide nothing: listing every user ever
            // seen was hundreds of rows an event
            *users.entry(j.user).or_default() += u32::from(j.state.holds_slot());
            match j.state {
                JobState::GlobalQueueWait => queue.push(Self::queued(j)),
                JobState::UserQueueWait => {
                    personal.push(PersonalJob { array: j.array, ..PersonalJob::plain(Self::queued(j), j.submitted_ms) })
                }
                _ => {}
            }
        }
        let mut backfill_on: Vec<&[u32]> = vec![&[]; self.placements.len()];
        for ((node, tier), gpus) in &self.backfill {
            if let Some(i) = self.slot(node, tier) {
                backfill_on[i] = gpus;
            }
        }
        let placements = self
            .placements
            .iter()
            .zip(busy.iter().zip(backfill_on))
            .map(|(p, (used, backfill))| {
                let free: Vec<u32> = p.gpus.iter().copied().filter(|g| !used.contains(g)).collect();
                let backfill = backfill.iter().copied().filter(|g| free.contains(g)).collect();
                PlacementState {
                    node: p.node.clone(),
                    tier: p.tier.clone(),
                    capacity: p.gpus.len() as u32,
                    usable: p.usable,
                    free,
                    backfill,
                }
            })
            .collect();
        Snapshot {
            now_ms: self.now,
            phase: self.phase,
            tiers: self.tiers.clone(),
            placements,
            labs: self.labs.values().copied().collect(),
            queue,
            personal,
            arrays: self.array_limits(),
            users: users
                .iter()
                .filter_map(|(&user, &holding)| {
                    let max = *self.max_concurrent.get(&user)?;
                    Some(UserSlots { user, max_concurrent: max, holding })
                })
                .collect(),
            research_active,
            backfill_active: self.backfill.values().map(|b| b.len() as u32).sum(),
            mode: self.mode,
            busy_until,
        }
    }

    /// The running job's GPUs with its limit's end.
    fn busy_until(busy: &mut Vec<BusyGpu>, j: &WorldJob, r: &Running) {
        let until = r.started_ms + j.time_limit_ms;
        busy.extend(r.gpus.iter().map(|&gpu| BusyGpu::new(r.slot, gpu, (j.lab, j.user), r.started_ms, until)));
    }
}
