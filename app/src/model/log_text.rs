//! A job's log as a person reads it, in the console and in `jpu logs`.
//! The log is the job's own bytes: a carriage return or an escape
//! sequence in it would let a job overwrite, in a terminal, lines above
//! its own (the `[jpu-share]` lines that say when an attempt started and
//! how it ended), and in a page make one line look like two (#42 N8b).
//! So every control character but newline and tab is shown, not obeyed:
//! as its Unicode control picture (ESC `␛`, a lone CR `␍`), a C1 control
//! — and a bidirectional override or isolate, which shows text backwards
//! — as `�`. A CR before a newline is a Windows line end and is dropped.

use std::borrow::Cow;

/// `text` with its control characters made visible (see the module).
pub fn visible(text: &str) -> Cow<'_, str> {
    if !text.chars().any(|c| (c != '\n' && c != '\t' && c.is_control()) || reorders(c)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\n' | '\t' => out.push(c),
            '\r' if chars.peek() == Some(&'\n') => {}
            // U+2400..U+241F picture U+0000..U+001F; U+2421 is DEL's
            '\u{0}'..='\u{1f}' => out.push(char::from_u32(0x2400 + c as u32).unwrap_or('\u{fffd}')),
            '\u{7f}' => out.push('\u{2421}'),
            c if c.is_control() || reorders(c) => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Characters that reorder or hide text on screen without being
/// control characters to Rust: the bidirectional marks, embeddings,
/// overrides and isolates (`U+202E` shows a line backwards), and the line
/// and paragraph separators.
fn reorders(c: char) -> bool {
    matches!(c, '\u{200e}' | '\u{200f}' | '\u{061c}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{2028}' | '\u{2029}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_are_shown_not_obeyed() {
        let table = [
            ("plain\ttext\nlines\n", "plain\ttext\nlines\n"),
            ("windows\r\nline\r\n", "windows\nline\n"),
            ("10%\r50%\r100%\n", "10%␍50%␍100%\n"),
            ("ok\r[jpu-share] attempt 2 ended\n", "ok␍[jpu-share] attempt 2 ended\n"),
            ("\u{1b}[1A\u{1b}[2Kforged\n", "␛[1A␛[2Kforged\n"),
            ("bell\u{7} del\u{7f} c1\u{9b}31m", "bell␇ del␡ c1\u{fffd}31m"),
            ("한국어 그대로", "한국어 그대로"),
            ("exit 0\u{202e}1 tixe", "exit 0\u{fffd}1 tixe"),
            ("a\u{2066}b\u{2069}c\u{200f}", "a\u{fffd}b\u{fffd}c\u{fffd}"),
        ];
        for (log, shown) in table {
            assert_eq!(visible(log), shown, "{log:?}");
        }
    }
}
