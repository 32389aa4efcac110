//! The paginated `*/list` methods: one page at a time, or every page following cursors.

use std::collections::HashSet;
use std::time::Instant;

use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::{json, Map, Value};

use crate::error::{Error, Result};
use crate::types::{
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, Prompt,
    Resource, ResourceTemplate, Tool,
};

use super::engine::request_options::RequestOptions;
use super::handle::Client;
use super::with_options::WithOptions;

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
    /// let tools = client.with(&options).list_all_tools()?;
    /// # let _ = tools;
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Unsupported`] when the server has no `tools` capability, or any error of
    /// [`Client::request`].
    pub fn list_tools(&self, cursor: Option<&str>) -> Result<ListToolsResult> {
        self.with(&RequestOptions::default()).list_tools(cursor)
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
        self.with(&RequestOptions::default()).list_all_tools()
    }

    /// Every tool's task support, listed for a call of `method` that started at `started`
    /// with `options`: each page gets only what is left of the call's time, and its cancel
    /// handle applies. Only the name and `execution` of each tool are read.
    pub(crate) fn list_task_support_within(
        &self,
        method: &str,
        options: &RequestOptions,
        started: Instant,
    ) -> Result<()> {
        let timeout = self.session.conn.request_timeout();
        let left = || options.left_since(method, started, timeout);
        self.require("tools/list", "tools")?;
        let tools: Vec<TaskSupport> = self.pages("tools/list", "tools", &left)?;
        self.note_listed(
            tools
                .iter()
                .map(|t| (t.name.as_str(), t.execution.as_ref())),
        );
        Ok(())
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
        self.require("tools/list", "tools")?;
        let changes = self.tool_changes();
        let tools: Vec<Tool> = self.pages("tools/list", "tools", &left)?;
        self.note_listed(listed(&tools));
        Ok(self.screen_listing(tools, Some(changes)))
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
    /// let first = client.with(&options).list_resources(None)?;
    /// log::info!("more pages: {}", first.next_cursor.is_some());
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Unsupported`] without the `resources` capability, or any error of
    /// [`Client::request`].
    pub fn list_resources(&self, cursor: Option<&str>) -> Result<ListResourcesResult> {
        self.with(&RequestOptions::default()).list_resources(cursor)
    }

    /// Lists every resource, following cursors.
    ///
    /// See the example on [`Client::list_resources`].
    ///
    /// # Errors
    ///
    /// As [`Client::list_resources`].
    pub fn list_all_resources(&self) -> Result<Vec<Resource>> {
        self.with(&RequestOptions::default()).list_all_resources()
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
        self.with(&RequestOptions::default())
            .list_resource_templates(cursor)
    }

    /// Lists every resource template, following cursors.
    ///
    /// See the example on [`Client::list_resource_templates`].
    ///
    /// # Errors
    ///
    /// As [`Client::list_resources`].
    pub fn list_all_resource_templates(&self) -> Result<Vec<ResourceTemplate>> {
        self.with(&RequestOptions::default())
            .list_all_resource_templates()
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
        self.with(&RequestOptions::default()).list_prompts(cursor)
    }

    /// Lists every prompt, following cursors.
    ///
    /// See the example on [`Client::list_prompts`].
    ///
    /// # Errors
    ///
    /// As [`Client::list_prompts`].
    pub fn list_all_prompts(&self) -> Result<Vec<Prompt>> {
        self.with(&RequestOptions::default()).list_all_prompts()
    }
}

impl WithOptions<'_> {
    /// [`Client::list_tools`] with these options.
    ///
    /// See the example on [`WithOptions`].
    ///
    /// # Errors
    ///
    /// As [`Client::list_tools`].
    pub fn list_tools(&self, cursor: Option<&str>) -> Result<ListToolsResult> {
        let mut page: ListToolsResult = self.page("tools/list", "tools", cursor)?;
        self.client.note_listed(listed(&page.tools));
        let tools = std::mem::take(&mut page.tools);
        page.tools = self.client.screen_listing(tools, None);
        Ok(page)
    }

    /// [`Client::list_all_tools`] with these options, applied to each page's request.
    ///
    /// See the example on [`WithOptions`].
    ///
    /// # Errors
    ///
    /// As [`Client::list_all_tools`].
    pub fn list_all_tools(&self) -> Result<Vec<Tool>> {
        let changes = self.client.tool_changes();
        let tools: Vec<Tool> = self.all("tools/list", "tools", "tools")?;
        self.client.note_listed(listed(&tools));
        Ok(self.client.screen_listing(tools, Some(changes)))
    }

    /// [`Client::list_resources`] with these options.
    ///
    /// See the example on [`WithOptions`].
    ///
    /// # Errors
    ///
    /// As [`Client::list_resources`].
    pub fn list_resources(&self, cursor: Option<&str>) -> Result<ListResourcesResult> {
        self.page("resources/list", "resources", cursor)
    }

    /// [`Client::list_all_resources`] with these options, applied to each page's request.
    ///
    /// See the example on [`WithOptions`].
    ///
    /// # Errors
    ///
    /// As [`Client::list_all_resources`].
    pub fn list_all_resources(&self) -> Result<Vec<Resource>> {
        self.all("resources/list", "resources", "resources")
    }

    /// [`Client::list_resource_templates`] with these options.
    ///
    /// See the example on [`WithOptions`].
    ///
    /// # Errors
    ///
    /// As [`Client::list_resource_templates`].
    pub fn list_resource_templates(
        &self,
        cursor: Option<&str>,
    ) -> Result<ListResourceTemplatesResult> {
        self.page("resources/templates/list", "resources", cursor)
    }

    /// [`Client::list_all_resource_templates`] with these options, applied to each page's
    /// request.
    ///
    /// See the example on [`WithOptions`].
    ///
    /// # Errors
    ///
    /// As [`Client::list_all_resource_templates`].
    pub fn list_all_resource_templates(&self) -> Result<Vec<ResourceTemplate>> {
        self.all("resources/templates/list", "resources", "resourceTemplates")
    }

    /// [`Client::list_prompts`] with these options.
    ///
    /// See the example on [`WithOptions`].
    ///
    /// # Errors
    ///
    /// As [`Client::list_prompts`].
    pub fn list_prompts(&self, cursor: Option<&str>) -> Result<ListPromptsResult> {
        self.page("prompts/list", "prompts", cursor)
    }

    /// [`Client::list_all_prompts`] with these options, applied to each page's request.
    ///
    /// See the example on [`WithOptions`].
    ///
    /// # Errors
    ///
    /// As [`Client::list_all_prompts`].
    pub fn list_all_prompts(&self) -> Result<Vec<Prompt>> {
        self.all("prompts/list", "prompts", "prompts")
    }

    fn page<T: DeserializeOwned>(
        &self,
        method: &str,
        capability: &'static str,
        cursor: Option<&str>,
    ) -> Result<T> {
        self.client.require(method, capability)?;
        // Listings may be cached.
        self.client.follow();
        let params = cursor.map(|c| json!({ "cursor": c }));
        self.client.request_as(method, params, self.options)
    }

    fn all<T: DeserializeOwned>(
        &self,
        method: &str,
        capability: &'static str,
        key: &str,
    ) -> Result<Vec<T>> {
        self.client.require(method, capability)?;
        self.all_pages(method, key)
    }

    /// Every item under `key` of every page of `method`, following cursors.
    pub(super) fn all_pages<T: DeserializeOwned>(&self, method: &str, key: &str) -> Result<Vec<T>> {
        // Listings may be cached.
        self.client.follow();
        let options = self.options;
        self.client.pages(method, key, &|| Ok(options.clone()))
    }
}

impl Client {
    /// Every page of a listing, each sent with the options `page_options` gives then.
    fn pages<T: DeserializeOwned>(
        &self,
        method: &str,
        key: &str,
        page_options: &dyn Fn() -> Result<RequestOptions>,
    ) -> Result<Vec<T>> {
        self.pages_with(method, &Map::new(), key, page_options)
    }

    /// [`Client::pages`] of a method whose every page's params hold `params` besides the
    /// cursor (`resources/directory/read` names its directory on each).
    pub(super) fn pages_with<T: DeserializeOwned>(
        &self,
        method: &str,
        params: &Map<String, Value>,
        key: &str,
        page_options: &dyn Fn() -> Result<RequestOptions>,
    ) -> Result<Vec<T>> {
        // The stateless era says only a cursor's presence counts: `""` is a cursor like any
        // other. Many handshake-era servers send `""` to mean the end, and their versions of
        // the spec say nothing of it, so there it still ends the list.
        let stateless = self.session.era.is_modern();
        let mut items = Vec::new();
        let mut seen = HashSet::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let mut page_params = params.clone();
            if let Some(cursor) = &cursor {
                page_params.insert("cursor".into(), json!(cursor));
            }
            let page_params = (!page_params.is_empty()).then_some(Value::Object(page_params));
            let mut page = self
                .with(&page_options()?)
                .request_raw(method, page_params)?;
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

/// What a listing for the tools that need a task reads of each tool.
#[derive(Deserialize)]
struct TaskSupport {
    #[serde(default)]
    name: String,
    #[serde(default)]
    execution: Option<Value>,
}

/// The name and `execution` of each of `tools`.
fn listed(tools: &[Tool]) -> impl Iterator<Item = (&str, Option<&Value>)> {
    tools
        .iter()
        .map(|t| (t.name.as_str(), t.execution.as_ref()))
}

/// `value` decoded as the items of a `method` listing.
fn decode<T: DeserializeOwned>(method: &str, value: Value) -> Result<T> {
    serde_json::from_value(value)
        .map_err(|e| Error::Protocol(format!("malformed `{method}` result: {e}")))
}
