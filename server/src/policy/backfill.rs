//! LLM backfill (policy §7), decided as a pure function next to
//! [`decide`](super::decide): which running instances to reclaim this
//! cycle and which idle GPUs get a new instance. Research always wins: an
//! instance on GPUs a dispatch takes is reclaimed before the job starts.
//! Reserved GPUs keep the backfill they have but get no new instance;
//! GPUs must have been idle `min_idle` before one is deployed, so short
//! gaps do not churn model loads.

use std::collections::{HashMap, HashSet};

use app::model::MaintenancePhase;

use super::model::{Millis, Plan, Snapshot};

/// `(node, tier, GPU index)`
pub type GpuKey = (String, String, u32);

#[derive(Debug, Clone, PartialEq)]
pub struct BackfillPolicy {
    pub enabled: bool,
    pub min_idle_ms: Millis,
    pub gpus_per_instance: u32,
}

/// A running backfill instance.
#[derive(Debug, Clone, PartialEq)]
pub struct Instance {
    pub id: i64,
    pub node: String,
    pub tier: String,
    pub gpus: Vec<u32>,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct BackfillPlan {
    /// Instances to stop, before this cycle's dispatches start.
    pub reclaim: Vec<i64>,
    /// `(node, tier, GPUs)` to start an instance on, after them.
    pub deploy: Vec<(String, String, Vec<u32>)>,
}

/// GPUs that are idle once `plan` is applied: free, not dispatched, not
/// reserved, not serving backfill.
fn idle_after(snap: &Snapshot, plan: &Plan) -> Vec<GpuKey> {
    let mut taken: HashSet<GpuKey> = HashSet::new();
    for d in &plan.dispatches {
        taken.extend(d.gpus.iter().map(|g| (d.node.clone(), d.tier.clone(), *g)));
    }
    for w in &plan.waiting {
        if let Some(r) = &w.reservation {
            taken.extend(r.gpus.iter().map(|g| (r.node.clone(), r.tier.clone(), *g)));
        }
    }
    let mut idle = Vec::new();
    for p in snap.placements.iter().filter(|p| p.usable) {
        for g in p.free.iter().filter(|g| !p.backfill.contains(g)) {
            let key = (p.node.clone(), p.tier.clone(), *g);
            if !taken.contains(&key) {
                idle.push(key);
            }
        }
    }
    idle
}

/// Keeps `idle_since` up to date: GPUs idle after this cycle keep (or get)
/// the time they became idle; the others are forgotten.
pub fn track_idle(idle_since: &mut HashMap<GpuKey, Millis>, snap: &Snapshot, plan: &Plan) {
    let idle: HashSet<GpuKey> = idle_after(snap, plan).into_iter().collect();
    idle_since.retain(|k, _| idle.contains(k));
    for key in idle {
        idle_since.entry(key).or_insert(snap.now_ms);
    }
}

pub fn plan_backfill(
    snap: &Snapshot,
    plan: &Plan,
    instances: &[Instance],
    idle_since: &HashMap<GpuKey, Millis>,
    policy: &BackfillPolicy,
) -> BackfillPlan {
    let mut out = BackfillPlan::default();
    let phase = plan.phase_change.unwrap_or(snap.phase);
    let keep_all = policy.enabled && matches!(phase, MaintenancePhase::Normal | MaintenancePhase::Draining);

    // 1. reclaim: backfill off, maintenance past draining, GPUs a dispatch
    //    takes, or a placement that can no longer be used
    for inst in instances {
        let usable = snap.placements.iter().any(|p| p.node == inst.node && p.tier == inst.tier && p.usable);
        let wanted_by_research = plan
            .dispatches
            .iter()
            .any(|d| d.node == inst.node && d.tier == inst.tier && d.gpus.iter().any(|g| inst.gpus.contains(g)));
        if !keep_all || !usable || wanted_by_research {
            out.reclaim.push(inst.id);
        }
    }

    // 2. deploy on GPUs idle long enough, in whole instances per placement
    if !(policy.enabled && phase == MaintenancePhase::Normal) || policy.gpus_per_instance == 0 {
        return out;
    }
    let busy: HashSet<GpuKey> =
        instances.iter().flat_map(|i| i.gpus.iter().map(|g| (i.node.clone(), i.tier.clone(), *g))).collect();
    let mut ready: HashMap<(String, String), Vec<u32>> = HashMap::new();
    for key in idle_after(snap, plan) {
        let long_enough = idle_since.get(&key).is_some_and(|since| snap.now_ms - since >= policy.min_idle_ms);
        if long_enough && !busy.contains(&key) {
            ready.entry((key.0, key.1)).or_default().push(key.2);
        }
    }
    let mut placements: Vec<_> = ready.into_iter().collect();
    placements.sort();
    for ((node, tier), mut gpus) in placements {
        gpus.sort_unstable();
        for chunk in gpus.chunks_exact(policy.gpus_per_instance as usize) {
            out.deploy.push((node.clone(), tier.clone(), chunk.to_vec()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::model::*;

    fn snapshot(phase: MaintenancePhase, free: Vec<u32>, backfill: Vec<u32>, now: Millis) -> Snapshot {
        Snapshot {
            now_ms: now,
            phase,
            tiers: vec![],
            placements: vec![PlacementState {
                node: "n".into(),
                tier: "t".into(),
                capacity: 4,
                usable: true,
                free,
                backfill,
            }],
            labs: vec![],
            queue: vec![],
            personal: vec![],
            users: vec![],
            arrays: vec![],
            research_active: 0,
            backfill_active: 0,
            mode: PolicyMode::Seed,
            busy_until: vec![],
        }
    }

    fn policy(min_idle_ms: Millis, per: u32) -> BackfillPolicy {
        BackfillPolicy { enabled: true, min_idle_ms, gpus_per_instance: per }
    }

    fn idle_for(gpus: &[u32], since: Millis) -> HashMap<GpuKey, Millis> {
        gpus.iter().map(|g| (("n".to_string(), "t".to_string(), *g), since)).collect()
    }

    #[test]
    fn deploys_only_after_the_minimum_idle_time_in_whole_instances() {
        let snap = snapshot(MaintenancePhase::Normal, vec![0, 1, 2], vec![], 100_000);
        let plan = Plan::default();
        let early = plan_backfill(&snap, &plan, &[], &idle_for(&[0, 1, 2], 50_000), &policy(60_000, 1));
        assert!(early.deploy.is_empty(), "idle 50 s < 60 s");
        let due = plan_backfill(&snap, &plan, &[], &idle_for(&[0, 1, 2], 40_000), &policy(60_000, 2));
        assert_eq!(due.deploy, vec![("n".to_string(), "t".to_string(), vec![0, 1])], "one whole 2-GPU instance");
    }

    #[test]
    fn research_reclaims_the_backfill_on_its_gpus_and_nothing_else() {
        let snap = snapshot(MaintenancePhase::Normal, vec![0, 1, 2, 3], vec![0, 1, 2, 3], 0);
        let instances: Vec<Instance> = (0..4)
            .map(|g| Instance { id: i64::from(g) + 10, node: "n".into(), tier: "t".into(), gpus: vec![g] })
            .collect();
        let plan = Plan {
            dispatches: vec![Dispatch {
                job: 1,
                rank: 1,
                node: "n".into(),
                tier: "t".into(),
                gpus: vec![1, 2],
                reclaim_backfill: vec![1, 2],
                accrued: Accrued::default(),
                swapped_from: None,
            }],
            ..Plan::default()
        };
        let out = plan_backfill(&snap, &plan, &instances, &HashMap::new(), &policy(0, 1));
        assert_eq!(out.reclaim, vec![11, 12]);
        assert!(out.deploy.is_empty());
    }

    #[test]
    fn reserved_gpus_keep_backfill_but_get_no_new_instance() {
        let snap = snapshot(MaintenancePhase::Normal, vec![0, 1], vec![0], 100_000);
        let instances = vec![Instance { id: 7, node: "n".into(), tier: "t".into(), gpus: vec![0] }];
        let plan = Plan {
            waiting: vec![Waiting {
                job: 1,
                rank: 1,
                reason: PendingReason::NoIdleGpu,
                reservation: Some(Box::new(Reservation {
                    node: "n".into(),
                    tier: "t".into(),
                    gpus: vec![0, 1],
                    drained: 0,
                    accrued_at_ms: 0,
                })),
                accrued: Accrued::default(),
            }],
            ..Plan::default()
        };
        let out = plan_backfill(&snap, &plan, &instances, &idle_for(&[1], 0), &policy(0, 1));
        assert!(out.reclaim.is_empty(), "kept until the job dispatches");
        assert!(out.deploy.is_empty(), "GPU 1 is reserved");
    }

    #[test]
    fn maintenance_and_switching_off_reclaim_everything() {
        let instances = vec![Instance { id: 3, node: "n".into(), tier: "t".into(), gpus: vec![0] }];
        for (phase, enabled, reclaimed) in [
            (MaintenancePhase::Normal, true, false),
            (MaintenancePhase::Draining, true, false),
            (MaintenancePhase::BackfillRecovery, true, true),
            (MaintenancePhase::Active, true, true),
            (MaintenancePhase::Normal, false, true),
        ] {
            let snap = snapshot(phase, vec![0, 1], vec![0], 100_000);
            let p = BackfillPolicy { enabled, ..policy(0, 1) };
            let out = plan_backfill(&snap, &Plan::default(), &instances, &idle_for(&[1], 0), &p);
            assert_eq!(out.reclaim == vec![3], reclaimed, "{phase:?} enabled={enabled}");
            assert_eq!(
                out.deploy.is_empty(),
                phase != MaintenancePhase::Normal || !enabled,
                "{phase:?} enabled={enabled}"
            );
        }
    }

    #[test]
    fn idle_tracking_remembers_when_a_gpu_became_idle() {
        let mut since = HashMap::new();
        let snap = snapshot(MaintenancePhase::Normal, vec![0, 1], vec![], 1_000);
        track_idle(&mut since, &snap, &Plan::default());
        let later = snapshot(MaintenancePhase::Normal, vec![1], vec![], 9_000);
        track_idle(&mut since, &later, &Plan::default());
        assert_eq!(since.len(), 1);
        assert_eq!(since[&("n".to_string(), "t".to_string(), 1)], 1_000);
    }
}
