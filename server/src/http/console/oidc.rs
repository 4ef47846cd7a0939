//! `GET /auth/oidc/login` and `GET /auth/oidc/callback` (api.md): the
//! browser's way through the university's sign-in. What the redirect
//! started (state, nonce, PKCE verifier, `next`) waits in this browser's
//! session and is taken out at the callback, so a callback from another
//! browser (login CSRF) or a replayed one finds nothing. A callback that
//! fails a check is a 400 page saying so; someone the rules keep out, a
//! 403 page saying why; neither sets a session. `GET /auth/device` is the
//! page a device sign-in sends the person to: it names the device, and
//! its approval (`POST /auth/device/approve`) is a sign-in at the
//! university whose callback approves the device instead of signing the
//! browser in (`POST /auth/device/deny` declines it).

use app::i18n::{tr, Locale};
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::Form;
use serde::Deserialize;
use tower_sessions::Session;

use crate::auth::oidc::{OidcError, Pending};
use crate::clock::now_ms;
use crate::http::extract::ClientAddr;
use crate::http::middleware::SESSION_USER_KEY;
use crate::services::campus::{self, CampusError};
use crate::services::device::Answer;
use crate::state::AppState;

const PENDING_KEY: &str = "oidc_pending";

#[derive(Deserialize)]
pub struct LoginQuery {
    next: Option<String>,
}

pub async fn login(
    State(state): State<AppState>,
    ClientAddr(client): ClientAddr,
    session: Session,
    headers: HeaderMap,
    Query(q): Query<LoginQuery>,
) -> Response {
    let page = Page(super::lang::headers_locale(&headers));
    begin(&state, client, &session, &page, q.next.as_deref().unwrap_or("/"), None).await
}

/// Sends the browser to the provider, keeping what the callback checks.
async fn begin(
    state: &AppState,
    client: std::net::IpAddr,
    session: &Session,
    page: &Page,
    next: &str,
    device: Option<&str>,
) -> Response {
    let Some(oidc) = state.oidc.clone() else {
        return page.show(StatusCode::NOT_FOUND, "oidc-none-title", &page.t("oidc-none-why"));
    };
    if !state.sign_in_starts.allow(client, std::time::Instant::now()) {
        return page.show(StatusCode::TOO_MANY_REQUESTS, "oidc-failed-title", &page.t("oidc-too-many"));
    }
    let (url, pending) = match oidc.begin(next, device, now_ms()).await {
        Ok(started) => started,
        Err(e) => return page.failed(e),
    };
    // a pending sign-in is kept only as long as it can be finished (the
    // row of an anonymous visitor otherwise stayed the console's 8 hours)
    if session.get::<i64>(SESSION_USER_KEY).await.ok().flatten().is_none() {
        let ttl = time::Duration::milliseconds(crate::auth::oidc::PENDING_TTL_MS);
        session.set_expiry(Some(tower_sessions::Expiry::OnInactivity(ttl)));
    }
    if let Err(e) = session.insert(PENDING_KEY, pending).await {
        tracing::error!(error = %e, "cannot keep a sign-in's state");
        return page.show(StatusCode::INTERNAL_SERVER_ERROR, "oidc-failed-title", &page.t("oidc-retry"));
    }
    Redirect::to(&url).into_response()
}

#[derive(Deserialize)]
pub struct CallbackQuery {
    code: Option<String>,
    state: Option<String>,
    error: Option<String>,
    error_description: Option<String>,
}

pub async fn callback(
    State(state): State<AppState>,
    ClientAddr(client): ClientAddr,
    session: Session,
    headers: HeaderMap,
    Query(q): Query<CallbackQuery>,
) -> Response {
    let page = Page(super::lang::headers_locale(&headers));
    let Some(oidc) = state.oidc.clone() else {
        return page.show(StatusCode::NOT_FOUND, "oidc-none-title", &page.t("oidc-none-why"));
    };
    // one use: whatever happens next, this browser's pending sign-in ends
    let pending: Option<Pending> = session.remove(PENDING_KEY).await.ok().flatten();
    let Some(pending) = pending else {
        return page.rejected(&page.t("oidc-not-started"));
    };
    if let Some(error) = q.error {
        let why = q.error_description.unwrap_or(error);
        return page.rejected(&tr(page.0, "oidc-provider-said", &[("why", why.into())]));
    }
    let (Some(code), Some(returned_state)) = (q.code, q.state) else {
        return page.rejected(&page.t("oidc-no-code"));
    };
    let identity = match oidc.finish(&pending, &code, &returned_state, now_ms()).await {
        Ok(identity) => identity,
        Err(e) => return page.failed(e),
    };
    let user = match campus::sign_in(&state, &identity).await {
        Ok(user) => user,
        Err(CampusError::Refused(why)) => {
            return page.show(StatusCode::FORBIDDEN, "oidc-refused-title", &why.message().text(page.0))
        }
        Err(CampusError::Directory(e)) => {
            tracing::error!(error = %e, "the directory cannot be asked");
            return page.show(StatusCode::BAD_GATEWAY, "oidc-unavailable-title", &page.t("oidc-directory-down"));
        }
        Err(CampusError::Service(e)) => {
            tracing::error!(error = %e, "campus sign-in failed");
            return page.show(StatusCode::INTERNAL_SERVER_ERROR, "oidc-failed-title", &page.t("oidc-retry"));
        }
    };
    state.sign_in_starts.finished(client);
    if let Some(code) = pending.device.as_deref() {
        // a device's approval: the device gets the token, not this browser
        return device_answered(&state, &page, code, Answer::Approved(user.id));
    }
    let idle = state.settings.server.session_idle_minutes;
    if let Err(e) = crate::http::middleware::sign_in_session(&session, (user.id, user.session_epoch), idle).await {
        tracing::error!(error = %e, "cannot store session");
        return page.show(StatusCode::INTERNAL_SERVER_ERROR, "oidc-failed-title", &page.t("oidc-retry"));
    }
    Redirect::to(&pending.next).into_response()
}

#[derive(Deserialize)]
pub struct DeviceQuery {
    user_code: Option<String>,
}

/// `GET /auth/device?user_code=…`: where `jpu login --sso` sends the
/// person first. It names the device and the address that asked, and
/// when, before the link on to the provider's approval (#42 D1): a code
/// someone else started is not approved unawares.
pub async fn device(State(state): State<AppState>, headers: HeaderMap, Query(q): Query<DeviceQuery>) -> Response {
    let page = Page(super::lang::headers_locale(&headers));
    if q.user_code.is_none() {
        return device_code_form(&page);
    }
    let requested = q.user_code.as_deref().and_then(|code| state.device_requests.get(code, now_ms()));
    let (Some(code), Some(requested)) = (q.user_code, requested) else {
        return page.show(StatusCode::NOT_FOUND, "device-unknown-title", &page.t("device-unknown-why"));
    };
    let asked = tr(
        page.0,
        "device-asked",
        &[
            ("device", requested.device.clone().into()),
            ("address", requested.address.to_string().into()),
            ("at", crate::clock::rfc3339(requested.at_ms).into()),
        ],
    );
    let code = crate::services::device::normal_code(&code);
    let form = |action: &str, testid: &str, key: &str| {
        format!(
            "<form method=\"post\" action=\"/auth/device/{action}\"><input type=\"hidden\" name=\"user_code\" \
             value=\"{code}\"><button type=\"submit\" data-testid=\"{testid}\">{label}</button></form>",
            code = escape(&code),
            label = escape(&page.t(key)),
        )
    };
    let main = format!(
        "<p data-testid=\"device-asked\">{asked}</p>\
         <p>{code_is} <strong data-testid=\"device-code\">{code}</strong></p><p>{not_you}</p>{approve}{deny}",
        asked = escape(&asked),
        code_is = escape(&page.t("device-code")),
        code = escape(&code),
        not_you = escape(&page.t("device-not-you")),
        approve = form("approve", "device-continue", "device-continue"),
        deny = form("deny", "device-deny", "device-deny"),
    );
    // nothing on it may be framed or run; its forms post here, and the
    // approval's redirect goes on to the provider
    let provider = match &state.oidc {
        Some(oidc) => oidc.authorize_origin().await.unwrap_or_default(),
        None => String::new(),
    };
    let policy = format!("default-src 'none'; frame-ancestors 'none'; form-action 'self' {provider}; base-uri 'none'");
    ([(axum::http::header::CONTENT_SECURITY_POLICY, policy)], Html(page.html("device-title", &main))).into_response()
}

#[derive(Deserialize)]
pub struct DeviceForm {
    user_code: String,
}

/// `POST /auth/device/approve`: a sign-in at the university (anew:
/// `prompt=login`) whose callback approves this device sign-in. Only from
/// this site's own page (the cross-site guard): a page elsewhere cannot
/// post it and ride on the person's session at the provider.
pub async fn device_approve(
    State(state): State<AppState>,
    ClientAddr(client): ClientAddr,
    session: Session,
    headers: HeaderMap,
    Form(form): Form<DeviceForm>,
) -> Response {
    let page = Page(super::lang::headers_locale(&headers));
    let code = crate::services::device::normal_code(&form.user_code);
    if state.device_requests.get(&code, now_ms()).is_none_or(|r| r.answer != Answer::Waiting) {
        return page.show(StatusCode::NOT_FOUND, "device-unknown-title", &page.t("device-unknown-why"));
    }
    begin(&state, client, &session, &page, "/", Some(&code)).await
}

/// `POST /auth/device/deny`: the device gets nothing.
pub async fn device_deny(State(state): State<AppState>, headers: HeaderMap, Form(form): Form<DeviceForm>) -> Response {
    let page = Page(super::lang::headers_locale(&headers));
    device_answered(&state, &page, &form.user_code, Answer::Denied)
}

/// The page once a device sign-in is answered.
fn device_answered(state: &AppState, page: &Page, code: &str, answer: Answer) -> Response {
    let now = now_ms();
    let requested = state.device_requests.get(code, now);
    let (Some(requested), true) = (requested, state.device_requests.answer(code, answer, now)) else {
        return page.show(StatusCode::NOT_FOUND, "device-unknown-title", &page.t("device-unknown-why"));
    };
    let (title, key) = match answer {
        Answer::Approved(_) => ("device-approved-title", "device-approved"),
        _ => ("device-declined-title", "device-declined"),
    };
    let said = tr(page.0, key, &[("device", requested.device.into())]);
    let main = format!("<p data-testid=\"device-answered\">{}</p>", escape(&said));
    let policy = "default-src 'none'; frame-ancestors 'none'; form-action 'none'; base-uri 'none'";
    ([(axum::http::header::CONTENT_SECURITY_POLICY, policy)], Html(page.html(title, &main))).into_response()
}

/// `/auth/device` without a code: where to type the one the device shows.
fn device_code_form(page: &Page) -> Response {
    let main = format!(
        "<form method=\"get\" action=\"/auth/device\"><label for=\"user_code\">{label}</label> \
         <input id=\"user_code\" name=\"user_code\" required autocomplete=\"off\" autocapitalize=\"characters\"> \
         <button type=\"submit\">{go}</button></form>",
        label = escape(&page.t("device-code")),
        go = escape(&page.t("device-look-up")),
    );
    let policy = "default-src 'none'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'";
    ([(axum::http::header::CONTENT_SECURITY_POLICY, policy)], Html(page.html("device-title", &main))).into_response()
}

/// The plain pages of the way through, in the browser's language.
struct Page(Locale);

impl Page {
    fn t(&self, key: &str) -> String {
        tr(self.0, key, &[])
    }

    fn rejected(&self, why: &str) -> Response {
        self.show(StatusCode::BAD_REQUEST, "oidc-rejected-title", why)
    }

    fn failed(&self, e: OidcError) -> Response {
        match e {
            OidcError::Rejected(why) => self.rejected(&why),
            OidcError::Provider(_) | OidcError::Config(_) => {
                tracing::error!(error = %e, "university sign-in");
                self.show(StatusCode::BAD_GATEWAY, "oidc-unavailable-title", &self.t("oidc-provider-down"))
            }
        }
    }

    /// A plain page (no script): a title, why, and the way back.
    fn show(&self, status: StatusCode, title: &str, why: &str) -> Response {
        let main = format!(
            "<p role=\"alert\" data-testid=\"why\">{why}</p><p><a href=\"/login\">{back}</a></p>",
            why = escape(why),
            back = escape(&self.t("oidc-back")),
        );
        (status, Html(self.html(title, &main))).into_response()
    }

    /// The plain pages' frame: the page's language, the title (by its key)
    /// as `<title>` and heading, then `main` (HTML, escaped by the caller).
    fn html(&self, title: &str, main: &str) -> String {
        format!(
            "<!DOCTYPE html><html lang=\"{lang}\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" \
             content=\"width=device-width, initial-scale=1\"><title>{title} — JPU-Share</title></head>\
             <body><main><h1>{title}</h1>{main}</main></body></html>",
            lang = self.0.tag(),
            title = escape(&self.t(title)),
        )
    }
}

fn escape(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '<' => "&lt;".into(),
            '>' => "&gt;".into(),
            '&' => "&amp;".into(),
            '"' => "&quot;".into(),
            '\'' => "&#39;".into(),
            c => c.to_string(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn pages_escape_what_the_provider_sent() {
        assert_eq!(super::escape("<script>\"x\"&'"), "&lt;script&gt;&quot;x&quot;&amp;&#39;");
    }
}
