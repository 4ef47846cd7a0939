//! `jpu`, the command-line client of the /v1 API. Human tables by
//! default, `--json` for scripts; errors are the API's own message; exit
//! codes in [`client::exit`].

pub mod client;
mod commands;
mod files;
mod notify;
pub mod render;
mod reports;
mod sessions;
mod tokens;

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use client::{exit, CliError};

#[derive(Parser)]
#[command(name = "jpu", version, about = "Submit and follow GPU jobs on JPU-Share")]
pub struct Cli {
    /// Print the API's JSON instead of tables.
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Sign in and keep the token (readable by you only) for later
    /// commands: with a password (asked for, or $JPU_PASSWORD), or with
    /// `--token`, a personal token read from standard input.
    Login {
        /// Server URL, e.g. http://gpu.example.edu:8080
        #[arg(long, env = "JPU_SERVER")]
        server: String,
        #[arg(long, short, env = "USER", conflicts_with_all = ["token", "sso"])]
        username: Option<String>,
        /// Read a personal token (made on the Account page or with `jpu
        /// tokens create`) from standard input.
        #[arg(long, conflicts_with = "sso")]
        token: bool,
        /// Sign in through the university: open the printed address on
        /// any device, enter the code, and this waits until you have.
        #[arg(long)]
        sso: bool,
    },
    /// Your personal tokens: list (default), create NAME [--days N] (the
    /// secret is printed once), revoke ID.
    Tokens {
        #[arg(value_parser = ["list", "create", "revoke"], default_value = "list")]
        action: String,
        /// The new token's name (create) or the token's id (revoke).
        what: Option<String>,
        /// Days until the new token expires (1 to 365; default 90).
        #[arg(long)]
        days: Option<u32>,
    },
    /// Revoke the stored token and forget it.
    Logout,
    /// Submit a bash script.
    Submit(SubmitArgs),
    /// The global queue in this cycle's order, and your personal queue.
    /// Why each job waits is explained on the site's Policy page
    /// (`/policy`); the table's footnote links each reason's section.
    Queue,
    /// Your lab's jobs, newest first.
    Jobs {
        /// Only these states (comma-separated), e.g. RUNNING
        #[arg(long)]
        state: Option<String>,
        /// Only this array's elements.
        #[arg(long, value_name = "ID")]
        array: Option<i64>,
        #[arg(long, default_value_t = 50)]
        limit: u32,
    },
    /// One job with its attempts.
    Show { id: i64 },
    /// A job's output; `-f` follows it until the job ends.
    Logs {
        id: i64,
        #[arg(short, long)]
        follow: bool,
    },
    /// Cancel a job (running jobs get their grace period), or with
    /// `--array` every unfinished element of that array.
    Cancel {
        id: i64,
        /// ID is an array's id: cancel all its unfinished elements.
        #[arg(long)]
        array: bool,
    },
    /// Interactive sessions (a notebook on a GPU, opened in the browser):
    /// `start APP` waits until it is ready and prints its URL; `list`.
    /// End one with `jpu cancel ID`.
    Session {
        #[command(subcommand)]
        action: SessionAction,
    },
    /// Every lab's decayed usage, running GPUs and waiting jobs.
    Usage,
    /// Raw usage (GPU-hours, TFLOP·s) of a month or a span of days, by lab,
    /// user, tier or month: your lab's (every lab's for admins).
    Report {
        /// A month, YYYY-MM (default: this month).
        #[arg(long)]
        month: Option<String>,
        /// First day, YYYY-MM-DD.
        #[arg(long)]
        from: Option<String>,
        /// Last day (included), YYYY-MM-DD.
        #[arg(long)]
        to: Option<String>,
        #[arg(long, default_value = "lab", value_parser = ["lab", "user", "tier", "month"])]
        by: String,
        /// Print the report as CSV.
        #[arg(long)]
        csv: bool,
    },
    /// Your notification settings; with options, change them. `deliveries`
    /// lists the latest deliveries.
    Notify {
        #[arg(value_parser = ["show", "deliveries"], default_value = "show")]
        what: String,
        /// E-mail address ("" = no e-mail).
        #[arg(long)]
        email: Option<String>,
        /// Webhook URL ("" = none); a new one prints its signing secret once.
        #[arg(long)]
        webhook: Option<String>,
        /// Events: started,ended,retried ("" = none).
        #[arg(long)]
        events: Option<String>,
    },
    /// Files in your home (`home:PATH`), your lab's share (`lab:PATH`) and
    /// the datasets open to your lab (`datasets:NAME/PATH`, read-only):
    /// `ls PATH`, `get PATH [LOCAL]` (`-` = stdout), `put LOCAL PATH` (a
    /// PATH ending in `/` keeps the file's name), `rm PATH`, `mkdir PATH`.
    Files {
        #[arg(value_parser = ["ls", "get", "put", "rm", "mkdir"])]
        action: String,
        /// The remote path (for `put`: the local file, then the remote path).
        first: String,
        second: Option<String>,
    },
    /// The datasets open to your lab (all, for admins) and your lab's data
    /// requests.
    Datasets,
    /// Ask the admins for data by URL (http or https); you are told when
    /// it is decided and when it is ready.
    DataRequest {
        url: String,
        /// The dataset's name (letters, digits, `.`, `_`, `-`).
        #[arg(long)]
        name: String,
        /// Why you need it.
        #[arg(long)]
        reason: String,
        /// The data's SHA-256, checked after the download.
        #[arg(long)]
        sha256: Option<String>,
    },
    /// Maintenance status, or start/end it (admins).
    Maintenance {
        #[arg(value_parser = ["status", "start", "end"])]
        action: String,
        /// Shown to users while maintenance is on.
        #[arg(long)]
        message: Option<String>,
    },
}

#[derive(Subcommand)]
enum SessionAction {
    /// Start a session of APP (e.g. jupyterlab), queued like any job;
    /// waits until it is ready and prints the URL to open.
    Start {
        app: String,
        #[arg(long, default_value_t = 1)]
        gpus: u32,
        /// Time limit in minutes.
        #[arg(long)]
        time: Option<u32>,
        /// Run inside this READY workspace of your lab.
        #[arg(long)]
        workspace: Option<String>,
        /// Only on tiers with at least this much VRAM (GB).
        #[arg(long = "min-vram", value_name = "GB")]
        min_vram: Option<u32>,
        /// Print the new session's id and return without waiting.
        #[arg(long)]
        no_wait: bool,
    },
    /// Your sessions, newest first, with their URLs once ready.
    List,
}

#[derive(clap::Args)]
pub struct SubmitArgs {
    pub script: PathBuf,
    #[arg(long, default_value_t = 1)]
    pub gpus: u32,
    /// Job name (default: the script's file name).
    #[arg(long)]
    pub name: Option<String>,
    /// Time limit in minutes.
    #[arg(long)]
    pub time: Option<u32>,
    /// Environment variable for the job, KEY=value (repeatable).
    #[arg(long = "env", value_name = "KEY=VALUE")]
    pub env: Vec<String>,
    /// Run inside this READY workspace of your lab (its container image).
    #[arg(long)]
    pub workspace: Option<String>,
    /// Only on tiers with at least this much VRAM (GB), from the first attempt.
    #[arg(long = "min-vram", value_name = "GB")]
    pub min_vram: Option<u32>,
    /// Start only after these jobs of your lab: ok:ID (completed), any:ID
    /// (ended), notok:ID (failed or cancelled), comma-separated.
    #[arg(long, value_name = "KIND:ID,...")]
    pub after: Option<String>,
    /// Submit an array, e.g. 0-15%4 (indices as ranges and lists; %N = at
    /// most N at once). Each element sees JOB_ARRAY_ID and JOB_ARRAY_INDEX.
    #[arg(long, value_name = "SPEC")]
    pub array: Option<String>,
}

/// Runs the CLI and returns the process exit code.
pub async fn main() -> std::process::ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return std::process::ExitCode::from(if e.use_stderr() { exit::USAGE } else { 0 });
        }
    };
    match run(cli).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("jpu: {}", e.message);
            std::process::ExitCode::from(e.code)
        }
    }
}

/// One function per subcommand (in [`commands`]).
async fn run(cli: Cli) -> Result<(), CliError> {
    let json = cli.json;
    match cli.command {
        Command::Login { server, token: true, .. } => tokens::login_with_token(json, server).await,
        Command::Login { server, sso: true, .. } => tokens::login_with_sso(json, server).await,
        Command::Login { server, username: Some(username), .. } => commands::login(json, server, username).await,
        Command::Login { username: None, .. } => {
            Err(CliError::new(exit::USAGE, "name the user (--username, or $USER) or sign in with --token"))
        }
        Command::Tokens { action, what, days } => {
            let action = match (action.as_str(), what) {
                ("list", _) => tokens::Action::List,
                ("create", Some(name)) => tokens::Action::Create { name, days },
                ("revoke", Some(id)) => tokens::Action::Revoke {
                    id: id.parse().map_err(|_| CliError::new(exit::USAGE, format!("revoke {id}: a token's id")))?,
                },
                (other, None) => {
                    return Err(CliError::new(exit::USAGE, format!("`jpu tokens {other}` needs a name or an id")))
                }
                (other, _) => return Err(CliError::new(exit::USAGE, format!("unknown action {other}"))),
            };
            tokens::tokens(json, action).await
        }
        Command::Logout => commands::logout(json).await,
        Command::Submit(args) => commands::submit(json, args).await,
        Command::Queue => commands::queue(json).await,
        Command::Jobs { state, array, limit } => commands::jobs(json, state, array, limit).await,
        Command::Show { id } => commands::show(json, id).await,
        Command::Logs { id, follow } => commands::logs(json, id, follow).await,
        Command::Cancel { id, array: false } => commands::cancel(json, id).await,
        Command::Cancel { id, array: true } => commands::cancel_array(json, id).await,
        Command::Session { action: SessionAction::Start { app, gpus, time, workspace, min_vram, no_wait } } => {
            sessions::start(json, sessions::StartArgs { app, gpus, time, workspace, min_vram, no_wait }).await
        }
        Command::Session { action: SessionAction::List } => sessions::list(json).await,
        Command::Usage => commands::usage(json).await,
        Command::Report { month, from, to, by, csv } => {
            reports::report(json, reports::ReportArgs { month, from, to, by, csv }).await
        }
        Command::Notify { what, .. } if what == "deliveries" => notify::deliveries(json).await,
        Command::Notify { email, webhook, events, .. } => {
            notify::notify(json, notify::NotifyArgs { email, webhook, events }).await
        }
        Command::Maintenance { action, message } => commands::maintenance(json, action, message).await,
        Command::Files { action, first, second } => match (action.as_str(), second) {
            ("ls", None) => files::ls(json, &first).await,
            ("get", local) => files::get(json, &first, local).await,
            ("put", Some(remote)) => files::put(json, &first, &remote).await,
            ("rm", None) => files::rm(json, &first).await,
            ("mkdir", None) => files::mkdir(json, &first).await,
            (action, _) => Err(CliError::new(exit::USAGE, format!("`jpu files {action}`: see `jpu files --help`"))),
        },
        Command::Datasets => files::datasets(json).await,
        Command::DataRequest { url, name, reason, sha256 } => files::request(json, url, name, reason, sha256).await,
    }
}
