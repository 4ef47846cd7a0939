//! The console's server functions, by area. Each one is thin: the
//! backend and the signed-in caller, one backend call, the error answered
//! with its api.md code (see [`backend`]).

pub mod account;
pub mod admin;
#[cfg(feature = "ssr")]
pub mod backend;
pub mod cluster;
pub mod data;
pub mod jobs;
#[cfg(feature = "ssr")]
pub mod principal;

pub use account::*;
pub use admin::*;
pub use cluster::*;
pub use data::*;
pub use jobs::*;
