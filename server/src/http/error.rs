//! The HTTP layer's error: one variant per api.md code, each with its
//! status. 5xx bodies never carry internals; the detail rides along in a
//! response extension for the logging middleware.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use crate::services::ServiceError;

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("{0}")]
    BadRequest(String),
    #[error("authentication required: send `Authorization: Bearer <token>` or sign in")]
    Unauthenticated,
    #[error("{0}")]
    InvalidCredentials(String),
    #[error("{0}")]
    Forbidden(String),
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    Conflict(String),
    #[error("{0}")]
    Validation(String),
    #[error("{0}")]
    NoFitPlacement(String),
    #[error("{0}")]
    QueueLimit(String),
    #[error("too many failed sign-ins for this user; retry in {0} s")]
    TooManyAttempts(u64),
    #[error("{0}")]
    AuthorizationPending(String),
    #[error("{0}")]
    ServiceMaintenance(String),
    #[error("request body is larger than the 256 KiB limit")]
    PayloadTooLarge,
    #[error("internal error")]
    Internal(String),
}

#[derive(Serialize)]
struct ErrorBody<'a> {
    error: ErrorInner<'a>,
}

#[derive(Serialize)]
struct ErrorInner<'a> {
    code: &'a str,
    message: String,
}

/// Attached to 5xx responses so the middleware can log what happened.
#[derive(Debug, Clone)]
pub struct InternalDetail(pub String);

impl ApiError {
    pub fn status_and_code(&self) -> (StatusCode, &'static str) {
        match self {
            ApiError::BadRequest(_) => (StatusCode::BAD_REQUEST, "BAD_REQUEST"),
            ApiError::Unauthenticated | ApiError::InvalidCredentials(_) => {
                (StatusCode::UNAUTHORIZED, "UNAUTHENTICATED")
            }
            ApiError::Forbidden(_) => (StatusCode::FORBIDDEN, "FORBIDDEN"),
            ApiError::NotFound(_) => (StatusCode::NOT_FOUND, "NOT_FOUND"),
            ApiError::Conflict(_) => (StatusCode::CONFLICT, "CONFLICT"),
            ApiError::Validation(_) => (StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION"),
            ApiError::NoFitPlacement(_) => (StatusCode::UNPROCESSABLE_ENTITY, "NO_FIT_PLACEMENT"),
            ApiError::QueueLimit(_) => (StatusCode::TOO_MANY_REQUESTS, "QUEUE_LIMIT"),
            ApiError::TooManyAttempts(_) => (StatusCode::TOO_MANY_REQUESTS, "TOO_MANY_ATTEMPTS"),
            ApiError::AuthorizationPending(_) => (StatusCode::PRECONDITION_REQUIRED, "AUTHORIZATION_PENDING"),
            ApiError::ServiceMaintenance(_) => (StatusCode::SERVICE_UNAVAILABLE, "SERVICE_MAINTENANCE"),
            ApiError::PayloadTooLarge => (StatusCode::PAYLOAD_TOO_LARGE, "PAYLOAD_TOO_LARGE"),
            ApiError::Internal(_) => (StatusCode::INTERNAL_SERVER_ERROR, "INTERNAL"),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, code) = self.status_and_code();
        let body = ErrorBody { error: ErrorInner { code, message: self.to_string() } };
        let mut response = (status, axum::Json(body)).into_response();
        match self {
            ApiError::Internal(detail) => {
                response.extensions_mut().insert(InternalDetail(detail));
            }
            ApiError::TooManyAttempts(secs) => {
                response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(secs));
            }
            ApiError::Unauthenticated | ApiError::InvalidCredentials(_) => {
                response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            }
            _ => {}
        }
        response
    }
}

impl From<sqlx::Error> for ApiError {
    fn from(e: sqlx::Error) -> Self {
        ApiError::Internal(format!("database: {e}"))
    }
}

impl From<crate::auth::AuthError> for ApiError {
    fn from(e: crate::auth::AuthError) -> Self {
        ServiceError::from(e).into()
    }
}

/// The one mapping from the services' error: same code, same message.
impl From<ServiceError> for ApiError {
    fn from(e: ServiceError) -> Self {
        let message = e.to_string();
        match e {
            ServiceError::Validation(_) => ApiError::Validation(message),
            ServiceError::NotFound(_) => ApiError::NotFound(message),
            ServiceError::Forbidden(_) => ApiError::Forbidden(message),
            ServiceError::Conflict(_) => ApiError::Conflict(message),
            ServiceError::NoFitPlacement(_) => ApiError::NoFitPlacement(message),
            ServiceError::QueueLimit(_) => ApiError::QueueLimit(message),
            ServiceError::Maintenance(_) => ApiError::ServiceMaintenance(message),
            ServiceError::InvalidCredentials(_) => ApiError::InvalidCredentials(message),
            ServiceError::TooManyAttempts(secs) => ApiError::TooManyAttempts(secs),
            ServiceError::AuthorizationPending(_) => ApiError::AuthorizationPending(message),
            ServiceError::Internal(detail) => ApiError::Internal(detail),
        }
    }
}
