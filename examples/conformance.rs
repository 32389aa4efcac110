//! The client the official MCP conformance suite drives: `conformance <server-url>` runs the
//! scenario named in `MCP_CONFORMANCE_SCENARIO` through umcp's public API, logs to stderr, and
//! exits 0 on success.
//!
//! Run the whole suite with `bash .ci/conformance` (see the README).

use std::process::ExitCode;
use std::time::Duration;

use serde_json::{json, Map, Value};
use umcp::types::{ElicitRequestParams, ElicitResult, Tool};
use umcp::{Client, HttpConfig, Options};

/// The suite kills a client after 30 s; finishing first gives a clear failure instead.
const DEADLINE: Duration = Duration::from_secs(25);

fn main() -> ExitCode {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("umcp=debug"))
        .target(env_logger::Target::Stderr)
        .init();
    std::thread::spawn(|| {
        std::thread::sleep(DEADLINE);
        eprintln!("conformance client: gave up after {DEADLINE:?}");
        std::process::exit(3);
    });
    let Some(url) = std::env::args().skip(1).last() else {
        eprintln!("usage: conformance <server-url>  (scenario in MCP_CONFORMANCE_SCENARIO)");
        return ExitCode::from(2);
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    match run(&scenario, &url) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("conformance client: scenario {scenario:?} failed: {err}");
            ExitCode::FAILURE
        }
    }
}

fn run(scenario: &str, url: &str) -> umcp::Result<()> {
    let options = Options::default()
        .with_request_timeout(Duration::from_secs(20))
        .with_elicitation_handler(|request| match request {
            ElicitRequestParams::Form(form) => Ok(ElicitResult::accept_defaults(&form)),
            _ => Ok(ElicitResult::decline()),
        });
    let client = Client::connect_with(HttpConfig::new(url), options)?;
    eprintln!(
        "connected to {} over {} (protocol {})",
        client.server_info().name,
        client.transport_kind(),
        client.protocol_version()
    );
    if scenario == "initialize" {
        client.close();
        return Ok(());
    }
    // Every other scenario is "use the server's tools": call each with arguments built from
    // its input schema, and report tool-level errors.
    for tool in client.list_all_tools()? {
        let result = client.call_tool(&tool.name, arguments_for(&tool))?;
        eprintln!("{} -> {}", tool.name, result.text());
        if result.is_error() {
            return Err(umcp::Error::Protocol(format!("tool {} failed", tool.name)));
        }
    }
    client.close();
    Ok(())
}

/// Arguments that satisfy a simple input schema: each required property gets a value of its type.
fn arguments_for(tool: &Tool) -> Value {
    let schema = &tool.input_schema;
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut args = Map::new();
    if let Some(properties) = schema["properties"].as_object() {
        for (name, property) in properties {
            if !required.contains(&name.as_str()) {
                continue;
            }
            let value = match property["type"].as_str() {
                Some("number" | "integer") => json!(2),
                Some("boolean") => json!(true),
                Some("array") => json!([]),
                Some("object") => json!({}),
                _ => json!("test"),
            };
            args.insert(name.clone(), value);
        }
    }
    Value::Object(args)
}
