//! Helpers shared by the interop tests over stdio and over HTTP: client options, result
//! readers, notification waits and a progress log.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use umcp::jsonrpc::{ErrorCode, ErrorObject};
use umcp::types::{
    CallToolResult, ContentBlock, GetPromptResult, Implementation, ProgressNotificationParams,
    ReadResourceResult, ResourceContents, ServerNotification,
};
use umcp::{Client, Notifications, Options, RequestOptions};

/// The protocol version both peers negotiate when offered the newest one.
pub const PROTOCOL_VERSION: &str = "2025-11-25";

/// How long a test waits for something the server sends on its own (a notification, a tool
/// registered after initialization). Generous: machines are shared.
pub const WAIT: Duration = Duration::from_secs(20);

/// The text the sampling handlers answer with.
pub const SAMPLED_TEXT: &str = "umcp sampled this reply";

pub fn options() -> Options {
    Options::default()
        .with_client_info(Implementation::new("umcp-interop-tests", "0.0.0"))
        .with_request_timeout(Duration::from_secs(60))
}

/// The concatenated text blocks of a tool result.
pub fn text_of(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text(text) => Some(text.text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

pub fn call_text(client: &Client, tool: &str, arguments: Value) -> String {
    let result = client
        .call_tool(tool, arguments)
        .unwrap_or_else(|e| panic!("tools/call {tool} failed: {e}"));
    assert_ne!(
        result.is_error,
        Some(true),
        "{tool} reported an error: {result:?}"
    );
    text_of(&result)
}

pub fn tool_names(client: &Client) -> BTreeSet<String> {
    client
        .list_all_tools()
        .expect("tools/list")
        .into_iter()
        .map(|tool| tool.name)
        .collect()
}

/// The first text contents of a resource read.
/// The tools of the Python SDK's test server (tests/peers/python_server.py).
pub fn python_tool_names() -> BTreeSet<String> {
    [
        "add",
        "add_runtime_tool",
        "confirm",
        "confirm_resolved",
        "counted_reads_so_far",
        "echo",
        "long_task",
        "region",
        "shout",
        "summarize",
        "summarize_resolved",
        "touch_counted",
    ]
    .into_iter()
    .map(String::from)
    .collect()
}

pub fn resource_text(result: &ReadResourceResult) -> (String, Option<String>) {
    match result.contents.first() {
        Some(ResourceContents::Text(text)) => (text.text.clone(), text.mime_type.clone()),
        other => panic!("expected text contents, got {other:?}"),
    }
}

/// The text of every message of a prompt, in order.
pub fn prompt_texts(result: &GetPromptResult) -> Vec<String> {
    result
        .messages
        .iter()
        .filter_map(|message| match &message.content {
            ContentBlock::Text(text) => Some(text.text.clone()),
            _ => None,
        })
        .collect()
}

/// The next notification, or `None` once `deadline` has passed.
pub fn next_notification(notes: &Notifications, deadline: Instant) -> Option<ServerNotification> {
    let left = deadline.checked_duration_since(Instant::now())?;
    notes.recv_timeout(left)
}

/// Lists the tools until `name` is among them. server-everything registers some tools only
/// after `notifications/initialized`, and announces them with `notifications/tools/list_changed`;
/// the list is fetched again after each notification, and at least every half second in case
/// the announcement came before the notifications handle existed.
pub fn wait_for_tool(client: &Client, notes: &Notifications, name: &str) {
    let deadline = Instant::now() + WAIT;
    loop {
        let names = tool_names(client);
        if names.contains(name) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "tool {name} never appeared; the server lists {names:?}"
        );
        let _ = notes.recv_timeout(Duration::from_millis(500));
    }
}

/// One progress notification: progress, total, message.
pub type Step = (f64, Option<f64>, Option<String>);

/// Collects the progress notifications of one request.
#[derive(Clone, Default)]
pub struct ProgressLog(Arc<Mutex<Vec<Step>>>);

impl ProgressLog {
    pub fn options(&self) -> RequestOptions {
        let log = self.clone();
        RequestOptions::default().with_progress(move |p: &ProgressNotificationParams| {
            if let Ok(mut entries) = log.0.lock() {
                entries.push((p.progress, p.total, p.message.clone()));
            }
        })
    }

    pub fn entries(&self) -> Vec<Step> {
        self.0.lock().expect("progress log").clone()
    }
}

/// Checks that progress went up strictly, step by step, and ended at `total`.
pub fn assert_progress(entries: &[Step], total: f64) {
    assert!(!entries.is_empty(), "no progress notification arrived");
    for pair in entries.windows(2) {
        assert!(
            pair[1].0 > pair[0].0,
            "progress went from {} to {}",
            pair[0].0,
            pair[1].0
        );
    }
    let (last, last_total, _) = &entries[entries.len() - 1];
    assert_eq!(*last, total, "progress ended at {last}: {entries:?}");
    assert_eq!(*last_total, Some(total), "{entries:?}");
}

/// Turns a failure inside a handler into the error it answers the server with, so that the
/// test sees it in the tool result rather than as a panic on a client thread.
pub fn handler_error(what: impl std::fmt::Display) -> ErrorObject {
    ErrorObject::new(ErrorCode::INTERNAL_ERROR, format!("test handler: {what}"))
}
