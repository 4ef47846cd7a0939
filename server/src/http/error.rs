//! The HTTP layer's error: one variant per api.md code, each with its
//! status. 5xx bodies never carry internals; the detail rides along in a
//! response extension for the logging middleware.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use crate::services::ServiceError;
use ::app::model::error::ErrorCode;

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
    #[error("{0}")]
    QuotaExceeded(String),
    #[error("too many failed sign-ins for this user; retry in {0} s")]
    TooManyAttempts(u64),
    #[error("{0}")]
    AuthorizationPending(String),
    #[error("{0}")]
    ServiceMaintenance(String),
    #[error("{0}")]
    TooLarge(String),
    #[error("{0}")]
    RangeNotSatisfiable(String),
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
    /// Its api.md code. The code's status comes from the one table the
    /// console uses too ([`ErrorCode::status`]), so the two cannot differ.
    pub fn code(&self) -> ErrorCode {
        match self {
            ApiError::BadRequest(_) => ErrorCode::BadRequest,
            ApiError::Unauthenticated | ApiError::InvalidCredentials(_) => ErrorCode::Unauthenticated,
            ApiError::Forbidden(_) => ErrorCode::Forbidden,
            ApiError::NotFound(_) => ErrorCode::NotFound,
            ApiError::Conflict(_) => ErrorCode::Conflict,
            ApiError::Validation(_) => ErrorCode::Validation,
            ApiError::NoFitPlacement(_) => ErrorCode::NoFitPlacement,
            ApiError::QueueLimit(_) => ErrorCode::QueueLimit,
            ApiError::QuotaExceeded(_) => ErrorCode::QuotaExceeded,
            ApiError::TooManyAttempts(_) => ErrorCode::TooManyAttempts,
            ApiError::AuthorizationPending(_) => ErrorCode::AuthorizationPending,
            ApiError::ServiceMaintenance(_) => ErrorCode::ServiceMaintenance,
            ApiError::TooLarge(_) => ErrorCode::TooLarge,
            ApiError::RangeNotSatisfiable(_) => ErrorCode::RangeNotSatisfiable,
            ApiError::Internal(_) => ErrorCode::Internal,
        }
    }

    pub fn status_and_code(&self) -> (StatusCode, &'static str) {
        let code = self.code();
        (StatusCode::from_u16(code.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR), code.as_str())
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
            ServiceError::QuotaExceeded(_) => ApiError::QuotaExceeded(message),
            ServiceError::TooLarge(_) => ApiError::TooLarge(message),
            ServiceError::RangeNotSatisfiable(_) => ApiError::RangeNotSatisfiable(message),
            ServiceError::Maintenance(_) => ApiError::ServiceMaintenance(message),
            ServiceError::InvalidCredentials(_) => ApiError::InvalidCredentials(message),
            ServiceError::TooManyAttempts(secs) => ApiError::TooManyAttempts(secs),
            ServiceError::AuthorizationPending(_) => ApiError::AuthorizationPending(message),
            ServiceError::Internal(detail) => ApiError::Internal(detail),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// api.md's codes and statuses, for every variant: the API and the
    /// console read the status from the same table.
    #[test]
    fn every_variant_answers_its_api_md_code_and_status() {
        let s = String::new;
        for (error, status, code) in [
            (ApiError::BadRequest(s()), 400, "BAD_REQUEST"),
            (ApiError::Unauthenticated, 401, "UNAUTHENTICATED"),
            (ApiError::InvalidCredentials(s()), 401, "UNAUTHENTICATED"),
            (ApiError::Forbidden(s()), 403, "FORBIDDEN"),
            (ApiError::NotFound(s()), 404, "NOT_FOUND"),
            (ApiError::Conflict(s()), 409, "CONFLICT"),
            (ApiError::Validation(s()), 422, "VALIDATION"),
            (ApiError::NoFitPlacement(s()), 422, "NO_FIT_PLACEMENT"),
            (ApiError::QueueLimit(s()), 429, "QUEUE_LIMIT"),
            (ApiError::QuotaExceeded(s()), 409, "QUOTA_EXCEEDED"),
            (ApiError::TooManyAttempts(3), 429, "TOO_MANY_ATTEMPTS"),
            (ApiError::AuthorizationPending(s()), 428, "AUTHORIZATION_PENDING"),
            (ApiError::ServiceMaintenance(s()), 503, "SERVICE_MAINTENANCE"),
            (ApiError::TooLarge(s()), 413, "TOO_LARGE"),
            (ApiError::RangeNotSatisfiable(s()), 416, "RANGE_NOT_SATISFIABLE"),
            (ApiError::Internal(s()), 500, "INTERNAL"),
        ] {
            let (got_status, got_code) = error.status_and_code();
            assert_eq!((got_status.as_u16(), got_code), (status, code), "{error:?}");
            assert_eq!(error.code().status(), status, "the console's table agrees: {error:?}");
        }
    }

    /// The services' error reaches the API and the console with the same
    /// code (so the same status): the console keeps `ServiceError::code`,
    /// the API maps to its own variants, and this ties the two.
    #[test]
    fn the_api_and_the_console_give_a_service_error_the_same_code() {
        let every = || {
            let m = || app::msg!("err-no-such-job");
            [
                ServiceError::Validation(m()),
                ServiceError::NotFound(m()),
                ServiceError::Forbidden(m()),
                ServiceError::Conflict(m()),
                ServiceError::NoFitPlacement(m()),
                ServiceError::QueueLimit(m()),
                ServiceError::Maintenance(m()),
                ServiceError::InvalidCredentials(m()),
                ServiceError::TooManyAttempts(3),
                ServiceError::AuthorizationPending(m()),
                ServiceError::Internal("m".into()),
            ]
        };
        for (service, again) in every().into_iter().zip(every()) {
            let console = again.code();
            assert_eq!(ApiError::from(service).code(), console, "{again:?}");
        }
    }
}
