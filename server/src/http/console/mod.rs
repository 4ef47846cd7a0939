//! The console adapter: sign-in and sign-out as plain form posts (they
//! work without JavaScript), the Leptos routes with the shared state as
//! context, and the [`backend`] the server functions call ([`admin`]
//! parses the admin pages' forms, both with [`form`]'s helpers); sign-in through the university in
//! [`oidc`]; the pages' language in [`lang`].

use axum::extract::State;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::post;
use axum::{Form, Router};
use leptos::prelude::{provide_context, use_context};
use leptos_axum::{generate_route_list, LeptosRoutes};
use serde::Deserialize;
use std::sync::Arc;
use tower_sessions::Session;

use crate::auth::{self, AuthError};
use crate::http::extract::ClientAddr;
use crate::state::AppState;
use app::api::backend::Backend;

pub mod admin;
pub mod backend;
mod data;
mod form;
mod lang;
mod oidc;
use app::{shell, App};

pub fn router(state: &AppState) -> Router<AppState> {
    let backend = Backend(Arc::new(state.clone()));
    let leptos_options = state.leptos.clone();
    // the browser bundle, served as the build compressed it (brotli at
    // its best level, far smaller than what a response-time compressor
    // can afford); files without a compressed twin go through the
    // compression layer as before
    let bundle = tower_http::services::ServeDir::new(state.settings.server.site_root.join("pkg"))
        .precompressed_br()
        .precompressed_gzip();
    // the pages and the not-found page get the same context: without the
    // backend there, a mistyped URL rendered its header's server calls as
    // internal errors (500) instead of "No such page" (404)
    let context = move || {
        provide_context(backend.clone());
        // the nonce the Content-Security-Policy header names
        let parts = use_context::<axum::http::request::Parts>();
        // the page's language, chosen once for the whole request
        provide_context(parts.as_ref().map(lang::request_locale).unwrap_or_default());
        let nonce = parts.and_then(|parts| parts.extensions.get::<crate::http::middleware::CspNonce>().cloned());
        if let Some(nonce) = nonce {
            provide_context(leptos::nonce::Nonce::from_value(nonce.0));
        }
    };
    Router::new()
        .nest_service("/pkg", bundle)
        .route("/login", post(login))
        .route("/logout", post(logout))
        .route("/lang/{tag}", axum::routing::get(lang::switch))
        .route("/auth/oidc/login", axum::routing::get(oidc::login))
        .route("/auth/oidc/callback", axum::routing::get(oidc::callback))
        .route("/auth/device", axum::routing::get(oidc::device))
        .route("/auth/device/approve", post(oidc::device_approve))
        .route("/auth/device/deny", post(oidc::device_deny))
        .leptos_routes_with_context(state, route_list(), context.clone(), move || shell(leptos_options.clone()))
        .fallback(leptos_axum::file_and_error_handler_with_context::<AppState, _>(context, shell))
        .layer(axum::middleware::from_fn(server_fn_status))
}

/// The console's routes, generated once per process. Generating renders
/// the whole app with resource loading switched off by a flag global to
/// the process (leptos-rs/leptos#4773): a page another server of the same
/// process began rendering meanwhile waited forever for its data. Tests
/// build a server each, two at a time, and a page's body stalled for the
/// client's 60 s now and then; a second generation would do that to a
/// serving instance too.
pub fn route_list() -> Vec<leptos_axum::AxumRouteListing> {
    static ROUTES: std::sync::OnceLock<Vec<leptos_axum::AxumRouteListing>> = std::sync::OnceLock::new();
    ROUTES.get_or_init(|| generate_route_list(App)).clone()
}

/// The server-function layer answers every error it makes itself (an
/// argument that does not decode, before our function runs) with 500; the
/// error's own api.md code says whose mistake it was, and sets the status.
async fn server_fn_status(req: axum::extract::Request, next: axum::middleware::Next) -> axum::response::Response {
    let api = req.uri().path().starts_with("/api/");
    let response = next.run(req).await;
    if !api || response.status() != axum::http::StatusCode::INTERNAL_SERVER_ERROR {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let bytes = axum::body::to_bytes(body, 64 * 1024).await.unwrap_or_default();
    if let Ok(e) = serde_json::from_slice::<app::model::error::ConsoleError>(&bytes) {
        if let Ok(status) = axum::http::StatusCode::from_u16(e.code.status()) {
            parts.status = status;
        }
    }
    axum::response::Response::from_parts(parts, axum::body::Body::from(bytes))
}

#[derive(Deserialize)]
struct LoginForm {
    username: String,
    password: String,
}

async fn login(
    State(state): State<AppState>,
    ClientAddr(client): ClientAddr,
    session: Session,
    Form(form): Form<LoginForm>,
) -> Response {
    match crate::services::account::check_password(&state, form.username.trim(), &form.password, client).await {
        Ok(user) => {
            let idle = state.settings.server.session_idle_minutes;
            if let Err(e) =
                crate::http::middleware::sign_in_session(&session, (user.id, user.session_epoch), idle).await
            {
                tracing::error!(error = %e, "cannot store session");
                return Redirect::to("/login?error=session").into_response();
            }
            Redirect::to("/").into_response()
        }
        Err(AuthError::Throttled(_)) => Redirect::to("/login?error=throttled").into_response(),
        Err(AuthError::InvalidCredentials) => Redirect::to("/login?error=credentials").into_response(),
        Err(AuthError::Disabled) => Redirect::to("/login?error=disabled").into_response(),
        Err(AuthError::PasswordsOff(_)) => Redirect::to("/login?error=passwords_off").into_response(),
        Err(AuthError::Refused(why)) => {
            tracing::info!(user = %form.username.trim(), why = %why, "the directory's person is not let in");
            Redirect::to("/login?error=refused").into_response()
        }
        Err(AuthError::Directory(e)) => {
            tracing::error!(error = %e, "the directory cannot check a password");
            Redirect::to("/login?error=directory").into_response()
        }
        Err(AuthError::Password(auth::PasswordError::Busy)) => Redirect::to("/login?error=busy").into_response(),
        Err(e) => {
            tracing::error!(error = %e, "sign-in failed");
            Redirect::to("/login?error=internal").into_response()
        }
    }
}

async fn logout(session: Session) -> Redirect {
    if let Err(e) = session.flush().await {
        tracing::warn!(error = %e, "cannot delete session");
    }
    Redirect::to("/login")
}
