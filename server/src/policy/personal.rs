//! The personal queues (policy §3) with api.md's dependencies and array
//! limits: which waiting jobs take a free slot this cycle, which stay and
//! why, and which can never run because a dependency failed them.
//!
//! A dependency always names a job that existed when its dependant was
//! submitted, so dependencies point to lower ids and never form a cycle;
//! walking jobs in id order lets a cancellation here fail the jobs that
//! depend on it in the same cycle, not one cycle per link of the chain.

use std::collections::{HashMap, HashSet};

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
}
