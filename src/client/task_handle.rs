//! Tasks on request (the tasks extension, `io.modelcontextprotocol/tasks`): a tool call that
//! asks for a task, and the handle the application keeps to wait on it, poll it or cancel it.
//!
//! Asking for a task is declaring the extension on that request: the server still decides,
//! and may answer at once. A task is followed with `tasks/get` at the server's
//! `pollIntervalMs`, answered with `tasks/update` when it needs input, and cancelled with
//! `tasks/cancel` alone (the extension reserves `notifications/cancelled` for requests).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

use crate::error::Result;
use crate::types::CallToolResult;

use super::engine::request_options::{RequestOptions, TaskMode};
use super::era::session::Session;
use super::era::task::Tracked;
use super::handle::Client;
use super::methods::named;
use super::with_options::WithOptions;

impl RequestOptions {
    /// Asks for a task: the request declares the tasks extension
    /// (`io.modelcontextprotocol/tasks`) in its client capabilities, so the server may run
    /// it as a task. `client.with(&options).call_tool(…)` then follows a task to its end and
    /// returns its result under these options (the timeout covers the whole task; each poll
    /// is reported to the progress callback), on a client with task support
    /// ([`Options::with_tasks`](crate::Options::with_tasks); without it the call fails with
    /// [`Error::Unsupported`](crate::Error::Unsupported) before anything is sent);
    /// `client.with(&options).call_tool_as_task(…)` hands back a [`TaskHandle`] instead (see
    /// [`Client::call_tool_as_task`]), with or without it.
    ///
    /// Only `tools/call` can become a task; on other requests this does nothing. In the
    /// handshake era the declaration goes into the request's `_meta` the same way.
    ///
    /// See the example on [`Client::call_tool_as_task`].
    pub fn with_task(mut self) -> RequestOptions {
        if self.task == TaskMode::Off {
            self.task = TaskMode::Follow;
        }
        self
    }
}

/// What a tool call that asked for a task came back with.
///
/// See the example on [`Client::call_tool_as_task`].
#[derive(Debug)]
#[non_exhaustive]
pub enum ToolCall {
    /// The server answered at once.
    Done(CallToolResult),
    /// The server runs the call as a task.
    Task(TaskHandle),
}

/// A task's status as last seen.
///
/// See the example on [`Client::call_tool_as_task`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TaskStatus {
    /// Not polled yet (a task known only by its id).
    Unknown,
    /// The server is working on it.
    Working,
    /// It waits for input, which the client's handlers give at the next poll.
    InputRequired,
    /// It ended with a result.
    Completed,
    /// It ended with a JSON-RPC error.
    Failed,
    /// It was cancelled.
    Cancelled,
    /// A status this client does not know.
    Other(String),
}

impl TaskStatus {
    fn of(status: &str) -> TaskStatus {
        match status {
            "" => TaskStatus::Unknown,
            "working" => TaskStatus::Working,
            "input_required" => TaskStatus::InputRequired,
            "completed" => TaskStatus::Completed,
            "failed" => TaskStatus::Failed,
            "cancelled" => TaskStatus::Cancelled,
            other => TaskStatus::Other(other.to_owned()),
        }
    }

    /// Whether the task has ended (completed, failed or cancelled).
    ///
    /// See the example on [`Client::call_tool_as_task`].
    pub fn is_terminal(&self) -> bool {
        matches!(
            self,
            TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled
        )
    }
}

/// A task the server runs for a tool call: wait for its result, poll it, or cancel it. The
/// id may be kept (for instance across a restart) and the task found again with
/// [`Client::task`].
///
/// See the example on [`Client::call_tool_as_task`].
pub struct TaskHandle {
    session: Arc<Session>,
    /// Boxed: a handle travels in [`ToolCall`] beside a whole result.
    tracked: Box<Tracked>,
    status: TaskStatus,
}

impl Client {
    /// Calls a tool asking for a task (as [`RequestOptions::with_task`] does), and hands
    /// back what the server chose: the result at once, or a handle on the task. A
    /// handshake-era server that offers its era's own task-augmented tool calls
    /// (2025-11-25, `tasks.requests.tools.call`) gets `task` in the call instead, and the
    /// handle's [`TaskHandle::wait`] takes the result from `tasks/result` once the task ends.
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// use serde_json::json;
    /// use umcp::{RequestOptions, ToolCall};
    ///
    /// # fn main() -> umcp::Result<()> {
    /// # let client = umcp::Client::connect(umcp::StdioConfig::new("server"))?;
    /// match client.call_tool_as_task("render", json!({ "scene": 1 }))? {
    ///     ToolCall::Done(result) => log::info!("{}", result.text()),
    ///     ToolCall::Task(mut task) => {
    ///         let status = task.poll()?.clone();
    ///         log::info!("task {} is {status:?}", task.id());
    ///         let patience = RequestOptions::default()
    ///             .with_timeout(Duration::from_secs(600))
    ///             .with_progress(|p| log::info!("{}", p.message.as_deref().unwrap_or("")));
    ///         let result = task.wait(&patience)?; // cancels the task if it gives up
    ///         log::info!("{}", result.text());
    ///     }
    ///     _ => {}
    /// }
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Client::call_tool`]; a task answering a request that did not declare the
    /// extension is [`Error::Protocol`](crate::Error::Protocol).
    pub fn call_tool_as_task(&self, name: &str, arguments: Value) -> Result<ToolCall> {
        self.with(&RequestOptions::default())
            .call_tool_as_task(name, arguments)
    }
}

impl WithOptions<'_> {
    /// [`Client::call_tool_as_task`] with these options (a timeout for the call that starts
    /// the task, progress, a cancel handle).
    ///
    /// See the example on [`WithOptions`].
    ///
    /// # Errors
    ///
    /// As [`Client::call_tool_as_task`].
    pub fn call_tool_as_task(&self, name: &str, arguments: Value) -> Result<ToolCall> {
        self.client.require("tools/call", "tools")?;
        let session = &self.client.session;
        if !session.era.is_modern() && session.offers("tasks.requests.tools.call") {
            return self.call_as_native_task(name, arguments);
        }
        let mut options = self.options.clone();
        options.task = TaskMode::Handle;
        let params = named("tool", name, arguments)?;
        let raw = self
            .client
            .with(&options)
            .request_raw("tools/call", Some(params))?;
        let task = raw.get("resultType").and_then(Value::as_str) == Some("task");
        self.task_or_result(task.then_some(&raw), &raw)
    }

    /// The call's task, where the server created one (`task`, its answer), else its result.
    fn task_or_result(&self, task: Option<&Value>, raw: &Value) -> Result<ToolCall> {
        if let Some(task) = task {
            let tracked = Tracked::created(&super::engine::pending::Answer::from_value(task))?;
            let status = TaskStatus::of(tracked.status());
            return Ok(ToolCall::Task(TaskHandle {
                session: Arc::clone(&self.client.session),
                tracked: Box::new(tracked),
                status,
            }));
        }
        let result = CallToolResult::deserialize(raw)
            .map_err(|e| crate::Error::Protocol(format!("malformed `tools/call` result: {e}")))?;
        Ok(ToolCall::Done(result))
    }

    /// [`WithOptions::call_tool_as_task`] to a handshake-era server that offers its era's own
    /// task-augmented tool calls (2025-11-25): the call carries `task`, and the server's
    /// `CreateTaskResult` names the task, whose result `tasks/result` gives once it ends.
    fn call_as_native_task(&self, name: &str, arguments: Value) -> Result<ToolCall> {
        let mut params = named("tool", name, arguments)?;
        params["task"] = serde_json::json!({});
        let raw = self
            .client
            .with(self.options)
            .request_raw("tools/call", Some(params))?;
        // A server that ran it at once anyway: its answer is the result.
        let task = raw.get("task").filter(|t| t.get("taskId").is_some());
        self.task_or_result(task, &raw)
    }
}

impl Client {
    /// The task `task_id` of this server, known from an earlier
    /// [`Client::call_tool_as_task`]; its status is [`TaskStatus::Unknown`] until polled.
    ///
    /// See the example on [`Client::call_tool_as_task`].
    pub fn task(&self, task_id: &str) -> TaskHandle {
        TaskHandle {
            session: Arc::clone(&self.session),
            tracked: Box::new(Tracked::known(task_id)),
            status: TaskStatus::Unknown,
        }
    }
}

impl TaskHandle {
    /// The task's id.
    ///
    /// See the example on [`Client::call_tool_as_task`].
    pub fn id(&self) -> &str {
        self.tracked.id()
    }

    /// The status last seen.
    ///
    /// See the example on [`Client::call_tool_as_task`].
    pub fn status(&self) -> &TaskStatus {
        &self.status
    }

    /// The status message last seen, if the server gave one.
    ///
    /// See the example on [`Client::call_tool_as_task`].
    pub fn status_message(&self) -> Option<&str> {
        self.tracked.status_message()
    }

    /// How long the server asks the client to wait between polls.
    ///
    /// See the example on [`Client::call_tool_as_task`].
    pub fn poll_interval(&self) -> Duration {
        self.tracked.poll_interval()
    }

    /// Asks the server for the task's status now (`tasks/get`), under the client's request
    /// timeout. A task waiting for input gets it from the client's handlers
    /// (`tasks/update`).
    ///
    /// See the example on [`Client::call_tool_as_task`].
    ///
    /// # Errors
    ///
    /// As [`Client::request`]; an unknown task id is usually [`Error::Rpc`](crate::Error::Rpc)
    /// with code -32602.
    pub fn poll(&mut self) -> Result<&TaskStatus> {
        self.tracked
            .poll(&self.session, &RequestOptions::default())?;
        self.status = TaskStatus::of(self.tracked.status());
        Ok(&self.status)
    }

    /// Waits for the task's result, polling at the server's interval; `options` bound the
    /// whole wait (timeout, maximum total time, cancel handle) and hear of every poll through
    /// their progress callback. A wait given up cancels the task with `tasks/cancel`.
    ///
    /// See the example on [`Client::call_tool_as_task`].
    ///
    /// # Errors
    ///
    /// A failed task is its [`Error::Rpc`](crate::Error::Rpc); a cancelled one
    /// [`Error::Protocol`](crate::Error::Protocol); [`Error::Timeout`](crate::Error::Timeout)
    /// or [`Error::Cancelled`](crate::Error::Cancelled) when the wait gives up.
    pub fn wait(mut self, options: &RequestOptions) -> Result<CallToolResult> {
        let answer = self.tracked.wait(&self.session, options)?;
        answer.decode("tools/call")
    }

    /// Asks the server to cancel the task (`tasks/cancel`; cancellation is cooperative, and
    /// the task may still end otherwise).
    ///
    /// See the example on [`Client::call_tool_as_task`].
    ///
    /// # Errors
    ///
    /// As [`Client::request`].
    pub fn cancel(&self) -> Result<()> {
        self.tracked.cancel(&self.session)
    }
}

impl fmt::Debug for TaskHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TaskHandle")
            .field("id", &self.id())
            .field("status", &self.status)
            .finish_non_exhaustive()
    }
}
