//! Requests by method type or by name, and notifications: the generic ways to reach a server
//! that the typed methods are built on, and the single-round request for callers who drive
//! input rounds themselves.

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::{Error, Result};
use crate::types::Method;

use super::engine::request_options::RequestOptions;
use super::era::call::call;
use super::era::rounds;
use super::era::session::CallSpec;
use super::handle::Client;
use super::with_options::WithOptions;

impl Client {
    /// Sends a typed request.
    ///
    /// The request goes out as given: what the named methods add is left out, such as
    /// running a tool that requires it as a task (`call_tool`). Use them where one exists;
    /// this is for requests they do not cover.
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// use umcp::types::{ListTools, PaginatedRequestParams};
    /// use umcp::RequestOptions;
    ///
    /// # fn main() -> umcp::Result<()> {
    /// let client = umcp::Client::connect(umcp::StdioConfig::new("my-server"))?;
    /// let page = client.request::<ListTools>(&PaginatedRequestParams::default())?;
    /// log::info!("{} tools on the first page", page.tools.len());
    /// // With per-call options:
    /// let options = RequestOptions::default().with_timeout(Duration::from_secs(5));
    /// let page = client.with(&options).request::<ListTools>(&PaginatedRequestParams::default())?;
    /// # let _ = page; Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Rpc`] when the server answers with an error, [`Error::Timeout`],
    /// [`Error::Closed`], or [`Error::Protocol`] when the result does not decode.
    pub fn request<M: Method>(&self, params: &M::Params) -> Result<M::Result> {
        self.with(&RequestOptions::default()).request::<M>(params)
    }

    /// Sends a request and decodes its result as `T`, parsing the response's result once,
    /// straight into `T`.
    pub(crate) fn request_as<T: DeserializeOwned>(
        &self,
        method: &str,
        params: Option<Value>,
        options: &RequestOptions,
    ) -> Result<T> {
        self.screen_request(method, params.as_ref(), options)?;
        let spec = CallSpec {
            method,
            params,
            options,
            handshake: false,
        };
        call(&self.session, spec)?.decode(method)
    }

    /// Sends any request and returns its raw result.
    ///
    /// ```no_run
    /// use serde_json::json;
    ///
    /// # fn main() -> umcp::Result<()> {
    /// # let client = umcp::Client::connect(umcp::StdioConfig::new("server"))?;
    /// // A method this crate has no type for:
    /// let result = client.request_raw("vendor/stats", Some(json!({ "window": "1h" })))?;
    /// log::info!("{result}");
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Client::request`].
    pub fn request_raw(&self, method: &str, params: Option<Value>) -> Result<Value> {
        self.with(&RequestOptions::default())
            .request_raw(method, params)
    }

    /// Sends a request once and returns its raw result, without driving input rounds: in the
    /// stateless era a `tools/call`, `prompts/get` or `resources/read` may return an
    /// `input_required` result (decode it as
    /// [`InputRequiredResult`](crate::types::InputRequiredResult)); retry it yourself with
    /// `inputResponses` and the unchanged `requestState` added to the params. In the
    /// handshake era this is [`Client::request_raw`].
    ///
    /// ```no_run
    /// use serde_json::json;
    /// use umcp::types::InputRequiredResult;
    ///
    /// # fn main() -> umcp::Result<()> {
    /// # let client = umcp::Client::connect(umcp::StdioConfig::new("server"))?;
    /// let params = json!({ "name": "confirm_delete", "arguments": { "path": "/tmp/x" } });
    /// let result = client.request_once("tools/call", Some(params))?;
    /// if result["resultType"] == "input_required" {
    ///     let asked: InputRequiredResult = serde_json::from_value(result)
    ///         .map_err(|e| umcp::Error::Protocol(e.to_string()))?;
    ///     log::info!("the server asks for {:?}", asked.input_requests);
    /// }
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Client::request_raw`].
    pub fn request_once(&self, method: &str, params: Option<Value>) -> Result<Value> {
        self.with(&RequestOptions::default())
            .request_once(method, params)
    }

    /// Sends a notification.
    ///
    /// ```no_run
    /// use serde_json::json;
    ///
    /// # fn main() -> umcp::Result<()> {
    /// # let client = umcp::Client::connect(umcp::StdioConfig::new("server"))?;
    /// client.notify("notifications/roots/list_changed", None)?;
    /// client.notify("vendor/heartbeat", Some(json!({ "at": 1 })))?;
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Closed`], or a transport error when it could not be delivered.
    pub fn notify(&self, method: &str, params: Option<Value>) -> Result<()> {
        self.session.conn.notify(method, params)
    }
}

impl WithOptions<'_> {
    /// [`Client::request`] with these options.
    ///
    /// See the example on [`Client::request`].
    ///
    /// # Errors
    ///
    /// As [`Client::request`].
    pub fn request<M: Method>(&self, params: &M::Params) -> Result<M::Result> {
        let params = serde_json::to_value(params)
            .map_err(|e| Error::Config(format!("unencodable params for {}: {e}", M::METHOD)))?;
        let params = (!params.is_null()).then_some(params);
        self.client.request_as(M::METHOD, params, self.options)
    }

    /// [`Client::request_raw`] with these options.
    ///
    /// See the example on [`WithOptions`].
    ///
    /// # Errors
    ///
    /// As [`Client::request_raw`].
    pub fn request_raw(&self, method: &str, params: Option<Value>) -> Result<Value> {
        self.client.request_as(method, params, self.options)
    }

    /// [`Client::request_once`] with these options.
    ///
    /// See the example on [`Client::request_once`].
    ///
    /// # Errors
    ///
    /// As [`Client::request_once`].
    pub fn request_once(&self, method: &str, params: Option<Value>) -> Result<Value> {
        self.client
            .screen_request(method, params.as_ref(), self.options)?;
        let spec = CallSpec {
            method,
            params,
            options: self.options,
            handshake: false,
        };
        match self.client.session.era.is_modern() {
            true => rounds::call_once(&self.client.session, &spec),
            false => call(&self.client.session, spec)?.decode(method),
        }
    }
}
