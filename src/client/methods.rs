//! The MCP methods a client calls, each gated on the capability the server advertised.

use std::collections::HashSet;

use serde::de::DeserializeOwned;
use serde_json::{json, Value};

use crate::error::{Error, Result, Unsupported};
use crate::types::{
    CallToolResult, CompleteRequestParams, CompleteResult, GetPromptResult, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, LoggingLevel, Prompt,
    ReadResourceResult, Resource, ResourceTemplate, Tool,
};

use super::options::lock;
use super::{decode, Client, RequestOptions};

/// A server that keeps handing out cursors is cut off after this many pages.
const MAX_PAGES: usize = 10_000;

impl Client {
    /// Checks that the server is alive.
    ///
    /// # Errors
    ///
    /// [`Error::Timeout`] when it does not answer in time, or any error of [`Client::request`].
    pub fn ping(&self) -> Result<()> {
        self.request_raw("ping", None, &RequestOptions::default())
            .map(drop)
    }

    /// Lists one page of tools; pass the previous page's `next_cursor` to get the next.
    ///
    /// # Errors
    ///
    /// [`Error::Unsupported`] when the server has no `tools` capability, or any error of
    /// [`Client::request`].
    pub fn list_tools(&self, cursor: Option<&str>) -> Result<ListToolsResult> {
        self.page("tools/list", "tools", cursor)
    }

    /// Lists every tool, following cursors across pages.
    ///
    /// # Errors
    ///
    /// As [`Client::list_tools`], plus [`Error::Protocol`] when the server repeats a cursor.
    pub fn list_all_tools(&self) -> Result<Vec<Tool>> {
        self.all("tools/list", "tools", "tools")
    }

    /// Calls a tool with JSON arguments (an object, or `Value::Null` for none).
    ///
    /// A tool that fails reports it in the result (`is_error`), not as an `Err`.
    ///
    /// # Errors
    ///
    /// As [`Client::list_tools`].
    pub fn call_tool(&self, name: &str, arguments: Value) -> Result<CallToolResult> {
        self.call_tool_with(name, arguments, &RequestOptions::default())
    }

    /// Calls a tool with per-request options (timeout, progress, cancel).
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
        let mut params = json!({ "name": name });
        if !arguments.is_null() {
            params["arguments"] = arguments;
        }
        self.request_as("tools/call", Some(params), options)
    }

    /// Lists one page of resources.
    ///
    /// # Errors
    ///
    /// [`Error::Unsupported`] without the `resources` capability, or any error of
    /// [`Client::request`].
    pub fn list_resources(&self, cursor: Option<&str>) -> Result<ListResourcesResult> {
        self.page("resources/list", "resources", cursor)
    }

    /// Lists every resource, following cursors.
    ///
    /// # Errors
    ///
    /// As [`Client::list_resources`].
    pub fn list_all_resources(&self) -> Result<Vec<Resource>> {
        self.all("resources/list", "resources", "resources")
    }

    /// Lists one page of resource templates.
    ///
    /// # Errors
    ///
    /// As [`Client::list_resources`].
    pub fn list_resource_templates(
        &self,
        cursor: Option<&str>,
    ) -> Result<ListResourceTemplatesResult> {
        self.page("resources/templates/list", "resources", cursor)
    }

    /// Lists every resource template, following cursors.
    ///
    /// # Errors
    ///
    /// As [`Client::list_resources`].
    pub fn list_all_resource_templates(&self) -> Result<Vec<ResourceTemplate>> {
        self.all("resources/templates/list", "resources", "resourceTemplates")
    }

    /// Reads a resource.
    ///
    /// # Errors
    ///
    /// As [`Client::list_resources`]; an unknown URI is usually [`Error::Rpc`] with
    /// [`ErrorCode::RESOURCE_NOT_FOUND`](crate::jsonrpc::ErrorCode::RESOURCE_NOT_FOUND).
    pub fn read_resource(&self, uri: &str) -> Result<ReadResourceResult> {
        self.require("resources/read", "resources")?;
        let value = self.request_raw(
            "resources/read",
            Some(json!({ "uri": uri })),
            &RequestOptions::default(),
        )?;
        decode("resources/read", value)
    }

    /// Subscribes to updates of a resource (`notifications/resources/updated`). The
    /// subscription is restored if an HTTP session has to be re-initialized.
    ///
    /// # Errors
    ///
    /// [`Error::Unsupported`] unless the server advertises `resources.subscribe`.
    pub fn subscribe_resource(&self, uri: &str) -> Result<()> {
        self.require("resources/subscribe", "resources.subscribe")?;
        self.request_raw(
            "resources/subscribe",
            Some(json!({ "uri": uri })),
            &RequestOptions::default(),
        )?;
        let mut subscriptions = lock(&self.shared.subscriptions);
        if !subscriptions.iter().any(|s| s == uri) {
            subscriptions.push(uri.to_owned());
        }
        Ok(())
    }

    /// Ends a subscription.
    ///
    /// # Errors
    ///
    /// As [`Client::subscribe_resource`].
    pub fn unsubscribe_resource(&self, uri: &str) -> Result<()> {
        self.require("resources/unsubscribe", "resources.subscribe")?;
        lock(&self.shared.subscriptions).retain(|s| s != uri);
        self.request_raw(
            "resources/unsubscribe",
            Some(json!({ "uri": uri })),
            &RequestOptions::default(),
        )
        .map(drop)
    }

    /// Lists one page of prompts.
    ///
    /// # Errors
    ///
    /// [`Error::Unsupported`] without the `prompts` capability, or any error of
    /// [`Client::request`].
    pub fn list_prompts(&self, cursor: Option<&str>) -> Result<ListPromptsResult> {
        self.page("prompts/list", "prompts", cursor)
    }

    /// Lists every prompt, following cursors.
    ///
    /// # Errors
    ///
    /// As [`Client::list_prompts`].
    pub fn list_all_prompts(&self) -> Result<Vec<Prompt>> {
        self.all("prompts/list", "prompts", "prompts")
    }

    /// Gets a prompt, filled in with `arguments` (an object of strings, or `Value::Null`).
    ///
    /// # Errors
    ///
    /// As [`Client::list_prompts`].
    pub fn get_prompt(&self, name: &str, arguments: Value) -> Result<GetPromptResult> {
        self.require("prompts/get", "prompts")?;
        let mut params = json!({ "name": name });
        if !arguments.is_null() {
            params["arguments"] = arguments;
        }
        let value = self.request_raw("prompts/get", Some(params), &RequestOptions::default())?;
        decode("prompts/get", value)
    }

    /// Asks for completions of a prompt or resource-template argument.
    ///
    /// # Errors
    ///
    /// [`Error::Unsupported`] without the `completions` capability (protocol 2024-11-05 had
    /// no such flag, so it is not required there), or any error of [`Client::request`].
    pub fn complete(&self, params: CompleteRequestParams) -> Result<CompleteResult> {
        if self.protocol_version() != "2024-11-05" {
            self.require("completion/complete", "completions")?;
        }
        let params = serde_json::to_value(params)
            .map_err(|e| Error::Config(format!("unencodable completion params: {e}")))?;
        let value = self.request_raw(
            "completion/complete",
            Some(params),
            &RequestOptions::default(),
        )?;
        decode("completion/complete", value)
    }

    /// Sets the lowest level of `notifications/message` log lines the server sends.
    ///
    /// # Errors
    ///
    /// [`Error::Unsupported`] without the `logging` capability, or any error of
    /// [`Client::request`].
    pub fn set_logging_level(&self, level: LoggingLevel) -> Result<()> {
        self.require("logging/setLevel", "logging")?;
        let params = json!({ "level": level });
        self.request_raw("logging/setLevel", Some(params), &RequestOptions::default())
            .map(drop)
    }

    /// Tells the server the roots changed, so it asks for `roots/list` again.
    ///
    /// # Errors
    ///
    /// [`Error::Closed`], or a transport error.
    pub fn notify_roots_list_changed(&self) -> Result<()> {
        self.notify("notifications/roots/list_changed", None)
    }

    /// Fails without sending when the server did not advertise `capability` (a dotted path
    /// such as `resources.subscribe`, which must then be `true`).
    fn require(&self, method: &str, capability: &'static str) -> Result<()> {
        let caps = self
            .shared
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
                node.as_bool() == Some(true)
            };
            if !present {
                return Err(Error::Unsupported(Unsupported::Capability {
                    method: method.to_owned(),
                    capability,
                }));
            }
        }
        Ok(())
    }

    fn page<T: DeserializeOwned>(
        &self,
        method: &str,
        capability: &'static str,
        cursor: Option<&str>,
    ) -> Result<T> {
        self.require(method, capability)?;
        let params = cursor.map(|c| json!({ "cursor": c }));
        self.request_as(method, params, &RequestOptions::default())
    }

    fn all<T: DeserializeOwned>(
        &self,
        method: &str,
        capability: &'static str,
        key: &str,
    ) -> Result<Vec<T>> {
        self.require(method, capability)?;
        let mut items = Vec::new();
        let mut seen = HashSet::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let params = cursor.as_ref().map(|c| json!({ "cursor": c }));
            let mut page = self.request_raw(method, params, &RequestOptions::default())?;
            let batch: Vec<T> = decode(
                method,
                page.get_mut(key).map(Value::take).unwrap_or(json!([])),
            )?;
            items.extend(batch);
            match page.get("nextCursor").and_then(Value::as_str) {
                Some(next) if !next.is_empty() => {
                    if !seen.insert(next.to_owned()) {
                        return Err(Error::Protocol(format!(
                            "`{method}` repeated the cursor {next:?}"
                        )));
                    }
                    cursor = Some(next.to_owned());
                }
                _ => return Ok(items),
            }
        }
        Err(Error::Protocol(format!(
            "`{method}` returned more than {MAX_PAGES} pages"
        )))
    }
}
