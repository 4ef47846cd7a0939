//! The personal queues (policy §3) with api.md's dependencies and array
//! limits: which waiting jobs take a free slot this cycle, which stay and
//! why, and which can never run because a dependency failed them.
//!
//! A dependency always names a job that existed when its dependant was
//! submitted, so dependencies point to lower ids and never form a cycle;
//! walking jobs in id order lets a cancellation here fail the jobs that
//! depend on it in the same cycle, not one cycle per link of the chain.

use std::collections::{HashMap, HashSet};

/// A new user's concurrency limit (policy §3: "default 2, admin can change
/// it per user"); every way a user is created starts from it.
pub const DEFAULT_CONCURRENCY: i64 = 2;

use super::model::*;

/// Whether a dependency is met, pending, or can never be met.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Met {
    Yes,
    Pending,
    Never,
}

/// One dependency against the outcome of the job it names.
pub fn met(kind: AfterKind, outcome: Outcome) -> Met {
    match (kind, outcome) {
        (_, Outcome::Unfinished) => Met::Pending,
        (AfterKind::Any, _) | (AfterKind::Ok, Outcome::Completed) | (AfterKind::NotOk, Outcome::NotOk) => Met::Yes,
        (AfterKind::Ok, Outcome::NotOk) | (AfterKind::NotOk, Outcome::Completed) => Met::Never,
    }
}

/// All of a job's dependencies together: never if any is never, pending
/// if any is pending, else met.
pub fn all_met(after: impl IntoIterator<Item = Met>) -> Met {
    after.into_iter().fold(Met::Yes, |acc, m| match (acc, m) {
        (Met::Never, _) | (_, Met::Never) => Met::Never,
        (Met::Pending, _) | (_, Met::Pending) => Met::Pending,
        _ => Met::Yes,
    })
}

/// Promotes personal jobs into free slots, oldest submission first; a job
/// whose dependencies are pending or whose array is at its `%N` takes no
/// slot and does not hold back the jobs behind it.
pub(super) fn promote(snap: &Snapshot, plan: &mut Plan, queue: &mut Vec<QueuedJob>) {
    if snap.personal.is_empty() {
        return;
    }
    let never = never_satisfied(&snap.personal);
    let mut free: HashMap<UserId, u32> =
        snap.users.iter().map(|u| (u.user, u.max_concurrent.saturating_sub(u.holding))).collect();
    let mut arrays: HashMap<ArrayId, (u32, u32)> =
        snap.arrays.iter().map(|a| (a.array, (a.max_running, a.holding))).collect();
    let mut personal: Vec<&PersonalJob> = snap.personal.iter().collect();
    personal.sort_by_key(|p| (p.submitted_at_ms, p.job.id));
    for p in personal {
        if never.contains(&p.job.id) {
            plan.never_satisfied.push(p.job.id);
            continue;
        }
        if verdict(p, &never) == Met::Pending {
            plan.held.push((p.job.id, PendingReason::Dependency));
            continue;
        }
        let array = p.array.and_then(|id| arrays.get_mut(&id));
        if let Some((max_running, holding)) = &array {
            if holding >= max_running {
                plan.held.push((p.job.id, PendingReason::ArrayLimit { max_running: *max_running }));
                continue;
            }
        }
        let slots = free.entry(p.job.user).or_insert(0);
        if *slots == 0 {
            plan.held.push((p.job.id, PendingReason::UserConcurrencyLimit));
            continue;
        }
        *slots -= 1;
        if let Some((_, holding)) = array {
            *holding += 1;
        }
        plan.promotions.push(p.job.id);
        queue.push(QueuedJob { queue_entered_at_ms: snap.now_ms, ..p.job.clone() });
    }
}

/// The personal jobs that can never run: a dependency can never be met,
/// counting the jobs this cycle cancels for the same reason.
fn never_satisfied(personal: &[PersonalJob]) -> HashSet<JobId> {
    let mut by_id: Vec<&PersonalJob> = personal.iter().filter(|p| !p.after.is_empty()).collect();
    by_id.sort_by_key(|p| p.job.id);
    let mut never = HashSet::new();
    for p in by_id {
        if verdict(p, &never) == Met::Never {
            never.insert(p.job.id);
        }
    }
    never
}

/// A job's dependencies against their outcomes, the jobs cancelled this
/// cycle (`never`) counting as not ok.
fn verdict(p: &PersonalJob, never: &HashSet<JobId>) -> Met {
    all_met(p.after.iter().map(|a| {
        let outcome = if never.contains(&a.on) { Outcome::NotOk } else { a.outcome };
        met(a.kind, outcome)
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::tests::{job, snapshot};

    #[test]
    fn each_kind_of_dependency_against_each_outcome() {
        use AfterKind as K;
        use Outcome as O;
        let table = [
            (K::Ok, O::Unfinished, Met::Pending),
            (K::Ok, O::Completed, Met::Yes),
            (K::Ok, O::NotOk, Met::Never),
            (K::Any, O::Unfinished, Met::Pending),
            (K::Any, O::Completed, Met::Yes),
            (K::Any, O::NotOk, Met::Yes),
            (K::NotOk, O::Unfinished, Met::Pending),
            (K::NotOk, O::Completed, Met::Never),
            (K::NotOk, O::NotOk, Met::Yes),
        ];
        for (kind, outcome, want) in table {
            assert_eq!(met(kind, outcome), want, "{kind:?} on {outcome:?}");
        }
        assert_eq!(all_met([Met::Yes, Met::Pending, Met::Never]), Met::Never, "never wins");
        assert_eq!(all_met([Met::Yes, Met::Pending]), Met::Pending);
        assert_eq!(all_met([]), Met::Yes, "no dependencies: met");
    }

    fn personal(id: JobId, user: UserId, after: Vec<After>, array: Option<ArrayId>) -> PersonalJob {
        let job = QueuedJob { user, ..job(id, 1, 1, id * 10) };
        PersonalJob { job, submitted_at_ms: id * 10, after, array }
    }

    fn after(kind: AfterKind, on: JobId, outcome: Outcome) -> After {
        After { kind, on, outcome }
    }

    fn slots(user: UserId, max: u32, holding: u32) -> UserSlots {
        UserSlots { user, max_concurrent: max, holding }
    }

    #[test]
    fn a_job_waiting_on_a_dependency_takes_no_slot_and_holds_back_nothing() {
        let mut snap = snapshot(Vec::new(), &[], Vec::new());
        snap.personal = vec![
            personal(1, 7, vec![after(AfterKind::Ok, 100, Outcome::Unfinished)], None),
            personal(2, 7, Vec::new(), None),
            personal(3, 7, Vec::new(), None),
        ];
        snap.users = vec![slots(7, 1, 0)];
        let plan = crate::policy::decide(&snap);
        assert_eq!(plan.promotions, vec![2], "the oldest job with its dependency met takes the one slot");
        assert_eq!(plan.held, vec![(1, PendingReason::Dependency), (3, PendingReason::UserConcurrencyLimit)]);
    }

    #[test]
    fn a_failed_dependency_cancels_the_whole_chain_in_one_cycle() {
        let mut snap = snapshot(Vec::new(), &[], Vec::new());
        // 10 failed; 11 needs it ok; 12 needs 11 ok; 13 runs after 12 in any case
        snap.personal = vec![
            personal(13, 7, vec![after(AfterKind::Any, 12, Outcome::Unfinished)], None),
            personal(12, 7, vec![after(AfterKind::Ok, 11, Outcome::Unfinished)], None),
            personal(11, 7, vec![after(AfterKind::Ok, 10, Outcome::NotOk)], None),
            personal(14, 7, vec![after(AfterKind::NotOk, 10, Outcome::NotOk)], None),
        ];
        snap.users = vec![slots(7, 2, 0)];
        let plan = crate::policy::decide(&snap);
        let mut never = plan.never_satisfied.clone();
        never.sort_unstable();
        assert_eq!(never, vec![11, 12], "12 fails with 11; 13 (afterany) may run once 12 ends");
        assert_eq!(plan.promotions, vec![13, 14], "13's dependency ended (cancelled) this cycle; 14 wanted a failure");
    }

    #[test]
    fn an_array_holds_at_most_its_limit_of_slots() {
        let mut snap = snapshot(Vec::new(), &[], Vec::new());
        snap.personal = (1..=5).map(|id| personal(id, 7, Vec::new(), Some(9))).collect();
        snap.users = vec![slots(7, 4, 1)];
        snap.arrays = vec![ArrayLimit { array: 9, max_running: 2, holding: 1 }];
        let plan = crate::policy::decide(&snap);
        assert_eq!(plan.promotions, vec![1], "one element holds a slot, the limit is 2");
        let reasons: Vec<&str> = plan.held.iter().map(|(_, r)| r.code()).collect();
        assert_eq!(reasons, vec!["ARRAY_LIMIT"; 4]);
        assert_eq!(plan.held[0].1.to_string(), "ARRAY_LIMIT (2 of the array may hold slots at once)");
    }

    /// A random personal queue: jobs 1..=n of users 0..3, each depending
    /// on up to two earlier ids (jobs of the queue, or ended ones below 1)
    /// with random kinds and outcomes, some in arrays 0..2 with limits.
    fn queue() -> impl proptest::strategy::Strategy<Value = Snapshot> {
        use proptest::prelude::*;
        let kind = prop_oneof![Just(AfterKind::Ok), Just(AfterKind::Any), Just(AfterKind::NotOk)];
        let outcome = prop_oneof![Just(Outcome::Unfinished), Just(Outcome::Completed), Just(Outcome::NotOk)];
        let job = (0i64..3, prop::collection::vec((kind, 0i64..40, outcome), 0..=2), prop::option::of(0i64..2));
        (prop::collection::vec(job, 1..40), prop::collection::vec((0u32..4, 0u32..3), 3), (1u32..4, 0u32..3)).prop_map(
            |(jobs, users, (limit, holding))| {
                let mut snap = snapshot(Vec::new(), &[], Vec::new());
                snap.personal = jobs
                    .into_iter()
                    .enumerate()
                    .map(|(i, (user, deps, array))| {
                        let id = i as i64 + 1;
                        // a dependency names an earlier job: one in this queue
                        // (unfinished) or an ended one (ids below 1)
                        let after = deps
                            .into_iter()
                            .map(|(kind, back, outcome)| {
                                let on = id - 1 - back;
                                After { kind, on, outcome: if on >= 1 { Outcome::Unfinished } else { outcome } }
                            })
                            .collect();
                        personal(id, user, after, array)
                    })
                    .collect();
                snap.users = users.iter().enumerate().map(|(u, &(max, held))| slots(u as i64, max, held)).collect();
                snap.arrays = vec![ArrayLimit { array: 0, max_running: limit, holding }];
                snap
            },
        )
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
        #[test]
        fn the_personal_queue_keeps_its_rules(snap in queue()) {
            let plan = crate::policy::decide(&snap);
            let promoted: HashSet<JobId> = plan.promotions.iter().copied().collect();
            let never: HashSet<JobId> = plan.never_satisfied.iter().copied().collect();
            let held: HashSet<JobId> = plan.held.iter().map(|(id, _)| *id).collect();
            // every job gets exactly one verdict
            for p in &snap.personal {
                let verdicts = [&promoted, &never, &held].iter().filter(|s| s.contains(&p.job.id)).count();
                proptest::prop_assert_eq!(verdicts, 1, "job {}", p.job.id);
            }
            proptest::prop_assert_eq!(promoted.len() + never.len() + held.len(), snap.personal.len());
            let by_id: HashMap<JobId, &PersonalJob> = snap.personal.iter().map(|p| (p.job.id, p)).collect();
            for id in &promoted {
                // a promoted job's dependencies have all ended and are met
                for a in &by_id[id].after {
                    let outcome = if never.contains(&a.on) { Outcome::NotOk } else { a.outcome };
                    proptest::prop_assert_eq!(met(a.kind, outcome), Met::Yes, "job {} after {:?}", id, a);
                }
            }
            for id in &never {
                // a cancelled job has a dependency that can never be met
                let hopeless = by_id[id].after.iter().any(|a| {
                    let outcome = if never.contains(&a.on) { Outcome::NotOk } else { a.outcome };
                    met(a.kind, outcome) == Met::Never
                });
                proptest::prop_assert!(hopeless, "job {} cancelled without cause", id);
            }
            // no user past their slots, no array past its limit
            for u in &snap.users {
                let taken = promoted.iter().filter(|id| by_id[id].job.user == u.user).count() as u32;
                proptest::prop_assert!(u.holding + taken <= u.max_concurrent.max(u.holding), "user {}", u.user);
            }
            let limit = snap.arrays[0];
            let in_array = promoted.iter().filter(|id| by_id[id].array == Some(0)).count() as u32;
            proptest::prop_assert!(limit.holding + in_array <= limit.max_running.max(limit.holding));
            // a slot is never left free while an eligible job of its user waits
            for (id, reason) in &plan.held {
                if *reason == PendingReason::UserConcurrencyLimit {
                    let user = by_id[id].job.user;
                    let slots = snap.users.iter().find(|u| u.user == user).map_or(0, |u| u.max_concurrent.saturating_sub(u.holding));
                    let taken = promoted.iter().filter(|p| by_id[p].job.user == user).count() as u32;
                    proptest::prop_assert_eq!(taken, slots, "job {} waits for a slot its user has free", id);
                }
            }
        }
    }
}
