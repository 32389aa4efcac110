//! The client the official MCP conformance suite drives: `conformance <server-url>` runs the
//! scenario named in `MCP_CONFORMANCE_SCENARIO` through umcp's public API, logs to stderr, and
//! exits 0 on success.
//!
//! The `auth/…` scenarios authorize with [`umcp::auth::OAuth`]: the authorization code flow
//! through the headless handler (the suite's authorization servers redirect at once), with
//! the client ID metadata document URL the suite expects, or the grant and credentials that
//! `MCP_CONFORMANCE_CONTEXT` gives (client credentials, enterprise-managed authorization,
//! workload identity). `auth/client-credentials-jwt` and the DPoP scenarios need the
//! `oauth-jwt` feature; DPoP is chosen automatically when the authorization server
//! advertises it.
//!
//! Run the whole suite with `bash .ci/conformance` (see the README).

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Map, Value};
use umcp::auth::{CrossAppAccess, HeadlessHandler, OAuth, OAuthConfig, WorkloadIdentity};
use umcp::types::{ElicitRequestParams, ElicitResult, Tool};
use umcp::{Client, HttpConfig, Options, ProtocolMode};

/// The client ID metadata document URL the `auth/basic-cimd` scenario checks for.
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

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
    let result = run(&scenario, &url);
    let _ = std::fs::remove_file(workload_token_path());
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("conformance client: scenario {scenario:?} failed: {err}");
            ExitCode::FAILURE
        }
    }
}

/// The revision whose wire the runner asks for (`MCP_CONFORMANCE_PROTOCOL_VERSION`); the
/// runner's default is 2025-11-25.
fn protocol_version() -> String {
    std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION").unwrap_or_else(|_| "2025-11-25".into())
}

/// The lifecycle for `version`, the one place it is chosen: revisions through 2025-11-25
/// use the stateful `initialize` handshake, 2026-07-28 the stateless lifecycle with
/// per-request `_meta`.
///
/// The stateless lifecycle is not selectable yet: until `Options` can pin it, the
/// stateful lifecycle runs for every revision, and the 2026-07-28 scenarios it cannot pass
/// are listed in tests/conformance/baseline-2026-07-28.yml. Wiring it is this function.
fn with_lifecycle(options: Options, version: &str) -> Options {
    // Through 2025-11-25 the suite expects the `initialize` handshake; from 2026-07-28 on, the
    // stateless lifecycle pinned to the version under test (no probe: the suite grades the wire).
    let mode = ProtocolMode::parse(version).unwrap_or(ProtocolMode::Legacy);
    options.with_protocol_mode(mode)
}

/// The scenario's context (`MCP_CONFORMANCE_CONTEXT`, JSON), or `null` without one.
fn context() -> Value {
    std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or(Value::Null)
}

/// The tool calls a scenario's context names (`toolCalls`: name and exact arguments), if any.
fn context_tool_calls() -> Vec<(String, Value)> {
    let context = context();
    let Some(calls) = context.get("toolCalls").and_then(Value::as_array) else {
        return Vec::new();
    };
    calls
        .iter()
        .filter_map(|call| {
            let name = call.get("name")?.as_str()?.to_string();
            Some((name, call.get("arguments").cloned().unwrap_or(Value::Null)))
        })
        .collect()
}

fn run(scenario: &str, url: &str) -> umcp::Result<()> {
    let options = Options::default()
        .with_request_timeout(Duration::from_secs(20))
        .with_tasks(true)
        .with_elicitation_handler(|request| match request {
            ElicitRequestParams::Form(form) => Ok(ElicitResult::accept_defaults(&form)),
            _ => Ok(ElicitResult::decline()),
        });
    let options = with_lifecycle(options, &protocol_version());
    let mut config = HttpConfig::new(url);
    if scenario.starts_with("auth/") {
        config = config.credentials(Arc::new(OAuth::new(url, oauth_config(scenario)?)?));
    }
    let client = Client::connect_with_options(config, options)?;
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
    if scenario.starts_with("sep-2640-client-") {
        let result = skills(&client, scenario);
        client.close();
        return result;
    }
    // A scenario whose context names its calls gets exactly those (the header scenarios check
    // the values sent); every other one is "use the server's tools".
    let calls = context_tool_calls();
    if !calls.is_empty() {
        client.list_all_tools()?;
        for (name, arguments) in calls {
            let result = client.call_tool(&name, arguments)?;
            eprintln!("{name} -> {}", result.text());
        }
        client.close();
        return Ok(());
    }
    // Call each tool with arguments built from its input schema, and report tool-level errors.
    let tools = client.list_all_tools()?;
    for tool in &tools {
        let arguments = if tool.name == SCHEMA_ECHO_TOOL {
            echo_arguments(&tools)
        } else {
            arguments_for(tool)
        };
        let result = client.call_tool(&tool.name, arguments)?;
        eprintln!("{} -> {}", tool.name, result.text());
        if result.is_error() {
            return Err(umcp::Error::Protocol(format!("tool {} failed", tool.name)));
        }
    }
    client.close();
    Ok(())
}

/// The Skills scenarios: list the skills; unless the scenario is only about not reading
/// ahead, load the first (its `SKILL.md` read and verified) and then read its supporting
/// files, each verified. A tampered skill fails to load, and its files are never read.
fn skills(client: &Client, scenario: &str) -> umcp::Result<()> {
    let listed = client.list_all_skills()?;
    eprintln!("{} skill(s) listed", listed.len());
    if scenario == "sep-2640-client-no-prefetch" {
        return Ok(());
    }
    let Some(entry) = listed.into_iter().next() else {
        return Err(umcp::Error::Protocol("the server listed no skill".into()));
    };
    let skill = client.load_skill(&entry)?;
    eprintln!("loaded {}", entry.uri);
    for file in entry.files().unwrap_or_default() {
        if file.uri != entry.uri {
            let bytes = skill.read(&file.uri)?;
            eprintln!("read {} ({} bytes, verified)", file.uri, bytes.len());
        }
    }
    Ok(())
}

/// The OAuth configuration of an `auth/…` scenario, from `MCP_CONFORMANCE_CONTEXT` when the
/// scenario gives one.
fn oauth_config(scenario: &str) -> umcp::Result<OAuthConfig> {
    let context = context();
    let field = |name: &str| context[name].as_str().map(str::to_owned);
    let required = |name: &str| {
        field(name).ok_or_else(|| {
            umcp::Error::Config(format!(
                "MCP_CONFORMANCE_CONTEXT has no `{name}` for {scenario}"
            ))
        })
    };
    let config = match scenario {
        "auth/client-credentials-basic" => OAuthConfig::client_credentials(required("client_id")?)
            .client_secret(required("client_secret")?),
        "auth/client-credentials-jwt" => jwt_config(
            &required("client_id")?,
            &required("private_key_pem")?,
            field("signing_algorithm"),
        )?,
        // Enterprise-managed authorization (renamed from cross-app access in the suite).
        "auth/enterprise-managed-authorization" | "auth/cross-app-access-complete-flow" => {
            let access = CrossAppAccess::new(
                required("idp_token_endpoint")?,
                required("idp_client_id")?,
                required("idp_id_token")?,
            );
            OAuthConfig::cross_app_access(access)
                .client_id(required("client_id")?)
                .client_secret(required("client_secret")?)
        }
        "auth/wif-jwt-bearer" => {
            // The platform token arrives in the context; a workload reads it from a file.
            let jwt = required("valid_jwt")?;
            let path = workload_token_path();
            std::fs::write(&path, &jwt).map_err(umcp::Error::io)?;
            // The authorization server the token is for: what a workload's configuration
            // names, here the audience the suite's platform minted the token with.
            let issuer = field("issuer")
                .or_else(|| token_audience(&jwt))
                .ok_or_else(|| {
                    umcp::Error::Config(format!("the workload token of {scenario} has no audience"))
                })?;
            OAuthConfig::workload_identity(
                required("client_id")?,
                WorkloadIdentity::token_file(issuer, path),
            )
        }
        _ => {
            let mut config =
                OAuthConfig::new(HeadlessHandler::new()).client_metadata_url(CLIENT_METADATA_URL);
            if let Some(client_id) = field("client_id") {
                config = config.client_id(client_id);
            }
            if let Some(secret) = field("client_secret") {
                config = config.client_secret(secret);
            }
            config
        }
    };
    Ok(config.client_name("umcp-conformance"))
}

/// The audience (`aud`, the first of a list) of a JWT, read without checking anything: the
/// token is the suite's, and only its authorization server judges it.
fn token_audience(jwt: &str) -> Option<String> {
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    use base64::Engine;
    let payload = URL_SAFE_NO_PAD.decode(jwt.split('.').nth(1)?).ok()?;
    let claims: Value = serde_json::from_slice(&payload).ok()?;
    let audience = match &claims["aud"] {
        Value::Array(list) => list.first()?,
        single => single,
    };
    audience.as_str().map(str::to_owned)
}

/// Where `auth/wif-jwt-bearer` keeps the workload's token, as a platform would.
fn workload_token_path() -> std::path::PathBuf {
    std::env::temp_dir().join(format!(
        "umcp-conformance-workload-{}.jwt",
        std::process::id()
    ))
}

#[cfg(feature = "oauth-jwt")]
fn jwt_config(client_id: &str, pem: &str, algorithm: Option<String>) -> umcp::Result<OAuthConfig> {
    if algorithm.as_deref().is_some_and(|a| a != "ES256") {
        return Err(umcp::Error::Config(format!(
            "unsupported signing algorithm {algorithm:?}"
        )));
    }
    Ok(OAuthConfig::client_credentials(client_id).private_key_pem(pem))
}

#[cfg(not(feature = "oauth-jwt"))]
fn jwt_config(_: &str, _: &str, _: Option<String>) -> umcp::Result<OAuthConfig> {
    Err(umcp::Error::Config(
        "built without the `oauth-jwt` feature".into(),
    ))
}

/// The tool of `json-schema-2020-12-preservation` that takes back a schema as received.
const SCHEMA_ECHO_TOOL: &str = "json_schema_echo";

/// The schema-echo scenario's tool carrying the JSON Schema 2020-12 input schema.
const SCHEMA_FOCAL_TOOL: &str = "json_schema_2020_12_tool";

/// `{"schema": <input schema>}` with the focal tool's input schema exactly as `tools/list`
/// delivered it, so the scenario sees whether any keyword was lost on the way.
fn echo_arguments(tools: &[Tool]) -> Value {
    let schema = tools
        .iter()
        .find(|t| t.name == SCHEMA_FOCAL_TOOL)
        .map_or(Value::Null, |t| t.input_schema.as_value().clone());
    json!({ "schema": schema })
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
