//! A Streamable HTTP server that is gone, its port closed with nothing listening any more:
//! a call waiting on it (its POST, its stream resumed) fails with `Error::Closed` within the
//! first reconnection attempt, as does every later call, and the client reports itself
//! closed. The GET stream, which nobody waits on, keeps the reconnection policy: an idle
//! client outlives a server that restarts on its port within the policy's attempts.
#![cfg(feature = "http")]

#[path = "common/hostile.rs"]
mod hostile;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::Sender;
use serde_json::json;
use umcp::transport::http::{CredentialProvider, HttpConfig, HttpTransportKind, ReconnectPolicy};
use umcp::types::ProgressNotificationParams;
use umcp::{Client, Error, Options, ProtocolMode, RequestOptions};

use hostile::{hostile_on, Hostile};

/// A request timeout far beyond every bound below: the calls must not end by it.
const TIMEOUT: Duration = Duration::from_secs(30);
/// How soon a gone server must be noticed: the first reconnection attempt comes after about a
/// second (the default policy); the rest is margin for a busy machine.
const NOTICED: Duration = Duration::from_secs(5);
/// How long the server holds a stream open when nobody stops it: far longer than any bound.
const FOREVER: Duration = Duration::from_secs(60);
/// How long a restarting server leaves its port closed: several of the GET stream's attempts
/// in a policy of 50 to 100 ms.
const DOWN: Duration = Duration::from_millis(500);

/// A 2025-11-25 server with session `s-1` whose `tools/call` answers with an event stream that
/// carries one progress notification (event id `e-1`, so the stream can be resumed) and then
/// stays open. With `get_stream` it opens the standalone GET stream too, else refuses it.
/// Dropping it closes its listener and every connection, as a killed process does.
fn server(get_stream: bool) -> Hostile {
    server_on(0, "s-1", get_stream)
}

/// [`server`] on `port` (0 for any free one) with session `session`: it answers 404 to any
/// other session, as a restarted server does to the one its predecessor gave.
fn server_on(port: u16, session: &'static str, get_stream: bool) -> Hostile {
    hostile_on(port, move |req, conn| {
        let method = req.rpc_method();
        if method != "initialize" && req.header("mcp-session-id") != Some(session) {
            return conn.reply(404, &[], "text/plain", "");
        }
        match (req.method.as_str(), method.as_str()) {
            ("POST", "initialize") => conn.result(
                req,
                &[("mcp-session-id", session)],
                json!({
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "gone", "version": "0"}
                }),
            ),
            ("POST", "tools/call") => {
                let token = req.json()["params"]["_meta"]["progressToken"].clone();
                let progress = json!({"jsonrpc": "2.0", "method": "notifications/progress",
                    "params": {"progressToken": token, "progress": 1, "total": 10}});
                if conn.head(200, "text/event-stream", None)
                    && conn.raw(format!("id: e-1\nevent: message\ndata: {progress}\n\n").as_bytes())
                {
                    conn.hold(FOREVER);
                }
            }
            ("POST", method) if method.starts_with("notifications/") => {
                conn.reply(202, &[], "text/plain", "")
            }
            ("POST", _) => conn.result(req, &[], json!({})),
            ("GET", _) if get_stream => {
                if conn.head(200, "text/event-stream", None) && conn.raw(b": open\n\n") {
                    conn.hold(FOREVER);
                }
            }
            ("GET", _) => conn.reply(405, &[], "text/plain", ""),
            _ => conn.reply(200, &[], "text/plain", ""),
        }
    })
}

fn connect(server: &Hostile) -> Client {
    connect_with_options(server, ReconnectPolicy::default())
}

fn connect_with_options(server: &Hostile, policy: ReconnectPolicy) -> Client {
    let config = HttpConfig::new(&server.url)
        .transport(HttpTransportKind::StreamableHttp)
        .reconnect(policy);
    let options = Options::default()
        .with_request_timeout(TIMEOUT)
        .with_protocol_mode(ProtocolMode::Legacy);
    Client::connect_with_options(config, options).expect("connect")
}

/// Asserts that `error` is the end of the connection because the server is gone.
fn assert_gone(error: &Error) {
    match error {
        Error::Closed(closed) => assert!(closed.reason.contains("gone"), "{closed}"),
        other => panic!("expected Error::Closed, got {other:?}"),
    }
}

/// A tool call that sends its first progress to `progressed`.
fn call_with_progress(client: &Client, progressed: Sender<()>) -> umcp::Result<()> {
    let options = RequestOptions::default().with_progress(move |_: &ProgressNotificationParams| {
        let _ = progressed.send(());
    });
    client
        .with(&options)
        .call_tool("slow", json!({}))
        .map(|_| ())
}

#[test]
fn a_call_streaming_progress_fails_as_closed_soon_after_its_server_is_gone() {
    // No GET stream: the call's own stream, resumed with Last-Event-ID, is what finds the
    // port closed.
    let server = server(false);
    let client = connect(&server);
    let (progressed_tx, progressed) = crossbeam_channel::bounded(1);
    std::thread::scope(|scope| {
        let call = scope.spawn(|| call_with_progress(&client, progressed_tx));
        progressed
            .recv_timeout(NOTICED)
            .expect("the call's progress arrived");
        let killed = Instant::now();
        drop(server);
        let outcome = call.join().expect("the calling thread");
        let took = killed.elapsed();
        assert_gone(&outcome.expect_err("the server is gone"));
        assert!(took < NOTICED, "the call ended {took:?} after the server");
    });
    let closed = client.closed().expect("the client reports itself closed");
    assert!(closed.reason.contains("gone"), "{closed}");
    assert_gone(&client.ping().expect_err("closed"));
}

#[test]
fn an_idle_client_outlives_its_server_restarting_on_the_same_port() {
    // Quick attempts over a window of seconds: several find the port closed while it is down,
    // and the policy is far from spent when it listens again.
    let policy = ReconnectPolicy::new(100, Duration::from_millis(50), Duration::from_millis(100));
    let server = server(true);
    let port = server.port;
    let client = connect_with_options(&server, policy);
    client.ping().expect("ping while the server runs");
    server.next_with_method("GET");
    drop(server);
    // The server is down for several of the GET stream's attempts; not a bound on anything.
    std::thread::sleep(DOWN);
    let restarted = server_on(port, "s-2", true);
    assert!(
        client.closed().is_none(),
        "closed while its server restarted: {:?}",
        client.closed()
    );
    // The restarted server knows nothing of `s-1`: the call initializes a new session.
    client.ping().expect("a ping after the restart");
    let methods: Vec<String> = restarted.seen().iter().map(|r| r.rpc_method()).collect();
    assert!(methods.iter().any(|m| m == "initialize"), "{methods:?}");
    assert!(client.closed().is_none());
}

#[test]
fn the_first_call_after_an_idle_death_fails_as_closed() {
    // No GET stream, so nothing notices before the call does.
    let server = server(false);
    let client = connect(&server);
    client.ping().expect("ping while the server runs");
    drop(server);
    assert_first_call_gone(&client);
}

#[test]
fn the_first_stateless_call_after_an_idle_death_fails_as_closed() {
    // A 2026-07-28 server: no session, no GET stream, only `server/discover` to set up.
    let server = hostile::hostile(|req, conn| match req.rpc_method().as_str() {
        "server/discover" => conn.result(
            req,
            &[],
            json!({"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}},
                   "resultType": "complete"}),
        ),
        _ => conn.result(req, &[], json!({"resultType": "complete"})),
    });
    let config = HttpConfig::new(&server.url).transport(HttpTransportKind::StreamableHttp);
    let options = Options::default().with_request_timeout(TIMEOUT);
    let client = Client::connect_with_options(config, options).expect("connect");
    assert_eq!(client.era(), umcp::Era::Modern);
    drop(server);
    assert_first_call_gone(&client);
}

/// Asserts that the first call after the server went away, unnoticed, fails soon as gone,
/// and that the client then reports itself closed and fails the next call the same way.
fn assert_first_call_gone(client: &Client) {
    assert!(client.closed().is_none(), "nothing noticed yet");
    let started = Instant::now();
    assert_gone(&client.ping().expect_err("the server is gone"));
    assert!(started.elapsed() < NOTICED, "{:?}", started.elapsed());
    assert!(
        client.closed().is_some(),
        "the client reports itself closed"
    );
    assert_gone(&client.ping().expect_err("still closed"));
}

/// Credentials from a token service that fails with `error()` while `down` is set.
struct TokenService {
    down: AtomicBool,
    error: fn() -> Error,
    /// How many times it failed.
    failed: AtomicUsize,
}

impl TokenService {
    fn new(error: fn() -> Error) -> Arc<TokenService> {
        Arc::new(TokenService {
            down: AtomicBool::new(false),
            error,
            failed: AtomicUsize::new(0),
        })
    }
}

impl CredentialProvider for TokenService {
    fn headers(&self, _url: &str) -> umcp::Result<Vec<(String, String)>> {
        if self.down.load(Ordering::SeqCst) {
            self.failed.fetch_add(1, Ordering::SeqCst);
            return Err((self.error)());
        }
        Ok(vec![("authorization".into(), "Bearer t".into())])
    }
}

/// A handshake-era client of `url` whose credentials come from `provider`.
fn connect_through(url: &str, provider: &Arc<TokenService>, policy: ReconnectPolicy) -> Client {
    let config = HttpConfig::new(url)
        .transport(HttpTransportKind::StreamableHttp)
        .reconnect(policy)
        .credentials(Arc::clone(provider) as Arc<dyn CredentialProvider>);
    let options = Options::default()
        .with_request_timeout(TIMEOUT)
        .with_protocol_mode(ProtocolMode::Legacy);
    Client::connect_with_options(config, options).expect("connect")
}

#[test]
fn a_credential_provider_refused_by_its_own_service_fails_the_call_alone() {
    // The MCP server runs on: only the provider's error, which names a refused connection of
    // its own, fails the call, as any provider error does.
    let server = server(false);
    let provider = TokenService::new(|| {
        let refused = std::io::Error::new(
            std::io::ErrorKind::ConnectionRefused,
            "the token service refused the connection",
        );
        Error::io(refused)
    });
    let client = connect_through(&server.url, &provider, ReconnectPolicy::default());
    client.ping().expect("ping while the token service runs");
    provider.down.store(true, Ordering::SeqCst);
    match client.ping() {
        Err(Error::Io(e)) => assert!(e.to_string().contains("token service"), "{e}"),
        other => panic!("expected the provider's error, got {other:?}"),
    }
    assert!(client.closed().is_none(), "{:?}", client.closed());
    provider.down.store(false, Ordering::SeqCst);
    client.ping().expect("ping once the token service is back");
}

/// A 2025-11-25 server whose first GET stream ends after 200 ms and whose later ones stay
/// open; `gets` counts the GET streams opened.
fn dropping_once(gets: Arc<AtomicUsize>) -> Hostile {
    hostile::hostile(move |req, conn| {
        if hostile::session(req, conn, "flaky") {
            return;
        }
        if req.method != "GET" {
            return conn.result(req, &[], json!({}));
        }
        let first = gets.fetch_add(1, Ordering::SeqCst) == 0;
        if conn.head(200, "text/event-stream", None) && conn.raw(b": open\n\n") {
            conn.hold(if first {
                Duration::from_millis(200)
            } else {
                FOREVER
            });
        }
        conn.cut();
    })
}

/// Quick reopening attempts, far from spent within the tests below.
fn quick_policy() -> ReconnectPolicy {
    ReconnectPolicy::new(100, Duration::from_millis(20), Duration::from_millis(50))
}

#[test]
fn a_get_stream_reopened_while_the_credential_provider_fails_waits_for_it() {
    // The first GET stream ends soon; the provider fails the attempts to reopen it for a
    // while. The server never refused anything: the connection lives on.
    let gets = Arc::new(AtomicUsize::new(0));
    let server = dropping_once(Arc::clone(&gets));
    let provider = TokenService::new(|| Error::Protocol("the token service answered 503".into()));
    let client = connect_through(&server.url, &provider, quick_policy());
    client.ping().expect("ping while the token service runs");
    provider.down.store(true, Ordering::SeqCst);
    // The first stream ends within 200 ms; the failed attempts to reopen it follow.
    std::thread::sleep(DOWN);
    assert!(client.closed().is_none(), "closed: {:?}", client.closed());
    provider.down.store(false, Ordering::SeqCst);
    let reopened = Instant::now();
    while gets.load(Ordering::SeqCst) < 2 && reopened.elapsed() < NOTICED {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(
        gets.load(Ordering::SeqCst),
        2,
        "the GET stream was opened again"
    );
    client.ping().expect("ping once the token service is back");
    assert!(client.closed().is_none(), "closed: {:?}", client.closed());
}

#[test]
fn a_get_stream_whose_user_declined_authorization_is_not_reopened() {
    // A user who declined in the browser is not asked again and again by the reopening
    // attempts: the refusal ends the stream (and, as it was open, the connection).
    let gets = Arc::new(AtomicUsize::new(0));
    let server = dropping_once(Arc::clone(&gets));
    let provider = TokenService::new(|| {
        umcp::AuthError::new(umcp::AuthStep::Authorization, "the user declined").into()
    });
    let client = connect_through(&server.url, &provider, quick_policy());
    client.ping().expect("ping while authorized");
    provider.down.store(true, Ordering::SeqCst);
    // The first stream ends within 200 ms; many attempts would fit in the rest.
    std::thread::sleep(DOWN);
    assert_eq!(provider.failed.load(Ordering::SeqCst), 1, "asked once");
    let closed = client.closed().expect("the connection ended");
    assert!(closed.reason.contains("declined"), "{closed}");
}
