//! Tests of the generated source: the types a schema gives, names made safe, output laid out
//! as rustfmt lays it out, and the same bytes for the same lock.

use std::path::Path;
use std::process::Command;

use serde_json::json;

use super::*;

/// A lock of a tool whose schema has nested objects, enums, arrays, optional fields, a
/// reference and a nullable union, and of a tool without arguments.
const SHAPES: &str = include_str!("../tests/fixtures/shapes.lock");

/// A lockfile of one server `server` with these tool definitions.
fn lock_of(server: &str, tools: &[serde_json::Value]) -> String {
    let mut entries = serde_json::Map::new();
    for (i, definition) in tools.iter().enumerate() {
        let name = definition["name"].as_str().unwrap().to_owned();
        let digest = format!("sha256:{i:064x}");
        entries.insert(name, json!({"definition": definition, "digest": digest}));
    }
    let lock = json!({
        "lockfileVersion": 1,
        "servers": {server: {"server": {"name": "n", "version": "1"}, "tools": entries}},
    });
    serde_json::to_string_pretty(&lock).unwrap()
}

/// Checks `source` with `rustfmt --check`, which fails on any change it would make.
fn assert_formatted(source: &str) {
    let dir = std::env::temp_dir().join(format!("umcp-codegen-fmt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!(
        "{:x}.rs",
        source.len() * 31 + source.lines().count()
    ));
    std::fs::write(&file, source).unwrap();
    let rustfmt = std::env::var_os("RUSTFMT").unwrap_or_else(|| "rustfmt".into());
    let checked = Command::new(&rustfmt)
        .args(["--check", "--edition", "2021"])
        .arg(&file)
        .output()
        .unwrap_or_else(|e| {
            panic!("rustfmt could not be run ({e}): install it with `rustup component add rustfmt`")
        });
    let _ = std::fs::remove_file(&file);
    assert!(
        checked.status.success(),
        "rustfmt would change the output:\n{}{}",
        String::from_utf8_lossy(&checked.stdout),
        String::from_utf8_lossy(&checked.stderr)
    );
}

/// The lines of the item of `source` that starts with `start`, to its closing brace.
fn item<'a>(source: &'a str, start: &str) -> Vec<&'a str> {
    let lines: Vec<&str> = source.lines().collect();
    let first = lines
        .iter()
        .position(|line| line.trim_start().starts_with(start))
        .unwrap_or_else(|| panic!("no `{start}` in:\n{source}"));
    let end = lines[first..]
        .iter()
        .position(|line| *line == "    }")
        .unwrap();
    lines[first..=first + end]
        .iter()
        .map(|l| l.trim())
        .collect()
}

#[test]
fn a_schema_of_every_shape_gives_the_expected_types() {
    let source = generate(SHAPES, "shapes.lock", &[], &[]).unwrap();
    let fields: Vec<&str> = item(&source, "pub struct PlanTripArgs {")
        .into_iter()
        .filter(|line| line.starts_with("pub "))
        .collect();
    assert_eq!(
        fields,
        [
            "pub struct PlanTripArgs {",
            "pub budget: Option<f64>,",
            "pub destination: String,",
            "pub extra: Option<serde_json::Value>,",
            "pub flexible: Option<bool>,",
            "pub meta: Option<serde_json::Map<String, serde_json::Value>>,",
            "pub mode: PlanTripArgsMode,",
            "pub nights: i64,",
            "pub notes: Option<String>,",
            "pub seat: Option<Seat>,",
            "pub stay: Option<PlanTripArgsStay>,",
            "pub tags: Option<Vec<String>>,",
            "pub travellers: Vec<PlanTripArgsTravellersItem>,",
            "pub r#type: Option<String>,",
        ]
    );
    let mode = item(&source, "pub enum PlanTripArgsMode {");
    assert!(mode.contains(&"#[serde(rename = \"plane\")]"), "{mode:?}");
    assert!(mode.contains(&"Plane,"), "{mode:?}");
    let stay = item(&source, "pub struct PlanTripArgsStay {");
    assert!(
        stay.contains(&"pub kind: PlanTripArgsStayKind,"),
        "{stay:?}"
    );
    assert!(stay.contains(&"pub stars: Option<i64>,"), "{stay:?}");
    let traveller = item(&source, "pub struct PlanTripArgsTravellersItem {");
    assert!(traveller.contains(&"pub name: String,"), "{traveller:?}");
    assert!(
        traveller.contains(&"pub age: Option<i64>,"),
        "{traveller:?}"
    );
    let seat = item(&source, "pub struct Seat {");
    assert!(seat.contains(&"pub row: i64,"), "{seat:?}");
    let output = item(&source, "pub struct PlanTripOutput {");
    assert!(
        output.contains(&"pub itinerary: Vec<String>,"),
        "{output:?}"
    );
    assert!(output.contains(&"pub total: f64,"), "{output:?}");
    // Optional fields are left out when `None`; required ones always sent.
    let skip = "#[serde(default, skip_serializing_if = \"Option::is_none\")]\n        pub";
    assert!(source.contains(&format!("{skip} budget: Option<f64>,")));
    assert!(!source.contains(&format!("{skip} nights")));
    // A typed result where there is an output schema; none where there are no arguments.
    assert!(source.contains(
        "pub fn plan_trip(&self, args: &PlanTripArgs) -> umcp::Result<PlanTripOutput> {"
    ));
    assert!(source.contains("pub fn ping(&self) -> umcp::Result<umcp::types::CallToolResult> {"));
    assert_formatted(&source);
}

#[test]
fn the_bindings_of_a_real_servers_lock_are_formatted() {
    // server-everything's tools, as the example crate locks them.
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/typed-tools/mcp.lock");
    let text = std::fs::read_to_string(&path).unwrap();
    let source = generate(&text, "mcp.lock", &[], &[]).unwrap();
    assert!(source.contains("pub fn get_sum(&self, args: &GetSumArgs)"));
    assert_formatted(&source);
}

#[test]
fn the_same_lock_gives_the_same_bytes() {
    let one = generate(SHAPES, "mcp.lock", &[], &[]).unwrap();
    // Keys in another order and other spacing: the same lock.
    let value: serde_json::Value = serde_json::from_str(SHAPES).unwrap();
    let two = generate(&value.to_string(), "mcp.lock", &[], &[]).unwrap();
    assert_eq!(one, two);
}

#[test]
fn what_a_server_names_is_made_safe_and_laid_out_as_rustfmt_would() {
    let long = "a-tool-with-a-name-so-long-that-no-line-can-hold-its-call-on-one-line-at-all";
    let tools = [
        json!({
            "name": long,
            "description": "Bidi \u{202e}txt, a ``` fence, <b>html</b>, [a link](x) and\n    an indented block\r\nthat is not code.",
            "inputSchema": {"type": "object", "properties": {
                "a-property-whose-name-is-long-enough-to-need-a-rename-broken-over-lines": {"type": "string"},
                "self": {"type": "string"},
                "Self": {"type": "integer"},
                "fn": {"type": "boolean", "description": "*/ not a comment end"},
                "2x": {"type": "number"},
                "same": {"type": "string"},
                "Same": {"type": "string"},
                "choice": {"enum": ["a b", "a-b", "1.0", "", "é\u{202e}", "Self"]},
            }, "required": ["self"]},
            "outputSchema": {"type": "object", "properties": {"x": {"type": "string"}}},
        }),
        json!({"name": "type", "inputSchema": {"type": "object", "properties": {"x": {"type": "string"}}}}),
        json!({"name": "Type", "inputSchema": {"type": "object", "properties": {"x": {"type": "string"}}}}),
        json!({"name": "connect", "inputSchema": {}}),
        json!({"name": "e\u{202e}vil\"\n", "inputSchema": {"type": "object"}}),
    ];
    let source = generate(&lock_of("my server", &tools), "mcp.lock", &[], &[]).unwrap();
    assert!(!source.contains('\u{202e}'), "{source}");
    assert!(source.contains("pub mod my_server {"));
    assert!(
        source.contains("pub fn r#type(&self, args: &TypeArgs)"),
        "{source}"
    );
    assert!(
        source.contains("pub fn type_2(&self, args: &TypeArgs2)"),
        "{source}"
    );
    assert!(source.contains("pub fn connect_2(&self)"), "{source}");
    assert!(
        source.contains("#[serde(rename = \"self\")]\n        pub self_2: String,"),
        "{source}"
    );
    assert!(source.contains("#[serde(rename = \"Self\")]\n        #[serde(default, skip_serializing_if = \"Option::is_none\")]\n        pub self_: Option<i64>,"), "{source}");
    assert!(source.contains("pub r#fn: Option<bool>,"), "{source}");
    assert!(source.contains("pub n2x: Option<f64>,"), "{source}");
    assert!(source.contains("pub same_2: Option<String>,"), "{source}");
    assert!(source.contains("\"e\\u{202e}vil\\\"\\n\""), "{source}");
    assert!(source.contains("````text"), "{source}");
    assert_formatted(&source);
}

#[test]
fn servers_are_chosen_and_a_foreign_file_is_refused() {
    let two =
        lock_of("one", &[json!({"name": "t", "inputSchema": {}})]).replace("\"one\"", "\"two\"");
    let source = generate(&two, "mcp.lock", &["two".into()], &[]).unwrap();
    assert!(source.contains("pub mod two {"));
    let missing = generate(&two, "mcp.lock", &["one".into()], &[]).unwrap_err();
    assert_eq!(missing.to_string(), "the lock has no server `one`");
    let newer = SHAPES.replace("\"lockfileVersion\": 1", "\"lockfileVersion\": 2");
    assert!(generate(&newer, "mcp.lock", &[], &[])
        .unwrap_err()
        .to_string()
        .contains("lockfileVersion 2"));
    assert!(matches!(
        generate("[]", "mcp.lock", &[], &[]),
        Err(Error::Lock(_))
    ));
    let renamed = SHAPES.replace("\"name\": \"ping\"", "\"name\": \"pong\"");
    let error = generate(&renamed, "mcp.lock", &[], &[])
        .unwrap_err()
        .to_string();
    assert!(error.contains("names another tool"), "{error}");
    let only = [("shapes".to_owned(), vec!["ping".to_owned()])];
    let source = generate(SHAPES, "mcp.lock", &[], &only).unwrap();
    assert!(source.contains("pub fn ping(&self)") && !source.contains("plan_trip"));
    assert!(
        !source.contains("\"plan-trip\","),
        "only the tool bound is checked"
    );
    let unknown = [("shapes".to_owned(), vec!["pong".to_owned()])];
    let error = generate(SHAPES, "mcp.lock", &[], &unknown).unwrap_err();
    assert_eq!(
        error.to_string(),
        "the lock has no tool `pong` of server `shapes`"
    );
    let empty = generate("{\"lockfileVersion\": 1}", "mcp.lock", &[], &[]).unwrap();
    assert_formatted(&empty);
}
