//! The Streamable HTTP transport against servers that answer in unusual or broken ways: a
//! page where JSON belongs (a captive portal, a proxy), a batch answering a single request,
//! event streams with every line ending, broken framing and redirects. The affected request
//! gets its typed error at once, and the next one works.
#![cfg(all(feature = "http", target_os = "linux"))]

#[path = "common/hostile.rs"]
mod hostile;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use umcp::transport::http::{HttpConfig, HttpTransportKind};
use umcp::{Client, Error, Options, ProtocolMode};

use hostile::{hostile, Conn, Hostile, Req};

/// The caller's timeout; every case must end well before it.
const TIMEOUT: Duration = Duration::from_secs(5);

/// A server that handles the handshake, notifications, the GET stream (refused) and
/// `DELETE`; `tools/call` with `"name": "odd"` gets `case`, any other call a plain result.
fn mcp(case: impl Fn(&Req, &mut Conn) + Send + Sync + 'static) -> Hostile {
    hostile(move |req, conn| {
        if hostile::session(req, conn, "odd") {
            return;
        }
        if req.method == "GET" {
            conn.reply(405, &[], "text/plain", "")
        } else if req.json()["params"]["name"] == "odd" {
            case(req, conn)
        } else {
            conn.result(req, &[], json!({"content": []}))
        }
    })
}

fn connect(config: HttpConfig) -> Client {
    let options = Options::default()
        .with_request_timeout(TIMEOUT)
        .with_protocol_mode(ProtocolMode::Legacy);
    Client::connect_with_options(config, options).expect("connect")
}

fn config(server: &Hostile) -> HttpConfig {
    HttpConfig::new(&server.url).transport(HttpTransportKind::StreamableHttp)
}

fn call(client: &Client, name: &str) -> umcp::Result<Value> {
    client.request_raw("tools/call", Some(json!({"name": name, "arguments": {}})))
}

/// Calls the odd tool, which must fail well before the timeout; then a plain call works.
fn odd_call_fails(client: &Client) -> Error {
    let started = Instant::now();
    let err = call(client, "odd").expect_err("the odd call must fail");
    assert!(
        started.elapsed() < TIMEOUT / 2,
        "waited {:?} for {err:?}",
        started.elapsed()
    );
    call(client, "plain").expect("the next call works");
    err
}

/// The text of a JSON-RPC result answering `req`.
fn result_text(req: &Req) -> String {
    json!({"jsonrpc": "2.0", "id": req.rpc_id(), "result": {"content": []}}).to_string()
}

#[test]
fn a_page_instead_of_json_names_the_status_and_media_type() {
    let answered = AtomicUsize::new(0);
    let server = mcp(
        move |req, conn| match answered.fetch_add(1, Ordering::SeqCst) {
            // A captive portal's page, in Latin-1.
            0 => {
                conn.raw(
                    b"HTTP/1.1 200 OK\r\ncontent-type: text/html; charset=iso-8859-1\r\n\
                  content-length: 20\r\n\r\n<p>Connexion requ\xe9</p>",
                );
            }
            1 => conn.reply(200, &[], "text/html", "<html>Sign in</html>"),
            _ => {
                let body = result_text(req);
                let head = format!("HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n", body.len());
                conn.raw(format!("{head}{body}").as_bytes());
            }
        },
    );
    let client = connect(config(&server));
    let mut seen = Vec::new();
    for _ in 0..3 {
        match odd_call_fails(&client) {
            Error::Protocol(message) => {
                assert!(message.contains("HTTP 200"), "{message}");
                seen.push(message);
            }
            other => panic!("expected a protocol error: {other:?}"),
        }
    }
    for expected in ["`text/html`", "no content type"] {
        assert!(
            seen.iter().any(|m| m.contains(expected)),
            "{expected}: {seen:?}"
        );
    }
    assert!(seen.iter().any(|m| m.contains("Connexion")), "{seen:?}");
}

#[test]
fn json_media_types_are_read_whatever_their_case_and_parameters() {
    let server = mcp(|req, conn| {
        conn.reply(
            200,
            &[],
            "Application/JSON; Charset=\"UTF-8\"",
            &result_text(req),
        )
    });
    let client = connect(config(&server));
    call(&client, "odd").expect("the result is read");
}

#[test]
fn a_batch_answering_a_single_request_fails_it_at_once() {
    // Protocol 2025-11-25 has no batches: the batch is not taken, but the request it
    // answers must not wait for its timeout.
    let server = mcp(|req, conn| {
        let batch = format!("[{}]", result_text(req));
        conn.reply(200, &[], "application/json", &batch)
    });
    let client = connect(config(&server));
    let err = odd_call_fails(&client);
    assert!(
        matches!(&err, Error::Protocol(m) if m.contains("batch")),
        "{err:?}"
    );
}

#[test]
fn event_streams_read_with_any_line_ending_split_anywhere() {
    let server = mcp(|req, conn| {
        conn.head(200, "text/event-stream", None);
        // A BOM, a comment, CR-only lines, `data:` without a space, then a CR LF split
        // between writes, an event of another type and one without data.
        conn.raw(b"\xef\xbb\xbf: hello\revent: ping\rdata: {}\r\rid: 1\r\r");
        conn.raw(format!("data:{}\r", result_text(req)).as_bytes());
        std::thread::sleep(Duration::from_millis(20));
        conn.raw(b"\n\r");
        std::thread::sleep(Duration::from_millis(20));
        conn.raw(b"\n");
        conn.hold(TIMEOUT);
    });
    let client = connect(config(&server));
    let started = Instant::now();
    call(&client, "odd").expect("the result is read");
    assert!(started.elapsed() < TIMEOUT / 2);
}

#[test]
fn an_event_with_an_id_and_no_result_settles_nothing() {
    let server = mcp(|req, conn| {
        conn.head(200, "text/event-stream", None);
        let id = req.rpc_id();
        // The pending request's id with neither `result` nor `error`, with and without the
        // version: not a response. The real answer follows.
        conn.raw(format!("data: {}\n\n", json!({"id": id})).as_bytes());
        conn.raw(format!("data: {}\n\n", json!({"jsonrpc": "2.0", "id": id})).as_bytes());
        std::thread::sleep(Duration::from_millis(20));
        let answer = json!({"jsonrpc": "2.0", "id": id, "result": {"content": [], "n": 7}});
        conn.raw(format!("data: {answer}\n\n").as_bytes());
        conn.hold(TIMEOUT);
    });
    let client = connect(config(&server));
    let result = call(&client, "odd").expect("the real answer is read");
    assert_eq!(result["n"], 7, "{result}");
    call(&client, "plain").expect("the next call works");
}

#[test]
fn broken_framing_fails_the_request_at_once() {
    let answered = AtomicUsize::new(0);
    let server = mcp(
        move |_req, conn| match answered.fetch_add(1, Ordering::SeqCst) {
            0 => {
                conn.raw(
                    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\
                  transfer-encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n",
                );
                conn.hold(TIMEOUT);
            }
            _ => {
                conn.raw(
                    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\
                  content-length: 100\r\n\r\n{\"jsonrpc\":",
                );
                conn.cut();
            }
        },
    );
    let client = connect(config(&server));
    for _ in 0..2 {
        let err = odd_call_fails(&client);
        assert!(matches!(err, Error::Protocol(_) | Error::Io(_)), "{err:?}");
    }
}

#[test]
fn a_redirect_is_reported_not_followed() {
    let target = hostile(|_req, conn| conn.reply(500, &[], "text/plain", ""));
    let location = target.url.clone();
    let server = mcp(move |_req, conn| {
        conn.reply(307, &[("location", location.as_str())], "text/plain", "")
    });
    let client = connect(config(&server).header("Authorization", "Bearer s3cret"));
    let err = odd_call_fails(&client);
    assert_eq!(err.http_status(), Some(307), "{err:?}");
    assert!(
        target.seen().is_empty(),
        "the POST went to the new location"
    );
}
