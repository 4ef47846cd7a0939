//! The connections of either database (#45): [`Pool`] (SQLite's or
//! PostgreSQL's, by `database.url`), what it lends ([`PoolConn`]), a read
//! transaction ([`ReadTx`]), and [`AsConn`], which every query function of
//! this layer takes: each `#[dual]` function runs its SQLite or its
//! PostgreSQL copy by what it is given.

use sqlx::{PgPool, SqlitePool};

use super::{WriteInner, WriteTx};

/// The database pool: SQLite's (the embedded default) or PostgreSQL's.
#[derive(Debug, Clone)]
pub enum Pool {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

/// A connection the pool lends.
pub enum PoolConn {
    Sqlite(sqlx::pool::PoolConnection<sqlx::Sqlite>),
    Postgres(sqlx::pool::PoolConnection<sqlx::Postgres>),
}

/// A transaction that only reads (a consistent snapshot: the scheduler's
/// cycle and forecast).
pub enum ReadTx {
    Sqlite(sqlx::Transaction<'static, sqlx::Sqlite>),
    Postgres(sqlx::Transaction<'static, sqlx::Postgres>),
}

impl Pool {
    pub fn is_postgres(&self) -> bool {
        matches!(self, Pool::Postgres(_))
    }

    pub async fn acquire(&self) -> Result<PoolConn, sqlx::Error> {
        Ok(match self {
            Pool::Sqlite(pool) => PoolConn::Sqlite(pool.acquire().await?),
            Pool::Postgres(pool) => PoolConn::Postgres(pool.acquire().await?),
        })
    }

    /// A read transaction. On PostgreSQL it is `REPEATABLE READ`: one
    /// snapshot for every query in it, as SQLite's (WAL) gives.
    pub async fn begin(&self) -> Result<ReadTx, sqlx::Error> {
        Ok(match self {
            Pool::Sqlite(pool) => ReadTx::Sqlite(pool.begin().await?),
            Pool::Postgres(pool) => {
                ReadTx::Postgres(pool.begin_with("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY").await?)
            }
        })
    }

    pub async fn close(&self) {
        match self {
            Pool::Sqlite(pool) => pool.close().await,
            Pool::Postgres(pool) => pool.close().await,
        }
    }

    /// SQLite's pool (the online backup, the database file's guard).
    pub fn as_sqlite(&self) -> Option<&SqlitePool> {
        match self {
            Pool::Sqlite(pool) => Some(pool),
            Pool::Postgres(_) => None,
        }
    }
}

impl ReadTx {
    pub async fn rollback(self) -> Result<(), sqlx::Error> {
        match self {
            ReadTx::Sqlite(tx) => tx.rollback().await,
            ReadTx::Postgres(tx) => tx.rollback().await,
        }
    }
}

/// A connection of either database, as the query functions of this layer
/// take it (`#[dual]`): a pooled connection, a plain one or a write
/// transaction. Each query function runs its copy for the database
/// `is_postgres` names, and asks for that database's connection only.
pub trait AsConn: Send {
    fn is_postgres(&self) -> bool;
    fn sqlite(&mut self) -> &mut sqlx::SqliteConnection;
    fn postgres(&mut self) -> &mut sqlx::PgConnection;
}

const NOT_SQLITE: &str = "a PostgreSQL connection was asked for SQLite's (a #[dual] copy chose wrong)";
const NOT_POSTGRES: &str = "a SQLite connection was asked for PostgreSQL's (a #[dual] copy chose wrong)";

impl AsConn for sqlx::SqliteConnection {
    fn is_postgres(&self) -> bool {
        false
    }
    fn sqlite(&mut self) -> &mut sqlx::SqliteConnection {
        self
    }
    fn postgres(&mut self) -> &mut sqlx::PgConnection {
        unreachable!("{NOT_POSTGRES}")
    }
}

impl AsConn for sqlx::PgConnection {
    fn is_postgres(&self) -> bool {
        true
    }
    fn sqlite(&mut self) -> &mut sqlx::SqliteConnection {
        unreachable!("{NOT_SQLITE}")
    }
    fn postgres(&mut self) -> &mut sqlx::PgConnection {
        self
    }
}

impl AsConn for sqlx::pool::PoolConnection<sqlx::Sqlite> {
    fn is_postgres(&self) -> bool {
        false
    }
    fn sqlite(&mut self) -> &mut sqlx::SqliteConnection {
        self
    }
    fn postgres(&mut self) -> &mut sqlx::PgConnection {
        unreachable!("{NOT_POSTGRES}")
    }
}

impl AsConn for sqlx::pool::PoolConnection<sqlx::Postgres> {
    fn is_postgres(&self) -> bool {
        true
    }
    fn sqlite(&mut self) -> &mut sqlx::SqliteConnection {
        unreachable!("{NOT_SQLITE}")
    }
    fn postgres(&mut self) -> &mut sqlx::PgConnection {
        self
    }
}

impl AsConn for sqlx::Transaction<'_, sqlx::Sqlite> {
    fn is_postgres(&self) -> bool {
        false
    }
    fn sqlite(&mut self) -> &mut sqlx::SqliteConnection {
        self
    }
    fn postgres(&mut self) -> &mut sqlx::PgConnection {
        unreachable!("{NOT_POSTGRES}")
    }
}

impl AsConn for sqlx::Transaction<'_, sqlx::Postgres> {
    fn is_postgres(&self) -> bool {
        true
    }
    fn sqlite(&mut self) -> &mut sqlx::SqliteConnection {
        unreachable!("{NOT_SQLITE}")
    }
    fn postgres(&mut self) -> &mut sqlx::PgConnection {
        self
    }
}

impl AsConn for WriteTx {
    fn is_postgres(&self) -> bool {
        matches!(self.inner_ref(), WriteInner::Postgres(_))
    }
    fn sqlite(&mut self) -> &mut sqlx::SqliteConnection {
        match self.inner() {
            WriteInner::Sqlite(c) => c,
            WriteInner::Postgres(_) => unreachable!("{NOT_SQLITE}"),
        }
    }
    fn postgres(&mut self) -> &mut sqlx::PgConnection {
        match self.inner() {
            WriteInner::Postgres(c) => c,
            WriteInner::Sqlite(_) => unreachable!("{NOT_POSTGRES}"),
        }
    }
}

impl AsConn for PoolConn {
    fn is_postgres(&self) -> bool {
        matches!(self, PoolConn::Postgres(_))
    }
    fn sqlite(&mut self) -> &mut sqlx::SqliteConnection {
        match self {
            PoolConn::Sqlite(c) => c,
            PoolConn::Postgres(_) => unreachable!("{NOT_SQLITE}"),
        }
    }
    fn postgres(&mut self) -> &mut sqlx::PgConnection {
        match self {
            PoolConn::Postgres(c) => c,
            PoolConn::Sqlite(_) => unreachable!("{NOT_POSTGRES}"),
        }
    }
}

impl AsConn for ReadTx {
    fn is_postgres(&self) -> bool {
        matches!(self, ReadTx::Postgres(_))
    }
    fn sqlite(&mut self) -> &mut sqlx::SqliteConnection {
        match self {
            ReadTx::Sqlite(c) => c,
            ReadTx::Postgres(_) => unreachable!("{NOT_SQLITE}"),
        }
    }
    fn postgres(&mut self) -> &mut sqlx::PgConnection {
        match self {
            ReadTx::Postgres(c) => c,
            ReadTx::Sqlite(_) => unreachable!("{NOT_POSTGRES}"),
        }
    }
}

impl<T: AsConn + ?Sized> AsConn for &mut T {
    fn is_postgres(&self) -> bool {
        (**self).is_postgres()
    }
    fn sqlite(&mut self) -> &mut sqlx::SqliteConnection {
        (**self).sqlite()
    }
    fn postgres(&mut self) -> &mut sqlx::PgConnection {
        (**self).postgres()
    }
}
