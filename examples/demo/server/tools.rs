//! The demo server's tools: their definitions for `tools/list` and what `tools/call` does.
//!
//! These are the tools a user sees: `echo`, `add`, `time`, `slow` (progress), `ask_llm`
//! (sampling), `ask_user` (elicitation), `list_roots` and `log`. The tools only tests need
//! are in `fixtures.rs`, offered with `--fixtures`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{json, Number, Value};
use umcp::jsonrpc::{ErrorCode, ErrorObject, RequestId};

use super::catalog::{level_index, LEVELS};
use super::{asks, fixtures, lock, Reply, Server};

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
        time(),
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
    ]
}

/// Runs tool `name`. Tools this server does not offer are a protocol error; everything else
/// that goes wrong is a tool error (`isError`), which is what the spec asks for bad arguments
/// too.
pub fn call(call: &Call, name: &str, args: &Value) -> Reply {
    if !call.server.offers(name) {
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
        "time" => Ok(now()),
        _ => fixtures::run(call, name, args)
            .unwrap_or_else(|| Err(format!("`{name}` is listed but not implemented"))),
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

fn time() -> Value {
    let mut time = tool("time", "The current time, in UTC.", json!({}), &[]);
    time["outputSchema"] = json!({
        "type": "object",
        "properties": {"utc": {"type": "string", "format": "date-time"}, "unix": {"type": "integer"}},
        "required": ["utc", "unix"],
    });
    time["annotations"] = json!({"readOnlyHint": true});
    time
}

/// The current time as RFC 3339 text and as seconds since the Unix epoch.
fn now() -> Value {
    let unix = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_secs());
    let utc = rfc3339(unix);
    json!({
        "content": [{"type": "text", "text": utc}],
        "structuredContent": {"utc": utc, "unix": unix},
    })
}

/// `unix` seconds as `YYYY-MM-DDTHH:MM:SSZ`: the civil date of the day count (Howard
/// Hinnant's `civil_from_days`), then the time of day.
fn rfc3339(unix: u64) -> String {
    let (days, seconds) = (unix / 86_400, unix % 86_400);
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    let (hour, minute, second) = (seconds / 3_600, seconds % 3_600 / 60, seconds % 60);
    format!("{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}Z")
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

pub fn uint(args: &Value, key: &str, default: u64) -> Result<u64, String> {
    match &args[key] {
        Value::Null => Ok(default),
        value => value
            .as_u64()
            .ok_or_else(|| format!("`{key}` must be a whole number")),
    }
}

pub fn timeout(args: &Value) -> Result<Duration, String> {
    uint(args, "timeout_ms", 30_000).map(Duration::from_millis)
}
