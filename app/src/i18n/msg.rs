//! A message the server writes for a person, mostly why it refused what
//! they sent: its key in the Fluent files and its arguments, not its
//! words. The same refusal then reads in English on `/v1` and in the
//! CLI (the API's language; the words come from `en.ftl`) and in the
//! reader's language in the console, with one source for both.
//!
//! Field errors keep api.md's form, `field: message`; the field is the
//! API's name for it and stays as it is in every language, so a reader
//! can match it to the form and a script to its request.

use super::{tr, Arg, Locale};

/// A message by key, with its arguments and the field it is about.
#[derive(Debug, Clone, PartialEq)]
pub struct Msg {
    key: &'static str,
    args: Vec<(&'static str, Arg)>,
    field: Option<String>,
}

impl Msg {
    pub fn new(key: &'static str) -> Self {
        Msg { key, args: Vec::new(), field: None }
    }

    /// The argument `{ $name }`.
    pub fn arg(mut self, name: &'static str, value: impl Into<Arg>) -> Self {
        self.args.push((name, value.into()));
        self
    }

    /// The message as about `field`: `field: …`.
    pub fn on(mut self, field: impl Into<String>) -> Self {
        self.field = Some(field.into());
        self
    }

    pub fn key(&self) -> &'static str {
        self.key
    }

    pub fn field(&self) -> Option<&str> {
        self.field.as_deref()
    }

    /// The words in `locale`.
    pub fn text(&self, locale: Locale) -> String {
        let body = tr(locale, self.key, &self.args);
        match &self.field {
            Some(field) => format!("{field}: {body}"),
            None => body,
        }
    }
}

/// In English: the API's words, and the server log's.
impl std::fmt::Display for Msg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text(Locale::En))
    }
}

/// `msg!("err-no-job", id = 12)`: a [`Msg`] with its arguments, each
/// anything that becomes an [`Arg`] (text or a number).
#[macro_export]
macro_rules! msg {
    ($key:literal $(, $name:ident = $value:expr)* $(,)?) => {
        $crate::i18n::Msg::new($key)$(.arg(stringify!($name), $value))*
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_reads_in_english_for_the_api_and_in_korean_for_the_console() {
        let m = crate::msg!("err-range", min = 1u32, max = 8u32, got = 9u32).on("num_gpus");
        assert_eq!(m.to_string(), "num_gpus: must be between 1 and 8, got 9");
        let ko = m.text(Locale::Ko);
        assert!(ko.starts_with("num_gpus: "), "{ko}");
        assert!(ko.contains('9') && ko.contains('8') && !ko.contains("must"), "{ko}");
        // text arguments are shown as given, numbers without grouping
        let m = crate::msg!("err-no-such-job").arg("id", 12345u64);
        assert!(!m.to_string().contains(','), "{m}");
    }
}
