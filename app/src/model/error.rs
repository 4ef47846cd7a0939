//! The error codes of api.md, and the console's error, which keeps its
//! code all the way to the browser: a server function answers with a
//! [`ConsoleError`], so a page can tell QUEUE_LIMIT from NO_FIT_PLACEMENT
//! exactly as a /v1 client can.

use serde::{Deserialize, Serialize};

/// Every `error.code` api.md defines, with its HTTP status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorCode {
    BadRequest,
    Unauthenticated,
    Forbidden,
    NotFound,
    Conflict,
    Validation,
    NoFitPlacement,
    QueueLimit,
    TooManyAttempts,
    AuthorizationPending,
    ServiceMaintenance,
    TooLarge,
    /// A `Range` outside the file.
    RangeNotSatisfiable,
    QuotaExceeded,
    Internal,
}

impl ErrorCode {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::BadRequest => "BAD_REQUEST",
            ErrorCode::Unauthenticated => "UNAUTHENTICATED",
            ErrorCode::Forbidden => "FORBIDDEN",
            ErrorCode::NotFound => "NOT_FOUND",
            ErrorCode::Conflict => "CONFLICT",
            ErrorCode::Validation => "VALIDATION",
            ErrorCode::NoFitPlacement => "NO_FIT_PLACEMENT",
            ErrorCode::QueueLimit => "QUEUE_LIMIT",
            ErrorCode::TooManyAttempts => "TOO_MANY_ATTEMPTS",
            ErrorCode::AuthorizationPending => "AUTHORIZATION_PENDING",
            ErrorCode::ServiceMaintenance => "SERVICE_MAINTENANCE",
            ErrorCode::TooLarge => "TOO_LARGE",
            ErrorCode::RangeNotSatisfiable => "RANGE_NOT_SATISFIABLE",
            ErrorCode::QuotaExceeded => "QUOTA_EXCEEDED",
            ErrorCode::Internal => "INTERNAL",
        }
    }

    /// The HTTP status api.md gives the code.
    pub fn status(self) -> u16 {
        match self {
            ErrorCode::BadRequest => 400,
            ErrorCode::Unauthenticated => 401,
            ErrorCode::Forbidden => 403,
            ErrorCode::NotFound => 404,
            ErrorCode::Conflict | ErrorCode::QuotaExceeded => 409,
            ErrorCode::AuthorizationPending => 428,
            ErrorCode::TooLarge => 413,
            ErrorCode::RangeNotSatisfiable => 416,
            ErrorCode::Validation | ErrorCode::NoFitPlacement => 422,
            ErrorCode::QueueLimit | ErrorCode::TooManyAttempts => 429,
            ErrorCode::Internal => 500,
            ErrorCode::ServiceMaintenance => 503,
        }
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a console server function fails with: the api.md code and a
/// message for the user (internals stay in the server log).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("{message}")]
pub struct ConsoleError {
    pub code: ErrorCode,
    pub message: String,
}

impl ConsoleError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self { code, message: message.into() }
    }

    // these three are made on the server, in the request's language (the
    // browser's bundle carries no messages: there `t` gives the key)
    pub fn unauthenticated() -> Self {
        Self::new(ErrorCode::Unauthenticated, crate::i18n::t("err-sign-in"))
    }

    pub fn forbidden() -> Self {
        Self::new(ErrorCode::Forbidden, crate::i18n::t("err-admins-only"))
    }

    /// A mistake in a form field, named.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Validation, message)
    }

    pub fn internal() -> Self {
        Self::new(ErrorCode::Internal, crate::i18n::t("err-internal"))
    }
}

/// Failures of the transport itself (the server unreachable, a reply
/// that does not parse) arrive as `INTERNAL` with what went wrong.
impl leptos::server_fn::error::FromServerFnError for ConsoleError {
    type Encoder = leptos::server_fn::codec::JsonEncoding;

    fn from_server_fn_error(value: leptos::server_fn::error::ServerFnErrorErr) -> Self {
        use leptos::server_fn::error::ServerFnErrorErr as E;
        // arguments that do not decode are the caller's mistake, not ours
        let code = match value {
            E::Args(_) | E::MissingArg(_) => ErrorCode::BadRequest,
            _ => ErrorCode::Internal,
        };
        Self::new(code, value.to_string())
    }
}

impl From<leptos::server_fn::error::ServerFnErrorErr> for ConsoleError {
    fn from(value: leptos::server_fn::error::ServerFnErrorErr) -> Self {
        Self::new(ErrorCode::Internal, value.to_string())
    }
}

impl From<leptos::prelude::ServerFnError> for ConsoleError {
    fn from(value: leptos::prelude::ServerFnError) -> Self {
        Self::new(ErrorCode::Internal, value.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_that_do_not_decode_are_bad_requests() {
        use leptos::server_fn::error::{FromServerFnError, ServerFnErrorErr};
        let e = ConsoleError::from_server_fn_error(ServerFnErrorErr::Args("id: invalid digit".into()));
        assert_eq!(e.code.status(), 400);
        let e = ConsoleError::from_server_fn_error(ServerFnErrorErr::MissingArg("id".into()));
        assert_eq!(e.code, ErrorCode::BadRequest);
        let e = ConsoleError::from_server_fn_error(ServerFnErrorErr::Response("x".into()));
        assert_eq!(e.code, ErrorCode::Internal);
    }

    #[test]
    fn codes_serialize_as_api_md_names() {
        for code in [ErrorCode::QueueLimit, ErrorCode::NoFitPlacement, ErrorCode::ServiceMaintenance] {
            assert_eq!(serde_json::to_string(&code).unwrap(), format!("\"{}\"", code.as_str()));
        }
    }
}
