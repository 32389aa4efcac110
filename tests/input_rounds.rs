//! Input rounds of the stateless era (MRTR) under the call's deadline: the client's handlers
//! run between rounds and cannot be interrupted, so a server asking for input again and again
//! must not stretch a call past its timeout, its cancel handle or the number of inputs the
//! client takes at once.

#[allow(dead_code)] // Only the fake server is used here.
#[path = "common/memory.rs"]
mod memory;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock, Weak};
use std::time::{Duration, Instant};

use memory::FakeServer;
use serde_json::{json, Map, Value};
use umcp::types::{ElicitRequestParams, ElicitResult};
use umcp::{CancelHandle, Client, Error, Options, RequestOptions, TimeoutKind};

/// A stateless server whose `ask` tool asks for `inputs` elicitations per round, for
/// `rounds` rounds, and then completes; it counts the rounds.
fn asking_server(name: &str, inputs: usize, rounds: usize) -> (FakeServer, Arc<AtomicUsize>) {
    let server = FakeServer::named(name);
    server.on("server/discover", |_, _| {
        Some(json!({
            "supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {}},
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "fake", "version": "2"}},
        }))
    });
    let seen = Arc::new(AtomicUsize::new(0));
    let counter = seen.clone();
    server.on("tools/call", move |_, _| {
        let round = counter.fetch_add(1, Ordering::SeqCst) + 1;
        if round > rounds {
            return Some(json!({"resultType": "complete", "content": [], "isError": false}));
        }
        let ask = json!({"method": "elicitation/create", "params": {
            "mode": "form", "message": "?", "requestedSchema": {"type": "object"}}});
        let requests: Map<String, Value> = (0..inputs)
            .map(|k| (format!("k{k}"), ask.clone()))
            .collect();
        Some(json!({
            "resultType": "input_required", "inputRequests": requests,
            "requestState": format!("round {round}"),
        }))
    });
    (server, seen)
}

/// An elicitation handler that takes `pause` per answer and counts its calls.
fn slow_handler(pause: Duration) -> (Options, Arc<AtomicUsize>) {
    let asked = Arc::new(AtomicUsize::new(0));
    let counter = asked.clone();
    let options = Options::default().with_elicitation_handler(move |_: ElicitRequestParams| {
        counter.fetch_add(1, Ordering::SeqCst);
        std::thread::sleep(pause);
        Ok(ElicitResult::decline())
    });
    (options, asked)
}

#[test]
fn slow_handlers_cannot_stretch_a_call_past_its_timeout() {
    // 8 rounds of 20 inputs at 100 ms each would take 16 s; the call has 1 s.
    let (server, rounds) = asking_server("rounds-slow-handlers", 20, 8);
    let (options, asked) = slow_handler(Duration::from_millis(100));
    let client = Client::connect_with_options(server, options).expect("connect");
    let started = Instant::now();
    let outcome = client
        .with(&RequestOptions::default().with_timeout(Duration::from_secs(1)))
        .call_tool("ask", json!({}));
    let took = started.elapsed();
    match outcome {
        Err(Error::Timeout { kind, method, .. }) => {
            assert_eq!(kind, TimeoutKind::Request);
            assert_eq!(method, "tools/call");
        }
        other => panic!("expected the call to time out, got {other:?}"),
    }
    assert!(took < Duration::from_secs(5), "the call took {took:?}");
    let asked = asked.load(Ordering::SeqCst);
    assert!((1..=11).contains(&asked), "{asked} handler calls");
    assert_eq!(rounds.load(Ordering::SeqCst), 1, "no second round");
}

#[test]
fn the_timeout_spans_every_round_unless_it_resets_on_progress() {
    // Four rounds of one 600 ms answer: 2.4 s of handlers against a 1.5 s timeout.
    let pause = Duration::from_millis(600);
    let timeout = Duration::from_millis(1500);

    let (server, _) = asking_server("rounds-one-timeout", 1, 4);
    let (options, asked) = slow_handler(pause);
    let client = Client::connect_with_options(server, options).expect("connect");
    let fixed = RequestOptions::default().with_timeout(timeout);
    match client.with(&fixed).call_tool("ask", json!({})) {
        Err(Error::Timeout { .. }) => {}
        other => panic!("expected the call to time out, got {other:?}"),
    }
    assert!(asked.load(Ordering::SeqCst) < 4);

    // Each answer from the server is progress: every round starts the timeout again.
    let (server, rounds) = asking_server("rounds-reset-timeout", 1, 4);
    let (options, asked) = slow_handler(pause);
    let client = Client::connect_with_options(server, options).expect("connect");
    let reset = RequestOptions::default()
        .with_timeout(timeout)
        .with_reset_timeout_on_progress(true);
    let result = client.with(&reset).call_tool("ask", json!({}));
    assert!(result.is_ok(), "{result:?}");
    assert_eq!(asked.load(Ordering::SeqCst), 4);
    assert_eq!(rounds.load(Ordering::SeqCst), 5);
}

#[test]
fn a_cancel_between_handlers_stops_the_round() {
    let (server, rounds) = asking_server("rounds-cancel", 10, 1);
    let cancel = CancelHandle::new();
    let asked = Arc::new(AtomicUsize::new(0));
    let (counter, handle) = (asked.clone(), cancel.clone());
    let options = Options::default().with_elicitation_handler(move |_: ElicitRequestParams| {
        // The user gives up while answering the first question.
        counter.fetch_add(1, Ordering::SeqCst);
        handle.cancel();
        Ok(ElicitResult::decline())
    });
    let client = Client::connect_with_options(server, options).expect("connect");
    let call = RequestOptions::default().with_cancel(cancel);
    match client.with(&call).call_tool("ask", json!({})) {
        Err(Error::Cancelled { method }) => assert_eq!(method, "tools/call"),
        other => panic!("expected a cancelled call, got {other:?}"),
    }
    assert_eq!(asked.load(Ordering::SeqCst), 1);
    assert_eq!(rounds.load(Ordering::SeqCst), 1);
}

#[test]
fn a_client_closed_during_a_round_stops_it() {
    let (server, rounds) = asking_server("rounds-close", 10, 1);
    let asked = Arc::new(AtomicUsize::new(0));
    let slot: Arc<OnceLock<Weak<Client>>> = Arc::default();
    let (counter, closer) = (asked.clone(), slot.clone());
    let options = Options::default().with_elicitation_handler(move |_: ElicitRequestParams| {
        counter.fetch_add(1, Ordering::SeqCst);
        if let Some(client) = closer.get().and_then(Weak::upgrade) {
            client.close();
        }
        Ok(ElicitResult::decline())
    });
    let client = Arc::new(Client::connect_with_options(server, options).expect("connect"));
    let _ = slot.set(Arc::downgrade(&client));
    match client.call_tool("ask", json!({})) {
        Err(Error::Closed(_)) => {}
        other => panic!("expected a closed client, got {other:?}"),
    }
    assert_eq!(asked.load(Ordering::SeqCst), 1);
    assert_eq!(rounds.load(Ordering::SeqCst), 1);
}

/// A round asking for more inputs than the client takes at once fails before any handler
/// runs (each may be a paid model call or a question to a user).
#[test]
fn an_input_round_asking_for_too_many_inputs_fails_before_any_handler_runs() {
    let (server, _) = asking_server("rounds-many-inputs", 5_000, 1);
    let (options, asked) = slow_handler(Duration::ZERO);
    let client = Client::connect_with_options(server, options).expect("connect");
    match client.call_tool("ask", json!({})) {
        Err(Error::Protocol(why)) => assert!(why.contains("5000 inputs"), "{why}"),
        other => panic!("expected a protocol error, got {other:?}"),
    }
    assert_eq!(asked.load(Ordering::SeqCst), 0);
}

/// A handler's error cannot travel in an input round: the call fails here, naming the
/// handler's code and message, and the server is not asked again.
#[test]
fn a_failing_handler_ends_the_call_naming_its_error() {
    let (server, seen) = asking_server("rounds-handler-error", 1, 1);
    let options = Options::default().with_elicitation_handler(|_: ElicitRequestParams| {
        Err(umcp::jsonrpc::ErrorObject::new(
            umcp::jsonrpc::ErrorCode(-31001),
            "no user at the keyboard",
        ))
    });
    let client = Client::connect_with_options(server, options).expect("connect");
    match client.call_tool("ask", json!({})) {
        Err(Error::Protocol(why)) => {
            assert!(why.contains("elicitation/create"), "{why}");
            assert!(why.contains("-31001"), "{why}");
            assert!(why.contains("no user at the keyboard"), "{why}");
        }
        other => panic!("expected the handler's error, got {other:?}"),
    }
    assert_eq!(seen.load(Ordering::SeqCst), 1, "one round, not retried");
}
