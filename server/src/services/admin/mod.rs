//! Admin actions, by concern: maintenance, labs and users ([`users`]),
//! the inventory of tiers and nodes ([`cluster`]) and LLM backfill's
//! settings ([`backfill`]). Each action is written to the audit log in
//! the transaction that makes the change, and wakes the scheduler so it
//! takes effect at once rather than at the next timer tick.

pub mod backfill;
mod campus_link;
pub mod cluster;
pub mod oom;
pub mod seed;
pub mod tokens;
pub mod users;

pub use users::*;
