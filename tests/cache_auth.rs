//! The response cache across a change of authorization: results the server marked
//! `cacheScope: "private"` belong to the identity they were fetched for, and go when the
//! credentials' authorization context changes (a logout, a new grant); public ones stay.

#![cfg(feature = "http")]

use umcp_test_support::http_server;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

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
