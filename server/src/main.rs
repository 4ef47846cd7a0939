//! `jpu-share`: the single binary that serves the console, the /v1 API and
//! runs the scheduler.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use jpu_share::config::Settings;
use jpu_share::startup::{Application, BootstrapPasswords};

/// glibc's allocator kept the memory of a submit burst (one arena per
/// thread, freed in another): 240 MB resident after 20,000 submits.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(name = "jpu-share", version, about = "GPU sharing for research labs")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the console, the /v1 API and the scheduler.
    Serve {
        /// TOML configuration file; env `JPU__SECTION__KEY` overrides it.
        #[arg(long, short)]
        config: Option<PathBuf>,
    },
    /// Copy the database to FILE (0600) while the server runs; restore by
    /// stopping the server, putting the copy in the database's place
    /// (without its old -wal and -shm files) and starting it.
    Backup {
        /// TOML configuration file (for `database.url`); env overrides it.
        #[arg(long, short)]
        config: Option<PathBuf>,
        /// Where the copy goes; must not exist.
        file: PathBuf,
    },
    /// With `--check`: list the migrations this binary would apply to the
    /// configured database, changing nothing (exit 0 when none are
    /// pending, 1 when some are or the database is newer than this
    /// binary, 2 when it cannot be read). `serve` applies them at start.
    Migrate {
        #[arg(long, short)]
        config: Option<PathBuf>,
        /// Only report; without it nothing is done either (serve migrates).
        #[arg(long)]
        check: bool,
    },
    /// Copy the configured SQLite site's whole history (jobs with their
    /// ids, usage, accounts, tokens, audit) into an empty PostgreSQL
    /// database, checked by counts; refused into one that holds our
    /// tables. Stop the server first; job folders stay where they are.
    MigrateDb {
        #[arg(long, short)]
        config: Option<PathBuf>,
        /// The PostgreSQL database, e.g. postgres://jpu@db.campus/jpu
        /// (the password is better left to PGPASSWORD or ~/.pgpass).
        #[arg(long)]
        to: String,
    },
    /// `--print-defaults`: every setting with its default and meaning, as
    /// TOML `serve --config` reads as it is.
    Config {
        #[arg(long)]
        print_defaults: bool,
    },
    /// Replay a job trace through the scheduler and baseline policies.
    Sim {
        /// CSV trace (job_id,submit_time_s,duration_s,num_gpus,user,group,gpu_type).
        #[arg(long)]
        trace: PathBuf,
        /// Cluster: NODESxGPUS:TIER[,…], e.g. 64x8:v100. Repeat (or repeat
        /// --time-limit) for a load sweep: every cluster under every limit
        /// model, each point's report in its own folder, and one table and
        /// chart (sweep.json, report.html).
        #[arg(long = "cluster", required = true)]
        clusters: Vec<String>,
        /// jpu, planned, fifo, easy or fairshare-greedy; repeat to compare.
        #[arg(long = "policy", required = true)]
        policies: Vec<String>,
        /// Output directory for report.json and timing.json.
        #[arg(long)]
        out: PathBuf,
        /// Virtual period of the scheduling pass.
        #[arg(long, default_value_t = 5000)]
        cycle_ms: i64,
        /// Only event-driven passes.
        #[arg(long)]
        events_only: bool,
        /// `live`: charge running jobs every pass (jpu); default `lazy`.
        #[arg(long, default_value = "lazy", value_parser = ["lazy", "live"])]
        charge: String,
        /// Concurrency limit per user for jpu (default: none).
        #[arg(long)]
        user_limit: Option<u32>,
        /// EASY's time limit = real duration × this.
        #[arg(long, default_value_t = 2.0)]
        overestimate: f64,
        /// The limits users set, for `planned`: `xF` (runtime × F) or `user`
        /// (runtime rounded up to 1, 2, 4, 8, 12, 24, 48, 72 h). Repeat for a
        /// sweep.
        #[arg(long = "time-limit", default_value = "x2")]
        time_limits: Vec<String>,
        /// `planned`: jobs at the head of the order with a planned start.
        #[arg(long, default_value_t = 100)]
        plan_depth: usize,
        /// `planned`: a job waiting longer goes ahead of fair share.
        #[arg(long, default_value_t = jpu_share::config::DEFAULT_MAX_WAIT_HOURS)]
        max_wait_hours: u32,
        /// `planned`: overdue jobs go ahead of fair share only while they
        /// use at most this share (%) of the GPUs (the oldest first).
        #[arg(long, default_value_t = jpu_share::config::DEFAULT_LIFT_PERCENT)]
        lift_percent: u32,
        /// `planned`: of the overdue jobs lifted, how many (the oldest) go
        /// ahead of light labs' jobs, as `scheduler.plan_lift_ahead_of_light`.
        #[arg(long, default_value_t = jpu_share::config::SchedulerSettings::default().plan_lift_ahead_of_light)]
        lift_ahead_of_light: u32,
        /// `planned`: planned jobs that may drain GPUs at once (`all`, `N`
        /// or `N%` of the placements), as `scheduler.plan_drains`. A
        /// policy `planned:k=2,x=100,c=true` overrides this, the next and
        /// the one after for itself (to compare designs in one sweep).
        #[arg(long, default_value_t = String::from(jpu_share::config::SchedulerSettings::default().plan_drains))]
        plan_drains: String,
        /// `planned`: a job drains only after waiting this share (%) of
        /// its limit, as `scheduler.plan_drain_after_percent`.
        #[arg(long, default_value_t = jpu_share::config::SchedulerSettings::default().plan_drain_after_percent)]
        drain_after_percent: u32,
        /// `planned`: idle GPUs booked for a job are charged to its lab, as
        /// `scheduler.plan_charge_drains`.
        #[arg(long, default_value_t = jpu_share::config::SchedulerSettings::default().plan_charge_drains, action = clap::ArgAction::Set)]
        charge_drains: bool,
        /// `planned`: plans see running jobs end when predicted, as
        /// `scheduler.plan_predicted_ends`.
        #[arg(long, default_value_t = jpu_share::config::SchedulerSettings::default().plan_predicted_ends, action = clap::ArgAction::Set)]
        predicted_ends: bool,
        /// Measure the start-time forecast for jpu and planned (a second,
        /// slower replay asking it about every job).
        #[arg(long)]
        forecast: bool,
        /// With --forecast: estimates later by this share of how far ahead
        /// they are (the server's margin by default).
        #[arg(long, default_value_t = jpu_share::policy::forecast::ESTIMATE_MARGIN)]
        forecast_margin: f64,
        /// Serve LLM backfill on idle GPUs (jpu only), as `backfill.enabled`.
        #[arg(long)]
        backfill: bool,
        /// Seconds a GPU must be idle before backfill is deployed on it.
        #[arg(long, default_value_t = 60)]
        backfill_min_idle_s: i64,
        /// GPUs per backfill instance.
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=64))]
        backfill_gpus_per_instance: u32,
    },
}

fn main() -> ExitCode {
    // an attempt entering its namespaces: before any thread is started
    let mut args = std::env::args_os();
    match args.nth(1) {
        Some(a) if a == jpu_share::executor::enter::SUBCOMMAND => {
            let status = jpu_share::executor::enter::run(args.collect());
            return ExitCode::from(u8::try_from(status).unwrap_or(1));
        }
        // a file operation through the site, as the person
        Some(a) if a == jpu_share::executor::files::SUBCOMMAND => {
            return ExitCode::from(jpu_share::executor::files::helper::run(args.collect()) as u8);
        }
        // a fetched archive unpacked under a memory limit of its own
        Some(a) if a == jpu_share::services::datasets::unpack::SUBCOMMAND => {
            return ExitCode::from(jpu_share::services::datasets::unpack::run(args.collect()) as u8);
        }
        _ => {}
    }
    jpu_share::telemetry::init_tracing();
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match cli.command {
        Command::Serve { config } => runtime.block_on(serve(config)),
        Command::Backup { config, file } => runtime.block_on(backup(config, file)),
        Command::Migrate { config, check: _ } => runtime.block_on(migrate_check(config)),
        Command::MigrateDb { config, to } => runtime.block_on(migrate_db(config, to)),
        Command::Config { print_defaults: true } => {
            print!("{}", jpu_share::config::defaults::print());
            ExitCode::SUCCESS
        }
        Command::Config { print_defaults: false } => {
            eprintln!("usage: jpu-share config --print-defaults");
            ExitCode::from(2)
        }
        Command::Sim {
            trace,
            clusters,
            policies,
            out,
            cycle_ms,
            events_only,
            charge,
            user_limit,
            overestimate,
            plan_depth,
            forecast,
            forecast_margin,
            max_wait_hours,
            lift_percent,
            lift_ahead_of_light,
            plan_drains,
            drain_after_percent,
            charge_drains,
            predicted_ends,
            backfill,
            backfill_min_idle_s,
            backfill_gpus_per_instance,
            time_limits,
        } => {
            let mut models = Vec::new();
            for text in &time_limits {
                match jpu_share::sim::sweep::parse_time_limit(text) {
                    Some(model) => models.push(model),
                    None => {
                        eprintln!("error: {}", jpu_share::sim::SimError::TimeLimit(text.clone()));
                        return ExitCode::from(2);
                    }
                }
            }
            let time_limit = models[0];
            let drains = match jpu_share::config::PlanDrains::try_from(plan_drains) {
                Ok(d) => d.0,
                Err(e) => {
                    eprintln!("error: {e}");
                    return ExitCode::from(2);
                }
            };
            let planned = jpu_share::policy::PlannedParams {
                depth: plan_depth,
                max_wait_ms: i64::from(max_wait_hours) * 3_600_000,
                lift_percent,
                lift_ahead_of_light,
                drains,
                drain_after_percent,
                charge_drains,
                predicted_ends,
            };
            let backfill = backfill.then_some(jpu_share::policy::backfill::BackfillPolicy {
                enabled: true,
                min_idle_ms: backfill_min_idle_s.max(0) * 1000,
                gpus_per_instance: backfill_gpus_per_instance,
            });
            let args = jpu_share::sim::SimArgs {
                trace,
                cluster: clusters[0].clone(),
                policies,
                out,
                options: jpu_share::sim::engine::Options {
                    cycle_ms: cycle_ms.max(1),
                    events_only,
                    user_limit,
                    backfill,
                    time_limit,
                    forecast_margin: forecast_margin.max(0.0),
                },
                live_charge: charge == "live",
                overestimate,
                planned,
                forecast,
            };
            if clusters.len() > 1 || time_limits.len() > 1 {
                return match jpu_share::sim::sweep::run(&args, &clusters, &time_limits) {
                    Ok(points) => {
                        print!("{}", jpu_share::sim::sweep::table(&points));
                        println!(
                            "wrote {}/sweep.json and report.html (each point's report in its folder)",
                            args.out.display()
                        );
                        ExitCode::SUCCESS
                    }
                    Err(e) => {
                        eprintln!("error: {e}");
                        ExitCode::FAILURE
                    }
                };
            }
            match jpu_share::sim::run(&args) {
                Ok(reports) => {
                    println!(
                        "{:<18} {:>8} {:>10} {:>10} {:>10} {:>8} {:>9}",
                        "policy", "util", "wait p50", "wait p95", "wait p99", "jain", "fair-dist"
                    );
                    for r in reports {
                        println!(
                            "{:<18} {:>7.1}% {:>9.0}s {:>9.0}s {:>9.0}s {:>8.3} {:>9.3}",
                            r.policy,
                            r.utilisation_in_window * 100.0,
                            r.overall.wait_s.p50,
                            r.overall.wait_s.p95,
                            r.overall.wait_s.p99,
                            r.jain_labs_bounded_slowdown,
                            r.fair_share_distance
                        );
                    }
                    println!("wrote {}", args.out.join("report.json").display());
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("error: {e}");
                    ExitCode::FAILURE
                }
            }
        }
    }
}

/// The settings of `config` (and the environment), or exit 2 with why.
fn load_settings(config: Option<PathBuf>) -> Result<Settings, ExitCode> {
    Settings::load(config.as_deref()).map_err(|e| {
        eprintln!("error: {e}");
        ExitCode::from(2)
    })
}

async fn migrate_check(config: Option<PathBuf>) -> ExitCode {
    let settings = match load_settings(config) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let state = match jpu_share::db::open_existing(&settings.database).await {
        Ok(pool) => jpu_share::db::migrations(&pool).await.map_err(|e| e.to_string()),
        Err(e) => Err(e.to_string()),
    };
    let state = match state {
        Ok(state) => state,
        Err(e) => {
            eprintln!("error: cannot read the database {}: {e}", jpu_share::db::redacted(&settings.database.url));
            return ExitCode::from(2);
        }
    };
    if !state.unknown.is_empty() {
        println!(
            "the database has {} migration(s) this binary ({}) does not know ({:?}): a newer jpu-share ran on it; \
             use that version, or restore the backup taken before the upgrade",
            state.unknown.len(),
            env!("CARGO_PKG_VERSION"),
            state.unknown
        );
        return ExitCode::FAILURE;
    }
    if state.pending.is_empty() {
        println!("no pending migrations ({} applied)", state.applied);
        return ExitCode::SUCCESS;
    }
    println!(
        "{} pending migration(s) ({} applied); `jpu-share serve` applies them at start:",
        state.pending.len(),
        state.applied
    );
    for (version, description) in &state.pending {
        println!("  {version} {description}");
    }
    ExitCode::FAILURE
}

async fn migrate_db(config: Option<PathBuf>, to: String) -> ExitCode {
    let settings = match load_settings(config) {
        Ok(s) => s,
        Err(code) => return code,
    };
    if jpu_share::db::is_postgres_url(&settings.database.url) {
        eprintln!(
            "error: {}",
            jpu_share::db::copy::CopyError::SourceNotSqlite(jpu_share::db::redacted(&settings.database.url))
        );
        return ExitCode::from(2);
    }
    let source = match jpu_share::db::open_existing(&settings.database).await {
        Ok(pool) => pool,
        Err(e) => {
            eprintln!("error: cannot read the database {}: {e}", jpu_share::db::redacted(&settings.database.url));
            return ExitCode::from(2);
        }
    };
    println!("copying {} into {}", jpu_share::db::redacted(&settings.database.url), jpu_share::db::redacted(&to));
    let progress = |table: &str, rows: i64| println!("  {table}: {rows} rows");
    match jpu_share::db::copy::to_postgres(&source, &to, progress).await {
        Ok(copied) => {
            let rows: i64 = copied.tables.iter().map(|(_, n)| n).sum();
            println!(
                "copied {} tables, {rows} rows; every count matches. Set database.url to the new database and start the servers.",
                copied.tables.len()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn backup(config: Option<PathBuf>, file: PathBuf) -> ExitCode {
    let settings = match load_settings(config) {
        Ok(s) => s,
        Err(code) => return code,
    };
    if let Some(folder) = file.parent().filter(|p| !p.as_os_str().is_empty() && !p.is_dir()) {
        eprintln!("error: the folder {} does not exist: make it first (the copy is written into it)", folder.display());
        return ExitCode::FAILURE;
    }
    match jpu_share::db::backup::backup(&settings.database, &file).await {
        Ok(done) => {
            println!("backed up {} jobs to {} ({} bytes, mode 0600)", done.jobs, file.display(), done.bytes);
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn serve(config: Option<PathBuf>) -> ExitCode {
    let settings = match load_settings(config) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let mut app = match Application::build(settings, BootstrapPasswords::from_env()).await {
        Ok(app) => app,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    if let Some(seeded) = app.take_seeded() {
        if let Some(p) = seeded.admin_password {
            println!("Created user `admin` with password: {p}   (shown once; set JPU_ADMIN_PASSWORD to choose it)");
        }
        if let Some(p) = seeded.demo_password {
            println!("Created researcher `demo` (lab demo-lab) with password: {p}   (shown once)");
        }
    }
    match app.local_addr() {
        Ok(addr) => println!("JPU-Share listening on http://{addr}"),
        Err(e) => tracing::warn!(error = %e, "cannot read the listening address"),
    }
    match app.run_until(shutdown_signal()).await {
        Ok(()) => {
            tracing::info!("shut down cleanly");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Resolves on SIGINT or SIGTERM.
async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
    tracing::info!("shutdown signal received");
}
