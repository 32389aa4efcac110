//! The legacy HTTP+SSE transport: the announced endpoint, the fallback from Streamable HTTP and its
//! memory, and failures.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use umcp::transport::http::{CredentialProvider, HttpConfig, HttpTransportKind};
use umcp::transport::{Connect, Inbound, Inbox};
use umcp::{Client, Error, HttpError, Options, TimeoutKind};

use crate::http_server::{serve, Seen, Server};
use crate::{connect, expect_response, next, request, result, soon, WAIT};

/// A legacy server: `GET /sse` announces `endpoint`; POSTs there are answered on the stream.
fn legacy_server(endpoint: &'static str) -> Server {
    announcing(format!("event: endpoint\ndata: {endpoint}\n\n"))
}

/// [`legacy_server`] whose stream starts with `events`, which announce the endpoint.
fn announcing(events: String) -> Server {
    let (to_stream, from_posts) = crossbeam_channel::unbounded::<String>();
    serve(move |seen: Seen, reply| match seen.method.as_str() {
        "GET" => {
            let mut sse = reply.sse(&[]);
            let _ = sse.send(&events);
            while let Ok(message) = from_posts.recv_timeout(WAIT) {
                if sse.message(&message).is_err() {
                    return;
                }
            }
        }
        "POST" => {
            if let Some(id) = seen.rpc_id().as_i64() {
                let _ = to_stream.send(result(id));
            }
            reply.status(202, &[]);
        }
        _ => reply.status(405, &[]),
    })
}

#[test]
fn legacy_sse_posts_to_the_announced_endpoint() {
    let server = legacy_server("/messages?sessionId=abc");
    let config = HttpConfig::new(server.url("/sse")).transport(HttpTransportKind::Sse);
    assert!(config.fallback().is_none());
    let (transport, rx) = connect(&config);
    assert_eq!(transport.kind(), "sse");
    let get = server.next_with_method("GET");
    assert_eq!(get.header("accept"), Some("text/event-stream"));
    transport.send(&request(1, "initialize"), soon()).unwrap();
    let post = server.next_with_method("POST");
    assert_eq!(post.path, "/messages?sessionId=abc");
    expect_response(&rx, 1);
    transport.close();
    assert!(matches!(next(&rx), Inbound::Closed(_)));
    assert!(
        rx.recv_timeout(Duration::from_millis(200)).is_err(),
        "Closed is reported once"
    );
}

#[test]
fn an_endpoint_event_without_data_is_not_taken() {
    // An event without data is never dispatched (the event-stream standard): the endpoint
    // is the one that follows, not the SSE URL an empty reference resolves to.
    let server = announcing(
        "event: endpoint\r\revent: endpoint\rid: 0\r\r\
         event: endpoint\rdata: /messages\r\r"
            .to_owned(),
    );
    let config = HttpConfig::new(server.url("/sse")).transport(HttpTransportKind::Sse);
    let (transport, rx) = connect(&config);
    transport.send(&request(1, "initialize"), soon()).unwrap();
    assert_eq!(server.next_with_method("POST").path, "/messages");
    expect_response(&rx, 1);
}

#[test]
fn auto_falls_back_to_legacy_sse() {
    let server = legacy_server("/messages");
    let auto = HttpConfig::new(server.url("/sse"));
    let fallback = auto.fallback().expect("auto has a fallback");
    let (inbox, rx) = Inbox::new();
    let transport = fallback.connect(inbox).unwrap();
    assert_eq!(transport.kind(), "sse");
    transport.send(&request(4, "initialize"), soon()).unwrap();
    expect_response(&rx, 4);
}

#[test]
fn auto_remembers_a_legacy_server_until_it_moves() {
    // A legacy server that refuses Streamable HTTP's POST to its SSE URL, until it moves to
    // Streamable HTTP and refuses the GET instead.
    let moved = Arc::new(std::sync::atomic::AtomicBool::new(false));
    // The newest event stream, which POSTs answer on.
    let stream = Arc::new(Mutex::new(None::<crossbeam_channel::Sender<String>>));
    let has_moved = moved.clone();
    let server = serve(
        move |seen: Seen, reply| match (seen.method.as_str(), seen.path.as_str()) {
            ("GET", "/sse") if !has_moved.load(Ordering::SeqCst) => {
                let (to_stream, from_posts) = crossbeam_channel::unbounded::<String>();
                *stream.lock().unwrap() = Some(to_stream);
                let mut sse = reply.sse(&[]);
                let _ = sse.send("event: endpoint\ndata: /messages\n\n");
                while let Ok(message) = from_posts.recv_timeout(WAIT) {
                    if sse.message(&message).is_err() {
                        return;
                    }
                }
            }
            ("POST", "/messages") => {
                if let (Some(id), Some(to_stream)) =
                    (seen.rpc_id().as_i64(), stream.lock().unwrap().as_ref())
                {
                    let _ = to_stream.send(result(id));
                }
                reply.status(202, &[]);
            }
            ("POST", "/sse") if has_moved.load(Ordering::SeqCst) => {
                reply.json(200, &[], &result(seen.rpc_id().as_i64().unwrap_or(0)))
            }
            _ => reply.status(405, &[]),
        },
    );
    let auto = HttpConfig::new(server.url("/sse"));
    let seen_now = |server: &Server| {
        let mut seen = Vec::new();
        while let Some(s) = server.next_within(Duration::from_millis(200)) {
            seen.push(format!("{} {}", s.method, s.path));
        }
        seen
    };

    // The first time, the client learns it by a refused request and the fallback.
    let (first, _rx) = connect(&auto);
    assert_eq!(first.kind(), "streamable-http");
    let err = first.send(&request(1, "initialize"), soon()).unwrap_err();
    assert_eq!(err.http_status(), Some(405), "{err:?}");
    first.close();
    let (inbox, rx) = Inbox::new();
    let fallback = auto.fallback().unwrap().connect(inbox).unwrap();
    assert_eq!(fallback.kind(), "sse");
    fallback.close();
    drop(rx);
    seen_now(&server);

    // Then straight over SSE: no refused POST first.
    let (again, rx) = connect(&auto);
    assert_eq!(again.kind(), "sse");
    again.send(&request(2, "initialize"), soon()).unwrap();
    expect_response(&rx, 2);
    again.close();
    let seen = seen_now(&server);
    assert_eq!(
        seen.first().map(String::as_str),
        Some("GET /sse"),
        "{seen:?}"
    );
    assert!(!seen.iter().any(|s| s == "POST /sse"), "{seen:?}");

    // The server moved to Streamable HTTP: the SSE attempt is refused, the URL forgotten.
    moved.store(true, Ordering::SeqCst);
    let (moved_on, rx) = connect(&auto);
    assert_eq!(moved_on.kind(), "streamable-http");
    moved_on.send(&request(3, "initialize"), soon()).unwrap();
    expect_response(&rx, 3);
    moved_on.close();
    seen_now(&server);
    let (next_time, _rx) = connect(&auto);
    assert_eq!(next_time.kind(), "streamable-http");
    next_time.close();
    let seen = seen_now(&server);
    assert!(!seen.iter().any(|s| s.starts_with("GET")), "{seen:?}");
}

#[test]
fn legacy_endpoint_on_another_origin_is_refused() {
    let server = legacy_server("http://127.0.0.2:9/messages");
    let config = HttpConfig::new(server.url("/sse")).transport(HttpTransportKind::Sse);
    let (inbox, _rx) = Inbox::new();
    match config.connect(inbox) {
        Err(Error::Protocol(msg)) => assert!(msg.contains("origin"), "{msg}"),
        Err(other) => panic!("{other:?}"),
        Ok(_) => panic!("connected to a foreign endpoint"),
    }
}

#[test]
fn legacy_without_an_endpoint_event_times_out() {
    let server = serve(|_seen, reply| {
        let mut sse = reply.sse(&[]);
        let _ = sse.send(": waiting\n\n");
        std::thread::sleep(WAIT);
    });
    let config = HttpConfig::new(server.url("/sse"))
        .transport(HttpTransportKind::Sse)
        .connect_timeout(Duration::from_millis(300));
    let (inbox, _rx) = Inbox::new();
    let started = Instant::now();
    match config.connect(inbox) {
        Err(Error::Timeout { kind, .. }) => assert_eq!(kind, TimeoutKind::Connect),
        Err(other) => panic!("{other:?}"),
        Ok(_) => panic!("connected without an endpoint"),
    }
    assert!(started.elapsed() < Duration::from_secs(3));
}

#[test]
fn legacy_stream_end_closes_the_connection() {
    let (end_tx, end_rx) = crossbeam_channel::bounded::<()>(1);
    let server = serve(move |seen, reply| {
        if seen.method != "GET" {
            return reply.status(202, &[]);
        }
        let mut sse = reply.sse(&[]);
        let _ = sse.send("event: endpoint\ndata: /messages\n\n");
        let _ = end_rx.recv_timeout(WAIT);
        sse.end();
    });
    let config = HttpConfig::new(server.url("/sse")).transport(HttpTransportKind::Sse);
    let (transport, rx) = connect(&config);
    end_tx.send(()).unwrap();
    match next(&rx) {
        Inbound::Closed(closed) => assert!(closed.reason.contains("ended"), "{}", closed.reason),
        other => panic!("{other:?}"),
    }
    match transport.send(&request(1, "ping"), soon()).unwrap_err() {
        Error::Closed(closed) => assert!(closed.reason.contains("ended"), "{}", closed.reason),
        other => panic!("{other:?}"),
    }
    transport.close();
    assert!(
        rx.recv_timeout(Duration::from_millis(200)).is_err(),
        "Closed is reported once"
    );
}

/// An event stream of keep-alive comments that never announces its endpoint; POSTs are
/// refused with 405, as by a legacy server.
fn keep_alive_only_server() -> Server {
    serve(|seen, reply| {
        if seen.method != "GET" {
            return reply.status(405, &[]);
        }
        let mut sse = reply.sse(&[]);
        let until = Instant::now() + Duration::from_secs(60);
        while Instant::now() < until && sse.send(": keep-alive\n\n").is_ok() {
            std::thread::sleep(Duration::from_millis(100));
        }
    })
}

/// Connects with a connect timeout far beyond the start-up timeout; the wait for the endpoint
/// must end with the start-up timeout, as a `TimeoutKind::Startup`.
fn connect_ends_by_the_startup_timeout(config: HttpConfig) {
    let config = config.connect_timeout(Duration::from_secs(30));
    let options = Options::default().with_startup_timeout(Duration::from_secs(1));
    let started = Instant::now();
    match Client::connect_with_options(config, options) {
        Err(Error::Timeout { kind, elapsed, .. }) => {
            assert_eq!(kind, TimeoutKind::Startup);
            assert!(elapsed >= Duration::from_millis(900), "{elapsed:?}");
        }
        Err(other) => panic!("{other:?}"),
        Ok(_) => panic!("connected without an endpoint"),
    }
    let took = started.elapsed();
    assert!(took < Duration::from_secs(10), "took {took:?}");
}

#[test]
fn legacy_endpoint_wait_ends_by_the_startup_timeout() {
    let server = keep_alive_only_server();
    connect_ends_by_the_startup_timeout(
        HttpConfig::new(server.url("/sse")).transport(HttpTransportKind::Sse),
    );
}

#[test]
fn auto_fallback_to_legacy_ends_by_the_startup_timeout() {
    let server = keep_alive_only_server();
    connect_ends_by_the_startup_timeout(HttpConfig::new(server.url("/sse")));
    // The fallback was taken: Streamable HTTP's POST, then the event stream's GET.
    let mut methods = Vec::new();
    while let Some(seen) = server.next_within(Duration::from_millis(200)) {
        methods.push(seen.method);
    }
    assert_eq!(
        methods.first().map(String::as_str),
        Some("POST"),
        "{methods:?}"
    );
    assert!(methods.iter().any(|m| m == "GET"), "{methods:?}");
}

#[test]
fn legacy_post_cut_short_by_close_fails_as_closed_by_the_client() {
    // The endpoint takes its time answering POSTs: the one below is still waiting for its
    // answer when the connection closes.
    let (release, held) = crossbeam_channel::bounded::<()>(0);
    let server = serve(move |seen, reply| {
        if seen.method == "GET" {
            let mut sse = reply.sse(&[]);
            let _ = sse.send("event: endpoint\ndata: /messages\n\n");
            let _ = held.recv_timeout(WAIT);
            return;
        }
        let _ = held.recv_timeout(WAIT);
        reply.status(202, &[]);
    });
    let config = HttpConfig::new(server.url("/sse")).transport(HttpTransportKind::Sse);
    let (transport, rx) = connect(&config);
    let transport = Arc::new(transport);
    let sender = Arc::clone(&transport);
    let call = std::thread::Builder::new()
        .name("legacy-sender".into())
        .spawn(move || sender.send(&request(1, "tools/call"), soon()))
        .unwrap();
    server.next_with_method("POST");
    let started = Instant::now();
    transport.close();
    let outcome = call.join().expect("the sender");
    assert!(started.elapsed() < WAIT, "took {:?}", started.elapsed());
    match outcome {
        Err(Error::Closed(closed)) => assert_eq!(closed.reason, "closed by client"),
        other => panic!("expected the POST to fail as closed by the client, got {other:?}"),
    }
    assert!(matches!(next(&rx), Inbound::Closed(_)));
    drop(release);
}

/// Asks for a retry after a 401 once the test lets it answer, telling it when it is asked.
struct HeldAnswer {
    asked: crossbeam_channel::Sender<()>,
    answer: crossbeam_channel::Receiver<()>,
}

impl CredentialProvider for HeldAnswer {
    fn headers(&self, _url: &str) -> umcp::Result<Vec<(String, String)>> {
        Ok(Vec::new())
    }

    fn on_unauthorized(&self, _error: &HttpError) -> umcp::Result<bool> {
        let _ = self.asked.send(());
        let _ = self.answer.recv_timeout(WAIT);
        Ok(true)
    }
}

/// A send whose credentials were being obtained when the client closed fails with the
/// connection's own reason.
#[test]
fn a_send_that_close_overtook_in_the_credential_provider_fails_with_the_close_reason() {
    let server = serve(|seen: Seen, reply| match seen.method.as_str() {
        "GET" => {
            let mut sse = reply.sse(&[]);
            let _ = sse.send("event: endpoint\ndata: /messages\n\n");
            let until = Instant::now() + WAIT;
            while Instant::now() < until && sse.send(": idle\n\n").is_ok() {
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        _ => reply.status(401, &[("WWW-Authenticate", "Bearer")]),
    });
    let (asked, was_asked) = crossbeam_channel::bounded(1);
    let (let_answer, answer) = crossbeam_channel::bounded::<()>(0);
    let provider = Arc::new(HeldAnswer { asked, answer });
    let config = HttpConfig::new(server.url("/sse"))
        .transport(HttpTransportKind::Sse)
        .credentials(provider);
    let (transport, _rx) = connect(&config);
    let sent = std::thread::scope(|scope| {
        let sending = scope.spawn(|| transport.send(&request(1, "initialize"), soon()));
        was_asked
            .recv_timeout(WAIT)
            .expect("the 401 reached the provider");
        transport.close();
        drop(let_answer);
        sending.join().unwrap()
    });
    match sent {
        Err(Error::Closed(closed)) => assert_eq!(closed.reason, "closed by client"),
        other => panic!("{other:?}"),
    }
}
