//! Memory held for an oversized stdio line, measured in a process of its own so that no other
//! test has raised the peak before.
#![cfg(target_os = "linux")]

use umcp_test_support::python;

use std::time::Duration;

use serde_json::json;
use umcp::jsonrpc::{Message, RequestId};
use umcp::transport::{Connect, Inbound, Inbox};
use umcp::{Error, StdioConfig};

/// The peak resident set size of this process so far, in kB.
fn peak_rss_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let line = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .expect("VmHWM in /proc/self/status");
    line.split_whitespace()
        .nth(1)
        .and_then(|kb| kb.parse().ok())
        .expect("VmHWM in kB")
}

#[test]
fn a_line_far_past_the_limit_is_skipped_in_bounded_memory() {
    const LIMIT: usize = 1 << 20;
    // One 64 MiB response, written in pieces so that the server itself stays small, then a
    // message that fits.
    let script = r#"
import sys
out = sys.stdout.buffer
out.write(b'{"jsonrpc":"2.0","id":3,"result":{"text":"')
piece = b"a" * (1 << 20)
for _ in range(64):
    out.write(piece)
out.write(b'"}}\n')
out.write(b'{"jsonrpc":"2.0","method":"after","params":{"fits":true}}\n')
out.flush()
sys.stdin.read()
"#;
    let config = StdioConfig::new(python::system_python())
        .args(["-c", script])
        .max_message_size(LIMIT);
    let before = peak_rss_kb();
    let (inbox, rx) = Inbox::new();
    let transport = config.connect(inbox).expect("server starts");
    let within = Duration::from_secs(60);
    match rx
        .recv_timeout(within)
        .expect("the oversized line is reported")
    {
        Inbound::Failed(id, Error::MessageTooLarge { limit }) => {
            assert_eq!(id, RequestId::from(3));
            assert_eq!(limit, LIMIT);
        }
        other => panic!("expected the request to fail, got {other:?}"),
    }
    match rx.recv_timeout(within).expect("the next message arrives") {
        Inbound::Message(Message::Notification(n)) => {
            assert_eq!(n.method, "after");
            assert_eq!(n.params, Some(json!({"fits": true})));
        }
        other => panic!("expected the next message, got {other:?}"),
    }
    let grown = peak_rss_kb().saturating_sub(before);
    transport.close();
    // The limit (1 MiB), one read buffer and the head kept for the error: far below the line's
    // 64 MiB, with room for allocator and thread-stack noise.
    assert!(grown < 24 << 10, "peak memory grew by {grown} kB");
}
