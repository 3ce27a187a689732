//! Checks of request text that every service runs before anything reaches its store, so a
//! malformed request is INVALID_ARGUMENT (fix it, do not retry) and never a store failure
//! (UNAVAILABLE, "retry"): text PostgreSQL cannot hold (NUL) and the client `request_id`.
//!
//! Call [`text`] on every string field a handler keeps or looks up, and [`request_id`] on the
//! `request_id` of every command. Lengths count characters (Unicode scalar values), never bytes.
//! An error message that quotes request text quotes it through [`quoted`].

use tonic::Status;

use crate::status::{self, Reason};

/// Longest client `request_id`, in characters (common.proto: "at most 64 characters").
pub const MAX_REQUEST_ID_CHARS: usize = 64;

/// Longest piece of request text an error message quotes, in characters. The message travels in
/// the response's trailers three times (`grpc-message`, and the status and `BadRequest` of
/// `grpc-status-details-bin`), and clients refuse trailers over 8 to 16 KiB: quoting a long field
/// whole would turn a precise INVALID_ARGUMENT into a protocol error.
pub const MAX_QUOTED_CHARS: usize = 64;

/// `value` as an error message may quote it: its first [`MAX_QUOTED_CHARS`] characters, with `…`
/// where it was cut.
pub fn quoted(value: &str) -> std::borrow::Cow<'_, str> {
    match value.char_indices().nth(MAX_QUOTED_CHARS) {
        Some((end, _)) => format!("{}…", &value[..end]).into(),
        None => value.into(),
    }
}

/// `value` of request field `field`, if it is text the store and the wire can hold: no NUL
/// character (PostgreSQL refuses it in `text` columns). Otherwise INVALID_ARGUMENT `invalid_text`
/// naming `field`.
pub fn text<'a>(field: &str, value: &'a str) -> Result<&'a str, Status> {
    if value.contains('\0') {
        return Err(status::invalid_argument(
            Reason::InvalidText,
            field,
            format!("{field} contains a NUL character"),
        ));
    }
    Ok(value)
}

/// Whether `c` may not appear in text shown to other players (display names, chat): a control
/// character (terminals and some text views act on them: ESC sequences, carriage returns), a
/// line or paragraph separator (U+2028, U+2029: line breaks that are not control characters), or
/// a bidirectional embedding, override or isolate (U+202A–U+202E, U+2066–U+2069), which makes a
/// name or a message read as another. Characters of right-to-left scripts, and the plain
/// direction marks (U+200E, U+200F), are fine.
pub fn unfit_to_show(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{2028}' | '\u{2029}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}'
        )
}

/// Whether `c` takes no room when shown: Unicode's default-ignorable code points (zero-width
/// spaces, joiners and marks, a soft hyphen, the Hangul fillers, variation selectors, tags, a
/// byte-order mark; DerivedCoreProperties.txt, Unicode 16), and the blank Braille pattern, which
/// is used as an invisible name too.
fn takes_no_room(c: char) -> bool {
    matches!(
        c,
        '\u{00AD}'
            | '\u{034F}'
            | '\u{061C}'
            | '\u{115F}'..='\u{1160}'
            | '\u{17B4}'..='\u{17B5}'
            | '\u{180B}'..='\u{180F}'
            | '\u{200B}'..='\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{206F}'
            | '\u{2800}'
            | '\u{3164}'
            | '\u{FE00}'..='\u{FE0F}'
            | '\u{FEFF}'
            | '\u{FFA0}'
            | '\u{FFF0}'..='\u{FFF8}'
            | '\u{1BCA0}'..='\u{1BCA3}'
            | '\u{1D173}'..='\u{1D17A}'
            | '\u{E0000}'..='\u{E0FFF}'
    )
}

/// Whether `value` shows nothing when displayed: every character is white space or takes no
/// room (zero-width and blank characters, see `takes_no_room`). Such a chat message or display
/// name counts as empty.
pub fn shows_nothing(value: &str) -> bool {
    value.chars().all(|c| c.is_whitespace() || takes_no_room(c))
}

/// Text shown to other players (a display name, a chat message) as it is kept: refused when it
/// holds a character [`unfit_to_show`] anywhere (at either end too: trimming would take a line
/// break away unseen), then white space at either end removed, and empty when it
/// [`shows_nothing`]. Lengths are the caller's to check, on what this returns.
pub fn shown_text(value: &str) -> Result<&str, Unshowable> {
    if value.chars().any(unfit_to_show) {
        return Err(Unshowable);
    }
    let value = value.trim();
    Ok(if shows_nothing(value) { "" } else { value })
}

/// Text [`shown_text`] refuses: it holds a control character, a line or paragraph separator or
/// a bidirectional override.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unshowable;

/// The id of a resource name (`tables/{uuid}`, `players/{uuid}`, …): a UUID in its string
/// form, 36 characters of hexadecimal digits and hyphens (RFC 9562; the server writes it in
/// lower case and, as the RFC says, takes either case). The other spellings the uuid crate also
/// reads (braces, no hyphens, `urn:uuid:`) name nothing here.
pub fn name_id(id: &str) -> Option<sqlx::types::Uuid> {
    let canonical = id.len() == 36
        && id.bytes().enumerate().all(|(i, b)| match i {
            8 | 13 | 18 | 23 => b == b'-',
            _ => b.is_ascii_hexdigit(),
        });
    if !canonical {
        return None;
    }
    sqlx::types::Uuid::try_parse(id).ok()
}

/// Longest display name, in characters.
pub const MAX_DISPLAY_NAME_CHARS: usize = 24;

/// A display name as every service keeps it (accounts' profiles, the names a table's creator
/// gives its seats): [`shown_text`] (one that shows nothing is empty), then at most
/// [`MAX_DISPLAY_NAME_CHARS`] characters. Whether it may be empty is the caller's to say. `Err`
/// says what is wrong, for an `invalid_display_name` refusal.
pub fn display_name(value: &str) -> Result<&str, String> {
    let value = shown_text(value).map_err(|Unshowable| {
        "a display name holds no control characters, line breaks or bidirectional overrides"
            .to_owned()
    })?;
    if value.chars().count() > MAX_DISPLAY_NAME_CHARS {
        return Err(format!(
            "a display name is at most {MAX_DISPLAY_NAME_CHARS} characters"
        ));
    }
    Ok(value)
}

/// `value` of a required text field: [`text`], and not empty (INVALID_ARGUMENT `missing_field`
/// naming `field`).
pub fn required<'a>(field: &str, value: &'a str) -> Result<&'a str, Status> {
    if text(field, value)?.is_empty() {
        return Err(status::invalid_argument(
            Reason::MissingField,
            field,
            format!("{field} is required"),
        ));
    }
    Ok(value)
}

/// A command's `request_id`: 1 to [`MAX_REQUEST_ID_CHARS`] characters, none of them a control
/// character. Otherwise INVALID_ARGUMENT `invalid_request_id`, except a NUL, which is
/// `invalid_text` as in any string field ([`text`]), in every service alike.
pub fn request_id(value: &str) -> Result<&str, Status> {
    text("request_id", value)?;
    let chars = value.chars().count();
    if chars == 0 || chars > MAX_REQUEST_ID_CHARS || value.chars().any(char::is_control) {
        return Err(status::invalid_argument(
            Reason::InvalidRequestId,
            "request_id",
            format!(
                "request_id must be 1 to {MAX_REQUEST_ID_CHARS} characters, none of them a \
                 control character"
            ),
        ));
    }
    Ok(value)
}

/// A person's resource name in request field `field`: `players/{player}`, `{player}` the
/// account's id (a UUID), returned in its canonical spelling (lower-case, hyphenated), the one
/// tokens carry. An empty name is INVALID_ARGUMENT `missing_field`; any other name, including the
/// aliases some reads accept (`players/me`, `players/-`), INVALID_ARGUMENT `invalid_name`.
pub fn player(field: &str, name: &str) -> Result<String, Status> {
    required(field, name)?;
    name.strip_prefix("players/")
        .and_then(name_id)
        .map(|id| format!("players/{}", id.hyphenated()))
        .ok_or_else(|| {
            status::invalid_argument(
                Reason::InvalidName,
                field,
                format!(
                    "{field} must be players/{{player}}, {{player}} the account's id (a UUID), \
                     not {}",
                    quoted(name)
                ),
            )
        })
}

#[cfg(test)]
mod tests {
    use tonic::Code;
    use tonic_types::StatusExt;

    use super::*;

    #[test]
    fn text_of_zero_width_and_blank_characters_alone_shows_nothing() {
        for blank in [
            "",
            " ",
            "\u{200B}",
            " \u{200B}\u{200D} ",
            "\u{2800}\u{3164}",
            "\u{FEFF}",
        ] {
            assert!(shows_nothing(blank), "{blank:?}");
        }
        for shown in ["a", "\u{200B}a", "👩\u{200D}💻", "\u{05D0}\u{200F}"] {
            assert!(!shows_nothing(shown), "{shown:?}");
        }
        assert_eq!(display_name(" \u{200B}\u{3164} "), Ok(""), "no name: empty");
        assert_eq!(
            display_name("  "),
            Ok(""),
            "empty is the caller's to refuse"
        );
        assert_eq!(display_name("Ayşe\u{200B}"), Ok("Ayşe\u{200B}"));
        // Tags, variation selectors of the supplement, Mongolian selectors: no room either.
        for blank in [
            "\u{E0020}",
            "\u{E0100}\u{E0101}",
            "\u{180B}",
            "\u{1D173}",
            "\u{FFF0}",
        ] {
            assert_eq!(display_name(blank), Ok(""), "{blank:?}");
        }
        // Emptiness before length: 30 zero-width spaces are no name, not a long one.
        assert_eq!(display_name(&"\u{200B}".repeat(30)), Ok(""));
        // A line break is refused at either end too, not trimmed away.
        for broken in ["Ayşe\n", "\r\nAyşe", "\u{2028}Ayşe", "\tAyşe"] {
            assert!(display_name(broken).is_err(), "{broken:?}");
        }
    }

    #[test]
    fn text_shown_to_others_has_no_controls_and_no_direction_overrides() {
        for c in [
            '\u{1b}', '\r', '\n', '\t', '\u{7f}', '\u{85}', '\u{2028}', '\u{2029}', '\u{202E}',
            '\u{202A}', '\u{2066}', '\u{2069}',
        ] {
            assert!(unfit_to_show(c), "{:?}", c);
        }
        for c in ['a', 'ş', 'İ', ' ', 'م', 'א', '\u{200E}', '\u{200F}', '🀄'] {
            assert!(!unfit_to_show(c), "{:?}", c);
        }
    }

    fn reason(status: &Status) -> String {
        status
            .get_error_details()
            .error_info()
            .unwrap()
            .reason
            .clone()
    }

    #[test]
    fn a_required_field_is_missing_when_empty_and_text_otherwise() {
        assert_eq!(reason(&required("name", "").unwrap_err()), "missing_field");
        assert_eq!(
            reason(&required("name", "a\0").unwrap_err()),
            "invalid_text"
        );
        assert_eq!(required("name", "players/me").unwrap(), "players/me");
    }

    #[test]
    fn a_name_holds_its_id_in_the_uuid_string_form_only() {
        let id = "5ac7ebd3-0f14-4c55-9a3c-1b2e3d4f5a6b";
        assert_eq!(name_id(id).unwrap().to_string(), id);
        assert_eq!(name_id(&id.to_uppercase()).unwrap().to_string(), id);
        for other in [
            "{5ac7ebd3-0f14-4c55-9a3c-1b2e3d4f5a6b}",
            "5ac7ebd30f144c559a3c1b2e3d4f5a6b",
            "urn:uuid:5ac7ebd3-0f14-4c55-9a3c-1b2e3d4f5a6b",
            "5ac7ebd3-0f14-4c55-9a3c-1b2e3d4f5a6",
            "5ac7ebd3-0f14-4c55-9a3c-1b2e3d4f5a6bb",
            "5ac7ebd3+0f14-4c55-9a3c-1b2e3d4f5a6b",
            "",
        ] {
            assert_eq!(name_id(other), None, "{other}");
        }
    }

    #[test]
    fn a_person_is_named_by_the_uuid_of_their_account() {
        let id = "0b6f5d4e-8f0a-4c4e-9b57-3a1d2c3b4a59";
        assert_eq!(
            player("p", &format!("players/{id}")).unwrap(),
            format!("players/{id}")
        );
        assert_eq!(
            player("p", &format!("players/{}", id.to_uppercase())).unwrap(),
            format!("players/{id}"),
            "one spelling: the tokens' own"
        );
        assert_eq!(reason(&player("p", "").unwrap_err()), "missing_field");
        for bad in [
            "players/",
            "players/foo",
            "players/me",
            "players/-",
            "players/a/b",
            "bots/easy-1",
            id,
            "players/0b6f5d4e-8f0a-4c4e-9b57-3a1d2c3b4a59/x",
        ] {
            let refused = player("seats[0].player", bad).unwrap_err();
            assert_eq!(refused.code(), Code::InvalidArgument, "{bad}");
            assert_eq!(reason(&refused), "invalid_name", "{bad}");
        }
    }

    #[test]
    fn a_nul_anywhere_in_text_is_an_invalid_argument_naming_the_field() {
        for value in ["\0", "a\0", "\0b", "ab\0cd"] {
            let refused = text("display_name", value).unwrap_err();
            assert_eq!(refused.code(), Code::InvalidArgument);
            assert_eq!(reason(&refused), "invalid_text");
            let details = refused.get_error_details();
            assert_eq!(
                details.bad_request().unwrap().field_violations[0].field,
                "display_name"
            );
        }
        assert_eq!(text("display_name", "Ayşe 🀄").unwrap(), "Ayşe 🀄");
        assert_eq!(text("display_name", "").unwrap(), "");
    }

    #[test]
    fn quoted_text_is_cut_to_a_bounded_length() {
        assert_eq!(quoted("tables/x"), "tables/x");
        let exact = "é".repeat(MAX_QUOTED_CHARS);
        assert_eq!(quoted(&exact), exact);
        let long = "é".repeat(5_000);
        assert_eq!(quoted(&long), format!("{}…", "é".repeat(MAX_QUOTED_CHARS)));
    }

    #[test]
    fn a_request_id_counts_characters_not_bytes() {
        let accented = "é".repeat(MAX_REQUEST_ID_CHARS);
        assert!(accented.len() > MAX_REQUEST_ID_CHARS);
        assert_eq!(request_id(&accented).unwrap(), accented);
        assert!(request_id(&"a".repeat(MAX_REQUEST_ID_CHARS)).is_ok());
        for bad in [
            String::new(),
            "é".repeat(MAX_REQUEST_ID_CHARS + 1),
            "a".repeat(MAX_REQUEST_ID_CHARS + 1),
            "line\nbreak".to_owned(),
        ] {
            let refused = request_id(&bad).unwrap_err();
            assert_eq!(refused.code(), Code::InvalidArgument, "{bad:?}");
            assert_eq!(reason(&refused), "invalid_request_id");
        }
        // A NUL is `invalid_text`, as in any string field.
        assert_eq!(reason(&request_id("id\0").unwrap_err()), "invalid_text");
    }
}
