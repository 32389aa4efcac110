//! Tests for the stdio transport, against real child processes (`cat`, `sh`, `python3`).
#![cfg(unix)]

use umcp_test_support::python;

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crossbeam_channel::Receiver;
use serde_json::{json, Value};
use umcp::jsonrpc::{Message, Notification};
use umcp::transport::{Connect, Inbound, Inbox, Transport};
use umcp::{Closed, StdioConfig};

mod shutdown;
mod spawn;
mod streams;

/// Tests run one at a time: they count threads and child processes of this process, and one
/// of them changes the environment.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// Generous bound for anything that should happen "at once": proves it does not hang.
const SOON: Duration = Duration::from_secs(10);

fn sh(script: &str) -> StdioConfig {
    StdioConfig::new("sh").args(["-c", script])
}

fn python(script: &str) -> StdioConfig {
    StdioConfig::new(python::system_python()).args(["-c", script])
}

fn connect(config: &StdioConfig) -> (Box<dyn Transport>, Receiver<Inbound>) {
    // `RUST_LOG=umcp=trace` shows the transport's lifecycle and wire lines for a failing test.
    let _ = env_logger::builder().is_test(true).try_init();
    let (inbox, rx) = Inbox::new();
    let transport = config.connect(inbox).expect("server starts");
    (transport, rx)
}

fn next(rx: &Receiver<Inbound>, within: Duration) -> Inbound {
    rx.recv_timeout(within).expect("something arrives in time")
}

fn next_message(rx: &Receiver<Inbound>) -> Message {
    match next(rx, SOON) {
        Inbound::Message(m) => m,
        other => panic!("expected a message, got {other:?}"),
    }
}

fn next_closed(rx: &Receiver<Inbound>, within: Duration) -> Arc<Closed> {
    loop {
        match next(rx, within) {
            Inbound::Closed(closed) => return closed,
            Inbound::Message(_) | Inbound::Batch(..) => continue,
            other => panic!("expected the end, got {other:?}"),
        }
    }
}

fn params_of(message: Message, method: &str) -> Value {
    match message {
        Message::Notification(n) if n.method == method => n.params.unwrap_or(Value::Null),
        other => panic!("expected notification {method}, got {other:?}"),
    }
}

fn notification(method: &str) -> Message {
    Message::from(Notification::new(method, Some(json!({"n": 1}))))
}

fn deadline() -> Instant {
    Instant::now() + SOON
}
