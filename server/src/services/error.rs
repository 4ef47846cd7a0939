//! The one error every service function returns. Each variant is an
//! api.md code (see [`ServiceError::code`]); the HTTP layer maps it once
//! into its response and the console backend once into a
//! `ConsoleError`, and both keep the code. `Internal` carries the detail
//! for the log, never for the caller.

use app::model::error::ErrorCode;

use crate::auth::{AuthError, PasswordError};
use crate::policy::admission::AdmissionError;

#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// A field out of range or malformed, named in the message.
    #[error("{0}")]
    Validation(String),
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    Forbidden(String),
    #[error("{0}")]
    Conflict(String),
    #[error("{0}")]
    NoFitPlacement(String),
    /// A limit on how many of something one may have or run (429).
    #[error("{0}")]
    QueueLimit(String),
    #[error("{0}")]
    Maintenance(String),
    /// A wrong password (or username) where one was asked for.
    #[error("{0}")]
    InvalidCredentials(String),
    /// Too many failed sign-ins (or too many at once); retry after this
    /// many seconds.
    #[error("too many failed sign-ins; retry in {0} s")]
    TooManyAttempts(u64),
    /// A device sign-in the person has not finished at the provider yet.
    #[error("{0}")]
    AuthorizationPending(String),
    #[error("internal error")]
    Internal(String),
}

pub type ServiceResult<T> = Result<T, ServiceError>;

impl ServiceError {
    pub fn code(&self) -> ErrorCode {
        match self {
            ServiceError::Validation(_) => ErrorCode::Validation,
            ServiceError::NotFound(_) => ErrorCode::NotFound,
            ServiceError::Forbidden(_) => ErrorCode::Forbidden,
            ServiceError::Conflict(_) => ErrorCode::Conflict,
            ServiceError::NoFitPlacement(_) => ErrorCode::NoFitPlacement,
            ServiceError::QueueLimit(_) => ErrorCode::QueueLimit,
            ServiceError::Maintenance(_) => ErrorCode::ServiceMaintenance,
            ServiceError::InvalidCredentials(_) => ErrorCode::Unauthenticated,
            ServiceError::TooManyAttempts(_) => ErrorCode::TooManyAttempts,
            ServiceError::AuthorizationPending(_) => ErrorCode::AuthorizationPending,
            ServiceError::Internal(_) => ErrorCode::Internal,
        }
    }

    /// `field: message`, the form every field error takes.
    pub fn field(field: &str, message: impl std::fmt::Display) -> Self {
        ServiceError::Validation(format!("{field}: {message}"))
    }

    /// A unique-constraint failure as a 409 naming `what`; anything else
    /// stays internal.
    pub fn unique(e: sqlx::Error, what: impl std::fmt::Display) -> Self {
        match e {
            sqlx::Error::Database(d) if d.is_unique_violation() => {
                ServiceError::Conflict(format!("{what} already exists"))
            }
            other => other.into(),
        }
    }
}

impl From<sqlx::Error> for ServiceError {
    fn from(e: sqlx::Error) -> Self {
        ServiceError::Internal(format!("database: {e}"))
    }
}

impl From<AdmissionError> for ServiceError {
    fn from(e: AdmissionError) -> Self {
        let message = e.to_string();
        match e {
            AdmissionError::Maintenance(_) => ServiceError::Maintenance(message),
            AdmissionError::NoFit { .. } => ServiceError::NoFitPlacement(message),
            AdmissionError::QueueLimit { .. } => ServiceError::QueueLimit(message),
        }
    }
}

impl From<AuthError> for ServiceError {
    fn from(e: AuthError) -> Self {
        match e {
            AuthError::InvalidCredentials => ServiceError::InvalidCredentials(e.to_string()),
            AuthError::Throttled(wait) => ServiceError::TooManyAttempts(wait.as_secs().max(1)),
            AuthError::Disabled | AuthError::PasswordsOff(_) => ServiceError::Forbidden(e.to_string()),
            AuthError::Password(p) => p.into(),
            AuthError::Db(e) => e.into(),
        }
    }
}

impl From<PasswordError> for ServiceError {
    fn from(e: PasswordError) -> Self {
        match e {
            // every hashing slot stayed busy: the caller may simply retry
            PasswordError::Busy => ServiceError::TooManyAttempts(1),
            other => ServiceError::Internal(format!("password: {other}")),
        }
    }
}

impl From<crate::services::jobs::input::FieldError> for ServiceError {
    fn from(e: crate::services::jobs::input::FieldError) -> Self {
        ServiceError::Validation(e.to_string())
    }
}
