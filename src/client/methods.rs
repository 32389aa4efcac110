//! The MCP methods a client calls, each gated on the capability the server advertised: tools,
//! resources, prompts, completion, logging, and subscriptions in either era (the lists are in
//! `lists`).
//!
//! Every method has a `_with` form taking [`RequestOptions`] (timeout, progress, cancel,
//! `_meta`); the plain form is the `_with` form with the defaults.

use std::time::Instant;

use serde_json::{json, Value};

use crate::error::{Error, Result, Unsupported};
use crate::sync::lock;
use crate::types::{
    CallToolResult, CompleteRequestParams, CompleteResult, GetPromptResult, LoggingLevel,
    ReadResourceResult, SubscriptionFilter,
};

use super::engine::request_options::RequestOptions;
use super::era::state::Era;
use super::follow::listen::{open, Subscription};
use super::handle::Client;

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
            Era::Legacy => "ping",
            Era::Modern => "server/discover",
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
        // A listing the call needs first counts against its time.
        let started = Instant::now();
        if self.needs_task(name, options, started) {
            return self.call_tool_as_task(params, options, started);
        }
        let timeout = self.session.conn.request_timeout();
        let options = options.left_since("tools/call", started, timeout)?;
        self.request_as("tools/call", Some(params), &options)
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
        if self.session.era.is_modern() {
            return Ok(());
        }
        self.notify("notifications/roots/list_changed", None)
    }

    /// Sets the lowest level of `notifications/message` log lines the server sends, in either
    /// era: `logging/setLevel` in the handshake era (and again at the start of a new session
    /// after the server ends one), the level in every later request's `_meta` in the
    /// stateless era, where nothing is sent now. To ask from the first request on, use
    /// [`Options::with_log_level`](crate::Options::with_log_level).
    ///
    /// ```no_run
    /// use umcp::types::{LoggingLevel, ServerNotification};
    ///
    /// # fn main() -> umcp::Result<()> {
    /// # let client = umcp::Client::connect(umcp::StdioConfig::new("server"))?;
    /// client.set_logging_level(LoggingLevel::Warning)?;
    /// // The server's log messages now arrive as notifications:
    /// while let Some(notification) = client.notifications().try_recv() {
    ///     if let ServerNotification::LoggingMessage(message) = notification {
    ///         log::warn!("server: {}", message.data);
    ///     }
    /// }
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// In the handshake era, [`Error::Unsupported`] without the `logging` capability, or any
    /// error of [`Client::request`].
    pub fn set_logging_level(&self, level: LoggingLevel) -> Result<()> {
        self.set_logging_level_with(level, &RequestOptions::default())
    }

    /// [`Client::set_logging_level`] with per-request options.
    ///
    /// See the example on [`Client::set_logging_level`].
    ///
    /// # Errors
    ///
    /// As [`Client::set_logging_level`], plus [`Error::Cancelled`].
    pub fn set_logging_level_with(
        &self,
        level: LoggingLevel,
        options: &RequestOptions,
    ) -> Result<()> {
        let era = &self.session.era;
        // Stateless servers honour the level in `_meta` whether or not they list `logging`.
        if !era.is_modern() {
            self.require("logging/setLevel", "logging")?;
            let params = json!({ "level": level });
            self.request_raw("logging/setLevel", Some(params), options)?;
        }
        // Stateless requests carry it from now on; a new handshake-era session is told again.
        era.set_log_level(level);
        Ok(())
    }

    /// Subscribes to updates of a resource (`notifications/resources/updated`). The
    /// subscription is restored if an HTTP session has to be re-initialized.
    ///
    /// ```no_run
    /// use umcp::types::ServerNotification;
    ///
    /// # fn main() -> umcp::Result<()> {
    /// # let client = umcp::Client::connect(umcp::StdioConfig::new("server"))?;
    /// let uri = "file:///project/build.log";
    /// client.subscribe_resource(uri)?;
    /// for notification in client.notifications().iter() {
    ///     if let ServerNotification::ResourceUpdated(updated) = notification {
    ///         let fresh = client.read_resource(&updated.uri)?;
    ///         log::info!("{} changed: {} parts", updated.uri, fresh.contents.len());
    ///         break;
    ///     }
    /// }
    /// client.unsubscribe_resource(uri)?;
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Unsupported`] unless the server advertises
    /// `resources.subscribe`.
    pub fn subscribe_resource(&self, uri: &str) -> Result<()> {
        self.subscribe_resource_with(uri, &RequestOptions::default())
    }

    /// [`Client::subscribe_resource`] with per-request options.
    ///
    /// See the example on [`Client::subscribe_resource`].
    ///
    /// # Errors
    ///
    /// As [`Client::subscribe_resource`], plus [`Error::Cancelled`].
    pub fn subscribe_resource_with(&self, uri: &str, options: &RequestOptions) -> Result<()> {
        self.require("resources/subscribe", "resources.subscribe")?;
        self.request_raw("resources/subscribe", Some(json!({ "uri": uri })), options)?;
        let mut subscriptions = lock(&self.session.subscriptions);
        if !subscriptions.iter().any(|s| s == uri) {
            subscriptions.push(uri.to_owned());
        }
        Ok(())
    }

    /// Ends a subscription.
    ///
    /// See the example on [`Client::subscribe_resource`].
    ///
    /// # Errors
    ///
    /// As [`Client::subscribe_resource`].
    pub fn unsubscribe_resource(&self, uri: &str) -> Result<()> {
        self.unsubscribe_resource_with(uri, &RequestOptions::default())
    }

    /// [`Client::unsubscribe_resource`] with per-request options.
    ///
    /// See the example on [`Client::subscribe_resource`].
    ///
    /// # Errors
    ///
    /// As [`Client::unsubscribe_resource`], plus [`Error::Cancelled`].
    pub fn unsubscribe_resource_with(&self, uri: &str, options: &RequestOptions) -> Result<()> {
        self.require("resources/unsubscribe", "resources.subscribe")?;
        lock(&self.session.subscriptions).retain(|s| s != uri);
        self.request_raw(
            "resources/unsubscribe",
            Some(json!({ "uri": uri })),
            options,
        )
        .map(drop)
    }

    /// Subscribes to the notifications `filter` names, in either protocol era, and returns
    /// once the server acknowledged them (see [`Subscription::acknowledged`] for the subset
    /// it honours). In the handshake era each resource URI is subscribed with
    /// `resources/subscribe`, all within one request timeout; a URI the server refuses or does
    /// not confirm in time is left out of the acknowledgement. The subscription holds as many
    /// unread events as the client's notification capacity (at least 2; 256 for a
    /// [`Manager`](crate::Manager)'s clients); past that the oldest are dropped, counted
    /// ([`Subscription::dropped`]) and reported as a gap.
    ///
    /// ```no_run
    /// use umcp::types::{ServerNotification, SubscriptionFilter};
    /// use umcp::SubscriptionEvent;
    ///
    /// # fn main() -> umcp::Result<()> {
    /// # let client = umcp::Client::connect(umcp::StdioConfig::new("server"))?;
    /// let filter = SubscriptionFilter::new().tools().resource("file:///project/build.log");
    /// let subscription = client.listen(filter)?;
    /// log::info!("the server honours {:?}", subscription.acknowledged());
    /// for event in subscription.iter() {
    ///     match event {
    ///         SubscriptionEvent::Notification(ServerNotification::ToolListChanged) => {
    ///             log::info!("{} tools now", client.list_all_tools()?.len());
    ///         }
    ///         SubscriptionEvent::Notification(other) => log::info!("{}", other.method()),
    ///         SubscriptionEvent::Resubscribed { reason } => log::warn!("re-list all: {reason}"),
    ///         _ => {}
    ///     }
    /// }
    /// log::info!("ended: {:?}", subscription.ended());
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The server's refusal, a timeout (the request timeout) waiting for the
    /// acknowledgement, or a closed connection.
    pub fn listen(&self, filter: SubscriptionFilter) -> Result<Subscription> {
        let capacity = self
            .follower
            .capacity
            .unwrap_or_else(|| self.session.conn.notification_capacity());
        open(&self.session, &self.follower, filter, capacity)
    }

    /// Fails without sending when the server did not advertise `capability` (see
    /// [`Session::offers`](super::era::session::Session::offers)).
    pub(crate) fn require(&self, method: &str, capability: &'static str) -> Result<()> {
        if self.session.offers(capability) {
            return Ok(());
        }
        Err(Error::Unsupported(Unsupported::Capability {
            method: method.to_owned(),
            capability,
        }))
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
