//! The paginated `*/list` methods: one page at a time, or every page following cursors.

use std::collections::HashSet;
use std::time::Instant;

use serde::de::DeserializeOwned;
use serde_json::{json, Value};

use crate::error::{Error, Result};
use crate::types::{
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, Prompt,
    Resource, ResourceTemplate, Tool,
};

use super::engine::request_options::RequestOptions;
use super::handle::Client;

/// A server that keeps handing out cursors is cut off after this many pages.
const MAX_PAGES: usize = 10_000;

impl Client {
    /// Lists one page of tools; pass the previous page's `next_cursor` to get the next.
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// use umcp::RequestOptions;
    ///
    /// # fn main() -> umcp::Result<()> {
    /// # let client = umcp::Client::connect(umcp::StdioConfig::new("server"))?;
    /// let mut cursor = None;
    /// loop {
    ///     let page = client.list_tools(cursor.as_deref())?;
    ///     for tool in &page.tools {
    ///         log::info!("{}: {}", tool.name, tool.description.as_deref().unwrap_or(""));
    ///     }
    ///     cursor = page.next_cursor;
    ///     if cursor.is_none() {
    ///         break;
    ///     }
    /// }
    /// // Or every page at once, each page's request with its own timeout:
    /// let options = RequestOptions::default().with_timeout(Duration::from_secs(5));
    /// let tools = client.list_all_tools_with(&options)?;
    /// # let _ = tools;
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Unsupported`] when the server has no `tools` capability, or any error of
    /// [`Client::request`].
    pub fn list_tools(&self, cursor: Option<&str>) -> Result<ListToolsResult> {
        self.list_tools_with(cursor, &RequestOptions::default())
    }

    /// [`Client::list_tools`] with per-request options (timeout, cancel, `_meta`).
    ///
    /// Every method of the client that sends one request has a `_with` form like this one,
    /// taking the options last (`call_tool_validated`, `request_raw` and `request_once` take
    /// them last themselves).
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// use umcp::{CancelHandle, Client, RequestOptions, StdioConfig};
    ///
    /// # fn main() -> umcp::Result<()> {
    /// let client = Client::connect(StdioConfig::from_command_line("uvx mcp-server-time")?)?;
    /// let cancel = CancelHandle::new();
    /// let options = RequestOptions::default()
    ///     .with_timeout(Duration::from_secs(5))
    ///     .with_cancel(cancel.clone());
    /// let mut cursor = None;
    /// loop {
    ///     let page = client.list_tools_with(cursor.as_deref(), &options)?;
    ///     page.tools.iter().for_each(|tool| log::info!("{}", tool.name));
    ///     match page.next_cursor {
    ///         Some(next) => cursor = Some(next),
    ///         None => break,
    ///     }
    /// }
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Client::list_tools`], plus [`Error::Cancelled`].
    pub fn list_tools_with(
        &self,
        cursor: Option<&str>,
        options: &RequestOptions,
    ) -> Result<ListToolsResult> {
        let page: ListToolsResult = self.page("tools/list", "tools", cursor, options)?;
        self.note_listed(&page.tools);
        Ok(page)
    }

    /// Lists every tool, following cursors across pages.
    ///
    /// A missing `nextCursor` ends the list. An empty one ends it too in the handshake era,
    /// where servers commonly send `""` for the end; in the stateless era only a cursor's
    /// presence counts, so `""` is sent back as the next page's cursor. The same goes for
    /// every `list_all_*` method.
    ///
    /// See the example on [`Client::list_tools`].
    ///
    /// # Errors
    ///
    /// As [`Client::list_tools`], plus [`Error::Protocol`] when the server repeats a cursor.
    pub fn list_all_tools(&self) -> Result<Vec<Tool>> {
        self.list_all_tools_with(&RequestOptions::default())
    }

    /// [`Client::list_all_tools`] with per-request options, applied to each page's request.
    ///
    /// See the example on [`Client::list_tools`].
    ///
    /// # Errors
    ///
    /// As [`Client::list_all_tools`], plus [`Error::Cancelled`].
    pub fn list_all_tools_with(&self, options: &RequestOptions) -> Result<Vec<Tool>> {
        let tools: Vec<Tool> = self.all("tools/list", "tools", "tools", options)?;
        self.note_listed(&tools);
        Ok(tools)
    }

    /// Every tool, listed for a call of `method` that started at `started` with `options`:
    /// each page gets only what is left of the call's time, and its cancel handle applies.
    pub(crate) fn list_all_tools_within(
        &self,
        method: &str,
        options: &RequestOptions,
        started: Instant,
    ) -> Result<Vec<Tool>> {
        let timeout = self.session.conn.request_timeout();
        let left = || options.left_since(method, started, timeout);
        let tools: Vec<Tool> = self.pages("tools/list", "tools", "tools", &left)?;
        self.note_listed(&tools);
        Ok(tools)
    }

    /// Lists one page of resources.
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// use umcp::RequestOptions;
    ///
    /// # fn main() -> umcp::Result<()> {
    /// # let client = umcp::Client::connect(umcp::StdioConfig::new("server"))?;
    /// for resource in client.list_all_resources()? {
    ///     log::info!("{} ({})", resource.uri, resource.display_name());
    /// }
    /// // One page at a time, with per-request options:
    /// let options = RequestOptions::default().with_timeout(Duration::from_secs(5));
    /// let first = client.list_resources_with(None, &options)?;
    /// log::info!("more pages: {}", first.next_cursor.is_some());
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Unsupported`] without the `resources` capability, or any error of
    /// [`Client::request`].
    pub fn list_resources(&self, cursor: Option<&str>) -> Result<ListResourcesResult> {
        self.list_resources_with(cursor, &RequestOptions::default())
    }

    /// [`Client::list_resources`] with per-request options.
    ///
    /// See the example on [`Client::list_resources`].
    ///
    /// # Errors
    ///
    /// As [`Client::list_resources`], plus [`Error::Cancelled`].
    pub fn list_resources_with(
        &self,
        cursor: Option<&str>,
        options: &RequestOptions,
    ) -> Result<ListResourcesResult> {
        self.page("resources/list", "resources", cursor, options)
    }

    /// Lists every resource, following cursors.
    ///
    /// See the example on [`Client::list_resources`].
    ///
    /// # Errors
    ///
    /// As [`Client::list_resources`].
    pub fn list_all_resources(&self) -> Result<Vec<Resource>> {
        self.list_all_resources_with(&RequestOptions::default())
    }

    /// [`Client::list_all_resources`] with per-request options, applied to each page's request.
    ///
    /// See the example on [`Client::list_resources`].
    ///
    /// # Errors
    ///
    /// As [`Client::list_all_resources`], plus [`Error::Cancelled`].
    pub fn list_all_resources_with(&self, options: &RequestOptions) -> Result<Vec<Resource>> {
        self.all("resources/list", "resources", "resources", options)
    }

    /// Lists one page of resource templates.
    ///
    /// ```no_run
    /// # fn main() -> umcp::Result<()> {
    /// # let client = umcp::Client::connect(umcp::StdioConfig::new("server"))?;
    /// for template in client.list_all_resource_templates()? {
    ///     log::info!("{}", template.uri_template);
    /// }
    /// let first = client.list_resource_templates(None)?;
    /// log::info!("more pages: {}", first.next_cursor.is_some());
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Client::list_resources`].
    pub fn list_resource_templates(
        &self,
        cursor: Option<&str>,
    ) -> Result<ListResourceTemplatesResult> {
        self.list_resource_templates_with(cursor, &RequestOptions::default())
    }

    /// [`Client::list_resource_templates`] with per-request options.
    ///
    /// See the example on [`Client::list_resource_templates`].
    ///
    /// # Errors
    ///
    /// As [`Client::list_resource_templates`], plus [`Error::Cancelled`].
    pub fn list_resource_templates_with(
        &self,
        cursor: Option<&str>,
        options: &RequestOptions,
    ) -> Result<ListResourceTemplatesResult> {
        self.page("resources/templates/list", "resources", cursor, options)
    }

    /// Lists every resource template, following cursors.
    ///
    /// See the example on [`Client::list_resource_templates`].
    ///
    /// # Errors
    ///
    /// As [`Client::list_resources`].
    pub fn list_all_resource_templates(&self) -> Result<Vec<ResourceTemplate>> {
        self.list_all_resource_templates_with(&RequestOptions::default())
    }

    /// [`Client::list_all_resource_templates`] with per-request options, applied to each
    /// page's request.
    ///
    /// See the example on [`Client::list_resource_templates`].
    ///
    /// # Errors
    ///
    /// As [`Client::list_all_resource_templates`], plus [`Error::Cancelled`].
    pub fn list_all_resource_templates_with(
        &self,
        options: &RequestOptions,
    ) -> Result<Vec<ResourceTemplate>> {
        self.all(
            "resources/templates/list",
            "resources",
            "resourceTemplates",
            options,
        )
    }

    /// Lists one page of prompts.
    ///
    /// ```no_run
    /// # fn main() -> umcp::Result<()> {
    /// # let client = umcp::Client::connect(umcp::StdioConfig::new("server"))?;
    /// for prompt in client.list_all_prompts()? {
    ///     let required: Vec<&str> = prompt.arguments.iter().flatten()
    ///         .filter(|argument| argument.is_required())
    ///         .map(|argument| argument.name.as_str())
    ///         .collect();
    ///     log::info!("{} needs {:?}", prompt.display_name(), required);
    /// }
    /// let first = client.list_prompts(None)?;
    /// log::info!("more pages: {}", first.next_cursor.is_some());
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Unsupported`] without the `prompts` capability, or any error of
    /// [`Client::request`].
    pub fn list_prompts(&self, cursor: Option<&str>) -> Result<ListPromptsResult> {
        self.list_prompts_with(cursor, &RequestOptions::default())
    }

    /// [`Client::list_prompts`] with per-request options.
    ///
    /// See the example on [`Client::list_prompts`].
    ///
    /// # Errors
    ///
    /// As [`Client::list_prompts`], plus [`Error::Cancelled`].
    pub fn list_prompts_with(
        &self,
        cursor: Option<&str>,
        options: &RequestOptions,
    ) -> Result<ListPromptsResult> {
        self.page("prompts/list", "prompts", cursor, options)
    }

    /// Lists every prompt, following cursors.
    ///
    /// See the example on [`Client::list_prompts`].
    ///
    /// # Errors
    ///
    /// As [`Client::list_prompts`].
    pub fn list_all_prompts(&self) -> Result<Vec<Prompt>> {
        self.list_all_prompts_with(&RequestOptions::default())
    }

    /// [`Client::list_all_prompts`] with per-request options, applied to each page's request.
    ///
    /// See the example on [`Client::list_prompts`].
    ///
    /// # Errors
    ///
    /// As [`Client::list_all_prompts`], plus [`Error::Cancelled`].
    pub fn list_all_prompts_with(&self, options: &RequestOptions) -> Result<Vec<Prompt>> {
        self.all("prompts/list", "prompts", "prompts", options)
    }

    fn page<T: DeserializeOwned>(
        &self,
        method: &str,
        capability: &'static str,
        cursor: Option<&str>,
        options: &RequestOptions,
    ) -> Result<T> {
        self.require(method, capability)?;
        let params = cursor.map(|c| json!({ "cursor": c }));
        self.request_as(method, params, options)
    }

    fn all<T: DeserializeOwned>(
        &self,
        method: &str,
        capability: &'static str,
        key: &str,
        options: &RequestOptions,
    ) -> Result<Vec<T>> {
        self.pages(method, capability, key, &|| Ok(options.clone()))
    }

    /// Every page of a listing, each sent with the options `page_options` gives then.
    fn pages<T: DeserializeOwned>(
        &self,
        method: &str,
        capability: &'static str,
        key: &str,
        page_options: &dyn Fn() -> Result<RequestOptions>,
    ) -> Result<Vec<T>> {
        self.require(method, capability)?;
        // The stateless era says only a cursor's presence counts: `""` is a cursor like any
        // other. Many handshake-era servers send `""` to mean the end, and their versions of
        // the spec say nothing of it, so there it still ends the list.
        let stateless = self.session.era.is_modern();
        let mut items = Vec::new();
        let mut seen = HashSet::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let params = cursor.as_ref().map(|c| json!({ "cursor": c }));
            let mut page = self.request_raw(method, params, &page_options()?)?;
            // A missing list and a `null` one (a Go server's nil slice) are both empty, as
            // in the typed results.
            let list = match page.get_mut(key).map(Value::take) {
                None | Some(Value::Null) => json!([]),
                Some(list) => list,
            };
            let batch: Vec<T> = decode(method, list)?;
            items.extend(batch);
            match page.get("nextCursor").and_then(Value::as_str) {
                Some(next) if !next.is_empty() || stateless => {
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

/// `value` decoded as the items of a `method` listing.
fn decode<T: DeserializeOwned>(method: &str, value: Value) -> Result<T> {
    serde_json::from_value(value)
        .map_err(|e| Error::Protocol(format!("malformed `{method}` result: {e}")))
}
