//! The console's languages: Korean and English. Messages live in Fluent
//! files (`app/locales/{en,ko}.ftl`, one key per message) and are rendered
//! on the server only, so the browser's bundle carries none of them; an
//! island gets its words as props. The language of a request is chosen
//! once by the server (the signed-in user's choice, else the `jpu_lang`
//! cookie, else `Accept-Language`, else English; [`Locale::negotiate`]) and
//! given to the pages as context; [`t`] reads it.
//!
//! API and CLI stay English: their codes are the contract.

use serde::{Deserialize, Serialize};

#[cfg(feature = "ssr")]
mod msg;
#[cfg(feature = "ssr")]
pub use msg::Msg;

/// A language the console speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Locale {
    #[default]
    En,
    Ko,
}

/// The cookie that keeps a visitor's choice.
pub const LOCALE_COOKIE: &str = "jpu_lang";

impl Locale {
    pub const ALL: [Locale; 2] = [Locale::En, Locale::Ko];

    /// The BCP 47 tag (`<html lang>`, the cookie, the database).
    pub fn tag(self) -> &'static str {
        match self {
            Locale::En => "en",
            Locale::Ko => "ko",
        }
    }

    /// The language's own name, for the switch.
    pub fn own_name(self) -> &'static str {
        match self {
            Locale::En => "English",
            Locale::Ko => "한국어",
        }
    }

    pub fn from_tag(tag: &str) -> Option<Locale> {
        let primary = tag.trim().split(['-', '_']).next().unwrap_or("").to_ascii_lowercase();
        match primary.as_str() {
            "en" => Some(Locale::En),
            "ko" => Some(Locale::Ko),
            _ => None,
        }
    }

    /// The language for a request: the user's stored choice, else the
    /// cookie's, else the best of `Accept-Language` we speak (by its
    /// q-values, ties in the header's order), else English.
    pub fn negotiate(stored: Option<&str>, cookie: Option<&str>, accept_language: Option<&str>) -> Locale {
        if let Some(locale) = stored.and_then(Locale::from_tag).or_else(|| cookie.and_then(Locale::from_tag)) {
            return locale;
        }
        let mut best: Option<(f32, Locale)> = None;
        for item in accept_language.unwrap_or("").split(',') {
            let mut parts = item.split(';');
            let Some(locale) = parts.next().and_then(Locale::from_tag) else { continue };
            let q = parts
                .find_map(|p| p.trim().strip_prefix("q="))
                .and_then(|q| q.trim().parse::<f32>().ok())
                .unwrap_or(1.0);
            if q > 0.0 && best.is_none_or(|(b, _)| q > b) {
                best = Some((q, locale));
            }
        }
        best.map_or(Locale::En, |(_, l)| l)
    }
}

/// The request's language (English outside a request).
pub fn locale() -> Locale {
    leptos::prelude::use_context::<Locale>().unwrap_or_default()
}

/// The message `key` in the request's language.
pub fn t(key: &str) -> String {
    tr(locale(), key, &[])
}

/// The message `key` with its `{ $name }` arguments.
pub fn t_with(key: &str, args: &[(&str, Arg)]) -> String {
    tr(locale(), key, args)
}

/// An argument of a message: text, or a number Fluent may pick a plural
/// form for.
#[derive(Debug, Clone, PartialEq)]
pub enum Arg {
    Text(String),
    Number(f64),
}

impl From<&str> for Arg {
    fn from(s: &str) -> Self {
        Arg::Text(s.to_string())
    }
}

impl From<&String> for Arg {
    fn from(s: &String) -> Self {
        Arg::Text(s.clone())
    }
}

impl From<String> for Arg {
    fn from(s: String) -> Self {
        Arg::Text(s)
    }
}

macro_rules! number_arg {
    ($($t:ty),*) => {$(
        impl From<$t> for Arg {
            fn from(n: $t) -> Self {
                Arg::Number(n as f64)
            }
        }
    )*};
}
number_arg!(u8, u16, u32, u64, i32, i64, usize, f64);

#[cfg(feature = "ssr")]
mod bundles {
    use super::{Arg, Locale};
    use fluent_bundle::concurrent::FluentBundle;
    use fluent_bundle::{FluentArgs, FluentResource, FluentValue};
    use std::sync::OnceLock;

    pub const EN: &str = include_str!("../locales/en.ftl");
    pub const KO: &str = include_str!("../locales/ko.ftl");

    fn bundle(locale: Locale) -> &'static FluentBundle<FluentResource> {
        static EN_BUNDLE: OnceLock<FluentBundle<FluentResource>> = OnceLock::new();
        static KO_BUNDLE: OnceLock<FluentBundle<FluentResource>> = OnceLock::new();
        let (cell, source) = match locale {
            Locale::En => (&EN_BUNDLE, EN),
            Locale::Ko => (&KO_BUNDLE, KO),
        };
        cell.get_or_init(|| {
            let resource = FluentResource::try_new(source.to_string()).unwrap_or_else(|(partial, _)| partial);
            let lang: unic_langid::LanguageIdentifier = locale.tag().parse().unwrap_or_default();
            let mut bundle = FluentBundle::new_concurrent(vec![lang]);
            // no Unicode isolation marks around arguments: they show as
            // boxes in some fonts and break copying a job's name
            bundle.set_use_isolating(false);
            let _ = bundle.add_resource(resource);
            bundle
        })
    }

    pub fn tr(locale: Locale, key: &str, args: &[(&str, Arg)]) -> String {
        let mut fluent_args = FluentArgs::new();
        for (name, value) in args {
            match value {
                Arg::Text(s) => fluent_args.set(*name, FluentValue::from(s.clone())),
                Arg::Number(n) => fluent_args.set(*name, FluentValue::from(*n)),
            }
        }
        for candidate in [locale, Locale::En] {
            let bundle = bundle(candidate);
            if let Some(pattern) = bundle.get_message(key).and_then(|m| m.value()) {
                let mut errors = Vec::new();
                return bundle.format_pattern(pattern, Some(&fluent_args), &mut errors).into_owned();
            }
        }
        key.to_string()
    }

    /// Every message id of a Fluent file, in order.
    pub fn ids(source: &str) -> Vec<String> {
        let resource = FluentResource::try_new(source.to_string()).unwrap_or_else(|(partial, _)| partial);
        resource
            .entries()
            .filter_map(|e| match e {
                fluent_syntax::ast::Entry::Message(m) => Some(m.id.name.to_string()),
                _ => None,
            })
            .collect()
    }
}

#[cfg(feature = "ssr")]
pub use bundles::{ids as message_ids, EN as EN_SOURCE, KO as KO_SOURCE};

/// The keys of `keys` missing from either language, as `en: key` or
/// `ko: key` (for the tests of the pages that compose or hand over keys).
#[cfg(feature = "ssr")]
pub fn missing_keys<K: AsRef<str>>(keys: impl IntoIterator<Item = K> + Clone) -> Vec<String> {
    let mut missing = Vec::new();
    for (tag, source) in [("en", EN_SOURCE), ("ko", KO_SOURCE)] {
        let ids = message_ids(source);
        for key in keys.clone() {
            if !ids.iter().any(|id| id == key.as_ref()) {
                missing.push(format!("{tag}: {}", key.as_ref()));
            }
        }
    }
    missing
}

/// Every file under `root`, with its text: for the tests that read the
/// sources for the message keys they name.
#[cfg(feature = "ssr")]
pub fn source_texts(root: &std::path::Path) -> Vec<(std::path::PathBuf, String)> {
    let mut files = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                files.push((path, text));
            }
        }
    }
    files
}

#[cfg(feature = "ssr")]
pub fn tr(locale: Locale, key: &str, args: &[(&str, Arg)]) -> String {
    bundles::tr(locale, key, args)
}

/// In the browser no page is rendered from messages (islands get words as
/// props): the key itself, never reached in practice.
#[cfg(not(feature = "ssr"))]
pub fn tr(_locale: Locale, key: &str, _args: &[(&str, Arg)]) -> String {
    key.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_language_is_the_users_then_the_cookies_then_the_browsers() {
        let table = [
            (Some("ko"), Some("en"), Some("en-US"), Locale::Ko),
            (None, Some("ko"), Some("en-US,en;q=0.9"), Locale::Ko),
            (None, Some("fr"), Some("ko-KR,ko;q=0.9,en;q=0.8"), Locale::Ko),
            (None, None, Some("en;q=0.5, ko;q=0.8"), Locale::Ko),
            (None, None, Some("fr-FR, en;q=0.3, ko;q=0.2"), Locale::En),
            (None, None, Some("ko;q=0"), Locale::En),
            (None, None, Some("de, fr"), Locale::En),
            (None, None, None, Locale::En),
            (Some("xx"), None, Some("ko"), Locale::Ko),
        ];
        for (stored, cookie, accept, want) in table {
            assert_eq!(Locale::negotiate(stored, cookie, accept), want, "{stored:?} {cookie:?} {accept:?}");
        }
    }

    #[cfg(feature = "ssr")]
    #[test]
    fn both_languages_have_every_message_and_no_other() {
        let en = message_ids(EN_SOURCE);
        let ko = message_ids(KO_SOURCE);
        assert!(en.len() > 50, "{} messages", en.len());
        let missing_ko: Vec<_> = en.iter().filter(|k| !ko.contains(k)).collect();
        let missing_en: Vec<_> = ko.iter().filter(|k| !en.contains(k)).collect();
        assert!(missing_ko.is_empty(), "missing in ko.ftl: {missing_ko:?}");
        assert!(missing_en.is_empty(), "missing in en.ftl: {missing_en:?}");
        let mut sorted = en.clone();
        sorted.dedup();
        assert_eq!(sorted.len(), en.len(), "a key twice in en.ftl");
    }

    #[cfg(feature = "ssr")]
    #[test]
    fn every_key_the_pages_use_exists() {
        let en = message_ids(EN_SOURCE);
        let mut missing = Vec::new();
        for (path, text) in source_texts(std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/src"))) {
            for call in ["t(\"", "t_with(\""] {
                let mut from = 0;
                while let Some(at) = text[from..].find(call).map(|i| from + i) {
                    from = at + call.len();
                    // a call of ours, not `StaticSegment("…")`
                    if text[..at].chars().next_back().is_some_and(|c| c.is_alphanumeric() || c == '_') {
                        continue;
                    }
                    let key = text[from..].split('"').next().unwrap_or("");
                    if !en.iter().any(|k| k == key) {
                        missing.push(format!("{}: {key}", path.display()));
                    }
                }
            }
        }
        assert!(missing.is_empty(), "keys used but not in en.ftl: {missing:?}");
    }

    #[cfg(feature = "ssr")]
    #[test]
    fn messages_take_their_arguments_and_plurals() {
        let got = tr(Locale::En, "policy-cycle", &[("every", "5 seconds".into())]);
        assert!(got.contains("Every 5 seconds"), "{got}");
        let got = tr(Locale::Ko, "policy-cycle", &[("every", "5초".into())]);
        assert!(got.contains("5초"), "{got}");
        assert_eq!(tr(Locale::Ko, "no-such-key", &[]), "no-such-key");
        assert_eq!(tr(Locale::En, "unit-minute", &[("n", 1u64.into())]), "1 minute");
        assert_eq!(tr(Locale::En, "unit-minute", &[("n", 5u64.into())]), "5 minutes");
        assert_eq!(tr(Locale::Ko, "unit-minute", &[("n", 5u64.into())]), "5분");
        // an island fills a message's arguments itself, from these marks
        assert!(tr(Locale::Ko, "queue-showing", &[]).contains("{$shown}"));
    }
}

/// Words an island shows, looked up on the server and handed to it as a
/// prop (the island's code carries no messages): `words(&["queue-title"])`.
/// A list, not a map: a map's code in the wasm cost 5 KiB on the wire.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Words(pub Vec<(String, String)>);

impl Words {
    /// The message, or its key if it was not handed over.
    pub fn get(&self, key: &str) -> String {
        self.0.iter().find(|(k, _)| k == key).map_or_else(|| key.to_string(), |(_, v)| v.clone())
    }
}

/// These messages in the request's language, for an island.
pub fn words(keys: &[&str]) -> Words {
    let locale = locale();
    Words(keys.iter().map(|k| (k.to_string(), tr(locale, k, &[]))).collect())
}
