//! The `jpu-share` server: configuration, database, auth, HTTP (console,
//! /v1, health, metrics) and, in later modules, the scheduler and executors.

pub mod account;
pub mod admin;
pub mod admin_backfill;
pub mod admin_cluster;
pub mod auth;
pub mod cli;
pub mod clock;
pub mod config;
pub mod console_admin;
pub mod console_backend;
pub mod db;
pub mod executor;
pub mod http;
pub mod jobs;
pub mod scheduler;
pub mod sim;
pub mod startup;
pub mod state;
pub mod telemetry;
pub mod views;
pub mod workspaces;
