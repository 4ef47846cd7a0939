//! Building the application is separate from running it: `build` opens
//! the database, seeds it on first start and binds the listener; `run_until`
//! serves until the given shutdown future resolves. Tests build on port 0
//! against a temp database and keep the address.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use leptos::prelude::LeptosOptions;
use tokio::net::TcpListener;
use tower_sessions::cookie::Key;

use crate::auth::LoginThrottle;
use crate::clock::now_ms;
use crate::config::Settings;
use crate::db;
use crate::executor::local::LocalExecutor;
use crate::executor::slurm::SlurmExecutor;
use crate::executor::Executor;
use crate::scheduler::Scheduler;
use crate::services::admin::seed;
use crate::state::AppState;

#[derive(Debug, thiserror::Error)]
pub enum StartupError {
    #[error(transparent)]
    Database(#[from] db::DbSetupError),
    #[error("database: {0}")]
    Query(#[from] sqlx::Error),
    #[error("seeding the database: {0}")]
    Seed(#[from] seed::SeedError),
    #[error("cannot listen on {bind}: {source}")]
    Bind { bind: String, source: std::io::Error },
    #[error("job isolation: {0}")]
    Isolation(String),
    #[error("{0}")]
    Settings(String),
    #[error(transparent)]
    Oidc(#[from] crate::auth::oidc::OidcError),
    #[error(transparent)]
    Directory(#[from] crate::auth::directory::DirectoryError),
}

/// Passwords for accounts created on this start, shown once.
pub use seed::Seeded;

pub struct Application {
    listener: TcpListener,
    router: Router,
    state: AppState,
    seeded: Option<Seeded>,
    executor: Option<Arc<dyn Executor>>,
}

impl Application {
    /// `bootstrap` gives the passwords of the accounts created on an empty
    /// database; see [`BootstrapPasswords::from_env`].
    pub async fn build(settings: Settings, bootstrap: BootstrapPasswords) -> Result<Self, StartupError> {
        crate::executor::egress::Registries::parse(&settings.workspaces.registries).map_err(StartupError::Settings)?;
        if !settings.executor.gpu_devices.contains("{index}") {
            return Err(StartupError::Settings(format!(
                "executor.gpu_devices `{}` must name a GPU's device node with {{index}} for its index (e.g. /dev/nvidia{{index}})",
                settings.executor.gpu_devices
            )));
        }
        let lease = if db::is_postgres_url(&settings.database.url) {
            settings.ha.periods().map_err(StartupError::Settings)?.0
        } else {
            Default::default()
        };
        let pool = db::connect(&settings.database, lease).await?;
        let seeded = seed::seed_if_empty(
            &pool,
            seed::SeedInput {
                admin_password: bootstrap.admin,
                demo_password: bootstrap.demo,
                demo: settings.demo.seed,
                demo_nodes: settings.executor.kind != crate::config::ExecutorKind::Slurm,
            },
            now_ms(),
        )
        .await?;
        if let Some(sqlite) = pool.as_sqlite() {
            protect_database(sqlite.connect_options().get_filename(), &settings.executor.output_root)
                .map_err(|e| StartupError::Isolation(format!("cannot make the database private: {e}")))?;
        }
        // ids the output folder has seen are never given again (a restored
        // database lags its output folder: #44)
        let seen = crate::executor::layout::Layout::new(&settings.executor.output_root).highest_job();
        if let Some(seen) = seen {
            let mut tx = db::write_tx(&pool).await?;
            db::jobs::raise_id_floor(&mut tx, seen).await?;
            tx.commit().await?;
        }
        let mut tx = db::write_tx(&pool).await?;
        crate::services::admin::allocate_uids(&settings, &mut tx)
            .await
            .map_err(|e| StartupError::Isolation(e.to_string()))?;
        tx.commit().await?;
        warn_if_unisolated(&settings);
        let mut tx = db::write_tx(&pool).await?;
        let interrupted = db::workspaces::fail_interrupted(&mut tx).await?;
        tx.commit().await?;
        if interrupted > 0 {
            tracing::warn!(interrupted, "workspace builds the last run left unfinished are marked FAILED");
        }

        let session_store = crate::db::console_sessions::ConsoleSessions::open(&pool).await?;
        let mut tx = db::write_tx(&pool).await?;
        let key_bytes = db::secrets::get_or_create(&mut tx, "session_key", 64).await?;
        tx.commit().await?;
        let session_key = Key::from(&key_bytes);
        // expired sessions would otherwise stay in the table forever
        tokio::spawn({
            let store = session_store.clone();
            async move {
                let _ = tower_sessions::session_store::ExpiredDeletion::continuously_delete_expired(
                    store,
                    // a pending university sign-in expires in minutes
                    Duration::from_secs(300),
                )
                .await;
            }
        });

        // `:PORT` is every interface (as Go servers and nginx read it)
        let bind = match settings.server.bind.strip_prefix(':') {
            Some(port) => format!("0.0.0.0:{port}"),
            None => settings.server.bind.clone(),
        };
        let listener = TcpListener::bind(&bind)
            .await
            .map_err(|source| StartupError::Bind { bind: settings.server.bind.clone(), source })?;
        let leptos = LeptosOptions::builder()
            .output_name("jpu-share")
            .site_root(settings.server.site_root.display().to_string())
            .site_pkg_dir("pkg")
            .build();
        let backfill = crate::services::admin::backfill::load(&settings.backfill, &mut pool.acquire().await?).await?;
        let oidc = crate::auth::oidc::Oidc::from_settings(&settings.auth.oidc, &settings.server.public_url)?;
        let directory = crate::auth::directory::Directory::from_settings(&settings.directory.ldap)?;
        if let Some(Err(e)) = directory.as_ref().map(|d| d.passwords_travel_safely()) {
            if oidc.is_none() && settings.auth.passwords {
                // the directory's passwords are the only way in: say so now
                return Err(StartupError::Settings(e.to_string()));
            }
            tracing::warn!(error = %e, "password sign-in for the directory's people is refused");
        }
        let services = crate::services::Services {
            oidc: oidc.map(Arc::new),
            directory: directory.map(Arc::new),
            admissions: Default::default(),
            backfill: crate::services::admin::backfill::BackfillControl::new(backfill),
            db: pool,
            throttle: Arc::new(LoginThrottle::new(
                settings.auth.max_failed_logins,
                settings.auth.max_failed_logins_per_address,
                Duration::from_secs(settings.auth.max_lockout_seconds),
            )),
            settings: Arc::new(settings),
            wake: Arc::new(tokio::sync::Notify::new()),
            executor_health: Default::default(),
            queue_cache: Default::default(),
            submits: Default::default(),
            forecast: Default::default(),
            sessions: Default::default(),
            isolation: Default::default(),
            sign_in_starts: Default::default(),
            device_requests: Default::default(),
            dataset_readers: Default::default(),
            lab_regroups: Default::default(),
            lease: Default::default(),
            remote_wake: Default::default(),
        };
        let state = AppState { services, leptos, metrics: crate::telemetry::metrics_handle() };
        let router = crate::http::router(state.clone(), session_store, session_key);
        let executor: Option<Arc<dyn Executor>> = match state.settings.executor.kind {
            crate::config::ExecutorKind::Local => Some(Arc::new(LocalExecutor::with_options(
                &state.settings.executor.output_root,
                Duration::from_secs(state.settings.cancel.grace_seconds),
                &state.settings.executor.apptainer,
                state.wake.clone(),
                crate::executor::local::LocalOptions {
                    pids_per_gpu: state.settings.executor.pids_per_gpu,
                    limits: write_limits(&state.settings),
                    allow_user_namespaces: state.settings.executor.allow_user_namespaces,
                    gpu_devices: crate::executor::devices::GpuDevices {
                        pattern: state.settings.executor.gpu_devices.clone(),
                        control: state.settings.executor.gpu_control_devices.clone(),
                    },
                },
            ))),
            crate::config::ExecutorKind::Slurm => Some(Arc::new(SlurmExecutor::new(
                &installation_id(&state.db).await?,
                &state.settings.executor.slurm_backfill_partition,
                &state.settings.executor.output_root,
                Duration::from_secs(state.settings.executor.slurm_command_timeout_seconds.max(1)),
                &state.settings.executor.apptainer,
                state.wake.clone(),
                write_limits(&state.settings),
            ))),
        };
        if let Some(executor) = &executor {
            state.isolation.set(executor.isolation());
        }
        let backfill = state.backfill.get();
        if backfill.enabled && backfill.command.trim().is_empty() {
            tracing::warn!("backfill.enabled is set but backfill.command is empty: no LLM backfill will run");
        }
        Ok(Self { listener, router, state, seeded, executor })
    }

    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    pub fn state(&self) -> &AppState {
        &self.state
    }

    /// Accounts created on this start whose passwords were generated.
    pub fn take_seeded(&mut self) -> Option<Seeded> {
        self.seeded.take()
    }

    /// Runs the scheduler loop with this executor instead of the
    /// configured one (it should wake `state().wake` when attempts end);
    /// `None` runs no loop (jobs are accepted and stay queued).
    pub fn set_executor(&mut self, executor: Option<Arc<dyn Executor>>) {
        self.state.isolation.set(executor.as_ref().map(|e| e.isolation()).unwrap_or_default());
        self.executor = executor;
    }

    pub fn scheduler(&self) -> Option<Scheduler> {
        let executor = self.executor.clone()?;
        let settings = &self.state.settings;
        Some(Scheduler {
            db: self.state.db.clone(),
            executor,
            wake: self.state.wake.clone(),
            cycle: Duration::from_millis(settings.scheduler.cycle_ms.max(1)),
            grace: Duration::from_secs(settings.cancel.grace_seconds),
            layout: crate::executor::layout::Layout::new(&settings.executor.output_root),
            places: crate::executor::places::Places::new(&settings.storage.root),
            health: self.state.executor_health.clone(),
            backfill: self.state.backfill.clone(),
            kill_unconfirmed_after: Duration::from_secs(settings.cancel.unconfirmed_after_seconds),
            idle_since: Default::default(),
            forecast: self.state.forecast.clone(),
            mode: settings.scheduler.mode(),
            forecasting: Default::default(),
            history: Default::default(),
            epoch: None,
            act_until: None,
        })
    }

    /// Serves (and runs the scheduler loop, if there is an executor) until
    /// `shutdown` resolves; then stops both.
    pub async fn run_until(self, shutdown: impl Future<Output = ()> + Send + 'static) -> std::io::Result<()> {
        let (stop_loop, loop_stopped) = tokio::sync::oneshot::channel::<()>();
        let mut scheduler = self.scheduler();
        let several = self.state.db.is_postgres();
        if let (Some(s), false) = (scheduler.as_mut(), several) {
            // one instance on SQLite: it schedules, under a new epoch; an
            // older loop on the same database is fenced from here on
            s.epoch = Some(crate::services::ha::take(&self.state.services).await.map_err(std::io::Error::other)?);
        }
        let services = self.state.services.clone();
        let scheduler = scheduler.map(|s| {
            let stopped = async move {
                let _ = loop_stopped.await;
            };
            // on PostgreSQL: a standby until it holds the lease
            if several {
                tokio::spawn(s.lead(services, stopped))
            } else {
                tokio::spawn(s.run(stopped))
            }
        });
        // notifications are delivered beside the loop, never in its cycle
        let (stop_notify, notify_stopped) = tokio::sync::oneshot::channel::<()>();
        let notifier = tokio::spawn(crate::services::notifications::deliver::run(
            self.state.db.clone(),
            self.state.settings.notify.clone(),
            self.state.services.duty(),
            async move {
                let _ = notify_stopped.await;
            },
        ));
        let (stop_sessions, sessions_stopped) = tokio::sync::oneshot::channel::<()>();
        let sessions = tokio::spawn(crate::services::sessions::watch::run(
            self.state.db.clone(),
            self.state.settings.clone(),
            self.state.sessions.clone(),
            self.state.wake.clone(),
            self.state.services.duty(),
            async move {
                let _ = sessions_stopped.await;
            },
        ));
        // several instances: a wake-up here reaches the scheduler there
        let wakes = self.state.db.is_postgres().then(|| {
            let (out, heard) = (self.state.services.clone(), self.state.services.clone());
            (
                tokio::spawn(crate::services::ha::announce_wakes(out)),
                tokio::spawn(crate::services::ha::hear_wakes(heard)),
            )
        });
        // with a directory, people it drops are off-boarded on a schedule
        let offboarding = tokio::spawn(crate::services::campus::offboarding_sweep(self.state.services.clone()));
        // without one, the provider is asked again with its refresh tokens
        let recheck = tokio::spawn(crate::services::campus::provider_recheck(self.state.services.clone()));
        // what homes and lab shares hold, against their quotas
        let usage = tokio::spawn(crate::services::storage::usage_scan(self.state.services.clone()));
        // lab shares whose gid moved: their files, walked in the background
        let regroups = tokio::spawn(crate::services::storage::regroups(self.state.services.clone()));
        // dataset fetches a stop cut off start again
        crate::services::datasets::resume_fetches(&self.state.services).await;
        // who reads the datasets on disk (Slurm jobs: their lab's view)
        let dataset_readers =
            tokio::spawn(crate::services::datasets::access::keep_in_step(self.state.services.clone()));
        // the peer address feeds the sign-in slow-down
        let service = self.router.into_make_service_with_connect_info::<SocketAddr>();
        // no Nagle: a session's kernel messages are small writes answered
        // at once, and waited 40 ms each for the peer's delayed ACK
        // (measured: a kernel round trip through the proxy 43 ms with it,
        // against 5 ms straight to the app)
        use axum::serve::ListenerExt as _;
        let listener = self.listener.tap_io(|tcp| {
            let _ = tcp.set_nodelay(true);
        });
        axum::serve(listener, service).with_graceful_shutdown(shutdown).await?;
        let _ = stop_loop.send(());
        let _ = stop_notify.send(());
        let _ = stop_sessions.send(());
        offboarding.abort();
        recheck.abort();
        usage.abort();
        regroups.abort();
        dataset_readers.abort();
        if let Some((out, heard)) = wakes {
            out.abort();
            heard.abort();
        }
        let _ = sessions.await;
        if let Some(handle) = scheduler {
            let _ = handle.await;
        }
        let _ = notifier.await;
        self.state.db.close().await;
        Ok(())
    }
}

/// Policy §8: no job may read the database (it holds the session key and
/// the sessions). The file and its WAL and shared-memory twins become
/// 0600 (installations made before this are fixed at start); its
/// directory 0700, or 0711 when the job output root lies inside it (jobs
/// then reach their own output directory by its path but can list
/// nothing). A shared directory such as /tmp (sticky) is left as it is.
fn protect_database(db_file: &std::path::Path, output_root: &std::path::Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let private =
        |path: &std::path::Path, mode: u32| match std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            other => other,
        };
    for suffix in ["", "-wal", "-shm"] {
        let mut name = db_file.as_os_str().to_owned();
        name.push(suffix);
        private(std::path::Path::new(&name), 0o600)?;
    }
    let dir = std::path::absolute(
        db_file.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(std::path::Path::new(".")),
    )?;
    if std::fs::metadata(&dir)?.permissions().mode() & 0o1000 != 0 {
        tracing::warn!(dir = %dir.display(), "the database lies in a shared (sticky) directory: only the file itself is made private");
        return Ok(());
    }
    let jobs_inside = std::path::absolute(output_root).is_ok_and(|root| root.starts_with(&dir));
    private(&dir, if jobs_inside { 0o711 } else { 0o700 })
}

/// A server that is not root cannot run a job as anyone but itself: it
/// refuses submits unless `executor.allow_unisolated` is set.
fn warn_if_unisolated(settings: &Settings) {
    if settings.executor.kind != crate::config::ExecutorKind::Local || nix::unistd::geteuid().is_root() {
        return;
    }
    if settings.executor.allow_unisolated {
        tracing::warn!("not running as root: jobs run as this server's own user, can read its database and each other's files (executor.allow_unisolated = true)");
    } else {
        tracing::warn!("not running as root, so jobs cannot be isolated from the server or each other: submits are refused (set executor.allow_unisolated = true on a one-person machine)");
    }
}

fn write_limits(settings: &Settings) -> crate::executor::limits::WriteLimits {
    let free = crate::executor::limits::free_bytes(&settings.executor.output_root);
    if let Some(free) = free.filter(|f| *f < settings.executor.max_output_bytes) {
        tracing::warn!(
            free,
            max_output_bytes = settings.executor.max_output_bytes,
            min_free_bytes = settings.executor.min_free_bytes,
            "one job's output may outgrow the free disk (executor.max_output_bytes): jobs that still write are \
             stopped when less than executor.min_free_bytes is left"
        );
    }
    crate::executor::limits::WriteLimits {
        max_log_bytes: settings.executor.max_log_bytes,
        max_output_bytes: settings.executor.max_output_bytes,
        min_free_bytes: settings.executor.min_free_bytes,
    }
}

/// A short random id of this database, kept in it (names our Slurm jobs).
async fn installation_id(db: &crate::db::Pool) -> Result<String, sqlx::Error> {
    let mut tx = db::write_tx(db).await?;
    let bytes = db::secrets::get_or_create(&mut tx, "installation_id", 4).await?;
    tx.commit().await?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Passwords for the accounts the first start creates; `None` = generate
/// one and show it once.
#[derive(Debug, Clone, Default)]
pub struct BootstrapPasswords {
    pub admin: Option<String>,
    pub demo: Option<String>,
}

impl BootstrapPasswords {
    /// From `JPU_ADMIN_PASSWORD` and `JPU_DEMO_PASSWORD`.
    pub fn from_env() -> Self {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        Self { admin: var("JPU_ADMIN_PASSWORD"), demo: var("JPU_DEMO_PASSWORD") }
    }
}
