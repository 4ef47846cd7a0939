//! Extractors that turn bad input into api.md errors instead of axum's
//! plain-text rejections, and that require a signed-in caller or an admin.

use axum::extract::rejection::JsonRejection;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use serde::de::DeserializeOwned;

use super::error::ApiError;
use crate::auth::Caller;

/// `axum::Json` with api.md errors: malformed JSON or a wrong content type
/// is 400 BAD_REQUEST; well-formed JSON with missing or mistyped fields is
/// 422 VALIDATION naming the field.
pub struct ApiJson<T>(pub T);

impl<S, T> FromRequest<S> for ApiJson<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        match axum::Json::<T>::from_request(req, state).await {
            Ok(axum::Json(value)) => Ok(ApiJson(value)),
            Err(JsonRejection::JsonDataError(e)) => Err(ApiError::Validation(e.body_text())),
            Err(JsonRejection::BytesRejection(e)) if e.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE => {
                Err(ApiError::TooLarge("the request body is larger than the 256 KiB limit".into()))
            }
            Err(other) => Err(ApiError::BadRequest(other.body_text())),
        }
    }
}

/// The client's address: the peer's, or — when the peer is one of
/// `server.trusted_proxies` — the last address in `X-Forwarded-For` that
/// is not a trusted proxy (what a client sends itself there is never
/// believed otherwise).
pub struct ClientAddr(pub std::net::IpAddr);

impl FromRequestParts<crate::state::AppState> for ClientAddr {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &crate::state::AppState) -> Result<Self, Self::Rejection> {
        let peer = parts
            .extensions
            .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
            .map(|c| c.0.ip())
            .unwrap_or(std::net::IpAddr::from([0, 0, 0, 0]));
        Ok(ClientAddr(client_address(peer, &parts.headers, &state.settings.server.trusted_proxies)))
    }
}

/// See [`ClientAddr`].
pub fn client_address(
    peer: std::net::IpAddr,
    headers: &axum::http::HeaderMap,
    trusted: &[std::net::IpAddr],
) -> std::net::IpAddr {
    if !trusted.contains(&peer) {
        return peer;
    }
    let hops: Vec<std::net::IpAddr> = headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .filter_map(|hop| hop.trim().parse().ok())
        .collect();
    hops.into_iter().rev().find(|hop| !trusted.contains(hop)).unwrap_or(peer)
}

/// A signed-in caller (bearer token or console session), else 401.
pub struct AuthUser(pub Caller);

impl<S: Send + Sync> FromRequestParts<S> for AuthUser {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        parts.extensions.get::<Caller>().cloned().map(AuthUser).ok_or(ApiError::Unauthenticated)
    }
}

/// A signed-in admin, else 401 (anonymous) or 403 (researcher).
pub struct AdminUser(pub Caller);

impl<S: Send + Sync> FromRequestParts<S> for AdminUser {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let AuthUser(caller) = AuthUser::from_request_parts(parts, state).await?;
        if caller.user.role == app::model::Role::Admin {
            Ok(AdminUser(caller))
        } else {
            Err(ApiError::Forbidden("this needs the admin role".into()))
        }
    }
}

/// `axum::extract::Query` with an api.md VALIDATION error naming the
/// parameter instead of a plain-text 400.
pub struct ApiQuery<T>(pub T);

impl<S, T> FromRequestParts<S> for ApiQuery<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        axum::extract::Query::<T>::from_request_parts(parts, state)
            .await
            .map(|axum::extract::Query(v)| ApiQuery(v))
            .map_err(|e| ApiError::Validation(e.body_text()))
    }
}

/// `axum::extract::Path` with an api.md error instead of plain text; a
/// malformed id cannot name an existing thing, so it is 404.
pub struct ApiPath<T>(pub T);

impl<S, T> FromRequestParts<S> for ApiPath<T>
where
    T: DeserializeOwned + Send,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        axum::extract::Path::<T>::from_request_parts(parts, state)
            .await
            .map(|axum::extract::Path(v)| ApiPath(v))
            .map_err(|e| ApiError::NotFound(format!("no such resource: {}", e.body_text())))
    }
}
