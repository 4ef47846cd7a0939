//! What the proxy answers itself, before the app is asked: the two ways
//! a session's script could otherwise reach the console, which the
//! response policies alone do not close.
//!
//! - **A plain-http origin.** Console pages cut a window a session opens
//!   off from it with `Cross-Origin-Opener-Policy`, and browsers honour
//!   COOP only in a secure context: over plain http to anything but
//!   loopback, `window.open('/account')` from a notebook is a console page
//!   the notebook can script, and with it `/v1` as its owner. So sessions
//!   are served only when the site is (`server.public_url` https) or the
//!   browser is on this machine (loopback).
//! - **Service workers.** One would answer the session's navigations with
//!   pages the proxy never sees. The browser asks for a worker's script
//!   with `Service-Worker: script`; it gets one that unregisters itself,
//!   so a worker installed before this existed is replaced by it at its
//!   next update check (a refusal would leave that one running).

use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

/// Whether sessions may be served to this request (see the module).
pub fn secure_enough(public_url: &str, headers: &HeaderMap) -> bool {
    if public_url.starts_with("https://") {
        return true;
    }
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or_default();
    let name = match host.rsplit_once(':') {
        Some((name, port)) if port.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => host,
    };
    let name = name.trim_start_matches('[').trim_end_matches(']');
    name.eq_ignore_ascii_case("localhost") || name.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// The answer to a plain-http request from elsewhere than this machine.
pub fn not_secure() -> Response {
    let why = "notebooks are served only over https (server.public_url), or to a browser on this machine";
    (StatusCode::FORBIDDEN, why).into_response()
}

/// Whether the browser is fetching a service worker's script.
pub fn asks_for_a_worker(headers: &HeaderMap) -> bool {
    headers.get("service-worker").is_some_and(|v| v.as_bytes() == b"script")
}

/// A service worker that takes over at once and removes itself.
pub fn unregistering_worker() -> Response {
    let script = "self.addEventListener('install', () => self.skipWaiting());\n\
                  self.addEventListener('activate', (e) => e.waitUntil(self.registration.unregister()));\n";
    let mut response = (StatusCode::OK, script).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/javascript"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_need_https_or_a_browser_on_this_machine() {
        let with_host = |host: &'static str| {
            let mut headers = HeaderMap::new();
            headers.insert(header::HOST, HeaderValue::from_static(host));
            headers
        };
        for host in ["127.0.0.1:8080", "localhost", "LOCALHOST:3000", "[::1]:8080", "127.3.4.5"] {
            assert!(secure_enough("", &with_host(host)), "{host}");
            assert!(secure_enough("http://127.0.0.1:8080", &with_host(host)), "{host}");
        }
        for host in ["gpu.example.edu", "10.0.0.7:8080", "localhost.evil.example", "127.0.0.1.nip.io", ""] {
            assert!(!secure_enough("http://gpu.example.edu", &with_host(host)), "{host}");
            assert!(secure_enough("https://gpu.example.edu", &with_host(host)), "{host} behind https");
        }
    }
}
