//! The demo server's tools: their definitions for `tools/list` and what `tools/call` does.
//!
//! Besides the tools a demo shows (`echo`, `add`, `slow`, `ask_llm`, `ask_user`, `log`), there
//! are tools that exist for tests: they expose what the server saw (`cancellations`,
//! `client_info`, `process`, `env`) or make it misbehave on request (`crash`, `huge`, `fail`).

use std::process;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Number, Value};
use umcp::jsonrpc::{ErrorCode, ErrorObject, RequestId};

use super::catalog::{level_index, LEVELS};
use super::{asks, listen, lock, Reply, Server};

/// One running `tools/call`.
pub struct Call {
    pub server: Arc<Server>,
    pub id: RequestId,
    /// The `_meta.progressToken` of the request, if the client asked for progress.
    pub progress_token: Option<Value>,
    /// Set when the client cancels the request.
    pub cancelled: Arc<AtomicBool>,
}

impl Call {
    /// Sleeps for `duration`, waking early when the call is cancelled; false if it was.
    fn sleep(&self, duration: Duration) -> bool {
        let end = Instant::now() + duration;
        loop {
            if self.cancelled.load(Ordering::SeqCst) {
                return false;
            }
            let left = end.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return true;
            }
            std::thread::sleep(left.min(Duration::from_millis(10)));
        }
    }
}

/// The tools, in `tools/list` order.
pub fn list() -> Vec<Value> {
    let string = json!({"type": "string"});
    let integer = json!({"type": "integer", "minimum": 0});
    let timeout = json!({"type": "integer", "minimum": 0, "description": "default 30000"});
    let mut add = tool(
        "add",
        "Adds two numbers; the sum also comes as structured content.",
        json!({"a": {"type": "number"}, "b": {"type": "number"}}),
        &["a", "b"],
    );
    add["outputSchema"] = json!({
        "type": "object",
        "properties": {"sum": {"type": "number"}},
        "required": ["sum"],
    });
    add["annotations"] = json!({"readOnlyHint": true, "idempotentHint": true});
    vec![
        tool(
            "echo",
            "Echoes `message` back.",
            json!({"message": string}),
            &["message"],
        ),
        add,
        tool(
            "slow",
            "Works for `steps` steps of `delay_ms` each, reporting progress; stops when cancelled.",
            json!({"steps": integer, "delay_ms": integer}),
            &[],
        ),
        tool(
            "ask_llm",
            "Asks the client's model (sampling/createMessage) and returns its reply.",
            json!({"prompt": string, "timeout_ms": timeout}),
            &["prompt"],
        ),
        tool(
            "ask_user",
            "Asks the user through the client (elicitation/create, form mode).",
            json!({"question": string, "timeout_ms": timeout}),
            &["question"],
        ),
        tool(
            "list_roots",
            "Asks the client for its roots (roots/list).",
            json!({"timeout_ms": timeout}),
            &[],
        ),
        tool(
            "log",
            "Sends a notifications/message at `level`, unless logging/setLevel filters it.",
            json!({"level": {"type": "string", "enum": LEVELS}, "message": string}),
            &["level", "message"],
        ),
        tool(
            "touch",
            "Changes a resource: subscribers get notifications/resources/updated.",
            json!({"uri": string}),
            &["uri"],
        ),
        tool(
            "list_changed",
            "Sends notifications/<what>/list_changed.",
            json!({"what": {"type": "string", "enum": ["tools", "resources", "prompts"]}}),
            &["what"],
        ),
        tool(
            "end_subscriptions",
            "Ends every subscriptions/listen subscription with its result (--modern).",
            json!({}),
            &[],
        ),
        tool(
            "requests_seen",
            "How many requests of each method the server received.",
            json!({}),
            &[],
        ),
        tool(
            "drop_subscriptions",
            "Closes every subscription's stream without a result (--modern over HTTP).",
            json!({}),
            &[],
        ),
        tool(
            "cancellations",
            "The requestId of every notifications/cancelled received so far.",
            json!({}),
            &[],
        ),
        tool(
            "client_info",
            "What the client sent in initialize.",
            json!({}),
            &[],
        ),
        tool(
            "process",
            "This server's pid and working directory.",
            json!({}),
            &[],
        ),
        tool(
            "env",
            "The value of environment variable `name`.",
            json!({"name": string}),
            &["name"],
        ),
        tool(
            "fail",
            "Fails with `message` (a tool error, isError).",
            json!({"message": string}),
            &[],
        ),
        tool(
            "huge",
            "Returns a text of `bytes` bytes (default: the --bytes option).",
            json!({"bytes": integer}),
            &[],
        ),
        tool(
            "flood_status",
            "Waits up to `timeout_ms` for the stderr flood to finish; reports bytes written.",
            json!({"timeout_ms": timeout}),
            &[],
        ),
        tool(
            "crash",
            "Exits the server with status 3 at once.",
            json!({}),
            &[],
        ),
    ]
}

/// Runs tool `name`. Unknown tools are a protocol error; everything else that goes wrong is a
/// tool error (`isError`), which is what the spec asks for bad arguments too.
pub fn call(call: &Call, name: &str, args: &Value) -> Reply {
    if !list().iter().any(|t| t["name"] == name) {
        let message = format!("unknown tool `{name}`");
        return Err(ErrorObject::new(ErrorCode::INVALID_PARAMS, message));
    }
    Ok(run(call, name, args).unwrap_or_else(
        |message| json!({"content": [{"type": "text", "text": message}], "isError": true}),
    ))
}

fn run(call: &Call, name: &str, args: &Value) -> Result<Value, String> {
    let server = &call.server;
    match name {
        "echo" => Ok(text(string(args, "message")?)),
        "add" => add(args),
        "slow" => slow(call, args),
        "ask_llm" => ask_llm(server, args),
        "ask_user" => ask_user(server, args),
        "list_roots" => {
            let reply = server.request_client("roots/list", None, timeout(args)?);
            let roots = reply.map_err(|e| format!("roots/list failed: {e}"))?;
            Ok(structured(roots))
        }
        "log" => log(server, args),
        "touch" => {
            let uri = string(args, "uri")?;
            if server.opts.modern {
                let sent = listen::broadcast(server, "notifications/resources/updated", Some(uri));
                return Ok(text(format!("{sent} subscriptions notified")));
            }
            if !lock(&server.state).subscriptions.contains(uri) {
                return Ok(text("not subscribed"));
            }
            server.notify(
                "notifications/resources/updated",
                Some(json!({ "uri": uri })),
            );
            Ok(text("subscribers notified"))
        }
        "list_changed" => match string(args, "what")? {
            what @ ("tools" | "resources" | "prompts") if server.opts.modern => {
                let method = format!("notifications/{what}/list_changed");
                let sent = listen::broadcast(server, &method, None);
                Ok(text(format!("sent {method} to {sent} subscriptions")))
            }
            what @ ("tools" | "resources" | "prompts") => {
                server.notify(&format!("notifications/{what}/list_changed"), None);
                Ok(text(format!("sent notifications/{what}/list_changed")))
            }
            other => Err(format!("cannot change the list of `{other}`")),
        },
        "end_subscriptions" => {
            let ended = listen::end_all(server);
            Ok(text(format!("ended {ended} subscriptions")))
        }
        "requests_seen" => {
            let seen = lock(&server.state).seen.clone();
            Ok(structured(json!(seen)))
        }
        "drop_subscriptions" => {
            let dropped = listen::drop_all(server);
            Ok(text(format!("dropped {dropped} subscriptions")))
        }
        "cancellations" => {
            let cancelled = lock(&server.state).cancelled.clone();
            Ok(structured(json!({ "cancelled": cancelled })))
        }
        "client_info" => {
            let state = lock(&server.state);
            Ok(structured(json!({
                "protocolVersion": state.protocol_version,
                "clientInfo": state.client_init.get("clientInfo"),
                "capabilities": state.client_init.get("capabilities"),
            })))
        }
        "process" => {
            let cwd = std::env::current_dir().map_err(|e| format!("no working directory: {e}"))?;
            Ok(structured(json!({"pid": process::id(), "cwd": cwd})))
        }
        "env" => {
            let name = string(args, "name")?;
            std::env::var(name)
                .map(text)
                .map_err(|_| format!("`{name}` is not set"))
        }
        "fail" => Err(args["message"]
            .as_str()
            .unwrap_or("failed as asked")
            .to_owned()),
        "huge" => {
            let bytes = uint(args, "bytes", server.opts.bytes)?;
            let bytes = usize::try_from(bytes).map_err(|_| "`bytes` is too large".to_owned())?;
            Ok(text("x".repeat(bytes)))
        }
        "flood_status" => {
            let (written, done) = server.flood.wait(timeout(args)?);
            Ok(structured(json!({"written": written, "done": done})))
        }
        "crash" => {
            eprintln!("demo server: crash requested, exiting with status 3");
            process::exit(3);
        }
        other => Err(format!("`{other}` is listed but not implemented")),
    }
}

fn add(args: &Value) -> Result<Value, String> {
    let (a, b) = (number(args, "a")?, number(args, "b")?);
    // Integers stay integers (2 + 3 is "5", not "5.0"); anything else is added as f64.
    let sum = match (a.as_i64(), b.as_i64()) {
        (Some(a), Some(b)) => a.checked_add(b).map(Number::from),
        _ => None,
    };
    let sum = match sum {
        Some(sum) => sum,
        None => {
            let (a, b) = (a.as_f64().unwrap_or(0.0), b.as_f64().unwrap_or(0.0));
            Number::from_f64(a + b).ok_or("the sum is not a finite number")?
        }
    };
    Ok(json!({
        "content": [{"type": "text", "text": sum.to_string()}],
        "structuredContent": {"sum": sum},
    }))
}

fn slow(call: &Call, args: &Value) -> Result<Value, String> {
    let steps = uint(args, "steps", 5)?;
    let delay = Duration::from_millis(uint(args, "delay_ms", 100)?);
    for step in 1..=steps {
        if !call.sleep(delay) {
            return Err(format!("cancelled after {} of {steps} steps", step - 1));
        }
        if let Some(token) = &call.progress_token {
            let message = format!("step {step} of {steps}");
            let params = json!({
                "progressToken": token,
                "progress": step,
                "total": steps,
                "message": message,
            });
            call.server.notify("notifications/progress", Some(params));
        }
    }
    Ok(text(format!("finished {steps} steps")))
}

fn ask_llm(server: &Server, args: &Value) -> Result<Value, String> {
    let params = asks::sampling_params(args)?;
    let reply = server.request_client("sampling/createMessage", Some(params), timeout(args)?);
    let reply = reply.map_err(|e| format!("sampling failed: {e}"))?;
    Ok(asks::sampled(&reply))
}

fn ask_user(server: &Server, args: &Value) -> Result<Value, String> {
    // `mode` only exists from 2025-11-25 on; older clients would not expect it.
    let form_mode = lock(&server.state).protocol_version.as_deref() == Some("2025-11-25");
    let params = asks::elicitation_params(args, form_mode)?;
    let reply = server.request_client("elicitation/create", Some(params), timeout(args)?);
    let reply = reply.map_err(|e| format!("elicitation failed: {e}"))?;
    asks::elicited(&reply)
}

fn log(server: &Server, args: &Value) -> Result<Value, String> {
    let level = string(args, "level")?;
    let message = string(args, "message")?;
    let index = level_index(level).ok_or_else(|| format!("unknown level `{level}`"))?;
    let threshold = lock(&server.state).log_level;
    if index < threshold {
        return Ok(text(format!("suppressed: below {}", LEVELS[threshold])));
    }
    let params = json!({"level": level, "logger": "demo", "data": message});
    server.notify("notifications/message", Some(params));
    Ok(text("logged"))
}

pub fn tool(name: &str, description: &str, properties: Value, required: &[&str]) -> Value {
    json!({
        "name": name,
        "description": description,
        "inputSchema": {"type": "object", "properties": properties, "required": required},
    })
}

pub fn text(text: impl Into<String>) -> Value {
    json!({"content": [{"type": "text", "text": text.into()}]})
}

/// A result whose structured content is `value`, with the same JSON as text for older clients.
pub fn structured(value: Value) -> Value {
    json!({"content": [{"type": "text", "text": value.to_string()}], "structuredContent": value})
}

pub fn string<'a>(args: &'a Value, key: &str) -> Result<&'a str, String> {
    args[key]
        .as_str()
        .ok_or_else(|| format!("`{key}` must be a string"))
}

fn number<'a>(args: &'a Value, key: &str) -> Result<&'a Number, String> {
    match &args[key] {
        Value::Number(n) => Ok(n),
        _ => Err(format!("`{key}` must be a number")),
    }
}

fn uint(args: &Value, key: &str, default: u64) -> Result<u64, String> {
    match &args[key] {
        Value::Null => Ok(default),
        value => value
            .as_u64()
            .ok_or_else(|| format!("`{key}` must be a whole number")),
    }
}

fn timeout(args: &Value) -> Result<Duration, String> {
    uint(args, "timeout_ms", 30_000).map(Duration::from_millis)
}
