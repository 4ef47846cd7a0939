//! Browser sessions kept in the database (`console_sessions`), so that
//! with several instances on PostgreSQL any of them serves any browser
//! (api.md "High availability"): tower-sessions' store for the database
//! `database.url` names.

use async_trait::async_trait;
use tower_sessions::session::{Id, Record};
use tower_sessions::session_store::{ExpiredDeletion, Result, SessionStore};
use tower_sessions_sqlx_store::{PostgresStore, SqliteStore};

use super::Pool;

const TABLE: &str = "console_sessions";

#[derive(Debug, Clone)]
pub enum ConsoleSessions {
    Sqlite(SqliteStore),
    Postgres(PostgresStore),
}

impl ConsoleSessions {
    /// The store on `pool`, its table made when missing.
    pub async fn open(pool: &Pool) -> sqlx::Result<Self> {
        let store = match pool {
            Pool::Sqlite(p) => Self::Sqlite(SqliteStore::new(p.clone()).with_table_name(TABLE).expect("a valid name")),
            Pool::Postgres(p) => {
                Self::Postgres(PostgresStore::new(p.clone()).with_table_name(TABLE).expect("a valid name"))
            }
        };
        match &store {
            Self::Sqlite(s) => s.migrate().await?,
            Self::Postgres(s) => s.migrate().await?,
        }
        Ok(store)
    }
}

#[async_trait]
impl SessionStore for ConsoleSessions {
    async fn create(&self, record: &mut Record) -> Result<()> {
        match self {
            Self::Sqlite(s) => s.create(record).await,
            Self::Postgres(s) => s.create(record).await,
        }
    }

    async fn save(&self, record: &Record) -> Result<()> {
        match self {
            Self::Sqlite(s) => s.save(record).await,
            Self::Postgres(s) => s.save(record).await,
        }
    }

    async fn load(&self, id: &Id) -> Result<Option<Record>> {
        match self {
            Self::Sqlite(s) => s.load(id).await,
            Self::Postgres(s) => s.load(id).await,
        }
    }

    async fn delete(&self, id: &Id) -> Result<()> {
        match self {
            Self::Sqlite(s) => s.delete(id).await,
            Self::Postgres(s) => s.delete(id).await,
        }
    }
}

#[async_trait]
impl ExpiredDeletion for ConsoleSessions {
    async fn delete_expired(&self) -> Result<()> {
        match self {
            Self::Sqlite(s) => s.delete_expired().await,
            Self::Postgres(s) => s.delete_expired().await,
        }
    }
}
