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
use std::sync::Arc;

use app::api::backend::{CurrentViewer, SignedIn};

/// Session key holding the signed-in user's id.
pub const SESSION_USER_KEY: &str = "user_id";
/// Session key holding the user's session epoch at sign-in (see
/// [`auth::caller_from_session`]).
pub const SESSION_EPOCH_KEY: &str = "epoch";

/// Makes `session` the signed-in session of a user (id, session epoch): a new id (session
/// fixation), the console's idle expiry (a pending university sign-in
/// had minutes), the user and their epoch.
pub async fn sign_in_session(
    session: &Session,
    (user_id, epoch): (i64, i64),
    idle_minutes: u32,
) -> Result<(), tower_sessions::session::Error> {
    session.cycle_id().await?;
    session.set_expiry(Some(tower_sessions::Expiry::OnInactivity(time::Duration::minutes(i64::from(idle_minutes)))));
    session.insert(SESSION_USER_KEY, user_id).await?;
    session.insert(SESSION_EPOCH_KEY, epoch).await
}

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

/// Marks a `/metrics` request that carries `metrics.token`.
#[derive(Debug, Clone, Copy)]
pub struct MetricsScraper;

/// Compares secrets in time independent of where they first differ.
fn same_secret(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Resolves the caller from `Authorization: Bearer` (which wins, and must
/// be valid if present) or from the console session, and records it in
/// the request extensions as [`Caller`] and [`CurrentViewer`].
pub async fn resolve_caller(State(state): State<AppState>, session: Session, mut req: Request, next: Next) -> Response {
    let metrics_token = &state.settings.metrics.token;
    if req.uri().path() == "/metrics" && !metrics_token.is_empty() {
        if let Some(Ok(token)) = bearer_token(&req) {
            if same_secret(&token, metrics_token) {
                req.extensions_mut().insert(MetricsScraper);
                return next.run(req).await;
            }
        }
    }
    let caller: Option<Caller> = match bearer_token(&req) {
        Some(Ok(token)) => match auth::caller_from_token(&state.db, &token, now_ms()).await {
            Ok(Some(caller)) => Some(caller),
            Ok(None) => return ApiError::Unauthenticated.into_response(),
            Err(e) => return ApiError::from(e).into_response(),
        },
        Some(Err(())) => return ApiError::Unauthenticated.into_response(),
        None => match session.get::<i64>(SESSION_USER_KEY).await {
            Ok(Some(user_id)) => match auth::caller_from_session(
                &state.db,
                user_id,
                session.get::<i64>(SESSION_EPOCH_KEY).await.ok().flatten().unwrap_or(0),
            )
            .await
            {
                Ok(caller) => caller,
                Err(e) => return ApiError::from(e).into_response(),
            },
            // an unreadable session is treated as no session
            _ => None,
        },
    };
    // a university user the directory dropped is signed out at once
    let caller = match caller {
        Some(c) if !crate::services::campus::still_admitted(&state, &c.user).await => {
            if c.token_id.is_some() {
                return ApiError::Unauthenticated.into_response();
            }
            None
        }
        other => other,
    };
    let signed_in = caller.as_ref().map(|c| SignedIn { viewer: c.user.viewer(), principal: Arc::new(c.clone()) });
    req.extensions_mut().insert(CurrentViewer(signed_in));
    if let Some(caller) = caller {
        req.extensions_mut().insert(caller);
    }
    next.run(req).await
}

/// Refuses a state-changing request that a browser could have been made to
/// send from another site: one that rides on the session cookie (a bearer
/// token is never sent by a browser on its own), or that signs in (login
/// CSRF). It must name the console's own origin in `Origin` (or, lacking
/// that, `Referer`): `server.public_url`, or the host the request was sent
/// to (a page on another site cannot make the browser send our host with
/// its origin). SameSite=Lax alone lets same-site subdomains through.
pub async fn cross_site_guard(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let safe = matches!(*req.method(), Method::GET | Method::HEAD | Method::OPTIONS);
    let bearer = req.headers().contains_key(header::AUTHORIZATION);
    let cookie = req.headers().contains_key(header::COOKIE);
    // sign-ins and a device's approval or denial: guarded with no cookie
    // too (login CSRF; a device approved through someone's provider session)
    let signs_in = matches!(req.uri().path(), "/login" | "/auth/device/approve" | "/auth/device/deny");
    if safe || bearer || !(cookie || signs_in) {
        return next.run(req).await;
    }
    if same_origin(req.headers(), &state.settings.server.public_url) {
        next.run(req).await
    } else {
        ApiError::Forbidden("cross-site request refused: it must come from the console's own pages (Origin)".into())
            .into_response()
    }
}

/// `scheme://authority` of a URL.
fn origin_of(url: &str) -> Option<&str> {
    let (scheme, rest) = url.split_once("://")?;
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    Some(&url[..scheme.len() + 3 + end])
}

fn same_origin(headers: &axum::http::HeaderMap, public_url: &str) -> bool {
    let text = |name| headers.get(name).and_then(|v| v.to_str().ok());
    let Some(origin) =
        text(header::ORIGIN).filter(|o| *o != "null").or_else(|| text(header::REFERER)).and_then(origin_of)
    else {
        return false;
    };
    if origin_of(public_url.trim_end_matches('/')).is_some_and(|own| own.eq_ignore_ascii_case(origin)) {
        return true;
    }
    let authority = origin.split_once("://").map_or("", |(_, a)| a);
    text(header::HOST).is_some_and(|host| host.eq_ignore_ascii_case(authority))
}

/// This response's CSP nonce, for the inline scripts the console renders.
#[derive(Debug, Clone)]
pub struct CspNonce(pub String);

/// Headers that keep the console from being framed, sniffed or made to
/// run script it did not send: every response gets `nosniff`, `DENY`
/// framing and a same-origin referrer; HTML pages a Content-Security-Policy
/// whose script sources are our own files and the inline hydration scripts
/// carrying this response's nonce (`'wasm-unsafe-eval'` lets the console's
/// wasm compile; inline `style` attributes are allowed, `<style>`
/// elements and inline event handlers are not).
pub async fn security_headers(mut req: Request, next: Next) -> Response {
    use base64::Engine as _;
    use rand::RngCore as _;
    let mut bytes = [0u8; 16];
    rand::thread_rng().fill_bytes(&mut bytes);
    let nonce = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes);
    req.extensions_mut().insert(CspNonce(nonce.clone()));
    let session_path = req.uri().path().starts_with("/s/");
    let mut response = next.run(req).await;
    // a session's app's own pages: the proxy set their rules (http::sessions)
    if response.extensions().get::<crate::http::sessions::FromTheApp>().is_some() {
        return response;
    }
    let html = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with("text/html"));
    let headers = response.headers_mut();
    let fixed = |v: &'static str| header::HeaderValue::from_static(v);
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, fixed("nosniff"));
    headers.insert(header::X_FRAME_OPTIONS, fixed("DENY"));
    headers.insert(header::REFERRER_POLICY, fixed("same-origin"));
    // a window a session's page (same origin, other rules) opens on the
    // console is cut off from its opener
    headers.insert(header::HeaderName::from_static("cross-origin-opener-policy"), fixed("same-origin"));
    if session_path {
        // what the app did not write under /s/ (the proxy's own 404, 502,
        // redirects, a refusal before it), whatever policy it came with
        headers.insert(header::CONTENT_SECURITY_POLICY, fixed(NO_ORIGIN));
    } else if headers.contains_key(header::CONTENT_SECURITY_POLICY) {
        // a page that brings its own (stricter) policy keeps it
    } else if html {
        let policy = format!(
            "default-src 'self'; script-src 'self' 'nonce-{nonce}' 'wasm-unsafe-eval'; style-src 'self'; \
             style-src-attr 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; object-src 'none'; \
             base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
        );
        if let Ok(value) = header::HeaderValue::from_str(&policy) {
            headers.insert(header::CONTENT_SECURITY_POLICY, value);
        }
    } else {
        // anything else opened as a page (`window.open('/v1/me')` from a
        // session's script) has no origin to script in: COOP alone is
        // ignored on a plain-http origin other than localhost
        headers.insert(header::CONTENT_SECURITY_POLICY, fixed(NO_ORIGIN));
    }
    response
}

/// The policy of a response no script may run in or reach from a window
/// it opens: a sandbox without `allow-same-origin` (no origin of its own),
/// nothing loaded, no form, not framed.
const NO_ORIGIN: &str = "sandbox; default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// Paths that are not console pages (API, assets, sign-in itself, the
/// sessions' proxy, which answers every method and gates on its own).
fn is_console_page(path: &str) -> bool {
    const OPEN_PREFIXES: &[&str] = &[
        "/v1/", "/api/", "/pkg/", "/healthz", "/readyz", "/metrics", "/login", "/logout", "/favicon", "/auth/", "/s/",
        "/lang/",
    ];
    path != "/v1" && !OPEN_PREFIXES.iter().any(|p| path.starts_with(p))
}

/// Console pages anyone may read: the university publishes its policy.
const PUBLIC_PAGES: &[&str] = &["/policy"];

/// Console pages need a signed-in user: anonymous page loads go to /login,
/// and a signed-in user opening /login goes to the dashboard. Pages are
/// only read: any other method on one is 405 at once (rendering the app
/// for a made-up method now and then never finished under load).
pub async fn console_gate(req: Request, next: Next) -> Response {
    if !matches!(*req.method(), Method::GET | Method::HEAD) && is_console_page(req.uri().path()) {
        return (axum::http::StatusCode::METHOD_NOT_ALLOWED, [(header::ALLOW, "GET, HEAD")]).into_response();
    }
    if req.method() == Method::GET {
        let signed_in = req.extensions().get::<Caller>().is_some();
        let path = req.uri().path();
        if !signed_in && is_console_page(path) && !PUBLIC_PAGES.contains(&path) {
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
    // labels from fixed sets: a made-up method or path must not become a
    // new time series (300 made-up methods added 570 KB to /metrics)
    let method = method_label(req.method()).to_string();
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map(|p| p.as_str().to_string())
        .unwrap_or_else(|| "unmatched".to_string());
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

fn method_label(method: &Method) -> &'static str {
    match *method {
        Method::GET => "GET",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::PATCH => "PATCH",
        Method::DELETE => "DELETE",
        Method::HEAD => "HEAD",
        Method::OPTIONS => "OPTIONS",
        _ => "OTHER",
    }
}

#[cfg(test)]
mod tests {
    use super::{is_console_page, method_label, same_secret};

    #[test]
    fn metric_labels_come_from_a_fixed_set() {
        assert_eq!(method_label(&axum::http::Method::GET), "GET");
        assert_eq!(method_label(&axum::http::Method::from_bytes(b"MADEUP1").unwrap()), "OTHER");
    }

    #[test]
    fn only_the_consoles_own_origin_is_same_origin() {
        use axum::http::{header, HeaderMap, HeaderValue};
        let headers = |pairs: &[(header::HeaderName, &str)]| {
            let mut h = HeaderMap::new();
            for (k, v) in pairs {
                h.insert(k.clone(), HeaderValue::from_str(v).unwrap());
            }
            h
        };
        let host = (header::HOST, "gpu.uni.edu:8080");
        assert!(super::same_origin(&headers(&[host.clone(), (header::ORIGIN, "http://gpu.uni.edu:8080")]), ""));
        assert!(super::same_origin(
            &headers(&[host.clone(), (header::REFERER, "https://gpu.uni.edu:8080/jobs?x=1")]),
            ""
        ));
        assert!(!super::same_origin(&headers(&[host.clone(), (header::ORIGIN, "http://evil.example")]), ""));
        assert!(
            !super::same_origin(&headers(&[host.clone(), (header::ORIGIN, "http://lab.gpu.uni.edu:8080")]), ""),
            "a sibling subdomain"
        );
        assert!(!super::same_origin(&headers(&[host.clone(), (header::ORIGIN, "null")]), ""));
        assert!(!super::same_origin(&headers(std::slice::from_ref(&host)), ""), "no origin at all");
        let proxied = [(header::HOST, "127.0.0.1:8080"), (header::ORIGIN, "https://gpu.uni.edu")];
        assert!(super::same_origin(&headers(&proxied), "https://gpu.uni.edu/"));
        assert!(!super::same_origin(&headers(&proxied), ""));
    }

    #[test]
    fn secrets_compare_whole() {
        assert!(same_secret("abc", "abc"));
        assert!(!same_secret("abc", "abd") && !same_secret("abc", "ab") && !same_secret("", "a"));
    }

    #[test]
    fn api_and_assets_are_not_gated() {
        for p in ["/v1/me", "/api/dashboard", "/pkg/jpu-share.js", "/healthz", "/metrics", "/login", "/s/4/api/kernels"]
        {
            assert!(!is_console_page(p), "{p}");
        }
        for p in ["/", "/queue", "/admin", "/jobs/3", "/s", "/submit"] {
            assert!(is_console_page(p), "{p}");
        }
    }
}
