//! Text from someone else, on the terminal of whoever runs joj. joj prints paths and names that
//! come from its inputs — a file in a folder handed to `joj report`, a path in a recording or a
//! trace, a file name a traced program chose — and runs as root. Printed as they are, the
//! bytes of such a name act on the terminal instead of showing: ESC starts an escape sequence
//! (clear the screen, set the window title, rewrite what was printed), CR returns the cursor
//! over a line, a newline forges a line of joj's own, and the bidirectional-formatting
//! characters reorder the text around them. [`escaped`] writes every character that does so
//! as its escape (`\u{1b}`), newlines included: for a name put into a line. [`escaped_lines`]
//! keeps the line breaks: for joj's own text of several lines as a last pass, where a newline
//! inside a name that was not escaped where it was put still breaks its line.

use std::borrow::Cow;

/// Whether `c` would act on a terminal, or reorder the text around it, rather than show: the
/// control characters (C0, DEL, C1) and the bidirectional-formatting characters (U+061C,
/// U+200E, U+200F, U+202A–U+202E, U+2066–U+2069), with the line and paragraph separators
/// (U+2028, U+2029).
pub fn acts_on_terminal(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}'
                | '\u{200e}'
                | '\u{200f}'
                | '\u{202a}'..='\u{202e}'
                | '\u{2066}'..='\u{2069}'
                | '\u{2028}'
                | '\u{2029}'
        )
}

/// `text` with every character that [`acts_on_terminal`] — line breaks included — written as
/// its Rust escape (`\u{1b}`, `\u{a}`): one line of text, whatever it holds.
pub fn escaped(text: &str) -> Cow<'_, str> {
    escape_where(text, acts_on_terminal, rust_escape)
}

/// [`escaped`], keeping the line breaks: for joj's own text of several lines (a result, a
/// table) into which names from inputs were put. A line break inside such a name still starts
/// a new line; nothing else in it acts on the terminal.
pub fn escaped_lines(text: &str) -> Cow<'_, str> {
    escape_where(text, |c| c != '\n' && acts_on_terminal(c), rust_escape)
}

/// A JSON text as `serde_json` writes it, with every character that [`acts_on_terminal`] and is
/// not ASCII written as a JSON escape (`\u202e`): the same document, nothing for a terminal.
/// `serde_json` already escapes the C0 controls inside strings, and outside strings JSON is
/// ASCII, so the characters left to escape (DEL, C1, the bidirectional ones) can only be inside
/// a string, where `\uXXXX` means the same character. The line breaks and spaces between
/// values are JSON's own and stay.
pub fn escaped_json(json: &str) -> Cow<'_, str> {
    escape_where(
        json,
        |c| (c == '\u{7f}' || !c.is_ascii()) && acts_on_terminal(c),
        // Every such character is in the Basic Multilingual Plane: one `\uXXXX`.
        |c| format!("\\u{:04x}", u32::from(c)),
    )
}

/// `text` with every character `escape` picks written as `written(c)`; borrowed when none is.
fn escape_where(
    text: &str,
    escape: impl Fn(char) -> bool,
    written: impl Fn(char) -> String,
) -> Cow<'_, str> {
    if !text.chars().any(&escape) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if escape(c) {
            out.push_str(&written(c));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// `text` with every character `escape` picks written as its Rust escape (`\u{1b}`): for text
/// bound elsewhere than a terminal, which refuses other characters as well (an SVG).
pub(crate) fn escaped_where(text: &str, escape: impl Fn(char) -> bool) -> Cow<'_, str> {
    escape_where(text, escape, rust_escape)
}

/// A character as Rust writes its escape: `\u{1b}`.
fn rust_escape(c: char) -> String {
    format!("\\u{{{:x}}}", u32::from(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOSTILE: &str = "a\u{1b}[2J\u{1b}]0;title\u{7}b\rc\u{9b}2Jd\u{7f}e\u{202e}f\u{2067}g";

    #[test]
    fn nothing_that_acts_on_a_terminal_is_left_and_the_rest_is_kept() {
        let e = escaped(HOSTILE);
        assert!(!e.chars().any(acts_on_terminal), "{e}");
        assert_eq!(
            e,
            "a\\u{1b}[2J\\u{1b}]0;title\\u{7}b\\u{d}c\\u{9b}2Jd\\u{7f}e\\u{202e}f\\u{2067}g"
        );
        assert!(matches!(escaped("plain: café, 日本, ✓"), Cow::Borrowed(_)));
        assert_eq!(escaped("one\ntwo"), "one\\u{a}two");
    }

    #[test]
    fn joj_s_own_lines_keep_their_breaks_and_lose_the_rest() {
        let text = format!("line 1 {HOSTILE}\nline 2\n");
        let e = escaped_lines(&text);
        assert_eq!(e.lines().count(), 2, "{e}");
        assert!(!e.chars().any(|c| c != '\n' && acts_on_terminal(c)), "{e}");
    }

    #[test]
    fn json_keeps_its_meaning_and_loses_what_acts_on_a_terminal() {
        let doc = serde_json::json!({ "path": HOSTILE, "n": [1, 2] });
        let text = serde_json::to_string_pretty(&doc).unwrap();
        let e = escaped_json(&text);
        assert!(!e.chars().any(|c| c != '\n' && acts_on_terminal(c)), "{e}");
        let back: serde_json::Value = serde_json::from_str(&e).unwrap();
        assert_eq!(back, doc);
        assert!(matches!(escaped_json("{\n  \"a\": 1\n}"), Cow::Borrowed(_)));
    }
}
