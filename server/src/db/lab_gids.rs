//! Labs' unix gids (policy §13: a share's group): the one a lab's group
//! has in the directory, else one handed out from `storage.lab_gid_range`.

use db_macros::dual;

use super::AsConn;

use super::WriteTx;

/// A lab's gid (its share's group), when it has one.
#[dual]
pub async fn lab_gid(conn: &mut impl AsConn, lab_id: i64) -> Result<Option<i64>, sqlx::Error> {
    Ok(sqlx::query_scalar!("SELECT unix_gid FROM labs WHERE id = ?", lab_id)
        .fetch_optional(&mut *conn)
        .await?
        .flatten())
}

/// A lab holding a gid: its id, name, gid and whether the directory gave it.
#[derive(Debug, Clone, PartialEq)]
pub struct Holder {
    pub id: i64,
    pub name: String,
    pub gid: Option<i64>,
    pub from_directory: bool,
}

/// The lab `lab_id` as [`Holder`].
#[dual]
pub async fn of_lab(conn: &mut impl AsConn, lab_id: i64) -> Result<Option<Holder>, sqlx::Error> {
    let row = sqlx::query!(
        r#"SELECT id AS "id!", name, unix_gid, unix_gid_from_directory <> 0 AS "from_directory!: bool" FROM labs WHERE id = ?"#,
        lab_id
    )
    .fetch_optional(&mut *conn)
    .await?;
    Ok(row.map(|r| Holder { id: r.id, name: r.name, gid: r.unix_gid, from_directory: r.from_directory }))
}

/// The lab other than `except` that holds `gid`.
#[dual]
pub async fn holding(conn: &mut impl AsConn, gid: i64, except: i64) -> Result<Option<Holder>, sqlx::Error> {
    let row = sqlx::query!(
        r#"SELECT id AS "id!", name, unix_gid, unix_gid_from_directory <> 0 AS "from_directory!: bool"
           FROM labs WHERE unix_gid = ? AND id != ?"#,
        gid,
        except
    )
    .fetch_optional(&mut *conn)
    .await?;
    Ok(row.map(|r| Holder { id: r.id, name: r.name, gid: r.unix_gid, from_directory: r.from_directory }))
}

/// Sets a lab's gid (None: the next allocation hands it a new one).
#[dual]
pub async fn set(conn: &mut WriteTx, lab_id: i64, gid: Option<i64>, from_directory: bool) -> Result<(), sqlx::Error> {
    let from_directory = i64::from(from_directory);
    sqlx::query!("UPDATE labs SET unix_gid = ?, unix_gid_from_directory = ? WHERE id = ?", gid, from_directory, lab_id)
        .execute(conn.conn())
        .await?;
    Ok(())
}

/// Never hands `gid` out again (a lab gave it up; its running jobs carry it).
#[dual]
pub async fn retire(conn: &mut WriteTx, gid: i64, lab_id: i64, now_ms: i64) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "INSERT INTO lab_gids_retired (gid, lab_id, retired_at) VALUES (?, ?, ?)
         ON CONFLICT (gid) DO UPDATE SET lab_id = excluded.lab_id, retired_at = excluded.retired_at",
        gid,
        lab_id,
        now_ms
    )
    .execute(conn.conn())
    .await?;
    Ok(())
}

/// The lab that gave `gid` up, if one did.
#[dual]
pub async fn retired_by(conn: &mut impl AsConn, gid: i64) -> Result<Option<i64>, sqlx::Error> {
    Ok(sqlx::query_scalar!("SELECT lab_id FROM lab_gids_retired WHERE gid = ?", gid)
        .fetch_optional(&mut *conn)
        .await?
        .flatten())
}

/// Notes that the lab's share holds files of `from_gid` to regroup.
#[dual]
pub async fn add_regroup(conn: &mut WriteTx, lab_id: i64, from_gid: i64, now_ms: i64) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "INSERT INTO lab_regroups (lab_id, from_gid, since) VALUES (?, ?, ?) ON CONFLICT (lab_id, from_gid) DO NOTHING",
        lab_id,
        from_gid,
        now_ms
    )
    .execute(conn.conn())
    .await?;
    Ok(())
}

/// A pending regroup: the lab's id and name, the old gid, the lab's gid now.
#[derive(Debug, Clone, PartialEq)]
pub struct Regroup {
    pub lab_id: i64,
    pub lab: String,
    pub from_gid: i64,
    pub to_gid: Option<i64>,
}

/// Every pending regroup, oldest first.
#[dual]
pub async fn pending_regroups(conn: &mut impl AsConn) -> Result<Vec<Regroup>, sqlx::Error> {
    let rows = sqlx::query!(
        r#"SELECT r.lab_id, l.name, r.from_gid, l.unix_gid FROM lab_regroups r JOIN labs l ON l.id = r.lab_id
           ORDER BY r.since, r.lab_id"#
    )
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| Regroup { lab_id: r.lab_id, lab: r.name, from_gid: r.from_gid, to_gid: r.unix_gid })
        .collect())
}

/// The regroup is done (a whole walk saw every entry).
#[dual]
pub async fn regroup_done(conn: &mut WriteTx, lab_id: i64, from_gid: i64) -> Result<(), sqlx::Error> {
    sqlx::query!("DELETE FROM lab_regroups WHERE lab_id = ? AND from_gid = ?", lab_id, from_gid)
        .execute(conn.conn())
        .await?;
    Ok(())
}

/// How many jobs that may carry the lab's gid hold GPUs now: submitted
/// in the lab, or of someone in it now (a start gives the person's lab's
/// gid as it is then).
#[dual]
pub async fn jobs_holding(conn: &mut impl AsConn, lab_id: i64) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar!(
        r#"SELECT COUNT(*) AS "n!" FROM jobs j JOIN users u ON u.id = j.user_id
           WHERE (j.lab_id = ?1 OR u.lab_id = ?1) AND j.state IN ('DISPATCHING', 'RUNNING', 'CANCELLING')"#,
        lab_id
    )
    .fetch_one(&mut *conn)
    .await
}

/// Gives each lab without a gid the first free one of `first..=last`;
/// returns what it gave.
#[dual]
pub async fn allocate(
    conn: &mut WriteTx,
    first: i64,
    last: i64,
    taken: impl Fn(i64) -> bool,
) -> Result<Vec<(String, i64)>, sqlx::Error> {
    let waiting = sqlx::query!(r#"SELECT id AS "id!", name FROM labs WHERE unix_gid IS NULL ORDER BY id"#)
        .fetch_all(conn.conn())
        .await?;
    if waiting.is_empty() {
        return Ok(Vec::new());
    }
    // never one a lab holds or gave up
    let used: std::collections::HashSet<i64> = sqlx::query_scalar!(
        r#"SELECT unix_gid AS "gid!" FROM labs WHERE unix_gid IS NOT NULL
           UNION SELECT gid AS "gid!" FROM lab_gids_retired"#
    )
    .fetch_all(conn.conn())
    .await?
    .into_iter()
    .collect();
    let mut free = (first..=last).filter(|gid| !used.contains(gid) && !taken(*gid));
    let mut given = Vec::with_capacity(waiting.len());
    for lab in waiting {
        let Some(gid) = free.next() else { break };
        sqlx::query!("UPDATE labs SET unix_gid = ? WHERE id = ?", gid, lab.id).execute(conn.conn()).await?;
        given.push((lab.name, gid));
    }
    Ok(given)
}
