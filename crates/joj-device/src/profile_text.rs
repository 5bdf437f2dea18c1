//! The free text of a profile — its `name`, `description` and `sources`, its host's `name` and
//! `sources` — is printed: to the terminal (`joj device run`, `joj device calibrate`, the
//! `device` line of a replay), into result documents and report pages. A profile is a file
//! anybody may hand joj, which runs as root, so its text must show as the characters it is and
//! nothing else: it holds no control character (C0, DEL, C1: ESC starts a terminal escape
//! sequence, CR returns the cursor over what was printed, a newline forges an output line) and
//! no character that reorders or hides text (the bidirectional formatting controls U+061C,
//! U+200E, U+200F, U+202A–U+202E, U+2066–U+2069, and the line and paragraph separators U+2028,
//! U+2029). A name is one short line, 1 to [`MAX_NAME_CHARS`] characters, a host's name 1 to
//! [`MAX_HOST_NAME_CHARS`], a description or source at most [`MAX_TEXT_CHARS`]. Every built-in
//! profile is plain text of one line per field. `Profile::validate` and `HostConfig::validate`
//! check their fields here, so every profile loaded has passed.

use joj_trace::terminal::acts_on_terminal;

use crate::error::ProfileError;

/// The longest profile name, in characters: a name is a label (`emmc5`, `galaxy-s5`) shown in
/// every result line; the device's details go in `description` and `sources`.
pub const MAX_NAME_CHARS: usize = 64;
/// The longest host name, in characters (the built-in ones: under 80).
pub const MAX_HOST_NAME_CHARS: usize = 128;
/// The longest description or source, in characters (the built-in ones: under 700; a
/// calibrated profile's description holds the path measured, at most 4095 bytes).
pub const MAX_TEXT_CHARS: usize = 8192;

/// `text` with every character that acts on a terminal written as its escape (`\u{1b}`), for
/// text joj puts into a profile itself (a calibrated profile's description names the path
/// measured).
pub fn plain(text: &str) -> String {
    joj_trace::terminal::escaped(text).into_owned()
}

/// One field's text: no character that acts on a terminal, and `min_chars..=max_chars` long.
fn check(
    field: &str,
    text: &str,
    min_chars: usize,
    max_chars: usize,
    fix: &'static str,
) -> Result<(), ProfileError> {
    if let Some((at, c)) = text.chars().enumerate().find(|&(_, c)| acts_on_terminal(c)) {
        return Err(ProfileError::TextControl {
            field: field.to_string(),
            code: u32::from(c),
            at,
        });
    }
    let chars = text.chars().count();
    if !(min_chars..=max_chars).contains(&chars) {
        return Err(ProfileError::TextLength {
            field: field.to_string(),
            chars,
            min: min_chars,
            max: max_chars,
            fix,
        });
    }
    Ok(())
}

const NAME_FIX: &str = "a short label, like emmc5 or galaxy-s5 (`joj device calibrate --name`); \
                        the device's details go in description and sources";
const TEXT_FIX: &str = "say it in fewer words, or split a source in two";

/// A profile's `name` (also for a name given before a profile is made: `joj device calibrate
/// --name`, or its output file's stem).
pub fn check_name(name: &str) -> Result<(), ProfileError> {
    check("name", name, 1, MAX_NAME_CHARS, NAME_FIX)
}

/// A host's `name` (`host.name`).
pub fn check_host_name(name: &str) -> Result<(), ProfileError> {
    check(
        "host.name",
        name,
        1,
        MAX_HOST_NAME_CHARS,
        "a short description of the host, like `Galaxy S5: Snapdragon 801, Krait 400 at 2.5 \
         GHz`; the rest goes in host.sources",
    )
}

/// A description (`field`).
pub fn check_text(field: &str, text: &str) -> Result<(), ProfileError> {
    check(field, text, 0, MAX_TEXT_CHARS, TEXT_FIX)
}

/// A list of sources (`field`), each named by its index (`sources[2]`).
pub fn check_sources(field: &str, sources: &[String]) -> Result<(), ProfileError> {
    for (i, s) in sources.iter().enumerate() {
        check_text(&format!("{field}[{i}]"), s)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Profile;

    #[test]
    fn every_built_in_profile_is_plain_text() {
        for name in Profile::builtin_names() {
            let p = Profile::builtin(name).unwrap();
            check_name(&p.name).unwrap();
            check_text("description", &p.description).unwrap();
            check_sources("sources", &p.sources).unwrap();
            if let Some(h) = &p.host {
                check_host_name(&h.name).unwrap();
                check_sources("host.sources", &h.sources).unwrap();
            }
        }
    }

    #[test]
    fn a_control_or_bidi_character_is_refused_naming_the_field_and_where() {
        let base = Profile::builtin("galaxy-s5").unwrap();
        for c in [
            '\u{0}', '\t', '\n', '\r', '\u{1b}', '\u{7f}', '\u{85}', '\u{9b}', '\u{61c}',
            '\u{200f}', '\u{202e}', '\u{2066}', '\u{2069}', '\u{2028}',
        ] {
            let mut p = base.clone();
            p.sources[2] = format!("ab{c}cd");
            let e = p.validate().unwrap_err();
            assert!(
                matches!(&e, ProfileError::TextControl { field, code, at: 2 }
                    if field == "sources[2]" && *code == u32::from(c)),
                "{c:?}: {e:?}"
            );
            let text = e.to_string();
            assert!(
                text.contains("sources[2] ") && text.contains("fix:"),
                "{text}"
            );
            assert!(
                !text.contains(c),
                "the message holds {c:?} itself: {text:?}"
            );
            let mut p = base.clone();
            if let Some(h) = p.host.as_mut() {
                h.name.push(c);
            }
            assert!(
                matches!(p.validate(), Err(ProfileError::TextControl { field, .. }) if field == "host.name")
            );
        }
    }

    #[test]
    fn a_name_is_one_to_64_characters() {
        assert!(check_name(&"ü".repeat(MAX_NAME_CHARS)).is_ok());
        for bad in [String::new(), "x".repeat(MAX_NAME_CHARS + 1)] {
            let e = check_name(&bad).unwrap_err();
            assert!(
                matches!(
                    e,
                    ProfileError::TextLength {
                        max: MAX_NAME_CHARS,
                        ..
                    }
                ),
                "{e:?}"
            );
            assert!(e.to_string().contains("fix:"), "{e}");
        }
        let mut p = Profile::builtin("emmc5").unwrap();
        p.description = "d".repeat(MAX_TEXT_CHARS + 1);
        assert!(matches!(
            p.validate(),
            Err(ProfileError::TextLength { field, .. }) if field == "description"
        ));
    }

    #[test]
    fn plain_escapes_only_what_acts_on_a_terminal() {
        assert_eq!(plain("/dev/sdb é"), "/dev/sdb é");
        assert_eq!(
            plain("a\u{1b}[2J\nb\u{202e}"),
            "a\\u{1b}[2J\\u{a}b\\u{202e}"
        );
        check_name(&plain("x\u{1b}y")).unwrap();
    }
}
