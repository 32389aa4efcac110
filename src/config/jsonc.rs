//! JSON with comments and trailing commas (JSONC, as VS Code's `mcp.json` and `settings.json`
//! are written) turned into plain JSON with the same layout.

use std::borrow::Cow;

/// `text` with its comments and trailing commas blanked out (outside strings): each byte removed
/// becomes a space and line breaks stay, so a JSON error names its place in the file as written.
pub(crate) fn strip(text: &str) -> Cow<'_, str> {
    if !text.contains(['/', ',']) {
        return Cow::Borrowed(text);
    }
    let mut bytes = text.as_bytes().to_vec();
    let comments = blank_comments(&mut bytes);
    let commas = blank_trailing_commas(&mut bytes);
    if !comments && !commas {
        return Cow::Borrowed(text);
    }
    // Only ASCII bytes and whole UTF-8 sequences (a comment's) were blanked, so this holds;
    // should it not, the text is handed on unchanged for the JSON parser to reject.
    match String::from_utf8(bytes) {
        Ok(stripped) => Cow::Owned(stripped),
        Err(_) => Cow::Borrowed(text),
    }
}

/// Blanks every comment outside strings; whether there was one.
fn blank_comments(bytes: &mut [u8]) -> bool {
    let mut found = false;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => i = string_end(bytes, i),
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                let end = bytes[i..]
                    .iter()
                    .position(|b| *b == b'\n' || *b == b'\r')
                    .map_or(bytes.len(), |n| i + n);
                blank(&mut bytes[i..end]);
                found = true;
                i = end;
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                let Some(close) = bytes[i + 2..].windows(2).position(|w| w == b"*/") else {
                    return found;
                };
                let end = i + 2 + close + 2;
                blank(&mut bytes[i..end]);
                found = true;
                i = end;
            }
            _ => i += 1,
        }
    }
    found
}

/// Blanks every `,` outside strings that is followed, past whitespace, by `}` or `]`; whether
/// there was one. Runs after [`blank_comments`], so comments are whitespace by then.
fn blank_trailing_commas(bytes: &mut [u8]) -> bool {
    let mut found = false;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => i = string_end(bytes, i),
            b',' => {
                let next = bytes[i + 1..]
                    .iter()
                    .find(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'));
                if matches!(next, Some(b'}' | b']')) {
                    bytes[i] = b' ';
                    found = true;
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
    found
}

/// The index just past the string that opens at `start` (a `"`), or the end of the text when
/// it is never closed.
fn string_end(bytes: &[u8], start: usize) -> usize {
    let mut i = start + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    bytes.len()
}

/// Turns every byte but line breaks into a space.
fn blank(bytes: &mut [u8]) {
    for b in bytes.iter_mut().filter(|b| !matches!(b, b'\n' | b'\r')) {
        *b = b' ';
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blanks_comments_and_trailing_commas_outside_strings() {
        let text = "{ // a comment, with \"quotes\"\n  \"a\": [1, 2, /* two */ ],\n  \"b\": \"// not a comment, /* nor this */\",\n}";
        let stripped = strip(text);
        let value: serde_json::Value = serde_json::from_str(&stripped).unwrap();
        assert_eq!(
            value,
            serde_json::json!({"a": [1, 2], "b": "// not a comment, /* nor this */"})
        );
        assert_eq!(stripped.len(), text.len());
        assert_eq!(stripped.lines().count(), text.lines().count());
    }

    #[test]
    fn keeps_line_and_column_of_errors() {
        // A multi-line block comment with a non-ASCII character, then an error on line 4.
        let text = "{\n  /* é\n  */ \"a\": 1, // ü\n  \"b\": ?\n}";
        let err = serde_json::from_str::<serde_json::Value>(&strip(text)).unwrap_err();
        assert_eq!((err.line(), err.column()), (4, 8), "{err}");
    }

    #[test]
    fn leaves_plain_json_and_escapes_alone() {
        let plain = r#"{"a": "x, ]", "b": "\"//\"", "c": [1, 2]}"#;
        assert!(matches!(strip(plain), Cow::Borrowed(_)));
        let escaped = r#"{"a": "\\", "b": 1, /* c */ }"#;
        let value: serde_json::Value = serde_json::from_str(&strip(escaped)).unwrap();
        assert_eq!(value, serde_json::json!({"a": "\\", "b": 1}));
    }

    #[test]
    fn an_unterminated_comment_is_left_for_the_parser() {
        let text = "{\"a\": 1 /* never closed\n}";
        assert_eq!(strip(text), text);
        let err = serde_json::from_str::<serde_json::Value>(&strip(text)).unwrap_err();
        assert_eq!(err.line(), 1);
    }
}

#[cfg(test)]
#[path = "../../tests/fuzz/internal/jsonc.rs"]
mod fuzz;
