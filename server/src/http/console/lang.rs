//! The console's language: chosen once per request for the pages
//! ([`request_locale`]: the person's stored choice, the `jpu_lang` cookie,
//! `Accept-Language`), and switched by `GET /lang/{tag}?back=…`, which
//! keeps the choice in the cookie (and for a signed-in person, in the
//! database) and goes back to the page it came from — only to a path of
//! this site, never to another one.

use axum::extract::{Path, Query, State};
use axum::http::{header, request::Parts, HeaderMap};
use axum::response::{IntoResponse, Redirect, Response};
use axum::Extension;
use serde::Deserialize;

use app::i18n::{Locale, LOCALE_COOKIE};

use crate::auth::Caller;
use crate::state::AppState;

/// The language of the page this request renders.
pub fn request_locale(parts: &Parts) -> Locale {
    let stored = parts.extensions.get::<Caller>().and_then(|c| c.user.locale.clone());
    negotiate(stored.as_deref(), &parts.headers)
}

/// The language of someone not signed in (yet): their cookie's, else
/// their browser's.
pub fn headers_locale(headers: &HeaderMap) -> Locale {
    negotiate(None, headers)
}

fn negotiate(stored: Option<&str>, headers: &HeaderMap) -> Locale {
    let cookie = cookie_value(headers, LOCALE_COOKIE);
    let accept = headers.get(header::ACCEPT_LANGUAGE).and_then(|v| v.to_str().ok());
    Locale::negotiate(stored, cookie.as_deref(), accept)
}

fn cookie_value(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.to_string())
}

#[derive(Deserialize)]
pub struct Back {
    back: Option<String>,
}

/// Where to go after switching: a path of this site, as sign-in's
/// `next` is checked (no `//` or `/\\`, no control character, which
/// browsers drop: `/\t/evil.example` is `//evil.example` to them), else
/// the dashboard.
fn safe_back(back: Option<&str>) -> String {
    crate::auth::oidc::safe_next(back.unwrap_or("/"))
}

pub async fn switch(
    State(state): State<AppState>,
    caller: Option<Extension<Caller>>,
    Path(tag): Path<String>,
    Query(back): Query<Back>,
) -> Response {
    let Some(locale) = Locale::from_tag(&tag).filter(|l| l.tag() == tag) else {
        return (axum::http::StatusCode::NOT_FOUND, "no such language").into_response();
    };
    if let Some(Extension(caller)) = caller {
        if let Err(e) = crate::services::account::set_locale(&state, &caller, locale).await {
            tracing::warn!(error = %e, "cannot keep the language choice");
        }
    }
    let secure = if state.settings.server.secure_cookies { "; Secure" } else { "" };
    let cookie = format!("{LOCALE_COOKIE}={}; Path=/; Max-Age=31536000; SameSite=Lax{secure}", locale.tag());
    ([(header::SET_COOKIE, cookie)], Redirect::to(&safe_back(back.back.as_deref()))).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn going_back_stays_on_this_site() {
        for (back, want) in [
            (Some("/policy#oom"), "/policy#oom"),
            (Some("/jobs?state=RUNNING"), "/jobs?state=RUNNING"),
            (Some("//evil.example"), "/"),
            (Some("/\\evil.example"), "/"),
            (Some("https://evil.example"), "/"),
            (Some("/x\r\nSet-Cookie: a=b"), "/"),
            // L1, L2: browsers drop a TAB (`//evil`); other controls and
            // non-ASCII are no header value (a 500 once)
            (Some("/\t/evil.example"), "/"),
            (Some("/\u{7}x"), "/"),
            (Some("/\u{b}x"), "/"),
            (Some("/caf\u{e9}"), "/"),
            (Some("/a b"), "/"),
            (None, "/"),
        ] {
            assert_eq!(safe_back(back), want, "{back:?}");
        }
    }

    #[test]
    fn the_cookie_is_read_among_others() {
        let mut headers = HeaderMap::new();
        headers.insert(header::COOKIE, "id=abc; jpu_lang=ko; x=y".parse().unwrap());
        assert_eq!(cookie_value(&headers, LOCALE_COOKIE).as_deref(), Some("ko"));
        assert_eq!(cookie_value(&HeaderMap::new(), LOCALE_COOKIE), None);
    }
}
