//! The frames a session reads from its callers (one JSON object a line over its socket):
//! whatever arrives, in whatever pieces, the reader hands on exactly the messages its whole
//! lines hold, in order, and ends with the error the first bad line (or the end of the
//! stream) calls for; it never panics and never holds more than one message's bytes.

use std::io::{ErrorKind, Write};
use std::os::unix::net::UnixStream;

use umcp_test_support::fuzz::{chunk_sizes, Rng, Target};

use super::{Reader, Request, MAX_MESSAGE};

const DICTIONARY: &[&[u8]] = &[
    b"\n",
    b"{\"run\":{\"args\":[],\"stdin\":false,\"stderr\":false}}\n",
    b"{\"status\":{}}\n",
    b"{\"stop\":{}}\n",
    b"{\"line\":{\"text\":\"x\"}}\n",
    b"{\"line\":{\"text\":null}}\n",
    b"{\"cancel\":{\"signal\":255}}\n",
    b"{\"cancel\":{\"signal\":256}}\n",
    b"{\"closed\":{}}\n",
    b"\"run\"",
    b"\"args\":",
    b"\\u0000",
    b"\\ud800",
    b"\r\n",
    b"\xff",
];

#[test]
fn session_frames_are_read_whole_and_in_order_whatever_their_pieces() {
    Target {
        name: "session-frames",
        dictionary: DICTIONARY,
        default_cases: 1500,
    }
    .run(check);
}

/// What reading `input` should give: the messages of its whole lines, in order, and then the
/// kind of error that ends it.
fn expected(input: &[u8]) -> (Vec<String>, ErrorKind) {
    let mut messages = Vec::new();
    let mut rest = input;
    while let Some(at) = rest.iter().position(|b| *b == b'\n') {
        match serde_json::from_slice::<Request>(&rest[..at]) {
            Ok(message) => messages.push(format!("{message:?}")),
            Err(_) => return (messages, ErrorKind::InvalidData),
        }
        rest = &rest[at + 1..];
    }
    match rest.len() > MAX_MESSAGE {
        true => (messages, ErrorKind::InvalidData),
        false => (messages, ErrorKind::UnexpectedEof),
    }
}

fn check(input: &[u8], rng: &mut Rng) {
    let (ours, theirs) = UnixStream::pair().expect("a socket pair");
    let sizes = chunk_sizes(input.len(), rng);
    let data = input.to_vec();
    let writer = std::thread::spawn(move || {
        let mut theirs = theirs;
        let mut at = 0;
        for size in sizes {
            if theirs.write_all(&data[at..at + size]).is_err() {
                return;
            }
            at += size;
        }
    });
    let mut reader = Reader::new(ours).expect("a reader");
    let mut messages = Vec::new();
    let ended = loop {
        match reader.next::<Request>() {
            Ok(Some(message)) => messages.push(format!("{message:?}")),
            // A read that waited its tick for more: the writer is slow, not done.
            Ok(None) => continue,
            Err(e) => break e.kind(),
        }
    };
    drop(reader);
    writer.join().expect("the writer");
    assert_eq!((messages, ended), expected(input));
}
