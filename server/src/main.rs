//! `jpu-share`: the single binary that serves the console, the /v1 API and
//! runs the scheduler.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use jpu_share::config::Settings;
use jpu_share::startup::{Application, BootstrapPasswords};

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
}

fn main() -> ExitCode {
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
    }
}

async fn serve(config: Option<PathBuf>) -> ExitCode {
    let settings = match Settings::load(config.as_deref()) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
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
