//! Questions about an [`Error`] that MCP's own error codes answer: -32020 (`HeaderMismatch`),
//! -32021 (`MissingRequiredClientCapability`), -32022 (`UnsupportedProtocolVersion`), -32042
//! (`URLElicitationRequiredError`), and a missing resource (-32002, or -32602 from 2026-07-28).

use serde_json::Value;

use crate::error::Error;
use crate::jsonrpc::{ErrorCode, ErrorObject, Message, Payload};
use crate::types::{ElicitRequestUrlParams, UnsupportedProtocolVersionData};

impl Error {
    /// The JSON-RPC error the server answered with: an [`Error::Rpc`], or the JSON-RPC body
    /// of an [`Error::Http`] (stateless servers send their errors with HTTP 400).
    ///
    /// See the example on [`Error`].
    pub fn rpc_error(&self) -> Option<ErrorObject> {
        match self {
            Error::Rpc(object) => Some(object.clone()),
            Error::Http(http) => match Payload::decode(&http.body) {
                Ok(Payload::Single(Message::Response(response))) => response.result.err(),
                _ => None,
            },
            _ => None,
        }
    }

    /// True for -32020 `HeaderMismatch`: the HTTP routing headers disagreed with the body.
    /// A `tools/call` whose POST the server refused so (HTTP 400) is re-sent once, after the
    /// tools are listed again; one answered so on a stream, where the tool may have started,
    /// comes back as this error.
    ///
    /// See the example on [`Error`].
    pub fn is_header_mismatch(&self) -> bool {
        self.code() == Some(ErrorCode::HEADER_MISMATCH)
    }

    /// For -32021 `MissingRequiredClientCapability`: the capabilities the request needs. The
    /// same for the drafts' -32003 when its `data.requiredCapabilities` is an object, as the
    /// tasks extension's servers built from them send it.
    ///
    /// See the example on [`Error`].
    pub fn missing_client_capabilities(&self) -> Option<Value> {
        let error = self.rpc_error().filter(|e| {
            e.code == ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY
                // The drafts numbered it -32003, and servers built from them still send that:
                // in the implementation-defined range, so only with the data that makes it
                // unambiguous.
                || (e.code == ErrorCode::TASKS_MISSING_REQUIRED_CLIENT_CAPABILITY
                    && e.data
                        .as_ref()
                        .is_some_and(|d| d["requiredCapabilities"].is_object()))
        })?;
        Some(
            error
                .data
                .and_then(|d| d.get("requiredCapabilities").cloned())
                .unwrap_or(Value::Null),
        )
    }

    /// For -32022 `UnsupportedProtocolVersion`: the versions the server speaks and the one
    /// that was asked for.
    ///
    /// See the example on [`Error`].
    pub fn unsupported_protocol_version(&self) -> Option<UnsupportedProtocolVersionData> {
        let error = self
            .rpc_error()
            .filter(|e| e.code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION)?;
        Some(
            error
                .data
                .and_then(|d| crate::jsonrpc::decode_value(&d).ok())
                .unwrap_or_default(),
        )
    }

    /// For -32042 `URLElicitationRequiredError` (2025-11-25): the pages the user has to visit
    /// before the request can succeed. Show each one's message and full URL, let the user
    /// decide whether to open it, and send the request again afterwards (the `umcp` tool
    /// prints them in full and opens none). Entries that are not well-formed URL elicitations
    /// are left out.
    ///
    /// ```
    /// use serde_json::json;
    /// use umcp::jsonrpc::{ErrorCode, ErrorObject};
    ///
    /// let error = umcp::Error::Rpc(
    ///     ErrorObject::new(ErrorCode::URL_ELICITATION_REQUIRED, "authorization needed").with_data(
    ///         json!({ "elicitations": [{
    ///             "mode": "url",
    ///             "elicitationId": "e-1",
    ///             "url": "https://example.com/connect",
    ///             "message": "Connect your account first."
    ///         }] }),
    ///     ),
    /// );
    /// let pages = error.url_elicitations_required().expect("-32042");
    /// assert_eq!(pages[0].url, "https://example.com/connect");
    /// assert_eq!(pages[0].elicitation_id.as_deref(), Some("e-1"));
    /// ```
    pub fn url_elicitations_required(&self) -> Option<Vec<ElicitRequestUrlParams>> {
        let error = self
            .rpc_error()
            .filter(|e| e.code == ErrorCode::URL_ELICITATION_REQUIRED)?;
        let entries = match error.data.as_ref().and_then(|d| d.get("elicitations")) {
            Some(Value::Array(entries)) => entries.as_slice(),
            _ => &[],
        };
        Some(
            entries
                .iter()
                .filter(|e| e.get("mode").is_none_or(|m| m == "url"))
                .filter_map(|e| crate::jsonrpc::decode_value(e).ok())
                .collect(),
        )
    }

    /// True when a `resources/read` failed because the resource does not exist: -32002 in
    /// the handshake era, -32602 from 2026-07-28 on (which servers also use for other bad
    /// params, so ask this only about `resources/read`).
    ///
    /// See the example on [`Error`].
    pub fn is_resource_not_found(&self) -> bool {
        matches!(
            self.code(),
            Some(ErrorCode::RESOURCE_NOT_FOUND | ErrorCode::INVALID_PARAMS)
        )
    }

    fn code(&self) -> Option<ErrorCode> {
        self.rpc_error().map(|e| e.code)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::HttpError;
    use serde_json::json;

    #[test]
    fn stateless_errors_are_read_from_rpc_and_http_bodies() {
        let data = json!({"supported": ["2026-07-28"], "requested": "2030-01-01"});
        let rpc = Error::Rpc(
            ErrorObject::new(ErrorCode::UNSUPPORTED_PROTOCOL_VERSION, "no").with_data(data),
        );
        let versions = rpc.unsupported_protocol_version().expect("-32022");
        assert_eq!(versions.supported, ["2026-07-28"]);
        assert_eq!(versions.requested, "2030-01-01");
        let body = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32020,"message":"x"}}"#;
        let http = Error::Http(Box::new(HttpError {
            status: 400,
            url: "http://h/mcp".into(),
            body: body.into(),
            ..HttpError::default()
        }));
        assert!(http.is_header_mismatch());
        assert!(http.unsupported_protocol_version().is_none());
        let missing = Error::Rpc(
            ErrorObject::new(ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY, "no")
                .with_data(json!({"requiredCapabilities": {"elicitation": {}}})),
        );
        assert_eq!(
            missing.missing_client_capabilities(),
            Some(json!({"elicitation": {}}))
        );
        for code in [ErrorCode::RESOURCE_NOT_FOUND, ErrorCode::INVALID_PARAMS] {
            assert!(Error::Rpc(ErrorObject::new(code, "gone")).is_resource_not_found());
        }
        assert!(
            !Error::Rpc(ErrorObject::new(ErrorCode::INTERNAL_ERROR, "x")).is_resource_not_found()
        );
    }

    #[test]
    fn url_elicitations_keep_the_well_formed_entries() {
        let page = json!({"mode": "url", "elicitationId": "a", "url": "https://a", "message": "m"});
        let data = json!({"elicitations": [page, {"mode": "form", "message": "x"}, {"url": 3}]});
        let error =
            Error::Rpc(ErrorObject::new(ErrorCode::URL_ELICITATION_REQUIRED, "go").with_data(data));
        let pages = error.url_elicitations_required().expect("-32042");
        assert_eq!(pages.len(), 1);
        assert_eq!(
            (pages[0].url.as_str(), pages[0].message.as_str()),
            ("https://a", "m")
        );
        let bare = Error::Rpc(ErrorObject::new(ErrorCode::URL_ELICITATION_REQUIRED, "go"));
        assert_eq!(bare.url_elicitations_required(), Some(Vec::new()));
        let other = Error::Rpc(ErrorObject::new(ErrorCode::INTERNAL_ERROR, "x"));
        assert!(other.url_elicitations_required().is_none());
    }
}
