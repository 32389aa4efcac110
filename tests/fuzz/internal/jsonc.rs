//! The JSONC reader: it only ever turns bytes into spaces, never a line break (so a JSON error
//! names the line and column of the file as written); plain JSON comes back as it was; and any
//! JSON value written with comments and trailing commas between its tokens reads back as
//! that value.

use serde_json::Value;

use super::strip;

use crate::fuzz_engine::{Rng, Target};

const DICTIONARY: &[&[u8]] = &[
    b"//",
    b"/*",
    b"*/",
    b"/**/",
    b"\n",
    b"\r\n",
    b",",
    b",]",
    b",}",
    b", /* c */ ]",
    b"\"",
    b"\\\"",
    b"\\\\",
    b"\"//\"",
    b"\"/*\"",
    b"/* \" */",
    b"// \"\n",
    b"\xc3\xa9",
];

#[test]
fn jsonc_keeps_the_layout_and_reads_back_the_value() {
    Target {
        name: "jsonc",
        dictionary: DICTIONARY,
        default_cases: 2000,
    }
    .run(check);
}

#[test]
fn a_comment_or_comma_only_ever_becomes_spaces() {
    let text = "{\"a\": [1, /* é\n */ 2,], // \"x\n \"b\": \"//\",}";
    let stripped = strip(text);
    assert_eq!(stripped.len(), text.len());
    let value: Value = serde_json::from_str(&stripped).expect("plain JSON");
    assert_eq!(value, serde_json::json!({"a": [1, 2], "b": "//"}));
    assert_eq!(stripped.lines().count(), text.lines().count());
}

fn check(input: &[u8], rng: &mut Rng) {
    let text = String::from_utf8_lossy(input);
    let stripped = strip(&text);
    assert_eq!(stripped.len(), text.len(), "the length changed");
    for (i, (was, is)) in text.bytes().zip(stripped.bytes()).enumerate() {
        let kept = was == is || (is == b' ' && !matches!(was, b'\n' | b'\r'));
        assert!(kept, "byte {i} {was:#04x} became {is:#04x}");
    }
    if serde_json::from_str::<Value>(&text).is_ok() {
        assert_eq!(stripped, text, "plain JSON changed");
    }
    // A value, written with comments and trailing commas, reads back as itself.
    if let Ok(value) = serde_json::from_str::<Value>(&stripped) {
        let mut written = String::new();
        write(&value, rng, &mut written);
        let read = serde_json::from_str::<Value>(&strip(&written));
        assert_eq!(read.ok().as_ref(), Some(&value), "{written}");
    }
}

/// Writes `value` as JSONC: comments, white space and trailing commas between its tokens.
fn write(value: &Value, rng: &mut Rng, out: &mut String) {
    gap(rng, out);
    match value {
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write(item, rng, out);
            }
            close(!items.is_empty(), ']', rng, out);
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                gap(rng, out);
                out.push_str(&Value::from(key.as_str()).to_string());
                gap(rng, out);
                out.push(':');
                write(item, rng, out);
            }
            close(!map.is_empty(), '}', rng, out);
        }
        other => out.push_str(&other.to_string()),
    }
    gap(rng, out);
}

/// Closes an array or object, sometimes after a trailing comma.
fn close(any: bool, bracket: char, rng: &mut Rng, out: &mut String) {
    if any && rng.one_in(3) {
        out.push(',');
        gap(rng, out);
    }
    out.push(bracket);
}

/// Nothing, white space, or a comment holding what looks like JSON and comments.
fn gap(rng: &mut Rng, out: &mut String) {
    const GAPS: &[&str] = &[
        " ",
        "\n",
        "\r\n\t",
        "// a \"quote\" and /* a block */\n",
        "// to a CR\r",
        "/* \"x\": [1, 2], // é */",
        "/*\n * lines\n */",
        "/**/",
        "/* * / */",
    ];
    if rng.one_in(2) {
        out.push_str(GAPS[rng.below(GAPS.len())]);
    }
}
