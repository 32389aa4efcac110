//! The official schema's examples (`tests/fixtures/spec-2026-07-28/`, copied from
//! `schema/2026-07-28/examples/` of the specification repository) decode into umcp's types and
//! encode back unchanged, and the shapes real servers send beside the schema still read.

use std::path::PathBuf;

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};

use umcp::types::{
    CallToolResult, CompleteResult, ContentBlock, CreateMessageRequestParams, CreateMessageResult,
    DiscoverResult, ElicitRequestParams, ElicitResult, GetPromptResult, InitializeResult,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListRootsResult,
    ListToolsResult, ProgressNotificationParams, ReadResourceResult, Resource, Role,
    ServerCapabilities, Tool,
};

fn dir() -> PathBuf {
    [
        env!("CARGO_MANIFEST_DIR"),
        "tests",
        "fixtures",
        "spec-2026-07-28",
    ]
    .iter()
    .collect()
}

/// Decodes `value` as `T` and encodes it again; `resultType` is left out of the comparison
/// because the client reads it before a result is typed (legacy results never carry it).
fn round_trip<T: DeserializeOwned + Serialize>(name: &str, value: &Value) -> Value {
    let decoded: T = serde_json::from_str(&value.to_string())
        .unwrap_or_else(|e| panic!("{name} does not decode: {e}"));
    let mut expected = value.clone();
    if let Some(object) = expected.as_object_mut() {
        object.remove("resultType");
    }
    let encoded = serde_json::to_value(&decoded).unwrap();
    assert_eq!(
        numbers_as_floats(&encoded),
        numbers_as_floats(&expected),
        "{name} lost or changed members"
    );
    encoded
}

/// `value` with every number as a float: the schema's `number` members (`progress`, `total`)
/// are `f64`s, which write `50` as `50.0`, the same JSON number.
fn numbers_as_floats(value: &Value) -> Value {
    match value {
        Value::Number(n) => json!(n.as_f64()),
        Value::Array(items) => items.iter().map(numbers_as_floats).collect(),
        Value::Object(members) => Value::Object(
            members
                .iter()
                .map(|(k, v)| (k.clone(), numbers_as_floats(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

#[test]
fn every_spec_example_round_trips_through_its_type() {
    let mut seen = 0;
    for entry in std::fs::read_dir(dir()).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let value: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let kind = name.split("--").next().unwrap();
        match kind {
            "CompleteResult" => round_trip::<CompleteResult>(&name, &value),
            "CreateMessageRequestParams" => round_trip::<CreateMessageRequestParams>(&name, &value),
            "CreateMessageResult" => round_trip::<CreateMessageResult>(&name, &value),
            "DiscoverResult" => round_trip::<DiscoverResult>(&name, &value),
            "ElicitRequestFormParams" | "ElicitRequestURLParams" => {
                // The mode is the variant (`ElicitRequestParams::mode`); a form is written
                // without it, as 2025-06-18 has no `mode` and later versions default to form.
                let mut value = value.clone();
                if value["mode"] == "form" {
                    value.as_object_mut().unwrap().remove("mode");
                }
                round_trip::<ElicitRequestParams>(&name, &value)
            }
            "ElicitResult" => round_trip::<ElicitResult>(&name, &value),
            "GetPromptResult" => round_trip::<GetPromptResult>(&name, &value),
            "ListPromptsResult" => round_trip::<ListPromptsResult>(&name, &value),
            "ListResourceTemplatesResult" => {
                round_trip::<ListResourceTemplatesResult>(&name, &value)
            }
            "ListResourcesResult" => round_trip::<ListResourcesResult>(&name, &value),
            "ListRootsResult" => round_trip::<ListRootsResult>(&name, &value),
            "ListToolsResult" => round_trip::<ListToolsResult>(&name, &value),
            "ProgressNotificationParams" => round_trip::<ProgressNotificationParams>(&name, &value),
            "ReadResourceResult" => round_trip::<ReadResourceResult>(&name, &value),
            "Resource" => round_trip::<Resource>(&name, &value),
            "ServerCapabilities" => round_trip::<ServerCapabilities>(&name, &value),
            "Tool" => round_trip::<Tool>(&name, &value),
            "TextContent" | "ImageContent" | "EmbeddedResource" | "ResourceLink"
            | "ToolUseContent" | "ToolResultContent" => round_trip::<ContentBlock>(&name, &value),
            other => panic!("{name}: no type chosen for {other}"),
        };
        seen += 1;
    }
    assert!(seen >= 30, "only {seen} examples");
}

fn example(name: &str) -> Value {
    let text = std::fs::read_to_string(dir().join(name)).unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn cache_hints_of_list_and_read_results_are_fields() {
    let tools: ListToolsResult = serde_json::from_value(example(
        "ListToolsResult--tools-list-with-cursor-and-ttl.json",
    ))
    .unwrap();
    assert_eq!(tools.ttl_ms, Some(300_000));
    assert_eq!(tools.cache_scope.as_deref(), Some("public"));
    assert_eq!(
        tools.tools[0].icons.as_ref().unwrap()[0].sizes,
        Some(vec!["48x48".into()])
    );
    let read: ReadResourceResult = serde_json::from_value(example(
        "ReadResourceResult--read-resource-result-with-ttl.json",
    ))
    .unwrap();
    assert_eq!(read.ttl_ms, Some(60_000));
    assert_eq!(read.cache_scope.as_deref(), Some("private"));
    let prompts: ListPromptsResult = serde_json::from_value(example(
        "ListPromptsResult--prompts-list-with-cursor-and-ttl.json",
    ))
    .unwrap();
    assert!(prompts.ttl_ms.is_some() && prompts.cache_scope.is_some());
    let resources: ListResourcesResult = serde_json::from_value(example(
        "ListResourcesResult--resources-list-with-cursor-and-ttl.json",
    ))
    .unwrap();
    assert_eq!(resources.ttl_ms, Some(600_000));
    let templates: ListResourceTemplatesResult = serde_json::from_value(example(
        "ListResourceTemplatesResult--resource-templates-list-with-cursor-and-ttl.json",
    ))
    .unwrap();
    assert!(templates.ttl_ms.is_some() && templates.cache_scope.is_some());
    // Results without hints (every legacy server) encode without them.
    let plain = serde_json::to_value(ListToolsResult::default()).unwrap();
    assert_eq!(plain, json!({"tools": []}));
}

fn decode<T: DeserializeOwned>(value: Value) -> T {
    serde_json::from_str(&value.to_string()).unwrap_or_else(|e| panic!("{value}: {e}"))
}

#[test]
fn null_lists_from_go_servers_read_as_empty() {
    // A Go server writes a nil slice as `null`; the result still means "none".
    assert!(decode::<ListToolsResult>(json!({"tools": null}))
        .tools
        .is_empty());
    assert!(decode::<CallToolResult>(json!({"content": null, "isError": true})).is_error());
    assert!(decode::<ListResourcesResult>(json!({"resources": null}))
        .resources
        .is_empty());
    let templates: ListResourceTemplatesResult = decode(json!({"resourceTemplates": null}));
    assert!(templates.resource_templates.is_empty());
    assert!(decode::<ListPromptsResult>(json!({"prompts": null}))
        .prompts
        .is_empty());
    assert!(decode::<ReadResourceResult>(json!({"contents": null}))
        .contents
        .is_empty());
    assert!(decode::<GetPromptResult>(json!({"messages": null}))
        .messages
        .is_empty());
    let complete: CompleteResult = decode(json!({"completion": {"values": null, "total": 0}}));
    assert_eq!(complete.completion.total, Some(0));
    assert!(decode::<CompleteResult>(json!({"completion": null}))
        .completion
        .values
        .is_empty());
    let init: InitializeResult = decode(json!({
        "protocolVersion": "2025-06-18", "capabilities": null,
        "serverInfo": {"name": "go-server", "version": "1"}
    }));
    assert_eq!(init.capabilities, ServerCapabilities::default());
}

#[test]
fn whole_floats_read_where_the_schema_has_integers() {
    // Python writes a computed number as `12.0`; one such member failed the whole listing.
    let list: ListResourcesResult = decode(json!({"resources": [
        {"uri": "file:///a", "name": "a", "size": 12.0},
        {"uri": "file:///b", "name": "b", "size": 7}
    ]}));
    assert_eq!(list.resources[0].size, Some(12));
    assert_eq!(list.resources[1].size, Some(7));
    let link: ContentBlock =
        decode(json!({"type": "resource_link", "uri": "file:///a", "name": "a", "size": 3.0}));
    assert!(matches!(link, ContentBlock::ResourceLink(r) if r.size == Some(3)));
    let complete: CompleteResult = decode(json!({"completion": {"values": ["a"], "total": 10.0}}));
    assert_eq!(complete.completion.total, Some(10));
    let sampling: CreateMessageRequestParams = decode(json!({"messages": [], "maxTokens": 100.0}));
    assert_eq!(sampling.max_tokens, 100);
    let tools: ListToolsResult = decode(json!({"tools": [], "ttlMs": 5000.0}));
    assert_eq!(tools.ttl_ms, Some(5000));
    // What is sent back is an integer again.
    let encoded = serde_json::to_value(&list.resources[0]).unwrap();
    assert_eq!(encoded["size"], json!(12));
    // A fraction is not a count: the member is wrong, not merely spelled differently.
    assert!(serde_json::from_value::<Resource>(json!({"uri": "a", "size": 1.5})).is_err());
}

#[test]
fn a_role_of_a_newer_server_keeps_the_result_readable() {
    let prompt: GetPromptResult = decode(json!({"messages": [
        {"role": "system", "content": {"type": "text", "text": "Be brief."}},
        {"role": "user", "content": {"type": "text", "text": "Hi"}}
    ]}));
    assert_eq!(prompt.messages[0].role, Role::Unknown("system".into()));
    assert_eq!(prompt.messages[0].role.as_str(), "system");
    assert_eq!(prompt.messages[1].role, Role::User);
    let encoded = serde_json::to_value(&prompt).unwrap();
    assert_eq!(encoded["messages"][0]["role"], "system");
    // One resource meant for an unknown audience no longer hides the whole listing.
    let list: ListResourcesResult = decode(json!({"resources": [
        {"uri": "file:///a", "name": "a", "annotations": {"audience": ["user", "auditor"]}}
    ]}));
    let audience = list.resources[0]
        .annotations
        .as_ref()
        .unwrap()
        .audience
        .clone();
    assert_eq!(
        audience,
        Some(vec![Role::User, Role::Unknown("auditor".into())])
    );
    assert!(serde_json::from_value::<Role>(json!(1)).is_err());
}
