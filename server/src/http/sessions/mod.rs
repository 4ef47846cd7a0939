//! `/s/{id}/…`: the sessions' proxy, HTTP and WebSocket, streaming both
//! ways, to the session's owner only (anyone else 404; anonymous → the
//! sign-in page).
//!
//! The pages it serves are the researcher's code on the console's own
//! origin. What keeps them from the console and from other sessions:
//! - the console's cookies and `Authorization` never reach the app, and
//!   the app may set cookies only for its own `/s/{id}/` path;
//! - every response carries a policy (CSP) that lets its pages fetch,
//!   open sockets, post forms, frame and start workers only under their
//!   own `/s/{id}/` (a path the browser checks); because a redirect would
//!   lift the path check, a redirect out of `/s/{id}/` is refused here;
//! - console pages are `Cross-Origin-Opener-Policy: same-origin` (these
//!   are not), so a window a session opens on the console is cut off;
//!   console pages cannot be framed at all;
//! - any other response under `/s/` (this proxy's own 404 for another
//!   id, its 502 and redirects, a refusal before it) is sandboxed without
//!   an origin, runs no script, and cuts off its opener: a session's script
//!   that opens one finds nothing to script in (`window.open('/s/99999/')`
//!   once gave it a same-origin page without a policy, and with it `/v1`);
//! - a WebSocket must come from the console's origin; `Service-Worker-Allowed`
//!   from the app is dropped, and no worker of the app's is installed;
//!   sessions are served only where COOP holds (https, or loopback) —
//!   [`edge`] says why;
//! - an app that asks a token (on Slurm) gets it from here, and it is
//!   scrubbed from every response ([`scrub`]).

mod edge;
mod scrub;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::any;
use axum::Router;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::auth::Caller;
use crate::http::error::ApiError;
use crate::services::sessions;
use crate::state::AppState;

/// The console's own cookies (the proxy keeps them from the app): its
/// session's, by either of the names it may have (`crate::http`).
const CONSOLE_COOKIES: [&str; 2] = ["jpu_session", "__Host-jpu_session"];

pub fn router() -> Router<AppState> {
    Router::new().route("/s/{id}", any(proxy)).route("/s/{id}/", any(proxy)).route("/s/{id}/{*rest}", any(proxy))
}

async fn proxy(State(state): State<AppState>, req: Request) -> Response {
    let path = req.uri().path().to_string();
    let Some(id) = session_id(&path) else {
        return ApiError::NotFound("no such session".into()).into_response();
    };
    let Some(caller) = req.extensions().get::<Caller>().cloned() else {
        return Redirect::to("/login").into_response();
    };
    let app = match sessions::target(&state, &caller, id).await {
        Ok(app) => app,
        Err(e) => return ApiError::from(e).into_response(),
    };
    if path == format!("/s/{id}") {
        return Redirect::to(&format!("/s/{id}/")).into_response();
    }
    if is_upgrade(req.headers()) && !same_origin(req.headers(), &state.settings.server.public_url) {
        return ApiError::Forbidden("a session's socket opens only from this site's own pages".into()).into_response();
    }
    if !edge::secure_enough(&state.settings.server.public_url, req.headers()) {
        return edge::not_secure();
    }
    if edge::asks_for_a_worker(req.headers()) {
        return edge::unregistering_worker();
    }
    state.sessions.touch(id);
    match forward(&state, id, app, req).await {
        Ok(response) => response,
        Err(why) => {
            tracing::info!(session = id, %why, "session app unreachable");
            (StatusCode::BAD_GATEWAY, "the session's app is not answering; it may have ended").into_response()
        }
    }
}

/// Marks a response the session's app wrote (and [`confine`] held to its
/// session). Every other response under `/s/` — the proxy's own 404, 502
/// and redirects, a refusal from a layer before it — gets a sandbox with
/// no origin of its own instead (`middleware::security_headers`).
#[derive(Debug, Clone, Copy)]
pub struct FromTheApp;

/// `/s/{id}…` → id.
fn session_id(path: &str) -> Option<i64> {
    let id = path.strip_prefix("/s/")?.split('/').next()?;
    if id.is_empty() || id.starts_with('0') || !id.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    id.parse().ok()
}

fn is_upgrade(headers: &HeaderMap) -> bool {
    headers.get(header::UPGRADE).is_some()
}

fn same_origin(headers: &HeaderMap, public_url: &str) -> bool {
    let origin = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok());
    let host = headers.get(header::HOST).and_then(|v| v.to_str().ok());
    match (origin, host) {
        // browsers always send Origin on a WebSocket; tools may not
        (None, _) => true,
        (Some(origin), host) => {
            let own = public_url.trim_end_matches('/');
            origin.eq_ignore_ascii_case(own)
                || host.is_some_and(|h| {
                    origin.strip_prefix("http://").or_else(|| origin.strip_prefix("https://")) == Some(h)
                })
        }
    }
}

async fn forward(
    state: &AppState,
    id: i64,
    app: sessions::app::AppAddress,
    mut req: Request,
) -> Result<Response, String> {
    let sessions::app::Connection { stream, token } = app.connect().await.map_err(|e| e.to_string())?;
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(TokioIo::new(stream)).await.map_err(|e| e.to_string())?;
    tokio::spawn(connection.with_upgrades());
    let browser_side = req.extensions_mut().remove::<hyper::upgrade::OnUpgrade>();
    let host = req.headers().get(header::HOST).cloned();
    let request_path = req.uri().path().to_string();
    let public_url = &state.settings.server.public_url;
    let secure = public_url.starts_with("https://");
    // the page's scheme, when this site says it (else both are tried)
    let schemes: &[&str] = match public_url {
        u if u.starts_with("https://") => &["https"],
        u if u.starts_with("http://") => &["http"],
        _ => &["http", "https"],
    };
    let (mut parts, body) = req.into_parts();
    strip_console_credentials(&mut parts.headers);
    if let Some(token) = &token {
        let value = HeaderValue::from_str(&format!("token {token}")).map_err(|e| e.to_string())?;
        parts.headers.insert(header::AUTHORIZATION, value);
        parts.headers.remove(header::ACCEPT_ENCODING);
    }
    parts.extensions = Default::default();
    let upstream = hyper::Request::from_parts(parts, body);
    let mut response = sender.send_request(upstream).await.map_err(|e| e.to_string())?;
    let base = format!("/s/{id}/");
    if let Some(location) = response.headers().get(header::LOCATION) {
        if !schemes.iter().all(|scheme| stays_within(location, &base, host.as_ref(), &request_path, scheme)) {
            return Ok(
                (StatusCode::BAD_GATEWAY, "the session's app redirected outside its session: refused").into_response()
            );
        }
    }
    if response.status() == StatusCode::SWITCHING_PROTOCOLS {
        let app_side = hyper::upgrade::on(&mut response);
        let activity = state.sessions.clone();
        if let Some(browser_side) = browser_side {
            tokio::spawn(async move {
                if let (Ok(browser), Ok(app)) = (browser_side.await, app_side.await) {
                    relay(TokioIo::new(browser), TokioIo::new(app), move || activity.touch(id)).await;
                }
            });
        }
    }
    let (mut parts, body) = response.into_parts();
    confine(&mut parts.headers, &base, host.as_ref(), secure);
    parts.extensions.insert(FromTheApp);
    let body = match token {
        Some(token) => {
            // the scrub may shorten it
            parts.headers.remove(header::CONTENT_LENGTH);
            scrub::scrub(Body::new(body), token)
        }
        None => Body::new(body),
    };
    Ok(Response::from_parts(parts, body))
}

/// The app sees neither the console's session cookie nor a token.
fn strip_console_credentials(headers: &mut HeaderMap) {
    headers.remove(header::AUTHORIZATION);
    let kept: Vec<String> = headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .filter(|c| !CONSOLE_COOKIES.iter().any(|name| c.split('=').next() == Some(name)))
        .map(str::to_string)
        .collect();
    headers.remove(header::COOKIE);
    if let Ok(value) = HeaderValue::from_str(&kept.join("; ")) {
        if !kept.is_empty() {
            headers.insert(header::COOKIE, value);
        }
    }
}

/// A `Location` that stays under `base` once the browser has resolved it
/// against the request's path — with the same URL parser browsers use, so
/// `%2e%2e`, `\\host`, tabs and the like mean here what they mean there.
fn stays_within(
    location: &HeaderValue,
    base: &str,
    host: Option<&HeaderValue>,
    request_path: &str,
    scheme: &str,
) -> bool {
    let Ok(text) = location.to_str() else { return false };
    // without a Host only a relative Location can match
    let host = host.and_then(|h| h.to_str().ok()).unwrap_or("jpu-share.invalid");
    // resolved against the page's own scheme: `http:evil.example/…` is
    // relative to an http page and another host to an https one
    let Ok(here) = url::Url::parse(&format!("{scheme}://{host}{request_path}")) else { return false };
    let Ok(there) = here.join(text) else { return false };
    matches!(there.scheme(), "http" | "https")
        && there.username().is_empty()
        && there.password().is_none()
        && (there.host_str(), there.port()) == (here.host_str(), here.port())
        && there.path().starts_with(base)
}

/// The response's headers, held to its session (see the module's header).
fn confine(headers: &mut HeaderMap, base: &str, host: Option<&HeaderValue>, secure: bool) {
    headers.remove("service-worker-allowed");
    let cookies: Vec<HeaderValue> = headers
        .get_all(header::SET_COOKIE)
        .iter()
        .filter(|c| c.to_str().is_ok_and(|c| own_cookie(c, base)))
        .cloned()
        .collect();
    headers.remove(header::SET_COOKIE);
    for cookie in cookies {
        headers.append(header::SET_COOKIE, cookie);
    }
    // with schemes: Chromium does not let a scheme-less source match the
    // page's WebSockets (measured: JupyterLab's kernel sockets refused)
    let (http, ws) = if secure { ("https", "wss") } else { ("http", "ws") };
    let host = host
        .and_then(|h| h.to_str().ok())
        .filter(|h| !h.is_empty() && h.bytes().all(|b| b.is_ascii_alphanumeric() || b".-:[]".contains(&b)));
    let (here, sockets) = match host {
        Some(h) => (format!("{http}://{h}{base}"), format!("{ws}://{h}{base}")),
        None => ("'none'".to_string(), String::new()),
    };
    let policy = format!(
        "connect-src {here} {sockets}; form-action {here}; frame-src {here} blob: data:; worker-src {here} blob:; \
         object-src 'none'; base-uri {here}; frame-ancestors 'self'"
    );
    if let Ok(value) = HeaderValue::from_str(&policy) {
        headers.append(header::CONTENT_SECURITY_POLICY, value);
    }
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("same-origin"));
}

/// A Set-Cookie the app may set: with a `Path` under `base` — each one,
/// as a browser takes the last of several (S2: `Path=/s/7/; Path=/` once
/// overwrote the console's session) — and not named as a console cookie.
fn own_cookie(cookie: &str, base: &str) -> bool {
    let name = cookie.split(';').next().and_then(|pair| pair.split_once('=')).map(|(n, _)| n.trim());
    let paths: Vec<&str> = cookie
        .split(';')
        .skip(1)
        .filter_map(|attr| attr.split_once('='))
        .filter(|(name, _)| name.trim().eq_ignore_ascii_case("path"))
        .map(|(_, value)| value.trim())
        .collect();
    name.is_some_and(|n| !CONSOLE_COOKIES.contains(&n))
        && !paths.is_empty()
        && paths.iter().all(|p| p.starts_with(base) && !p.contains(".."))
}

/// Copies both ways until either side closes; each chunk is use.
async fn relay<A, B>(browser: A, app: B, used: impl Fn() + Clone + Send + 'static)
where
    A: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
    B: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (mut browser_in, mut browser_out) = tokio::io::split(browser);
    let (mut app_in, mut app_out) = tokio::io::split(app);
    let up_used = used.clone();
    let up = async move {
        let mut buf = vec![0u8; 16 * 1024];
        while let Ok(n) = browser_in.read(&mut buf).await {
            if n == 0 || app_out.write_all(&buf[..n]).await.is_err() {
                break;
            }
            up_used();
        }
        let _ = app_out.shutdown().await;
    };
    let down = async move {
        let mut buf = vec![0u8; 16 * 1024];
        while let Ok(n) = app_in.read(&mut buf).await {
            if n == 0 || browser_out.write_all(&buf[..n]).await.is_err() {
                break;
            }
            used();
        }
        let _ = browser_out.shutdown().await;
    };
    tokio::select! {
        _ = up => {}
        _ = down => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_positive_ids_name_a_session() {
        assert_eq!(session_id("/s/12/lab"), Some(12));
        assert_eq!(session_id("/s/12"), Some(12));
        for bad in ["/s/", "/s/0/", "/s/-1/", "/s/+12/", "/s/012/", "/s/1e3/", "/x/12/"] {
            assert_eq!(session_id(bad), None, "{bad}");
        }
    }

    #[test]
    fn redirects_stay_inside_the_session() {
        let host = HeaderValue::from_static("jpu.example.edu");
        let inside =
            |l: &'static str| stays_within(&HeaderValue::from_static(l), "/s/7/", Some(&host), "/s/7/tree/a", "http");
        assert!(inside("/s/7/lab"));
        assert!(inside("http://jpu.example.edu/s/7/lab?x=1"));
        // behind a TLS proxy the app sees http and says https: still here
        assert!(inside("https://jpu.example.edu/s/7/lab"));
        assert!(inside("lab"));
        assert!(inside("../lab"));
        let secure =
            |l: &'static str| stays_within(&HeaderValue::from_static(l), "/s/7/", Some(&host), "/s/7/tree/a", "https");
        assert!(secure("https://jpu.example.edu/s/7/lab") && secure("lab"));
        // relative to an http page, another host to an https one
        assert!(!secure("http:evil.example/s/7/") && !secure("http:jpu.example.edu/v1/me"));
        for out in [
            "/v1/jobs",
            "/s/8/lab",
            "/s/7/../../v1/jobs",
            "//evil.example/s/7/",
            "https://evil.example/s/7/",
            "../../x",
            // S3: what browsers resolve out of the session
            "/s/7/%2e%2e/%2e%2e/v1/me",
            "/s/7/%2E%2E/8/",
            "%2e%2e/%2e%2e/%2e%2e/v1/me",
            "\\\\evil.example/s/7/",
            "/\\evil.example/s/7/",
            "http://user@jpu.example.edu/s/7/",
            "http://jpu.example.edu:8080/s/7/",
            "javascript:alert(1)",
        ] {
            assert!(!inside(out), "{out}");
        }
    }

    #[test]
    fn the_app_never_sees_the_console_session_or_a_token() {
        let mut headers = HeaderMap::new();
        headers.insert(header::AUTHORIZATION, HeaderValue::from_static("Bearer secret"));
        headers.insert(
            header::COOKIE,
            HeaderValue::from_static("jpu_session=abc; _xsrf=2|x; __Host-jpu_session=def; username-h=\"y\""),
        );
        strip_console_credentials(&mut headers);
        assert!(headers.get(header::AUTHORIZATION).is_none());
        assert_eq!(headers.get(header::COOKIE).unwrap(), "_xsrf=2|x; username-h=\"y\"");
    }

    #[test]
    fn the_app_sets_cookies_for_its_own_path_only() {
        let mut headers = HeaderMap::new();
        headers.append(header::SET_COOKIE, HeaderValue::from_static("_xsrf=1; Path=/s/7/"));
        headers.append(header::SET_COOKIE, HeaderValue::from_static("jpu_session=evil; Path=/"));
        headers.append(header::SET_COOKIE, HeaderValue::from_static("other=1"));
        headers.append(header::SET_COOKIE, HeaderValue::from_static("x=1; Path=/s/70/"));
        // S2: a browser takes the last Path; the console's name is not the app's
        headers.append(header::SET_COOKIE, HeaderValue::from_static("jpu_session=evil; Path=/s/7/; Path=/"));
        headers.append(header::SET_COOKIE, HeaderValue::from_static("jpu_session=evil; Path=/s/7/"));
        headers.append(header::SET_COOKIE, HeaderValue::from_static("__Host-jpu_session=evil; Path=/s/7/"));
        headers.append(header::SET_COOKIE, HeaderValue::from_static("y=1; Path=/s/7/../../"));
        headers.insert("service-worker-allowed", HeaderValue::from_static("/"));
        confine(&mut headers, "/s/7/", Some(&HeaderValue::from_static("h:8080")), false);
        let cookies: Vec<_> = headers.get_all(header::SET_COOKIE).iter().collect();
        assert_eq!(cookies, ["_xsrf=1; Path=/s/7/"]);
        assert!(headers.get("service-worker-allowed").is_none());
        let csp = headers.get(header::CONTENT_SECURITY_POLICY).unwrap().to_str().unwrap();
        assert!(csp.contains("connect-src http://h:8080/s/7/ ws://h:8080/s/7/;"), "{csp}");
        assert!(csp.contains("base-uri http://h:8080/s/7/;") && csp.contains("object-src 'none'"), "{csp}");
    }

    #[test]
    fn a_host_that_could_widen_the_policy_leaves_it_shut() {
        let mut headers = HeaderMap::new();
        confine(&mut headers, "/s/7/", Some(&HeaderValue::from_static("h; connect-src *")), true);
        let csp = headers.get(header::CONTENT_SECURITY_POLICY).unwrap().to_str().unwrap();
        assert!(csp.starts_with("connect-src 'none' ;") && !csp.contains('*'), "{csp}");
        let mut headers = HeaderMap::new();
        confine(&mut headers, "/s/7/", Some(&HeaderValue::from_static("jpu.example.edu")), true);
        let csp = headers.get(header::CONTENT_SECURITY_POLICY).unwrap().to_str().unwrap();
        assert!(csp.contains("connect-src https://jpu.example.edu/s/7/ wss://jpu.example.edu/s/7/;"), "{csp}");
    }
}
