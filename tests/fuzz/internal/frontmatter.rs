//! The frontmatter reader of a server's `SKILL.md`: it returns on any input, on a small
//! stack; what it reads is never deeper than its depth bound; the same text with CRLF line
//! ends reads the same; and what it read, written back as frontmatter (each value as JSON,
//! which is YAML's flow style), reads back as itself.

use serde_json::{Map, Value};

use super::super::flow::MAX_DEPTH;
use super::{parse, MAX_BYTES};

use crate::fuzz_engine::{Rng, Target};

const DICTIONARY: &[&[u8]] = &[
    b"---\n",
    b"\n---\n",
    b": ",
    b":",
    b"- ",
    b"\n- ",
    b"\n  ",
    b"\n    ",
    b"[",
    b"]",
    b"{",
    b"}",
    b", ",
    b"'",
    b"''",
    b"\"",
    b"\\\"",
    b"\\u00e9",
    b"\\x",
    b"|",
    b"|-",
    b">+",
    b" #",
    b"# c\n",
    b"&a ",
    b"*a",
    b"!!str ",
    b"? ",
    b"~",
    b"0x1f",
    b"-.5e3",
    b".inf",
    b"\r\n",
    b"\t",
    b"[[[[[[[[",
    b"]]]]]]]]",
    b"- - - - ",
    b"\xc3\xa9",
];

#[test]
fn frontmatter_reads_within_bounds_and_writes_back() {
    let target = Target {
        name: "frontmatter",
        dictionary: DICTIONARY,
        default_cases: 3000,
    };
    // The reader's recursion is bounded, so a thread's small stack holds whatever it reads.
    let small = std::thread::Builder::new().stack_size(2 << 20);
    let runner = small.spawn(move || target.run(check)).expect("a thread");
    if let Err(panic) = runner.join() {
        std::panic::resume_unwind(panic);
    }
}

fn check(input: &[u8], rng: &mut Rng) {
    let text = String::from_utf8_lossy(input);
    let read = parse(&text);
    let crlf = text.replace("\r\n", "\n").replace('\n', "\r\n");
    if !text.contains('\r') {
        assert_eq!(parse(&crlf), read, "CRLF line ends read otherwise");
    }
    let Ok(map) = read else {
        return;
    };
    let value = Value::Object(map.clone());
    assert!(depth(&value) <= MAX_DEPTH, "read deeper than the bound");
    let written = write(&map, rng);
    if written.len() > MAX_BYTES {
        return;
    }
    let again = parse(&written).unwrap_or_else(|e| panic!("{written:?} does not read: {e}"));
    assert_eq!(Value::Object(again), value, "{written:?}");
}

/// The collections of `value`, one inside another, counting itself.
fn depth(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        Value::Object(map) => 1 + map.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

/// `map` as frontmatter: a `"key": value` line each, the value as JSON on one line, or a
/// nested object as a block mapping of its own.
fn write(map: &Map<String, Value>, rng: &mut Rng) -> String {
    let mut out = String::from("---\n");
    block(map, 0, rng, &mut out);
    out.push_str("---\nbody\n");
    out
}

fn block(map: &Map<String, Value>, indent: usize, rng: &mut Rng, out: &mut String) {
    for (key, value) in map {
        out.push_str(&" ".repeat(indent));
        out.push_str(&Value::from(key.as_str()).to_string());
        out.push(':');
        match value {
            Value::Object(inner) if !inner.is_empty() && rng.one_in(2) => {
                out.push('\n');
                block(inner, indent + 2, rng, out);
            }
            other => {
                out.push(' ');
                out.push_str(&other.to_string());
                out.push('\n');
            }
        }
    }
}

#[test]
fn every_frontmatter_of_the_corpus_reads() {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz/corpus/frontmatter");
    for entry in std::fs::read_dir(&dir).expect("the corpus") {
        let path = entry.expect("an entry").path();
        let text = std::fs::read_to_string(&path).expect("UTF-8");
        let read = parse(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(read.contains_key("name"), "{}", path.display());
    }
}
