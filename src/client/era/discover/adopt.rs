//! A stateless server taken at its `server/discover` word: the version the connection
//! speaks, and the description `initialize` would have given.

use std::sync::Arc;

use serde_json::Value;

use crate::jsonrpc::decode_value;
use crate::transport::SessionEvent;
use crate::types::{DiscoverResult, Implementation, InitializeResult, META_SERVER_INFO};

use super::super::session::Shared;
use super::super::state::Phase;

/// Makes the discover result the connection's description, as `initialize` would have.
pub(super) fn adopt(shared: &Shared, result: DiscoverResult, version: &str) {
    speak(shared, version);
    let server_info = server_info(result.meta.as_ref().and_then(|m| m.get(META_SERVER_INFO)))
        .unwrap_or_else(|| Implementation::new("", ""));
    log::debug!(
        "discovered {} {} over {} (protocol {version})",
        server_info.name,
        server_info.version,
        shared.transport.kind()
    );
    let capabilities = serde_json::to_value(&result.capabilities).unwrap_or(Value::Null);
    let mut init = InitializeResult::new(version, server_info);
    init.capabilities = result.capabilities;
    init.instructions = result.instructions;
    init.meta = result.meta;
    if let Ok(mut slot) = shared.capabilities.write() {
        *slot = capabilities;
    }
    if let Ok(mut slot) = shared.init.write() {
        *slot = Some(Arc::new(init));
    }
    // As set up as a stateless connection gets: a server unreachable from now on is gone.
    shared.transport.session_event(SessionEvent::Ready);
}

/// Makes `version` the stateless version the connection speaks: in every request's `_meta`
/// and headers, and in what the client reports.
pub(super) fn speak(shared: &Shared, version: &str) {
    shared.era.set_phase(Phase::Modern(version.to_owned()));
    if let Ok(mut slot) = shared.core.protocol_version.write() {
        version.clone_into(&mut slot);
    }
}

/// Reads `io.modelcontextprotocol/serverInfo`.
fn server_info(value: Option<&Value>) -> Option<Implementation> {
    value.and_then(|v| decode_value(v).ok())
}
