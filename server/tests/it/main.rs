//! The one integration-test binary: every test spawns the real server on
//! port 0 against a temp SQLite file and talks HTTP to it.

mod admin;
mod api;
mod architecture;
mod auth;
mod authz;
mod backfill;
mod backup;
mod campus;
mod chains;
mod cli;
mod conformance;
mod console;
mod datasets;
mod devices;
mod directory;
mod directory_passwords;
mod edge;
mod failover;
mod files;
mod forecast;
mod helpers;
mod isolation;
mod lab_shares;
mod local_executor;
mod notifications;
mod openapi;
mod ops;
#[path = "../../benches/support/campus.rs"]
mod parts;
mod process;
mod reports;
mod scheduling;
mod sessions;
mod slurm;
mod tokens;
mod workspaces;
