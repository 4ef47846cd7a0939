//! The JPU-Share console and the types every part of the product shares.
//!
//! - [`model`]: job states, roles, maintenance phases and the view structs the
//!   console, the REST API and the scheduler all speak.
//! - [`api`]: Leptos server functions; thin wrappers over [`backend`].
//! - [`pages`] and [`components`]: the console UI, server-rendered; the
//!   interactive parts of pages are `#[island]`s the browser hydrates.
//! - [`backend`] (ssr only): the trait the server implements so server
//!   functions reach the database without this crate depending on it.

pub mod admin_views;
pub mod api;
pub mod api_admin;
#[cfg(feature = "ssr")]
pub mod backend;
pub mod components;
pub mod model;
pub mod pages;
pub mod pages_account;
pub mod pages_admin;
pub mod pages_admin_cluster;
pub mod pages_jobs;
pub mod pages_usage;
pub mod views;

pub use pages::{shell, App};
