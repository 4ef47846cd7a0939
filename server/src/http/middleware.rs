//! Request middleware: who is calling, the console's sign-in gate, and
//! per-request metrics plus logging of internal errors.

use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::http::{header, Method};
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};
use tower_sessions::Session;

use super::error::{ApiError, InternalDetail};
use crate::auth::{self, Caller};
use crate::clock::now_ms;
use crate::state::AppState;
use app::backend::CurrentViewer;

/// Session key holding the signed-in user's id.
pub const SESSION_USER_KEY: &str = "user_id";

fn bearer_token(req: &Request) -> Option<Result<String, ()>> {
    let value = req.headers().get(header::AUTHORIZATION)?;
    let text = value.to_str().map_err(|_| ());
    Some(text.and_then(|t| {
        let (scheme, token) = t.split_once(' ').ok_or(())?;
        if scheme.eq_ignore_ascii_case("bearer") && !token.trim().is_empty() {
            Ok(token.trim().to_string())
        } else {
            Err(())
        }
    }))
}

/// Resolves the caller from `Authorization: Bearer` (which wins, and must
/// be valid if present) or from the console session, and records it in
/// the request extensions as [`Caller`] and [`CurrentViewer`].
pub async fn resolve_caller(State(state): State<AppState>, session: Session, mut req: Request, next: Next) -> Response {
    let caller: Option<Caller> = match bearer_token(&req) {
        Some(Ok(token)) => match auth::caller_from_token(&state.db, &token, now_ms()).await {
            Ok(Some(caller)) => Some(caller),
            Ok(None) => return ApiError::Unauthenticated.into_response(),
            Err(e) => return ApiError::from(e).into_response(),
        },
        Some(Err(())) => return ApiError::Unauthenticated.into_response(),
        None => match session.get::<i64>(SESSION_USER_KEY).await {
            Ok(Some(user_id)) => match auth::caller_from_session(&state.db, user_id).await {
                Ok(caller) => caller,
                Err(e) => return ApiError::from(e).into_response(),
            },
            // an unreadable session is treated as no session
            _ => None,
        },
    };
    req.extensions_mut().insert(CurrentViewer(caller.as_ref().map(|c| c.user.viewer())));
    if let Some(caller) = caller {
        req.extensions_mut().insert(caller);
    }
    next.run(req).await
}

/// Paths that are not console pages (API, assets, sign-in itself).
fn is_console_page(path: &str) -> bool {
    const OPEN_PREFIXES: &[&str] = &["/v1/", "/api/", "/pkg/", "/healthz", "/metrics", "/login", "/logout", "/favicon"];
    path != "/v1" && !OPEN_PREFIXES.iter().any(|p| path.starts_with(p))
}

/// Console pages need a signed-in user: anonymous page loads go to /login,
/// and a signed-in user opening /login goes to the dashboard.
pub async fn console_gate(req: Request, next: Next) -> Response {
    if req.method() == Method::GET {
        let signed_in = req.extensions().get::<Caller>().is_some();
        let path = req.uri().path();
        if !signed_in && is_console_page(path) {
            return Redirect::to("/login").into_response();
        }
        if signed_in && path == "/login" {
            return Redirect::to("/").into_response();
        }
    }
    next.run(req).await
}

/// Counts and times every request by route template, and logs the detail
/// of internal errors (the response body only says "internal error").
pub async fn observe(req: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = req.method().to_string();
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map(|p| p.as_str().to_string())
        .unwrap_or_else(|| "other".to_string());
    let response = next.run(req).await;
    let status = response.status();
    if let Some(InternalDetail(detail)) = response.extensions().get::<InternalDetail>() {
        tracing::error!(%method, %route, status = status.as_u16(), %detail, "request failed");
    }
    metrics::counter!("http_requests_total", "method" => method.clone(), "route" => route.clone(), "status" => status.as_u16().to_string())
        .increment(1);
    metrics::histogram!("http_request_duration_seconds", "method" => method, "route" => route)
        .record(started.elapsed().as_secs_f64());
    response
}

#[cfg(test)]
mod tests {
    use super::is_console_page;

    #[test]
    fn api_and_assets_are_not_gated() {
        for p in ["/v1/me", "/api/dashboard", "/pkg/jpu-share.js", "/healthz", "/metrics", "/login"] {
            assert!(!is_console_page(p), "{p}");
        }
        for p in ["/", "/queue", "/admin", "/jobs/3"] {
            assert!(is_console_page(p), "{p}");
        }
    }
}
