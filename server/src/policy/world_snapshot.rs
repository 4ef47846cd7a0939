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
        let mut snap = Snapshot {
            now_ms: self.now,
            phase: self.phase,
            tiers: Vec::new(),
            placements: Vec::new(),
            labs: Vec::new(),
            queue: Vec::new(),
            personal: Vec::new(),
            users: Vec::new(),
            arrays: Vec::new(),
            research_active: 0,
            backfill_active: 0,
            mode: self.mode,
            busy_until: Vec::new(),
        };
        self.snapshot_into(&mut snap);
        snap
    }

    /// [`World::snapshot`] written over an earlier one, keeping its
    /// buffers: the simulator takes one per event, and allocating every
    /// placement's names and lists anew each time was a tenth of a
    /// planned replay at 80×8.
    pub fn snapshot_into(&self, snap: &mut Snapshot) {
        // each placement's GPUs flat, marked busy as running jobs are met
        // (a vector per placement, grown GPU by GPU, and the busy list
        // grown job by job were a tenth of a planned replay at 80×8)
        let mut first = Vec::with_capacity(self.placements.len() + 1);
        first.push(0);
        for p in &self.placements {
            first.push(first[first.len() - 1] + p.gpus.len());
        }
        let gpus = first[first.len() - 1];
        let mut busy = vec![false; gpus];
        let numbered: Vec<bool> =
            self.placements.iter().map(|p| p.gpus.iter().enumerate().all(|(k, &g)| g as usize == k)).collect();
        // one walk of the jobs for all that is counted from them (six
        // walks were a tenth of a planned replay under overload)
        let queue = &mut snap.queue;
        queue.clear();
        let mut personal = Vec::new();
        let mut research_active = 0;
        // only `planned` reads them (the server's snapshot has them in
        // that mode only, too)
        let planned = matches!(self.mode, PolicyMode::Planned(_));
        let busy_until = &mut snap.busy_until;
        busy_until.clear();
        for j in self.jobs.values() {
            if let Some(r) = &j.running {
                research_active += 1;
                if let Some(i) = r.slot {
                    // a placement's GPUs are mostly 0..n: then a GPU's
                    // number is its position (each GPU against each of
                    // the job's was a twentieth of a planned replay at 80×8)
                    let (on, at) = (&self.placements[i].gpus, first[i]);
                    if numbered[i] {
                        for &g in r.gpus.iter().filter(|&&g| (g as usize) < on.len()) {
                            busy[at + g as usize] = true;
                        }
                    } else {
                        for (k, g) in on.iter().enumerate() {
                            busy[at + k] |= r.gpus.contains(g);
                        }
                    }
                }
                if planned {
                    Self::busy_until(busy_until, j, r);
                }
            }
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
        let states = &mut snap.placements;
        states.truncate(self.placements.len());
        for (k, (p, (at, backfill))) in self.placements.iter().zip(first.windows(2).zip(backfill_on)).enumerate() {
            if k == states.len() {
                states.push(PlacementState {
                    node: String::new(),
                    tier: String::new(),
                    capacity: 0,
                    usable: false,
                    free: Vec::new(),
                    backfill: Vec::new(),
                });
            }
            let state = &mut states[k];
            state.node.clone_from(&p.node);
            state.tier.clone_from(&p.tier);
            state.capacity = p.gpus.len() as u32;
            state.usable = p.usable;
            let used = &busy[at[0]..at[1]];
            state.free.clear();
            state.free.extend(p.gpus.iter().zip(used).filter(|(_, &u)| !u).map(|(&g, _)| g));
            state.backfill.clear();
            state.backfill.extend(backfill.iter().copied().filter(|g| state.free.contains(g)));
        }
        snap.now_ms = self.now;
        snap.phase = self.phase;
        snap.tiers.clone_from(&self.tiers);
        snap.labs.clear();
        snap.labs.extend(self.labs.values().copied());
        snap.users = self.user_slots(&personal);
        snap.personal = personal;
        snap.arrays = self.array_limits();
        snap.research_active = research_active;
        snap.backfill_active = self.backfill.values().map(|b| b.len() as u32).sum();
        snap.mode = self.mode;
    }

    /// The slots of users with jobs in their personal queue, as the
    /// server lists them: no one else's are read (counting every user's
    /// jobs on each event was a tenth of a planned replay at 80×8).
    fn user_slots(&self, personal: &[PersonalJob]) -> Vec<UserSlots> {
        if personal.is_empty() {
            return Vec::new();
        }
        let mut holding: FxHashMap<UserId, u32> = personal.iter().map(|p| (p.job.user, 0)).collect();
        for j in self.jobs.values() {
            if let Some(n) = holding.get_mut(&j.user) {
                *n += u32::from(j.state.holds_slot());
            }
        }
        holding
            .into_iter()
            .filter_map(|(user, holding)| {
                let max = *self.max_concurrent.get(&user)?;
                Some(UserSlots { user, max_concurrent: max, holding })
            })
            .collect()
    }

    /// The running job's GPUs with its limit's end.
    fn busy_until(busy: &mut Vec<BusyGpu>, j: &WorldJob, r: &Running) {
        let until = r.started_ms + j.time_limit_ms;
        busy.extend(r.gpus.iter().map(|&gpu| BusyGpu::new(r.slot, gpu, (j.lab, j.user), r.started_ms, until)));
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::rtx4090;
    use super::super::world::PlacementDef;
    use super::*;

    /// A world with one placement listing `gpus`, and one job running on
    /// `taken` there.
    fn running_on(gpus: &[u32], taken: &[u32]) -> World {
        let def = PlacementDef { node: "a".into(), tier: "rtx4090".into(), gpus: gpus.to_vec(), usable: true };
        let mut w = World::new(vec![rtx4090()], vec![def]);
        w.jobs.insert(1, WorldJob::new(1, 1, 1, taken.len() as u32, JobState::Running, 0));
        let slot = w.slot("a", "rtx4090");
        let running = Running {
            node: "a".into(),
            tier: "rtx4090".into(),
            gpus: taken.to_vec(),
            started_ms: 0,
            charged_until_ms: 0,
            slot,
        };
        w.jobs.get_mut(&1).expect("inserted").running = Some(running);
        w
    }

    /// A snapshot written over an earlier one, of a world with more or
    /// fewer placements, jobs and backfill, is the one taken afresh.
    #[test]
    fn a_snapshot_written_over_another_is_the_fresh_one() {
        let mut big = running_on(&[0, 1, 2, 3], &[1, 2]);
        big.submit(2, 2, 2, 1);
        big.submit(3, 1, 1, 4);
        big.placements.push(PlacementDef { node: "b".into(), tier: "rtx4090".into(), gpus: vec![0, 1], usable: false });
        big.backfill.insert(("a".into(), "rtx4090".into()), vec![0, 3]);
        big.now = 5;
        let mut small = running_on(&[0, 1], &[0]);
        small.submit(4, 3, 3, 1);
        for (from, to) in [(&big, &small), (&small, &big)] {
            let mut snap = from.snapshot();
            to.snapshot_into(&mut snap);
            assert_eq!(snap, to.snapshot());
            assert_eq!(snap.placements.len(), to.placements.len());
        }
    }

    /// The free GPUs a snapshot shows, whether a placement numbers its
    /// GPUs 0..n (looked up by number) or otherwise (searched): a GPU
    /// listed twice is busy at both places, and a job's GPU the placement
    /// does not list frees nothing and marks nothing.
    #[test]
    fn a_snapshot_shows_free_exactly_the_gpus_no_running_job_holds() {
        let cases: &[(&[u32], &[u32], &[u32])] = &[
            (&[0, 1, 2, 3], &[1, 3], &[0, 2]),
            (&[0, 1, 2, 3], &[3, 9], &[0, 1, 2]),
            (&[4, 5, 6], &[5], &[4, 6]),
            (&[2, 0, 1], &[0], &[2, 1]),
            (&[0, 1, 0], &[0], &[1]),
            (&[], &[0], &[]),
        ];
        for &(gpus, taken, free) in cases {
            let snap = running_on(gpus, taken).snapshot();
            assert_eq!(snap.placements[0].free, free, "placement {gpus:?}, job on {taken:?}");
            assert_eq!(snap.placements[0].capacity, gpus.len() as u32);
        }
    }
}
