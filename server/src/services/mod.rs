//! The services: where the rules and the transactions of every action
//! live. Both adapters — the /v1 handlers (`crate::http::v1`) and the
//! console backend (`crate::http::console`) — call these same functions,
//! so the API and the console cannot disagree.

pub mod account;
pub mod admin;
pub mod audit;
pub mod campus;
pub mod dashboard;
pub mod datasets;
pub mod device;
pub mod error;
pub mod files;
pub mod ha;
pub mod jobs;
pub mod metrics;
pub mod notifications;
pub mod policy_page;
pub mod reports;
pub mod sessions;
pub mod storage;
pub mod views;

pub use error::{ServiceError, ServiceResult};
pub mod workspaces;

use std::sync::Arc;

use crate::db::Pool;

use crate::auth::LoginThrottle;
use crate::config::Settings;

/// What every service function works with: the database, the settings
/// and the shared cells the scheduler loop and the services both touch.
/// The HTTP layer's `AppState` wraps it (and dereferences to it), so this
/// layer never sees axum or Leptos.
#[derive(Clone)]
pub struct Services {
    pub db: Pool,
    pub settings: Arc<Settings>,
    pub throttle: Arc<LoginThrottle>,
    /// Wakes the scheduler loop at once (submit, cancel, admin change).
    pub wake: Arc<tokio::sync::Notify>,
    /// Set by the scheduler loop when the executor cannot be reached.
    pub executor_health: ExecutorHealth,
    /// The queue views' shared read of the waiting jobs.
    pub queue_cache: Arc<views::QueueCache>,
    /// LLM backfill's settings in force (file + admin changes).
    pub backfill: admin::backfill::BackfillControl,
    /// Submits waiting to be written together.
    pub submits: Arc<jobs::submit_batch::SubmitBatcher>,
    /// The loop's latest start-time forecast (policy §11).
    pub forecast: Forecast,
    /// Sign-in through the university, when `auth.oidc.issuer` is set.
    pub oidc: Option<Arc<crate::auth::oidc::Oidc>>,
    /// The university's directory, when `directory.ldap.url` is set.
    pub directory: Option<Arc<crate::auth::directory::Directory>>,
    /// Who the directory lately said may stay signed in.
    pub admissions: Arc<campus::Admissions>,
    /// Traffic through the sessions' proxy not yet written down.
    pub sessions: Arc<sessions::Activity>,
    /// What the executor in use enforces on jobs (the Policy page).
    pub isolation: policy_page::IsolationCell,
    /// University sign-ins started, per address (a flood stores nothing).
    pub sign_in_starts: Arc<crate::auth::starts::SignInStarts>,
    /// Device sign-ins started, for the page the person approves on.
    pub device_requests: Arc<device::DeviceRequests>,
    /// Who reads the datasets on disk may have changed: wakes
    /// `datasets::access` (a dataset or a person changed).
    pub dataset_readers: Arc<tokio::sync::Notify>,
    /// A lab's gid moved: wakes `storage::regroups` (its share's files).
    pub lab_regroups: Arc<tokio::sync::Notify>,
    /// This instance in the scheduler's lease.
    pub lease: ha::Lease,
    /// Wake-ups for the other instances' scheduler (PostgreSQL).
    pub remote_wake: Arc<tokio::sync::Notify>,
}

impl Services {
    /// Wakes the scheduler loop, here or (PostgreSQL) on the instance
    /// that holds the lease.
    pub fn wake_scheduler(&self) {
        self.wake.notify_one();
        if self.lease.held().is_none() {
            self.remote_wake.notify_one();
        }
    }
}

/// Each waiting job's estimated start (ms), as the scheduler loop last
/// forecast it; read by the views, replaced whole by the loop.
#[derive(Clone, Default)]
pub struct Forecast(Arc<std::sync::RwLock<Arc<std::collections::HashMap<i64, i64>>>>);

impl Forecast {
    pub fn set(&self, starts: std::collections::HashMap<i64, i64>) {
        *self.0.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(starts);
    }

    pub fn get(&self) -> Arc<std::collections::HashMap<i64, i64>> {
        self.0.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// The estimate for one job, as RFC 3339.
    pub fn of(&self, job: i64) -> Option<String> {
        self.get().get(&job).map(|&ms| crate::clock::rfc3339(ms))
    }
}

/// Whether the executor answered the last cycle (`None` = it did).
#[derive(Clone, Default)]
pub struct ExecutorHealth(Arc<std::sync::RwLock<Option<String>>>);

impl ExecutorHealth {
    pub fn set(&self, problem: Option<String>) {
        *self.0.write().unwrap_or_else(|p| p.into_inner()) = problem;
    }

    pub fn problem(&self) -> Option<String> {
        self.0.read().unwrap_or_else(|p| p.into_inner()).clone()
    }
}
