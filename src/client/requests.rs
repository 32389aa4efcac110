//! Requests by method type or by name, and notifications: the generic ways to reach a server
//! that the typed methods are built on.

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::{Error, Result};
use crate::types::Method;

use super::era::session::CallSpec;
use super::{Client, RequestOptions};

impl Client {
    /// Sends a typed request with default options.
    ///
    /// The request goes out as given: what the named methods add is left out, such as
    /// running a tool that requires it as a task (`call_tool`). Use them where one exists;
    /// this is for requests they do not cover.
    ///
    /// ```no_run
    /// # fn main() -> umcp::Result<()> {
    /// use umcp::types::{ListTools, PaginatedRequestParams};
    /// let client = umcp::Client::connect(umcp::StdioConfig::new("my-server"))?;
    /// let page = client.request::<ListTools>(&PaginatedRequestParams::default())?;
    /// # let _ = page; Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Rpc`] when the server answers with an error, [`Error::Timeout`],
    /// [`Error::Closed`], or [`Error::Protocol`] when the result does not decode.
    pub fn request<M: Method>(&self, params: &M::Params) -> Result<M::Result> {
        self.request_with::<M>(params, &RequestOptions::default())
    }

    /// Sends a typed request with per-request options.
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// use umcp::types::{ListTools, PaginatedRequestParams};
    /// use umcp::RequestOptions;
    ///
    /// # fn main() -> umcp::Result<()> {
    /// # let client = umcp::Client::connect(umcp::StdioConfig::new("server"))?;
    /// let options = RequestOptions::default().with_timeout(Duration::from_secs(5));
    /// let page = client.request_with::<ListTools>(&PaginatedRequestParams::default(), &options)?;
    /// log::info!("{} tools on the first page", page.tools.len());
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Client::request`], plus [`Error::Cancelled`].
    pub fn request_with<M: Method>(
        &self,
        params: &M::Params,
        options: &RequestOptions,
    ) -> Result<M::Result> {
        let params = serde_json::to_value(params)
            .map_err(|e| Error::Config(format!("unencodable params for {}: {e}", M::METHOD)))?;
        let params = (!params.is_null()).then_some(params);
        self.request_as(M::METHOD, params, options)
    }

    /// Sends a request and decodes its result as `T`, parsing the response's result once,
    /// straight into `T`.
    pub(crate) fn request_as<T: DeserializeOwned>(
        &self,
        method: &str,
        params: Option<Value>,
        options: &RequestOptions,
    ) -> Result<T> {
        self.shared
            .call(CallSpec {
                method,
                params,
                options,
                handshake: false,
            })?
            .decode(method)
    }

    /// Sends any request and returns its raw result.
    ///
    /// ```no_run
    /// use serde_json::json;
    /// use umcp::RequestOptions;
    ///
    /// # fn main() -> umcp::Result<()> {
    /// # let client = umcp::Client::connect(umcp::StdioConfig::new("server"))?;
    /// // A method this crate has no type for:
    /// let params = json!({ "window": "1h" });
    /// let result = client.request_raw("vendor/stats", Some(params), &RequestOptions::default())?;
    /// log::info!("{result}");
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Client::request_with`].
    pub fn request_raw(
        &self,
        method: &str,
        params: Option<Value>,
        options: &RequestOptions,
    ) -> Result<Value> {
        self.request_as(method, params, options)
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
        self.shared.notify(method, params)
    }
}
