//! The `jpu-share` server: one binary that serves the console and the /v1
//! API, and schedules GPU jobs fairly between labs.
//!
//! Layers, each calling only the ones below it (a source test in
//! `tests/it/architecture.rs` keeps it so):
//!
//! - **Frame** — `main` parses the command line and runs;
//!   [`startup`] wires everything, [`config`] reads the settings, [`state`]
//!   is what handlers share, [`clock`] and [`telemetry`].
//! - **Adapters** — [`http`]: the /v1 REST API by resource
//!   ([`http::v1`]), the console's routes and backend ([`http::console`]),
//!   health and metrics, and the middleware around them. [`cli`] is `jpu`,
//!   a client of /v1.
//! - **The scheduler loop** — [`scheduler`]: reads a snapshot, asks the
//!   policy, applies the plan in one transaction, starts attempts.
//! - **Services** — [`services`]: the rules and transactions of every
//!   action (jobs, admin, account, views, dashboard, audit, workspaces),
//!   one error type carrying the api.md code.
//! - **Below them** — [`db`] (queries only, no policy), [`executor`]
//!   (local processes or Slurm behind one trait), [`auth`] (passwords,
//!   sessions, tokens).
//! - **The policy** — [`policy`]: pure code, snapshot in, plan out; the
//!   server, the simulator ([`sim`]), the benches and the property tests
//!   all call it.

pub mod auth;
pub mod cli;
pub mod clock;
pub mod config;
pub mod db;
pub mod executor;
pub mod http;
pub mod policy;
pub mod scheduler;
pub mod services;
pub mod sim;
pub mod startup;
pub mod state;
pub mod telemetry;
