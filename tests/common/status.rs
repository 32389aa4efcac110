//! Waiting for a managed server's status in the manager's tests.

#![allow(dead_code)] // Each test binary uses a different part of this module.

use std::time::{Duration, Instant};

use umcp::{ServerStatus, StatusEvents};

/// How long a status may take: proves "does not hang", not speed.
pub const STATUS_BOUND: Duration = Duration::from_secs(30);

/// Waits for a status event of `server` that satisfies `accept`, failing with every event
/// seen when none does in time.
pub fn wait_for(
    events: &StatusEvents,
    server: &str,
    accept: impl Fn(&ServerStatus) -> bool,
) -> ServerStatus {
    let deadline = Instant::now() + STATUS_BOUND;
    let mut seen = Vec::new();
    while let Some(event) = events.recv_timeout(deadline.saturating_duration_since(Instant::now()))
    {
        if event.server == server && accept(&event.status) {
            return event.status;
        }
        seen.push(format!("{}: {}", event.server, event.status));
    }
    panic!("no matching status for `{server}`; saw {seen:#?}");
}
