//! How the era is told over HTTP and what is done when it changes, against mocks of the
//! conformance suite's unreleased `version-backcompat` (with `src/version-compat.ts`) and
//! `session-renegotiation-404` scenarios: only a 400 whose JSON body is the probe's own
//! stateless error means the stateless era; the fallback `initialize` asks for 2025-11-25; an
//! `initialize` refused with -32022 naming a stateless version falls forward; a cached
//! handshake verdict that fails is probed again.
//!
//! umcp probes with `server/discover`, as the released text allows; `version-backcompat`
//! expects the first modern request to be `tools/list` and refuses a correct
//! `server/discover` with -32020, which the released text reads as the stateless era, so its
//! mirror here says how umcp differs.

#![cfg(feature = "http")]

use umcp_test_support::http_server;
#[path = "common/scenario.rs"]
mod scenario;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::{json, Value};
use umcp::{Client, Era, Error, HttpConfig, Options, ProtocolMode};

/// How the mock refuses a modern request.
#[derive(Clone, Copy)]
enum Refusal {
    /// 400, `application/json`, the request's id, this code.
    Own(i64),
    /// 400, `application/json`, another id, -32020.
    OtherId,
    /// 400, `application/json`, a `null` id, -32020.
    NullId,
    /// 400, `text/plain`, the request's own -32020 as text.
    PlainText,
    /// 400 with no body.
    Empty,
}

/// A handshake-era server behind a modern-looking front: modern requests (those whose
/// `_meta` names 2026-07-28) get `refusal`; `initialize` and the rest are served at
/// 2025-11-25.
fn mock(refusal: Refusal) -> http_server::Server {
    http_server::serve(move |seen, reply| {
        let Some(reply) = scenario::base(&seen, reply) else {
            return;
        };
        let body = seen.json();
        let id = &body["id"];
        let modern =
            body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == "2026-07-28";
        if modern {
            let error = |id: &Value| {
                json!({"jsonrpc": "2.0", "id": id,
                       "error": {"code": -32020, "message": "Missing or mismatched headers"}})
                .to_string()
            };
            return match refusal {
                Refusal::Own(code) => scenario::refuse(reply, 400, id, code, "refused"),
                Refusal::OtherId => reply.json(400, &[], &error(&json!("other"))),
                Refusal::NullId => reply.json(400, &[], &error(&Value::Null)),
                Refusal::PlainText => reply.body(400, "text/plain", &[], &error(id)),
                Refusal::Empty => reply.status(400, &[]),
            };
        }
        let result = match body["method"].as_str().unwrap_or_default() {
            "initialize" => json!({
                "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                "serverInfo": {"name": "backcompat", "version": "1"},
            }),
            "tools/list" => json!({"tools": []}),
            _ => json!({}),
        };
        scenario::answer(reply, id, result)
    })
}

fn connect(server: &http_server::Server) -> umcp::Result<Client> {
    Client::connect_with_options(HttpConfig::new(server.url("/mcp")), Options::default())
}

#[test]
fn only_a_json_400_with_the_probes_id_and_a_stateless_code_is_the_stateless_era() {
    for code in [-32020, -32021, -32022] {
        let server = mock(Refusal::Own(code));
        // A stateless server's refusal, not a reason to fall back: a -32022 naming no
        // version this client speaks is an unsupported version.
        let outcome = connect(&server).map(drop);
        let stateless = match &outcome {
            Err(Error::Rpc(e)) => e.code.0 == code,
            Err(Error::Unsupported(umcp::Unsupported::Version { .. })) => code == -32022,
            _ => false,
        };
        assert!(stateless, "{code}: {outcome:?}");
        let methods = scenario::methods(&scenario::posts(&server));
        assert!(!methods.contains(&"initialize".to_owned()), "{methods:?}");
    }
    for refusal in [
        Refusal::Own(-32600),
        Refusal::OtherId,
        Refusal::NullId,
        Refusal::PlainText,
        Refusal::Empty,
    ] {
        let server = mock(refusal);
        let client = connect(&server).expect("the handshake era");
        assert_eq!(client.era(), Era::Legacy);
        client.close();
    }
}

#[test]
fn a_400_without_a_stateless_error_falls_back_to_initialize_at_2025_11_25() {
    // version-backcompat's checks 2 and 3: the fallback `initialize` asks for exactly
    // 2025-11-25 (never 2026-07-28), and a handshake-era `tools/list` follows it.
    let server = mock(Refusal::Own(-32600));
    let client = connect(&server).expect("connect");
    client.list_all_tools().expect("tools/list");
    client.close();
    let seen = scenario::posts(&server);
    let methods = scenario::methods(&seen);
    assert_eq!(
        methods[..2],
        ["server/discover", "initialize"],
        "{methods:?}"
    );
    assert_eq!(seen[1].json()["params"]["protocolVersion"], "2025-11-25");
    let listed = seen
        .iter()
        .find(|r| r.rpc_method().as_deref() == Some("tools/list"));
    let listed = listed.expect("tools/list").json();
    assert!(listed["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"].is_null());
}

#[test]
fn version_backcompat_discover_probe_differs_from_the_unreleased_tools_list_probe() {
    // The scenario's mock: a modern `tools/list` with the right headers gets -32600 (so that
    // a client probing with it falls back); any other modern request gets -32020.
    let server = http_server::serve(|seen, reply| {
        let Some(reply) = scenario::base(&seen, reply) else {
            return;
        };
        let body = seen.json();
        let probe = seen.header("mcp-method") == Some("tools/list")
            && seen.header("mcp-protocol-version") == Some("2026-07-28");
        let code = if probe { -32600 } else { -32020 };
        scenario::refuse(reply, 400, &body["id"], code, "refused")
    });
    let outcome = connect(&server).map(drop);
    // umcp's probe is `server/discover`, sent as a modern request with its headers; the
    // mock's -32020 is a recognised stateless error, so umcp does not fall back.
    assert!(
        matches!(&outcome, Err(Error::Rpc(e)) if e.code.0 == -32020),
        "{outcome:?}"
    );
    let seen = scenario::posts(&server);
    assert_eq!(seen[0].rpc_method().as_deref(), Some("server/discover"));
    assert_eq!(seen[0].header("mcp-method"), Some("server/discover"));
    assert_eq!(seen[0].header("mcp-protocol-version"), Some("2026-07-28"));
    assert!(!scenario::methods(&seen).contains(&"initialize".to_owned()));
}

/// A server that speaks only the stateless era: `server/discover` answers after `refusals`
/// probes refused with -32600; `initialize` is refused with -32022 naming 2026-07-28 (or, with
/// `plain`, with -32600).
fn modern_only(refusals: usize, plain: bool) -> (http_server::Server, Arc<AtomicUsize>) {
    let probes = Arc::new(AtomicUsize::new(0));
    let count = probes.clone();
    let server = http_server::serve(move |seen, reply| {
        let Some(reply) = scenario::base(&seen, reply) else {
            return;
        };
        let body = seen.json();
        let id = &body["id"];
        match body["method"].as_str().unwrap_or_default() {
            "server/discover" if count.fetch_add(1, Ordering::SeqCst) < refusals => {
                scenario::refuse(reply, 400, id, -32600, "Invalid Request")
            }
            "server/discover" => scenario::answer(
                reply,
                id,
                json!({"resultType": "complete", "supportedVersions": ["2026-07-28"],
                       "capabilities": {"tools": {}}, "ttlMs": 0, "cacheScope": "private"}),
            ),
            "initialize" if plain => scenario::refuse(reply, 400, id, -32600, "Invalid Request"),
            "initialize" => {
                let error = json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32022,
                    "message": "Unsupported protocol version",
                    "data": {"supported": ["2026-07-28"], "requested": "2025-11-25"}}});
                reply.json(400, &[], &error.to_string());
            }
            _ => scenario::answer(reply, id, json!({"resultType": "complete", "tools": []})),
        }
    });
    (server, probes)
}

#[test]
fn an_initialize_refused_with_a_stateless_version_falls_forward() {
    // The probe is refused as a handshake-era server would; `initialize` then names
    // 2026-07-28, and the same connection asks `server/discover` again.
    let (server, probes) = modern_only(1, false);
    let client = connect(&server).expect("fell forward");
    assert_eq!(client.era(), Era::Modern);
    assert_eq!(client.protocol_version(), "2026-07-28");
    client.list_all_tools().expect("tools/list");
    assert_eq!(probes.load(Ordering::SeqCst), 2);
    client.close();
    // Pinned to the handshake era by the user: the refusal stands.
    let (server, probes) = modern_only(1, false);
    let options = Options::default().with_protocol_mode(ProtocolMode::Legacy);
    let outcome =
        Client::connect_with_options(HttpConfig::new(server.url("/mcp")), options).map(drop);
    assert!(
        matches!(&outcome, Err(Error::Rpc(e)) if e.code.0 == -32022),
        "{outcome:?}"
    );
    assert_eq!(probes.load(Ordering::SeqCst), 0);
}

/// One URL whose server changes: `stage` 0 is a handshake-era server (modern requests
/// refused with -32600); 1 a stateless-only one refusing `initialize` plainly; 2 a
/// handshake-era server whose sessions end at the first request (404) and whose second
/// `initialize` is answered only while `renew` is set.
fn changing(stage: Arc<AtomicUsize>, renew: bool) -> http_server::Server {
    let initialized = Arc::new(AtomicUsize::new(0));
    let expired = Arc::new(AtomicUsize::new(0));
    http_server::serve(move |seen, reply| {
        let Some(reply) = scenario::base(&seen, reply) else {
            return;
        };
        let body = seen.json();
        let id = &body["id"];
        let method = body["method"].as_str().unwrap_or_default();
        let modern =
            body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == "2026-07-28";
        let stage = stage.load(Ordering::SeqCst);
        if stage == 1 {
            return match method {
                "initialize" => scenario::refuse(reply, 400, id, -32600, "Invalid Request"),
                "server/discover" => scenario::answer(
                    reply,
                    id,
                    json!({"resultType": "complete", "supportedVersions": ["2026-07-28"],
                           "capabilities": {"tools": {}}, "ttlMs": 0, "cacheScope": "private"}),
                ),
                _ => scenario::answer(reply, id, json!({"resultType": "complete", "tools": []})),
            };
        }
        if modern {
            return scenario::refuse(reply, 400, id, -32600, "Invalid Request");
        }
        let session = format!("session-{}", initialized.load(Ordering::SeqCst));
        match method {
            "initialize" if initialized.fetch_add(1, Ordering::SeqCst) > 0 && !renew => {
                scenario::refuse(reply, 400, id, -32600, "no new sessions")
            }
            "initialize" => {
                let result = json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                    "serverInfo": {"name": "changing", "version": "1"}});
                let body = json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string();
                let next = format!("session-{}", initialized.load(Ordering::SeqCst));
                reply.json(200, &[("mcp-session-id", &next)], &body);
            }
            _ if stage == 2 && expired.fetch_add(1, Ordering::SeqCst) == 0 => {
                let error = json!({"jsonrpc": "2.0", "id": id,
                                   "error": {"code": -32001, "message": "Session not found"}});
                reply.json(404, &[], &error.to_string());
            }
            _ => {
                let body = json!({"jsonrpc": "2.0", "id": id, "result": {"tools": []}});
                reply.json(200, &[("mcp-session-id", &session)], &body.to_string());
            }
        }
    })
}

/// The JSON-RPC methods of the last connection among `seen`: from its last `server/discover`
/// or `initialize` that opened one (the first POST after `mark`).
fn since(seen: &[http_server::Seen], mark: usize) -> Vec<String> {
    scenario::methods(&seen[mark..])
}

#[test]
fn a_cached_handshake_verdict_that_fails_is_probed_again() {
    let stage = Arc::new(AtomicUsize::new(0));
    let server = changing(stage.clone(), true);
    let url = server.url("/mcp");
    let connect = || Client::connect_with_options(HttpConfig::new(&url), Options::default());
    let mut seen = Vec::new();
    // Probed once: the handshake era, remembered for the URL.
    connect().expect("first").close();
    seen.extend(scenario::posts(&server));
    assert_eq!(since(&seen, 0)[..2], ["server/discover", "initialize"]);
    // The cached verdict skips the probe.
    let mark = seen.len();
    connect().expect("cached").close();
    seen.extend(scenario::posts(&server));
    assert_eq!(
        since(&seen, mark).first().map(String::as_str),
        Some("initialize")
    );
    // The server behind the URL now speaks only the stateless era: the cached verdict's
    // `initialize` fails, and the connection probes again.
    stage.store(1, Ordering::SeqCst);
    let mark = seen.len();
    let client = connect().expect("probed again");
    assert_eq!(client.era(), Era::Modern);
    client.close();
    seen.extend(scenario::posts(&server));
    assert_eq!(since(&seen, mark)[..2], ["initialize", "server/discover"]);
}

#[test]
fn session_renegotiation_404_starts_a_new_session_without_the_old_id() {
    // session-renegotiation-404 (2025-11-25 text): a 404 to a request carrying a session id
    // starts a new session with an `initialize` that carries none, and the request goes on.
    let stage = Arc::new(AtomicUsize::new(2));
    let server = changing(stage, true);
    let client =
        Client::connect_with_options(HttpConfig::new(server.url("/mcp")), Options::default())
            .expect("connect");
    client.list_all_tools().expect("after a new session");
    client.list_all_tools().expect("and on");
    client.close();
    let seen = scenario::posts(&server);
    let inits: Vec<_> = (seen.iter())
        .filter(|r| r.rpc_method().as_deref() == Some("initialize"))
        .collect();
    assert_eq!(inits.len(), 2);
    assert_eq!(inits[1].header("mcp-session-id"), None);
    let last = seen.last().expect("requests");
    assert_eq!(last.rpc_method().as_deref(), Some("tools/list"));
    assert_eq!(last.header("mcp-session-id"), Some("session-2"));
}

#[test]
fn a_refused_new_session_forgets_the_cached_verdict() {
    let stage = Arc::new(AtomicUsize::new(2));
    let server = changing(stage, false);
    let url = server.url("/mcp");
    let client =
        Client::connect_with_options(HttpConfig::new(&url), Options::default()).expect("first");
    assert!(
        client.list_all_tools().is_err(),
        "the new session was refused"
    );
    client.close();
    let _ = scenario::posts(&server);
    // Without the forgotten verdict the next connection would start with `initialize`.
    let outcome = Client::connect_with_options(HttpConfig::new(&url), Options::default());
    let seen = scenario::methods(&scenario::posts(&server));
    assert_eq!(
        seen.first().map(String::as_str),
        Some("server/discover"),
        "{outcome:?}"
    );
}
