//! The policies operators would otherwise use, for comparison only (the
//! product's policy is `scheduler::decide`, never copied here):
//! - `fifo`: arrival order, head-of-line blocking (seed study 002's baseline);
//! - `easy`: FIFO with EASY backfill as Slurm does it, each job's limit being
//!   its real duration × an over-estimate factor;
//! - `fairshare-greedy`: fair-share order (decayed usage, charged at job end)
//!   and any job that fits starts — no reservation.
//!
//! A job runs on one placement, chosen best-fit (fewest free that suffice).

use std::collections::HashMap;

use rustc_hash::FxHashMap;

use crate::policy::usage;
use crate::policy::world::PlacementDef;
use crate::policy::{LabUsage, TierInfo};

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum BaselineKind {
    Fifo,
    Easy { overestimate: f64 },
    FairshareGreedy,
}

#[derive(Debug, Clone)]
struct Waiting {
    id: i64,
    lab: i64,
    gpus: u32,
    submit_ms: i64,
    duration_ms: i64,
}

#[derive(Debug, Clone)]
struct Running {
    lab: i64,
    gpus: u32,
    placement: usize,
    started_ms: i64,
    /// What the scheduler believes: start + duration × factor.
    limit_end_ms: i64,
}

pub struct Baseline {
    kind: BaselineKind,
    max_gpus: Vec<u32>,
    tflops: Vec<f64>,
    free: Vec<u32>,
    queue: Vec<Waiting>,
    running: HashMap<i64, Running>,
    labs: HashMap<i64, LabUsage>,
}

impl Baseline {
    pub fn new(tiers: &[TierInfo], placements: &[PlacementDef], kind: BaselineKind) -> Self {
        let tier = |p: &PlacementDef| tiers.iter().find(|t| t.name == p.tier);
        Baseline {
            kind,
            max_gpus: placements.iter().map(|p| tier(p).map_or(0, |t| t.max_gpus)).collect(),
            tflops: placements.iter().map(|p| tier(p).map_or(0.0, |t| t.tflops)).collect(),
            free: placements.iter().map(|p| p.gpus.len() as u32).collect(),
            queue: Vec::new(),
            running: HashMap::new(),
            labs: HashMap::new(),
        }
    }

    pub fn enqueue(&mut self, id: i64, lab: i64, gpus: u32, submit_ms: i64, duration_ms: i64) {
        self.queue.push(Waiting { id, lab, gpus, submit_ms, duration_ms });
    }

    /// Best fit for `gpus` now (fewest free that suffice) among the
    /// placements `allowed` accepts.
    fn best_fit(&self, gpus: u32, allowed: impl Fn(usize) -> bool) -> Option<usize> {
        (0..self.free.len())
            .filter(|&p| self.free[p] >= gpus && gpus <= self.max_gpus[p] && allowed(p))
            .min_by_key(|&p| (self.free[p], p))
    }

    fn start(&mut self, w: &Waiting, p: usize, now: i64, factor: f64) {
        self.free[p] -= w.gpus;
        let limit_end_ms = now + (w.duration_ms as f64 * factor).ceil() as i64;
        self.running.insert(w.id, Running { lab: w.lab, gpus: w.gpus, placement: p, started_ms: now, limit_end_ms });
    }

    pub fn schedule(&mut self, now: i64) -> Vec<i64> {
        match self.kind {
            BaselineKind::Fifo => self.fifo(now),
            BaselineKind::Easy { overestimate } => self.easy(now, overestimate),
            BaselineKind::FairshareGreedy => self.greedy(now),
        }
    }

    fn fifo(&mut self, now: i64) -> Vec<i64> {
        self.fifo_with_factor(now, 1.0)
    }

    /// EASY: the head gets a shadow time (when enough GPUs free up on one
    /// placement, by the running jobs' limits); later jobs may start now if
    /// they end before it or leave the head's GPUs alone.
    fn easy(&mut self, now: i64, factor: f64) -> Vec<i64> {
        let mut started = self.fifo_with_factor(now, factor);
        let Some(head) = self.queue.first().cloned() else { return started };
        let mut by_end: Vec<&Running> = self.running.values().collect();
        by_end.sort_by_key(|r| (r.limit_end_ms, r.placement));
        let mut free = self.free.clone();
        let mut shadow: Option<(i64, usize)> = None;
        for r in by_end {
            free[r.placement] += r.gpus;
            if free[r.placement] >= head.gpus && head.gpus <= self.max_gpus[r.placement] {
                shadow = Some((r.limit_end_ms.max(now), r.placement));
                break;
            }
        }
        let Some((shadow_ms, shadow_place)) = shadow else { return started };
        let mut extra = free[shadow_place] - head.gpus;
        let mut i = 1;
        while i < self.queue.len() {
            let w = self.queue[i].clone();
            let ends_before = now + (w.duration_ms as f64 * factor).ceil() as i64 <= shadow_ms;
            let fits = self.best_fit(w.gpus, |p| ends_before || p != shadow_place || w.gpus <= extra);
            if let Some(p) = fits {
                if p == shadow_place && !ends_before {
                    extra -= w.gpus;
                }
                self.start(&w, p, now, factor);
                self.queue.remove(i);
                started.push(w.id);
            } else {
                i += 1;
            }
        }
        started
    }

    fn fifo_with_factor(&mut self, now: i64, factor: f64) -> Vec<i64> {
        let mut started = Vec::new();
        while let Some(head) = self.queue.first().cloned() {
            let Some(p) = self.best_fit(head.gpus, |_| true) else { break };
            self.start(&head, p, now, factor);
            self.queue.remove(0);
            started.push(head.id);
        }
        started
    }

    fn greedy(&mut self, now: i64) -> Vec<i64> {
        let labs = &self.labs;
        let usage_of = |lab: i64| labs.get(&lab).map_or(0.0, |u| usage::decayed(u, now));
        let mut order: Vec<(f64, i64, i64, usize)> =
            self.queue.iter().enumerate().map(|(i, w)| (usage_of(w.lab), w.submit_ms, w.id, i)).collect();
        order.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
        let mut started = Vec::new();
        let mut taken = vec![false; self.queue.len()];
        for (_, _, _, i) in order {
            let w = self.queue[i].clone();
            if let Some(p) = self.best_fit(w.gpus, |_| true) {
                self.start(&w, p, now, 1.0);
                taken[i] = true;
                started.push(w.id);
            }
        }
        let mut keep = taken.iter().map(|t| !t);
        self.queue.retain(|_| keep.next().unwrap_or(true));
        started
    }

    pub fn finish(&mut self, id: i64, now: i64) {
        if let Some(r) = self.running.remove(&id) {
            self.free[r.placement] += r.gpus;
            let cost = usage::cost(r.gpus, usage::elapsed_seconds(r.started_ms, now), self.tflops[r.placement]);
            let lab = self.labs.entry(r.lab).or_insert(LabUsage { lab: r.lab, value: 0.0, as_of_ms: now });
            usage::add(lab, cost, now);
        }
    }

    pub fn running_gpus(&self) -> u32 {
        self.running.values().map(|r| r.gpus).sum()
    }

    pub fn waiting_sizes(&self) -> Vec<u32> {
        self.queue.iter().map(|w| w.gpus).collect()
    }

    /// Per lab: (GPUs running, GPUs demanded by running + waiting jobs).
    pub fn lab_load(&self) -> FxHashMap<i64, (u32, u32)> {
        let mut load: FxHashMap<i64, (u32, u32)> = FxHashMap::default();
        for r in self.running.values() {
            let e = load.entry(r.lab).or_default();
            e.0 += r.gpus;
            e.1 += r.gpus;
        }
        for w in &self.queue {
            load.entry(w.lab).or_default().1 += w.gpus;
        }
        load
    }

    pub fn free_per_placement(&self) -> Vec<u32> {
        self.free.clone()
    }
}
