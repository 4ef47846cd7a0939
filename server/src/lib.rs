//! The `jpu-share` server: one binary that serves the console and the /v1
//! API, and schedules GPU jobs fairly between labs.
//!
//! The map of the layout is the README's "Architecture" section, the one
//! map there is: `tests/it/architecture.rs` fails if a module is missing
//! from it, and if a layer imports one above it. In short: adapters
//! ([`http`], [`cli`]) call [`services`] and the [`scheduler`] loop, which
//! call [`db`], [`executor`] and [`auth`]; the [`policy`] is pure code
//! (snapshot in, plan out) that the server, the simulator ([`sim`]), the
//! benches and the property tests all call. The operator's guide is
//! `server/README.md`; the scheduler's, the forecast's and the
//! simulator's are their modules' docs.

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
