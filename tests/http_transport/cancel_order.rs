//! A call cancelled while its request is still on its way to the server: the server hears of
//! the cancellation only after the request, and not at all of a request that never came.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};
use serde_json::{json, Value};
use umcp::transport::http::{CredentialProvider, HttpConfig};
use umcp::{CancelHandle, Client, Error, RequestOptions};

use crate::http_server::{serve, Server};
use crate::WAIT;

/// How long a cancellation sent too early is given to reach the server before the request is
/// let go: it is on its way as soon as the call is cancelled.
const EARLY: Duration = Duration::from_millis(300);

/// Credentials that hold the next POST once armed, as a token refresh would, until the test
/// lets it go: a request handed to a sending thread and not written out yet.
struct HoldNextPost {
    armed: AtomicBool,
    holding: Sender<()>,
    release: Receiver<bool>,
}

impl CredentialProvider for HoldNextPost {
    fn headers(&self, _url: &str) -> umcp::Result<Vec<(String, String)>> {
        Ok(Vec::new())
    }

    fn request_headers(&self, method: &str, _url: &str) -> umcp::Result<Vec<(String, String)>> {
        if method == "POST" && self.armed.swap(false, Ordering::SeqCst) {
            let _ = self.holding.send(());
            // `false`: the request fails before it is sent.
            if self.release.recv_timeout(WAIT * 2) != Ok(true) {
                return Err(Error::Protocol("no credentials".into()));
            }
        }
        Ok(Vec::new())
    }
}

/// A server whose `tools/call` is answered with JSON once a cancellation came (or after
/// [`WAIT`]); the receiver hears, of each, whether a cancellation came first.
fn server() -> (Server, Receiver<bool>) {
    let (cancelled_tx, cancelled) = crossbeam_channel::unbounded::<()>();
    let (answered_tx, answered) = crossbeam_channel::unbounded();
    let server = serve(move |seen, reply| {
        let body = seen.json();
        let answer = |result: Value| {
            json!({"jsonrpc": "2.0", "id": body["id"], "result": result}).to_string()
        };
        match (seen.method.as_str(), body["method"].as_str()) {
            ("POST", Some("initialize")) => reply.json(
                200,
                &[],
                &answer(json!({
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "held", "version": "1.0.0"}
                })),
            ),
            ("POST", Some("tools/call")) => {
                let _ = answered_tx.send(cancelled.recv_timeout(WAIT).is_ok());
                reply.json(200, &[], &answer(json!({"content": []})));
            }
            ("POST", Some("notifications/cancelled")) => {
                let _ = cancelled_tx.send(());
                reply.status(202, &[]);
            }
            ("POST", Some(_)) if !body["id"].is_null() => reply.json(200, &[], &answer(json!({}))),
            ("POST", _) => reply.status(202, &[]),
            _ => reply.status(405, &[]),
        }
    });
    (server, answered)
}

/// A client whose next POST (once `armed`) is held by its credentials; `holding` hears when.
fn client(server: &Server) -> (Client, Arc<HoldNextPost>, Receiver<()>, Sender<bool>) {
    let (holding_tx, holding) = crossbeam_channel::unbounded();
    let (release, release_rx) = crossbeam_channel::unbounded();
    let provider = Arc::new(HoldNextPost {
        armed: AtomicBool::new(false),
        holding: holding_tx,
        release: release_rx,
    });
    let config = HttpConfig::new(server.url("/mcp"))
        .standalone_stream(false)
        .credentials(provider.clone());
    let client = Client::connect(config).expect("connect");
    (client, provider, holding, release)
}

/// Calls `slow`, cancelled through its handle once its POST is held: returns at once.
fn cancelled_while_held(client: &Client, provider: &HoldNextPost, holding: Receiver<()>) {
    provider.armed.store(true, Ordering::SeqCst);
    let cancel = CancelHandle::new();
    let trigger = cancel.clone();
    let canceller = std::thread::spawn(move || {
        if holding.recv_timeout(WAIT).is_ok() {
            trigger.cancel();
        }
    });
    let started = Instant::now();
    let outcome = client
        .with(&RequestOptions::default().with_cancel(cancel))
        .call_tool("slow", json!({}));
    let elapsed = started.elapsed();
    canceller.join().expect("the canceller thread");
    assert!(
        matches!(outcome, Err(Error::Cancelled { .. })),
        "{outcome:?}"
    );
    // The request is still held: the call did not wait for it.
    assert!(elapsed < WAIT, "cancelling took {elapsed:?}");
}

/// The JSON-RPC messages the server received, in order, until `until` says it has them all or
/// `within` passes.
fn received(server: &Server, within: Duration, until: impl Fn(&[Value]) -> bool) -> Vec<Value> {
    let deadline = Instant::now() + within;
    let mut messages = Vec::new();
    while !until(&messages) {
        let left = deadline.saturating_duration_since(Instant::now());
        let Some(seen) = server.next_within(left) else {
            break;
        };
        if seen.method == "POST" {
            messages.push(seen.json());
        }
    }
    messages
}

fn method(message: &Value) -> &str {
    message["method"].as_str().unwrap_or_default()
}

#[test]
fn a_call_cancelled_before_its_post_went_out_is_cancelled_on_the_server_after_it() {
    let (server, answered) = server();
    let (client, provider, holding, release) = client(&server);
    // The handshake, seen before the call.
    received(&server, WAIT, |m| {
        m.iter().any(|m| method(m) == "notifications/initialized")
    });
    cancelled_while_held(&client, &provider, holding);
    // Anything the server receives before the request may go out is too early.
    let mut messages = received(&server, EARLY, |_| false);
    release.send(true).expect("the request is held");
    let both = |m: &[Value]| {
        ["tools/call", "notifications/cancelled"]
            .iter()
            .all(|wanted| m.iter().any(|m| method(m) == *wanted))
    };
    messages.extend(received(&server, WAIT, |m| both(m)));
    let order: Vec<&str> = messages.iter().map(method).collect();
    assert_eq!(
        order,
        ["tools/call", "notifications/cancelled"],
        "expected the request, then its cancellation"
    );
    assert_eq!(messages[1]["params"]["requestId"], messages[0]["id"]);
    // Nor did the cancellation wait for the JSON answer, which the server held until it came.
    assert_eq!(answered.recv_timeout(WAIT * 2), Ok(true));
    client.close();
}

#[test]
fn a_call_cancelled_before_its_post_went_out_is_not_cancelled_when_it_never_does() {
    let (server, _answered) = server();
    let (client, provider, holding, release) = client(&server);
    received(&server, WAIT, |m| {
        m.iter().any(|m| method(m) == "notifications/initialized")
    });
    cancelled_while_held(&client, &provider, holding);
    release.send(false).expect("the request is held");
    // The connection works on, and the server heard of neither the request nor its end.
    client.ping().expect("ping");
    let messages = received(&server, EARLY, |_| false);
    let order: Vec<&str> = messages.iter().map(method).collect();
    assert_eq!(order, ["ping"]);
    client.close();
}
