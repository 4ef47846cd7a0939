//! Property tests: random clusters and workloads run for many cycles
//! through `decide`, checking the policy's invariants after every cycle.

use std::collections::{HashMap, HashSet};

use app::model::{JobState, MaintenancePhase};
use proptest::prelude::*;

use super::model::*;
use super::tests_planned::params;
use super::world::{PlacementDef, World};
use super::*;

#[derive(Debug, Clone)]
enum Event {
    Submit { lab: LabId, user: UserId, gpus: u32, run_ms: Millis },
    Cancel(usize),
    GpuOom(usize),
    ToggleNode(usize),
    Maintenance(bool),
}

#[derive(Debug, Clone)]
struct Scenario {
    tiers: Vec<TierInfo>,
    placements: Vec<PlacementDef>,
    steps: Vec<(Millis, Vec<Event>)>,
}

fn scenario(max_step_ms: Millis) -> impl Strategy<Value = Scenario> {
    (2usize..=4).prop_flat_map(move |n_tiers| {
        let tiers = (0..n_tiers)
            .map(|i| TierInfo {
                name: format!("t{i}"),
                tflops: 10.0 + 20.0 * i as f64,
                vram_gb: 8 + 8 * i as u32,
                sort_order: i as i64 * 10,
                max_gpus: [2, 4, 8, 8][i],
                active: true,
            })
            .collect::<Vec<_>>();
        let placements = prop::collection::vec((0..n_tiers, 1u32..=8, 0usize..12), 1..=50).prop_map(|ps| {
            let mut seen = HashSet::new();
            ps.into_iter()
                .filter(|(t, _, node)| seen.insert((*t, *node)))
                .map(|(t, cap, node)| PlacementDef {
                    node: format!("node-{node:02}"),
                    tier: format!("t{t}"),
                    gpus: (0..cap).collect(),
                    usable: true,
                })
                .collect::<Vec<_>>()
        });
        let event = prop_oneof![
            6 => (0i64..5, 0i64..10, prop_oneof![4 => Just(1u32), 2 => Just(2), 1 => Just(4), 1 => Just(8)], 1i64..600_000)
                .prop_map(|(lab, user, gpus, run_ms)| Event::Submit { lab, user: lab * 100 + user, gpus, run_ms }),
            1 => any::<prop::sample::Index>().prop_map(|i| Event::Cancel(i.index(1000))),
            1 => any::<prop::sample::Index>().prop_map(|i| Event::GpuOom(i.index(1000))),
            1 => any::<prop::sample::Index>().prop_map(|i| Event::ToggleNode(i.index(1000))),
            1 => prop::bool::weighted(0.2).prop_map(Event::Maintenance),
        ];
        let steps = prop::collection::vec((1i64..max_step_ms, prop::collection::vec(event, 0..4)), 50..250);
        (Just(tiers), placements, steps).prop_map(|(tiers, placements, steps)| Scenario { tiers, placements, steps })
    })
}

/// GPU-seconds × TFLOPS held by every job right now, per second.
fn holding_rate(w: &World) -> f64 {
    w.jobs
        .values()
        .map(|j| {
            let run = j.running.as_ref().map_or(0.0, |r| r.gpus.len() as f64 * w.tier(&r.tier).tflops);
            let res = j.reservation.as_ref().map_or(0.0, |r| f64::from(r.charged_gpus()) * w.tier(&r.tier).tflops);
            run + res
        })
        .sum()
}

fn check_plan(snap: &Snapshot, plan: &Plan, w: &World) -> Result<(), TestCaseError> {
    // nothing is dispatched outside NORMAL
    let phase = plan.phase_change.unwrap_or(snap.phase);
    if phase != MaintenancePhase::Normal {
        prop_assert!(plan.dispatches.is_empty(), "dispatch in {phase:?}");
    }
    // at most one reservation, held by the rank-1 job, for ≥ 2 GPUs
    let holders: Vec<&Waiting> = plan.waiting.iter().filter(|x| x.reservation.is_some()).collect();
    prop_assert!(holders.len() <= 1, "{} reservations", holders.len());
    if let Some(h) = holders.first() {
        prop_assert_eq!(h.rank, 1);
        let job = &w.jobs[&h.job];
        prop_assert!(job.num_gpus >= 2);
        let res = h.reservation.as_ref().unwrap();
        prop_assert!(res.gpus.len() < job.num_gpus as usize, "a complete reservation must have dispatched");
        // no other job takes a GPU held by the reservation
        for d in &plan.dispatches {
            if d.node == res.node && d.tier == res.tier {
                prop_assert!(d.gpus.iter().all(|g| !res.gpus.contains(g)), "job {} took reserved GPUs", d.job);
            }
        }
    }
    // the rank-1 job never waits while a placement is available to it
    if phase == MaintenancePhase::Normal {
        if let Some(first) = plan.waiting.iter().find(|x| x.rank == 1) {
            let job = &w.jobs[&first.job];
            for p in &snap.placements {
                let tier = w.tier(&p.tier);
                let fits = p.usable
                    && tier.active
                    && job.num_gpus <= p.capacity
                    && job.num_gpus <= tier.max_gpus
                    && tier.vram_gb >= job.min_vram_gb;
                prop_assert!(
                    !(fits && p.free.len() as u32 >= job.num_gpus),
                    "rank 1 waits while {}/{} is available",
                    p.node,
                    p.tier
                );
            }
        }
    }
    Ok(())
}

/// No GPU is ever held by two jobs (running or reserved).
fn check_exclusive(w: &World) -> Result<(), TestCaseError> {
    let mut held: HashSet<(&str, &str, u32)> = HashSet::new();
    for j in w.jobs.values() {
        let spans = j
            .running
            .iter()
            .map(|r| (&r.node, &r.tier, &r.gpus))
            .chain(j.reservation.iter().map(|r| (&r.node, &r.tier, &r.gpus)));
        for (node, tier, gpus) in spans {
            for g in gpus {
                prop_assert!(held.insert((node.as_str(), tier.as_str(), *g)), "GPU {node}/{tier}/{g} held twice");
            }
        }
    }
    Ok(())
}

/// The planned policy's guarantees (§11): held GPUs go to nobody behind
/// their holder, and a job behind a planned one starts on its placement
/// only if its limit ends before that start or enough GPUs are left there
/// for the planned job at its start.
fn check_planned(snap: &Snapshot, plan: &Plan, w: &World) -> Result<(), TestCaseError> {
    let phase = plan.phase_change.unwrap_or(snap.phase);
    if phase != MaintenancePhase::Normal {
        prop_assert!(plan.dispatches.is_empty(), "dispatch in {phase:?}");
    }
    for p in &plan.waiting {
        let PendingReason::Planned { node, tier, start_ms, need, .. } = &p.reason else { continue };
        prop_assert!(*start_ms > snap.now_ms, "a plan starting now must have dispatched");
        let held = p.reservation.as_ref().map(|r| r.gpus.clone()).unwrap_or_default();
        let later = plan.dispatches.iter().filter(|d| d.rank > p.rank && &d.node == node && &d.tier == tier);
        let capacity = snap.placements.iter().find(|x| &x.node == node && &x.tier == tier).map_or(0, |x| x.capacity);
        let mut still_running_at_start = 0u32;
        for d in later {
            prop_assert!(d.gpus.iter().all(|g| !held.contains(g)), "job {} took GPUs held for job {}", d.job, p.job);
            if snap.now_ms + w.jobs[&d.job].time_limit_ms > *start_ms {
                still_running_at_start += d.gpus.len() as u32;
            }
        }
        prop_assert!(
            still_running_at_start == 0 || capacity >= need + still_running_at_start,
            "later jobs still run on {node}/{tier} at job {}'s planned start",
            p.job
        );
    }
    // what jobs are charged for while they wait (held and drained GPUs)
    // stands idle after this cycle's starts (`free` counts held GPUs as
    // idle): no GPU is charged twice
    for x in &snap.placements {
        let on = |node: &str, tier: &str| node == x.node && tier == x.tier;
        let started: usize = plan.dispatches.iter().filter(|d| on(&d.node, &d.tier)).map(|d| d.gpus.len()).sum();
        let charged: u32 = plan
            .waiting
            .iter()
            .filter_map(|w| w.reservation.as_ref())
            .filter(|r| on(&r.node, &r.tier))
            .map(|r| r.charged_gpus())
            .sum();
        prop_assert!(
            charged as usize + started <= x.free.len(),
            "{}/{}: {charged} GPUs charged to waiting jobs, {started} started, {} idle",
            x.node,
            x.tier,
            x.free.len()
        );
    }
    Ok(())
}

fn run(s: &Scenario, allow_backwards: bool, backwards: &[bool]) -> Result<(World, f64), TestCaseError> {
    run_mode(s, PolicyMode::Seed, allow_backwards, backwards)
}

fn run_mode(
    s: &Scenario,
    mode: PolicyMode,
    allow_backwards: bool,
    backwards: &[bool],
) -> Result<(World, f64), TestCaseError> {
    let mut w = World::new(s.tiers.clone(), s.placements.clone());
    w.mode = mode;
    let mut run_ms: HashMap<JobId, Millis> = HashMap::new();
    let mut attempts: HashMap<JobId, u32> = HashMap::new();
    let mut next_id: JobId = 1;
    let mut integral = 0.0;
    for (step, (dt, events)) in s.steps.iter().enumerate() {
        // time passes with the state constant
        let back = allow_backwards && backwards.get(step).copied().unwrap_or(false);
        if !back {
            integral += holding_rate(&w) * (*dt as f64 / 1000.0);
        }
        w.now += if back { -dt } else { *dt };
        let finished: Vec<JobId> = w
            .jobs
            .values()
            .filter(|j| j.running.as_ref().is_some_and(|r| w.now - r.started_ms >= run_ms[&j.id]))
            .map(|j| j.id)
            .collect();
        for id in finished {
            w.end(id, JobState::Completed);
        }
        for e in events {
            match e {
                Event::Submit { lab, user, gpus, run_ms: ms } => {
                    w.submit(next_id, *lab, *user, *gpus);
                    // limits are enforced: a job never runs past its own
                    w.jobs.get_mut(&next_id).expect("submitted").time_limit_ms = *ms;
                    run_ms.insert(next_id, *ms);
                    next_id += 1;
                }
                Event::Cancel(i) => {
                    let live: Vec<JobId> = w.jobs.values().filter(|j| !j.state.is_terminal()).map(|j| j.id).collect();
                    if !live.is_empty() {
                        w.end(live[i % live.len()], JobState::Cancelled);
                    }
                }
                Event::GpuOom(i) => {
                    let running: Vec<JobId> = w.jobs.values().filter(|j| j.running.is_some()).map(|j| j.id).collect();
                    if !running.is_empty() {
                        let id = running[i % running.len()];
                        let a = attempts.entry(id).or_insert(1);
                        if w.gpu_oom(id, *a) {
                            *a += 1;
                        }
                    }
                }
                Event::ToggleNode(i) => {
                    let n = w.placements.len();
                    let p = &mut w.placements[i % n];
                    p.usable = !p.usable;
                }
                Event::Maintenance(on) => {
                    w.phase = if *on { MaintenancePhase::Draining } else { MaintenancePhase::Normal };
                }
            }
        }
        let mut snap = w.snapshot();
        if mode.predicts_ends() {
            // predictions mostly wrong, many too early: the plan must still
            // start jobs only on GPUs that are free
            for b in &mut snap.busy_until {
                let share = (b.started_ms.rem_euclid(7) + i64::from(b.gpu)) % 8;
                b.predicted_ms = (b.started_ms + (b.until_ms - b.started_ms) * share / 6).max(w.now);
            }
        }
        let plan = decide(&snap);
        match mode {
            PolicyMode::Seed => check_plan(&snap, &plan, &w)?,
            PolicyMode::Planned(_) => check_planned(&snap, &plan, &w)?,
        }
        w.apply(&plan);
        check_exclusive(&w)?;
        for c in &plan.charges {
            prop_assert!(c.amount >= 0.0 && c.gpu_seconds >= 0.0, "negative charge {c:?}");
        }
    }
    // end everything so every held GPU-second is charged
    let live: Vec<JobId> = w.jobs.values().filter(|j| !j.state.is_terminal()).map(|j| j.id).collect();
    for id in live {
        w.end(id, JobState::Cancelled);
    }
    Ok((w, integral))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn invariants_hold_and_every_gpu_second_is_charged_once(s in scenario(120_000)) {
        let (w, integral) = run(&s, false, &[])?;
        let charged: f64 = w.ledger.iter().map(|c| c.amount).sum();
        prop_assert!((charged - integral).abs() <= 1e-6 * integral.max(1.0),
            "charged {charged} vs held {integral}");
    }

    #[test]
    fn the_planned_policy_keeps_its_guarantees_and_charges_every_held_second(s in scenario(120_000)) {
        let mode = PolicyMode::Planned(PlannedParams { lift_percent: 25, ..params(6, 30 * 60_000) });
        let (w, integral) = run_mode(&s, mode, false, &[])?;
        let charged: f64 = w.ledger.iter().map(|c| c.amount).sum();
        prop_assert!((charged - integral).abs() <= 1e-6 * integral.max(1.0),
            "charged {charged} vs held {integral}");
    }

    #[test]
    fn drains_and_predicted_ends_keep_the_guarantees_and_charge_every_held_or_drained_second(s in scenario(120_000)) {
        let mode = PolicyMode::Planned(PlannedParams {
            lift_percent: 25,
            lift_ahead_of_light: 1,
            drains: Some(DrainBudget::Jobs(2)),
            drain_after_percent: 50,
            charge_drains: true,
            predicted_ends: true,
            ..params(6, 30 * 60_000)
        });
        let (w, integral) = run_mode(&s, mode, false, &[])?;
        let charged: f64 = w.ledger.iter().map(|c| c.amount).sum();
        prop_assert!((charged - integral).abs() <= 1e-6 * integral.max(1.0),
            "charged {charged} vs held or drained {integral}");
    }

    #[test]
    fn a_clock_going_backwards_never_charges_negative_or_grows_usage(
        s in scenario(60_000),
        backwards in prop::collection::vec(prop::bool::weighted(0.15), 250),
    ) {
        let (w, _) = run(&s, true, &backwards)?;
        for c in &w.ledger {
            prop_assert!(c.amount >= 0.0 && c.gpu_seconds >= 0.0);
        }
        for u in w.labs.values() {
            prop_assert!(u.value >= 0.0);
            let sum: f64 = w.ledger.iter().filter(|c| c.lab == u.lab).map(|c| c.amount).sum();
            prop_assert!(u.value <= sum + 1e-6 * sum.max(1.0), "decay never adds usage");
        }
    }
}
