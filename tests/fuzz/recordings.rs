//! Recordings (`ReplayTransport`), a file anyone may hand over: one that does not read is an
//! error naming a line it has; one that reads is played to a real client, which lists, calls,
//! reads and closes within its deadlines whatever the recording says, and never panics.

use std::time::{Duration, Instant};

use serde_json::json;
use umcp::testing::ReplayTransport;
use umcp::{Client, Error, Options};

use super::engine::{Rng, Target};

const DICTIONARY: &[&[u8]] = &[
    b"{\"recording\":\"umcp\",\"version\":1,\"session\":2,\"server\":\"x\"}\n",
    b"{\"ms\":1.0,\"from\":\"server\",\"closed\":\"server exited\"}\n",
    b"{\"ms\":1.0,\"from\":\"client\",\"closed\":\"closed by client\"}\n",
    b"{\"ms\":1.0,\"from\":\"transport\",\"not_sent\":{\"status\":500,\"body\":\"no\"}}\n",
    b"{\"ms\":1.0,\"from\":\"transport\",\"note\":\"gap\"}\n",
    b"{\"ms\":1.0,\"from\":\"server\",\"text\":\"not json\"}\n",
    b"\"from\":\"client\"",
    b"\"from\":\"server\"",
    b"\"message\":",
    b"\"method\":\"notifications/progress\"",
    b"\"method\":\"notifications/cancelled\"",
    b"\"method\":\"elicitation/create\"",
    b"\"progressToken\":",
    b"\"requestId\":",
    b"\"id\":",
    b"\"id\":null",
    b"\"id\":{}",
    b"\"result\":null",
    b"\"error\":{\"code\":-32010,\"message\":\"x\"}",
    b"<redacted>",
    b"\"ms\":-1",
    b"\"ms\":1e308",
    b"[",
    b"]",
    b"{",
    b"}",
    b"\n",
];

/// How long the client waits for any one answer; a recording that answers nothing makes
/// each call wait this long.
const TIMEOUT: Duration = Duration::from_millis(50);

#[test]
fn recordings_read_or_name_their_line_and_play_to_a_client_within_its_deadlines() {
    Target {
        name: "recordings",
        dictionary: DICTIONARY,
        default_cases: 600,
    }
    .run(check);
}

fn check(input: &[u8], _rng: &mut Rng) {
    let text = String::from_utf8_lossy(input);
    let replay = match ReplayTransport::parse("r.jsonl", &text) {
        Ok(replay) => replay,
        Err(Error::Config(message)) => {
            let lines = text.lines().count();
            if let Some(n) = line_of(&message) {
                assert!((1..=lines).contains(&n), "line {n} of {lines}: {message}");
            }
            return;
        }
        Err(other) => panic!("not a configuration error: {other:?}"),
    };
    let started = Instant::now();
    let options = Options::default()
        .with_request_timeout(TIMEOUT)
        .with_startup_timeout(TIMEOUT * 4)
        .with_probe_timeout(TIMEOUT);
    if let Ok(client) = Client::connect_with_options(replay, options) {
        let _ = client.list_tools(None);
        let _ = client.call_tool("add", json!({"a": 2, "b": 3}));
        let _ = client.read_resource("demo://readme");
        let _ = client.list_prompts(None);
        client.close();
    }
    let took = started.elapsed();
    assert!(took < Duration::from_secs(20), "the replay took {took:?}");
}

/// The line number an error names (`r.jsonl, line N: …`).
fn line_of(message: &str) -> Option<usize> {
    let (_, after) = message.split_once(", line ")?;
    after.split(':').next()?.parse().ok()
}
