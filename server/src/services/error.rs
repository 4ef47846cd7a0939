//! The one error every service function returns. Each variant is an
//! api.md code (see [`ServiceError::code`]); the HTTP layer maps it once
//! into its response and the console backend once into a
//! `ConsoleError`, and both keep the code. A refusal carries its message
//! as a key and arguments ([`Msg`], written `msg!(…)`), so the API
//! answers in English and the console in the reader's language from one
//! source. `Internal` carries the detail for the log, never for the
//! caller.

pub use app::i18n::Msg;
use app::model::error::ErrorCode;
pub use app::msg;

use crate::auth::{AuthError, PasswordError};
use crate::policy::admission::AdmissionError;

#[derive(Debug, thiserror::Error)]
#[error("{}", self.message())]
pub enum ServiceError {
    /// A field out of range or malformed, named in the message.
    Validation(Msg),
    NotFound(Msg),
    Forbidden(Msg),
    Conflict(Msg),
    NoFitPlacement(Msg),
    /// A limit on how many of something one may have or run (429).
    QueueLimit(Msg),
    /// A home or lab share over its quota (policy §13).
    QuotaExceeded(Msg),
    TooLarge(Msg),
    RangeNotSatisfiable(Msg),
    Maintenance(Msg),
    /// A wrong password (or username) where one was asked for.
    InvalidCredentials(Msg),
    /// Too many failed sign-ins (or too many at once); retry after this
    /// many seconds.
    TooManyAttempts(u64),
    /// A device sign-in the person has not finished at the provider yet.
    AuthorizationPending(Msg),
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
            ServiceError::QuotaExceeded(_) => ErrorCode::QuotaExceeded,
            ServiceError::TooLarge(_) => ErrorCode::TooLarge,
            ServiceError::RangeNotSatisfiable(_) => ErrorCode::RangeNotSatisfiable,
            ServiceError::Maintenance(_) => ErrorCode::ServiceMaintenance,
            ServiceError::InvalidCredentials(_) => ErrorCode::Unauthenticated,
            ServiceError::TooManyAttempts(_) => ErrorCode::TooManyAttempts,
            ServiceError::AuthorizationPending(_) => ErrorCode::AuthorizationPending,
            ServiceError::Internal(_) => ErrorCode::Internal,
        }
    }

    /// `field: message`, the form every field error takes.
    pub fn field(field: &str, message: Msg) -> Self {
        ServiceError::Validation(message.on(field))
    }

    /// A unique-constraint failure as a 409 saying `exists`; anything
    /// else stays internal.
    pub fn unique(e: sqlx::Error, exists: Msg) -> Self {
        match e {
            sqlx::Error::Database(d) if d.is_unique_violation() => ServiceError::Conflict(exists),
            other => other.into(),
        }
    }

    /// The message for a person (internals stay hidden): its English is
    /// the error's `Display`, the API's words.
    pub fn message(&self) -> Msg {
        match self {
            ServiceError::Validation(m)
            | ServiceError::NotFound(m)
            | ServiceError::Forbidden(m)
            | ServiceError::Conflict(m)
            | ServiceError::NoFitPlacement(m)
            | ServiceError::QueueLimit(m)
            | ServiceError::QuotaExceeded(m)
            | ServiceError::TooLarge(m)
            | ServiceError::RangeNotSatisfiable(m)
            | ServiceError::Maintenance(m)
            | ServiceError::InvalidCredentials(m)
            | ServiceError::AuthorizationPending(m) => m.clone(),
            ServiceError::TooManyAttempts(secs) => msg!("err-too-many-attempts", secs = *secs),
            ServiceError::Internal(_) => msg!("err-internal"),
        }
    }

    /// The message in `locale`, for the console.
    pub fn text(&self, locale: app::i18n::Locale) -> String {
        self.message().text(locale)
    }
}

impl From<sqlx::Error> for ServiceError {
    fn from(e: sqlx::Error) -> Self {
        ServiceError::Internal(format!("database: {e}"))
    }
}

impl From<AdmissionError> for ServiceError {
    fn from(e: AdmissionError) -> Self {
        let message = e.message();
        match e {
            AdmissionError::Maintenance(_) => ServiceError::Maintenance(message),
            AdmissionError::NoFit { .. } => ServiceError::NoFitPlacement(message),
            AdmissionError::QueueLimit { .. } => ServiceError::QueueLimit(message),
        }
    }
}

impl From<AuthError> for ServiceError {
    fn from(e: AuthError) -> Self {
        if matches!(
            e,
            AuthError::InvalidCredentials
                | AuthError::Throttled(_)
                | AuthError::Disabled
                | AuthError::PasswordsOff(_)
                | AuthError::Refused(_)
        ) {
            // every refused sign-in passes here on its way to the caller
            metrics::counter!("jpu_sign_in_refused_total").increment(1);
        }
        match e {
            AuthError::InvalidCredentials => ServiceError::InvalidCredentials(msg!("err-wrong-password")),
            AuthError::Throttled(wait) => ServiceError::TooManyAttempts(wait.as_secs().max(1)),
            AuthError::Disabled => ServiceError::Forbidden(msg!("err-account-disabled")),
            AuthError::PasswordsOff(button) => ServiceError::Forbidden(msg!("err-passwords-off", button = button)),
            AuthError::Refused(why) => ServiceError::Forbidden(why),
            AuthError::Directory(e) => ServiceError::Internal(format!("the directory cannot check a password: {e}")),
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

impl From<crate::services::jobs::field::FieldError> for ServiceError {
    fn from(e: crate::services::jobs::field::FieldError) -> Self {
        ServiceError::Validation(e.message.on(e.field))
    }
}
