//! The JPU-Share console and the types every part of the product shares.
//!
//! - [`model`]: job states, roles, maintenance phases, the view structs
//!   the console, the REST API and the scheduler all speak
//!   ([`model::views`], [`model::admin`]), and the api.md error codes
//!   ([`model::error`]).
//! - [`api`]: the console's server functions, by area; each is thin over
//!   [`api::backend`] (ssr only), the trait the server implements so server
//!   functions reach its services without this crate depending on it.
//! - [`i18n`]: the console's languages (Korean, English): Fluent messages
//!   rendered on the server, the request's language as context.
//! - [`pages`]: the console UI in folders by area, server-rendered; the
//!   interactive parts of pages are `#[island]`s the browser hydrates.

pub mod api;
pub mod i18n;
pub mod model;
pub mod pages;

pub use pages::{shell, App};
