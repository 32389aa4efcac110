//! What the client tells about its era, and the single-round request for callers who drive
//! input rounds themselves.

use serde_json::Value;

use crate::error::Result;

use super::era::session::CallSpec;
use super::era::state::{Era, ProtocolMode};
use super::{Client, RequestOptions};

impl Client {
    /// The protocol era the connection speaks: [`Era::Legacy`] after `initialize`,
    /// [`Era::Modern`] after `server/discover`.
    ///
    /// See the example on [`Client::server_info`].
    pub fn era(&self) -> Era {
        self.shared.era.era()
    }

    /// The era verdict for this server, to hand to a later connection with
    /// [`Options::with_protocol_mode`](crate::Options::with_protocol_mode) so it skips the
    /// probe: [`ProtocolMode::Legacy`], or a pin to the stateless version in use.
    ///
    /// ```no_run
    /// use umcp::{Client, Options, StdioConfig};
    ///
    /// # fn main() -> umcp::Result<()> {
    /// # let client = umcp::Client::connect(umcp::StdioConfig::new("server"))?;
    /// let verdict = client.verdict();
    /// // A later connection to the same server skips the probe:
    /// let options = Options::default().with_protocol_mode(verdict);
    /// let again = Client::connect_with(StdioConfig::new("server"), options)?;
    /// # let _ = again;
    /// # Ok(()) }
    /// ```
    pub fn verdict(&self) -> ProtocolMode {
        match self.shared.era.modern_version() {
            Some(version) => ProtocolMode::Pinned(version),
            None => ProtocolMode::Legacy,
        }
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
    /// use umcp::RequestOptions;
    ///
    /// # fn main() -> umcp::Result<()> {
    /// # let client = umcp::Client::connect(umcp::StdioConfig::new("server"))?;
    /// let params = json!({ "name": "confirm_delete", "arguments": { "path": "/tmp/x" } });
    /// let result = client.request_once("tools/call", Some(params), &RequestOptions::default())?;
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
    pub fn request_once(
        &self,
        method: &str,
        params: Option<Value>,
        options: &RequestOptions,
    ) -> Result<Value> {
        let spec = CallSpec {
            method,
            params,
            options,
            handshake: false,
        };
        match self.shared.era.modern_version() {
            Some(_) => super::era::rounds::call_once(&self.shared, &spec),
            None => self.shared.call(spec)?.decode(method),
        }
    }
}
