//! What `/metrics` says about the cluster (api.md "Operations"; a Grafana
//! board is built on these names): read from the database at each scrape
//! and set on the process's recorder, so every instance reports the same
//! and a restart loses nothing. A series whose labels are gone (a lab's
//! last queued job started) is set to 0, not left at its old value.
//!
//! - `jpu_build_info{version}` 1;
//! - `jpu_jobs{state,tier,lab}` unfinished jobs;
//! - `jpu_jobs_pending{reason,tier}` waiting jobs by why they wait (the
//!   reason's code);
//! - `jpu_gpus{state,tier,node}` with `state` one of `research`,
//!   `backfill`, `reserved`, `idle`, `down` (a node that is not up);
//! - `jpu_nodes{state}`;
//! - `jpu_jobs_ended_total{reason}`, `jpu_notification_failures_total`,
//!   `jpu_sessions_open`, `jpu_scheduler_leader` and `jpu_scheduler_epoch`
//!   (`ha`); `jpu_sign_in_refused_total` counts as refusals
//!   happen (`services::error`).

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use crate::db;
use crate::services::{ServiceResult, Services};

type Labels = Vec<(&'static str, String)>;

/// Every labelled series set before, by name: to zero the ones now absent.
static SEEN: Mutex<Option<HashMap<&'static str, HashSet<Labels>>>> = Mutex::new(None);

fn labelled(labels: &Labels) -> Vec<metrics::Label> {
    labels.iter().map(|(k, v)| metrics::Label::new(*k, v.clone())).collect()
}

/// Sets the gauges of one name: `now` as they are, the vanished ones 0.
fn gauges(name: &'static str, now: HashMap<Labels, f64>) {
    let mut seen = SEEN.lock().unwrap_or_else(|p| p.into_inner());
    let seen = seen.get_or_insert_with(HashMap::new).entry(name).or_default();
    for gone in seen.iter().filter(|l| !now.contains_key(*l)) {
        metrics::gauge!(name, labelled(gone)).set(0.0);
    }
    for (labels, value) in &now {
        metrics::gauge!(name, labelled(labels)).set(*value);
        seen.insert(labels.clone());
    }
}

/// Reads the cluster and sets every series.
pub async fn refresh(state: &Services) -> ServiceResult<()> {
    let mut conn = state.db.acquire().await?;
    metrics::gauge!("jpu_build_info", "version" => env!("CARGO_PKG_VERSION")).set(1.0);

    let mut jobs = HashMap::new();
    for (job_state, tier, lab, n) in db::metrics::unfinished_jobs(&mut conn).await? {
        jobs.insert(vec![("state", job_state), ("tier", tier), ("lab", lab)], n as f64);
    }
    gauges("jpu_jobs", jobs);
    let mut pending = HashMap::new();
    for (reason, tier, n) in db::metrics::waiting_by_reason(&mut conn).await? {
        // the code alone ("RESERVING (0/2 GPUs on …)" → RESERVING): a
        // label must not take a new value at every cycle
        let code = reason.split([' ', '(']).next().unwrap_or_default().to_string();
        *pending.entry(vec![("reason", code), ("tier", tier)]).or_default() += n as f64;
    }
    gauges("jpu_jobs_pending", pending);

    let nodes = crate::services::admin::cluster::nodes_in_use(&mut conn).await?;
    let mut gpus: HashMap<Labels, f64> = HashMap::new();
    let mut node_states: HashMap<Labels, f64> = HashMap::new();
    for node in &nodes {
        // a draining node's GPUs still do what they do; a drained or
        // down one's do nothing the cluster can use
        let up = !matches!(node.state.as_str(), "DOWN" | "DRAINED");
        *node_states.entry(vec![("state", node.state.as_str().to_string())]).or_default() += 1.0;
        for gpu in &node.gpus {
            let use_ = if up { gpu.used_by.as_str().to_string() } else { "down".to_string() };
            *gpus.entry(vec![("state", use_), ("tier", gpu.tier.clone()), ("node", node.name.clone())]).or_default() +=
                1.0;
        }
    }
    gauges("jpu_gpus", gpus);
    gauges("jpu_nodes", node_states);

    for (reason, n) in db::metrics::ended_by_reason(&mut conn).await? {
        metrics::counter!("jpu_jobs_ended_total", "reason" => reason).absolute(n.max(0) as u64);
    }
    metrics::counter!("jpu_notification_failures_total")
        .absolute(db::metrics::failed_deliveries(&mut conn).await?.max(0) as u64);
    metrics::gauge!("jpu_sessions_open").set(db::metrics::open_sessions(&mut conn).await? as f64);
    if let Some(r) = crate::services::ha::readiness(state).await {
        metrics::gauge!("jpu_scheduler_leader").set(if r.scheduler { 1.0 } else { 0.0 });
        metrics::gauge!("jpu_scheduler_epoch").set(r.epoch as f64);
    }
    // present from the first scrape, refusals or not
    metrics::counter!("jpu_sign_in_refused_total").increment(0);
    Ok(())
}
