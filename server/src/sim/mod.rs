//! `jpu-share sim`: replays a GPU-cluster trace through the same decision
//! function the server runs, in virtual time. (In progress: trace and
//! cluster readers so far.)

pub mod baselines;
pub mod cluster;
pub mod engine;
pub mod trace;
