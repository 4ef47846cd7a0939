//! Labs' unix gids (policy §13: a share's group): the one a lab's group
//! has in the directory, else one handed out from `storage.lab_gid_range`.

use sqlx::SqliteConnection;

use super::WriteTx;

/// A lab's gid (its share's group), when it has one.
pub async fn lab_gid(conn: &mut SqliteConnection, lab_id: i64) -> Result<Option<i64>, sqlx::Error> {
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
pub async fn of_lab(conn: &mut SqliteConnection, lab_id: i64) -> Result<Option<Holder>, sqlx::Error> {
    let row = sqlx::query!(
        r#"SELECT id AS "id!", name, unix_gid, unix_gid_from_directory AS "from_directory!: bool" FROM labs WHERE id = ?"#,
        lab_id
    )
    .fetch_optional(&mut *conn)
    .await?;
    Ok(row.map(|r| Holder { id: r.id, name: r.name, gid: r.unix_gid, from_directory: r.from_directory }))
}

/// The lab other than `except` that holds `gid`.
pub async fn holding(conn: &mut SqliteConnection, gid: i64, except: i64) -> Result<Option<Holder>, sqlx::Error> {
    let row = sqlx::query!(
        r#"SELECT id AS "id!", name, unix_gid, unix_gid_from_directory AS "from_directory!: bool"
           FROM labs WHERE unix_gid = ? AND id != ?"#,
        gid,
        except
    )
    .fetch_optional(&mut *conn)
    .await?;
    Ok(row.map(|r| Holder { id: r.id, name: r.name, gid: r.unix_gid, from_directory: r.from_directory }))
}

/// Sets a lab's gid (None: the next allocation hands it a new one).
pub async fn set(conn: &mut WriteTx, lab_id: i64, gid: Option<i64>, from_directory: bool) -> Result<(), sqlx::Error> {
    sqlx::query!("UPDATE labs SET unix_gid = ?, unix_gid_from_directory = ? WHERE id = ?", gid, from_directory, lab_id)
        .execute(conn.conn())
        .await?;
    Ok(())
}

/// Every lab's name and gid (those with one).
pub async fn all(conn: &mut SqliteConnection) -> Result<Vec<(String, i64)>, sqlx::Error> {
    let rows = sqlx::query!(r#"SELECT name, unix_gid AS "gid!" FROM labs WHERE unix_gid IS NOT NULL ORDER BY id"#)
        .fetch_all(&mut *conn)
        .await?;
    Ok(rows.into_iter().map(|r| (r.name, r.gid)).collect())
}

/// Gives each lab without a gid the first free one of `first..=last`;
/// returns what it gave.
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
    let used: std::collections::HashSet<i64> =
        sqlx::query_scalar!(r#"SELECT unix_gid AS "gid!" FROM labs WHERE unix_gid IS NOT NULL"#)
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
