//! Tools that must run as tasks (2025-11-25, `execution.taskSupport: "required"`): the call is
//! sent task-augmented, and its result is fetched with `tasks/result`, which the server
//! answers once the task has ended, so a caller of `call_tool` sees an ordinary result.
//!
//! The spec lets a client poll `tasks/get` instead; a blocking client has nothing else to do
//! meanwhile, so it waits on `tasks/result` under the caller's own deadline, progress and
//! cancel handle. A call that gives up (timeout, cancel) asks the server to cancel the task
//! when it offers `tasks/cancel`. Tools whose support is `optional` run as ordinary calls.

use std::collections::HashSet;
use std::time::Instant;

use serde::Deserialize;
use serde_json::{json, Value};

use crate::error::{Error, Result};
use crate::sync::lock;
use crate::types::CallToolResult;

use super::engine::request_options::RequestOptions;
use super::era::task::CANCEL_TIMEOUT;
use super::handle::Client;

/// A tool call of the handshake era made as a task when the tool's listing requires one: the
/// result, or the params handed back when the tool runs as an ordinary call. Installed by
/// [`Options::with_tasks`](crate::Options::with_tasks) ([`call_as_task`]); `call_tool` reaches
/// it only through this pointer.
pub(crate) type TaskCall = fn(
    &Client,
    &str,
    Value,
    &RequestOptions,
    Instant,
) -> std::result::Result<Result<CallToolResult>, Value>;

/// Calls `tool` as a task when it must run as one (see [`Client::needs_task`]).
pub(crate) fn call_as_task(
    client: &Client,
    tool: &str,
    params: Value,
    options: &RequestOptions,
    started: Instant,
) -> std::result::Result<Result<CallToolResult>, Value> {
    if !client.needs_task(tool, options, started) {
        return Err(params);
    }
    Ok(client.call_tool_legacy_task(params, options, started))
}

/// The most tool names remembered as needing a task, per connection.
const MAX_TASK_TOOLS: usize = 10_000;

/// The tools of a connection that must run as tasks, as far as its listings told.
#[derive(Debug, Default)]
pub(crate) struct TaskTools {
    /// Whether the tools were listed on this connection at all (or that was tried).
    listed: bool,
    names: HashSet<String>,
}

/// What a task-augmented request answers at once.
#[derive(Deserialize)]
struct CreateTaskResult {
    task: TaskHead,
}

#[derive(Deserialize)]
struct TaskHead {
    #[serde(rename = "taskId")]
    task_id: String,
}

impl Client {
    /// Remembers which of `tools` (a listing's names and `execution`) must run as tasks.
    pub(crate) fn note_listed<'a>(
        &self,
        tools: impl Iterator<Item = (&'a str, Option<&'a Value>)>,
    ) {
        let mut known = lock(&self.task_tools);
        known.listed = true;
        for (name, execution) in tools {
            let support = execution.and_then(|e| e.get("taskSupport"));
            if support.and_then(Value::as_str) != Some("required") {
                known.names.remove(name);
            } else if known.names.len() < MAX_TASK_TOOLS {
                known.names.insert(name.to_owned());
            }
        }
    }

    /// Whether `tool` must be called as a task (handshake era): its listing says so and the server
    /// offers task tool calls. Tools never listed here are listed once, within the call's time, so
    /// a caller need not list first.
    pub(crate) fn needs_task(
        &self,
        tool: &str,
        options: &RequestOptions,
        started: Instant,
    ) -> bool {
        // On every call: the cheap tests first, and no allocation on the way.
        let (listed, needed) = {
            let known = lock(&self.task_tools);
            (known.listed, known.names.contains(tool))
        };
        if listed && !needed {
            return false;
        }
        if self.session.era.is_modern() || !self.session.offers("tasks.requests.tools.call") {
            return false;
        }
        if !listed {
            if let Err(err) = self.list_task_support_within("tools/call", options, started) {
                log::debug!("listing the tools to see which need a task failed: {err}");
                // Once per connection: a listing that fails is not sent again with every
                // call. One this call ran out of time for, or cancelled, may be tried again.
                if !matches!(err, Error::Timeout { .. } | Error::Cancelled { .. }) {
                    lock(&self.task_tools).listed = true;
                }
                return false;
            }
        }
        lock(&self.task_tools).names.contains(tool)
    }

    /// Calls a tool as a task and waits for its result, both within the time the call has
    /// left since it `started`.
    pub(crate) fn call_tool_legacy_task(
        &self,
        mut params: Value,
        options: &RequestOptions,
        started: Instant,
    ) -> Result<CallToolResult> {
        let timeout = self.session.conn.request_timeout();
        let left = || options.left_since("tools/call", started, timeout);
        params["task"] = json!({});
        let created: Value = self.request_as("tools/call", Some(params), &left()?)?;
        let task_id = match crate::jsonrpc::decode_value::<CreateTaskResult>(&created) {
            Ok(created) => created.task.task_id,
            // A server that ran it at once anyway: its answer is the result.
            Err(_) => {
                return crate::jsonrpc::decode_value(&created).map_err(|e| {
                    Error::Protocol(format!(
                        "invalid result of a task-augmented tools/call: {e}"
                    ))
                })
            }
        };
        log::debug!("tool call runs as task {task_id}");
        let asked = json!({ "taskId": task_id });
        let result = left().and_then(|options| {
            self.request_as::<CallToolResult>("tasks/result", Some(asked.clone()), &options)
        });
        if let Err(Error::Timeout { .. } | Error::Cancelled { .. }) = &result {
            self.cancel_task(asked);
        }
        // The caller made a `tools/call`; that the wait was a `tasks/result` is ours.
        let named = format!("tools/call (task {task_id})");
        result.map_err(|error| match error {
            Error::Timeout {
                elapsed,
                kind,
                stderr_tail,
                ..
            } => Error::Timeout {
                method: named,
                elapsed,
                kind,
                stderr_tail,
            },
            Error::Cancelled { .. } => Error::Cancelled { method: named },
            other => other,
        })
    }

    /// Asks the server to cancel a task nobody waits for any more, if it offers that.
    fn cancel_task(&self, task: Value) {
        if !self.session.offers("tasks.cancel") {
            return;
        }
        let quick = RequestOptions::default().with_timeout(CANCEL_TIMEOUT);
        if let Err(err) = self.request_as::<Value>("tasks/cancel", Some(task), &quick) {
            log::debug!("cancelling an abandoned task failed: {err}");
        }
    }
}
