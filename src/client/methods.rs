//! The MCP methods a client calls, each gated on the capability the server advertised: tools,
//! resources, prompts, completion, logging, and subscriptions in either era (the lists are in
//! `lists`).
//!
//! Each request is written once, on [`WithOptions`] (the per-call options); the client's own
//! method is it with the default options.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::error::{Error, Result, Unsupported};
use crate::sync::lock;
use crate::types::{
    CallToolResult, CompleteRequestParams, CompleteResult, GetPromptResult, LoggingLevel,
    ReadResourceResult, SubscriptionFilter, SUBSCRIPTIONS_LISTEN,
};

use super::engine::request_options::RequestOptions;
use super::era::state::Era;
use super::follow::listen::{open, Subscription};
use super::handle::Client;
use super::with_options::WithOptions;

impl Client {
    /// Checks that the server is alive: `ping` in the handshake era; in the stateless era,
    /// which has no `ping`, a `server/discover` request (whose answer is dropped, and which
    /// always goes to the server, however long its last answer may be cached), so the same
    /// health check works with servers of both eras.
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// use umcp::RequestOptions;
    ///
    /// # fn main() -> umcp::Result<()> {
    /// # let client = umcp::Client::connect(umcp::StdioConfig::new("server"))?;
    /// client.ping()?; // within the client's request timeout
    /// client.with(&RequestOptions::default().with_timeout(Duration::from_secs(2))).ping()?;
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Timeout`] when it does not answer in time, or any error of [`Client::request`].
    pub fn ping(&self) -> Result<()> {
        self.with(&RequestOptions::default()).ping()
    }

    /// Calls a tool with JSON arguments (an object, or `Value::Null` for none).
    ///
    /// A tool that fails reports it in the result (`is_error`), not as an `Err`.
    ///
    /// # Tasks
    ///
    /// With task support on ([`Options::with_tasks`](crate::Options::with_tasks)), a tool that
    /// must run as a task is called the same way, and the call returns the task's result when
    /// it ends.
    ///
    /// - Handshake era (2025-11-25): a tool whose last listing requires a task
    ///   (`execution.taskSupport: "required"`, such as server-everything's
    ///   `simulate-research-query`), on a server offering task-augmented tool calls, is sent
    ///   task-augmented, and its result fetched with `tasks/result` under the same options. To
    ///   learn which tools need one, such a client lists the tools once, before its first
    ///   call, unless the caller listed them already.
    /// - Stateless era: a server runs a call as a task only for a client that declares the
    ///   tasks extension (`io.modelcontextprotocol/tasks`). A call the server refuses for want
    ///   of it (-32021) is sent again declaring it; when the server then answers with a task,
    ///   the client polls `tasks/get` at the server's interval, answers its input requests
    ///   through the handlers in [`Options`](crate::Options) with `tasks/update`, and returns
    ///   the task's result (a failed task is its [`Error::Rpc`]).
    ///
    /// Either way the call's timeout covers the whole task (each poll counts as progress when
    /// the timeout resets on progress), a cancel handle or closing the client ends the wait
    /// between polls at once, and a call given up on sends `tasks/cancel`. Without task
    /// support the call is sent as it is: a stateless server's -32021 fails it with
    /// [`Error::Unsupported`] naming the builder, and a handshake-era server answers a tool
    /// that requires a task with its own error.
    ///
    /// See the example on [`Client`].
    ///
    /// # Errors
    ///
    /// As [`Client::list_tools`], plus [`Error::Invalid`] for arguments that are neither an
    /// object nor `Null` (nothing is sent).
    pub fn call_tool(&self, name: &str, arguments: Value) -> Result<CallToolResult> {
        self.with(&RequestOptions::default())
            .call_tool(name, arguments)
    }

    /// Calls `tool` and checks the result against the tool's `outputSchema` (see
    /// [`Tool::validate_output`](crate::types::Tool::validate_output)); a tool without one
    /// is called as by [`Client::call_tool`].
    ///
    /// ```no_run
    /// use serde_json::json;
    ///
    /// # fn main() -> umcp::Result<()> {
    /// # let client = umcp::Client::connect(umcp::StdioConfig::new("server"))?;
    /// let tools = client.list_all_tools()?;
    /// if let Some(tool) = tools.iter().find(|tool| tool.name == "get_weather") {
    ///     // An `Err` here when the result's structuredContent breaks the tool's outputSchema.
    ///     let result = client.call_tool_validated(tool, json!({ "city": "Paris" }))?;
    ///     log::info!("{:?}", result.structured_content);
    /// }
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Client::call_tool`], plus [`Error::Protocol`] when a successful result does not
    /// match the schema.
    #[cfg(feature = "output-validation")]
    pub fn call_tool_validated(
        &self,
        tool: &crate::types::Tool,
        arguments: Value,
    ) -> Result<CallToolResult> {
        self.with(&RequestOptions::default())
            .call_tool_validated(tool, arguments)
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
        self.with(&RequestOptions::default()).read_resource(uri)
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
        self.with(&RequestOptions::default())
            .get_prompt(name, arguments)
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
        self.with(&RequestOptions::default()).complete(params)
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
    /// let client = Client::connect_with_options(StdioConfig::new("server"), options)?;
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
        self.with(&RequestOptions::default())
            .set_logging_level(level)
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
    /// [`Error::Unsupported`], before anything is sent, unless the server advertises
    /// `resources.subscribe`, and always in the stateless era, which has no
    /// `resources/subscribe` ([`Client::listen`] does the same there).
    pub fn subscribe_resource(&self, uri: &str) -> Result<()> {
        self.with(&RequestOptions::default())
            .subscribe_resource(uri)
    }

    /// Ends a subscription.
    ///
    /// See the example on [`Client::subscribe_resource`].
    ///
    /// # Errors
    ///
    /// As [`Client::subscribe_resource`].
    pub fn unsubscribe_resource(&self, uri: &str) -> Result<()> {
        self.with(&RequestOptions::default())
            .unsubscribe_resource(uri)
    }

    /// Subscribes to the notifications `filter` names, in either protocol era, and returns
    /// once the server acknowledged them (see [`Subscription::acknowledged`] for the subset
    /// it honours). Several subscriptions may be open at once. Closing or dropping the handle
    /// ends it ([`Subscription::close`]).
    ///
    /// - Stateless era: a `subscriptions/listen` request that stays open. Over HTTP its
    ///   notifications come on its own response stream, read on its own thread and
    ///   connection; over stdio they are told apart by their `subscriptionId`. What the server
    ///   acknowledges or sends beyond what the filter asked for is left out.
    /// - Handshake era: served from the session's list-changed notifications, with the
    ///   acknowledged subset taken from the server's capabilities; each resource URI is
    ///   subscribed with `resources/subscribe`, all within one request timeout, and a URI the
    ///   server refuses or does not confirm in time is left out of the acknowledgement.
    ///
    /// The subscription holds as many unread events as the client's notification capacity
    /// (at least 2; 256 for a [`Manager`](crate::Manager)'s clients); past that the oldest are
    /// dropped, counted ([`Subscription::dropped`]) and reported as a gap. A notification
    /// about a request is not a subscription's: progress goes to the request that asked for
    /// it, and a log message to [`Client::notifications`].
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
    /// The server's refusal, a timeout (the request timeout; another with
    /// [`WithOptions::listen`]) waiting for the acknowledgement, or a closed connection.
    pub fn listen(&self, filter: SubscriptionFilter) -> Result<Subscription> {
        let timeout = self.session.conn.request_timeout();
        self.listen_within(filter, timeout)
    }

    /// [`Client::listen`], waiting up to `timeout` for the acknowledgement.
    fn listen_within(&self, filter: SubscriptionFilter, timeout: Duration) -> Result<Subscription> {
        let follower = self.follow();
        let capacity = follower
            .capacity
            .unwrap_or_else(|| self.session.conn.notification_capacity());
        open(&self.session, &follower, filter, capacity, timeout)
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

impl WithOptions<'_> {
    /// [`Client::listen`], waiting for the server's acknowledgement up to these options'
    /// timeout (the request timeout when they set none). A proxy that holds a stream until it
    /// ends holds the acknowledgement too: a short timeout tells that early.
    ///
    /// ```no_run
    /// # fn main() -> umcp::Result<()> {
    /// use std::time::Duration;
    /// use umcp::types::SubscriptionFilter;
    /// use umcp::RequestOptions;
    /// # let client = umcp::Client::connect(umcp::StdioConfig::new("server"))?;
    /// let quick = RequestOptions::default().with_timeout(Duration::from_secs(5));
    /// let subscription = client.with(&quick).listen(SubscriptionFilter::all_lists())?;
    /// log::info!("the server honours {:?}", subscription.acknowledged());
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Client::listen`]; a cancelled cancel handle fails it before anything is sent.
    pub fn listen(&self, filter: SubscriptionFilter) -> Result<Subscription> {
        let client = self.client;
        if self
            .options
            .cancel
            .as_ref()
            .is_some_and(|c| c.is_cancelled())
        {
            return Err(Error::Cancelled {
                method: SUBSCRIPTIONS_LISTEN.to_owned(),
            });
        }
        let timeout = match self.options.timeout {
            Some(timeout) => timeout,
            None => client.session.conn.request_timeout(),
        };
        client.listen_within(filter, timeout)
    }

    /// [`Client::ping`] with these options.
    ///
    /// See the example on [`WithOptions`].
    ///
    /// # Errors
    ///
    /// As [`Client::ping`].
    pub fn ping(&self) -> Result<()> {
        let method = match self.client.era() {
            Era::Legacy => "ping",
            Era::Modern => "server/discover",
        };
        // A cached discover result would answer for a server that may be gone.
        let options = self.options.clone().with_no_cache();
        self.client
            .with(&options)
            .request_raw(method, None)
            .map(drop)
    }

    /// [`Client::call_tool`] with these options; a tool run as a task is fetched and
    /// cancelled under them too.
    ///
    /// See the example on [`WithOptions`].
    ///
    /// # Errors
    ///
    /// As [`Client::call_tool`].
    pub fn call_tool(&self, name: &str, arguments: Value) -> Result<CallToolResult> {
        let (client, options) = (self.client, self.options);
        client.require("tools/call", "tools")?;
        let params = named("tool", name, arguments)?;
        // A listing the call needs first counts against its time.
        let started = Instant::now();
        client.screen_call(name, options, started)?;
        let params = match client.task_call {
            Some(call) => match call(client, name, params, options, started) {
                Ok(result) => return result,
                Err(params) => params,
            },
            None => params,
        };
        let timeout = client.session.conn.request_timeout();
        let options = options.left_since("tools/call", started, timeout)?;
        client.request_as("tools/call", Some(params), &options)
    }

    /// [`Client::call_tool_validated`] with these options.
    ///
    /// See the example on [`WithOptions`].
    ///
    /// # Errors
    ///
    /// As [`Client::call_tool_validated`].
    #[cfg(feature = "output-validation")]
    pub fn call_tool_validated(
        &self,
        tool: &crate::types::Tool,
        arguments: Value,
    ) -> Result<CallToolResult> {
        let result = self.call_tool(&tool.name, arguments)?;
        tool.validate_output(&result)?;
        Ok(result)
    }

    /// [`Client::read_resource`] with these options.
    ///
    /// See the example on [`WithOptions`].
    ///
    /// # Errors
    ///
    /// As [`Client::read_resource`].
    pub fn read_resource(&self, uri: &str) -> Result<ReadResourceResult> {
        self.client.require("resources/read", "resources")?;
        self.client.follow();
        let params = Some(json!({ "uri": uri }));
        self.client
            .request_as("resources/read", params, self.options)
    }

    /// [`Client::get_prompt`] with these options.
    ///
    /// See the example on [`WithOptions`].
    ///
    /// # Errors
    ///
    /// As [`Client::get_prompt`].
    pub fn get_prompt(&self, name: &str, arguments: Value) -> Result<GetPromptResult> {
        self.client.require("prompts/get", "prompts")?;
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
        self.client
            .request_as("prompts/get", Some(params), self.options)
    }

    /// [`Client::complete`] with these options, e.g. a short timeout while the user types.
    ///
    /// See the example on [`WithOptions`].
    ///
    /// # Errors
    ///
    /// As [`Client::complete`].
    pub fn complete(&self, params: CompleteRequestParams) -> Result<CompleteResult> {
        if self.client.protocol_version() != "2024-11-05" {
            self.client.require("completion/complete", "completions")?;
        }
        let params = serde_json::to_value(params)
            .map_err(|e| Error::Config(format!("unencodable completion params: {e}")))?;
        self.client
            .request_as("completion/complete", Some(params), self.options)
    }

    /// [`Client::set_logging_level`] with these options.
    ///
    /// See the example on [`WithOptions`].
    ///
    /// # Errors
    ///
    /// As [`Client::set_logging_level`].
    pub fn set_logging_level(&self, level: LoggingLevel) -> Result<()> {
        let era = &self.client.session.era;
        // Stateless servers honour the level in `_meta` whether or not they list `logging`.
        if !era.is_modern() {
            self.client.require("logging/setLevel", "logging")?;
            let params = json!({ "level": level });
            self.request_raw("logging/setLevel", Some(params))?;
        }
        // Stateless requests carry it from now on; a new handshake-era session is told again.
        era.set_log_level(level);
        Ok(())
    }

    /// [`Client::subscribe_resource`] with these options.
    ///
    /// See the example on [`WithOptions`].
    ///
    /// # Errors
    ///
    /// As [`Client::subscribe_resource`].
    pub fn subscribe_resource(&self, uri: &str) -> Result<()> {
        self.client
            .require("resources/subscribe", "resources.subscribe")?;
        self.request_raw("resources/subscribe", Some(json!({ "uri": uri })))?;
        let mut subscriptions = lock(&self.client.session.subscriptions);
        if !subscriptions.iter().any(|s| s == uri) {
            subscriptions.push(uri.to_owned());
        }
        Ok(())
    }

    /// [`Client::unsubscribe_resource`] with these options.
    ///
    /// See the example on [`WithOptions`].
    ///
    /// # Errors
    ///
    /// As [`Client::unsubscribe_resource`].
    pub fn unsubscribe_resource(&self, uri: &str) -> Result<()> {
        self.client
            .require("resources/unsubscribe", "resources.subscribe")?;
        lock(&self.client.session.subscriptions).retain(|s| s != uri);
        self.request_raw("resources/unsubscribe", Some(json!({ "uri": uri })))
            .map(drop)
    }
}

/// The params of a call to a named tool or prompt: its arguments must be an object (the spec
/// has no other shape for them), or `Null` for none.
pub(super) fn named(what: &str, name: &str, arguments: Value) -> Result<Value> {
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
