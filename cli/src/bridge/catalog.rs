//! What a host is shown of the servers: who answers (`serverInfo`), what it can do, its
//! instructions, and its lists of tools, prompts, resources and templates.
//!
//! One server is shown as it is, its lists page by page as it pages them (filtered as the
//! configuration says). Several servers are shown as one: the bridge's own identity, every
//! capability the bridge relays, each server's instructions under its name, and one page of
//! each list with the names the manager gives.

use serde_json::{json, Map, Value};
use umcp::types::ServerCapabilities;
use umcp::RequestOptions;

use super::upstream::Upstream;

/// What the host is told about the server it talks to.
#[derive(Clone, Debug)]
pub struct Description {
    /// `serverInfo`.
    pub info: Value,
    /// The capabilities the host may use.
    pub capabilities: Value,
    pub instructions: Option<String>,
}

/// The description of the servers; `None` while the one server is not connected.
pub fn describe(upstream: &Upstream) -> Option<Description> {
    let Some(single) = upstream.single() else {
        return Some(describe_many(upstream));
    };
    let client = upstream.client(single).ok()?;
    Some(Description {
        info: serde_json::to_value(client.server_info()).unwrap_or_else(|_| own_info()),
        capabilities: relayed(&client.server_capabilities()),
        instructions: client.instructions(),
    })
}

fn describe_many(upstream: &Upstream) -> Description {
    let instructions: Vec<String> = upstream
        .clients()
        .iter()
        .filter_map(|(name, client)| Some(format!("{name}: {}", client.instructions()?)))
        .collect();
    Description {
        info: own_info(),
        capabilities: json!({
            "tools": { "listChanged": true },
            "prompts": { "listChanged": true },
            "resources": { "subscribe": true, "listChanged": true },
            "completions": {},
            "logging": {},
        }),
        instructions: (!instructions.is_empty()).then(|| instructions.join("\n\n")),
    }
}

/// The bridge's own `serverInfo`.
fn own_info() -> Value {
    json!({ "name": "umcp-bridge", "version": env!("CARGO_PKG_VERSION") })
}

/// What a host may use of a server's capabilities: what the bridge relays, every list
/// announced as changing (a reconnection may change it).
fn relayed(server: &ServerCapabilities) -> Value {
    let mut out = Map::new();
    let changing = json!({ "listChanged": true });
    if server.tools.is_some() {
        out.insert("tools".into(), changing.clone());
    }
    if server.prompts.is_some() {
        out.insert("prompts".into(), changing.clone());
    }
    if let Some(resources) = &server.resources {
        let subscribe = resources.subscribe.unwrap_or(false);
        let shown = json!({ "subscribe": subscribe, "listChanged": true });
        out.insert("resources".into(), shown);
    }
    if server.completions.is_some() {
        out.insert("completions".into(), json!({}));
    }
    if server.logging.is_some() {
        out.insert("logging".into(), json!({}));
    }
    Value::Object(out)
}

/// The answer to a listing (`tools/list`, `prompts/list`, `resources/list`,
/// `resources/templates/list`).
pub fn list(
    upstream: &Upstream,
    method: &str,
    params: Option<&Value>,
    options: &RequestOptions,
) -> umcp::Result<Value> {
    let cursor = params.and_then(|p| p.get("cursor")).and_then(Value::as_str);
    match upstream.single() {
        Some(single) => list_one(upstream, single, method, cursor, options),
        None => list_many(upstream, method, options),
    }
}

fn list_one(
    upstream: &Upstream,
    server: &str,
    method: &str,
    cursor: Option<&str>,
    options: &RequestOptions,
) -> umcp::Result<Value> {
    let client = upstream.client(server)?;
    let with = client.with(options);
    let value =
        |v: Result<Value, serde_json::Error>| v.map_err(|e| umcp::Error::Protocol(e.to_string()));
    match method {
        "tools/list" => {
            let mut page = with.list_tools(cursor)?;
            let tools: Vec<Value> = page
                .tools
                .drain(..)
                .map(|tool| Upstream::tool_for_host(&tool, &tool.name))
                .collect();
            let mut out = value(serde_json::to_value(&page))?;
            out["tools"] = Value::Array(tools);
            Ok(out)
        }
        "prompts/list" => value(serde_json::to_value(with.list_prompts(cursor)?)),
        "resources/list" => value(serde_json::to_value(with.list_resources(cursor)?)),
        _ => value(serde_json::to_value(with.list_resource_templates(cursor)?)),
    }
}

fn list_many(upstream: &Upstream, method: &str, options: &RequestOptions) -> umcp::Result<Value> {
    fn to_value(item: impl serde::Serialize) -> Value {
        serde_json::to_value(item).unwrap_or(Value::Null)
    }
    Ok(match method {
        "tools/list" => {
            let tools: Vec<Value> = upstream
                .fresh_tools()
                .iter()
                .map(|entry| Upstream::tool_for_host(&entry.tool, &entry.name))
                .collect();
            json!({ "tools": tools })
        }
        "prompts/list" => {
            let prompts: Vec<Value> = upstream
                .remember_prompts(options)
                .into_iter()
                .map(|entry| {
                    let mut prompt = to_value(entry.prompt);
                    prompt["name"] = Value::from(entry.name);
                    prompt
                })
                .collect();
            json!({ "prompts": prompts })
        }
        "resources/list" => {
            let (resources, _) = upstream.remember_resources(options);
            let resources: Vec<Value> = resources
                .into_iter()
                .map(|e| to_value(e.resource))
                .collect();
            json!({ "resources": resources })
        }
        _ => {
            let (_, templates) = upstream.remember_resources(options);
            let templates: Vec<Value> = templates
                .into_iter()
                .map(|e| to_value(e.template))
                .collect();
            json!({ "resourceTemplates": templates })
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_is_shown_with_what_the_bridge_relays() {
        let server: ServerCapabilities = serde_json::from_value(json!({
            "tools": {}, "resources": {"subscribe": true}, "experimental": {"x": {}},
            "logging": {}
        }))
        .unwrap();
        let shown = relayed(&server);
        assert_eq!(shown["tools"]["listChanged"], true);
        assert_eq!(shown["resources"]["subscribe"], true);
        assert!(shown.get("experimental").is_none() && shown.get("prompts").is_none());
        assert!(shown.get("logging").is_some());
    }
}
