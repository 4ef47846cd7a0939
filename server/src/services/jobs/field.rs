//! A request's mistake in one field: which field, and what is wrong with
//! it in words (api.md 422 `VALIDATION`). Every part of a submit's input
//! (`input`, `gates`, `output`) says its mistakes this way; on its own so
//! that they need not need each other.

use app::i18n::Msg;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct FieldError {
    pub field: &'static str,
    pub message: Msg,
}

pub fn field_error(field: &'static str, message: Msg) -> FieldError {
    FieldError { field, message }
}
