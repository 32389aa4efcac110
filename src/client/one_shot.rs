//! One request against a server, from connect to close, in one call.

use crate::error::Result;
use crate::transport::Connect;
use crate::types::Method;

use super::engine::request_options::RequestOptions;
use super::handle::Client;
use super::options::Options;

impl Client {
    /// Connects, runs the handshake, sends one typed request, closes, and returns the result.
    ///
    /// The connection is closed on every path, including errors, so nothing is left running.
    /// The request goes out as given, as with [`Client::request`] (a tool that must run as a
    /// task is refused: call it with [`Client::call_tool`] on a connected client).
    ///
    /// ```no_run
    /// use umcp::types::{ListTools, PaginatedRequestParams};
    /// use umcp::{Client, Options, RequestOptions, StdioConfig};
    ///
    /// # fn main() -> umcp::Result<()> {
    /// let tools = Client::one_shot::<ListTools>(
    ///     StdioConfig::new("my-server"),
    ///     Options::default(),
    ///     &PaginatedRequestParams::default(),
    ///     &RequestOptions::default(),
    /// )?;
    /// # let _ = tools; Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// Any error of [`Client::connect_with_options`] or [`Client::request`].
    pub fn one_shot<M: Method>(
        transport: impl Connect + 'static,
        options: Options,
        params: &M::Params,
        request: &RequestOptions,
    ) -> Result<M::Result> {
        let client = Client::connect_with_options(transport, options)?;
        let result = client.with(request).request::<M>(params);
        client.close();
        result
    }
}

/// Connects to the MCP server at `url` (Streamable HTTP, falling back to legacy SSE), runs one
/// typed request, closes the session, and returns the result.
///
/// ```no_run
/// use umcp::types::{CallTool, CallToolRequestParams};
///
/// # fn main() -> umcp::Result<()> {
/// let params = CallToolRequestParams::new("echo")
///     .with_arguments(serde_json::json!({ "message": "hi" }).as_object().cloned().unwrap_or_default());
/// let result = umcp::one_shot::<CallTool>("http://127.0.0.1:3001/mcp", &params)?;
/// log::info!("{}", result.text());
/// # Ok(()) }
/// ```
///
/// # Errors
///
/// As [`Client::one_shot`].
#[cfg(feature = "http")]
pub fn one_shot<M: Method>(url: &str, params: &M::Params) -> Result<M::Result> {
    Client::one_shot::<M>(
        crate::transport::http::HttpConfig::new(url),
        Options::default(),
        params,
        &RequestOptions::default(),
    )
}
