//! The scheduling policy as pure code: a snapshot in, a plan out. The
//! code cites the policy as "policy §N"; the guide below says what each
//! section rules and where it lives ("The policy by section"). [`cycle::decide`] is the whole of one cycle; [`usage`] is its
//! arithmetic. Nothing here does I/O, awaits, or reads a clock — the
//! server's loop (`crate::scheduler`), the simulator, the benches and the
//! property tests all call these same functions, and `purity` fails the
//! build's tests if anything else creeps in.
//!
//! The guide below (rendered by `cargo doc`) is the reference: how it
//! works, the decisions it makes where the policy is silent, the measurements.
#![doc = include_str!("guide.md")]

pub mod admission;
pub mod backfill;
pub mod cycle;
mod drains;
pub mod forecast;
pub mod model;
pub mod oom;
pub mod outcome;
pub mod personal;
mod placements;
mod planned;
pub mod predict;
mod steps;
mod timeline;
mod timeline_build;
pub mod usage;
pub mod world;
mod world_snapshot;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_drains;
#[cfg(test)]
mod tests_planned;

pub use cycle::decide;
pub use model::*;

#[cfg(test)]
mod proptests;
#[cfg(test)]
mod proptests_plan;
#[cfg(test)]
mod proptests_snap;
