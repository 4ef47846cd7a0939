//! The HTTP layer's error: one variant per api.md code, each with its
//! status. 5xx bodies never carry internals; the detail rides along in a
//! response extension for the logging middleware.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

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
        use crate::auth::AuthError;
        match e {
            AuthError::InvalidCredentials => ApiError::InvalidCredentials(e.to_string()),
            AuthError::Throttled(wait) => ApiError::TooManyAttempts(wait.as_secs().max(1)),
            AuthError::Disabled => ApiError::Forbidden(e.to_string()),
            AuthError::Password(crate::auth::PasswordError::Busy) => ApiError::TooManyAttempts(1),
            AuthError::Password(e) => ApiError::Internal(format!("password: {e}")),
            AuthError::Db(e) => e.into(),
        }
    }
}

impl From<crate::jobs::JobsError> for ApiError {
    fn from(e: crate::jobs::JobsError) -> Self {
        use crate::jobs::JobsError;
        use crate::scheduler::admission::AdmissionError;
        match e {
            JobsError::Field(f) => ApiError::Validation(f.to_string()),
            JobsError::Admission(a @ AdmissionError::Maintenance(_)) => ApiError::ServiceMaintenance(a.to_string()),
            JobsError::Admission(a @ AdmissionError::NoFit { .. }) => ApiError::NoFitPlacement(a.to_string()),
            JobsError::Admission(a @ AdmissionError::QueueLimit { .. }) => ApiError::QueueLimit(a.to_string()),
            JobsError::NotFound => ApiError::NotFound("no such job".into()),
            JobsError::Forbidden(m) => ApiError::Forbidden(m),
            JobsError::Conflict(m) => ApiError::Conflict(m),
            JobsError::FileNotFound => ApiError::NotFound("no such file in the job's output directory".into()),
            JobsError::Db(e) => e.into(),
            JobsError::Io(e) => ApiError::Internal(format!("job output: {e}")),
            JobsError::Batch(e) => ApiError::Internal(e),
        }
    }
}

impl From<crate::views::ViewError> for ApiError {
    fn from(e: crate::views::ViewError) -> Self {
        use crate::views::ViewError;
        match e {
            ViewError::NoSuchLab => ApiError::NotFound("no such lab".into()),
            ViewError::Field { .. } => ApiError::Validation(e.to_string()),
            ViewError::Db(e) => e.into(),
        }
    }
}

impl From<crate::admin::AdminError> for ApiError {
    fn from(e: crate::admin::AdminError) -> Self {
        use crate::admin::AdminError;
        match e {
            AdminError::NotFound(m) => ApiError::NotFound(m),
            AdminError::Conflict(m) => ApiError::Conflict(m),
            AdminError::Limit(m) => ApiError::QueueLimit(m),
            AdminError::Field { .. } => ApiError::Validation(e.to_string()),
            AdminError::Db(e) => e.into(),
            AdminError::Internal(m) => ApiError::Internal(m),
        }
    }
}
