//! The web adapters: the axum application — the console ([`console`]),
//! /v1 ([`v1`]), /healthz and /metrics ([`ops`]), the sessions' proxy
//! ([`sessions`]) — with the session, auth, security and metrics layers
//! around them ([`middleware`]), every response body guarded
//! ([`body_guard`]), and the one HTTP error ([`error`]).

pub mod body_guard;
pub mod console;
pub mod error;
pub mod extract;
pub mod middleware;
pub mod openapi;
pub mod ops;
pub mod sessions;
pub mod v1;

use axum::extract::DefaultBodyLimit;
use axum::routing::get;
use axum::Router;
use time::Duration;
use tower_http::compression::Predicate as _;
use tower_http::trace::TraceLayer;
use tower_sessions::cookie::{Key, SameSite};
use tower_sessions::{Expiry, SessionManagerLayer};

use crate::state::AppState;

/// Largest request body accepted anywhere (api.md limits).
pub const MAX_BODY_BYTES: usize = 256 * 1024;

/// The whole site; browser sessions kept in `session_store` (the
/// database's, made by `startup`).
pub fn router<S: tower_sessions::SessionStore + Clone>(state: AppState, session_store: S, session_key: Key) -> Router {
    let settings = &state.settings.server;
    let sessions = SessionManagerLayer::new(session_store)
        // over https, `__Host-`: a browser takes it only Secure, for this
        // host and path `/` — no sibling subdomain (a lab's web server)
        // or script can plant one of its own before the console's (#42)
        .with_name(if settings.secure_cookies { "__Host-jpu_session" } else { "jpu_session" })
        .with_http_only(true)
        .with_same_site(SameSite::Lax)
        .with_secure(settings.secure_cookies)
        .with_expiry(Expiry::OnInactivity(Duration::minutes(i64::from(settings.session_idle_minutes))))
        .with_signed(session_key);

    Router::new()
        .route("/healthz", get(ops::healthz))
        .route("/readyz", get(ops::readyz))
        .route("/metrics", get(ops::metrics))
        .nest("/v1", v1::router())
        .merge(console::router(&state))
        .merge(sessions::router())
        .layer(axum::middleware::from_fn(middleware::console_gate))
        .layer(axum::middleware::from_fn_with_state(state.clone(), middleware::resolve_caller))
        .layer(axum::middleware::from_fn_with_state(state.clone(), middleware::cross_site_guard))
        .layer(sessions)
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(axum::middleware::from_fn(middleware::security_headers))
        .layer(axum::middleware::from_fn(middleware::observe))
        // inside compression, which polls a body past its end (body_guard)
        .layer(axum::middleware::from_fn(body_guard::guard_bodies))
        // brotli or gzip as the client accepts (the console's wasm shrinks
        // to a fraction); event streams and tiny bodies stay as they are
        .layer(
            tower_http::compression::CompressionLayer::new().compress_when(
                // files are sent as they are: a GiB download compressed on the
                // fly ran at a fraction of the disk's speed, and a Range names
                // bytes of the file, not of its compressed form
                tower_http::compression::predicate::DefaultPredicate::new()
                    .and(tower_http::compression::predicate::NotForContentType::const_new("application/octet-stream")),
            ),
        )
        .layer(TraceLayer::new_for_http())
        .with_state(state)
}
