//! The process-wide cache of era verdicts is a hint, never a trap: a server that changed era
//! since its verdict was cached (upgraded or replaced behind the same command line or URL) is
//! probed again, and a stateless server that stops speaking the version in use mid-session has
//! its verdict forgotten.

#[path = "common/log_capture.rs"]
mod log_capture;

use serde_json::json;
use umcp::jsonrpc::{ErrorCode, ErrorObject, Message};
use umcp::testing::{FakeServer, Fault};
use umcp::transport::Connect;
use umcp::types::{CallToolResult, Implementation, Tool};
use umcp::{Client, Era, Error};

/// A handshake-era server and the stateless-era server that replaces it behind the same name
/// (the key of the client's cached verdicts); they share what clients sent them.
fn handshake_then_stateless(name: &str) -> (FakeServer, FakeServer) {
    let tool = Tool::new("t", json!({"type": "object"}));
    let old = FakeServer::new(name)
        .with_tool(tool, |_, _| Ok(CallToolResult::default()))
        .with_era(Era::Legacy);
    let new = old
        .clone()
        .with_era(Era::Modern)
        .with_server_info(Implementation::new(name, "2"));
    (old, new)
}

/// The methods of the requests the client sent from the `from`-th message on, in order.
fn requests(server: &FakeServer, from: usize) -> Vec<String> {
    let received = server.received();
    let since = received.get(from..).unwrap_or_default();
    let methods = since.iter().filter_map(|m| match m {
        Message::Request(r) => Some(r.method.clone()),
        _ => None,
    });
    methods.collect()
}

/// Connects, returns the era, and closes.
fn connect_era(server: &FakeServer) -> Era {
    let client = Client::connect(server.clone()).expect("connect");
    let era = client.era();
    client.close();
    era
}

#[test]
fn a_cached_handshake_verdict_the_server_contradicts_is_probed_again() {
    let (old, new) = handshake_then_stateless("era-cache-turns-stateless");
    assert_eq!(connect_era(&old), Era::Legacy);
    assert_eq!(requests(&old, 0), ["server/discover", "initialize"]);

    // Upgraded behind the same name: the cached verdict says `initialize`, which is refused;
    // the verdict is forgotten and a fresh connection probes.
    let from = new.received().len();
    let client = Client::connect(new.clone()).expect("connect after the upgrade");
    assert_eq!(client.era(), Era::Modern);
    assert_eq!(client.server_info().version, "2");
    client
        .list_tools(None)
        .expect("tools/list in the stateless era");
    client.close();
    assert_eq!(
        requests(&new, from),
        ["initialize", "server/discover", "tools/list"]
    );

    // The new verdict is cached in turn: no more `initialize`.
    let from = new.received().len();
    assert_eq!(connect_era(&new), Era::Modern);
    assert_eq!(requests(&new, from), ["server/discover"]);
}

#[test]
fn a_cached_stateless_verdict_falls_back_when_the_server_went_back_to_the_handshake() {
    let (old, new) = handshake_then_stateless("era-cache-turns-handshake");
    assert_eq!(connect_era(&new), Era::Modern);

    // Replaced by a handshake-era server: the cached verdict still sends `server/discover`,
    // whose refusal now means `initialize` on the same connection, as under `Auto`.
    let from = old.received().len();
    let client = Client::connect(old.clone()).expect("connect after the change");
    assert_eq!(client.era(), Era::Legacy);
    assert_eq!(client.protocol_version(), "2025-11-25");
    client.close();
    assert_eq!(requests(&old, from), ["server/discover", "initialize"]);

    // And the verdict is now the handshake: `initialize` straight away.
    let from = old.received().len();
    assert_eq!(connect_era(&old), Era::Legacy);
    assert_eq!(requests(&old, from), ["initialize"]);
}

#[test]
fn an_unsupported_version_mid_session_is_reported_and_forgets_the_verdict() {
    log_capture::capture_logs();
    let (old, new) = handshake_then_stateless("era-cache-drops-version");
    let refused = ErrorObject::new(ErrorCode::UNSUPPORTED_PROTOCOL_VERSION, "not any more")
        .with_data(json!({"supported": ["2025-11-25"], "requested": "2026-07-28"}));
    let new = new.with_fault("tools/list", Fault::Error(refused));
    let client = Client::connect(new.clone()).expect("connect");
    assert_eq!(client.era(), Era::Modern);
    let error = client.list_tools(None).expect_err("the version is refused");
    let Error::Rpc(ref object) = error else {
        panic!("expected the server's error, got {error:?}");
    };
    assert_eq!(object.code, ErrorCode::UNSUPPORTED_PROTOCOL_VERSION);
    let data = error
        .unsupported_protocol_version()
        .expect("the error's data");
    assert_eq!(data.supported, ["2025-11-25"]);
    // No version in common: sent once, not again at some other version.
    assert_eq!(
        requests(&new, 0),
        ["server/discover", "tools/list"],
        "sent once"
    );
    client.close();
    let name = new.describe();
    let forgotten = log_capture::logged(&format!("era verdict for {name} forgotten"));
    assert_eq!(forgotten.len(), 1, "{:?}", log_capture::umcp_lines());

    // The next connection probes afresh and finds the handshake era.
    let from = old.received().len();
    assert_eq!(connect_era(&old), Era::Legacy);
    assert_eq!(requests(&old, from), ["server/discover", "initialize"]);
}

/// A store of the application's own, as another process would find it: a map.
#[derive(Default)]
struct Store(std::sync::Mutex<std::collections::HashMap<String, umcp::ProtocolMode>>);

impl umcp::VerdictStore for Store {
    fn load(&self, server: &str) -> Option<umcp::ProtocolMode> {
        self.0.lock().unwrap().get(server).cloned()
    }
    fn save(&self, server: &str, verdict: &umcp::ProtocolMode) {
        self.0
            .lock()
            .unwrap()
            .insert(server.to_owned(), verdict.clone());
    }
    fn forget(&self, server: &str) {
        self.0.lock().unwrap().remove(server);
    }
}

/// Connects with `store` as the verdict store; the era.
fn connect_with(server: &FakeServer, store: &std::sync::Arc<Store>) -> Era {
    let options = umcp::Options::default().with_verdict_store(store.clone());
    let client = Client::connect_with_options(server.clone(), options).expect("connect");
    let era = client.era();
    client.close();
    era
}

#[test]
fn a_verdict_store_given_by_the_application_saves_the_probe_and_follows_a_change() {
    let (old, new) = handshake_then_stateless("era-cache-given-store");
    let store = std::sync::Arc::new(Store::default());
    assert_eq!(connect_with(&old, &store), Era::Legacy);
    assert_eq!(requests(&old, 0), ["server/discover", "initialize"]);
    let key = old.describe();
    assert_eq!(
        umcp::VerdictStore::load(&*store, &key),
        Some(umcp::ProtocolMode::Legacy),
        "the verdict went to the given store"
    );

    // Another client with the same store, as another process would be: no probe at all.
    let from = old.received().len();
    assert_eq!(connect_with(&old, &store), Era::Legacy);
    assert_eq!(requests(&old, from), ["initialize"]);

    // The server changed era meanwhile: the verdict is forgotten and the server probed.
    let from = new.received().len();
    assert_eq!(connect_with(&new, &store), Era::Modern);
    assert_eq!(requests(&new, from), ["initialize", "server/discover"]);
    assert_eq!(
        umcp::VerdictStore::load(&*store, &key),
        Some(umcp::ProtocolMode::modern())
    );
}
