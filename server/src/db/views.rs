//! Read-only queries behind the list, queue, labs, usage and placement
//! views (api.md "Cluster and fair-share views").

use db_macros::dual;

use super::AsConn;
use std::collections::BTreeMap;

use super::scheduling::parse_gpus;
use crate::clock::rfc3339;
use crate::policy::model::LabUsage;
use crate::policy::usage;
use app::model::views::{LabView, PlacementView, QueueEntry, TierUsage, UsageDay};

const DAY_MS: i64 = 86_400_000;

/// Filters of `GET /v1/jobs`; `None` = any.
#[derive(Debug, Default, Clone)]
pub struct JobFilter<'a> {
    /// Comma-separated states.
    pub states: Option<&'a str>,
    pub user: Option<&'a str>,
    pub lab: Option<&'a str>,
    /// Only ids below this (the previous page's `next`).
    pub before: i64,
    pub limit: i64,
    pub array: Option<i64>,
    /// `batch` or `session`.
    pub kind: Option<&'a str>,
}

/// Job ids matching the filter, newest first.
#[dual]
pub async fn job_ids(conn: &mut impl AsConn, f: &JobFilter<'_>) -> Result<Vec<i64>, sqlx::Error> {
    let rows = sqlx::query_scalar!(
        r#"SELECT j.id AS "id!" FROM jobs j JOIN users u ON u.id = j.user_id JOIN labs l ON l.id = j.lab_id
           WHERE (CAST(?1 AS TEXT) IS NULL OR ',' || ?1 || ',' LIKE '%,' || j.state || ',%')
             AND (CAST(?2 AS TEXT) IS NULL OR u.username = ?2)
             AND (CAST(?3 AS TEXT) IS NULL OR l.name = ?3)
             AND j.id < ?4
             AND (CAST(?6 AS BIGINT) IS NULL OR j.array_id = ?6)
             AND (CAST(?7 AS TEXT) IS NULL OR j.kind = ?7)
           ORDER BY j.id DESC LIMIT ?5"#,
        f.states,
        f.user,
        f.lab,
        f.before,
        f.limit,
        f.array,
        f.kind
    )
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows)
}

/// A waiting job as the queue views show it; the lab's usage is kept
/// undecayed so the row stays right as time passes.
#[derive(Debug, Clone)]
pub struct QueueRow {
    pub entry: QueueEntry,
    pub lab_usage: LabUsage,
    pub owner: i64,
    /// In the global queue (else in its owner's personal queue).
    pub global: bool,
}

/// Every waiting job: the global queue in rank order, then the personal
/// queues in submission order.
#[dual]
pub async fn queue(conn: &mut impl AsConn) -> Result<Vec<QueueRow>, sqlx::Error> {
    let rows = sqlx::query!(
        r#"SELECT j.id AS "id!", j.rank, j.name, u.username, j.user_id, l.id AS lab_id, l.name AS lab, l.usage_value, l.usage_as_of,
                  j.num_gpus, j.queue_entered_at, j.pending_reason, j.state, j.reserved_node, j.reserved_tier,
                  j.reserved_gpus, j.reservation_gpu_seconds
           FROM jobs j JOIN users u ON u.id = j.user_id JOIN labs l ON l.id = j.lab_id
           WHERE j.state IN ('GLOBAL_QUEUE_WAIT', 'USER_QUEUE_WAIT')
           ORDER BY j.state = 'USER_QUEUE_WAIT', j.rank IS NULL, j.rank, j.queue_entered_at, j.submitted_at, j.id"#
    )
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| {
            let reservation = super::scheduling::reservation_view(
                r.reserved_node,
                r.reserved_tier,
                r.reserved_gpus.as_deref(),
                r.reservation_gpu_seconds,
            );
            let entry = QueueEntry {
                rank: r.rank.map(|x| x as u32),
                id: r.id,
                name: Some(r.name),
                user: Some(r.username),
                lab: r.lab,
                num_gpus: r.num_gpus as u32,
                lab_usage_tflop_s: 0.0,
                queue_entered_at: r.queue_entered_at.map(rfc3339),
                pending_reason: r.pending_reason,
                reservation,
                estimated_start: None,
            };
            QueueRow {
                entry,
                lab_usage: LabUsage { lab: r.lab_id, value: r.usage_value, as_of_ms: r.usage_as_of },
                owner: r.user_id,
                global: r.state == "GLOBAL_QUEUE_WAIT",
            }
        })
        .collect())
}

#[dual]
pub async fn labs(conn: &mut impl AsConn, now_ms: i64) -> Result<Vec<LabView>, sqlx::Error> {
    let rows = sqlx::query!(
        r#"SELECT l.id AS "id!", l.name, l.usage_value, l.usage_as_of,
                  (SELECT CAST(COALESCE(SUM(j.num_gpus), 0) AS BIGINT) FROM jobs j
                     WHERE j.lab_id = l.id AND j.state IN ('DISPATCHING', 'RUNNING', 'CANCELLING')) AS "running!: i64",
                  (SELECT COUNT(*) FROM jobs j
                     WHERE j.lab_id = l.id AND j.state IN ('GLOBAL_QUEUE_WAIT', 'USER_QUEUE_WAIT')) AS "queued!: i64"
           FROM labs l ORDER BY l.name"#
    )
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| LabView {
            name: r.name,
            usage_tflop_s: usage::decayed(
                &LabUsage { lab: r.id, value: r.usage_value, as_of_ms: r.usage_as_of },
                now_ms,
            ),
            running_gpus: r.running.max(0) as u32,
            queued_jobs: r.queued.max(0) as u32,
        })
        .collect())
}

#[dual]
pub async fn lab_id(conn: &mut impl AsConn, name: &str) -> Result<Option<i64>, sqlx::Error> {
    sqlx::query_scalar!(r#"SELECT id AS "id!" FROM labs WHERE name = ?"#, name).fetch_optional(&mut *conn).await
}

/// The lab's charges per UTC day for the `days` days up to `now_ms`
/// (oldest first, days without charges included as zero).
#[dual]
pub async fn daily_usage(
    conn: &mut impl AsConn,
    lab_id: i64,
    days: u32,
    now_ms: i64,
) -> Result<Vec<UsageDay>, sqlx::Error> {
    let today = now_ms.div_euclid(DAY_MS);
    let first = today - i64::from(days.max(1)) + 1;
    let since = first * DAY_MS;
    let rows = sqlx::query!(
        r#"SELECT charged_at / 86400000 AS "day!: i64", tier, SUM(amount) AS "amount!: f64",
                  SUM(gpu_seconds) / 3600.0 AS "gpu_hours!: f64",
                  SUM(CASE WHEN kind = 'reservation' THEN amount ELSE 0 END) AS "reserved!: f64"
           FROM usage_charges WHERE lab_id = ? AND charged_at >= ?
           GROUP BY 1, tier ORDER BY 1, tier"#,
        lab_id,
        since
    )
    .fetch_all(&mut *conn)
    .await?;
    let mut by_day: BTreeMap<i64, Vec<TierUsage>> = (first..=today).map(|d| (d, Vec::new())).collect();
    for r in rows {
        if let Some(tiers) = by_day.get_mut(&r.day) {
            tiers.push(TierUsage {
                tier: r.tier,
                usage_tflop_s: r.amount,
                reserved_tflop_s: r.reserved,
                gpu_hours: r.gpu_hours,
            });
        }
    }
    Ok(by_day
        .into_iter()
        .map(|(day, by_tier)| UsageDay {
            date: rfc3339(day * DAY_MS)[..10].to_string(),
            // from +0.0: an empty f64 sum is -0.0, which printed as "-0.0"
            usage_tflop_s: by_tier.iter().fold(0.0, |sum, t| sum + t.usage_tflop_s),
            gpu_hours: by_tier.iter().fold(0.0, |sum, t| sum + t.gpu_hours),
            by_tier,
        })
        .collect())
}

#[dual]
pub async fn placements(conn: &mut impl AsConn) -> Result<Vec<PlacementView>, sqlx::Error> {
    let placements = super::scheduling::load_placements(conn).await?;
    let active: Vec<String> =
        super::scheduling::load_tiers(conn).await?.into_iter().filter(|t| t.active).map(|t| t.name).collect();
    let reserved = sqlx::query!(
        "SELECT reserved_node, reserved_tier, reserved_gpus FROM jobs WHERE reserved_node IS NOT NULL AND reserved_tier IS NOT NULL"
    )
    .fetch_all(&mut *conn)
    .await?;
    Ok(placements
        .into_iter()
        .map(|p| {
            let held: Vec<u32> = reserved
                .iter()
                .filter(|r| r.reserved_node.as_deref() == Some(&p.node) && r.reserved_tier.as_deref() == Some(&p.tier))
                .flat_map(|r| parse_gpus(r.reserved_gpus.as_deref()))
                .collect();
            // one column per GPU: research, else reserved, else backfill, else idle
            let idle = p.free.iter().filter(|g| !p.backfill.contains(g) && !held.contains(g)).count() as u32;
            let backfill = p.backfill.iter().filter(|g| !held.contains(g)).count() as u32;
            let usable = p.usable && active.contains(&p.tier);
            PlacementView {
                node: p.node,
                tier: p.tier,
                capacity: p.capacity,
                idle,
                research: p.capacity - p.free.len() as u32,
                backfill,
                reserved: held.len() as u32,
                usable,
                available: if usable { idle + backfill } else { 0 },
            }
        })
        .collect())
}

pub struct BackfillRow {
    pub id: i64,
    pub node: String,
    pub tier: String,
    pub gpu_indices: Vec<u32>,
    pub endpoint: Option<String>,
    pub started_at: i64,
    pub ended_at: Option<i64>,
}

/// Every backfill instance, live or ended (for served GPU-hours).
#[dual]
pub async fn backfill_instances(conn: &mut impl AsConn) -> Result<Vec<BackfillRow>, sqlx::Error> {
    let rows = sqlx::query!(
        r#"SELECT id AS "id!", node, tier, gpu_indices, endpoint, started_at, ended_at FROM backfill_instances ORDER BY id"#
    )
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| BackfillRow {
            id: r.id,
            node: r.node,
            tier: r.tier,
            gpu_indices: parse_gpus(Some(&r.gpu_indices)),
            endpoint: r.endpoint,
            started_at: r.started_at,
            ended_at: r.ended_at,
        })
        .collect())
}

/// What each GPU does now, by `(node, tier, index)`; GPUs not listed are idle.
#[dual]
pub async fn gpu_uses(
    conn: &mut impl AsConn,
) -> Result<std::collections::HashMap<(String, String, u32), app::model::GpuUse>, sqlx::Error> {
    use app::model::GpuUse;
    let mut uses = std::collections::HashMap::new();
    for p in super::scheduling::load_placements(conn).await? {
        for g in &p.backfill {
            uses.insert((p.node.clone(), p.tier.clone(), *g), GpuUse::Backfill);
        }
    }
    let reserved =
        sqlx::query!("SELECT reserved_node, reserved_tier, reserved_gpus FROM jobs WHERE reserved_node IS NOT NULL")
            .fetch_all(&mut *conn)
            .await?;
    for r in reserved {
        if let (Some(node), Some(tier)) = (r.reserved_node, r.reserved_tier) {
            for g in parse_gpus(r.reserved_gpus.as_deref()) {
                uses.insert((node.clone(), tier.clone(), g), GpuUse::Reserved);
            }
        }
    }
    let running =
        sqlx::query!("SELECT node, tier, gpu_indices FROM job_attempts WHERE phase IN ('DISPATCHING', 'RUNNING')")
            .fetch_all(&mut *conn)
            .await?;
    for r in running {
        for g in parse_gpus(Some(&r.gpu_indices)) {
            uses.insert((r.node.clone(), r.tier.clone(), g), GpuUse::Research);
        }
    }
    Ok(uses)
}
