//! The transport as the client sees it: in the stateless era every request gets its routing
//! headers here, on the one path all requests take (its `_meta` was stamped on the message by
//! the era that owns it, see [`wire`](super::wire)).

use std::sync::Arc;
use std::time::Instant;

use crate::error::Result;
use crate::jsonrpc::{Message, RequestId};
use crate::transport::{SessionEvent, Transport};

use super::state::EraState;

/// Wraps the connection's transport; passes everything through in the handshake era.
pub(crate) struct EraTransport {
    inner: Box<dyn Transport>,
    era: Arc<EraState>,
}

impl EraTransport {
    pub(crate) fn new(inner: Box<dyn Transport>, era: Arc<EraState>) -> EraTransport {
        EraTransport { inner, era }
    }
}

impl Transport for EraTransport {
    fn send(&self, message: &Message, deadline: Instant) -> Result<()> {
        self.send_with_headers(message, deadline, &[])
    }

    fn send_with_headers(
        &self,
        message: &Message,
        deadline: Instant,
        extra: &[(String, String)],
    ) -> Result<()> {
        // Only Streamable HTTP has routing headers, and no notices in the stateless era.
        if !self.era.http {
            return self.inner.send_with_headers(message, deadline, extra);
        }
        self.send_http(message, deadline, extra)
    }

    fn send_waits_for_peer(&self) -> bool {
        self.inner.send_waits_for_peer()
    }

    fn abandon(&self, id: &RequestId) {
        self.inner.abandon(id);
    }

    fn session_event(&self, event: SessionEvent<'_>) {
        self.inner.session_event(event);
    }

    fn close(&self) {
        self.inner.close();
    }

    fn abort(&self) {
        self.inner.abort();
    }

    fn kind(&self) -> &'static str {
        self.inner.kind()
    }

    fn authorization_context(&self) -> u64 {
        self.inner.authorization_context()
    }
}

impl EraTransport {
    /// Sends over Streamable HTTP with the routing headers of the era spoken.
    #[cfg(feature = "http")]
    fn send_http(
        &self,
        message: &Message,
        deadline: Instant,
        extra: &[(String, String)],
    ) -> Result<()> {
        let Some(version) = self.era.modern_version() else {
            // The tasks extension routes a task's requests by `Mcp-Name` over HTTP whichever
            // era carries them: servers serve it on handshake-era sessions too.
            if let Message::Request(request) = message {
                if let Some(name) =
                    super::headers::task_route(&request.method, request.params.as_ref())
                {
                    let mut headers = extra.to_vec();
                    headers.push(("Mcp-Name".to_owned(), name));
                    return self.inner.send_with_headers(message, deadline, &headers);
                }
            }
            return self.inner.send_with_headers(message, deadline, extra);
        };
        match message {
            Message::Request(request) => {
                let tools = crate::sync::lock(&self.era.tool_headers);
                let params = request.params.as_ref();
                let mut headers = super::headers::headers(&request.method, params, &tools)
                    .map_err(crate::Error::Config)?;
                drop(tools);
                // Every stateless POST says its version, even one whose params are no
                // object and so carry no `_meta` to take it from.
                if !headers
                    .iter()
                    .any(|(name, _)| name == "MCP-Protocol-Version")
                {
                    headers.push(("MCP-Protocol-Version".to_owned(), version));
                }
                headers.extend(extra.iter().cloned());
                self.inner.send_with_headers(message, deadline, &headers)
            }
            // Stateless HTTP has no client notifications: closing a request's stream is its
            // cancellation, which `abandon` does.
            Message::Notification(notification) => {
                log::trace!("not sending `{}` over stateless HTTP", notification.method);
                Ok(())
            }
            other => self.inner.send_with_headers(other, deadline, extra),
        }
    }

    /// Without the `http` feature no transport of the crate speaks Streamable HTTP: one that
    /// says it does is passed everything as it is.
    #[cfg(not(feature = "http"))]
    fn send_http(
        &self,
        message: &Message,
        deadline: Instant,
        extra: &[(String, String)],
    ) -> Result<()> {
        self.inner.send_with_headers(message, deadline, extra)
    }
}
