//! The scheduler loop: every cycle it reads a snapshot from the database,
//! asks the pure policy (`crate::policy`) for a plan, applies the plan in
//! one transaction and starts attempts through the `Executor` trait. It
//! never re-implements a rule; what to do is always the policy's answer.

mod backfill_loop;
pub mod runner;
