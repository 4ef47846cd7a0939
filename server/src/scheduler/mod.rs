//! The scheduler. [`cycle::decide`] is the whole policy as a pure function
//! (snapshot in, plan out); [`usage`] is its arithmetic. The loop that
//! reads the database, applies plans and drives executors lives beside it
//! and never re-implements a rule.

pub mod admission;
pub mod backfill;
mod backfill_loop;
pub mod cycle;
pub mod model;
pub mod oom;
mod placements;
pub mod runner;
pub mod usage;
pub mod world;

#[cfg(test)]
mod tests;

pub use cycle::decide;
pub use model::*;

#[cfg(test)]
mod proptests;
