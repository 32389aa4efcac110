//! Tests for the Streamable HTTP and legacy HTTP+SSE transports against a loopback server.
#![cfg(feature = "http")]

use umcp_test_support::http_server;

use std::time::{Duration, Instant};

use crossbeam_channel::Receiver;
use serde_json::json;
use umcp::jsonrpc::{Message, Request, RequestId, Response};
use umcp::transport::http::HttpConfig;
use umcp::transport::{Connect, Inbound, Inbox, Transport};
use umcp::Error;

use http_server::{serve, Server};

mod cancel_order;
mod errors;
mod exchange;
mod legacy;
mod limits;
mod sessions;
mod streams;
mod unanswered;

const WAIT: Duration = Duration::from_secs(5);

fn connect(config: &HttpConfig) -> (Box<dyn Transport>, Receiver<Inbound>) {
    let (inbox, rx) = Inbox::new();
    (config.connect(inbox).expect("connect"), rx)
}

fn request(id: i64, method: &str) -> Message {
    Request::new(id, method, Some(json!({}))).into()
}

fn soon() -> Instant {
    Instant::now() + WAIT
}

fn result(id: i64) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"ok":{id}}}}}"#)
}

fn next(rx: &Receiver<Inbound>) -> Inbound {
    rx.recv_timeout(WAIT)
        .expect("nothing arrived in the inbox within 5 s")
}

fn next_message(rx: &Receiver<Inbound>) -> Message {
    match next(rx) {
        Inbound::Message(m) => m,
        other => panic!("expected a message, got {other:?}"),
    }
}

fn expect_response(rx: &Receiver<Inbound>, id: i64) {
    match next_message(rx) {
        Message::Response(Response {
            id: Some(got),
            result: Ok(value),
        }) => {
            assert_eq!(got, RequestId::from(id));
            assert_eq!(value, json!({"ok": id}));
        }
        other => panic!("expected the response to {id}, got {other:?}"),
    }
}

fn expect_failed(rx: &Receiver<Inbound>, id: i64) -> Error {
    match next(rx) {
        Inbound::Failed(got, error) => {
            assert_eq!(got, RequestId::from(id));
            error
        }
        other => panic!("expected request {id} to fail, got {other:?}"),
    }
}

/// A server answering every request with a JSON response and everything else with 202.
fn json_server() -> Server {
    serve(|seen, reply| match seen.method.as_str() {
        "POST" if seen.rpc_method().is_some() && !seen.rpc_id().is_null() => {
            let id = seen.rpc_id().as_i64().unwrap_or(0);
            reply.json(200, &[], &result(id));
        }
        "POST" => reply.status(202, &[]),
        _ => reply.status(405, &[]),
    })
}
