//! Tests for the testing kit's fake server: one definition, served in memory to a real client
//! in both protocol eras, with progress, an elicitation and notifications on the way.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};
use umcp::jsonrpc::{ErrorCode, Message};
use umcp::testing::{FakeServer, Fault};
use umcp::types::{
    CallToolResult, ContentBlock, ElicitAction, ElicitRequestFormParams, ElicitRequestParams,
    ElicitResult, ReadResourceResult, Resource, ResourceContents, ServerNotification,
    SubscriptionFilter, Tool,
};
use umcp::{Client, Era, Error, Options, ProtocolMode, RequestOptions, SubscriptionEvent};

/// Generous bound for anything that should take milliseconds.
const WAIT: Duration = Duration::from_secs(10);

const LATEST: &str = "booking://latest";

/// A booking service: `book` reports progress, asks the user to confirm, and then announces
/// the change; `booking://latest` is the last booking.
fn booking_server() -> FakeServer {
    let schema = json!({
        "type": "object",
        "properties": {"seats": {"type": "integer", "minimum": 1}},
        "required": ["seats"],
    });
    let book = Tool::new("book", schema).with_description("Books seats, once confirmed.");
    let confirm = json!({
        "type": "object",
        "properties": {"confirm": {"type": "boolean"}},
        "required": ["confirm"],
    });
    FakeServer::new("booking")
        .with_input_timeout(WAIT)
        .with_tool(book, move |ctx, args| {
            let seats = args["seats"].as_u64().unwrap_or(0);
            for step in 1..=3 {
                ctx.progress(f64::from(step), Some(3.0), Some("checking availability"));
            }
            let question = format!("Book {seats} seats?");
            let form = ElicitRequestFormParams::new(question, confirm.clone());
            let answer = ctx.elicit(ElicitRequestParams::Form(form))?;
            let confirmed = answer.action == ElicitAction::Accept
                && answer.content.as_ref().and_then(|c| c.get("confirm")) == Some(&json!(true));
            if !confirmed {
                return Ok(CallToolResult::error("not confirmed"));
            }
            ctx.notify(
                "notifications/resources/updated",
                Some(json!({ "uri": LATEST })),
            );
            let text = format!("booked {seats} seats in the {} era", ctx.era().as_str());
            Ok(CallToolResult::new(vec![ContentBlock::text(text)]))
        })
        .with_resource(
            Resource::new(LATEST, "latest booking").with_mime_type("text/plain"),
            |_, uri| {
                Ok(ReadResourceResult::new(vec![ResourceContents::text(
                    uri,
                    "2 seats, row 7",
                )]))
            },
        )
}

/// Options that answer every form with `confirm` and count the questions.
fn confirming(mode: ProtocolMode, confirm: bool) -> (Options, Arc<Mutex<Vec<String>>>) {
    let asked = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&asked);
    let options = Options::default()
        .with_protocol_mode(mode)
        .with_request_timeout(WAIT)
        .with_elicitation_handler(move |params: ElicitRequestParams| {
            log.lock().unwrap().push(params.message().to_owned());
            let mut content = Map::new();
            content.insert("confirm".into(), json!(confirm));
            Ok(ElicitResult::accept(content))
        });
    (options, asked)
}

fn next_notification(events: &umcp::Subscription) -> ServerNotification {
    match events.recv_timeout(WAIT) {
        Some(SubscriptionEvent::Notification(note)) => note,
        other => panic!("expected a notification, got {other:?}"),
    }
}

/// The one test body both eras run: the same client code against the same server.
fn book_through(mode: ProtocolMode, era: Era) {
    let server = booking_server();
    let (options, asked) = confirming(mode, true);
    let client = Client::connect_with_options(server.clone(), options).expect("connect");
    assert_eq!(client.era(), era);
    assert_eq!(client.server_info().name, "booking");

    let tools = client.list_all_tools().expect("tools");
    assert_eq!(tools.len(), 1);
    let schema = serde_json::to_value(&tools[0].input_schema).unwrap();
    assert_eq!(schema["required"], json!(["seats"]));

    let events = client
        .listen(SubscriptionFilter::new().tools().resource(LATEST))
        .expect("listen");
    assert_eq!(
        events.acknowledged().resource_subscriptions,
        vec![LATEST.to_owned()]
    );

    let progress = Arc::new(Mutex::new(Vec::new()));
    let into = Arc::clone(&progress);
    let with_progress = RequestOptions::default().with_progress(move |p| {
        into.lock().unwrap().push((p.progress, p.message.clone()));
    });
    let booked = client
        .with(&with_progress)
        .call_tool("book", json!({"seats": 2}))
        .expect("book");
    assert_eq!(
        booked.text(),
        format!("booked 2 seats in the {} era", era.as_str())
    );
    assert_eq!(*asked.lock().unwrap(), ["Book 2 seats?"]);
    let steps: Vec<f64> = progress.lock().unwrap().iter().map(|(p, _)| *p).collect();
    assert_eq!(steps, [1.0, 2.0, 3.0]);
    assert_eq!(
        progress.lock().unwrap()[0].1.as_deref(),
        Some("checking availability")
    );

    // The handler's notification reached the subscription, and so does one the test sends.
    match next_notification(&events) {
        ServerNotification::ResourceUpdated(updated) => assert_eq!(updated.uri, LATEST),
        other => panic!("expected resources/updated, got {other:?}"),
    }
    assert_eq!(server.notify("notifications/tools/list_changed", None), 1);
    assert!(matches!(
        next_notification(&events),
        ServerNotification::ToolListChanged
    ));

    let latest = client.read_resource(LATEST).expect("read");
    assert_eq!(latest.contents[0].as_text(), Some("2 seats, row 7"));

    // How the elicitation travelled: a request to the client, or an input round.
    let calls = server.requests("tools/call");
    match era {
        Era::Legacy => {
            assert_eq!(calls.len(), 1);
            let answered = server.received().iter().any(|m| {
                matches!(m, Message::Response(r) if r.result.as_ref().is_ok_and(|v| v["action"] == "accept"))
            });
            assert!(answered, "the client answered elicitation/create");
        }
        Era::Modern => {
            assert_eq!(calls.len(), 2, "the first round and its retry");
            let retry = &calls[1];
            let answers = retry["inputResponses"].as_object().expect("inputResponses");
            assert_eq!(answers.len(), 1);
            let answer = answers.values().next().unwrap();
            assert_eq!(answer["content"]["confirm"], true);
            assert!(retry["requestState"].is_string());
            assert!(retry["_meta"]["io.modelcontextprotocol/protocolVersion"].is_string());
        }
        _ => unreachable!(),
    }
    events.close();
    client.close();
}

#[test]
fn smoke_one_server_in_the_handshake_era() {
    book_through(ProtocolMode::Legacy, Era::Legacy);
}

#[test]
fn the_same_server_and_client_code_in_the_stateless_era() {
    book_through(ProtocolMode::modern(), Era::Modern);
}

#[test]
fn a_client_that_probes_chooses_the_stateless_era_of_a_server_that_speaks_both() {
    book_through(ProtocolMode::Auto, Era::Modern);
}

#[test]
fn a_declined_confirmation_is_the_tool_s_error_in_both_eras() {
    for mode in [ProtocolMode::Legacy, ProtocolMode::modern()] {
        let (options, _) = confirming(mode, false);
        let client = Client::connect_with_options(booking_server(), options).expect("connect");
        let outcome = client.call_tool("book", json!({"seats": 1})).expect("book");
        assert!(outcome.is_error());
        assert_eq!(outcome.text(), "not confirmed");
    }
}

#[test]
fn a_server_of_one_era_refuses_a_client_pinned_to_the_other() {
    let legacy_only = booking_server().with_era(Era::Legacy);
    let pinned = Options::default().with_protocol_mode(ProtocolMode::modern());
    assert!(Client::connect_with_options(legacy_only.clone(), pinned).is_err());
    let probing = Client::connect(legacy_only).expect("falls back to initialize");
    assert_eq!(probing.era(), Era::Legacy);

    let modern_only = booking_server().with_era(Era::Modern);
    let legacy = Options::default().with_protocol_mode(ProtocolMode::Legacy);
    match Client::connect_with_options(modern_only, legacy) {
        Err(e) => assert_eq!(
            e.rpc_error().map(|o| o.code),
            Some(ErrorCode::UNSUPPORTED_PROTOCOL_VERSION)
        ),
        Ok(client) => panic!("connected in the {:?} era", client.era()),
    }
}

#[test]
fn a_panicking_handler_is_an_internal_error_and_the_server_goes_on() {
    let server = FakeServer::new("fragile")
        .with_tool(Tool::new("boom", json!({"type": "object"})), |_, _| {
            panic!("the handler broke")
        })
        .with_tool(Tool::new("ok", json!({"type": "object"})), |_, _| {
            Ok(CallToolResult::new(vec![ContentBlock::text("fine")]))
        });
    let client = Client::connect(server).expect("connect");
    match client.call_tool("boom", json!({})) {
        Err(Error::Rpc(error)) => {
            assert_eq!(error.code, ErrorCode::INTERNAL_ERROR);
            assert!(error.message.contains("panicked"), "{}", error.message);
        }
        other => panic!("expected an internal error, got {other:?}"),
    }
    assert_eq!(
        client.call_tool("ok", json!({})).expect("ok").text(),
        "fine"
    );
    match client.call_tool("missing", json!({})) {
        Err(Error::Rpc(error)) => assert_eq!(error.code, ErrorCode::INVALID_PARAMS),
        other => panic!("expected invalid params, got {other:?}"),
    }
}

#[test]
fn a_handler_asleep_or_a_delayed_answer_never_holds_up_close() {
    let server = FakeServer::new("sleepy")
        .with_tool(Tool::new("nap", json!({"type": "object"})), |ctx, _| {
            ctx.sleep(Duration::from_secs(3600));
            Ok(CallToolResult::default())
        })
        .with_fault("prompts/list", Fault::Delay(Duration::from_secs(3600)));
    let client = Arc::new(Client::connect(server.clone()).expect("connect"));
    let callers: Vec<_> = [true, false]
        .into_iter()
        .map(|tool| {
            let client = Arc::clone(&client);
            std::thread::spawn(move || match tool {
                true => client.call_tool("nap", json!({})).map(drop),
                false => client.request_raw("prompts/list", None).map(drop),
            })
        })
        .collect();
    // Both requests have reached the server.
    let started = Instant::now();
    while server.requests("tools/call").is_empty() || server.requests("prompts/list").is_empty() {
        assert!(started.elapsed() < WAIT, "the requests never arrived");
        std::thread::sleep(Duration::from_millis(5));
    }
    let closing = Instant::now();
    client.close();
    assert!(
        closing.elapsed() < Duration::from_secs(5),
        "{:?}",
        closing.elapsed()
    );
    for caller in callers {
        assert!(matches!(caller.join().unwrap(), Err(Error::Closed(_))));
    }
    // The server's side ended too: its handler woke, and the connection is gone.
    let ended = Instant::now();
    while server.connections() > 0 {
        assert!(ended.elapsed() < WAIT, "the connection never ended");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn faults_answer_for_the_server() {
    let weird = json!({"tools": "not a list"});
    let server = booking_server().with_fault("prompts/list", Fault::Silence);
    let client = Client::connect(server.clone()).expect("connect");
    server.fault_once("tools/list", Fault::Result(weird));
    assert!(matches!(client.list_tools(None), Err(Error::Protocol(_))));
    // Once only.
    assert_eq!(client.list_all_tools().expect("tools").len(), 1);
    let quick = RequestOptions::default().with_timeout(Duration::from_millis(200));
    let silent = client.with(&quick).request_raw("prompts/list", None);
    assert!(matches!(silent, Err(Error::Timeout { .. })), "{silent:?}");
    let errors: Vec<Value> = server.requests("prompts/list");
    assert_eq!(errors.len(), 1);
}

#[test]
fn a_client_dropped_leaves_nothing_of_it_held_by_the_server() {
    let token = Arc::new(());
    let held = Arc::clone(&token);
    let options = Options::default().with_notification_callback(move |_| {
        let _ = &held;
    });
    let server = booking_server();
    let client = Client::connect_with_options(server.clone(), options).expect("connect");
    assert_eq!(client.list_all_tools().expect("tools").len(), 1);
    drop(client);
    let dropped = Instant::now();
    while server.connections() > 0 || Arc::strong_count(&token) > 1 {
        assert!(
            dropped.elapsed() < WAIT,
            "the client's callback is still held"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}
