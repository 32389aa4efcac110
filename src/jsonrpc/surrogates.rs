//! Lone UTF-16 surrogate escapes, which JSON's grammar allows and Unicode text cannot hold,
//! replaced by U+FFFD so that the rest of a message can still be read.
//!
//! JavaScript's `JSON.stringify` writes `"\ud83d"` for half of an emoji cut by a length
//! limit, and serde_json refuses such a string. A decoder that meets that refusal mends the
//! text and tries once more, so the well-formed messages pay nothing.

/// `text` with every lone surrogate escape (`\uD800`–`\uDFFF` not part of a high–low pair)
/// written as `\uFFFD`; `None` when it holds none.
pub(crate) fn mend(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut mended = String::new();
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'\\' {
            i += 1;
            continue;
        }
        // Any escape but `\u` is two bytes long (`\\` included, so `\\ud83d` is no escape).
        let Some(unit) = escaped_unit(bytes, i) else {
            i += 2;
            continue;
        };
        let lone = match unit {
            0xD800..=0xDBFF => match escaped_unit(bytes, i + 6) {
                Some(0xDC00..=0xDFFF) => {
                    i += 12; // A pair: one character.
                    continue;
                }
                _ => true,
            },
            0xDC00..=0xDFFF => true,
            _ => false,
        };
        if lone {
            // `i` is at an ASCII backslash and the escape is six ASCII bytes: both are
            // character boundaries.
            mended.push_str(&text[copied..i]);
            mended.push_str("\\uFFFD");
            copied = i + 6;
        }
        i += 6;
    }
    if copied == 0 {
        return None;
    }
    mended.push_str(&text[copied..]);
    Some(mended)
}

/// The code unit of the `\uXXXX` escape at `at`, if one is there.
fn escaped_unit(bytes: &[u8], at: usize) -> Option<u32> {
    let escape = bytes.get(at..at + 6)?;
    if escape[..2] != *b"\\u" {
        return None;
    }
    let hex = std::str::from_utf8(&escape[2..]).ok()?;
    u32::from_str_radix(hex, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::mend;

    #[test]
    fn lone_surrogates_are_replaced_and_pairs_kept() {
        assert_eq!(mend(r#""no escapes""#), None);
        assert_eq!(mend(r#""\u00e9 \ud83d\ude00 \n \\ud83d""#), None);
        let mended = mend(r#"{"a":"x\ud83d","b":"\udc00y","c":"\ud83d\ud83d\ude00"}"#);
        let expected = r#"{"a":"x\uFFFD","b":"\uFFFDy","c":"\uFFFD\ud83d\ude00"}"#;
        assert_eq!(mended.as_deref(), Some(expected));
        // Every result parses, keeping the valid pair.
        let value: serde_json::Value = serde_json::from_str(expected).unwrap();
        assert_eq!(value["c"], "\u{FFFD}\u{1F600}");
        // A surrogate at the very end, and a truncated escape, which stays an error.
        assert_eq!(mend(r#""\ud83d""#).as_deref(), Some(r#""\uFFFD""#));
        assert_eq!(mend(r#""\ud8"#), None);
        // Multi-byte text around the escape is copied whole.
        assert_eq!(mend("\"é\\udc00ü\"").as_deref(), Some("\"é\\uFFFDü\""));
    }
}
