//! The response cache across a change of authorization: results the server marked
//! `cacheScope: "private"` belong to the identity they were fetched for, and go when the
//! credentials' authorization context changes (a logout, a new grant), also when the answer
//! lands after the change; public ones stay.

#![cfg(feature = "http")]

use umcp_test_support::http_server;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use umcp::{Client, CredentialProvider, Era, HttpConfig};

/// Bearer credentials whose identity the test changes.
struct Switchable {
    context: AtomicU64,
}

impl CredentialProvider for Switchable {
    fn headers(&self, _url: &str) -> umcp::Result<Vec<(String, String)>> {
        let who = self.context.load(Ordering::SeqCst);
        Ok(vec![("Authorization".into(), format!("Bearer user-{who}"))])
    }

    fn authorization_context(&self) -> u64 {
        self.context.load(Ordering::SeqCst)
    }
}

/// A stateless server whose tool list is private and resource list public, both fresh for an
/// hour; it counts the requests of each method.
fn server() -> (http_server::Server, Arc<Mutex<HashMap<String, usize>>>) {
    let counts = Arc::new(Mutex::new(HashMap::<String, usize>::new()));
    let seen = Arc::clone(&counts);
    let server = http_server::serve(move |request, reply| {
        if request.method != "POST" {
            return reply.status(405, &[]);
        }
        let Some(method) = request.rpc_method() else {
            return reply.status(202, &[]);
        };
        *seen.lock().unwrap().entry(method.clone()).or_default() += 1;
        let result = match method.as_str() {
            "server/discover" => json!({
                "resultType": "complete", "supportedVersions": ["2026-07-28"],
                "capabilities": {"tools": {}, "resources": {}},
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "scoped", "version": "1"}},
            }),
            "tools/list" => json!({
                "resultType": "complete", "ttlMs": 3_600_000, "cacheScope": "private",
                "tools": [{"name": "mine", "inputSchema": {"type": "object"}}],
            }),
            "resources/list" => json!({
                "resultType": "complete", "ttlMs": 3_600_000, "cacheScope": "public",
                "resources": [{"uri": "file:///shared", "name": "shared"}],
            }),
            _ => return reply.status(202, &[]),
        };
        let answer = json!({"jsonrpc": "2.0", "id": request.rpc_id(), "result": result});
        reply.json(200, &[], &answer.to_string());
    });
    (server, counts)
}

#[test]
fn a_change_of_authorization_drops_private_results_and_keeps_public_ones() {
    let (server, counts) = server();
    let count = |method: &str| counts.lock().unwrap().get(method).copied().unwrap_or(0);
    let credentials = Arc::new(Switchable {
        context: AtomicU64::new(1),
    });
    let config = HttpConfig::new(server.url("/mcp")).credentials(credentials.clone());
    let client = Client::connect(config).expect("connect");
    assert_eq!(client.era(), Era::Modern);
    for _ in 0..2 {
        assert_eq!(client.list_tools(None).expect("tools").tools.len(), 1);
        assert_eq!(
            client
                .list_resources(None)
                .expect("resources")
                .resources
                .len(),
            1
        );
    }
    assert_eq!(
        (count("tools/list"), count("resources/list")),
        (1, 1),
        "cached"
    );

    // Another identity: the private tool list is asked for again, the public list is not.
    credentials.context.store(2, Ordering::SeqCst);
    client.list_tools(None).expect("tools");
    client.list_resources(None).expect("resources");
    assert_eq!((count("tools/list"), count("resources/list")), (2, 1));
    // Under the same identity, both are served from the cache again.
    client.list_tools(None).expect("tools");
    assert_eq!(count("tools/list"), 2);
}

/// A stateless server whose private tool list names the caller (`tool-of-user-N`, from the
/// bearer token), fresh for an hour. The first `tools/list` of user 1 is held until the test
/// lets it go: it tells `arrived`, then waits for `release`.
fn slow_server(
    arrived: mpsc::Sender<()>,
    release: mpsc::Receiver<()>,
) -> (http_server::Server, Arc<Mutex<Vec<String>>>) {
    let asked = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&asked);
    let release = Mutex::new(release);
    let held = AtomicBool::new(false);
    let server = http_server::serve(move |request, reply| {
        if request.method != "POST" {
            return reply.status(405, &[]);
        }
        let Some(method) = request.rpc_method() else {
            return reply.status(202, &[]);
        };
        let who = request
            .header("authorization")
            .unwrap_or_default()
            .replace("Bearer ", "");
        let result = match method.as_str() {
            "server/discover" => json!({
                "resultType": "complete", "supportedVersions": ["2026-07-28"],
                "capabilities": {"tools": {}, "resources": {}},
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "scoped", "version": "1"}},
            }),
            "tools/list" => {
                seen.lock().unwrap().push(who.clone());
                if who == "user-1" && !held.swap(true, Ordering::SeqCst) {
                    arrived.send(()).unwrap();
                    let _ = release
                        .lock()
                        .unwrap()
                        .recv_timeout(Duration::from_secs(20));
                }
                json!({
                    "resultType": "complete", "ttlMs": 3_600_000, "cacheScope": "private",
                    "tools": [{"name": format!("tool-of-{who}"), "inputSchema": {"type": "object"}}],
                })
            }
            "resources/list" => json!({"resultType": "complete", "resources": []}),
            _ => return reply.status(202, &[]),
        };
        let answer = json!({"jsonrpc": "2.0", "id": request.rpc_id(), "result": result});
        reply.json(200, &[], &answer.to_string());
    });
    (server, asked)
}

fn tool_name(client: &Client) -> String {
    client.list_tools(None).expect("tools").tools[0]
        .name
        .clone()
}

/// A private result fetched for user 1 that lands after the credentials became user 2's
/// (another request having seen the change meanwhile) is not stored: user 2 gets their own.
#[test]
fn a_private_result_landing_after_a_change_of_authorization_is_not_kept_for_the_next_identity() {
    let (arrived, arrival) = mpsc::channel();
    let (release, released) = mpsc::channel();
    let (server, asked) = slow_server(arrived, released);
    let credentials = Arc::new(Switchable {
        context: AtomicU64::new(1),
    });
    let config = HttpConfig::new(server.url("/mcp")).credentials(credentials.clone());
    let client = Client::connect(config).expect("connect");
    assert_eq!(client.era(), Era::Modern);
    std::thread::scope(|scope| {
        let first = scope.spawn(|| tool_name(&client));
        arrival
            .recv_timeout(Duration::from_secs(20))
            .expect("user 1's listing arrived");
        credentials.context.store(2, Ordering::SeqCst);
        client.list_resources(None).expect("a request under user 2");
        release.send(()).unwrap();
        assert_eq!(first.join().unwrap(), "tool-of-user-1");
    });
    assert_eq!(tool_name(&client), "tool-of-user-2");
    assert_eq!(tool_name(&client), "tool-of-user-2", "user 2's own, cached");
    assert_eq!(*asked.lock().unwrap(), ["user-1", "user-2"]);
}

/// Credentials whose identity changes, once armed, as the next request's headers are made:
/// after the client read the context it sends under.
struct ChangingAsItSends {
    context: AtomicU64,
    armed: AtomicBool,
}

impl CredentialProvider for ChangingAsItSends {
    fn headers(&self, _url: &str) -> umcp::Result<Vec<(String, String)>> {
        if self.armed.swap(false, Ordering::SeqCst) {
            self.context.store(2, Ordering::SeqCst);
        }
        let who = self.context.load(Ordering::SeqCst);
        Ok(vec![("Authorization".into(), format!("Bearer user-{who}"))])
    }

    fn authorization_context(&self) -> u64 {
        self.context.load(Ordering::SeqCst)
    }
}

/// A private result whose request was sent as the identity changed (user 2's token under the
/// context of user 1, read before sending) is not stored: when the context is user 1's again,
/// user 1 gets their own list, not user 2's.
#[test]
fn a_private_result_sent_across_a_change_of_authorization_is_not_kept() {
    let (arrived, _arrival) = mpsc::channel();
    let (release, released) = mpsc::channel();
    // User 1's listing is not held here.
    release.send(()).unwrap();
    let (server, asked) = slow_server(arrived, released);
    let credentials = Arc::new(ChangingAsItSends {
        context: AtomicU64::new(1),
        armed: AtomicBool::new(false),
    });
    let config = HttpConfig::new(server.url("/mcp")).credentials(credentials.clone());
    let client = Client::connect(config).expect("connect");
    credentials.armed.store(true, Ordering::SeqCst);
    assert_eq!(tool_name(&client), "tool-of-user-2");
    credentials.context.store(1, Ordering::SeqCst);
    assert_eq!(tool_name(&client), "tool-of-user-1");
    assert_eq!(*asked.lock().unwrap(), ["user-2", "user-1"]);
}
