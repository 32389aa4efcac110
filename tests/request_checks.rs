//! The checks the client makes on a server's request before a handler sees it: elicitation
//! modes the client did not declare, and sampling conversations whose tool uses and results
//! do not balance, both refused with -32602 (in a stateless input round, the call fails).
//! Also the manager's elicitation handler, told which server asks.

#[allow(dead_code)] // Not every helper of the fake server is used here.
#[path = "common/memory.rs"]
mod memory;

use umcp_test_support::demo;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use memory::FakeServer;
use serde_json::{json, Value};
use umcp::jsonrpc::{ErrorCode, ErrorObject, Message, Response};
use umcp::types::{
    ContentBlock, CreateMessageResult, ElicitAction, ElicitRequestParams, ElicitResult,
    META_CLIENT_CAPABILITIES,
};
use umcp::{
    Client, ElicitationModes, Error, Manager, ManagerOptions, Options, ProtocolMode, ServerConfig,
    StdioConfig, Unsupported,
};

/// The capabilities the client declared in `initialize`.
fn initialize_capabilities(server: &FakeServer) -> Value {
    let received = server.received.lock().unwrap();
    let initialize = received.iter().find_map(|m| match m {
        Message::Request(r) if r.method == "initialize" => r.params.clone(),
        _ => None,
    });
    initialize.expect("an initialize")["capabilities"].clone()
}

/// A handshake-era server whose `tools/call` sends the client a `method` request with the
/// call's arguments as params, and returns the client's answer (or its error) as structured
/// content.
fn asking_server(method: &'static str) -> FakeServer {
    let server = FakeServer::new();
    server.on("tools/call", move |peer, request| {
        let params = request.params.as_ref().unwrap()["arguments"].clone();
        let answer = match peer.request(method, params).result {
            Ok(result) => json!({"ok": result}),
            Err(error) => json!({"code": error.code.0, "message": error.message}),
        };
        Some(json!({"content": [], "structuredContent": answer}))
    });
    server
}

fn ask(client: &Client, params: Value) -> Value {
    let result = client.call_tool("ask", params).unwrap();
    result.structured_content.unwrap()
}

/// Elicitation options whose handler counts its calls and accepts.
fn counting_elicitor(calls: &Arc<AtomicUsize>) -> Options {
    let calls = Arc::clone(calls);
    Options::default()
        .with_protocol_mode(ProtocolMode::Legacy)
        .with_elicitation_handler(move |_| {
            calls.fetch_add(1, Ordering::SeqCst);
            Ok(ElicitResult::new(ElicitAction::Accept))
        })
}

fn url_request() -> Value {
    json!({"mode": "url", "message": "Sign in", "url": "https://example.com/x",
           "elicitationId": "e-1"})
}

fn form_request() -> Value {
    json!({"message": "Name?", "requestedSchema": {"type": "object"}})
}

#[test]
fn a_form_only_client_declares_form_and_refuses_url_mode() {
    let server = asking_server("elicitation/create");
    let calls = Arc::new(AtomicUsize::new(0));
    let options = counting_elicitor(&calls).with_elicitation_modes(ElicitationModes::FORM);
    let client = Client::connect_with_options(server.clone(), options).unwrap();
    assert_eq!(
        initialize_capabilities(&server)["elicitation"],
        json!({"form": {}})
    );
    let answer = ask(&client, url_request());
    assert_eq!(answer["code"], ErrorCode::INVALID_PARAMS.0, "{answer}");
    assert!(
        answer["message"].as_str().unwrap().contains("`url`"),
        "{answer}"
    );
    assert_eq!(calls.load(Ordering::SeqCst), 0, "the handler must not run");
    let answer = ask(&client, form_request());
    assert_eq!(answer["ok"]["action"], "accept", "{answer}");
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[test]
fn a_url_only_client_refuses_forms_and_the_default_declares_both() {
    let server = asking_server("elicitation/create");
    let calls = Arc::new(AtomicUsize::new(0));
    let options = counting_elicitor(&calls).with_elicitation_modes(ElicitationModes::URL);
    let client = Client::connect_with_options(server.clone(), options).unwrap();
    assert_eq!(
        initialize_capabilities(&server)["elicitation"],
        json!({"url": {}})
    );
    // Without a mode, as servers of every version may send it: form mode.
    let answer = ask(&client, form_request());
    assert_eq!(answer["code"], ErrorCode::INVALID_PARAMS.0, "{answer}");
    assert_eq!(ask(&client, url_request())["ok"]["action"], "accept");
    assert_eq!(calls.load(Ordering::SeqCst), 1);

    let server = asking_server("elicitation/create");
    let client = Client::connect_with_options(server.clone(), counting_elicitor(&calls)).unwrap();
    assert_eq!(
        initialize_capabilities(&server)["elicitation"],
        json!({"form": {}, "url": {}})
    );
    assert_eq!(ask(&client, url_request())["ok"]["action"], "accept");
    assert_eq!(ask(&client, form_request())["ok"]["action"], "accept");
}

/// A stateless-era server whose `tools/call` asks for input with the call's arguments as an
/// `elicitation/create` request, and returns the client's answer.
fn modern_asking_server(name: &str) -> FakeServer {
    let server = FakeServer::named(name);
    server.on("server/discover", |_, _| {
        Some(json!({
            "supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {}},
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "modern", "version": "1"}},
        }))
    });
    server.on("initialize", |peer, request| {
        let error = ErrorObject::new(ErrorCode::UNSUPPORTED_PROTOCOL_VERSION, "no initialize");
        peer.send(Response::err(request.id.clone(), error).into());
        None
    });
    server.on("tools/call", |_, request| {
        let params = request.params.as_ref().unwrap();
        if let Some(responses) = params.get("inputResponses") {
            return Some(json!({"content": [], "structuredContent": responses["e"]}));
        }
        Some(json!({
            "resultType": "input_required",
            "inputRequests": {"e": {"method": "elicitation/create",
                                    "params": params["arguments"].clone()}},
        }))
    });
    server
}

#[test]
fn a_stateless_input_round_of_an_undeclared_mode_fails_the_call() {
    let server = modern_asking_server("request-checks-modern-elicitation");
    let calls = Arc::new(AtomicUsize::new(0));
    let options = counting_elicitor(&calls)
        .with_protocol_mode(ProtocolMode::modern())
        .with_elicitation_modes(ElicitationModes::FORM);
    let client = Client::connect_with_options(server.clone(), options).unwrap();
    let url = json!({"mode": "url", "message": "Sign in", "url": "https://example.com/x"});
    match client.call_tool("ask", url) {
        Err(Error::Unsupported(Unsupported::Feature(message))) => {
            assert!(message.contains("`url`"), "{message}")
        }
        other => panic!("expected Unsupported, got {other:?}"),
    }
    assert_eq!(calls.load(Ordering::SeqCst), 0, "the handler must not run");
    let answer = client.call_tool("ask", form_request()).unwrap();
    assert_eq!(answer.structured_content.unwrap()["action"], "accept");
    let received = server.received.lock().unwrap();
    let sent = received.iter().find_map(|m| match m {
        Message::Request(r) if r.method == "tools/call" => r.params.clone(),
        _ => None,
    });
    let meta = &sent.unwrap()["_meta"];
    assert_eq!(
        meta[META_CLIENT_CAPABILITIES]["elicitation"],
        json!({"form": {}})
    );
}

/// Tool-enabled sampling options whose handler counts its calls.
fn counting_sampler(calls: &Arc<AtomicUsize>) -> Options {
    let calls = Arc::clone(calls);
    Options::default()
        .with_protocol_mode(ProtocolMode::Legacy)
        .with_sampling_tools(true)
        .with_sampling_handler(move |_| {
            calls.fetch_add(1, Ordering::SeqCst);
            Ok(CreateMessageResult::new("m", ContentBlock::text("18°C")))
        })
}

fn sampling(messages: Value) -> Value {
    json!({"messages": messages, "maxTokens": 50,
           "tools": [{"name": "weather", "inputSchema": {"type": "object"}}]})
}

#[test]
fn sampling_with_unbalanced_tool_results_is_refused_before_the_handler() {
    let server = asking_server("sampling/createMessage");
    let calls = Arc::new(AtomicUsize::new(0));
    let client = Client::connect_with_options(server, counting_sampler(&calls)).unwrap();
    let question = json!({"role": "user", "content": {"type": "text", "text": "weather?"}});
    let uses = json!({"role": "assistant", "content": [
        {"type": "tool_use", "id": "p", "name": "weather", "input": {"city": "Paris"}},
        {"type": "tool_use", "id": "l", "name": "weather", "input": {"city": "London"}}]});
    let result = |id: &str| json!({"type": "tool_result", "toolUseId": id, "content": []});
    let missing = json!({"role": "user", "content": [result("p")]});
    let mixed = json!({"role": "user", "content": [
        {"type": "text", "text": "Here are the results:"}, result("p"), result("l")]});
    for (broken, why) in [(missing, "`l`"), (mixed, "mixes tool results")] {
        let params = sampling(json!([question, uses, broken]));
        let answer = ask(&client, params);
        assert_eq!(answer["code"], ErrorCode::INVALID_PARAMS.0, "{answer}");
        let message = answer["message"].as_str().unwrap();
        assert!(message.contains(why), "{message}");
    }
    assert_eq!(calls.load(Ordering::SeqCst), 0, "the handler must not run");
    let balanced = json!({"role": "user", "content": [result("l"), result("p")]});
    let answer = ask(&client, sampling(json!([question, uses, balanced])));
    assert_eq!(answer["ok"]["content"]["text"], "18°C", "{answer}");
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[test]
fn the_manager_handler_is_told_which_server_asks() {
    let asked = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&asked);
    let options = ManagerOptions::default()
        .without_cache()
        .with_client_options(Options::default().with_elicitation_modes(ElicitationModes::FORM))
        .with_elicitation_handler(move |server, request| {
            seen.lock()
                .unwrap()
                .push(format!("{server}: {}", request.message()));
            match request {
                ElicitRequestParams::Form(form) => Ok(ElicitResult::accept_defaults(&form)),
                ElicitRequestParams::Url(_) => Ok(ElicitResult::decline()),
            }
        });
    let server = |name: &str| {
        ServerConfig::new(
            name,
            StdioConfig::new(demo::demo_binary().to_string_lossy())
                .args(["--server", "--fixtures"]),
        )
    };
    let manager = Manager::start(vec![server("alpha"), server("beta")], options);
    assert!(manager.wait_ready(Duration::from_secs(30)));
    for name in ["beta", "alpha"] {
        let question = json!({"question": format!("Ready, {name}?")});
        let result = manager
            .call_tool(&format!("{name}__ask_user"), question)
            .unwrap();
        assert_eq!(result.structured_content.unwrap()["action"], "accept");
    }
    assert_eq!(
        *asked.lock().unwrap(),
        ["beta: Ready, beta?", "alpha: Ready, alpha?"]
    );
    manager.close();
}

#[test]
fn the_managers_sampling_handler_is_told_which_server_asks() {
    let asked = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&asked);
    let options = ManagerOptions::default()
        .without_cache()
        .with_sampling_handler(move |server, request| {
            let prompt = request.messages[0].content.text();
            seen.lock().unwrap().push(format!("{server}: {prompt}"));
            Ok(CreateMessageResult::new(
                "m",
                ContentBlock::text(format!("hi {server}")),
            ))
        });
    let server = |name: &str| {
        ServerConfig::new(
            name,
            StdioConfig::new(demo::demo_binary().to_string_lossy())
                .args(["--server", "--fixtures"]),
        )
    };
    let manager = Manager::start(vec![server("alpha"), server("beta")], options);
    assert!(manager.wait_ready(Duration::from_secs(30)));
    for name in ["beta", "alpha"] {
        let prompt = json!({"prompt": format!("Hello from {name}")});
        let result = manager
            .call_tool(&format!("{name}__ask_llm"), prompt)
            .unwrap();
        assert_eq!(result.text(), format!("hi {name}"));
    }
    assert_eq!(
        *asked.lock().unwrap(),
        ["beta: Hello from beta", "alpha: Hello from alpha"]
    );
    manager.close();
}
