//! The HTTP transport against hostile servers: a body trickled byte by byte, an event stream
//! of keep-alives only, headers that never come, a stream cut mid-event, an oversized body,
//! and a `DELETE` answered with 401, 403 or a trickle. Each case must end in its typed error
//! by the deadline (plus [`SLACK`]) and leave no thread and no socket behind, counted through
//! `/proc/self/task` and `/proc/self/fd`.
#![cfg(all(feature = "http", target_os = "linux"))]

#[path = "common/hostile.rs"]
mod hostile;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde_json::json;
use umcp::transport::http::{
    CredentialProvider, HttpConfig, HttpTransportKind, ReconnectPolicy, CLOSE_TIMEOUT,
};
use umcp::{Client, Error, HttpError, Options, ProtocolMode, TimeoutKind};

use hostile::{hostile, settles, sockets_to, threads_named, Conn, Hostile, Req};

/// How late past its deadline a case may end. The bound is asserted; the margin is for a
/// busy machine (scheduling, not waiting on the server).
const SLACK: Duration = Duration::from_millis(250);
/// How long threads and sockets get to go away once nothing holds them.
const SETTLE: Duration = Duration::from_secs(2);
/// The caller's timeout in every case.
const TIMEOUT: Duration = Duration::from_secs(1);
/// How long a hostile server keeps at it when nobody stops it: far longer than any bound.
const FOREVER: Duration = Duration::from_secs(60);

/// The cases count this process's threads, so they run one at a time.
fn serial() -> MutexGuard<'static, ()> {
    static SERIAL: Mutex<()> = Mutex::new(());
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// A server that handles the handshake (session `s-1`), notifications and `DELETE`, refuses
/// the GET stream, and answers everything else with `case`.
fn mcp(case: impl Fn(&Req, &mut Conn) + Send + Sync + 'static) -> Hostile {
    hostile(move |req, conn| {
        if hostile::session(req, conn, "hostile") {
            return;
        }
        match req.method.as_str() {
            "GET" => conn.reply(405, &[], "text/plain", ""),
            _ => case(req, conn),
        }
    })
}

fn config(server: &Hostile) -> HttpConfig {
    HttpConfig::new(&server.url).transport(HttpTransportKind::StreamableHttp)
}

/// Connects in the handshake era: the hostile server knows `initialize` only, and answers
/// anything else, a `server/discover` probe included, with its case.
fn connect(config: HttpConfig) -> Client {
    let options = Options::default()
        .with_request_timeout(TIMEOUT)
        .with_protocol_mode(ProtocolMode::Legacy);
    Client::connect_with_options(config, options).expect("connect")
}

/// Calls a tool, asserting that it fails within the timeout plus [`SLACK`].
fn call_fails_in_time(client: &Client) -> Error {
    let started = Instant::now();
    let outcome = client.request_raw("tools/call", Some(json!({"name": "t", "arguments": {}})));
    let elapsed = started.elapsed();
    let err = outcome.expect_err("the call must fail");
    assert!(
        elapsed <= TIMEOUT + SLACK,
        "ended after {elapsed:?}, deadline {TIMEOUT:?}: {err:?}"
    );
    err
}

/// The client, closed, leaves no thread and no socket behind.
fn leaves_nothing(server: &Hostile, threads_before: usize) {
    let threads = settles(|| threads_named("umcp"), threads_before, SETTLE);
    assert_eq!(threads, threads_before, "client threads left behind");
    let sockets = settles(|| sockets_to(server.port), 0, SETTLE);
    assert_eq!(sockets, 0, "client sockets left behind");
}

fn assert_request_timeout(err: &Error) {
    match err {
        Error::Timeout { kind, .. } => assert_eq!(*kind, TimeoutKind::Request, "{err:?}"),
        other => panic!("expected a request timeout: {other:?}"),
    }
}

#[test]
fn a_trickled_json_body_ends_by_the_deadline() {
    let _serial = serial();
    let before = threads_named("umcp");
    let server = mcp(|_req, conn| {
        if conn.head(200, "application/json", Some(100_000)) {
            conn.trickle(&[b' '; 100_000], Duration::from_millis(20));
        }
    });
    let client = connect(config(&server));
    assert_request_timeout(&call_fails_in_time(&client));
    drop(client);
    leaves_nothing(&server, before);
}

#[test]
fn a_trickled_error_body_ends_by_the_deadline() {
    let _serial = serial();
    let before = threads_named("umcp");
    let server = mcp(|_req, conn| {
        if conn.head(500, "text/plain", Some(100_000)) {
            conn.trickle(&[b'e'; 100_000], Duration::from_millis(20));
        }
    });
    let client = connect(config(&server));
    let err = call_fails_in_time(&client);
    assert_eq!(err.http_status(), Some(500), "{err:?}");
    drop(client);
    leaves_nothing(&server, before);
}

#[test]
fn a_keep_alive_only_stream_is_let_go_at_the_deadline() {
    let _serial = serial();
    let before = threads_named("umcp");
    let server = mcp(|_req, conn| {
        if conn.head(200, "text/event-stream", None) {
            conn.repeat(b": keep-alive\n\n", Duration::from_millis(20), FOREVER);
        }
    });
    let client = connect(config(&server));
    assert_request_timeout(&call_fails_in_time(&client));
    // Nobody waits for the stream any more: its reader and its socket go at once, while
    // the client is still open.
    let readers = settles(|| threads_named("umcp-http-post"), 0, SETTLE);
    assert_eq!(readers, 0, "the stream's reader outlived its caller");
    drop(client);
    leaves_nothing(&server, before);
}

#[test]
fn headers_that_never_come_end_by_the_deadline() {
    let _serial = serial();
    let before = threads_named("umcp");
    let server = mcp(|_req, conn| conn.hold(FOREVER));
    let client = connect(config(&server));
    assert_request_timeout(&call_fails_in_time(&client));
    drop(client);
    leaves_nothing(&server, before);
}

#[test]
fn a_stream_cut_mid_event_fails_the_request() {
    let _serial = serial();
    let before = threads_named("umcp");
    let server = mcp(|_req, conn| {
        if conn.head(200, "text/event-stream", None) {
            conn.raw(b"data: {\"jsonrpc\":\"2.0\",\"id\":");
            conn.cut();
        }
    });
    let client = connect(config(&server));
    let err = call_fails_in_time(&client);
    assert!(matches!(err, Error::ResponseLost(_)), "{err:?}");
    drop(client);
    leaves_nothing(&server, before);
}

#[test]
fn an_oversized_body_is_refused() {
    let _serial = serial();
    let before = threads_named("umcp");
    let server = mcp(|_req, conn| {
        let size = 8 * 1024 * 1024;
        if conn.head(200, "application/json", Some(size)) {
            let chunk = [b' '; 64 * 1024];
            for _ in 0..size / chunk.len() {
                if !conn.raw(&chunk) {
                    return;
                }
            }
        }
    });
    let client = connect(config(&server).max_event_size(4096));
    let err = call_fails_in_time(&client);
    assert!(
        matches!(err, Error::MessageTooLarge { limit: 4096 }),
        "{err:?}"
    );
    drop(client);
    leaves_nothing(&server, before);
}

/// Hands out a token and counts what the transport asks.
#[derive(Default)]
struct Counting {
    headers: AtomicUsize,
    cached: AtomicUsize,
    challenges: AtomicUsize,
}

impl CredentialProvider for Counting {
    fn headers(&self, _url: &str) -> umcp::Result<Vec<(String, String)>> {
        self.headers.fetch_add(1, Ordering::SeqCst);
        Ok(vec![("Authorization".into(), "Bearer t".into())])
    }

    fn cached_headers(&self, method: &str, _url: &str) -> umcp::Result<Vec<(String, String)>> {
        assert_eq!(method, "DELETE");
        self.cached.fetch_add(1, Ordering::SeqCst);
        Ok(vec![("Authorization".into(), "Bearer cached".into())])
    }

    fn on_unauthorized(&self, _error: &HttpError) -> umcp::Result<bool> {
        self.challenges.fetch_add(1, Ordering::SeqCst);
        Ok(true)
    }

    fn on_forbidden(&self, _error: &HttpError, _retries: u32) -> umcp::Result<bool> {
        self.challenges.fetch_add(1, Ordering::SeqCst);
        Ok(true)
    }
}

/// A server whose `DELETE` answers `delete`, everything else normally.
fn deleting(delete: impl Fn(&mut Conn) + Send + Sync + 'static) -> Hostile {
    hostile(move |req, conn| match req.method.as_str() {
        "DELETE" => delete(conn),
        "GET" => conn.reply(405, &[], "text/plain", ""),
        _ if req.rpc_method() == "initialize" => conn.result(
            req,
            &[("mcp-session-id", "s-1")],
            json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "serverInfo": {"name": "hostile", "version": "0"}
            }),
        ),
        _ => conn.reply(202, &[], "text/plain", ""),
    })
}

/// Closes a client of `server`, asserting it takes at most [`CLOSE_TIMEOUT`] plus
/// [`SLACK`], and returns the DELETEs the server saw.
fn close_in_time(client: Client, server: &Hostile) -> Vec<Req> {
    let started = Instant::now();
    client.close();
    drop(client);
    let elapsed = started.elapsed();
    assert!(
        elapsed <= CLOSE_TIMEOUT + SLACK,
        "close took {elapsed:?}, bound {CLOSE_TIMEOUT:?}"
    );
    // Leave time for a repeated DELETE to show up.
    std::thread::sleep(Duration::from_millis(300));
    server
        .seen()
        .into_iter()
        .filter(|req| req.method == "DELETE")
        .collect()
}

#[test]
fn close_never_authorizes_nor_repeats_delete_on_401_or_403() {
    let _serial = serial();
    for status in [401u16, 403] {
        let before = threads_named("umcp");
        let server = deleting(move |conn| {
            conn.reply(
                status,
                &[(
                    "www-authenticate",
                    r#"Bearer error="invalid_token", scope="all""#,
                )],
                "text/plain",
                "no",
            )
        });
        let provider = Arc::new(Counting::default());
        let client = connect(config(&server).credentials(provider.clone()));
        let asked_before_close = provider.headers.load(Ordering::SeqCst);
        let deletes = close_in_time(client, &server);
        assert_eq!(
            deletes.len(),
            1,
            "HTTP {status}: one DELETE, never repeated"
        );
        assert_eq!(deletes[0].header("mcp-session-id"), Some("s-1"));
        assert_eq!(
            deletes[0].header("authorization"),
            Some("Bearer cached"),
            "the DELETE is authorized with the credentials at hand"
        );
        assert_eq!(
            provider.challenges.load(Ordering::SeqCst),
            0,
            "HTTP {status}: the provider hears of no refusal"
        );
        assert_eq!(provider.cached.load(Ordering::SeqCst), 1, "HTTP {status}");
        assert_eq!(
            provider.headers.load(Ordering::SeqCst),
            asked_before_close,
            "close never asks for headers that may be refreshed"
        );
        leaves_nothing(&server, before);
    }
}

#[test]
fn close_is_bounded_when_the_delete_reply_trickles() {
    let _serial = serial();
    let before = threads_named("umcp");
    let server = deleting(|conn| {
        if conn.head(200, "application/json", Some(10_000)) {
            conn.trickle(&[b' '; 10_000], Duration::from_millis(20));
        }
    });
    let client = connect(config(&server));
    let deletes = close_in_time(client, &server);
    assert_eq!(deletes.len(), 1);
    leaves_nothing(&server, before);
}

#[test]
fn close_ends_a_keep_alive_get_stream_at_once() {
    let _serial = serial();
    let before = threads_named("umcp");
    let server = hostile(|req, conn| match req.method.as_str() {
        "GET" => {
            if conn.head(200, "text/event-stream", None) {
                conn.repeat(b": keep-alive\n\n", Duration::from_millis(20), FOREVER);
            }
        }
        "DELETE" => conn.reply(200, &[], "text/plain", ""),
        _ if req.rpc_method() == "initialize" => conn.result(
            req,
            &[("mcp-session-id", "s-1")],
            json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "serverInfo": {"name": "hostile", "version": "0"}
            }),
        ),
        _ => conn.reply(202, &[], "text/plain", ""),
    });
    let client = connect(config(&server).reconnect(ReconnectPolicy::new(
        0,
        Duration::from_millis(10),
        Duration::from_millis(10),
    )));
    assert_eq!(threads_named("umcp-http-get"), 1, "the GET stream is open");
    close_in_time(client, &server);
    leaves_nothing(&server, before);
}

#[test]
fn a_server_that_went_away_is_reported_closed() {
    let _serial = serial();
    let before = threads_named("umcp");
    let server = mcp(|req, conn| conn.result(req, &[], json!({})));
    let port = server.port;
    let client = connect(config(&server));
    client.ping().expect("ping while the server runs");
    assert!(client.closed().is_none());
    drop(server);
    // The first call to find nothing listening fails as the end of the connection, as every
    // later one does: code that reconnects on `Closed` needs no second failure to notice.
    let err = client.ping().expect_err("nothing listens any more");
    assert!(
        matches!(&err, Error::Closed(c) if c.reason.contains("gone")),
        "{err:?}"
    );
    let closed = client
        .closed()
        .unwrap_or_else(|| panic!("not reported closed after {err:?}"));
    assert!(closed.reason.contains("gone"), "{closed}");
    drop(client);
    let threads = settles(|| threads_named("umcp"), before, SETTLE);
    assert_eq!(threads, before, "client threads left behind");
    assert_eq!(settles(|| sockets_to(port), 0, SETTLE), 0);
}
