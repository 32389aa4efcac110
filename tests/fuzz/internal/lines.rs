//! The stdio line reader: the same lines whatever the read chunking, none longer than the
//! limit, as a plain split of the whole input gives them.

use super::{Line, LineReader, HEAD};

use crate::fuzz_engine::{chunked_reader, Rng, Target};

const DICTIONARY: &[&[u8]] = &[
    b"\n",
    b"\r\n",
    b"\n\n",
    b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n",
    b"\xff\xfe",
];

#[test]
fn lines_are_the_same_whatever_the_read_chunking() {
    Target {
        name: "lines",
        dictionary: DICTIONARY,
        default_cases: 3000,
    }
    .run(check);
}

/// A line as compared: oversized or not, and its bytes.
type Owned = (bool, Vec<u8>);

fn check(input: &[u8], rng: &mut Rng) {
    let limit = if rng.one_in(2) {
        rng.small(input.len() + 8)
    } else {
        input.len() + 1
    };
    let expected = reference(input, limit);
    for _ in 0..2 {
        let mut reader = LineReader::new(chunked_reader(input, rng), limit);
        let mut got: Vec<Owned> = Vec::new();
        while let Some(line) = reader.next_line().expect("no read error") {
            let owned = match line {
                Line::Complete(bytes) => (false, bytes.to_vec()),
                Line::Oversized(head) => (true, head.to_vec()),
            };
            assert!(
                owned.1.len() <= limit,
                "a line of {} bytes passed the limit {limit}",
                owned.1.len()
            );
            got.push(owned);
        }
        assert_eq!(got, expected, "limit {limit}");
        assert!(
            reader.next_line().expect("no read error").is_none(),
            "lines after the end"
        );
    }
}

/// The whole input split at `\n`; an unterminated last line counts, an oversized one is
/// cut to its head: the limit, or [`HEAD`] bytes if that is less.
fn reference(input: &[u8], limit: usize) -> Vec<Owned> {
    let mut parts: Vec<&[u8]> = input.split(|&b| b == b'\n').collect();
    if parts.last().is_some_and(|last| last.is_empty()) {
        parts.pop();
    }
    parts
        .into_iter()
        .map(|line| {
            if line.len() > limit {
                (true, line[..limit.min(HEAD)].to_vec())
            } else {
                (false, line.to_vec())
            }
        })
        .collect()
}
