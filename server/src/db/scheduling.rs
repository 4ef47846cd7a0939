//! The scheduler loop's database side: read a [`Snapshot`], apply a
//! [`Plan`] (in the caller's transaction), record charges.

use db_macros::dual;

use super::AsConn;
use super::WriteTx;
use std::collections::HashMap;

use app::model::MaintenancePhase;

use crate::policy::forecast::RunningJob;
use crate::policy::{usage, Charge, ChargeKind, LabUsage, PersonalJob, PlacementState, Plan, QueuedJob};
use crate::policy::{
    Accrued, BusyGpu, Dispatch, PolicyMode, Release, Reservation, Snapshot, TierInfo, UserSlots, Waiting,
};

/// "0,1" ⇄ [0, 1]
pub fn parse_gpus(text: Option<&str>) -> Vec<u32> {
    text.unwrap_or_default().split(',').filter_map(|s| s.trim().parse().ok()).collect()
}

/// A job's reservation columns as the API shows them (None = none held).
pub fn reservation_view(
    node: Option<String>,
    tier: Option<String>,
    gpus: Option<&str>,
    gpu_seconds: f64,
) -> Option<app::model::ReservationView> {
    Some(app::model::ReservationView { node: node?, tier: tier?, gpus: parse_gpus(gpus).len() as u32, gpu_seconds })
}

/// A GPU list as the database stores it (`0,1`; read back by
/// [`parse_gpus`]). The job's `CUDA_VISIBLE_DEVICES` has the same form
/// today but is the executor's to define (`executor::env::gpu_list`).
pub fn format_gpus(gpus: &[u32]) -> String {
    gpus.iter().map(u32::to_string).collect::<Vec<_>>().join(",")
}

/// A tier as the decision core sees it.
pub fn tier_info(t: &app::model::TierView) -> TierInfo {
    TierInfo {
        name: t.name.clone(),
        tflops: t.tflops,
        vram_gb: t.vram_gb.max(0) as u32,
        sort_order: t.sort_order,
        max_gpus: t.max_gpus.max(0) as u32,
        active: t.active,
    }
}

#[dual]
pub async fn load_tiers(conn: &mut impl AsConn) -> Result<Vec<TierInfo>, sqlx::Error> {
    Ok(super::cluster::list_tiers(conn).await?.iter().map(tier_info).collect())
}

/// Every placement's `(tier, capacity)`, whatever its node's state: what
/// admission needs to tell whether a request could ever fit (one query,
/// where the scheduler's full placement state takes three).
#[dual]
pub async fn placement_shapes(conn: &mut impl AsConn) -> Result<Vec<(String, u32)>, sqlx::Error> {
    let rows = sqlx::query!(
        r#"SELECT t.name AS tier, COUNT(*) AS "capacity!: i64"
           FROM gpus g JOIN tiers t ON t.id = g.tier_id GROUP BY g.node_id, g.tier_id, t.name"#
    )
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows.into_iter().map(|r| (r.tier, r.capacity as u32)).collect())
}

/// Placements with their free GPUs: not held by a dispatching or running
/// attempt. Backfill GPUs count as free.
#[dual]
pub async fn load_placements(conn: &mut impl AsConn) -> Result<Vec<PlacementState>, sqlx::Error> {
    let gpus = sqlx::query!(
        r#"SELECT n.name AS node, n.state, t.name AS tier, g.gpu_index
           FROM gpus g JOIN nodes n ON n.id = g.node_id JOIN tiers t ON t.id = g.tier_id
           ORDER BY n.name, t.name, g.gpu_index"#
    )
    .fetch_all(&mut *conn)
    .await?;
    let busy_rows =
        sqlx::query!("SELECT node, tier, gpu_indices FROM job_attempts WHERE phase IN ('DISPATCHING', 'RUNNING')")
            .fetch_all(&mut *conn)
            .await?;
    let backfill_rows = sqlx::query!("SELECT node, tier, gpu_indices FROM backfill_instances WHERE ended_at IS NULL")
        .fetch_all(&mut *conn)
        .await?;
    let mut busy: HashMap<(String, String), Vec<u32>> = HashMap::new();
    for r in busy_rows {
        busy.entry((r.node, r.tier)).or_default().extend(parse_gpus(Some(&r.gpu_indices)));
    }
    let mut backfill: HashMap<(String, String), Vec<u32>> = HashMap::new();
    for r in backfill_rows {
        backfill.entry((r.node, r.tier)).or_default().extend(parse_gpus(Some(&r.gpu_indices)));
    }
    let mut out: Vec<PlacementState> = Vec::new();
    for g in gpus {
        let index = g.gpu_index as u32;
        let fresh = out.last().map(|p| p.node != g.node || p.tier != g.tier).unwrap_or(true);
        if fresh {
            let key = (g.node.clone(), g.tier.clone());
            out.push(PlacementState {
                node: g.node.clone(),
                tier: g.tier.clone(),
                capacity: 0,
                usable: g.state == "UP",
                free: Vec::new(),
                backfill: backfill.remove(&key).unwrap_or_default(),
            });
        }
        let p = out.last_mut().expect("pushed above");
        p.capacity += 1;
        if !busy.get(&(g.node.clone(), g.tier.clone())).is_some_and(|b| b.contains(&index)) {
            p.free.push(index);
        }
    }
    for p in &mut out {
        let free = p.free.clone();
        p.backfill.retain(|g| free.contains(g));
    }
    Ok(out)
}

/// The state one cycle decides on, for the rules `mode` names (the busy
/// GPUs' ends are read only for the planned policy, the one that uses them).
#[dual]
pub async fn load_snapshot(conn: &mut impl AsConn, now_ms: i64, mode: PolicyMode) -> Result<Snapshot, sqlx::Error> {
    let phase: MaintenancePhase = super::maintenance::get(conn).await?.phase;
    let tiers = load_tiers(conn).await?;
    let placements = load_placements(conn).await?;
    let labs = sqlx::query!(r#"SELECT id AS "id!", usage_value, usage_as_of FROM labs"#)
        .fetch_all(&mut *conn)
        .await?
        .into_iter()
        .map(|r| LabUsage { lab: r.id, value: r.usage_value, as_of_ms: r.usage_as_of })
        .collect();
    // the global queue and the heads of the personal queues (the view
    // `cycle_waiting_jobs` says which)
    let rows = sqlx::query!(
        r#"SELECT j.id AS "id!", j.lab_id, j.user_id, j.state, j.num_gpus, j.queue_entered_at, j.submitted_at, j.min_vram_gb,
                  j.reserved_node, j.reserved_tier, j.reserved_gpus, j.reservation_gpu_seconds, j.reservation_cost,
                  j.reservation_drained, j.reservation_accrued_at, j.time_limit_minutes, j.gated, j.array_id
           FROM jobs j WHERE j.id IN (SELECT id FROM cycle_waiting_jobs)"#
    )
    .fetch_all(&mut *conn)
    .await?;
    let mut queue = Vec::new();
    let mut personal = Vec::new();
    let (mut gated, mut arrays) = (Vec::new(), Vec::new());
    for r in rows {
        let reservation = match (r.reserved_node, r.reserved_tier) {
            (Some(node), Some(tier)) => Some(Reservation {
                node,
                tier,
                gpus: parse_gpus(r.reserved_gpus.as_deref()),
                drained: r.reservation_drained as u32,
                accrued_at_ms: r.reservation_accrued_at.unwrap_or(now_ms),
            }),
            _ => None,
        };
        let job = QueuedJob {
            id: r.id,
            lab: r.lab_id,
            user: r.user_id,
            num_gpus: r.num_gpus as u32,
            queue_entered_at_ms: r.queue_entered_at.unwrap_or(r.submitted_at),
            min_vram_gb: r.min_vram_gb as u32,
            reservation: reservation.map(Box::new),
            accrued: Accrued { gpu_seconds: r.reservation_gpu_seconds, cost: r.reservation_cost },
            time_limit_ms: r.time_limit_minutes.max(0) * 60_000,
        };
        if r.state == "GLOBAL_QUEUE_WAIT" {
            queue.push(job);
        } else {
            if r.gated != 0 {
                gated.push(job.id);
            }
            arrays.extend(r.array_id);
            personal.push(PersonalJob { array: r.array_id, ..PersonalJob::plain(job, r.submitted_at) });
        }
    }
    super::gates::read_dependencies(conn, &mut personal, &gated).await?;
    arrays.sort_unstable();
    arrays.dedup();
    let arrays = super::gates::array_limits(conn, &arrays).await?;
    let users = sqlx::query!(
        r#"SELECT u.id AS "id!", u.max_concurrent,
                  (SELECT COUNT(*) FROM jobs j WHERE j.user_id = u.id
                     AND j.state IN ('GLOBAL_QUEUE_WAIT', 'DISPATCHING', 'RUNNING', 'CANCELLING')) AS "holding!: i64"
           FROM users u
           WHERE EXISTS (SELECT 1 FROM jobs p WHERE p.user_id = u.id AND p.state = 'USER_QUEUE_WAIT')"#
    )
    .fetch_all(&mut *conn)
    .await?
    .into_iter()
    .map(|r| UserSlots { user: r.id, max_concurrent: r.max_concurrent.max(0) as u32, holding: r.holding.max(0) as u32 })
    .collect();
    let research_active = sqlx::query_scalar!(
        r#"SELECT COUNT(*) AS "n!: i64" FROM jobs WHERE state IN ('DISPATCHING', 'RUNNING', 'CANCELLING')"#
    )
    .fetch_one(&mut *conn)
    .await?;
    let backfill_active =
        sqlx::query_scalar!(r#"SELECT COUNT(*) AS "n!: i64" FROM backfill_instances WHERE ended_at IS NULL"#)
            .fetch_one(&mut *conn)
            .await?;
    let busy_until = match mode {
        PolicyMode::Seed => Vec::new(),
        PolicyMode::Planned { .. } => busy_until(conn, now_ms, &placements).await?,
    };
    Ok(Snapshot {
        now_ms,
        phase,
        tiers,
        placements,
        labs,
        queue,
        personal,
        users,
        arrays,
        research_active: research_active as u32,
        backfill_active: backfill_active as u32,
        mode,
        busy_until,
    })
}

/// Each GPU of a research job, until its job's limit ends it (the
/// planned policy's start plan; a cancelled one ends now).
#[dual]
async fn busy_until(
    conn: &mut impl AsConn,
    now_ms: i64,
    placements: &[PlacementState],
) -> Result<Vec<BusyGpu>, sqlx::Error> {
    let index: HashMap<(&str, &str), usize> =
        placements.iter().enumerate().map(|(k, p)| ((p.node.as_str(), p.tier.as_str()), k)).collect();
    Ok(running_jobs(conn, now_ms)
        .await?
        .into_iter()
        .flat_map(|r| {
            let placement = index.get(&(r.node.as_str(), r.tier.as_str())).copied();
            r.gpus.into_iter().map(move |gpu| BusyGpu::new(placement, gpu, (r.lab, r.user), r.started_ms, r.ends_ms))
        })
        .collect())
}

/// Adds charges to labs (decaying first, §2), to the ledger and to the
/// jobs' usage totals.
#[dual]
pub async fn record_charges(conn: &mut WriteTx, charges: &[Charge], now_ms: i64) -> Result<(), sqlx::Error> {
    for c in charges {
        let lab = sqlx::query!("SELECT usage_value, usage_as_of FROM labs WHERE id = ?", c.lab)
            .fetch_one(conn.conn())
            .await?;
        let mut u = LabUsage { lab: c.lab, value: lab.usage_value, as_of_ms: lab.usage_as_of };
        usage::add(&mut u, c.amount, now_ms);
        sqlx::query!("UPDATE labs SET usage_value = ?, usage_as_of = ? WHERE id = ?", u.value, u.as_of_ms, c.lab)
            .execute(conn.conn())
            .await?;
        let kind = match c.kind {
            ChargeKind::Run => "run",
            ChargeKind::Reservation => "reservation",
        };
        sqlx::query!(
            "INSERT INTO usage_charges (lab_id, job_id, tier, kind, amount, gpu_seconds, charged_at)
             VALUES (?, ?, ?, ?, ?, ?, ?)",
            c.lab,
            c.job,
            c.tier,
            kind,
            c.amount,
            c.gpu_seconds,
            now_ms
        )
        .execute(conn.conn())
        .await?;
        sqlx::query!("UPDATE jobs SET usage_tflop_s = usage_tflop_s + ? WHERE id = ?", c.amount, c.job)
            .execute(conn.conn())
            .await?;
    }
    Ok(())
}

/// What a waiting job's row says of its place in the queue (only the
/// scheduler cycle writes these columns).
pub struct WaitingMark {
    rank: Option<i64>,
    reason: Option<String>,
    reserved: bool,
    gpu_seconds: f64,
    cost: f64,
}

/// The marks of the jobs [`load_snapshot`] reads (the same rows), for
/// [`apply_plan`] to skip the ones a plan leaves as they are.
#[dual]
pub async fn waiting_marks(conn: &mut impl AsConn) -> Result<HashMap<i64, WaitingMark>, sqlx::Error> {
    let rows = sqlx::query!(
        r#"SELECT j.id AS "id!", j.rank, j.pending_reason, j.reserved_node IS NOT NULL AS "reserved!: bool",
                  j.reservation_gpu_seconds, j.reservation_cost
           FROM jobs j WHERE j.id IN (SELECT id FROM cycle_waiting_jobs)"#
    )
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| {
            let mark = WaitingMark {
                rank: r.rank,
                reason: r.pending_reason,
                reserved: r.reserved,
                gpu_seconds: r.reservation_gpu_seconds,
                cost: r.reservation_cost,
            };
            (r.id, mark)
        })
        .collect())
}

/// Writes a plan. Dispatched jobs become DISPATCHING with an attempt row
/// (recorded before the executor is called, for crash safety); returns
/// their ids. `stored` are the waiting rows' marks as of the plan's
/// snapshot ([`waiting_marks`]).
///
/// The plan may rest on a snapshot that misses jobs submitted since (see
/// `scheduler::cycle`): a promotion is therefore made only while its
/// user still holds fewer slots than the limit, since a submit may have
/// taken the free slot meanwhile, and a dispatch only of a job still in
/// the global queue.
#[dual]
pub async fn apply_plan(
    conn: &mut WriteTx,
    plan: &Plan,
    stored: &HashMap<i64, WaitingMark>,
    now_ms: i64,
) -> Result<Vec<i64>, sqlx::Error> {
    if let Some(phase) = plan.phase_change {
        let current = super::maintenance::get(conn.conn()).await?;
        super::maintenance::set(conn, phase, current.message.as_deref(), now_ms).await?;
    }
    promote(conn, &plan.promotions, now_ms).await?;
    // most personal jobs keep their reason from one cycle to the next
    let changed: Vec<(i64, String)> = plan
        .held
        .iter()
        .map(|(id, reason)| (*id, reason.to_string()))
        .filter(|(id, reason)| stored.get(id).is_none_or(|m| m.reason.as_deref() != Some(reason.as_str())))
        .collect();
    super::gates::mark_held(conn, &changed).await?;
    super::gates::end_never_satisfied(conn, &plan.never_satisfied, now_ms).await?;
    record_charges(conn, &plan.charges, now_ms).await?;
    release(conn, &plan.releases).await?;
    mark_waiting(conn, &plan.waiting, stored).await?;
    dispatch(conn, &plan.dispatches, now_ms).await
}

/// USER_QUEUE_WAIT → GLOBAL_QUEUE_WAIT, unless the user's slots filled
/// up since the snapshot.
#[dual]
async fn promote(conn: &mut WriteTx, promotions: &[i64], now_ms: i64) -> Result<(), sqlx::Error> {
    for id in promotions {
        sqlx::query!(
            "UPDATE jobs SET state = 'GLOBAL_QUEUE_WAIT', queue_entered_at = ?
             WHERE id = ? AND state = 'USER_QUEUE_WAIT'
               AND (SELECT COUNT(*) FROM jobs h WHERE h.user_id = jobs.user_id
                      AND h.state IN ('GLOBAL_QUEUE_WAIT', 'DISPATCHING', 'RUNNING', 'CANCELLING'))
                   < (SELECT u.max_concurrent FROM users u WHERE u.id = jobs.user_id)",
            now_ms,
            id
        )
        .execute(conn.conn())
        .await?;
    }
    Ok(())
}

/// Reservations the plan gives up.
#[dual]
async fn release(conn: &mut WriteTx, releases: &[Release]) -> Result<(), sqlx::Error> {
    for r in releases {
        // the accrued cost was charged with this plan's charges
        sqlx::query!(
            "UPDATE jobs SET reserved_node = NULL, reserved_tier = NULL, reserved_gpus = NULL, reservation_drained = 0,
                    reservation_accrued_at = NULL, reservation_gpu_seconds = 0, reservation_cost = 0
             WHERE id = ?",
            r.job
        )
        .execute(conn.conn())
        .await?;
    }
    Ok(())
}

/// Each waiting job's rank, reason and reservation.
#[dual]
async fn mark_waiting(
    conn: &mut WriteTx,
    waiting: &[Waiting],
    stored: &HashMap<i64, WaitingMark>,
) -> Result<(), sqlx::Error> {
    // Most waiting jobs keep their rank and reason from one cycle to the
    // next; rewriting 10,000 unchanged rows would hold the write lock for
    // most of a second.
    for w in waiting {
        let reason = w.reason.to_string();
        let rank = i64::from(w.rank);
        let unchanged = w.reservation.is_none()
            && stored.get(&w.job).is_some_and(|m| {
                m.rank == Some(rank)
                    && m.reason.as_deref() == Some(reason.as_str())
                    && !m.reserved
                    && m.gpu_seconds == w.accrued.gpu_seconds
                    && m.cost == w.accrued.cost
            });
        if unchanged {
            continue;
        }
        let (node, tier, gpus, drained, at) = match &w.reservation {
            Some(r) => (
                Some(r.node.as_str()),
                Some(r.tier.as_str()),
                Some(format_gpus(&r.gpus)),
                i64::from(r.drained),
                Some(r.accrued_at_ms),
            ),
            None => (None, None, None, 0, None),
        };
        sqlx::query!(
            "UPDATE jobs SET rank = ?, pending_reason = ?, reserved_node = ?, reserved_tier = ?, reserved_gpus = ?,
                    reservation_drained = ?, reservation_accrued_at = ?, reservation_gpu_seconds = ?, reservation_cost = ?
             WHERE id = ?",
            rank,
            reason,
            node,
            tier,
            gpus,
            drained,
            at,
            w.accrued.gpu_seconds,
            w.accrued.cost,
            w.job
        )
        .execute(conn.conn())
        .await?;
    }
    Ok(())
}

/// GLOBAL_QUEUE_WAIT → DISPATCHING with a new attempt row; returns the
/// jobs dispatched (a job cancelled since the snapshot is skipped).
#[dual]
async fn dispatch(conn: &mut WriteTx, dispatches: &[Dispatch], now_ms: i64) -> Result<Vec<i64>, sqlx::Error> {
    let mut dispatched = Vec::with_capacity(dispatches.len());
    for d in dispatches {
        // what it accrued was held on its reservation's tier: after a swap,
        // not the one it runs on
        let accrued_tier = d.swapped_from.as_ref().map_or(d.tier.as_str(), |(_, tier)| tier.as_str());
        let gpus = format_gpus(&d.gpus);
        let done = sqlx::query!(
            "UPDATE jobs SET state = 'DISPATCHING', node = ?, tier = ?, gpu_indices = ?, rank = NULL, pending_reason = NULL,
                    reserved_node = NULL, reserved_tier = NULL, reserved_gpus = NULL, reservation_drained = 0,
                    reservation_accrued_at = NULL, reservation_gpu_seconds = ?, reservation_cost = ?, accrued_tier = ?
             WHERE id = ? AND state = 'GLOBAL_QUEUE_WAIT'",
            d.node,
            d.tier,
            gpus,
            d.accrued.gpu_seconds,
            d.accrued.cost,
            accrued_tier,
            d.job
        )
        .execute(conn.conn())
        .await?;
        if done.rows_affected() == 0 {
            continue;
        }
        sqlx::query!(
            "INSERT INTO job_attempts (job_id, attempt, tier, node, gpu_indices, phase, started_at)
             SELECT id, attempt, ?, ?, ?, 'DISPATCHING', ? FROM jobs WHERE id = ?",
            d.tier,
            d.node,
            gpus,
            now_ms,
            d.job
        )
        .execute(conn.conn())
        .await?;
        dispatched.push(d.job);
    }
    Ok(dispatched)
}

/// Ends the forecast's runtime predictor learns from: (user, run time,
/// time limit) in ms of recent attempts that ran their course (done,
/// failed or out of time; not cancelled, lost or out of memory), most
/// recent first.
#[dual]
pub async fn recent_runtimes(conn: &mut impl AsConn) -> Result<Vec<(i64, i64, i64)>, sqlx::Error> {
    let rows = sqlx::query!(
        r#"SELECT j.user_id AS "user!", a.ended_at - a.started_at AS "run_ms!: i64",
                  j.time_limit_minutes * 60000 AS "limit_ms!: i64"
           FROM job_attempts a JOIN jobs j ON j.id = a.job_id
           WHERE a.phase = 'ENDED' AND a.ended_at IS NOT NULL AND j.time_limit_minutes > 0
             AND a.reason IN ('COMPLETED', 'NONZERO_EXIT', 'TIME_LIMIT')
           ORDER BY a.ended_at DESC, a.id DESC
           LIMIT 20000"#
    )
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows.into_iter().map(|r| (r.user, r.run_ms, r.limit_ms)).collect())
}

/// Research jobs holding GPUs, each with when its time limit ends it at
/// the latest (a cancel ends it now): what the forecast runs forward, and
/// the planned policy's busy GPUs.
#[dual]
pub async fn running_jobs(conn: &mut impl AsConn, now_ms: i64) -> Result<Vec<RunningJob>, sqlx::Error> {
    let rows = sqlx::query!(
        r#"SELECT id AS "id!", lab_id, user_id, state, time_limit_minutes, started_at, node, tier, gpu_indices
           FROM jobs WHERE state IN ('DISPATCHING', 'RUNNING', 'CANCELLING')"#
    )
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows
        .into_iter()
        .filter_map(|r| {
            let started_ms = r.started_at.unwrap_or(now_ms);
            let ends_ms =
                if r.state == "CANCELLING" { now_ms } else { started_ms + r.time_limit_minutes.max(0) * 60_000 };
            Some(RunningJob {
                id: r.id,
                lab: r.lab_id,
                user: r.user_id,
                node: r.node?,
                tier: r.tier?,
                gpus: parse_gpus(r.gpu_indices.as_deref()),
                started_ms,
                ends_ms,
            })
        })
        .collect())
}
