//! The TypeScript reference server `server-everything` over stdio: every feature it offers, end to
//! end.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use umcp::types::{
    ElicitAction, ElicitRequestParams, ElicitResult, LoggingLevel, Root, ServerNotification,
};
use umcp::{Client, Era, Options, RequestOptions, StdioConfig};

use crate::common::interop::{
    assert_progress, call_text, handler_error, next_notification, options, prompt_texts,
    resource_text, text_of, tool_names, wait_for_tool, ProgressLog, PROTOCOL_VERSION, SAMPLED_TEXT,
    WAIT,
};
use crate::common::peers;
use crate::{elicitation_handler, path_arg, sampling_handler};

/// Starts server-everything over stdio and runs the handshake.
fn everything(options: Options) -> Client {
    let config = StdioConfig::new(path_arg(&peers::node()))
        .arg(path_arg(&peers::server_everything()))
        .arg("stdio");
    Client::connect_with_options(config, options)
        .unwrap_or_else(|e| panic!("connecting to server-everything over stdio failed: {e}"))
}

// ---------------------------------------------------------------------------------------------
// server-everything (TypeScript SDK)
// ---------------------------------------------------------------------------------------------

#[test]
fn everything_handshake() {
    if peers::skip_interop() {
        return;
    }
    let client = everything(options());
    // A handshake-era server: `Auto` probed, heard -32601 and initialized.
    assert_eq!(client.era(), Era::Legacy);
    assert_eq!(client.server_info().name, "mcp-servers/everything");
    assert_eq!(client.protocol_version(), PROTOCOL_VERSION);
    assert_eq!(client.transport_kind(), "stdio");
    let caps = client.server_capabilities();
    assert!(caps.tools.is_some(), "{caps:?}");
    assert!(caps.prompts.is_some(), "{caps:?}");
    assert!(caps.resources.is_some(), "{caps:?}");
    assert!(caps.logging.is_some(), "{caps:?}");
    assert!(caps.completions.is_some(), "{caps:?}");
    assert!(
        client
            .instructions()
            .is_some_and(|text| text.contains("Everything Server")),
        "instructions: {:?}",
        client.instructions()
    );
    client.ping().expect("ping");
    client.close();
}

#[test]
fn everything_tools_list_and_call() {
    if peers::skip_interop() {
        return;
    }
    let client = everything(options());
    let names = tool_names(&client);
    for expected in [
        "echo",
        "get-sum",
        "trigger-long-running-operation",
        "toggle-simulated-logging",
    ] {
        assert!(
            names.contains(expected),
            "{expected} missing from {names:?}"
        );
    }
    // Without the client capabilities, the tools that need them are never registered.
    assert!(!names.contains("trigger-sampling-request"), "{names:?}");

    assert_eq!(
        call_text(&client, "echo", json!({"message": "hello umcp"})),
        "Echo: hello umcp"
    );
    assert_eq!(
        call_text(&client, "get-sum", json!({"a": 2, "b": 3})),
        "The sum of 2 and 3 is 5."
    );

    // Tool errors come back as a result with isError, not as a JSON-RPC error.
    let missing = client
        .call_tool("no-such-tool", json!({}))
        .expect("tools/call");
    assert_eq!(missing.is_error, Some(true), "{missing:?}");
    let invalid = client
        .call_tool("get-sum", json!({"a": "two", "b": 3}))
        .expect("tools/call");
    assert_eq!(invalid.is_error, Some(true), "{invalid:?}");
}

#[test]
fn everything_resource_read() {
    if peers::skip_interop() {
        return;
    }
    let client = everything(options());
    let resources = client.list_all_resources().expect("resources/list");
    assert!(!resources.is_empty());
    let templates = client
        .list_all_resource_templates()
        .expect("resources/templates/list");
    assert!(
        templates
            .iter()
            .any(|t| t.uri_template == "demo://resource/dynamic/text/{resourceId}"),
        "{templates:?}"
    );

    let read = client
        .read_resource("demo://resource/dynamic/text/1")
        .expect("resources/read");
    let (text, mime_type) = resource_text(&read);
    assert!(text.starts_with("Resource 1:"), "{text}");
    assert_eq!(mime_type.as_deref(), Some("text/plain"));
}

#[test]
fn everything_prompt_get() {
    if peers::skip_interop() {
        return;
    }
    let client = everything(options());
    let prompts = client.list_all_prompts().expect("prompts/list");
    let names: BTreeSet<_> = prompts.iter().map(|p| p.name.as_str()).collect();
    assert!(
        names.contains("simple-prompt") && names.contains("args-prompt"),
        "{names:?}"
    );

    let prompt = client
        .get_prompt("args-prompt", json!({"city": "Paris"}))
        .expect("prompts/get");
    assert_eq!(prompt_texts(&prompt), ["What's weather in Paris?"]);
    let simple = client
        .get_prompt("simple-prompt", Value::Null)
        .expect("prompts/get");
    assert_eq!(
        prompt_texts(&simple),
        ["This is a simple prompt without arguments."]
    );
}

#[test]
fn everything_progress() {
    if peers::skip_interop() {
        return;
    }
    let client = everything(options());
    let progress = ProgressLog::default();
    let result = client
        .with(&progress.options())
        .call_tool(
            "trigger-long-running-operation",
            json!({"duration": 1, "steps": 4}),
        )
        .expect("tools/call");
    assert!(text_of(&result).contains("Steps: 4"), "{result:?}");
    let entries = progress.entries();
    assert_eq!(entries.len(), 4, "{entries:?}");
    assert_progress(&entries, 4.0);
}

#[test]
fn everything_sampling() {
    if peers::skip_interop() {
        return;
    }
    let seen = Arc::new(Mutex::new(None));
    let client = everything(options().with_sampling_handler(sampling_handler(seen.clone())));
    let notes = client.notifications();
    wait_for_tool(&client, &notes, "trigger-sampling-request");

    let text = call_text(
        &client,
        "trigger-sampling-request",
        json!({"prompt": "Say hello", "maxTokens": 20}),
    );
    assert!(text.contains(SAMPLED_TEXT), "{text}");
    let request = seen
        .lock()
        .expect("seen")
        .clone()
        .expect("the handler was called");
    assert_eq!(request["maxTokens"], 20, "{request}");
    let asked = request["messages"][0]["content"]["text"]
        .as_str()
        .unwrap_or("");
    assert!(asked.contains("Say hello"), "{request}");
}

#[test]
fn everything_elicitation() {
    if peers::skip_interop() {
        return;
    }
    let schema = Arc::new(Mutex::new(None));
    let handler = elicitation_handler(
        json!({"name": "Ada Lovelace", "check": true}),
        schema.clone(),
    );
    let client = everything(options().with_elicitation_handler(handler));
    let notes = client.notifications();
    wait_for_tool(&client, &notes, "trigger-elicitation-request");

    // server-everything sends the form request without `mode`, which means form.
    let text = call_text(&client, "trigger-elicitation-request", json!({}));
    assert!(text.contains("Name: Ada Lovelace"), "{text}");
    assert!(text.contains("Agreed to terms: true"), "{text}");
    // A default taken from the schema by accept_defaults, echoed back in the raw result.
    assert!(text.contains("It was a dark and stormy night."), "{text}");
    let schema = schema
        .lock()
        .expect("schema")
        .clone()
        .expect("the handler was called");
    assert_eq!(schema["required"], json!(["name"]), "{schema}");
}

#[test]
fn everything_url_elicitation() {
    if peers::skip_interop() {
        return;
    }
    let asked = Arc::new(Mutex::new(Vec::new()));
    let seen = asked.clone();
    let handler = move |params: ElicitRequestParams| {
        if let ElicitRequestParams::Url(page) = params {
            seen.lock().expect("asked").push(page.url);
            return Ok(ElicitResult::new(ElicitAction::Accept));
        }
        Err(handler_error(format!(
            "expected a URL elicitation, got {params:?}"
        )))
    };
    let client = everything(options().with_elicitation_handler(handler));
    let notes = client.notifications();
    wait_for_tool(&client, &notes, "trigger-url-elicitation");

    // The request path: the server asks through `elicitation/create` in URL mode.
    let page = "https://example.com/umcp-consent";
    let text = call_text(&client, "trigger-url-elicitation", json!({"url": page}));
    assert_eq!(*asked.lock().expect("asked"), [page], "{text}");
    assert!(text.contains("accept"), "{text}");

    // The error path: -32042 names the pages, and the connection stays usable.
    let error = client
        .call_tool(
            "trigger-url-elicitation",
            json!({"url": page, "errorPath": true}),
        )
        .expect_err("-32042");
    let pages = error
        .url_elicitations_required()
        .unwrap_or_else(|| panic!("not a -32042: {error}"));
    assert_eq!(pages.len(), 1, "{error}");
    assert!(pages[0].url.starts_with("https://"), "{:?}", pages[0]);
    assert!(
        pages[0]
            .elicitation_id
            .as_ref()
            .is_some_and(|id| !id.is_empty()),
        "{:?}",
        pages[0]
    );
    assert!(!pages[0].message.is_empty(), "{:?}", pages[0]);
    assert!(call_text(&client, "echo", json!({"message": "still here"})).contains("still here"));
}

#[test]
fn everything_roots() {
    if peers::skip_interop() {
        return;
    }
    let client = everything(options().with_roots(vec![Root::new("file:///tmp/umcp-interop")]));
    let notes = client.notifications();
    wait_for_tool(&client, &notes, "get-roots-list");
    // The server asks for the roots by itself after initialization, and again here if needed.
    let text = call_text(&client, "get-roots-list", json!({}));
    assert!(text.contains("file:///tmp/umcp-interop"), "{text}");
}

#[test]
fn everything_logging() {
    if peers::skip_interop() {
        return;
    }
    let client = everything(options());
    let notes = client.notifications();
    client
        .set_logging_level(LoggingLevel::Debug)
        .expect("logging/setLevel");
    let text = call_text(&client, "toggle-simulated-logging", json!({}));
    assert!(text.contains("Started simulated"), "{text}");

    // The first simulated message is sent at once, the next ones every few seconds.
    let deadline = Instant::now() + WAIT;
    let message = loop {
        match next_notification(&notes, deadline) {
            Some(ServerNotification::LoggingMessage(params)) => break params,
            Some(_) => continue,
            None => panic!("no notifications/message arrived within {WAIT:?}"),
        }
    };
    assert!(
        message
            .data
            .as_str()
            .is_some_and(|data| data.contains("message")),
        "{message:?}"
    );

    // With simulated logging on, the server does not exit when its stdin closes: close() must
    // still return, by killing it.
    let started = Instant::now();
    client.close();
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "close took {:?}",
        started.elapsed()
    );
}

#[test]
fn everything_task_tool() {
    if peers::skip_interop() {
        return;
    }
    let client = everything(Options::default().with_tasks(true));
    let tools = client.list_all_tools().expect("tools/list");
    let research = tools
        .iter()
        .find(|tool| tool.name == "simulate-research-query")
        .expect("server-everything lists its task tool");
    let execution = research.execution.as_ref().expect("execution");
    assert_eq!(execution["taskSupport"], "required");
    // Four stages of about a second each, then the report.
    let options = RequestOptions::default().with_timeout(Duration::from_secs(60));
    let arguments = json!({"topic": "blocking clients"});
    let report = client
        .with(&options)
        .call_tool("simulate-research-query", arguments)
        .expect("the task's result");
    assert!(!report.is_error(), "{}", report.text());
    assert!(
        report.text().contains("Research Report: blocking clients"),
        "{}",
        report.text()
    );
    client.close();
}

#[test]
fn everything_research_runs_as_a_task_held_by_handle() {
    if peers::skip_interop() {
        return;
    }
    let client = everything(options());
    let started = Instant::now();
    let call = client
        .call_tool_as_task("simulate-research-query", json!({"topic": "rust"}))
        .expect("tools/call");
    let umcp::ToolCall::Task(mut task) = call else {
        panic!("server-everything runs research as a task: {call:?}")
    };
    // The id comes back as soon as the task is made, long before its seconds of work end.
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    let status = task.poll().expect("tasks/get").clone();
    assert!(
        matches!(status, umcp::TaskStatus::Working),
        "{status:?} {:?}",
        task.status_message()
    );
    let patience = RequestOptions::default().with_timeout(Duration::from_secs(60));
    let result = client.task(task.id()).wait(&patience).expect("its result");
    assert!(
        text_of(&result).contains("Research Report: rust"),
        "{}",
        text_of(&result)
    );
    client.close();
}
