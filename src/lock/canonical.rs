//! Canonical JSON, the one text of a JSON value that a lock digests, and its indented form.
//!
//! The canonical text of a value has
//!
//! - no whitespace outside strings;
//! - every object's keys sorted by their characters' code points (the order of their UTF-8
//!   bytes), a key written twice keeping its last value, as serde_json reads it;
//! - strings with the fewest escapes: `\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, other control
//!   characters as `\u00xx` (lowercase hex), everything else as itself, so `"\u00e9"` and `"é"`
//!   are the same string;
//! - numbers exactly as the source wrote them: `1`, `1.0` and `1e0` stay three texts. Tool
//!   schemas are kept as the server wrote them ([`Schema`](crate::types::Schema)), so this is
//!   the server's own number; one built from a [`Value`](serde_json::Value) has serde_json's
//!   (`1e3` reads back as `1000.0`).
//!
//! The order does not depend on serde_json's `preserve_order`, and the same value always has
//! the same bytes. The reader takes what serde_json takes, nests at most [`MAX_DEPTH`] deep (as
//! serde_json), and fails on anything else; it never recurses past that depth.

use std::fmt;

/// How deeply arrays and objects may nest: serde_json's own limit.
pub(crate) const MAX_DEPTH: usize = 128;

/// Why a text has no canonical form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Malformed {
    /// The byte offset where reading stopped.
    pub(crate) at: usize,
    pub(crate) what: &'static str,
}

impl fmt::Display for Malformed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}", self.what, self.at)
    }
}

/// The canonical text of the JSON `text`.
pub(crate) fn canonical(text: &str) -> Result<String, Malformed> {
    let mut reader = Reader {
        bytes: text.as_bytes(),
        text,
        at: 0,
    };
    let mut out = String::with_capacity(text.len());
    reader.value(&mut out, 0)?;
    reader.space();
    if reader.at != reader.bytes.len() {
        return Err(reader.fail("trailing characters"));
    }
    Ok(out)
}

/// The members of the canonical object `text`, each key (decoded) with its value's text.
pub(crate) fn members(text: &str) -> Result<Vec<(String, String)>, Malformed> {
    let mut reader = Reader {
        bytes: text.as_bytes(),
        text,
        at: 0,
    };
    reader.space();
    if reader.peek() != Some(b'{') {
        return Err(reader.fail("not an object"));
    }
    let members = reader.members_of(1)?;
    Ok(members.into_iter().map(|m| (m.key, m.value)).collect())
}

/// Writes `text` as a JSON string, with the fewest escapes.
pub(crate) fn write_string(out: &mut String, text: &str) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if c < ' ' => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// The canonical text `canonical` indented by two spaces a level, a member or element a
/// line, `{}` and `[]` when empty, as serde_json's pretty printer writes them.
pub(crate) fn pretty(canonical: &str) -> String {
    let mut out = String::with_capacity(canonical.len() * 2);
    let mut depth = 0usize;
    let (mut in_string, mut escaped) = (false, false);
    let mut chars = canonical.chars().peekable();
    let newline = |out: &mut String, depth: usize| {
        out.push('\n');
        out.extend(std::iter::repeat_n("  ", depth));
    };
    while let Some(c) = chars.next() {
        out.push(c);
        if in_string {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '{' | '[' => {
                let close = if c == '{' { '}' } else { ']' };
                if chars.peek() == Some(&close) {
                    out.push(close);
                    chars.next();
                } else {
                    depth += 1;
                    newline(&mut out, depth);
                }
            }
            '}' | ']' => {
                out.pop();
                depth = depth.saturating_sub(1);
                newline(&mut out, depth);
                out.push(c);
            }
            ',' => newline(&mut out, depth),
            ':' => out.push(' '),
            _ => {}
        }
    }
    out
}

/// A string as read: its text (the sort key of an object's member) and its canonical form.
struct Text {
    key: String,
    quoted: String,
}

/// A member of an object as read.
struct Member {
    key: String,
    quoted: String,
    value: String,
}

/// A reader of JSON text that writes the canonical form of what it reads.
struct Reader<'a> {
    bytes: &'a [u8],
    text: &'a str,
    at: usize,
}

impl Reader<'_> {
    fn fail(&self, what: &'static str) -> Malformed {
        Malformed { at: self.at, what }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    /// Reads one value at nesting `depth`, writing its canonical form to `out`.
    fn value(&mut self, out: &mut String, depth: usize) -> Result<(), Malformed> {
        self.space();
        match self.peek() {
            Some(b'{') => {
                let members = self.members_of(depth + 1)?;
                out.push('{');
                for (i, member) in members.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&member.quoted);
                    out.push(':');
                    out.push_str(&member.value);
                }
                out.push('}');
                Ok(())
            }
            Some(b'[') => self.array(out, depth + 1),
            Some(b'"') => {
                out.push_str(&self.string()?.quoted);
                Ok(())
            }
            Some(b't') => self.literal(out, "true"),
            Some(b'f') => self.literal(out, "false"),
            Some(b'n') => self.literal(out, "null"),
            Some(b'-' | b'0'..=b'9') => self.number(out),
            Some(_) => Err(self.fail("unexpected character")),
            None => Err(self.fail("unexpected end")),
        }
    }

    /// Reads an object's members at nesting `depth`, sorted by key, each key once (its last
    /// value), each value's text canonical.
    fn members_of(&mut self, depth: usize) -> Result<Vec<Member>, Malformed> {
        if depth > MAX_DEPTH {
            return Err(self.fail("nested too deeply"));
        }
        self.at += 1;
        let mut members: Vec<Member> = Vec::new();
        self.space();
        if self.peek() == Some(b'}') {
            self.at += 1;
            return Ok(members);
        }
        loop {
            self.space();
            if self.peek() != Some(b'"') {
                return Err(self.fail("expected a key"));
            }
            let Text { key, quoted } = self.string()?;
            self.space();
            if self.peek() != Some(b':') {
                return Err(self.fail("expected `:`"));
            }
            self.at += 1;
            let mut value = String::new();
            self.value(&mut value, depth)?;
            members.push(Member { key, quoted, value });
            self.space();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b'}') => {
                    self.at += 1;
                    break;
                }
                _ => return Err(self.fail("expected `,` or `}`")),
            }
        }
        // Stable, so that of equal keys the last read is the last here, and kept.
        members.sort_by(|a, b| a.key.cmp(&b.key));
        let mut unique: Vec<Member> = Vec::with_capacity(members.len());
        for member in members {
            match unique.last_mut() {
                Some(last) if last.key == member.key => *last = member,
                _ => unique.push(member),
            }
        }
        Ok(unique)
    }

    fn array(&mut self, out: &mut String, depth: usize) -> Result<(), Malformed> {
        if depth > MAX_DEPTH {
            return Err(self.fail("nested too deeply"));
        }
        self.at += 1;
        out.push('[');
        self.space();
        if self.peek() == Some(b']') {
            self.at += 1;
            out.push(']');
            return Ok(());
        }
        loop {
            self.value(out, depth)?;
            self.space();
            match self.peek() {
                Some(b',') => {
                    self.at += 1;
                    out.push(',');
                }
                Some(b']') => {
                    self.at += 1;
                    out.push(']');
                    return Ok(());
                }
                _ => return Err(self.fail("expected `,` or `]`")),
            }
        }
    }

    /// Reads a string: its text, and its canonical quoted form. One with a lone surrogate
    /// escape, which serde_json does not decode, is kept as written: still one text for one
    /// input.
    fn string(&mut self) -> Result<Text, Malformed> {
        let start = self.at;
        self.at += 1;
        let mut plain = true;
        loop {
            match self.peek() {
                Some(b'"') => break,
                Some(b'\\') => {
                    plain = false;
                    self.at += 2;
                }
                Some(byte) if byte < 0x20 => return Err(self.fail("control character in string")),
                Some(_) => self.at += 1,
                None => return Err(self.fail("unterminated string")),
            }
        }
        self.at += 1;
        let quoted = self
            .text
            .get(start..self.at)
            .ok_or_else(|| self.fail("unterminated string"))?;
        let inner = &quoted[1..quoted.len() - 1];
        let decoded = match plain {
            true => Ok(inner.to_owned()),
            false => serde_json::from_str::<String>(quoted),
        };
        match decoded {
            Ok(key) => {
                let mut canonical = String::with_capacity(quoted.len());
                write_string(&mut canonical, &key);
                Ok(Text {
                    key,
                    quoted: canonical,
                })
            }
            Err(_) if inner.contains("\\ud") || inner.contains("\\uD") => Ok(Text {
                key: inner.to_owned(),
                quoted: quoted.to_owned(),
            }),
            Err(_) => Err(self.fail("malformed string")),
        }
    }

    fn literal(&mut self, out: &mut String, word: &'static str) -> Result<(), Malformed> {
        if !self.bytes[self.at..].starts_with(word.as_bytes()) {
            return Err(self.fail("unexpected word"));
        }
        self.at += word.len();
        out.push_str(word);
        Ok(())
    }

    /// Copies a number as written, after checking it is one:
    /// `-? (0 | [1-9][0-9]*) (.[0-9]+)? ([eE][+-]?[0-9]+)?`.
    fn number(&mut self, out: &mut String) -> Result<(), Malformed> {
        let start = self.at;
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        match self.peek() {
            Some(b'0') => self.at += 1,
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err(self.fail("malformed number")),
        }
        if self.peek() == Some(b'.') {
            self.at += 1;
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.fail("malformed number"));
            }
            self.digits();
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.at += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.at += 1;
            }
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.fail("malformed number"));
            }
            self.digits();
        }
        out.push_str(&self.text[start..self.at]);
        Ok(())
    }

    fn digits(&mut self) {
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.at += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_sorted_whitespace_dropped_and_numbers_kept() {
        let text = r#" { "b" : [1.0, 1e3, -0, 2E+5] , "a": {"z": null, "y": true, "x": false},
            "é": "x", "Z": {} } "#;
        assert_eq!(
            canonical(text).unwrap(),
            r#"{"Z":{},"a":{"x":false,"y":true,"z":null},"b":[1.0,1e3,-0,2E+5],"é":"x"}"#
        );
    }

    #[test]
    fn strings_have_one_spelling() {
        let text = r#"["\u00e9\/\"\\\n\u0001\u007f", "\ud83d\ude00", "\ud800"]"#;
        assert_eq!(
            canonical(text).unwrap(),
            "[\"é/\\\"\\\\\\n\\u0001\u{7f}\",\"😀\",\"\\ud800\"]"
        );
        assert_eq!(canonical(r#""é""#), canonical(r#""\u00E9""#));
    }

    #[test]
    fn a_key_written_twice_keeps_its_last_value() {
        assert_eq!(
            canonical(r#"{"a": 1, "b": 2, "a": 3}"#).unwrap(),
            r#"{"a":3,"b":2}"#
        );
    }

    #[test]
    fn the_same_value_in_any_order_has_the_same_text() {
        let one = r#"{"type":"object","properties":{"a":{"type":"string"},"b":{"enum":[1,2]}}}"#;
        let two = "{\n  \"properties\": {\"b\": {\"enum\": [1, 2]},\n \"a\": {\"type\": \"string\"}},\n  \"type\": \"object\"}";
        assert_eq!(canonical(one).unwrap(), canonical(two).unwrap());
    }

    #[test]
    fn malformed_and_too_deep_texts_fail_without_recursing_further() {
        for bad in [
            "",
            "{",
            "[1,]",
            "{\"a\" 1}",
            "01",
            "1.",
            "-",
            "tru",
            "\"\u{1}\"",
            "[] x",
            r#""\q""#,
        ] {
            assert!(canonical(bad).is_err(), "{bad:?}");
        }
        // Whatever serde_json reads, this reads.
        let nested = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        let deepest = (1..=MAX_DEPTH + 1)
            .take_while(|&n| serde_json::from_str::<serde_json::Value>(&nested(n)).is_ok())
            .last()
            .unwrap();
        assert!(canonical(&nested(deepest)).is_ok());
        let deep_object = format!("{}1{}", "{\"a\":".repeat(deepest), "}".repeat(deepest));
        assert!(canonical(&deep_object).is_ok());
        let deeper = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert_eq!(canonical(&deeper).unwrap_err().what, "nested too deeply");
    }

    #[test]
    fn pretty_indents_canonical_text_as_serde_json_does() {
        let text = canonical(r#"{"b":[1,{"c":"x,y:{"}],"a":{},"e":[],"d":"q\"}"}"#).unwrap();
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        let expected = serde_json::to_string_pretty(&value).unwrap();
        assert_eq!(pretty(&text), expected);
        assert_eq!(canonical(&pretty(&text)).unwrap(), text);
    }

    #[test]
    fn members_of_a_canonical_object() {
        let text = canonical(r#"{"b": [1], "a": "x"}"#).unwrap();
        assert_eq!(
            members(&text).unwrap(),
            [("a".into(), "\"x\"".into()), ("b".into(), "[1]".into())]
        );
        assert!(members("[1]").is_err());
    }
}
