//! Tiers, nodes and their GPUs: the inventory placements are derived from.

use db_macros::dual;

use super::AsConn;
use super::WriteTx;
use app::model::{GpuView, NodeState, NodeView, TierView};

pub struct NewTier<'a> {
    pub name: &'a str,
    pub display_name: &'a str,
    pub vram_gb: i64,
    pub tflops: f64,
    pub sort_order: i64,
    pub max_gpus: i64,
    pub slurm_partition: &'a str,
    pub cpus_per_gpu: i64,
    pub mem_gb_per_gpu: i64,
}

#[dual]
pub async fn insert_tier(conn: &mut WriteTx, t: NewTier<'_>) -> Result<i64, sqlx::Error> {
    let id = sqlx::query_scalar!(
        "INSERT INTO tiers (name, display_name, vram_gb, tflops, sort_order, max_gpus, slurm_partition, cpus_per_gpu, mem_gb_per_gpu)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id AS \"id!: i64\"",
        t.name,
        t.display_name,
        t.vram_gb,
        t.tflops,
        t.sort_order,
        t.max_gpus,
        t.slurm_partition,
        t.cpus_per_gpu,
        t.mem_gb_per_gpu
    )
    .fetch_one(conn.conn())
    .await?
    ;
    Ok(id)
}

/// Tiers, best first.
#[dual]
pub async fn list_tiers(conn: &mut impl AsConn) -> Result<Vec<TierView>, sqlx::Error> {
    let rows = sqlx::query!(
        r#"SELECT name, display_name, vram_gb, tflops, sort_order, max_gpus, max_time_limit_minutes,
                  slurm_partition, cpus_per_gpu, mem_gb_per_gpu, active <> 0 AS "active!: bool"
           FROM tiers ORDER BY sort_order DESC, name"#
    )
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| TierView {
            name: r.name,
            display_name: r.display_name,
            vram_gb: r.vram_gb,
            tflops: r.tflops,
            sort_order: r.sort_order,
            max_gpus: r.max_gpus,
            max_time_limit_minutes: r.max_time_limit_minutes,
            slurm_partition: r.slurm_partition,
            cpus_per_gpu: r.cpus_per_gpu,
            mem_gb_per_gpu: r.mem_gb_per_gpu,
            active: r.active,
        })
        .collect())
}

/// Adds a node with `count` GPUs of each listed tier, indices from 0 in
/// the order given.
#[dual]
pub async fn insert_node(
    conn: &mut WriteTx,
    name: &str,
    gpus: &[(i64, u32)],
    source: &str,
    now_ms: i64,
) -> Result<i64, sqlx::Error> {
    let node_id = sqlx::query_scalar!(
        "INSERT INTO nodes (name, source, created_at) VALUES (?, ?, ?) RETURNING id AS \"id!: i64\"",
        name,
        source,
        now_ms
    )
    .fetch_one(conn.conn())
    .await?;
    let mut index: i64 = 0;
    for &(tier_id, count) in gpus {
        for _ in 0..count {
            sqlx::query!("INSERT INTO gpus (node_id, tier_id, gpu_index) VALUES (?, ?, ?)", node_id, tier_id, index)
                .execute(conn.conn())
                .await?;
            index += 1;
        }
    }
    Ok(node_id)
}

/// Nodes by name, each with its GPUs by index.
#[dual]
pub async fn list_nodes(conn: &mut impl AsConn) -> Result<Vec<NodeView>, sqlx::Error> {
    let rows = sqlx::query!(
        r#"SELECT n.name AS node, n.state, t.name AS "tier?", g.gpu_index AS "gpu_index?"
           FROM nodes n
           LEFT JOIN gpus g ON g.node_id = n.id
           LEFT JOIN tiers t ON t.id = g.tier_id
           ORDER BY n.name, g.gpu_index"#
    )
    .fetch_all(&mut *conn)
    .await?;
    let mut nodes: Vec<NodeView> = Vec::new();
    for r in rows {
        if nodes.last().map(|n| n.name != r.node).unwrap_or(true) {
            let state: NodeState = r.state.parse().map_err(|e| sqlx::Error::Decode(Box::new(e)))?;
            nodes.push(NodeView { name: r.node.clone(), state, gpus: Vec::new() });
        }
        if let (Some(tier), Some(index), Some(node)) = (r.tier, r.gpu_index, nodes.last_mut()) {
            node.gpus.push(GpuView { tier, index, used_by: app::model::GpuUse::Idle });
        }
    }
    Ok(nodes)
}

/// Makes the nodes table follow the executor's inventory (Slurm): new
/// nodes are added with their GPUs (GPU types that are not a tier are
/// skipped, with a warning), nodes it reports down or does not report are
/// DOWN, and nodes it reports up are UP unless an admin drains them; each
/// node's address follows Slurm's `NodeAddr`.
/// Existing nodes keep their GPU rows (running attempts refer to them).
#[dual]
pub async fn sync_inventory(
    conn: &mut WriteTx,
    inventory: &[crate::executor::NodeInventory],
    now_ms: i64,
) -> Result<(), sqlx::Error> {
    let tiers: std::collections::HashMap<String, i64> = sqlx::query!(r#"SELECT id AS "id!", name FROM tiers"#)
        .fetch_all(conn.conn())
        .await?
        .into_iter()
        .map(|t| (t.name, t.id))
        .collect();
    let known: std::collections::HashMap<String, String> = sqlx::query!("SELECT name, state FROM nodes")
        .fetch_all(conn.conn())
        .await?
        .into_iter()
        .map(|n| (n.name, n.state))
        .collect();
    for node in inventory {
        match known.get(&node.name) {
            None => {
                let mut gpus = Vec::new();
                for (kind, count) in &node.gpus {
                    match tiers.get(kind) {
                        Some(id) => gpus.push((*id, *count)),
                        None => {
                            tracing::warn!(node = %node.name, gpu_type = %kind, "GPU type is not a tier; add the tier to use these GPUs")
                        }
                    }
                }
                if gpus.is_empty() {
                    continue;
                }
                insert_node(conn, &node.name, &gpus, "slurm", now_ms).await?;
                if !node.up {
                    set_node_state(conn, &node.name, "DOWN").await?;
                }
            }
            Some(state) => {
                let wanted = match (node.up, state.as_str()) {
                    (true, "DRAINING") => "DRAINING",
                    (true, _) => "UP",
                    (false, _) => "DOWN",
                };
                if wanted != state {
                    set_node_state(conn, &node.name, wanted).await?;
                }
            }
        }
        // where the site reaches it (a session's app); written only when it changed
        let addr = node.addr.as_deref();
        sqlx::query!("UPDATE nodes SET addr = ?1 WHERE name = ?2 AND addr IS DISTINCT FROM ?1", addr, node.name)
            .execute(conn.conn())
            .await?;
    }
    for (name, state) in &known {
        if state != "DOWN" && !inventory.iter().any(|n| &n.name == name) {
            set_node_state(conn, name, "DOWN").await?;
        }
    }
    Ok(())
}

#[dual]
pub async fn set_node_state(conn: &mut WriteTx, name: &str, state: &str) -> Result<(), sqlx::Error> {
    sqlx::query!("UPDATE nodes SET state = ? WHERE name = ?", state, name).execute(conn.conn()).await?;
    Ok(())
}

#[dual]
pub async fn tier_id(conn: &mut impl AsConn, name: &str) -> Result<Option<i64>, sqlx::Error> {
    sqlx::query_scalar!(r#"SELECT id AS "id!" FROM tiers WHERE name = ?"#, name).fetch_optional(&mut *conn).await
}

/// Writes every editable column of the tier named `t.name`.
#[dual]
pub async fn update_tier(conn: &mut WriteTx, t: &TierView) -> Result<(), sqlx::Error> {
    let active = i64::from(t.active);
    sqlx::query!(
        "UPDATE tiers SET display_name = ?, vram_gb = ?, tflops = ?, sort_order = ?, max_gpus = ?,
                max_time_limit_minutes = ?, slurm_partition = ?, cpus_per_gpu = ?, mem_gb_per_gpu = ?, active = ?
         WHERE name = ?",
        t.display_name,
        t.vram_gb,
        t.tflops,
        t.sort_order,
        t.max_gpus,
        t.max_time_limit_minutes,
        t.slurm_partition,
        t.cpus_per_gpu,
        t.mem_gb_per_gpu,
        active,
        t.name
    )
    .execute(conn.conn())
    .await?;
    Ok(())
}

/// Research attempts and backfill instances on the node now.
#[dual]
pub async fn node_in_use(conn: &mut impl AsConn, name: &str) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar!(
        r#"SELECT (SELECT COUNT(*) FROM job_attempts WHERE node = ?1 AND phase IN ('DISPATCHING', 'RUNNING'))
                + (SELECT COUNT(*) FROM backfill_instances WHERE node = ?1 AND ended_at IS NULL) AS "n!: i64""#,
        name
    )
    .fetch_one(&mut *conn)
    .await
}

/// Removes the node and its GPU rows; false when there was none.
#[dual]
pub async fn delete_node(conn: &mut WriteTx, name: &str) -> Result<bool, sqlx::Error> {
    Ok(sqlx::query!("DELETE FROM nodes WHERE name = ?", name).execute(conn.conn()).await?.rows_affected() > 0)
}
