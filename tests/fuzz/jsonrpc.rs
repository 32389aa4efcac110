//! The JSON-RPC decoder: whatever it accepts encodes to one line that decodes back to the
//! same message.

use serde_json::Value;
use umcp::jsonrpc::{Message, Payload};

use super::engine::{Rng, Target};
use super::json;

const DICTIONARY: &[&[u8]] = &[
    b"\"jsonrpc\":\"2.0\",",
    b"\"id\":",
    b"\"id\":null,",
    b"\"method\":\"tools/call\",",
    b"\"params\":",
    b"\"result\":",
    b"\"error\":{\"code\":-32601,\"message\":\"x\"}",
    b"18446744073709551616",
    b"-9223372036854775809",
    b"1e400",
    b"1.0",
    b"[",
    b"]",
    b"{",
    b"}",
    b"\\u0000",
    b"\\ud800",
];

const WORDS: &[&str] = &[
    "jsonrpc",
    "2.0",
    "id",
    "method",
    "params",
    "result",
    "error",
    "code",
    "message",
    "data",
    "tools/call",
    "ping",
    "_meta",
    "progressToken",
];

#[test]
fn jsonrpc_messages_round_trip() {
    Target {
        name: "jsonrpc",
        dictionary: DICTIONARY,
        default_cases: 3000,
    }
    .run(check);
}

fn check(input: &[u8], rng: &mut Rng) {
    // The corpus holds captured lines: decode a few of them (all takes too long for
    // big captures), and a structural mutant of some.
    let lines: Vec<&[u8]> = input.split(|&b| b == b'\n').collect();
    for _ in 0..lines.len().min(3) {
        let line = rng.pick(&lines);
        let text = String::from_utf8_lossy(line);
        decode_and_round_trip(&text);
        if rng.one_in(2) {
            if let Ok(mut value) = serde_json::from_str::<Value>(&text) {
                json::mutate(&mut value, WORDS, rng);
                decode_and_round_trip(&value.to_string());
            }
        }
    }
}

fn decode_and_round_trip(text: &str) {
    let messages = match Payload::decode(text) {
        Ok(Payload::Single(message)) => vec![message],
        Ok(Payload::Batch(messages, invalid, dropped)) => {
            let total = serde_json::from_str::<Value>(text)
                .ok()
                .and_then(|v| v.as_array().map(Vec::len));
            let counted = messages.len() + invalid.len() + dropped;
            assert_eq!(Some(counted), total, "batch count");
            messages
        }
        Err(_) => return,
    };
    for message in messages {
        round_trip(&message);
    }
}

fn round_trip(message: &Message) {
    let line = message.encode();
    assert!(
        !line.contains('\n'),
        "an encoded message spans lines: {line}"
    );
    assert_eq!(
        serde_json::from_str::<Value>(&line).ok(),
        Some(message.to_value()),
        "encode and to_value disagree"
    );
    match Payload::decode(&line) {
        Ok(Payload::Single(again)) => assert_eq!(&again, message, "round trip of {line}"),
        other => panic!("{line} decodes to {other:?}"),
    }
    assert_eq!(
        Message::from_value(message.to_value()).ok().as_ref(),
        Some(message)
    );
}
