//! The transport as the client sees it: in the stateless era every request gets its `_meta`
//! and its routing headers here, on the one path all requests take.

use std::sync::Arc;
use std::time::Instant;

use crate::error::{Error, Result};
use crate::jsonrpc::{Message, Request, RequestId};
use crate::sync::lock;
use crate::transport::{SessionEvent, Transport};

use super::meta;
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
        let Some(version) = self.era.modern_version() else {
            // The tasks extension routes a task's requests by `Mcp-Name` over HTTP whichever
            // era carries them: servers serve it on handshake-era sessions too.
            if let (true, Message::Request(request)) = (self.era.http, message) {
                if let Some(name) = meta::task_route(&request.method, request.params.as_ref()) {
                    let mut headers = extra.to_vec();
                    headers.push(("Mcp-Name".to_owned(), name));
                    return self.inner.send_with_headers(message, deadline, &headers);
                }
            }
            return self.inner.send_with_headers(message, deadline, extra);
        };
        match message {
            Message::Request(request) => {
                let params = meta::stamp(
                    request.params.clone(),
                    &version,
                    &self.era.identity,
                    self.era.log_level(),
                );
                let mut headers = Vec::new();
                if self.era.http {
                    let tools = lock(&self.era.tool_headers);
                    headers = meta::headers(&request.method, params.as_ref(), &tools)
                        .map_err(Error::Config)?;
                    // Every stateless POST says its version, even one whose params are no
                    // object and so carry no `_meta` to take it from.
                    if !headers
                        .iter()
                        .any(|(name, _)| name == "MCP-Protocol-Version")
                    {
                        headers.push(("MCP-Protocol-Version".to_owned(), version.clone()));
                    }
                }
                headers.extend(extra.iter().cloned());
                let stamped = Message::Request(Request {
                    id: request.id.clone(),
                    method: request.method.clone(),
                    params,
                });
                self.inner.send_with_headers(&stamped, deadline, &headers)
            }
            // Stateless HTTP has no client notifications: closing a request's stream is its
            // cancellation, which `abandon` does.
            Message::Notification(notification) if self.era.http => {
                log::trace!("not sending `{}` over stateless HTTP", notification.method);
                Ok(())
            }
            other => self.inner.send_with_headers(other, deadline, extra),
        }
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
