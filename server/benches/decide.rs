//! One full decision cycle at scale: 10,000 (and 100,000) queued jobs from
//! 100 labs over 1,000 GPUs in 500 placements of 4 tiers, with an active
//! reservation; and the start-time forecast over the same state, with the
//! busy GPUs' jobs ending over the next day. Run: `cargo bench -p server
//! --bench decide`.

use app::model::MaintenancePhase;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use jpu_share::policy::*;

fn snapshot(jobs: usize) -> Snapshot {
    let tiers: Vec<TierInfo> = (0..4)
        .map(|i| TierInfo {
            name: format!("tier{i}"),
            tflops: 20.0 + 20.0 * i as f64,
            vram_gb: 12 + 12 * i as u32,
            sort_order: 10 * i as i64,
            max_gpus: 2,
            active: true,
        })
        .collect();
    // 500 placements × 2 GPUs; about half have one idle GPU, none has two,
    // so the rank-1 2-GPU job keeps its reservation while 1-GPU jobs start
    let placements: Vec<PlacementState> = (0..500)
        .map(|i| PlacementState {
            node: format!("node-{i:04}"),
            tier: format!("tier{}", i % 4),
            capacity: 2,
            usable: true,
            free: match i % 5 {
                0 => vec![0],
                1 | 2 => vec![],
                _ => vec![1],
            },
            backfill: vec![],
        })
        .collect();
    let labs: Vec<LabUsage> =
        (0..100).map(|l| LabUsage { lab: l, value: 1_000.0 * ((l * 7919) % 100) as f64, as_of_ms: 0 }).collect();
    let mut queue: Vec<QueuedJob> = (0..jobs as i64)
        .map(|id| QueuedJob {
            id,
            lab: (id * 31) % 100,
            user: id % 997,
            num_gpus: if id % 10 == 0 { 2 } else { 1 },
            queue_entered_at_ms: id * 10,
            min_vram_gb: 0,
            reservation: None,
            accrued: Accrued::default(),
            time_limit_ms: (1 + id % 24) * 3_600_000,
        })
        .collect();
    // the rank-1 job (lowest-usage lab) holds a reservation
    let first_lab = labs.iter().min_by(|a, b| a.value.total_cmp(&b.value)).unwrap().lab;
    let holder = queue.iter_mut().find(|j| j.lab == first_lab).unwrap();
    holder.num_gpus = 2;
    holder.reservation = Some(Box::new(Reservation {
        node: "node-0001".into(),
        tier: "tier1".into(),
        gpus: vec![],
        drained: 0,
        accrued_at_ms: 0,
    }));
    Snapshot {
        now_ms: 60_000,
        phase: MaintenancePhase::Normal,
        tiers,
        placements,
        labs,
        queue,
        personal: vec![],
        users: vec![],
        arrays: vec![],
        research_active: 500,
        backfill_active: 0,
        mode: PolicyMode::Seed,
        busy_until: vec![],
    }
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("decide");
    for jobs in [10_000usize, 100_000] {
        let snap = snapshot(jobs);
        let plan = decide(&snap);
        assert!(!plan.dispatches.is_empty() && plan.waiting.iter().any(|w| w.reservation.is_some()));
        group.bench_with_input(BenchmarkId::from_parameter(jobs), &snap, |b, s| b.iter(|| decide(s)));
    }
    // the planned policy at its default depth, busy GPUs ending over a day
    let mut planned = snapshot(10_000);
    let running = running_jobs(&planned);
    let on = |r: &forecast::RunningJob| planned.placements.iter().position(|p| p.node == r.node && p.tier == r.tier);
    let busy =
        running.iter().map(|r| BusyGpu::new(on(r), r.gpus[0], (r.lab, r.user), r.started_ms, r.ends_ms)).collect();
    planned.busy_until = busy;
    planned.mode = PolicyMode::Planned(jpu_share::config::SchedulerSettings::default().planned_params());
    let plan = decide(&planned);
    assert!(plan.waiting.iter().any(|w| matches!(w.reason, PendingReason::Planned { .. })));
    group.bench_with_input(BenchmarkId::new("planned", 10_000), &planned, |b, s| b.iter(|| decide(s)));
    group.finish();
}

/// The jobs holding the busy GPUs of `snap`, ending over the next 24 h.
fn running_jobs(snap: &Snapshot) -> Vec<forecast::RunningJob> {
    let mut running = Vec::new();
    for (i, p) in snap.placements.iter().enumerate() {
        for g in (0..p.capacity).filter(|g| !p.free.contains(g)) {
            let id = 1_000_000 + (i as i64) * 2 + i64::from(g);
            running.push(forecast::RunningJob {
                id,
                lab: id % 100,
                user: id,
                node: p.node.clone(),
                tier: p.tier.clone(),
                gpus: vec![g],
                started_ms: snap.now_ms,
                ends_ms: snap.now_ms + (id * 7_919 % 1_440) * 60_000,
            });
        }
    }
    running
}

fn bench_forecast(c: &mut Criterion) {
    let mut group = c.benchmark_group("forecast");
    group.sample_size(10);
    let snap = snapshot(10_000);
    let running = running_jobs(&snap);
    let depth = jpu_share::policy::forecast::FORECAST_DEPTH;
    let events = jpu_share::policy::forecast::FORECAST_EVENTS;
    let input = forecast::ForecastInput {
        snapshot: &snap,
        running: &running,
        depth,
        max_events: events,
        wanted: None,
        history: &Default::default(),
        margin: forecast::ESTIMATE_MARGIN,
        array_of: &Default::default(),
    };
    let starts = forecast::forecast(&input);
    assert!(starts.len() >= depth / 2, "the forecast reaches most of its depth: {}", starts.len());
    group.bench_function(BenchmarkId::new("10000-waiting-depth", depth), |b| b.iter(|| forecast::forecast(&input)));
    group.finish();
}

criterion_group!(benches, bench, bench_forecast);
criterion_main!(benches);
