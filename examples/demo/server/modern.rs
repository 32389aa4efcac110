//! The stateless protocol (2026-07-28) side of the demo server, chosen with `--modern`:
//! `server/discover`, the `_meta` every request must carry, input rounds (MRTR) for the tools
//! that ask the client, `resultType` on results, and the HTTP routing headers.
//!
//! The server speaks only the stateless era: `initialize` is refused, as a modern-only server
//! does, and so are the methods the era removed (`ping`, `logging/setLevel`, subscriptions).

use std::sync::atomic::Ordering;
use std::sync::{mpsc, Arc};
use std::time::Duration;

use serde_json::{json, Value};
use umcp::jsonrpc::{ErrorCode, ErrorObject, Request, RequestId};

use super::{asks, catalog, lock, tools, Reply, Server};

mod tasks;

/// The one version this mode speaks.
pub const VERSION: &str = "2026-07-28";

/// The input-round tools and the key of their one input request.
const INPUT_KEY: &str = "input";

/// A refusal: the HTTP status to send it with, and the JSON-RPC error.
pub type Refusal = (u16, ErrorObject);

/// The `requestState` of an input round: deliberately not plain ASCII, so a client that
/// re-encodes it instead of echoing it byte for byte is caught.
fn request_state(tool: &str) -> String {
    format!("{tool}\u{2713}round-1")
}

/// Checks the `_meta` a stateless request must carry.
pub fn check_meta(params: &Value) -> Result<(), Refusal> {
    let meta = params.get("_meta");
    let version = meta
        .and_then(|m| m.get("io.modelcontextprotocol/protocolVersion"))
        .and_then(Value::as_str);
    let capabilities = meta.and_then(|m| m.get("io.modelcontextprotocol/clientCapabilities"));
    let (Some(version), Some(_)) = (version, capabilities) else {
        let why = "_meta needs io.modelcontextprotocol/protocolVersion and clientCapabilities";
        return Err((400, ErrorObject::new(ErrorCode::INVALID_PARAMS, why)));
    };
    if version != VERSION {
        let error = ErrorObject::new(
            ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
            format!("unsupported protocol version {version}"),
        )
        .with_data(json!({"supported": [VERSION], "requested": version}));
        return Err((400, error));
    }
    Ok(())
}

/// Checks the routing headers of a stateless POST against its body; `header` looks one up.
pub fn check_headers(
    method: &str,
    params: &Value,
    raw_header: &dyn Fn(&str) -> Option<String>,
) -> Result<(), Refusal> {
    let header = |name: &str| raw_header(name).map(|v| decode_header(&v));
    let mismatch = |why: String| (400, ErrorObject::new(ErrorCode::HEADER_MISMATCH, why));
    let version = params.pointer("/_meta/io.modelcontextprotocol~1protocolVersion");
    if header("MCP-Protocol-Version").as_deref() != version.and_then(Value::as_str) {
        return Err(mismatch("MCP-Protocol-Version differs from _meta".into()));
    }
    if header("Mcp-Method").as_deref() != Some(method) {
        return Err(mismatch(format!("Mcp-Method is not `{method}`")));
    }
    let name = match method {
        "tools/call" | "prompts/get" => params.get("name"),
        "resources/read" => params.get("uri"),
        "tasks/get" | "tasks/update" | "tasks/cancel" => params.get("taskId"),
        _ => None,
    };
    if let Some(name) = name.and_then(Value::as_str) {
        if header("Mcp-Name").as_deref() != Some(name) {
            return Err(mismatch(format!("Mcp-Name is not `{name}`")));
        }
    }
    if method == "tools/call" && params.get("name").and_then(Value::as_str) == Some("region") {
        let region = params.pointer("/arguments/region").and_then(Value::as_str);
        if header("Mcp-Param-Region").as_deref() != region {
            return Err(mismatch("Mcp-Param-Region differs from `region`".into()));
        }
    }
    Ok(())
}

/// A header value as sent: plain, or `=?base64?…?=` for values unsafe in a header.
fn decode_header(value: &str) -> String {
    match value
        .strip_prefix("=?base64?")
        .and_then(|v| v.strip_suffix("?="))
    {
        Some(encoded) => String::from_utf8_lossy(&base64_decode(encoded)).into_owned(),
        None => value.to_owned(),
    }
}

/// Standard base64 (with or without padding); invalid characters are skipped.
fn base64_decode(text: &str) -> Vec<u8> {
    let sextet = |c: u8| match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    };
    let bits: Vec<u8> = text.bytes().filter_map(sextet).collect();
    let mut out = Vec::with_capacity(bits.len() * 3 / 4);
    for chunk in bits.chunks(4) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | (u32::from(*b) << (18 - 6 * i)));
        let bytes = n.to_be_bytes();
        out.extend_from_slice(&bytes[1..chunk.len()]);
    }
    out
}

/// The tools only this mode lists: one that asks the client, in an input round, to send the
/// user to a page (URL mode), and one that runs as a task (the tasks extension).
pub fn extra_tools() -> Vec<Value> {
    let string = json!({"type": "string"});
    vec![
        tools::tool(
            "ask_url",
            "Asks the client, in an input round, to send the user to `url` (URL mode).",
            json!({ "url": string, "message": string }),
            &["url"],
        ),
        tasks::tool(),
    ]
}

/// The tools of this mode only tests need (`--fixtures`): one whose argument is mirrored into
/// a header, one whose annotation is invalid (a `number`), which clients must leave out, and
/// the ones that test the stateless rules (a `task` result nobody asked for, a request to the
/// client and subscriptions the server cancels).
pub fn fixture_tools() -> Vec<Value> {
    let region = json!({"type": "string", "x-mcp-header": "Region"});
    let broken = json!({"type": "number", "x-mcp-header": "Ratio"});
    let string = json!({"type": "string"});
    let integer = json!({"type": "integer"});
    vec![
        tools::tool(
            "task_result",
            "Answers with resultType `task`, from the tasks extension, which no client asked for.",
            json!({}),
            &[],
        ),
        tools::tool(
            "request_client",
            "Writes a `method` request (default roots/list) to the client, which it must not \
             answer in this era, and says whether an answer came within `wait_ms`.",
            json!({ "method": string, "wait_ms": integer }),
            &[],
        ),
        tools::tool(
            "cancel_subscriptions",
            "Ends every subscription with notifications/cancelled naming its listen request.",
            json!({}),
            &[],
        ),
        tools::tool(
            "region",
            "Echoes `region`, which travels as the Mcp-Param-Region header over HTTP.",
            json!({ "region": region }),
            &["region"],
        ),
        tools::tool(
            "bad_header",
            "Has an invalid x-mcp-header annotation; clients drop it from the list.",
            json!({ "ratio": broken }),
            &[],
        ),
    ]
}

/// Handles what differs in this mode; `false` leaves the request to the common code.
pub fn on_request(server: &Arc<Server>, request: &Request) -> bool {
    let params = request.params.clone().unwrap_or_else(|| json!({}));
    let reply = match request.method.as_str() {
        "initialize" => Err(ErrorObject::new(
            ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
            format!("this server speaks only {VERSION}, without initialize"),
        )
        .with_data(json!({"supported": [VERSION], "requested": params["protocolVersion"]}))),
        method => {
            if let Err((_, error)) = check_meta(&params) {
                Err(error)
            } else {
                match method {
                    "server/discover" => Ok(discover()),
                    "subscriptions/listen" => {
                        // Answered only when the subscription ends.
                        super::listen::open(server, &request.id, &params);
                        return true;
                    }
                    "ping"
                    | "logging/setLevel"
                    | "resources/subscribe"
                    | "resources/unsubscribe" => Err(ErrorObject::new(
                        ErrorCode::METHOD_NOT_FOUND,
                        format!("`{method}` does not exist in {VERSION}"),
                    )),
                    "tools/list" => {
                        catalog::page(server.tools(), "tools", &params, server.opts.page_size)
                            .map(|page| cacheable(page, "public"))
                    }
                    // A tool not offered is refused by the common code.
                    "tools/call" if !offered(server, &params) => return false,
                    // Resources change only through `touch`, which notifies subscribers.
                    "resources/read" => catalog::read(&params).map(|r| cacheable(r, "private")),
                    "tools/call" if params["name"] == "report" => tasks::start(&params),
                    "tools/call" => {
                        if on_connection(server, request, &params) {
                            return true;
                        }
                        match call(&params) {
                            Some(reply) => reply,
                            None => return false,
                        }
                    }
                    _ => match tasks::on_request(method, &params) {
                        Some(reply) => reply,
                        None => return false,
                    },
                }
            }
        }
    };
    server.reply(request.id.clone(), reply);
    true
}

/// How long clients may reuse a list or a resource: changes are announced to subscribers.
const TTL_MS: u64 = 60_000;

/// `result` with caching hints.
fn cacheable(mut result: Value, scope: &str) -> Value {
    result["ttlMs"] = json!(TTL_MS);
    result["cacheScope"] = json!(scope);
    result
}

/// The answer to `server/discover`.
fn discover() -> Value {
    json!({
        "supportedVersions": [VERSION],
        "capabilities": {
            "tools": {"listChanged": true},
            "resources": {"subscribe": true, "listChanged": true},
            "prompts": {"listChanged": true},
            "completions": {},
            "extensions": {tasks::EXTENSION: {}},
        },
        "instructions": "A demo server: try the echo, add and slow tools.",
        "ttlMs": 0,
        "cacheScope": "public",
    })
}

/// Whether the tool a `tools/call` names is offered.
fn offered(server: &Server, params: &Value) -> bool {
    params
        .get("name")
        .and_then(Value::as_str)
        .is_some_and(|name| server.offers(name))
}

/// The tools that ask the client run in input rounds; `None` for every other tool.
fn call(params: &Value) -> Option<Reply> {
    let name = params.get("name").and_then(Value::as_str)?;
    let args = params
        .get("arguments")
        .cloned()
        .unwrap_or_else(|| json!({}));
    let (method, ask) = match name {
        "ask_user" => ("elicitation/create", asks::elicitation_params(&args, true)),
        // The 2026-07-28 shape: no elicitation id.
        "ask_url" => (
            "elicitation/create",
            tools::string(&args, "url").map(|url| {
                let message = args["message"].as_str().unwrap_or("Please open this page.");
                json!({"mode": "url", "message": message, "url": url})
            }),
        ),
        "task_result" => {
            let task = json!({"taskId": "task-1", "status": "working",
                "createdAt": "2026-07-28T00:00:00Z", "ttl": 60_000});
            return Some(Ok(json!({"resultType": "task", "task": task})));
        }
        "ask_llm" => ("sampling/createMessage", asks::sampling_params(&args)),
        "list_roots" => ("roots/list", Ok(json!({}))),
        "region" => {
            let region = args
                .get("region")
                .and_then(Value::as_str)
                .unwrap_or_default();
            return Some(Ok(tools::text(format!("region {region}"))));
        }
        _ => return None,
    };
    let ask = match ask {
        Ok(ask) => ask,
        Err(why) => return Some(Ok(tool_error(&why))),
    };
    let Some(answer) = params.pointer(&format!("/inputResponses/{INPUT_KEY}")) else {
        return Some(Ok(json!({
            "resultType": "input_required",
            "inputRequests": { INPUT_KEY: {"method": method, "params": ask} },
            "requestState": request_state(name),
        })));
    };
    if params.get("requestState").and_then(Value::as_str) != Some(&request_state(name)) {
        let why = "requestState was not echoed unchanged";
        return Some(Err(ErrorObject::new(ErrorCode::INVALID_PARAMS, why)));
    }
    Some(Ok(match name {
        "ask_user" | "ask_url" => asks::elicited(answer).unwrap_or_else(|why| tool_error(&why)),
        "ask_llm" => asks::sampled(answer),
        _ => tools::structured(answer.clone()),
    }))
}

/// The tools that act on the connection: `request_client` writes a request to the client, as
/// a server breaking the stdio rules of this era would, and `cancel_subscriptions` ends every
/// subscription. `false` for every other tool.
fn on_connection(server: &Arc<Server>, request: &Request, params: &Value) -> bool {
    let args = &params["arguments"];
    match params.get("name").and_then(Value::as_str) {
        Some("request_client") => {
            let method = args["method"].as_str().unwrap_or("roots/list").to_owned();
            let wait = Duration::from_millis(args["wait_ms"].as_u64().unwrap_or(500));
            let (server, id) = (Arc::clone(server), request.id.clone());
            // An answer would come through the read loop, so the wait happens elsewhere.
            super::spawn("demo-request-client", move || {
                let text = match ask_client(&server, &method, wait) {
                    Some(Ok(result)) => format!("answered: {result}"),
                    Some(Err(error)) => format!("answered: error {}", error.code.0),
                    None => format!("no answer within {} ms", wait.as_millis()),
                };
                server.reply(id, Ok(tools::text(text)));
            });
        }
        Some("cancel_subscriptions") => {
            let cancelled = super::listen::cancel_all(server);
            let text = format!("cancelled {cancelled} subscriptions");
            server.reply(request.id.clone(), Ok(tools::text(text)));
        }
        _ => return false,
    }
    true
}

/// Sends `method` to the client and waits up to `wait` for its answer; `None` without one.
/// Unlike a tool's own requests, no `notifications/cancelled` follows a silence.
fn ask_client(server: &Server, method: &str, wait: Duration) -> Option<Reply> {
    let number = server.next_id.fetch_add(1, Ordering::SeqCst);
    let id = RequestId::from(format!("s-{number}"));
    let (tx, rx) = mpsc::channel();
    lock(&server.pending).insert(id.clone(), tx);
    server.send(Request::new(id.clone(), method, None).into());
    let answer = rx.recv_timeout(wait).ok();
    lock(&server.pending).remove(&id);
    answer
}

fn tool_error(why: &str) -> Value {
    json!({"content": [{"type": "text", "text": why}], "isError": true})
}

/// Marks a result complete and names the server in its `_meta`, as every stateless result.
pub fn complete(mut result: Value) -> Value {
    if let Value::Object(object) = &mut result {
        object
            .entry("resultType")
            .or_insert_with(|| json!("complete"));
        let meta = object.entry("_meta").or_insert_with(|| json!({}));
        if let Value::Object(meta) = meta {
            meta.insert(
                "io.modelcontextprotocol/serverInfo".into(),
                json!({"name": "umcp-demo", "title": "umcp demo server",
                       "version": env!("CARGO_PKG_VERSION")}),
            );
        }
    }
    result
}
