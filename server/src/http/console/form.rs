//! What the console's forms share: a number read from a text field, and
//! a mistake in one said in the reader's language. Both the backend and
//! the admin pages parse forms (apart, they needed each other).

use app::i18n::Msg;
use app::model::error::ConsoleError;
use app::msg;

/// A form's mistake the console itself finds, in the reader's language.
pub(crate) fn refused(message: Msg) -> ConsoleError {
    ConsoleError::invalid(message.text(app::i18n::locale()))
}

/// A number from a form field; blank = None.
pub(crate) fn parse_number<T: std::str::FromStr>(field: &str, text: &str) -> Result<Option<T>, ConsoleError> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(None);
    }
    text.parse().map(Some).map_err(|_| refused(msg!("err-not-number", text = text).on(field)))
}
