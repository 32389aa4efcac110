//! The MCP methods a client calls, each gated on the capability the server advertised.
//!
//! Every method has a `_with` form taking [`RequestOptions`] (timeout, progress, cancel,
//! `_meta`); the plain form is the `_with` form with the defaults.

use serde_json::{json, Value};

use crate::error::{Error, Result, Unsupported};
use crate::types::{
    CallToolResult, CompleteRequestParams, CompleteResult, GetPromptResult, ReadResourceResult,
};

use super::era::session::Shared;
use super::{Client, RequestOptions};

mod lists;
mod logging;
mod subscriptions;
mod tasks;

pub(crate) use tasks::{TaskTools, CANCEL_TIMEOUT};

impl Client {
    /// Checks that the server is alive: `ping` in the handshake era; in the stateless era,
    /// which has no `ping`, a `server/discover` request (whose answer is dropped, and which
    /// always goes to the server, however long its last answer may be cached), so the same
    /// health check works with servers of both eras.
    ///
    /// See the example on [`Client::ping_with`].
    ///
    /// # Errors
    ///
    /// [`Error::Timeout`] when it does not answer in time, or any error of [`Client::request`].
    pub fn ping(&self) -> Result<()> {
        self.ping_with(&RequestOptions::default())
    }

    /// [`Client::ping`] with per-request options, e.g. a shorter timeout for a health check.
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// use umcp::RequestOptions;
    ///
    /// # fn main() -> umcp::Result<()> {
    /// # let client = umcp::Client::connect(umcp::StdioConfig::new("server"))?;
    /// client.ping_with(&RequestOptions::default().with_timeout(Duration::from_secs(2)))?;
    /// client.ping()?; // the same with the client's request timeout
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Client::ping`], plus [`Error::Cancelled`].
    pub fn ping_with(&self, options: &RequestOptions) -> Result<()> {
        let method = match self.era() {
            super::Era::Legacy => "ping",
            super::Era::Modern => "server/discover",
        };
        // A cached discover result would answer for a server that may be gone.
        let options = options.clone().with_no_cache();
        self.request_raw(method, None, &options).map(drop)
    }

    /// Calls a tool with JSON arguments (an object, or `Value::Null` for none).
    ///
    /// A tool that fails reports it in the result (`is_error`), not as an `Err`.
    ///
    /// A tool whose last listing requires a task (2025-11-25, `execution.taskSupport:
    /// "required"`, on a server offering task-augmented tool calls) is called as one, and its
    /// result fetched with `tasks/result` under the same options; a call given up on asks the
    /// server to cancel the task. To learn which tools need one, a client whose server offers
    /// task-augmented tool calls lists the tools once, before its first call, unless the
    /// caller listed them already.
    ///
    /// In the stateless era a server runs a call as a task only for a client that declares
    /// the tasks extension (`io.modelcontextprotocol/tasks`). A call the server refuses for
    /// want of it (-32021) is sent again declaring it; when the server then answers with a
    /// task, the client polls `tasks/get` at the server's interval, answers its input
    /// requests through the handlers in [`Options`](crate::Options) with `tasks/update`, and
    /// returns the task's result (a failed task is its [`Error::Rpc`]).
    /// The call's timeout covers the whole task (each poll counts as progress when the
    /// timeout resets on progress); a call given up on sends `tasks/cancel`.
    ///
    /// See the example on [`Client`].
    ///
    /// # Errors
    ///
    /// As [`Client::list_tools`], plus [`Error::Invalid`] for arguments that are neither an
    /// object nor `Null` (nothing is sent).
    pub fn call_tool(&self, name: &str, arguments: Value) -> Result<CallToolResult> {
        self.call_tool_with(name, arguments, &RequestOptions::default())
    }

    /// Calls a tool with per-request options (timeout, progress, cancel, `_meta`).
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// use serde_json::json;
    /// use umcp::{CancelHandle, RequestOptions};
    ///
    /// # fn main() -> umcp::Result<()> {
    /// # let client = umcp::Client::connect(umcp::StdioConfig::new("server"))?;
    /// let cancel = CancelHandle::new();
    /// let options = RequestOptions::default()
    ///     .with_timeout(Duration::from_secs(10))
    ///     .with_reset_timeout_on_progress(true)
    ///     .with_progress(|p| log::info!("{}/{:?}", p.progress, p.total))
    ///     .with_cancel(cancel.clone()); // cancel.cancel() from another thread stops it
    /// let arguments = json!({ "duration": 5 });
    /// let result = client.call_tool_with("longRunningOperation", arguments, &options)?;
    /// log::info!("{}", result.text());
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Client::call_tool`], plus [`Error::Cancelled`].
    pub fn call_tool_with(
        &self,
        name: &str,
        arguments: Value,
        options: &RequestOptions,
    ) -> Result<CallToolResult> {
        self.require("tools/call", "tools")?;
        let params = named("tool", name, arguments)?;
        if self.needs_task(name, options) {
            return self.call_tool_as_task(params, options);
        }
        self.request_as("tools/call", Some(params), options)
    }

    /// Calls `tool` and checks the result against the tool's `outputSchema` (see
    /// [`Tool::validate_output`](crate::types::Tool::validate_output)); a tool without one
    /// is called as by [`Client::call_tool_with`].
    ///
    /// ```no_run
    /// use serde_json::json;
    /// use umcp::RequestOptions;
    ///
    /// # fn main() -> umcp::Result<()> {
    /// # let client = umcp::Client::connect(umcp::StdioConfig::new("server"))?;
    /// let tools = client.list_all_tools()?;
    /// if let Some(tool) = tools.iter().find(|tool| tool.name == "get_weather") {
    ///     // An `Err` here when the result's structuredContent breaks the tool's outputSchema.
    ///     let arguments = json!({ "city": "Paris" });
    ///     let result = client.call_tool_validated(tool, arguments, &RequestOptions::default())?;
    ///     log::info!("{:?}", result.structured_content);
    /// }
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Client::call_tool_with`], plus [`Error::Protocol`] when a successful result does
    /// not match the schema.
    #[cfg(feature = "output-validation")]
    pub fn call_tool_validated(
        &self,
        tool: &crate::types::Tool,
        arguments: Value,
        options: &RequestOptions,
    ) -> Result<CallToolResult> {
        let result = self.call_tool_with(&tool.name, arguments, options)?;
        tool.validate_output(&result)?;
        Ok(result)
    }

    /// Reads a resource.
    ///
    /// ```no_run
    /// # fn main() -> umcp::Result<()> {
    /// # let client = umcp::Client::connect(umcp::StdioConfig::new("server"))?;
    /// let result = client.read_resource("file:///project/README.md")?;
    /// for contents in &result.contents {
    ///     match contents.as_text() {
    ///         Some(text) => log::info!("{}: {} bytes of text", contents.uri(), text.len()),
    ///         None => log::info!("{}: binary ({:?})", contents.uri(), contents.mime_type()),
    ///     }
    /// }
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Client::list_resources`]; an unknown URI is usually [`Error::Rpc`] with
    /// [`ErrorCode::RESOURCE_NOT_FOUND`](crate::jsonrpc::ErrorCode::RESOURCE_NOT_FOUND).
    pub fn read_resource(&self, uri: &str) -> Result<ReadResourceResult> {
        self.read_resource_with(uri, &RequestOptions::default())
    }

    /// [`Client::read_resource`] with per-request options.
    ///
    /// See the example on [`Client::read_resource`].
    ///
    /// # Errors
    ///
    /// As [`Client::read_resource`], plus [`Error::Cancelled`].
    pub fn read_resource_with(
        &self,
        uri: &str,
        options: &RequestOptions,
    ) -> Result<ReadResourceResult> {
        self.require("resources/read", "resources")?;
        self.request_as("resources/read", Some(json!({ "uri": uri })), options)
    }

    /// Gets a prompt, filled in with `arguments` (an object of strings, or `Value::Null`).
    ///
    /// ```no_run
    /// use serde_json::json;
    ///
    /// # fn main() -> umcp::Result<()> {
    /// # let client = umcp::Client::connect(umcp::StdioConfig::new("server"))?;
    /// let prompt = client.get_prompt("code_review", json!({ "code": "fn main() {}" }))?;
    /// for message in &prompt.messages {
    ///     log::info!("{:?}: {}", message.role, message.content.as_text().unwrap_or("(not text)"));
    /// }
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Client::list_prompts`], plus [`Error::Invalid`] for arguments that are neither an
    /// object nor `Null`, or an argument whose value is not a string (nothing is sent).
    pub fn get_prompt(&self, name: &str, arguments: Value) -> Result<GetPromptResult> {
        self.get_prompt_with(name, arguments, &RequestOptions::default())
    }

    /// [`Client::get_prompt`] with per-request options.
    ///
    /// See the example on [`Client::get_prompt`].
    ///
    /// # Errors
    ///
    /// As [`Client::get_prompt`], plus [`Error::Cancelled`].
    pub fn get_prompt_with(
        &self,
        name: &str,
        arguments: Value,
        options: &RequestOptions,
    ) -> Result<GetPromptResult> {
        self.require("prompts/get", "prompts")?;
        // Prompt arguments are strings (`{[key: string]: string}`); a server answers anything
        // else with a validation error of its own, if at all.
        if let Some((key, value)) = arguments
            .as_object()
            .and_then(|arguments| arguments.iter().find(|(_, value)| !value.is_string()))
        {
            return Err(Error::Invalid(format!(
                "the argument `{key}` of prompt `{name}` must be a string (prompt arguments \
                 are strings), not {}",
                crate::jsonrpc::value_kind(value)
            )));
        }
        let params = named("prompt", name, arguments)?;
        self.request_as("prompts/get", Some(params), options)
    }

    /// Asks for completions of a prompt or resource-template argument.
    ///
    /// ```no_run
    /// use umcp::types::{CompleteReference, CompleteRequestParams};
    ///
    /// # fn main() -> umcp::Result<()> {
    /// # let client = umcp::Client::connect(umcp::StdioConfig::new("server"))?;
    /// let prompt = CompleteReference::prompt("code_review");
    /// let params = CompleteRequestParams::new(prompt, "language", "ru");
    /// let result = client.complete(params)?;
    /// log::info!("{:?} (more: {:?})", result.completion.values, result.completion.has_more);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Unsupported`] without the `completions` capability (protocol 2024-11-05 had
    /// no such flag, so it is not required there), or any error of [`Client::request`].
    pub fn complete(&self, params: CompleteRequestParams) -> Result<CompleteResult> {
        self.complete_with(params, &RequestOptions::default())
    }

    /// [`Client::complete`] with per-request options, e.g. a short timeout while the user
    /// types.
    ///
    /// See the example on [`Client::complete`].
    ///
    /// # Errors
    ///
    /// As [`Client::complete`], plus [`Error::Cancelled`].
    pub fn complete_with(
        &self,
        params: CompleteRequestParams,
        options: &RequestOptions,
    ) -> Result<CompleteResult> {
        if self.protocol_version() != "2024-11-05" {
            self.require("completion/complete", "completions")?;
        }
        let params = serde_json::to_value(params)
            .map_err(|e| Error::Config(format!("unencodable completion params: {e}")))?;
        self.request_as("completion/complete", Some(params), options)
    }

    /// Tells the server the roots changed, so it asks for `roots/list` again.
    ///
    /// In the stateless era this does nothing and returns `Ok` on every transport: protocol
    /// 2026-07-28 removed the notification (a server there asks for roots in each request's
    /// input round, so it always sees the current ones).
    ///
    /// ```no_run
    /// use std::sync::{Arc, Mutex};
    /// use umcp::types::{ListRootsResult, Root};
    /// use umcp::{Client, Options, StdioConfig};
    ///
    /// # fn main() -> umcp::Result<()> {
    /// let roots = Arc::new(Mutex::new(vec![Root::new("file:///home/me/project")]));
    /// let served = Arc::clone(&roots);
    /// let options = Options::default().with_roots_handler(move || {
    ///     let roots = served.lock().map(|roots| roots.clone()).unwrap_or_default();
    ///     Ok(ListRootsResult::new(roots))
    /// });
    /// let client = Client::connect_with(StdioConfig::new("server"), options)?;
    /// if let Ok(mut roots) = roots.lock() {
    ///     roots.push(Root::new("file:///home/me/other"));
    /// }
    /// client.notify_roots_list_changed()?; // the server lists the roots again
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// In the handshake era, [`Error::Closed`] or a transport error.
    pub fn notify_roots_list_changed(&self) -> Result<()> {
        if self.shared.era.modern_version().is_some() {
            return Ok(());
        }
        self.notify("notifications/roots/list_changed", None)
    }

    /// Fails without sending when the server did not advertise `capability` (see
    /// [`Shared::offers`]).
    fn require(&self, method: &str, capability: &'static str) -> Result<()> {
        if self.shared.offers(capability) {
            return Ok(());
        }
        Err(Error::Unsupported(Unsupported::Capability {
            method: method.to_owned(),
            capability,
        }))
    }
}

impl Shared {
    /// Whether the server advertised `capability`: a name such as `logging`, or a dotted path
    /// such as `resources.subscribe` (a flag, which must then be `true`) or
    /// `tasks.requests.tools.call` (an object, which must then be there).
    pub(crate) fn offers(&self, capability: &str) -> bool {
        let caps = self
            .capabilities
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut node = &*caps;
        let mut parts = capability.split('.').peekable();
        while let Some(part) = parts.next() {
            node = &node[part];
            let present = if parts.peek().is_some() || !capability.contains('.') {
                !node.is_null()
            } else {
                node.as_bool() == Some(true) || node.is_object()
            };
            if !present {
                return false;
            }
        }
        true
    }
}

/// The params of a call to a named tool or prompt: its arguments must be an object (the spec
/// has no other shape for them), or `Null` for none.
fn named(what: &str, name: &str, arguments: Value) -> Result<Value> {
    let mut params = json!({ "name": name });
    match arguments {
        Value::Null => {}
        Value::Object(_) => params["arguments"] = arguments,
        other => {
            let kind = match other {
                Value::Bool(_) => "a boolean",
                Value::Number(_) => "a number",
                Value::String(_) => "a string",
                _ => "an array",
            };
            return Err(Error::Invalid(format!(
                "the arguments of {what} `{name}` must be a JSON object (or null for none), \
                 not {kind}"
            )));
        }
    }
    Ok(params)
}
