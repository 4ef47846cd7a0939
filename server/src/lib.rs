//! The `jpu-share` server.
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
