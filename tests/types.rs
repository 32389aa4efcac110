//! Tests for the MCP types against golden server messages in `tests/fixtures/`.

use std::path::PathBuf;

use serde::de::DeserializeOwned;
use serde_json::{json, Value};

use umcp::jsonrpc::{Message, Payload, Request};
use umcp::types::{
    CallTool, CallToolResult, ContentBlock, CreateMessage, CreateMessageRequestParams,
    CreateMessageResult, Elicit, ElicitAction, ElicitRequestParams, ElicitResult, GetPrompt,
    GetPromptResult, IncludeContext, Initialize, InitializeResult, ListTools, ListToolsResult,
    LoggingLevel, Method, ProgressToken, ReadResource, ReadResourceResult, ResourceContents, Role,
    SamplingContent, ServerNotification, LATEST_PROTOCOL_VERSION,
};

fn fixture(name: &str) -> String {
    let path: PathBuf = [env!("CARGO_MANIFEST_DIR"), "tests", "fixtures", name]
        .iter()
        .collect();
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn message(name: &str) -> Message {
    match Payload::decode(&fixture(name)) {
        Ok(Payload::Single(m)) => m,
        other => panic!("{name}: {other:?}"),
    }
}

/// The `result` of a fixture holding a successful response.
fn result_value(name: &str) -> Value {
    match message(name) {
        Message::Response(r) => r.result.unwrap_or_else(|e| panic!("{name}: {e}")),
        other => panic!("{name}: not a response: {other:?}"),
    }
}

/// Decodes a fixture's result as `M::Result`, the way a typed request would.
fn result<M: Method>(name: &str) -> M::Result {
    serde_json::from_value(result_value(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn request(name: &str) -> Request {
    match message(name) {
        Message::Request(r) => r,
        other => panic!("{name}: not a request: {other:?}"),
    }
}

fn params<T: DeserializeOwned>(req: &Request) -> T {
    serde_json::from_value(req.params.clone().unwrap_or(Value::Null)).unwrap()
}

/// Asserts that decoding and re-encoding `name`'s result gives back exactly the same JSON.
fn assert_round_trips<T: DeserializeOwned + serde::Serialize>(name: &str) {
    let original = result_value(name);
    let decoded: T = serde_json::from_value(original.clone()).unwrap();
    assert_eq!(serde_json::to_value(&decoded).unwrap(), original, "{name}");
}

#[test]
fn smoke() {
    let r = result::<CallTool>("call_tool_result.json");
    assert!(r.text().starts_with("Paris"));
}

#[test]
fn initialize_result_2025_11_25() {
    let r: InitializeResult = result::<Initialize>("initialize_result.json");
    assert_eq!(r.protocol_version, LATEST_PROTOCOL_VERSION);
    let caps = &r.capabilities;
    assert!(caps.supports_tools() && caps.tools_list_changed());
    assert!(caps.supports_resource_subscriptions() && caps.resources_list_changed());
    assert!(caps.supports_prompts() && caps.prompts_list_changed());
    assert!(caps.supports_logging() && caps.supports_completions());
    assert!(caps.tasks.as_ref().unwrap().supports_request("tools/call"));
    assert_eq!(
        caps.experimental.as_ref().unwrap()["com.example/streaming"]["chunkSize"],
        4096
    );
    let info = &r.server_info;
    assert_eq!(
        (info.name.as_str(), info.version.as_str()),
        ("example-files", "3.2.1")
    );
    assert_eq!(info.display_name(), "Example Files");
    assert_eq!(
        info.website_url.as_deref(),
        Some("https://files.example.com")
    );
    let icons = info.icons.as_ref().unwrap();
    assert_eq!(icons.len(), 2);
    assert_eq!(icons[0].theme.as_deref(), Some("light"));
    assert_eq!(icons[1].sizes.as_deref(), Some(&["any".to_owned()][..]));
    assert!(r
        .instructions
        .as_deref()
        .unwrap()
        .starts_with("Call list_directory"));
    assert_eq!(r.meta.as_ref().unwrap()["com.example/build"], "2025-12-01");
    assert_round_trips::<InitializeResult>("initialize_result.json");
}

#[test]
fn initialize_result_2024_11_05() {
    let r = result::<Initialize>("initialize_result_2024_11_05.json");
    assert_eq!(r.protocol_version, "2024-11-05");
    assert!(umcp::types::is_supported_protocol_version(
        &r.protocol_version
    ));
    let caps = &r.capabilities;
    assert!(caps.supports_tools() && !caps.tools_list_changed());
    assert!(caps.supports_resources() && !caps.supports_resource_subscriptions());
    assert!(!caps.supports_completions());
    assert_eq!(r.server_info.display_name(), "legacy-weather");
    assert_eq!(r.server_info.icons, None);
    assert_round_trips::<InitializeResult>("initialize_result_2024_11_05.json");
}

#[test]
fn tools_list_with_annotations_output_schema_and_icons() {
    let page: ListToolsResult = result::<ListTools>("tools_list.json");
    assert_eq!(page.next_cursor.as_deref(), Some("eyJwYWdlIjoyfQ=="));
    let [weather, delete, echo] = &page.tools[..] else {
        panic!("{:?}", page.tools)
    };
    assert_eq!(weather.display_name(), "Weather");
    assert_eq!(weather.input_schema["required"], json!(["city"]));
    let output = weather.output_schema.as_ref().unwrap();
    assert_eq!(output["properties"]["temperature"]["type"], "number");
    let ann = weather.annotations.as_ref().unwrap();
    assert_eq!(
        (ann.read_only_hint, ann.destructive_hint),
        (Some(true), None)
    );
    assert!(weather.icons.as_ref().unwrap()[0]
        .src
        .starts_with("data:image/png"));

    assert_eq!(delete.display_name(), "delete_file");
    assert_eq!(
        delete.annotations.as_ref().unwrap().destructive_hint,
        Some(true)
    );
    assert_eq!(
        delete.execution.as_ref().unwrap()["taskSupport"],
        "optional"
    );
    assert_eq!(
        delete.meta.as_ref().unwrap()["com.example/category"],
        "files"
    );
    assert!(delete.input_schema["$schema"]
        .as_str()
        .unwrap()
        .contains("2020-12"));

    assert_eq!(echo.description, None);
    assert_eq!(echo.output_schema, None);
    assert_round_trips::<ListToolsResult>("tools_list.json");
}

#[test]
fn call_result_with_mixed_content_and_an_unknown_type() {
    let r: CallToolResult = result::<CallTool>("call_tool_result.json");
    assert!(!r.is_error());
    let kinds: Vec<&str> = r.content.iter().map(ContentBlock::kind).collect();
    assert_eq!(
        kinds,
        [
            "text",
            "image",
            "audio",
            "resource_link",
            "resource",
            "chart",
            "text"
        ]
    );
    assert_eq!(
        r.text(),
        "Paris: 18 °C, partly cloudy.\nSource: example weather service."
    );
    match &r.content[1] {
        ContentBlock::Image(img) => {
            assert_eq!(img.mime_type, "image/png");
            assert_eq!(
                img.annotations.as_ref().unwrap().audience,
                Some(vec![Role::User])
            );
        }
        other => panic!("{other:?}"),
    }
    match &r.content[3] {
        ContentBlock::ResourceLink(link) => {
            assert_eq!(link.uri, "file:///forecasts/paris.json");
            assert_eq!(link.display_name(), "Paris forecast");
            assert_eq!(link.size, Some(2311));
        }
        other => panic!("{other:?}"),
    }
    match &r.content[4] {
        ContentBlock::Resource(embedded) => {
            assert_eq!(embedded.resource.mime_type(), Some("text/markdown"));
            assert!(embedded
                .resource
                .as_text()
                .unwrap()
                .starts_with("# Forecasts"));
            let ann = embedded.annotations.as_ref().unwrap();
            assert_eq!(ann.last_modified.as_deref(), Some("2025-11-30T08:00:00Z"));
        }
        other => panic!("{other:?}"),
    }
    match &r.content[5] {
        ContentBlock::Unknown(v) => assert_eq!(v["spec"]["data"], json!([18, 19, 17])),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        r.structured_content,
        Some(json!({"temperature": 18, "conditions": "partly cloudy"}))
    );
    assert_eq!(r.meta.as_ref().unwrap()["com.example/latencyMs"], 42);
    // The unknown block is written back exactly as it came.
    assert_round_trips::<CallToolResult>("call_tool_result.json");
}

#[test]
fn resources_read_with_text_and_blob() {
    let r: ReadResourceResult = result::<ReadResource>("resources_read.json");
    assert_eq!(r.contents.len(), 2);
    match &r.contents[0] {
        ResourceContents::Text(t) => {
            assert_eq!(t.uri, "file:///project/src/main.rs");
            assert!(t.text.contains("println!"));
        }
        other => panic!("{other:?}"),
    }
    match &r.contents[1] {
        ResourceContents::Blob(b) => {
            assert_eq!(b.mime_type.as_deref(), Some("image/png"));
            assert!(b.blob.starts_with("iVBOR"));
            assert_eq!(b.meta.as_ref().unwrap()["com.example/etag"], "W/\"1f2e\"");
        }
        other => panic!("{other:?}"),
    }
    assert_round_trips::<ReadResourceResult>("resources_read.json");
}

#[test]
fn prompts_get_with_text_resource_and_image() {
    let r: GetPromptResult = result::<GetPrompt>("prompts_get.json");
    assert_eq!(
        r.description.as_deref(),
        Some("Review a Rust file for correctness and style")
    );
    let roles: Vec<Role> = r.messages.iter().map(|m| m.role.clone()).collect();
    assert_eq!(roles, [Role::User, Role::User, Role::Assistant, Role::User]);
    assert!(r.messages[0]
        .content
        .as_text()
        .unwrap()
        .contains("error handling"));
    assert!(matches!(&r.messages[1].content, ContentBlock::Resource(e)
        if e.resource.uri() == "file:///project/src/lib.rs"));
    assert!(matches!(&r.messages[3].content, ContentBlock::Image(i) if i.mime_type == "image/gif"));
    assert_round_trips::<GetPromptResult>("prompts_get.json");
}

#[test]
fn server_notifications_decode_and_keep_unknown_ones() {
    let items: Vec<Value> = serde_json::from_str(&fixture("server_notifications.json")).unwrap();
    let notes: Vec<ServerNotification> = items
        .into_iter()
        .map(|v| match Message::from_value(v).unwrap() {
            Message::Notification(n) => ServerNotification::from_notification(n),
            other => panic!("{other:?}"),
        })
        .collect();
    match &notes[0] {
        ServerNotification::Progress(p) => {
            assert_eq!(p.progress_token, ProgressToken::from(3));
            assert_eq!((p.progress, p.total), (50.0, Some(100.0)));
            assert_eq!(p.message.as_deref(), Some("Halfway"));
        }
        other => panic!("{other:?}"),
    }
    match &notes[1] {
        ServerNotification::LoggingMessage(m) => {
            assert_eq!(m.level, LoggingLevel::Info);
            assert_eq!(m.logger.as_deref(), Some("indexer"));
            assert_eq!(m.data["indexed"], 120);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(notes[2], ServerNotification::ToolListChanged);
    assert_eq!(notes[3], ServerNotification::ResourceListChanged);
    assert_eq!(notes[4], ServerNotification::PromptListChanged);
    assert!(matches!(&notes[5], ServerNotification::ResourceUpdated(u)
        if u.uri == "file:///project/src/main.rs"));
    match &notes[6] {
        ServerNotification::Cancelled(c) => {
            assert_eq!(
                c.request_id.as_ref().and_then(|id| id.as_str()),
                Some("srv-9")
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(
        matches!(&notes[7], ServerNotification::ElicitationComplete(e)
        if e.elicitation_id.starts_with("550e8400"))
    );
    match &notes[8] {
        ServerNotification::Other { method, params } => {
            assert_eq!(method, "notifications/tasks/status");
            assert_eq!(params.as_ref().unwrap()["status"], "working");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(notes[8].method(), "notifications/tasks/status");
}

#[test]
fn elicitation_request_accepts_its_defaults() {
    let req = request("elicitation_create.json");
    assert_eq!(req.method, Elicit::METHOD);
    let ElicitRequestParams::Form(form) = params::<ElicitRequestParams>(&req) else {
        panic!("not a form")
    };
    assert_eq!(form.message, "Configure the deployment");
    assert!(form.is_required("owner") && !form.is_required("dryRun"));
    let answer = ElicitResult::accept_defaults(&form);
    assert_eq!(answer.action, ElicitAction::Accept);
    assert_eq!(
        Value::Object(answer.content.clone().unwrap()),
        json!({
            "environment": "staging",
            "replicas": 2,
            "cpuShare": 0.5,
            "dryRun": true,
            "region": "eu-west-1",
            "features": ["metrics", "tracing"]
        })
    );
    // The answer decodes as the method's result type, as the server would read it.
    let wire = serde_json::to_value(&answer).unwrap();
    let back: <Elicit as Method>::Result = serde_json::from_value(wire).unwrap();
    assert_eq!(back, answer);
}

#[test]
fn sampling_request_with_tools_and_array_content() {
    let req = request("sampling_create_message.json");
    assert_eq!(req.method, CreateMessage::METHOD);
    let p: CreateMessageRequestParams = params(&req);
    assert_eq!(p.max_tokens, 200);
    assert_eq!(p.include_context, Some(IncludeContext::None));
    assert_eq!(p.messages.len(), 3);
    assert!(matches!(p.messages[0].content, SamplingContent::Single(_)));
    assert_eq!(p.messages[1].content.blocks()[0].kind(), "tool_use");
    assert_eq!(p.messages[2].content.blocks()[0].kind(), "tool_result");
    assert_eq!(p.tools.as_ref().unwrap()[0]["name"], "read_changelog");
    assert_eq!(p.meta.as_ref().unwrap()["progressToken"], "p-5");
    let hints = p
        .model_preferences
        .as_ref()
        .unwrap()
        .hints
        .as_ref()
        .unwrap();
    assert_eq!(hints[1].name.as_deref(), Some("claude"));
    // Re-encoding keeps the sampling-only blocks intact.
    assert_eq!(
        serde_json::to_value(&p).unwrap(),
        req.params.clone().unwrap()
    );
    let answer = CreateMessageResult::new("model-x", ContentBlock::text("Startup is faster."))
        .with_stop_reason("endTurn");
    let wire = serde_json::to_value(&answer).unwrap();
    assert_eq!(wire["role"], "assistant");
    assert_eq!(wire["content"]["text"], "Startup is faster.");
}
