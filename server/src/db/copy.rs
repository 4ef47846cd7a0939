//! `jpu-share migrate-db --to postgres://…` (api.md "High availability
//! and PostgreSQL"): a SQLite site's whole history copied into a
//! PostgreSQL database that holds none of our tables yet.
//!
//! All or nothing: the schema (`MIGRATOR_PG`), every row and the count
//! check run in one PostgreSQL transaction, so a copy that fails midway
//! (a lost connection, a row PostgreSQL refuses, counts that differ)
//! leaves the database as empty as it was and can simply be run again.
//! The SQLite side is read in one read transaction: one snapshot, even if
//! a server still wrote to it. Tables are filled parents first (their
//! foreign keys, from `pg_constraint`), rows in id order (a token's
//! parent comes before it), with their ids, so jobs, tokens and audit
//! entries keep their numbers; identity sequences then continue after the
//! highest id. Browser sessions are not copied (people sign in again).

use std::collections::{BTreeMap, BTreeSet};
use std::str::FromStr;

use futures_util::TryStreamExt;
use sqlx::{Connection, Row};

use super::{redacted, MigrationState, Pool, MIGRATOR_PG};

/// Rows per INSERT: PostgreSQL takes at most 65,535 parameters in one.
const MAX_PARAMETERS: usize = 60_000;

#[derive(Debug, thiserror::Error)]
pub enum CopyError {
    #[error("migrate-db copies a SQLite site; database.url is {0}")]
    SourceNotSqlite(String),
    #[error("--to must be a postgres:// (or postgresql://) URL, not {0}")]
    TargetNotPostgres(String),
    #[error("the SQLite database: {0}")]
    Source(String),
    #[error(
        "the SQLite database is not at this binary's schema ({0}): start this version's `jpu-share serve` on it once, stop it, then copy"
    )]
    NotCurrent(String),
    #[error("cannot reach {url}: {source}")]
    Target { url: String, source: sqlx::Error },
    #[error("{url} already holds jpu-share's tables ({tables}): migrate-db only fills a database that holds none of them (make a new one with `createdb`)")]
    NotEmpty { url: String, tables: String },
    #[error("the column {table}.{column} has a type migrate-db does not copy ({kind})")]
    Unsupported { table: String, column: String, kind: String },
    #[error("{table}: {source}")]
    Copy { table: String, source: sqlx::Error },
    #[error("{table}: {in_sqlite} rows in SQLite, {copied} in PostgreSQL; nothing was kept")]
    Counts { table: String, in_sqlite: i64, copied: i64 },
}

/// What a copy did: each table with its rows, in the order filled.
#[derive(Debug, Default)]
pub struct Copied {
    pub tables: Vec<(String, i64)>,
}

/// A column as PostgreSQL types it.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Int,
    Float,
    Text,
    Bytes,
}

/// Copies the SQLite database `source` (a pool `db::open_existing` made)
/// into the PostgreSQL database `to`; `progress` hears each table as it
/// is done.
pub async fn to_postgres(source: &Pool, to: &str, mut progress: impl FnMut(&str, i64)) -> Result<Copied, CopyError> {
    let Pool::Sqlite(sqlite) = source else {
        return Err(CopyError::SourceNotSqlite("a PostgreSQL database".into()));
    };
    check_current(&super::migrations(source).await.map_err(|e| CopyError::Source(e.to_string()))?)?;
    let to = to.trim();
    if !super::is_postgres_url(to) {
        return Err(CopyError::TargetNotPostgres(redacted(to)));
    }
    let target_error = |source: sqlx::Error| CopyError::Target { url: redacted(to), source };
    let options = sqlx::postgres::PgConnectOptions::from_str(to).map_err(target_error)?;
    let mut pg = sqlx::postgres::PgConnection::connect_with(&options).await.map_err(target_error)?;
    let mut read = sqlite.begin().await.map_err(|e| CopyError::Source(e.to_string()))?;
    let ours = sqlite_tables(&mut read).await.map_err(|e| CopyError::Source(e.to_string()))?;
    // tables of someone else's may stay: they are neither checked nor copied
    let before = present_tables(&mut pg).await.map_err(target_error)?;
    let held: Vec<String> = before.iter().filter(|t| *t == "_sqlx_migrations" || ours.contains(*t)).cloned().collect();
    if !held.is_empty() {
        return Err(CopyError::NotEmpty { url: redacted(to), tables: held.join(", ") });
    }

    let mut tx = pg.begin().await.map_err(target_error)?;
    MIGRATOR_PG.run(&mut *tx).await.map_err(|e| CopyError::Copy { table: "(schema)".into(), source: e.into() })?;
    let mut columns = target_columns(&mut tx).await?;
    columns.retain(|table, _| !before.contains(table));
    let order = parents_first(&mut tx, columns.keys().cloned().collect()).await.map_err(target_error)?;
    // rows the schema itself put in (the one-row tables): the copy's win
    for table in order.iter().rev() {
        sqlx::query(&format!("DELETE FROM {}", quoted(table)))
            .execute(&mut *tx)
            .await
            .map_err(|source| CopyError::Copy { table: table.clone(), source })?;
    }
    let mut copied = Copied::default();
    for table in &order {
        let cols = &columns[table];
        if !ours.contains(table) {
            return Err(CopyError::Source(format!("it has no table {table}, which this binary's schema has")));
        }
        let rows = copy_table(&mut read, &mut tx, table, cols).await?;
        let sql = format!("SELECT COUNT(*) FROM {}", quoted(table));
        let in_source: i64 = sqlx::query_scalar(&sql)
            .fetch_one(&mut *read)
            .await
            .map_err(|source| CopyError::Copy { table: table.clone(), source })?;
        let in_target: i64 = sqlx::query_scalar(&sql)
            .fetch_one(&mut *tx)
            .await
            .map_err(|source| CopyError::Copy { table: table.clone(), source })?;
        if in_source != in_target || rows != in_target {
            return Err(CopyError::Counts { table: table.clone(), in_sqlite: in_source, copied: in_target });
        }
        progress(table, in_target);
        copied.tables.push((table.clone(), in_target));
    }
    continue_identities(&mut tx, &columns).await.map_err(target_error)?;
    // whoever held the lease on the old site does not run here
    sqlx::query("UPDATE scheduler_lease SET holder = '', renewed_at = 0")
        .execute(&mut *tx)
        .await
        .map_err(target_error)?;
    tx.commit().await.map_err(target_error)?;
    read.rollback().await.map_err(|e| CopyError::Source(e.to_string()))?;
    Ok(copied)
}

fn check_current(state: &MigrationState) -> Result<(), CopyError> {
    if !state.unknown.is_empty() {
        return Err(CopyError::NotCurrent(format!("a newer jpu-share ran on it: {:?}", state.unknown)));
    }
    if let Some((version, description)) = state.pending.first() {
        return Err(CopyError::NotCurrent(format!(
            "{} migration(s) pending, the first {version} {description}",
            state.pending.len()
        )));
    }
    Ok(())
}

/// `"name"`, for names read from the catalogues (ours: letters and `_`).
fn quoted(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

async fn sqlite_tables(conn: &mut sqlx::SqliteConnection) -> Result<BTreeSet<String>, sqlx::Error> {
    let names: Vec<String> = sqlx::query_scalar(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> '_sqlx_migrations'",
    )
    .fetch_all(conn)
    .await?;
    Ok(names.into_iter().collect())
}

async fn present_tables(conn: &mut sqlx::PgConnection) -> Result<Vec<String>, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT table_name::TEXT FROM information_schema.tables
         WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY 1",
    )
    .fetch_all(conn)
    .await
}

/// Each table of the new schema with its columns (in their order).
async fn target_columns(conn: &mut sqlx::PgConnection) -> Result<BTreeMap<String, Vec<(String, Kind)>>, CopyError> {
    let rows: Vec<(String, String, String)> = sqlx::query_as(
        "SELECT c.table_name::TEXT, c.column_name::TEXT, c.data_type::TEXT
         FROM information_schema.columns c
         JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
         WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE' AND c.table_name <> '_sqlx_migrations'
         ORDER BY c.table_name, c.ordinal_position",
    )
    .fetch_all(&mut *conn)
    .await
    .map_err(|source| CopyError::Copy { table: "(catalogue)".into(), source })?;
    let mut tables: BTreeMap<String, Vec<(String, Kind)>> = BTreeMap::new();
    for (table, column, kind) in rows {
        let k = match kind.as_str() {
            "bigint" | "integer" | "smallint" => Kind::Int,
            "double precision" | "real" => Kind::Float,
            "text" => Kind::Text,
            "bytea" => Kind::Bytes,
            _ => return Err(CopyError::Unsupported { table, column, kind }),
        };
        tables.entry(table).or_default().push((column, k));
    }
    Ok(tables)
}

/// The tables in an order where every table comes after those its
/// foreign keys point at (a key to itself is met by the id order).
async fn parents_first(conn: &mut sqlx::PgConnection, tables: Vec<String>) -> Result<Vec<String>, sqlx::Error> {
    let edges: Vec<(String, String)> = sqlx::query_as(
        "SELECT c.conrelid::regclass::TEXT, c.confrelid::regclass::TEXT FROM pg_constraint c
         WHERE c.contype = 'f' AND c.connamespace = current_schema()::regnamespace",
    )
    .fetch_all(conn)
    .await?;
    let unquote = |s: String| s.trim_matches('"').to_string();
    let parents: BTreeMap<String, BTreeSet<String>> = tables
        .iter()
        .map(|t| {
            let of: BTreeSet<String> = edges
                .iter()
                .filter(|(child, parent)| unquote(child.clone()) == *t && unquote(parent.clone()) != *t)
                .map(|(_, parent)| unquote(parent.clone()))
                .collect();
            (t.clone(), of)
        })
        .collect();
    let mut order: Vec<String> = Vec::with_capacity(tables.len());
    while order.len() < tables.len() {
        let before = order.len();
        for t in &tables {
            if !order.contains(t) && parents[t].iter().all(|p| order.contains(p) || !parents.contains_key(p)) {
                order.push(t.clone());
            }
        }
        if order.len() == before {
            // a cycle of keys (none in our schema): the rest as they come
            order.extend(tables.iter().filter(|t| !order.contains(t)).cloned().collect::<Vec<_>>());
        }
    }
    Ok(order)
}

/// One value read from SQLite, as PostgreSQL's column takes it.
enum Value {
    Int(Option<i64>),
    Float(Option<f64>),
    Text(Option<String>),
    Bytes(Option<Vec<u8>>),
}

/// Copies one table's rows; returns how many.
async fn copy_table(
    read: &mut sqlx::SqliteConnection,
    tx: &mut sqlx::PgConnection,
    table: &str,
    cols: &[(String, Kind)],
) -> Result<i64, CopyError> {
    let err = |source| CopyError::Copy { table: table.to_string(), source };
    let names: Vec<String> = cols.iter().map(|(c, _)| quoted(c)).collect();
    let order = if cols.iter().any(|(c, _)| c == "id") { " ORDER BY id" } else { "" };
    let select = format!("SELECT {} FROM {}{order}", names.join(", "), quoted(table));
    let per_insert = (MAX_PARAMETERS / cols.len().max(1)).max(1);
    let mut batch: Vec<Vec<Value>> = Vec::with_capacity(per_insert.min(4096));
    let mut copied = 0i64;
    let mut rows = sqlx::query(&select).fetch(&mut *read);
    while let Some(row) = rows.try_next().await.map_err(err)? {
        let mut values = Vec::with_capacity(cols.len());
        for (i, (_, kind)) in cols.iter().enumerate() {
            // SQLite's own conversion (a REAL column's value stored as an
            // integer reads as a float), as the column's type says
            values.push(match kind {
                Kind::Int => Value::Int(row.try_get_unchecked(i).map_err(err)?),
                Kind::Float => Value::Float(row.try_get_unchecked(i).map_err(err)?),
                Kind::Text => Value::Text(row.try_get_unchecked(i).map_err(err)?),
                Kind::Bytes => Value::Bytes(row.try_get_unchecked(i).map_err(err)?),
            });
        }
        batch.push(values);
        if batch.len() == per_insert {
            copied += insert(tx, table, &names, std::mem::take(&mut batch)).await.map_err(err)?;
        }
    }
    drop(rows);
    if !batch.is_empty() {
        copied += insert(tx, table, &names, batch).await.map_err(err)?;
    }
    Ok(copied)
}

async fn insert(
    tx: &mut sqlx::PgConnection,
    table: &str,
    names: &[String],
    rows: Vec<Vec<Value>>,
) -> Result<i64, sqlx::Error> {
    let mut query =
        sqlx::QueryBuilder::<sqlx::Postgres>::new(format!("INSERT INTO {} ({}) ", quoted(table), names.join(", ")));
    query.push_values(rows, |mut row, values| {
        for value in values {
            match value {
                Value::Int(v) => row.push_bind(v),
                Value::Float(v) => row.push_bind(v),
                Value::Text(v) => row.push_bind(v),
                Value::Bytes(v) => row.push_bind(v),
            };
        }
    });
    Ok(query.build().execute(tx).await?.rows_affected() as i64)
}

/// Identity columns continue after the highest id copied.
async fn continue_identities(
    tx: &mut sqlx::PgConnection,
    columns: &BTreeMap<String, Vec<(String, Kind)>>,
) -> Result<(), sqlx::Error> {
    let identities: Vec<(String, String)> = sqlx::query_as(
        "SELECT table_name::TEXT, column_name::TEXT FROM information_schema.columns
         WHERE table_schema = current_schema() AND is_identity = 'YES'",
    )
    .fetch_all(&mut *tx)
    .await?;
    for (table, column) in identities.into_iter().filter(|(t, _)| columns.contains_key(t)) {
        let sql = format!(
            "SELECT setval(pg_get_serial_sequence($1, $2), COALESCE(MAX({c}), 0) + 1, false) FROM {t}",
            c = quoted(&column),
            t = quoted(&table)
        );
        sqlx::query(&sql).bind(quoted(&table)).bind(&column).execute(&mut *tx).await?;
    }
    Ok(())
}
